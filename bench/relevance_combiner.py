"""Issue 17: does the relevance model gain from the quote scorer beside it? Prints figures,
asserts nothing.

    python bench/relevance_combiner.py

The answer path has two probabilities for every quotable sentence: the quote scorer's
(a logistic model over cosines, term cover, position, ...; localrag/answering/generate/
extract.py) and the relevance model's (indexer/relevance_model.py). Today the model alone
orders the scorer's best RELEVANCE_POOL (128: every candidate, in practice). Here a logistic combination
z = a * logit(model) + b * logit(scorer) + c is fitted on the vim sentences (judged by
annotators, bench/data/relevance/sentences-*-vim.jsonl): vim is a corpus neither the shipped
model (kernel, git, rust) nor the scorer was fitted on. It is then measured on the corpora
left out, postgres, debref and zsh:
- passages: the judged top-5 passages of each natural question (RUBRIC-relevance.md; 200,
  200 and 120, zsh by three annotators: their median), each scored by its
  best sentence, computed with the question's five passages as the answer path sees them;
  then the same for today's fused top 5 of each question, where bench/judged_recall.py
  --write-fused wrote it with its labels (fused-<c>.jsonl);
- units: the quotes of the judged answers (bench/data/answers/answers-<c>*.jsonl, three
  rounds), each scored within the passages its answer quoted (an approximation of the
  answer's five: the scorer's term weights depend on the candidate set).
AUC of "answers" against the rest, for the model alone, the scorer alone and the fit.
"""

from __future__ import annotations

import json
import math
import os
import sys
from pathlib import Path

import numpy as np

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE.parent))
sys.path.insert(0, str(HERE))
os.environ.setdefault("HF_HUB_OFFLINE", "1")

from bench_relevance_model import auc, judged_passages  # noqa: E402

REL = HERE / "data" / "relevance"
ANS = HERE / "data" / "answers"
ROUNDS = ("-scorer-roles", "-relevance-v1", "-model-v2", "-final", "-subjects", "-dt")


def logit(p: np.ndarray) -> np.ndarray:
    p = np.clip(np.asarray(p, dtype=float), 1e-6, 1 - 1e-6)
    return np.log(p / (1 - p))


def fit_logistic(x: np.ndarray, y: np.ndarray, *, l2: float = 1e-3, steps: int = 4000) -> np.ndarray:
    """Weights (last one the bias) of a plain logistic regression, by gradient descent."""
    xb = np.hstack([x, np.ones((len(x), 1))])
    w = np.zeros(xb.shape[1])
    for _ in range(steps):
        p = 1 / (1 + np.exp(-(xb @ w)))
        w -= 0.5 * (xb.T @ (p - y) / len(y) + l2 * np.r_[w[:-1], 0.0])
    return w


def vim_features(rm) -> tuple[np.ndarray, np.ndarray, list[str]]:  # noqa: ANN001
    from indexer.relevance_model import unit_text

    rows = [json.loads(x) for x in (REL / "sentences-tojudge-vim.jsonl").read_text().splitlines() if x.strip()]
    labels = {(d["qid"], d["unit"]): int(d["label"]) for d in
              (json.loads(x) for x in (REL / "sentences-judged-vim.jsonl").read_text().splitlines() if x.strip())}
    xs, ys, qids = [], [], []
    for r in rows:
        y = labels.get((r["qid"], r["unit"]))
        if y is None:
            continue
        qids.append(r["qid"])
        p = float(rm.probabilities(r["question"], [unit_text(r["title"], r.get("subject", ""), r["sentence"])])[0])
        xs.append([logit(p), logit(r["scorer"])])
        ys.append(y == 2)
    return np.array(xs), np.array(ys, dtype=float), qids


FLOORS = (0.1, 0.15, 0.2, 0.25, 0.3, 0.4, 0.5)
RATIOS = (0.0, 0.5, 0.8, 1.0)


