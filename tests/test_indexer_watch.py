"""The folder watcher: debounced, coalesced, batched, rescans on start."""

from __future__ import annotations

import os
import threading
import time

from indexer_corpus import TOPICS, write_corpus
from sigint import default_sigint


def wait_until(predicate, timeout=20.0):
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        if predicate():
            return True
        time.sleep(0.05)
    return False


def readline_within(stream, timeout: float) -> str:
    """stream.readline(), or "" if no line comes within `timeout` s (a child that hangs
    fails the test instead of hanging it)."""
    line: list[str] = []
    reader = threading.Thread(target=lambda: line.append(stream.readline()), daemon=True)
    reader.start()
    reader.join(timeout)
    return line[0] if line else ""


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
        assert wait_until(lambda: idx.search("okapi", k=1)[0].path.endswith("offline.md"))

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
    """Eight saves of one file are one update of it. Nothing here depends on timing: the
    debounce is set far past the test's length, so only flush() hands events to the index
    (a loaded machine cannot split the burst); a marker file renamed in after the burst is
    a single inotify event queued behind every event of the burst (one inotify queue,
    delivered in order), so once the marker is pending the whole burst is."""
    from indexer.watcher import Watcher

    root = tmp_path / "docs"
    write_corpus(root, 1)
    outside = tmp_path / "outside"
    outside.mkdir()
    idx = make_index()
    idx.add_root(root)
    idx.update()
    events = []
    watcher = Watcher(idx, events.append, debounce_s=3600, max_delay_s=3600)
    watcher.start()
    try:
        watcher.flush(timeout=120)
        assert wait_until(lambda: len(events) == 1)      # the start-up rescan
        events.clear()
        target = root / "note_0000.md"
        for i in range(8):       # an editor writing, truncating, re-writing...
            target.write_text(f"# Draft {i}\n\nThe quokka smiles, version {i}.\n")
        (outside / "marker.md").write_text("The burst is over, says the numbat.\n")
        os.rename(outside / "marker.md", root / "marker.md")
        marker = str(root / "marker.md")
        assert wait_until(lambda: marker in watcher.pending(), timeout=60)
        assert watcher.pending() == [str(target), marker]   # the burst: one entry
        assert events == []                                 # nothing handed over yet
        watcher.flush(timeout=120)
        assert wait_until(lambda: len(events) >= 1 and watcher.pending() == [])
        assert len(events) == 1
        assert events[0].paths == [str(target), marker]
        assert (events[0].report.updated, events[0].report.added) == (1, 1)
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


# --- as editors and people really change files ---------------------------------------------

def paths_in_store(idx) -> dict[str, str]:
    return dict(idx.store.conn.execute("SELECT path, state FROM files").fetchall())


def chunk_texts(idx, path) -> str:
    return "\n".join(t for (t,) in idx.store.conn.execute(
        "SELECT c.text FROM chunks c JOIN files f ON f.id = c.file_id WHERE f.path = ?",
        (str(path),)))


def test_atomic_saves(make_index, tmp_path):
    """Editors write a temporary file and rename it over the original (vim, gedit, VS Code
    with files.atomicSave, most tools writing config). Each save must leave exactly the
    new text under the original name, whatever the temporary file was called."""
    root = tmp_path / "docs"
    root.mkdir()
    note = root / "note.md"
    note.write_text("# Note\n\nVersion zero mentions the albatross.\n")
    idx = make_index()
    idx.add_root(root)
    idx.update()
    errors = []
    watcher = idx.watch(lambda e: None, on_error=errors.append, debounce_s=0.2)
    try:
        watcher.flush()
        # 1. a hidden temporary file (gedit's .goutputstream-XXXX, vim's .note.md.swp)
        tmp = root / ".goutputstream-ABC123"
        tmp.write_text("# Note\n\nVersion one mentions the bittern.\n")
        os.replace(tmp, note)
        watcher.flush()
        assert wait_until(lambda: "bittern" in chunk_texts(idx, note))
        # 2. a temporary file with an indexed extension, left long enough to be indexed
        #    itself before the rename (a slow save, or an editor's "note.tmp.md")
        tmp = root / "note.tmp.md"
        tmp.write_text("# Note\n\nVersion two mentions the cormorant.\n")
        watcher.flush()
        assert wait_until(lambda: paths_in_store(idx).get(str(tmp)) == "indexed")
        os.replace(tmp, note)
        watcher.flush()
        assert wait_until(lambda: "cormorant" in chunk_texts(idx, note)
                          and str(tmp) not in paths_in_store(idx))
        # 3. vim's default: rename the original to a backup, write anew, delete the backup
        os.rename(note, root / "note.md~")
        note.write_text("# Note\n\nVersion three mentions the dunlin.\n")
        os.remove(root / "note.md~")
        watcher.flush()
        assert wait_until(lambda: "dunlin" in chunk_texts(idx, note))
        assert errors == []
    finally:
        watcher.stop()
    stored = paths_in_store(idx)
    assert [p for p in stored if p.startswith(str(root))] == [str(note)]
    assert stored[str(note)] == "indexed"
    assert "dunlin" in chunk_texts(idx, note) and "cormorant" not in chunk_texts(idx, note)
    hits = idx.search("albatross bittern cormorant dunlin", k=5)
    assert {h.path for h in hits} == {str(note)} and len(hits) == 1


