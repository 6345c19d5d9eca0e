"""Fit the quote scorer (localrag.answering.generate.extract.QuoteScorer) and print how
often the quotes hold the answer.

    HF_HUB_OFFLINE=1 python scripts/fit_quote_scorer.py --git-data G --kernel-data K \
        [--l2 1.0] [--cache F.json] [--test]

G and K are localrag data directories holding indexes of the git manuals and of the
kernel documentation (the corpora bench/bench_answer.py's docstring says how to copy,
indexed with `localrag index`).
Each question is searched once (top 5). A candidate sentence is positive when it comes
from the question's file and holds its key phrase.

Fitting uses the training questions (bench/data/retrieval/train-*.jsonl: files no dev or
test question uses) and the DEV halves (odd ids of git.jsonl / kernel.jsonl). It prints:
the dev figure for weights fitted on the training questions alone (dev held out), a 5-fold
cross-validation over training + dev (3 to 5 quotes, with and without each quote's reading
context, extract.reading_context), then the weights fitted on training + dev (paste
ANSWER_WEIGHTS into extract.py), and the share of questions whose quotes hold the key
phrase for several quote counts and cuts. Quotes are chosen by extract.pick_quotes, as the
engine chooses them. The test halves are scored only with --test, with the weights now in
the module, for the note; the held-out questions (heldout-*.jsonl) only by
tests/test_quote_scorer.py and bench/bench_answer.py.
"""

from __future__ import annotations

import argparse
import json
import os
import sys
from pathlib import Path

import numpy as np

REPO = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(REPO))
os.environ.setdefault("HF_HUB_OFFLINE", "1")

from localrag.answering.generate import extract as ex  # noqa: E402

DATA = REPO / "bench" / "data" / "retrieval"


def norm(text: str) -> str:
    return " ".join(text.split()).lower()


def questions(corpus: str) -> list[dict]:
    rows = []
    for line in (DATA / f"{corpus}.jsonl").read_text(encoding="utf-8").splitlines():
        if line.strip():
            q = json.loads(line)
            q["split"] = "dev" if int(q["id"].split("-")[1]) % 2 else "test"
            rows.append(q)
    for line in (DATA / f"train-{corpus}.jsonl").read_text(encoding="utf-8").splitlines():
        if line.strip():
            rows.append({**json.loads(line), "split": "train"})
    for q in rows:
        q["corpus"] = corpus
    return rows


def search_all(args) -> list[dict]:
    if args.cache and args.cache.exists():
        return json.loads(args.cache.read_text())
    from localrag.assistant import Assistant

    out = []
    for corpus, data in (("git", args.git_data), ("kernel", args.kernel_data)):
        with Assistant.open(data) as a:
            for q in questions(corpus):
                ps = a.search(q["question"], k=5)
                out.append({**q, "passages": [{"path": p.path, "text": p.text} for p in ps]})
    if args.cache:
        args.cache.write_text(json.dumps(out))
    return out


def featurise(rows: list[dict], embed) -> list[dict]:
    """Per question: candidates, feature rows, labels."""
    out = []
    for r in rows:
        texts = [p["text"] for p in r["passages"]]
        cands = ex.candidates_of(r["question"], texts)
        key = norm(r["key_phrase"])
        right = {i for i, p in enumerate(r["passages"])
                 if p["path"].endswith("/" + r["file"]) and key in norm(p["text"])}
        if not cands:
            out.append({**r, "feats": [], "y": [], "cands": [], "in_top5": bool(right)})
            continue
        feats, _ = ex.score_candidates(r["question"], texts, cands, embed)
        y = [int(c.passage in right and key in norm(c.span.text)) for c in cands]
        out.append({**r, "feats": feats, "y": y, "cands": cands, "in_top5": bool(right)})
    return out


def fit(rows: list[dict], *, l2: float, steps: int = 60) -> dict[str, float]:
    """L2-penalised logistic regression by Newton's method over ANSWER_FEATURES; each
    question weighs the same (its positives and its negatives each sum to one half)."""
    names = list(ex.ANSWER_FEATURES)
    xs, ts, ws = [], [], []
    for r in rows:
        if not r["y"] or not any(r["y"]):
            continue
        pos = sum(r["y"])
        neg = len(r["y"]) - pos
        for f, y in zip(r["feats"], r["y"]):
            xs.append([1.0] + [f[n] for n in names])
            ts.append(float(y))
            ws.append(0.5 / pos if y else 0.5 / max(neg, 1))
    x, t, sw = np.array(xs), np.array(ts), np.array(ws)
    w = np.zeros(x.shape[1])
    penalty = l2 * np.diag(np.r_[0.0, np.ones(len(names))]) / len({id(r) for r in rows})
    for _ in range(steps):
        p = 1 / (1 + np.exp(-x @ w))
        grad = x.T @ (sw * (p - t)) + penalty @ w
        hess = x.T @ (x * (sw * p * (1 - p))[:, None]) + penalty
        w -= np.linalg.solve(hess, grad)
    return {"bias": round(float(w[0]), 3), **{n: round(float(v), 3) for n, v in zip(names, w[1:])}}


