"""Errors of the indexer, with messages written for people (file + fix)."""

from __future__ import annotations


class IndexerError(Exception):
    """Base class of indexer errors shown to people."""

    def __init__(self, message: str, *, hint: str | None = None) -> None:
        super().__init__(message)
        self.message = message
        self.hint = hint

    def __str__(self) -> str:
        return f"{self.message}\n  fix: {self.hint}" if self.hint else self.message


class IndexLockedError(IndexerError):
    """Another localrag process is writing to the same data directory."""


class EmbeddingModelError(IndexerError):
    """The embedding model folder is missing or cannot be loaded."""


class StoreError(IndexerError):
    """The SQLite store cannot be opened or written (locked, full disk, corrupt)."""


class RerankerError(IndexerError):
    """The shipped relevance model is missing or cannot be loaded."""