def test_folder_renamed_and_deleted_inside_a_root(make_index, tmp_path):
    import shutil

    root = tmp_path / "docs"
    (root / "trip" / "days").mkdir(parents=True)
    (root / "trip" / "plan.md").write_text("The ferry to the island leaves at nine.\n")
    (root / "trip" / "days" / "one.md").write_text("Day one: we saw a sea eagle.\n")
    (root / "keep.md").write_text("Unrelated notes about the heron.\n")
    idx = make_index()
    idx.add_root(root)
    idx.update()
    events, errors = [], []
    watcher = idx.watch(events.append, on_error=errors.append, debounce_s=0.2)
    try:
        watcher.flush()
        events.clear()
        os.rename(root / "trip", root / "holiday")
        watcher.flush()
        new = {str(root / "holiday" / "plan.md"), str(root / "holiday" / "days" / "one.md")}
        # the store shows the new paths a moment before on_event reports them: wait for both
        assert wait_until(lambda: new <= set(paths_in_store(idx))
                          and sum(e.report.moved + e.report.added for e in events) >= 2)
        assert not any("/trip/" in p for p in paths_in_store(idx))
        assert idx.search("sea eagle", k=1)[0].path == str(root / "holiday" / "days" / "one.md")
        # moved, not re-embedded: the same chunk rows under the new name
        assert sum(e.report.moved for e in events) == 2
        assert sum(e.report.added for e in events) == 0
        shutil.rmtree(root / "holiday")
        watcher.flush()
        assert wait_until(lambda: set(paths_in_store(idx)) == {str(root / "keep.md")})
        assert all("eagle" not in h.text for h in idx.search("sea eagle ferry", k=3))
        assert errors == []
    finally:
        watcher.stop()


def test_root_deleted_and_recreated(make_index, tmp_path):
    """The root folder itself goes away (rm -rf, a synced folder re-created, a checkout
    re-cloned) and comes back: its old files leave the index, the new ones are found."""
    import shutil

    root = tmp_path / "docs"
    root.mkdir()
    (root / "old.md").write_text("The old folder talked about the ptarmigan.\n")
    idx = make_index()
    idx.add_root(root)
    idx.update()
    errors = []
    watcher = idx.watch(lambda e: None, on_error=errors.append, debounce_s=0.2)
    try:
        watcher.flush()
        shutil.rmtree(root)
        watcher.flush()
        assert wait_until(lambda: paths_in_store(idx) == {})
        assert [r.path for r in idx.roots()] == [str(root)] and idx.roots()[0].missing
        root.mkdir()
        (root / "sub").mkdir()
        (root / "sub" / "new.md").write_text("The new folder talks about the capercaillie.\n")
        watcher.flush()
        assert wait_until(lambda: str(root / "sub" / "new.md") in paths_in_store(idx), timeout=30)
        assert not idx.roots()[0].missing
        # and the new folder is watched as closely as the old one was
        (root / "sub" / "later.md").write_text("Written later: the black grouse leks at dawn.\n")
        watcher.flush()
        assert wait_until(lambda: str(root / "sub" / "later.md") in paths_in_store(idx))
        assert idx.search("black grouse lek", k=1)[0].path.endswith("later.md")
        assert errors == []
    finally:
        watcher.stop()


