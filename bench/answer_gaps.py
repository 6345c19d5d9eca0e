"""Issue 17: where a question goes unanswered. Prints figures, asserts nothing.

    python bench/answer_gaps.py [--corpora postgres,debref,...]

For each corpus's newest judged answer round (bench/data/answers/, the first round of
carry_judgments.EARLIER that has answers and judgments), every question falls in one row:

- answered by a ✔ unit shown as the answer (the issue's "answered");
- answered only by a unit shown as context (›), or by a unit not labelled fully: what a
  better answer/context rule could still win;
- no unit answers, but the answering passage (the question's file, holding its key phrase)
  is one the answer quotes from: the quote choice missed its sentence;
- ... the passage is in the search's top 5 but nothing is quoted from it: the choice of
  sentences across the five passages missed it;
- ... the passage ranks 6-20 in the search, or lower: search.

The search is the shipped one (Index.search with the product's passage judge) on the bench
index (python bench/bench_retrieval.py --corpora C --build-only). The key phrase stands for
"the answering passage", as in every search figure; answers are the annotators' (the
judged file is the majority where three judged). The rows say which part of the answer path
a fix must improve, and the first two rows together are the ceiling of any rule that only
changes the roles of the units shown.
"""

from __future__ import annotations

import argparse
import os
import sys
from collections import Counter
from pathlib import Path

os.environ.setdefault("HF_HUB_OFFLINE", "1")
HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE.parent))
sys.path.insert(0, str(HERE))

from carry_judgments import EARLIER, load  # noqa: E402
from retrieval_data import corpus, norm, questions  # noqa: E402

DATA = HERE / "data" / "answers"
CORPORA = "postgres,debref,zsh,apache,cmake,mdnotes,mdnotes2,mdnotes3,flask,rpdf,pycode,pycode2,pycode3,pycode4,ccode,ccode2,ccode3,ccode4,ccode5,ccode6"
ROWS = ("answered by a ✔ unit shown as the answer", "answered only by a context or non-✔ unit",
        "passage quoted, its answering sentence not", "passage in the search's top 5, not quoted",
        "passage at search rank 6-20", "passage below search rank 20")


def newest_round(name: str) -> str | None:
    for tag in EARLIER:
        if (DATA / f"answers-{name}-{tag}.jsonl").exists() and \
                (DATA / f"judged-answers-{name}-{tag}.jsonl").exists():
            return tag
    return None


def classify(answer: dict, labels: dict[int, dict], search_rank) -> str:  # noqa: ANN001
    """The row of one question; `search_rank()` gives the answering passage's rank in the
    search (None below 20), asked only when no unit answers."""
    said = {u["unit"]: labels.get(u["unit"], {}).get("answers") == "yes" for u in answer["units"]}
    if any(said[u["unit"]] for u in answer["units"] if u.get("shown_as_answer") and u.get("mark") == "✔"):
        return ROWS[0]
    if any(said.values()):
        return ROWS[1]
    key = norm(answer["key_phrase"])
    if any(key in norm(u.get("passage_text") or "") for u in answer["units"]):
        return ROWS[2]
    rank = search_rank()
    return ROWS[3] if rank is not None and rank <= 5 else ROWS[4] if rank is not None else ROWS[5]


def main() -> None:
    from bench_relevance import index_dir
    from bench_retrieval import LocalIndex
    from sentence_rerank import PassageScorer

    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--corpora", default=CORPORA)
    ap.add_argument("--model-dir", default=str(HERE.parent / "indexer" / "data" / "relevance"))
    args = ap.parse_args()
    scorer = PassageScorer(args.model_dir)
    total: Counter = Counter()
    for name in args.corpora.split(","):
        tag = newest_round(name)
        if tag is None:
            print(f"{name}: no judged answer round")
            continue
        answers = load(DATA / f"answers-{name}-{tag}.jsonl")
        judged = {d["qid"]: {u["unit"]: u for u in d["units"]}
                  for d in load(DATA / f"judged-answers-{name}-{tag}.jsonl")}
        asked = {q.id: q for q in questions(corpus(name), "natural")}
        local = LocalIndex(index_dir(name), "onnx-int8")

        def search_rank(q) -> int | None:  # noqa: ANN001
            order = [p.chunk_id for p in local.idx.search(q.question, k=20, judge=scorer)]
            rows = local.idx.store.fetch_chunks(order)
            key = norm(q.key_phrase)
            return next((i for i, cid in enumerate(order, 1) if cid in rows and
                         local.rel(rows[cid][1]) == q.file and key in norm(rows[cid][3])), None)

        rows: Counter = Counter()
        for a in answers:
            if a["qid"] in judged:
                rows[classify(a, judged[a["qid"]], lambda a=a: search_rank(asked[a["qid"]]))] += 1
        local.idx.close()
        n = sum(rows.values())
        print(f"{name} ({tag}, {n} questions): " + "; ".join(f"{rows[r]}" for r in ROWS))
        total.update(rows)
    n = sum(total.values()) or 1
    print(f"\nall ({n} questions), in the order of the rows:")
    for r in ROWS:
        print(f"  {r}: {total[r]} ({total[r] / n:.2f})")
    print(f"  ceiling of a role rule (the first two rows): {(total[ROWS[0]] + total[ROWS[1]]) / n:.2f}")


if __name__ == "__main__":
    main()
