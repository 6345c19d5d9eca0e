"""Measuring a critic on a labelled set of (question, passage, sentence) cases.

The set (tests/data/critic_cases.json) is hand-written in the style of personal notes.
`measure_critic` reports, per judgment, the AUC (probability that a random positive case
scores above a random negative one; 0.5 = no signal), the accuracy of the critic's own
labels, and the separation (mean score of positives minus mean of negatives).
"""

from __future__ import annotations

import json
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from localrag.answering.judge.critics import RELEVANT_AT, Critic


@dataclass(frozen=True)
class CriticCase:
    id: str
    question: str
    title: str
    passage: str
    sentence: str
    relevant: bool
    support: str              # "fully" / "partially" / "none"

    @property
    def passage_text(self) -> str:
        """The passage as critics see it in the engine: title line, then text."""
        return f"{self.title}\n{self.passage}"


@dataclass(frozen=True)
class RetrieveCase:
    question: str
    retrieve: bool


@dataclass(frozen=True)
class CaseSet:
    cases: list[CriticCase]
    retrieve: list[RetrieveCase]

    @property
    def pool(self) -> list[str]:
        """Every distinct passage: the "index" searched for retrieve decisions."""
        return list(dict.fromkeys(c.passage_text for c in self.cases))


def load_cases(path: str | Path) -> CaseSet:
    data = json.loads(Path(path).read_text(encoding="utf-8"))
    return CaseSet(
        cases=[CriticCase(**{k: c[k] for k in CriticCase.__dataclass_fields__})
               for c in data["cases"]],
        retrieve=[RetrieveCase(r["question"], bool(r["retrieve"])) for r in data["retrieve"]],
    )


def auc(scores: Sequence[float], positive: Sequence[bool]) -> float | None:
    """Mann-Whitney AUC (ties count one half); None without both classes."""
    pos = [s for s, p in zip(scores, positive) if p]
    neg = [s for s, p in zip(scores, positive) if not p]
    if not pos or not neg:
        return None
    wins = sum(1.0 if a > b else 0.5 if a == b else 0.0 for a in pos for b in neg)
    return wins / (len(pos) * len(neg))


def auc_noise_bound(scores: Sequence[float], positive: Sequence[bool], noise: float) -> float:
    """The most the AUC can change when every score moves by at most `noise`.

    A positive/negative pair can only change order when its two scores are closer than
    2 * noise, so the AUC moves by at most the fraction of such pairs. Used where AUCs
    measured on one CPU are compared with AUCs recorded on another: llama.cpp's kernels
    differ a little between CPUs, and the scores with them.
    """
    pos = [s for s, p in zip(scores, positive) if p]
    neg = [s for s, p in zip(scores, positive) if not p]
    if not pos or not neg:
        return 0.0
    close = sum(abs(a - b) < 2 * noise for a in pos for b in neg)
    return close / (len(pos) * len(neg))


def _summary(scores: list[float], positive: list[bool], correct: list[bool]) -> dict[str, Any]:
    pos = [s for s, p in zip(scores, positive) if p]
    neg = [s for s, p in zip(scores, positive) if not p]
    return {
        "auc": auc(scores, positive),
        "accuracy": sum(correct) / len(correct) if correct else None,
        "separation": (sum(pos) / len(pos) - sum(neg) / len(neg)) if pos and neg else None,
        "n": len(scores),
        "scores": list(scores),        # per case, for auc_noise_bound
        "positive": list(positive),
    }


