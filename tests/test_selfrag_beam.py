"""Long answers (SELFRAG.md sections 3 and 5) against the scripted model: the loop as the
model was trained, the segment beam search, and where each sentence's label comes from.

In training an answer is ONE sequence, `[Retrieval]<paragraph>P1</paragraph>[Relevant] s1
[Fully supported][Continue to Use Evidence] s2 [No Retrieval] s3 [Retrieval]<paragraph>P2
...`: only a request for new evidence ends a segment. The scripted continuations below
are written with `contains=<passage text>`, so the model only writes them while that
passage is in its context.
"""

from __future__ import annotations

import pytest

from localrag.answering.judge.scoring import Weights
from models.scripted import EOS, ScriptedModel

try:   # tests/ is not a package; pytest puts it on sys.path (rootdir-relative fallback)
    from selfrag_helpers import FULL, RELEVANT, Retriever, engine, passage, question_model
except ImportError:  # pragma: no cover
    from tests.selfrag_helpers import FULL, RELEVANT, Retriever, engine, passage, question_model

EXACT = 1e-12
NO_SEQ = Weights(use_seq=False)
ASK = [{"[Retrieval]": 1.0}]                      # end a segment asking for new evidence
PARTIAL = {"[Partially supported]": 1.0}
HALF = {"[Relevant]": 0.5, "[Irrelevant]": 0.5}
END = [{"[Utility:5]": 1.0}, {EOS: 1.0}]
CONTINUE = "[Continue to Use Evidence]"


def rows(ans) -> list[tuple]:
    return [(s.text, s.label, s.citation, s.label_source) for s in ans.segments]


# --- the beam search -------------------------------------------------------------------

def two_level_model() -> tuple[ScriptedModel, Retriever]:
    """Depth 1: a1 1.9, a2 1.8, a3 1.0 (keep a1, a2). Depth 2 (b1..b3 for each beam):
    under a1 every child scores 1.5 (mean 1.7); under a2 2.4, 2.15, 1.5 (means 2.1,
    1.975, 1.65), so both survivors descend from the lower-scored parent a2."""
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


def test_beam_search_grows_past_depth_one_and_keeps_best_b_by_mean_score():
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
    assert [n.score for n in depth1] == pytest.approx([1.9, 1.8, 1.0], abs=EXACT)
    assert [n.kept for n in depth1] == [True, True, False]
    assert len(depth2) == 6                       # K = 3 children for each of B = 2 beams
    for n in depth2:                              # the beam score is the mean segment score
        assert n.scored == 2
        assert n.score == pytest.approx((nodes[n.parent].score + n.segment_score) / 2, abs=EXACT)
    assert sorted(n.score for n in depth2) == pytest.approx(
        sorted([1.7, 1.7, 1.7, 2.1, 1.975, 1.65]), abs=1e-9)
    kept = [n for n in depth2 if n.kept]
    assert [round(n.score, 9) for n in kept] == [2.1, 1.975]
    assert {nodes[n.parent].passage for n in kept} == {1}   # both from a2, the lower parent

    # one generate call per expansion, K branches each: 1 at depth 1, 2 at depth 2
    assert [len(c.branches) for c in m.calls] == [3, 3, 3]
    prompt = m.calls[0].prefix
    for call, seg in zip(m.calls[1:], ["Alpha one.", "Alpha two."]):
        # the child's context: the parent's prompt + its segment with reflection tokens,
        # without the earlier passage and without the [Retrieval] it stopped at
        tail = call.prefix[len(prompt):]
        assert call.prefix[: len(prompt)] == prompt
        assert [m.piece(t) for t in tail] == [
            "[Relevant]", *m.pieces(seg), "[Fully supported]"]
        assert "a1text" not in m.detokenize(call.prefix)
        assert all(m.piece(b[0]) == "[Retrieval]" for b in call.branches)
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


