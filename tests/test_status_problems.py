"""`localrag status` names every file that is not indexed, with its reason, grouped by
kind of reason so that thousands of skips stay readable; the store is the source."""

from __future__ import annotations

import builtins
import json
import os
import sqlite3
import subprocess
import sys
from pathlib import Path

import pytest

from indexer import reading
from indexer.store import MIGRATIONS, Store, _migration_1

ROOT = Path(__file__).resolve().parents[1]


def messy_root(tmp_path: Path) -> Path:
    root = tmp_path / "docs"
    (root / "node_modules" / "pkg").mkdir(parents=True)
    (root / "node_modules" / "pkg" / "index.md").write_text("dependency")
    for i in range(30):
        (root / f"photo_{i:02d}.png").write_bytes(b"\x89PNG" + bytes([i]))
    for i in range(3):
        (root / f"empty_{i}.md").write_text("")
    (root / "blob.txt").write_bytes(b"\x00\x01\x02\x03" * 50)
    (root / ".hidden.md").write_text("hidden")
    (root / "good.md").write_text("# Good\n\nThe puffin nests in burrows on the cliff.\n")
    (root / "broken.pdf").write_bytes(b"%PDF-1.4 truncated")
    (root / "locked.md").write_text("secret")
    return root


def lock_out(monkeypatch, path: Path) -> None:
    """A permission error on `path` (root ignores chmod 000, so patch open for root)."""
    if os.geteuid() != 0:
        os.chmod(path, 0)
        return
    real_open = builtins.open

    def guarded(p, *args, **kwargs):
        if os.fspath(p) == str(path):
            raise PermissionError(13, "Permission denied", str(path))
        return real_open(p, *args, **kwargs)

    monkeypatch.setattr(reading, "open", guarded, raising=False)


def test_status_groups_every_file_not_indexed(tmp_path, make_index, monkeypatch):
    root = messy_root(tmp_path)
    lock_out(monkeypatch, root / "locked.md")
    idx = make_index()
    idx.add_root(root)
    idx.update()
    status = idx.status(per_group=5)
    assert status.files_indexed == 1
    kinds = [(g.state, g.kind) for g in status.problems]
    # errors first; then the skips, larger groups first
    assert kinds[:2] in ([("error", "damaged"), ("error", "permission")],
                         [("error", "permission"), ("error", "damaged")])
    assert kinds[2] == ("skipped", "unsupported_type")
    by_kind = {g.kind: g for g in status.problems}
    assert set(by_kind) == {"damaged", "permission", "unsupported_type", "empty", "binary",
                            "hidden", "ignored_folder"}
    photos = by_kind["unsupported_type"]
    assert (photos.count, len(photos.files), photos.more) == (30, 5, 25)
    assert [f.path for f in photos.files] == [str(root / f"photo_{i:02d}.png") for i in range(5)]
    assert all("unsupported file type .png" in f.reason for f in photos.files)
    assert by_kind["empty"].count == 3 and by_kind["empty"].more == 0
    assert by_kind["ignored_folder"].files[0].path == str(root / "node_modules")
    assert "chmod u+r" in by_kind["permission"].files[0].reason
    # every file not indexed is counted in exactly one group
    assert sum(g.count for g in status.problems if g.state == "skipped") == status.files_skipped == 36
    assert sum(g.count for g in status.problems if g.state == "error") == status.files_error == 2
    # all of one group, and pages of it
    everything = idx.status(per_group=None, kind="unsupported_type")
    assert [g.kind for g in everything.problems] == ["unsupported_type"]
    assert len(everything.problems[0].files) == 30 and everything.problems[0].more == 0
    page = idx.problem_files("skipped", "unsupported_type", offset=25, limit=10)
    assert [f.path for f in page] == [str(root / f"photo_{i:02d}.png") for i in range(25, 30)]
    # the JSON object is the documented one
    data = status.to_json()
    assert set(data) == {"roots", "files_indexed", "files_skipped", "files_error", "chunks",
                         "db_bytes", "hnsw_bytes", "embedding_model", "embedding_engine", "problems"}
    assert data["embedding_engine"] == os.environ["LOCALRAG_EMBED_BACKEND"]   # tests/conftest.py
    assert set(data["problems"][0]) == {"state", "kind", "label", "count", "more", "files"}
    assert set(data["problems"][0]["files"][0]) == {"path", "reason"}
    assert set(data["roots"][0]) == {"path", "files", "chunks", "added_at", "missing"}

    # Fixed files leave their group: the store, not the last run, is what status reads.
    for i in range(30):
        (root / f"photo_{i:02d}.png").unlink()
    (root / "empty_0.md").write_text("The gannet dives from thirty metres.\n")
    idx.update()
    after = {g.kind: g.count for g in idx.status().problems}
    assert "unsupported_type" not in after and after["empty"] == 2
    reopened = make_index()          # a fresh process sees the same (nothing held in memory)
    assert {g.kind: g.count for g in reopened.status().problems} == after