def measure_critic(critic: Critic, cases: CaseSet, *, threshold: float = 0.2,
                   top_k: int = 5) -> dict[str, dict[str, Any]]:
    """{"retrieve": {...}, "relevance": {...}, "support": {...}, "support_full": {...}}.

    retrieve: each retrieve case's question against the `top_k` passages of the pool the
    critic's own relevance ranks highest (a stand-in for the index search); label =
    probability > threshold. relevance: s_rel per case, label = s_rel >= RELEVANT_AT.
    support: s_sup, positives = fully or partially supported; accuracy of the 3-way
    label. support_full: s_sup, positives = fully supported only.
    """
    pool = cases.pool
    r_scores, r_truth, r_ok = [], [], []
    for rc in cases.retrieve:
        found = pool
        if critic.decides_after_search:
            rel = critic.relevance(rc.question, pool)
            order = sorted(range(len(pool)), key=lambda i: -rel[i])[:top_k]
            found = [pool[i] for i in order]
        p = critic.retrieve_probability(rc.question, found)
        r_scores.append(p)
        r_truth.append(rc.retrieve)
        r_ok.append((p > threshold) == rc.retrieve)

    rel_cache: dict[tuple[str, str], float] = {}
    s_rel, s_truth, s_ok = [], [], []
    sup, sup_pos, sup_full, sup_ok, full_ok = [], [], [], [], []
    for c in cases.cases:
        key = (c.question, c.passage_text)
        if key not in rel_cache:
            rel_cache[key] = critic.relevance(c.question, [c.passage_text])[0]
        s_rel.append(rel_cache[key])
        s_truth.append(c.relevant)
        s_ok.append((rel_cache[key] >= RELEVANT_AT) == c.relevant)
        judgement = critic.support([c.sentence], c.passage_text)[0]
        sup.append(judgement.score)
        sup_pos.append(c.support in ("fully", "partially"))
        sup_full.append(c.support == "fully")
        sup_ok.append(judgement.label == c.support)
        full_ok.append((judgement.label == "fully") == (c.support == "fully"))
    return {
        "retrieve": _summary(r_scores, r_truth, r_ok),
        "relevance": _summary(s_rel, s_truth, s_ok),
        "support": _summary(sup, sup_pos, sup_ok),
        "support_full": _summary(sup, sup_full, full_ok),
    }


def format_figures(name: str, figures: dict[str, dict[str, Any]]) -> str:
    def f(v: Any) -> str:
        return "  -  " if v is None else f"{v:.2f}"

    lines = [f"{name}:"]
    for judgment, m in figures.items():
        lines.append(f"  {judgment:13s} AUC {f(m['auc'])}  accuracy {f(m['accuracy'])}  "
                     f"separation {f(m['separation'])}  (n={m['n']})")
    return "\n".join(lines)


# --- the real-document set (tests/data/critic_real, issue 9) ---------------------------------

REAL_SET = Path(__file__).resolve().parents[1] / "tests" / "data" / "critic_real"


@dataclass(frozen=True)
class SentenceCase:
    """One sentence judged against one passage, labelled by careful reading
    (tests/data/critic_real/RUBRIC.md)."""

    id: str
    split: str                 # "dev" (odd question number) or "test" (even)
    question: str
    title: str
    passage: str
    sentence: str
    source: str                # "model" (written by the model) or "passage" (a quote)
    previous: tuple[str, ...]  # the model's earlier sentences in the same answer
    meaningful: bool
    noise_kind: str | None
    support: str               # "fully" / "partially" / "none"
    answers: bool

    @property
    def passage_text(self) -> str:
        return f"{self.title}\n{self.passage}"


@dataclass(frozen=True)
class RelevanceCase:
    id: str
    split: str
    question: str
    title: str
    passage: str
    relevant: bool

    @property
    def passage_text(self) -> str:
        return f"{self.title}\n{self.passage}"


def load_real_set(folder: str | Path = REAL_SET) -> tuple[list[SentenceCase], list[RelevanceCase]]:
    folder = Path(folder)

    def rows(name: str) -> list[dict[str, Any]]:
        return [json.loads(line) for line in (folder / name).read_text(encoding="utf-8")
                .splitlines() if line.strip()]

    sentences = [SentenceCase(
        id=r["id"], split=r["split"], question=r["question"], title=r["passage_title"],
        passage=r["passage_text"], sentence=r["sentence"], source=r["source"],
        previous=tuple(r.get("previous_sentences") or ()), meaningful=bool(r["meaningful"]),
        noise_kind=r.get("noise_kind"), support=r["support"], answers=bool(r["answers"]))
        for r in rows("sentences.jsonl")]
    relevance = [RelevanceCase(
        id=r["id"], split=r["split"], question=r["question"], title=r["passage_title"],
        passage=r["passage_text"], relevant=bool(r["relevant"]))
        for r in rows("relevance.jsonl")]
    return sentences, relevance


