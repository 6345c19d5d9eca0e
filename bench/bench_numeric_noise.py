"""How far llama.cpp's numbers move between CPU kernels, against the tests' tolerances.

The tests compare results that go through different llama.cpp kernels: a batched prompt
against one token per decode (tests/test_models_decoding.py), repacked against plain
kernels, the Q4_1 model against its Q8_0 copy (tests/test_cpu_copy.py), model-judge AUCs
against figures recorded on another machine (tests/test_critics.py). This script prints,
on the machine it runs on, each difference next to the tolerance the test allows, so a
new CPU (AVX2, AVX-512, AMX) can be checked in one run:

    python bench/bench_numeric_noise.py            # about a minute on 2 cores
    python bench/bench_numeric_noise.py --no-critic   # skip the model-judge AUCs

Kernel families compared on one CPU: `use_extra_bufts` on (llama.cpp repacks Q8_0
weights for its AVX2 / AVX-512 / AMX gemm kernels and quantises activations into their
interleaved blocks) against off (plain vec_dot kernels); and a whole prompt in one batch
against one token per llama_decode. Nothing here asserts: it prints figures.
"""

from __future__ import annotations

import argparse
import importlib.util
import sys
import tempfile
from pathlib import Path

import numpy as np

REPO = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(REPO))
sys.path.insert(0, str(REPO / "tests"))
sys.path.insert(0, str(REPO / "bench"))

U16 = 2.0 ** -11
PROMPTS = [
    "### Instruction:\nWho built the Eiffel Tower, and when?\n\n### Response:\n",
    "### Instruction:\nWhat is the capital of France?\n\n### Response:\n",
    "Paris is the capital of France. " * 12,
]
COPY_PROMPTS = [   # tests/test_cpu_copy.py
    "The capital of France is",
    "<|im_start|>user\nWhat is 2+2?<|im_end|>\n<|im_start|>assistant\n",
    "def fibonacci(n):",
]


def one_by_one(path: Path, tokens: list[int], threads: int) -> np.ndarray:
    """Full log-softmax after `tokens`, one token per llama_decode (plain llama.cpp API)."""
    import llama_cpp as lc

    model = lc.llama_model_load_from_file(str(path).encode(), lc.llama_model_default_params())
    cp = lc.llama_context_default_params()
    cp.n_ctx, cp.n_threads, cp.n_threads_batch = 512, threads, threads
    ctx = lc.llama_init_from_model(model, cp)
    try:
        for tok in tokens:
            one = (lc.llama_token * 1)(tok)
            assert lc.llama_decode(ctx, lc.llama_batch_get_one(one, 1)) == 0
        n_vocab = lc.llama_vocab_n_tokens(lc.llama_model_get_vocab(model))
        row = np.ctypeslib.as_array(lc.llama_get_logits_ith(ctx, -1), shape=(n_vocab,)).astype(np.float64)
    finally:
        lc.llama_free(ctx)
        lc.llama_model_free(model)
    m = row.max()
    return row - (m + np.log(np.exp(row - m).sum()))


def batched(model, tokens: list[int]) -> np.ndarray:
    model.clear_cache()
    ids = list(range(model.n_vocab))
    got = model.next_logprobs(tokens, ids)
    return np.array([got[i] for i in ids])


def tiny_section(threads: int) -> None:
    from models.loader import load_model

    spec = importlib.util.spec_from_file_location("make_test_gguf", REPO / "scripts" / "make_test_gguf.py")
    writer = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(writer)  # type: ignore[union-attr]
    folder = Path(tempfile.mkdtemp(prefix="noise-"))
    path = writer.write_test_gguf(folder / "tiny.gguf", dtype="f32", reflection="all")
    model = load_model(path, n_ctx=1024, n_threads=threads)
    try:
        first = model.tokenize(PROMPTS[0], add_bos=True)
        ref0 = one_by_one(path, first, threads)
        tol = 4 * U16 * float(np.abs(ref0 - ref0.mean()).max())
        print(f"tiny f32 test model: LOGIT_TOL = 4 * u16 * scale = {tol:.4f}")
        for text in PROMPTS:
            tokens = model.tokenize(text, add_bos=True)
            diff = np.abs(batched(model, tokens) - one_by_one(path, tokens, threads))
            print(f"  batched vs one by one, {len(tokens):3d} tokens: max |d log-prob| "
                  f"{diff.max():.2e}  = {diff.max() / tol:.2f} x tolerance")
        wrong = np.abs(one_by_one(path, first[:-1], threads) - ref0).max()
        print(f"  a fault for scale (last prompt token dropped): {wrong:.2f} = {wrong / tol:.0f} x tolerance")
    finally:
        model.close()


