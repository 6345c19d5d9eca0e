"""Hybrid retrieval: HNSW (dense) and BM25 over every query term (indexer/bm25.py),
fused by score (or weighted reciprocal rank), with BM25's clear winners (exact matches of
a rare term) pinned first and a lookup's definition after them (indexer/term_lines.py),
the dense side searched again with the first passages'
feedback; reordered by the relevance model's judge (or the learned ranker).

`fts_query` / `selective_fts_query` build FTS5 queries; search no longer uses them (the
pruning of common terms cost 23 points of recall), they stay for callers of FTS5.
"""

from __future__ import annotations

import os
from collections.abc import Callable, Sequence

import numpy as np

from indexer.bm25 import STOPWORDS
from indexer.bm25 import words as bm25_words
from indexer.records import Passage
from indexer.store import Store
from indexer.term_lines import defining_passages, is_lookup
from indexer.vectors import VectorIndex

RRF_K = 60          # the usual constant: damps the head of each list
DENSE_WEIGHT = 1.0  # weights of the two rankings in the fusion (tuned on the dev half
LEXICAL_WEIGHT = 1.0  # of bench/bench_retrieval.py's questions)
DEPTH = 50          # candidates taken from each side
# formats cited by a unit (slide, sheet range, message, cell): its text is shown alone
UNIT_EXT = {".pptx", ".odp", ".xlsx", ".ods", ".eml", ".mbox", ".ipynb"}

def fts_query(query: str, *, max_terms: int = 32, mode: str = "OR") -> str:
    """User text -> a safe FTS5 query: every word quoted, OR-ed (quotes, hyphens, AND/NOT,
    column names, etc. in the question can never become FTS5 syntax)."""
    words = list(dict.fromkeys(w.lower() for w in bm25_words(query)))
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
    dense, lexical = scored_rankings(vectors, query_vec, query, depth)
    return [cid for cid, _ in dense], [cid for cid, _ in lexical]


def scored_rankings(vectors: VectorIndex | None, query_vec, query: str, depth: int = DEPTH
                    ) -> tuple[list[tuple[int, float]], list[tuple[int, float]]]:
    """(dense, lexical) (chunk id, score) lists, best first: cosine and BM25."""
    if vectors is None:
        return [], []
    dense = list(vectors.knn(query_vec, depth)) if query_vec is not None else []
    lexical = list(vectors.lexical.search(query, depth))
    return dense, lexical


# A lexical winner: the first BM25 hits stand this many times above the next one. That
# mostly happens when they hold a query term the rest of the index lacks (an identifier,
# an error code, a name): 11.4 against 1.3 for a unique marker, while for questions in
# words BM25's first two scores are within 1.12x at the median, 1.41x at the 90th and
# 1.85x at the 99th percentile on four bench corpora (bench/bench_relevance.py prints
# the spread). Such hits are pinned first, in BM25's order, so that fusion can never bury
# an exact match under passages that both sides rank in the middle; at 1.5 about one
# question in words in eight also gets its clear BM25 head pinned (28 of 224; at 2, 3).
# The gap was chosen leave-one-corpus-out among 1.25, 1.5, 2 and 3, ties to the larger
# (bench/bench_relevance.py, six corpora: kernel, git, postgres, debref with natural and
# exact-lookup questions, kernel and git training questions, rust and vim): 1.5 in five
# folds, 3 in the sixth where all tie; with ALPHA 0.5 it moves recall by a question at most.
DOMINANCE = 1.5
MAX_PINNED = 3      # a gap below the 3rd hit is no longer "an exact match"


def lexical_winners(lexical: list[tuple[int, float]], *, dominance: float = DOMINANCE,
                    max_pinned: int = MAX_PINNED) -> list[int]:
    """The BM25 hits above the first score gap of `dominance` x within the top
    `max_pinned` + 1 (none if there is no such gap)."""
    scores = [s for _, s in lexical[:max_pinned + 1]]
    if not scores or scores[0] <= 0:
        return []
    for i in range(min(max_pinned, len(scores))):
        nxt = scores[i + 1] if i + 1 < len(scores) else 0.0
        if scores[i] >= dominance * nxt:
            return [cid for cid, _ in lexical[:i + 1]]
    return []


