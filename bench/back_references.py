"""Issue 17: a sentence that opens with a back-reference ("This adds per-completion display
strings.") read by the relevance model alone, or also after the sentence it refers back to
(extract.READ_BACK_REFERENCES), in the shipped answer combination on the whole judged sentence
pools. Prints figures, asserts nothing.

    python bench/back_references.py [--choose-on kernel,git,rust,vim] [--corpora postgres-v3,debref-v3,zsh-v3]
    python bench/back_references.py --speed postgres,zsh [--limit 20]
    python bench/back_references.py --sentence-before   # every sentence also read after the one before it

The candidates and the quote scorer's features are relevance_pools.scored's (cached); the
model reads each candidate's readings as the answer path does (extract.answer_texts, the best
of them), with the switch off and on. The choice is made on the training pools (the issue's
two targets as the role rule was chosen: first quote answers, ✔ share, questions answered);
the pools left out are reported.

--speed: the cost, side by side in one process: per natural question of each corpus's bench
index, the shipped search (its second stage reading the fused top 20) and the quote choice
over its five passages, both ways, the order alternating per question, each way with its own
relevance model (a model keeps what it read for the last question).
"""

from __future__ import annotations

import argparse
import os
import sys
from pathlib import Path

import numpy as np

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE.parent))
sys.path.insert(0, str(HERE))
os.environ.setdefault("HF_HUB_OFFLINE", "1")

from answer_combination import judged_candidates  # noqa: E402
from pool_quality import evaluate, show  # noqa: E402
from relevance_pools import MEASURED, scored, with_model  # noqa: E402

TRAINING = "kernel,git,rust,vim"


def logits_with(rm, corpus: str, qs: list[dict], read: bool,  # noqa: ANN001
                switch: str = "READ_BACK_REFERENCES") -> list[list[float]]:
    """Per question of `qs` (scored's, in judged_candidates' order): the model's logit of
    each candidate, the best of its readings with the extract switch `switch` = `read`
    (READ_BACK_REFERENCES, or READ_SENTENCE_BEFORE with back-references read)."""
    from localrag.answering.generate import extract as ex

    ex.READ_BACK_REFERENCES = True
    setattr(ex, switch, read)
    out = []
    for q, (r, texts, titles, cands, _, _) in zip(qs, judged_candidates(corpus)):
        assert q["qid"] == r["qid"], "scored and judged_candidates disagree"
        readings = [ex.answer_texts(texts[c.passage], c.span, titles[c.passage]) for c in cands]
        flat = [t for rd in readings for t in rd]
        z = iter(float(x) for x in rm.logits(r["question"], flat))
        out.append([max(next(z) for _ in rd) for rd in readings])
    return out


def speed(corpora: str, limit: int, model_dir: str) -> None:
    import statistics
    import time

    from bench_relevance import index_dir
    from bench_retrieval import LocalIndex
    from retrieval_data import corpus, questions

    from indexer.relevance_model import RelevanceModel
    from localrag.answering.generate import extract as ex
    from localrag.answering.passage_judge import SentenceJudge

    models = {False: RelevanceModel(model_dir), True: RelevanceModel(model_dir)}
    for name in corpora.split(","):
        local = LocalIndex(index_dir(name), "onnx-int8")
        embed = local.idx.embedder.encode
        times: dict[bool, list[float]] = {False: [], True: []}
        reads: dict[bool, int] = {False: 0, True: 0}
        for n, q in enumerate(questions(corpus(name), "natural")[:limit]):
            for read in ((False, True) if n % 2 else (True, False)):
                ex.READ_BACK_REFERENCES = read
                rm = models[read]

                def answers(question, texts, rm=rm, read=read):  # noqa: ANN001, ANN202
                    reads[read] += len(texts)
                    return rm.probabilities(question, texts)

                t0 = time.perf_counter()
                found = local.idx.search(q.question, k=5, judge=SentenceJudge(answers))
                ex.choose_quotes(q.question, [p.text for p in found], embed, answers=answers,
                                 titles=[p.title for p in found])
                times[read].append(time.perf_counter() - t0)
        local.idx.close()
        m = {r: statistics.median(t) for r, t in times.items()}
        print(f"{name} ({len(times[True])} questions): search and quotes p50 {m[False]:.3f} s alone, "
              f"{m[True]:.3f} s with back-references ({m[True] / m[False]:.2f}x); texts the model "
              f"read {reads[False]} -> {reads[True]} ({reads[True] / max(reads[False], 1):.2f}x)")
    ex.READ_BACK_REFERENCES = True


def main() -> None:
    from indexer.embedder import Embedder
    from indexer.relevance_model import RelevanceModel
    from localrag.answering.generate.extract import ANSWER_MAX, ANSWER_MODEL_RELATIVE, QUOTE_ANSWER_FLOOR

    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--choose-on", default=TRAINING)
    ap.add_argument("--corpora", default=MEASURED)
    ap.add_argument("--model-dir", default=str(HERE.parent / "indexer" / "data" / "relevance"))
    ap.add_argument("--speed", default="", help="corpora to time both ways on (bench indexes)")
    ap.add_argument("--limit", type=int, default=20)
    ap.add_argument("--sentence-before", action="store_true",
                    help="measure extract.READ_SENTENCE_BEFORE (every sentence also read after the one "
                         "before it) instead of READ_BACK_REFERENCES")
    args = ap.parse_args()
    switch = "READ_SENTENCE_BEFORE" if args.sentence_before else "READ_BACK_REFERENCES"
    what = "every sentence" if args.sentence_before else "back-references"
    if args.speed:
        speed(args.speed, args.limit, args.model_dir)
        return
    emb = Embedder()
    rm = RelevanceModel(args.model_dir)
    rule = (QUOTE_ANSWER_FLOOR, ANSWER_MODEL_RELATIVE, ANSWER_MAX)
    for group, corpora in (("training pools (choose)", args.choose_on), ("pools left out", args.corpora)):
        print(f"\n== {group}")
        totals = {False: [], True: []}
        for corpus in [c for c in corpora.split(",") if c]:
            qs = scored(corpus, emb)
            print(f"\n{corpus} ({len(qs)} questions)")
            for read in (False, True):
                z = logits_with(rm, corpus, qs, read, switch)
                rows = [(q["labels"], with_model(q, zq), q["follows"]) for q, zq in zip(qs, z)]
                totals[read] += rows
                show(f"{what} read {'with the sentence before' if read else 'alone'}",
                     evaluate(rows, rules=(rule,)))
        if len([c for c in corpora.split(",") if c]) > 1:
            print(f"\nall of {corpora}")
            for read in (False, True):
                show(f"{what} read {'with the sentence before' if read else 'alone'}",
                     evaluate(totals[read], rules=(rule,)))


if __name__ == "__main__":
    np.seterr(all="ignore")
    main()
