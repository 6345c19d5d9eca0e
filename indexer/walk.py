"""Listing the files of a root: ignore rules, hidden files, symlinks, size limits.

The walk only looks at names and stat data (cheap); content checks (binary, decoding)
happen when a file is read. Every entry it meets ends up either a Candidate or a Skip
with a reason, except the contents of skipped folders (one Skip for the folder).
"""

from __future__ import annotations

import errno
import os
import stat as stat_mod
from dataclasses import dataclass, field
from pathlib import Path

from indexer.doc_builds import DocBuilds
from indexer.options import IndexOptions
from indexer.parsers import STREAMED_EXT
from indexer.reading import os_error_kind, os_error_reason, special_file_reason, too_large_reason
from indexer.reasons import is_valid_name, printable

BUILTIN_IGNORED_DIRS: dict[str, str] = {
    ".git": "version control data", ".hg": "version control data", ".svn": "version control data",
    ".bzr": "version control data", "node_modules": "installed dependencies",
    "bower_components": "installed dependencies", "__pycache__": "Python bytecode cache",
    ".venv": "Python virtual environment", "venv": "Python virtual environment",
    "site-packages": "installed dependencies", ".tox": "test environments", ".nox": "test environments",
    ".mypy_cache": "tool cache", ".pytest_cache": "tool cache", ".ruff_cache": "tool cache",
    ".ipynb_checkpoints": "editor backups", ".eggs": "build output", "build": "build output",
    "dist": "build output", "target": "build output", "_build": "build output", ".next": "build output",
    ".nuxt": "build output", ".gradle": "build output", ".terraform": "tool cache", ".cache": "cache",
}


# Machine-written copies of code, named so by convention (a vendored "jquery.min.js"): one
# line of thousands of characters whose "words" are junk for search ("e&&e", "n=t.fn").
MINIFIED_SUFFIXES = (".min.js", ".min.mjs", ".min.cjs", ".min.css")


@dataclass
class Candidate:
    path: str
    root: str
    size: int
    mtime_ns: int
    ext: str


@dataclass
class Skip:
    path: str             # printable (indexer.reasons.printable): odd bytes shown as \xNN
    root: str
    state: str            # "skipped" or "error"
    reason: str
    size: int = 0
    mtime_ns: int = 0
    kind: str = "other"   # indexer.reasons.KINDS


@dataclass
class ScanResult:
    candidates: dict[str, Candidate] = field(default_factory=dict)
    skips: dict[str, Skip] = field(default_factory=dict)


def file_ext(path: str) -> str:
    """The extension that picks the parser; a Maildir message (no extension) reads as .eml."""
    name = os.path.basename(path).lower()
    if os.path.basename(os.path.dirname(path)) in ("cur", "new"):
        from indexer.parse_mail import is_maildir_message

        if is_maildir_message(path):
            return ".eml"
    if name in ("dockerfile", "makefile"):
        return "." + name if name == "dockerfile" else ".mk"
    return os.path.splitext(name)[1]


def is_under(path: str, folder: str) -> bool:
    return path == folder or path.startswith(folder.rstrip(os.sep) + os.sep)


class _Gitignores:
    """The .gitignore specs in effect for one folder (outermost first)."""

    def __init__(self, specs: tuple[tuple[str, object], ...] = ()) -> None:
        self.specs = specs

    def enter(self, folder: str) -> "_Gitignores":
        gitignore = os.path.join(folder, ".gitignore")
        try:
            if not stat_mod.S_ISREG(os.stat(gitignore).st_mode):
                return self      # a FIFO named .gitignore would block open() forever
            with open(gitignore, encoding="utf-8", errors="replace") as fh:
                lines = fh.read().splitlines()
        except OSError:
            return self
        import pathspec

        spec = pathspec.GitIgnoreSpec.from_lines(lines)
        return _Gitignores(self.specs + ((folder, spec),))

    def ignored_by(self, path: str, is_dir: bool) -> str | None:
        """The .gitignore file that excludes `path`, or None. The deepest match decides."""
        for folder, spec in reversed(self.specs):
            rel = os.path.relpath(path, folder).replace(os.sep, "/") + ("/" if is_dir else "")
            check = getattr(spec, "check_file", None)
            if check is not None:
                include = check(rel).include
                if include is None:
                    continue
                return os.path.join(folder, ".gitignore") if include else None
            if spec.match_file(rel):
                return os.path.join(folder, ".gitignore")
        return None


BAD_NAME_REASON = ("the name is not valid UTF-8 (its odd bytes are shown as \\xNN), so it cannot "
                   "be stored in the index; rename it to a UTF-8 name (a Latin-1 name: "
                   "`convmv -f latin1 -t utf-8 --notest NAME`)")


