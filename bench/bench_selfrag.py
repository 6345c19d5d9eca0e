"""Benchmark: a Self-RAG answer vs plain RAG vs LlamaIndex's SelfRAGPack decoding loop.

Issue 3, section 7 (b) and (c); (a), batched vs sequential candidates, is
bench/bench_batching.py. Same questions, passages and model in every variant. Two
workloads: "notes" (default; written below: 5 questions x 5 one-sentence passages, all on the question's topic, so nearly every
passage is judged relevant and generation weighs most: the hard case for Self-RAG) and
"docs" (--workload docs: 5 questions x 5 passages of 200 words, the indexer's default
chunk size, from standard-library docstrings; one on topic, four from other modules):

  selfrag   our engine, K=5 candidates, one batched generate per expansion. A Self-RAG
            GGUF runs SelfRagEngine; an instruct model (SmolLM2, the default) runs
            InstructEngine with the critic chosen for it (the embedding critic for
            SmolLM2, whose own judgments carry no signal), embedding time included.
            Mode adaptive with threshold 0: it always retrieves but pays for the decision.
  rag5      plain RAG: the five passages in one prompt, one generation (our backend).
  rag1      plain RAG with the top passage only.
  pack      LlamaIndex SelfRAGPack's loop re-created (llama_index.packs.self_rag):
            llama_cpp.Llama(logits_all=True); one create_completion for the retrieval
            decision, then one per passage, one after another, each with its own full
            prompt, logprobs = n_vocab (full-vocabulary log-probabilities on every
            generated token), temperature 0, then its IsRel/IsSup/IsUse reading of the
            returned top_logprobs. Retrieval is forced (SmolLM2 never writes
            "[Retrieval]"), so the pack does the same K candidates as ours.

By default two models run: SmolLM2-135M-Instruct (the default generator; its Q4_1 file
runs as the Q8_0 copy localrag makes for the CPU, models/cpu_copy.py, unless
--as-shipped) and the
tiny random Self-RAG test GGUF (scripts/make_test_gguf.py: real vocabulary, so the
SelfRagEngine plumbing and the pack's 32,016-way log-probabilities are measured; its
text is noise). `--model PATH` replaces both with one GGUF (e.g. a real Self-RAG 7B).

Every variant runs in its own child process, so peak RSS (ru_maxrss) is its own. One
llama thread (PLATFORM.md: llama.cpp's threads busy-wait; on this loaded 2-core machine
more threads slow it down). The pack variant sorts and detokenizes the whole vocabulary
(32k-49k strings) for every generated token, about a minute per question here, so by
default it runs on the first question only and its ratio is taken on that question;
--pack-questions 5 for all (a default run takes about 4 minutes).

    python bench/bench_selfrag.py [--model PATH] [--questions 5] [--pack-questions 1]
        [--max-tokens 64] [--k 5] [--threads 1] [--n-ctx 2048]
"""

from __future__ import annotations

import argparse
import json
import math
import os
import resource
import subprocess
import sys
import tempfile
import time
from pathlib import Path

from bench_batching import REPO  # also puts the repository on sys.path

os.environ.setdefault("HF_HUB_OFFLINE", "1")     # the embedding model loads from its package

# --- the workload ----------------------------------------------------------------------

