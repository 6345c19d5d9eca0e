"""Issue 17: a quote shown as the answer (✔) alone, or with the sentences right before and
after it in its paragraph (extract.answer_neighbours, SHOW_NEIGHBOURS), on the whole judged
sentence pools, as the answer path forms its units. Prints figures, asserts nothing.

    python bench/neighbours.py [--choose-on kernel,git,rust,vim] [--corpora postgres-v3,debref-v3,zsh-v3]
    python bench/neighbours.py --speed postgres,zsh [--limit 20]

Per judged question: the relevance model reads each candidate (extract.answer_texts, the
best reading counting), the shipped combination gives its probability (relevance_pools),
extract.pick_quotes picks the four quotes with their reading context, extract.answer_roles
gives the roles (the shipped rule), then the quotes shown as the answer gain their
neighbours (or not: none/before/after/quote/both are all printed; quote: both sides as
before stop 60, the quote's own neighbours, SIDES) and extract.excerpts
forms the units. A ✔ unit answers when one of its sentences is judged to answer. Chosen on
the training pools (the issue's two targets: ✔ units that answer, questions answered); the
pools left out are reported.

--speed: the cost of stop 56's two rules (SHOW_NEIGHBOURS, READ_TERMS_ABOVE_PASSAGE), side by
side in one process: per natural question of each corpus's bench index, the shipped search's
five passages with their stored text before them (Assistant._retrieve's), then the quote
choice, its roles and neighbours, both rules off and on, the order alternating per question.
"""

from __future__ import annotations

import argparse
import os
import sys
from dataclasses import replace
from pathlib import Path

import numpy as np

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE.parent))
sys.path.insert(0, str(HERE))
os.environ.setdefault("HF_HUB_OFFLINE", "1")

from answer_combination import judged_candidates  # noqa: E402
from relevance_pools import MEASURED, scored, with_model  # noqa: E402

TRAINING = "kernel,git,rust,vim"
SIDES = ("none", "before", "after", "quote", "both")
"""Which neighbours a ✔ quote gains: none, the one before, the one after, both of the quote
itself (stop 56's rule: none on a side where the neighbour is quoted already), both of the
excerpt it forms with quotes right beside it (since stop 60, extract.NEIGHBOURS_OF_EXCERPT)."""


def units_shown(question: str, texts: list[str], cands, probs: list[float], side: str):  # noqa: ANN001, ANN201
    """The answer path's units of one question: [(shown as the answer, its quotes)]."""
    from localrag.answering.generate import extract as ex

    quotes = [replace(q, answers=q.score) for q in ex.pick_quotes(question, texts, cands, probs, max_quotes=4)]
    roles = ex.answer_roles(quotes)
    if side != "none":
        ex.NEIGHBOURS_OF_EXCERPT = side != "quote"
        try:
            grown, grown_roles = ex.answer_neighbours(question, texts, quotes, roles)
        finally:
            ex.NEIGHBOURS_OF_EXCERPT = True
        keep = {id(q) for q in quotes}
        for q, r in zip(grown, grown_roles):
            if id(q) not in keep and (side in ("quote", "both") or q.context == side):
                keep.add(id(q))
        pairs = [(q, r) for q, r in zip(grown, grown_roles) if id(q) in keep]
        quotes, roles = [q for q, _ in pairs], [r for _, r in pairs]
    role = {id(q): r for q, r in zip(quotes, roles)}
    return [(any(role[id(q)] for q in unit), unit) for unit in ex.excerpts(quotes, texts)]