def test_a_finished_answer_is_not_beaten_by_a_beam_that_only_goes_on_longer():
    """A finished short answer (2.5) against a beam scoring 2.0 then 2.5: the product of
    the paper (5.0) picks the longer beam whatever its quality; the mean (2.25) does not."""
    m = question_model()
    m.on_passage("short", isrel=RELEVANT, text="Short answer.", issup=FULL)      # 2.5, EOS
    m.on_passage("long", isrel=RELEVANT, text="Long start.", issup=FULL, end=ASK)  # 2.0
    m.on_passage(("more", "Long start"), isrel=RELEVANT, text="Long end.", issup=FULL)  # 2.5
    r = Retriever([passage(1, "short text"), passage(2, "long text")], [passage(3, "more text")])
    e = engine(m, k=2, beam_width=2, weights=NO_SEQ)
    ans = e.answer("Q?", retrieve=r)
    assert ans.text == "Short answer."
    by_text = {n.id: n for n in e.last_trace}
    finished = [n for n in e.last_trace if n.finished and n.passage is not None]
    assert [(n.depth, round(n.score, 9)) for n in finished] == [(1, 2.5), (2, 2.25)]
    deep = [n for n in e.last_trace if n.depth == 2][0]
    assert by_text[deep.parent].segment_score * deep.segment_score == pytest.approx(5.0)
    assert len(r.queries) == 2                    # the long beam was still expanded


def test_depth_limit_stops_and_says_so():
    m = question_model()
    m.on_passage("a1text", isrel=RELEVANT, text="Alpha one.", issup=FULL, end=ASK)
    ans = engine(m, k=1, max_segments=1).answer("Q?", retrieve=Retriever([passage(1, "a1text")]))
    assert ans.text == "Alpha one."
    assert any("limit of 1 segments" in n for n in ans.notes)
    assert len(m.calls) == 1


# --- [Continue to Use Evidence] and [No Retrieval]: the same sequence goes on -----------

def test_continue_to_use_evidence_goes_on_with_the_passage_in_context():
    m = question_model()
    # r = p(Retrieval) / (p(Retrieval) + p(Continue) + p(No Retrieval)) = 0.15 <= 0.2
    m.on_passage("a1text", isrel=RELEVANT, text="Alpha one.", issup=FULL,
                 end=[{CONTINUE: 0.7, "[Retrieval]": 0.15, "[No Retrieval]": 0.15},
                      *m.words(" Alpha more."), *END])
    m.on_passage("b1text", isrel=RELEVANT, text="Wrong turn.", issup=FULL)  # a new passage
    r = Retriever([passage(1, "a1text")], [passage(2, "b1text")])
    ans = engine(m, k=1, beam_width=1).answer("Q?", retrieve=r)
    assert rows(ans) == [("Alpha one.", "fully", 0, "own"),
                         ("Alpha more.", "fully", 0, "segment")]   # cites the passage in use
    assert len(r.queries) == 1 and len(m.calls) == 1     # no new retrieval, one sequence
    assert [j.passage.text for j in ans.passages] == ["a1text"]


def test_no_retrieval_mid_answer_goes_on_in_the_same_sequence():
    m = question_model()
    m.on_passage("a1text", isrel=RELEVANT, text="Alpha one.", issup=FULL,
                 end=[{"[No Retrieval]": 0.9, "[Retrieval]": 0.1},     # r = 0.1 <= 0.2
                      *m.words(" Then more."), *END])
    r = Retriever([passage(1, "a1text")])
    e = engine(m, k=1, beam_width=1, weights=NO_SEQ)
    ans = e.answer("Q?", retrieve=r)
    assert rows(ans) == [("Alpha one.", "fully", 0, "own"),
                         ("Then more.", "no_retrieval", None, "retrieval")]
    assert len(r.queries) == 1 and len(m.calls) == 1
    # one segment: rel 1 + sup 1 + use 0.5 (the Utility token after "Then more.")
    (seg_node,) = [n for n in e.last_trace if n.depth == 1]
    assert seg_node.segment_score == pytest.approx(2.5, abs=EXACT) and seg_node.finished


