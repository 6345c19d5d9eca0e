"""Issue 17: how well a sentence ranking picks the answer from each question's whole pool of
quotable sentences, as annotators judged the pools (bench/sentence_pools.py). Prints
figures, asserts nothing.

    python bench/pool_quality.py                       # the shipped combination, stored in the pools
    python bench/pool_quality.py --model-dir DIR       # another relevance model beside it

For each question the answer path quotes the best `max_quotes` sentences by its probability
and shows as the answer (✔) those at or above a floor and a share of the best one
(extract.answer_roles). Here, per corpus:
- ceiling: questions with any answering sentence in the pool (search's share of the limit);
- P@1: the first quote answers; hit@4: one of the four quotes answers;
- per role rule (floor, ratio): the share of ✔ sentences that answer, ✔ sentences per
  question, and the questions answered by a ✔ sentence;
- AUC of "answers" against the rest over all candidates.
These count sentences only (no subject lines, no reading context, no code blocks), so they
track the judged answers' figures (bench_answer_judged.py) without being them.
"""

from __future__ import annotations

import argparse
import math
import os
import sys
from pathlib import Path

import numpy as np

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE.parent))
sys.path.insert(0, str(HERE))
os.environ.setdefault("HF_HUB_OFFLINE", "1")

from sentence_pools import labels_of, load_pool  # noqa: E402

RULES = ((0.2, 0.5), (0.3, 0.5), (0.3, 0.7), (0.4, 0.7), (0.5, 0.8), (0.0, 1.0))


def auc(pos: np.ndarray, neg: np.ndarray) -> float:
    if not len(pos) or not len(neg):
        return float("nan")
    allv = np.concatenate([pos, neg])
    ranks = allv.argsort().argsort().astype(float) + 1
    # ties: average ranks
    order = np.argsort(allv, kind="mergesort")
    sv = allv[order]
    i = 0
    while i < len(sv):
        j = i
        while j + 1 < len(sv) and sv[j + 1] == sv[i]:
            j += 1
        ranks[order[i:j + 1]] = (i + j) / 2 + 1
        i = j + 1
    return float((ranks[:len(pos)].sum() - len(pos) * (len(pos) + 1) / 2) / (len(pos) * len(neg)))


def excerpt_of(chosen: list[int], follows: list[int]) -> dict[int, int]:
    """Per chosen candidate, the first chosen candidate of its excerpt (extract.excerpts):
    `follows[k]` is the candidate that k comes right after in its passage (white space
    between), or -1."""
    chosen_set = set(chosen)
    head: dict[int, int] = {}

    def first(k: int) -> int:
        if k not in head:
            j = follows[k]
            head[k] = first(j) if j >= 0 and j in chosen_set else k
        return head[k]

    return {k: first(k) for k in chosen}


def evaluate(questions: list[tuple], *, max_quotes: int = 4, rules=RULES) -> dict:
    """questions: per question (labels, probabilities) over its candidates, or (labels,
    probabilities, follows) where follows[k] is the candidate k comes right after in its
    passage (-1: none): then, as the answer path shows them, chosen quotes that follow each
    other are one excerpt, a ✔ unit when any of its sentences passes the rule, answering
    when any of them answers. A rule is (floor, ratio) or (floor, ratio, at most this many
    ✔ sentences), among the first `max_quotes`."""
    n = len(questions)
    out = {"n": n, "ceiling": 0, "p1": 0, "hit4": 0, "rules": {}}
    pos, neg = [], []
    for lab, p, *rest in questions:
        if not lab:
            continue
        lab_a, p_a = np.array(lab), np.array(p, dtype=float)
        pos += list(p_a[lab_a == 2])
        neg += list(p_a[lab_a < 2])
        order = np.argsort(-p_a, kind="stable")[:max_quotes]
        out["ceiling"] += int((lab_a == 2).any())
        out["p1"] += int(lab_a[order[0]] == 2)
        out["hit4"] += int((lab_a[order] == 2).any())
        best = p_a[order[0]]
        group = excerpt_of([int(k) for k in order], rest[0]) if rest else {int(k): int(k) for k in order}
        for rule in rules:
            f, r, cap = (*rule, max_quotes)[:3]
            passing = {group[int(k)] for k in [k for k in order if p_a[k] >= f and p_a[k] >= r * best][:cap]}
            units = [[k for k in group if group[k] == g] for g in passing]
            answering = [any(lab_a[k] == 2 for k in u) for u in units]
            t = out["rules"].setdefault(tuple(rule), [0, 0, 0])
            t[0] += len(units)
            t[1] += int(sum(answering))
            t[2] += int(any(answering))
    out["auc"] = auc(np.array(pos), np.array(neg))
    return out


