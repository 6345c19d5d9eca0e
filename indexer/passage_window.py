"""The window of a passage that best matches a question (`focus_window`): what the
learned ranker (indexer/learned_rank.py) embeds of a long passage, and what the
cross-encoder experiment (scripts/train_reranker.py) reads, in training as at run time.
"""

from __future__ import annotations

import re

WINDOW_WORDS = 64      # words of a passage read around its best match

_WORD = re.compile(r"\S+")


_TOK = None


def _tokenizer():  # noqa: ANN202 - indexer.bm25.Tokenizer
    global _TOK
    if _TOK is None:
        from indexer.bm25 import Tokenizer

        _TOK = Tokenizer()
    return _TOK


def focus_window(query: str, text: str, *, words: int = WINDOW_WORDS) -> str:
    """The `words`-word stretch of `text` holding the most distinct query terms (BM25's
    stems; the earliest such stretch on ties). Short texts come back whole."""
    spans = [(m.start(), m.end()) for m in _WORD.finditer(text)]
    if len(spans) <= words:
        return text
    tok = _tokenizer()
    wanted = set(tok(query))
    if not wanted:
        return text[:spans[words - 1][1]]
    hits = [set(tok(text[a:b])) & wanted for a, b in spans]
    best, best_at = -1, 0
    counts: dict[str, int] = {}
    for i, h in enumerate(hits):
        for s in h:
            counts[s] = counts.get(s, 0) + 1
        if i >= words:
            for s in hits[i - words]:
                counts[s] -= 1
                if counts[s] == 0:
                    del counts[s]
        if i >= words - 1:
            score = len(counts)
            if score > best:
                best, best_at = score, i - words + 1
    # start a little before the first match, so the window keeps its lead-in
    start = best_at
    for j in range(best_at, best_at + words):
        if hits[j]:
            start = max(0, min(j - words // 6, len(spans) - words))
            break
    return text[spans[start][0]:spans[start + words - 1][1]]


def pair_text(title: str, text: str) -> str:
    """What the model reads of a passage: its title line, then the text."""
    return f"{title}\n{text}" if title else text
