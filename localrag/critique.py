"""Reading one Self-RAG continuation: its critique scores, boundary and text ids.

Works on token ids and the log-probabilities the model reported while generating
(`Step.watched`), never on decoded text: reflection tokens may detokenize literally or
as empty strings depending on the GGUF conversion (SELFRAG.md section 1).
"""

from __future__ import annotations

import math
from dataclasses import dataclass, field
from typing import Literal

from localrag.scoring import (
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


@dataclass
class Critique:
    """What one generated segment says about itself."""

    rel: float | None = None            # s_rel (None without a passage)
    relevant: bool | None = None        # the IsRel token the model wrote (or s_rel > 0.5)
    sup: float | None = None            # s_sup (None when no IsSup token was written)
    issup_token: str | None = None      # the IsSup token the model wrote
    use: float | None = None            # s_use (None when no Utility token was written)
    seq_mean: float | None = None       # mean log-prob of every generated token
    total: float = 0.0                  # the weighted segment score
    boundary: Boundary = "eos"
    retrieve_prob: float | None = None  # at a Retrieve-group stop: p(yes + continue)
    stop_token: int | None = None
    text_ids: list[int] = field(default_factory=list)     # no reflection tokens, no EOS
    context_ids: list[int] = field(default_factory=list)  # generated ids minus the stop id

    @property
    def label(self) -> SupportLabel:
        return label_from_issup(self.issup_token)

    @property
    def seq(self) -> float | None:
        return None if self.seq_mean is None else math.exp(self.seq_mean)


def read_generation(
    gen: Generation,
    vocab: ReflectionVocab,
    *,
    weights: Weights,
    eos_id: int,
    with_passage: bool,
) -> Critique:
    """Score `gen` as SELFRAG.md section 4 says.

    IsRel is read at the first generated position (right after `</paragraph>`) when the
    segment follows a passage; IsSup at the first position whose token is an IsSup
    token; IsUse at the first Utility token (all five Utility ids, not another group:
    the released script's bug). The sequence score is the mean log-prob of every
    generated token including the final EOS or stop token.
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
        if c.sup is None and step.token in names:
            c.sup = s_sup(*group_probs(step.watched, issup_ids))
            c.issup_token = names[step.token]
        if c.use is None and step.token in use_ids:
            c.use = s_use(group_probs(step.watched, use_ids))
    c.seq_mean = mean_logprob([s.logprob for s in steps])
    c.total = total_score(
        rel=c.rel, sup=c.sup, use=c.use, seq_mean_logprob=c.seq_mean, weights=weights
    )

    tokens = gen.tokens
    retrieve_ids = {vocab[RETRIEVE_YES], vocab[RETRIEVE_CONTINUE], vocab[RETRIEVE_NO]}
    if gen.finish == "stop" and tokens and tokens[-1] in retrieve_ids:
        c.boundary = "retrieve"
        c.stop_token = tokens[-1]
        w = steps[-1].watched
        p_yes, p_cont, p_no = group_probs(
            w, [vocab[RETRIEVE_YES], vocab[RETRIEVE_CONTINUE], vocab[RETRIEVE_NO]]
        )
        if p_yes + p_cont + p_no > 0:
            c.retrieve_prob = retrieve_probability(p_yes + p_cont, p_no)
        else:   # the model was not asked for these ids: trust the token it wrote
            c.retrieve_prob = 0.0 if tokens[-1] == vocab[RETRIEVE_NO] else 1.0
        c.context_ids = tokens[:-1]
    else:
        c.boundary = "eos" if gen.finish == "eos" else "length"
        c.context_ids = list(tokens)
    skip = set(vocab.all_ids) | {eos_id}
    c.text_ids = [t for t in tokens if t not in skip]
    return c
