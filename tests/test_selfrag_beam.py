"""Segment-level beam search (SELFRAG.md section 5) against the scripted model."""

from __future__ import annotations

import pytest

from localrag.scoring import Weights
from models.scripted import ScriptedModel

try:   # tests/ is not a package; pytest puts it on sys.path (rootdir-relative fallback)
    from selfrag_helpers import FULL, RELEVANT, Retriever, engine, passage, question_model
except ImportError:  # pragma: no cover
    from tests.selfrag_helpers import FULL, RELEVANT, Retriever, engine, passage, question_model

EXACT = 1e-12
NO_SEQ = Weights(use_seq=False)
ASK = [{"[Retrieval]": 1.0}]                      # end a segment asking for new evidence
PARTIAL = {"[Partially supported]": 1.0}
HALF = {"[Relevant]": 0.5, "[Irrelevant]": 0.5}


def two_level_model() -> tuple[ScriptedModel, Retriever]:
    """Depth 1: a1 1.9, a2 1.8, a3 1.0 (keep a1, a2). Depth 2 (b1..b3 for each beam):
    under a1 every child scores 1.5 (-> 2.85); under a2 2.4, 2.15, 1.5 (-> 4.32, 3.87, 2.7),
    so both survivors descend from the lower-scored parent a2."""
    m = question_model()
    m.on_passage("a1text", isrel={"[Relevant]": 0.9, "[Irrelevant]": 0.1}, text="Alpha one.",
                 issup=FULL, end=ASK)
    m.on_passage("a2text", isrel={"[Relevant]": 0.8, "[Irrelevant]": 0.2}, text="Alpha two.",
                 issup=FULL, end=ASK)
    m.on_passage("a3text", isrel=HALF, text="Alpha three.", issup=PARTIAL, end=ASK)
    for b in ("b1text", "b2text", "b3text"):
        m.on_passage((b, "Alpha one"), isrel=HALF, text=f"Under one {b[:2]}.", issup=PARTIAL)
    m.on_passage(("b1text", "Alpha two"), isrel={"[Relevant]": 0.9, "[Irrelevant]": 0.1},
                 text="Bravo one.", issup=FULL)
    m.on_passage(("b2text", "Alpha two"), isrel={"[Relevant]": 0.9, "[Irrelevant]": 0.1},
                 text="Bravo two.",
                 issup={"[Fully supported]": 0.5, "[Partially supported]": 0.5})
    m.on_passage(("b3text", "Alpha two"), isrel=HALF, text="Bravo three.", issup=PARTIAL)
    r = Retriever([passage(1, "a1text"), passage(2, "a2text"), passage(3, "a3text")],
                  [passage(4, "b1text"), passage(5, "b2text"), passage(6, "b3text")])
    return m, r


def test_beam_search_grows_past_depth_one_and_keeps_best_b():
    m, r = two_level_model()
    e = engine(m, k=3, beam_width=2, weights=NO_SEQ)
    delivered: list = []
    calls_at_delivery: list[int] = []

    def on_segment(seg):
        delivered.append(seg)
        calls_at_delivery.append(len(m.calls))

    ans = e.answer("Q?", retrieve=r, on_segment=on_segment)
    assert ans.text == "Alpha two. Bravo one."
    assert [s.citation for s in ans.segments] == [1, 3]
    assert [ans.passages[s.citation].passage.text for s in ans.segments] == ["a2text", "b1text"]
    assert [s.label for s in ans.segments] == ["fully", "fully"]

    nodes = {n.id: n for n in e.last_trace}
    depth1 = [n for n in e.last_trace if n.depth == 1]
    depth2 = [n for n in e.last_trace if n.depth == 2]
    assert [n.segment_score for n in depth1] == pytest.approx([1.9, 1.8, 1.0], abs=EXACT)
    assert [n.kept for n in depth1] == [True, True, False]
    assert len(depth2) == 6                       # K = 3 children for each of B = 2 beams
    for n in depth2:
        assert n.score == pytest.approx(nodes[n.parent].score * n.segment_score, abs=EXACT)
    assert sorted(n.score for n in depth2) == pytest.approx(
        sorted([2.85, 2.85, 2.85, 4.32, 3.87, 2.7]), abs=1e-9)
    kept = [n for n in depth2 if n.kept]
    assert [round(n.score, 9) for n in kept] == [4.32, 3.87]
    assert {nodes[n.parent].passage for n in kept} == {1}   # both from a2, the lower parent

    # one generate call per expansion, K branches each: 1 at depth 1, 2 at depth 2
    assert [len(c.branches) for c in m.calls] == [3, 3, 3]
    prompt = m.calls[0].prefix
    for call, seg in zip(m.calls[1:], ["Alpha one.", "Alpha two."]):
        # the child's context: the parent's prompt + its segment with reflection tokens,
        # without the earlier passage and without the stop token
        tail = call.prefix[len(prompt):]
        assert call.prefix[: len(prompt)] == prompt
        assert [m.piece(t) for t in tail] == [
            "[Relevant]", *m.pieces(seg), "[Fully supported]"]
        assert "a1text" not in m.detokenize(call.prefix)
    assert r.queries == [("Q?", 3), ("Q? Alpha one.", 3), ("Q? Alpha two.", 3)]

    # streaming: nothing final until both beams agreed on a2 (after the 3rd call)
    assert delivered == ans.segments
    assert all(d is s for d, s in zip(delivered, ans.segments))
    assert calls_at_delivery == [3, 3]


