"""Fusion that never buries an exact match (issue 17, point 3).

A note that holds a rare term the person typed (an invoice number, an error code, an
identifier) ranks first on BM25 by a wide margin; rank fusion alone put passages that
both sides rank in the middle above it. The rule: BM25's clear winners are pinned first.
"""

from __future__ import annotations

import random

import pytest

from indexer import search
from indexer.search import fuse, lexical_winners, rrf

TOPICS = ["the kitchen renovation", "quarterly budget review", "garden watering plan",
          "the server migration", "a dentist appointment", "the team offsite", "book club",
          "car insurance renewal", "the tax return", "a birthday party", "the new laptop",
          "the flat viewing", "a holiday in Lisbon", "the print shop order", "the piano lesson"]
FILLER = ["We agreed to check the numbers again next week.", "Anna will send the summary.",
          "Nothing urgent came up.", "The open questions are listed below.",
          "Costs were lower than expected.", "The next meeting is on Thursday.",
          "Please bring the printed copies.", "Everyone liked the second option better.",
          "Tom asked whether the deadline can move.", "The supplier confirmed the order.",
          "We still need a decision on the colour.", "Marta found a cheaper offer online.",
          "The contract has to be signed by Friday.", "Two people could not attend.",
          "The photos are in the shared folder.", "Parking near the office is difficult.",
          "Lunch will be provided for everyone.", "The old plan is no longer valid.",
          "A reminder goes out on Monday morning.", "The receipts are kept in the blue box."]


def _notes(n: int = 400) -> dict[str, str]:
    rng = random.Random(5)
    notes = {}
    for i in range(n):
        topic = TOPICS[i % len(TOPICS)]
        # the marker is one word among ~150, as in a real note: the dense side sees the
        # note as one of many alike
        body = " ".join(rng.sample(FILLER, 12))
        more = " ".join(rng.sample(FILLER, 8))
        notes[f"note-{i:04d}.md"] = (f"# Notes on {topic}\n\n{body}\n\nWe talked about {topic} "
                                     f"again. {more} Filed under token-{i:04d}-zq.\n")
    return notes


def _notes_index(tmp_path, make_index):  # noqa: ANN001, ANN202
    """An index of the 400 notes (_notes) in tmp_path/notes."""
    folder = tmp_path / "notes"
    folder.mkdir()
    for name, text in _notes().items():
        (folder / name).write_text(text)
    idx = make_index()
    idx.add_root(folder)
    idx.update()
    return idx


def test_lexical_winners_need_a_clear_gap():
    # a unique marker: 11.4 against 1.3 (the case measured in issue 17)
    assert lexical_winners([(7, 11.4), (3, 1.3), (9, 1.2)]) == [7]
    # the same marker in two notes: both are winners, in BM25's order
    assert lexical_winners([(7, 11.4), (8, 11.0), (3, 1.3)]) == [7, 8]
    # a question in words: scores close together, nothing pinned
    assert lexical_winners([(1, 9.1), (2, 8.0), (3, 7.5), (4, 7.4), (5, 7.0)]) == []
    # a gap only below the 4th hit is no exact match any more
    assert lexical_winners([(1, 9.0), (2, 8.9), (3, 8.8), (4, 8.7), (5, 1.0)]) == []
    # a single hit is a winner (nothing else holds the term)
    assert lexical_winners([(4, 3.0)]) == [4]
    assert lexical_winners([]) == []


def test_fuse_pins_the_winner_above_passages_both_sides_rank_in_the_middle():
    dense = [(cid, 0.5) for cid in range(100, 150)]          # the note is not among them
    lexical = [(42, 11.4)] + [(cid, 1.3) for cid in range(149, 100, -1)]
    plain = rrf([c for c, _ in dense], [c for c, _ in lexical])
    plain_order = [c for c, _ in sorted(plain.items(), key=lambda kv: -kv[1])]
    assert plain_order.index(42) >= 10      # rank fusion alone buries it (the bug)
    fused = fuse(dense, lexical, method="rrf")
    assert fused[0][0] == 42
    assert fused[0][1] > fused[1][1]         # its shown score says it is first
    # everything else keeps its fused order
    assert [c for c, _ in fused[1:]] == [c for c in plain_order if c != 42]
    # score fusion (the default) pins it too
    assert fuse(dense, lexical)[0][0] == 42


