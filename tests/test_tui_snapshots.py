"""Snapshot tests (pytest-textual-snapshot) of the main screens at 80x24.

Deterministic content: the fake Assistant's canned answer and a fixed index status.
Update after an intended change with `pytest tests/test_tui_snapshots.py --snapshot-update`
and look at the SVGs in tests/__snapshots__/.
"""

from __future__ import annotations

import sys
from pathlib import Path

import pytest

sys.path.insert(0, str(Path(__file__).parent))

from indexer.records import FileProblem, IndexStatus, ProblemGroup, RootInfo  # noqa: E402
from localrag.chats import ChatSummary  # noqa: E402
from tui.app import LocalragApp, create_app  # noqa: E402
from tui.screens.chats import ChatsScreen  # noqa: E402
from screen_text import still  # noqa: E402
from tui_fakes import FakeAssistant  # noqa: E402

QUESTION = "How much sun do tomatoes need?"


class SnapshotAssistant(FakeAssistant):
    def status(self) -> IndexStatus:
        return IndexStatus(
            roots=[RootInfo("/home/me/notes", 41, 230, 0.0),
                   RootInfo("/home/me/papers", 12, 610, 0.0)],
            files_indexed=53, files_skipped=4, files_error=2, chunks=840,
            problems=[
                ProblemGroup("error", "damaged", "damaged or invalid documents", 2, [
                    FileProblem("/home/me/notes/old.docx", "error", "not a valid DOCX file", "damaged"),
                    FileProblem("/home/me/papers/broken.pdf", "error", "cannot read PDF", "damaged")]),
                ProblemGroup("skipped", "unsupported_type", "unsupported file types", 3, [
                    FileProblem("/home/me/notes/photo.png", "skipped", "unsupported file type .png",
                                "unsupported_type")]),
                ProblemGroup("skipped", "empty", "empty files", 1, [
                    FileProblem("/home/me/notes/todo.md", "skipped", "empty file", "empty")]),
            ],
            db_bytes=3_500_000, hnsw_bytes=1_400_000, embedding_model="all-MiniLM-L6-v2")


def make_app(tmp_path: Path, *, first_run: bool = False) -> LocalragApp:
    fake = (FakeAssistant if first_run else SnapshotAssistant)(tmp_path / "data")
    app = create_app(fake, first_run_screen=first_run)
    app.sub_title = "~/.local/share/localrag"
    return app


async def settle(pilot) -> None:
    await pilot.app.workers.wait_for_complete()
    await pilot.pause()


async def answered(pilot) -> None:
    await settle(pilot)
    pilot.app.ask(QUESTION)
    await settle(pilot)
    await still(pilot, "#question")


def test_chat_screen_with_answer(snap_compare, tmp_path):
    assert snap_compare(make_app(tmp_path), run_before=answered)


def test_chat_screen_light_theme(snap_compare, tmp_path):
    async def light(pilot):
        await answered(pilot)
        await pilot.press("ctrl+t")
        await still(pilot, "#question")
    assert snap_compare(make_app(tmp_path), run_before=light)


def test_source_panel(snap_compare, tmp_path):
    async def open_source(pilot):
        await answered(pilot)
        view = list(pilot.app._turns.values())[-1]
        pilot.app.open_citation(view.answer, 0)
        await settle(pilot)
        for _ in range(200):                 # the text is in and scrolled to the span
            if getattr(pilot.app.screen, "shown", False):
                break
            await pilot.pause(0.05)
        assert pilot.app.screen.shown
        await still(pilot, "#source-scroll")
    assert snap_compare(make_app(tmp_path), run_before=open_source)


def test_first_run_add_folder(snap_compare, tmp_path):
    async def first_run(pilot):
        await settle(pilot)
        await still(pilot, "Input")
    assert snap_compare(make_app(tmp_path, first_run=True), run_before=first_run)


def test_index_screen(snap_compare, tmp_path):
    async def index(pilot):
        await settle(pilot)
        await pilot.press("f3")
        await settle(pilot)
        await still(pilot, "#roots-table")
    assert snap_compare(make_app(tmp_path), run_before=index)


def test_settings_screen(snap_compare, tmp_path):
    async def settings(pilot):
        await settle(pilot)
        await pilot.press("f4")
        await settle(pilot)
        await still(pilot, "#set-model_path")
    assert snap_compare(make_app(tmp_path), run_before=settings)


def test_chats_screen(snap_compare, tmp_path, monkeypatch):
    import time

    monkeypatch.setenv("TZ", "UTC")
    time.tzset()
    async def chats(pilot):
        await settle(pilot)
        pilot.app.push_screen(ChatsScreen([
            ChatSummary(2, "How much sun do tomatoes need?", 1.7e9, 1.7e9 + 60, 3),
            ChatSummary(1, "Where is the VPN config?", 1.6e9, 1.6e9 + 60, 1),
        ]))
        await pilot.pause()
        await still(pilot, "OptionList")
    assert snap_compare(make_app(tmp_path), run_before=chats)


@pytest.mark.asyncio
async def test_the_snapshot_screen_is_still(tmp_path):
    """What the snapshots above picture does not change while it waits: a screenshot
    taken now and ones taken across the next blink periods (0.5 s) are the same picture
    (a blinking cursor made a snapshot depend on how long the steps before it took)."""
    import asyncio
    import re

    app = make_app(tmp_path)
    async with app.run_test(size=(80, 24)) as pilot:
        await answered(pilot)
        shots = []
        for _ in range(4):
            shots.append(re.sub(r"terminal-\d+", "terminal", app.export_screenshot()))
            await asyncio.sleep(0.3)
        assert len(set(shots)) == 1
