"""The relevance model on the units the answers quoted, judged by annotators: prints
figures, asserts nothing.

    python bench/unit_relevance.py [--models DIR,DIR] [--corpora postgres,...]

bench/data/relevance/units-<corpus>.jsonl (scripts/make_unit_pairs.py): every quoted unit
of every judged answer round, with the annotators' "answers" label. For each model and
corpus: AUC of "answers" (label 2) against the rest over the corpus's units, AUC within
questions (the share of a question's (answering, not answering) pairs ordered right,
pooled), and of the questions with an answering unit, how many have one as the model's
best. These units are the ones the shipped answer path already put in its top few, so the
figures are about telling them apart (the ✔ or the context mark), not about finding them.
"""

from __future__ import annotations

import argparse
import json
import os
import sys
from pathlib import Path

os.environ.setdefault("HF_HUB_OFFLINE", "1")
HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE.parent))
sys.path.insert(0, str(HERE))

from bench_relevance_model import auc  # noqa: E402

DATA = HERE / "data" / "relevance"
SHIPPED = HERE.parent / "indexer" / "data" / "relevance"


def figures(rows: list[dict], scores: list[float]) -> tuple[float, float, int, int]:
    pos = [s for r, s in zip(rows, scores) if r["label"] == 2]
    neg = [s for r, s in zip(rows, scores) if r["label"] != 2]
    by_q: dict[str, list[tuple[float, int]]] = {}
    for r, s in zip(rows, scores):
        by_q.setdefault(r["qid"], []).append((s, r["label"]))
    right = pairs = 0.0
    first = asked = 0
    for units in by_q.values():
        p = [s for s, y in units if y == 2]
        n = [s for s, y in units if y != 2]
        if not p:
            continue
        asked += 1
        first += max(units)[1] == 2
        pairs += len(p) * len(n)
        right += sum((a > b) + 0.5 * (a == b) for a in p for b in n)
    return auc(pos, neg), right / pairs if pairs else float("nan"), first, asked


def main() -> None:
    from indexer.relevance_model import RelevanceModel, unit_text

    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--models", default=str(SHIPPED))
    ap.add_argument("--corpora", default="")
    args = ap.parse_args()
    files = sorted(DATA.glob("units-*.jsonl"))
    wanted = [c for c in args.corpora.split(",") if c]
    if wanted:
        files = [DATA / f"units-{c}.jsonl" for c in wanted]
    models = [(d, RelevanceModel(d)) for d in args.models.split(",")]
    print("corpus | units (answering) | " + " | ".join(
        f"{Path(d).name}: AUC, within questions, best answers" for d, _ in models))
    for f in files:
        rows = [json.loads(x) for x in f.read_text(encoding="utf-8").splitlines() if x.strip()]
        cells = []
        for _, m in models:
            scores = []
            for r in rows:
                scores.append(float(m.logits(r["question"], [unit_text(r["title"], r["subject"], r["sentence"])])[0]))
            a, w, first, asked = figures(rows, scores)
            cells.append(f"{a:.3f}, {w:.3f}, {first}/{asked}")
        print(f"{f.stem[6:]} | {len(rows)} ({sum(r['label'] == 2 for r in rows)}) | " + " | ".join(cells), flush=True)


if __name__ == "__main__":
    main()
