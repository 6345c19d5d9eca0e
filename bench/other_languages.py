"""Search on documents in another language: the Debian Reference in English, Japanese and
German, the same 40 questions written in each language by annotator sessions
(bench/data/retrieval/debref-{ja,de}.jsonl, RUBRIC-questions.md "Other languages"). Prints
figures, asserts nothing; nothing here was tuned on these sets.

    python bench/bench_retrieval.py --corpora debref-ja,debref-de --build-only   # once
    python bench/other_languages.py

recall@5 by the key-phrase rule (bench_retrieval's: the key phrase in a top-5 passage of
the answering file) for each side alone, the fused first stage and the shipped search with
its second stage (the relevance model over the fused top 20, search.rerank_judged). The
embedding model (all-MiniLM-L6-v2) and the relevance model were trained on English text.
"""

from __future__ import annotations

import argparse
import os
import statistics
import sys
import time
from pathlib import Path

os.environ.setdefault("HF_HUB_OFFLINE", "1")
HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE.parent))
sys.path.insert(0, str(HERE))

from retrieval_data import corpus, norm, questions  # noqa: E402

SIDES = ("dense", "lexical", "fused", "search")


def main() -> None:
    from bench_relevance import index_dir
    from bench_retrieval import LocalIndex
    from sentence_rerank import PassageScorer

    from indexer import search

    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--corpora", default="debref,debref-ja,debref-de")
    ap.add_argument("--k", type=int, default=5)
    ap.add_argument("--model-dir", default=str(HERE.parent / "indexer" / "data" / "relevance"))
    ap.add_argument("--show-misses", action="store_true", help="print each question the search misses")
    args = ap.parse_args()
    scorer = PassageScorer(args.model_dir)
    print(f"recall@{args.k} by the key-phrase rule; in brackets the median rank of the answering "
          f"passage among the first 50 of that side, where found")
    for name in args.corpora.split(","):
        local = LocalIndex(index_dir(name), "onnx-int8")
        qs = questions(corpus(name))
        found = {s: 0 for s in SIDES}
        ranks: dict[str, list[int]] = {s: [] for s in SIDES}
        times = []
        for q in qs:
            v = local.idx.embedder.encode([q.question])[0]
            t0 = time.perf_counter()
            dense, lexical = search.scored_rankings(local.vectors, v, q.question, 50)
            pins = search.lexical_winners(lexical)
            fused = search.fuse(dense, lexical, pinned=pins)
            head = local.idx.store.fetch_chunks([cid for cid, _ in fused[:search.JUDGE_DEPTH]])
            order, _ = search.rerank_judged(scorer, q.question, fused, head, keep_first=pins)
            times.append(time.perf_counter() - t0)
            lists = {"dense": [c for c, _ in dense], "lexical": [c for c, _ in lexical],
                     "fused": [c for c, _ in fused], "search": order}
            rows = local.idx.store.fetch_chunks(list({c for ids in lists.values() for c in ids[:50]}))
            key = norm(q.key_phrase)
            for side, ids in lists.items():
                for rank, cid in enumerate(ids[:50], 1):
                    r = rows.get(cid)
                    if r is not None and local.rel(r[1]) == q.file and key in norm(r[3]):
                        ranks[side].append(rank)
                        found[side] += rank <= args.k
                        break
                else:
                    if side == "search" and args.show_misses:
                        print(f"  miss {q.id}: {q.question}")
        n = len(qs) or 1
        print(f"{name} ({len(qs)} questions): " + "; ".join(
            f"{s} {found[s] / n:.3f} [{statistics.median(ranks[s]) if ranks[s] else '-'}]" for s in SIDES)
            + f"; search p50 {statistics.median(times) if times else 0:.2f} s")
        local.idx.close()


if __name__ == "__main__":
    main()
