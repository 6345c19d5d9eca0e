"""One question and its answer: retrieval line, labelled sentences, sources.

Sentences arrive one by one while the engine works (`add_segment`); when the Answer is
complete the view is rebuilt from it (`show_answer`), so what stays on screen is exactly
what the engine returned. Sentences and sources with a citation can be focused (Tab) and
opened with Enter or a mouse click.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from rich.text import Text
from textual.binding import Binding
from textual.containers import Vertical
from textual.widgets import Static

from localrag.answer import Answer, RetrievalDecision, Segment
from localrag.render import (LABEL_SYMBOL, decision_line, decision_preview, segment_body,
                             segment_label)
from tui.messages import CitationSelected

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

LABEL_STYLE: dict[str, str] = {
    "fully": "bold green",
    "partially": "bold yellow",
    "none": "bold red",
    "unchecked": "bold magenta",
    "no_retrieval": "bold blue",
}


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


def segment_text(segment: Segment) -> Text:
    """The on-screen line of one sentence: symbol, text, citation, label word."""
    text = Text()
    text.append(LABEL_SYMBOL[segment.label] + " ", style=LABEL_STYLE[segment.label])
    text.append(segment_body(segment))
    if segment.citation is not None:
        text.append(f" [{segment.citation + 1}]", style="bold underline")
    words = segment_label(segment) if segment.origin == "quote" else LABEL_SHORT[segment.label]
    text.append(f"  {words}", style=f"dim {LABEL_STYLE[segment.label]}")
    return text


def source_text(answer: Answer, index: int) -> Text:
    judgement = answer.passages[index]
    p = judgement.passage
    where = f"page {p.page}" if p.page is not None else ""
    text = Text()
    text.append(f"[{index + 1}] ", style="bold")
    text.append(p.title or p.path)
    text.append("  ")
    link = file_link(p.path, page=p.page)
    text.append(f"{p.path}" + (f":{p.start_line}" if p.page is None and p.start_line else ""),
                style=f"dim link {link}" if link else "dim")
    if where:
        text.append(f"  {where}", style="dim")
    text.append(f"  rel {judgement.relevance:.2f}", style="dim")
    if judgement.dropped:
        text.append(f"  dropped: {judgement.drop_reason or 'strict mode'}", style="red")
    elif judgement.relevant is None:
        text.append("  relevance not checked", style="dim")
    elif not judgement.relevant:
        text.append("  judged irrelevant", style="dim")
    return text


class _CitationLine(Static, can_focus=True):
    """A focusable line that opens citation `index` of `answer` on Enter or click."""

    BINDINGS = [Binding("enter", "open_source", "Open source", show=True)]

    def __init__(self, content: Text, *, answer: Answer | None, index: int | None,
                 classes: str = "") -> None:
        super().__init__(content, classes=classes)
        self.answer = answer
        self.citation = index

    def action_open_source(self) -> None:
        if self.answer is not None and self.citation is not None:
            self.post_message(CitationSelected(self.answer, self.citation))
        else:
            self.notify("This sentence has no source.", timeout=3)

    def on_click(self, event: "Click") -> None:
        event.stop()
        self.action_open_source()


class SegmentLine(_CitationLine):
    def __init__(self, segment: Segment, *, answer: Answer | None = None) -> None:
        super().__init__(segment_text(segment), answer=answer, index=segment.citation,
                         classes=f"segment label-{segment.label}")
        self.segment = segment


class SourceLine(_CitationLine):
    def __init__(self, answer: Answer, index: int) -> None:
        super().__init__(source_text(answer, index), answer=answer, index=index,
                         classes="source")


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
                [SegmentLine(s) for s in self.streamed])
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
            self.query_one(".segments", Vertical).mount(SegmentLine(segment))

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
            segments.mount_all([SegmentLine(s, answer=answer) for s in answer.segments])
        else:
            segments.mount(Static(Text("(no answer)", style="dim")))
        sources = self.query_one(".sources", Vertical)
        sources.remove_children()
        cited = sorted({s.citation for s in answer.segments if s.citation is not None})
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
