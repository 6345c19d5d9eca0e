"""Path completion for Inputs: suggests the next directory (or file) entry as you type.

The suggestion keeps what the person typed (``~/Doc`` -> ``~/Documents/``); Right arrow
accepts it, as with any Textual suggester.
"""

from __future__ import annotations

import os
from pathlib import Path

from textual.suggester import Suggester


class PathSuggester(Suggester):
    """Suggest existing entries below the typed prefix; folders end with a slash."""

    def __init__(self, *, directories_only: bool = True, suffixes: tuple[str, ...] = ()) -> None:
        super().__init__(use_cache=False, case_sensitive=True)
        self.directories_only = directories_only
        self.suffixes = suffixes

    async def get_suggestion(self, value: str) -> str | None:
        return complete_path(value, directories_only=self.directories_only,
                             suffixes=self.suffixes)


def complete_path(value: str, *, directories_only: bool = True,
                  suffixes: tuple[str, ...] = ()) -> str | None:
    """The first existing entry that extends `value`, or None."""
    if not value:
        return None
    expanded = os.path.expanduser(value)
    head, prefix = os.path.split(expanded)
    folder = Path(head or ".")
    try:
        entries = sorted(os.scandir(folder), key=lambda e: e.name)
    except OSError:
        return None
    show_hidden = prefix.startswith(".")
    for entry in entries:
        name = entry.name
        if not name.startswith(prefix) or name == prefix and not _is_dir(entry):
            continue
        if name.startswith(".") and not show_hidden:
            continue
        is_dir = _is_dir(entry)
        if not is_dir and (directories_only or (suffixes and not name.endswith(suffixes))):
            continue
        completed = name + ("/" if is_dir else "")
        if completed == prefix:
            continue
        return value + completed[len(prefix):]
    return None


def _is_dir(entry: os.DirEntry[str]) -> bool:
    try:
        return entry.is_dir()
    except OSError:
        return False