CORPUS: list[tuple[str, list[tuple[str, str]]]] = [
    ("When does the lease of the flat on Rue Cler end?", [
        ("lease.md > Flat", "The lease of the flat on Rue Cler runs until 30 June 2026; "
                            "notice must be given three months before."),
        ("lease.md > Rent", "Rent is 1,240 euros a month, due on the fifth, paid by transfer."),
        ("lease.md > Deposit", "The deposit of two months' rent is held by the agency Lefort."),
        ("moving.md", "If we move out early, the lease allows leaving with one month's notice "
                      "for a job change."),
        ("insurance.md", "Home insurance for Rue Cler is with MAIF, renewed every January."),
    ]),
    ("Which port does the staging database listen on?", [
        ("infra.md > Staging", "The staging PostgreSQL database listens on port 6543 behind "
                               "pgbouncer; direct connections use 5433."),
        ("infra.md > Production", "Production PostgreSQL listens on the default port 5432, "
                                  "reachable only from the VPN."),
        ("infra.md > Backups", "Staging is restored nightly from the production backup at 02:00."),
        ("runbook.md", "To reach staging, open the tunnel with 'make tunnel-staging' first."),
        ("infra.md > Users", "The read-only user for staging is named analyst."),
    ]),
    ("What temperature should the sourdough bake at?", [
        ("bread.md > Baking", "Bake the sourdough at 250 C for 20 minutes with the lid on, "
                              "then 20 minutes at 230 C without it."),
        ("bread.md > Starter", "Feed the starter twice a day with equal weights of flour and water."),
        ("bread.md > Proofing", "Proof the shaped loaf overnight in the fridge at 4 C."),
        ("oven.md", "The oven runs about 10 degrees hot; the dial says 260 for a real 250."),
        ("bread.md > Flour", "Use 80 percent bread flour and 20 percent whole wheat."),
    ]),
    ("Who is the contact for the grant report?", [
        ("grant.md > Contacts", "Questions about the grant report go to Dr. Amina Haddad at "
                                "the research office."),
        ("grant.md > Deadline", "The final grant report is due on 15 March."),
        ("grant.md > Budget", "Travel costs above 2,000 euros need approval from the office."),
        ("meeting-notes.md", "Amina asked for the draft report two weeks before the deadline."),
        ("grant.md > Format", "The report must not exceed ten pages, excluding annexes."),
    ]),
    ("How often should the water filter be replaced?", [
        ("house.md > Kitchen", "Replace the under-sink water filter cartridge every six months; "
                               "the last change was in April."),
        ("house.md > Heating", "The boiler is serviced every autumn by the same company."),
        ("shopping.md", "Filter cartridges, model AquaPure AP-2, cost 35 euros each."),
        ("house.md > Garden", "The garden hose filter is cleaned at the start of spring."),
        ("house.md > Fridge", "The fridge water filter is changed once a year."),
    ]),
]


# The "docs" workload: passages of about 200 words (the indexer's default chunk size),
# taken from standard-library module docstrings, so it runs offline everywhere. The first
# passage answers the question; the other four come from other modules.
DOC_QUESTIONS: list[tuple[str, str, list[str]]] = [
    ("What does the heapq module provide?", "heapq", ["json", "csv", "itertools", "sqlite3"]),
    ("How do I encode Python objects as JSON?", "json", ["csv", "statistics", "heapq", "argparse"]),
    ("How does the csv module read and write files?", "csv", ["json", "sqlite3", "difflib", "subprocess"]),
    ("What functions does the statistics module offer?", "statistics", ["heapq", "itertools", "collections", "csv"]),
    ("How do I run a child process and read its output?", "subprocess", ["argparse", "sqlite3", "json", "difflib"]),
]
DOC_WORDS = 200


def _docstring(module: str) -> str:
    import importlib
    import inspect

    words = (inspect.getdoc(importlib.import_module(module)) or "").split()
    return " ".join(words[:DOC_WORDS])


def corpus(n: int, workload: str = "notes"):
    """The first n questions with their five passages as indexer Passages."""
    from indexer.records import Passage

    if workload == "docs":
        table = [(q, [(f"{m} (module docstring)", _docstring(m)) for m in [first, *others]])
                 for q, first, others in DOC_QUESTIONS]
    else:
        table = CORPUS
    out = []
    for qi, (question, docs) in enumerate(table[:n]):
        passages = [
            Passage(chunk_id=qi * 10 + j, path=f"/notes/{title.split(' > ')[0]}", title=title,
                    text=text, start_line=1 + 3 * j, end_line=3 + 3 * j, page=None, char_start=0,
                    char_end=len(text), score=1.0 - 0.1 * j)
            for j, (title, text) in enumerate(docs)
        ]
        out.append((question, passages))
    return out


