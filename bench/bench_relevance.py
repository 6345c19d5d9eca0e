"""Issue 17's search figures, leave-one-corpus-out: prints figures, asserts nothing.

    python bench/bench_retrieval.py --corpora kernel,git,postgres,debref --build-only --kernel-every 8
    python bench/bench_relevance.py                 # every figure, each corpus left out in turn

Corpora: kernel, git, postgres, debref (bench/retrieval_data.py); question sets: natural
(`<corpus>.jsonl`) and exact lookups (`exact-<corpus>.jsonl`). The hit rule is
bench_retrieval's (the key phrase in a top-k passage of the answering file).

For each question the candidates of both sides are collected once (dense top 50 with
cosines, BM25 top 50 with scores) and the relevance model scores the fused top
`--rerank-pool`; every fusion variant is then computed from those lists. Constants
(RRF weights, the lexical-winner gap, score-fusion alpha, rerank depth and blend) are
chosen on the three other corpora (mean recall@5 over both question sets) and reported
on the corpus left out. The relevance model itself was trained on kernel and git only
(bench/data/relevance/DATA_CARD.md): for postgres and debref it is unseen in every fold.
"""

from __future__ import annotations

import argparse
import itertools
import json
import os
import statistics
import sys
import time
from pathlib import Path

import numpy as np

os.environ.setdefault("HF_HUB_OFFLINE", "1")
HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE.parent))
sys.path.insert(0, str(HERE))
sys.path.insert(0, str(HERE.parent / "scripts"))

from retrieval_data import CORPORA, OUT, TRAINING_ONLY, corpus, is_markup_extracted, norm, questions  # noqa: E402

DEPTH = 50
# question sets by corpus: the four measured corpora have natural and exact-lookup sets;
# rust and vim (training corpora of the relevance model) their 150 training questions,
# used here as two more folds for choosing constants and fitting the ranker
SETS = ("natural", "exact", "train")


TRAINING_CORPORA = ("kernel", "git", "rust", "vim")   # those with training questions


def sets_of(name: str) -> tuple[str, ...]:
    """kernel and git: natural, exact and their training questions; postgres, debref:
    natural and exact; rust, vim: training questions only."""
    return (() if name in TRAINING_ONLY else ("natural", "exact")) + (
        ("train",) if name in TRAINING_CORPORA else ())


def set_questions(c, which: str) -> list:  # noqa: ANN001
    """The questions of one set; "train": the training questions (train-, heldout- and
    train2-<corpus>.jsonl, as scripts/fit_ranker.py reads them), never an evaluation set."""
    if which != "train":
        return questions(c, which)
    from make_relevance_pairs import training_questions

    out = training_questions(c.name)
    for q in out:   # the hit rule needs in_source, as retrieval_data.questions sets it
        raw = (c.root / q.file).read_text(encoding="utf-8", errors="replace")
        q.in_source = not is_markup_extracted(q.file) and norm(q.key_phrase) in norm(raw)
    return out


INDEX_TAG = "data"        # --index-tag: which of bench_retrieval.py's builds (its --tag)
INDEX_BACKEND = "onnx-int8"


def index_dir(name: str) -> Path:
    cands = sorted(p for p in (OUT / name).glob(f"{INDEX_TAG}*") if (p / "build.json").exists())
    if not cands:
        raise SystemExit(f"no index for {name}: bench/bench_retrieval.py --corpora {name} --build-only")
    return cands[0]


def auc(pos: list[float], neg: list[float]) -> float:
    """critic_evaluation.auc (Mann-Whitney, ties one half) of positive vs negative scores."""
    from critic_evaluation import auc as mann_whitney

    got = mann_whitney(list(pos) + list(neg), [True] * len(pos) + [False] * len(neg))
    return float("nan") if got is None else got


