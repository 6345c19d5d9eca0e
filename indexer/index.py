"""The Index: one index folder (SQLite + HNSW) over a set of roots. The facade calls this."""

from __future__ import annotations

import os
import stat
import threading
from collections.abc import Callable, Sequence
from pathlib import Path
from typing import TYPE_CHECKING

from indexer.chunker import chunking_signature, code_only_change
from indexer.code_prose import DATA_EXT
from indexer.doc_builds import DocBuilds
from indexer.embedder import Embedder
from indexer.errors import IndexerError
from indexer.lock import WriterLock
from indexer.options import IndexOptions
from indexer.parsers import parser_name
from indexer.reasons import KINDS, is_valid_name, label, printable
from indexer.records import (FileProblem, IndexProgress, IndexReport, IndexStatus, Passage,
                             ProblemGroup, RootInfo, WatchEvent)
from indexer.search import PassageJudge, hybrid_search, surrounding_text
from indexer.store import Store
from indexer.updater import UpdateRun
from indexer.vectors import VectorIndex
from indexer.walk import file_ext, is_under

if TYPE_CHECKING:
    from indexer.watcher import Watcher

DB_NAME = "index.db"


def normalize(path: str | Path) -> str:
    """Absolute, user-visible path (symlinks kept, so citations show what the person chose)."""
    return os.path.abspath(os.path.expanduser(str(path)))


