"""Pilot tests (fake Assistant) of answers rendered as Markdown units: code blocks keep
their lines and indentation, are highlighted and copy; list items and sentences carry one
label each; citations click in both themes; long answers and source lists scroll while
the question box stays on screen."""

from __future__ import annotations

import sys
import time
from pathlib import Path

import pytest

sys.path.insert(0, str(Path(__file__).parent))

from indexer.records import Passage  # noqa: E402
from localrag.answering.label.answer import PassageJudgement, Scores, Segment  # noqa: E402
from localrag.answering.label.render import LABEL_SYMBOL  # noqa: E402
from localrag.answering.label.units import split_units  # noqa: E402
from screen_text import screen_lines, screen_text  # noqa: E402
from tui.app import create_app  # noqa: E402
from tui.screens.source import SourceScreen  # noqa: E402
from tui.widgets.answer_view import CodeBlockLine, SegmentLine, SourceLine  # noqa: E402
from tui_fakes import (MARKDOWN_ANSWER, FakeAssistant, canned_answer,  # noqa: E402
                       canned_markdown_answer)

pytestmark = pytest.mark.asyncio

PY_ANSWER = ("Check it with a helper:\n\n```python\ndef is_dataclass_instance(obj):\n"
             "    return is_dataclass(obj) and not isinstance(obj, type)\n```")


async def settle(pilot) -> None:
    from textual.worker import WorkerCancelled

    for _ in range(20):
        try:
            await pilot.app.workers.wait_for_complete()
            break
        except WorkerCancelled:
            continue
    await pilot.pause()


def answer_with(text: str, *, n_sources: int = 1):
    """A fake engine answer whose units are `text`'s, citing `n_sources` passages in turn."""
    def make(question, passages):
        answer = canned_answer(question, passages)
        extra = [Passage(chunk_id=100 + i, path=f"/docs/file{i}.md", title=f"file{i}.md",
                         text=f"Passage {i}.", start_line=i + 1, end_line=i + 1, page=None,
                         char_start=0, char_end=10, score=0.5) for i in range(n_sources)]
        if n_sources > 1:
            answer.passages = [PassageJudgement(p, relevance=0.8, relevant=True) for p in extra]
        n = n_sources if n_sources > 1 else 1
        answer.segments = [
            Segment(text=u.text, kind=u.kind, starts_block=u.starts_block, label="fully",
                    scores=Scores(total=1.0), citation=i % n,
                    passage=answer.passages[i % n].passage)
            for i, u in enumerate(split_units(text))]
        return answer
    return make


async def asked(pilot, question: str = "how?"):
    await settle(pilot)
    pilot.app.ask(question)
    await settle(pilot)
    pilot.app.clear_notifications()
    await pilot.pause()
    return list(pilot.app._turns.values())[-1]


async def test_code_block_keeps_lines_and_indentation_and_is_highlighted(tmp_path):
    fake = FakeAssistant(tmp_path / "data")
    fake.make_answer = answer_with(PY_ANSWER)
    app = create_app(fake, first_run_screen=False)
    async with app.run_test(size=(100, 30)) as pilot:
        view = await asked(pilot)
        blocks = list(view.query(CodeBlockLine))
        assert len(blocks) == 1 and len(view.query(SegmentLine)) == 2   # one label for the code
        lines = screen_lines(app)
        head = next(i for i, line in enumerate(lines) if "def is_dataclass_instance(obj):" in line)
        first, second = lines[head], lines[head + 1]
        col = first.index("def ")
        assert second[col:] == "    return is_dataclass(obj) and not isinstance(obj, type)"
        assert "✔ code · python [1]  fully supported" in lines[head - 1]
        assert lines[head - 1].endswith("fully supported  copy")
        # highlighted: the keyword "def" is drawn in another colour than the parenthesis
        strip = app.screen._compositor.render_strips()[head]
        colors = {seg.text.strip(): seg.style.color for seg in strip if seg.text.strip()}
        assert colors.get("def") is not None and colors["def"] != colors.get("(")


async def test_code_block_copies_with_c_and_with_a_click(tmp_path):
    fake = FakeAssistant(tmp_path / "data")
    fake.make_answer = answer_with(PY_ANSWER)
    app = create_app(fake, first_run_screen=False)
    async with app.run_test(size=(100, 30)) as pilot:
        view = await asked(pilot)
        block = view.query_one(CodeBlockLine)
        code = split_units(PY_ANSWER)[1].plain
        block.focus()
        await pilot.press("c")
        assert app.clipboard == code
        app.copy_to_clipboard("")
        await pilot.click(block.query_one(".copy-link"))
        await pilot.pause()
        assert app.clipboard == code
        assert not isinstance(app.screen, SourceScreen)     # copying opens nothing
        # a wide line scrolls sideways inside the block, it is not wrapped or cut
        wide = answer_with("Wide:\n\n```python\nx = 1\nprint('" + "a" * 120 + "')\n```")
        fake.make_answer = wide
        view = await asked(pilot)
        block = view.query_one(CodeBlockLine)
        scroll = block.query_one(".code-scroll")
        assert scroll.max_scroll_x > 0 and scroll.scroll_x == 0
        row = next(line for line in screen_lines(app) if "print('aaa" in line)
        assert row.rstrip().endswith("a")                  # cut at the edge, not wrapped
        block.focus()
        await pilot.press("right")
        await pilot.pause()
        assert scroll.scroll_x == 8
        await pilot.press("c")
        assert app.clipboard == "x = 1\nprint('" + "a" * 120 + "')"
        # a sentence copies as written
        first = view.query(SegmentLine).first()
        first.focus()
        await pilot.press("c")
        assert app.clipboard == "Wide:"


