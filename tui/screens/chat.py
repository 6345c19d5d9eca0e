"""The main screen: the conversation, a status line, the question box."""

from __future__ import annotations

from typing import TYPE_CHECKING

from rich.text import Text
from textual.app import ComposeResult
from textual.binding import Binding
from textual.containers import Horizontal, VerticalScroll
from textual.screen import Screen
from textual.widgets import Footer, Header, Input, Static

from tui.widgets.answer_view import TurnView
from tui.widgets.index_view import progress_summary

if TYPE_CHECKING:
    from tui.app import LocalragApp


class ChatScreen(Screen[None]):
    BINDINGS = [
        Binding("escape", "cancel_answer", "Cancel"),
        Binding("ctrl+n", "app.new_chat", "New"),
        Binding("ctrl+s", "app.export_answer", "Export"),
        Binding("f2", "app.show_chats", "Chats"),
        Binding("f3", "app.show_index", "Index"),
        Binding("f4", "app.show_settings", "Settings"),
    ]

    def compose(self) -> ComposeResult:
        yield Header(show_clock=False)
        with VerticalScroll(id="chat-log", can_focus=False):
            yield Static(Text("Ask a question about your files. Tab moves through the "
                              "answer (each sentence, list item or code block) and its "
                              "sources; Enter opens a source, c copies.", style="dim"),
                         id="chat-hint")
        with Horizontal(id="status-bar"):
            yield Static("model: loading…", id="model-status", markup=False)
            yield Static("", id="index-status", markup=False)
        yield Input(placeholder="Ask a question…", id="question")
        yield Footer(compact=True)

    def on_mount(self) -> None:
        self.query_one("#question", Input).focus()
        # The log stays scrolled to its end while answers grow, until the person scrolls
        # or moves to a unit above (then it stays put); asking again re-anchors it.
        self.query_one("#chat-log", VerticalScroll).anchor()
        self.refresh_index_state()
        self.refresh_model_state()

    def action_cancel_answer(self) -> None:
        self.app_state.action_cancel_answer()

    def check_action(self, action: str, parameters: tuple[object, ...]) -> bool | None:
        # "esc Cancel" only while an answer runs: the footer has no room to spare at 80
        # columns (the app refreshes the bindings when an answer starts and ends)
        if action == "cancel_answer":
            return self.app_state.answering
        return True

    @property
    def app_state(self) -> "LocalragApp":
        return self.app  # type: ignore[return-value]

    def on_input_submitted(self, event: Input.Submitted) -> None:
        if event.input.id != "question":
            return
        event.stop()
        question = event.value.strip()
        if not question:
            return
        event.input.value = ""
        self.app_state.ask(question)

    # -- what the app calls --------------------------------------------------------------
    def add_turn(self, view: TurnView) -> None:
        log = self.query_one("#chat-log", VerticalScroll)
        hint = self.query("#chat-hint")
        if hint:
            hint.remove()
        log.mount(view)
        log.anchor()

    def clear_turns(self) -> None:
        self.query_one("#chat-log", VerticalScroll).remove_children()

    def refresh_model_state(self) -> None:
        app = self.app_state
        status = self.query_one("#model-status", Static)
        d = app.model_description
        if app.model_error:
            status.update(Text(f"model failed: {app.model_error}", style="bold red"))
        elif d is not None:
            critic = f" · labels: {d.critic}" if d.critic != d.kind else ""
            copy = " · runs its Q8_0 CPU copy" if d.runs_from else ""
            status.update(f"model: {d.name} ({d.kind}){critic}{copy}")
        elif app.model_loading:
            status.update("model: loading…")
        else:
            status.update("model: not loaded")

    def refresh_index_state(self) -> None:
        app = self.app_state
        label = self.query_one("#index-status", Static)
        if app.indexing and app.index_progress is not None:
            prefix = "paused · " if app.index_paused else ""
            text = prefix + progress_summary(app.index_progress)
        elif app.indexing:
            text = "indexing: scanning…"
        elif app.index_status is not None:
            s = app.index_status
            folders = f"{len(s.roots)} folder" + ("" if len(s.roots) == 1 else "s")
            text = (f"{folders} · {s.files_indexed} files · {s.chunks} chunks"
                    + (f" · {s.files_error} error" + ("s" if s.files_error != 1 else "")
                       if s.files_error else ""))
        else:
            text = "index: opening…"
        if app.pulling:          # a model download runs in the background (settings > models)
            p = app.pull_progress
            done = f" {p.fraction:.0%}" if p is not None and p.fraction is not None else ""
            text = f"downloading {app.pulling}{done} · {text}"
        label.update(text)
