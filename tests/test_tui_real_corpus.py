"""The terminal app over a REAL small corpus: five of Git's documentation pages
(tests/data/gitdocs, GPL-2.0), indexed by the real indexer (SQLite + hnswlib +
all-MiniLM-L6-v2), answered by the real default model (SmolLM2-135M-Instruct through
llama.cpp).

* A live Pilot test asks the real model a question it answers with code blocks and checks
  what the screen shows: each code block as one unit, its lines and indentation as
  written, copyable; the source panel with the real text around the real passage; the
  export with the same units.
* Snapshot tests render answers the same model gave over the same corpus, recorded by
  scripts/record_real_answers.py (tests/data/real_answers.json): real content, yet the
  SVGs do not depend on how a CPU rounds during greedy decoding. Their passages are
  looked up in the live index built here, so the source panel shows what the index holds.
"""

from __future__ import annotations

import json
import os
import shutil
import sys
from pathlib import Path

import pytest

sys.path.insert(0, str(Path(__file__).parent))

from localrag.answering.label.answer import Answer, answer_from_json  # noqa: E402
from localrag.assistant import Assistant  # noqa: E402
from localrag.answering.label.render import segment_symbol, answer_to_markdown  # noqa: E402
from localrag.answering.label.units import code_body  # noqa: E402
from screen_text import screen_lines, screen_text, still  # noqa: E402
from tui.app import LocalragApp, create_app  # noqa: E402
from tui.screens.source import HIGHLIGHT, SourceScreen  # noqa: E402
from tui.widgets.answer_view import CodeBlockLine, SegmentLine  # noqa: E402

DATA = Path(__file__).parent / "data"
RECORDED = json.loads((DATA / "real_answers.json").read_text(encoding="utf-8"))
CODE_QUESTION = ("How do I create a new git repository for an existing project? "
                 "Show the commands.")
REAL_SETTINGS = {"n_threads": 1, "k": 3, "max_tokens": 160, "watch": False}
"""The settings scripts/record_real_answers.py records with."""


@pytest.fixture(scope="module")
def gitdocs(tmp_path_factory, embedder):
    """A home folder holding the corpus (gitdocs/) and an indexed data directory (data/);
    $HOME points at it while the module runs, so paths show as ~/gitdocs/..."""
    home = tmp_path_factory.mktemp("home")
    corpus = home / "gitdocs"
    shutil.copytree(DATA / "gitdocs", corpus)
    with Assistant.open(home / "data", overrides=REAL_SETTINGS, embedder=embedder) as a:
        a.add_root(corpus)
        report = a.update_index()
        assert report.added == 5 and report.errors == 0
    with pytest.MonkeyPatch.context() as mp:
        mp.setenv("HOME", str(home))
        yield home


def open_assistant(home: Path, embedder) -> Assistant:
    return Assistant.open(home / "data", overrides=REAL_SETTINGS, embedder=embedder)


def recorded_answer(question: str, home: Path, assistant: Assistant) -> Answer:
    """The recorded answer with its passages pointed at this index's chunks (same file,
    same offsets, same text: else the recording is stale)."""
    data = json.loads(json.dumps(RECORDED[question]))
    conn = assistant.index.store.conn
    for source in data["sources"]:
        source["path"] = str(home / "gitdocs" / source["path"])
        row = conn.execute(
            "SELECT c.id, c.text FROM chunks c JOIN files f ON f.id = c.file_id "
            "WHERE f.path = ? AND c.char_start = ? AND c.char_end = ?",
            (source["path"], source["char_start"], source["char_end"])).fetchone()
        assert row is not None and row[1] == source["text"], (
            f"{source['path']}: the recorded passage is not in the index any more; re-record "
            "with `python scripts/record_real_answers.py`")
        source["chunk_id"] = row[0]
    return answer_from_json(data)


async def settle(pilot) -> None:
    from textual.worker import WorkerCancelled

    for _ in range(40):
        try:
            await pilot.app.workers.wait_for_complete()
            break
        except WorkerCancelled:
            continue
    await pilot.pause()


