"""One index run: scan, classify (new / changed / moved / deleted / unchanged), read,
parse, chunk, embed in batches across files, and commit batch by batch.

Each batch is one SQLite transaction (chunks, file rows, generation bump), mirrored into
the HNSW cache only after it commits. A kill -9 therefore loses at most the batch in
flight; the rerun redoes it, and the HNSW cache is repaired from SQLite on open.
"""

from __future__ import annotations

import os
import threading
import time
from collections.abc import Callable
from dataclasses import dataclass, field

import numpy as np

from indexer import reading, walk
from indexer.chunker import Chunk, Sizer, chunk_document, chunk_embedding_text, sizer_for, text_key
from indexer.embedder import Embedder
from indexer.eta import PieceEta
from indexer.options import IndexOptions
from indexer.parse_pdf import ocr_may_read
from indexer.parsers import STREAMED_EXT, parse_bytes, parse_path, parser_name
from indexer.reasons import printable
from indexer.records import FileProblem, IndexProgress, IndexReport
from indexer.store import FileRow, Store
from indexer.vectors import VectorIndex

ProgressFn = Callable[[IndexProgress], None]


@dataclass
class _Pending:
    """Work waiting for the next commit."""

    files: list[tuple[reading.FileSnapshot, str, list[Chunk], FileRow | None]] = field(default_factory=list)
    ops: list[Callable] = field(default_factory=list)     # small row changes: (conn, out) -> None
    chunk_count: int = 0
    pieces: int = 0      # word pieces of the files' chunks

    def __bool__(self) -> bool:
        return bool(self.files or self.ops)


