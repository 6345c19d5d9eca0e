"""Benchmark: localrag's answer vs one plain-RAG generation, on real questions over a real
index; and how often the answer holds the answer (issue 9, sections 3 and 5).

For each question the index is searched once (top 5); then, on those same five passages
and with the same model and max_tokens, side by side in this one process:

  answer     the InstructEngine as users run it (quotes, fitted candidates, critic),
             mode always (the retrieval decision is not what is timed here)
  plain RAG  the five passages in one prompt, one generation (bench_selfrag's prompt)

It prints per-question seconds, the ratio of the totals (target <= 1.5x), the time until
the first sentence reached `on_segment`, and the answer figure: the share of questions
whose answer holds the key phrase in a sentence labelled supported ("fully") that cites
the question's file, over the questions whose file's passage with the key phrase is in the
top 5, and over all of them.

    python bench/bench_answer.py --data-dir DIR --questions tests/data/critic_real/questions.jsonl \
        --corpus git --split test [--limit N] [--threads 1] [--no-plain]

For the held-out questions: --questions bench/data/retrieval/heldout-git.jsonl --split heldout
(and heldout-kernel.jsonl).

DIR is a localrag data directory holding an index of the corpus (for example made with
`localrag --data-dir DIR index /path/to/corpus`); question files are relative to the
indexed root. The corpora the README's figures come from, from Debian's git-doc and
linux-doc-6.1 packages:

    mkdir -p C/git C/kernel && cp /usr/share/doc/git-doc/*.txt C/git/
    (cd /usr/share/doc/linux-doc-6.1/html/_sources && \
     xargs -a "$OLDPWD/bench/data/retrieval/answer-kernel-files.txt" cp --parents -t "$OLDPWD/C/kernel")
"""

from __future__ import annotations

import argparse
import json
import os
import statistics
import sys
import time
from pathlib import Path

REPO = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(REPO))
sys.path.insert(0, str(REPO / "bench"))
os.environ.setdefault("HF_HUB_OFFLINE", "1")


def norm(text: str) -> str:
    return " ".join(text.split()).lower()


def holds_answer(answer, question: dict, *, labels=("fully",)) -> bool:
    key = norm(question["key_phrase"])
    for seg in answer.segments:
        if (seg.label in labels and seg.passage is not None and key in norm(seg.text)
                and seg.passage.path.endswith("/" + question["file"])):
            return True
    return False


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--data-dir", type=Path, required=True)
    ap.add_argument("--questions", type=Path, required=True)
    ap.add_argument("--corpus", default="", help="only questions whose id starts with this")
    ap.add_argument("--split", choices=("dev", "test", "heldout", "all"), default="test")
    ap.add_argument("--limit", type=int, default=0)
    ap.add_argument("--threads", type=int, default=1)
    ap.add_argument("--max-tokens", type=int, default=0, help="default: the settings' value")
    ap.add_argument("--json", type=Path, help="write per-question records here")
    ap.add_argument("--no-plain", action="store_true",
                    help="answers only, no plain-RAG generation (the answer figure, no ratio)")
    args = ap.parse_args()

    from bench_selfrag import plain_rag_ids
    from localrag.assistant import Assistant

    questions = [json.loads(line) for line in args.questions.read_text().splitlines() if line.strip()]
    questions = [q for q in questions if q["id"].startswith(args.corpus)
                 and (args.split == "all" or q["split"] == args.split)]
    if args.limit:
        questions = questions[: args.limit]
    overrides = {"retrieval_mode": "always", "n_threads": args.threads,
                 "max_tokens": args.max_tokens or None}
    records = []
    with Assistant.open(args.data_dir, overrides=overrides) as a:
        import torch

        torch.set_num_threads(args.threads)         # the same CPU share as llama.cpp
        desc = a.load_model()
        engine = a._get_engine()
        model = a.model
        max_tokens = a.settings.max_tokens
        a.search("warm up", k=1)
        model.generate([model.bos_id or 0, 1], [], max_tokens=2)
        print(f"model {desc.name} ({desc.runs_from or desc.path}), critic {desc.critic}, "
              f"max_tokens {max_tokens}, k 5, threads {args.threads}, {len(questions)} "
              f"questions ({args.corpus or 'all'}, {args.split})")
        for q in questions:
            passages = a.search(q["question"], k=5)
            key = norm(q["key_phrase"])
            in_top5 = any(p.path.endswith("/" + q["file"]) and key in norm(p.text)
                          for p in passages)
            model.clear_cache()
            first: list[float] = []
            t_start = time.perf_counter()
            answer = engine.answer(q["question"], retrieve=lambda _q, k, ps=passages: ps[:k],
                                   on_segment=lambda s: first or first.append(time.perf_counter()))
            t_ours = time.perf_counter() - t_start
            t_rag, rag_text = float("nan"), ""
            if not args.no_plain:
                model.clear_cache()
                t0 = time.perf_counter()
                (gen,) = model.generate(plain_rag_ids(model, q["question"], passages), [],
                                        max_tokens=max_tokens)
                t_rag = time.perf_counter() - t0
                rag_text = model.detokenize(gen.tokens[:-1] if gen.finish == "eos"
                                            else gen.tokens)
            rec = {"id": q["id"], "ours_s": t_ours, "rag_s": t_rag,
                   "first_s": (first[0] - t_start) if first else None,
                   "in_top5": in_top5, "hit": holds_answer(answer, q),
                   "hit_any_label": holds_answer(answer, q, labels=("fully", "partially",
                                                                    "unchecked")),
                   "candidates": len(engine.last_candidates),
                   "answer": answer.text, "labels": [s.label for s in answer.segments],
                   "origins": [s.origin for s in answer.segments],
                   "plain_rag": rag_text.strip(), "notes": answer.notes}
            records.append(rec)
            print(f"{q['id']:12s} ours {t_ours:6.2f}s  plain {t_rag:6.2f}s  first "
                  f"{rec['first_s'] if rec['first_s'] is None else round(rec['first_s'], 2)}s  "
                  f"top5 {in_top5!s:5s} hit {rec['hit']!s:5s} {answer.text[:80]!r}", flush=True)
    ours = sum(r["ours_s"] for r in records)
    rag = sum(r["rag_s"] for r in records)
    firsts = [r["first_s"] for r in records if r["first_s"] is not None]
    top5 = [r for r in records if r["in_top5"]]
    ratio = "not measured (--no-plain)" if args.no_plain else f"{ours / rag:.2f}x (target <= 1.5x)"
    print(f"\nanswer / plain RAG over the same 5 passages: {ratio}; "
          f"median {statistics.median(r['ours_s'] for r in records):.2f}s vs "
          f"{statistics.median(r['rag_s'] for r in records):.2f}s; first sentence after "
          f"{statistics.median(firsts) if firsts else float('nan'):.2f}s (median)")
    print(f"answer holds the key phrase in a 'fully' sentence citing the right file: "
          f"{sum(r['hit'] for r in top5)}/{len(top5)} of the questions whose passage is in the "
          f"top 5 ({sum(r['hit'] for r in top5) / max(len(top5), 1):.0%}); "
          f"{sum(r['hit'] for r in records)}/{len(records)} of all "
          f"({sum(r['hit'] for r in records) / max(len(records), 1):.0%})")
    if args.json:
        args.json.write_text(json.dumps(records, indent=1))
    return 0


if __name__ == "__main__":
    sys.exit(main())
