"""Self-RAG critique scores: pure functions over probabilities, no model.

See ../shared/design/SELFRAG.md sections 3 and 4. Every function here takes
*probabilities* (or full-vocabulary log-probabilities that `group_probs` turns into
renormalised probabilities). The released Self-RAG scripts divided raw log-probabilities,
which inverts the retrieval decision; nothing here ever does arithmetic on log-probs
except `exp`.

Shared by the Self-RAG engine (`localrag.answering.generate.selfrag`) and the instruct-model critic
(`localrag.answering.generate.instruct`), so the weights and thresholds mean the same thing for both.
"""

from __future__ import annotations

import math
import re
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Literal

TRUST_AUC = 0.85
TRUST_ACCURACY = 0.8
"""A model's own judgment is used only where it reached AUC >= 0.85 *and* its labels at
the engine's cut points were right at least 80% of the time on the labelled set: a good
ranking with probabilities that barely move (SmolLM2's retrieve judgment) would still
give wrong decisions at the threshold (critics.trusted; extract.PASSAGES_CHECKED holds
passage verdicts to the same AUC)."""

SupportLabel = Literal["fully", "partially", "none", "unchecked", "no_retrieval"]

UTILITY_WEIGHTS: tuple[float, ...] = (-1.0, -0.5, 0.0, 0.5, 1.0)
"""w_k for [Utility:1] .. [Utility:5] (paper)."""

DEFAULT_THRESHOLD = 0.2


def group_probs(logprobs: Mapping[int, float], ids: Sequence[int]) -> list[float]:
    """Probabilities of `ids`, renormalised within the group.

    `logprobs` holds full-vocabulary log-probabilities (log-softmax over the whole
    vocabulary); ids missing from it count as probability 0. When the whole group has
    probability 0 (every id missing or -inf) the result is all zeros, not uniform: the
    model said nothing about this group, so its critique term contributes nothing rather
    than pretending to a 50/50 judgement.
    """
    raw = [_exp(logprobs.get(i)) for i in ids]
    return normalise(raw)


def normalise(probs: Sequence[float]) -> list[float]:
    """`probs` divided by their sum; all zeros stay all zeros (see `group_probs`)."""
    if any(p < 0 or math.isnan(p) for p in probs):
        raise ValueError(f"probabilities must be non-negative numbers, got {list(probs)}")
    total = math.fsum(probs)
    if total <= 0.0:
        return [0.0] * len(probs)
    return [p / total for p in probs]


def _exp(lp: float | None) -> float:
    if lp is None or lp == -math.inf or math.isnan(lp):
        return 0.0
    return math.exp(lp)


# --- retrieval decision -------------------------------------------------------------

def retrieve_probability(p_yes: float, p_no: float) -> float:
    """p(Retrieve = yes) renormalised against Retrieve = no, on PROBABILITIES.

    Pass `p([Retrieval])` and `p([No Retrieval])` (at a Retrieve-group position inside
    an answer, `p([Continue to Use Evidence]) + p([No Retrieval])`: continuing with the
    passage in use is not a request for new evidence, SELFRAG.md section 3; the released
    long-form script counted it as yes). Returns 0.0 when both are 0.
    """
    yes, no = normalise([p_yes, p_no])
    return yes


def should_retrieve(mode: str, prob: float | None, threshold: float = DEFAULT_THRESHOLD) -> bool:
    """The paper's decision: adaptive retrieves iff prob > threshold (strictly)."""
    if mode == "always":
        return True
    if mode == "never":
        return False
    if mode != "adaptive":
        raise ValueError(f"unknown retrieval mode {mode!r} (adaptive, always or never)")
    if prob is None:
        raise ValueError("adaptive retrieval needs the Retrieve probability")
    return prob > threshold


# --- critique scores ------------------------------------------------------------------

def s_rel(p_rel: float, p_irrel: float) -> float:
    """IsRel: p(Relevant) / (p(Relevant) + p(Irrelevant)); 0 when both are 0."""
    rel, _ = normalise([p_rel, p_irrel])
    return rel


def s_sup(p_full: float, p_partial: float, p_none: float) -> float:
    """IsSup: p(Fully) + 0.5 p(Partially), after renormalising the three."""
    full, partial, _ = normalise([p_full, p_partial, p_none])
    return full + 0.5 * partial


def s_use(*probs: float) -> float:
    """IsUse: sum_k w_k p(Utility:k), w = (-1, -0.5, 0, 0.5, 1), after renormalising.

    Takes the five probabilities either as five arguments or as one sequence.
    """
    if len(probs) == 1 and isinstance(probs[0], Sequence):
        probs = tuple(probs[0])
    if len(probs) != 5:
        raise ValueError(f"s_use needs 5 utility probabilities, got {len(probs)}")
    return math.fsum(w * p for w, p in zip(UTILITY_WEIGHTS, normalise(probs)))


@dataclass
class Weights:
    """Inference-time weights of the critique terms (paper defaults 1 / 1 / 0.5)."""

    w_rel: float = 1.0
    w_sup: float = 1.0
    w_use: float = 0.5
    use_seq: bool = True


