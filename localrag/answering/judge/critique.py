"""Reading one Self-RAG continuation: its critique scores, boundary and text ids.

Works on token ids and the log-probabilities the model reported while generating
(`Step.watched`), never on decoded text: reflection tokens may detokenize literally or
as empty strings depending on the GGUF conversion (SELFRAG.md section 1).
"""

from __future__ import annotations

import math
from dataclasses import dataclass, field
from typing import Literal

from localrag.answering.judge.scoring import (
    SupportLabel,
    Weights,
    group_probs,
    label_from_issup,
    mean_logprob,
    retrieve_probability,
    s_rel,
    s_sup,
    s_use,
    total_score,
)
from models.base import Generation
from models.reflection import (
    FULLY,
    NO_SUPPORT,
    PARTIALLY,
    RELEVANT,
    RETRIEVE_CONTINUE,
    RETRIEVE_NO,
    RETRIEVE_YES,
    ReflectionVocab,
)

Boundary = Literal["eos", "retrieve", "length"]
SpanKind = Literal["evidence", "continue", "no_retrieval"]


@dataclass
class Span:
    """Text the model wrote between two reflection tokens.

    `kind` says what came before it: "evidence" (the start of a segment written after a
    passage), "continue" (`[Continue to Use Evidence]`: same passage), "no_retrieval"
    (`[No Retrieval]`, or the start of a segment written without a passage). `issup` is
    the IsSup token written right after this text (the last sentence's own label), or
    None when the model wrote none there (training writes none after continue and
    no-retrieval sentences, nor after `[Irrelevant]`)."""

    kind: SpanKind
    text_ids: list[int] = field(default_factory=list)
    issup: str | None = None


@dataclass
class Critique:
    """What one generated segment says about itself."""

    rel: float | None = None            # s_rel (None without a passage)
    relevant: bool | None = None        # the IsRel token the model wrote (or s_rel > 0.5)
    sup: float | None = None            # s_sup at the first IsSup token (None: none written)
    issup_token: str | None = None      # the first IsSup token the model wrote
    issup_tokens: list[str] = field(default_factory=list)   # every IsSup token, in order
    use: float | None = None            # s_use (None when no Utility token was written)
    seq_mean: float | None = None       # mean log-prob of every generated token
    total: float = 0.0                  # the weighted segment score
    boundary: Boundary = "eos"
    retrieve_prob: float | None = None  # at a retrieval stop: p(yes) vs the other two
    stop_token: int | None = None
    text_ids: list[int] = field(default_factory=list)     # no reflection tokens, no EOS
    context_ids: list[int] = field(default_factory=list)  # generated ids minus the stop id
    spans: list[Span] = field(default_factory=list)

    @property
    def label(self) -> SupportLabel:
        return label_from_issup(self.issup_token)

    @property
    def seq(self) -> float | None:
        return None if self.seq_mean is None else math.exp(self.seq_mean)


def retrieve_group_probability(watched: dict[int, float], vocab: ReflectionVocab) -> float | None:
    """p([Retrieval]) renormalised over the whole Retrieve group (SELFRAG.md section 3):
    `[Continue to Use Evidence]` and `[No Retrieval]` both mean "no new passage", so they
    are the other side. None when the model said nothing about the group."""
    ids = [vocab[RETRIEVE_YES], vocab[RETRIEVE_CONTINUE], vocab[RETRIEVE_NO]]
    p_yes, p_cont, p_no = group_probs(watched, ids)
    if p_yes + p_cont + p_no <= 0:
        return None
    return retrieve_probability(p_yes, p_cont + p_no)


