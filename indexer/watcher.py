"""Keeps an Index current while folders change: watchdog events, debounced and coalesced.

Knows nothing of any UI: it reports through callbacks (toolong's watcher shape). Events
collect in a dict keyed by path (a save burst of one file is one entry); a worker thread
waits until the burst goes quiet (`debounce_s`, or at most `max_delay_s` under a steady
stream), then hands at most `max_batch` paths to `Index.update(paths)`. A burst of
10,000 new files is thus indexed 500 at a time with bounded memory.
"""

from __future__ import annotations

import os
import threading
import time
from collections.abc import Callable
from typing import TYPE_CHECKING

from indexer.records import WatchEvent
from indexer.walk import BUILTIN_IGNORED_DIRS, is_under

if TYPE_CHECKING:
    from indexer.index import Index


class Watcher:
    def __init__(self, index: "Index", on_event: Callable[[WatchEvent], None], *,
                 on_error: Callable[[Exception], None] | None = None, debounce_s: float = 0.5,
                 max_batch: int = 500, max_delay_s: float = 5.0) -> None:
        self.index = index
        self.on_event = on_event
        self.on_error = on_error
        self.debounce_s = debounce_s
        self.max_batch = max_batch
        self.max_delay_s = max_delay_s
        self.last_error: Exception | None = None
        self._pending: dict[str, float] = {}
        self._first_event = 0.0
        self._last_event = 0.0
        self._cond = threading.Condition()
        self._stop = False
        self._flush_requested = False
        self._busy = False
        self._rescan = True
        self._observer = None
        self._thread: threading.Thread | None = None
        self._roots: list[str] = []
        self._started = False

    # --- lifecycle ------------------------------------------------------------------
    def start(self) -> None:
        """Take the writer lock, start observing, then rescan (catches offline changes)."""
        if self._started:
            return
        from watchdog.observers import Observer

        self.index.lock.acquire()   # IndexLockedError if another process writes
        try:
            self._roots = [r.path for r in self.index.roots()]
            observer = Observer()
            handler = _Handler(self)
            for root in self._roots:
                if os.path.isdir(root):
                    observer.schedule(handler, root, recursive=True)
                elif os.path.isdir(os.path.dirname(root)):
                    observer.schedule(handler, os.path.dirname(root), recursive=False)
            observer.daemon = True
            observer.start()
        except BaseException:
            self.index.lock.release()
            raise
        self._observer = observer
        self._thread = threading.Thread(target=self._loop, name="localrag-watcher", daemon=True)
        self._started = True
        self._thread.start()

    def stop(self) -> None:
        if not self._started:
            return
        with self._cond:
            self._stop = True
            self._cond.notify_all()
        if self._observer is not None:
            self._observer.stop()
            self._observer.join(timeout=5)
        if self._thread is not None and self._thread is not threading.current_thread():
            self._thread.join(timeout=60)
        self._started = False
        self.index.lock.release()
        if self in self.index._watchers:
            self.index._watchers.remove(self)

    def flush(self, timeout: float = 10.0) -> None:
        """Process pending events now (skipping the debounce) and wait until done."""
        deadline = time.monotonic() + timeout
        time.sleep(min(0.3, timeout / 4))   # let the observer thread deliver recent events
        with self._cond:
            self._flush_requested = True
            self._cond.notify_all()
            while (self._pending or self._busy or self._rescan) and not self._stop:
                left = deadline - time.monotonic()
                if left <= 0:
                    break
                self._cond.wait(left)
            self._flush_requested = False

    @property
    def running(self) -> bool:
        return self._started

    # --- events ---------------------------------------------------------------------
    def _wants(self, path: str) -> bool:
        if any(is_under(path, ex) for ex in self.index._exclude):
            return False
        if any(part in BUILTIN_IGNORED_DIRS for part in path.split(os.sep)):
            return False   # .git churn and the like: the walker would skip it anyway
        return any(is_under(path, root) for root in self._roots)

    def add(self, *paths: str) -> None:
        now = time.monotonic()
        with self._cond:
            for path in paths:
                if path and self._wants(path):
                    if not self._pending:
                        self._first_event = now
                    self._pending[path] = now
                    self._last_event = now
            self._cond.notify_all()

    # --- worker ---------------------------------------------------------------------
    def _take_batch(self) -> list[str] | None:
        with self._cond:
            while not self._stop:
                if self._rescan:
                    self._busy = True
                    return []   # the start-up rescan
                if self._pending:
                    now = time.monotonic()
                    quiet = now - self._last_event >= self.debounce_s
                    overdue = now - self._first_event >= self.max_delay_s
                    if quiet or overdue or self._flush_requested:
                        batch = list(self._pending)[: self.max_batch]
                        for path in batch:
                            del self._pending[path]
                        if self._pending:
                            self._first_event = now
                        self._busy = True
                        return batch
                    wait = min(self.debounce_s - (now - self._last_event),
                               self.max_delay_s - (now - self._first_event))
                    self._cond.wait(max(0.01, wait))
                else:
                    self._cond.wait(1.0)
            return None

    def _loop(self) -> None:
        while True:
            batch = self._take_batch()
            if batch is None:
                return
            try:
                if self._rescan:
                    self._rescan = False
                    report = self.index.update(None)
                    self.on_event(WatchEvent(paths=list(self._roots), report=report))
                else:
                    roots = [r for r, _ in self.index.store.roots()]
                    batch = [p for p in batch if any(is_under(p, r) for r in roots)]
                    if batch:
                        report = self.index.update(batch)
                        self.on_event(WatchEvent(paths=batch, report=report))
            except Exception as exc:   # keep watching; the caller decides how to show it
                self.last_error = exc
                if self.on_error is not None:
                    try:
                        self.on_error(exc)
                    except Exception:
                        pass
            finally:
                with self._cond:
                    self._busy = False
                    self._cond.notify_all()


def _make_handler_base():  # noqa: ANN202 - imported lazily: watchdog only when watching
    from watchdog.events import FileSystemEventHandler

    return FileSystemEventHandler


class _Handler(_make_handler_base()):
    def __init__(self, watcher: Watcher) -> None:
        super().__init__()
        self.watcher = watcher

    def on_any_event(self, event) -> None:  # noqa: ANN001 - watchdog FileSystemEvent
        kind = event.event_type
        if kind in ("opened", "closed_no_write"):
            return
        if event.is_directory and kind == "modified":
            return   # a folder's mtime changes with every file event inside it
        paths = [os.fsdecode(event.src_path)]
        dest = getattr(event, "dest_path", "")
        if dest:
            paths.append(os.fsdecode(dest))
        self.watcher.add(*paths)
