"""Hybrid retrieval: HNSW (dense) and BM25 over every query term (indexer/bm25.py),
fused by weighted reciprocal rank.

`fts_query` / `selective_fts_query` build FTS5 queries; search no longer uses them (the
pruning of common terms cost 23 points of recall), they stay for callers of FTS5.
"""

from __future__ import annotations

import re

from indexer.bm25 import STOPWORDS
from indexer.records import Passage
from indexer.store import Store
from indexer.vectors import VectorIndex

RRF_K = 60          # the usual constant: damps the head of each list
DENSE_WEIGHT = 1.0  # weights of the two rankings in the fusion (tuned on the dev half
LEXICAL_WEIGHT = 1.0  # of bench/bench_retrieval.py's questions)
DEPTH = 50          # candidates taken from each side

def fts_query(query: str, *, max_terms: int = 32, mode: str = "OR") -> str:
    """User text -> a safe FTS5 query: every word quoted, OR-ed (quotes, hyphens, AND/NOT,
    column names, etc. in the question can never become FTS5 syntax)."""
    words = list(dict.fromkeys(w.lower() for w in re.findall(r"\w+", query)))
    # Function words match nearly every chunk; in a small index BM25's idf cannot tell.
    content = [w for w in words if w not in STOPWORDS]
    words = (content or words)[:max_terms]
    return f" {mode} ".join('"' + w.replace('"', '""') + '"' for w in words)


PRUNE_FROM = 5_000    # below this many chunks, BM25 over every term is already fast


def selective_fts_query(store: Store, query: str) -> str:
    """Drop terms found in more than ~3% of chunks from the OR query of a big index.

    An OR of common words makes FTS5 score most of the table (180 ms at 100k chunks);
    such terms add little to BM25 ranking anyway. Each term's frequency is probed with a
    capped count, so the probe itself stays cheap.
    """
    full = fts_query(query)
    total = store.conn.execute("SELECT COALESCE(MAX(rowid), 0) FROM chunks").fetchone()[0]
    if total < PRUNE_FROM or not full:
        return full
    cap = max(500, total // 33)
    kept = []
    terms = full.split(" OR ")
    for term in terms:
        hits = store.conn.execute(
            "SELECT COUNT(*) FROM (SELECT rowid FROM chunks_fts WHERE chunks_fts MATCH ? LIMIT ?)",
            (term, cap)).fetchone()[0]
        if hits < cap:
            kept.append(term)
    return " OR ".join(kept)   # all terms common: the dense side carries the query


def rrf(*rankings: list[int], k: int = RRF_K, weights: tuple[float, ...] | None = None
        ) -> dict[int, float]:
    scores: dict[int, float] = {}
    for i, ranking in enumerate(rankings):
        w = weights[i] if weights else 1.0
        for rank, chunk_id in enumerate(ranking, start=1):
            scores[chunk_id] = scores.get(chunk_id, 0.0) + w / (k + rank)
    return scores


def rankings(vectors: VectorIndex | None, query_vec, query: str, depth: int = DEPTH
             ) -> tuple[list[int], list[int]]:
    """(dense, lexical) chunk ids, best first."""
    dense = [cid for cid, _ in vectors.knn(query_vec, depth)] if vectors is not None and query_vec is not None else []
    lexical = [cid for cid, _ in vectors.lexical.search(query, depth)] if vectors is not None else []
    return dense, lexical


def fuse(dense: list[int], lexical: list[int]) -> list[tuple[int, float]]:
    fused = rrf(dense, lexical, weights=(DENSE_WEIGHT, LEXICAL_WEIGHT))
    return sorted(fused.items(), key=lambda kv: (-kv[1], kv[0]))


def hybrid_search(store: Store, vectors: VectorIndex | None, query_vec, query: str, *, k: int
                  ) -> list[Passage]:
    depth = max(DEPTH, 2 * k)
    dense, lexical = rankings(vectors, query_vec, query, depth)
    fused = fuse(dense, lexical)
    candidates = [cid for cid, _ in fused[:depth]]
    rows = store.fetch_chunks(candidates[:max(k + 10, 2 * k)])
    out = []
    scores = dict(fused)
    for cid in candidates:
        row = rows.get(cid)
        if row is None:   # deleted since the HNSW snapshot was taken
            continue
        out.append(Passage(chunk_id=row[0], path=row[1], title=row[2], text=row[3],
                           start_line=row[4], end_line=row[5], page=row[6], char_start=row[7],
                           char_end=row[8], score=round(scores[cid], 6)))
        if len(out) == k:
            break
    return out


def surrounding_text(store: Store, passage: Passage, *, chars: int) -> tuple[str, int, int]:
    """Text around the passage, stitched from its file's stored chunks (works even when
    the file has changed or vanished), and the passage's span inside that text."""
    lo = max(0, passage.char_start - chars)
    hi = passage.char_end + chars
    rows = store.neighbours(passage.chunk_id, lo, hi)
    if not rows:
        return passage.text, 0, len(passage.text)
    base = min(r[0] for r in rows)   # the passage's own chunk is among them
    text = ""
    for start, stop, chunk_text in rows:   # overlapping chunks agree on shared characters
        if stop - base <= len(text):
            continue
        gap = start - base - len(text)
        if gap > 0:
            text += "\n" * gap   # between chunks there were only blank lines / spaces
            text += chunk_text
        else:
            text += chunk_text[-gap:]
    cut_lo = max(0, lo - base)
    cut_hi = min(len(text), hi - base)
    text = text[cut_lo:cut_hi]
    span_start = passage.char_start - base - cut_lo
    return text, span_start, span_start + (passage.char_end - passage.char_start)