def judged_auc(name: str, model_dir: str | None) -> dict:
    """The relevance model's AUC on the annotators' labels of a corpus left out
    (bench/data/relevance/judged-<corpus>.jsonl): answers (2) vs the rest, and answers or
    related (>= 1) vs not relevant; the cosine of MiniLM (the critic it replaces) beside."""
    from indexer.embedder import Embedder
    from cross_encoder import Reranker

    base = HERE / "data" / "relevance"
    cand = base / f"tojudge-{name}.jsonl"
    jud = base / f"judged-{name}.jsonl"
    if not (cand.exists() and jud.exists()):
        return {}
    rows = [json.loads(x) for x in cand.read_text().splitlines() if x.strip()]
    labels = {(d["qid"], d["chunk_key"]): int(d["label"]) for d in
              (json.loads(x) for x in jud.read_text().splitlines() if x.strip())}
    rr = Reranker(model_dir) if model_dir else Reranker()
    emb = Embedder()
    out = {"n": 0, "answers": 0}
    scores, cosines, ys = [], [], []
    for r in rows:
        y = labels.get((r["qid"], r["chunk_key"]))
        if y is None:
            continue
        scores.append(float(rr.score(r["question"], [(r["title"], r["text"])])[0]))
        v = emb.encode([r["question"], r["title"] + "\n" + r["text"]])
        cosines.append(float(v[0] @ v[1]))
        ys.append(y)
    ys_a = np.array(ys)
    for key, vals in (("model", scores), ("cosine", cosines)):
        v = np.array(vals)
        out[f"{key}_auc_answers"] = auc(list(v[ys_a == 2]), list(v[ys_a < 2]))
        out[f"{key}_auc_related"] = auc(list(v[ys_a >= 1]), list(v[ys_a == 0]))
    probs = 1 / (1 + np.exp(-np.array(scores)))
    said = probs >= 0.5
    out["n"], out["answers"] = len(ys), int((ys_a == 2).sum())
    out["precision_at_0.5"] = float((ys_a[said] >= 1).mean()) if said.any() else float("nan")
    out["answer_precision_at_0.5"] = float((ys_a[said] == 2).mean()) if said.any() else float("nan")
    out["recall_at_0.5"] = float(said[ys_a == 2].mean()) if (ys_a == 2).any() else float("nan")
    return out


def collect(name: str, pool: int, rerank: bool, model_dir: str | None = None,
            sets: tuple[str, ...] | None = None) -> list[dict]:
    """Per question: both sides' scored candidates, hit ids, relevance-model scores, and the
    learned ranker's features of the first stage's top RERANK_DEPTH."""
    from fit_ranker import candidate_features
    from bench_retrieval import LocalIndex

    from indexer import search
    from cross_encoder import Reranker

    c = corpus(name)
    local = LocalIndex(index_dir(name), INDEX_BACKEND)
    rr = (Reranker(model_dir) if model_dir else Reranker()) if rerank else None
    out = []
    for which in sets or sets_of(name):
        for q in set_questions(c, which):
            v = local.idx.embedder.encode([q.question])[0]
            t0 = time.perf_counter()
            dense, lexical = search.scored_rankings(local.vectors, v, q.question, DEPTH)
            t_search = time.perf_counter() - t0
            plain = [cid for cid, _ in search.fuse([d for d, _ in dense], [x for x, _ in lexical])]
            q_ = {"dense": dense, "lexical": lexical}
            cands = list(dict.fromkeys(plain[:pool] + score_fusion(q_, 0.4)[:pool]
                                       + [x for x, _ in lexical[:5]] + [d for d, _ in dense[:5]]))
            allids = list(dict.fromkeys([d for d, _ in dense] + [x for x, _ in lexical]))
            rows = local.idx.store.fetch_chunks(allids)
            key = norm(q.key_phrase)
            hits = []
            for cid in allids:
                r = rows.get(cid)
                if r is None:
                    continue
                rel = local.rel(r[1])
                if rel == q.file and key in norm(r[3]) and (
                        not q.in_source or key in norm(local.lines.span(r[1], r[4], r[5]))):
                    hits.append(cid)
            ce, t_rr = {}, 0.0
            if rr is not None:
                t0 = time.perf_counter()
                scores = rr.score(q.question, [(rows[cid][2], rows[cid][3]) for cid in cands if cid in rows])
                t_rr = time.perf_counter() - t0
                ce = {cid: float(s) for cid, s in zip([c_ for c_ in cands if c_ in rows], scores)}
            t0 = time.perf_counter()
            fc, ff, _ = candidate_features(local, q.question, search.RERANK_DEPTH)
            t_feat = time.perf_counter() - t0
            out.append(dict(id=q.id, set=which, split=q.split, dense=dense, lexical=lexical, hits=hits,
                            ce=ce, t_search=t_search, t_rerank=t_rr, n_rerank=len(ce),
                            feat_ids=[c.chunk_id for c in fc], feats=ff.round(5).tolist(),
                            t_features=t_feat))
    local.idx.close()
    return out


# --- fusion variants, from the collected lists -----------------------------------------

