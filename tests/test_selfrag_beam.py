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

from localrag.answering.generate.selfrag import EngineConfig, SelfRagEngine
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
    """Depth 1 (no utility: each asks for evidence): a1 1.9, a2 1.8, a3 1.0 (keep a1,
    a2). Depth 2 (b1..b3 for each beam, each ending with [Utility:5], w_use 0.5): under
    a1 every child's terms are 1.0 (beam 1.45 + 0.25 = 1.95... see the test); under a2
    1.9, 1.65, 1.0, so both survivors descend from the lower-scored parent a2."""
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
    for n in depth2:
        # the mean of the per-segment terms (IsRel + IsSup here), plus w_use s_use once,
        # from the final segment: 0.5 x 1.0 for its [Utility:5]
        assert n.scored == 2 and n.finished and n.use == pytest.approx(1.0, abs=EXACT)
        terms = n.segment_score - 0.5
        assert n.base == pytest.approx((nodes[n.parent].base + terms) / 2, abs=EXACT)
        assert n.score == pytest.approx(n.base + 0.5, abs=EXACT)
    assert sorted(n.score for n in depth2) == pytest.approx(
        sorted([1.95, 1.95, 1.95, 2.35, 2.225, 1.9]), abs=1e-9)
    kept = [n for n in depth2 if n.kept]
    assert [round(n.score, 9) for n in kept] == [2.35, 2.225]
    assert {nodes[n.parent].passage for n in kept} == {1}   # both from a2, the lower parent

    # one generate call per expansion, K branches each: 1 at depth 1, 2 at depth 2
    assert [len(c.branches) for c in m.calls] == [3, 3, 3]
    prompt = m.calls[0].prefix
    for call, seg, first in zip(m.calls[1:], ["Alpha one.", "Alpha two."], m.calls[0].branches):
        # the child's context, as in training: the prompt, the parent's passage frame and
        # its segment with reflection tokens (without the [Retrieval] it stopped at)
        tail = call.prefix[len(prompt):]
        assert call.prefix[: len(prompt)] == prompt
        assert tail == [*first, *(m.piece_id(p) for p in [
            "[Relevant]", *m.pieces(seg), "[Fully supported]"])]
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


def utility_model(*, short_rel: float, second_rel: float = 1.0) -> tuple[ScriptedModel, Retriever]:
    """Passage "long" (first) gives a beam that asks for evidence after one perfect
    segment, then writes a second one (IsRel `second_rel`) and ends; passage "short"
    gives a finished one-segment answer with IsRel `short_rel`. Every other token is
    certain: each segment's terms are [1 +] s_rel + 1, the last one's [Utility:5] adds
    0.5 x 1.0 once."""
    m = question_model()
    m.on_passage("long", isrel=RELEVANT, text="Long start.", issup=FULL, end=ASK)
    m.on_passage(("more", "Long start"), text="Long end.", issup=FULL,
                 isrel={"[Relevant]": second_rel, "[Irrelevant]": 1 - second_rel})
    m.on_passage("short", isrel={"[Relevant]": short_rel, "[Irrelevant]": 1 - short_rel},
                 text="Short answer.", issup=FULL)
    return m, Retriever([passage(1, "long text"), passage(2, "short text")],
                        [passage(3, "more text")])


def test_utility_counts_once_so_asking_for_evidence_costs_nothing():
    """SELFRAG.md section 5: every reflection token perfect, sequence term on. The
    one-segment answer scores 1 + 1 + 1 + 0.5 = 3.5; the two-segment answer scores
    mean(3, 3) + 0.5 = 3.5 too (the old per-segment mean gave it mean(3.0, 3.5) = 3.25),
    and wins the tie because its passage came first."""
    m, r = utility_model(short_rel=1.0)
    e = engine(m, k=2, beam_width=2)
    ans = e.answer("Q?", retrieve=r)
    finished = {n.depth: n for n in e.last_trace if n.finished and n.passage is not None}
    assert finished[1].score == pytest.approx(3.5, abs=EXACT)       # "Short answer."
    assert finished[2].score == pytest.approx(3.5, abs=EXACT)       # the longer answer
    assert finished[2].base == pytest.approx(3.0, abs=EXACT) and finished[2].scored == 2
    assert ans.text == "Long start. Long end."


