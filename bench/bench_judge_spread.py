"""How far SmolLM2's model-judge AUCs (tests/test_critics.py) move with the llama.cpp
conditions: thread count (1, 2), the CPU kernels (repacked "extra buffer types" on or
off) and the batch layout (prompt tokens per llama_decode call). Prints one line per
condition and the spread; the bound in tests/test_critics.py is derived from it.

    HF_HUB_OFFLINE=1 python bench/bench_judge_spread.py [--quick]
"""

from __future__ import annotations

import itertools
import json
import sys
import tempfile
import time
from pathlib import Path

REPO = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(REPO))
sys.path.insert(0, str(REPO / "tests"))
sys.path.insert(0, str(REPO / "bench"))


def main() -> None:
    import models.llama_backend as backend
    from critic_evaluation import load_cases, measure_critic
    from localrag.answering.judge.model_critic import ModelCritic
    from models.loader import default_model_path, load_model

    from instruct_fixtures import CASES

    cases = load_cases(CASES)
    cache = Path(tempfile.mkdtemp(prefix="judge-spread-"))
    conditions = list(itertools.product((1, 2), (True, False), (512, 64)))
    if "--quick" in sys.argv:
        conditions = [(1, True, 512), (2, True, 512)]
    rows = []
    for threads, bufts, batch in conditions:
        backend.BATCH_TOKENS = batch
        t0 = time.monotonic()
        model = load_model(default_model_path(), n_ctx=2048, n_threads=threads,
                           use_extra_bufts=bufts, cpu_copy_dir=cache)
        try:
            figures = measure_critic(ModelCritic(model), cases)
        finally:
            model.close()
        row = {"threads": threads, "extra_bufts": bufts, "batch_tokens": batch,
               **{j: round(figures[j]["auc"], 4) for j in ("retrieve", "relevance", "support")},
               **{f"{j}_accuracy": round(figures[j]["accuracy"], 4)
                  for j in ("retrieve", "relevance", "support")},
               "seconds": round(time.monotonic() - t0, 1)}
        rows.append(row)
        print(json.dumps(row), flush=True)
    for j in ("retrieve", "relevance", "support"):
        values = [r[j] for r in rows]
        print(f"{j}: min {min(values):.4f} max {max(values):.4f} spread {max(values) - min(values):.4f}")


if __name__ == "__main__":
    main()
