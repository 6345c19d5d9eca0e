"""`localrag models check-selfrag FILE`: does this Self-RAG file want a "▁" after special tokens?

The open question of SELFRAG.md section 2 ('tokenization drift'), which only a real model
can settle. Training tokenized each example as one string with the slow Llama tokenizer
(retrieval_lm/script_finetune_7b.sh --use_slow_tokenizer; legacy mode), which starts the
text after every added token with a "▁" piece, as llama.cpp does for a prompt string;
the engine can also build the ids without it (`EngineConfig.space_after_special`).

On ten question-passage pairs shipped in localrag/data/selfrag_check_pairs.jsonl, each
setting builds the training-shaped sequence
`P [Retrieval]<paragraph>title\\ntext</paragraph>[Relevant] answer [Fully supported]`
(passage and answer text after a special token, with or without the "▁") and reads:

  * IsRel at `</paragraph>`, IsSup after the answer, Retrieve (and Utility, the other
    token training puts after an IsSup token) after `[Fully supported]`: the mass the
    model gives the group it was trained to write there, and the critique scores;
  * the model's own first text token after `[Relevant]`: a "▁" piece or not.

A model reads its trained tokenization with more confidence: the setting whose group
masses are higher (mean log-mass over the 30 positions) is preferred when the difference
exceeds MARGIN; otherwise the model's own first tokens decide.
"""

from __future__ import annotations

import json
import math
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from localrag.answering.generate.prompting import encode_text, prompt_ids
from localrag.answering.judge.critique import retrieve_group_probability
from localrag.answering.judge.scoring import group_probs, s_rel, s_sup
from models.base import LanguageModel
from models.reflection import (
    FULLY,
    PARAGRAPH_CLOSE,
    PARAGRAPH_OPEN,
    RELEVANT,
    RETRIEVE_CONTINUE,
    RETRIEVE_NO,
    RETRIEVE_YES,
    ReflectionVocab,
)

PAIRS_FILE = Path(__file__).resolve().parent.parent / "data" / "selfrag_check_pairs.jsonl"
MARGIN = 0.01
"""Nats of mean log group mass: below about 1% more mass the comparison says nothing."""


@dataclass(frozen=True)
class Pair:
    question: str
    title: str
    text: str
    answer: str


def load_pairs(path: Path = PAIRS_FILE) -> list[Pair]:
    with open(path, encoding="utf-8") as f:
        return [Pair(**json.loads(line)) for line in f if line.strip()]


@dataclass
class SettingResult:
    """What one setting (space after special tokens or not) measured."""

    space: bool
    log_mass: list[float] = field(default_factory=list)   # 3 per pair: IsRel, IsSup, after IsSup
    rel: list[float] = field(default_factory=list)
    sup: list[float] = field(default_factory=list)
    retrieve: list[float] = field(default_factory=list)
    own_space: int = 0        # first text tokens after [Relevant] that are "▁" pieces
    own_plain: int = 0        # ... that are not
    own_other: int = 0        # not text (a reflection token, EOS)

    @property
    def mean_log_mass(self) -> float:
        return sum(self.log_mass) / len(self.log_mass) if self.log_mass else -math.inf


@dataclass
class CheckReport:
    model: str
    pairs: int
    space: SettingResult
    plain: SettingResult
    prefers_space: bool | None         # None: no preference either way
    reason: str

    @property
    def own_space(self) -> int:
        return self.space.own_space + self.plain.own_space

    @property
    def own_plain(self) -> int:
        return self.space.own_plain + self.plain.own_plain

    def to_json(self) -> dict[str, Any]:
        def side(r: SettingResult) -> dict[str, Any]:
            return {"mean_log_group_mass": r.mean_log_mass, "isrel": _mean(r.rel),
                    "issup": _mean(r.sup), "retrieve": _mean(r.retrieve),
                    "own_first_token": {"space": r.own_space, "plain": r.own_plain,
                                        "other": r.own_other}}

        return {"model": self.model, "pairs": self.pairs, "with_space": side(self.space),
                "without_space": side(self.plain), "space_after_special": self.prefers_space,
                "reason": self.reason}

    def describe(self) -> str:
        lines = [f"Self-RAG tokenization check of {self.model} on {self.pairs} "
                 "question-passage pairs:",
                 f"  {'':34} {'with ▁':>10} {'without ▁':>10}"]
        rows = [("mean log-mass of the trained group", lambda r: r.mean_log_mass),
                ("IsRel  p(Relevant) at </paragraph>", lambda r: _mean(r.rel)),
                ("IsSup  score after the answer", lambda r: _mean(r.sup)),
                ("Retrieve after [Fully supported]", lambda r: _mean(r.retrieve))]
        for name, get in rows:
            lines.append(f"  {name:34} {get(self.space):>10.4f} {get(self.plain):>10.4f}")
        lines.append(f"  {'own first token after [Relevant]':34} "
                     f"{_own(self.space):>10} {_own(self.plain):>10}   (▁ piece / plain / other)")
        lines.append(f"Verdict: {self.reason}")
        if self.prefers_space is not None:
            value = "true" if self.prefers_space else "false"
            lines.append(f"  localrag settings --set space_after_special {value}")
        return "\n".join(lines)


