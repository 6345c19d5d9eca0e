"""Issue 17: a quote shown as the answer (✔) alone, or with the sentences right before and
after it in its paragraph (extract.answer_neighbours, SHOW_NEIGHBOURS), on the whole judged
sentence pools, as the answer path forms its units. Prints figures, asserts nothing.

    python bench/neighbours.py [--choose-on kernel,git,rust,vim] [--corpora postgres-v3,debref-v3,zsh-v3]

Per judged question: the relevance model reads each candidate (extract.answer_texts, the
best reading counting), the shipped combination gives its probability (relevance_pools),
extract.pick_quotes picks the four quotes with their reading context, extract.answer_roles
gives the roles (the shipped rule), then the quotes shown as the answer gain their
neighbours (or not: --sides none/before/after/both are all printed) and extract.excerpts
forms the units. A ✔ unit answers when one of its sentences is judged to answer. Chosen on
the training pools (the issue's two targets: ✔ units that answer, questions answered); the
pools left out are reported.
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
SIDES = ("none", "before", "after", "both")


def units_shown(question: str, texts: list[str], cands, probs: list[float], side: str):  # noqa: ANN001, ANN201
    """The answer path's units of one question: [(shown as the answer, its quotes)]."""
    from localrag.answering.generate import extract as ex

    quotes = [replace(q, answers=q.score) for q in ex.pick_quotes(question, texts, cands, probs, max_quotes=4)]
    roles = ex.answer_roles(quotes)
    if side != "none":
        grown, grown_roles = ex.answer_neighbours(question, texts, quotes, roles)
        keep = {id(q) for q in quotes}
        for q, r in zip(grown, grown_roles):
            if id(q) not in keep and (side == "both" or q.context == side):
                keep.add(id(q))
        pairs = [(q, r) for q, r in zip(grown, grown_roles) if id(q) in keep]
        quotes, roles = [q for q, _ in pairs], [r for _, r in pairs]
    role = {id(q): r for q, r in zip(quotes, roles)}
    return [(any(role[id(q)] for q in unit), unit) for unit in ex.excerpts(quotes, texts)]


def main() -> None:
    from indexer.embedder import Embedder
    from indexer.relevance_model import RelevanceModel
    from localrag.answering.generate import extract as ex

    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--choose-on", default=TRAINING)
    ap.add_argument("--corpora", default=MEASURED)
    ap.add_argument("--model-dir", default=str(HERE.parent / "indexer" / "data" / "relevance"))
    args = ap.parse_args()
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
