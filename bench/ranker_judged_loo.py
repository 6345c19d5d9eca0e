"""Issue 17: would the learned ranker win if fitted on the annotators' labels? Prints figures,
asserts nothing.

    python bench/ranker_judged_loo.py [--reuse]     # about 25 minutes on 2 cores, 2 with --reuse

The shipped learned ranker (indexer/learned_rank.py, off by default) is fitted by
scripts/fit_ranker.py on 600 training questions of kernel, git, rust and vim whose positive
is the passage holding the key phrase. Here its features of the fused top RERANK_DEPTH are
taken for every natural question of the five corpora annotators judged (kernel, git,
postgres, debref, zsh; labels as bench/judged_recall.py reads them), and the same listwise
model is fitted each corpus left out: on the other four corpora's judged labels (a passage
labelled 2 is a positive; one nobody judged counts as not), alone, with the key phrase as
a further positive ("union"), and with the 600 training questions added. Printed per corpus
left out: questions with a judged answer in the reordered top 5, with [n] top-5 passages
nobody judged (counted as misses), beside the fused order and the shipped-style fit.
"""

from __future__ import annotations

import argparse
import os
import pickle
import sys
from pathlib import Path

import numpy as np

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE.parent))
sys.path.insert(0, str(HERE))
sys.path.insert(0, str(HERE.parent / "scripts"))
os.environ.setdefault("HF_HUB_OFFLINE", "1")

JUDGED = ("kernel", "git", "postgres", "debref", "zsh")
CACHE = HERE / "out" / "ranker-judged"


def collect(name: str, which: str) -> list[dict]:
    """Per question: features of the fused top RERANK_DEPTH, their judged labels (None:
    nobody judged it) and whether each holds the key phrase."""
    from bench_relevance import index_dir, set_questions
    from bench_retrieval import LocalIndex
    from fit_ranker import TRAIN_CORPORA, candidate_features, is_hit
    from judged_recall import labels_of
    from retrieval_data import corpus, questions

    from indexer.search import RERANK_DEPTH

    assert which == "natural" or name in TRAIN_CORPORA
    labels = labels_of(name) if which == "natural" else {}
    local = LocalIndex(index_dir(name), "onnx-int8")
    qs = questions(corpus(name), "natural") if which == "natural" else set_questions(corpus(name), "train")
    out = []
    for q in qs:
        cands, feats, rows = candidate_features(local, q.question, RERANK_DEPTH)
        out.append({"qid": q.id, "feats": feats,
                     "lab": [labels.get((q.id, local.rel(rows[c.chunk_id][1]), rows[c.chunk_id][3]))
                             for c in cands],
                     "kp": [is_hit(local, q, c, rows[c.chunk_id]) for c in cands]})
    local.idx.close()
    return out


def cached(name: str, which: str, reuse: bool) -> list[dict]:
    path = CACHE / f"{name}-{which}.pkl"
    if reuse and path.exists():
        return pickle.loads(path.read_bytes())
    data = collect(name, which)
    CACHE.mkdir(parents=True, exist_ok=True)
    path.write_bytes(pickle.dumps(data))
    print(f"  features of {name} ({which}): {len(data)} questions", flush=True)
    return data


def groups(data: list[dict], positive) -> list[tuple[np.ndarray, np.ndarray]]:  # noqa: ANN001
    out = []
    for d in data:
        labs = d["lab"] or [None] * len(d["kp"])
        y = np.array([positive(lab, kp) for lab, kp in zip(labs, d["kp"])], dtype=float)
        if 0 < y.sum() < len(y):        # a question with no positive (or only) teaches nothing
            out.append((d["feats"].astype(float), y))
    return out


def found(data: list[dict], model, k: int = 5) -> tuple[int, int]:  # noqa: ANN001
    """(questions with a judged answer in the top k, top-k passages nobody judged)."""
    hits = unjudged = 0
    for d in data:
        if model is None:
            order = list(range(len(d["lab"])))
        else:
            mean, std, w = model
            order = list(np.argsort(-(((d["feats"] - mean) / std) @ w), kind="stable"))
        top = order[:k]
        hits += any(d["lab"][i] == 2 for i in top)
        unjudged += sum(d["lab"][i] is None for i in top)
    return hits, unjudged


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--reuse", action="store_true", help=f"reuse the features cached under {CACHE}")
    args = ap.parse_args()
    from fit_ranker import TRAIN_CORPORA, fit

    nat = {c: cached(c, "natural", args.reuse) for c in JUDGED}
    train = [d for c in TRAIN_CORPORA for d in cached(c, "train", args.reuse)]
    judged = lambda lab, kp: lab == 2           # noqa: E731
    union = lambda lab, kp: lab == 2 or kp      # noqa: E731
    key_phrase = lambda lab, kp: kp             # noqa: E731
    rows = {"fused (shipped)": {c: found(nat[c], None) for c in JUDGED}}
    shipped_like = fit(groups(train, key_phrase))
    rows["fitted on the training questions (as shipped)"] = {c: found(nat[c], shipped_like) for c in JUDGED}
    for label, positive in (("judged", judged), ("judged or key phrase", union)):
        for with_train in (False, True):
            name = f"fitted on the other corpora, {label}" + (" + training questions" if with_train else "")
            rows[name] = {}
            for c in JUDGED:
                g = groups([d for o in JUDGED if o != c for d in nat[o]], positive)
                if with_train:
                    g += groups(train, key_phrase)
                rows[name][c] = found(nat[c], fit(g))
    n = {c: len(nat[c]) for c in JUDGED}
    print("judged recall@5, each corpus left out ([n]: top-5 passages nobody judged, counted as misses)")
    print(f"  {'':72}" + "".join(f"{c + f' ({n[c]})':>14}" for c in JUDGED))
    for name, res in rows.items():
        print(f"  {name:72}" + "".join(f"{f'{h / n[c]:.3f} [{u}]':>14}" for c, (h, u) in res.items()))


if __name__ == "__main__":
    main()
