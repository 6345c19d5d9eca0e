"""Sentences for annotators to judge, for localrag's relevance model (issue 17): per
training question of the TRAINING corpora only (kernel, git: train-, train2- and
heldout-*.jsonl, 300 questions; rust, vim: train-<corpus>.jsonl, 150 questions each), the quotable sentences of the top 5 passages that
localrag's search returns (Index.search, the defaults), as the answer engine sees them.

Per question: the quote scorer's 8 best candidates (the hard cases: the ones localrag
would quote) and 4 others drawn at random from the rest (seed 17), each with its passage
title, the sentence before and after it, and the term or signature line it describes
(extract.subject_of). Written to bench/data/relevance/sentences-tojudge-<corpus>.jsonl;
annotators label them with bench/data/relevance/RUBRIC-sentences.md into
sentences-judged-<corpus>.jsonl. scripts/train_relevance.py fits on them.

    python scripts/make_sentence_judging.py --corpora kernel,git,rust

Never run it on the corpora left out (postgres, debref): they are for measuring.
"""

from __future__ import annotations

import argparse
import json
import os
import random
import sys
from pathlib import Path

REPO = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(REPO))
sys.path.insert(0, str(REPO / "bench"))
os.environ.setdefault("HF_HUB_OFFLINE", "1")

OUT_DIR = REPO / "bench" / "data" / "relevance"
DATA = REPO / "bench" / "data" / "retrieval"
TRAINING_CORPORA = ("kernel", "git", "rust", "vim")


def training_questions(name: str) -> list[dict]:
    rows = []
    for prefix in ("train", "train2", "heldout"):
        path = DATA / f"{prefix}-{name}.jsonl"
        if not path.exists():
            continue
        rows += [json.loads(x) for x in path.read_text(encoding="utf-8").splitlines() if x.strip()]
    return rows


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--corpora", default=",".join(TRAINING_CORPORA))
    ap.add_argument("--best", type=int, default=8)
    ap.add_argument("--others", type=int, default=4)
    args = ap.parse_args()
    from bench_relevance import index_dir
    from bench_retrieval import LocalIndex

    from localrag.answering.generate import extract as ex

    for name in args.corpora.split(","):
        if name not in TRAINING_CORPORA:
            raise SystemExit(f"{name} is a corpus left out for measuring; label training corpora only")
        local = LocalIndex(index_dir(name), "onnx-int8")
        rng = random.Random(17)
        out = []
        for q in training_questions(name):
            passages = local.idx.search(q["question"], k=5)
            texts = [p.text for p in passages]
            cands = ex.candidates_of(q["question"], texts)
            if not cands:
                continue
            _, probs = ex.score_candidates(q["question"], texts, cands, local.idx.embedder.encode)
            order = sorted(range(len(cands)), key=lambda k: -probs[k])
            best = order[:args.best]
            rest = order[args.best:]
            picked = best + rng.sample(rest, min(args.others, len(rest)))
            rng.shuffle(picked)
            for n, k in enumerate(picked, 1):
                c = cands[k]
                text = texts[c.passage]
                units = ex.candidate_units(text, question=q["question"])
                at = next((i for i, u in enumerate(units) if u.start == c.span.start), None)
                before = units[at - 1].text if at else ""
                after = units[at + 1].text if at is not None and at + 1 < len(units) else ""
                subject = ex.subject_of(text, c.span)
                out.append(dict(qid=q["id"], question=q["question"], unit=n,
                                file=local.rel(passages[c.passage].path), title=passages[c.passage].title,
                                rank=c.passage + 1, sentence=c.span.text,
                                subject=subject.text if subject else "", before=before, after=after,
                                scorer=round(probs[k], 4), picked="best" if k in best else "random",
                                answer_file=q["file"], key_phrase=q["key_phrase"]))
        path = OUT_DIR / f"sentences-tojudge-{name}.jsonl"
        path.write_text("".join(json.dumps(x, ensure_ascii=False) + "\n" for x in out), encoding="utf-8")
        print(f"{name}: {len(out)} sentences of {len({x['qid'] for x in out})} questions -> {path}")
        local.idx.close()


if __name__ == "__main__":
    main()