def total_score(
    *,
    rel: float | None,
    sup: float | None,
    use: float | None,
    seq_mean_logprob: float | None,
    weights: Weights,
) -> float:
    """[exp(seq)] + w_rel s_rel + w_sup s_sup + w_use s_use; a None term counts 0.

    The sequence term is added only when `weights.use_seq` is on (the released long-form
    script ignored both it and the weights; this one honours them).
    """
    total = 0.0
    if weights.use_seq and seq_mean_logprob is not None:
        total += math.exp(seq_mean_logprob)
    if rel is not None:
        total += weights.w_rel * rel
    if sup is not None:
        total += weights.w_sup * sup
    if use is not None:
        total += weights.w_use * use
    return total


def mean_logprob(logprobs: Sequence[float]) -> float | None:
    """Mean log-probability of generated tokens (EOS included by the caller); None if empty."""
    if not logprobs:
        return None
    return math.fsum(logprobs) / len(logprobs)


# --- labels ---------------------------------------------------------------------------

_LABEL_BY_TOKEN: dict[str, SupportLabel] = {
    "[Fully supported]": "fully",
    "[Partially supported]": "partially",
    "[No support / Contradictory]": "none",
    "fully": "fully",
    "partially": "partially",
    "none": "none",
}


def label_from_issup(token_or_probs: str | Sequence[float] | None) -> SupportLabel:
    """Support label from the IsSup token the model wrote, or from (full, partial, none)
    probabilities (the most probable wins; ties go to the weaker label so a label never
    claims more than the critic knows). None (no IsSup token was written after a
    passage) gives "none": nothing says the segment is supported.
    """
    if token_or_probs is None:
        return "none"
    if isinstance(token_or_probs, str):
        try:
            return _LABEL_BY_TOKEN[token_or_probs]
        except KeyError:
            raise ValueError(f"not an IsSup token: {token_or_probs!r}") from None
    probs = list(token_or_probs)
    if len(probs) != 3:
        raise ValueError(f"need (full, partial, none) probabilities, got {probs}")
    if sum(probs) <= 0:
        return "none"
    labels: tuple[SupportLabel, ...] = ("none", "partially", "fully")
    # iterate weakest first; strict '>' keeps the weaker label on ties
    best, best_p = "none", -1.0
    for label, p in zip(labels, reversed(probs)):
        if p > best_p:
            best, best_p = label, p
    return best  # type: ignore[return-value]


# --- closed-set answers (SELFRAG.md section 4) -----------------------------------------

_CLOSED_WORDS = {"true", "false", "yes", "no"}
_OPTION = re.compile(r"\(?([a-e])\)?(?:[.):]\s*(.*))?", re.I | re.S)


def closed_set_key(text: str) -> str | None:
    """The normalised closed-set answer of `text` ("true", "no", "b", ...), or None.

    A closed-set answer is the whole answer being a label: true / false / yes / no
    (any case, trailing punctuation ignored), or an option letter A-E written alone or
    as "B)", "(b)", "B.", "B: Paris". Anything longer ("Yes, the lease ends in June")
    is free text: its candidates are not pooled.
    """
    t = " ".join(text.split()).strip().rstrip(".!").strip()
    if t.lower() in _CLOSED_WORDS:
        return t.lower()
    m = _OPTION.fullmatch(t)
    if m and (len(t) <= 3 or m.group(2) is not None):
        return m.group(1).lower()
    return None


@dataclass(frozen=True)
class ClosedSetChoice:
    """The pooled decision: the winning answer, its summed score and its best candidate."""

    key: str
    total: float
    votes: int          # candidates that gave this answer
    best: int           # index of its highest-scoring candidate (earliest on ties)

    def note(self, answer: str) -> str:
        """What the answer's notes say about the pooling (`answer`: the text shown)."""
        return (f"closed-set answer: {self.votes} candidates answered {answer!r}; their "
                f"scores were summed ({self.total:.2f}) and the best sum won")


def closed_set_choice(texts: Sequence[str], scores: Sequence[float]) -> ClosedSetChoice | None:
    """Pool candidates that give the same closed-set answer: sum their scores and take
    the answer with the best sum (earliest candidate on ties). None unless every
    candidate is a closed-set answer and at least two of them agree: otherwise the
    best single candidate wins as usual."""
    if len(texts) != len(scores) or len(texts) < 2:
        return None
    keys = [closed_set_key(t) for t in texts]
    if any(k is None for k in keys) or len(set(keys)) == len(keys):
        return None
    sums: dict[str, float] = {}
    votes: dict[str, int] = {}
    best: dict[str, int] = {}
    for i, (key, score) in enumerate(zip(keys, scores)):
        assert key is not None
        sums[key] = sums.get(key, 0.0) + score
        votes[key] = votes.get(key, 0) + 1
        if key not in best or score > scores[best[key]]:
            best[key] = i
    winner = max(sums, key=lambda k: (sums[k], -best[k]))   # dicts keep first-seen order
    return ClosedSetChoice(winner, sums[winner], votes[winner], best[winner])
