"""Issue 17 (stop 53): how the relevance model reads a Doxygen tag in a unit's name
(extract.TAG_READING: "tag" as shown, "words" as what it says, "none" without it). Prints
figures, asserts nothing.

    python bench/tag_reading.py [--corpora ccode,ccode2,ccode3,ccode4,ccode5,ccode6]

For each natural question: the shipped search's five passages on the bench index (its
passage judge reads units as the relevance model does) and the quotes as the answer path
chooses them (choose_quotes with the relevance model, answer_roles), once per reading in one
process, the readings' order turning per question. Counted: the questions whose five
passages hold the key phrase, and of those, a quote holds it / the first quote / a ✔ quote.
"""

from __future__ import annotations

import argparse
import os
import sys
from pathlib import Path

os.environ.setdefault("HF_HUB_OFFLINE", "1")
HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE.parent))
sys.path.insert(0, str(HERE))

from list_lead_ins import five_passages, tally  # noqa: E402
from retrieval_data import corpus, norm, questions  # noqa: E402

READINGS = ("tag", "words", "none")


def main() -> None:
    from bench_relevance import index_dir
    from bench_retrieval import LocalIndex
    from sentence_rerank import PassageScorer

    from localrag.answering.generate import extract

    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--corpora", default="ccode,ccode2,ccode3,ccode4,ccode5,ccode6")
    ap.add_argument("--model-dir", default=str(HERE.parent / "indexer" / "data" / "relevance"))
    args = ap.parse_args()
    scorer = PassageScorer(args.model_dir)
    total = {r: [0, 0, 0, 0] for r in READINGS}
    print("per reading: questions whose five passages hold the key phrase; of them a quote holds "
          "it / the first quote / a ✔ quote")
    turn = 0
    for name in args.corpora.split(","):
        local = LocalIndex(index_dir(name), "onnx-int8")
        counts = {r: [0, 0, 0, 0] for r in READINGS}
        for q in questions(corpus(name), "natural"):
            turn += 1
            order = READINGS[turn % 3:] + READINGS[:turn % 3]
            for reading in order:
                extract.TAG_READING = reading
                texts, titles = five_passages(local, q.question, scorer)
                key = norm(q.key_phrase)
                if not any(key in norm(t) for t in texts):
                    continue
                choice = extract.choose_quotes(q.question, texts, local.idx.embedder.encode,
                                               answers=scorer.model.probabilities, titles=titles)
                tally(counts[reading], choice.quotes, key)
        local.idx.close()
        print(f"{name}: " + "; ".join(f"{r} {c[0]}: {c[1]}/{c[2]}/{c[3]}" for r, c in counts.items()))
        for r in READINGS:
            total[r] = [a + b for a, b in zip(total[r], counts[r])]
    extract.TAG_READING = "words"
    print("all: " + "; ".join(f"{r} {c[0]}: {c[1]}/{c[2]}/{c[3]}" for r, c in total.items()))


if __name__ == "__main__":
    main()
