"""Benchmark: K candidates decoded as sequences of one llama batch vs one after another.

Issue 3, section 7 (a). Same model, question and passages in every mode:

  batched     generate(prefix, [b1..bK])            one llama_decode per step for all K
  sequential  generate(prefix, [bi]) for i = 1..K   prefix evaluated once, then cached
  naive       the same with the cache cleared       the prefix is evaluated K times

Two scenarios: "generation" (short passages, 64 new tokens: decoding dominates) and
"passages" (long passages, 4 new tokens: prompt evaluation dominates). Each mode runs in
its own child process so that peak RSS is that mode's own. Prints a table; timings are
the best of --repeats runs after one warm-up, so a busy machine disturbs them less.

By default it runs twice, side by side: SmolLM2-135M-Instruct as shipped (Q4_1) and the
Q8_0 copy localrag actually runs on the CPU (models/cpu_copy.py: llama.cpp has no batched
CPU kernels for Q4_1). A --model that is Q4_1 gets the same pair; any other format runs
once, as it is.

    python bench/bench_batching.py [--model PATH] [--k 5] [--threads 1] [--repeats 1]
"""

from __future__ import annotations

import argparse
import inspect
import json
import resource
import subprocess
import sys
import time
from pathlib import Path

REPO = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(REPO))

QUESTION = "What does this module do, and what are its main functions?"
SENTINEL = "\u2063PASSAGE\u2063"
# Real English text available offline everywhere: standard-library module docstrings.
SOURCES = ["argparse", "json", "collections", "heapq", "functools", "textwrap", "pickle",
           "subprocess", "logging", "difflib", "csv", "email", "tarfile", "zipfile"]
SCENARIOS = {
    "generation": {"passage_tokens": 40, "max_tokens": 64},
    "passages": {"passage_tokens": 400, "max_tokens": 4},
}


def passages(model, k: int, n_tokens: int) -> list[str]:
    import importlib

    out = []
    for name in SOURCES:
        doc = inspect.getdoc(importlib.import_module(name)) or ""
        words = " ".join(doc.split())
        ids = model.tokenize(words, special=False)
        if len(ids) < n_tokens // 2:
            continue
        out.append(f"{name}\n" + model.detokenize(ids[:n_tokens]).strip())
        if len(out) == k:
            return out
    # Not enough long docstrings: repeat what there is (still distinct per candidate).
    while len(out) < k:
        out.append(f"(copy {len(out)}) " + out[len(out) % max(1, len(out))])
    return out


def build(model, k: int, passage_tokens: int) -> tuple[list[int], list[list[int]]]:
    """Shared prefix (chat template up to the passage) and one branch per passage."""
    if model.kind.value == "selfrag":
        prefix_text = f"### Instruction:\n{QUESTION}\n\n### Response:\n[Retrieval]<paragraph>"
        prefix = model.tokenize(prefix_text, add_bos=True)
        tails = [model.tokenize(p, special=False) + model.tokenize("</paragraph>") for p in
                 passages(model, k, passage_tokens)]
        return prefix, tails
    content = f"Answer the question from the passage.\n\nQuestion: {QUESTION}\n\nPassage: {SENTINEL}"
    text = model.chat_prompt([{"role": "user", "content": content}])
    head, tail = text.split(SENTINEL)
    prefix = model.tokenize(head, add_bos=True)
    branches = [model.tokenize(p + tail, special=True) for p in passages(model, k, passage_tokens)]
    return prefix, branches


def run_one(args: argparse.Namespace) -> dict:
    """Child process: load, warm up, time one mode of one scenario, report as JSON."""
    from models.base import ModelStats
    from models.loader import default_model_path, load_model

    path = args.model or default_model_path()
    model = load_model(path, n_ctx=args.n_ctx, n_threads=args.threads,
                       cpu_copy_dir=args.cpu_copy_dir)
    rss_loaded = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024
    sc = SCENARIOS[args.scenario]
    prefix, branches = build(model, args.k, sc["passage_tokens"])

    def once() -> tuple[float, ModelStats, list]:
        model.clear_cache()
        model.stats = ModelStats()
        t = time.perf_counter()
        if args.mode == "batched":
            gens = model.generate(prefix, branches, max_tokens=sc["max_tokens"])
        else:
            gens = []
            for b in branches:
                if args.mode == "naive":
                    model.clear_cache()
                gens += model.generate(prefix, [b], max_tokens=sc["max_tokens"])
        return time.perf_counter() - t, model.stats, gens

    once()  # warm-up (page cache, allocator, thread pool)
    best = min((once() for _ in range(args.repeats)), key=lambda r: r[0])
    seconds, stats, gens = best
    model.close()
    return {
        "seconds": seconds,
        "prompt_tokens": stats.prompt_tokens,
        "generated_tokens": stats.generated_tokens,
        "decode_calls": stats.decode_calls,
        "prefix_tokens": len(prefix),
        "branch_tokens": sum(map(len, branches)),
        "peak_rss_mb": resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024,
        "rss_after_load_mb": rss_loaded,
        "outputs": [g.tokens for g in gens],
    }


