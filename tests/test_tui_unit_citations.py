"""The source panel and `e` for passages cited by a unit without a line (a slide, a sheet
range, a message): the panel shows the unit's text under its name; `e` hands the file to
the system's program, even with $EDITOR set (an editor cannot open a .pptx at a line)."""

from __future__ import annotations

import dataclasses
import sys
from pathlib import Path

import pytest

sys.path.insert(0, str(Path(__file__).parent))

from tui.app import create_app  # noqa: E402
from tui.screens.source import SourceScreen  # noqa: E402
from tui_fakes import FakeAssistant, canned_answer, canned_passages  # noqa: E402

pytestmark = pytest.mark.asyncio


@pytest.mark.parametrize("path,title", [
    ("/docs/deck.pptx", "deck.pptx > Slide 3: Roadmap"),
    ("/docs/money.xlsx", "money.xlsx > Budget > A1:F20"),
])
async def test_unit_citation_panel_and_system_opener(tmp_path, monkeypatch, path, title):
    import tui.app as app_module

    launched: list[list[str]] = []

    class Recorder:
        def __init__(self, command, **kwargs):  # noqa: ANN001, ANN003
            launched.append(list(command))

    monkeypatch.setattr(app_module.subprocess, "Popen", Recorder)
    monkeypatch.setenv("EDITOR", "vim")
    passages = canned_passages()
    passages[0] = dataclasses.replace(passages[0], path=path, title=title, start_line=None,
                                      end_line=None, page=None, text="Ship the beta in May.")
    answer = canned_answer("when is the beta?", passages)
    app = create_app(FakeAssistant(tmp_path / "data"), first_run_screen=False)
    async with app.run_test(size=(100, 30)) as pilot:
        screen = SourceScreen(answer, 0)
        app.push_screen(screen)
        for _ in range(100):
            if screen.shown:
                break
            await pilot.pause(0.02)
        assert screen.shown
        assert title in str(screen.query_one(".dialog-title").render())
        assert "Ship the beta in May." in str(screen.query_one("#source-body").render())
        await pilot.press("e")
        await pilot.pause()
    assert launched and launched[0][-1] == path and "vim" not in launched[0]
