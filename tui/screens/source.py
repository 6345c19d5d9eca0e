"""A cited passage inside its surrounding text, with the cited span highlighted."""

from __future__ import annotations

import os
import shlex
import sys
from typing import TYPE_CHECKING

from rich.text import Text
from textual import work
from textual.app import ComposeResult
from textual.binding import Binding
from textual.containers import Vertical, VerticalScroll
from textual.content import Content
from textual.screen import ModalScreen
from textual.widgets import Footer, Label, Static

from indexer.records import Passage
from localrag.answering.label.answer import Answer
from localrag.answering.label.render import relevance_words
from tui.widgets.answer_view import display_path, file_link

if TYPE_CHECKING:
    from tui.app import LocalragApp


def where(passage: Passage, line: int | None = None) -> str:
    if passage.page is not None:
        return f"page {passage.page}"
    if line is not None:
        return f"line {line}"
    if passage.start_line is not None:
        end = f"-{passage.end_line}" if passage.end_line and passage.end_line != passage.start_line else ""
        return f"line {passage.start_line}{end}"
    return ""


def open_command(passage: Passage, *, environ: dict[str, str] | None = None) -> tuple[list[str], bool]:
    """The command that opens `passage` at its line or page, and whether it runs in the
    terminal (the app suspends for it) or outside (system opener). A passage cited by a
    slide, sheet range, message or chapter (no line, no page: an office file, an e-book)
    opens in the system's program for the file; its title names the unit."""
    env = os.environ if environ is None else environ
    editor = env.get("VISUAL") or env.get("EDITOR")
    if passage.page is None and passage.start_line is not None and editor:
        line = passage.start_line or 1
        return [*shlex.split(editor), f"+{line}", passage.path], True
    if sys.platform == "darwin":
        return ["open", passage.path], False
    target = file_link(passage.path, page=passage.page) if passage.page else passage.path
    return ["xdg-open", target], False


HIGHLIGHT = "on $accent 25%"
"""The cited span: a tint of the theme's accent, readable in dark and light themes and
over a long passage (reverse video turned a 50-line passage into a black block)."""


def highlighted(text: str, start: int, end: int) -> Content:
    body = Content(text)
    if 0 <= start < end <= len(text):
        body = body.stylize(HIGHLIGHT, start, end)
    return body


def quote_span(text: str, start: int, end: int, *, passage_line: int | None,
               line: int | None, quote: str) -> tuple[int, int] | None:
    """Where a quote lies in the surrounding `text` whose passage spans start..end: found
    from the quote's own file line on (the passage starts on `passage_line`), its words
    matched with any whitespace between them. None when it cannot be found."""
    import re

    words = [w for w in re.sub(r"^```\S*|```$", "", quote.strip()).split() if w]
    if not words:
        return None
    pos = start
    if line is not None and passage_line is not None and line >= passage_line:
        for _ in range(line - passage_line):
            nxt = text.find("\n", pos, end)
            if nxt < 0:
                break
            pos = nxt + 1
    pattern = re.compile(r"\s+".join(re.escape(w) for w in words[:40]))
    m = pattern.search(text, pos) or pattern.search(text, start)
    if m is None:
        return None
    if len(words) > 40:   # a long unit: highlight through its last word
        tail = text.find(words[-1], m.end())
        return (m.start(), tail + len(words[-1])) if tail >= 0 else (m.start(), m.end())
    return m.start(), m.end()


def rows_before(text: str, offset: int, width: int) -> int:
    """How many screen rows the text before `offset` takes when wrapped to `width`."""
    if offset <= 0 or width <= 0:
        return 0
    before = text[:offset]
    line_start = before.rfind("\n") + 1
    rows = len(Content(before[:line_start]).wrap(width)) - 1 if line_start else 0
    return rows + max(len(Content(before[line_start:]).wrap(width)) - 1, 0)


class SourceScreen(ModalScreen[None]):
    """Shows citation `index` of `answer`; `e` opens the file at the cited place."""

    BINDINGS = [
        Binding("escape,q", "close", "Close"),
        Binding("e", "open_file", "Open in editor"),
    ]

    def __init__(self, answer: Answer, index: int, *, line: int | None = None,
                 quote: str = "") -> None:
        super().__init__()
        self.answer = answer
        self.index = index
        self.line = line        # a quote's own file line (None: the passage's first)
        self.quote = quote
        self.shown = False      # the text is in and scrolled to the span (tests wait on it)
        self._scrolled_at_width = -1
        self._scroll_tries = 0
        self.judgement = answer.passages[index]
        self.passage = self.judgement.passage
        self.span: tuple[int, int] | None = None
        self.text = ""

    def compose(self) -> ComposeResult:
        p = self.passage
        with Vertical(id="source-dialog", classes="dialog"):
            yield Label(f"[{self.index + 1}] {p.title or os.path.basename(p.path)}",
                        classes="dialog-title", markup=False)
            link = file_link(p.path, page=p.page)
            path_line = Text()
            path_line.append(display_path(p.path), style=f"link {link}" if link else "")
            loc = where(p, self.line)
            if loc:
                path_line.append(f"  {loc}", style="bold")
            path_line.append(f"  {relevance_words(self.judgement)}", style="dim")
            yield Static(path_line, id="source-path")
            with VerticalScroll(id="source-scroll"):
                yield Static(Text("loading the surrounding text…", style="dim"), id="source-body")
        yield Footer(compact=True)

    def on_mount(self) -> None:
        self.query_one("#source-scroll").focus()
        self._load()

    @work(thread=True, exclusive=True, exit_on_error=False)
    def _load(self) -> None:
        app: LocalragApp = self.app  # type: ignore[assignment]
        try:
            text, start, end = app.assistant.surrounding(self.passage)
        except Exception as exc:           # the passage alone is still worth showing
            app.log_unexpected(exc)
            text, start, end = self.passage.text, 0, len(self.passage.text)
        self.app.call_from_thread(self._show, text, start, end)

    def _show(self, text: str, start: int, end: int) -> None:
        self.shown = False
        self._scrolled_at_width, self._scroll_tries = -1, 0
        if self.quote:   # a quote: its own words are the span, not the whole passage
            found = quote_span(text, start, end, passage_line=self.passage.start_line,
                               line=self.line, quote=self.quote)
            if found is not None:
                start, end = found
        self.span = (start, end)
        self.text = text
        self.query_one("#source-body", Static).update(highlighted(text, start, end))
        self.call_after_refresh(self._scroll_to_span)

    def _scroll_to_span(self) -> None:
        """Bring the highlighted span into view, two rows of context above it (rows
        counted as wrapped at the panel's width)."""
        if self.span is None:
            return
        body = self.query_one("#source-body", Static)
        width = body.content_region.width
        row = rows_before(self.text, self.span[0], width)
        self.query_one("#source-scroll", VerticalScroll).scroll_to(y=max(0, row - 2),
                                                                    animate=False)
        # the text's width can still change once its scrollbar appears (the rows before
        # the span then wrap differently): scroll again until the width holds
        if width == self._scrolled_at_width or self._scroll_tries >= 4:
            self.shown = True
            return
        self._scrolled_at_width = width
        self._scroll_tries += 1
        self.call_after_refresh(self._scroll_to_span)

    def action_close(self) -> None:
        self.dismiss(None)

    def action_open_file(self) -> None:
        app: LocalragApp = self.app  # type: ignore[assignment]
        passage = self.passage
        if self.line is not None and passage.page is None:
            import dataclasses

            passage = dataclasses.replace(passage, start_line=self.line)   # the quote's line
        app.open_passage(passage)