def read_generation(
    gen: Generation,
    vocab: ReflectionVocab,
    *,
    weights: Weights,
    eos_id: int,
    with_passage: bool,
    start: SpanKind | None = None,
) -> Critique:
    """Score `gen` as SELFRAG.md section 4 says, and cut its text into spans.

    IsRel is read at the first generated position (right after `</paragraph>`) when the
    segment follows a passage; IsSup at the first position whose token is an IsSup
    token; IsUse at the first Utility token (all five Utility ids, not another group:
    the released script's bug). The sequence score is the mean log-prob of every
    generated token including the final EOS or stop token, except a token the engine's
    stop rule wrote in place of the model's `[Retrieval]` (`Step.replaced`): the model
    never chose it, so its (possibly tiny) probability says nothing about the text.
    `start`: the kind of the first span (default: "evidence" after a passage, else
    "no_retrieval"; "continue" when the segment goes on after `[Continue to Use
    Evidence]` written by the engine).

    A generation that ended at a Retrieve-group stop token is a segment boundary (the
    engine's stop rule only stops there to fetch new passages); `[Continue to Use
    Evidence]` and `[No Retrieval]` inside it only start new spans.
    """
    c = Critique()
    steps = gen.steps
    isrel_ids = vocab.group("isrel")              # (Irrelevant, Relevant)
    issup_ids = vocab.issup_ids                   # (Fully, Partially, No support)
    use_ids = vocab.utility_ids
    if with_passage and steps:
        p_irrel, p_rel = group_probs(steps[0].watched, isrel_ids)
        c.rel = s_rel(p_rel, p_irrel)
        first = steps[0].token
        c.relevant = first == vocab[RELEVANT] if first in isrel_ids else c.rel > 0.5
    names = {vocab[FULLY]: FULLY, vocab[PARTIALLY]: PARTIALLY, vocab[NO_SUPPORT]: NO_SUPPORT}
    for step in steps:
        if step.token in names:
            c.issup_tokens.append(names[step.token])
            if c.sup is None:
                c.sup = s_sup(*group_probs(step.watched, issup_ids))
                c.issup_token = names[step.token]
        if c.use is None and step.token in use_ids:
            c.use = s_use(group_probs(step.watched, use_ids))
    c.seq_mean = mean_logprob([s.logprob for s in steps if s.replaced is None])
    c.total = total_score(
        rel=c.rel, sup=c.sup, use=c.use, seq_mean_logprob=c.seq_mean, weights=weights
    )

    tokens = gen.tokens
    retrieve_ids = {vocab[RETRIEVE_YES], vocab[RETRIEVE_CONTINUE], vocab[RETRIEVE_NO]}
    if gen.finish == "stop" and tokens and tokens[-1] in retrieve_ids:
        c.boundary = "retrieve"
        c.stop_token = tokens[-1]
        prob = retrieve_group_probability(steps[-1].watched, vocab)
        # the model was not asked for these ids: trust the token it wrote
        c.retrieve_prob = prob if prob is not None else float(tokens[-1] == vocab[RETRIEVE_YES])
        c.context_ids = tokens[:-1]
    else:
        c.boundary = "eos" if gen.finish == "eos" else "length"
        c.context_ids = list(tokens)
    skip = set(vocab.all_ids) | {eos_id}
    c.text_ids = [t for t in c.context_ids if t not in skip]
    c.spans = _spans(c.context_ids, vocab, names, skip,
                     start=start or ("evidence" if with_passage else "no_retrieval"))
    return c


def _spans(tokens: list[int], vocab: ReflectionVocab, issup_names: dict[int, str],
           skip: set[int], *, start: SpanKind) -> list[Span]:
    """Cut a segment's tokens at reflection tokens: a Retrieve-group token starts a span
    of its kind; an IsSup token gives the current span its label and ends it (text
    written straight after it goes on in a new span of the same kind)."""
    kinds: dict[int, SpanKind] = {vocab[RETRIEVE_CONTINUE]: "continue",
                                  vocab[RETRIEVE_NO]: "no_retrieval"}
    spans = [Span(start)]
    for t in tokens:
        cur = spans[-1]
        if t in kinds:
            spans.append(Span(kinds[t]))
        elif t in issup_names:
            if cur.issup is None:
                cur.issup = issup_names[t]
                spans.append(Span(cur.kind))
        elif t not in skip:
            cur.text_ids.append(t)
    return [s for s in spans if s.text_ids or s.issup is not None]
