"""One question and its answer: retrieval line, labelled units, sources.

The answer's units (localrag.answering.label.units) arrive one by one while the engine works
(`add_segment`); when the Answer is complete the view is rebuilt from it (`show_answer`),
so what stays on screen is exactly what the engine returned. Each unit is one widget with
one symbol, citation and label: a sentence (inline Markdown rendered), a list item, or a
whole code block (highlighted, lines and indentation kept, `c` or a click on "copy"
copies it). Units and sources can be focused (Tab) and opened with Enter or a click.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

import re

from rich.console import Console, ConsoleOptions, RenderableType, RenderResult
from rich.measure import Measurement
from rich.table import Table
from rich.text import Text
from textual.binding import Binding
from textual.containers import Horizontal, ScrollableContainer, Vertical
from textual.highlight import highlight
from textual.widget import Widget
from textual.widgets import Static

from localrag.answering.label.answer import LABEL_SOURCE_TEXT, Answer, RetrievalDecision, Segment
from localrag.answering.label.render import (LABEL_SYMBOL, decision_line, decision_preview, segment_symbol,
                                             relevance_words, segment_body, segment_label)
from localrag.answering.label.units import code_body, code_language
from tui.messages import CitationSelected
from tui.widgets.inline_md import inline_markdown

if TYPE_CHECKING:
    from textual.events import Click

LABEL_SHORT: dict[str, str] = {
    "fully": "fully supported",
    "partially": "partially supported",
    "none": "not supported",
    "unchecked": "not checked",
    "no_retrieval": "own knowledge",
}
"""Short label words shown after each sentence (the symbol and colour carry the rest)."""

CITATION_STYLE = "bold underline"
"""A citation number: bold and underlined, readable in both themes (a click on its
unit opens the source)."""

LABEL_STYLE: dict[str, str] = {
    "fully": "bold green",
    "partially": "bold yellow",
    "none": "bold red",
    "unchecked": "bold magenta",
    "no_retrieval": "bold blue",
}


def display_path(path: str) -> str:
    """`path` as shown: under the home folder as `~/...` (shorter; the link keeps the
    full path)."""
    import os

    home = os.path.expanduser("~")
    if home not in ("", "/") and (path == home or path.startswith(home.rstrip("/") + "/")):
        return "~" + path[len(home.rstrip("/")):]
    return path


def file_link(path: str, *, line: int | None = None, page: int | None = None) -> str:
    """A file:// URI (terminals with OSC 8 make the path clickable)."""
    from pathlib import Path

    try:
        uri = Path(path).as_uri()
    except ValueError:          # relative path: no URI
        return ""
    if page is not None:
        return f"{uri}#page={page}"
    return uri


def _citation(segment: Segment) -> Text:
    if segment.citation is None:
        return Text()
    return Text(f"[{segment.citation + 1}]", style=CITATION_STYLE)


def _symbol_style(segment: Segment) -> str:
    return "dim" if segment.role == "context" else LABEL_STYLE[segment.label]


def _label(segment: Segment) -> Text:
    """The label word, and where the label came from (" · own token", " · fallback
    critic", ...) when known; a quote says where in the file it is quoted from."""
    if segment.origin == "quote":
        return Text(segment_label(segment), style=f"dim {_symbol_style(segment)}")
    text = Text(LABEL_SHORT[segment.label], style=f"dim {LABEL_STYLE[segment.label]}")
    if segment.label_source is not None:
        text.append(f" · {LABEL_SOURCE_TEXT.get(segment.label_source, segment.label_source)}",
                    style="dim")
    return text


def _label_tail(segment: Segment) -> Text:
    """Citation number and label word after a unit's text (one line)."""
    text = Text()
    if segment.citation is not None:
        text.append(" ")
        text.append_text(_citation(segment))
    return text + Text("  ") + _label(segment)


