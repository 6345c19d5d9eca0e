"""Pilot tests of the terminal app over the fake Assistant (tests/tui_fakes.py).

Fast and deterministic: the real chat store and settings file in a temporary data
directory; the index and the engine are the fakes'. The real-parts tests are in
test_tui_real.py.
"""

from __future__ import annotations

import os
import sys
import threading
from pathlib import Path

import pytest

sys.path.insert(0, str(Path(__file__).parent))

from indexer.records import IndexReport, WatchEvent  # noqa: E402
from localrag.answering.label.render import (LABEL_SYMBOL, answer_to_markdown, decision_line,  # noqa: E402
                             decision_preview)
from localrag.settings import Settings  # noqa: E402
from tui.app import create_app  # noqa: E402
from tui.screens.add_folder import AddFolderScreen  # noqa: E402
from tui.screens.chats import ChatsScreen  # noqa: E402
from tui.screens.index import IndexScreen  # noqa: E402
from tui.screens.settings import SettingsScreen  # noqa: E402
from tui.screens.source import HIGHLIGHT, SourceScreen  # noqa: E402
from tui.widgets.answer_view import SegmentLine, SourceLine, TurnView  # noqa: E402
from tui_fakes import FakeAssistant  # noqa: E402

pytestmark = pytest.mark.asyncio


@pytest.fixture
def docs(tmp_path: Path) -> Path:
    folder = tmp_path / "docs"
    folder.mkdir()
    (folder / "garden.md").write_text(
        "# Garden\n\nTomatoes need six hours of sun every day.\n\n"
        "Water tomatoes deeply twice a week.\n", encoding="utf-8")
    (folder / "recipes.txt").write_text("Roast the tomatoes before the soup.\n",
                                        encoding="utf-8")
    (folder / "broken.md").write_bytes(b"\xff\xfe\x00bad utf8 \xc3\x28")
    return folder


def plain(widget) -> str:
    if isinstance(widget, SegmentLine):
        return widget.plain
    return str(widget.render())


async def settle(pilot) -> None:
    """Wait for every worker (a worker cancelled by an exclusive one counts as done)."""
    from textual.worker import WorkerCancelled

    for _ in range(20):
        try:
            await pilot.app.workers.wait_for_complete()
            break
        except WorkerCancelled:
            continue
    await pilot.pause()


async def ask(pilot, question: str) -> TurnView:
    await pilot.click("#question")
    for ch in question:
        await pilot.press(ch if ch != " " else "space")
    await pilot.press("enter")
    await settle(pilot)
    return list(pilot.app._turns.values())[-1]


async def test_answer_shows_the_engines_labels_and_citations(tmp_path):
    fake = FakeAssistant(tmp_path / "data")
    app = create_app(fake, first_run_screen=False)
    async with app.run_test(size=(100, 40)) as pilot:
        await settle(pilot)
        view = await ask(pilot, "how do tomatoes grow?")
        answer = fake.answers[-1]
        assert fake.asked == ["how do tomatoes grow?"]
        assert view.shown_segments() == [(s.text, s.label, s.citation) for s in answer.segments]
        lines = list(view.query(SegmentLine))
        for line, seg in zip(lines, answer.segments):
            text = plain(line)
            assert text.startswith(LABEL_SYMBOL[seg.label])
            assert seg.text in text
            if seg.citation is not None:
                assert f"[{seg.citation + 1}]" in text
            else:
                assert "[" not in text
        # four different labels, four different symbols and colours
        assert {line.segment.label for line in lines} == {"fully", "partially", "none",
                                                          "no_retrieval"}
        assert plain(view.query_one(".decision")) == decision_line(answer)
        assert "2 of 3 passages judged relevant" in decision_line(answer)
        cited = sorted({s.citation for s in answer.segments if s.citation is not None})
        assert [s.citation for s in view.query(SourceLine)] == cited
        assert "fake-selfrag" in plain(app.screen.query_one("#model-status"))


