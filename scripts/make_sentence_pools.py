"""Every quotable sentence of each question's five passages, for annotators to judge whole
(issue 17: which sentence answers).

The answer path quotes from all the candidate sentences of the five passages search returns
(extract.candidates_of, read by the relevance model up to RELEVANCE_POOL). Judging that whole
pool, not a sample of it, gives (a) training pairs with every hard negative the model meets
at run time and (b) on the corpora left out, a measure of the quote choice itself (is the
first quote an answer? is any?) that needs no answer to be recorded and judged again for
each change.

    python scripts/make_sentence_pools.py --corpora kernel,git,rust,vim --fused   # training
    python scripts/make_sentence_pools.py --corpora postgres,debref,zsh --fused   # measuring
    python scripts/make_sentence_pools.py --corpora postgres,debref,zsh --tag v2  # search as shipped
    # -> bench/data/relevance/pools/pool-<corpus>.jsonl

Questions: the training corpora's training questions (train-, train2-, heldout-<c>.jsonl:
never the search bench's kernel.jsonl / git.jsonl), the measured corpora's natural questions.
One line per question: its five passages (rank, file, title, text) and its candidates (id
1..n in passage order, the passage, character offsets, the sentence, the subject line
extract.subject_of gives it, and the shipped scorer's, model's and combination's
probabilities, for reference). bench/sentence_pools.py renders them for annotators
(RUBRIC-pools.md) and reads their labels back.
"""

from __future__ import annotations

import argparse
import json
import os
import sys
from pathlib import Path

REPO = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(REPO))
sys.path.insert(0, str(REPO / "bench"))
os.environ.setdefault("HF_HUB_OFFLINE", "1")

OUT_DIR = REPO / "bench" / "data" / "relevance" / "pools"
DATA = REPO / "bench" / "data" / "retrieval"
TRAINING = ("kernel", "git", "rust", "vim")
MEASURED = ("postgres", "debref", "zsh")


def questions_of(name: str) -> list[dict]:
    files = [f"{p}-{name}.jsonl" for p in ("train", "train2", "heldout")] if name in TRAINING \
        else [f"{name}.jsonl"]
    rows = []
    for f in files:
        path = DATA / f
        if path.exists():
            rows += [json.loads(x) for x in path.read_text(encoding="utf-8").splitlines() if x.strip()]
    return rows


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--corpora", default=",".join(TRAINING + MEASURED))
    ap.add_argument("--no-model", action="store_true", help="leave the shipped model's figures out")
    ap.add_argument("--fused", action="store_true",
                    help="the fused order (the search of the first pools), not search as shipped "
                         "with the relevance model's second stage")
    ap.add_argument("--tag", default="", help="pool-<corpus>-<tag>.jsonl (labels carried by "
                    "bench/sentence_pools.py merge --from <corpus> --to <corpus>-<tag>)")
    args = ap.parse_args()
    from bench_relevance import index_dir
    from bench_retrieval import LocalIndex

    from indexer.relevance_model import RelevanceModel
    from localrag.answering.generate import extract as ex

    from indexer.relevance_model import shipped_probabilities
    from localrag.answering.passage_judge import SentenceJudge

    rm = None if args.no_model else RelevanceModel()
    judge = None if args.fused else SentenceJudge(shipped_probabilities())
    OUT_DIR.mkdir(parents=True, exist_ok=True)
    for name in args.corpora.split(","):
        if name not in TRAINING + MEASURED:
            raise SystemExit(f"unknown corpus {name}")
        local = LocalIndex(index_dir(name), "onnx-int8")
        out = []
        for q in questions_of(name):
            found = local.idx.search(q["question"], k=5, judge=judge)
            texts = [p.text for p in found]
            titles = [p.title for p in found]
            cands = ex.candidates_of(q["question"], texts)
            feats, probs = ex.score_candidates(q["question"], texts, cands, local.idx.embedder.encode) \
                if cands else ([], [])
            model, combined = [], []
            if rm is not None and cands:
                model = [float(x) for x in rm.probabilities(q["question"], [
                    ex.answer_text(texts[c.passage], c.span, titles[c.passage]) for c in cands])]
                combined = ex.answer_probabilities(q["question"], texts, titles, cands, feats, probs, model)
            rows = []
            for n, c in enumerate(cands, 1):
                subject = ex.subject_of(texts[c.passage], c.span)
                row = {"id": n, "passage": c.passage + 1, "start": c.span.start, "end": c.span.end,
                       "sentence": c.span.text, "subject": subject.text if subject else "",
                       "scorer": round(float(probs[n - 1]), 4)}
                if model:
                    row["model"] = round(model[n - 1], 4)
                    row["combined"] = round(combined[n - 1], 4)
                rows.append(row)
            out.append({"qid": q["id"], "question": q["question"], "answer_file": q["file"],
                        "key_phrase": q["key_phrase"], "kind": q.get("kind", ""),
                        "passages": [{"rank": i + 1, "file": local.rel(p.path), "title": p.title,
                                      "start_line": p.start_line, "text": p.text}
                                     for i, p in enumerate(found)],
                        "candidates": rows})
        path = OUT_DIR / f"pool-{name}{'-' + args.tag if args.tag else ''}.jsonl"
        path.write_text("".join(json.dumps(x, ensure_ascii=False) + "\n" for x in out), encoding="utf-8")
        n = sum(len(x["candidates"]) for x in out)
        print(f"{name}: {len(out)} questions, {n} candidate sentences -> {path}", flush=True)
        local.idx.close()


if __name__ == "__main__":
    main()