def rrf_rank(q: dict, wd: float, wl: float, k: int = 60) -> list[int]:
    s: dict[int, float] = {}
    for w, lst in ((wd, q["dense"]), (wl, q["lexical"])):
        for r, (cid, _) in enumerate(lst, 1):
            s[cid] = s.get(cid, 0.0) + w / (k + r)
    return [cid for cid, _ in sorted(s.items(), key=lambda kv: (-kv[1], kv[0]))]


def pinned(q: dict, dominance: float) -> list[int]:
    from indexer.search import lexical_winners

    return lexical_winners([tuple(x) for x in q["lexical"]], dominance=dominance) if dominance else []


def with_pins(order: list[int], pins: list[int]) -> list[int]:
    return pins + [c for c in order if c not in set(pins)]


def score_fusion(q: dict, alpha: float) -> list[int]:
    """alpha * cosine (min-max over the dense candidates) + (1 - alpha) * BM25 / max BM25."""
    f = fused_scores(q, alpha)
    return [cid for cid, _ in sorted(f.items(), key=lambda kv: (-kv[1], kv[0]))]


def head_first(order: list[int], pins: list[int], base: list[int]) -> list[int]:
    """Pinned winners, then the reordered head, then the rest of the first stage's order."""
    head = pins + [c for c in order if c not in set(pins)]
    return head + [c for c in base if c not in set(head)]


def reranked(q: dict, base: list[int], depth: int, blend: float) -> list[int]:
    """The first `depth` of `base` reordered by relevance-model logit + blend * RRF-rank
    prior (1/(1+rank)); the rest keep their order."""
    ce = {int(k): v for k, v in q["ce"].items()}
    head = [c for c in base[:depth] if c in ce]
    rest = [c for c in base if c not in set(head)]
    pos = {c: i for i, c in enumerate(base)}
    head.sort(key=lambda c: -(ce[c] + blend * 4.0 / (1 + pos[c])))
    return head + rest


RANKER = {}


def learned(q: dict, p: dict) -> list[int]:
    """The first stage (score fusion, pins) with its top candidates reordered by the
    learned ranker (the shipped weights, or one fitted without the corpus left out)."""
    from indexer.learned_rank import LearnedRanker

    w = RANKER.get(p.get("ranker", "shipped"))
    if w is None:
        w = RANKER["shipped"] = LearnedRanker()
    base = with_pins(score_fusion(q, p["alpha"]), pinned(q, p["dom"]))
    ids = q.get("feat_ids") or []
    if not ids:
        return base
    z = w.logits(np.array(q["feats"], dtype=np.float32))
    pins = pinned(q, p["dom"])
    order = [c for _, c in sorted(zip(-z, ids), key=lambda t: t[0])]
    return head_first(order, pins, base)


def fused_scores(q: dict, alpha: float) -> dict[int, float]:
    """The fused score by id (score_fusion orders by it)."""
    d = {cid: s for cid, s in q["dense"]}
    lx = {cid: s for cid, s in q["lexical"]}
    dv = list(d.values()) or [0.0]
    lo, hi = min(dv), max(dv)
    lmax = max(lx.values()) if lx else 1.0
    return {cid: alpha * ((d.get(cid, lo) - lo) / (hi - lo or 1)) + (1 - alpha) * (lx.get(cid, 0.0) / (lmax or 1))
            for cid in set(d) | set(lx)}


def fields(q: dict, p: dict) -> list[int]:
    """Score fusion with two cheap signals added over its top RERANK_DEPTH: the share of
    the question's terms (by idf) the passage's title holds (BM25's title as a field) and
    the share of distinct question terms in its best 80-word window (proximity)."""
    from indexer.learned_rank import FEATURES

    base = with_pins(score_fusion(q, p["alpha"]), pinned(q, p["dom"]))
    ids = q.get("feat_ids") or []
    if not ids:
        return base
    f = np.array(q["feats"], dtype=np.float32)
    ti, wi = FEATURES.index("title_cover"), FEATURES.index("window_terms")
    fs = fused_scores(q, p["alpha"])
    score = {c: fs.get(c, 0.0) + p["beta"] * f[i, ti] + p["gamma"] * f[i, wi] for i, c in enumerate(ids)}
    pins = pinned(q, p["dom"])
    order = sorted(ids, key=lambda c: -score[c])
    return head_first(order, pins, base)


