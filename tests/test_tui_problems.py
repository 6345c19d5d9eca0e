"""The index screen (F3) names every file that is not indexed: one expandable group per
kind of reason, errors open, and a "more" line that pages through a large group."""

from __future__ import annotations

import os
import sys
from pathlib import Path

import pytest

sys.path.insert(0, str(Path(__file__).parent))

from indexer.records import FileProblem  # noqa: E402
from localrag.assistant import Assistant  # noqa: E402
from tui.app import create_app  # noqa: E402
from tui.screens.index import IndexScreen  # noqa: E402
from tui.widgets.index_view import GroupNode, MoreNode, ProblemTree  # noqa: E402
from tui_fakes import FakeAssistant  # noqa: E402

pytestmark = pytest.mark.asyncio


async def settle(pilot) -> None:
    from textual.worker import WorkerCancelled

    for _ in range(20):
        try:
            await pilot.app.workers.wait_for_complete()
            break
        except WorkerCancelled:
            continue
    await pilot.pause()


def groups(tree: ProblemTree) -> dict[str, object]:
    return {node.data.kind: node for node in tree.root.children}


def leaves(node) -> list[str]:
    return [str(child.label) for child in node.children]


async def test_index_screen_groups_thousands_of_skips(tmp_path):
    fake = FakeAssistant(tmp_path / "data")
    fake.add_root(tmp_path / "docs")
    fake._problems = (
        [FileProblem(f"/docs/img/{i:04d}.png", "skipped", "unsupported file type .png",
                     "unsupported_type") for i in range(450)]
        + [FileProblem("/docs/a.md", "error", "permission denied: run `chmod u+r /docs/a.md`",
                       "permission"),
           FileProblem("/docs/b.pdf", "error", "PDF is password-protected", "encrypted")])
    app = create_app(fake, load_model=False, first_run_screen=False)
    async with app.run_test(size=(100, 40)) as pilot:
        await settle(pilot)
        await pilot.press("f3")
        await settle(pilot)
        screen = app.screen
        assert isinstance(screen, IndexScreen)
        title = str(screen.query_one("#index-problems-title").render())
        assert "2 in error, 450 skipped" in title
        tree = screen.query_one(ProblemTree)
        by_kind = groups(tree)
        assert list(by_kind) == ["permission", "encrypted", "unsupported_type"]
        # errors are open and list their files with the reason; skips start closed
        assert by_kind["permission"].is_expanded and by_kind["encrypted"].is_expanded
        assert leaves(by_kind["permission"]) == ["/docs/a.md: permission denied: run `chmod u+r /docs/a.md`"]
        images = by_kind["unsupported_type"]
        assert not images.is_expanded
        assert "unsupported file types (450 files)" in str(images.label)
        assert len(images.children) == 10 + 1           # the first 10, then "440 more"
        assert isinstance(images.children[-1].data, MoreNode)
        assert "440 more" in str(images.children[-1].label)

        # open the group and page through all of it from the keyboard
        tree.focus()
        tree.move_cursor(images)
        await pilot.press("space")                      # expand
        await pilot.pause()
        assert images.is_expanded
        for shown in (210, 410, 450):
            more = images.children[-1]
            tree.move_cursor(more)
            await pilot.press("enter")
            await settle(pilot)
            files = [c for c in images.children if isinstance(c.data, FileProblem)]
            assert len(files) == shown
        assert not isinstance(images.children[-1].data, MoreNode)
        paths = [c.data.path for c in images.children]
        assert paths == [f"/docs/img/{i:04d}.png" for i in range(450)]   # each once, in order

        # a status refresh (say after a watcher event) keeps the group open
        from tui.messages import IndexStatusChanged

        fake._problems = fake._problems[:-1]            # b.pdf was fixed
        app.post_message(IndexStatusChanged(fake.status()))
        await settle(pilot)
        by_kind = groups(screen.query_one(ProblemTree))
        assert "encrypted" not in by_kind and by_kind["unsupported_type"].is_expanded


async def test_index_screen_over_the_real_index(tmp_path, embedder):
    docs = tmp_path / "docs"
    docs.mkdir()
    (docs / "notes.md").write_text("# Notes\n\nThe pelican stores fish in its pouch.\n")
    for i in range(12):
        (docs / f"scan_{i:02d}.tiff").write_bytes(b"II*\x00" + bytes([i]))
    (docs / "empty.md").write_text("")
    os.mkfifo(docs / "pipe.md")
    assistant = Assistant.open(tmp_path / "data", overrides={"watch": False}, embedder=embedder)
    assistant.add_root(docs)
    assistant.update_index()
    app = create_app(assistant, load_model=False, first_run_screen=False)
    try:
        async with app.run_test(size=(100, 40)) as pilot:
            await settle(pilot)
            await pilot.press("f3")
            await settle(pilot)
            tree = app.screen.query_one(ProblemTree)
            by_kind = groups(tree)
            assert {k: n.data.count for k, n in by_kind.items()} == {
                "unsupported_type": 12, "empty": 1, "special_file": 1}
            assert isinstance(by_kind["unsupported_type"].data, GroupNode)
            assert leaves(by_kind["special_file"])[0].startswith(f"{docs}/pipe.md: not a regular file")
            by_kind["unsupported_type"].expand()
            await pilot.pause()
            tree.focus()
            tree.move_cursor(by_kind["unsupported_type"].children[-1])
            await pilot.press("enter")                  # "2 more" from the real store
            await settle(pilot)
            assert [c.data.path for c in by_kind["unsupported_type"].children] == [
                str(docs / f"scan_{i:02d}.tiff") for i in range(12)]
    finally:
        assistant.close()


async def test_a_highlighted_file_shows_its_whole_reason_at_80_columns(tmp_path):
    """At 80 columns a tree line cuts most reasons (and their fix) at the edge; the line
    under the tree shows the highlighted file's path and whole reason, wrapped."""
    fake = FakeAssistant(tmp_path / "data")
    fake.add_root(tmp_path / "docs")
    reason = ("cannot read DOCX: the zip archive is damaged or truncated (File is not a zip "
              "file), as after an interrupted download or copy; copy it again or re-save it "
              "from Word or LibreOffice")
    fake._problems = [FileProblem("/docs/meeting-notes.docx", "error", reason, "damaged")]
    app = create_app(fake, load_model=False, first_run_screen=False)
    async with app.run_test(size=(80, 24)) as pilot:
        await settle(pilot)
        await pilot.press("f3")
        await settle(pilot)
        tree = app.screen.query_one(ProblemTree)
        detail = app.screen.query_one("#index-problem-detail")
        assert str(detail.render()) == ""
        tree.focus()
        tree.move_cursor(groups(tree)["damaged"].children[0])
        await pilot.pause()
        shown = " ".join(str(detail.render()).split())
        assert shown == f"meeting-notes.docx: {reason}"
        assert detail.size.height >= 3                   # wrapped, not cut
        tree.move_cursor(groups(tree)["damaged"])
        await pilot.pause()
        assert str(detail.render()) == ""