def role_rules(prob: np.ndarray, yes: np.ndarray, qids: list[str]) -> list[tuple[float, float, float, int, float]]:
    """Per (floor, ratio): a sentence is shown as the answer when its probability is at least
    `floor` and `ratio` x its question's best. Returns (floor, ratio, share of shown that
    answer, shown, share of questions with an answering sentence shown)."""
    by_q: dict[str, list[int]] = {}
    for i, q in enumerate(qids):
        by_q.setdefault(q, []).append(i)
    out = []
    for f in FLOORS:
        for r in RATIOS:
            shown = hit = answered = 0
            for idx in by_q.values():
                top = max(prob[i] for i in idx)
                pick = [i for i in idx if prob[i] >= f and prob[i] >= r * top]
                shown += len(pick)
                hit += sum(bool(yes[i]) for i in pick)
                answered += any(yes[i] for i in pick)
            out.append((f, r, hit / max(shown, 1), shown, answered / len(by_q)))
    return out


def scored_sentences(question: str, titles: list[str], passages: list[str], rm, emb):  # noqa: ANN001, ANN201
    """(candidates, scorer probabilities, model probabilities, the answer path's combined
    probabilities of the pool it reads: extract.RELEVANCE_POOL, the rest None) as the answer
    path computes them."""
    from localrag.answering.generate import extract as ex

    cands = ex.candidates_of(question, passages)
    if not cands:
        return [], np.zeros(0), np.zeros(0), []
    feats, probs = ex.score_candidates(question, passages, cands, emb.encode)
    texts = [ex.answer_text(passages[c.passage], c.span, titles[c.passage]) for c in cands]
    model = np.array(rm.probabilities(question, texts))
    pool = sorted(range(len(cands)), key=lambda k: (-probs[k], k))[:ex.RELEVANCE_POOL]
    said = ex.answer_probabilities(question, passages, titles, [cands[k] for k in pool],
                                   [feats[k] for k in pool], [probs[k] for k in pool],
                                   [float(model[k]) for k in pool])
    combined: list[float | None] = [None] * len(cands)
    for k, p in zip(pool, said):
        combined[k] = p
    return cands, np.array(probs), model, combined


def passage_figures(name: str, passages: list[dict], w: np.ndarray, rm, emb) -> None:  # noqa: ANN001
    """AUC of each passage's best sentence (model, scorer, fit) against the annotators'
    "answers", the five passages of each question read together as the answer path does."""
    from localrag.answering.generate.extract import PASSAGE_ANSWER_FLOOR, RELEVANCE_POOL

    by_q: dict[str, list[dict]] = {}
    for r in passages:
        by_q.setdefault(r["qid"], []).append(r)
    best = {"model": [], "scorer": [], "fit": []}
    lab = []
    pooled = []   # per passage: its best combined probability among the pool, as answering does
    for rows in by_q.values():
        rows.sort(key=lambda r: r["rank"])
        cands, ps, pm, shipped = scored_sentences(rows[0]["question"], [r["title"] for r in rows],
                                                  [r["text"] for r in rows], rm, emb)
        z = w[0] * logit(pm) + w[1] * logit(ps) if len(cands) else np.zeros(0)
        for i, r in enumerate(rows):
            mine = [k for k, c in enumerate(cands) if c.passage == i]
            pooled.append(max((shipped[k] for k in mine if shipped[k] is not None), default=0.0))
            lab.append(r["label"])
            for key, v in (("model", logit(pm)), ("scorer", logit(ps)), ("fit", z)):
                best[key].append(float(max(v[mine])) if mine else -20.0)
    lab_a = np.array(lab)
    held = np.array(pooled)
    said = held >= PASSAGE_ANSWER_FLOOR
    print(f"  {name}: passages holding a quote of the answer path's pool (the scorer's best "
          f"{RELEVANCE_POOL}) at p >= {PASSAGE_ANSWER_FLOOR}: {int(said.sum())} of {len(held)}; of them "
          f"answer {(lab_a[said] == 2).mean():.2f}, answer or related {(lab_a[said] >= 1).mean():.2f}; "
          f"answering passages found {said[lab_a == 2].mean():.2f}; AUC of the pooled best "
          f"{auc(held[lab_a == 2], held[lab_a < 2]):.3f}; verdicts right (holds / does not hold "
          f"the answer, as the engine would say them, counting a passage it leaves unchecked as 'does not') {((held >= PASSAGE_ANSWER_FLOOR) == (lab_a == 2)).mean():.3f}")
    pf = 1 / (1 + np.exp(-(np.array(best["fit"]) + w[2])))
    for cut in (0.2, 0.3, 0.5):
        said = pf >= cut
        print(f"  passages with a sentence at p >= {cut}: {int(said.sum())}, of them answer "
              f"{(lab_a[said] == 2).mean() if said.any() else float('nan'):.2f}, answer or related "
              f"{(lab_a[said] >= 1).mean() if said.any() else float('nan'):.2f}; answers found "
              f"{said[lab_a == 2].mean():.2f}")
    print(f"\n{name}: {len(lab)} passages ({int((lab_a == 2).sum())} answer), AUC of the best sentence, "
          f"answers vs rest: " + ", ".join(
              f"{k} {auc(np.array(v)[lab_a == 2], np.array(v)[lab_a < 2]):.3f}" for k, v in best.items()))


