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

from answer_combination import add_follows, rules_key  # noqa: E402
from pool_quality import evaluate, show  # noqa: E402
from sentence_pools import labels_of, load_pool  # noqa: E402

MEASURED = "postgres-v3,debref-v3,zsh-v3"


def scored(corpus: str, emb) -> list[dict]:  # noqa: ANN001
    """Per judged question: the model-independent part of answer_features, cached."""
    from localrag.answering.generate import extract as ex

    cache = HERE / "out" / "pools" / f"scored-{corpus}-{rules_key()}.json"
    if cache.exists():
        return json.loads(cache.read_text())
    labels = labels_of(corpus)
    out = []
    for r in load_pool(corpus):
        lab = labels.get(r["qid"])
        if lab is None:
            continue
        texts = [p["text"] for p in r["passages"]]
        titles = [p["title"] for p in r["passages"]]
        cands = ex.candidates_of(r["question"], texts)
        judged = {(c["passage"] - 1, c["start"]): y for c, y in zip(r["candidates"], lab)}
        keep = [k for k, c in enumerate(cands) if (c.passage, c.span.start) in judged]
        if not keep:
            continue
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

    top = max(logits)
    best: dict[int, float] = {}
    for p, z in zip(q["passage"], logits):
        best[p] = max(best.get(p, -1e9), z)
    probs = []
    for k in q["keep"]:
        row = dict(q["rows"][k], model=logits[k], model_below_best=logits[k] - top,
                   passage_best=best[q["passage"][k]] - top)
        probs.append(answer_probability(row))
    return probs


def main() -> None:
    from indexer.embedder import Embedder
    from indexer.relevance_model import RelevanceModel
    from localrag.answering.generate.extract import ANSWER_MAX, ANSWER_MODEL_RELATIVE, QUOTE_ANSWER_FLOOR

    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--models", required=True)
    ap.add_argument("--corpora", default=MEASURED)
    args = ap.parse_args()
    emb = Embedder()
    rule = (QUOTE_ANSWER_FLOOR, ANSWER_MODEL_RELATIVE, ANSWER_MAX)
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


if __name__ == "__main__":
    main()
