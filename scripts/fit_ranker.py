"""Fit localrag's ranking model (indexer/learned_rank.py) on the TRAINING corpora only.

    python scripts/fit_ranker.py            # -> indexer/data/ranker.json

Questions: the annotated training sets of kernel, git, rust and vim
(bench/data/retrieval/train-*, heldout-*, train2-*.jsonl; 600 questions, none of them an
evaluation question; postgres and debref, the corpora left out, have none). For
each, the first stage's top RERANK_DEPTH candidates (score fusion with lexical winners
pinned, as `localrag search` runs it) with their features; the candidate holding the
key phrase in the answering file is the positive. A listwise logistic model (softmax
over each question's candidates, L2) is fitted by gradient descent. Questions whose
answer is not among the candidates teach nothing and are left out.

Needs the bench indexes (bench/bench_retrieval.py --build-only).
"""

from __future__ import annotations

import argparse
import json
import sys
import time
from pathlib import Path

import numpy as np

REPO = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(REPO))
sys.path.insert(0, str(REPO / "bench"))

from retrieval_data import norm  # noqa: E402

TRAIN_CORPORA = ("kernel", "git", "rust", "vim")


def candidate_features(local, query: str, depth: int):  # noqa: ANN001, ANN201
    """(candidates, features) of the first stage's top `depth` for `query`."""
    from indexer import search
    from indexer.learned_rank import candidates_for, features

    qvec = local.idx.embedder.encode([query])[0]
    dense, lexical = search.scored_rankings(local.vectors, qvec, query, search.DEPTH)
    fused = [cid for cid, _ in search.fuse(dense, lexical)][:depth]
    rows = local.idx.store.fetch_chunks(fused)
    cands = candidates_for(fused, rows, dense, lexical)
    feats = features(query, cands, idf=local.vectors.lexical.term_idf(query),
                     embed=lambda t: local.idx.embedder.encode(t), qvec=qvec,
                     vector_of=local.vectors.vectors_of)
    return cands, feats, rows


def is_hit(local, q, cand, row) -> bool:  # noqa: ANN001
    key = norm(q.key_phrase)
    return local.rel(row[1]) == q.file and key in norm(cand.text) and (
        not q.in_source or key in norm(local.lines.span(row[1], row[4], row[5])))


def fit(groups: list[tuple[np.ndarray, np.ndarray]], *, l2: float = 1e-2, steps: int = 3000,
        lr: float = 0.05) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """Listwise logistic: maximise log sum_{positives} softmax(X w); returns mean, std, w.
    The groups are padded into one (questions, candidates, features) array, so each
    step is a few array operations whatever the number of questions."""
    allx = np.vstack([x for x, _ in groups])
    mean, std = allx.mean(0), allx.std(0) + 1e-6
    n_g, width, n_f = len(groups), max(len(x) for x, _ in groups), allx.shape[1]
    X = np.zeros((n_g, width, n_f))
    Y = np.zeros((n_g, width))
    mask = np.zeros((n_g, width), dtype=bool)
    for i, (x, y) in enumerate(groups):
        X[i, :len(x)] = (x - mean) / std
        Y[i, :len(y)] = y
        mask[i, :len(x)] = True
    w = np.zeros(n_f)
    m = np.zeros_like(w)
    v = np.zeros_like(w)
    for t in range(1, steps + 1):
        z = np.where(mask, X @ w, -np.inf)
        p = np.exp(z - z.max(1, keepdims=True))
        p /= p.sum(1, keepdims=True)
        pp = p * Y
        pp /= pp.sum(1, keepdims=True)
        grad = l2 * w + np.einsum("gc,gcf->f", p - pp, X) / n_g
        m = 0.9 * m + 0.1 * grad
        v = 0.999 * v + 0.001 * grad ** 2
        w -= lr * (m / (1 - 0.9 ** t)) / (np.sqrt(v / (1 - 0.999 ** t)) + 1e-8)
    return mean, std, w


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--out", default=str(REPO / "indexer" / "data" / "ranker.json"))
    args = ap.parse_args()
    from bench_relevance import index_dir, set_questions
    from bench_retrieval import LocalIndex
    from retrieval_data import corpus

    from indexer.learned_rank import FEATURES
    from indexer.search import RERANK_DEPTH

    groups, n_q, used = [], 0, 0
    for name in TRAIN_CORPORA:
        local = LocalIndex(index_dir(name), "onnx-int8")
        for q in set_questions(corpus(name), "train"):
            n_q += 1
            cands, feats, rows = candidate_features(local, q.question, RERANK_DEPTH)
            y = np.array([is_hit(local, q, c, rows[c.chunk_id]) for c in cands], dtype=float)
            if y.sum() == 0 or y.sum() == len(y):
                continue
            used += 1
            groups.append((feats.astype(float), y))
        local.idx.close()
    mean, std, w = fit(groups)
    info = {"features": list(FEATURES), "mean": mean.round(6).tolist(), "std": std.round(6).tolist(),
            "weights": w.round(6).tolist(), "training_corpora": sorted(TRAIN_CORPORA),
            "questions": used, "questions_seen": n_q, "depth": RERANK_DEPTH,
            "fitted": time.strftime("%Y-%m-%d"),
            "model": "listwise logistic (softmax over each question's candidates), L2 0.01"}
    Path(args.out).write_text(json.dumps(info, indent=1) + "\n")
    print(f"{used} of {n_q} questions had their answer among the candidates; weights:")
    for f, x in zip(FEATURES, w):
        print(f"  {f:<14}{x:+.3f}")


if __name__ == "__main__":
    main()