# --- prompts ---------------------------------------------------------------------------

def selfrag_prompt(question: str, paragraph: str | None = None) -> str:
    """SelfRAGPack's _format_prompt (and SELFRAG.md section 2)."""
    prompt = f"### Instruction:\n{question}\n\n### Response:\n"
    if paragraph is not None:
        prompt += f"[Retrieval]<paragraph>{paragraph}</paragraph>"
    return prompt


def instruct_messages(question: str, passages) -> list[dict[str, str]]:
    """Chat messages for an instruct model with the given passages (plain RAG and pack);
    one passage gives exactly the engine's own per-candidate message."""
    from localrag.answering.generate.instruct import SYSTEM_WITH_PASSAGE, user_message

    if len(passages) == 1:
        user = user_message(question, passages[0].title, passages[0].text)
    else:
        notes = "\n\n".join(f"[{i + 1}] ({p.title})\n{p.text}" for i, p in enumerate(passages))
        user = (f"Question: {question}\n\nNotes:\n{notes}\n\n"
                f"Using only these notes, answer the question: {question}")
    return [{"role": "system", "content": SYSTEM_WITH_PASSAGE}, {"role": "user", "content": user}]


def plain_rag_ids(model, question: str, passages) -> list[int]:
    """One prompt holding all `passages`, in the model's own format."""
    if model.kind.value == "selfrag":
        text = "\n".join(f"{p.title}\n{p.text}" for p in passages)
        return model.tokenize(selfrag_prompt(question, text), add_bos=True, special=True)
    from localrag.answering.judge.model_critic import chat_tokens

    return chat_tokens(model, instruct_messages(question, passages))


# --- variants (each runs in a child process) ---------------------------------------------

def peak_rss_mb() -> float:
    return resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024


def run_ours(args, variant: str) -> dict:
    from localrag.answering.generate.selfrag import EngineConfig, SelfRagEngine
    from models.base import ModelStats
    from models.loader import load_model

    model = load_model(args.model, n_ctx=args.n_ctx, n_threads=args.threads)
    rss_loaded = peak_rss_mb()
    engine = None
    engine_name = "-"
    if variant == "selfrag":
        config = EngineConfig(mode="adaptive", threshold=0.0, k=args.k, max_tokens=args.max_tokens,
                              max_segments=1, n_ctx=args.n_ctx)
        if model.kind.value == "selfrag":
            engine = SelfRagEngine(model, config=config)
            engine_name = "SelfRagEngine"
        else:
            from indexer.embedder import Embedder
            from localrag.answering.generate.instruct import InstructEngine

            import torch

            torch.set_num_threads(args.threads)    # same CPU share as llama.cpp gets
            embedder = Embedder()
            embedder.encode(["warm up"])           # load the embedding model before timing
            engine = InstructEngine.for_model(model, config=config, embed=embedder.encode)
            engine_name = f"InstructEngine ({engine.critic_name} critic)"
    # count the candidates each generate call decodes
    inner = model.generate
    branches_seen: list[int] = []
    in_generate = [0.0]

    def spy(prefix, branches, **kw):
        branches_seen.append(max(1, len(branches)))
        t0 = time.perf_counter()
        try:
            return inner(prefix, branches, **kw)
        finally:
            in_generate[0] += time.perf_counter() - t0

    model.generate = spy
    model.generate([model.bos_id or 0, 1], [], max_tokens=2)    # warm-up (thread pool, pages)
    branches_seen.clear()
    in_generate[0] = 0.0

    per_q, answers = [], []
    model.stats = ModelStats()
    for question, passages in corpus(args.questions, args.workload):
        model.clear_cache()
        t = time.perf_counter()
        if variant == "selfrag":
            answer = engine.answer(question, retrieve=lambda q, k, ps=passages: ps[:k])
            text = answer.text
        else:
            chosen = passages if variant == "rag5" else passages[:1]
            (gen,) = model.generate(plain_rag_ids(model, question, chosen), [],
                                    max_tokens=args.max_tokens)
            toks = gen.tokens[:-1] if gen.finish == "eos" else gen.tokens
            text = model.detokenize(toks).strip()
        per_q.append(time.perf_counter() - t)
        answers.append(text)
    stats = model.stats
    model.close()
    return {"engine": engine_name, "seconds": per_q, "prompt_tokens": stats.prompt_tokens,
            "generated_tokens": stats.generated_tokens, "decode_calls": stats.decode_calls,
            "candidates": sum(branches_seen), "generate_calls": len(branches_seen),
            "generate_s": in_generate[0], "rss_after_load_mb": rss_loaded, "peak_rss_mb": peak_rss_mb(), "answers": answers}


