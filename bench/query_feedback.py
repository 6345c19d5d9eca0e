"""Issue 17: the dense side's pseudo-relevance feedback (search.FEEDBACK_DEPTH /
FEEDBACK_WEIGHT), chosen leave-one-corpus-out. Prints figures, asserts nothing.

    python bench/query_feedback.py [--corpora postgres,debref,...] [--which natural,exact]

For every question: the shipped search (the fused first stage with BM25's winners pinned,
the relevance model's second stage over the fused top 20) without feedback, and with the
dense side searched again from the query vector moved toward the mean of the first `depth`
fused passages (search.feedback_dense) at each (depth, weight) of the grid; alpha stays
search.ALPHA. Recall@5 by the key-phrase rule (the key phrase in a top-5 passage of the
answering file), for the search, the fused first stage and the dense side. Then, for each
corpus left out, the grid point with the most natural questions found on the other corpora
(then their mean reciprocal rank; ties to no feedback, then to the smaller change) and
what it finds on the corpus left out, with what the fused first stage alone (search with
the second stage off, which runs without feedback) would find at that point. Indexes: bench/bench_retrieval.py --build-only (and
bench/pdf_layout.py for rpdf and gnupdf).
"""

from __future__ import annotations

import argparse
import os
import sys
from pathlib import Path

os.environ.setdefault("HF_HUB_OFFLINE", "1")
HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE.parent))
sys.path.insert(0, str(HERE))

from retrieval_data import corpus, norm, questions  # noqa: E402

CORPORA = "postgres,debref,zsh,flask,rpdf,gnupdf,pycode,pycode2,mdnotes,mdnotes2"
GRID = [(0, 0.0)] + [(d, w) for d in (3, 5, 10, 15, 20) for w in (0.5, 1.0, 2.0)]
SIDES = ("search", "fused", "dense")


def ranks_of(local, q, scorer, grid) -> dict[tuple[int, float], tuple]:  # noqa: ANN001
    """Per grid point, the answering passage's rank (None beyond 50) in each of SIDES."""
    from indexer import search

    v = local.idx.embedder.encode([q.question])[0]
    dense, lexical = search.scored_rankings(local.vectors, v, q.question, 50)
    pins = search.lexical_winners(lexical)
    fused0 = search.fuse(dense, lexical, pinned=pins)
    key = norm(q.key_phrase)
    out = {}
    for depth, weight in grid:
        again = search.feedback_dense(local.vectors, v, fused0, 50, feedback_depth=depth, weight=weight)
        d = dense if again is None else again
        fused = search.fuse(d, lexical, pinned=pins)
        rows = local.idx.store.fetch_chunks([c for c, _ in fused[:50]] + [c for c, _ in d[:50]])
        order, _ = search.rerank_judged(scorer, q.question, fused, rows, keep_first=pins)

        def rank(ids: list[int]) -> int | None:
            for r, cid in enumerate(ids[:50], 1):
                row = rows.get(cid)
                if row is not None and local.rel(row[1]) == q.file and key in norm(row[3]):
                    return r
            return None
        out[(depth, weight)] = (rank(order), rank([c for c, _ in fused]), rank([c for c, _ in d]))
    return out


def main() -> None:
    from bench_relevance import index_dir
    from bench_retrieval import LocalIndex
    from sentence_rerank import PassageScorer

    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--corpora", default=CORPORA)
    ap.add_argument("--which", default="natural,exact")
    ap.add_argument("--model-dir", default=str(HERE.parent / "indexer" / "data" / "relevance"))
    args = ap.parse_args()
    scorer = PassageScorer(args.model_dir)
    found: dict[tuple[str, str], dict] = {}     # (corpus, which) -> grid point -> side -> [hits@5]
    mrr: dict[tuple[str, str], dict] = {}
    sizes: dict[tuple[str, str], int] = {}
    for name in args.corpora.split(","):
        local = LocalIndex(index_dir(name), "onnx-int8")
        for which in args.which.split(","):
            qs = questions(corpus(name), which)
            if not qs:
                continue
            sizes[(name, which)] = len(qs)
            f = found[(name, which)] = {g: [0, 0, 0] for g in GRID}
            m = mrr[(name, which)] = {g: 0.0 for g in GRID}
            for q in qs:
                for g, rs in ranks_of(local, q, scorer, GRID).items():
                    for j, r in enumerate(rs):
                        f[g][j] += r is not None and r <= 5
                    m[g] += 1 / rs[0] if rs[0] is not None and rs[0] <= 20 else 0.0
            base = f[GRID[0]]
            print(f"{name} {which} ({len(qs)} questions), recall@5 search / fused / dense; no feedback "
                  f"{base[0] / len(qs):.3f} / {base[1] / len(qs):.3f} / {base[2] / len(qs):.3f}", flush=True)
            for g in GRID[1:]:
                print(f"  depth {g[0]:2d} weight {g[1]:.2f}: " + " / ".join(
                    f"{x / len(qs):.3f}" for x in f[g]))
        local.idx.close()
    natural = [k for k in found if k[1] == "natural"]
    print("\nleft out (natural questions): chosen on the others, search recall@5 without -> with")
    totals = [0, 0, 0]
    for left in natural:
        others = [k for k in natural if k != left]
        best = max(GRID, key=lambda g: (sum(found[k][g][0] for k in others), sum(mrr[k][g] for k in others),
                                        g == GRID[0], -g[1], -g[0]))
        n = sizes[left]
        before, after = found[left][GRID[0]][0], found[left][best][0]
        totals[0] += before
        totals[1] += after
        totals[2] += n
        exact = (left[0], "exact")
        ex = (f"; exact {found[exact][GRID[0]][0]}/{sizes[exact]} -> {found[exact][best][0]}/{sizes[exact]}"
              if exact in found else "")
        first = f"; the fused first stage {found[left][GRID[0]][1]}/{n} -> {found[left][best][1]}/{n}"
        print(f"  {left[0]:9s} depth {best[0]:2d} weight {best[1]:.2f}: {before}/{n} -> {after}/{n} "
              f"({before / n:.3f} -> {after / n:.3f}){ex}{first}")
    if natural:
        print(f"  all corpora left out: {totals[0]}/{totals[2]} -> {totals[1]}/{totals[2]}")


if __name__ == "__main__":
    main()
