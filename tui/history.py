"""Saved chat turns hold `Answer.to_json()`; rebuilding lives in the core."""

from localrag.answering.label.answer import answer_from_json

__all__ = ["answer_from_json"]