def threshold_model() -> tuple[ScriptedModel, Retriever]:
    """After "Alpha one." the model writes [Continue to Use Evidence] (0.5), with
    p([Retrieval]) = 0.3: r = 0.3 over the whole Retrieve group."""
    m = question_model()
    m.on_passage("a1text", isrel=RELEVANT, text="Alpha one.", issup=FULL,
                 end=[{CONTINUE: 0.5, "[Retrieval]": 0.3, "[No Retrieval]": 0.2},
                      *m.words(" Alpha more."), *END])
    m.on_passage(("b1text", "Alpha one"), isrel=RELEVANT, text="Bravo one.", issup=FULL)
    return m, Retriever([passage(1, "a1text")], [passage(2, "b1text")])


def test_adaptive_threshold_at_a_retrieve_group_position_fetches_new_passages():
    m, r = threshold_model()
    ans = engine(m, k=1, beam_width=1, threshold=0.2).answer("Q?", retrieve=r)
    assert rows(ans) == [("Alpha one.", "fully", 0, "own"), ("Bravo one.", "fully", 1, "own")]
    assert r.queries == [("Q?", 1), ("Q? Alpha one.", 1)]
    first, second = m.calls
    # the segment ends where the threshold said retrieve: its context drops the passage
    # and the model's [Continue...]; the new branch starts with [Retrieval]
    tail = second.prefix[len(first.prefix):]
    assert [m.piece(t) for t in tail] == ["[Relevant]", "Alpha", " one", ".", "[Fully supported]"]
    assert m.piece(second.branches[0][0]) == "[Retrieval]"
    assert "a1text" not in m.detokenize(second.prefix)


@pytest.mark.parametrize("mode, threshold", [("adaptive", 0.4), ("always", 0.2)])
def test_below_the_threshold_or_in_always_mode_continue_does_not_retrieve(mode, threshold):
    m, r = threshold_model()
    ans = engine(m, k=1, beam_width=1, mode=mode, threshold=threshold).answer("Q?", retrieve=r)
    assert rows(ans) == [("Alpha one.", "fully", 0, "own"), ("Alpha more.", "fully", 0, "segment")]
    assert len(r.queries) == 1 and len(m.calls) == 1


def test_retrieval_token_the_threshold_turns_down_goes_on_with_the_passage():
    """Adaptive, threshold 0.6: the model writes [Retrieval] (0.5) but r = 0.5 <= 0.6, so
    the likelier of the other two, [Continue to Use Evidence], is written instead."""
    m = question_model()
    m.on_passage("a1text", isrel=RELEVANT, text="Alpha one.", issup=FULL,
                 end=[{"[Retrieval]": 0.5, CONTINUE: 0.3, "[No Retrieval]": 0.2}])
    m.script([*m.words(" Alpha more."), *END], after=[CONTINUE], contains="a1text")
    r = Retriever([passage(1, "a1text")])
    ans = engine(m, k=1, beam_width=1, threshold=0.6).answer("Q?", retrieve=r)
    assert rows(ans) == [("Alpha one.", "fully", 0, "own"), ("Alpha more.", "fully", 0, "segment")]
    assert len(r.queries) == 1 and len(m.calls) == 1


def test_never_mode_mid_answer_replaces_a_retrieval_request_and_goes_on():
    m = question_model()
    m.on_no_retrieval("Own.")
    # after "[No Retrieval] Own." the model asks for evidence (added last: this rule wins)
    m.rule({"[Retrieval]": 1.0}, after=["[No Retrieval]", "Own", "."])
    m.on_no_retrieval(" More.", contains="Own.")
    r = Retriever([passage(1, "a1text")])
    ans = engine(m, mode="never").answer("Q?", retrieve=r)
    assert r.queries == []
    assert rows(ans) == [("Own.", "no_retrieval", None, "retrieval"),
                         ("More.", "no_retrieval", None, "retrieval")]
    assert len(m.calls) == 1                          # [No Retrieval] was written instead
    assert [m.piece(t) for t in m.calls[0].branches[0]] == ["[No Retrieval]"]


