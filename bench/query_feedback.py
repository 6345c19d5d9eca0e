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


EXPANSION_GRID = [(0, 0, 0.0)] + [(m, t, w) for m in (5, 10) for t in (10, 20) for w in (0.2, 0.5)]


def expanded_lexical(local, query: str, fused: list[tuple[int, float]], passages: int, terms: int,  # noqa: ANN001
                     weight: float) -> list[tuple[int, float]]:
    """BM25 with the query expanded from the first `passages` fused passages (RM3-like,
    tried and not kept): their `terms` terms of most weight (share of each passage's terms x
    idf, the query's own and terms of one chunk left out), each term's BM25 weighted by its
    share, times `weight` x the number of query terms, added to the query's BM25."""
    import math
    from collections import Counter

    import numpy as np

    bm = local.vectors.lexical
    n = max(len(bm._slot), 1)
    own = set(bm.query_terms(query))
    rows = local.idx.store.fetch_chunks([c for c, _ in fused[:passages]])
    mass: Counter = Counter()
    for cid, row in rows.items():
        toks = bm.tokenize(f"{row[2]}\n{row[3]}")
        for term, tf in Counter(toks).items():
            tid = bm.vocab.get(term)
            if tid is not None and tid not in own:
                mass[tid] += tf / max(len(toks), 1)
    tail = bm._tail_postings() if bm._tail else {}

    def df(tid: int) -> int:
        got = int(bm._indptr[tid + 1] - bm._indptr[tid]) if tid + 1 < len(bm._indptr) else 0
        return got + (len(tail[tid][0]) if tid in tail else 0)
    scored = sorted(((x * math.log(1 + (n - d + 0.5) / (d + 0.5)), tid) for tid, x in mass.items()
                     if (d := df(tid)) >= 2), reverse=True)[:terms]
    total = sum(x for x, _ in scored) or 1.0
    base = bm.scores(query)
    extra = np.zeros_like(base)
    for x, tid in scored:
        extra += (x / total) * bm.scores(bm.vocab.term(tid))
    combined = base + weight * max(len(own), 1) * extra
    hits = np.nonzero(combined > 0)[0]
    hits = hits[np.argsort(-combined[hits], kind="stable")][:50]
    return [(int(bm.labels[h]), float(combined[h])) for h in hits]


def expansion_ranks(local, q, scorer) -> dict[tuple, int | None]:  # noqa: ANN001
    """Per EXPANSION_GRID point, the answering passage's rank in the shipped search (the
    dense side with the shipped feedback) with BM25's query expanded."""
    from indexer import search

    v = local.idx.embedder.encode([q.question])[0]
    dense, lexical = search.scored_rankings(local.vectors, v, q.question, 50)
    pins = search.lexical_winners(lexical)
    again = search.feedback_dense(local.vectors, v, search.fuse(dense, lexical, pinned=pins), 50) or dense
    first = search.fuse(again, lexical, pinned=pins)
    key = norm(q.key_phrase)
    out = {}
    for point in EXPANSION_GRID:
        lx = lexical if point[0] == 0 else expanded_lexical(local, q.question, first, *point)
        fused = search.fuse(again, lx, pinned=pins)
        rows = local.idx.store.fetch_chunks([c for c, _ in fused[:50]])
        order, _ = search.rerank_judged(scorer, q.question, fused, rows, keep_first=pins)
        out[point] = next((r for r, cid in enumerate(order[:50], 1) if cid in rows and
                           local.rel(rows[cid][1]) == q.file and key in norm(rows[cid][3])), None)
    return out


def main() -> None:
    from bench_relevance import index_dir
    from bench_retrieval import LocalIndex
    from sentence_rerank import PassageScorer

    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--corpora", default=CORPORA)
    ap.add_argument("--which", default="natural,exact")
    ap.add_argument("--model-dir", default=str(HERE.parent / "indexer" / "data" / "relevance"))
    ap.add_argument("--lexical-expansion", action="store_true",
                    help="instead: BM25's query expanded from the first fused passages (RM3-like, "
                         "expanded_lexical) on top of the shipped feedback, recall@5 of the shipped "
                         "search per EXPANSION_GRID point (passages, terms, weight)")
    args = ap.parse_args()
    scorer = PassageScorer(args.model_dir)
    if args.lexical_expansion:
        totals = {p: 0 for p in EXPANSION_GRID}
        for name in args.corpora.split(","):
            local = LocalIndex(index_dir(name), "onnx-int8")
            qs = questions(corpus(name), "natural")
            hits = {p: 0 for p in EXPANSION_GRID}
            for q in qs:
                for p, r in expansion_ranks(local, q, scorer).items():
                    hits[p] += r is not None and r <= 5
            for p in EXPANSION_GRID:
                totals[p] += hits[p]
            print(f"{name} ({len(qs)} natural questions), search recall@5 by (passages, terms, weight): "
                  + "; ".join(f"{p}: {hits[p]}" for p in EXPANSION_GRID), flush=True)
            local.idx.close()
        print("all: " + "; ".join(f"{p}: {totals[p]}" for p in EXPANSION_GRID))
        return
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