class Walker:
    def __init__(self, root: str, options: IndexOptions, result: ScanResult, *,
                 exclude: tuple[str, ...] = ()) -> None:
        self.root = root
        self.root_real = os.path.realpath(root)
        self.options = options
        self.result = result
        self.exclude = exclude
        self.visited: dict[tuple[int, int], str] = {}
        self.links: list[tuple[str, _Gitignores]] = []
        self.file_links: list[tuple[str, str]] = []   # (link path, real path)
        self.doc_builds = DocBuilds(root, options.extensions)   # a documentation site's generated files

    # --- public ---------------------------------------------------------------------
    def scan(self, scope: str) -> None:
        """Walk `scope` (the root, or a file/folder inside it) applying every rule."""
        if not os.path.lexists(scope) or self._excluded(scope):
            return
        if scope == self.root:
            if os.path.isdir(scope):
                self._walk_dirs(scope, _Gitignores())
            else:
                self._file(scope, _Gitignores(), check_hidden=False)
            self._finish()
            return
        ignores = _Gitignores().enter(self.root)
        rel_parts = Path(os.path.relpath(scope, self.root)).parts
        folder = self.root
        for part in rel_parts[:-1]:
            folder = os.path.join(folder, part)
            if not is_valid_name(part):
                self._skip(folder, "bad_name", BAD_NAME_REASON)   # nothing inside is stored
                return
            if self._dir_skip_reason(folder, ignores) is not None:
                return   # inside an ignored folder: nothing here is indexed
            ignores = ignores.enter(folder)
        if not is_valid_name(scope):
            self._skip(scope, "bad_name", BAD_NAME_REASON)
        elif os.path.isdir(scope) and not os.path.islink(scope):
            why = self._dir_skip_reason(scope, ignores)
            if why:
                self._skip(scope, *why)
            else:
                self._walk_dirs(scope, ignores)
        else:
            self._entry(scope, ignores)
        self._finish()

    # --- internals ------------------------------------------------------------------
    def _excluded(self, path: str) -> bool:
        return any(is_under(path, ex) for ex in self.exclude)

    def _skip(self, path: str, kind: str, reason: str, state: str = "skipped",
              st: os.stat_result | None = None) -> None:
        path = printable(path)   # a name with odd bytes is stored and shown as \xNN
        self.result.skips[path] = Skip(path, self.root, state, printable(reason),
                                       st.st_size if st else 0, st.st_mtime_ns if st else 0,
                                       kind)

    def _dir_skip_reason(self, path: str, ignores: _Gitignores) -> tuple[str, str] | None:
        """(kind, reason) when the folder is not walked, else None."""
        name = os.path.basename(path)
        if name in BUILTIN_IGNORED_DIRS:
            return ("ignored_folder",
                    f"ignored folder ({BUILTIN_IGNORED_DIRS[name]}, built-in ignore list)")
        if name.endswith(".egg-info"):
            return "ignored_folder", "ignored folder (build output, built-in ignore list)"
        if os.path.exists(os.path.join(path, "pyvenv.cfg")):
            return "ignored_folder", "ignored folder (Python virtual environment)"
        if name.startswith(".") and not self.options.include_hidden:
            return "hidden", "hidden folder (set include_hidden to index it)"
        source = ignores.ignored_by(path, True)
        if source:
            return "gitignore", f"ignored by {source}"
        generated = self.doc_builds.reason(path, is_dir=True)
        if generated:
            return "generated", generated
        return None

    def _walk_dirs(self, top: str, ignores: _Gitignores) -> None:
        stack = [(top, ignores)]
        while stack:
            folder, inherited = stack.pop()
            try:
                st = os.stat(folder)
            except OSError as exc:
                self._skip(folder, os_error_kind(exc), os_error_reason(folder, exc), "error")
                continue
            key = (st.st_dev, st.st_ino)
            if key in self.visited:
                continue
            self.visited[key] = folder
            here = inherited.enter(folder)
            try:
                with os.scandir(folder) as it:
                    entries = sorted(it, key=lambda e: e.name)
            except FileNotFoundError:
                continue   # deleted while being listed: nothing there any more
            except OSError as exc:
                reason = os_error_reason(folder, exc).replace("chmod u+r", "chmod u+rx")
                self._skip(folder, os_error_kind(exc), reason, "error")
                continue
            self.doc_builds.listed(folder, {e.name for e in entries})
            subdirs = []
            for entry in entries:
                if self._excluded(entry.path):
                    continue
                if not is_valid_name(entry.name):
                    self._skip(entry.path, "bad_name", BAD_NAME_REASON)
                    continue
                try:
                    is_dir = entry.is_dir(follow_symlinks=False)
                except OSError:
                    is_dir = False
                if is_dir:
                    why = self._dir_skip_reason(entry.path, here)
                    if why:
                        self._skip(entry.path, *why)
                    else:
                        subdirs.append((entry.path, here))
                else:
                    self._entry(entry.path, here)
            self.doc_builds.forget(folder)
            stack.extend(reversed(subdirs))

    def _entry(self, path: str, ignores: _Gitignores) -> None:
        if os.path.islink(path):
            self._link(path, ignores)
        else:
            self._file(path, ignores)

    def _link(self, path: str, ignores: _Gitignores) -> None:
        name = os.path.basename(path)
        if name.startswith(".") and not self.options.include_hidden:
            self._skip(path, "hidden", "hidden file (set include_hidden to index it)")
            return
        try:
            st = os.stat(path)
        except OSError as exc:
            if exc.errno == errno.ELOOP:
                self._skip(path, "symlink", "symlink loop: the link points (through other links) "
                           "back to itself")
            elif isinstance(exc, FileNotFoundError):
                self._skip(path, "symlink", "broken symlink: its target does not exist")
            else:
                self._skip(path, os_error_kind(exc), os_error_reason(path, exc), "error")
            return
        target = os.path.realpath(path)
        if not is_under(target, self.root_real):
            self._skip(path, "symlink", f"symlink to {target}, outside the indexed folder; add "
                       "that folder as a root to index it")
            return
        if os.path.isdir(path):
            self.links.append((path, ignores))
        else:
            self.file_links.append((path, target))
            self._file(path, ignores, st=st)

    def _file(self, path: str, ignores: _Gitignores, *, check_hidden: bool = True,
              st: os.stat_result | None = None) -> None:
        """Only stat data here: a FIFO or device is classified without being opened."""
        name = os.path.basename(path)
        if name == ".gitignore":
            return
        try:
            st = st or os.stat(path)
        except FileNotFoundError:
            return   # vanished while listing: simply not there any more
        except OSError as exc:
            self._skip(path, os_error_kind(exc), os_error_reason(path, exc), "error")
            return
        if check_hidden and name.startswith(".") and not self.options.include_hidden:
            self._skip(path, "hidden", "hidden file (set include_hidden to index it)", st=st)
            return
        source = ignores.ignored_by(path, False) if ignores.specs else None
        if source:
            self._skip(path, "gitignore", f"ignored by {source}", st=st)
            return
        if not stat_mod.S_ISREG(st.st_mode):
            self._skip(path, "special_file", special_file_reason(st.st_mode), st=st)
            return
        ext = file_ext(path)
        if ext not in self.options.extensions:
            shown = ext or "(no extension)"
            self._skip(path, "unsupported_type", f"unsupported file type {shown} (add it to the "
                       "extensions setting to index it as text)", st=st)
            return
        if name.lower().endswith(MINIFIED_SUFFIXES):
            self._skip(path, "minified", "minified code (a machine-written copy; its readable "
                       "source, if you have it, is indexed instead)", st=st)
            return
        generated = self.doc_builds.reason(path, is_dir=False)
        if generated:
            self._skip(path, "generated", generated, st=st)
            return
        if st.st_size > self.options.max_file_bytes and ext not in STREAMED_EXT:
            self._skip(path, "too_large", too_large_reason(st.st_size, self.options.max_file_bytes),
                       st=st)
            return
        if st.st_size == 0:
            self._skip(path, "empty", "empty file", st=st)
            return
        self.result.candidates[path] = Candidate(path, self.root, st.st_size, st.st_mtime_ns, ext)

    def _finish(self) -> None:
        # Linked folders come last, so a link to a folder already walked is reported
        # instead of indexing the same files twice (and loops end here too).
        while self.links:
            link, ignores = self.links.pop(0)
            try:
                st = os.stat(link)
            except OSError:
                continue   # removed since it was listed
            seen = self.visited.get((st.st_dev, st.st_ino))
            if seen is not None:
                if is_under(link, seen):
                    self._skip(link, "symlink", f"symlink loop: points back to its parent folder {seen}")
                else:
                    self._skip(link, "symlink", f"symlink to a folder already indexed at {seen}")
                continue
            self._walk_dirs(link, ignores)
        real_files = {os.path.realpath(p) for p in self.result.candidates
                      if not os.path.islink(p)}
        for link, target in self.file_links:
            if link in self.result.candidates and target in real_files:
                del self.result.candidates[link]
                self._skip(link, "symlink", f"symlink to {target}, which is indexed under its own path")
        self.file_links.clear()


def scan(scopes: list[tuple[str, str]], options: IndexOptions, *,
         exclude: tuple[str, ...] = ()) -> ScanResult:
    """List candidates and skips for each (root, path inside the root) scope."""
    result = ScanResult()
    for root, scope in scopes:
        Walker(root, options, result, exclude=exclude).scan(scope)
    return result