def test_score_fusion_keeps_the_distance_between_candidates():
    from indexer.search import fuse_scores

    dense = [(1, 0.80), (2, 0.79), (3, 0.20)]
    lexical = [(3, 10.0), (2, 1.0)]
    out = dict(fuse_scores(dense, lexical, alpha=0.4))
    assert out[3] == pytest.approx(0.6)                      # BM25's best, the worst cosine
    assert out[1] == pytest.approx(0.4)                      # the best cosine, no BM25 hit
    assert out[2] == pytest.approx(0.4 * 0.59 / 0.6 + 0.06)


def test_a_unique_marker_is_found_among_400_similar_notes(tmp_path, make_index):
    idx = _notes_index(tmp_path, make_index)
    for marker in ("token-0150-zq", "token-0007-zq", "token-0399-zq"):
        hits = idx.search(marker, k=5)
        assert hits and hits[0].path.endswith(f"note-{marker[6:10]}.md"), (
            marker, [h.path.rsplit("/", 1)[-1] for h in hits])
    # without the pinning, the same index buries the note: this is what the test guards
    vectors = idx._vectors_index()
    qv = idx.embedder.encode(["token-0150-zq"])[0]
    dense, lexical = search.scored_rankings(vectors, qv, "token-0150-zq", 50)
    note = lexical[0][0]
    assert note not in {d for d, _ in dense}      # one word of ~150: dense does not see it
    plain = [c for c, _ in fuse([d for d, _ in dense], [x for x, _ in lexical])]
    assert plain.index(note) >= 3                 # measured: 6th-8th of the rank-fused list


@pytest.mark.parametrize("query", ["what was decided about the server migration",
                                   "garden watering plan"])
def test_questions_in_words_pin_nothing(tmp_path, make_index, query):
    folder = tmp_path / "notes"
    folder.mkdir()
    for name, text in list(_notes().items())[:60]:
        (folder / name).write_text(text)
    idx = make_index()
    idx.add_root(folder)
    idx.update()
    vectors = idx._vectors_index()
    _, lexical = search.scored_rankings(vectors, None, query, 50)
    assert lexical and lexical_winners(lexical) == []


def test_the_chosen_fusion_constants_are_the_defaults():
    """The constants bench/bench_relevance.py chose leave-one-corpus-out (alpha 0.5, a
    lexical winner 1.5x above the next hit) are what search runs with by default."""
    from indexer.search import ALPHA, fuse_scores, lexical_winners

    dense, lexical = [(1, 0.9), (2, 0.5)], [(2, 10.0), (1, 5.0)]
    assert dict(fuse_scores(dense, lexical)) == dict(fuse_scores(dense, lexical, alpha=ALPHA))
    assert fuse_scores(dense, lexical)[0][1] == pytest.approx(ALPHA * 1.0 + (1 - ALPHA) * 0.5)
    assert lexical_winners([(1, 1.6), (2, 1.0), (3, 0.5)]) == [1]      # 1.6x above the next
    assert lexical_winners([(1, 1.4), (2, 1.0), (3, 0.9), (4, 0.8)]) == []   # no 1.5x gap


class _Vectors:
    """Exact cosine search over a few known unit vectors (the logic of feedback_dense;
    the real hnswlib index is in the test after this one)."""

    def __init__(self, rows: dict[int, list[float]]) -> None:
        import numpy as np

        self.ids = list(rows)
        self.size = 10_000                # the index these few stand for (FEEDBACK_MIN_CHUNKS)
        m = np.array([rows[i] for i in self.ids], dtype=np.float32)
        self.m = m / np.linalg.norm(m, axis=1, keepdims=True)

    def __len__(self) -> int:
        return self.size

    def vectors_of(self, ids):  # noqa: ANN001, ANN201
        if any(i not in self.ids for i in ids):
            raise KeyError(ids)
        return self.m[[self.ids.index(i) for i in ids]]

    def knn(self, vec, k):  # noqa: ANN001, ANN201
        sims = self.m @ vec
        order = sorted(range(len(self.ids)), key=lambda j: -sims[j])[:k]
        return [(self.ids[j], float(sims[j])) for j in order]


