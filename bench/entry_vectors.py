"""Issue 17 experiment: would the dense side find a passage by its best entry? Prints
figures, asserts nothing.

    python bench/entry_vectors.py --corpora zsh,apache,cmake [--choose-on debref,git,postgres,flask]

A chunk holds several entries (paragraphs; a short line ending in ":" joined to the block
after it, as a definition list's term and its text): zsh's Options.html chunks hold five to
eight options, and a question about one of them meets a vector of all of them. Here every
entry of every chunk of the bench index is embedded apart ("title\\nentry", the chunk's
own title, as the chunk is embedded; cached under bench/out/entries/), and the dense side
scores a chunk by a mix of its own cosine and its best entry's: `dense = (1 - w) * chunk +
w * best entry`, w = 0 being today's search. The rest is the shipped search (score fusion,
lexical winners, the dense feedback round, which scores the chunks again the same way with
the feedback vector, and the relevance model's second stage over the fused top 20;
--no-feedback: every arm without the feedback round). Recall@5 by the key phrase, natural questions (and exact lookups with
--which exact); w chosen on --choose-on and reported on --corpora.
"""

from __future__ import annotations

import argparse
import os
import re
import sys
import time
from pathlib import Path

import numpy as np

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE.parent))
sys.path.insert(0, str(HERE))
os.environ.setdefault("HF_HUB_OFFLINE", "1")

WEIGHTS = (0.0, 0.25, 0.5, 0.75, 1.0)
_BLANK = re.compile(r"\n\s*\n")


def entries_of(text: str) -> list[str]:
    """Paragraphs of a chunk; a short block ending in ":" (a term) goes with the next."""
    blocks = [b.strip() for b in _BLANK.split(text) if b.strip()]
    out: list[str] = []
    carry = ""
    for b in blocks:
        if carry:
            b = f"{carry}\n{b}"
            carry = ""
        if b.endswith(":") and len(b.split()) <= 12:
            carry = b
            continue
        out.append(b)
    if carry:
        out.append(carry)
    return out or [text]


def entry_matrix(name: str, local) -> tuple[np.ndarray, np.ndarray]:  # noqa: ANN001
    """(chunk id of each entry, entry vectors), cached."""
    cache = HERE / "out" / "entries" / f"{name}.npz"
    if cache.exists():
        z = np.load(cache)
        return z["ids"], z["vecs"]
    rows = local.idx.store.conn.execute("SELECT id, title, text FROM chunks").fetchall()
    ids, texts = [], []
    for cid, title, text in rows:
        for e in entries_of(text):
            ids.append(cid)
            texts.append(f"{title}\n{e}")
    t0 = time.perf_counter()
    vecs = np.asarray(local.idx.embedder.encode(texts), dtype=np.float32)
    print(f"  {name}: {len(rows)} chunks, {len(texts)} entries embedded in {time.perf_counter() - t0:.0f} s")
    cache.parent.mkdir(parents=True, exist_ok=True)
    np.savez(cache, ids=np.array(ids), vecs=vecs)
    return np.array(ids), vecs


def recall(name: str, which: str, scorer, k: int = 5, feedback: bool = True) -> dict[float, float]:  # noqa: ANN001
    from bench_relevance import index_dir
    from bench_retrieval import LocalIndex
    from retrieval_data import corpus, norm, questions

    from indexer import search

    local = LocalIndex(index_dir(name), "onnx-int8")
    eids, evecs = entry_matrix(name, local)
    n_chunks = local.idx.store.conn.execute("SELECT count(*) FROM chunks").fetchone()[0]
    found = {w: 0 for w in WEIGHTS}
    owners, owner_of = np.unique(eids, return_inverse=True)   # each entry's chunk, by position

    def best_entries(sims: np.ndarray) -> dict[int, float]:
        """Each chunk's best entry cosine."""
        best = np.full(len(owners), -2.0, dtype=np.float32)
        np.maximum.at(best, owner_of, sims)
        return dict(zip(owners.tolist(), best.tolist()))

    def mix(chunk: dict[int, float], best: dict[int, float], w: float) -> list[tuple[int, float]]:
        """Chunks by (1 - w) x their cosine + w x their best entry's, best first."""
        return sorted(((cid, (1 - w) * c + w * best.get(cid, c)) for cid, c in chunk.items()),
                      key=lambda kv: -kv[1])

    qs = questions(corpus(name), which)
    real_rankings, real_feedback = search.scored_rankings, search.feedback_dense
    for q in qs:
        v = np.asarray(local.idx.embedder.encode([q.question])[0], dtype=np.float32)
        chunk = dict(local.vectors.knn(v, n_chunks + 10))
        best = best_entries(evecs @ v)
        key = norm(q.key_phrase)
        for w in WEIGHTS:
            mixed = mix(chunk, best, w)

            def rankings(vectors, qv, query, depth, mixed=mixed):  # noqa: ANN001, ANN202
                _, lexical = real_rankings(vectors, qv, query, depth)
                return mixed[:depth], lexical

            def again(vectors, qv, fused, depth, w=w, **kw):  # noqa: ANN001, ANN202
                if not feedback or len(vectors) < search.FEEDBACK_MIN_CHUNKS:
                    return None
                fv = search.feedback_vector(qv, vectors.vectors_of([c for c, _ in fused[:search.FEEDBACK_DEPTH]]))
                return mix(dict(vectors.knn(fv, n_chunks + 10)), best_entries(evecs @ fv), w)[:depth]

            search.scored_rankings, search.feedback_dense = rankings, again
            try:
                order = [p.chunk_id for p in local.idx.search(q.question, k=20, judge=scorer)]
            finally:
                search.scored_rankings, search.feedback_dense = real_rankings, real_feedback
            rows = local.idx.store.fetch_chunks(order[:k])
            found[w] += any(local.rel(rows[c][1]) == q.file and key in norm(rows[c][3])
                            for c in order[:k] if c in rows)
    local.idx.close()
    return {w: found[w] / max(len(qs), 1) for w in WEIGHTS}


def main() -> None:
    from sentence_rerank import PassageScorer

    from indexer import search

    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--corpora", default="zsh,apache,cmake")
    ap.add_argument("--choose-on", default="debref,git,postgres,flask")
    ap.add_argument("--which", default="natural")
    ap.add_argument("--no-feedback", action="store_true", help="every arm without the dense feedback round")
    ap.add_argument("--model-dir", default=str(HERE.parent / "indexer" / "data" / "relevance"))
    args = ap.parse_args()
    scorer = PassageScorer(args.model_dir)
    chosen = [c for c in args.choose_on.split(",") if c]
    got = {}
    for name in chosen + args.corpora.split(","):
        got[name] = recall(name, args.which, scorer, feedback=not args.no_feedback)
        print(f"{name} ({'choose' if name in chosen else 'left out'}): " +
              ", ".join(f"w {w:g} {r:.3f}" for w, r in got[name].items()), flush=True)
    if chosen:
        w = max(WEIGHTS, key=lambda w: (round(sum(got[c][w] for c in chosen), 9), -w))
        print(f"chosen on {'+'.join(chosen)}: w {w:g}; left out: " + ", ".join(
            f"{c} {got[c][0.0]:.3f} -> {got[c][w]:.3f}" for c in args.corpora.split(",")))


if __name__ == "__main__":
    main()
