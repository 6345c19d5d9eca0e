"""What a critic says of one sentence: the judgement type and the rules every critic
applies to it. Its own module so that the critics (critics.py) and the model's own judge
(model_critic.py) share it without importing each other."""

from __future__ import annotations

from dataclasses import dataclass

from localrag.answering.judge import lexical
from localrag.answering.judge.scoring import SupportLabel, s_sup


@dataclass(frozen=True)
class SupportJudgement:
    """How far a passage supports one sentence, as IsSup-style probabilities."""

    p_full: float
    p_partial: float
    p_none: float
    label: SupportLabel          # "fully" / "partially" / "none" / "unchecked"
    noise: str | None = None     # the noise kind (localrag.answering.judge.noise) when it is noise

    @property
    def score(self) -> float:
        """s_sup = p_full + 0.5 p_partial (scoring.s_sup)."""
        return s_sup(self.p_full, self.p_partial, self.p_none)


def label_from_cuts(x: float, *, partial_at: float, full_at: float) -> SupportLabel:
    if x >= full_at:
        return "fully"
    if x >= partial_at:
        return "partially"
    return "none"


def guard_label(judgement: SupportJudgement, sentence: str, passage: str) -> SupportJudgement:
    """The label honesty rule (module docstring): no "fully" without a strong lexical
    match; the full-support probability mass then counts as partial support."""
    if judgement.label != "fully" or lexical.overlap(sentence, passage).strong:
        return judgement
    return SupportJudgement(0.0, judgement.p_full + judgement.p_partial, judgement.p_none,
                            "partially")


__all__ = ["SupportJudgement", "guard_label", "label_from_cuts"]