def main() -> None:
    from indexer.embedder import Embedder
    from indexer.relevance_model import RelevanceModel

    rm = RelevanceModel()
    emb = Embedder()
    x, y, qids = vim_features(rm)
    w = fit_logistic(x, y)
    print(f"fitted on vim: {len(y)} sentences, {int(y.sum())} answer; z = {w[0]:.3f} logit(model) "
          f"+ {w[1]:.3f} logit(scorer) + {w[2]:.3f}")
    print(f"  vim (in sample) AUC: model {auc(x[y == 1, 0], x[y == 0, 0]):.3f}, scorer "
          f"{auc(x[y == 1, 1], x[y == 0, 1]):.3f}, fit {auc((x @ w[:2])[y == 1], (x @ w[:2])[y == 0]):.3f}")
    prob = 1 / (1 + np.exp(-(x @ w[:2] + w[2])))
    rules = role_rules(prob, y, qids)
    best = max(rules, key=lambda t: t[2] * t[4])
    print("  role rules on vim (floor, ratio: share of shown that answer, shown, questions answered):")
    for f, r, share, shown, answered in rules:
        print(f"    {f:.2f} {r:.1f}: {share:.2f} {shown:4d} {answered:.2f}" + ("   <- best share x answered" if (f, r) == best[:2] else ""))
    for name in ("postgres", "debref", "zsh"):
        passage_figures(name, judged_passages(name), w, rm, emb)
        today = REL / f"fused-{name}.jsonl"
        if today.exists():   # today's fused top 5 (bench/judged_recall.py --write-fused)
            rows = [r for r in map(json.loads, today.read_text().splitlines()) if r.get("label") is not None]
            passage_figures(f"{name} (today's index, judged_recall.py)", rows, w, rm, emb)
        # units of the judged answers
        for rnd in ROUNDS:
            a_path, j_path = ANS / f"answers-{name}{rnd}.jsonl", ANS / f"judged-answers-{name}{rnd}.jsonl"
            if not (a_path.exists() and j_path.exists()):
                continue
            judged = {d["qid"]: d for d in map(json.loads, j_path.read_text().splitlines()) if d}
            vals = {"model": [], "scorer": [], "fit": []}
            ys = []
            for a in map(json.loads, a_path.read_text().splitlines()):
                verdict = {u["unit"]: u for u in judged[a["qid"]]["units"]}
                units = [u for u in a["units"] if u["origin"] == "quote" and u.get("passage_text")]
                if not units:
                    continue
                ptexts = list(dict.fromkeys(u["passage_text"] for u in units))
                ptitles = [next(u["passage_title"] for u in units if u["passage_text"] == t) for t in ptexts]
                cands, ps, pm, _ = scored_sentences(a["question"], ptitles, ptexts, rm, emb)
                by_text = {c.span.text.strip(): k for k, c in enumerate(cands)}
                for u in units:
                    k = by_text.get(u["text"].strip())
                    if k is None:
                        continue
                    ys.append(verdict[u["unit"]]["answers"] == "yes")
                    vals["model"].append(float(logit(pm[k])))
                    vals["scorer"].append(float(logit(ps[k])))
                    vals["fit"].append(float(w[0] * logit(pm[k]) + w[1] * logit(ps[k])))
            ya = np.array(ys)
            print(f"  units of answers{rnd}: {len(ys)} matched ({int(ya.sum())} answer): " + ", ".join(
                f"{k} {auc(np.array(v)[ya], np.array(v)[~ya]):.3f}" for k, v in vals.items()))


if __name__ == "__main__":
    main()
