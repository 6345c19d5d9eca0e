"""Pilot tests of the terminal app over the REAL Assistant: a temporary data directory,
a real index (SQLite + hnswlib + all-MiniLM-L6-v2) and a real GGUF model through
llama.cpp (the default SmolLM2-135M-Instruct; a garbage .gguf for the error test).
"""

from __future__ import annotations

import os
import sys
from pathlib import Path

import pytest

sys.path.insert(0, str(Path(__file__).parent))

from localrag.assistant import Assistant  # noqa: E402
from localrag.answering.label.render import LABEL_SYMBOL, decision_line, segment_symbol  # noqa: E402
from tui.app import create_app  # noqa: E402
from tui.screens.add_folder import AddFolderScreen  # noqa: E402
from tui.screens.source import HIGHLIGHT, SourceScreen  # noqa: E402
from tui.widgets.answer_view import SegmentLine, SourceLine  # noqa: E402

pytestmark = [pytest.mark.asyncio, pytest.mark.slow]

OVERRIDES = {"n_threads": 1, "max_tokens": 40, "n_ctx": 2048, "max_segments": 3, "k": 3,
             "watch": True}


async def settle(pilot) -> None:
    from textual.worker import WorkerCancelled

    for _ in range(20):
        try:
            await pilot.app.workers.wait_for_complete()
            break
        except WorkerCancelled:
            continue
    await pilot.pause()


@pytest.fixture
def notes(tmp_path: Path) -> Path:
    folder = tmp_path / "notes"
    folder.mkdir()
    (folder / "garden.md").write_text(
        "# Garden\n\n## Tomatoes\n\nTomato plants need at least six hours of direct sun "
        "every day. Water them deeply twice a week and mulch the soil to keep it moist.\n\n"
        "## Basil\n\nBasil grows well next to tomatoes and likes warm weather.\n",
        encoding="utf-8")
    (folder / "bikes.txt").write_text(
        "The bicycle chain should be cleaned and oiled every 300 kilometres.\n"
        "Tyre pressure for the road bike is 6 bar.\n", encoding="utf-8")
    (folder / "locked.md").write_text("secret\n", encoding="utf-8")
    os.chmod(folder / "locked.md", 0)
    return folder


