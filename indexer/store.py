"""The SQLite store: files, chunks (with embeddings), FTS5 - the source of truth.

Schema changes go through numbered migrations (PRAGMA user_version). Every change to
the chunks happens inside one transaction that also bumps the `generation` counter, so
the HNSW cache can tell when it is behind. Chunk ids come from AUTOINCREMENT and are
never reused: an id in the HNSW file always means the same vector.
"""

from __future__ import annotations

import sqlite3
import threading
import time
from collections.abc import Callable, Iterable, Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from pathlib import Path

import numpy as np

from indexer.errors import StoreError


@dataclass
class FileRow:
    id: int
    path: str
    root: str
    mtime_ns: int
    size: int
    sha256: str | None
    state: str
    reason: str | None
    chunks: int
    reason_kind: str | None = None   # indexer.reasons.KINDS; None for indexed files


FILE_COLUMNS = "id, path, root, mtime_ns, size, sha256, state, reason, chunks, reason_kind"
CHUNK_COLUMNS = ("c.id, f.path, c.title, c.text, c.start_line, c.end_line, c.page, "
                 "c.char_start, c.char_end")


def _migration_1(db) -> None:  # noqa: ANN001 - sqlite_utils.Database
    db["meta"].create({"key": str, "value": str}, pk="key", if_not_exists=True)
    db["roots"].create({"path": str, "added_at": float}, pk="path", if_not_exists=True)
    db["files"].create(
        {"id": int, "path": str, "root": str, "mtime_ns": int, "size": int, "sha256": str,
         "state": str, "reason": str, "chunks": int, "indexed_at": float},
        pk="id", not_null={"path", "root", "state"}, defaults={"chunks": 0}, if_not_exists=True,
    )
    db["files"].create_index(["path"], unique=True, if_not_exists=True)
    db["files"].create_index(["root"], if_not_exists=True)
    db["files"].create_index(["sha256"], if_not_exists=True)
    # AUTOINCREMENT (not expressible through sqlite-utils' create): ids are never reused.
    db.execute(
        "CREATE TABLE IF NOT EXISTS chunks (id INTEGER PRIMARY KEY AUTOINCREMENT, "
        "file_id INTEGER NOT NULL REFERENCES files(id), ord INTEGER NOT NULL, title TEXT NOT NULL, "
        "text TEXT NOT NULL, start_line INTEGER, end_line INTEGER, page INTEGER, "
        "char_start INTEGER NOT NULL, char_end INTEGER NOT NULL, embedding BLOB NOT NULL)"
    )
    db["chunks"].create_index(["file_id", "ord"], if_not_exists=True)
    db["chunks"].enable_fts(["title", "text"], tokenize="porter", create_triggers=True)
    db["meta"].insert_all([{"key": "generation", "value": "0"}], pk="key", ignore=True)


def _migration_2(db) -> None:  # noqa: ANN001 - sqlite_utils.Database
    """Skipped and failed files get the kind of their reason, so status can group them
    (thousands of "unsupported file type" rows become one line with a count)."""
    from indexer.reasons import legacy_kind

    db.execute("ALTER TABLE files ADD COLUMN reason_kind TEXT")
    rows = db.execute("SELECT id, reason FROM files WHERE state != 'indexed'").fetchall()
    db.conn.executemany("UPDATE files SET reason_kind=? WHERE id=?",
                        [(legacy_kind(reason), fid) for fid, reason in rows])
    db.execute("CREATE INDEX IF NOT EXISTS idx_files_problems ON files(state, reason_kind, path)")


def _migration_3(db) -> None:  # noqa: ANN001 - sqlite_utils.Database
    """Each chunk keeps a digest of the text it was embedded from (with the model and
    engine): a chunk whose text was embedded before, in this run or an earlier one,
    reuses that vector instead of embedding it again. Older rows stay NULL (not reused)."""
    db.execute("ALTER TABLE chunks ADD COLUMN text_key BLOB")
    db.execute("CREATE INDEX IF NOT EXISTS idx_chunks_text_key ON chunks(text_key) "
               "WHERE text_key IS NOT NULL")


MIGRATIONS: list[Callable] = [_migration_1, _migration_2, _migration_3]