# SelfRAGPack's critique reading (llama_index.packs.self_rag.base), on top_logprobs dicts
def _pack_relevance(top: dict[str, float]) -> float:
    rel, irr = math.exp(top.get("[Relevant]", -100)), math.exp(top.get("[Irrelevant]", -100))
    return rel / (rel + irr)


def _pack_group_score(tokens: list[str], tops: list[dict[str, float]], group: dict[str, float]) -> float:
    """sum_k w_k p_k (renormalised in the group) at the first group token written; else 0."""
    for tok, top in zip(tokens, tops):
        if tok in group:
            probs = [math.exp(top.get(t, -100.0)) for t in group]
            return sum(w * p for w, p in zip(group.values(), probs)) / sum(probs)
    return 0.0


def run_pack(args) -> dict:
    """SelfRAGPack's loop with llama_cpp.Llama (see the module docstring)."""
    import llama_cpp
    import llama_cpp.llama as high_level

    from models.cpu import use_extra_bufts

    # Llama() does not take use_extra_bufts: patch the defaults it starts from so the AMX
    # workaround (PLATFORM.md) applies to this variant too.
    default_params = high_level.llama_cpp.llama_model_default_params

    def params():
        p = default_params()
        p.use_extra_bufts = use_extra_bufts()
        return p

    high_level.llama_cpp.llama_model_default_params = params
    llm = llama_cpp.Llama(model_path=str(args.model), n_ctx=args.n_ctx, n_threads=args.threads,
                          n_threads_batch=args.threads, logits_all=True, verbose=False)
    rss_loaded = peak_rss_mb()
    n_vocab = llm.n_vocab()
    is_selfrag = llm.tokenize(b"[Retrieval]", add_bos=False, special=True).__len__() == 1
    kwargs = {"temperature": 0.0, "top_p": 1.0, "max_tokens": args.max_tokens,
              "logprobs": n_vocab, "repeat_penalty": 1.0}
    chat = None
    if not is_selfrag:
        from llama_cpp.llama_chat_format import Jinja2ChatFormatter

        piece = lambda tid: llm.detokenize([tid], special=True).decode("utf-8", "replace")  # noqa: E731
        chat = Jinja2ChatFormatter(llm.metadata["tokenizer.chat_template"],
                                   eos_token=piece(llm.token_eos()), bos_token=piece(llm.token_bos()),
                                   add_generation_prompt=True)
    llm.create_completion("Hello", max_tokens=2, temperature=0.0)     # warm-up
    sup = {"[Fully supported]": 1.0, "[Partially supported]": 0.5, "[No support / Contradictory]": 0.0}
    use = {f"[Utility:{k}]": w for k, w in zip(range(1, 6), (-1.0, -0.5, 0.0, 0.5, 1.0))}
    per_q, answers = [], []
    prompt_tokens = generated = calls = 0
    for question, passages in corpus(args.pack_questions, args.workload):
        llm.reset()
        t = time.perf_counter()

        def complete(prompt: str) -> dict:
            nonlocal prompt_tokens, generated, calls
            out = llm.create_completion(prompt, **kwargs)
            prompt_tokens += out["usage"]["prompt_tokens"]
            generated += out["usage"]["completion_tokens"]
            calls += 1
            return out["choices"][0]

        def prompt_for(p=None) -> str:
            if is_selfrag:
                return selfrag_prompt(question, None if p is None else p.text)
            if p is None:     # decision run: the question alone, as the pack does
                return chat(messages=[{"role": "user", "content": question}]).prompt
            return chat(messages=instruct_messages(question, [p])).prompt

        complete(prompt_for(None))              # the pack's retrieval-decision generation
        best, best_text = -math.inf, ""
        for p in passages[: args.k]:            # candidates one after another
            choice = complete(prompt_for(p))
            lp = choice["logprobs"]
            score = (_pack_relevance(lp["top_logprobs"][0])
                     + _pack_group_score(lp["tokens"], lp["top_logprobs"], sup)
                     + 0.5 * _pack_group_score(lp["tokens"], lp["top_logprobs"], use))
            if score > best:
                best, best_text = score, choice["text"]
        per_q.append(time.perf_counter() - t)
        answers.append(best_text.strip())
    llm.close()
    return {"engine": "Llama(logits_all) + create_completion(logprobs=n_vocab)", "seconds": per_q,
            "prompt_tokens": prompt_tokens, "generated_tokens": generated, "decode_calls": None,
            "candidates": args.pack_questions * args.k, "generate_calls": calls,
            "generate_s": sum(per_q),
            "rss_after_load_mb": rss_loaded, "peak_rss_mb": peak_rss_mb(), "answers": answers}