def _mean(xs: list[float]) -> float:
    return sum(xs) / len(xs) if xs else float("nan")


def _own(r: SettingResult) -> str:
    return f"{r.own_space}/{r.own_plain}/{r.own_other}"


def _log(p: float) -> float:
    return math.log(p) if p > 0 else -1e9


def _first_piece_has_space(model: LanguageModel, token: int) -> bool:
    """Whether `token` starts with a space ("▁"): detokenized after a plain word, since a
    lone first token's leading space is dropped by SentencePiece detokenization."""
    anchor = model.tokenize("a", add_bos=False, special=False)
    base = model.detokenize(anchor)
    return model.detokenize([*anchor, token])[len(base):].startswith(" ")


def _measure(model: LanguageModel, v: ReflectionVocab, pairs: list[Pair], space: bool
             ) -> SettingResult:
    out = SettingResult(space=space)
    isrel, issup = v.group("isrel"), v.issup_ids
    retrieve_ids = [v[RETRIEVE_YES], v[RETRIEVE_CONTINUE], v[RETRIEVE_NO]]
    after_sup = retrieve_ids + v.utility_ids
    text_skip = set(v.all_ids) | {model.eos_id} | ({model.bos_id} if model.bos_id is not None else set())
    for pair in pairs:
        prompt, _ = prompt_ids(model, pair.question)
        passage = encode_text(model, f"{pair.title}\n{pair.text}", leading_space=space)
        ctx0 = [*prompt, v[RETRIEVE_YES], v[PARAGRAPH_OPEN], *passage, v[PARAGRAPH_CLOSE]]
        lp = model.next_logprobs(ctx0, isrel)
        out.log_mass.append(_log(sum(math.exp(lp[i]) for i in isrel)))
        p_irrel, p_rel = group_probs(lp, isrel)
        out.rel.append(s_rel(p_rel, p_irrel))

        ctx1 = [*ctx0, v[RELEVANT], *encode_text(model, pair.answer, leading_space=space)]
        lp = model.next_logprobs(ctx1, issup)
        out.log_mass.append(_log(sum(math.exp(lp[i]) for i in issup)))
        out.sup.append(s_sup(*group_probs(lp, issup)))

        lp = model.next_logprobs([*ctx1, v[FULLY]], after_sup)
        out.log_mass.append(_log(sum(math.exp(lp[i]) for i in after_sup)))
        r = retrieve_group_probability(lp, v)
        out.retrieve.append(r if r is not None else 0.0)

        (gen,) = model.generate([*ctx0, v[RELEVANT]], [], max_tokens=1)
        token = gen.tokens[0] if gen.tokens else model.eos_id
        if token in text_skip:
            out.own_other += 1
        elif _first_piece_has_space(model, token):
            out.own_space += 1
        else:
            out.own_plain += 1
    return out


def check_selfrag(model: LanguageModel, pairs: list[Pair] | None = None) -> CheckReport:
    """Measure both settings on `pairs` (default: the shipped ten) and say which one
    the model prefers (module docstring)."""
    v = ReflectionVocab.require(model)
    pairs = load_pairs() if pairs is None else pairs
    space = _measure(model, v, pairs, True)
    plain = _measure(model, v, pairs, False)
    d = space.mean_log_mass - plain.mean_log_mass
    own_s, own_p = space.own_space + plain.own_space, space.own_plain + plain.own_plain
    own_says = None if own_s == own_p else own_s > own_p
    own_text = (f"its own first token after [Relevant] is a ▁ piece {own_s} times, "
                f"a plain piece {own_p} times")
    if abs(d) > MARGIN:
        prefers: bool | None = d > 0
        which = "with" if prefers else "without"
        reason = (f"the file prefers text {which} a ▁ after special tokens: the trained "
                  f"groups get {abs(d):.3f} nats more mean log-mass that way; {own_text}")
        if own_says is not None and own_says != prefers:
            reason += " (which disagrees: check more pairs before relying on this)"
    elif own_says is not None:
        prefers = own_says
        which = "with" if prefers else "without"
        reason = (f"the probabilities differ by only {abs(d):.3f} nats; {own_text}, so the "
                  f"file prefers text {which} a ▁ after special tokens")
    else:
        prefers = None
        reason = (f"no preference: the probabilities differ by only {abs(d):.3f} nats and "
                  f"{own_text}; keep the default")
    return CheckReport(model=model.name, pairs=len(pairs), space=space, plain=plain,
                       prefers_space=prefers, reason=reason)


__all__ = ["CheckReport", "Pair", "check_selfrag", "load_pairs"]
