"""Errors of the language-model backends, with messages written for people."""

from __future__ import annotations


class ModelError(Exception):
    """Base class of model errors shown to people."""

    def __init__(self, message: str, *, hint: str | None = None) -> None:
        super().__init__(message)
        self.message = message
        self.hint = hint

    def __str__(self) -> str:
        return f"{self.message}\n  fix: {self.hint}" if self.hint else self.message


class ModelFileError(ModelError):
    """The model file is missing, unreadable or not a valid GGUF file."""


class UnsupportedModelError(ModelError):
    """The model has neither the Self-RAG reflection vocabulary nor a chat template."""


class ModelPullError(ModelError):
    """`localrag models pull` could not download or check a model (cause and fix in the text)."""


class PullCancelled(ModelPullError):
    """The person stopped a download (Ctrl+C, or Cancel in the app); it resumes next time."""
