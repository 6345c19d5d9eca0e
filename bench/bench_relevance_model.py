"""Issue 17: localrag's relevance model against annotators' labels on the corpora it never
saw (postgres, debref; it is trained on kernel and git only). Prints figures, asserts nothing.

    python bench/bench_relevance_model.py [--model-dir DIR]

1. Units: every quote of the answers judged before the model was used
   (bench/data/answers/answers-<corpus>-scorer-roles.jsonl with their judged-answers-*, RUBRIC-answers.md): AUC of "answers = yes" against the
   rest, for the model, MiniLM's cosine and the quote scorer's stored score order.
2. Passages: the fused top 5 of each natural question (bench/data/relevance/judged-*.jsonl,
   RUBRIC-relevance.md): AUC of "answers" (2) vs the rest and of ">= related" vs not, for the
   model on the passage's best-matching window, the model's best sentence of the passage,
   and MiniLM's cosine.
3. Scoring cost: ms per pair (sentences as quoted; 64-word windows).
"""

from __future__ import annotations

import argparse
import json
import os
import sys
import time
from pathlib import Path

import numpy as np

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE.parent))
sys.path.insert(0, str(HERE))
os.environ.setdefault("HF_HUB_OFFLINE", "1")

CORPORA = ("postgres", "debref")


def auc(pos, neg) -> float:  # noqa: ANN001
    from critic_evaluation import auc as mann_whitney

    got = mann_whitney(list(pos) + list(neg), [True] * len(pos) + [False] * len(neg))
    return float("nan") if got is None else got


def judged_units(name: str) -> list[dict]:
    base = HERE / "data" / "answers"
    answers = [json.loads(x) for x in (base / f"answers-{name}-scorer-roles.jsonl").read_text().splitlines() if x.strip()]
    judged = {d["qid"]: d for d in (json.loads(x) for x in
                                    (base / f"judged-answers-{name}-scorer-roles.jsonl").read_text().splitlines() if x.strip())}
    out = []
    for a in answers:
        verdict = {u["unit"]: u for u in judged[a["qid"]]["units"]}
        for u in a["units"]:
            if u["origin"] != "quote" or not u.get("file"):
                continue
            v = verdict[u["unit"]]
            out.append({"qid": a["qid"], "question": a["question"], "title": u["passage_title"],
                        "text": u["text"], "yes": v["answers"] == "yes",
                        "full": v["supported"] == "full", "shown": u["shown_as_answer"]})
    return out


def judged_passages(name: str) -> list[dict]:
    """The judged passages of a corpus, each with its label: the annotator's, or with three
    annotators (judged2-, judged3-<corpus>.jsonl) their median, the label two of three gave
    or exceeded."""
    base = HERE / "data" / "relevance"
    rows = [json.loads(x) for x in (base / f"tojudge-{name}.jsonl").read_text().splitlines() if x.strip()]
    judges = [{(d["qid"], d["chunk_key"]): int(d["label"]) for d in
               (json.loads(x) for x in path.read_text().splitlines() if x.strip())}
              for path in (base / f"judged{k}-{name}.jsonl" for k in ("", "2", "3")) if path.exists()]
    if len(judges) not in (1, 3):
        raise SystemExit(f"{name}: {len(judges)} annotators' files under {base} (judged-, judged2-, "
                         f"judged3-{name}.jsonl): one or three are read")
    labels = judges[0] if len(judges) == 1 else {
        key: sorted(j[key] for j in judges)[1] for key in judges[0] if all(key in j for j in judges)}
    return [{**r, "label": labels[(r["qid"], r["chunk_key"])]} for r in rows
            if (r["qid"], r["chunk_key"]) in labels]


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--model-dir", default="")
    ap.add_argument("--search", default="", help="also rerank search on these corpora "
                    "(postgres,debref: the indexes of bench_retrieval.py)")
    args = ap.parse_args()
    from indexer.embedder import Embedder
    from indexer.passage_window import focus_window
    from indexer.relevance_model import RelevanceModel, unit_text
    from localrag.answering.generate import extract as ex

    rm = RelevanceModel(args.model_dir or None)
    emb = Embedder()
    print(f"model: {rm.model_dir} ({json.loads((rm.model_dir / 'relevance.json').read_text()).get('version')})")
    n_pairs, seconds = 0, 0.0
    for name in CORPORA:
        units = judged_units(name)
        t0 = time.perf_counter()
        prob = np.concatenate([rm.probabilities(u["question"], [unit_text(u["title"], "", u["text"])])
                               for u in units])
        seconds += time.perf_counter() - t0
        n_pairs += len(units)
        cos = np.array([float(np.dot(*emb.encode([u["question"], u["title"] + "\n" + u["text"]])))
                        for u in units])
        y = np.array([u["yes"] for u in units])
        print(f"\n{name}: {len(units)} quoted units, {int(y.sum())} answer "
              f"(annotators, RUBRIC-answers.md)")
        print(f"  units AUC (answers=yes vs rest): model {auc(prob[y], prob[~y]):.3f}  "
              f"cosine {auc(cos[y], cos[~y]):.3f}")
        for u, p in zip(units, prob):
            u["p"] = float(p)
        passages = judged_passages(name)
        win, best_sent, pcos = [], [], []
        t0 = time.perf_counter()
        for r in passages:
            win.append(float(rm.probabilities(r["question"], [unit_text(r["title"], "", focus_window(
                r["question"], r["text"]))])[0]))
        seconds_win = time.perf_counter() - t0
        for r in passages:
            spans = ex.candidate_units(r["text"], question=r["question"]) or ex.sentence_spans(r["text"])
            texts = [unit_text(r["title"], (ex.subject_of(r["text"], s).text
                                            if ex.subject_of(r["text"], s) else ""), s.text) for s in spans]
            best_sent.append(float(rm.probabilities(r["question"], texts).max()) if texts else 0.0)
            v = emb.encode([r["question"], r["title"] + "\n" + r["text"]])
            pcos.append(float(v[0] @ v[1]))
        lab = np.array([r["label"] for r in passages])
        print(f"  passages: {len(passages)} ({int((lab == 2).sum())} answer, {int((lab == 1).sum())} related)")
        for key, vals in (("model, window", win), ("model, best sentence", best_sent), ("cosine", pcos)):
            v = np.array(vals)
            print(f"    {key:22s} AUC answers {auc(v[lab == 2], v[lab < 2]):.3f}   "
                  f">= related {auc(v[lab >= 1], v[lab == 0]):.3f}")
        print(f"  window scoring: {1000 * seconds_win / max(len(passages), 1):.1f} ms a passage")
        roles(name, units)
    print(f"\nsentence scoring: {1000 * seconds / max(n_pairs, 1):.1f} ms a unit (one at a time)")
    if args.search:
        for name in args.search.split(","):
            search_rerank(name, rm)