def test_moves_into_and_out_of_a_root(make_index, tmp_path):
    root = tmp_path / "docs"
    other = tmp_path / "papers"
    outside = tmp_path / "downloads"
    for folder in (root, other, outside):
        folder.mkdir()
    (root / "here.md").write_text("Notes that stay put, about the kestrel.\n")
    (outside / "incoming.md").write_text("A downloaded file about the hoopoe.\n")
    (outside / "batch").mkdir()
    for i in range(3):
        (outside / "batch" / f"b{i}.md").write_text(f"Batch file {i} about the wryneck number {i}.\n")
    idx = make_index()
    idx.add_root(root)
    idx.add_root(other)
    idx.update()
    events, errors = [], []
    watcher = idx.watch(events.append, on_error=errors.append, debounce_s=0.2)
    try:
        watcher.flush()
        os.rename(outside / "incoming.md", root / "incoming.md")        # a file in
        os.rename(outside / "batch", root / "batch")                    # a folder in
        watcher.flush()
        want = {str(root / "incoming.md")} | {str(root / "batch" / f"b{i}.md") for i in range(3)}
        assert wait_until(lambda: want <= set(paths_in_store(idx)))
        assert idx.search("hoopoe", k=1)[0].path == str(root / "incoming.md")
        os.rename(root / "incoming.md", outside / "incoming.md")        # a file out
        os.rename(root / "batch", outside / "batch")                    # a folder out
        watcher.flush()
        assert wait_until(lambda: set(paths_in_store(idx)) == {str(root / "here.md")})
        os.rename(root / "here.md", other / "here.md")                  # between two roots
        watcher.flush()
        assert wait_until(lambda: set(paths_in_store(idx)) == {str(other / "here.md")})
        row = idx.store.conn.execute("SELECT root FROM files").fetchone()
        assert row[0] == str(other)
        assert {r.path: r.files for r in idx.roots()} == {str(root): 0, str(other): 1}
        assert idx.search("kestrel", k=1)[0].path == str(other / "here.md")
        assert errors == []
    finally:
        watcher.stop()


def test_one_process_indexes_while_another_searches(tmp_path, embedder, index_options):
    """`localrag watch` in another process writes; this process, a reader holding its
    Index open all along, searches meanwhile and sees every new chunk without reopening."""
    import subprocess
    import sys
    from pathlib import Path

    from indexer.index import Index

    repo = Path(__file__).resolve().parents[1]
    root = tmp_path / "docs"
    write_corpus(root, 3)
    data = tmp_path / "data"
    env = dict(os.environ, LOCALRAG_HOME=str(data), PYTHONPATH=str(repo), HF_HUB_OFFLINE="1")
    reader = Index(data / "index", options=index_options, embedder=embedder)
    reader.add_root(root)
    reader.update()            # the first index; the writer lock is released after it
    proc = subprocess.Popen([sys.executable, "-m", "localrag", "watch", "--debounce", "0.2"],
                            env=env, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True,
                            preexec_fn=default_sigint)
    try:
        assert "Watching" in readline_within(proc.stdout, 120)
        assert not reader.lock.held
        assert reader.search("volcano", k=1)[0].path.endswith("note_0000.md")
        # one file, then a burst of 20 while the reader keeps searching
        (root / "first.md").write_text("The first new note is about the axolotl.\n")
        assert wait_until(lambda: any(p.path.endswith("first.md")
                                      for p in reader.search("axolotl", k=2)), timeout=60)
        burst = tmp_path / "burst"
        write_corpus(burst, 20, paragraphs=1)
        for path in sorted(burst.iterdir()):
            os.rename(path, root / f"burst_{path.name}")
        # search while the other process commits batch after batch, until it is done; how
        # many searches fall between two commits depends on the machine's load, so that is
        # not asserted: what holds whatever the timing is that no search fails, each finds
        # the files already there, and the reader never sees the index shrink
        failures, counts = [], []
        deadline = time.monotonic() + 120
        while time.monotonic() < deadline:
            try:
                hits = reader.search("Notes about the windmill compass beehive", k=50)
                counts.append(reader.status().files_indexed)
            except Exception as exc:   # noqa: BLE001 - a reader must never fail mid-write
                failures.append(repr(exc))
                break
            assert hits and all(h.path.startswith(str(root) + os.sep) for h in hits)
            if counts[-1] == 3 + 1 + 20:
                break
            time.sleep(0.2)
        assert failures == []
        assert counts and counts == sorted(counts) and counts[0] >= 4, counts
        assert reader.status().files_indexed == 24
        # every new file is searchable from this process: by its own words
        for i in (0, 11, 19):
            topic = TOPICS[i % len(TOPICS)]
            hits = reader.search(f"Notes {i} about the {topic} paragraph 0 of file {i}", k=5)
            assert any(h.path.endswith(f"burst_note_{i:04d}.md") for h in hits), (i, hits)
    finally:
        proc.send_signal(__import__("signal").SIGINT)
        proc.wait(timeout=30)
        reader.close()