def child(args) -> dict:
    return run_pack(args) if args.variant == "pack" else run_ours(args, args.variant)


# --- the parent: run every variant, print the table ----------------------------------------

VARIANTS = ("selfrag", "rag5", "rag1", "pack")


def run_variant(args, model: Path, variant: str) -> dict:
    cmd = [sys.executable, __file__, "--variant", variant, "--model", str(model),
           "--questions", str(args.questions), "--pack-questions", str(args.pack_questions),
           "--max-tokens", str(args.max_tokens), "--k", str(args.k), "--threads", str(args.threads),
           "--n-ctx", str(args.n_ctx), "--workload", args.workload]
    proc = subprocess.run(cmd, capture_output=True, text=True, cwd=REPO)
    if proc.returncode != 0:
        raise RuntimeError(f"{variant} on {model.name} failed (exit {proc.returncode}):\n"
                           f"{proc.stderr[-2000:]}")
    return json.loads(proc.stdout.strip().splitlines()[-1])


def report(label: str, results: dict[str, dict]) -> None:
    print(f"\n== {label}")
    head = (f"{'variant':<8} {'s/question':>10} {'in gen':>7} {'vs rag5':>8} {'cands':>6} {'gen calls':>9} "
            f"{'prompt tok':>10} {'gen tok':>8} {'peak RSS MB':>11}  engine")
    print(head)
    print("-" * (len(head) + 20))
    base = results.get("rag5") or next(iter(results.values()))
    rag5 = base["seconds"]
    for name, r in results.items():
        secs = r["seconds"]
        mean = sum(secs) / len(secs)
        ratio = sum(secs) / sum(rag5[: len(secs)])
        gen_share = r["generate_s"] / len(secs)
        print(f"{name:<8} {mean:>10.2f} {gen_share:>7.2f} {ratio:>7.2f}x {r['candidates']:>6} {r['generate_calls']:>9} "
              f"{r['prompt_tokens']:>10} {r['generated_tokens']:>8} {r['peak_rss_mb']:>11.0f}  {r['engine']}")
    print("s/question: mean answer time; in gen: of which inside model.generate (the rest of "
          "selfrag is the decision, the critic and scoring); cands: candidates decoded in all")
    ours = results.get("selfrag", {}).get("seconds")
    if ours and "rag5" in results and "rag1" in results:
        print(f"(b) Self-RAG / plain RAG (5 passages): {sum(ours) / sum(rag5):.2f}x  (target <= 1.5x); "
              f"Self-RAG / plain RAG (top passage): {sum(ours) / sum(results['rag1']['seconds']):.2f}x")
    if ours and "pack" in results:
        pack = results["pack"]["seconds"]
        n = len(pack)
        print(f"(c) SelfRAGPack loop / ours, on the first {n} question(s): "
              f"{sum(pack) / sum(ours[:n]):.1f}x  (target >= 3x)")
    for name in ("selfrag", "rag5", "pack"):
        if name in results:
            first = results[name]["answers"][0] if results[name]["answers"] else ""
            print(f"   {name} answer to Q1: {first[:110]!r}")


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--model", type=Path, help="one GGUF instead of SmolLM2 + the tiny test model")
    parser.add_argument("--questions", type=int, default=5, choices=range(1, len(CORPUS) + 1))
    parser.add_argument("--pack-questions", type=int, default=1, choices=range(1, len(CORPUS) + 1))
    parser.add_argument("--max-tokens", type=int, default=64)
    parser.add_argument("--k", type=int, default=5, choices=range(1, 6))
    parser.add_argument("--threads", type=int, default=1)
    parser.add_argument("--n-ctx", type=int, default=2048)
    parser.add_argument("--workload", choices=("notes", "docs"), default="notes",
                        help="notes: one-sentence passages (generation weighs most); docs: "
                             f"{DOC_WORDS}-word passages from stdlib docstrings (typical chunks)")
    parser.add_argument("--as-shipped", action="store_true",
                        help="run a Q4_1 model file as it is, not as localrag's Q8_0 CPU copy")
    parser.add_argument("--variants", default=",".join(VARIANTS),
                        help="comma-separated subset of " + ",".join(VARIANTS) + " (default: all)")
    parser.add_argument("--variant", choices=VARIANTS, help=argparse.SUPPRESS)
    args = parser.parse_args()
    args.pack_questions = min(args.pack_questions, args.questions)
    if args.variant:
        print(json.dumps(child(args)))
        return 0

    print(f"K={args.k}, max_tokens={args.max_tokens}, threads={args.threads} (llama.cpp threads "
          f"busy-wait: one thread on this shared 2-core machine), n_ctx={args.n_ctx}, "
          f"{args.questions} questions x 5 passages ({args.workload}); pack on {args.pack_questions}")
    from models.cpu_copy import ensure_cpu_copy, needs_cpu_copy

    models: list[tuple[str, Path]] = []
    with tempfile.TemporaryDirectory() as tmp:
        if args.model:
            models.append((str(args.model), args.model))
        else:
            from models.loader import default_model_path

            sys.path.insert(0, str(REPO / "scripts"))
            from make_test_gguf import write_test_gguf

            models.append(("SmolLM2-135M-Instruct (instruct)", default_model_path()))
            models.append(("tiny random Self-RAG test GGUF (plumbing; text is noise)",
                           write_test_gguf(Path(tmp) / "tiny.gguf")))
        for label, path in models:
            if not args.as_shipped and needs_cpu_copy(path):
                # what localrag runs on the CPU (models/cpu_copy.py), made before timing
                path = ensure_cpu_copy(path, tmp)
                label += " as the Q8_0 CPU copy localrag runs"
            t = time.perf_counter()
            wanted = [v for v in VARIANTS if v in args.variants.split(",")]
            results = {v: run_variant(args, path, v) for v in wanted}
            report(f"{label}  [{time.perf_counter() - t:.0f} s]", results)
    return 0


if __name__ == "__main__":
    sys.exit(main())
