"""Candidates for annotators to judge (issue 17): per natural question of the corpora left
out (postgres, debref), the top 5 passages of localrag's search (fused, before any
reranking), written to bench/data/relevance/tojudge-<corpus>.jsonl. The annotators'
verdicts (RUBRIC-relevance.md) go to judged-<corpus>.jsonl; bench/bench_relevance.py
reads them to measure the relevance model's AUC on corpora it never saw.

    python scripts/make_relevance_judging.py --corpora postgres,debref
"""

from __future__ import annotations

import argparse
import json
import sys
from pathlib import Path

REPO = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(REPO))
sys.path.insert(0, str(REPO / "bench"))

from retrieval_data import corpus, questions  # noqa: E402

OUT_DIR = REPO / "bench" / "data" / "relevance"


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--corpora", default="postgres,debref")
    ap.add_argument("--k", type=int, default=5)
    args = ap.parse_args()
    from bench_relevance import index_dir
    from bench_retrieval import LocalIndex

    from indexer import search

    for name in args.corpora.split(","):
        local = LocalIndex(index_dir(name), "onnx-int8")
        rows_out = []
        for q in questions(corpus(name), "natural"):
            v = local.idx.embedder.encode([q.question])[0]
            dense, lexical = search.scored_rankings(local.vectors, v, q.question, 50)
            ids = [cid for cid, _ in search.fuse(dense, lexical)][:args.k]
            rows = local.idx.store.fetch_chunks(ids)
            for rank, cid in enumerate(ids, 1):
                r = rows[cid]
                rows_out.append(dict(qid=q.id, question=q.question, rank=rank,
                                     chunk_key=f"{local.rel(r[1])}#{cid}", title=r[2], text=r[3]))
        path = OUT_DIR / f"tojudge-{name}.jsonl"
        path.write_text("".join(json.dumps(x, ensure_ascii=False) + "\n" for x in rows_out))
        print(f"{name}: {len(rows_out)} passages -> {path}")
        local.idx.close()


if __name__ == "__main__":
    main()
