"""Issue 17: where a passage's verdict ("judged to hold the answer") should sit, and what it
is worth on corpora left out. Prints figures, asserts nothing.

    python bench/passage_verdict_floor.py

A passage is judged by its best sentence: the answer path's probability that the sentence
answers (extract.ANSWER_COMBINATION over the pool it reads, the question's five passages
read together; QuoteChoice.passage_answers). The floor of the verdict is chosen on the
judged fused top 5 of the natural questions of kernel and git (fused-<c>.jsonl, written by
bench/judged_recall.py --write-fused, three annotators' median), as the floor with the most
verdicts right among 0.05-0.6, read by a relevance model trained without kernel's and git's
sentences (--fold-model, since stop 58: the shipped model trained on them, so its
probabilities there were those of a corpus learnt, not of a new one). It is reported on zsh, apache and cmake (nothing was fitted
or chosen on them; since stop 57 postgres and debref are printed apart: the relevance model
trained on their judged answers' units): AUC of the pooled best ("answers" against the rest), verdicts right at
the floor (extract.PASSAGE_AUC, PASSAGE_ACCURACY; critics' TRUST_AUC and TRUST_ACCURACY
decide whether verdicts are shown), and of the passages said to hold the answer, the share
that do.
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

from bench_relevance_model import auc  # noqa: E402
from relevance_combiner import scored_sentences  # noqa: E402

REL = HERE / "data" / "relevance"
CHOOSE_ON = ("kernel", "git")
REPORT_ON = ("zsh", "apache", "cmake")   # left out of every choice and of the model's training
TRAINED_ON = ("postgres", "debref")      # left out until stop 57, whose model trained on their answers' units
FLOORS = tuple(round(f, 3) for f in np.arange(0.05, 0.601, 0.025))


def pooled_bests(corpus: str, rm, emb) -> tuple[np.ndarray, np.ndarray]:  # noqa: ANN001
    """(each judged passage's best answer probability, its label 0/1/2), for the passages the
    engine gives a verdict: a passage without a sentence the model read is "not checked"
    and left out (counted in `unchecked`)."""
    rows = [r for r in map(json.loads, (REL / f"fused-{corpus}.jsonl").read_text().splitlines())
            if r.get("label") is not None]
    by_q: dict[str, list[dict]] = {}
    for r in rows:
        by_q.setdefault(r["qid"], []).append(r)
    best, lab = [], []
    for rs in by_q.values():
        rs.sort(key=lambda r: r["rank"])
        cands, _, _, said = scored_sentences(rs[0]["question"], [r["title"] for r in rs],
                                             [r["text"] for r in rs], rm, emb)
        for i, r in enumerate(rs):
            mine = [said[k] for k, c in enumerate(cands) if c.passage == i and said[k] is not None]
            if not mine:
                unchecked[corpus] = unchecked.get(corpus, 0) + 1
                continue
            best.append(max(mine))
            lab.append(int(r["label"]))
    return np.array(best), np.array(lab)


unchecked: dict[str, int] = {}


def main() -> None:
    from indexer.embedder import Embedder
    from indexer.relevance_model import RelevanceModel
    from localrag.answering.generate.extract import QUOTE_ANSWER_FLOOR

    ap = argparse.ArgumentParser()
    ap.add_argument("--model-dir", default="", help="a relevance model's folder (default: the shipped one)")
    ap.add_argument("--fold-model", default=str(HERE / "out" / "relevance-fold-kgpd"),
                    help="the model the floor is chosen with: trained as the shipped one but without kernel's "
                         "and git's sentences (scripts/train_relevance.py --corpora rust --units ...), so the "
                         "floor is chosen where the model reads as on a corpus it never saw ('' : the shipped)")
    args = ap.parse_args()
    rm, emb = RelevanceModel(args.model_dir or None), Embedder()
    fold = RelevanceModel(args.fold_model) if args.fold_model and Path(args.fold_model).is_dir() else rm
    if fold is rm:
        print(f"(no fold model at {args.fold_model!r}: the floor is chosen with the shipped model, which trained "
              f"on {' and '.join(CHOOSE_ON)}'s sentences)")
    data = {c: pooled_bests(c, fold if c in CHOOSE_ON else rm, emb) for c in CHOOSE_ON + REPORT_ON + TRAINED_ON}
    held = np.concatenate([data[c][0] for c in CHOOSE_ON])
    yes = np.concatenate([data[c][1] for c in CHOOSE_ON]) == 2
    right = {f: float(((held >= f) == yes).mean()) for f in FLOORS}
    floor = max(FLOORS, key=lambda f: (round(right[f], 9), -abs(f - QUOTE_ANSWER_FLOOR)))
    print(f"chosen on {' + '.join(CHOOSE_ON)} ({len(held)} passages, {int(yes.sum())} answer): floor {floor} "
          f"({right[floor]:.3f} verdicts right; at the quotes' floor {QUOTE_ANSWER_FLOOR}: "
          f"{((held >= QUOTE_ANSWER_FLOOR) == yes).mean():.3f})")
    for c in CHOOSE_ON + REPORT_ON + TRAINED_ON:
        b, lab = data[c]
        said = b >= floor
        tag = "chosen on" if c in CHOOSE_ON else "left out" if c in REPORT_ON else "its units trained on"
        print(f"  {c} ({tag}): {len(b)} passages given a verdict ({int((lab == 2).sum())} answer; "
              f"{unchecked.get(c, 0)} not checked: no sentence the model read); AUC of the pooled best "
              f"{auc(b[lab == 2], b[lab < 2]):.3f}; verdicts right at {floor}: {(said == (lab == 2)).mean():.3f}; "
              f"said to hold the answer {int(said.sum())}: answer {(lab[said] == 2).mean():.2f}, answer or "
              f"related {(lab[said] >= 1).mean():.2f}; answering passages said to {said[lab == 2].mean():.2f}")


if __name__ == "__main__":
    main()
