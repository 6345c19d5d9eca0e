"""Benchmark: what one decode step costs with 1, 2, 4, 5 and 8 sequences in the batch.

The saving of decoding K candidates as one batch (issue 3 section 7 a) is
K x step(1) / step(K). It depends on the model and the machine: where a step is bound by
reading the weights from memory (a 7B model on a laptop), K tokens cost little more than
one; where it is bound by arithmetic (a 135M model that fits in cache), they cost nearly
K times as much. This prints the step costs for:

  * SmolLM2-135M-Instruct as shipped (Q4_1) and as the Q8_0 CPU copy localrag runs;
  * with --synthetic-7b, a generated slice of a 7B-shaped model: 4 layers of width 4096
    (feed-forward 8192) and a 32,016-token output head, random weights, Q4_K_M like the
    recommended Self-RAG 7B file. Each of its layers is the size of a real 7B layer, so
    a step costs about 4/32 of a 7B step plus the head; its text is noise (timing only).
    Needs about 2 GB of free disk while it is written, 0.5 GB after.

Every model runs in this process, one after another, the same prompt and the best of 3.

    python bench/bench_batch_scaling.py [--threads 1] [--synthetic-7b] [--model PATH ...]
"""

from __future__ import annotations

import argparse
import sys
import tempfile
import time
from pathlib import Path

REPO = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(REPO))
sys.path.insert(0, str(REPO / "scripts"))

SIZES = (1, 2, 4, 5, 8)


def step_costs(path: Path, threads: int, steps: int = 24) -> dict[int, float]:
    """Best-of-3 milliseconds per decode step with k sequences, for each k in SIZES."""
    from models.llama_backend import LlamaModel

    model = LlamaModel(path, n_ctx=2048, n_threads=threads)
    try:
        head = "Write a long story about a dragon and a knight who meet in the mountains"
        prefix = model.tokenize(head, add_bos=True)
        branches = [model.tokenize(f" (version {i}) and then", special=False) for i in range(max(SIZES))]
        out = {}
        for k in SIZES:
            best = float("inf")
            for _ in range(3):
                model.clear_cache()
                model.generate(prefix, [], max_tokens=1)     # prefix evaluated outside the timing
                t = time.perf_counter()
                gens = model.generate(prefix, branches[:k], max_tokens=steps)
                elapsed = time.perf_counter() - t
                best = min(best, elapsed / max(len(g.steps) for g in gens))
            out[k] = best * 1000
        return out
    finally:
        model.close()


def synthetic_7b(folder: Path, threads: int) -> Path:
    from make_test_gguf import write_test_gguf

    from models.llama_backend import _llama, _set_verbose

    f16 = write_test_gguf(folder / "slice-f16.gguf", dim=4096, layers=4, dtype="f16")
    lc = _llama()
    _set_verbose(False)
    params = lc.llama_model_quantize_default_params()
    params.ftype = 15           # LLAMA_FTYPE_MOSTLY_Q4_K_M
    params.nthread = threads
    out = folder / "slice-q4_k_m.gguf"
    if lc.llama_model_quantize(str(f16).encode(), str(out).encode(), params) != 0:
        raise RuntimeError("llama_model_quantize failed")
    f16.unlink()
    return out


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--threads", type=int, default=1)
    parser.add_argument("--synthetic-7b", action="store_true")
    parser.add_argument("--model", type=Path, action="append", default=[])
    args = parser.parse_args()

    from models.cpu_copy import ensure_cpu_copy, needs_cpu_copy
    from models.loader import default_model_path

    with tempfile.TemporaryDirectory() as tmp:
        runs: list[tuple[str, Path]] = []
        for path in args.model or [default_model_path()]:
            runs.append((path.name, path))
            if needs_cpu_copy(path):
                runs.append((f"{path.name} as the Q8_0 CPU copy", ensure_cpu_copy(path, tmp)))
        if args.synthetic_7b:
            t = time.perf_counter()
            runs.append(("7B-shaped slice (4 layers, Q4_K_M, random)", synthetic_7b(Path(tmp), args.threads)))
            print(f"(7B-shaped slice written in {time.perf_counter() - t:.0f} s)")
        print(f"threads={args.threads}; ms per decode step with k sequences (best of 3)")
        print(f"{'model':<48} " + " ".join(f"{'k=' + str(k):>8}" for k in SIZES)
              + f" {'5 x k1 / k5':>12}")
        for label, path in runs:
            costs = step_costs(path, args.threads)
            print(f"{label[:48]:<48} " + " ".join(f"{costs[k]:>8.1f}" for k in SIZES)
                  + f" {5 * costs[1] / costs[5]:>11.2f}x")
    return 0


if __name__ == "__main__":
    sys.exit(main())
