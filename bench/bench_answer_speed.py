"""Issue 17's speed figure: the answer with the relevance model (the default: it reads
every candidate sentence, extract.RELEVANCE_POOL), with the model reading only the quote
scorer's best 16 (the pool before), and without it (the quote scorer's roles, as before),
side by side in one process,
alternating per question so that the machine's load falls on both alike. Prints figures,
asserts nothing.

    python bench/bench_answer_speed.py [--corpus postgres] [--limit 10]

Uses the bench's index of the corpus (bench/bench_retrieval.py --build-only) and the
default model (SmolLM2, mode always). The first answer of each kind is a warm-up (model
loads) and is not counted.
"""

from __future__ import annotations

import argparse
import os
import statistics
import sys
import time
from pathlib import Path

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE.parent))
sys.path.insert(0, str(HERE))
os.environ.setdefault("HF_HUB_OFFLINE", "1")


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--corpus", default="postgres")
    ap.add_argument("--limit", type=int, default=10)
    args = ap.parse_args()
    from bench_relevance import index_dir
    from retrieval_data import corpus, questions

    from localrag.answering.generate import extract
    from localrag.assistant import Assistant

    qs = questions(corpus(args.corpus), "natural")[:args.limit + 1]
    shipped_pool = extract.RELEVANCE_POOL
    ways = (("with the relevance model", shipped_pool), ("model on the scorer's best 16", 16),
            ("without", 0))
    times: dict[str, list[float]] = {key: [] for key, _ in ways}
    with Assistant.open(index_dir(args.corpus), overrides={"retrieval_mode": "always"}) as a:
        engine = a._get_engine()
        model = engine.answers
        if model is None:
            raise SystemExit("the relevance model is not installed (indexer/data/relevance/)")
        for n, q in enumerate(qs):
            for key, pool in ways[::1 if n % 2 else -1]:
                engine.answers = model if pool else None
                extract.RELEVANCE_POOL = pool or shipped_pool
                a.new_chat()
                t0 = time.perf_counter()
                a.ask(q.question, save=False)
                if n:
                    times[key].append(time.perf_counter() - t0)
        engine.answers = model
        extract.RELEVANCE_POOL = shipped_pool
    print(f"{args.corpus}: {len(qs) - 1} questions, each answered the three ways, alternating")
    base = statistics.median(times["without"])
    for key, ts in times.items():
        print(f"  {key:30s} p50 {statistics.median(ts):.2f} s  (x{statistics.median(ts) / base:.2f})")

    quote_cost(args.corpus)


def quote_cost(corpus_name: str) -> None:
    """What the relevance model costs within an answer, without the model's generation in the
    way: choose_quotes over each judged question's five passages (bench/data/relevance/
    tojudge-<corpus>.jsonl), every candidate read against the scorer's best 16, alternating."""
    import json

    from indexer.embedder import Embedder
    from indexer.relevance_model import RelevanceModel
    from localrag.answering.generate import extract

    path = HERE / "data" / "relevance" / f"tojudge-{corpus_name}.jsonl"
    if not path.exists():
        return
    by_q: dict[str, list[dict]] = {}
    for r in (json.loads(x) for x in path.read_text().splitlines() if x.strip()):
        by_q.setdefault(r["qid"], []).append(r)
    emb, rm = Embedder(), RelevanceModel()
    shipped = extract.RELEVANCE_POOL
    times: dict[int, list[float]] = {shipped: [], 16: []}
    read: dict[int, list[int]] = {shipped: [], 16: []}
    for n, rows in enumerate(by_q.values()):
        texts, titles = [r["text"] for r in rows], [r["title"] for r in rows]
        for pool in (shipped, 16)[::1 if n % 2 else -1]:
            extract.RELEVANCE_POOL = pool
            seen: list[int] = []

            def answers(q, t):  # noqa: ANN001, ANN202
                seen.append(len(t))
                return rm.probabilities(q, t)
            t0 = time.perf_counter()
            extract.choose_quotes(rows[0]["question"], texts, emb.encode, answers=answers, titles=titles)
            if n:
                times[pool].append(time.perf_counter() - t0)
                read[pool].append(sum(seen))
    extract.RELEVANCE_POOL = shipped
    print(f"{corpus_name}: choosing the quotes of {len(by_q) - 1} questions' five passages, alternating")
    for pool, ts in times.items():
        print(f"  model reads at most {pool:3d}: p50 {statistics.median(ts) * 1000:.0f} ms, "
              f"max {max(ts) * 1000:.0f} ms; sentences read median {statistics.median(read[pool]):.0f}")


if __name__ == "__main__":
    main()
