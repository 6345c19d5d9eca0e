"""One writer per index folder: a file lock held while updating or watching.

Readers (search, status) never take it: SQLite's WAL lets them read while one process
writes. The lock is re-entrant inside a process (thread_local=False), so the watcher's
thread can run updates while `watch()` holds it.
"""

from __future__ import annotations

import os
import threading
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

from indexer.errors import IndexLockedError


class WriterLock:
    def __init__(self, index_dir: Path) -> None:
        from filelock import FileLock

        self.index_dir = Path(index_dir)
        self.pid_path = self.index_dir / "writer.pid"
        self._lock = FileLock(str(self.index_dir / "writer.lock"), thread_local=False)
        self._guard = threading.Lock()
        self._depth = 0

    def acquire(self) -> None:
        from filelock import Timeout

        with self._guard:
            try:
                self._lock.acquire(timeout=0.2)
            except Timeout:
                raise IndexLockedError(
                    f"another localrag process (pid {self.holder_pid() or 'unknown'}) is "
                    f"updating {self.index_dir}",
                    hint="wait for it to finish or close it, then try again",
                ) from None
            self._depth += 1
            if self._depth == 1:
                tmp = self.pid_path.with_suffix(".tmp")
                tmp.write_text(str(os.getpid()))
                os.replace(tmp, self.pid_path)

    def release(self) -> None:
        with self._guard:
            if self._depth == 0:
                return
            self._depth -= 1
            if self._depth == 0:
                try:
                    self.pid_path.unlink()
                except OSError:
                    pass
            self._lock.release()

    @property
    def held(self) -> bool:
        return self._depth > 0

    def holder_pid(self) -> int | None:
        try:
            return int(self.pid_path.read_text().strip())
        except (OSError, ValueError):
            return None

    @contextmanager
    def held_for_write(self) -> Iterator[None]:
        self.acquire()
        try:
            yield
        finally:
            self.release()
