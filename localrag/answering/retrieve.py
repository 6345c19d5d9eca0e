"""Follow-up questions: turning "and when was it built?" into a self-contained query.

Retrieval needs a question that stands on its own; the model sees the earlier turns
anyway. Small local models rewrite badly, so this is done deterministically: a question
that looks like a follow-up (pronouns or elliptic openers, few content words) is
searched together with the previous question's content words.
"""

from __future__ import annotations

import re
from collections.abc import Sequence

_WORD = re.compile(r"[A-Za-z0-9][A-Za-z0-9_'.-]*")
_FOLLOW_UP_OPENERS = ("and ", "but ", "also ", "what about", "how about", "so ", "then ")
_REFERRING = {
    "it", "its", "it's", "they", "them", "their", "this", "that", "these", "those",
    "he", "she", "him", "her", "his", "hers", "there", "one", "ones", "same",
}
STOPWORDS = {
    "a", "an", "the", "and", "or", "but", "if", "of", "to", "in", "on", "at", "by", "for",
    "with", "from", "as", "is", "are", "was", "were", "be", "been", "being", "do", "does",
    "did", "what", "when", "where", "which", "who", "whom", "why", "how", "can", "could",
    "should", "would", "will", "shall", "may", "might", "must", "i", "you", "we", "me",
    "my", "our", "your", "about", "also", "so", "then", "than", "not", "no", "yes", "any",
    "some", "all", "much", "many", "more", "most", "tell", "please", "there", "here",
} | _REFERRING


def content_words(text: str) -> list[str]:
    return [w for w in (m.group(0).lower() for m in _WORD.finditer(text))
            if w not in STOPWORDS and len(w) > 1]


def is_follow_up(question: str) -> bool:
    q = question.strip().lower()
    words = [m.group(0).lower() for m in _WORD.finditer(q)]
    if not words:
        return False
    if q.startswith(_FOLLOW_UP_OPENERS):
        return True
    return any(w in _REFERRING for w in words) and len(content_words(q)) <= 3


def self_contained_query(question: str, history: Sequence[tuple[str, str]]) -> str:
    """The query to search with: the question, plus the topic of the previous turn when
    the question only makes sense after it."""
    if not history or not is_follow_up(question):
        return question.strip()
    previous_question = history[-1][0]
    extra = [w for w in content_words(previous_question) if w not in content_words(question)]
    if not extra:
        return question.strip()
    return f"{question.strip()} ({' '.join(extra)})"
