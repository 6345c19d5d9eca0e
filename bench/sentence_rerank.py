"""Issue 17: search's fused top N reordered by what the relevance model makes of each
passage's best sentence (bench/judged_recall.py --sentence-rerank DIR).

A passage's score is its fused score (1 for the best of the N, the others scaled to it) plus
beta x the probability of its best quotable sentence (extract.candidate_units of the passage
alone, read as the answer path reads them: title, subject line, sentence). BM25's clear
winners (search.lexical_winners) stay first.
"""

from __future__ import annotations

import numpy as np


class PassageScorer:
    def __init__(self, model_dir: str) -> None:
        from indexer.relevance_model import RelevanceModel

        self.rm = RelevanceModel(model_dir)
        self._cache: dict[tuple[str, int], float] = {}

    def best(self, question: str, passages: list[tuple[int, str, str]]) -> dict[int, float]:
        """{chunk id: the best sentence's probability} for (chunk id, title, text) passages."""
        from localrag.answering.generate import extract as ex

        out = {}
        for cid, title, text in passages:
            key = (question, cid)
            if key not in self._cache:
                units = ex.candidate_units(text, question=question)
                texts = [ex.answer_text(text, u, title) for u in units]
                self._cache[key] = float(np.max(self.rm.probabilities(question, texts))) if texts else 0.0
            out[cid] = self._cache[key]
        return out

    @staticmethod
    def order(fused: list[tuple[int, float]], best: dict[int, float], *, beta: float,
              pinned: list[int]) -> list[int]:
        if not fused:
            return []
        top = max(s for _, s in fused) or 1.0
        score = {cid: s / top + beta * best.get(cid, 0.0) for cid, s in fused}
        head = [c for c in pinned if c in score]
        rest = sorted((c for c in score if c not in head), key=lambda c: -score[c])
        return head + rest
