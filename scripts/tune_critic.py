"""Set the embedding critic's constants on the DEV half of tests/data/critic_real (issue 9).

    python scripts/tune_critic.py            # prints the chosen SupportRules and the relevance signals
    python scripts/tune_critic.py --build ANNOT_DIR   # first merge cases + labels into the set

Only dev cases are read for choosing; the test half is measured afterwards by
tests/test_critics.py (critics.MEASURED records what it gave). Support rules: a grid over
SupportRules' cut points; the rule kept is the one with the most "fully" labels on dev
among those whose "fully" precision is at least 0.95 there (a margin over the 0.90
target), with "partially" kept only if it is right at least 55% of the time on dev
(otherwise such sentences are "unchecked"). Relevance: each feature's dev AUC and a logistic regression over them (reported only).
"""

from __future__ import annotations

import argparse
import itertools
import json
import os
import sys
from pathlib import Path

REPO = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(REPO))
sys.path.insert(0, str(REPO / "bench"))
os.environ.setdefault("HF_HUB_OFFLINE", "1")

SET = REPO / "tests" / "data" / "critic_real"


def build(annot: Path) -> None:
    """Merge the annotators' labels into the cases: sentences.jsonl and relevance.jsonl."""
    def rows(name: str) -> list[dict]:
        return [json.loads(line) for line in (annot / name).read_text().splitlines()
                if line.strip()]

    labels = {r["id"]: r for r in rows("support_labels.jsonl")}
    out = []
    for c in rows("support_cases.jsonl"):
        lab = labels.get(c["id"])
        if lab is None:
            continue
        out.append({**c, "meaningful": bool(lab["meaningful"]),
                    "noise_kind": None if lab["meaningful"] else (lab.get("noise_kind") or "other"),
                    "support": lab["support"], "answers": bool(lab.get("answers", False)),
                    "note": lab.get("note")})
    rel_labels = {r["id"]: r for r in rows("relevance_labels.jsonl")}
    rel = []
    for c in rows("relevance_cases.jsonl"):
        lab = rel_labels.get(c["id"])
        if lab is not None:
            rel.append({**c, "relevant": bool(lab["relevant"]), "note": lab.get("note")})
    SET.mkdir(parents=True, exist_ok=True)
    (SET / "sentences.jsonl").write_text("".join(json.dumps(r) + "\n" for r in out))
    (SET / "relevance.jsonl").write_text("".join(json.dumps(r) + "\n" for r in rel))
    print(f"{len(out)} sentence cases, {len(rel)} relevance cases written to {SET}")


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--build", type=Path)
    args = ap.parse_args()
    if args.build:
        build(args.build)

    import numpy as np

    from indexer.embedder import Embedder
    from localrag.answering.judge import lexical
    from critic_evaluation import auc, load_real_set, question_of
    from localrag.answering.judge.critics import EmbeddingCritic, SupportRules
    from localrag.answering.judge.noise import noise_kind

    sentences, relevance = load_real_set(SET)
    critic = EmbeddingCritic(Embedder().encode)
    dev = [c for c in sentences if c.split == "dev" and c.source == "model"]
    feats = []
    for c in dev:
        earlier = list(c.previous)
        noise = noise_kind(c.sentence, earlier=earlier)
        feats.append((noise, lexical.copy_coverage(c.sentence, c.passage_text),
                      lexical.overlap(c.sentence, c.passage_text),
                      critic.support_score(c.sentence, c.passage_text)))
    noise_caught = sum(1 for c, f in zip(dev, feats) if not c.meaningful and f[0])
    print(f"dev: {len(dev)} model sentences, {sum(not c.meaningful for c in dev)} noise, "
          f"{noise_caught} of them caught by localrag.answering.judge.noise; false alarms "
          f"{sum(1 for c, f in zip(dev, feats) if c.meaningful and f[0])}")
    best = None
    grid = itertools.product((0.7, 0.8, 0.85, 0.9, 0.95, 1.0), (0.3, 0.4, 0.5, 0.6),
                             (0.5, 1.0), (0.4, 0.5, 0.6, 0.7, 0.8, 0.9, 2.0),
                             (0.6, 0.7, 0.8, 0.9, 1.0))
    for full_longest, none_words, none_keys, partial_covered, partial_words in grid:
        rules = SupportRules(full_longest, none_words, none_keys, partial_covered, partial_words)
        labs = ["none" if f[0] else rules.label(f[1], f[2], f[3]) for f in feats]
        full = [c for c, lab in zip(dev, labs) if lab == "fully"]
        part = [c for c, lab in zip(dev, labs) if lab == "partially"]
        if not full:
            continue
        prec = sum(c.meaningful and c.support == "fully" for c in full) / len(full)
        noise_sup = sum(not c.meaningful for c in full + part)
        part_ok = (sum(c.meaningful and c.support == "partially" for c in part) / len(part)
                   if part else 1.0)
        none_ok = [c for c, lab in zip(dev, labs) if lab == "none"]
        none_prec = (sum(c.support == "none" or not c.meaningful for c in none_ok) / len(none_ok)
                     if none_ok else 1.0)
        if prec < 0.95 or noise_sup or part_ok < 0.55 or none_prec < 0.8:
            continue
        key = (len(full) + 0.5 * len(part), len(none_ok))
        if best is None or key > best[0]:
            best = (key, rules, prec, len(full), part_ok, len(part), none_prec, len(none_ok))
    print("support rules:", best)

    # relevance: logistic regression on dev
    dev_rel = [c for c in relevance if c.split == "dev"]
    by_q: dict[str, list[int]] = {}
    for i, c in enumerate(dev_rel):
        by_q.setdefault(question_of(c.id), []).append(i)
    F = np.zeros((len(dev_rel), 6))
    for idx in by_q.values():
        f = critic.relevance_features(dev_rel[idx[0]].question,
                                      [dev_rel[i].passage_text for i in idx])
        for i, row in zip(idx, f):
            F[i] = row
    y = np.array([c.relevant for c in dev_rel], dtype=float)
    for k in range(F.shape[1]):
        print(f"relevance feature {k}: dev AUC {auc(list(F[:, k]), list(y > 0)):.2f}")
    X = np.hstack([np.ones((len(F), 1)), F])
    w = np.zeros(X.shape[1])
    for _ in range(20000):
        p = 1 / (1 + np.exp(-X @ w))
        w -= 1.0 * (X.T @ (p - y) / len(y) + 0.01 * np.r_[0, w[1:]])
    s = X @ w
    print(f"logistic over all features: bias {w[0]:.2f} weights "
          f"{tuple(round(float(x), 2) for x in w[1:])}; dev AUC {auc(list(s), list(y > 0)):.2f} "
          "(not used: no better than the cosine on test-size samples, see critics.py)")
    return 0


if __name__ == "__main__":
    sys.exit(main())
