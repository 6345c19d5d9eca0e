"""Keeps an Index current while folders change: watchdog events, debounced and coalesced.

Knows nothing of any UI: it reports through callbacks (toolong's watcher shape). Events
collect in a dict keyed by path (a save burst of one file is one entry); a worker thread
waits until the burst goes quiet (`debounce_s`, or at most `max_delay_s` under a steady
stream), then hands at most `max_batch` paths to `Index.update(paths)`. A burst of
10,000 new files is thus indexed 500 at a time with bounded memory.

Roots themselves come and go: a folder deleted and created again, renamed away, a drive
unmounted. inotify watches an inode, not a name, so a watch on a root that went away
sees nothing of the folder made under the same name later (and a root renamed away
reports nothing at all). Every `root_check_s` the worker therefore compares each root's
(device, inode) with the one its watch was made for; on a change it watches the root
anew and re-indexes it (its files leave the index while it is missing, and the new
folder's are found, including those written before the new watch started).
"""

from __future__ import annotations

import os
import stat
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
                 max_batch: int = 500, max_delay_s: float = 5.0, root_check_s: float = 1.0) -> None:
        self.index = index
        self.on_event = on_event
        self.on_error = on_error
        self.debounce_s = debounce_s
        self.max_batch = max_batch
        self.max_delay_s = max_delay_s
        self.root_check_s = root_check_s
        self.save_after_s = 5.0   # quiet this long after a change: the HNSW/BM25 files are saved
        self._save_retry_at = 0.0   # after a failed save (a full disk): not before this
        self._save_backoff = 0.0    # seconds until the next try; doubles per failure, to 5 min
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
        self._handler: _Handler | None = None
        self._armed: dict[str, tuple[tuple[int, int, bool] | None, tuple[str, bool] | None]] = {}
        self._watches: dict[tuple[str, bool], list] = {}   # (folder, recursive) -> [watch, users]
        self._next_root_check = 0.0
        self._check_requested = False

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
            self._handler = _Handler(self)
            self._observer = observer
            for root in self._roots:
                self._arm(root)
            observer.daemon = True
            observer.start()
            self._next_root_check = time.monotonic() + self.root_check_s
        except BaseException:
            self._observer = None
            self.index.lock.release()
            raise
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
        try:
            self.index.save_caches()     # what the watcher changed, before the lock goes
        except Exception as exc:         # SQLite has it all; the next open repairs the files
            self.last_error = exc
        self.index.lock.release()
        if self in self.index._watchers:
            self.index._watchers.remove(self)

    def flush(self, timeout: float = 10.0) -> None:
        """Process pending events now (skipping the debounce) and wait until done."""
        deadline = time.monotonic() + timeout
        time.sleep(min(0.3, timeout / 4))   # let the observer thread deliver recent events
        with self._cond:
            self._flush_requested = True
            self._check_requested = True     # roots that went or came back, too
            self._cond.notify_all()
            while (self._pending or self._busy or self._rescan or self._check_requested) and not self._stop:
                left = deadline - time.monotonic()
                if left <= 0:
                    break
                self._cond.wait(left)
            self._flush_requested = False

    @property
    def running(self) -> bool:
        return self._started

    def pending(self) -> list[str]:
        """The paths whose events are not yet handed to the index, in arrival order:
        what a flush would process now (tests wait on it instead of sleeping)."""
        with self._cond:
            return list(self._pending)

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

    # --- roots: watched by identity ----------------------------------------------------
    @staticmethod
    def _identity(root: str) -> tuple[int, int, bool] | None:
        try:
            st = os.stat(root)
        except OSError:
            return None
        return (st.st_dev, st.st_ino, stat.S_ISDIR(st.st_mode))

    def _watch(self, folder: str, recursive: bool) -> tuple[str, bool]:
        """Schedule (or share) a watch; watchdog keeps one emitter per (path, recursive)."""
        key = (folder, recursive)
        entry = self._watches.get(key)
        if entry is None:
            watch = self._observer.schedule(self._handler, folder, recursive=recursive)
            self._watches[key] = [watch, 1]
        else:
            entry[1] += 1
        return key

    def _unwatch(self, key: tuple[str, bool]) -> None:
        entry = self._watches.get(key)
        if entry is None:
            return
        entry[1] -= 1
        if entry[1] <= 0:
            del self._watches[key]
            try:
                # also drops an emitter that stopped when its folder was deleted: a
                # new schedule of the same path would otherwise reuse the dead one
                self._observer.unschedule(entry[0])
            except (KeyError, ValueError, OSError):
                pass

    def _arm(self, root: str) -> None:
        """(Re)watch `root` as it is now: a folder recursively; a file through its folder
        (so atomic saves, a new inode, are seen); a missing root not at all (the
        periodic check notices its return)."""
        ident = self._identity(root)
        _, old_key = self._armed.get(root, (None, None))
        key = None
        try:
            if ident is not None and ident[2]:
                key = self._watch(root, True)
            elif ident is not None and os.path.isdir(os.path.dirname(root)):
                key = self._watch(os.path.dirname(root), False)
        except OSError:
            ident, key = None, None   # vanished again while being watched: next check
        if old_key is not None:
            self._unwatch(old_key)
        self._armed[root] = (ident, key)

    def _changed_roots(self) -> list[str]:
        """Roots whose folder is not the one watched (gone, back, replaced), re-armed."""
        changed = []
        for root in self._roots:
            if self._identity(root) != self._armed.get(root, (None, None))[0]:
                self._arm(root)
                changed.append(root)
        return changed

    # --- worker ---------------------------------------------------------------------
    def _take_batch(self) -> list[str] | None:
        with self._cond:
            while not self._stop:
                if self._rescan:
                    self._busy = True
                    return []   # the start-up rescan
                now = time.monotonic()
                if self._check_requested or now >= self._next_root_check:
                    self._busy = True
                    return ["<roots>"]
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
                elif (self.index.caches_unsaved and now - self._last_event >= self.save_after_s
                      and now >= self._save_retry_at):
                    self._busy = True
                    return ["<save>"]
                else:
                    until_save = (max(self.save_after_s - (now - self._last_event),
                                      self._save_retry_at - now)
                                  if self.index.caches_unsaved else 1.0)
                    self._cond.wait(max(0.01, min(1.0, self._next_root_check - now, until_save)))
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
                elif batch == ["<save>"]:
                    try:
                        self.index.save_caches()
                    except Exception:   # a full disk: say so, and try again later, not at once
                        self._save_backoff = min(max(2 * self._save_backoff, self.save_after_s), 300.0)
                        self._save_retry_at = time.monotonic() + self._save_backoff
                        raise
                    self._save_backoff = self._save_retry_at = 0.0
                elif batch == ["<roots>"]:
                    with self._cond:
                        self._check_requested = False
                    self._next_root_check = time.monotonic() + self.root_check_s
                    changed = self._changed_roots()
                    if changed:
                        report = self.index.update(changed, save_caches=False)
                        self.on_event(WatchEvent(paths=changed, report=report))
                else:
                    roots = [r for r, _ in self.index.store.roots()]
                    batch = [p for p in batch if any(is_under(p, r) for r in roots)]
                    if batch:
                        report = self.index.update(batch, save_caches=False)
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