def smollm2_section(threads: int, critic: bool) -> None:
    from models.cpu_copy import ensure_cpu_copy
    from models.loader import default_model_path, load_model

    source = default_model_path()
    cache = Path(tempfile.mkdtemp(prefix="noise-copy-"))
    copy = ensure_cpu_copy(source, cache)
    print(f"\nSmolLM2-135M, Q8_0 copy {copy.name}:")
    models = {flag: load_model(source, n_ctx=1024, n_threads=threads, cpu_copy_dir=cache,
                               use_extra_bufts=flag) for flag in (True, False)}
    shipped = load_model(source, n_ctx=1024, n_threads=threads)           # Q4_1 as shipped
    try:
        for text in PROMPTS[:2] + COPY_PROMPTS:
            tokens = models[True].tokenize(text, add_bos=True)
            rep, plain = batched(models[True], tokens), batched(models[False], tokens)
            ref = one_by_one(models[True].path, tokens, threads)
            top = np.argsort(-ref)[:50]
            print(f"  {len(tokens):3d} tokens: repacked vs plain max |d| {np.abs(rep - plain).max():.2e} "
                  f"(top-50 {np.abs(rep - plain)[top].max():.2e}); batched vs one by one "
                  f"{np.abs(rep - ref).max():.2e}; top-2 margin {ref[top[0]] - ref[top[1]]:.3f}")
        print("  tests/test_cpu_copy.py (Q4_1 source vs Q8_0 copy; tolerance: L1 < 0.3, same argmax):")
        for text in COPY_PROMPTS:
            tokens = shipped.tokenize(text, add_bos=True)
            a = batched(shipped, tokens)
            for flag, model in models.items():
                b = batched(model, tokens)
                margin = min(np.sort(a)[-1] - np.sort(a)[-2], np.sort(b)[-1] - np.sort(b)[-2])
                print(f"    {text[:28]!r:32s} repacked={flag!s:5s} L1 {np.abs(np.exp(a) - np.exp(b)).sum():.3f}"
                      f"  argmax same {int(np.argmax(a)) == int(np.argmax(b))}  smaller top-2 margin {margin:.3f}")
        if critic:
            critic_section(models)
    finally:
        for model in (*models.values(), shipped):
            model.close()


def critic_section(models: dict) -> None:
    import critic_evaluation as critic_eval
    from localrag.answering.judge.critics import MEASURED, model_key
    from localrag.answering.judge.model_critic import ModelCritic

    cases = critic_eval.load_cases(REPO / "tests" / "data" / "critic_cases.json")
    seen: list[tuple[list[float], list[bool]]] = []
    summary = critic_eval._summary

    def recording(scores, positive, correct):  # noqa: ANN001, ANN202
        seen.append((list(scores), list(positive)))
        return summary(scores, positive, correct)

    critic_eval._summary = recording
    try:
        figures = {}
        for flag, model in models.items():
            seen.clear()
            figures[flag] = critic_eval.measure_critic(ModelCritic(model), cases)
            scores = {name: seen[i] for i, name in enumerate(("retrieve", "relevance", "support"))}
    finally:
        critic_eval._summary = summary
    recorded = MEASURED[model_key(models[True])]
    print("  tests/test_critics.py model-judge AUCs (tolerance: recorded +- 0.08). 'at d' = the")
    print("  largest AUC change if every opposite-label pair scored within d of each other swapped:")
    for judgment in ("retrieve", "relevance", "support"):
        rep, plain = figures[True][judgment], figures[False][judgment]
        values, positive = scores[judgment]
        pos = [v for v, p in zip(values, positive) if p]
        neg = [v for v, p in zip(values, positive) if not p]
        shifts = []
        ties = sum(a == b for a in pos for b in neg)
        shifts.append(f"{ties / (len(pos) * len(neg)):.3f} tied")
        for d in (0.0005, 0.002, 0.005, 0.02):
            close = sum(abs(a - b) < d for a in pos for b in neg)
            shifts.append(f"{close / (len(pos) * len(neg)):.3f} at d={d}")
        print(f"    {judgment:10s} recorded {getattr(recorded, judgment).auc:.3f}  repacked {rep['auc']:.3f}"
              f"  plain {plain['auc']:.3f}  (n={rep['n']}; {', '.join(shifts)})")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--threads", type=int, default=1)
    parser.add_argument("--no-critic", action="store_true", help="skip the model-judge AUCs")
    args = parser.parse_args()
    import llama_cpp as lc

    print(lc.llama_print_system_info().decode().strip())
    tiny_section(args.threads)
    smollm2_section(args.threads, critic=not args.no_critic)


if __name__ == "__main__":
    main()