def fuse_scores(dense: list[tuple[int, float]], lexical: list[tuple[int, float]], *,
                alpha: float | None = None) -> list[tuple[int, float]]:
    """Score fusion: alpha (ALPHA unless given) x the cosine (min-max scaled over the dense
    candidates) plus (1 - alpha) x BM25 over its best score for this query; best first. Unlike rank fusion
    it keeps how far apart the candidates are on each side."""
    alpha = ALPHA if alpha is None else alpha
    d = dict(dense)
    lx = dict(lexical)
    ids = set(d) | set(lx)
    if not ids:
        return []
    lo, hi = (min(d.values()), max(d.values())) if d else (0.0, 1.0)
    top = max(lx.values()) if lx else 1.0
    fused = {cid: alpha * ((d.get(cid, lo) - lo) / ((hi - lo) or 1.0))
             + (1 - alpha) * (lx.get(cid, 0.0) / (top or 1.0)) for cid in ids}
    return sorted(fused.items(), key=lambda kv: (-kv[1], kv[0]))


FUSION = "score"    # "score" (fuse_scores) or "rrf"; bench/bench_relevance.py, leave-one-corpus-
ALPHA = 0.5         # out over six corpora: score fusion, alpha 0.5 chosen in all six folds among
                    # 0.3-0.7; with DOMINANCE it matched or beat rank fusion's recall@5 on every
                    # corpus left out (alpha 0.4 and gap 2 before, chosen on four corpora)


OTHER_LANGUAGE_ALPHA = 0.1   # the cosine's weight for a query in a language the embedding model
                             # does not read (indexer.language.reads_query): chosen on the Japanese
                             # Debian Reference (bench/other_languages.py: recall@5 0.850 at 0.1-0.3,
                             # against 0.750 at ALPHA and 0.825 for BM25 alone; 0.1 the best mean
                             # reciprocal rank), reported on Chinese, German and French left out


# Pseudo-relevance feedback on the dense side (Rocchio), with the second stage only: the
# query vector plus FEEDBACK_WEIGHT x the mean vector of the first FEEDBACK_DEPTH fused
# passages, normalised, searched again and fused with BM25 as before; the relevance model
# then rereads the new top 20. A question in a person's words shares little wording with
# its answer; the passages found first say what the corpus calls it, and their mean pulls
# in the passages that say it in those words. BM25's side and its pinned winners are
# untouched, so an exact match keeps its place. Chosen on the shipped search's recall@5,
# leave-one-corpus-out over ten held-out corpora (bench/query_feedback.py: depth
# 3/5/10/15/20 x weight 0.5/1/2, alpha kept): depth 15, weight 1 in seven folds of ten;
# the corpora left out find 309 of 362 natural questions against 306 without, 265 of 266
# exact lookups against 264. Without the second stage the same feedback loses (the fused
# first stage 293 -> 289 of 362 at these constants), so search without a judge does without
# it. Costs one more HNSW query (about a millisecond).
FEEDBACK_DEPTH = 15
FEEDBACK_WEIGHT = 1.0
FEEDBACK_MIN_CHUNKS = 300
"""Feedback needs an index much larger than what it feeds back: it runs on an index of at
least 300 chunks (20 x FEEDBACK_DEPTH: the first passages at most 5% of it). The corpora
it was chosen on hold 271-2,963 chunks; in a folder of eight of git's manual pages (42 chunks) the first 15 are a
third of the index, their mean is the folder's, and it moved git-revert's page from first
to second for "undo a pushed commit without rewriting history"
(tests/test_passage_judge.py). pycode2 (271 chunks), the one bench corpus under it, found
as many with it at the chosen constants as without (bench/query_feedback.py)."""


def feedback_vector(query_vec, top_vectors, weight: float = FEEDBACK_WEIGHT):  # noqa: ANN001, ANN201
    """The query vector moved toward the mean of `top_vectors` (rows: the first passages
    found), normalised; the query vector itself when there are none or `weight` is 0."""
    q = np.asarray(query_vec, dtype=np.float32)
    top = np.asarray(top_vectors, dtype=np.float32)
    if weight <= 0 or top.size == 0:
        return q
    moved = q + np.float32(weight) * top.reshape(len(top), -1).mean(axis=0)
    norm = float(np.linalg.norm(moved))
    return (moved / norm).astype(np.float32) if norm > 0 else q


