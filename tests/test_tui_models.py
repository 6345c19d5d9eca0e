"""The app's model picker (Settings > Models…): a real download from the local stand-in for
the Hugging Face Hub (tests/hub_server.py), with progress, the chat answering meanwhile,
cancel, resume, and Use. The index and the answer engine are tests/tui_fakes.py's; the
pull is the real Assistant.pull_model."""

from __future__ import annotations

import sys
import time
from pathlib import Path

import pytest

sys.path.insert(0, str(Path(__file__).parent))

import huggingface_hub.constants  # noqa: E402,F401  (imported offline, as in the app)

from conftest_models import test_gguf_factory, tiny_gguf  # noqa: E402,F401  (fixtures)
from hub_server import HubServer  # noqa: E402
from localrag.settings import Settings  # noqa: E402
from models.catalogue import find_entry  # noqa: E402
from tui.app import create_app  # noqa: E402
from tui.screens.models import ModelPickerScreen  # noqa: E402
from tui.screens.settings import SettingsScreen  # noqa: E402
from tui.widgets.answer_view import SegmentLine  # noqa: E402
from tui_fakes import FakeAssistant  # noqa: E402

pytestmark = pytest.mark.asyncio
DEFAULT = find_entry("selfrag-7b")


async def until(pilot, condition, timeout: float = 60.0) -> None:
    deadline = time.monotonic() + timeout
    while not condition():
        assert time.monotonic() < deadline, "timed out"
        await pilot.pause(0.05)


def text(widget) -> str:
    return str(widget.render())


async def open_picker(pilot) -> ModelPickerScreen:
    app = pilot.app
    if not isinstance(app.screen, SettingsScreen):
        await pilot.press("f4")
        await until(pilot, lambda: isinstance(app.screen, SettingsScreen))
    await pilot.click("#open-models")
    await until(pilot, lambda: isinstance(app.screen, ModelPickerScreen)
                and app.screen.overview is not None)
    return app.screen


async def test_picker_downloads_while_the_chat_answers_cancels_resumes_and_uses(
        tmp_path, tiny_gguf, monkeypatch):
    monkeypatch.setenv("HF_HUB_OFFLINE", "0")
    with HubServer() as hub:
        monkeypatch.setenv("HF_ENDPOINT", hub.endpoint)
        hub.state.add(DEFAULT.repo, DEFAULT.filename, tiny_gguf.read_bytes())
        hub.state.stall_after = 3_000_000               # the transfer waits here
        fake = FakeAssistant(tmp_path / "data")
        app = create_app(fake, first_run_screen=False)
        async with app.run_test(size=(100, 40)) as pilot:
            await app.workers.wait_for_complete()
            picker = await open_picker(pilot)
            first = picker.query_one("#models-list").highlighted_option
            assert first.id == f"cat:{DEFAULT.name}" and "not installed" in str(first.prompt)
            await pilot.press("d")
            part = fake.paths.models_dir / (DEFAULT.filename + ".part")
            await until(pilot, lambda: app.pull_progress is not None
                        and app.pull_progress.done_bytes >= 2**20
                        and part.is_file() and part.stat().st_size >= 2 * 2**20)
            figures = text(picker.query_one("#pull-figures"))
            assert "MB of 17.4 MB" in figures and "/s" in figures
            assert picker.query_one("#pull-bar").progress > 0
            assert picker.query_one("#pull-start").disabled          # one download at a time
            assert not picker.query_one("#pull-cancel").disabled

            # the chat stays usable: close the dialogs, ask, get the whole answer
            await pilot.press("escape")
            await pilot.press("escape")
            await until(pilot, lambda: not isinstance(app.screen, SettingsScreen))
            assert text(app.screen.query_one("#index-status")).startswith(
                "downloading selfrag-7b")
            await pilot.click("#question")
            for ch in "tomatoes?":
                await pilot.press(ch)
            await pilot.press("enter")
            await until(pilot, lambda: fake.answers and not app.answering)
            view = list(app._turns.values())[-1]
            assert len(view.query(SegmentLine)) == 5
            assert app.pulling == DEFAULT.name                 # still downloading

            # cancel: the part stays, the picker offers Resume
            app.action_cancel_pull()
            hub.state.stall_after = None
            hub.state.release.set()
            await until(pilot, lambda: app.pulling is None)
            kept = part.stat().st_size
            assert 0 < kept < tiny_gguf.stat().st_size
            assert "stopped at" in app.pull_result and not (fake.paths.models_dir
                                                            / DEFAULT.filename).exists()
            picker = await open_picker(pilot)
            state = str(picker.query_one("#models-list").highlighted_option.prompt)
            assert "partly downloaded" in state and "resume" in state
            assert str(picker.query_one("#pull-start").label) == "Resume"

            # resume to the end, then Use it and save the settings
            hub.state.requests.clear()
            await pilot.press("d")
            await until(pilot, lambda: app.pulling is None)
            assert "installed" in app.pull_result and "checks passed" in app.pull_result
            assert [r.range for r in hub.state.requests if r.method == "GET"] == [
                f"bytes={kept}-"]
            installed = (fake.paths.models_dir / DEFAULT.filename).resolve()
            assert installed.read_bytes() == tiny_gguf.read_bytes()
            await until(pilot, lambda: "installed" in str(
                picker.query_one("#models-list").highlighted_option.prompt))
            assert not picker.query_one("#model-use").disabled
            await pilot.press("u")
            await until(pilot, lambda: isinstance(app.screen, SettingsScreen))
            assert app.screen.query_one("#set-model_path").value == str(installed)
            await pilot.press("ctrl+s")
            await until(pilot, lambda: Settings.load(fake.paths.settings_file).model_path
                        == str(installed))
            await until(pilot, lambda: fake.loaded is not None
                        and fake.loaded.path == str(installed))


async def test_a_failed_download_is_a_message_not_a_traceback(tmp_path, monkeypatch):
    monkeypatch.setenv("HF_HUB_OFFLINE", "1")             # the person keeps it offline
    fake = FakeAssistant(tmp_path / "data")
    app = create_app(fake, first_run_screen=False)
    async with app.run_test(size=(100, 40)) as pilot:
        await app.workers.wait_for_complete()
        picker = await open_picker(pilot)
        await pilot.press("d")
        await until(pilot, lambda: app.pulling is None and app.pull_result)
        assert "localrag is offline (HF_HUB_OFFLINE=1 is set)" in app.last_error
        assert "Unexpected" not in app.last_error
        assert "offline" in text(picker.query_one("#pull-figures"))