async def test_segments_stream_in_before_the_answer_is_complete(tmp_path):
    fake = FakeAssistant(tmp_path / "data")
    fake.gate = threading.Semaphore(0)
    app = create_app(fake, first_run_screen=False)
    async with app.run_test() as pilot:
        await settle(pilot)
        app.ask("tomatoes?")
        await pilot.pause()
        view = list(app._turns.values())[-1]
        for n in range(1, 6):
            fake.gate.release()
            for _ in range(100):                 # wait for the message, not for time
                await pilot.pause()
                if len(view.query(SegmentLine)) == n or view.answer is not None:
                    break
            if n < 5:
                assert len(view.query(SegmentLine)) == n
                # the decision is shown as soon as the engine made it, before the text ends
                assert view.answer is None
                assert view.decision is not None and view.decision.retrieved
                assert plain(view.query_one(".decision")) == decision_preview(view.decision)
                assert plain(view.query_one(".decision")).startswith("Retrieving (p=")
        await settle(pilot)
        assert view.answer is fake.answers[-1]


async def test_first_run_add_folder_indexes_and_question_box_stays_usable(tmp_path, docs):
    fake = FakeAssistant(tmp_path / "data")
    app = create_app(fake)
    async with app.run_test(size=(80, 24)) as pilot:
        await settle(pilot)
        assert isinstance(app.screen, AddFolderScreen)
        app.screen.query_one("#folder-input").value = str(docs)
        await pilot.press("enter")
        await settle(pilot)
        assert not isinstance(app.screen, AddFolderScreen)
        assert app.focused is app.screen.query_one("#question")
        assert app.index_status is not None and app.index_status.files_indexed == 2
        assert app.index_status.files_error == 1
        assert "Index up to date: 2 added" in app.index_result
        assert fake.search("tomatoes sun")[0].path == str(docs / "garden.md")
        assert "2 files" in plain(app.screen.query_one("#index-status"))
        assert fake.watch_callbacks, "the watcher starts after the first index run"
        # the question box works (and answers from the new index)
        view = await ask(pilot, "tomatoes sun?")
        assert view.answer is not None
        assert view.answer.passages[0].passage.path == str(docs / "garden.md")


async def test_question_box_answers_while_indexing_runs(tmp_path, docs):
    fake = FakeAssistant(tmp_path / "data")
    fake.index_gate = threading.Semaphore(2)          # two files (one unreadable), then it waits
    app = create_app(fake, first_run_screen=False)
    async with app.run_test(size=(100, 30)) as pilot:
        await pilot.pause()
        fake.add_root(docs)
        app.action_update_index()
        for _ in range(200):                           # wait for the first progress message
            await pilot.pause()
            if app.index_progress is not None:
                break
        assert app.indexing
        assert "indexing 2/3 files" in plain(app.screen.query_one("#index-status"))
        app.ask("tomatoes?")
        for _ in range(200):
            await pilot.pause()
            if fake.answers and list(app._turns.values())[-1].answer is not None:
                break
        assert list(app._turns.values())[-1].answer is fake.answers[-1]
        assert app.indexing                            # still running
        fake.index_gate.release()
        await settle(pilot)
        assert not app.indexing and app.index_status.files_indexed == 2


@pytest.mark.parametrize("name", ["nope", "notes [2024]", "a[/b]c"])
async def test_add_folder_rejects_a_missing_folder(tmp_path, name):
    """The message names the path as typed, brackets and all (no markup: "[/b]" would
    otherwise be a closing tag and crash the screen)."""
    app = create_app(FakeAssistant(tmp_path / "data"))
    async with app.run_test() as pilot:
        await settle(pilot)
        app.screen.query_one("#folder-input").value = str(tmp_path / name)
        await pilot.press("enter")
        await pilot.pause()
        assert isinstance(app.screen, AddFolderScreen)
        error = plain(app.screen.query_one("#folder-error"))
        assert "is not a folder" in error and name in error


