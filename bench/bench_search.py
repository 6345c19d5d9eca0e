"""Search benchmark: prints figures, asserts nothing.

    python bench/bench_search.py                       # 2,000 real chunks (small default)
    python bench/bench_search.py --real 10000 --synthetic 100000

- real chunks: generated sentences embedded with the real MiniLM model, stored through
  the normal store (SQLite + FTS5 + HNSW).
- synthetic chunks (for the 100k case): "near-real" vectors = a real MiniLM embedding
  plus Gaussian noise (sigma 0.05 per dimension, renormalised), with generated text; they
  keep the clustered shape of real embeddings, unlike uniform random vectors.
Figures: hybrid search p50/p99 (with and without the query encode), HNSW recall@10 vs
exact search on real MiniLM embeddings.
"""

from __future__ import annotations

import argparse
import os
import random
import shutil
import sys
import tempfile
import time
from pathlib import Path

import numpy as np

os.environ.setdefault("HF_HUB_OFFLINE", "1")
sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

SUBJECTS = "the engineer|my neighbour|a small robot|the river|our team|the old library|a comet|the baker".split("|")
VERBS = "repairs|describes|measures|paints|predicts|carries|forgets|celebrates".split("|")
OBJECTS = ("the broken bridge|a winter storm|the budget report|seven blue lanterns|the train schedule|"
           "a quiet garden|the tax form|an ancient map|the water pump|a jazz record").split("|")
EXTRAS = "before dawn|in the valley|with great care|for the festival|after the meeting|near the harbor".split("|")


def sentences(n: int, seed: int) -> list[str]:
    rng = random.Random(seed)
    return [f"{rng.choice(SUBJECTS)} {rng.choice(VERBS)} {rng.choice(OBJECTS)} {rng.choice(EXTRAS)}, "
            f"{rng.choice(SUBJECTS)} {rng.choice(VERBS)} {rng.choice(OBJECTS)} (note {i})." for i in range(n)]


def insert(idx, texts: list[str], vecs: np.ndarray, tag: str) -> None:
    store = idx.store
    with store.transaction(bump=True) as conn:
        for start in range(0, len(texts), 50):
            path = f"/bench/{tag}/file_{start // 50:06d}.txt"
            fid = store.upsert_file(conn, path=path, root="/bench", mtime_ns=1, size=1, sha256=path,
                                    state="indexed", reason=None, chunks=min(50, len(texts) - start))
            rows = [(j - start, f"file_{start // 50:06d}.txt", texts[j], 1, 1, None, 0, len(texts[j]))
                    for j in range(start, min(start + 50, len(texts)))]
            store.insert_chunks(conn, fid, rows, vecs[start:start + len(rows)])
        store.set_meta(conn, "embedding_model", idx.embedder.name)
        store.set_meta(conn, "dim", str(vecs.shape[1]))
        conn.execute("INSERT OR IGNORE INTO roots(path, added_at) VALUES ('/bench', 0)")


def latency(idx, queries: list[str], k: int = 5) -> tuple[float, float, float, float]:
    from indexer.search import hybrid_search

    full, core = [], []
    vectors = idx._vectors_index()
    for q in queries:
        t = time.perf_counter()
        idx.search(q, k=k)
        full.append(time.perf_counter() - t)
        qv = idx.embedder.encode([q])[0]
        t = time.perf_counter()
        hybrid_search(idx.store, vectors, qv, q, k=k)
        core.append(time.perf_counter() - t)
    f, c = np.array(full) * 1000, np.array(core) * 1000
    return np.percentile(f, 50), np.percentile(f, 99), np.percentile(c, 50), np.percentile(c, 99)


def recall_at_10(idx, real_vecs: np.ndarray, queries: np.ndarray) -> float:
    vectors = idx._vectors_index()
    ids = np.array([r[0] for r in idx.store.conn.execute("SELECT id FROM chunks ORDER BY id")])
    all_vecs = np.vstack([v for _, v in idx.store.embeddings()])
    hits = 0
    for q in queries:
        exact = set(ids[np.argsort(-all_vecs @ q)[:10]].tolist())
        got = {cid for cid, _ in vectors.knn(q, 10)}
        hits += len(exact & got)
    return hits / (10 * len(queries))


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--real", type=int, default=2000, help="chunks with real MiniLM embeddings")
    ap.add_argument("--synthetic", type=int, default=0, help="extra near-real chunks (e.g. 90000 for 100k total)")
    ap.add_argument("--queries", type=int, default=200)
    args = ap.parse_args()

    from indexer.embedder import Embedder
    from indexer.index import Index
    from indexer.options import IndexOptions

    work = Path(tempfile.mkdtemp(prefix="bench_search_"))
    embedder = Embedder()
    texts = sentences(args.real, 1)
    t = time.perf_counter()
    vecs = embedder.encode(texts, batch_size=64)
    print(f"embedded {len(texts)} real chunks in {time.perf_counter() - t:.1f} s")
    idx = Index(work / "index", options=IndexOptions(), embedder=embedder)
    insert(idx, texts, vecs, "real")
    t = time.perf_counter()
    idx._vectors_index()
    print(f"HNSW built from SQLite ({len(texts)} vectors) in {time.perf_counter() - t:.1f} s")
    query_texts = sentences(args.queries, 99)
    qvecs = embedder.encode(query_texts, batch_size=64)
    print(f"recall@10 HNSW vs exact on {len(texts)} real MiniLM embeddings: "
          f"{recall_at_10(idx, vecs, qvecs):.3f} (target >= 0.95)")
    p = latency(idx, query_texts[:100])
    print(f"hybrid search at {len(texts)} chunks: p50 {p[0]:.1f} ms p99 {p[1]:.1f} ms "
          f"(retrieval only, query already embedded: p50 {p[2]:.1f} ms p99 {p[3]:.1f} ms)")

    if args.synthetic:
        rng = np.random.default_rng(3)
        base = vecs[rng.integers(0, len(vecs), args.synthetic)]
        noisy = base + rng.normal(0, 0.05, base.shape).astype(np.float32)
        noisy /= np.linalg.norm(noisy, axis=1, keepdims=True)
        syn_texts = sentences(args.synthetic, 5)
        insert(idx, syn_texts, noisy.astype(np.float32), "synthetic")
        idx.close()
        idx = Index(work / "index", options=IndexOptions(), embedder=embedder)
        t = time.perf_counter()
        idx._vectors_index()
        total = args.real + args.synthetic
        print(f"HNSW rebuilt from SQLite ({total} vectors) in {time.perf_counter() - t:.1f} s")
        p = latency(idx, query_texts[:100])
        print(f"hybrid search at {total} chunks ({args.synthetic} near-real synthetic): "
              f"p50 {p[0]:.1f} ms p99 {p[1]:.1f} ms (retrieval only: p50 {p[2]:.1f} ms "
              f"p99 {p[3]:.1f} ms; target p50 < 30 ms)")
        print(f"recall@10 at {total} (near-real vectors): {recall_at_10(idx, vecs, qvecs[:50]):.3f}")
    idx.close()
    shutil.rmtree(work, ignore_errors=True)


if __name__ == "__main__":
    main()