class Index:
    def __init__(self, index_dir: Path, *, options: IndexOptions, embedder: Embedder | None = None,
                 one_shot: bool = False) -> None:
        """one_shot: this process reads the index for a query or two and exits; the saved
        vector file is then scanned in place, not loaded (VectorIndex.open(mapped=True))."""
        self.one_shot = one_shot
        self.index_dir = Path(index_dir)
        try:
            self.index_dir.mkdir(parents=True, exist_ok=True)
        except OSError as exc:
            raise IndexerError(f"Cannot create the index folder {self.index_dir}: {exc.strerror}",
                               hint="choose a writable data directory (--data-dir or LOCALRAG_HOME)") from exc
        self.options = options
        self.embedder = embedder or Embedder(options.embedding_model)
        self.store = Store(self.index_dir / DB_NAME)
        self._follow_engine()
        self.lock = WriterLock(self.index_dir)
        self._write_lock = threading.RLock()   # one writer inside this process too
        self._vectors: VectorIndex | None = None
        self._vectors_lock = threading.Lock()
        self._watchers: list[Watcher] = []
        self.caches_unsaved = False   # update(save_caches=False) changed what the files hold
        self._exclude = tuple({normalize(self.index_dir), os.path.realpath(self.index_dir)})

    # --- vectors --------------------------------------------------------------------
    def _vectors_index(self) -> VectorIndex:
        with self._vectors_lock:
            if self._vectors is None:
                dim = self.store.get_meta("dim")
                vectors = VectorIndex(self.index_dir, int(dim) if dim else self.embedder.dim)
                outcome = vectors.open(self.store, mapped=self.one_shot and not self.lock.held,
                                       upgrade=self.lock.held)
                if (outcome != "loaded" or vectors.lexical_outcome != "loaded") and self.lock.held:
                    vectors.save()   # a writer persists the repaired cache at once
                self._vectors = vectors
            return self._vectors

    def _check_model(self) -> None:
        """A different embedding model means every stored vector is wrong: re-embed all."""
        stored = self.store.get_meta("embedding_model")
        name = self.embedder.name
        if stored == name:
            return
        dim = self.embedder.dim
        with self.store.transaction(bump=True) as conn:
            if stored is not None:
                conn.execute("DELETE FROM chunks")
                conn.execute("UPDATE files SET mtime_ns = 0, sha256 = NULL WHERE state = 'indexed'")
            self.store.set_meta(conn, "embedding_model", name)
            self.store.set_meta(conn, "dim", str(dim))
        if stored is not None:
            with self._vectors_lock:
                for leftover in (self.index_dir / "vectors.hnsw", self.index_dir / "vectors.json"):
                    leftover.unlink(missing_ok=True)
                self._vectors = None

    def _follow_engine(self) -> None:
        """An embedder whose engine was chosen automatically takes the one this index was
        built with (the last field of chunking_signature), so a machine's new default (say
        torch-bf16 once the CPU has AMX) never re-embeds an index another default built."""
        follow = getattr(self.embedder, "follow", None)
        if follow is not None and self.store.get_meta("chunk_words"):
            follow(self.engine())

    def _check_chunking(self) -> None:
        """Another chunk size (or chunker, or embedding engine: see chunking_signature)
        means every file must be chunked again. Files are only
        marked stale: each keeps its old chunks (still searchable) until its new ones
        replace them, so a cancelled run loses nothing and the next run carries on."""
        # a running process (the watcher, the app) takes the engine another process moved
        # the index to, instead of writing its own back over it
        self._follow_engine()
        want = chunking_signature(self.options.chunk_words, self.options.chunk_tokens, self.embedder)
        stored = self.store.get_meta("chunk_words")
        if stored == want:
            return
        with self.store.transaction() as conn:
            if stored is not None and code_only_change(stored, want):
                stale = [(fid,) for fid, path in conn.execute(
                    "SELECT id, path FROM files WHERE state = 'indexed'") if _embeds_prose(path)]
                conn.executemany("UPDATE files SET mtime_ns = 0, sha256 = NULL WHERE id = ?", stale)
            elif stored is not None:
                conn.execute("UPDATE files SET mtime_ns = 0, sha256 = NULL WHERE state = 'indexed'")
            self.store.set_meta(conn, "chunk_words", want)

    # --- roots ----------------------------------------------------------------------
    def add_root(self, path: str | Path) -> RootInfo:
        root = normalize(path)
        if not is_valid_name(root):
            raise IndexerError(f"The name of {printable(root)} is not valid UTF-8, so it cannot be "
                               "stored in the index",
                               hint="rename it to a UTF-8 name (a Latin-1 name: "
                               "`convmv -f latin1 -t utf-8 --notest NAME`)")
        if not os.path.exists(root):
            raise IndexerError(f"No such file or folder: {root}",
                               hint="check the path (a typo? an unmounted drive?)")
        try:
            if os.path.isdir(root):
                with os.scandir(root):
                    pass
            elif not stat.S_ISREG(os.stat(root).st_mode):   # never open a FIFO: it blocks
                raise IndexerError(f"Cannot index {root}: it is not a file or folder but a "
                                   "pipe, device or socket", hint="choose a folder of documents")
            else:
                with open(root, "rb"):
                    pass
        except PermissionError:
            raise IndexerError(f"Cannot read {root}: permission denied",
                               hint=f"run `chmod u+rx '{root}'` or choose a folder you own") from None
        except OSError as exc:
            raise IndexerError(f"Cannot read {root}: {exc.strerror}", hint="check the path") from None
        if any(is_under(root, ex) for ex in self._exclude):
            raise IndexerError(f"{root} is localrag's own index folder", hint="index your documents instead")
        for existing in self.roots():
            if is_under(root, existing.path):
                return existing   # already covered by a root
        import time

        with self._writing():
            with self.store.transaction() as conn:
                conn.execute("INSERT OR IGNORE INTO roots(path, added_at) VALUES (?, ?)", (root, time.time()))
                for child, _ in self.store.roots():
                    if child != root and is_under(child, root):   # the new root swallows it
                        conn.execute("DELETE FROM roots WHERE path=?", (child,))
                        conn.execute("UPDATE files SET root=? WHERE root=?", (root, child))
        return next(r for r in self.roots() if r.path == root)

    def remove_root(self, path: str | Path) -> int:
        root = normalize(path)
        if root not in {r for r, _ in self.store.roots()}:
            raise IndexerError(f"{root} is not an indexed folder",
                               hint="`localrag roots` lists the indexed folders")
        with self._writing():
            vectors = self._vectors_index()
            with self.store.transaction(bump=True) as conn:
                chunk_ids = [r[0] for r in conn.execute(
                    "SELECT c.id FROM chunks c JOIN files f ON f.id = c.file_id WHERE f.root=?", (root,))]
                conn.execute("DELETE FROM chunks WHERE file_id IN (SELECT id FROM files WHERE root=?)", (root,))
                removed = conn.execute("DELETE FROM files WHERE root=?", (root,)).rowcount
                conn.execute("DELETE FROM roots WHERE path=?", (root,))
            vectors.apply(added_ids=[], added_vecs=None, deleted_ids=chunk_ids,
                          generation=self.store.generation())
            vectors.save()
        return removed

    def roots(self) -> list[RootInfo]:
        counts = self.store.root_counts()
        return [RootInfo(path, *counts.get(path, (0, 0)), added_at=added,
                         missing=not os.path.lexists(path))
                for path, added in self.store.roots()]

    # --- updating -------------------------------------------------------------------
    def _writing(self):  # noqa: ANN202 - context manager
        index = self

        class _Writing:
            def __enter__(self) -> None:
                index._write_lock.acquire()
                try:
                    index.lock.acquire()
                except BaseException:
                    index._write_lock.release()
                    raise

            def __exit__(self, *exc: object) -> None:
                index.lock.release()
                index._write_lock.release()

        return _Writing()

    def _scopes(self, paths: Sequence[str | Path] | None, *, dry_run: bool) -> list[tuple[str, str]]:
        roots = [r for r, _ in self.store.roots()]
        if paths is None:
            return [(r, r) for r in roots]
        scopes = []
        for p in paths:
            path = normalize(p)
            owners = [r for r in roots if is_under(path, r)]
            if owners:
                scopes.append((max(owners, key=len), path))
            elif dry_run:
                scopes.append((path, path))   # a dry run may look at a folder not added yet
            else:
                raise IndexerError(f"{path} is not inside any indexed folder",
                                   hint=f"add it first: localrag index '{path}'")
        scopes += self._affected(scopes)
        # a path inside another given path adds nothing
        scopes.sort(key=lambda s: len(s[1]))
        kept: list[tuple[str, str]] = []
        for root, scope in scopes:
            if not any(is_under(scope, k) for _, k in kept):
                kept.append((root, scope))
        return kept

    def _affected(self, scopes: list[tuple[str, str]]) -> list[tuple[str, str]]:
        """The other paths whose walker verdict the given ones decide (a documentation
        site's page and its source copy, doc_builds.DocBuilds.affected): a watcher's event
        for a page that appears drops the copy indexed while it was missing."""
        builds: dict[str, DocBuilds] = {}
        out = []
        for root, scope in scopes:
            if root not in builds:
                builds[root] = DocBuilds(root, self.options.extensions)
            out += [(root, p) for p in builds[root].affected(scope) if is_under(p, root)]
        return out

    def update(self, paths: Sequence[str | Path] | None = None, *,
               progress: Callable[[IndexProgress], None] | None = None,
               cancel: threading.Event | None = None, dry_run: bool = False,
               save_caches: bool = True) -> IndexReport:
        """Bring the index up to date for all roots (paths=None) or just these paths.

        save_caches=False leaves the HNSW and BM25 files as they were (SQLite has every
        change; a stale cache is repaired from it on open): the watcher saves them once
        it is idle (save_caches()), not after every changed file (the HNSW file alone is
        0.9 s to write at 200k chunks, ~1.6 GB at 1M)."""
        scopes = self._scopes(paths, dry_run=dry_run)
        if dry_run:
            run = UpdateRun(store=self.store, vectors=self._vectors_index, embedder=self.embedder,
                            options=self.options, exclude=self._exclude, progress=progress, cancel=cancel)
            return run.run(scopes, dry_run=True)
        with self._writing():
            self._check_model()
            self._check_chunking()
            vectors = self._vectors_index()
            vectors.sync(self.store)   # another process may have written since we last looked
            run = UpdateRun(store=self.store, vectors=lambda: vectors, embedder=self.embedder,
                            options=self.options, exclude=self._exclude, progress=progress, cancel=cancel,
                            save_caches=save_caches)
            report = run.run(scopes)
            if run.changed_vectors and not save_caches:
                self.caches_unsaved = True
            elif run.changed_vectors:
                self.caches_unsaved = False
            return report

    def save_caches(self) -> None:
        """Write the HNSW and BM25 files if changes since the last save are only in SQLite."""
        with self._writing():
            if self.caches_unsaved and self._vectors is not None:
                self._vectors.save()
            self.caches_unsaved = False

    # --- reading --------------------------------------------------------------------
    def search(self, query: str, *, k: int = 5, rerank: bool = False,
               rerank_depth: int | None = None, judge: PassageJudge | None = None,
               judge_depth: int | None = None) -> list[Passage]:
        """The best `k` passages: dense + BM25 fused; with a `judge` (the caller's relevance
        model, search.PassageJudge, whose `languages` attribute, if any, says what it reads),
        the fused top `judge_depth` reordered by what it finds in them; else with `rerank`,
        the fused top `rerank_depth` reordered by the learned ranker (indexer/learned_rank.py)."""
        if not query.strip() or k <= 0:
            return []
        stored = self.store.get_meta("embedding_model")
        if stored is not None and stored != self.embedder.name:
            raise IndexerError(f"The index was built with the embedding model {stored}, not "
                               f"{self.embedder.name}", hint="run `localrag index` to re-embed with the new model")
        vectors = self._vectors_index() if self.store.get_meta("dim") else None
        if vectors is not None and not self.lock.held:
            vectors.sync(self.store)   # a reader catches up with another process's writes
        query_vec = self.embedder.encode([query])[0] if vectors is not None and len(vectors) else None
        ranker = None
        if rerank and query_vec is not None:
            from indexer.learned_rank import shared_ranker

            ranker = shared_ranker()
        from indexer.language import reads_query
        from indexer.search import ALPHA, JUDGE_DEPTH, OTHER_LANGUAGE_ALPHA, RERANK_DEPTH

        # a query the embedding model cannot read (Japanese or German for an English model)
        # leans on BM25, and a judge that cannot read it leaves the fused order as it is
        alpha = ALPHA if reads_query(getattr(self.embedder, "languages", ()), query) else OTHER_LANGUAGE_ALPHA
        if judge is not None and not reads_query(getattr(judge, "languages", ()), query):
            judge = ranker = None      # nor the learned ranker, whose features read English
        elif alpha != ALPHA:
            ranker = None
        return hybrid_search(self.store, vectors, query_vec, query, k=k, ranker=ranker,
                             embed=self.embedder.encode,
                             rerank_depth=RERANK_DEPTH if rerank_depth is None else rerank_depth,
                             judge=judge, judge_depth=JUDGE_DEPTH if judge_depth is None else judge_depth,
                             alpha=alpha)

    def surrounding(self, passage: Passage, *, chars: int = 1500) -> tuple[str, int, int]:
        return surrounding_text(self.store, passage, chars=chars)

    def is_empty(self) -> bool:
        return self.store.conn.execute("SELECT NOT EXISTS (SELECT 1 FROM chunks)").fetchone()[0] == 1

    def status(self, *, per_group: int | None = 10, kind: str | None = None) -> IndexStatus:
        """Counts, roots and the files not indexed, grouped by kind of reason.

        per_group: files listed in each group (the first by path; None = all of them).
        kind: only the group(s) of this kind (`localrag status --reason KIND`).
        """
        counts = self.store.counts()
        db_bytes = sum(p.stat().st_size for p in self.index_dir.glob(DB_NAME + "*") if p.is_file())
        hnsw = self.index_dir / "vectors.hnsw"
        return IndexStatus(
            roots=self.roots(),
            files_indexed=counts.get("indexed", 0),
            files_skipped=counts.get("skipped", 0),
            files_error=counts.get("error", 0),
            chunks=counts["chunks"],
            problems=self.problem_groups(per_group=per_group, kind=kind),
            db_bytes=db_bytes,
            hnsw_bytes=hnsw.stat().st_size if hnsw.exists() else 0,
            embedding_model=self.store.get_meta("embedding_model") or self.embedder.name,
            embedding_engine=self.engine(),
        )

    def engine(self) -> str:
        """The embedding engine of this index's vectors (chunking_signature's last field),
        else the one its embedder would use."""
        stored = self.store.get_meta("chunk_words") or ""
        if stored.count("|") >= 3:
            return stored.rsplit("|", 1)[-1]
        return getattr(self.embedder, "engine", "")

    def problem_groups(self, *, per_group: int | None = 10, kind: str | None = None) -> list[ProblemGroup]:
        """Files in error first, then skipped ones; within each, larger groups first."""
        order = list(KINDS)
        groups = sorted(self.store.problem_groups(),
                        key=lambda g: (g[0] != "error", -g[2], order.index(g[1]) if g[1] in order else len(order)))
        return [ProblemGroup(state, k, label(k), count,   # type: ignore[arg-type]
                             self.problem_files(state, k, limit=per_group))
                for state, k, count in groups if kind is None or k == kind]

    def problem_files(self, state: str, kind: str | None = None, *, offset: int = 0,
                      limit: int | None = 200) -> list[FileProblem]:
        """One page of the files in `state` (and of `kind`), by path."""
        return [FileProblem(p, state, r, k)  # type: ignore[arg-type]
                for p, r, k in self.store.problems(state, kind, limit=limit, offset=offset)]

    # --- watching -------------------------------------------------------------------
    def watch(self, on_event: Callable[[WatchEvent], None], *,
              on_error: Callable[[Exception], None] | None = None, debounce_s: float = 0.5) -> "Watcher":
        from indexer.watcher import Watcher

        watcher = Watcher(self, on_event, on_error=on_error, debounce_s=debounce_s)
        watcher.start()
        self._watchers.append(watcher)
        return watcher

    def close(self) -> None:
        for watcher in list(self._watchers):
            watcher.stop()
        self._watchers.clear()
        self.store.close()


def _embeds_prose(path: str) -> bool:
    """Whether the chunks of the file at `path` are embedded by their prose (parsers.code_doc)."""
    ext = file_ext(path)
    return parser_name(ext) == "code" and ext not in DATA_EXT