def test_a_better_answer_that_asked_for_evidence_beats_a_worse_short_one():
    """The issue's second example, sequence term off: the short answer (IsRel 0.8)
    scores 0.8 + 1 + 0.5 = 2.3; the perfect two-segment answer mean(2, 2) + 0.5 = 2.5
    (the old mean of segment scores gave it mean(2.0, 2.5) = 2.25 and chose the short)."""
    m, r = utility_model(short_rel=0.8)
    e = engine(m, k=2, beam_width=2, weights=NO_SEQ)
    ans = e.answer("Q?", retrieve=r)
    assert ans.text == "Long start. Long end."
    scores = sorted(round(n.score, 9) for n in e.last_trace if n.finished and n.passage is not None)
    assert scores == [2.3, 2.5]


def test_an_unfinished_beam_is_compared_without_utility():
    """Beam width 1: after the first step the short answer is finished (2.3 with its
    utility, 1.8 without) and the long one is not (2.0). Comparing 2.3 with 2.0 would end
    the search with the worse answer just because it stopped first; utility is left out
    for both while one is unfinished, so the long beam goes on and wins (2.5)."""
    m, r = utility_model(short_rel=0.8)
    e = engine(m, k=2, beam_width=1, weights=NO_SEQ)
    ans = e.answer("Q?", retrieve=r)
    assert ans.text == "Long start. Long end."
    depth1 = [n for n in e.last_trace if n.depth == 1]
    assert [(n.finished, round(n.base, 9), round(n.score, 9), n.kept) for n in depth1] == [
        (False, 2.0, 2.0, True), (True, 1.8, 2.3, False)]


def test_a_finished_answer_is_not_beaten_by_a_beam_that_only_goes_on_longer():
    """A finished perfect answer (2.5) against a beam whose second segment is weaker
    (IsRel 0.5): mean(2.0, 1.5) + 0.5 = 2.25. The product of the paper (2.0 x 2.0 = 4.0)
    would pick the longer beam whatever its quality; the mean does not."""
    m, r = utility_model(short_rel=1.0, second_rel=0.5)
    e = engine(m, k=2, beam_width=2, weights=NO_SEQ)
    ans = e.answer("Q?", retrieve=r)
    assert ans.text == "Short answer."
    finished = sorted(round(n.score, 9) for n in e.last_trace if n.finished and n.passage is not None)
    assert finished == [2.25, 2.5]
    assert len(r.queries) == 2                    # the long beam was still expanded


def test_depth_limit_goes_on_without_new_evidence_and_says_so():
    """At the depth limit a pending [Retrieval] does not cut the answer off: the sequence
    goes on after [No Retrieval] (nothing is fetched), and the notes say so."""
    m = question_model()
    m.on_passage("a1text", isrel=RELEVANT, text="Alpha one.", issup=FULL, end=ASK)
    m.on_no_retrieval(" Alpha end.", contains="Alpha one.")
    r = Retriever([passage(1, "a1text")])
    ans = engine(m, k=1, max_segments=1).answer("Q?", retrieve=r)
    assert rows(ans) == [("Alpha one.", "fully", 0, "own"),
                         ("Alpha end.", "no_retrieval", None, "retrieval")]
    assert any("limit of 1 segments" in n and "without new evidence" in n for n in ans.notes)
    assert len(r.queries) == 1 and len(m.calls) == 2
    assert [m.piece(t) for t in m.calls[1].branches[0]] == ["[No Retrieval]"]
    assert m.calls[1].prefix[-1] == m.piece_id("[Fully supported]")


def test_depth_limit_continues_with_the_passage_when_the_model_prefers_it():
    """p([Continue to Use Evidence]) > p([No Retrieval]) at the pending [Retrieval]: the
    answer goes on with the passage in context, and the sentence cites it."""
    m = question_model()
    m.on_passage("a1text", isrel=RELEVANT, text="Alpha one.", issup=FULL,
                 end=[{"[Retrieval]": 0.6, CONTINUE: 0.3, "[No Retrieval]": 0.1}])
    m.script([*m.words(" Alpha more."), *END], after=[CONTINUE], contains="a1text")
    ans = engine(m, k=1, max_segments=1).answer("Q?", retrieve=Retriever([passage(1, "a1text")]))
    # no IsSup token of its own, none in its generation: the fallback critic's to judge
    assert rows(ans) == [("Alpha one.", "fully", 0, "own"),
                         ("Alpha more.", "none", 0, "unjudged")]
    assert [m.piece(t) for t in m.calls[1].branches[0]] == [CONTINUE]


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
    # the segment ends where the threshold said retrieve: its context keeps the passage
    # frame and drops the model's [Continue...]; the new branch starts with [Retrieval]
    tail = second.prefix[len(first.prefix):]
    assert tail[: len(first.branches[0])] == first.branches[0]
    assert [m.piece(t) for t in tail[len(first.branches[0]):]] == [
        "[Relevant]", "Alpha", " one", ".", "[Fully supported]"]
    assert m.piece(second.branches[0][0]) == "[Retrieval]"


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


