"""Tried for issue 17, not kept: the default model's likelihood of the question given a
sentence (zero-shot reranking by question generation, "UPR"), added to the answer
combination. Prints figures, asserts nothing.

    python bench/query_likelihood.py --corpora postgres-v3,debref-v3,zsh-v3 [--top 10]

For each judged pool question (bench/sentence_pools.py) the shipped combination's best
`--top` candidates (extract.answer_probability over the cached features of
bench/answer_combination.py: run that first) are read by SmolLM2-135M-Instruct (the default
model's CPU copy, through llama.cpp): the mean log-probability of the question's tokens after
"<subject line>\\n<sentence>\\n\\nWrite a question that this text answers." Then, per weight
w, the first quote by logit(combination) + w x that mean, and how often it answers (P@1).
The first run (2-core AMD EPYC, 2 threads, about 0.15 s a candidate): zsh 0.431 -> 0.444 at
w 0.5-1, postgres 0.400 -> 0.450, debref 0.675 -> 0.700 at w 1; the likelihood alone 0.292 /
0.350 / 0.500. With the passage title added to what the model reads, and the reverse
direction (the sentence's likelihood given the question, against its likelihood alone),
zsh fell to 0.361-0.417 at every weight. A question or two a corpus, not chosen on the
training pools, and 1-1.5 s more an answer: not kept.
"""

from __future__ import annotations

import argparse
import json
import os
import sys
from pathlib import Path

import numpy as np

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE.parent))
sys.path.insert(0, str(HERE))
os.environ.setdefault("HF_HUB_OFFLINE", "1")

from sentence_pools import load_pool  # noqa: E402


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--corpora", default="postgres-v3,debref-v3,zsh-v3")
    ap.add_argument("--top", type=int, default=10)
    ap.add_argument("--weights", default="0,0.5,1,2,3,5")
    ap.add_argument("--threads", type=int, default=2)
    args = ap.parse_args()
    import llama_cpp

    from answer_combination import model_key, rules_key
    from localrag.answering.generate import extract as ex
    from localrag.paths import default_cache_dir
    from models.cpu_copy import ensure_cpu_copy
    from models.loader import default_model_path

    path = ensure_cpu_copy(default_model_path(), default_cache_dir() / "models")
    llm = llama_cpp.Llama(str(path), n_ctx=1024, logits_all=True, n_threads=args.threads, verbose=False)

    def mean_logprob(prefix: str, continuation: str) -> float:
        a = llm.tokenize(prefix.encode(), add_bos=False, special=True)
        b = llm.tokenize(continuation.encode(), add_bos=False, special=False)
        llm.reset()
        llm.eval(a + b)
        sc = np.array(llm.scores[:len(a) + len(b)], dtype=np.float64)
        top = sc.max(axis=1, keepdims=True)
        lp = sc - top - np.log(np.exp(sc - top).sum(axis=1, keepdims=True))
        return float(np.mean([lp[len(a) + i - 1, t] for i, t in enumerate(b)]))

    weights = [float(w) for w in args.weights.split(",")]
    model_dir = [HERE.parent / "indexer" / "data" / "relevance"]
    for corpus in args.corpora.split(","):
        cache = HERE / "out" / "pools" / f"feats-{corpus}-{model_key(model_dir)}-{rules_key()}.json"
        if not cache.exists():
            print(f"{corpus}: no feature cache {cache.name}: run bench/answer_combination.py first")
            continue
        feats = json.loads(cache.read_text())
        pool = {r["qid"]: r for r in load_pool(corpus)}
        rows = []
        for q in feats:
            r = pool[q["qid"]]
            texts = [p["text"] for p in r["passages"]]
            judged = {(c["passage"] - 1, c["start"]) for c in r["candidates"]}
            keep = [c for c in ex.candidates_of(r["question"], texts) if (c.passage, c.span.start) in judged]
            probs = [ex.answer_probability(dict(zip(q["names"], x))) for x in q["x"]]
            order = sorted(range(len(probs)), key=lambda k: -probs[k])[:args.top]
            scored = []
            for k in order:
                c = keep[k]
                subject = ex.subject_of(texts[c.passage], c.span)
                read = (subject.text + "\n" if subject else "") + c.span.text
                prefix = (f"<|im_start|>user\n{read}\n\nWrite a question that this text answers."
                          f"<|im_end|>\n<|im_start|>assistant\n")
                scored.append((q["labels"][k], probs[k], mean_logprob(prefix, r["question"])))
            rows.append(scored)
        print(f"{corpus} ({len(rows)} questions, the combination's best {args.top}):")
        for w in weights:
            p1 = sum(max(s, key=lambda x: np.log(x[1] / (1 - x[1])) + w * x[2])[0] == 2 for s in rows)
            print(f"  w {w:g}: first quote answers {p1 / len(rows):.3f}")
        alone = sum(max(s, key=lambda x: x[2])[0] == 2 for s in rows)
        print(f"  the likelihood alone: {alone / len(rows):.3f}")


if __name__ == "__main__":
    main()
