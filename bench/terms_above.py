"""Issue 17: a sentence whose description opened above its passage, named after the term line
the file has right before the passage (extract.READ_TERMS_ABOVE_PASSAGE) or left without a
name, in the shipped answer combination on the whole judged sentence pools. Prints figures,
asserts nothing.

    python bench/terms_above.py [--corpora kernel,git,postgres-v3,debref-v3,zsh-v3]

The pools hold their passages, not the text before them: each passage is found again in the
corpus's bench index (python bench/bench_retrieval.py --corpora C --build-only; by file,
first line and text) and given the index's stored text before it, as Assistant._retrieve
gives it (BEFORE_CHARS). The candidates and the quote scorer's features are
relevance_pools.scored's (cached); the model reads each candidate's readings
(extract.answer_texts, the best counting) and its subject's words count in the named
signals (`named`, `described`), with the switch off and on. kernel and git are training
pools (the combination was fitted on them); postgres, debref and zsh are left out.
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
from relevance_pools import scored, with_model  # noqa: E402

CORPORA = "kernel,git,postgres-v3,debref-v3,zsh-v3"


def leads_of(store, row: dict) -> tuple[list[str], int]:  # noqa: ANN001
    """Per passage of a pool row: the index's stored text before it ("" where the passage is
    not found as it was pooled); and how many were found."""
    from localrag.assistant import BEFORE_CHARS

    from indexer.records import Passage
    from indexer.search import surrounding_text

    out, found = [], 0
    for p in row["passages"]:
        lead = ""
        for cid, start, end, text, path in store.conn.execute(
                "SELECT c.id, c.char_start, c.char_end, c.text, f.path FROM chunks c JOIN files f "
                "ON f.id = c.file_id WHERE f.path LIKE ? AND c.start_line = ?",
                ("%/" + p["file"], p["start_line"])):
            if text == p["text"]:
                passage = Passage(cid, path, "", text, p["start_line"], None, None, start, end, 0.0)
                around, at, _ = surrounding_text(store, passage, chars=BEFORE_CHARS)
                lead, found = around[:at], found + 1
                break
        out.append(lead)
    return out, found


def probabilities(rm, q: dict, row: dict, texts, titles, cands, leads) -> tuple[list[float], list[str]]:  # noqa: ANN001
    """The shipped combination's probabilities of q's candidates as the answer path computes
    them with these leads, and the model's first reading of each."""
    from localrag.answering.generate import extract as ex

    readings = [ex.answer_texts(texts[c.passage], c.span, titles[c.passage], leads[c.passage]) for c in cands]
    flat = [t for rd in readings for t in rd]
    z = iter(float(x) for x in rm.logits(row["question"], flat))
    logits = [max(next(z) for _ in rd) for rd in readings]
    subjects = [ex.subject_of(texts[c.passage], c.span, leads[c.passage]) for c in cands]
    said = [s.text if s is not None else "" for s in subjects]
    named = ex.term_cover(row["question"], [f"{said[k]} {titles[c.passage]}" for k, c in enumerate(cands)])
    rows = [dict(r, named=named[k], described=float(bool(said[k]))) for k, r in enumerate(q["rows"])]
    return with_model(dict(q, rows=rows), logits), [rd[0] for rd in readings]


def main() -> None:
    from bench_relevance import index_dir
    from bench_retrieval import LocalIndex

    from indexer.embedder import Embedder
    from indexer.relevance_model import RelevanceModel
    from localrag.answering.generate import extract as ex

    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--corpora", default=CORPORA)
    ap.add_argument("--model-dir", default=str(HERE.parent / "indexer" / "data" / "relevance"))
    args = ap.parse_args()
    emb, rm = Embedder(), RelevanceModel(args.model_dir)
    rule = (ex.QUOTE_ANSWER_FLOOR, ex.ANSWER_MODEL_RELATIVE, ex.ANSWER_MAX)
    totals: dict[bool, list] = {False: [], True: []}
    for corpus in args.corpora.split(","):
        local = LocalIndex(index_dir(corpus.split("-")[0]), "onnx-int8")
        qs = scored(corpus, emb)
        rows: dict[bool, list] = {False: [], True: []}
        changed = found = passages = 0
        for q, (row, texts, titles, cands, _, _) in zip(qs, judged_candidates(corpus)):
            assert q["qid"] == row["qid"], "scored and judged_candidates disagree"
            leads, hit = leads_of(local.idx.store, row)
            found, passages = found + hit, passages + len(texts)
            read = {}
            for on in (False, True):
                ex.READ_TERMS_ABOVE_PASSAGE = on
                p, read[on] = probabilities(rm, q, row, texts, titles, cands, leads)
                rows[on].append((q["labels"], p, q["follows"]))
            changed += read[False] != read[True]
        local.idx.close()
        print(f"\n{corpus} ({len(qs)} questions, {changed} with a candidate named anew; the text before "
              f"found for {found} of {passages} passages)")
        for on in (False, True):
            show(f"terms above the passage {'named' if on else 'not named'}", evaluate(rows[on], rules=(rule,)))
            totals[on] += rows[on]
    print("\nall")
    for on in (False, True):
        show(f"terms above the passage {'named' if on else 'not named'}", evaluate(totals[on], rules=(rule,)))
    ex.READ_TERMS_ABOVE_PASSAGE = True


if __name__ == "__main__":
    np.seterr(all="ignore")
    main()
