"""Fit localrag.answering.decide's logistic weights on the DEV half of the decision set and
print the decision accuracy on both halves. The test half is never used for fitting, and
never as a nearest-neighbour example.

    HF_HUB_OFFLINE=1 python scripts/fit_request_kind.py [--l2 1.0] [--write]

Dev features use leave-one-out neighbours (a prompt is never its own neighbour), so the
dev figure is not flattered by the kNN cue. `--write` stores the dev prompts as the
classifier's examples (localrag/data/request_examples.jsonl). Prints a WEIGHTS dict to
paste into localrag/answering/decide.py, then the figures for the fitted weights and for the
weights now in the module, at the engine's default threshold.
"""

from __future__ import annotations

import argparse
import json
import sys
from pathlib import Path

import numpy as np

REPO = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(REPO))

from localrag.answering import decide as rk  # noqa: E402

SET = REPO / "tests" / "data" / "decision" / "prompts.jsonl"
TRAIN = REPO / "tests" / "data" / "decision" / "train.jsonl"   # extra training prompts (dtr-*)
THRESHOLD = 0.2     # the engine's default (settings.threshold)


DOCS = REPO / "bench" / "data" / "retrieval"
DOC_CORPORA = ("kernel", "git", "rust", "vim")   # training corpora: never the search bench's held-out sets