def question_of(case_id: str) -> str:
    """"git-004-m2" -> "git-004"."""
    return case_id.rsplit("-", 1)[0]


def judge_sentences(critic: Critic, cases: Sequence[SentenceCase]) -> list[Any]:
    """The critic's judgement of each case, with the model's earlier sentences of the same
    answer before it (so repeats can be seen)."""
    out = []
    for c in cases:
        judged = critic.support([*c.previous, c.sentence], c.passage_text)
        out.append(judged[-1])
    return out


def relevance_scores(critic: Critic, cases: Sequence[RelevanceCase]) -> list[float]:
    """s_rel of each case, each question's passages judged together (as in the engine)."""
    by_q: dict[str, list[int]] = {}
    for i, c in enumerate(cases):
        by_q.setdefault(question_of(c.id), []).append(i)
    scores = [0.0] * len(cases)
    for idx in by_q.values():
        got = critic.relevance(cases[idx[0]].question, [cases[i].passage_text for i in idx])
        for i, s in zip(idx, got):
            scores[i] = s
    return scores


def _share(num: int, den: int) -> float | None:
    return num / den if den else None


def measure_real(critic: Critic, sentences: Sequence[SentenceCase],
                 relevance: Sequence[RelevanceCase], *, split: str) -> dict[str, Any]:
    """The issue-9 figures on one split, for the model's own sentences:

    full_precision: of the sentences labelled "fully", the share that are meaningful and
    fully supported; noise_supported: noise sentences labelled fully or partially (the
    target is 0); partial_right: of those labelled "partially", the share truly partially
    supported (partial_at_least: partially or fully); full_recall: of the meaningful fully
    supported sentences, the share labelled "fully"; unchecked: share labelled
    "unchecked"; relevance_auc over the question/passage cases."""
    cases = [c for c in sentences if c.split == split and c.source == "model"]
    judged = judge_sentences(critic, cases)
    labels = [j.label for j in judged]
    full = [c for c, lab in zip(cases, labels) if lab == "fully"]
    part = [c for c, lab in zip(cases, labels) if lab == "partially"]
    true_full = [c for c in cases if c.meaningful and c.support == "fully"]
    rel = [c for c in relevance if c.split == split]
    rel_scores = relevance_scores(critic, rel)
    return {
        "n_sentences": len(cases),
        "n_labelled": {lab: labels.count(lab) for lab in ("fully", "partially", "none",
                                                          "unchecked")},
        "full_precision": _share(sum(c.meaningful and c.support == "fully" for c in full),
                                 len(full)),
        "noise_supported": sum(not c.meaningful for c in full + part),
        "n_noise": sum(not c.meaningful for c in cases),
        "partial_right": _share(sum(c.meaningful and c.support == "partially" for c in part),
                                len(part)),
        "partial_at_least": _share(sum(c.meaningful and c.support != "none" for c in part),
                                   len(part)),
        "full_recall": _share(sum(lab == "fully" for c, lab in zip(cases, labels)
                                  if c.meaningful and c.support == "fully"), len(true_full)),
        "unchecked": _share(labels.count("unchecked"), len(labels)),
        "n_relevance": len(rel),
        "relevance_auc": auc(rel_scores, [c.relevant for c in rel]),
        "relevance_accuracy": _share(sum((s >= RELEVANT_AT) == c.relevant
                                         for s, c in zip(rel_scores, rel)), len(rel)),
    }


def format_real(name: str, split: str, m: dict[str, Any]) -> str:
    def f(v: Any) -> str:
        return "-" if v is None else f"{v:.2f}"

    return (f"{name} on the {split} half ({m['n_sentences']} model sentences, "
            f"{m['n_relevance']} question/passage pairs): labelled {m['n_labelled']}; "
            f"fully precision {f(m['full_precision'])}, recall {f(m['full_recall'])}; "
            f"noise labelled supported {m['noise_supported']} of {m['n_noise']}; "
            f"partially right {f(m['partial_right'])} (at least partially "
            f"{f(m['partial_at_least'])}); unchecked {f(m['unchecked'])}; relevance AUC "
            f"{f(m['relevance_auc'])}, accuracy {f(m['relevance_accuracy'])}")