def report(args: argparse.Namespace, copy_dir: Path | None) -> bool:
    """Every scenario and mode of one model file, as a table; False when a child failed."""
    header = f"{'scenario':<11} {'mode':<10} {'seconds':>8} {'vs seq':>7} {'prompt tok':>10} " \
             f"{'gen tok':>8} {'decodes':>8} {'peak RSS MB':>11}"
    print(header)
    print("-" * len(header))
    for scenario in SCENARIOS:
        results = {}
        for mode in ("batched", "sequential", "naive"):
            cmd = [sys.executable, __file__, "--scenario", scenario, "--mode", mode, "--k", str(args.k),
                   "--threads", str(args.threads), "--n-ctx", str(args.n_ctx), "--repeats", str(args.repeats)]
            if args.model:
                cmd += ["--model", str(args.model)]
            if copy_dir is not None:
                cmd += ["--cpu-copy-dir", str(copy_dir)]
            proc = subprocess.run(cmd, capture_output=True, text=True, cwd=REPO)
            if proc.returncode != 0:
                print(f"{scenario} {mode}: failed (exit {proc.returncode})\n{proc.stderr[-1500:]}")
                return False
            results[mode] = json.loads(proc.stdout.strip().splitlines()[-1])
        seq = results["sequential"]["seconds"]
        for mode, r in results.items():
            print(f"{scenario:<11} {mode:<10} {r['seconds']:>8.2f} {r['seconds'] / seq:>6.2f}x "
                  f"{r['prompt_tokens']:>10} {r['generated_tokens']:>8} {r['decode_calls']:>8} "
                  f"{r['peak_rss_mb']:>11.0f}")
        same = sum(a == b for a, b in zip(results["batched"]["outputs"], results["sequential"]["outputs"]))
        r = results["batched"]
        print(f"{'':<11} prefix {r['prefix_tokens']} tok, branches {r['branch_tokens']} tok in all; "
              f"batched output identical to sequential for {same}/{args.k} candidates")
    return True


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--model", type=Path, help="GGUF file (default: SmolLM2-135M-Instruct)")
    parser.add_argument("--k", type=int, default=5)
    parser.add_argument("--threads", type=int, default=1)
    parser.add_argument("--n-ctx", type=int, default=4096)
    parser.add_argument("--repeats", type=int, default=1)
    parser.add_argument("--scenario", choices=sorted(SCENARIOS), help=argparse.SUPPRESS)
    parser.add_argument("--mode", choices=("batched", "sequential", "naive"), help=argparse.SUPPRESS)
    parser.add_argument("--cpu-copy-dir", type=Path, help=argparse.SUPPRESS)
    args = parser.parse_args()
    if args.mode:
        print(json.dumps(run_one(args)))
        return 0

    import tempfile

    from models.cpu_copy import ensure_cpu_copy, needs_cpu_copy
    from models.loader import default_model_path

    source = args.model or default_model_path()
    print(f"model: {source}; K={args.k}, threads={args.threads}, best of {args.repeats}")
    with tempfile.TemporaryDirectory() as cache:
        runs: list[tuple[str, Path | None]] = [("as it is", None)]
        if needs_cpu_copy(source):
            ensure_cpu_copy(source, cache)         # made once, before any timing
            runs = [("Q4_1 as shipped", None), ("Q8_0 CPU copy (what localrag runs)", Path(cache))]
        for label, copy_dir in runs:
            print(f"\n== {label}")
            if not report(args, copy_dir):
                return 1
    return 0


if __name__ == "__main__":
    sys.exit(main())
