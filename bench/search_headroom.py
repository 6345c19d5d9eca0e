"""Issue 17: the most two more kinds of second stage could gain in judged search recall@5.
Prints figures, asserts nothing.

    python bench/search_headroom.py --corpora zsh,postgres,debref,git,kernel

(a) A third side: every quotable sentence of the index embedded by the relevance model (it
is a bi-encoder, so the vectors can be made once), each chunk ranked by its best sentence;
that side's top M chunks join the fused top 20 the second stage reorders (weight beta), or
are fused with the fused order by reciprocal rank.
(b) The second stage reading the fused top 30 or 40 instead of 20.

Recall as bench/judged_recall.py counts it (a top-5 passage labelled "answers" by the
annotators); passages nobody judged count as not answering, and "at most +N" is the number
of questions not found whose top 5 holds such a passage: the most the variant could gain
if every unjudged passage answered. The sentence vectors are kept under
bench/out/headroom/ (about a minute per 1,000 chunks on 2 cores the first time).
"""

from __future__ import annotations

import argparse
import os
import pickle
import sys
from pathlib import Path

import numpy as np

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE.parent))
sys.path.insert(0, str(HERE))
os.environ.setdefault("HF_HUB_OFFLINE", "1")

K = 5


def sentence_vectors(name: str, rows: dict, model) -> tuple[np.ndarray, np.ndarray]:  # noqa: ANN001
    """(owner chunk id, vector) of every quotable sentence of the index, as the second stage
    reads it (title, subject line, sentence)."""
    from localrag.answering.generate.extract import answer_text, candidate_units

    cache = HERE / "out" / "headroom" / f"sentences-{name}.pkl"
    if cache.exists():
        return pickle.loads(cache.read_bytes())
    texts, owner = [], []
    for cid, r in rows.items():
        for unit in candidate_units(r[3], question=""):
            texts.append(answer_text(r[3], unit, r[2]))
            owner.append(cid)
    vecs = model._text_vectors(texts) if texts else np.zeros((0, 384), np.float32)
    out = (np.array(owner), np.asarray(vecs, dtype=np.float32))
    cache.parent.mkdir(parents=True, exist_ok=True)
    cache.write_bytes(pickle.dumps(out))
    return out


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--corpora", default="zsh,postgres,debref,git,kernel")
    args = ap.parse_args()
    from bench_relevance import index_dir
    from bench_retrieval import LocalIndex
    from judged_recall import labels_of
    from retrieval_data import corpus, questions
    from sentence_rerank import PassageScorer

    from indexer import search
    from indexer.relevance_model import MODEL_DIR, RelevanceModel

    print(f"judged recall@{K} [passages nobody judged in the top {K}s; at most +N: questions not found "
          f"whose top {K} holds one]")
    for name in args.corpora.split(","):
        local = LocalIndex(index_dir(name), "onnx-int8")
        rows = local.idx.store.fetch_chunks([r[0] for r in local.idx.store.conn.execute("SELECT id FROM chunks")])
        model = RelevanceModel(MODEL_DIR)
        model._load()
        owner, vecs = sentence_vectors(name, rows, model)
        scale, shift = float(model.info["scale"]), float(model.info["shift"])
        labels = labels_of(name)
        scorer = PassageScorer(str(MODEL_DIR))
        found: dict[str, int] = {}
        unjudged: dict[str, int] = {}
        headroom: dict[str, int] = {}

        def note(variant: str, qid: str, order: list[int]) -> None:
            got = [labels.get((qid, local.rel(rows[c][1]), rows[c][3])) for c in order[:K] if c in rows]
            hit = any(g == 2 for g in got)
            open_ = sum(g is None for g in got)
            found[variant] = found.get(variant, 0) + hit
            unjudged[variant] = unjudged.get(variant, 0) + open_
            headroom[variant] = headroom.get(variant, 0) + (not hit and open_ > 0)

        qs = questions(corpus(name), "natural")
        for q in qs:
            v = local.idx.embedder.encode([q.question])[0]
            dense, lexical = search.scored_rankings(local.vectors, v, q.question, 50)
            pins = search.lexical_winners(lexical)
            fused = search.fuse(dense, lexical, pinned=pins)
            note("fused", q.id, [c for c, _ in fused])
            for depth in (20, 30, 40):
                for beta in (0.5, 1.0):
                    order, _ = search.rerank_judged(scorer, q.question, fused[:depth], rows, depth=depth,
                                                    weight=beta, keep_first=pins)
                    note(f"second stage, top {depth}, beta {beta:g}" + (" (shipped)" if (depth, beta) == (20, 0.5)
                                                                      else ""), q.id, order)
            qv = model._run(model._tok.encode(q.question))
            logit = scale * (vecs @ qv - shift)
            best: dict[int, float] = {}
            for cid, z in zip(owner.tolist(), logit.tolist()):
                best[cid] = max(best.get(cid, -1e9), z)
            side = sorted(best, key=lambda c: -best[c])
            note("sentence side alone", q.id, side)
            fscore = dict(fused)
            top = max(s for _, s in fused[:20]) or 1.0
            for m in (5, 20):
                for beta in (0.5, 1.0):
                    cand = list(dict.fromkeys([c for c, _ in fused[:20]] + side[:m]))
                    score = {c: fscore.get(c, 0.0) / top + beta / (1 + np.exp(-best.get(c, -50.0))) for c in cand}
                    keep = [c for c in pins if c in score]
                    order = keep + sorted((c for c in score if c not in keep), key=lambda c: -score[c])
                    note(f"fused top 20 + sentence side's top {m}, beta {beta:g}", q.id, order)
            rrf: dict[int, float] = {}
            for ranked in ([c for c, _ in fused[:50]], side[:50]):
                for i, c in enumerate(ranked):
                    rrf[c] = rrf.get(c, 0.0) + 1 / (60 + i)
            note("reciprocal-rank fusion of fused and sentence side", q.id, sorted(rrf, key=lambda c: -rrf[c]))
        n = len(qs)
        print(f"{name} ({n} questions, {len(owner)} sentences of {len(rows)} chunks):")
        for variant in found:
            print(f"  {variant}: {found[variant] / n:.3f} [{unjudged[variant]}; at most +{headroom[variant]}]")
        local.idx.close()


if __name__ == "__main__":
    main()