def test_watcher_saves_the_caches_when_quiet_not_after_each_change(make_index, tmp_path):
    """Writing the HNSW/BM25 files after every changed file costs seconds at 200k chunks
    (bench/bench_scale.py); the watcher leaves them to SQLite until it is quiet or stops."""
    import json

    root = tmp_path / "docs"
    write_corpus(root, 2)
    idx = make_index()
    idx.add_root(root)
    idx.update()
    meta = tmp_path / "index" / "vectors.json"

    def saved_generation() -> int:
        return json.loads(meta.read_text())["generation"]

    watcher = idx.watch(lambda e: None, debounce_s=0.2)
    watcher.save_after_s = 3600.0            # not while this test runs
    try:
        watcher.flush()
        before = saved_generation()
        (root / "note_0000.md").write_text("# Edited\n\nThe capybara relaxes in warm water.\n")
        watcher.flush()
        assert wait_until(lambda: idx.search("capybara", k=1)[0].path.endswith("note_0000.md"))
        assert idx.caches_unsaved and saved_generation() == before     # SQLite only
        watcher.save_after_s = 0.2            # quiet now: saved soon after
        with watcher._cond:
            watcher._cond.notify_all()
        assert wait_until(lambda: saved_generation() == idx.store.generation())
        # the watcher's thread writes the files, then clears the flag (Index.save_caches):
        # the file can be seen first, so the flag is waited for too, never read at once
        assert wait_until(lambda: not idx.caches_unsaved)
        (root / "note_0001.md").write_text("# Edited\n\nA wombat digs a burrow.\n")
        watcher.save_after_s = 3600.0
        watcher.flush()
        assert wait_until(lambda: idx.search("wombat", k=1)[0].path.endswith("note_0001.md"))
        assert saved_generation() < idx.store.generation()
    finally:
        watcher.stop()
    assert saved_generation() == idx.store.generation()           # stop saves what is left
    reopened = make_index()
    assert reopened.search("wombat", k=1)[0].path.endswith("note_0001.md")


def test_a_failed_cache_save_is_retried_later_not_at_once(make_index, tmp_path):
    """A save of the HNSW/BM25 files that fails (a full disk) is reported and tried again
    after a pause that doubles, never in a loop. Lower bounds on the gaps only: a loaded
    machine makes them longer, never shorter."""
    from indexer.watcher import Watcher

    root = tmp_path / "docs"
    write_corpus(root, 1)
    idx = make_index()
    idx.add_root(root)
    idx.update()
    tries: list[float] = []

    def full_disk() -> None:
        tries.append(time.monotonic())
        raise OSError(28, "No space left on device")

    idx.save_caches = full_disk
    errors = []
    watcher = Watcher(idx, lambda e: None, on_error=errors.append)
    watcher.save_after_s = 0.2
    watcher.start()
    try:
        watcher.flush(timeout=120)                  # the start-up rescan
        idx.caches_unsaved = True
        assert wait_until(lambda: len(tries) >= 3, timeout=60)
    finally:
        idx.caches_unsaved = False
        watcher.stop()
    assert tries[1] - tries[0] >= 0.2 and tries[2] - tries[1] >= 0.4
    assert all(isinstance(e, OSError) for e in errors) and len(errors) >= 3