class LabelledText:
    """A unit's text, wrapped, then its citation and label word: each goes on the last
    line if it fits there, else starts a new line, so a label is never cut in two."""

    def __init__(self, body: Text, citation: Text, label: Text) -> None:
        self.body, self.citation, self.label = body, citation, label

    def __rich_console__(self, console: Console, options: ConsoleOptions) -> RenderResult:
        width = max(options.max_width, 1)
        lines = list(self.body.wrap(console, width)) or [Text()]
        for part, gap in ((self.citation, " "), (self.label, "  ")):
            if not part.plain:
                continue
            last = lines[-1]
            if last.cell_len + len(gap) + part.cell_len <= width:
                last.append(gap)
                last.append_text(part)
            else:
                lines += list(part.wrap(console, width))
        yield Text("\n").join(lines)

    def __rich_measure__(self, console: Console, options: ConsoleOptions) -> Measurement:
        whole = self.body.cell_len + 1 + self.citation.cell_len + 2 + self.label.cell_len
        return Measurement(min(whole, 12), min(whole, options.max_width))


def unit_text(segment: Segment) -> Text:
    """A unit's text as shown after its symbol: inline Markdown rendered; a heading bold
    without its `#`s; a list item with its marker and its continuation lines (indented
    under its text); for a code block, the header ("code · python")."""
    raw = segment.text.strip("\n")
    if segment.kind == "code":
        lang = code_language(raw)
        return Text("code" + (f" · {lang}" if lang else ""), style="italic")
    heading = re.match(r"^ {0,3}#{1,6}[ \t]+(.*)$", raw)
    if segment.kind == "sentence" and heading:
        title = inline_markdown(heading.group(1).strip())
        title.stylize("bold")
        return title
    if segment.kind == "list_item":
        first, *rest = raw.split("\n")
        marker, _, head = first.partition(" ")
        body = Text()
        body.append(marker + " ", style="bold")
        body.append_text(inline_markdown(head.strip()))
        for line in rest:
            indent = len(line) - len(line.lstrip())
            body.append("\n" + " " * indent)
            body.append_text(inline_markdown(line.strip()) if not _FENCE_LINE.match(line)
                             else Text(line.strip(), style="dim"))
        return body
    return inline_markdown(" ".join(segment_body(segment).split()))   # quotes in “…”


_FENCE_LINE = re.compile(r"^\s*(```|~~~)")


def unit_body(segment: Segment) -> Text:
    """`unit_text`, its citation and its label word, as one text."""
    return unit_text(segment) + _label_tail(segment)


def segment_text(segment: Segment) -> Text:
    """One unit as a single text: symbol, then `unit_body` (tests and plain views)."""
    text = Text()
    text.append(segment_symbol(segment) + " ", style=_symbol_style(segment))
    return text + unit_body(segment)


def unit_renderable(segment: Segment) -> Table:
    """What a unit's line draws: the symbol in a column of its own (wrapped lines stay
    under the text), then the text with its citation and label (`LabelledText`)."""
    return _with_symbol(segment, LabelledText(unit_text(segment), _citation(segment),
                                              _label(segment)))


def _with_symbol(segment: Segment, body: RenderableType) -> Table:
    """Symbol in a column of its own, so wrapped lines stay under the text."""
    grid = Table.grid(expand=True)
    grid.add_column(width=2, no_wrap=True)
    grid.add_column(ratio=1)
    grid.add_row(Text(segment_symbol(segment), style=_symbol_style(segment)), body)
    return grid


def source_text(answer: Answer, index: int) -> Text:
    judgement = answer.passages[index]
    p = judgement.passage
    where = f"page {p.page}" if p.page is not None else ""
    text = Text()
    text.append(f"[{index + 1}] ", style="bold")
    text.append(p.title or p.path)
    text.append("  ")
    link = file_link(p.path, page=p.page)
    text.append(display_path(p.path)
                + (f":{p.start_line}" if p.page is None and p.start_line else ""),
                style=f"dim link {link}" if link else "dim")
    if where:
        text.append(f"  {where}", style="dim")
    text.append(f"  {relevance_words(judgement)}", style="dim")
    if judgement.dropped:
        text.append(f"  dropped: {judgement.drop_reason or 'strict mode'}", style="red")
    return text