async def test_citation_opens_source_panel_with_highlighted_span(tmp_path, docs):
    fake = FakeAssistant(tmp_path / "data")
    fake.add_root(docs)
    fake.update_index()
    app = create_app(fake, first_run_screen=False)
    async with app.run_test(size=(100, 40)) as pilot:
        await settle(pilot)
        view = await ask(pilot, "tomatoes sun?")
        first = view.query(SegmentLine).first()
        first.focus()
        await pilot.press("enter")
        await settle(pilot)
        screen = app.screen
        assert isinstance(screen, SourceScreen)
        cited = view.answer.passages[first.segment.citation].passage
        assert screen.passage == cited
        body = screen.query_one("#source-body").render()
        text, start, end = fake.surrounding(cited)
        assert str(body) == text
        highlighted = [s for s in body.spans if s.style == HIGHLIGHT]
        assert [(s.start, s.end) for s in highlighted] == [(start, end)]
        path_line = screen.query_one("#source-path").render()
        assert cited.path in str(path_line)
        assert any(getattr(s.style, "link", None) == Path(cited.path).as_uri()
                   for s in path_line.spans)          # OSC 8 hyperlink
        await pilot.press("escape")
        await pilot.pause()
        # the mouse works too: click a source line
        source = view.query(SourceLine).last()
        source.scroll_visible(animate=False)
        await pilot.pause()
        await pilot.click(source)
        await settle(pilot)
        assert isinstance(app.screen, SourceScreen)
        assert app.screen.index == source.citation


async def test_open_in_editor_runs_editor_at_the_line(tmp_path, docs, monkeypatch):
    record = tmp_path / "editor-args.txt"
    editor = tmp_path / "fake-editor.sh"
    editor.write_text(f'#!/bin/sh\necho "$@" > {record}\n')
    editor.chmod(0o755)
    monkeypatch.setenv("EDITOR", str(editor))
    monkeypatch.delenv("VISUAL", raising=False)
    fake = FakeAssistant(tmp_path / "data")
    fake.add_root(docs)
    fake.update_index()
    app = create_app(fake, first_run_screen=False)
    async with app.run_test() as pilot:
        await settle(pilot)
        view = await ask(pilot, "tomatoes sun?")
        answer = view.answer
        app.open_citation(answer, 0)
        await settle(pilot)
        await pilot.press("e")
        for _ in range(50):
            if record.exists():
                break
            await pilot.pause(0.05)
        p = answer.passages[0].passage
        assert record.read_text().split() == [f"+{p.start_line}", p.path]


async def test_escape_cancels_a_running_answer(tmp_path):
    fake = FakeAssistant(tmp_path / "data", segment_delay=30)
    app = create_app(fake, first_run_screen=False)
    async with app.run_test() as pilot:
        await settle(pilot)
        app.ask("slow question")
        await pilot.pause()
        assert app.answering
        await pilot.press("escape")
        await settle(pilot)
        view = list(app._turns.values())[-1]
        assert view.state == "cancelled"
        assert plain(view.query_one(".turn-status")) == "cancelled"
        assert not app.answering
        assert fake.answers == []


async def test_new_question_cancels_the_running_one(tmp_path):
    fake = FakeAssistant(tmp_path / "data", segment_delay=30)
    app = create_app(fake, first_run_screen=False)
    async with app.run_test() as pilot:
        await settle(pilot)
        app.ask("first")
        await pilot.pause()
        fake.segment_delay = 0
        app.ask("second")
        await settle(pilot)
        first, second = list(app._turns.values())
        assert first.state == "cancelled"
        assert second.state == "done"
        assert [a.question for a in fake.answers] == ["second"]


@pytest.mark.parametrize("name", ["broken.gguf", "broken [v2].gguf", "x[/b]y.gguf"])
async def test_model_error_is_a_message_not_a_traceback(tmp_path, name):
    """The status line names the file as it is, brackets and all (shown without markup: the
    folder "x[" holding "b]y.gguf" makes "[/b]", a closing tag)."""
    bad = tmp_path / name
    bad.parent.mkdir(exist_ok=True)
    bad.write_bytes(b"\x00garbage" * 100)
    fake = FakeAssistant(tmp_path / "data", settings=Settings(model_path=str(bad)))
    app = create_app(fake, first_run_screen=False)
    async with app.run_test() as pilot:
        await settle(pilot)
        status = plain(app.screen.query_one("#model-status"))
        assert status.startswith("model failed:") and str(bad) in status
        assert app.last_error is not None and "pick a .gguf file" in app.last_error