# variants of the ranker fitted leave-one-corpus-out: (features, question sets fitted on)
SUBSETS = {
    "all": (None, SETS),          # every feature, every question set of the other corpora
    "cheap": (("cos", "cos_gap", "bm25", "dense_rr", "lex_rr", "fused_rr", "title_cover",
               "text_cover", "window_terms"), SETS),   # no window embedding: no encoder call
    "train": (None, ("train",)),  # only the training questions of the other corpora: the
                                  # shipped ranker (scripts/fit_ranker.py) in every fold
}
FITTED: dict[tuple[str, str], tuple[np.ndarray, np.ndarray, np.ndarray, list[int]]] = {}


def subset_columns(subset: str) -> list[int]:
    from indexer.learned_rank import FEATURES

    names = SUBSETS[subset][0] or FEATURES
    return [FEATURES.index(n) for n in names]


def fit_without(data: dict[str, list[dict]], held: str, subset: str, *, l2: float = 1e-2) -> None:
    """The listwise ranker (scripts/fit_ranker.fit) fitted on every question of the other
    corpora whose answer is among the collected candidates."""
    from fit_ranker import fit

    cols = subset_columns(subset)
    groups = []
    for name, qs in data.items():
        if name == held:
            continue
        for q in qs:
            if q["set"] not in SUBSETS[subset][1]:
                continue
            ids = q.get("feat_ids") or []
            hits = set(q["hits"])
            y = np.array([c in hits for c in ids], dtype=float)
            if 0 < y.sum() < len(y):
                groups.append((np.array(q["feats"], dtype=float)[:, cols], y))
    mean, std, w = fit(groups, l2=l2)
    FITTED[(held, subset)] = (mean, std, w, cols)


def learned_loo(q: dict, p: dict) -> list[int]:
    """The first stage's top candidates reordered by a ranker fitted without the corpus
    left out (p["held"]) on the features p["subset"]."""
    base = with_pins(score_fusion(q, p["alpha"]), pinned(q, p["dom"]))
    ids = q.get("feat_ids") or []
    key = (p.get("held", ""), p.get("subset", "all"))
    if not ids or key not in FITTED:
        return base
    mean, std, w, cols = FITTED[key]
    z = ((np.array(q["feats"], dtype=float)[:, cols] - mean) / std) @ w
    pins = pinned(q, p["dom"])
    order = [c for _, c in sorted(zip(-z, ids), key=lambda t: t[0])]
    return head_first(order, pins, base)


def recall(qs: list[dict], orders: list[list[int]], k: int = 5) -> float:
    if not qs:
        return float("nan")
    return sum(1 for q, o in zip(qs, orders) if set(o[:k]) & set(q["hits"])) / len(qs)


def _search():
    from indexer import search

    return search


SYSTEMS = {
    "dense": lambda q, p: [c for c, _ in q["dense"]],
    "lexical": lambda q, p: [c for c, _ in q["lexical"]],
    "rrf": lambda q, p: rrf_rank(q, p["wd"], p["wl"]),
    "rrf+pin": lambda q, p: with_pins(rrf_rank(q, p["wd"], p["wl"]), pinned(q, p["dom"])),
    "score fusion": lambda q, p: score_fusion(q, p["alpha"]),
    "score fusion+pin": lambda q, p: with_pins(score_fusion(q, p["alpha"]), pinned(q, p["dom"])),
    "score 0.4+pin 2": lambda q, p: with_pins(score_fusion(q, 0.4), pinned(q, 2.0)),  # the default before
    "shipped": lambda q, p: with_pins(score_fusion(q, _search().ALPHA), pinned(q, _search().DOMINANCE)),
    "rrf+pin+rerank": lambda q, p: with_pins(reranked(q, rrf_rank(q, p["wd"], p["wl"]), p["depth"], p["blend"]),
                                             pinned(q, p["dom"])),
    "score+pin+rerank": lambda q, p: with_pins(reranked(q, score_fusion(q, p["alpha"]), p["depth"], p["blend"]),
                                               pinned(q, p["dom"])),
    "score+pin+learned": learned,
    "score+pin+fields": fields,
    "learned-loo": lambda q, p: learned_loo(q, p | {"subset": "all"}),
    "learned-loo cheap": lambda q, p: learned_loo(q, p | {"subset": "cheap"}),
    "learned-loo train": lambda q, p: learned_loo(q, p | {"subset": "train"}),
}
GRID = {
    "rrf": {"wd": [0.5, 0.75, 1.0], "wl": [1.0]},
    "rrf+pin": {"wd": [0.5, 0.75, 1.0], "wl": [1.0], "dom": [3.0, 2.0, 1.5, 1.25]},
    "score fusion": {"alpha": [0.3, 0.4, 0.5, 0.6, 0.7]},
    "score fusion+pin": {"alpha": [0.3, 0.4, 0.5, 0.6, 0.7], "dom": [3.0, 2.0, 1.5, 1.25]},
    "score+pin+fields": {"alpha": [0.3, 0.4, 0.5], "beta": [0.0, 0.05, 0.1, 0.2, 0.3],
                         "gamma": [0.0, 0.05, 0.1, 0.2, 0.3]},
    "rrf+pin+rerank": {"wd": [0.75, 1.0], "wl": [1.0], "dom": [2.0], "depth": [10, 20, 30],
                       "blend": [0.0, 0.5, 1.0, 2.0]},
    "score+pin+rerank": {"alpha": [0.3, 0.4, 0.5], "dom": [2.0], "depth": [10, 20, 30],
                         "blend": [0.0, 0.5, 1.0, 2.0]},
}
DEFAULTS = {"wd": 1.0, "wl": 1.0, "dom": 1.5, "alpha": 0.5, "depth": 20, "blend": 1.0, "beta": 0.0,
            "gamma": 0.0}