def _open_citation(widget: Widget, answer: Answer | None, index: int | None, *,
                   segment: Segment | None = None) -> None:
    """Open the source panel at citation `index`; for a quote (`segment` with a line),
    at the quote's own line with the quote highlighted."""
    if answer is not None and index is not None:
        line = segment.line if segment is not None else None
        quote = segment.text if segment is not None and line is not None else ""
        widget.post_message(CitationSelected(answer, index, line=line, quote=quote))
    else:
        widget.notify("This part of the answer has no source.", timeout=3)


class SourceLine(Static, can_focus=True):
    """A cited source; Enter or a click opens it."""

    BINDINGS = [Binding("enter", "open_source", "Open source", show=True)]

    def __init__(self, answer: Answer, index: int) -> None:
        super().__init__(source_text(answer, index), classes="source")
        self.answer = answer
        self.citation = index

    def action_open_source(self) -> None:
        _open_citation(self, self.answer, self.citation)

    def on_click(self, event: "Click") -> None:
        event.stop()
        self.action_open_source()


class SegmentLine(Vertical, can_focus=True):
    """One unit of the answer (a sentence, a list item; `CodeBlockLine` for code) with
    its symbol, citation and label. Enter or a click opens its source; `c` copies it."""

    BINDINGS = [
        Binding("enter", "open_source", "Open source", show=False),   # the hint says so
        Binding("c", "copy_unit", "Copy", show=True),
    ]

    def __init__(self, segment: Segment, *, answer: Answer | None = None) -> None:
        classes = f"segment unit-{segment.kind} label-{segment.label}"
        if segment.starts_block:
            classes += " block-start"
        super().__init__(classes=classes)
        self.segment = segment
        self.answer = answer
        self.citation = segment.citation

    def compose(self):
        yield Static(unit_renderable(self.segment), classes="unit-line")

    @property
    def plain(self) -> str:
        """The unit as it reads on screen, as plain text (symbol first)."""
        return segment_text(self.segment).plain.replace("\u00a0", " ")

    @property
    def copy_text(self) -> str:
        """What `c` copies: the sentence or list item as written (a quote after the term
        line it describes, when it has one)."""
        text = self.segment.text.strip()
        if self.segment.lead:
            text = f"{self.segment.lead.strip()}\n{text}"
        return f"{self.segment.subject.strip()}\n{text}" if self.segment.subject else text

    def action_open_source(self) -> None:
        _open_citation(self, self.answer, self.citation, segment=self.segment)

    def action_copy_unit(self) -> None:
        text = self.copy_text
        self.app.copy_to_clipboard(text)
        lines = text.count("\n") + 1
        what = "code block" if self.segment.kind == "code" else "text"
        self.notify(f"Copied the {what} ({lines} line{'s' if lines != 1 else ''}).", timeout=3)

    def on_click(self, event: "Click") -> None:
        event.stop()
        self.action_open_source()


class CopyLink(Static):
    """"copy" beside a code block's label: a click copies the block."""

    def on_click(self, event: "Click") -> None:
        event.stop()
        parent = self.parent
        while parent is not None and not isinstance(parent, SegmentLine):
            parent = parent.parent
        if isinstance(parent, SegmentLine):
            parent.action_copy_unit()


class CodeBlockLine(SegmentLine):
    """A whole code block: a header with symbol, language, citation and label, then the
    code with its lines and indentation, highlighted, scrolling sideways when wide
    (Left / Right while the block has focus, or the mouse)."""

    BINDINGS = [
        Binding("left", "scroll_code(-8)", "Scroll left", show=False),
        Binding("right", "scroll_code(8)", "Scroll right", show=False),
    ]

    def action_scroll_code(self, columns: int) -> None:
        self.query_one(".code-scroll", ScrollableContainer).scroll_relative(
            x=columns, animate=False)

    @property
    def code(self) -> str:
        return code_body(self.segment.text)

    @property
    def copy_text(self) -> str:
        return self.code

    def compose(self):
        with Horizontal(classes="code-header"):
            yield Static(unit_renderable(self.segment), classes="unit-line")
            yield CopyLink(Text("copy", style="underline"), classes="copy-link")
        lang = code_language(self.segment.text)
        with ScrollableContainer(classes="code-scroll", can_focus=False):
            yield Static(highlight(self.code, language=lang or None), classes="code-body")


