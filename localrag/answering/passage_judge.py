"""Search's second stage: each candidate passage judged by its most answering sentence.

The fused search (indexer.search) finds the answer among its first 20 passages far more
often than among its first 5. Reading every quotable sentence of those 20 with localrag's
relevance model, exactly as the answer path reads the sentences it quotes (title, subject
line, sentence, and a list item under its list's lead-in too, the better reading counting;
extract.answer_texts), tells which passages hold an answer; search adds that
probability to each passage's fused score (indexer.search.rerank_judged). The answer path
then asks the same model about the five passages' sentences again: RelevanceModel keeps the
last question's scores, so nothing is read twice.
"""

from __future__ import annotations

from collections.abc import Sequence

from indexer.relevance_model import RelevanceModelMissing
from localrag.answering.generate.extract import AnswerProbability, answer_texts, candidate_units


class SentenceJudge:
    """A search.PassageJudge over a relevance model's probabilities (`answers`), for a model
    that reads `languages` (empty: any; indexer.language.reads_query)."""

    def __init__(self, answers: AnswerProbability, *, languages: Sequence[str] = ()) -> None:
        self.answers = answers
        self.languages = tuple(languages)

    def __call__(self, query: str, passages: Sequence[tuple[str, str]]) -> list[float]:
        texts: list[str] = []
        owner: list[int] = []
        for i, (title, text) in enumerate(passages):
            units = candidate_units(text, question=query)
            for unit in units:
                for reading in answer_texts(text, unit, title, units=units):
                    texts.append(reading)
                    owner.append(i)
        best = [0.0] * len(passages)
        try:
            probs = self.answers(query, texts) if texts else []
        except RelevanceModelMissing:
            return best         # a broken install: the fused order (the answer says why)
        for i, p in zip(owner, probs):
            best[i] = max(best[i], float(p))
        return best


__all__ = ["SentenceJudge"]
