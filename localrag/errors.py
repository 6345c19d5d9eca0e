"""The one error hierarchy whose messages are written for people.

The indexer and the model backends may not import `localrag` (see ARCHITECTURE.md), so
they each own a base class (`indexer.errors.IndexerError`, `models.errors.ModelError`)
with the same shape: a message saying what happened, naming the file, and a hint saying
how to fix it. `USER_ERRORS` is the tuple the CLI (exit code 2) and the TUI (one
notification area) catch; anything else is a bug.
"""

from __future__ import annotations

from indexer.errors import IndexerError
from models.errors import ModelError


class LocalragError(Exception):
    """Base class of errors raised by the application core."""

    def __init__(self, message: str, *, hint: str | None = None) -> None:
        super().__init__(message)
        self.message = message
        self.hint = hint

    def __str__(self) -> str:
        return f"{self.message}\n  fix: {self.hint}" if self.hint else self.message


class SettingsError(LocalragError):
    """The settings file or a command-line option is invalid."""


class AnswerCancelled(LocalragError):
    """The person cancelled a running answer."""


class OfflineError(LocalragError):
    """A download was asked for while the person keeps localrag offline."""


USER_ERRORS: tuple[type[Exception], ...] = (LocalragError, IndexerError, ModelError)


def describe(error: BaseException) -> str:
    """One human-readable line (or two, with the fix) for any user-facing error."""
    return str(error)
