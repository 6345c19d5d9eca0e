"""What `localrag models` and the app's model picker show: the catalogue next to the
model files on this machine, with what is installed, half downloaded, in use, and
whether the disk has room. Reads only the local disk."""

from __future__ import annotations

import shutil
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from models.catalogue import CATALOGUE, CatalogueEntry
from models.catalogue import format_size
from models.pull import SPACE_MARGIN_BYTES, partial_bytes


@dataclass
class CatalogueState:
    entry: CatalogueEntry
    path: Path | None = None        # the installed file, when there is one
    size_bytes: int | None = None   # its size
    partial_bytes: int = 0          # bytes of an unfinished download (resumes)
    in_use: bool = False

    @property
    def installed(self) -> bool:
        return self.path is not None

    @property
    def needed_bytes(self) -> int:
        """Disk space the download still needs (about)."""
        return 0 if self.installed else max(self.entry.approx_bytes - self.partial_bytes, 0)

    @property
    def state(self) -> str:
        """A few words: installed, in use, partial download, or not installed."""
        if self.installed:
            return "installed, in use" if self.in_use else "installed"
        if self.partial_bytes:
            return (f"partly downloaded ({format_size(self.partial_bytes)} of about "
                    f"{format_size(self.entry.approx_bytes)}): pull again to resume")
        return "not installed"

    def to_json(self) -> dict[str, Any]:
        e = self.entry
        return {"name": e.name, "default": e.is_default, "repo": e.repo, "file": e.filename,
                "purpose": e.purpose, "kind": e.kind, "approx_bytes": e.approx_bytes,
                "installed": self.installed, "path": str(self.path) if self.path else None,
                "size_bytes": self.size_bytes, "partial_bytes": self.partial_bytes,
                "needed_bytes": self.needed_bytes, "in_use": self.in_use}


@dataclass
class ModelsOverview:
    models_dir: Path
    free_bytes: int | None
    catalogue: list[CatalogueState]
    files: list[Any] = field(default_factory=list)      # models.inspect.ModelFileInfo
    problems: list[str] = field(default_factory=list)   # files that could not be read
    in_use: Path | None = None

    def space_warnings(self) -> list[str]:
        """One line per catalogue model that does not fit on the disk now."""
        if self.free_bytes is None:
            return []
        return [f"only {format_size(self.free_bytes)} free in {self.models_dir}: too little "
                f"for {s.entry.name} (needs about {format_size(s.needed_bytes)})"
                for s in self.catalogue
                if not s.installed and self.free_bytes < s.needed_bytes + SPACE_MARGIN_BYTES]

    def to_json(self) -> dict[str, Any]:
        return {"models_dir": str(self.models_dir), "free_bytes": self.free_bytes,
                "in_use": str(self.in_use) if self.in_use else None,
                "catalogue": [s.to_json() for s in self.catalogue],
                "files": [{**vars(i), "path": str(i.path)} for i in self.files],
                "errors": self.problems, "warnings": self.space_warnings()}


def free_space(folder: Path) -> int | None:
    """Free bytes on the disk that holds `folder` (or its nearest existing parent)."""
    for p in [folder, *folder.parents]:
        try:
            return shutil.disk_usage(p).free
        except OSError:
            continue
    return None


def overview(models_dir: Path, in_use: Path | None, *,
             user_errors: tuple[type[Exception], ...]) -> ModelsOverview:
    """The catalogue's state in `models_dir`, and every known model file described."""
    from models.inspect import inspect_gguf, known_model_files

    in_use_resolved = _resolved(in_use)
    states = []
    for entry in CATALOGUE:
        path = models_dir / entry.filename
        state = CatalogueState(entry, partial_bytes=partial_bytes(models_dir, entry.filename))
        if path.is_file():
            state.path = path.resolve()
            state.size_bytes = path.stat().st_size
            state.in_use = state.path == in_use_resolved
        states.append(state)
    files, problems = [], []
    extra = [in_use_resolved] if in_use_resolved is not None and in_use_resolved.is_file() else []
    known = known_model_files([models_dir])
    for path in known + [p for p in extra if p not in known]:
        try:                                 # one damaged file must not hide the rest
            files.append(_described(path, inspect_gguf))
        except user_errors as exc:
            problems.append(str(exc))
    return ModelsOverview(models_dir=models_dir, free_bytes=free_space(models_dir),
                          catalogue=states, files=files, problems=problems,
                          in_use=in_use_resolved)


_described_cache: dict[tuple[str, int, int], Any] = {}


def _described(path: Path, inspect: Any) -> Any:
    """inspect_gguf(path), remembered while the file keeps its size and time stamp
    (reading the metadata of a large vocabulary takes seconds)."""
    st = path.stat()
    key = (str(path), st.st_size, st.st_mtime_ns)
    if key not in _described_cache:
        if len(_described_cache) > 64:
            _described_cache.clear()
        _described_cache[key] = inspect(path)
    return _described_cache[key]


def _resolved(path: Path | None) -> Path | None:
    if path is None:
        return None
    try:
        return Path(path).expanduser().resolve()
    except OSError:
        return Path(path)


def duration(seconds: float | None) -> str:
    """`42s`, `3m07s`, `1h05m`; `?` when unknown."""
    if seconds is None:
        return "?"
    seconds = int(round(seconds))
    if seconds < 60:
        return f"{seconds}s"
    minutes, seconds = divmod(seconds, 60)
    if minutes < 60:
        return f"{minutes}m{seconds:02d}s"
    hours, minutes = divmod(minutes, 60)
    return f"{hours}h{minutes:02d}m"


def progress_figures(p: Any) -> str:
    """One line for a models.pull.PullProgress: size, speed, time left (CLI and app)."""
    if p.phase == "connecting":
        return f"connecting for {p.filename}…"
    done = format_size(p.done_bytes)
    size = f"{done} of {format_size(p.total_bytes)}" if p.total_bytes else done
    if p.fraction is not None:
        size = f"{p.fraction:.0%}  {size}"
    if p.phase == "verifying":
        return f"{size}  checking the SHA-256 checksum"
    if p.phase == "done":
        return f"{size}  done"
    speed = f"{format_size(int(p.speed_bps))}/s" if p.speed_bps else "-- /s"
    eta = p.eta_s
    left = f"  {duration(eta)} left" if eta is not None else ""
    resumed = f"  (resumed at {format_size(p.resumed_from)})" if p.resumed_from else ""
    return f"{size}  {speed}{left}{resumed}"
