"""Search's second stage (issue 17): the fused top 20 reordered by what localrag's relevance
model makes of each passage's sentences (indexer.search.rerank_judged with
localrag.answering.passage_judge.SentenceJudge), with BM25's exact-match winners kept first.

Measured on five documentation corpora (bench/judged_recall.py --sentence-rerank): the
answer is in the first five more often on each; these tests hold the mechanism, a real
case of it on git's own manuals, and the exact-lookup guarantee with the real model."""

from __future__ import annotations

import shutil
from pathlib import Path

import pytest

from indexer.search import JUDGE_DEPTH, JUDGE_WEIGHT, rerank_judged

DATA = Path(__file__).resolve().parent / "data"
QUESTION = "how do I undo a commit that was already pushed without rewriting history?"


def _git_manuals(tmp_path: Path) -> Path:
    """A folder of git's real manual pages (tests/data/git_docs and gitdocs)."""
    docs = tmp_path / "docs"
    docs.mkdir()
    for folder in ("git_docs", "gitdocs"):
        for f in (DATA / folder).glob("*.txt"):
            shutil.copy(f, docs / f.name)
    return docs


def _rows(ids):
    return {cid: (cid, f"/f{cid}.md", f"f{cid}.md", f"text {cid}") for cid in ids}


def test_the_judge_adds_to_the_fused_score_and_never_moves_a_pinned_winner():
    fused = [(7, 1.0), (1, 0.9), (2, 0.8), (3, 0.5), (4, 0.4)]
    probs = {7: 0.0, 1: 0.1, 2: 0.2, 3: 0.9, 4: 0.3}
    seen = []

    def judge(query, passages):
        seen.append((query, list(passages)))
        return [probs[int(text.split()[1])] for _, text in passages]

    order, scores = rerank_judged(judge, "q", fused, _rows(probs), weight=1.0, keep_first=[7])
    assert order[0] == 7                          # the exact match stays first
    assert order[1:] == [3, 1, 2, 4]              # 0.5 + 0.9 beats 0.9 + 0.1
    assert scores[3] == pytest.approx(0.5 + 0.9) and scores[1] == pytest.approx(0.9 + 0.1)
    assert seen == [("q", [(f"f{c}.md", f"text {c}") for c, _ in fused])]
    # only the first `depth` are read; the rest keep their fused order behind them
    order, scores = rerank_judged(judge, "q", fused, _rows(probs), depth=3, weight=2.0, keep_first=[])
    assert order == [2, 1, 7, 3, 4] and set(scores) == {7, 1, 2}
    assert rerank_judged(judge, "q", [], {}, keep_first=[]) == ([], {})


def test_the_shipped_constants():
    """beta and the depth chosen leave-one-corpus-out on judged recall (README)."""
    assert (JUDGE_DEPTH, JUDGE_WEIGHT) == (20, 0.5)


@pytest.fixture(scope="module")
def judge():
    from indexer.relevance_model import shipped_probabilities
    from localrag.answering.passage_judge import SentenceJudge

    answers = shipped_probabilities()
    assert answers is not None, "the shipped relevance model is missing"
    return SentenceJudge(answers)


def test_a_passage_is_judged_by_its_most_answering_sentence(judge):
    q = QUESTION
    revert = ("git-revert.txt > git-revert(1)",
              "Given one or more existing commits, revert the changes that the related patches\n"
              "introduce, and record some new commits that record them. This requires your\n"
              "working tree to be clean (no modifications from the HEAD commit).\n")
    stash = ("git-stash.txt > git-stash(1) > COMMANDS",
             "Remove a single stash entry from the list of stash entries.\n")
    empty = ("notes.md", "----\n")
    got = judge(q, [revert, stash, empty])
    assert len(got) == 3 and got[2] == 0.0        # nothing quotable: nothing found
    assert got[0] > got[1]


def test_the_judge_brings_the_answering_page_up_on_gits_manuals(tmp_path, make_index, judge):
    """Real pages, the real model: "undo a pushed commit without rewriting history" is
    git-revert's job. Fused, its page is 5th (cherry-pick and stash pages share more
    words); judged, it leads by 0.058 in score, 0.12 in the judge's probability (well beyond
    the 0.02 that int8 kernels of other CPUs move the model's probabilities)."""
    docs = _git_manuals(tmp_path)
    from indexer.options import IndexOptions

    idx = make_index(IndexOptions())          # the chunks a person's index has
    idx.add_root(docs)
    idx.update()
    q = QUESTION
    fused = [p.path.rsplit("/", 1)[-1] for p in idx.search(q, k=3)]
    judged = idx.search(q, k=3, judge=judge)
    assert "git-revert.txt" not in fused
    assert judged[0].path.endswith("git-revert.txt")
    assert judged[0].score >= judged[1].score >= judged[2].score   # the score shown is the order


def test_an_exact_marker_stays_first_whatever_the_judge_says(tmp_path, make_index, judge):
    from test_search_fusion import _notes_index

    idx = _notes_index(tmp_path, make_index)
    for marker in ("token-0150-zq", "token-0007-zq"):
        hits = idx.search(marker, k=5, judge=judge)
        assert hits[0].path.endswith(f"note-{marker[6:10]}.md")
        assert hits[0].score > hits[1].score


def test_the_assistant_searches_with_the_judge_unless_the_setting_is_off(tmp_path, embedder):
    from localrag.assistant import Assistant
    from localrag.paths import Paths
    from localrag.settings import Settings

    docs = _git_manuals(tmp_path)
    q = QUESTION
    assert Settings().relevance_rerank is True
    with Assistant(paths=Paths.resolve(tmp_path / "data"), settings=Settings(), embedder=embedder) as a:
        a.add_root(docs)
        a.update_index()
        assert a.search(q, k=3)[0].path.endswith("git-revert.txt")
        a.update_settings(relevance_rerank=False)
        assert not any(p.path.endswith("git-revert.txt") for p in a.search(q, k=3))