class Store:
    """Thread-safe access to one index database (one connection per thread)."""

    def __init__(self, db_path: Path) -> None:
        self.path = Path(db_path)
        self._local = threading.local()
        self._all: list[sqlite3.Connection] = []
        self._all_lock = threading.Lock()
        self._migrate()

    # --- connections ----------------------------------------------------------------
    @property
    def conn(self) -> sqlite3.Connection:
        conn = getattr(self._local, "conn", None)
        if conn is None:
            try:
                conn = sqlite3.connect(self.path, timeout=30, isolation_level=None,
                                       check_same_thread=False)
                conn.execute("PRAGMA journal_mode=WAL")
                conn.execute("PRAGMA synchronous=NORMAL")   # WAL + NORMAL survives kill -9
                conn.execute("PRAGMA busy_timeout=30000")
            except sqlite3.Error as exc:
                raise self._error(exc, "open") from exc
            self._local.conn = conn
            with self._all_lock:
                self._all.append(conn)
        return conn

    @property
    def db(self):  # noqa: ANN201 - sqlite_utils.Database, imported lazily
        import sqlite_utils

        db = getattr(self._local, "db", None)
        if db is None:
            db = self._local.db = sqlite_utils.Database(self.conn)
        return db

    def release_thread(self) -> None:
        """Close the calling thread's connection, if it has one: a worker thread that ends
        (the updater's embedding thread, one per run) must not leave it open until
        close(), or a long-running watcher collects one per run."""
        conn = getattr(self._local, "conn", None)
        if conn is None:
            return
        self._local.conn = None
        self._local.db = None
        with self._all_lock:
            if conn in self._all:
                self._all.remove(conn)
        try:
            conn.close()
        except sqlite3.Error:
            pass

    def close(self) -> None:
        with self._all_lock:
            for conn in self._all:
                try:
                    conn.close()
                except sqlite3.Error:
                    pass
            self._all.clear()
        self._local = threading.local()

    def _error(self, exc: Exception, action: str) -> StoreError:
        text = str(exc)
        if "full" in text:
            hint = "free some disk space, then run the update again (nothing indexed is lost)"
        elif "locked" in text or "busy" in text:
            hint = "another program holds the index database; close it and retry"
        elif "malformed" in text or "not a database" in text:
            hint = f"the index is damaged; delete {self.path.parent} and index your folders again"
        else:
            hint = f"check that {self.path.parent} is writable"
        return StoreError(f"Cannot {action} the index database {self.path}: {text}", hint=hint)

    def _migrate(self) -> None:
        self.path.parent.mkdir(parents=True, exist_ok=True)
        try:
            version = self.conn.execute("PRAGMA user_version").fetchone()[0]
            if version > len(MIGRATIONS):
                raise StoreError(
                    f"The index {self.path} was written by a newer localrag (schema {version})",
                    hint="upgrade localrag, or delete the index folder and index again",
                )
            for number in range(version + 1, len(MIGRATIONS) + 1):
                with self.transaction():
                    if self.conn.execute("PRAGMA user_version").fetchone()[0] >= number:
                        continue   # another process migrated meanwhile
                    MIGRATIONS[number - 1](self.db)
                    self.conn.execute(f"PRAGMA user_version={number}")
        except sqlite3.Error as exc:
            raise self._error(exc, "open") from exc

    @contextmanager
    def transaction(self, *, bump: bool = False) -> Iterator[sqlite3.Connection]:
        """BEGIN IMMEDIATE ... COMMIT; `bump` increments the generation in the same commit."""
        conn = self.conn
        try:
            conn.execute("BEGIN IMMEDIATE")
        except sqlite3.Error as exc:
            raise self._error(exc, "write") from exc
        try:
            yield conn
            if bump:
                conn.execute("UPDATE meta SET value = CAST(value AS INTEGER) + 1 WHERE key='generation'")
            conn.execute("COMMIT")
        except BaseException as exc:
            try:
                conn.execute("ROLLBACK")
            except sqlite3.Error:
                pass
            if isinstance(exc, sqlite3.Error):
                raise self._error(exc, "write") from exc
            raise

    # --- meta -----------------------------------------------------------------------
    def generation(self) -> int:
        row = self.conn.execute("SELECT value FROM meta WHERE key='generation'").fetchone()
        return int(row[0]) if row else 0

    def get_meta(self, key: str) -> str | None:
        row = self.conn.execute("SELECT value FROM meta WHERE key=?", (key,)).fetchone()
        return row[0] if row else None

    def set_meta(self, conn: sqlite3.Connection, key: str, value: str) -> None:
        conn.execute("INSERT OR REPLACE INTO meta(key, value) VALUES (?, ?)", (key, value))

    # --- roots ----------------------------------------------------------------------
    def roots(self) -> list[tuple[str, float]]:
        return [(r[0], r[1]) for r in self.conn.execute("SELECT path, added_at FROM roots ORDER BY path")]

    def root_counts(self) -> dict[str, tuple[int, int]]:
        rows = self.conn.execute(
            "SELECT root, SUM(state='indexed'), SUM(chunks) FROM files GROUP BY root")
        return {r[0]: (int(r[1] or 0), int(r[2] or 0)) for r in rows}

    # --- files ----------------------------------------------------------------------
    def files_under(self, scope: str, sep: str = "/") -> dict[str, FileRow]:
        """Rows whose path is `scope` or inside it (a range scan on the unique index)."""
        prefix = scope.rstrip(sep) + sep
        upper = prefix[:-1] + chr(ord(sep) + 1)
        rows = self.conn.execute(
            f"SELECT {FILE_COLUMNS} FROM files WHERE path = ? OR (path >= ? AND path < ?)",
            (scope, prefix, upper))
        return {r[1]: FileRow(*r) for r in rows}

    def files_by_sha(self, sha: str) -> list[FileRow]:
        rows = self.conn.execute(
            f"SELECT {FILE_COLUMNS} FROM files WHERE sha256 = ? AND state = 'indexed'", (sha,))
        return [FileRow(*r) for r in rows]

    def upsert_file(self, conn: sqlite3.Connection, *, path: str, root: str, mtime_ns: int,
                    size: int, sha256: str | None, state: str, reason: str | None,
                    chunks: int, reason_kind: str | None = None) -> int:
        if state != "indexed" and reason_kind is None:
            reason_kind = "other"
        conn.execute(
            "INSERT INTO files(path, root, mtime_ns, size, sha256, state, reason, chunks, indexed_at, "
            "reason_kind) VALUES (?,?,?,?,?,?,?,?,?,?) ON CONFLICT(path) DO UPDATE SET "
            "root=excluded.root, mtime_ns=excluded.mtime_ns, size=excluded.size, "
            "sha256=excluded.sha256, state=excluded.state, reason=excluded.reason, "
            "chunks=excluded.chunks, indexed_at=excluded.indexed_at, reason_kind=excluded.reason_kind",
            (path, root, mtime_ns, size, sha256, state, reason, chunks, time.time(),
             reason_kind if state != "indexed" else None))
        return conn.execute("SELECT id FROM files WHERE path=?", (path,)).fetchone()[0]

    def delete_chunks_of(self, conn: sqlite3.Connection, file_id: int) -> list[int]:
        ids = [r[0] for r in conn.execute("SELECT id FROM chunks WHERE file_id=?", (file_id,))]
        if ids:
            conn.execute("DELETE FROM chunks WHERE file_id=?", (file_id,))
        return ids

    def delete_file(self, conn: sqlite3.Connection, file_id: int) -> list[int]:
        ids = self.delete_chunks_of(conn, file_id)
        conn.execute("DELETE FROM files WHERE id=?", (file_id,))
        return ids

    def insert_chunks(self, conn: sqlite3.Connection, file_id: int, rows: list[tuple],
                      vectors: np.ndarray, keys: list[bytes | None] | None = None) -> list[int]:
        """rows: (ord, title, text, start_line, end_line, page, char_start, char_end);
        keys: each chunk's text_key (see vectors_by_key), or None."""
        ids = []
        keys = keys if keys is not None else [None] * len(rows)
        for row, vec, key in zip(rows, vectors, keys):
            cur = conn.execute(
                "INSERT INTO chunks(file_id, ord, title, text, start_line, end_line, page, "
                "char_start, char_end, embedding, text_key) VALUES (?,?,?,?,?,?,?,?,?,?,?)",
                (file_id, *row, np.asarray(vec, dtype=np.float32).tobytes(), key))
            ids.append(cur.lastrowid)
        return ids

    def vectors_by_key(self, keys: Iterable[bytes]) -> dict[bytes, np.ndarray]:
        """Stored vectors of chunks whose embedded text has these keys (one per key)."""
        found: dict[bytes, np.ndarray] = {}
        key_list = list(dict.fromkeys(keys))
        for i in range(0, len(key_list), 500):
            part = key_list[i:i + 500]
            marks = ",".join("?" * len(part))
            for key, blob in self.conn.execute(
                    f"SELECT text_key, embedding FROM chunks WHERE text_key IN ({marks})", part):
                found.setdefault(key, np.frombuffer(blob, dtype=np.float32))
        return found

    def copy_chunks(self, conn: sqlite3.Connection, source_file: int, target_file: int,
                    old_name: str, new_name: str) -> list[int]:
        """Same content elsewhere: copy chunks and embeddings (no re-embedding)."""
        rows = conn.execute(
            "SELECT ord, title, text, start_line, end_line, page, char_start, char_end, embedding, "
            "text_key FROM chunks WHERE file_id=? ORDER BY ord", (source_file,)).fetchall()
        ids = []
        for r in rows:
            title = new_name + r[1][len(old_name):] if r[1].startswith(old_name) else r[1]
            cur = conn.execute(
                "INSERT INTO chunks(file_id, ord, title, text, start_line, end_line, page, "
                "char_start, char_end, embedding, text_key) VALUES (?,?,?,?,?,?,?,?,?,?,?)",
                (target_file, r[0], title, *r[2:]))
            ids.append(cur.lastrowid)
        return ids

    def retitle_chunks(self, conn: sqlite3.Connection, file_id: int, old_name: str, new_name: str) -> None:
        if old_name != new_name:
            conn.execute(
                "UPDATE chunks SET title = ? || substr(title, ?) WHERE file_id=? AND substr(title, 1, ?) = ?",
                (new_name, len(old_name) + 1, file_id, len(old_name), old_name))

    # --- chunks / vectors -----------------------------------------------------------
    def chunk_ids(self) -> np.ndarray:
        rows = self.conn.execute("SELECT id FROM chunks").fetchall()
        return np.fromiter((r[0] for r in rows), dtype=np.int64, count=len(rows))

    def embeddings(self, ids: Iterable[int] | None = None, *, page: int = 5000
                   ) -> Iterator[tuple[np.ndarray, np.ndarray]]:
        """(ids, vectors) in pages, for (re)building the HNSW cache."""
        if ids is None:
            last = 0
            while True:
                rows = self.conn.execute(
                    "SELECT id, embedding FROM chunks WHERE id > ? ORDER BY id LIMIT ?",
                    (last, page)).fetchall()
                if not rows:
                    return
                last = rows[-1][0]
                yield self._unpack(rows)
        else:
            id_list = list(ids)
            for i in range(0, len(id_list), 500):
                part = id_list[i:i + 500]
                marks = ",".join("?" * len(part))
                rows = self.conn.execute(
                    f"SELECT id, embedding FROM chunks WHERE id IN ({marks})", part).fetchall()
                if rows:
                    yield self._unpack(rows)

    @staticmethod
    def _unpack(rows: list[tuple]) -> tuple[np.ndarray, np.ndarray]:
        ids = np.array([r[0] for r in rows], dtype=np.int64)
        vecs = np.vstack([np.frombuffer(r[1], dtype=np.float32) for r in rows])
        return ids, vecs

    def fetch_chunks(self, ids: list[int]) -> dict[int, tuple]:
        if not ids:
            return {}
        marks = ",".join("?" * len(ids))
        rows = self.conn.execute(
            f"SELECT {CHUNK_COLUMNS} FROM chunks c JOIN files f ON f.id = c.file_id "
            f"WHERE c.id IN ({marks})", ids).fetchall()
        return {r[0]: r for r in rows}

    def fts_search(self, match: str, limit: int) -> list[int]:
        if not match:
            return []
        rows = self.conn.execute(
            "SELECT rowid FROM chunks_fts WHERE chunks_fts MATCH ? ORDER BY rank LIMIT ?",
            (match, limit)).fetchall()
        return [r[0] for r in rows]

    def neighbours(self, chunk_id: int, lo: int, hi: int, *, same_title: bool = False
                   ) -> list[tuple[int, int, str]]:
        """(char_start, char_end, text) of the chunks of the same file overlapping [lo, hi);
        `same_title`: only those of the same unit (the same slide, message, cell)."""
        title = (" AND title = (SELECT title FROM chunks WHERE id=?)" if same_title else "")
        args = (chunk_id, lo, hi) + ((chunk_id,) if same_title else ())
        return self.conn.execute(
            "SELECT char_start, char_end, text FROM chunks WHERE file_id = "
            "(SELECT file_id FROM chunks WHERE id=?) AND char_end > ? AND char_start < ?"
            f"{title} ORDER BY char_start", args).fetchall()

    # --- status ---------------------------------------------------------------------
    def counts(self) -> dict[str, int]:
        rows = self.conn.execute("SELECT state, COUNT(*) FROM files GROUP BY state").fetchall()
        out = {r[0]: r[1] for r in rows}
        out["chunks"] = self.conn.execute("SELECT COUNT(*) FROM chunks").fetchone()[0]
        return out

    def problem_groups(self) -> list[tuple[str, str, int]]:
        """(state, reason kind, count) of the files not indexed."""
        rows = self.conn.execute(
            "SELECT state, COALESCE(reason_kind, 'other'), COUNT(*) FROM files "
            "WHERE state IN ('skipped', 'error') GROUP BY 1, 2").fetchall()
        return [(r[0], r[1], int(r[2])) for r in rows]

    def problems(self, state: str, kind: str | None = None, *, limit: int | None = 1000,
                 offset: int = 0) -> list[tuple[str, str, str]]:
        """(path, reason, kind) of files in `state` (and of `kind`), by path."""
        where, args = "state=?", [state]
        if kind is not None:
            where += " AND COALESCE(reason_kind, 'other')=?"
            args.append(kind)
        rows = self.conn.execute(
            f"SELECT path, reason, COALESCE(reason_kind, 'other') FROM files WHERE {where} "
            "ORDER BY path LIMIT ? OFFSET ?", (*args, -1 if limit is None else limit, offset))
        return [(r[0], r[1] or "", r[2]) for r in rows]