def show(name: str, res: dict) -> None:
    n = res["n"]
    print(f"  {name}: {n} questions; ceiling {res['ceiling'] / n:.3f}, P@1 {res['p1'] / n:.3f}, "
          f"hit@4 {res['hit4'] / n:.3f}, AUC {res['auc']:.3f}")
    for rule, (shown, hit, answered) in res["rules"].items():
        f, r = rule[:2]
        cap = f", at most {rule[2]}" if len(rule) > 2 else ""
        print(f"      ✔ at >= {f:.3g} and >= {r:.1f} x best{cap}: share {hit / max(shown, 1):.3f} "
              f"({hit}/{shown}, {shown / n:.2f} a question), answered {answered / n:.3f}")


def stored(corpus: str, key: str) -> list[tuple[list[int], list[float]]]:
    pool = load_pool(corpus)
    lab = labels_of(corpus)
    return [(lab[r["qid"]], [c[key] for c in r["candidates"]]) for r in pool if r["qid"] in lab]


def model_scores(corpus: str, model_dir: str) -> list[list[float]]:
    """Per question of the pool, per candidate: the model's probability (as the answer path
    asks it: title, subject line, sentence), cached under bench/out/pools/."""
    import hashlib
    import json

    from indexer.relevance_model import RelevanceModel, unit_text

    d = Path(model_dir)
    key = hashlib.sha1(b"".join((d / f).read_bytes() for f in ("relevance.int8.onnx", "relevance.json"))
                       ).hexdigest()[:12]
    cache = HERE / "out" / "pools" / f"scores-{corpus}-{key}.json"
    if cache.exists():
        return json.loads(cache.read_text())
    rm = RelevanceModel(d)
    out = []
    for r in load_pool(corpus):
        titles = {p["rank"]: p["title"] for p in r["passages"]}
        texts = [unit_text(titles[c["passage"]], c["subject"], c["sentence"]) for c in r["candidates"]]
        out.append([float(x) for x in rm.probabilities(r["question"], texts)] if texts else [])
    cache.parent.mkdir(parents=True, exist_ok=True)
    cache.write_text(json.dumps(out))
    return out


def logit(p) -> np.ndarray:  # noqa: ANN001
    p = np.clip(np.asarray(p, dtype=float), 1e-6, 1 - 1e-6)
    return np.log(p / (1 - p))


def fit_logistic(x: np.ndarray, y: np.ndarray, *, l2: float = 1e-3, steps: int = 4000) -> np.ndarray:
    xb = np.hstack([x, np.ones((len(x), 1))])
    w = np.zeros(xb.shape[1])
    for _ in range(steps):
        p = 1 / (1 + np.exp(-(xb @ w)))
        w -= 0.5 * (xb.T @ (p - y) / len(y) + l2 * np.r_[w[:-1], 0.0])
    return w


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--corpora", default="postgres,debref,zsh")
    ap.add_argument("--keys", default="combined,model,scorer")
    ap.add_argument("--model-dir", default="", help="a relevance model to measure beside the stored figures")
    args = ap.parse_args()
    names = args.corpora.split(",")
    feats: dict[str, list[tuple[list[int], np.ndarray]]] = {}
    if args.model_dir:
        for name in names:
            pool = load_pool(name)
            lab = labels_of(name)
            scores = model_scores(name, args.model_dir)
            feats[name] = [(lab[r["qid"]], np.c_[logit(s), logit([c["scorer"] for c in r["candidates"]])])
                           for r, s in zip(pool, scores) if r["qid"] in lab and s]
    for name in names:
        print(f"{name}:")
        for key in args.keys.split(","):
            show(key, evaluate(stored(name, key)))
        if feats:
            show("new model", evaluate([(y, list(1 / (1 + np.exp(-x[:, 0])))) for y, x in feats[name]]))
            others = [row for o in names if o != name for row in feats[o]]
            if others:   # the combination with the scorer fitted on the other corpora
                x = np.vstack([x for _, x in others])
                y = np.concatenate([np.array(lab) == 2 for lab, _ in others]).astype(float)
                w = fit_logistic(x, y)
                print(f"    fit on {'+'.join(o for o in names if o != name)}: z = {w[0]:.3f} model "
                      f"+ {w[1]:.3f} scorer + {w[2]:.3f}")
                show("new model + scorer", evaluate([(lab, list(1 / (1 + np.exp(-(x @ w[:2] + w[2])))))
                                                     for lab, x in feats[name]]))


if __name__ == "__main__":
    main()