async def test_units_on_screen_are_the_json_segments(tmp_path):
    fake = FakeAssistant(tmp_path / "data")
    fake.make_answer = canned_markdown_answer
    app = create_app(fake, first_run_screen=False)
    async with app.run_test(size=(80, 40)) as pilot:
        view = await asked(pilot)
        answer = fake.answers[-1]
        json_segments = answer.to_json()["segments"]
        units = list(view.query(SegmentLine))
        assert [(u.segment.kind, u.segment.text) for u in units] == [
            (s["kind"], s["text"]) for s in json_segments]
        assert len(units) == len(split_units(MARKDOWN_ANSWER))
        text = screen_text(app)
        # one symbol per unit on screen: the list items each get one, the code block one
        # ("?", the "not checked" symbol, also occurs in questions: only the answer's labels count)
        shown = {LABEL_SYMBOL[u.segment.label] for u in units}
        assert sum(text.count(sym) for sym in shown) == len(units)
        assert "✘ 1. Save the work with git stash. [1]  not supported" in text
        assert "**" not in text and "`" not in text           # inline Markdown is rendered
        assert "```" not in text


@pytest.mark.parametrize("theme", ["textual-dark", "textual-light"])
async def test_citations_click_in_both_themes(tmp_path, theme):
    fake = FakeAssistant(tmp_path / "data")
    fake.make_answer = canned_markdown_answer
    app = create_app(fake, first_run_screen=False)
    async with app.run_test(size=(80, 30)) as pilot:
        app.theme = theme
        view = await asked(pilot)
        for widget in (view.query(SegmentLine)[0], view.query(CodeBlockLine)[0],
                       view.query(SourceLine)[0]):
            target = widget.query_one(".unit-line") if isinstance(widget, SegmentLine) else widget
            line = target.render_line(0).text
            x = line.index("[1]") + 1                       # click the citation number
            await pilot.click(target, offset=(x, 0))
            await settle(pilot)
            assert isinstance(app.screen, SourceScreen), (theme, widget)
            assert app.screen.index == 0
            await pilot.press("escape")
            await pilot.pause()


async def test_long_answer_and_long_source_list_scroll_and_keep_the_input(tmp_path):
    long = "\n\n".join(f"Paragraph {i} has a sentence that says something." for i in range(40))
    fake = FakeAssistant(tmp_path / "data")
    fake.make_answer = answer_with(long + "\n\n```sh\n" + "\n".join(
        f"echo {i}" for i in range(50)) + "\n```", n_sources=12)
    app = create_app(fake, first_run_screen=False)
    async with app.run_test(size=(80, 24)) as pilot:
        view = await asked(pilot)
        log = app.screen.query_one("#chat-log")
        question = app.screen.query_one("#question")
        assert log.max_scroll_y > 0
        # the question box is on screen, below the log, whole
        assert question.region.bottom <= 24 - 1 and question.region.height == 3
        assert log.region.bottom <= question.region.y
        # the end of the answer (its last source) was scrolled into view
        sources = list(view.query(SourceLine))
        assert len(sources) == 12
        assert "[12] file11.md" in screen_text(app)
        # the long code block scrolls inside itself, not the whole screen
        block = view.query_one(CodeBlockLine)
        scroll = block.query_one(".code-scroll")
        assert scroll.region.height <= 30 and scroll.max_scroll_y > 0
        # Tab to the first unit brings it back into view; the question box stays
        view.query(SegmentLine).first().focus()
        await pilot.pause()
        await pilot.wait_for_scheduled_animations()      # focus scrolls smoothly
        assert "Paragraph 0 has a sentence" in screen_text(app)
        assert question.region.height == 3 and question.region.bottom <= 23


async def test_footer_fits_80_columns_and_shows_cancel_only_while_answering(tmp_path):
    import threading

    fake = FakeAssistant(tmp_path / "data")
    fake.make_answer = canned_markdown_answer
    fake.gate = threading.Semaphore(0)
    app = create_app(fake, first_run_screen=False)
    async with app.run_test(size=(80, 24)) as pilot:
        await settle(pilot)
        footer = lambda: screen_lines(app)[-1]          # noqa: E731
        assert "Cancel" not in footer()
        app.ask("how?")
        deadline = time.monotonic() + 60      # the worker starts when the loop gets to it:
        while "esc Cancel" not in footer():   # poll (a loaded machine takes longer than two
            assert time.monotonic() < deadline, footer()   # pauses), the answer is held by the gate
            await pilot.pause(0.05)
        for _ in range(len(split_units(MARKDOWN_ANSWER))):
            fake.gate.release()
        await settle(pilot)
        assert "Cancel" not in footer()
        view = list(app._turns.values())[-1]
        view.query_one(CodeBlockLine).focus()
        await pilot.pause()
        line = footer()
        assert "c Copy" in line and "f4 Settings" in line and "^p palette" in line


async def test_a_reopened_long_chat_shows_its_end(tmp_path):
    long = "\n\n".join(f"Paragraph {i} has a sentence that says something." for i in range(30))
    fake = FakeAssistant(tmp_path / "data")
    fake.make_answer = answer_with(long, n_sources=6)
    app = create_app(fake, first_run_screen=False)
    async with app.run_test(size=(80, 24)) as pilot:
        await asked(pilot, "first?")
        await asked(pilot, "second?")
        chat = fake.chats()[0]
        app.action_new_chat()
        await settle(pilot)
        app.open_chat(chat.id)
        await settle(pilot)
        await pilot.wait_for_scheduled_animations()
        await pilot.pause()
        text = screen_text(app)
        assert "[6] file5.md" in text and "labels by selfrag" in text, text
