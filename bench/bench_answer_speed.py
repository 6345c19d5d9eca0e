"""Issue 17's speed figure: the answer with the relevance model (the default) against the
same answer without it (the quote scorer's roles, as before), side by side in one process,
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

    from localrag.assistant import Assistant

    qs = questions(corpus(args.corpus), "natural")[:args.limit + 1]
    times: dict[str, list[float]] = {"with the relevance model": [], "without": []}
    with Assistant.open(index_dir(args.corpus), overrides={"retrieval_mode": "always"}) as a:
        engine = a._get_engine()
        model = engine.answers
        if model is None:
            raise SystemExit("the relevance model is not installed (indexer/data/relevance/)")
        for n, q in enumerate(qs):
            for key, answers in (("with the relevance model", model), ("without", None))[::1 if n % 2 else -1]:
                engine.answers = answers
                a.new_chat()
                t0 = time.perf_counter()
                a.ask(q.question, save=False)
                if n:
                    times[key].append(time.perf_counter() - t0)
        engine.answers = model
    print(f"{args.corpus}: {len(qs) - 1} questions, each answered both ways, alternating")
    base = statistics.median(times["without"])
    for key, ts in times.items():
        print(f"  {key:25s} p50 {statistics.median(ts):.2f} s  (x{statistics.median(ts) / base:.2f})")


if __name__ == "__main__":
    main()
