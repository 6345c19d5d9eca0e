"""The answer object: what the engine decided, read, and wrote, sentence by sentence.

Both front ends render this and nothing else; `to_json` is the documented
`localrag ask --json` schema.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any, Literal

from indexer.records import Passage
from localrag.answering.label.units import UnitKind, join_units

SupportLabel = Literal["fully", "partially", "none", "unchecked", "no_retrieval"]
"""fully / partially supported, none = not supported or contradictory, unchecked = the
critic cannot tell (it abstains rather than guess), no_retrieval = from the model's own
knowledge (nothing was retrieved for this segment)."""

Role = Literal["answer", "context"]

Origin = Literal["model", "quote"]
"""model: written by the language model; quote: a sentence of the cited passage, quoted
word for word (localrag.answering.generate.extract)."""

LabelSource = Literal["own", "segment", "critic", "unjudged", "retrieval", "irrelevant", "quote"]
"""Where a sentence's label came from (localrag.answering.generate.selfrag module docstring):
own = the IsSup token the model wrote right after the sentence; segment = the IsSup token
the model wrote for another sentence of the same segment (same passage); critic = the
fallback critic (embedding + lexical overlap, or the instruct engine's critic) judged the
sentence against its passage; unjudged = nothing judged it (labelled "none"); retrieval =
written without evidence (label "no_retrieval"); irrelevant = written after a passage the
model itself marked `[Irrelevant]` (label "no_retrieval", no citation: training writes no
support claim there); quote = a passage sentence quoted verbatim
(instruct answers: "fully" by construction)."""

LABEL_SOURCE_TEXT: dict[str, str] = {
    "own": "own token",
    "segment": "segment's token",
    "critic": "fallback critic",
    "unjudged": "not judged",
    "retrieval": "no retrieval",
    "irrelevant": "passage judged irrelevant",
    "quote": "quoted verbatim",
}
"""A few words per label source, shown next to the label (CLI, Markdown, TUI)."""

LABEL_TEXT: dict[str, str] = {
    "fully": "fully supported",
    "partially": "partially supported",
    "none": "not supported",
    "unchecked": "not checked",
    "no_retrieval": "from the model's own knowledge",
}


@dataclass
class RetrievalDecision:
    mode: Literal["adaptive", "always", "never"]
    retrieved: bool
    probability: float | None     # normalised p(Retrieve = yes); None when not asked
    threshold: float
    reason: str                   # e.g. "p=0.63 > 0.20", "index is empty", "mode: always"


@dataclass
class PassageJudgement:
    """One retrieved passage and what the critic made of it."""

    passage: Passage
    relevance: float              # s_rel in [0, 1]
    relevant: bool | None         # the critic's label (Relevant vs Irrelevant); None: not checked
    dropped: bool = False         # removed by strict mode
    drop_reason: str | None = None
    verdict: str = "relevant"     # what `relevant` says: "relevant" (the critic's IsRel) or
    #                               "answers" (the relevance model: the passage holds the answer)
    answer_probability: float | None = None   # with "answers": its best sentence's probability


@dataclass
class Scores:
    rel: float | None = None      # s_rel
    sup: float | None = None      # s_sup
    use: float | None = None      # s_use
    seq: float | None = None      # exp(mean log-prob)
    total: float = 0.0


@dataclass
class Segment:
    """One unit of the answer (localrag.answering.label.units: a sentence, a whole list item or a whole
    code block) with its label and citation."""

    text: str                     # the unit's Markdown (a code block with its fences)
    label: SupportLabel
    scores: Scores
    citation: int | None          # index into Answer.passages (0-based); None = no source
    passage: Passage | None = None
    kind: UnitKind = "sentence"   # "sentence", "code" or "list_item"
    starts_block: bool = False    # begins a new paragraph, list or code block
    label_source: LabelSource | None = None
    """Where `label` came from (LabelSource); None in answers saved before it existed."""
    origin: Origin = "model"
    line: int | None = None       # the file line a quote starts on (None: not a quote, or PDF)
    role: Role = "answer"
    """answer: shown as (part of) the answer; context: a quote from a cited passage that is
    on the question's topic but was not judged to answer it (a quote: its probability of
    answering, extract.answer_probability, under QUOTE_ANSWER_FLOOR or under
    ANSWER_MODEL_RELATIVE of the best quote's, or beyond the ANSWER_MAX best; a model
    sentence: the relevance model's under ANSWER_FLOOR): shown as context,
    never with the answer's ✔."""
    subject: str | None = None
    """A quoted sentence's subject: the term or signature line it describes and does not
    name itself (extract.subject_of, e.g. `FULL:` above "Selects full vacuum ..."), shown
    before the sentence as inline code, in the same unit and under the same mark: a name
    answers nothing alone, so it never gets a mark of its own."""
    lead: str | None = None
    """A quoted list item's lead-in: the sentence that introduces its list
    (extract.list_lead_in, "Pango depends on the following libraries:"), ending in " …"
    where other items stand between them; shown before the item inside its quotation
    marks, in the same unit and under the same mark: an item says what the list is of
    only through it."""

    @property
    def locator(self) -> str | None:
        """`path:line` of a quote's own line, else the cited passage's locator."""
        if self.passage is None:
            return None
        if self.line is not None:
            return f"{self.passage.path}:{self.line}"
        return self.passage.locator

    def to_json(self) -> dict[str, Any]:
        return {
            "text": self.text,
            "kind": self.kind,
            "starts_block": self.starts_block,
            "label": self.label,
            "label_source": self.label_source,
            "origin": self.origin,
            "scores": vars(self.scores).copy(),
            "citation": None if self.citation is None else self.citation + 1,
            "line": self.line,
            "role": self.role,
            "subject": self.subject,
            "lead": self.lead,
        }


@dataclass
class Answer:
    question: str
    search_query: str                     # self-contained question used for retrieval
    decision: RetrievalDecision
    passages: list[PassageJudgement] = field(default_factory=list)
    segments: list[Segment] = field(default_factory=list)
    critic: str = "selfrag"               # who produced the labels, e.g. "selfrag", "embedding+lexical"
    model: str = ""
    notes: list[str] = field(default_factory=list)   # e.g. "the index is empty: answered without retrieval"
    elapsed_s: float = 0.0

    @property
    def text(self) -> str:
        """The answer as Markdown: its units joined (localrag.answering.label.units.join_units)."""
        return join_units(self.segments)

    def to_json(self) -> dict[str, Any]:
        return {
            "question": self.question,
            "search_query": self.search_query,
            "model": self.model,
            "critic": self.critic,
            "retrieval": vars(self.decision).copy(),
            "answer": self.text,
            "segments": [s.to_json() for s in self.segments],
            "sources": [
                {
                    "n": i + 1,
                    **j.passage.to_json(),
                    "chunk_id": j.passage.chunk_id,
                    "char_start": j.passage.char_start,
                    "char_end": j.passage.char_end,
                    "relevance": j.relevance,
                    "relevant": j.relevant,
                    "verdict": j.verdict,
                    "answer_probability": j.answer_probability,
                    "dropped": j.dropped,
                }
                for i, j in enumerate(self.passages)
            ],
            "notes": list(self.notes),
            "elapsed_s": self.elapsed_s,
        }


def answer_from_json(data: dict[str, Any]) -> Answer:
    """Rebuild an Answer from `Answer.to_json()` (a saved chat turn), tolerating the
    fields older saves lack."""
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
            relevant=None if src.get("relevant", False) is None else bool(src.get("relevant")),
            dropped=bool(src.get("dropped", False)),
            verdict="answers" if src.get("verdict") == "answers" else "relevant",
            answer_probability=(None if src.get("answer_probability") is None
                                else float(src["answer_probability"])),
        ))
    segments = []
    for seg in data.get("segments", []):
        cite = seg.get("citation")
        index = None if cite is None else int(cite) - 1
        scores = Scores(**{k: v for k, v in (seg.get("scores") or {}).items()
                           if k in ("rel", "sup", "use", "seq", "total")})
        kind = seg.get("kind")
        segments.append(Segment(
            text=str(seg.get("text", "")),
            kind=kind if kind in ("sentence", "code", "list_item") else "sentence",
            starts_block=bool(seg.get("starts_block", False)),
            label=seg.get("label", "none"),
            scores=scores,
            citation=index,
            passage=passages[index].passage if index is not None and index < len(passages) else None,
            label_source=seg.get("label_source"),
            origin="quote" if seg.get("origin") == "quote" else "model",
            line=seg.get("line"),
            role="context" if seg.get("role") == "context" else "answer",
            subject=seg["subject"] if isinstance(seg.get("subject"), str) else None,
            lead=seg["lead"] if isinstance(seg.get("lead"), str) else None,
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