def test_migration_gives_old_rows_a_kind(tmp_path):
    """An index written before reason kinds existed (schema 1) is grouped after opening."""
    import sqlite_utils

    db_path = tmp_path / "index.db"
    conn = sqlite3.connect(db_path, isolation_level=None)
    db = sqlite_utils.Database(conn)
    _migration_1(db)
    conn.execute("PRAGMA user_version=1")
    old = [("/d/a.png", "skipped", "unsupported file type .png (add it to the extensions setting "
            "to index it as text)"),
           ("/d/b.md", "skipped", "empty file"),
           ("/d/c.pdf", "error", "cannot read PDF: the file is damaged or not a PDF (EOF); re-export"),
           ("/d/d.md", "error", "permission denied: run `chmod u+r /d/d.md`"),
           ("/d/node_modules", "skipped", "ignored folder (installed dependencies, built-in ignore list)"),
           ("/d/e.md", "skipped", "something a future version wrote"),
           ("/d/f.md", "indexed", None)]
    for path, state, reason in old:
        conn.execute("INSERT INTO files(path, root, mtime_ns, size, state, reason, chunks) "
                     "VALUES (?, '/d', 1, 1, ?, ?, 0)", (path, state, reason))
    conn.close()

    store = Store(db_path)
    try:
        assert store.conn.execute("PRAGMA user_version").fetchone()[0] == len(MIGRATIONS)
        kinds = dict(store.conn.execute("SELECT path, reason_kind FROM files").fetchall())
        assert kinds == {"/d/a.png": "unsupported_type", "/d/b.md": "empty", "/d/c.pdf": "damaged",
                         "/d/d.md": "permission", "/d/node_modules": "ignored_folder",
                         "/d/e.md": "other", "/d/f.md": None}
        assert sorted(store.problem_groups()) == sorted([
            ("skipped", "unsupported_type", 1), ("skipped", "empty", 1), ("error", "damaged", 1),
            ("error", "permission", 1), ("skipped", "ignored_folder", 1), ("skipped", "other", 1)])
        plan = " ".join(r[-1] for r in store.conn.execute(
            "EXPLAIN QUERY PLAN SELECT path FROM files WHERE state='skipped' AND "
            "reason_kind='empty' ORDER BY path"))
        assert "idx_files_problems" in plan        # a group is read from the index
    finally:
        store.close()


@pytest.fixture
def cli_env(tmp_path, make_index, monkeypatch):
    """A data directory whose index holds the messy root (indexed in this process, with
    the shared embedder; the CLI's status never loads the model)."""
    root = messy_root(tmp_path)
    lock_out(monkeypatch, root / "locked.md")
    idx = make_index(index_dir=tmp_path / "data" / "index")
    idx.add_root(root)
    idx.update()
    idx.close()
    env = dict(os.environ, LOCALRAG_HOME=str(tmp_path / "data"), PYTHONPATH=str(ROOT),
               HF_HUB_OFFLINE="1")
    return root, env


def cli(env, *args: str) -> subprocess.CompletedProcess:
    return subprocess.run([sys.executable, "-m", "localrag", *args], env=env,
                          capture_output=True, text=True, timeout=120)


def test_cli_status_lists_groups_then_all(cli_env):
    root, env = cli_env
    out = cli(env, "status")
    assert out.returncode == 0, out.stderr
    lines = out.stdout.splitlines()
    assert "files: 1 indexed, 36 skipped, 2 in error; 1 chunks" in lines
    assert "skipped unsupported file types [unsupported_type]: 30 files" in lines
    assert "skipped empty files [empty]: 3 files" in lines
    assert any(line.startswith("error   permission denied [permission]: 1 file") for line in lines)
    assert f"    {root}/broken.pdf: cannot read PDF: the file is damaged or not a PDF" in out.stdout
    shown = [line for line in lines if ".png: unsupported file type" in line]
    assert len(shown) == 10                     # the first 10 of the 30
    assert "    ... and 20 more: localrag status --reason unsupported_type" in lines
    # the errors come before the skips
    first_skip = next(i for i, line in enumerate(lines) if line.startswith("skipped"))
    assert all(not line.startswith("error") for line in lines[first_skip:])

    every = cli(env, "status", "--all")
    listed = {line.split(": ", 1)[0].strip() for line in every.stdout.splitlines()
              if line.startswith("    /")}
    expected = {str(p) for p in root.iterdir() if p.name != "good.md"}
    assert listed == expected and "more:" not in every.stdout

    one = cli(env, "status", "--reason", "unsupported_type")
    assert sum(".png: " in line for line in one.stdout.splitlines()) == 30
    assert "empty" not in one.stdout.split("chunks)", 1)[-1]

    few = cli(env, "status", "--limit", "2")
    assert "    ... and 28 more: localrag status --reason unsupported_type" in few.stdout

    bad = cli(env, "status", "--reason", "nonsense")
    assert bad.returncode == 2 and "unknown reason kind 'nonsense'" in bad.stderr
    assert "unsupported_type" in bad.stderr


def test_cli_status_json(cli_env):
    root, env = cli_env
    data = json.loads(cli(env, "status", "--json").stdout)
    groups = {g["kind"]: g for g in data["problems"]}
    assert groups["unsupported_type"]["count"] == 30 and groups["unsupported_type"]["more"] == 20
    assert len(groups["unsupported_type"]["files"]) == 10
    assert groups["permission"]["state"] == "error"
    assert groups["permission"]["files"] == [
        {"path": str(root / "locked.md"), "reason": groups["permission"]["files"][0]["reason"]}]
    full = json.loads(cli(env, "status", "--json", "--all").stdout)
    paths = {f["path"] for g in full["problems"] for f in g["files"]}
    assert paths == {str(p) for p in root.iterdir() if p.name != "good.md"}
    assert all(g["more"] == 0 for g in full["problems"])
    assert sum(g["count"] for g in full["problems"]) == full["files_skipped"] + full["files_error"]


def test_missing_root_is_flagged(tmp_path, make_index):
    root = tmp_path / "usb"
    root.mkdir()
    (root / "a.md").write_text("The drive holds notes on the tapir.\n")
    idx = make_index()
    idx.add_root(root)
    idx.update()
    assert idx.roots()[0].missing is False
    os.rename(root, tmp_path / "elsewhere")
    assert idx.roots()[0].missing is True and idx.status().roots[0].missing is True
