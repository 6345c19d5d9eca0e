"""Shared helpers for the Self-RAG engine tests (scripted model, passages, retrieval)."""

from __future__ import annotations

from indexer.records import Passage
from localrag.answering.judge.scoring import Weights
from localrag.answering.generate.selfrag import EngineConfig, SelfRagEngine
from models.scripted import ScriptedModel

FULL = {"[Fully supported]": 1.0}
RELEVANT = {"[Relevant]": 1.0}


def passage(n: int, text: str, *, title: str | None = None) -> Passage:
    return Passage(
        chunk_id=n, path=f"/docs/file{n}.md", title=title or f"file{n}.md", text=text,
        start_line=n, end_line=n + 2, page=None, char_start=0, char_end=len(text), score=1.0,
    )


class Retriever:
    """Returns fixed passages per call (a list of lists, the last one repeats)."""

    def __init__(self, *rounds: list[Passage]) -> None:
        self.rounds = list(rounds)
        self.queries: list[tuple[str, int]] = []

    def __call__(self, query: str, k: int) -> list[Passage]:
        self.queries.append((query, k))
        i = min(len(self.queries) - 1, len(self.rounds) - 1)
        return self.rounds[i] if self.rounds else []


def engine(model: ScriptedModel, **kw) -> SelfRagEngine:
    weights = kw.pop("weights", Weights())
    return SelfRagEngine(model, config=EngineConfig(weights=weights, **kw))


def question_model(p_yes: float = 0.9, p_no: float = 0.1, **kw) -> ScriptedModel:
    m = ScriptedModel(**kw)
    m.on_question({"[Retrieval]": p_yes, "[No Retrieval]": p_no})
    return m