def feedback_dense(vectors: VectorIndex, query_vec, fused: list[tuple[int, float]], depth: int,  # noqa: ANN001
                   *, feedback_depth: int = FEEDBACK_DEPTH, weight: float = FEEDBACK_WEIGHT
                   ) -> list[tuple[int, float]] | None:
    """The dense side searched again with feedback_vector of the first `feedback_depth`
    fused passages; None when there is nothing to feed back (no query vector, weight 0, an
    index under FEEDBACK_MIN_CHUNKS chunks, or none of those passages has a vector: a chunk
    added since the snapshot)."""
    if query_vec is None or weight <= 0 or feedback_depth <= 0 or len(vectors) < FEEDBACK_MIN_CHUNKS:
        return None
    ids = [cid for cid, _ in fused[:feedback_depth]]
    try:
        top = vectors.vectors_of(ids)
    except (KeyError, RuntimeError):       # one of them has no vector (yet): those that do
        kept = []
        for cid in ids:
            try:
                kept.append(vectors.vectors_of([cid])[0])
            except (KeyError, RuntimeError):
                continue
        if not kept:
            return None
        top = kept
    return list(vectors.knn(feedback_vector(query_vec, top, weight), depth))


def fuse(dense: list, lexical: list, *, pinned: list[int] | None = None,
         method: str | None = None, alpha: float = ALPHA) -> list[tuple[int, float]]:
    """The two rankings (lists of ids, or of (id, score) pairs) fused, best first:
    `method` "score" (fuse_scores; needs scores) or "rrf" (weighted reciprocal rank);
    `pinned` ids (lexical winners, found here when not given) go first whatever their
    fused score."""
    scored = bool(dense and isinstance(dense[0], tuple)) or bool(lexical and isinstance(lexical[0], tuple))
    method = method or (FUSION if scored else "rrf")
    if pinned is None:
        pinned = lexical_winners(lexical) if lexical and isinstance(lexical[0], tuple) else []
    if method == "score":
        order = fuse_scores(dense, lexical, alpha=alpha)
    else:
        dense_ids = [x[0] if isinstance(x, tuple) else x for x in dense]
        lexical_ids = [x[0] if isinstance(x, tuple) else x for x in lexical]
        fused = rrf(dense_ids, lexical_ids, weights=(DENSE_WEIGHT, LEXICAL_WEIGHT))
        order = sorted(fused.items(), key=lambda kv: (-kv[1], kv[0]))
    if not pinned or not order:
        return order
    top = order[0][1]
    head = [(cid, round(top + 1e-3 * (len(pinned) - i), 6)) for i, cid in enumerate(pinned)]
    pinned_set = set(pinned)
    return head + [kv for kv in order if kv[0] not in pinned_set]


RERANK_DEPTH = 20    # first-stage candidates the learned ranker reorders (bench/bench_relevance.py)


def rerank_learned(ranker, query: str, query_vec, dense: list[tuple[int, float]],  # noqa: ANN001
                   lexical: list[tuple[int, float]], fused: list[tuple[int, float]], rows: dict, *,
                   vectors: VectorIndex, embed, depth: int = RERANK_DEPTH,
                   keep_first: list[int] | None = None) -> tuple[list[int], dict[int, float]]:
    """The first `depth` fused ids reordered by the learned ranker's logit
    (indexer/learned_rank.py); pinned lexical winners stay first. Returns the order and the
    logits by id."""
    from indexer.learned_rank import candidates_for, features

    ids = [cid for cid, _ in fused]
    keep = [c for c in (keep_first or []) if c in rows]
    head_ids = [c for c in ids[:depth] if c in rows]
    if not head_ids:
        return ids, {}
    cands = candidates_for(ids[:depth], rows, dense, lexical)
    feats = features(query, cands, idf=vectors.lexical.term_idf(query), embed=embed, qvec=query_vec,
                     vector_of=vectors.vectors_of)
    logits = {c.chunk_id: float(z) for c, z in zip(cands, ranker.logits(feats))}
    head = sorted((c for c in head_ids if c not in keep), key=lambda c: -logits[c])
    done = set(keep) | set(head)
    return keep + head + [c for c in ids if c not in done], logits


PassageJudge = Callable[[str, Sequence[tuple[str, str]]], Sequence[float]]
"""(query, [(title, text) of each candidate passage]) -> per passage, the probability that
it holds the answer: localrag's relevance model read over the passage's sentences, given
by the caller (localrag.answering.passage_judge), so the indexer knows nothing of it."""
JUDGE_DEPTH = 20     # fused candidates a passage judge reads (bench/judged_recall.py)
JUDGE_WEIGHT = 0.5   # beta: fused score over the best one's + beta x the judge's probability; chosen on
                     # judged recall@5 of five corpora (0.5 in three folds of five left out; 0.5
                     # keeps every exact lookup in the top 5, 1.0 lost one of postgres)