def doc_questions(per_corpus: int) -> list[dict]:
    """Questions about a manual, as annotators wrote them in a user's words for the training
    corpora (bench/data/retrieval/train-<c>.jsonl: searches, short keyword queries, "why
    does ..."): every request of these needs the files. Evenly spread over each file."""
    if per_corpus <= 0:
        return []
    out = []
    for name in DOC_CORPORA:
        rows = [json.loads(line) for line in (DOCS / f"train-{name}.jsonl").read_text(encoding="utf-8").splitlines()
                if line.strip()]
        out += [{"id": r["id"], "prompt": r["question"], "retrieve": True, "kind": "docs_question"}
                for r in rows[::max(1, len(rows) // per_corpus)][:per_corpus]]
    return out


def load(per_corpus: int = 0) -> tuple[list[dict], list[dict]]:
    rows = [json.loads(line) for line in SET.read_text(encoding="utf-8").splitlines() if line.strip()]
    dev = [r for r in rows if int(r["id"].split("-")[1]) % 2 == 1]
    test = [r for r in rows if int(r["id"].split("-")[1]) % 2 == 0]
    dev += [json.loads(line) for line in TRAIN.read_text(encoding="utf-8").splitlines() if line.strip()]
    dev += doc_questions(per_corpus)
    return dev, test


def held_out_questions(corpora: str) -> list[dict]:
    """The search bench's questions of corpora never fitted on (natural and exact lookups):
    every one needs the files."""
    out = []
    for name in filter(None, corpora.split(",")):
        for f in (DOCS / f"{name}.jsonl", DOCS / f"exact-{name}.jsonl"):
            if f.exists():
                out += [{"id": r["id"], "prompt": r["question"], "retrieve": True, "kind": "docs_question"}
                        for r in map(json.loads, f.read_text(encoding="utf-8").splitlines()) if r.get("question")]
    return out


def feature_rows(rows: list[dict], vecs: np.ndarray, bank_vecs: np.ndarray,
                 bank_y: np.ndarray, *, leave_one_out: bool) -> list[dict[str, float]]:
    out = []
    for i, r in enumerate(rows):
        f = rk.cue_vector(r["prompt"])
        keep = np.ones(len(bank_y), dtype=bool)
        if leave_one_out:
            keep[i] = False
        f["knn"] = rk.knn_margin(vecs[i], bank_vecs[keep & bank_y], bank_vecs[keep & ~bank_y])
        out.append(f)
    return out


def fit(feats: list[dict[str, float]], y: np.ndarray, *, l2: float, steps: int = 50) -> dict[str, float]:
    """L2-penalised logistic regression by Newton's method (15 features, 60 rows)."""
    names = sorted(feats[0])
    x = np.hstack([np.ones((len(feats), 1)), np.array([[f[n] for n in names] for f in feats])])
    t = y.astype(float)
    w = np.zeros(x.shape[1])
    penalty = l2 * np.diag(np.r_[0.0, np.ones(len(names))])   # the bias is not penalised
    for _ in range(steps):
        p = 1 / (1 + np.exp(-x @ w))
        w -= np.linalg.solve(x.T @ (x * (p * (1 - p))[:, None]) + penalty, x.T @ (p - t) + penalty @ w)
    # the fitted model's 50/50 point sits at EVEN_ODDS_AT (request_kind.probability)
    return {"bias": round(float(w[0]), 2), **{n: round(float(v), 2) for n, v in zip(names, w[1:])}}


def report(name: str, weights: dict[str, float], split: str, rows: list[dict],
           feats: list[dict[str, float]]) -> float:
    pred = np.array([rk.probability(f, weights) > THRESHOLD for f in feats])
    y = np.array([bool(r["retrieve"]) for r in rows])
    acc = float((pred == y).mean())
    print(f"{name:>7} {split:>4}: right {acc:.3f} of {len(rows)}; retrieves when needed "
          f"{(pred[y]).mean():.3f} ({y.sum()}), answers without files when not "
          f"{(~pred[~y]).mean():.3f} ({(~y).sum()})")
    for r, p, t in zip(rows, pred, y):
        if p != t and split == "dev":
            print(f"          miss: {r['kind']}: {r['prompt'][:80]!r}")
    return acc


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__)
    ap.add_argument("--l2", type=float, default=1.0)
    ap.add_argument("--write", action="store_true")
    ap.add_argument("--doc-questions", type=int, default=0,
                    help="also fit on this many questions of each training corpus's manual (train-<c>.jsonl)")
    ap.add_argument("--report-on", default="zsh,apache,cmake",
                    help="corpora left out whose search-bench questions the decision is reported on")
    args = ap.parse_args()
    from indexer.embedder import Embedder

    dev, test = load(args.doc_questions)
    held = held_out_questions(args.report_on)
    embed = Embedder().encode
    dev_vecs = np.asarray(embed([r["prompt"] for r in dev]), dtype=np.float32)
    test_vecs = np.asarray(embed([r["prompt"] for r in test]), dtype=np.float32)
    dev_y = np.array([bool(r["retrieve"]) for r in dev])
    dev_f = feature_rows(dev, dev_vecs, dev_vecs, dev_y, leave_one_out=True)
    test_f = feature_rows(test, test_vecs, dev_vecs, dev_y, leave_one_out=False)
    fitted = fit(dev_f, dev_y, l2=args.l2)
    print("WEIGHTS =", json.dumps(fitted))
    report("fitted", fitted, "dev", dev, dev_f)
    report("fitted", fitted, "test", test, test_f)
    report("module", rk.WEIGHTS, "dev", dev, dev_f)
    report("module", rk.WEIGHTS, "test", test, test_f)
    if held:
        held_vecs = np.asarray(embed([r["prompt"] for r in held]), dtype=np.float32)
        held_f = feature_rows(held, held_vecs, dev_vecs, dev_y, leave_one_out=False)
        report("fitted", fitted, "held", held, held_f)
        shipped = rk.load_examples()      # the module's weights with the examples it ships
        shipped_vecs = np.asarray(embed([p for p, _ in shipped]), dtype=np.float32)
        shipped_f = feature_rows(held, held_vecs, shipped_vecs, np.array([y for _, y in shipped]),
                                 leave_one_out=False)
        report("module", rk.WEIGHTS, "held", held, shipped_f)
    if args.write:
        rk.EXAMPLES.parent.mkdir(exist_ok=True)
        rk.EXAMPLES.write_text("".join(json.dumps({"prompt": r["prompt"], "retrieve": r["retrieve"]},
                                                  ensure_ascii=False) + "\n" for r in dev),
                               encoding="utf-8")
        print(f"wrote {len(dev)} examples to {rk.EXAMPLES}")


if __name__ == "__main__":
    main()
