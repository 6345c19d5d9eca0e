"""The Textual app: chat over your files, sources, index and settings.

The app talks only to the `Assistant` facade. Everything slow (model loading, answering,
indexing, the watcher) runs in thread workers that post typed messages (tui.messages);
the UI thread only updates widgets. Errors go to one place, `show_error`: the messages of
USER_ERRORS as they are, anything else as a short message plus the log file's name.
"""

from __future__ import annotations

import logging
import subprocess
import threading
import time
from collections.abc import Iterable
from pathlib import Path
from typing import Any

from textual import work
from textual.app import App, SystemCommand
from textual.binding import Binding
from textual.screen import Screen

from indexer.records import IndexProgress, IndexStatus, Passage
from localrag.answering.label.answer import Answer
from localrag.assistant import Assistant, ModelDescription
from localrag.errors import USER_ERRORS, AnswerCancelled, describe
from localrag.answering.label.render import answer_to_markdown
from tui.messages import (AnswerDone, AnswerStopped, CitationSelected, FilesChanged,
                          IndexFinished, IndexProgressed, IndexStatusChanged, ModelFailed,
                          DecisionReady, ModelLoaded, ProblemFilesLoaded, PullFinished,
                          PullProgressed, SegmentReady, ShowError)
from tui.screens.add_folder import AddFolderScreen
from tui.screens.chat import ChatScreen
from tui.screens.chats import ChatsScreen
from tui.screens.index import IndexScreen
from tui.screens.settings import SettingsScreen
from tui.screens.source import SourceScreen, open_command
from tui.widgets.answer_view import TurnView
from tui.widgets.index_view import report_summary, watch_summary

log = logging.getLogger("localrag.tui")

PROGRESS_INTERVAL_S = 0.1
"""At most ~10 progress updates per second reach the UI; faster ones are collapsed."""

MODEL_KEYS = {"model_path", "n_gpu_layers", "n_threads", "n_ctx"}


