"""Relevance models side by side in the shipped answer combination, on the whole judged
sentence pools of the corpora left out: prints figures, asserts nothing.

    python bench/relevance_pools.py --models DIR,DIR [--corpora postgres-v3,debref-v3,zsh-v3]

For each pool (bench/sentence_pools.py: every quotable sentence of the shipped search's five
passages, judged whole by two annotators) the candidates are recomputed as the answer path
computes them (answer_combination.pool_features' reading), scored by each relevance model and
combined by the shipped extract.ANSWER_COMBINATION with its role rule (QUOTE_ANSWER_FLOOR,
ANSWER_MODEL_RELATIVE, ANSWER_MAX): first quote answers (P@1), one of the four answers
(hit@4), the ✔ share and the questions answered under the shipped rule, AUC; then the
model alone. The model-independent part (candidates, the quote scorer's features, the texts
the model reads) is cached under bench/out/pools/ by the candidate rules, so a second model
costs only its own reading.
"""

from __future__ import annotations

import argparse
import json
import os
import sys
from pathlib import Path

import numpy as np

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE.parent))
sys.path.insert(0, str(HERE))
os.environ.setdefault("HF_HUB_OFFLINE", "1")

from answer_combination import ROLE_GRID, add_follows, judged_candidates, rules_key  # noqa: E402
from pool_quality import evaluate, fit_logistic, show  # noqa: E402

MEASURED = "postgres-v3,debref-v3,zsh-v3"


def scored(corpus: str, emb) -> list[dict]:  # noqa: ANN001
    """Per judged question: the model-independent part of answer_features, cached."""
    from localrag.answering.generate import extract as ex

    cache = HERE / "out" / "pools" / f"scored-{corpus}-{rules_key()}.json"
    if cache.exists():
        return json.loads(cache.read_text())
    out = []
    for r, texts, titles, cands, judged, keep in judged_candidates(corpus):
        feats, probs = ex.score_candidates(r["question"], texts, cands, emb.encode)
        rows = ex.answer_features(r["question"], texts, titles, cands, feats, probs, [0.0] * len(cands))
        out.append({"qid": r["qid"], "question": r["question"], "keep": keep,
                    "labels": [judged[(cands[k].passage, cands[k].span.start)] for k in keep],
                    "passage": [c.passage for c in cands], "rows": rows,
                    "texts": [ex.answer_text(texts[c.passage], c.span, titles[c.passage]) for c in cands]})
    add_follows(corpus, out)     # chosen sentences that follow each other: one excerpt
    cache.parent.mkdir(parents=True, exist_ok=True)
    cache.write_text(json.dumps(out))
    return out


def with_model(q: dict, logits: list[float]) -> list[float]:
    """The shipped combination's probabilities of q's judged candidates with these logits."""
    from localrag.answering.generate.extract import answer_probability

    names, x = features(q, logits)
    return [answer_probability(dict(zip(names, row))) for row in x]


def features(q: dict, logits: list[float]) -> tuple[list[str], np.ndarray]:
    """answer_features' named signals of q's judged candidates with these logits."""
    top = max(logits)
    best: dict[int, float] = {}
    for p, z in zip(q["passage"], logits):
        best[p] = max(best.get(p, -1e9), z)
    rows = [dict(q["rows"][k], model=logits[k], model_below_best=logits[k] - top,
                 passage_best=best[q["passage"][k]] - top) for k in q["keep"]]
    names = list(rows[0])
    return names, np.array([[r[n] for n in names] for r in rows])


def refit(train: list[tuple[np.ndarray, list[int], list[int]]]):  # noqa: ANN201
    """A logistic combination fitted on the training pools' questions (standardised
    features, L2 0.01) and the role rule chosen there by the issue's two targets; returns
    (probability function, rule)."""
    x = np.vstack([t[0] for t in train])
    y = np.concatenate([np.array(t[1]) == 2 for t in train]).astype(float)
    mu, sd = x.mean(0), x.std(0) + 1e-9
    w = fit_logistic((x - mu) / sd, y, l2=1e-2)

    def prob(xq: np.ndarray) -> list[float]:
        return list(1 / (1 + np.exp(-(((xq - mu) / sd) @ w[:-1] + w[-1]))))

    res = evaluate([(lab, prob(xq), fol) for xq, lab, fol in train], rules=ROLE_GRID)
    n = res["n"]

    def progress(rule):  # noqa: ANN001, ANN202
        shown, hit, answered = res["rules"][rule]
        return min(hit / max(shown, 1) / 0.6, 1.0) + min(answered / n / 0.75, 1.0)

    best = max(ROLE_GRID, key=lambda r: (round(progress(r), 9), -r[2], r[0]))
    return prob, (float(best[0]), float(best[1]), int(best[2]))


def main() -> None:
    from indexer.embedder import Embedder
    from indexer.relevance_model import RelevanceModel
    from localrag.answering.generate.extract import ANSWER_MAX, ANSWER_MODEL_RELATIVE, QUOTE_ANSWER_FLOOR

    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--models", required=True)
    ap.add_argument("--corpora", default=MEASURED)
    ap.add_argument("--refit-on", default="", help="training pools to fit the combination on again")
    args = ap.parse_args()
    emb = Embedder()
    rule = (QUOTE_ANSWER_FLOOR, ANSWER_MODEL_RELATIVE, ANSWER_MAX)
    refits = {}
    for d in (args.models.split(",") if args.refit_on else []):
        rm = RelevanceModel(d)
        train = []
        for c in args.refit_on.split(","):
            for q in scored(c, emb):
                z = [float(x) for x in rm.logits(q["question"], q["texts"])]
                train.append((features(q, z)[1], q["labels"], q["follows"]))
        refits[d] = refit(train)
        print(f"{d}: fitted again on {args.refit_on} ({len(train)} questions), rule {refits[d][1]}")
    for corpus in args.corpora.split(","):
        qs = scored(corpus, emb)
        for d in args.models.split(","):
            rm = RelevanceModel(d)
            comb, alone = [], []
            for q in qs:
                z = [float(x) for x in rm.logits(q["question"], q["texts"])]
                comb.append((q["labels"], with_model(q, z), q["follows"]))
                alone.append((q["labels"], [1 / (1 + np.exp(-z[k])) for k in q["keep"]], q["follows"]))
            print(f"\n{corpus}, {d} ({len(qs)} questions)")
            show("shipped combination", evaluate(comb, rules=(rule,)))
            show("model alone", evaluate(alone, rules=(rule,)))
            if d in refits:
                prob, chosen = refits[d]
                show("combination fitted again", evaluate(
                    [(q["labels"], prob(features(q, [float(x) for x in rm.logits(q["question"], q["texts"])])[1]),
                      q["follows"]) for q in qs], rules=tuple(dict.fromkeys((rule, chosen)))))


if __name__ == "__main__":
    main()
