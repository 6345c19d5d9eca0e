"""The learned ranker (indexer/learned_rank.py) with its shipped weights, on a real index
(the real embedder, SQLite and hnswlib), and the window it reads of a long passage."""

from __future__ import annotations

import json

import numpy as np
import pytest

from indexer.learned_rank import FEATURES, WEIGHTS_FILE, LearnedRanker
from indexer.passage_window import focus_window


def test_focus_window_keeps_the_part_that_matches():
    filler = " ".join(f"word{i}" for i in range(300))
    text = filler + " the wal sender limit is set by max_wal_senders here " + filler
    win = focus_window("what limits wal senders", text, words=40)
    assert len(win.split()) == 40
    assert "max_wal_senders" in win and "sender" in win
    assert text.find(win) >= 0                      # a verbatim slice of the text
    assert focus_window("anything", "short text") == "short text"


def test_the_shipped_weights_say_what_they_were_fitted_on():
    info = json.loads(WEIGHTS_FILE.read_text())
    assert info["features"] == list(FEATURES)
    assert info["training_corpora"] == ["git", "kernel", "rust", "vim"]   # postgres, debref left out
    assert info["questions"] >= 500
    r = LearnedRanker()
    # the two signals every first stage has must count for relevance, not against it
    w = dict(zip(FEATURES, r.w))
    assert w["cos"] > 0 and w["bm25"] > 0 and w["title_cover"] > 0


def test_logits_follow_the_weights():
    r = LearnedRanker()
    x = np.tile(r.mean, (3, 1))
    x[1] += r.std            # one standard deviation up on every feature
    x[2] -= r.std
    z = r.logits(x)
    assert z[0] == pytest.approx(0.0, abs=1e-5)
    assert z[1] == pytest.approx(float(r.w.sum()), rel=1e-4)
    assert z[1] > z[0] > z[2]
    assert len(r.logits(np.zeros((0, len(FEATURES)), dtype=np.float32))) == 0


def test_a_ranker_fitted_on_other_features_is_refused(tmp_path):
    from indexer.errors import RerankerError

    bad = json.loads(WEIGHTS_FILE.read_text())
    bad["features"] = ["cos"]
    path = tmp_path / "ranker.json"
    path.write_text(json.dumps(bad))
    with pytest.raises(RerankerError, match="fitted on other features"):
        LearnedRanker(path)
    path.write_text("{not json")
    with pytest.raises(RerankerError, match="Cannot read the ranking model") as err:
        LearnedRanker(path)
    assert "rerank = false" in str(err.value)


def test_reranked_search_on_a_real_index(tmp_path, make_index):
    from test_search_fusion import _notes

    folder = tmp_path / "notes"
    folder.mkdir()
    for name, text in list(_notes().items())[:60]:
        (folder / name).write_text(text)
    (folder / "insurance.md").write_text(
        "# Car insurance\n\nThe car insurance renewal is due on 3 May; we chose the "
        "comprehensive cover with a 300 euro excess.\n")
    idx = make_index()
    idx.add_root(folder)
    idx.update()
    question = "which excess did we pick for the car insurance renewal?"
    plain = idx.search(question, k=5)
    ranked = idx.search(question, k=5, rerank=True)
    assert ranked[0].path.endswith("insurance.md")
    assert {h.chunk_id for h in ranked} <= {h.chunk_id for h in idx.search(question, k=20)}
    assert [h.score for h in ranked] == sorted((h.score for h in ranked), reverse=True)
    assert plain[0].score != ranked[0].score      # the ranker's logits, not fused scores
    # an exact match stays first: pinned lexical winners are never reordered
    hits = idx.search("token-0042-zq", k=5, rerank=True)
    assert hits[0].path.endswith("note-0042.md")
