"""Rebuild an `Answer` from the JSON a saved chat turn holds (`Answer.to_json`).

The JSON keeps what a person needs to see again (labels, citations, sources with their
locations) but not the index's chunk ids or character offsets, so a reopened citation
shows the passage itself if the surrounding text cannot be found.
"""

from __future__ import annotations

from typing import Any

from indexer.records import Passage
from localrag.answer import Answer, PassageJudgement, RetrievalDecision, Scores, Segment


def answer_from_json(data: dict[str, Any]) -> Answer:
    r = data.get("retrieval") or {}
    decision = RetrievalDecision(
        mode=r.get("mode", "adaptive"),
        retrieved=bool(r.get("retrieved", False)),
        probability=r.get("probability"),
        threshold=float(r.get("threshold", 0.0)),
        reason=str(r.get("reason", "")),
    )
    passages = []
    for src in data.get("sources", []):
        passage = Passage(
            chunk_id=int(src.get("chunk_id", -1)),
            path=str(src.get("path", "")),
            title=str(src.get("title", "")),
            text=str(src.get("text", "")),
            start_line=src.get("start_line"),
            end_line=src.get("end_line"),
            page=src.get("page"),
            char_start=int(src.get("char_start", 0)),
            char_end=int(src.get("char_end", 0)),
            score=float(src.get("score", 0.0)),
        )
        passages.append(PassageJudgement(
            passage=passage,
            relevance=float(src.get("relevance", 0.0)),
            relevant=bool(src.get("relevant", False)),
            dropped=bool(src.get("dropped", False)),
        ))
    segments = []
    for seg in data.get("segments", []):
        cite = seg.get("citation")
        index = None if cite is None else int(cite) - 1
        scores = Scores(**{k: v for k, v in (seg.get("scores") or {}).items()
                           if k in ("rel", "sup", "use", "seq", "total")})
        segments.append(Segment(
            text=str(seg.get("text", "")),
            label=seg.get("label", "none"),
            scores=scores,
            citation=index,
            passage=passages[index].passage if index is not None and index < len(passages) else None,
        ))
    return Answer(
        question=str(data.get("question", "")),
        search_query=str(data.get("search_query", "")),
        decision=decision,
        passages=passages,
        segments=segments,
        critic=str(data.get("critic", "")),
        model=str(data.get("model", "")),
        notes=list(data.get("notes", [])),
        elapsed_s=float(data.get("elapsed_s", 0.0)),
    )