def speed(corpora: str, limit: int, model_dir: str) -> None:
    import statistics
    import time

    from bench_relevance import index_dir
    from bench_retrieval import LocalIndex
    from retrieval_data import corpus, questions

    from indexer.relevance_model import RelevanceModel
    from indexer.search import surrounding_text
    from localrag.answering.generate import extract as ex
    from localrag.answering.passage_judge import SentenceJudge
    from localrag.assistant import BEFORE_CHARS

    rm = RelevanceModel(model_dir)
    for name in corpora.split(","):
        local = LocalIndex(index_dir(name), "onnx-int8")
        times: dict[bool, list[float]] = {False: [], True: []}
        for n, q in enumerate(questions(corpus(name), "natural")[:limit]):
            found = local.idx.search(q.question, k=5, judge=SentenceJudge(rm.probabilities))
            around = [surrounding_text(local.idx.store, p, chars=BEFORE_CHARS) for p in found]
            leads, texts = [t[:at] for t, at, _ in around], [p.text for p in found]
            for on in ((False, True) if n % 2 else (True, False)):
                ex.SHOW_NEIGHBOURS = ex.READ_TERMS_ABOVE_PASSAGE = on
                t0 = time.perf_counter()
                choice = ex.choose_quotes(q.question, texts, local.idx.embedder.encode, answers=rm.probabilities,
                                          titles=[p.title for p in found], leads=leads)
                ex.answer_neighbours(q.question, texts, choice.quotes, ex.answer_roles(choice.quotes))
                times[on].append(time.perf_counter() - t0)
        local.idx.close()
        m = {on: statistics.median(t) for on, t in times.items()}
        print(f"{name} ({len(times[True])} questions): quote choice, roles and neighbours p50 {m[False]:.3f} s "
              f"before, {m[True]:.3f} s with stop 56's rules ({m[True] / m[False]:.2f}x)")
    ex.SHOW_NEIGHBOURS = ex.READ_TERMS_ABOVE_PASSAGE = True


def main() -> None:
    from indexer.embedder import Embedder
    from indexer.relevance_model import RelevanceModel
    from localrag.answering.generate import extract as ex

    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--choose-on", default=TRAINING)
    ap.add_argument("--corpora", default=MEASURED)
    ap.add_argument("--model-dir", default=str(HERE.parent / "indexer" / "data" / "relevance"))
    ap.add_argument("--speed", default="", help="corpora to time both ways on (bench indexes)")
    ap.add_argument("--limit", type=int, default=20)
    args = ap.parse_args()
    if args.speed:
        speed(args.speed, args.limit, args.model_dir)
        return
    emb, rm = Embedder(), RelevanceModel(args.model_dir)
    for group, corpora in (("training pools (choose)", args.choose_on), ("pools left out", args.corpora)):
        print(f"\n== {group}")
        totals = {s: np.zeros(5) for s in SIDES}   # ✔ units, answering, questions answered, sentences, questions
        for corpus in [c for c in corpora.split(",") if c]:
            counts = {s: np.zeros(5) for s in SIDES}
            for q, (r, texts, titles, cands, judged, keep) in zip(scored(corpus, emb), judged_candidates(corpus)):
                assert q["qid"] == r["qid"], "scored and judged_candidates disagree"
                readings = [ex.answer_texts(texts[c.passage], c.span, titles[c.passage]) for c in cands]
                flat = [t for rd in readings for t in rd]
                z = iter(float(x) for x in rm.logits(r["question"], flat))
                logits = [max(next(z) for _ in rd) for rd in readings]
                probs = with_model(q, logits)
                kept = [cands[k] for k in keep]
                for side in SIDES:
                    shown = [u for answer, u in units_shown(r["question"], texts, kept, probs, side) if answer]
                    said = [any(judged.get((x.passage, x.span.start)) == 2 for x in u) for u in shown]
                    counts[side] += (len(shown), sum(said), any(said), sum(len(u) for u in shown), 1)
            print(f"\n{corpus}")
            for side in SIDES:
                show(side, counts[side])
                totals[side] += counts[side]
        print(f"\nall of {corpora}")
        for side in SIDES:
            show(side, totals[side])


def show(side: str, c: np.ndarray) -> None:
    n, shown = int(c[4]), max(int(c[0]), 1)
    print(f"  neighbours {side:>6}: ✔ units that answer {int(c[1])}/{int(c[0])} ({c[1] / shown:.3f}), "
          f"questions answered {int(c[2])}/{n} ({c[2] / max(n, 1):.3f}), sentences a ✔ unit {c[3] / shown:.2f}")


if __name__ == "__main__":
    np.seterr(all="ignore")
    main()
