"""Add a folder to the index (shown on first run, and from the index screen)."""

from __future__ import annotations

import os
from pathlib import Path

from textual.app import ComposeResult
from textual.binding import Binding
from textual.containers import Horizontal, Vertical
from textual.screen import ModalScreen
from textual.widgets import Button, Input, Label, Static

from tui.widgets.path_input import PathSuggester


class AddFolderScreen(ModalScreen[str | None]):
    """Asks for a folder; dismisses with its absolute path (or None)."""

    BINDINGS = [Binding("escape", "dismiss_none", "Not now")]

    def __init__(self, *, first_run: bool = False) -> None:
        super().__init__()
        self.first_run = first_run

    def compose(self) -> ComposeResult:
        with Vertical(id="add-folder-dialog", classes="dialog"):
            if self.first_run:
                yield Label("Welcome to localrag", classes="dialog-title")
                yield Static("No folders are indexed yet. Add a folder of your notes, "
                             "documents or code; it is indexed in the background and you "
                             "can ask questions meanwhile.", classes="dialog-text")
            else:
                yield Label("Add a folder to the index", classes="dialog-title")
            yield Input(placeholder="folder path, e.g. ~/Documents  (→ completes)",
                        suggester=PathSuggester(), id="folder-input")
            yield Static("", id="folder-error", classes="error-text", markup=False)
            with Horizontal(classes="dialog-buttons"):
                yield Button("Add and index", variant="primary", id="add-folder", compact=True)
                yield Button("Not now", id="cancel-folder", compact=True)

    def on_mount(self) -> None:
        self.query_one(Input).focus()

    def on_input_submitted(self, event: Input.Submitted) -> None:
        event.stop()
        self._submit()

    def on_button_pressed(self, event: Button.Pressed) -> None:
        event.stop()
        if event.button.id == "add-folder":
            self._submit()
        else:
            self.dismiss(None)

    def action_dismiss_none(self) -> None:
        self.dismiss(None)

    def _submit(self) -> None:
        raw = self.query_one(Input).value.strip()
        error = self.query_one("#folder-error", Static)
        if not raw:
            error.update("Type the path of a folder.")
            return
        path = Path(os.path.expanduser(raw)).resolve()
        if not path.is_dir():
            error.update(f"{path} is not a folder: check the path (→ completes names).")
            return
        if not os.access(path, os.R_OK | os.X_OK):
            error.update(f"Cannot read {path}: check its permissions.")
            return
        self.dismiss(str(path))
