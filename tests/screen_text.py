"""The app's screen as plain text lines (what a person sees), for Pilot tests."""

from __future__ import annotations


def screen_lines(app) -> list[str]:
    """Every row of the current screen as text (trailing spaces removed)."""
    strips = app.screen._compositor.render_strips()
    return [strip.text.rstrip() for strip in strips]


def screen_text(app) -> str:
    return "\n".join(screen_lines(app))
