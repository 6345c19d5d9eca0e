"""Issue 17: list items read with the sentence that introduces their list
(extract.list_lead_in, extract.READ_LEAD_INS). Prints figures, asserts nothing.

    python bench/list_lead_ins.py [--corpora mdnotes,flask,...]

For each natural question of each corpus: the shipped search's five passages on the bench
index, then the quotes as the answer path chooses them (choose_quotes with the relevance
model, answer_roles) twice in one process, lead-ins read and not. Counted over the
questions whose five passages hold the key phrase: a quote holds it, the first quote
holds it, a quote shown as the answer (✔) holds it; and how many quotes are list items
read with a lead-in. The key phrase stands for the answering sentence, as in every search
figure; the judged answer rounds (scripts/record_answers_for_judging.py --no-lead-ins)
say whether the quotes answer.
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

from retrieval_data import corpus, norm, questions  # noqa: E402

CORPORA = "mdnotes,mdnotes2,mdnotes3,flask,postgres,debref,zsh,rpdf,pycode,pycode2,ccode"


def main() -> None:
    from bench_relevance import index_dir
    from bench_retrieval import LocalIndex
    from sentence_rerank import PassageScorer

    from localrag.answering.generate import extract

    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--corpora", default=CORPORA)
    ap.add_argument("--model-dir", default=str(HERE.parent / "indexer" / "data" / "relevance"))
    args = ap.parse_args()
    scorer = PassageScorer(args.model_dir)
    answers = scorer.model.probabilities
    variants = (("before", False), ("lead-ins", True))
    total = {v: [0, 0, 0, 0, 0] for v, _ in variants}
    print("of the questions whose five passages hold the key phrase: a quote holds it / the first "
          "quote / a ✔ quote; quotes read with a lead-in")
    for name in args.corpora.split(","):
        local = LocalIndex(index_dir(name), "onnx-int8")
        counts = {v: [0, 0, 0, 0, 0] for v, _ in variants}
        changed = []
        for q in questions(corpus(name), "natural"):
            ids = [p.chunk_id for p in local.idx.search(q.question, k=5, judge=scorer)]
            rows = local.idx.store.fetch_chunks(ids)
            texts = [rows[c][3] for c in ids if c in rows]
            titles = [rows[c][2] for c in ids if c in rows]
            key = norm(q.key_phrase)
            if not any(key in norm(t) for t in texts):
                continue
            got = {}
            for v, on in variants:
                extract.READ_LEAD_INS = on
                choice = extract.choose_quotes(q.question, texts, local.idx.embedder.encode,
                                               answers=answers, titles=titles)
                quotes = choice.quotes
                roles = extract.answer_roles(quotes)
                holds = [key in norm(x.span.text) for x in quotes]
                c = counts[v]
                c[0] += 1
                c[1] += any(holds)
                c[2] += bool(holds) and holds[0]
                c[3] += any(h and r for h, r in zip(holds, roles))
                c[4] += sum(extract.list_lead_in(texts[x.passage], x.span) is not None
                            for x in quotes) if on else 0
                got[v] = any(h and r for h, r in zip(holds, roles))
            if got["before"] != got["lead-ins"]:
                changed.append(f"{q.id}{'+' if got['lead-ins'] else '-'}")
        extract.READ_LEAD_INS = True
        local.idx.close()
        print(f"{name}: " + "; ".join(f"{v} {c[1]}/{c[2]}/{c[3]} of {c[0]}" for v, c in counts.items())
              + f"; {counts['lead-ins'][4]} quotes with a lead-in; ✔ changed: {' '.join(changed) or '-'}")
        for v in counts:
            total[v] = [a + b for a, b in zip(total[v], counts[v])]
    print("all: " + "; ".join(f"{v} {c[1]}/{c[2]}/{c[3]} of {c[0]}" for v, c in total.items()))


if __name__ == "__main__":
    main()
