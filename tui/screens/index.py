"""The index: folders, counts, files in error, live progress, watcher events."""

from __future__ import annotations

from typing import TYPE_CHECKING

from textual.app import ComposeResult
from textual.binding import Binding
from textual.containers import Vertical
from textual.screen import Screen
from textual.widgets import Footer, Header, RichLog, Static

from tui.widgets.index_view import IndexOverview, IndexProgressView, ProblemTree

if TYPE_CHECKING:
    from tui.app import LocalragApp
    from tui.messages import ProblemFilesLoaded


class IndexScreen(Screen[None]):
    BINDINGS = [
        Binding("escape", "app.pop_screen", "Back"),
        Binding("a", "app.add_folder", "Add"),
        Binding("d", "remove_root", "Remove"),
        Binding("u", "app.update_index", "Update"),
        Binding("p", "app.pause_index", "Pause"),
        Binding("c", "app.cancel_index", "Cancel"),
    ]

    def compose(self) -> ComposeResult:
        yield Header(show_clock=False)
        with Vertical(id="index-body"):
            yield IndexOverview(id="index-overview")
            yield IndexProgressView(id="index-progress")
            yield Static("Watcher events", classes="section-title")
            yield RichLog(id="watch-log", max_lines=200, markup=False, wrap=True)
        yield Footer(compact=True)

    def on_mount(self) -> None:
        self.refresh_index_state()
        for line in self.app_state.watch_lines:
            self.query_one("#watch-log", RichLog).write(line)
        self.query_one("#roots-table").focus()

    @property
    def app_state(self) -> "LocalragApp":
        return self.app  # type: ignore[return-value]

    def refresh_index_state(self) -> None:
        app = self.app_state
        if app.index_status is not None:
            self.query_one(IndexOverview).show_status(app.index_status)
        view = self.query_one(IndexProgressView)
        if app.index_progress is not None and app.indexing:
            view.show_progress(app.index_progress, paused=app.index_paused)
        elif app.index_result:
            view.display = True
            view.show_finished(app.index_result)
        else:
            view.display = False

    def add_problem_page(self, message: "ProblemFilesLoaded") -> None:
        self.query_one(ProblemTree).add_page(message.state, message.kind, message.offset,
                                             message.files)

    def add_watch_line(self, line: str) -> None:
        self.query_one("#watch-log", RichLog).write(line)

    def action_remove_root(self) -> None:
        root = self.query_one(IndexOverview).selected_root()
        if root is None:
            self.notify("No folder selected.", timeout=3)
            return
        self.app_state.remove_root(root)