@pytest.fixture
def recorded_app(gitdocs, embedder, tmp_path):
    """app(question) -> the app over a copy of the real index (its own settings and
    chats), the recorded answer saved as a chat (`show_recorded` reopens it: the
    saved-chat path of the app)."""
    opened: list[Assistant] = []

    def make(question: str = CODE_QUESTION) -> LocalragApp:
        data = tmp_path / "data"
        shutil.copytree(gitdocs / "data", data)
        assistant = Assistant.open(data, overrides=REAL_SETTINGS, embedder=embedder)
        opened.append(assistant)
        answer = recorded_answer(question, gitdocs, assistant)
        chats = assistant.chats_store
        chat_id = chats.new_chat()
        chats.add_turn(chat_id, question, answer.text, answer.to_json())
        app = create_app(assistant, load_model=False, first_run_screen=False)
        app.sub_title = "~/data"
        app.recorded_chat = chat_id          # type: ignore[attr-defined]
        return app

    yield make
    for assistant in opened:
        assistant.close()


def file_words(path: str) -> str:
    """The file's own text as the index reads it (indexer.parsers: markup cleaned line by
    line, every line in its place)."""
    from indexer.parsers import parse_bytes

    return parse_bytes(Path(path).read_bytes(), ext=Path(path).suffix, name=Path(path).name).text


async def show_recorded(pilot) -> None:
    await settle(pilot)
    pilot.app.open_chat(pilot.app.recorded_chat)
    await settle(pilot)
    await still(pilot, "#question")


# --- the live test: the real model answers ----------------------------------------------------

@pytest.mark.slow
@pytest.mark.asyncio
async def test_real_model_answer_with_code_blocks_on_screen(gitdocs, embedder, tmp_path):
    assistant = open_assistant(gitdocs, embedder)
    returned: list[Answer] = []
    real_ask = assistant.ask

    def recording_ask(question, **kwargs):
        returned.append(real_ask(question, **kwargs))
        return returned[-1]
    assistant.ask = recording_ask  # type: ignore[method-assign]
    app = create_app(assistant, first_run_screen=False)
    try:
        async with app.run_test(size=(100, 60)) as pilot:
            await settle(pilot)
            assert app.model_description is not None, app.model_error
            await pilot.click("#question")
            app.screen.query_one("#question").value = CODE_QUESTION
            await pilot.press("enter")
            await settle(pilot)
            assert len(returned) == 1, app.last_error
            answer = returned[0]
            view = list(app._turns.values())[-1]
            codes = [s for s in answer.segments if s.kind == "code"]
            # the answer quotes git-init.txt's EXAMPLES: the sentence, then its whole
            # listing as one code unit, cited at the listing's first line
            quoted = [s for s in codes if s.origin == "quote"]
            assert quoted, [(s.kind, s.origin, s.text) for s in answer.segments]
            block = quoted[0]
            assert block.label == "fully" and block.passage.path.endswith("git-init.txt")
            assert code_body(block.text).split("\n")[:2] == ["$ cd /path/to/my/codebase",
                                                             "$ git init"]
            file_lines = Path(block.passage.path).read_text(encoding="utf-8").split("\n")
            assert file_lines[block.line - 1].startswith("$ cd /path/to/my/codebase")
            intro = answer.segments[answer.segments.index(block) - 1]
            assert intro.origin == "quote" and intro.text.endswith("code base:")
            # one widget, one symbol and one label per unit; code blocks are whole
            units = list(view.query(SegmentLine))
            assert [(u.segment.kind, u.segment.text) for u in units] == [
                (s.kind, s.text) for s in answer.segments]
            blocks = list(view.query(CodeBlockLine))
            assert [b.segment for b in blocks] == codes
            text = screen_text(app)
            # one symbol per unit ("?", "not checked", also occurs in the question)
            shown = {segment_symbol(u.segment) for u in units} - {"?"}
            assert sum(text.count(sym) for sym in shown) == len(
                [u for u in units if segment_symbol(u.segment) != "?"])
            for seg in answer.segments:                     # never a markup fragment
                assert any(c.isalpha() for c in seg.text), seg.text
            lines = screen_lines(app)
            for block in blocks:
                code_lines = code_body(block.segment.text).split("\n")
                at = next(i for i, line in enumerate(lines) if line.strip() == code_lines[0].strip())
                col = lines[at].index(code_lines[0].lstrip()) - (len(code_lines[0]) - len(code_lines[0].lstrip()))
                for k, code_line in enumerate(code_lines):   # lines and indentation as written
                    assert lines[at + k][col:].rstrip() == code_line.rstrip()
                assert segment_symbol(block.segment) in lines[at - 1]   # ✔, or › for context
                block.focus()
                await pilot.press("c")
                assert app.clipboard == code_body(block.segment.text)

            # the source of the first cited unit: the real text around the real passage
            cited = next(u for u in units if u.segment.citation is not None)
            cited.focus()
            await pilot.press("enter")
            await settle(pilot)
            screen = app.screen
            assert isinstance(screen, SourceScreen)
            passage = answer.passages[cited.segment.citation].passage
            file_text = file_words(passage.path)
            body = screen.query_one("#source-body").render()
            shown = str(body)
            assert passage.text in shown and len(shown) > len(passage.text)
            assert shown in file_text                        # the file's own words, around it
            start = shown.index(passage.text)
            if cited.segment.line is not None:      # a quote: its own words, at its line
                from tui.screens.source import quote_span

                want = quote_span(shown, start, start + len(passage.text),
                                  passage_line=passage.start_line, line=cited.segment.line,
                                  quote=cited.segment.text)
                assert want is not None and start <= want[0] < want[1] <= start + len(passage.text)
            else:
                want = (start, start + len(passage.text))
            assert [(s.start, s.end) for s in body.spans if s.style == HIGHLIGHT] == [want]
            assert "~/gitdocs/" in str(screen.query_one("#source-path").render())
            await pilot.press("escape")
            await pilot.pause()

            # the export has the same units: each code block fenced, once
            await pilot.press("ctrl+s")
            await pilot.pause()
            exported = app.last_export.read_text(encoding="utf-8")
            assert exported == answer_to_markdown(answer)
            for seg in codes:
                assert seg.text in exported
    finally:
        assistant.close()