class YesCritic:
    """A fallback critic that calls everything fully supported, and records its calls."""

    name = "yes"

    def __init__(self) -> None:
        self.asked: list[list[str]] = []

    def support(self, sentences, passage):
        from types import SimpleNamespace

        self.asked.append(list(sentences))
        return [SimpleNamespace(label="fully") for _ in sentences]


def test_sentences_after_an_irrelevant_passage_cite_nothing_and_are_not_judged():
    """Training writes `[Irrelevant]` + sentence with no IsSup token
    (postprocess_data.py line 336): the sentence was written without usable evidence.
    It gets no citation, the label of the model's own knowledge, and no critic, even one
    that would call it supported; so do the sentences after a [Continue to Use Evidence]
    that goes on with that passage."""
    m = question_model()
    m.on_passage("z1text", isrel={"[Irrelevant]": 1.0}, text="Zed.", issup=None,
                 end=[{CONTINUE: 1.0}, *m.words(" Zed again."), *END])
    critic = YesCritic()
    e = SelfRagEngine(m, config=EngineConfig(k=1), critic=critic)
    ans = e.answer("Q?", retrieve=Retriever([passage(1, "z1text")]))
    assert rows(ans) == [("Zed.", "no_retrieval", None, "irrelevant"),
                         ("Zed again.", "no_retrieval", None, "irrelevant")]
    assert critic.asked == []
    assert ans.passages[0].relevant is False
    js = ans.to_json()["segments"]
    assert [(s["label_source"], s["citation"]) for s in js] == [("irrelevant", None)] * 2


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


# --- issue 18: segment length, the trained frame, substituted tokens, the decision -------

def test_segments_are_300_tokens_by_default():
    from localrag.settings import Settings

    assert EngineConfig().max_tokens == 300
    assert EngineConfig.from_settings(Settings()).max_tokens == 300
    assert EngineConfig.from_settings(Settings(), selfrag=False).max_tokens == 200


def test_a_segment_cut_at_max_tokens_goes_on_in_the_same_sequence():
    """max_tokens 3 cuts "Alpha one two three." after "one": the next step continues
    the same sequence (nothing inserted), the two parts are read as one segment: whole
    sentences, its own IsSup token, and its [Utility:5] counted."""
    m = question_model()
    m.on_passage("a1text", isrel=RELEVANT, text="Alpha one two three.", issup=FULL)
    e = engine(m, k=1, beam_width=1, max_tokens=3, weights=NO_SEQ)
    ans = e.answer("Q?", retrieve=Retriever([passage(1, "a1text")]))
    assert rows(ans) == [("Alpha one two three.", "fully", 0, "own")]
    first, second, third = m.calls        # 3 tokens a step: 9 tokens in all
    assert second.branches == third.branches == [[]]     # nothing inserted
    assert second.prefix == first.prefix + first.branches[0] + [
        m.piece_id(p) for p in ("[Relevant]", "Alpha", " one")]
    assert third.prefix == second.prefix + [m.piece_id(p) for p in (" two", " three", ".")]
    last = e.last_trace[-1]
    assert last.finished and last.scored == 1 and last.score == pytest.approx(2.5, abs=EXACT)
    assert any("max_tokens" in n and "continued" in n for n in ans.notes)


def test_an_answer_that_must_end_mid_sentence_drops_the_unfinished_sentence():
    m = question_model()
    m.on_passage("a1text", isrel=RELEVANT, text="Alpha one. Bravo two three four.", issup=FULL)
    e = engine(m, k=1, beam_width=1, max_tokens=3, max_segments=1)
    ans = e.answer("Q?", retrieve=Retriever([passage(1, "a1text")]))
    # step 1 writes [Relevant] Alpha one, the depth-limit step ". Bravo two": still cut
    assert [s.text for s in ans.segments] == ["Alpha one."]
    assert ans.segments[0].citation == 0
    assert any("unfinished last sentence was left out" in n for n in ans.notes)


def long_passage(n: int, word: str, count: int = 60):
    return passage(n, " ".join([f"{word}{i}" for i in range(count)]))