async def test_real_app_index_ask_cite_cancel(tmp_path, notes, embedder):
    assistant = Assistant.open(tmp_path / "data", overrides=OVERRIDES, embedder=embedder)
    returned = []
    real_ask = assistant.ask

    def recording_ask(question, **kwargs):
        answer = real_ask(question, **kwargs)
        returned.append(answer)
        return answer
    assistant.ask = recording_ask  # type: ignore[method-assign]
    app = create_app(assistant)
    try:
        async with app.run_test(size=(100, 40)) as pilot:
            await settle(pilot)
            # first run: the add-folder screen; the model loaded meanwhile
            assert isinstance(app.screen, AddFolderScreen)
            assert app.model_description is not None, app.model_error
            assert app.model_description.runs_from is not None     # SmolLM2's Q8_0 CPU copy
            app.screen.query_one("#folder-input").value = str(notes)
            await pilot.press("enter")
            await settle(pilot)
            readable = 2 if os.geteuid() != 0 else 3      # root reads the locked file too
            assert f"Index up to date: {readable} added" in app.index_result, app.index_result
            assert app.index_progress is not None and app.index_progress.phase == "done"
            status = app.index_status
            assert [r.path for r in status.roots] == [str(notes)]
            assert status.files_indexed == readable
            if os.geteuid() != 0:     # root reads everything
                assert any("locked.md" in e.path for e in status.errors)
            hits = assistant.search("how much sun do tomato plants need")
            assert hits and hits[0].path == str(notes / "garden.md")
            assert assistant.watching

            assert "runs its Q8_0 CPU copy" in str(app.screen.query_one("#model-status").render())
            # ask: the labels and citations on screen are the engine's
            await pilot.click("#question")
            app.screen.query_one("#question").value = "How many hours of sun do tomato plants need?"
            await pilot.press("enter")
            await settle(pilot)
            assert len(returned) == 1, app.last_error
            answer = returned[0]
            view = list(app._turns.values())[-1]
            assert view.answer is answer and answer.segments
            assert view.shown_segments() == [(s.text.strip(), s.label, s.citation)
                                             for s in answer.segments]
            for line, seg in zip(view.query(SegmentLine), answer.segments):
                assert line.plain.startswith(segment_symbol(seg))
                if seg.citation is not None:
                    assert f"[{seg.citation + 1}]" in line.plain
            assert str(view.query_one(".decision").render()) == decision_line(answer)

            # open a source (cited, or the first passage read)
            sources = list(view.query(SourceLine))
            if sources:
                sources[0].focus()
                await pilot.press("enter")
                index = sources[0].citation
            else:
                assert answer.passages, "the question is answerable from the notes"
                app.open_citation(answer, 0)
                index = 0
            await settle(pilot)
            screen = app.screen
            assert isinstance(screen, SourceScreen)
            passage = answer.passages[index].passage
            text, start, end = assistant.surrounding(passage)
            body = screen.query_one("#source-body").render()
            assert str(body) == text
            assert [(s.start, s.end) for s in body.spans
                    if s.style == HIGHLIGHT] == [(start, end)]
            assert passage.path in str(screen.query_one("#source-path").render())
            await pilot.press("escape")
            await pilot.pause()

            # cancel: Esc right after asking
            app.ask("What tyre pressure does the road bike need?")
            await pilot.press("escape")
            await settle(pilot)
            view = list(app._turns.values())[-1]
            assert view.state == "cancelled"
            assert str(view.query_one(".turn-status").render()) == "cancelled"
            assert len(returned) == 1

            # the saved chat reopens with the same lines
            chats = assistant.chats()
            assert chats and chats[0].turns == 1
            app.open_chat(chats[0].id)
            await settle(pilot)
            reopened = list(app._turns.values())[-1]
            assert reopened.shown_segments() == [(s.text.strip(), s.label, s.citation)
                                                 for s in answer.segments]
    finally:
        os.chmod(notes / "locked.md", 0o600)
        assistant.close()


async def test_real_broken_model_file_shows_the_error(tmp_path, embedder):
    bad = tmp_path / "model.gguf"
    bad.write_bytes(os.urandom(4096))
    assistant = Assistant.open(tmp_path / "data", overrides={"model_path": str(bad)},
                               embedder=embedder)
    app = create_app(assistant, first_run_screen=False)
    try:
        async with app.run_test() as pilot:
            await settle(pilot)
            status = str(app.screen.query_one("#model-status").render())
            assert status.startswith("model failed:")
            assert str(bad) in status and "GGUF" in status
            assert app.last_error is not None and "fix:" in app.last_error
            assert "Traceback" not in app.last_error
            # asking shows the same clear message instead of crashing
            app.ask("anything?")
            await settle(pilot)
            view = list(app._turns.values())[-1]
            assert view.state == "failed"
            assert str(bad) in app.last_error
    finally:
        assistant.close()


async def test_real_locked_index_shows_the_error(tmp_path, notes, embedder):
    """A second instance on the same data directory: the watcher cannot take the writer
    lock, and the app says so instead of failing."""
    first = Assistant.open(tmp_path / "data", overrides=OVERRIDES, embedder=embedder)
    first.add_root(notes)
    first.update_index()
    first.start_watching(lambda event: None)
    second = Assistant.open(tmp_path / "data", overrides=OVERRIDES, embedder=embedder)
    app = create_app(second, load_model=False)
    try:
        async with app.run_test() as pilot:
            await settle(pilot)
            assert app.index_status is not None and len(app.index_status.roots) == 1
            assert app.last_error is not None and "another localrag process" in app.last_error
            assert "fix:" in app.last_error
            app.action_update_index()
            await settle(pilot)
            assert app.index_result.startswith("Indexing failed: another localrag process")
    finally:
        os.chmod(notes / "locked.md", 0o600)
        second.close()
        first.close()