def rerank_judged(judge: PassageJudge, query: str, fused: list[tuple[int, float]], rows: dict, *,
                  depth: int = JUDGE_DEPTH, weight: float = JUDGE_WEIGHT,
                  keep_first: Sequence[int] = ()) -> tuple[list[int], dict[int, float]]:
    """The first `depth` fused ids reordered by their fused score (over the best one's) plus
    `weight` x the judge's probability that they hold the answer; pinned lexical winners
    (`keep_first`) stay first, so an exact match is never moved down. Returns the order and
    the combined scores by id."""
    head = [(cid, s) for cid, s in fused[:depth] if cid in rows]
    if not head:
        return [cid for cid, _ in fused], {}
    probs = judge(query, [(rows[cid][2], rows[cid][3]) for cid, _ in head])
    top = max(s for _, s in head) or 1.0
    scores = {cid: s / top + weight * float(p) for (cid, s), p in zip(head, probs)}
    keep = [c for c in keep_first if c in scores]
    order = keep + sorted((c for c in scores if c not in keep), key=lambda c: -scores[c])
    done = set(order)
    return order + [cid for cid, _ in fused if cid not in done], scores


PIN_DEFINED = True
"""The passages among the first DEPTH that define the query's named term (a definition
list's term line: indexer/term_lines.py) are pinned after BM25's winners."""


def hybrid_search(store: Store, vectors: VectorIndex | None, query_vec, query: str, *, k: int,
                  ranker=None, embed=None, rerank_depth: int = RERANK_DEPTH,  # noqa: ANN001
                  judge: PassageJudge | None = None, judge_depth: int = JUDGE_DEPTH,
                  alpha: float = ALPHA, feedback: float = FEEDBACK_WEIGHT) -> list[Passage]:
    """Dense + BM25, fused by score at cosine weight `alpha` (lexical winners first); with a
    `judge`, the dense side searched again with the first passages' feedback
    (feedback_dense, at weight `feedback`; 0: none) and the fused top `judge_depth`
    reordered by what the judge finds in them (rerank_judged);
    else with a `ranker` (indexer.learned_rank.LearnedRanker) and `embed`, the fused top
    `rerank_depth` reordered by it."""
    depth = max(DEPTH, 2 * k)
    dense, lexical = scored_rankings(vectors, query_vec, query, depth)
    pins = lexical_winners(lexical)
    fused = fuse(dense, lexical, pinned=pins, alpha=alpha)
    judging = judge is not None and judge_depth > 0
    if judging and vectors is not None:
        again = feedback_dense(vectors, query_vec, fused, depth, weight=feedback)
        if again is not None:
            dense = again
            fused = fuse(dense, lexical, pinned=pins, alpha=alpha)
    candidates = [cid for cid, _ in fused[:depth]]
    reranking = not judging and ranker is not None and embed is not None and rerank_depth > 0 \
        and query_vec is not None
    want = max(k + 10, 2 * k, rerank_depth if reranking else 0, judge_depth if judging else 0)
    pinning = PIN_DEFINED and is_lookup(query)
    rows = store.fetch_chunks(candidates[:max(want, depth) if pinning else want])
    if pinning:
        defined = [cid for cid in defining_passages(query, {cid: rows[cid][3] for cid in candidates
                                                            if cid in rows}) if cid not in pins]
        if defined:
            pins = pins + defined
            fused = fuse(dense, lexical, pinned=pins, alpha=alpha)
            candidates = [cid for cid, _ in fused[:depth]]
    scores = dict(fused)
    if judging:
        candidates, judged = rerank_judged(judge, query, fused[:depth], rows, depth=judge_depth,
                                           keep_first=pins)
        # the score a person sees follows the order they see (pinned winners above the rest)
        top = max(judged.values(), default=0.0)
        for i, cid in enumerate(pins):
            judged[cid] = top + 0.01 * (len(pins) - i)
        scores.update(judged)
    elif reranking:
        candidates, logits = rerank_learned(ranker, query, query_vec, dense, lexical, fused[:depth],
                                            rows, vectors=vectors, embed=embed, depth=rerank_depth,
                                            keep_first=pins)
        # the score a person sees follows the order they see: the ranker's logit where
        # there is one (pinned winners above every logit), else the fused score
        top = max(logits.values(), default=0.0)
        for i, cid in enumerate(pins):
            scores[cid] = top + 1.0 + 0.01 * (len(pins) - i)
        for cid, x in logits.items():
            if cid not in pins:
                scores[cid] = x
    out = []
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
    # a slide, sheet range, message or notebook cell is shown alone, not with its neighbours
    unit = os.path.splitext(passage.path.lower())[1] in UNIT_EXT
    rows = store.neighbours(passage.chunk_id, lo, hi, same_title=unit)
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
