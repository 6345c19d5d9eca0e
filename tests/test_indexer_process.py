"""Real second processes: the writer lock, and kill -9 in the middle of indexing."""

from __future__ import annotations

import os
import signal
import subprocess
import sys
import textwrap
import time
from pathlib import Path

import pytest

from indexer.errors import IndexLockedError
from indexer_corpus import write_corpus

REPO = Path(__file__).resolve().parents[1]


def spawn(code: str) -> subprocess.Popen:
    env = dict(os.environ, PYTHONPATH=f"{REPO}{os.pathsep}{REPO / 'tests'}", HF_HUB_OFFLINE="1")
    return subprocess.Popen([sys.executable, "-u", "-c", textwrap.dedent(code)], cwd=REPO, env=env,
                            stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True)


def wait_for_line(proc: subprocess.Popen, predicate, timeout: float = 120.0) -> str:
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        line = proc.stdout.readline()
        if not line:
            if proc.poll() is not None:
                raise AssertionError(f"child exited early with {proc.returncode}")
            continue
        if predicate(line):
            return line
    raise AssertionError("child did not report in time")


def test_second_writer_gets_clear_message_readers_still_work(make_index, tmp_path):
    root = tmp_path / "docs"
    write_corpus(root, 2)
    idx = make_index()
    idx.add_root(root)
    idx.update()
    index_dir = tmp_path / "index"
    child = spawn(f"""
        import time
        from indexer.index import Index
        from indexer.options import IndexOptions
        idx = Index({str(index_dir)!r}, options=IndexOptions())
        idx.lock.acquire()
        print("locked", flush=True)
        time.sleep(120)
    """)
    try:
        wait_for_line(child, lambda l: l.startswith("locked"))
        with pytest.raises(IndexLockedError) as info:
            idx.update()
        message = str(info.value)
        assert f"another localrag process (pid {child.pid}) is updating {index_dir}" in message
        assert "wait for it" in message
        with pytest.raises(IndexLockedError):
            idx.remove_root(root)
        assert idx.search("volcano", k=1)          # reading needs no lock
        assert idx.status().files_indexed == 2
    finally:
        child.kill()
        child.wait()
    assert idx.update().unchanged == 2             # the lock died with its process


def test_kill_9_midway_then_rerun_is_consistent(make_index, tmp_path, index_options):
    root = tmp_path / "docs"
    write_corpus(root, 40, paragraphs=3)
    index_dir = tmp_path / "index"
    child = spawn(f"""
        from indexer.index import Index
        from indexer.options import IndexOptions
        opts = IndexOptions(extensions=[".md"], max_file_bytes=10**6, chunk_words=40, batch_size=8)
        idx = Index({str(index_dir)!r}, options=opts)
        idx.add_root({str(root)!r})
        idx.update(progress=lambda p: print("chunks", p.chunks_done, p.phase, flush=True))
        print("finished", flush=True)
    """)
    try:
        wait_for_line(child, lambda l: l.startswith("chunks") and int(l.split()[1]) >= 24, timeout=300)
        os.kill(child.pid, signal.SIGKILL)
        child.wait()
    finally:
        if child.poll() is None:
            child.kill()
    from indexer.options import IndexOptions

    opts = IndexOptions(extensions=[".md"], max_file_bytes=10**6, chunk_words=40, batch_size=8)
    idx = make_index(options=opts)
    partial = idx.status().files_indexed
    assert 0 < partial < 40, "the kill must land midway"
    # opening after the crash: the HNSW cache agrees with SQLite (no orphan vectors)
    ids = {r[0] for r in idx.store.conn.execute("SELECT id FROM chunks")}
    assert idx._vectors_index().labels() == ids
    report = idx.update()
    assert report.added == 40 - partial
    conn = idx.store.conn
    ids = {r[0] for r in conn.execute("SELECT id FROM chunks")}
    assert idx._vectors_index().labels() == ids
    dupes = conn.execute("SELECT file_id, ord, COUNT(*) FROM chunks GROUP BY file_id, ord HAVING COUNT(*) > 1").fetchall()
    assert dupes == []
    assert conn.execute("SELECT COUNT(*) FROM files WHERE state='indexed'").fetchone()[0] == 40
    per_file = conn.execute("SELECT f.chunks, COUNT(c.id) FROM files f JOIN chunks c ON c.file_id=f.id GROUP BY f.id").fetchall()
    assert all(a == b for a, b in per_file)
    # the saved HNSW file also matches on a fresh open
    idx.close()
    again = make_index(options=opts)
    assert again._vectors_index().labels() == ids