def search_rerank(name: str, rm) -> None:  # noqa: ANN001
    """Recall@5 of the product's search (Index.search, top 20) as it is, reordered by the
    model (its probability on each passage's best-matching window), and by the reciprocal
    rank fusion of both orders (no constant to choose)."""
    from bench_relevance import index_dir
    from bench_retrieval import LocalIndex
    from retrieval_data import corpus, norm, questions

    from indexer.passage_window import focus_window
    from indexer.relevance_model import unit_text

    local = LocalIndex(index_dir(name), "onnx-int8")
    print(f"\nsearch, {name} (index {index_dir(name).name}), recall@5 / @10 of the top 20:")
    for which in ("natural", "exact"):
        qs = questions(corpus(name), which)
        counts = {"search": [0, 0], "model": [0, 0], "rrf": [0, 0]}
        t_model = 0.0
        for q in qs:
            ps = local.idx.search(q.question, k=20)
            key = norm(q.key_phrase)
            hit = [local.rel(p.path) == q.file and key in norm(p.text) and (
                not q.in_source or key in norm(local.lines.span(p.path, p.start_line, p.end_line)))
                for p in ps]
            t0 = time.perf_counter()
            prob = rm.probabilities(q.question, [unit_text(p.title, "", focus_window(q.question, p.text))
                                                 for p in ps]) if ps else np.zeros(0)
            t_model += time.perf_counter() - t0
            by_model = sorted(range(len(ps)), key=lambda i: (-prob[i], i))
            mrank = {i: r for r, i in enumerate(by_model)}
            rrf = sorted(range(len(ps)), key=lambda i: (-(1 / (60 + i) + 1 / (60 + mrank[i])), i))
            for key_, order in (("search", list(range(len(ps)))), ("model", by_model), ("rrf", rrf)):
                counts[key_][0] += any(hit[i] for i in order[:5])
                counts[key_][1] += any(hit[i] for i in order[:10])
        n = max(len(qs), 1)
        print(f"  {which:8s} ({len(qs)} q): " + "   ".join(
            f"{k} {v[0] / n:.3f} / {v[1] / n:.3f}" for k, v in counts.items())
            + f"   model {1000 * t_model / n:.0f} ms a query (20 windows)")
    local.idx.close()


def roles(name: str, units: list[dict]) -> None:
    """The share of ✔ answer units that answer if the model chose the roles among the units
    the answers quoted (best unit answers when its probability clears `floor`; others within
    `ratio` of it)."""
    by_q: dict[str, list[dict]] = {}
    for u in units:
        by_q.setdefault(u["qid"], []).append(u)
    print("  roles chosen by the model among the quoted units (floor, ratio: shown, answering, "
          "questions answered):")
    for floor in (0.0, 0.3, 0.5, 0.7):
        for ratio in (0.5, 0.8, 1.0):
            shown = yes = answered = 0
            for us in by_q.values():
                top = max(u["p"] for u in us)
                pick = [u for u in us if top >= floor and u["p"] >= ratio * top]
                shown += len(pick)
                yes += sum(u["yes"] for u in pick)
                answered += any(u["yes"] and u["full"] for u in pick)
            print(f"    {floor:.1f} {ratio:.1f}: {shown:3d} shown, {yes / max(shown, 1):.2f} answer, "
                  f"{answered}/{len(by_q)} answered")
    old = [u for u in units if u["shown"]]
    print(f"    as recorded (quote scorer + near ties): {len(old)} shown, "
          f"{sum(u['yes'] for u in old) / max(len(old), 1):.2f} answer")


if __name__ == "__main__":
    main()