class LocalragApp(App[None]):
    TITLE = "localrag"
    CSS_PATH = "app.tcss"
    BINDINGS = [
        Binding("ctrl+t", "toggle_theme", "Theme"),
    ]
    HORIZONTAL_BREAKPOINTS = [(0, "-narrow"), (100, "-wide")]
    """Below 100 columns dialogs such as the source panel take the whole screen."""
    VERTICAL_BREAKPOINTS = [(0, "-short"), (40, "-tall")]
    """Below 40 rows the source panel drops its blank rows."""

    def __init__(self, assistant: Assistant, *, load_model: bool = True,
                 first_run_screen: bool = True) -> None:
        super().__init__()
        self.assistant = assistant
        self._load_model_at_start = load_model
        self._first_run_screen = first_run_screen
        try:
            self.theme = assistant.settings.theme or "textual-dark"
        except Exception:           # an unknown theme name in the settings file
            self.theme = "textual-dark"
        self.sub_title = str(assistant.paths.data_dir)
        # answering
        self._turn_counter = 0
        self._turns: dict[int, TurnView] = {}
        self._answer_cancel: threading.Event | None = None
        self._running_turn: int | None = None
        self.model_description: ModelDescription | None = None
        self.model_error: str | None = None
        self.model_loading = False
        # indexing
        self.index_status: IndexStatus | None = None
        self.index_progress: IndexProgress | None = None
        self.index_result: str = ""
        self.indexing = False
        self.index_paused = False
        self._index_cancel: threading.Event | None = None
        self._index_resume = threading.Event()
        self._index_resume.set()
        self._last_progress_post = 0.0
        self.progress_updates_shown = 0
        self.watch_lines: list[str] = []
        # model download (settings > model picker)
        self.pulling: str | None = None          # the catalogue name being downloaded
        self.pull_progress: Any = None           # models.pull.PullProgress
        self.pull_result: str = ""               # how the last download ended, in words
        self._pull_cancel: threading.Event | None = None
        self.last_error: str | None = None
        self.last_export: Path | None = None

    # -- screens -------------------------------------------------------------------------
    def get_default_screen(self) -> Screen[Any]:
        return ChatScreen(id="chat")

    @property
    def chat_screen(self) -> ChatScreen:
        return self.screen_stack[0]  # type: ignore[return-value]

    def on_mount(self) -> None:
        self._startup()
        if self._load_model_at_start:
            self.load_model()

    def on_unmount(self) -> None:
        for event in (self._answer_cancel, self._index_cancel, self._pull_cancel):
            if event is not None:
                event.set()
        self._index_resume.set()
        try:
            self.assistant.stop_watching()
        except Exception:        # closing must not fail because the watcher did
            log.exception("stopping the watcher")

    def get_system_commands(self, screen: Screen[Any]) -> Iterable[SystemCommand]:
        yield from super().get_system_commands(screen)
        yield SystemCommand("New chat", "Start a new conversation (ctrl+n)", self.action_new_chat)
        yield SystemCommand("Saved chats", "Reopen a saved chat (f2)", self.action_show_chats)
        yield SystemCommand("Index", "Folders, progress, files in error (f3)", self.action_show_index)
        yield SystemCommand("Settings", "Model, retrieval, weights (f4)", self.action_show_settings)
        yield SystemCommand("Add folder", "Add a folder to the index", self.action_add_folder)
        yield SystemCommand("Update index", "Re-scan every folder now", self.action_update_index)
        yield SystemCommand("Export answer", "Save the last answer as Markdown (ctrl+s)",
                            self.action_export_answer)
        yield SystemCommand("Cancel answer", "Stop the running answer (esc)", self.action_cancel_answer)
        yield SystemCommand("Toggle dark/light", "Switch theme (ctrl+t)", self.action_toggle_theme)

    # -- errors: the one place -------------------------------------------------------------
    def show_error(self, error: BaseException, *, context: str = "") -> None:
        if isinstance(error, USER_ERRORS):
            message = describe(error)
        else:
            self.log_unexpected(error)
            message = (f"Unexpected error: {type(error).__name__}: {error}\n"
                       f"(details in {self.log_file})")
        self.last_error = message
        self.notify(message, title=context or "Error", severity="error", timeout=15,
                    markup=False)

    def log_unexpected(self, error: BaseException) -> None:
        log.error("unexpected error", exc_info=(type(error), error, error.__traceback__))

    @property
    def log_file(self) -> Path:
        return self.assistant.paths.data_dir / "localrag-tui.log"

    def on_show_error(self, message: ShowError) -> None:
        self.show_error(message.error, context=message.context)

    # -- startup: index status, first run, watcher -------------------------------------------
    @work(thread=True, group="startup", exit_on_error=False)
    def _startup(self) -> None:
        try:
            status = self.assistant.status()
        except Exception as exc:
            self.post_message(ShowError(exc, context="Opening the index"))
            return
        self.post_message(IndexStatusChanged(status))
        if not status.roots and self._first_run_screen:
            self.call_from_thread(self._ask_first_folder)
        elif status.roots:
            self._start_watching()

    def _ask_first_folder(self) -> None:
        self.push_screen(AddFolderScreen(first_run=True), self._folder_chosen)

    def _start_watching(self) -> None:
        """Runs in a worker thread: (re)start the folder watcher if the settings want it."""
        if not self.assistant.settings.watch:
            return
        try:
            self.assistant.start_watching(
                lambda event: self.post_message(FilesChanged(event)),
                on_error=lambda exc: self.post_message(ShowError(exc, context="Folder watcher")),
            )
        except Exception as exc:
            self.post_message(ShowError(exc, context="Folder watcher"))

    # -- the model ---------------------------------------------------------------------------
    def load_model(self) -> None:
        self.model_description = None
        self.model_error = None
        self.model_loading = True
        self._refresh_model_views()
        self._load_model_worker()

    def _refresh_model_views(self) -> None:
        if self.screen_stack and self.chat_screen.is_mounted:
            self.chat_screen.refresh_model_state()

    @work(thread=True, exclusive=True, group="model", exit_on_error=False)
    def _load_model_worker(self) -> None:
        try:
            description = self.assistant.load_model()
        except Exception as exc:
            self.post_message(ModelFailed(exc))
        else:
            self.post_message(ModelLoaded(description))

    def on_model_loaded(self, message: ModelLoaded) -> None:
        self.model_description = message.description
        self.model_loading = False
        self._refresh_model_views()

    def on_model_failed(self, message: ModelFailed) -> None:
        first_line = describe(message.error).splitlines()[0] if isinstance(
            message.error, USER_ERRORS) else f"{type(message.error).__name__}: {message.error}"
        self.model_error = first_line
        self.model_loading = False
        self._refresh_model_views()
        self.show_error(message.error, context="Loading the model")

    # -- answering ---------------------------------------------------------------------------
    def ask(self, question: str) -> int:
        """Start answering `question` (cancelling a running answer); returns its turn id."""
        if self._answer_cancel is not None:
            self._answer_cancel.set()
        self._turn_counter += 1
        turn_id = self._turn_counter
        view = TurnView(question, turn_id=turn_id)
        self._turns[turn_id] = view
        self.chat_screen.add_turn(view)
        cancel = threading.Event()
        self._answer_cancel = cancel
        self._running_turn = turn_id
        self._answer_worker(question, turn_id, cancel)
        self.chat_screen.refresh_bindings()
        return turn_id

    @work(thread=True, exclusive=True, group="answer", exit_on_error=False)
    def _answer_worker(self, question: str, turn_id: int, cancel: threading.Event) -> None:
        try:
            answer = self.assistant.ask(
                question, cancel=cancel,
                on_segment=lambda seg: self.post_message(SegmentReady(turn_id, seg)),
                on_decision=lambda d: self.post_message(DecisionReady(turn_id, d)))
        except AnswerCancelled:
            self.post_message(AnswerStopped(turn_id, cancelled=True))
        except Exception as exc:
            self.post_message(AnswerStopped(turn_id, cancelled=cancel.is_set(), error=exc))
        else:
            self.post_message(AnswerDone(turn_id, answer))

    def on_decision_ready(self, message: DecisionReady) -> None:
        view = self._turns.get(message.turn_id)
        if view is not None:
            view.show_decision(message.decision)

    def on_segment_ready(self, message: SegmentReady) -> None:
        view = self._turns.get(message.turn_id)
        if view is not None:
            view.add_segment(message.segment)      # the anchored log follows (chat.py)

    def on_answer_done(self, message: AnswerDone) -> None:
        view = self._turns.get(message.turn_id)
        if view is not None:
            view.show_answer(message.answer)
        self._answer_finished(message.turn_id)

    def on_answer_stopped(self, message: AnswerStopped) -> None:
        view = self._turns.get(message.turn_id)
        error = message.error
        if view is not None:
            if message.cancelled:
                view.stop(cancelled=True)
            else:
                text = describe(error).splitlines()[0] if isinstance(error, USER_ERRORS) else "unexpected error"
                view.stop(cancelled=False, message=text)
        if error is not None and not message.cancelled:
            self.show_error(error, context="Answering")
        self._answer_finished(message.turn_id)

    def _answer_finished(self, turn_id: int) -> None:
        if self._running_turn == turn_id:
            self._running_turn = None
            self._answer_cancel = None
            self.chat_screen.refresh_bindings()

    @property
    def answering(self) -> bool:
        return self._running_turn is not None

    def action_cancel_answer(self) -> None:
        if self._answer_cancel is not None and self._running_turn is not None:
            self._answer_cancel.set()
            self.notify("Cancelling the answer…", timeout=2)

    def on_citation_selected(self, message: CitationSelected) -> None:
        self.push_screen(SourceScreen(message.answer, message.index, line=message.line,
                                      quote=message.quote))

    def open_citation(self, answer: Answer, index: int, *, line: int | None = None,
                      quote: str = "") -> None:
        self.push_screen(SourceScreen(answer, index, line=line, quote=quote))

    def open_passage(self, passage: Passage) -> None:
        """Open the cited file at its line ($EDITOR) or page (system opener)."""
        command, in_terminal = open_command(passage)
        try:
            if in_terminal:
                try:
                    with self.suspend():
                        subprocess.call(command)
                except Exception as exc:
                    if type(exc).__name__ != "SuspendNotSupported":
                        raise
                    subprocess.Popen(command, stdin=subprocess.DEVNULL,
                                     stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
            else:
                subprocess.Popen(command, stdin=subprocess.DEVNULL, stdout=subprocess.DEVNULL,
                                 stderr=subprocess.DEVNULL, start_new_session=True)
                self.notify(f"Opened {passage.path} with {command[0]}", timeout=4,
                            markup=False)
        except FileNotFoundError as exc:
            from localrag.errors import LocalragError

            self.show_error(LocalragError(
                f"Cannot open {passage.path}: the program {command[0]!r} was not found.",
                hint="set $EDITOR (e.g. export EDITOR=nano) or install xdg-utils"),
                context="Opening the file")
            log.debug("open failed", exc_info=exc)

    # -- chats and export ----------------------------------------------------------------------
    def action_new_chat(self) -> None:
        self.action_cancel_answer()
        self.assistant.new_chat()
        self._turns.clear()
        self.chat_screen.clear_turns()
        self.notify("New chat", timeout=2)

    def action_show_chats(self) -> None:
        try:
            chats = self.assistant.chats()
        except Exception as exc:
            self.show_error(exc, context="Saved chats")
            return
        self.push_screen(ChatsScreen(chats), self._chat_chosen)

    def _chat_chosen(self, chat_id: int | None) -> None:
        if chat_id is None:
            return
        self.open_chat(chat_id)

    def open_chat(self, chat_id: int) -> None:
        from tui.history import answer_from_json

        self.action_cancel_answer()
        try:
            turns = self.assistant.open_chat(chat_id)
        except Exception as exc:
            self.show_error(exc, context="Opening the chat")
            return
        self._turns.clear()
        screen = self.chat_screen
        screen.clear_turns()
        for turn in turns:
            self._turn_counter += 1
            view = TurnView(turn.question, turn_id=self._turn_counter)
            self._turns[self._turn_counter] = view
            screen.add_turn(view)
            try:
                answer = answer_from_json(turn.answer_json)
            except Exception as exc:     # an old or damaged row: show what we can
                self.log_unexpected(exc)
                view.stop(cancelled=False, message="cannot read this answer")
                continue
            view.show_answer(answer)

    def last_answer(self) -> Answer | None:
        focused = self.focused
        while focused is not None and not isinstance(focused, TurnView):
            focused = focused.parent  # type: ignore[assignment]
        if isinstance(focused, TurnView) and focused.answer is not None:
            return focused.answer
        for view in reversed(list(self._turns.values())):
            if view.answer is not None:
                return view.answer
        return None

    def action_export_answer(self) -> None:
        answer = self.last_answer()
        if answer is None:
            self.notify("No answer to export yet.", timeout=3)
            return
        folder = self.assistant.paths.data_dir / "exports"
        try:
            folder.mkdir(parents=True, exist_ok=True)
            path = folder / time.strftime("answer-%Y%m%d-%H%M%S.md")
            n = 1
            while path.exists():
                n += 1
                path = folder / time.strftime(f"answer-%Y%m%d-%H%M%S-{n}.md")
            path.write_text(answer_to_markdown(answer), encoding="utf-8")
        except OSError as exc:
            from localrag.errors import LocalragError

            self.show_error(LocalragError(f"Cannot write the export to {folder}: {exc}",
                                          hint="check free space and permissions"),
                            context="Export")
            return
        self.last_export = path
        self.notify(f"Answer exported as Markdown to {path}", title="Exported", timeout=8,
                    markup=False)

    # -- index ---------------------------------------------------------------------------------
    def action_show_index(self) -> None:
        if not isinstance(self.screen, IndexScreen):
            self.push_screen(IndexScreen())

    def action_add_folder(self) -> None:
        self.push_screen(AddFolderScreen(), self._folder_chosen)

    def _folder_chosen(self, path: str | None) -> None:
        if path:
            self.start_indexing(add=path)

    def action_update_index(self) -> None:
        self.start_indexing()

    def start_indexing(self, *, add: str | None = None) -> None:
        if self._index_cancel is not None:
            self._index_cancel.set()          # the new run covers every folder
        self._index_resume.set()
        self.indexing = True
        self.index_paused = False
        self.index_progress = None
        self.index_result = ""
        cancel = threading.Event()
        self._index_cancel = cancel
        self._refresh_index_views()
        self._index_worker(add, cancel)

    @work(thread=True, exclusive=True, group="index", exit_on_error=False)
    def _index_worker(self, add: str | None, cancel: threading.Event) -> None:
        try:
            if add:
                self.assistant.add_root(add)
                self.post_message(IndexStatusChanged(self.assistant.status()))
            report = self.assistant.update_index(
                progress=lambda p: self._on_progress(p, cancel), cancel=cancel)
        except Exception as exc:
            self.post_message(IndexFinished(None, error=exc))
        else:
            self.post_message(IndexFinished(report))
        finally:
            try:
                self.post_message(IndexStatusChanged(self.assistant.status()))
            except Exception as exc:
                self.post_message(ShowError(exc, context="Index status"))
        if not cancel.is_set():
            self._start_watching()          # new roots are watched too

    def _on_progress(self, progress: IndexProgress, cancel: threading.Event) -> None:
        """Called by the indexer thread: pause here while paused; collapse fast updates."""
        while not self._index_resume.wait(0.2):
            if cancel.is_set():
                break
        now = time.monotonic()
        if progress.phase == "done" or now - self._last_progress_post >= PROGRESS_INTERVAL_S:
            self._last_progress_post = now
            self.post_message(IndexProgressed(progress))

    def on_index_progressed(self, message: IndexProgressed) -> None:
        if not self.indexing:
            return
        self.index_progress = message.progress
        self.progress_updates_shown += 1
        self._refresh_index_views()

    def on_index_finished(self, message: IndexFinished) -> None:
        self.indexing = False
        self.index_paused = False
        self._index_cancel = None
        if message.error is not None:
            self.index_result = "Indexing failed: " + (
                describe(message.error).splitlines()[0]
                if isinstance(message.error, USER_ERRORS) else "unexpected error")
            self.show_error(message.error, context="Indexing")
        elif message.report is not None:
            self.index_result = report_summary(message.report)
            self.notify(self.index_result, title="Index", timeout=6)
        self._refresh_index_views()

    def on_index_status_changed(self, message: IndexStatusChanged) -> None:
        self.index_status = message.status
        self._refresh_index_views()

    def on_files_changed(self, message: FilesChanged) -> None:
        line = watch_summary(message.event)
        self.watch_lines.append(time.strftime("%H:%M:%S ") + line)
        del self.watch_lines[:-200]
        for screen in self.screen_stack:
            if isinstance(screen, IndexScreen):
                screen.add_watch_line(self.watch_lines[-1])
        r = message.event.report
        if r.added + r.updated + r.removed + r.moved:
            self.notify(line, title="Watcher", timeout=4, markup=False)
        for problem in message.event.report.problems[:3]:
            self.notify(f"{problem.path}: {problem.reason}", severity="warning", timeout=8,
                        markup=False)
        self._refresh_status_later()

    @work(thread=True, exclusive=True, group="status", exit_on_error=False)
    def _refresh_status_later(self) -> None:
        try:
            self.post_message(IndexStatusChanged(self.assistant.status()))
        except Exception as exc:
            self.post_message(ShowError(exc, context="Index status"))

    def load_problem_page(self, state: str, kind: str, offset: int, limit: int) -> None:
        """Fetch more files of one group of the index screen's tree (in a worker)."""
        self._problem_page_worker(state, kind, offset, limit)

    @work(thread=True, group="problems", exit_on_error=False)
    def _problem_page_worker(self, state: str, kind: str, offset: int, limit: int) -> None:
        try:
            files = self.assistant.problem_files(state, kind, offset=offset, limit=limit)
        except Exception as exc:
            self.post_message(ShowError(exc, context="Index status"))
            return
        self.post_message(ProblemFilesLoaded(state, kind, offset, files))

    def on_problem_files_loaded(self, message: ProblemFilesLoaded) -> None:
        for screen in self.screen_stack:
            if isinstance(screen, IndexScreen) and screen.is_mounted:
                screen.add_problem_page(message)

    def _refresh_index_views(self) -> None:
        for screen in self.screen_stack:
            refresh = getattr(screen, "refresh_index_state", None)
            if refresh is not None and screen.is_mounted:
                refresh()

    def action_pause_index(self) -> None:
        if not self.indexing:
            self.notify("No index run to pause.", timeout=3)
            return
        if self.index_paused:
            self.index_paused = False
            self._index_resume.set()
        else:
            self.index_paused = True
            self._index_resume.clear()
        self._refresh_index_views()

    def action_cancel_index(self) -> None:
        if self._index_cancel is None:
            self.notify("No index run to cancel.", timeout=3)
            return
        self._index_cancel.set()
        self._index_resume.set()
        self.notify("Cancelling the index run…", timeout=3)

    def remove_root(self, path: str) -> None:
        self._remove_root_worker(path)

    @work(thread=True, group="index-remove", exit_on_error=False)
    def _remove_root_worker(self, path: str) -> None:
        try:
            removed = self.assistant.remove_root(path)
            self.post_message(IndexStatusChanged(self.assistant.status()))
        except Exception as exc:
            self.post_message(ShowError(exc, context="Removing the folder"))
            return
        self.call_from_thread(self.notify, f"Removed {path} ({removed} files)", timeout=5,
                              markup=False)
        self._start_watching()

    # -- model download --------------------------------------------------------------------------
    def start_pull(self, name: str) -> None:
        """Download catalogue model `name` in a worker (resumes a partial download)."""
        if self.pulling:
            self.notify(f"Already downloading {self.pulling}.", timeout=3, markup=False)
            return
        self.pulling = name
        self.pull_progress = None
        self.pull_result = ""
        cancel = threading.Event()
        self._pull_cancel = cancel
        self._refresh_pull_views()
        self._pull_worker(name, cancel)

    @work(thread=True, exclusive=True, group="pull", exit_on_error=False)
    def _pull_worker(self, name: str, cancel: threading.Event) -> None:
        from models.errors import PullCancelled

        try:
            result = self.assistant.pull_model(
                name, cancel=cancel, progress=lambda p: self.post_message(PullProgressed(p)))
        except PullCancelled as exc:
            self.post_message(PullFinished(name, None, cancelled=True, error=exc))
        except Exception as exc:
            self.post_message(PullFinished(name, None, error=exc))
        else:
            self.post_message(PullFinished(name, result))

    def on_pull_progressed(self, message: PullProgressed) -> None:
        if self.pulling is None:
            return
        self.pull_progress = message.progress
        self._refresh_pull_views()

    def on_pull_finished(self, message: PullFinished) -> None:
        from models.catalogue import format_size

        self.pulling = None
        self._pull_cancel = None
        self.pull_progress = None
        if message.result is not None:
            r = message.result
            self.pull_result = (f"{message.name}: installed {r.path.name} "
                                f"({format_size(r.info.size_bytes)}, checks passed)")
            self.notify(f"{self.pull_result}. Pick it with Use in Settings > Models.",
                        title="Model downloaded", timeout=8, markup=False)
        elif message.cancelled:
            self.pull_result = describe(message.error).splitlines()[0] if message.error \
                else f"{message.name}: download cancelled"
            self.notify(self.pull_result + " Download again to resume.", title="Download",
                        timeout=6, markup=False)
        else:
            error = message.error or RuntimeError("download failed")
            self.pull_result = f"{message.name}: " + (
                describe(error).splitlines()[0] if isinstance(error, USER_ERRORS)
                else "unexpected error")
            self.show_error(error, context="Downloading the model")
        self._refresh_pull_views(reload=True)

    def action_cancel_pull(self) -> None:
        if self._pull_cancel is None:
            self.notify("No download to cancel.", timeout=3)
            return
        self._pull_cancel.set()
        self.notify("Cancelling the download (the part is kept)…", timeout=3)

    def _refresh_pull_views(self, *, reload: bool = False) -> None:
        for screen in self.screen_stack:
            if not screen.is_mounted:
                continue
            if reload and hasattr(screen, "reload_models"):
                screen.reload_models()
            refresh = getattr(screen, "refresh_pull_state", None)
            if refresh is not None:
                refresh()
        if self.screen_stack and self.chat_screen.is_mounted:
            self.chat_screen.refresh_index_state()

    # -- settings and theme ----------------------------------------------------------------------
    def action_show_settings(self) -> None:
        self.push_screen(SettingsScreen(self.assistant.settings), self._settings_chosen)

    def _settings_chosen(self, changes: dict[str, Any] | None) -> None:
        if changes:
            self._apply_settings(changes)

    @work(thread=True, exclusive=True, group="settings", exit_on_error=False)
    def _apply_settings(self, changes: dict[str, Any]) -> None:
        try:
            self.assistant.update_settings(**changes)
        except Exception as exc:
            self.post_message(ShowError(exc, context="Saving settings"))
            return
        self.call_from_thread(self.notify, f"Settings saved to {self.assistant.paths.settings_file}",
                              timeout=5, markup=False)
        if MODEL_KEYS & changes.keys():
            self.call_from_thread(self.load_model)

    def action_toggle_theme(self) -> None:
        self.theme = "textual-light" if self.theme == "textual-dark" else "textual-dark"
        try:
            self.assistant.settings.set("theme", self.theme)
            self.assistant.save_settings()
        except Exception as exc:
            self.show_error(exc, context="Saving the theme")


def create_app(assistant: Assistant, *, load_model: bool = True,
               first_run_screen: bool = True) -> LocalragApp:
    """The app over `assistant` (shared by the CLI and the tests)."""
    _log_to(assistant.paths.data_dir / "localrag-tui.log")
    return LocalragApp(assistant, load_model=load_model, first_run_screen=first_run_screen)


_file_handler: logging.FileHandler | None = None


def _log_to(path: Path) -> None:
    """Send the app's log to `path` (one handler: the latest app's data directory)."""
    global _file_handler
    logger = logging.getLogger("localrag")
    if _file_handler is not None:
        if Path(_file_handler.baseFilename) == path.resolve():
            return
        logger.removeHandler(_file_handler)
        _file_handler.close()
    handler = _file_handler = logging.FileHandler(path, encoding="utf-8", delay=True)
    handler.setFormatter(logging.Formatter("%(asctime)s %(levelname)s %(name)s: %(message)s"))
    logger.addHandler(handler)
    logger.setLevel(logging.INFO)


def run(data_dir: str | None = None) -> None:
    """Open the data directory and run the app (what `localrag` with no arguments does)."""
    import sys

    try:
        assistant = Assistant.open(data_dir)
    except USER_ERRORS as exc:
        print(f"localrag: {describe(exc)}", file=sys.stderr)
        raise SystemExit(2) from exc
    try:
        create_app(assistant).run()
    finally:
        assistant.close()
