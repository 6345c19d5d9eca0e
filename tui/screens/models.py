"""The model picker (from the settings screen): the catalogue next to the model files
here; download a catalogue model with a progress bar, cancel it, resume it later, or pick
a file to use. The download runs in an app worker, so closing this dialog does not stop
it and the chat stays usable meanwhile."""

from __future__ import annotations

from pathlib import Path
from typing import TYPE_CHECKING

from rich.text import Text
from textual import work
from textual.app import ComposeResult
from textual.binding import Binding
from textual.containers import Horizontal, Vertical
from textual.screen import ModalScreen
from textual.widgets import Button, Footer, Label, OptionList, ProgressBar, Static
from textual.widgets.option_list import Option

from localrag.model_files import ModelsOverview, progress_figures
from models.catalogue import format_size

if TYPE_CHECKING:
    from tui.app import LocalragApp


class ModelPickerScreen(ModalScreen[str | None]):
    """Dismisses with the path of the model file to use, or None."""

    BINDINGS = [
        Binding("escape", "close", "Back"),
        Binding("d", "download", "Download / resume"),
        Binding("c", "cancel_download", "Cancel download"),
        Binding("u", "use", "Use"),
    ]

    def __init__(self) -> None:
        super().__init__()
        self.overview: ModelsOverview | None = None

    @property
    def app_state(self) -> "LocalragApp":
        return self.app  # type: ignore[return-value]

    def compose(self) -> ComposeResult:
        with Vertical(id="models-dialog", classes="dialog"):
            yield Label("Models", classes="dialog-title")
            yield OptionList(id="models-list")
            yield Static("", id="models-space", classes="dim")
            with Vertical(id="pull-progress"):
                yield ProgressBar(total=None, show_eta=False, show_percentage=True,
                                  id="pull-bar")
                yield Static("", id="pull-figures", markup=False)
            yield Static("", id="models-hint", classes="dim", markup=False)
            with Horizontal(classes="dialog-buttons"):
                yield Button("Download", variant="primary", id="pull-start", compact=True)
                yield Button("Cancel download", id="pull-cancel", compact=True)
                yield Button("Use", id="model-use", compact=True)
                yield Button("Close", id="models-close", compact=True)
        yield Footer()

    def on_mount(self) -> None:
        self.query_one("#models-hint", Static).update("reading the model files…")
        self.reload_models()
        self.refresh_pull_state()
        self.query_one(OptionList).focus()

    # -- content -------------------------------------------------------------------------
    def reload_models(self) -> None:
        """Read the catalogue's state and the local files again (local disk only; the
        metadata of a large model takes a while the first time: a worker reads it)."""
        self._read_overview()

    @work(thread=True, exclusive=True, group="models-overview", exit_on_error=False)
    def _read_overview(self) -> None:
        try:
            overview = self.app_state.assistant.models_overview()
        except Exception as exc:
            self.app.call_from_thread(self.app_state.show_error, exc, context="Models")
            return
        self.app.call_from_thread(self._show_overview, overview)

    def _show_overview(self, overview: ModelsOverview) -> None:
        if not self.is_mounted:
            return
        self.overview = overview
        options = self.query_one(OptionList)
        highlighted = options.highlighted_option.id if options.highlighted_option else None
        options.clear_options()
        o = self.overview
        rows: list[Option] = []
        for s in o.catalogue:
            e = s.entry
            size = format_size(s.size_bytes) if s.installed else f"~{format_size(e.approx_bytes)}"
            line = Text.assemble((f"{e.name}", "bold"), " (default)" if e.is_default else "",
                                 f"  {size}  ", (s.state, "green" if s.installed else "yellow"),
                                 "\n  ", (e.purpose, "dim"))
            rows.append(Option(line, id=f"cat:{e.name}"))
        catalogue_files = {s.path for s in o.catalogue if s.path is not None}
        for info in o.files:
            if info.path in catalogue_files:
                continue
            mark = "  in use" if o.in_use is not None and info.path == o.in_use else ""
            line = Text.assemble((info.path.name, "bold"), f"  {format_size(info.size_bytes)}  ",
                                 (f"{info.kind}{mark}", "green" if mark else ""),
                                 "\n  ", (str(info.path.parent), "dim"))
            rows.append(Option(line, id=f"file:{info.path}"))
        options.add_options(rows)
        ids = [r.id for r in rows]
        options.highlighted = ids.index(highlighted) if highlighted in ids else 0
        space = (f"{format_size(o.free_bytes)} free in {o.models_dir}"
                 if o.free_bytes is not None else str(o.models_dir))
        warnings = o.space_warnings()
        self.query_one("#models-space", Static).update(
            Text(space + "".join(f"\nwarning: {w}" for w in warnings),
                 style="bold yellow" if warnings else ""))
        self._update_hint()

    def _selected(self) -> tuple[str, str] | None:
        option = self.query_one(OptionList).highlighted_option
        if option is None or option.id is None:
            return None
        kind, _, value = option.id.partition(":")
        return kind, value

    def _selected_state(self):
        sel = self._selected()
        if sel is None or sel[0] != "cat" or self.overview is None:
            return None
        return next((s for s in self.overview.catalogue if s.entry.name == sel[1]), None)

    def _update_hint(self) -> None:
        app = self.app_state
        sel = self._selected()
        state = self._selected_state()
        hint = ""
        if state is not None and not state.installed:
            verb = "resumes" if state.partial_bytes else "downloads"
            hint = (f"d {verb} {state.entry.name} (about {format_size(state.needed_bytes)}) "
                    f"from {state.entry.repo}; the chat stays usable meanwhile")
        elif sel is not None:
            hint = "u or Enter uses this model (then Save in the settings)"
        if app.pulling:
            hint = f"downloading {app.pulling}; c cancels (the part is kept and resumes)"
        self.query_one("#models-hint", Static).update(hint)
        self.query_one("#pull-start", Button).disabled = bool(
            app.pulling or state is None or state.installed)
        self.query_one("#pull-start", Button).label = (
            "Resume" if state is not None and state.partial_bytes else "Download")
        self.query_one("#pull-cancel", Button).disabled = not app.pulling
        self.query_one("#model-use", Button).disabled = not self._usable_path()

    def _usable_path(self) -> str | None:
        sel = self._selected()
        if sel is None:
            return None
        if sel[0] == "file":
            return sel[1]
        state = self._selected_state()
        return str(state.path) if state is not None and state.path is not None else None

    # -- what the app calls --------------------------------------------------------------
    def refresh_pull_state(self) -> None:
        app = self.app_state
        box = self.query_one("#pull-progress")
        p = app.pull_progress
        if app.pulling and p is not None:
            box.display = True
            bar = self.query_one("#pull-bar", ProgressBar)
            if p.total_bytes:
                bar.update(total=p.total_bytes, progress=p.done_bytes)
            self.query_one("#pull-figures", Static).update(f"{p.source.text}: "
                                                           + progress_figures(p))
        elif app.pull_result:
            box.display = True
            self.query_one("#pull-figures", Static).update(app.pull_result)
        else:
            box.display = bool(app.pulling)
            if app.pulling:
                self.query_one("#pull-figures", Static).update(f"{app.pulling}: connecting…")
        self._update_hint()

    # -- actions -------------------------------------------------------------------------
    def on_option_list_option_highlighted(self, event: OptionList.OptionHighlighted) -> None:
        event.stop()
        self._update_hint()

    def on_option_list_option_selected(self, event: OptionList.OptionSelected) -> None:
        event.stop()
        state = self._selected_state()
        if state is not None and not state.installed:
            self.action_download()
        else:
            self.action_use()

    def action_download(self) -> None:
        state = self._selected_state()
        if state is None or state.installed:
            self.notify("Pick a catalogue model that is not installed yet.", timeout=3)
            return
        self.app_state.start_pull(state.entry.name)
        self.refresh_pull_state()

    def action_cancel_download(self) -> None:
        self.app_state.action_cancel_pull()

    def action_use(self) -> None:
        path = self._usable_path()
        if path is None:
            self.notify("Download it first (d), or pick a model file.", timeout=3)
            return
        self.dismiss(str(Path(path)))

    def action_close(self) -> None:
        self.dismiss(None)

    def on_button_pressed(self, event: Button.Pressed) -> None:
        event.stop()
        actions = {"pull-start": self.action_download, "pull-cancel": self.action_cancel_download,
                   "model-use": self.action_use, "models-close": self.action_close}
        actions[event.button.id or "models-close"]()