# --- where each label comes from ----------------------------------------------------------

def test_each_sentence_says_where_its_label_came_from():
    m = question_model()
    m.on_passage("a1text", isrel=RELEVANT, text="Alpha one. Alpha two.", issup=PARTIAL,
                 end=[{CONTINUE: 1.0}, *m.words(" Alpha three."),
                      {"[No Retrieval]": 1.0}, *m.words(" Own four."), *END])
    ans = engine(m, k=1, beam_width=1).answer("Q?", retrieve=Retriever([passage(1, "a1text")]))
    assert rows(ans) == [
        ("Alpha one.", "partially", 0, "segment"),    # same span, the token after it
        ("Alpha two.", "partially", 0, "own"),        # the IsSup token right after it
        ("Alpha three.", "partially", 0, "segment"),  # after Continue: the token before
        ("Own four.", "no_retrieval", None, "retrieval"),
    ]
    js = ans.to_json()["segments"]
    assert [s["label_source"] for s in js] == ["segment", "own", "segment", "retrieval"]


def test_irrelevant_passage_without_isup_token_is_unjudged():
    m = question_model()
    m.on_passage("z1text", isrel={"[Irrelevant]": 1.0}, text="Zed.", issup=None)
    ans = engine(m, k=1).answer("Q?", retrieve=Retriever([passage(1, "z1text")]))
    assert rows(ans) == [("Zed.", "none", 0, "unjudged")]
    assert ans.passages[0].relevant is False


def test_fallback_critic_labels_sentences_without_their_own_token(embedder):
    """The real embedding + lexical critic judges the sentences written after
    [Continue to Use Evidence] against the passage in use; the model's own token stays."""
    from localrag.answering.judge.critics import EmbeddingCritic
    from localrag.answering.generate.selfrag import EngineConfig, SelfRagEngine

    text = "The lease on the flat ends on 30 June 2025. The rent is 900 euros a month."
    m = question_model()
    m.on_passage("lease on the flat", isrel=RELEVANT, text="The lease ends on 30 June 2025.",
                 issup=FULL,
                 end=[{CONTINUE: 1.0}, *m.words(" The rent is 900 euros a month."),
                      {CONTINUE: 1.0}, *m.words(" The landlord owns three boats."), *END])
    e = SelfRagEngine(m, config=EngineConfig(k=1, beam_width=1),
                      critic=EmbeddingCritic(embedder.encode))
    streamed: list = []
    ans = e.answer("Q?", retrieve=Retriever([passage(1, text)]), on_segment=streamed.append)
    assert rows(ans) == [
        ("The lease ends on 30 June 2025.", "fully", 0, "own"),
        ("The rent is 900 euros a month.", "fully", 0, "critic"),
        ("The landlord owns three boats.", "none", 0, "critic"),
    ]
    assert [(s.label, s.label_source) for s in streamed] == [
        (s.label, s.label_source) for s in ans.segments]       # labelled before streaming
    assert any("fallback critic (embedding+lexical)" in n for n in ans.notes)


def test_no_retrieval_answer_that_asks_for_evidence_later_fetches_it_and_says_so():
    m = question_model(p_yes=0.1, p_no=0.9)                 # the decision: no retrieval
    m.on_no_retrieval("Own.", end=[{"[Retrieval]": 0.9, "[No Retrieval]": 0.1}])
    m.on_passage(("b1text", "Own."), isrel=RELEVANT, text="Bravo one.", issup=FULL)
    r = Retriever([passage(2, "b1text")])
    ans = engine(m, k=1, beam_width=1).answer("Q?", retrieve=r)
    assert rows(ans) == [("Own.", "no_retrieval", None, "retrieval"),
                         ("Bravo one.", "fully", 0, "own")]
    assert ans.decision.retrieved is False and r.queries == [("Q? Own.", 1)]
    assert any("asked for evidence later" in n for n in ans.notes)