def objective(data: dict[str, list[dict]], names: list[str], system: str, p: dict) -> float:
    vals = []
    for n in names:
        for which in SETS:
            qs = [q for q in data[n] if q["set"] == which]
            if qs:
                vals.append(recall(qs, [SYSTEMS[system](q, p) for q in qs]))
    return float(np.mean(vals)) if vals else 0.0


def choose(data: dict[str, list[dict]], names: list[str], system: str) -> dict:
    """The grid point with the best objective; ties go to the first in grid order (the
    winner gap is listed largest first: of equal recall, the fewest pinned heads)."""
    grid = GRID.get(system, {})
    best, best_p = -1.0, dict(DEFAULTS)
    keys = list(grid)
    for combo in itertools.product(*[grid[k] for k in keys]):
        p = dict(DEFAULTS) | dict(zip(keys, combo))
        v = objective(data, names, system, p)
        if v > best + 1e-9:
            best, best_p = v, p
    return best_p


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--corpora", default=",".join(CORPORA + TRAINING_ONLY))
    ap.add_argument("--rerank-pool", type=int, default=30)
    ap.add_argument("--no-rerank", action="store_true", help="no relevance model at all")
    ap.add_argument("--cross-encoder", action="store_true",
                    help="also score the cross-encoder (indexer/rerank.py, --model-dir)")
    ap.add_argument("--reuse", action="store_true", help="reuse the collected lists")
    ap.add_argument("--model-dir", default="", help="a relevance model folder (default: the shipped one)")
    ap.add_argument("--cache", default="relevance-lists.json")
    ap.add_argument("--index-tag", default="data",
                    help="the indexes bench_retrieval.py built with --tag T (e.g. bf16)")
    ap.add_argument("--backend", default="onnx-int8", help="the embedding engine they were built with")
    args = ap.parse_args()
    global INDEX_TAG, INDEX_BACKEND
    INDEX_TAG, INDEX_BACKEND = args.index_tag, args.backend
    names = args.corpora.split(",")
    cache = OUT / args.cache
    from indexer import search as first_stage

    # the learned ranker's features are of the product's first stage (its top 20): a cache
    # collected under other search constants is collected again
    stage = {"alpha": first_stage.ALPHA, "dominance": first_stage.DOMINANCE}
    saved = json.loads(cache.read_text()) if args.reuse and cache.exists() else {}
    if saved.pop("_first_stage", None) != stage:
        saved = {}
    data: dict[str, list[dict]] = saved
    for n in names:
        have = {q["set"] for q in data.get(n, [])}
        todo = tuple(w for w in sets_of(n) if w not in have)
        if todo:
            print(f"collecting {n} ({', '.join(todo)}) ...", flush=True)
            data[n] = data.get(n, []) + collect(n, args.rerank_pool, args.cross_encoder,
                                                args.model_dir or None, sets=todo)
    cache.write_text(json.dumps(data | {"_first_stage": stage}))
    systems = [s for s in SYSTEMS if (not args.no_rerank or "rerank" not in s)
               and (args.cross_encoder or "+rerank" not in s)]
    print(f"\nmachine: {os.cpu_count()} CPUs; load average {os.getloadavg()[0]:.1f}")
    print("recall@5 on the corpus left out (constants chosen on the other corpora)")
    header = f"{'left out':<10}{'set':<9}{'n':>4}" + "".join(f"{s:>18}" for s in systems)
    print(header)
    chosen_all = {}
    for held in names:
        others = [n for n in names if n != held]
        for subset in SUBSETS:
            fit_without(data, held, subset)
        chosen = {s: choose(data, others, s) | {"held": held} for s in systems}
        chosen_all[held] = chosen
        for which in SETS:
            qs = [q for q in data[held] if q["set"] == which]
            if not qs:
                continue
            row = f"{held:<10}{which:<9}{len(qs):>4}"
            for s in systems:
                row += f"{recall(qs, [SYSTEMS[s](q, chosen[s]) for q in qs]):>18.3f}"
            print(row)
    print("\nrecall@20 (what a reranker can reach) of the same systems (left out)")
    for held in names:
        for which in SETS:
            qs = [q for q in data[held] if q["set"] == which]
            if qs:
                print(f"{held:<10}{which:<9}{len(qs):>4}" + "".join(
                    f"{recall(qs, [SYSTEMS[s](q, chosen_all[held][s]) for q in qs], 20):>18.3f}"
                    for s in systems))
    print("\nrecall@10 / MRR@10 of the same systems (left out)")
    for held in names:
        for which in SETS:
            qs = [q for q in data[held] if q["set"] == which]
            if not qs:
                continue
            row = f"{held:<10}{which:<9}{len(qs):>4}"
            for s in systems:
                orders = [SYSTEMS[s](q, chosen_all[held][s]) for q in qs]
                r10 = recall(qs, orders, 10)
                mrr = np.mean([next((1 / (i + 1) for i, c in enumerate(o[:10]) if c in set(q["hits"])), 0.0)
                               for q, o in zip(qs, orders)])
                row += f"{f'{r10:.2f}/{mrr:.2f}':>18}"
            print(row)
    print("\nconstants chosen per fold:")
    for held, chosen in chosen_all.items():
        print(f"  without {held}: " + "; ".join(
            f"{s}: " + ",".join(f"{k}={chosen[s][k]}" for k in GRID.get(s, {})) for s in systems if GRID.get(s)))
    # the gap that marks a lexical winner: its spread on natural questions
    ratios = []
    for n in names:
        for q in data[n]:
            if q["set"] == "natural" and len(q["lexical"]) > 1 and q["lexical"][1][1] > 0:
                ratios.append(q["lexical"][0][1] / q["lexical"][1][1])
    if ratios:
        r = np.array(ratios)
        print(f"\nBM25 top-1/top-2 score ratio on natural questions (kernel, git, postgres, debref): "
              f"median {np.median(r):.2f}, p90 {np.percentile(r, 90):.2f}, p99 {np.percentile(r, 99):.2f}")
    for which in SETS:
        qs = [q for n in names for q in data[n] if q["set"] == which]
        if qs:
            print(f"  {which} questions with a lexical winner pinned: " + ", ".join(
                f"gap {g}: {sum(bool(pinned(q, g)) for q in qs)}/{len(qs)}" for g in (1.25, 1.5, 2.0, 3.0)))
    if args.cross_encoder:
        print("\ncross-encoder vs annotators' labels (corpora it never saw):")
        for n in names:
            f = judged_auc(n, args.model_dir or None)
            if f:
                print(f"  {n}: {f['n']} passages ({f['answers']} answer): AUC answers-vs-rest "
                      f"{f['model_auc_answers']:.3f} (MiniLM cosine {f['cosine_auc_answers']:.3f}), "
                      f"relevant-or-related vs not {f['model_auc_related']:.3f} "
                      f"(cosine {f['cosine_auc_related']:.3f}); at p >= 0.5: precision "
                      f"{f['precision_at_0.5']:.2f} (answers {f['answer_precision_at_0.5']:.2f}), "
                      f"recall of answers {f['recall_at_0.5']:.2f}")
    t_s = [q["t_search"] * 1000 for n in names for q in data[n]]
    t_r = [q["t_rerank"] * 1000 for n in names for q in data[n] if q["n_rerank"]]
    if t_s:
        print(f"hybrid search (both sides) p50 {statistics.median(t_s):.1f} ms")
    if t_r:
        npairs = statistics.median([q["n_rerank"] for n in names for q in data[n] if q["n_rerank"]])
        print(f"reranking {npairs:.0f} candidates per query: p50 {statistics.median(t_r):.0f} ms, "
              f"p90 {np.percentile(t_r, 90):.0f} ms")


if __name__ == "__main__":
    main()
