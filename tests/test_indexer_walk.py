"""Listing files: ignore rules, hidden files, symlinks, size limit, dry runs."""

from __future__ import annotations

import os

from indexer.options import IndexOptions
from indexer.walk import scan


def opts(**kw) -> IndexOptions:
    base = dict(extensions=[".txt", ".md", ".py"], max_file_bytes=1000)
    base.update(kw)
    return IndexOptions(**base)


def reasons(result) -> dict[str, str]:
    return {os.path.relpath(p, ROOT[0]): s.reason for p, s in result.skips.items()}


ROOT: list[str] = [""]


def build(tmp_path):
    root = tmp_path / "docs"
    (root / "src").mkdir(parents=True)
    (root / "node_modules" / "pkg").mkdir(parents=True)
    (root / "build").mkdir()
    (root / ".secret").mkdir()
    (root / "venvlike").mkdir()
    (root / "venvlike" / "pyvenv.cfg").write_text("home = /usr")
    (root / "venvlike" / "lib.py").write_text("x = 1")
    (root / "node_modules" / "pkg" / "index.txt").write_text("dep")
    (root / "build" / "out.txt").write_text("built")
    (root / ".secret" / "key.txt").write_text("k")
    (root / ".hidden.md").write_text("h")
    (root / "a.md").write_text("alpha")
    (root / "debug.log.txt").write_text("log")
    (root / "src" / "main.py").write_text("print(1)")
    (root / "src" / "keep.txt").write_text("keep")
    (root / "src" / "drop.txt").write_text("drop")
    (root / "image.png").write_bytes(b"\x89PNG")
    (root / "big.txt").write_text("x" * 2000)
    (root / "empty.txt").write_text("")
    (root / ".gitignore").write_text("*.log.txt\nsrc/*.txt\n")
    (root / "src" / ".gitignore").write_text("!keep.txt\n")
    ROOT[0] = str(root)
    return root


def test_ignore_rules_hidden_and_limits(tmp_path):
    root = build(tmp_path)
    result = scan([(str(root), str(root))], opts())
    got = sorted(os.path.relpath(p, root) for p in result.candidates)
    assert got == ["a.md", "src/keep.txt", "src/main.py"]
    why = reasons(result)
    assert "installed dependencies" in why["node_modules"]
    assert "build output" in why["build"]
    assert "virtual environment" in why["venvlike"]
    assert "hidden folder" in why[".secret"] and "hidden file" in why[".hidden.md"]
    assert why["debug.log.txt"].startswith("ignored by") and why["debug.log.txt"].endswith(".gitignore")
    assert "src/.gitignore" not in why and why["src/drop.txt"].startswith("ignored by")
    assert "unsupported file type .png" in why["image.png"]
    assert "over the" in why["big.txt"] and "max_file_mb" in why["big.txt"]
    assert why["empty.txt"] == "empty file"


def test_include_hidden(tmp_path):
    root = build(tmp_path)
    result = scan([(str(root), str(root))], opts(include_hidden=True))
    rel = {os.path.relpath(p, root) for p in result.candidates}
    assert {".hidden.md", ".secret/key.txt"} <= rel


def test_scope_inside_ignored_folder_yields_nothing(tmp_path):
    root = build(tmp_path)
    result = scan([(str(root), str(root / "node_modules" / "pkg" / "index.txt"))], opts())
    assert not result.candidates
    result = scan([(str(root), str(root / "src" / "drop.txt"))], opts())
    assert not result.candidates and "ignored by" in next(iter(result.skips.values())).reason
    result = scan([(str(root), str(root / "src" / "keep.txt"))], opts())
    assert list(result.candidates) == [str(root / "src" / "keep.txt")]


def test_symlinks_inside_followed_outside_and_loops_skipped(tmp_path):
    root = tmp_path / "root"
    (root / "real").mkdir(parents=True)
    (root / "real" / "r.txt").write_text("real file")
    outside = tmp_path / "outside"
    outside.mkdir()
    (outside / "o.txt").write_text("outside")
    hidden_target = root / ".stash"
    hidden_target.mkdir()
    (hidden_target / "s.txt").write_text("stashed")
    os.symlink(outside, root / "to_outside")
    os.symlink(root, root / "real" / "loop")            # back to an ancestor
    os.symlink(root / "real", root / "dup")              # same folder twice
    os.symlink(hidden_target, root / "stash_link")      # only reachable through the link
    os.symlink(root / "nowhere", root / "broken.txt")
    os.symlink(root / "self_a.txt", root / "self_b.txt")
    os.symlink(root / "self_b.txt", root / "self_a.txt")
    ROOT[0] = str(root)
    result = scan([(str(root), str(root))], opts())
    got = sorted(os.path.relpath(p, root) for p in result.candidates)
    assert got == ["real/r.txt", "stash_link/s.txt"]
    why = reasons(result)
    assert "outside the indexed folder" in why["to_outside"]
    assert why["real/loop"].startswith("symlink loop")
    assert "already indexed" in why["dup"]
    assert "broken symlink" in why["broken.txt"]
    assert why["self_a.txt"].startswith("symlink loop") and why["self_b.txt"].startswith("symlink loop")


def test_dry_run_lists_and_changes_nothing(tmp_path, index_options):
    from indexer.index import Index

    root = build(tmp_path)
    idx = Index(tmp_path / "index", options=opts())   # no embedder needed for a dry run
    try:
        report = idx.update([root], dry_run=True)     # not added yet: a dry run may look
        assert report.dry_run
        assert sorted(os.path.relpath(p, root) for p in report.would_index) == ["a.md", "src/keep.txt", "src/main.py"]
        assert any(p.path.endswith("node_modules") for p in report.problems)
        assert idx.is_empty() and idx.status().files_skipped == 0 and idx.roots() == []
        assert idx.embedder._model is None              # nothing was embedded
    finally:
        idx.close()


def test_minified_code_is_skipped_with_its_reason(tmp_path):
    """A vendored `jquery.min.js` is one machine-written line whose tokens are junk for
    search: it is skipped (kind "minified"), and its readable neighbour is indexed."""
    root = tmp_path / "site"
    (root / "static").mkdir(parents=True)
    (root / "static" / "jquery.min.js").write_text("!function(e,t){e&&e.fn&&(n=t.fn)}(window);")
    (root / "static" / "theme.MIN.CSS").write_text("a{b:c}")
    (root / "static" / "app.js").write_text("// Toggle the menu.\nfunction toggle() { menu.open = !menu.open; }\n")
    result = scan([(str(root), str(root))], opts(extensions=[".js", ".css"]))
    assert sorted(os.path.relpath(p, root) for p in result.candidates) == ["static/app.js"]
    skips = {os.path.relpath(p, root): s for p, s in result.skips.items()}
    assert {k: s.kind for k, s in skips.items()} == {"static/jquery.min.js": "minified",
                                                    "static/theme.MIN.CSS": "minified"}
    assert "minified code" in skips["static/jquery.min.js"].reason
