"""The app's screen as plain text lines (what a person sees), for Pilot tests."""

from __future__ import annotations


def screen_lines(app) -> list[str]:
    """Every row of the current screen as text (trailing spaces removed)."""
    strips = app.screen._compositor.render_strips()
    return [strip.text.rstrip() for strip in strips]


def screen_text(app) -> str:
    return "\n".join(screen_lines(app))


async def still(pilot, focus) -> None:
    """Make the screen a still picture before a snapshot is taken.

    An Input's cursor blinks: a timer toggles it every 0.5 s while the Input has focus, so
    a snapshot taken after a slow step (a loaded machine, a cold cache) caught the cursor
    off and differed from the recorded SVG in style only. Every Input and TextArea gets a
    steady cursor; the focus goes where the test says (`focus`: a selector or a widget
    on the current screen, None for no focus); no notification is left on screen and no
    animation or refresh is pending."""
    app = pilot.app
    for screen in app.screen_stack:
        for widget in screen.query("Input, TextArea"):
            widget.cursor_blink = False          # also shows the cursor, steadily
    if focus is None:
        app.screen.set_focus(None)
    else:
        (app.screen.query_one(focus) if isinstance(focus, str) else focus).focus()
    app.clear_notifications()
    await pilot.wait_for_scheduled_animations()
    await pilot.pause()
    assert app.focused is (None if focus is None else
                           app.screen.query_one(focus) if isinstance(focus, str) else focus)