async def test_model_name_is_shown_as_the_file_gives_it(tmp_path):
    """A model's name comes from its file (GGUF metadata or file name): brackets in it are
    text, not markup ("[/b]" would be a closing tag and crash the chat screen)."""
    from localrag.assistant import ModelDescription

    fake = FakeAssistant(tmp_path / "data")
    name = "x[/b]y [Q4_K_M]"
    fake.load_model = lambda: ModelDescription(path="m.gguf", name=name, kind="instruct",
                                               critic="instruct")
    app = create_app(fake, first_run_screen=False)
    async with app.run_test() as pilot:
        await settle(pilot)
        assert plain(app.screen.query_one("#model-status")) == f"model: {name} (instruct)"


async def test_unexpected_errors_are_shown_and_logged(tmp_path):
    fake = FakeAssistant(tmp_path / "data")

    def boom(*args, **kwargs):
        raise RuntimeError("kaboom")
    fake.ask = boom  # type: ignore[method-assign]
    app = create_app(fake, first_run_screen=False)
    async with app.run_test() as pilot:
        await settle(pilot)
        app.ask("anything")
        await settle(pilot)
        view = list(app._turns.values())[-1]
        assert view.state == "failed"
        assert "Unexpected error: RuntimeError: kaboom" in app.last_error
        assert "kaboom" in (tmp_path / "data" / "localrag-tui.log").read_text()


async def test_chats_are_saved_and_reopened(tmp_path):
    fake = FakeAssistant(tmp_path / "data")
    app = create_app(fake, first_run_screen=False)
    async with app.run_test(size=(100, 40)) as pilot:
        await settle(pilot)
        await ask(pilot, "tomatoes?")
        await ask(pilot, "and soup?")
        shown_before = [v.shown_segments() for v in app._turns.values()]
        await pilot.press("ctrl+n")
        await pilot.pause()
        assert not app.chat_screen.query(TurnView)
        await pilot.press("f2")
        await pilot.pause()
        assert isinstance(app.screen, ChatsScreen)
        assert [c.turns for c in app.screen.chats] == [2]
        await pilot.press("enter")
        await settle(pilot)
        views = list(app.chat_screen.query(TurnView))
        assert [v.question for v in views] == ["tomatoes?", "and soup?"]
        assert [v.shown_segments() for v in views] == shown_before
        assert plain(views[0].query_one(".decision")) == decision_line(fake.answers[0])


async def test_export_answer_as_markdown(tmp_path):
    fake = FakeAssistant(tmp_path / "data")
    app = create_app(fake, first_run_screen=False)
    async with app.run_test() as pilot:
        await settle(pilot)
        await ask(pilot, "tomatoes?")
        await pilot.press("ctrl+s")
        await pilot.pause()
        assert app.last_export is not None
        assert app.last_export.parent == fake.paths.data_dir / "exports"
        assert app.last_export.read_text() == answer_to_markdown(fake.answers[-1])


def ocr_packages(monkeypatch, *, present: tuple[str, ...] = (), absent: tuple[str, ...] = ()) -> None:
    """importlib.util.find_spec as if these modules were installed / missing, whatever this
    install has (the settings screen checks OCR's packages with it)."""
    import importlib.machinery
    import importlib.util

    real = importlib.util.find_spec

    def find_spec(name, *a, **kw):
        if name in absent:
            return None
        return importlib.machinery.ModuleSpec(name, None) if name in present else real(name, *a, **kw)

    monkeypatch.setattr(importlib.util, "find_spec", find_spec)


async def test_settings_are_saved_and_model_reloads(tmp_path, monkeypatch):
    ocr_packages(monkeypatch, present=("rapidocr_onnxruntime", "pypdfium2"))
    fake = FakeAssistant(tmp_path / "data")
    model = tmp_path / "other.gguf"
    model.write_bytes(b"GGUF" + b"\x00" * 64)
    app = create_app(fake, first_run_screen=False)
    async with app.run_test(size=(80, 24)) as pilot:
        await settle(pilot)
        await pilot.press("f4")
        await pilot.pause()
        screen = app.screen
        assert isinstance(screen, SettingsScreen)
        screen.query_one("#set-k").value = "7"
        screen.query_one("#set-w_sup").value = "2.5"
        screen.query_one("#set-strict").value = True
        screen.query_one("#set-rerank").value = True
        screen.query_one("#set-relevance_rerank").value = False
        screen.query_one("#set-ocr").value = True
        screen.query_one("#set-model_path").value = str(model)
        await pilot.press("ctrl+s")
        await settle(pilot)
        await settle(pilot)
        assert not isinstance(app.screen, SettingsScreen)
        saved = Settings.load(fake.paths.settings_file)
        assert (saved.k, saved.w_sup, saved.strict, saved.model_path) == (7, 2.5, True, str(model))
        assert (saved.rerank, saved.relevance_rerank, saved.ocr) == (True, False, True)
        assert fake.loaded is not None and fake.loaded.path == str(model)