def test_beam_width_one_streams_each_segment_when_chosen():
    m, r = two_level_model()
    delivered_after: list[int] = []
    ans = engine(m, k=3, beam_width=1, weights=NO_SEQ).answer(
        "Q?", retrieve=r, on_segment=lambda s: delivered_after.append(len(m.calls)))
    assert ans.text == "Alpha one. Under one b1."     # greedy: a1 (1.9) then its best child
    assert delivered_after == [1, 2]


def test_no_retrieval_mid_answer_continues_without_evidence():
    m = question_model()
    m.on_passage("a1text", isrel=RELEVANT, text="Alpha one.", issup=FULL,
                 end=[{"[No Retrieval]": 0.9, "[Retrieval]": 0.1}])   # r = 0.1 <= 0.2
    m.on_no_retrieval("Then more.", contains="Alpha one")
    r = Retriever([passage(1, "a1text")])
    e = engine(m, k=1, beam_width=1, weights=NO_SEQ)
    ans = e.answer("Q?", retrieve=r)
    assert [(s.text, s.label, s.citation) for s in ans.segments] == [
        ("Alpha one.", "fully", 0), ("Then more.", "no_retrieval", None)]
    assert len(r.queries) == 1
    last = m.calls[-1]
    assert [m.piece(t) for t in last.branches[0]] == ["[No Retrieval]"]
    # the no-evidence segment neither raises nor lowers its beam
    assert e.last_trace[-1].score == pytest.approx(e.last_trace[-2].score, abs=EXACT)
    assert ans.segments[1].scores.use == 1.0 and ans.segments[1].scores.rel is None


def test_continue_to_use_evidence_counts_as_retrieve_yes():
    m = question_model()
    # p(Retrieval) alone is 0.1 (< 0.2); with Continue counted as yes it is 0.6
    m.on_passage("a1text", isrel=RELEVANT, text="Alpha one.", issup=FULL,
                 end=[{"[Continue to Use Evidence]": 0.5, "[No Retrieval]": 0.4,
                       "[Retrieval]": 0.1}])
    m.on_passage(("b1text", "Alpha one"), isrel=RELEVANT, text="Bravo one.", issup=FULL)
    m.on_no_retrieval("Wrong turn.")
    r = Retriever([passage(1, "a1text")], [passage(2, "b1text")])
    ans = engine(m, k=1, beam_width=1).answer("Q?", retrieve=r)
    assert ans.text == "Alpha one. Bravo one."
    assert [s.citation for s in ans.segments] == [0, 1]
    assert r.queries[1] == ("Q? Alpha one.", 1)


def test_never_mode_mid_answer_does_not_retrieve():
    m = question_model()
    m.on_no_retrieval("Own.")
    # after "[No Retrieval] Own." the model asks for evidence (added last: this rule wins)
    m.rule({"[Retrieval]": 1.0}, after=["[No Retrieval]", "Own", "."])
    m.on_no_retrieval("More.", contains="Own.")
    r = Retriever([passage(1, "a1text")])
    ans = engine(m, mode="never").answer("Q?", retrieve=r)
    assert r.queries == []
    assert [(s.text, s.label) for s in ans.segments] == [
        ("Own.", "no_retrieval"), ("More.", "no_retrieval")]
    # the context keeps the first segment (minus the [Retrieval] it stopped at) and the
    # continuation starts with [No Retrieval]
    assert [m.piece(t) for t in m.calls[1].prefix[-3:]] == ["[No Retrieval]", "Own", "."]
    assert [m.piece(t) for t in m.calls[1].branches[0]] == ["[No Retrieval]"]


def test_depth_limit_stops_and_says_so():
    m = question_model()
    m.on_passage("a1text", isrel=RELEVANT, text="Alpha one.", issup=FULL, end=ASK)
    ans = engine(m, k=1, max_segments=1).answer("Q?", retrieve=Retriever([passage(1, "a1text")]))
    assert ans.text == "Alpha one."
    assert any("limit of 1 segments" in n for n in ans.notes)
    assert len(m.calls) == 1
