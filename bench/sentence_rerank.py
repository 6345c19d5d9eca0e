"""Issue 17: search's second stage with any relevance model (bench/judged_recall.py
--sentence-rerank DIR): the product's own judge (localrag.answering.passage_judge.SentenceJudge,
each passage's best quotable sentence as the answer path reads it) over the model in DIR,
its answers kept by question and passage so that every weight tried (beta) reads each
passage once. judged_recall orders with the product's indexer.search.rerank_judged.
"""

from __future__ import annotations

from collections.abc import Sequence


class PassageScorer:
    """A search.PassageJudge over the relevance model in `model_dir`, kept by (question,
    title, text)."""

    def __init__(self, model_dir: str) -> None:
        from indexer.relevance_model import LANGUAGES, RelevanceModel
        from localrag.answering.passage_judge import SentenceJudge

        self.model = RelevanceModel(model_dir)
        self.judge = SentenceJudge(self.model.probabilities)
        self.languages = LANGUAGES     # what the product's judge reads (language.reads_query)
        self._cache: dict[tuple[str, tuple[str, str]], float] = {}

    def __call__(self, question: str, passages: Sequence[tuple[str, str]]) -> list[float]:
        todo = [p for p in dict.fromkeys(passages) if (question, p) not in self._cache]
        for p, v in zip(todo, self.judge(question, todo)):
            self._cache[(question, p)] = v
        return [self._cache[(question, p)] for p in passages]