async def refused_setting(tmp_path, field: str, value) -> str:
    """Set one field on the settings screen and save: the screen must stay, nothing be
    written; returns the error shown."""
    fake = FakeAssistant(tmp_path / "data")
    app = create_app(fake, first_run_screen=False)
    async with app.run_test(size=(80, 24)) as pilot:
        await settle(pilot)
        await pilot.press("f4")
        await pilot.pause()
        app.screen.query_one(f"#set-{field}").value = value
        await pilot.press("ctrl+s")
        await pilot.pause()
        assert isinstance(app.screen, SettingsScreen)
        assert not fake.paths.settings_file.exists()
        return plain(app.screen.query_one("#settings-error"))


async def test_settings_screen_refuses_ocr_without_its_packages(tmp_path, monkeypatch):
    ocr_packages(monkeypatch, absent=("rapidocr_onnxruntime",))
    error = await refused_setting(tmp_path, "ocr", True)
    assert "rapidocr-onnxruntime" in error and "pypdfium2" not in error
    assert 'pip install "localrag[ocr]"' in error


async def test_settings_screen_rejects_bad_values(tmp_path):
    assert "out of range" in await refused_setting(tmp_path, "threshold", "3")


async def test_index_screen_shows_roots_errors_and_watcher_events(tmp_path, docs):
    fake = FakeAssistant(tmp_path / "data")
    fake.add_root(docs)
    fake.update_index()
    app = create_app(fake, first_run_screen=False)
    async with app.run_test(size=(80, 24)) as pilot:
        await settle(pilot)
        await pilot.press("f3")
        await pilot.pause()
        screen = app.screen
        assert isinstance(screen, IndexScreen)
        assert "2 files indexed" in plain(screen.query_one("#index-counts"))
        from tui.widgets.index_view import ProblemTree

        errors = screen.query_one(ProblemTree).shown_files("error", "unreadable")
        assert [os.path.basename(p.path) for p in errors] == ["broken.md"]
        assert screen.query_one("#roots-table").row_count == 1
        # a watcher event from the watcher's thread
        on_event = fake.watch_callbacks[0]
        event = WatchEvent(paths=[str(docs / "garden.md")], report=IndexReport(updated=1))
        threading.Thread(target=on_event, args=(event,)).start()
        await pilot.pause(0.2)
        await settle(pilot)
        assert "Re-indexed 1 file(s) after changes to garden.md" in app.watch_lines[-1]
        # remove the folder
        await pilot.press("d")
        await settle(pilot)
        assert app.index_status is not None and app.index_status.roots == []


async def test_progress_is_collapsed_and_index_run_can_be_cancelled(tmp_path, docs):
    for i in range(300):
        (docs / f"note{i}.txt").write_text(f"note {i}\n")
    fake = FakeAssistant(tmp_path / "data")
    app = create_app(fake, first_run_screen=False)
    async with app.run_test() as pilot:
        await settle(pilot)
        fake.add_root(docs)
        app.action_update_index()
        await settle(pilot)
        assert app.index_progress.phase == "done"
        assert fake.progress_calls == 302
        # collapsed: far fewer UI updates than progress calls
        assert app.progress_updates_shown < fake.progress_calls / 2
        assert app.index_status.files_indexed == 302
        # pause blocks the run inside the progress callback; cancel ends it
        app.start_indexing()
        app.action_pause_index()
        assert app.index_paused
        await pilot.pause(0.1)
        app.action_cancel_index()
        await settle(pilot)
        assert not app.indexing
        assert "cancelled" in app.index_result.lower()