def test_feedback_brings_in_what_the_first_passages_are_near():
    import numpy as np

    from indexer.search import feedback_dense, feedback_vector

    # the query (x) words it differently from its answer (3): the passages found first
    # (1, 2) lean toward the answer's wording (y); 4 leans away from it (z)
    vectors = _Vectors({1: [0.9, 0.44, 0.0], 2: [0.8, 0.6, 0.0], 3: [0.45, 0.89, 0.0],
                        4: [0.6, 0.0, 0.8]})
    q = np.array([1.0, 0.0, 0.0], dtype=np.float32)
    assert [c for c, _ in vectors.knn(q, 4)] == [1, 2, 4, 3]          # without: 3 is last
    moved = feedback_vector(q, vectors.vectors_of([1, 2]), 1.0)
    assert np.linalg.norm(moved) == pytest.approx(1.0)
    assert moved @ vectors.vectors_of([3])[0] > q @ vectors.vectors_of([3])[0]
    again = feedback_dense(vectors, q, [(1, 1.0), (2, 0.9)], 4, feedback_depth=2, weight=1.0)
    assert [c for c, _ in again].index(3) < [c for c, _ in again].index(4)
    # nothing to feed back: no query vector, weight 0, or no passage with a vector
    assert feedback_dense(vectors, None, [(1, 1.0)], 4) is None
    assert feedback_dense(vectors, q, [(1, 1.0)], 4, weight=0.0) is None
    assert feedback_dense(vectors, q, [(99, 1.0)], 4) is None
    # a passage without a vector (added since the snapshot) is left out of the mean
    assert feedback_dense(vectors, q, [(99, 1.0), (1, 0.9), (2, 0.8)], 4, feedback_depth=3) == again
    assert np.array_equal(feedback_vector(q, np.zeros((0, 3)), 1.0), q)
    # a small index: the first passages would be a large share of it, their mean the
    # index's own (FEEDBACK_MIN_CHUNKS)
    vectors.size = search.FEEDBACK_MIN_CHUNKS - 1
    assert feedback_dense(vectors, q, [(1, 1.0), (2, 0.9)], 4, feedback_depth=2, weight=1.0) is None
    vectors.size = search.FEEDBACK_MIN_CHUNKS
    assert feedback_dense(vectors, q, [(1, 1.0), (2, 0.9)], 4, feedback_depth=2, weight=1.0) == again


def test_search_feeds_the_first_passages_back_on_a_real_index(tmp_path, make_index, monkeypatch):
    import numpy as np

    idx = _notes_index(tmp_path, make_index)
    vectors = idx._vectors_index()
    query = "what was decided about the server migration"
    qv = idx.embedder.encode([query])[0]
    dense, lexical = search.scored_rankings(vectors, qv, query, 50)
    fused = fuse(dense, lexical)
    again = search.feedback_dense(vectors, qv, fused, 50)
    # the real hnswlib index searched again from the moved vector: its order is the
    # cosine to that vector (within HNSW's approximation: the first 10 exactly)
    moved = search.feedback_vector(qv, vectors.vectors_of([c for c, _ in fused[:search.FEEDBACK_DEPTH]]))
    sims = vectors.vectors_of([c for c, _ in again]) @ moved
    assert [round(s, 4) for _, s in again[:10]] == [round(float(s), 4) for s in sims[:10]]
    assert again != dense
    # Index.search runs it, at the chosen constants
    seen = []
    real = search.feedback_dense

    def spy(*args, **kwargs):  # noqa: ANN002, ANN003, ANN202
        seen.append(kwargs.get("weight"))
        return real(*args, **kwargs)

    monkeypatch.setattr(search, "feedback_dense", spy)

    def judge(q, passages):  # noqa: ANN001, ANN202 - every passage alike: the fused order stays
        return [0.0] * len(passages)

    hits = idx.search(query, k=5, judge=judge)
    assert seen == [search.FEEDBACK_WEIGHT] and len(hits) == 5
    assert (search.FEEDBACK_DEPTH, search.FEEDBACK_WEIGHT) == (15, 1.0)
    assert np.isfinite([h.score for h in hits]).all()
    # with the judge, the order is the fused order of the fed-back dense side and BM25
    expected = fuse(search.feedback_dense(vectors, qv, fused, 50), lexical)
    assert [h.chunk_id for h in hits] == [c for c, _ in expected[:5]]
    # without a judge (the second stage off) search does without feedback: measured, it
    # loses there (bench/query_feedback.py)
    seen.clear()
    plain = idx.search(query, k=5)
    assert seen == [] and [h.chunk_id for h in plain] == [c for c, _ in fused[:5]]