# --- snapshots of recorded real answers ---------------------------------------------------------

def test_recorded_real_answer_is_current(gitdocs, embedder):
    """The recording matches this corpus and chunker, and has prose and a whole code
    block quoted from the file, and the model's own prose."""
    with open_assistant(gitdocs, embedder) as assistant:
        answer = recorded_answer(CODE_QUESTION, gitdocs, assistant)
    kinds = [s.kind for s in answer.segments]
    assert "sentence" in kinds and "code" in kinds
    code = next(s for s in answer.segments if s.kind == "code")
    assert code.origin == "quote" and "$ git init" in code_body(code.text).split("\n")
    assert any(s.origin == "model" for s in answer.segments)
    assert answer.model.lower().startswith("smollm2")


def test_real_answer_with_code_80x24(snap_compare, recorded_app):
    assert snap_compare(recorded_app(), run_before=show_recorded,
                        terminal_size=(80, 24))


def test_real_answer_with_code_200x60(snap_compare, recorded_app):
    assert snap_compare(recorded_app(), run_before=show_recorded,
                        terminal_size=(200, 60))


def test_real_answer_top_in_light_theme_80x24(snap_compare, recorded_app):
    async def top_light(pilot):
        await show_recorded(pilot)
        await pilot.press("ctrl+t")
        view = list(pilot.app._turns.values())[-1]
        await still(pilot, view.query(SegmentLine).first())
    assert snap_compare(recorded_app(), run_before=top_light,
                        terminal_size=(80, 24))


@pytest.mark.parametrize("size", [(80, 24), (200, 60)])
def test_real_source_panel(snap_compare, recorded_app, size):
    async def source(pilot):
        await show_recorded(pilot)
        view = list(pilot.app._turns.values())[-1]
        block = next(line for line in view.query(SegmentLine) if line.segment.citation is not None)
        block.focus()
        await pilot.press("enter")
        await settle(pilot)
        screen = pilot.app.screen
        assert isinstance(screen, SourceScreen)
        for _ in range(200):                 # the text is in and scrolled to the quote
            if screen.shown:
                break
            await pilot.pause(0.05)
        assert screen.shown
        await pilot.pause()
        passage = screen.passage
        text = file_words(passage.path)
        shown = str(screen.query_one("#source-body").render())
        assert passage.text in shown and shown in text and len(shown) > len(passage.text)
        await still(pilot, "#source-scroll")
    assert snap_compare(recorded_app(), run_before=source, terminal_size=size)