async def test_theme_toggles_and_is_saved(tmp_path):
    fake = FakeAssistant(tmp_path / "data")
    app = create_app(fake, first_run_screen=False)
    async with app.run_test() as pilot:
        await settle(pilot)
        assert app.theme == "textual-dark"
        await pilot.press("ctrl+t")
        assert app.theme == "textual-light"
        assert Settings.load(fake.paths.settings_file).theme == "textual-light"


async def test_command_palette_lists_the_app_commands(tmp_path):
    fake = FakeAssistant(tmp_path / "data")
    app = create_app(fake, first_run_screen=False)
    async with app.run_test() as pilot:
        await settle(pilot)
        titles = {c.title for c in app.get_system_commands(app.screen)}
        assert {"New chat", "Saved chats", "Index", "Settings", "Add folder", "Export answer",
                "Cancel answer", "Toggle dark/light"} <= titles
        keys = {k for k, active in app.active_bindings.items() if active.binding.show}
        assert {"ctrl+n", "ctrl+s", "f2", "f3", "f4", "ctrl+t"} <= keys
        assert "escape" not in keys      # "esc Cancel" shows only while an answer runs


async def test_enter_on_a_quote_opens_the_source_at_the_quotes_own_line(tmp_path, monkeypatch):
    """Issue 17: a quote from the middle of a long passage opens the panel at the quote
    (highlighted, its line in the header) and `e` opens the editor at that line, not at
    the passage's first line."""
    import dataclasses

    from indexer.records import Passage
    from localrag.answering.label.answer import Scores, Segment

    folder = tmp_path / "docs"
    folder.mkdir()
    lines = [f"Line {i} says nothing much about the garden." for i in range(1, 60)]
    lines[41] = "Tomatoes need six hours of sun every day."          # line 42
    doc = folder / "long.md"
    doc.write_text("\n".join(lines) + "\n", encoding="utf-8")
    text = doc.read_text()
    start = text.index("Line 10 ")
    end = text.index("Line 55 ")
    passage = Passage(chunk_id=7, path=str(doc), title="long.md", text=text[start:end],
                      start_line=10, end_line=54, page=None, char_start=start, char_end=end,
                      score=0.9)
    record = tmp_path / "editor-args.txt"
    editor = tmp_path / "fake-editor.sh"
    editor.write_text(f'#!/bin/sh\necho "$@" > {record}\n')
    editor.chmod(0o755)
    monkeypatch.setenv("EDITOR", str(editor))
    monkeypatch.delenv("VISUAL", raising=False)
    fake = FakeAssistant(tmp_path / "data")
    original = fake.make_answer

    def make(question, passages):
        answer = original(question, passages)
        answer.passages = [dataclasses.replace(answer.passages[0], passage=passage)]
        answer.segments = [Segment(text="Tomatoes need six hours of sun every day.",
                                   label="fully", scores=Scores(total=1.0), citation=0,
                                   passage=passage, origin="quote", line=42,
                                   label_source="quote")]
        return answer

    fake.make_answer = make
    app = create_app(fake, first_run_screen=False)
    async with app.run_test(size=(100, 30)) as pilot:
        await settle(pilot)
        view = await ask(pilot, "tomatoes sun?")
        quote = view.query(SegmentLine).first()
        quote.focus()
        await pilot.press("enter")
        await settle(pilot)
        screen = app.screen
        assert isinstance(screen, SourceScreen)
        assert "line 42" in str(screen.query_one("#source-path").render())
        body = screen.query_one("#source-body").render()
        spans = [(s.start, s.end) for s in body.spans if s.style == HIGHLIGHT]
        q_at = text.index("Tomatoes need")
        assert spans == [(q_at, q_at + len("Tomatoes need six hours of sun every day."))]
        scroll = screen.query_one("#source-scroll")
        assert scroll.scroll_y > 0            # scrolled down to the quote, 32 lines in
        await pilot.press("e")
        for _ in range(100):
            if record.exists() and record.read_text().strip():
                break
            await pilot.pause(0.05)
        assert record.read_text().split() == ["+42", str(doc)]
