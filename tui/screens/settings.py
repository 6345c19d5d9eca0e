"""The settings that matter day to day, saved to the TOML file the CLI reads too."""

from __future__ import annotations

import dataclasses
from typing import Any

from textual.app import ComposeResult
from textual.binding import Binding
from textual.containers import Horizontal, VerticalScroll
from textual.screen import ModalScreen
from textual.widgets import Button, Footer, Input, Label, Select, Static, Switch

from localrag.errors import SettingsError
from localrag.settings import Settings
from tui.widgets.path_input import PathSuggester

FIELDS: list[tuple[str, str]] = [
    ("model_path", "Model file (.gguf)"),
    ("n_gpu_layers", "GPU layers (-1 = all)"),
    ("retrieval_mode", "Retrieval"),
    ("threshold", "Retrieval threshold (0-1)"),
    ("k", "Passages per question (K)"),
    ("w_rel", "Weight: relevance"),
    ("w_sup", "Weight: support"),
    ("w_use", "Weight: usefulness"),
    ("strict", "Strict mode (drop unsupported)"),
    ("relevance_rerank", "Rerank search (relevance model)"),
    ("rerank", "Rerank search (learned ranker)"),
    ("ocr", "OCR scanned PDF pages"),
]


class SettingsScreen(ModalScreen[dict[str, Any] | None]):
    """Dismisses with the changed settings (already validated), or None."""

    BINDINGS = [
        Binding("ctrl+s", "save", "Save"),
        Binding("escape", "cancel", "Cancel"),
        Binding("f5", "models", "Models (download)"),
    ]

    def __init__(self, settings: Settings) -> None:
        super().__init__()
        self.settings = settings

    def compose(self) -> ComposeResult:
        s = self.settings
        with VerticalScroll(id="settings-dialog", classes="dialog"):
            yield Label("Settings", classes="dialog-title")
            for name, label in FIELDS:
                with Horizontal(classes="setting-row"):
                    yield Label(label, classes="setting-label")
                    if name == "retrieval_mode":
                        yield Select([(m, m) for m in ("adaptive", "always", "never")],
                                     value=s.retrieval_mode, allow_blank=False,
                                     id="set-retrieval_mode", compact=True)
                    elif isinstance(getattr(s, name), bool):
                        yield Switch(value=getattr(s, name), id=f"set-{name}")
                    elif name == "model_path":
                        yield Input(s.model_path, id="set-model_path", compact=True,
                                    placeholder="empty = built-in SmolLM2-135M",
                                    suggester=PathSuggester(directories_only=False,
                                                            suffixes=(".gguf",)))
                        yield Button("Models…", id="open-models", compact=True)
                    else:
                        kind = "integer" if isinstance(getattr(s, name), int) else "number"
                        yield Input(str(getattr(s, name)), id=f"set-{name}", type=kind,
                                    compact=True)
            yield Static("", id="settings-error", classes="error-text", markup=False)
            with Horizontal(classes="dialog-buttons"):
                yield Button("Save", variant="primary", id="save-settings", compact=True)
                yield Button("Cancel", id="cancel-settings", compact=True)
        yield Footer(compact=True)

    def on_mount(self) -> None:
        self.query_one("#set-model_path", Input).focus()

    def values(self) -> dict[str, Any]:
        out: dict[str, Any] = {}
        for name, _ in FIELDS:
            widget = self.query_one(f"#set-{name}")
            out[name] = widget.value  # type: ignore[attr-defined]
        return out

    def changes(self) -> dict[str, Any]:
        """Validated changes; raises SettingsError naming the field and the fix."""
        trial = dataclasses.replace(self.settings)
        changed: dict[str, Any] = {}
        for name, value in self.values().items():
            if isinstance(value, str) and name != "model_path":
                value = value.strip()
            trial.set(name, value, source="the settings screen")
            if getattr(trial, name) != getattr(self.settings, name):
                changed[name] = getattr(trial, name)
        if changed.get("ocr"):
            from importlib.util import find_spec

            missing = [pkg for pkg, module in (("rapidocr-onnxruntime", "rapidocr_onnxruntime"),
                                               ("pypdfium2", "pypdfium2"))
                       if find_spec(module) is None]
            if missing:
                raise SettingsError(f"OCR needs {' and '.join(missing)}, not installed.",
                                    hint='pip install "localrag[ocr]", then turn OCR on again')
        if changed.get("model_path"):
            from pathlib import Path

            path = Path(changed["model_path"]).expanduser()
            if not path.is_file():
                raise SettingsError(f"The model file {path} does not exist.",
                                    hint="pick an existing .gguf file (→ completes names)")
        return changed

    def action_save(self) -> None:
        try:
            changed = self.changes()
        except SettingsError as exc:
            self.query_one("#settings-error", Static).update(str(exc))
            return
        self.dismiss(changed)

    def action_cancel(self) -> None:
        self.dismiss(None)

    def action_models(self) -> None:
        """The model picker: the catalogue (download, cancel, resume) and the files here."""
        from tui.screens.models import ModelPickerScreen

        self.app.push_screen(ModelPickerScreen(), self._model_picked)

    def _model_picked(self, path: str | None) -> None:
        if path:
            field = self.query_one("#set-model_path", Input)
            field.value = path
            field.focus()

    def on_button_pressed(self, event: Button.Pressed) -> None:
        event.stop()
        if event.button.id == "save-settings":
            self.action_save()
        elif event.button.id == "open-models":
            self.action_models()
        else:
            self.action_cancel()