class UpdateRun:
    def __init__(self, *, store: Store, vectors: Callable[[], VectorIndex], embedder: Embedder,
                 options: IndexOptions, exclude: tuple[str, ...] = (),
                 progress: ProgressFn | None = None, cancel: threading.Event | None = None,
                 save_caches: bool = True) -> None:
        self.store = store
        self.vectors = vectors
        self.embedder = embedder
        self.options = options
        self.exclude = exclude
        self.progress_fn = progress
        self.cancel = cancel
        self.save_caches = save_caches
        self.report = IndexReport()
        self.t0 = time.monotonic()
        self.files_total = self.files_done = self.chunks_done = self.bytes_done = 0
        self.changed_vectors = False
        self.sizer: Sizer | None | bool = False   # not made yet
        self.key_prefix: str | None = None
        self.eta: PieceEta | None = None
        self._pool = None          # the embedding thread (concurrent.futures), while a run needs it
        self._inflight: tuple | None = None   # (pending, keys, future) being embedded
        self._recent: dict[bytes, np.ndarray] = {}   # the last embedded batch's vectors by key
        self.embedding_now: str | None = None

    def _progress(self, phase: str, current: str | None = None) -> None:
        if self.progress_fn is not None:
            eta = self.eta.figures() if self.eta is not None else None
            self.progress_fn(IndexProgress(
                phase=phase, files_done=self.files_done, files_total=self.files_total,
                chunks_done=self.chunks_done, bytes_done=self.bytes_done,
                elapsed_s=time.monotonic() - self.t0, current_path=current,
                pieces_done=eta.pieces_done if eta else 0,
                pieces_total=eta.pieces_total if eta else 0,
                pieces_per_s=eta.pieces_per_s if eta else 0.0,
                pieces_eta_s=eta.eta_s if eta else None, embedding_now=self.embedding_now))

    def _problem(self, path: str, state: str, reason: str, kind: str = "other") -> None:
        self.report.problems.append(FileProblem(path, state, reason, kind))  # type: ignore[arg-type]

    # --- the run --------------------------------------------------------------------
    def run(self, scopes: list[tuple[str, str]], *, dry_run: bool = False) -> IndexReport:
        report = self.report
        report.dry_run = dry_run
        self._progress("scanning")
        scan = walk.scan(scopes, self.options, exclude=self.exclude)
        existing: dict[str, FileRow] = {}
        for _, scope in scopes:
            # a scope with odd bytes in its name (a watcher event) is stored as printable
            existing.update(self.store.files_under(printable(scope), os.sep))

        to_read = []
        for path, cand in scan.candidates.items():
            row = existing.get(path)
            if (row and row.state != "error" and row.mtime_ns == cand.mtime_ns
                    and row.size == cand.size and row.root == cand.root
                    and not self._ocr_now(row) and not self._walker_changed_its_mind(row)):
                report.unchanged += 1
            else:
                to_read.append(cand)
        changed_skips = []
        for skip in scan.skips.values():
            row = existing.get(skip.path)
            if skip.state == "error":
                report.errors += 1
            else:
                report.skipped += 1
            if row is None or ((row.state, row.reason, row.root, row.reason_kind)
                               != (skip.state, skip.reason, skip.root, skip.kind)):
                changed_skips.append(skip)
                self._problem(skip.path, skip.state, skip.reason, skip.kind)
            elif dry_run:
                self._problem(skip.path, skip.state, skip.reason, skip.kind)
        gone = {p: r for p, r in existing.items() if p not in scan.candidates and p not in scan.skips}
        self.files_total = len(to_read)
        self.eta = PieceEta(bytes_total=sum(c.size for c in to_read), clock=time.monotonic)

        if dry_run:
            report.would_index = sorted(c.path for c in to_read)
            report.parsers = {c.path: parser_name(c.ext, os.path.basename(c.path))
                              for c in sorted(to_read, key=lambda c: c.path)}
            report.removed = len(gone)
            report.elapsed_s = time.monotonic() - self.t0
            self._progress("done")
            return report

        self._progress("scanning")   # listing done: files_total is known
        self.eta.started()           # reading + embedding from here: the time the ETA plans
        pending = _Pending()
        for skip in changed_skips:
            pending.ops.append(self._skip_op(skip.path, skip.root, skip.state, skip.reason, skip.kind,
                                             skip.mtime_ns, skip.size, existing.get(skip.path)))
        movable = {r.sha256: r for r in gone.values() if r.state == "indexed" and r.sha256}

        try:
            for cand in to_read:
                if self.cancel is not None and self.cancel.is_set():
                    report.cancelled = True
                    break
                self._read_one(cand, existing.get(cand.path), movable, gone, pending)
                self.files_done += 1
                self._progress("indexing", cand.path)
                # commit groups of a few encode batches: long enough for sentence-transformers'
                # length sorting to keep padding low, short enough to lose little on a crash
                if pending.chunk_count >= 4 * self.options.batch_size:
                    self._flush(pending)
                    pending = _Pending()
            self._flush(pending)
            self._commit_inflight()
        except BaseException:
            self._abandon_inflight()
            raise

        if gone:
            deleted: list[int] = []
            with self.store.transaction(bump=True) as conn:
                for row in gone.values():
                    deleted += self.store.delete_file(conn, row.id)
            report.removed += len(gone)
            report.chunks_removed += len(deleted)
            self._mirror([], None, deleted)
        if self.changed_vectors and self.save_caches:
            self._progress("saving")
            self.vectors().save()
        report.elapsed_s = time.monotonic() - self.t0
        self._progress("done")
        return report

    # what the walker alone decides: a file it now lists (a new extension in the settings, a
    # format localrag learned to read, a raised size limit) is read, though unchanged
    _WALKER_KINDS = frozenset({"unsupported_type", "too_large", "hidden", "gitignore",
                               "ignored_folder", "symlink", "special_file", "empty", "bad_name",
                               "minified", "generated"})

    def _walker_changed_its_mind(self, row: FileRow) -> bool:
        return row.state == "skipped" and row.reason_kind in self._WALKER_KINDS

    def _ocr_now(self, row: FileRow) -> bool:
        """A scanned PDF skipped while OCR was off (or its package missing) is read again
        once it is on."""
        return self.options.ocr and row.reason_kind == "no_text" and ocr_may_read(row.reason or "")

    # --- per file -------------------------------------------------------------------
    def _read_one(self, cand: walk.Candidate, row: FileRow | None, movable: dict[str, FileRow],
                  gone: dict[str, FileRow], pending: _Pending) -> None:
        report = self.report
        streamed = cand.ext in STREAMED_EXT
        try:
            if streamed:   # a mailbox of gigabytes: hashed and parsed piece by piece
                snap = reading.stream_snapshot(cand.path)
            else:
                snap = reading.read_snapshot(cand.path, max_bytes=self.options.max_file_bytes)
        except reading.FileVanished:
            self._problem(cand.path, "skipped", "vanished while indexing (deleted or moved "
                          "away); it will be indexed if it comes back")
            if row is not None:
                gone[cand.path] = row
            return
        except reading.FileSkip as skip:
            self._skip_result(cand, skip, row, pending, 0, 0)
            return
        self.bytes_done += snap.size
        if self.eta is not None:
            self.eta.read(snap.size, 0)
        name = os.path.basename(cand.path)
        if row is not None and row.state == "indexed" and row.sha256 == snap.sha256:
            report.unchanged += 1   # touched, same content: only the stat changed
            pending.ops.append(self._touch_op(row.id, snap))
            return
        source = movable.pop(snap.sha256, None)
        if source is not None and row is None:
            gone.pop(source.path, None)
            report.moved += 1
            pending.ops.append(self._move_op(source, cand, snap))
            return
        same = [r for r in self.store.files_by_sha(snap.sha256) if r.path != cand.path]
        if same:
            self._count_added(row)
            pending.ops.append(self._copy_op(same[0], cand, snap, row))
            return
        sizer = self._sizer()   # outside the try: a broken tokenizer is a model error, not the file's
        try:
            if streamed:
                doc = parse_path(cand.path, ext=cand.ext, ocr=self.options.ocr)
            else:
                doc = parse_bytes(snap.data, ext=cand.ext, name=name, ocr=self.options.ocr)
            chunks = chunk_document(doc, file_name=name, chunk_words=self.options.chunk_words,
                                    sizer=sizer)
        except reading.FileSkip as skip:
            self._skip_result(cand, skip, row, pending, snap.mtime_ns, snap.size)
            return
        except Exception as exc:   # a parser bug or an odd file must not stop the run
            skip = reading.FileSkip("error", f"could not parse the file ({type(exc).__name__}: "
                                    f"{str(exc)[:160]}); please report it if the file opens fine",
                                    "parse_failed")
            self._skip_result(cand, skip, row, pending, snap.mtime_ns, snap.size)
            return
        if not chunks:
            self._skip_result(cand, reading.FileSkip("skipped", "no text found in the file", "no_text"),
                              row, pending, snap.mtime_ns, snap.size)
            return
        self._count_added(row)
        pieces = self._pieces([chunk_embedding_text(c) for c in chunks])
        pending.files.append((snap, cand.root, chunks, row))
        pending.chunk_count += len(chunks)
        pending.pieces += pieces
        if self.eta is not None:
            self.eta.read(0, pieces)

    def _pieces(self, texts: list[str]) -> int:
        """Word pieces the model reads for these texts ([CLS] and [SEP] included)."""
        count = getattr(self.embedder, "count_tokens", None)
        if count is None:                  # an embedder without a tokenizer: words
            return sum(len(t.split()) + 2 for t in texts)
        return sum(count(texts)) + 2 * len(texts)

    def _sizer(self) -> Sizer | None:
        """Chunks are sized in the embedder's word pieces (indexer/chunker.py)."""
        if self.sizer is False:
            self.sizer = sizer_for(self.embedder, self.options.chunk_tokens)
        return self.sizer

    def _count_added(self, row: FileRow | None) -> None:
        if row is None:
            self.report.added += 1
        else:
            self.report.updated += 1

    def _skip_result(self, cand: walk.Candidate, skip: reading.FileSkip, row: FileRow | None,
                     pending: _Pending, mtime_ns: int, size: int) -> None:
        if skip.state == "error":
            self.report.errors += 1
        else:
            self.report.skipped += 1
        reason = printable(skip.reason)   # e.g. a parser's message quoting odd bytes
        self._problem(cand.path, skip.state, reason, skip.kind)
        pending.ops.append(self._skip_op(cand.path, cand.root, skip.state, reason, skip.kind,
                                         mtime_ns or cand.mtime_ns, size or cand.size, row))

    # --- row operations (run inside the batch transaction) --------------------------
    def _skip_op(self, path: str, root: str, state: str, reason: str, kind: str, mtime_ns: int,
                 size: int, row: FileRow | None) -> Callable:
        def op(conn, out) -> None:  # noqa: ANN001
            if row is not None and row.chunks:
                out["deleted"] += self.store.delete_chunks_of(conn, row.id)
            # errors keep mtime 0 so the next run retries them (chmod does not touch mtime)
            self.store.upsert_file(conn, path=path, root=root, mtime_ns=mtime_ns if state != "error" else 0,
                                   size=size, sha256=None, state=state, reason=reason,
                                   reason_kind=kind, chunks=0)
        return op

    def _touch_op(self, file_id: int, snap: reading.FileSnapshot) -> Callable:
        def op(conn, out) -> None:  # noqa: ANN001
            conn.execute("UPDATE files SET mtime_ns=?, size=? WHERE id=?", (snap.mtime_ns, snap.size, file_id))
        return op

    def _move_op(self, source: FileRow, cand: walk.Candidate, snap: reading.FileSnapshot) -> Callable:
        def op(conn, out) -> None:  # noqa: ANN001
            conn.execute("UPDATE files SET path=?, root=?, mtime_ns=?, size=?, indexed_at=? WHERE id=?",
                         (cand.path, cand.root, snap.mtime_ns, snap.size, time.time(), source.id))
            self.store.retitle_chunks(conn, source.id, os.path.basename(source.path),
                                      os.path.basename(cand.path))
        return op

    def _copy_op(self, source: FileRow, cand: walk.Candidate, snap: reading.FileSnapshot,
                 row: FileRow | None) -> Callable:
        def op(conn, out) -> None:  # noqa: ANN001
            if row is not None:
                out["deleted"] += self.store.delete_chunks_of(conn, row.id)
            fid = self.store.upsert_file(conn, path=cand.path, root=cand.root, mtime_ns=snap.mtime_ns,
                                         size=snap.size, sha256=snap.sha256, state="indexed",
                                         reason=None, chunks=source.chunks)
            out["copied"] += self.store.copy_chunks(conn, source.id, fid, os.path.basename(source.path),
                                                    os.path.basename(cand.path))
        return op

    # --- batches --------------------------------------------------------------------
    def _flush(self, pending: _Pending) -> None:
        """Start embedding `pending` in the embedding thread, then commit the batch
        embedded before it: the next files are read and parsed, and this batch is
        committed (SQLite, BM25, HNSW), while the model works, so it never waits for them.
        At most one batch is in flight: a crash loses it and the one being read."""
        if not pending:
            return
        texts = [chunk_embedding_text(c) for _, _, chunks, _ in pending.files for c in chunks]
        keys = [text_key(self._key_prefix(), t) for t in texts]
        job = None
        if texts:
            if self._pool is None:
                from concurrent.futures import ThreadPoolExecutor

                self._pool = ThreadPoolExecutor(1, thread_name_prefix="embed-batch")
            job = self._pool.submit(self._embed_new, texts, keys)
        previous, self._inflight = self._inflight, (pending, keys, job)
        if previous is not None:
            self._commit(*previous)
        if texts:
            paths = [snap.path for snap, _, _, _ in pending.files]
            more = f" and {len(paths) - 1} more files" if len(paths) > 1 else ""
            self.embedding_now = f"{len(texts)} chunks of {paths[0]}{more}"
            self._progress("embedding")

    def _commit_inflight(self) -> None:
        """Wait for the batch in flight and commit it (and stop the embedding thread)."""
        previous, self._inflight = self._inflight, None
        try:
            if previous is not None:
                self._commit(*previous)
        finally:
            self._stop_pool()

    def _stop_pool(self) -> None:
        """End the embedding thread, closing the SQLite connection it opened."""
        if self._pool is not None:
            self._pool.submit(self.store.release_thread)
            self._pool.shutdown(wait=True)
            self._pool = None

    def _abandon_inflight(self) -> None:
        """The run failed: let the batch in flight finish unseen, stop the thread."""
        previous, self._inflight = self._inflight, None
        self._stop_pool()
        if previous is not None and previous[2] is not None:
            previous[2].exception()      # retrieved, so it is not reported as unhandled

    def _commit(self, pending: _Pending, keys: list[bytes], job) -> None:  # noqa: ANN001 - a Future
        vecs = job.result() if job is not None else np.zeros((0, 1), dtype=np.float32)
        if self._inflight is None or self._inflight[0] is pending:
            self.embedding_now = None
        out: dict[str, list[int]] = {"added": [], "deleted": [], "copied": []}
        with self.store.transaction(bump=True) as conn:
            pos = 0
            for snap, root, chunks, row in pending.files:
                if row is not None:
                    out["deleted"] += self.store.delete_chunks_of(conn, row.id)
                fid = self.store.upsert_file(conn, path=snap.path, root=root, mtime_ns=snap.mtime_ns,
                                             size=snap.size, sha256=snap.sha256, state="indexed",
                                             reason=None, chunks=len(chunks))
                rows = [(c.ord, c.title, c.text, c.start_line, c.end_line, c.page, c.char_start,
                         c.char_end) for c in chunks]
                out["added"] += self.store.insert_chunks(conn, fid, rows, vecs[pos:pos + len(chunks)],
                                                         keys[pos:pos + len(chunks)])
                pos += len(chunks)
            for op in pending.ops:
                op(conn, out)
        added_ids = list(out["added"])
        parts = [vecs] if added_ids else []
        for ids_part, vecs_part in self.store.embeddings(out["copied"]):  # copies: stored vectors
            added_ids += ids_part.tolist()
            parts.append(vecs_part)
        self._mirror(added_ids, np.vstack(parts) if parts else None, out["deleted"])
        if self.eta is not None and pending.pieces:
            self.eta.embedded(pending.pieces)
        self.chunks_done += len(out["added"]) + len(out["copied"])
        self.report.chunks_added += len(out["added"]) + len(out["copied"])
        self.report.chunks_removed += len(out["deleted"])
        self._progress("indexing")

    def _key_prefix(self) -> str:
        if self.key_prefix is None:
            emb = self.embedder   # a wrapping test double may lack engine/window
            self.key_prefix = (f"{emb.name}|{getattr(emb, 'engine', '')}|"
                               f"{getattr(emb, 'window', '')}")
        return self.key_prefix

    def _embed_new(self, texts: list[str], keys: list[bytes]) -> np.ndarray:
        """Vectors for `texts`: each distinct text is embedded once, and a text embedded
        before (a stored chunk with the same key: an unchanged section of an edited file,
        boilerplate repeated across files) reuses its stored vector."""
        known = self.store.vectors_by_key(keys)
        for key in keys:      # the batch before may not be committed yet
            if key not in known and key in self._recent:
                known[key] = self._recent[key]
        todo: dict[bytes, str] = {}
        for key, text in zip(keys, texts):
            if key not in known and key not in todo:
                todo[key] = text
        if todo:
            fresh = self.embedder.encode(list(todo.values()), batch_size=self.options.batch_size)
            known.update(zip(todo, fresh))
        self.report.chunks_embedded += len(todo)
        self.report.chunks_reused += len(texts) - len(todo)
        self._recent = known
        return np.vstack([known[k] for k in keys]).astype(np.float32, copy=False)

    def _mirror(self, added: list[int], vecs: np.ndarray | None, deleted: list[int]) -> None:
        if not added and not deleted:
            return
        self.changed_vectors = True
        self.vectors().apply(added_ids=added, added_vecs=vecs, deleted_ids=deleted,
                             generation=self.store.generation())
