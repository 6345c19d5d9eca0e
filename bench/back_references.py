"""Issue 17: a sentence that opens with a back-reference ("This adds per-completion display
strings.") read by the relevance model alone, or also after the sentence it refers back to
(extract.READ_BACK_REFERENCES), in the shipped answer combination on the whole judged sentence
pools. Prints figures, asserts nothing.

    python bench/back_references.py [--choose-on kernel,git,rust,vim] [--corpora postgres-v3,debref-v3,zsh-v3]

The candidates and the quote scorer's features are relevance_pools.scored's (cached); the
model reads each candidate's readings as the answer path does (extract.answer_texts, the best
of them), with the switch off and on. The choice is made on the training pools (the issue's
two targets as the role rule was chosen: first quote answers, ✔ share, questions answered);
the pools left out are reported.
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


def logits_with(rm, corpus: str, qs: list[dict], read: bool) -> list[list[float]]:  # noqa: ANN001
    """Per question of `qs` (scored's, in judged_candidates' order): the model's logit of
    each candidate, the best of its readings with READ_BACK_REFERENCES = `read`."""
    from localrag.answering.generate import extract as ex

    ex.READ_BACK_REFERENCES = read
    out = []
    for q, (r, texts, titles, cands, _, _) in zip(qs, judged_candidates(corpus)):
        assert q["qid"] == r["qid"], "scored and judged_candidates disagree"
        readings = [ex.answer_texts(texts[c.passage], c.span, titles[c.passage]) for c in cands]
        flat = [t for rd in readings for t in rd]
        z = iter(float(x) for x in rm.logits(r["question"], flat))
        out.append([max(next(z) for _ in rd) for rd in readings])
    return out


def main() -> None:
    from indexer.embedder import Embedder
    from indexer.relevance_model import RelevanceModel
    from localrag.answering.generate.extract import ANSWER_MAX, ANSWER_MODEL_RELATIVE, QUOTE_ANSWER_FLOOR

    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--choose-on", default=TRAINING)
    ap.add_argument("--corpora", default=MEASURED)
    ap.add_argument("--model-dir", default=str(HERE.parent / "indexer" / "data" / "relevance"))
    args = ap.parse_args()
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
                z = logits_with(rm, corpus, qs, read)
                rows = [(q["labels"], with_model(q, zq), q["follows"]) for q, zq in zip(qs, z)]
                totals[read] += rows
                show(f"back-references read {'with the sentence before' if read else 'alone'}",
                     evaluate(rows, rules=(rule,)))
        if len([c for c in corpora.split(",") if c]) > 1:
            print(f"\nall of {corpora}")
            for read in (False, True):
                show(f"back-references read {'with the sentence before' if read else 'alone'}",
                     evaluate(totals[read], rules=(rule,)))


if __name__ == "__main__":
    np.seterr(all="ignore")
    main()