def frame_starts(m: ScriptedModel, ids: list[int]) -> list[int]:
    return [i for i, t in enumerate(ids) if t == m.piece_id("[Relevant]")]


def test_later_segments_keep_the_earlier_passage_frames():
    """Every [Relevant] follows a </paragraph>, as in training: the second step's
    context holds the first passage whole when the trained length allows."""
    m = question_model()
    m.on_passage("a1text", isrel=RELEVANT, text="Alpha one.", issup=FULL, end=ASK)
    m.on_passage(("b1text", "Alpha one"), isrel=RELEVANT, text="Bravo one.", issup=FULL)
    r = Retriever([passage(1, "a1text")], [passage(2, "b1text")])
    ans = engine(m, k=1, beam_width=1).answer("Q?", retrieve=r)
    assert ans.text == "Alpha one. Bravo one."
    first, second = m.calls
    assert "a1text" in m.detokenize(second.prefix)
    ctx = second.prefix + second.branches[0]
    for i in frame_starts(m, ctx + [m.piece_id("[Relevant]")]):
        assert m.piece(ctx[i - 1]) == "</paragraph>"


def test_past_the_trained_length_earlier_passages_are_trimmed_but_their_frames_stay():
    m = question_model()
    m.on_passage("alpha0", isrel=RELEVANT, text="Alpha one.", issup=FULL, end=ASK)
    m.on_passage(("bravo0", "Alpha one"), isrel=RELEVANT, text="Bravo one.", issup=FULL, end=ASK)
    m.on_passage(("charlie0", "Bravo one"), isrel=RELEVANT, text="Charlie one.", issup=FULL)
    r = Retriever([long_passage(1, "alpha")], [long_passage(2, "bravo")],
                  [long_passage(3, "charlie")])
    e = engine(m, k=1, beam_width=1, max_tokens=16, trained_ctx=160)
    ans = e.answer("Q?", retrieve=r)
    assert ans.text == "Alpha one. Bravo one. Charlie one."
    v = {p: m.piece_id(p) for p in ("[Retrieval]", "<paragraph>", "</paragraph>", "[Relevant]")}
    third = m.calls[2]
    ctx = third.prefix + third.branches[0]
    assert len(ctx) <= 160                                     # within the trained length
    assert ctx.count(v["<paragraph>"]) == 3 and ctx.count(v["</paragraph>"]) == 3
    for i in frame_starts(m, ctx + [v["[Relevant]"]]):
        assert ctx[i - 1] == v["</paragraph>"]
    opens = [i for i, t in enumerate(ctx) if t == v["<paragraph>"]]
    assert all(ctx[i - 1] == v["[Retrieval]"] for i in opens)
    text = m.detokenize(ctx)
    assert "alpha0" in text and "alpha59" not in text       # the oldest passage was cut
    assert "charlie59" in text                               # the new one is whole
    assert any("earlier passages were trimmed" in n for n in ans.notes)


def test_a_token_written_in_place_of_retrieval_is_left_out_of_the_sequence_score():
    """Mode never: the model's [Retrieval] (p = 1) becomes [No Retrieval] (p = 0): that
    log-probability (-inf) is not the model's, so it leaves the sequence mean alone:
    every other token is certain, exp(mean) = 1."""
    m = question_model()
    m.on_no_retrieval("Own.")
    m.rule({"[Retrieval]": 1.0}, after=["[No Retrieval]", "Own", "."])
    m.on_no_retrieval(" More.", contains="Own.")
    ans = engine(m, mode="never").answer("Q?", retrieve=Retriever([]))
    assert ans.text == "Own. More."
    assert ans.segments[0].scores.seq == pytest.approx(1.0, abs=EXACT)


@pytest.mark.parametrize("case", ["no passage", "strict"])
def test_on_decision_sends_the_final_decision(case):
    m = question_model()
    m.on_passage("z1text", isrel=RELEVANT, text="Zed.", issup={"[No support / Contradictory]": 1.0})
    m.on_no_retrieval("Own.")
    seen: list[tuple[bool, str]] = []
    if case == "no passage":
        e, r = engine(m, k=1), Retriever([])
    else:
        e, r = engine(m, k=1, strict=True), Retriever([passage(1, "z1text")])
    ans = e.answer("Q?", retrieve=r, on_decision=lambda d: seen.append((d.retrieved, d.reason)))
    assert ans.decision.retrieved is False
    assert seen == [(False, ans.decision.reason)]
    assert rows(ans) == [("Own.", "no_retrieval", None, "retrieval")]
