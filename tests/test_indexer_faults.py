"""Bad input: each case is recorded with a reason, the run goes on, nothing is lost."""

from __future__ import annotations

import builtins
import os

from indexer import reading
from indexer_corpus import make_pdf


def states(idx) -> dict[str, tuple[str, str | None]]:
    rows = idx.store.conn.execute("SELECT path, state, reason FROM files").fetchall()
    return {os.path.basename(p): (s, r) for p, s, r in rows}


def test_bad_files_are_recorded_and_the_rest_indexed(tmp_path, make_index, monkeypatch):
    root = tmp_path / "docs"
    root.mkdir()
    (root / "good.md").write_text("# Good\n\nThe walrus sleeps on the ice floe all afternoon.\n")
    (root / "corrupt.pdf").write_bytes(b"%PDF-1.7\n this is garbage, not a real pdf \x00\x01")
    (root / "binary.txt").write_bytes(b"abc\x00\x00\x00def" * 20)
    (root / "latin.txt").write_bytes(b"caf\xe9 \x81\x8d\x8f bad bytes")
    (root / "locked.txt").write_text("secret")
    (root / "huge.txt").write_text("word " * 300_000)
    (root / "empty.md").write_text("")
    (root / "nested").mkdir()
    os.symlink(root, root / "nested" / "back")
    locked = str(root / "locked.txt")
    if os.geteuid() == 0:
        # root ignores chmod 000, so make open() fail the way it does for a normal user
        real_open = builtins.open

        def guarded_open(path, *args, **kwargs):
            if os.fspath(path) == locked:
                raise PermissionError(13, "Permission denied", locked)
            return real_open(path, *args, **kwargs)

        monkeypatch.setattr(reading, "open", guarded_open, raising=False)
    else:
        os.chmod(locked, 0)
    idx = make_index()
    idx.add_root(root)
    report = idx.update()
    got = states(idx)
    assert got["good.md"][0] == "indexed"
    assert got["corrupt.pdf"][0] == "error" and "cannot read PDF" in got["corrupt.pdf"][1]
    assert got["binary.txt"][0] == "skipped" and "binary" in got["binary.txt"][1]
    assert got["latin.txt"][0] == "error" and "cannot decode" in got["latin.txt"][1]
    assert got["locked.txt"][0] == "error" and "permission denied: run `chmod u+r" in got["locked.txt"][1]
    assert got["huge.txt"][0] == "skipped" and "size limit" in got["huge.txt"][1]
    assert got["empty.md"] == ("skipped", "empty file")
    assert got["back"][0] == "skipped" and got["back"][1].startswith("symlink loop")
    assert report.errors == 3 and report.added == 1
    assert {p.path for p in report.problems} >= {str(root / "corrupt.pdf"), locked}
    assert idx.search("walrus on the ice", k=1)[0].path == str(root / "good.md")
    status = idx.status()
    assert status.files_error == 3 and {e.path for e in status.errors} >= {locked}

    # Fix the permission problem: the next run retries errors and indexes it.
    monkeypatch.undo()
    if os.geteuid() != 0:
        os.chmod(locked, 0o644)
    idx.update()
    assert states(idx)["locked.txt"][0] == "indexed"


def test_failure_does_not_lose_what_was_indexed(tmp_path, make_index):
    root = tmp_path / "docs"
    root.mkdir()
    doc = root / "paper.pdf"
    doc.write_bytes(make_pdf(["The axolotl regrows its limbs.", "Second page about gills."]))
    (root / "other.md").write_text("Notes on the narwhal and its long tusk.\n")
    idx = make_index()
    idx.add_root(root)
    idx.update()
    hit = idx.search("axolotl limbs", k=1)[0]
    assert hit.page == 1 and hit.start_line is None and hit.locator.endswith("#page=1")
    doc.write_bytes(b"%PDF-1.4 truncated download")        # now corrupt
    report = idx.update()
    assert report.errors == 1
    assert states(idx)["paper.pdf"][0] == "error"
    assert idx.search("narwhal tusk", k=1)[0].path == str(root / "other.md")
    assert all(p.path != str(doc) for p in idx.search("axolotl", k=3))   # no stale chunks


def test_file_deleted_between_listing_and_reading(tmp_path, make_index):
    root = tmp_path / "docs"
    root.mkdir()
    (root / "stays.md").write_text("The heron stands in the river.\n")
    doomed = root / "doomed.md"
    doomed.write_text("This file vanishes before it is read.\n")
    idx = make_index()
    idx.add_root(root)

    def progress(p):
        if p.phase == "scanning" and p.files_total == 2 and doomed.exists():
            doomed.unlink()   # listed, not yet read

    report = idx.update(progress=progress)
    assert any(p.path == str(doomed) and "vanished" in p.reason for p in report.problems)
    assert "doomed.md" not in states(idx)
    assert states(idx)["stays.md"][0] == "indexed"


def test_file_modified_while_being_read(tmp_path, make_index, monkeypatch):
    root = tmp_path / "docs"
    root.mkdir()
    target = root / "live.md"
    target.write_text("First version about kestrels.\n")
    real_open = builtins.open
    calls = {"n": 0}

    def open_then_edit(path, *args, **kwargs):
        fh = real_open(path, *args, **kwargs)
        if os.fspath(path) == str(target):
            calls["n"] += 1
            if calls["n"] == 1:
                fh.read()   # we "read" the old content, then an editor saves a new version
                with real_open(target, "a") as w:
                    w.write("Appended while indexing: ospreys too.\n")
                fh.seek(0)
                os.utime(target, ns=(1, 1_000_000_000))
        return fh

    monkeypatch.setattr(reading, "open", open_then_edit, raising=False)
    idx = make_index()
    idx.add_root(root)
    idx.update()
    assert calls["n"] >= 2                       # it noticed and read again
    row = idx.store.conn.execute("SELECT sha256, mtime_ns, size FROM files WHERE path=?", (str(target),)).fetchone()
    import hashlib

    assert row[0] == hashlib.sha256(target.read_bytes()).hexdigest()
    assert row[2] == target.stat().st_size
    assert "ospreys" in idx.search("ospreys", k=1)[0].text


def test_file_that_keeps_changing_is_an_error_retried_later(tmp_path, make_index, monkeypatch):
    root = tmp_path / "docs"
    root.mkdir()
    target = root / "log.md"
    target.write_text("growing\n")
    real_open = builtins.open

    def always_growing(path, *args, **kwargs):
        fh = real_open(path, *args, **kwargs)
        if os.fspath(path) == str(target):
            with real_open(target, "a") as w:
                w.write("more\n")
        return fh

    monkeypatch.setattr(reading, "open", always_growing, raising=False)
    monkeypatch.setattr(reading.time, "sleep", lambda s: None)
    idx = make_index()
    idx.add_root(root)
    idx.update()
    assert states(idx)["log.md"][0] == "error" and "kept changing" in states(idx)["log.md"][1]
    monkeypatch.undo()
    idx.update()
    assert states(idx)["log.md"][0] == "indexed"