def unit_line(segment: Segment, *, answer: Answer | None = None) -> SegmentLine:
    """The widget for one unit."""
    cls = CodeBlockLine if segment.kind == "code" else SegmentLine
    return cls(segment, answer=answer)


class TurnView(Vertical):
    """A question, then its answer as it streams in and once it is complete."""

    def __init__(self, question: str, *, turn_id: int) -> None:
        super().__init__(classes="turn")
        self.question = question
        self.turn_id = turn_id
        self.answer: Answer | None = None
        self.streamed: list[Segment] = []
        self.state = "running"      # running | done | cancelled | failed
        self.decision: RetrievalDecision | None = None

    def compose(self):
        yield Static(Text("❯ ") + Text(self.question, style="bold"), classes="question")
        yield Static("thinking…", classes="decision")
        yield Vertical(classes="segments")
        yield Vertical(classes="sources")
        yield Static("", classes="turn-status")

    def on_mount(self) -> None:
        # Segments or the whole answer may arrive before this view was composed.
        self._composed = True
        if self.state == "done" and self.answer is not None:
            self._render_answer(self.answer)
        elif self.decision is not None:
            self.show_decision(self.decision)
        if self.state != "done" and self.streamed:
            self.query_one(".segments", Vertical).mount_all(
                [unit_line(s) for s in self.streamed])
        if self.state in ("cancelled", "failed"):
            self._render_stop()

    @property
    def composed(self) -> bool:
        return getattr(self, "_composed", False)

    # -- streaming ------------------------------------------------------------------------
    def show_decision(self, decision: RetrievalDecision) -> None:
        """Whether the engine retrieves, shown as soon as it decides (before any text)."""
        if self.state != "running":
            return
        self.decision = decision
        if self.composed:
            self.query_one(".decision", Static).update(
                Text(decision_preview(decision), style="italic"))

    def add_segment(self, segment: Segment) -> None:
        if self.state != "running":
            return
        self.streamed.append(segment)
        if self.composed:
            self.query_one(".segments", Vertical).mount(unit_line(segment))

    def show_answer(self, answer: Answer) -> None:
        """Replace the streamed lines with the complete answer."""
        self.answer = answer
        self.state = "done"
        if self.composed:
            self._render_answer(answer)

    def _render_answer(self, answer: Answer) -> None:
        self.query_one(".decision", Static).update(Text(decision_line(answer), style="italic"))
        segments = self.query_one(".segments", Vertical)
        segments.remove_children()
        if answer.segments:
            segments.mount_all([unit_line(s, answer=answer) for s in answer.segments])
        else:
            segments.mount(Static(Text("(no answer)", style="dim")))
        sources = self.query_one(".sources", Vertical)
        sources.remove_children()
        cited = sorted({s.citation for s in answer.segments if s.citation is not None})
        sources.set_class(bool(cited), "has-sources")
        if cited:
            sources.mount_all([SourceLine(answer, n) for n in cited])
        footer = [f"labels by {answer.critic}"]
        if answer.model:
            footer.append(f"model {answer.model}")
        if answer.elapsed_s:
            footer.append(f"{answer.elapsed_s:.1f}s")
        lines = [Text(" · ".join(footer), style="dim")]
        lines += [Text(f"note: {n}", style="dim italic") for n in answer.notes]
        self.query_one(".turn-status", Static).update(Text("\n").join(lines))

    def stop(self, *, cancelled: bool, message: str = "") -> None:
        if self.state != "running":
            return
        self.state = "cancelled" if cancelled else "failed"
        self.stop_message = message
        if self.composed:
            self._render_stop()

    def _render_stop(self) -> None:
        cancelled = self.state == "cancelled"
        self.query_one(".decision", Static).update("")
        status = "cancelled" if cancelled else f"failed: {getattr(self, 'stop_message', '')}"
        self.query_one(".turn-status", Static).update(
            Text(status, style="bold yellow" if cancelled else "bold red"))

    # -- what the tests and the export read -------------------------------------------------
    def shown_segments(self) -> list[tuple[str, str, int | None]]:
        """(text, label, citation) of every sentence line on screen."""
        return [(line.segment.text.strip(), line.segment.label, line.segment.citation)
                for line in self.query(SegmentLine)]
