"""The saved chats: pick one to reopen it."""

from __future__ import annotations

import time

from rich.text import Text
from textual.app import ComposeResult
from textual.binding import Binding
from textual.containers import Vertical
from textual.screen import ModalScreen
from textual.widgets import Label, OptionList, Static
from textual.widgets.option_list import Option

from localrag.chats import ChatSummary


def _when(ts: float) -> str:
    return time.strftime("%Y-%m-%d %H:%M", time.localtime(ts))


def _entry(chat: ChatSummary) -> Text:
    """Two rows: the chat's first question, then how many questions and when."""
    text = Text(chat.title, style="bold", overflow="ellipsis", no_wrap=True)
    count = f"{chat.turns} question" + ("" if chat.turns == 1 else "s")
    text.append(f"\n{count} · {_when(chat.updated_at)}", style="dim")
    return text


class ChatsScreen(ModalScreen[int | None]):
    """Dismisses with the chosen chat id, or None."""

    BINDINGS = [Binding("escape", "dismiss_none", "Back")]

    def __init__(self, chats: list[ChatSummary]) -> None:
        super().__init__()
        self.chats = chats

    def compose(self) -> ComposeResult:
        with Vertical(id="chats-dialog", classes="dialog"):
            yield Label("Saved chats", classes="dialog-title")
            if self.chats:
                yield OptionList(*[Option(_entry(c), id=str(c.id)) for c in self.chats],
                                 id="chats-list")
                yield Static("Enter opens a chat · Esc goes back", classes="dim")
            else:
                yield Static("No saved chats yet: ask a question first.", classes="dim")

    def on_mount(self) -> None:
        if self.chats:
            self.query_one(OptionList).focus()

    def on_option_list_option_selected(self, event: OptionList.OptionSelected) -> None:
        event.stop()
        self.dismiss(int(event.option.id or 0))

    def action_dismiss_none(self) -> None:
        self.dismiss(None)
