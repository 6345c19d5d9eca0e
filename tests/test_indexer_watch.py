"""The folder watcher: debounced, coalesced, batched, rescans on start."""

from __future__ import annotations

import os
import threading
import time

from indexer_corpus import write_corpus


def wait_until(predicate, timeout=20.0):
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        if predicate():
            return True
        time.sleep(0.05)
    return False


def test_watcher_keeps_index_current(make_index, tmp_path):
    root = tmp_path / "docs"
    write_corpus(root, 2)
    idx = make_index()
    idx.add_root(root)
    idx.update()
    # changed while nothing watched: caught by the rescan on start
    (root / "offline.md").write_text("Written while not watching: the okapi.\n")
    events, errors = [], []
    watcher = idx.watch(events.append, on_error=errors.append, debounce_s=0.2)
    try:
        watcher.flush()
        assert idx.search("okapi", k=1)[0].path.endswith("offline.md")

        # modify
        (root / "note_0000.md").write_text("# Edited\n\nThe capybara relaxes in warm water.\n")
        watcher.flush()
        assert wait_until(lambda: idx.search("capybara", k=1)[0].path.endswith("note_0000.md"))
        # create in a new folder
        (root / "new").mkdir()
        (root / "new" / "fresh.md").write_text("A brand new note about the pangolin.\n")
        watcher.flush()
        assert wait_until(lambda: any(p.path.endswith("fresh.md") for p in idx.search("pangolin", k=2)))
        # move
        os.rename(root / "new" / "fresh.md", root / "moved.md")
        watcher.flush()
        assert wait_until(lambda: idx.search("pangolin", k=1)[0].path.endswith("moved.md"))
        # delete
        os.remove(root / "moved.md")
        watcher.flush()
        assert wait_until(lambda: all("pangolin" not in p.text for p in idx.search("pangolin", k=3)))
        assert errors == []
        assert sum(e.report.moved for e in events) == 1
    finally:
        watcher.stop()
    assert not idx.lock.held


def test_save_burst_is_one_update(make_index, tmp_path):
    root = tmp_path / "docs"
    write_corpus(root, 1)
    idx = make_index()
    idx.add_root(root)
    idx.update()
    events = []
    watcher = idx.watch(events.append, debounce_s=0.4)
    try:
        watcher.flush()
        events.clear()
        target = root / "note_0000.md"
        for i in range(8):       # an editor writing, truncating, re-writing...
            target.write_text(f"# Draft {i}\n\nThe quokka smiles, version {i}.\n")
            time.sleep(0.02)
        assert wait_until(lambda: len(events) >= 1)
        time.sleep(0.8)
        assert len(events) == 1
        assert events[0].report.updated == 1
        assert "version 7" in idx.search("quokka", k=1)[0].text
    finally:
        watcher.stop()


def test_burst_of_new_files_in_bounded_batches(make_index, tmp_path):
    root = tmp_path / "docs"
    root.mkdir()
    idx = make_index()
    idx.add_root(root)
    events = []
    from indexer.watcher import Watcher

    watcher = Watcher(idx, events.append, debounce_s=0.2, max_batch=15)
    watcher.start()
    try:
        watcher.flush()
        write_corpus(root, 50, paragraphs=1)
        assert wait_until(lambda: sum(e.report.added for e in events) == 50, timeout=120)
        batches = [len(e.paths) for e in events[1:]]
        assert max(batches) <= 15 and len(batches) >= 4
        assert idx.status().files_indexed == 50
    finally:
        watcher.stop()


def test_watch_holds_the_writer_lock(make_index, tmp_path):
    root = tmp_path / "docs"
    write_corpus(root, 1)
    idx = make_index()
    idx.add_root(root)
    watcher = idx.watch(lambda e: None)
    try:
        watcher.flush()
        assert idx.lock.held and (tmp_path / "index" / "writer.pid").read_text() == str(os.getpid())
        # the same process can still update (e.g. the app's "re-index" button)
        t = threading.Thread(target=idx.update)
        t.start()
        t.join(60)
    finally:
        watcher.stop()
    assert not idx.lock.held and not (tmp_path / "index" / "writer.pid").exists()