def hits(rows: list[dict], weights: dict[str, float], *, max_quotes: int,
         relative: float, context: bool = True) -> tuple[int, int, float]:
    """(questions whose quotes hold the key phrase, questions whose passage is in the top 5,
    mean sentences shown per question) with these weights, chosen by extract.pick_quotes as
    the engine does (with each quote's reading context unless `context` is False)."""
    scorer = ex.QuoteScorer(weights)
    hit = n = 0
    shown = []
    for r in rows:
        probs = [scorer.probability(f) for f in r["feats"]]
        texts = [p["text"] for p in r["passages"]]
        quotes = ex.pick_quotes(r["question"], texts, r["cands"], probs,
                                max_quotes=max_quotes, relative=relative)
        if not context:
            quotes = [q for q in quotes if not q.context]
        shown.append(len(quotes))
        if r["in_top5"]:
            n += 1
            hit += any(r["y"][k] for k, c in enumerate(r["cands"])
                       if any(q.passage == c.passage and q.span.start == c.span.start
                              for q in quotes))
    return hit, n, float(np.mean(shown)) if shown else 0.0


def cross_validated(rows: list[dict], *, l2: float, folds: int = 5,
                    seeds: tuple[int, ...] = (0, 1, 2)) -> None:
    """Training + dev questions in `folds` folds (shuffled with each seed): fitted on the
    other folds, scored on each; how often the quotes hold the key phrase, with and
    without their reading context, for 3-5 quotes."""
    import random

    cells = {}
    for mq in (3, 4, 5):
        for context in (False, True):
            hit = n = 0
            shown = 0.0
            for seed in seeds:
                order = rows[:]
                random.Random(seed).shuffle(order)
                for f in range(folds):
                    held = [r for i, r in enumerate(order) if i % folds == f]
                    w = fit([r for i, r in enumerate(order) if i % folds != f], l2=l2)
                    h, m, mean = hits(held, w, max_quotes=mq, relative=0.0, context=context)
                    hit, n, shown = hit + h, n + m, shown + mean * len(held)
            cells[(mq, context)] = f"{hit / n:.3f} ({shown / (len(rows) * len(seeds)):.2f})"
    print(f"  {folds}-fold cross-validation over training + dev ({len(seeds)} shuffles): "
          "share holding the key phrase (mean sentences shown)")
    for (mq, context), cell in cells.items():
        print(f"    {mq} quotes{' + reading context' if context else ''}: {cell}")


def table(name: str, rows: list[dict], weights: dict[str, float]) -> None:
    for corpus in ("git", "kernel", None):
        part = [r for r in rows if corpus is None or r["corpus"] == corpus]
        cells = []
        for mq in (1, 2, 3, 4):
            for rel in (0.0, 0.5):
                h, n, mean = hits(part, weights, max_quotes=mq, relative=rel)
                cells.append(f"q{mq}/c{rel}: {h}/{n} ({mean:.1f})")
        print(f"  {name} {corpus or 'both':6s} " + "  ".join(cells))


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--git-data", type=Path, required=True)
    ap.add_argument("--kernel-data", type=Path, required=True)
    ap.add_argument("--l2", type=float, default=1.0)
    ap.add_argument("--cache", type=Path, help="top-5 passages per question, kept between runs")
    ap.add_argument("--test", action="store_true", help="also score the test halves")
    args = ap.parse_args()

    from indexer.embedder import Embedder

    embedder = Embedder()
    rows = featurise(search_all(args), embedder.encode)
    train = [r for r in rows if r["split"] == "train"]
    dev = [r for r in rows if r["split"] == "dev"]
    test = [r for r in rows if r["split"] == "test"]
    print(f"{len(train)} training, {len(dev)} dev, {len(test)} test questions; "
          f"top-5 holds the passage for {sum(r['in_top5'] for r in train)}, "
          f"{sum(r['in_top5'] for r in dev)}, {sum(r['in_top5'] for r in test)}")
    print("quotes holding the key phrase / questions whose passage is in the top 5 "
          "(mean quotes shown): q = most quotes, c = cut relative to the best")
    table("module weights, dev", dev, ex.ANSWER_WEIGHTS)
    held = fit(train, l2=args.l2)
    table("fit on train, dev held out", dev, held)
    cross_validated(train + dev, l2=args.l2)
    final = fit(train + dev, l2=args.l2)
    table("fit on train+dev, train+dev", train + dev, final)
    print("ANSWER_WEIGHTS =", json.dumps(final))
    if args.test:
        table("module weights, TEST", test, ex.ANSWER_WEIGHTS)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
