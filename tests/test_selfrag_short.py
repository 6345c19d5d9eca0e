"""The Self-RAG engine on short answers, against the scripted model with exact numbers."""

from __future__ import annotations

import math
import threading

import pytest

from localrag.errors import AnswerCancelled
from localrag.answering.generate.prompting import build_ids
from localrag.answering.label.render import decision_line
from localrag.answering.judge.scoring import Weights
from models.errors import UnsupportedModelError
from models.reflection import ALL_TOKENS, LLAMA2_ORDER, ReflectionVocab
from models.scripted import ScriptedModel
try:   # tests/ is not a package; pytest puts it on sys.path (rootdir-relative fallback)
    from selfrag_helpers import FULL, RELEVANT, Retriever, engine, passage, question_model
except ImportError:  # pragma: no cover
    from tests.selfrag_helpers import FULL, RELEVANT, Retriever, engine, passage, question_model

EXACT = 1e-12
NO_SEQ = Weights(use_seq=False)


def worked_example_model() -> tuple[ScriptedModel, Retriever]:
    """SELFRAG.md's candidates A (0.90, 0.80, 0.60) and B (0.85, 0.30, 0.70)."""
    m = question_model()
    m.on_passage("alpha", isrel={"[Relevant]": 0.9, "[Irrelevant]": 0.1}, text="Answer A.",
                 issup={"[Fully supported]": 0.6, "[Partially supported]": 0.4},
                 end=[{"[Utility:4]": 0.8, "[Utility:5]": 0.2}, {"</s>": 1.0}])
    m.on_passage("bravo", isrel={"[Relevant]": 0.85, "[Irrelevant]": 0.15}, text="Answer B.",
                 issup={"[Fully supported]": 0.1, "[Partially supported]": 0.4,
                        "[No support / Contradictory]": 0.5},
                 end=[{"[Utility:4]": 0.6, "[Utility:5]": 0.4}, {"</s>": 1.0}])
    return m, Retriever([passage(1, "bravo text"), passage(2, "alpha text")])


def test_worked_example_through_the_engine():
    m, r = worked_example_model()
    ans = engine(m, weights=NO_SEQ).answer("Q?", retrieve=r)
    assert ans.text == "Answer A."
    seg = ans.segments[0]
    assert seg.citation == 1 and ans.passages[1].passage.text == "alpha text"
    assert seg.label == "fully"
    assert (seg.scores.rel, seg.scores.sup, seg.scores.use) == pytest.approx((0.9, 0.8, 0.6), abs=EXACT)
    assert seg.scores.total == pytest.approx(2.00, abs=EXACT)
    b = [n for n in engine_trace(m, r, NO_SEQ) if n.passage == 0][0]
    assert b.segment_score == pytest.approx(1.50, abs=EXACT)
    assert [j.relevance for j in ans.passages] == pytest.approx([0.85, 0.9], abs=EXACT)


def engine_trace(m, r, weights):
    e = engine(m, weights=weights)
    e.answer("Q?", retrieve=r)
    return e.last_trace


def test_worked_example_sup_weight_two():
    m, r = worked_example_model()
    trace = engine_trace(m, r, Weights(w_sup=2.0, use_seq=False))
    scores = {n.passage: n.segment_score for n in trace if n.depth == 1}
    assert scores[1] == pytest.approx(2.80, abs=EXACT)
    assert scores[0] == pytest.approx(1.80, abs=EXACT)


def test_sup_weight_flips_the_winner():
    # A: relevant but weakly supported; B: less relevant, better supported
    m = question_model()
    m.on_passage("alpha", isrel={"[Relevant]": 0.9, "[Irrelevant]": 0.1}, text="From A.",
                 issup={"[Partially supported]": 0.6, "[No support / Contradictory]": 0.4})
    m.on_passage("bravo", isrel={"[Relevant]": 0.5, "[Irrelevant]": 0.5}, text="From B.",
                 issup={"[Fully supported]": 0.6, "[No support / Contradictory]": 0.4})
    r = Retriever([passage(1, "alpha"), passage(2, "bravo")])
    # use = 1 for both (Utility:5); w_sup 1: A = 0.9 + 0.3 + 0.5 = 1.7, B = 0.5 + 0.6 + 0.5 = 1.6
    a1 = engine(m, weights=Weights(use_seq=False)).answer("Q?", retrieve=r)
    assert a1.text == "From A." and a1.segments[0].scores.total == pytest.approx(1.7, abs=EXACT)
    # w_sup 2: A = 0.9 + 0.6 + 0.5 = 2.0, B = 0.5 + 1.2 + 0.5 = 2.2
    a2 = engine(m, weights=Weights(w_sup=2.0, use_seq=False)).answer("Q?", retrieve=r)
    assert a2.text == "From B." and a2.segments[0].scores.total == pytest.approx(2.2, abs=EXACT)
    assert a2.segments[0].label == "fully" and a1.segments[0].label == "partially"


def test_utility_contributes():
    # A: better support, worst utility; B: slightly worse support, best utility.
    m = question_model()
    m.on_passage("alpha", isrel=RELEVANT, text="From A.",
                 issup={"[Fully supported]": 0.8, "[No support / Contradictory]": 0.2},
                 end=[{"[Utility:1]": 1.0}, {"</s>": 1.0}])
    m.on_passage("bravo", isrel=RELEVANT, text="From B.",
                 issup={"[Fully supported]": 0.7, "[No support / Contradictory]": 0.3},
                 end=[{"[Utility:5]": 1.0}, {"</s>": 1.0}])
    r = Retriever([passage(1, "alpha"), passage(2, "bravo")])
    e = engine(m, weights=NO_SEQ)
    ans = e.answer("Q?", retrieve=r)
    scores = {n.passage: n.segment_score for n in e.last_trace if n.depth == 1}
    assert scores[0] == pytest.approx(1.0 + 0.8 - 0.5, abs=EXACT)
    assert scores[1] == pytest.approx(1.0 + 0.7 + 0.5, abs=EXACT)
    assert ans.text == "From B."          # with s_use always 0, A (1.8 > 1.7) would win
    assert ans.segments[0].scores.use == 1.0


def test_sequence_score_on_off_changes_winner():
    # A: better support but unsure words (p = 0.2 each); B: sure words, less support
    m = question_model()
    m.on_passage("alpha", isrel=RELEVANT, text="Maybe A here", word_p=0.2,
                 issup={"[Fully supported]": 1.0})
    m.on_passage("bravo", isrel=RELEVANT, text="Surely B here", word_p=1.0,
                 issup={"[Fully supported]": 0.8, "[Partially supported]": 0.2})
    r = Retriever([passage(1, "alpha"), passage(2, "bravo")])
    off = engine(m, weights=NO_SEQ).answer("Q?", retrieve=r)
    assert off.text == "Maybe A here"       # 1 + 1 + 0.5 = 2.5 vs 1 + 0.9 + 0.5 = 2.4
    e = engine(m, weights=Weights())
    on = e.answer("Q?", retrieve=r)
    assert on.text == "Surely B here"
    # A generated: [Relevant] 1.0, 3 words at 0.2, [Fully] 1.0, [Utility:5] 1.0, </s> 1.0
    seq_a = math.exp(3 * math.log(0.2) / 7)
    # B generated: [Relevant], 3 words at 1.0, [Fully] 0.8, [Utility:5], </s>
    seq_b = math.exp(math.log(0.8) / 7)
    scores = {n.passage: n.segment_score for n in e.last_trace if n.depth == 1}
    assert scores[0] == pytest.approx(seq_a + 2.5, abs=EXACT)
    assert scores[1] == pytest.approx(seq_b + 2.4, abs=EXACT)
    assert on.segments[0].scores.seq == pytest.approx(seq_b, abs=EXACT)


def test_ties_go_to_the_earlier_passage():
    m = question_model()
    for word in ("alpha", "bravo"):
        m.on_passage(word, isrel=RELEVANT, text=f"From {word}.", issup=FULL)
    ans = engine(m).answer("Q?", retrieve=Retriever([passage(1, "alpha"), passage(2, "bravo")]))
    assert ans.text == "From alpha." and ans.segments[0].citation == 0
    ans = engine(m).answer("Q?", retrieve=Retriever([passage(2, "bravo"), passage(1, "alpha")]))
    assert ans.text == "From bravo." and ans.segments[0].citation == 0


def strict_model() -> tuple[ScriptedModel, Retriever]:
    m = question_model()
    m.on_passage("alpha", isrel=RELEVANT, text="Unsupported claim.",
                 issup={"[No support / Contradictory]": 0.6, "[Fully supported]": 0.4})
    m.on_passage("bravo", isrel={"[Relevant]": 0.5, "[Irrelevant]": 0.5}, text="Supported claim.",
                 issup={"[Partially supported]": 1.0})
    return m, Retriever([passage(1, "alpha"), passage(2, "bravo")])


def test_strict_mode_drops_unsupported_candidate():
    m, r = strict_model()
    loose = engine(m, weights=NO_SEQ).answer("Q?", retrieve=r)
    assert loose.text == "Unsupported claim."      # 1 + 0.4 + 0.5 = 1.9 > 0.5 + 0.5 + 0.5
    assert loose.segments[0].label == "none"
    strict = engine(m, weights=NO_SEQ, strict=True).answer("Q?", retrieve=r)
    assert strict.text == "Supported claim." and strict.segments[0].label == "partially"
    assert strict.segments[0].citation == 1
    assert strict.passages[0].dropped and "strict" in strict.passages[0].drop_reason
    assert not strict.passages[1].dropped
    assert strict.to_json()["sources"][0]["dropped"] is True


def test_strict_mode_dropping_everything_says_so_and_claims_no_evidence():
    m = question_model()
    m.on_passage("alpha", isrel=RELEVANT, text="Bad.", issup={"[No support / Contradictory]": 1.0})
    m.on_passage("bravo", isrel=RELEVANT, text="Worse.", issup={"[No support / Contradictory]": 1.0})
    m.on_no_retrieval("Own knowledge.")
    r = Retriever([passage(1, "alpha"), passage(2, "bravo")])
    ans = engine(m, strict=True).answer("Q?", retrieve=r)
    assert ans.text == "Own knowledge." and ans.segments[0].label == "no_retrieval"
    assert ans.segments[0].citation is None and ans.segments[0].label_source == "retrieval"
    # the decision does not claim that evidence was used, and says why
    assert ans.decision.retrieved is False
    assert "strict mode dropped all 2 candidates" in ans.decision.reason
    assert all(j.dropped for j in ans.passages)
    assert any("strict mode dropped all 2 candidates" in n and "no evidence" in n
               for n in ans.notes)
    line = decision_line(ans)
    assert line.startswith("Retrieved (p=0.90") and "strict mode dropped every candidate" in line
    assert "answered without evidence" in line
    assert ans.to_json()["retrieval"]["retrieved"] is False


def test_strict_mode_drops_a_candidate_with_any_unsupported_sentence():
    """The first IsSup token scores the segment (SELFRAG.md section 4), but strict mode
    drops a candidate when ANY of its IsSup tokens says [No support / Contradictory]."""
    m = question_model()
    m.on_passage("alpha", isrel=RELEVANT, text="Good start.", issup=FULL,
                 end=[{"[Continue to Use Evidence]": 1.0}, *m.words(" Bad end."),
                      {"[No support / Contradictory]": 1.0}, {"[Utility:5]": 1.0}, {"</s>": 1.0}])
    m.on_passage("bravo", isrel=RELEVANT, text="Plain answer.",
                 issup={"[Partially supported]": 1.0})
    r = Retriever([passage(1, "alpha"), passage(2, "bravo")])
    loose = engine(m, weights=NO_SEQ).answer("Q?", retrieve=r)
    assert loose.text == "Good start. Bad end."           # 1 + 1 + 0.5 beats 1 + 0.5 + 0.5
    assert [(s.label, s.label_source) for s in loose.segments] == [("fully", "own"),
                                                                  ("none", "own")]
    strict = engine(m, weights=NO_SEQ, strict=True).answer("Q?", retrieve=r)
    assert strict.text == "Plain answer." and strict.passages[0].dropped


@pytest.mark.parametrize(("p_yes", "retrieved"), [(0.15, False), (0.25, True)])
def test_adaptive_threshold(p_yes, retrieved):
    m = question_model(p_yes, 1 - p_yes)
    m.on_passage("alpha", isrel=RELEVANT, text="With evidence.", issup=FULL)
    m.on_no_retrieval("Without evidence.")
    r = Retriever([passage(1, "alpha")])
    ans = engine(m, threshold=0.2).answer("Q?", retrieve=r)
    assert ans.decision.probability == pytest.approx(p_yes, abs=EXACT)
    assert ans.decision.retrieved is retrieved
    assert bool(r.queries) is retrieved
    if retrieved:
        assert ans.text == "With evidence." and ans.segments[0].label == "fully"
        assert ans.decision.reason == "p=0.25 > 0.20"
    else:
        assert ans.text == "Without evidence." and ans.segments[0].label == "no_retrieval"
        assert ans.passages == []


def test_adaptive_renormalises_full_vocabulary_probabilities():
    # p(yes) = 0.03, p(no) = 0.17 with the rest elsewhere: normalised 0.15 -> no retrieval;
    # the log-prob ratio ln .03 / (ln .03 + ln .17) = 0.67 would retrieve.
    m = ScriptedModel()
    m.on_question({"[Retrieval]": 0.03, "[No Retrieval]": 0.17, "Hello": 0.8})
    m.on_no_retrieval("Own.")
    ans = engine(m).answer("Q?", retrieve=Retriever([passage(1, "alpha")]))
    assert ans.decision.probability == pytest.approx(0.15, abs=EXACT)
    assert not ans.decision.retrieved


def test_always_and_never_modes():
    m = question_model(0.01, 0.99)
    m.on_passage("alpha", isrel=RELEVANT, text="With evidence.", issup=FULL)
    m.on_no_retrieval("Without evidence.")
    r = Retriever([passage(1, "alpha")])
    always = engine(m, mode="always").answer("Q?", retrieve=r)
    assert always.decision.retrieved and always.decision.probability is None
    assert always.text == "With evidence." and m.logprob_calls == []
    m2 = question_model(0.99, 0.01)
    m2.on_no_retrieval("Without evidence.")
    r2 = Retriever([passage(1, "alpha")])
    never = engine(m2, mode="never").answer("Q?", retrieve=r2)
    assert not never.decision.retrieved and r2.queries == []
    assert never.text == "Without evidence." and never.decision.reason == "mode: never"


def test_k_candidates_in_one_generate_call_with_one_bos():
    m = question_model()
    texts = ["alpha", "bravo", "charlie", "delta", "echo"]
    for t in texts:
        m.on_passage(t, isrel=RELEVANT, text=f"From {t}.", issup=FULL)
    r = Retriever([passage(i, f"{t} text") for i, t in enumerate(texts)])
    ans = engine(m, k=5).answer("Q?", retrieve=r)
    assert r.queries == [("Q?", 5)]
    assert len(m.calls) == 1 and len(m.calls[0].branches) == 5
    call = m.calls[0]
    assert call.prefix.count(m.bos_id) == 1 and call.prefix[0] == m.bos_id
    assert call.prefix == m.logprob_calls[0][0]      # the decision read the same prompt
    for branch, t in zip(call.branches, texts):
        pieces = [m.piece(i) for i in branch]
        assert pieces[:2] == ["[Retrieval]", "<paragraph>"] and pieces[-1] == "</paragraph>"
        assert m.bos_id not in branch
        assert m.detokenize(branch[2:-1]) == f" file{texts.index(t)}.md\n{t} text"
        # a space piece after <paragraph>, as the (legacy) training tokenizer wrote it
        assert pieces[2] == f" file{texts.index(t)}"
    assert set(call.stop_ids) == {m.piece_id("[Retrieval]"), m.piece_id("[No Retrieval]"),
                                  m.piece_id("[Continue to Use Evidence]")}
    assert len(ans.passages) == 5 and ans.text == "From alpha."


def test_space_after_special_flag_tokenizes_passage_with_leading_space():
    m = question_model()
    m.on_passage("alpha", isrel=RELEVANT, text="A.", issup=FULL)
    engine(m, space_after_special=True).answer("Q?", retrieve=Retriever([passage(1, "alpha")]))
    assert m.piece(m.calls[0].branches[0][2]) == " file1"


def test_reflection_tokens_never_in_output():
    m = question_model()
    m.on_passage("alpha", isrel=RELEVANT, text="First part. Second part!", issup=FULL)
    ans = engine(m).answer("Q?", retrieve=Retriever([passage(1, "alpha")]))
    assert [s.text for s in ans.segments] == ["First part.", "Second part!"]
    dumped = repr(ans.to_json()["segments"]) + ans.text
    for token in (*ALL_TOKENS, "</s>", "<s>"):
        assert token not in dumped
    # the scripted model prints added tokens literally, so stripping is by id
    assert "[Relevant]" in m.detokenize([m.piece_id("[Relevant]")])


def test_long_passage_is_trimmed_not_a_crash():
    m = question_model(n_ctx=300)
    m.on_passage("alpha", isrel=RELEVANT, text="Short answer.", issup=FULL)
    long_text = "alpha " + " ".join(f"w{i}" for i in range(2000))
    ans = engine(m, n_ctx=300, max_tokens=50).answer("Q?", retrieve=Retriever([passage(1, long_text)]))
    call = m.calls[0]
    assert len(call.prefix) + len(call.branches[0]) + call.max_tokens <= 300
    assert call.max_tokens == 50
    assert ans.text == "Short answer."
    assert any("trimmed" in n for n in ans.notes)


def test_empty_index_answers_without_retrieval_and_says_so():
    m = question_model()
    m.on_no_retrieval("Own knowledge.")
    r = Retriever([passage(1, "alpha")])
    ans = engine(m).answer("Q?", retrieve=r, index_empty=True)
    assert r.queries == [] and m.logprob_calls == []
    assert not ans.decision.retrieved and ans.decision.reason == "index is empty"
    assert ans.text == "Own knowledge." and ans.segments[0].label == "no_retrieval"
    assert any("index is empty" in n for n in ans.notes)


def test_no_passage_found_answers_without_retrieval_and_says_so():
    m = question_model()
    m.on_no_retrieval("Own knowledge.")
    ans = engine(m).answer("Q?", retrieve=Retriever([]))
    assert not ans.decision.retrieved and "no passage" in ans.decision.reason
    assert ans.text == "Own knowledge."
    assert any("no passage" in n for n in ans.notes)


def test_cancel_before_and_between_model_calls():
    m, r = worked_example_model()
    stop = threading.Event()
    stop.set()
    with pytest.raises(AnswerCancelled):
        engine(m).answer("Q?", retrieve=r, cancel=stop)
    assert m.logprob_calls == [] and m.calls == []

    stop = threading.Event()

    def retrieve_then_cancel(query, k):
        stop.set()           # the person presses cancel while passages are fetched
        return r(query, k)

    with pytest.raises(AnswerCancelled):
        engine(m).answer("Q?", retrieve=retrieve_then_cancel, cancel=stop)
    assert m.calls == []


def test_search_query_and_history_in_the_trained_dialogue_format():
    m = question_model()
    m.on_passage("alpha", isrel=RELEVANT, text="Built in 1889.", issup=FULL)
    r = Retriever([passage(1, "alpha")])
    history = [("What is the tower?", "A landmark."), ("Where is it?", "In Paris,\nFrance.")]
    ans = engine(m).answer("And when was it built?", retrieve=r, history=history,
                           search_query="When was the Eiffel Tower built?")
    assert r.queries == [("When was the Eiffel Tower built?", 5)]
    assert ans.search_query == "When was the Eiffel Tower built?"
    # TASK_INST["wow"] of the reference (retrieval_lm/utils.py) + "## Input:\n\n" (no
    # newline before it, as in create_prompt_data.py) + one turn per line
    instruction = ("Given a chat history separated by new lines, generates an informative, "
                   "knowledgeable and engaging response. ## Input:\n\nWhat is the tower?\n"
                   "A landmark.\nWhere is it?\nIn Paris, France.\nAnd when was it built?")
    expected = f"### Instruction:\n{instruction}\n\n### Response:\n"
    assert m.calls[0].prefix == build_ids(m, [expected], bos=True)
    assert m.logprob_calls[0][0] == m.calls[0].prefix      # the decision read the same prompt


def test_history_drops_oldest_turns_to_fit():
    m = question_model(n_ctx=400)
    m.on_no_retrieval("Fine.")
    old = " ".join(f"old{i}" for i in range(100))
    history = [(f"First {old}?", "One."), ("Second?", "Two.")]
    ans = engine(m, n_ctx=400, max_tokens=100, mode="never").answer(
        "Third?", retrieve=Retriever([]), history=history)
    prompt = m.detokenize(m.calls[0].prefix)
    assert "Second?" in prompt and "old5" not in prompt
    assert any("earlier turn" in n for n in ans.notes)


def test_prompt_stays_within_the_trained_length_trimming_history_first():
    """trained_ctx 512 (the Llama 2 models: 2,048): history may take half of it, the
    oldest turns go first; the passage gets the rest and is trimmed to fit."""
    m = question_model(n_ctx=4096)
    m.on_passage("w1 ", isrel=RELEVANT, text="Fine.", issup=FULL)
    history = [(f"Question {t} " + " ".join(f"h{t}x{i}" for i in range(40)) + "?", f"Answer {t}.")
               for t in range(6)]
    long = passage(1, " ".join(f"w{i}" for i in range(600)))
    e = engine(m, k=1, max_tokens=50, trained_ctx=512, max_segments=1)
    assert e.prompt_limit == 512
    ans = e.answer("Newest?", retrieve=Retriever([long]), history=history)
    (call,) = m.calls
    assert len(call.prefix) <= 256
    assert len(call.prefix) + len(call.branches[0]) <= 512
    assert len(call.branches[0]) >= 512 - 256            # the passage gets what is left
    prompt = m.detokenize(call.prefix)
    assert "Question 5" in prompt and "Newest?" in prompt and "Question 0" not in prompt
    assert any("earlier turn(s) left out" in n and "512 tokens" in n for n in ans.notes)
    assert any("trimmed" in n for n in ans.notes)
    assert ans.text == "Fine."


def test_trained_length_is_known_only_for_the_llama2_layout():
    m = ScriptedModel()
    assert ReflectionVocab.require(m).trained_context is None
    assert engine(m, n_ctx=4096).prompt_limit == 4096       # scripted ids: no extra limit
    llama2 = ReflectionVocab({t: 32000 + i for i, t in enumerate(LLAMA2_ORDER)})
    assert llama2.trained_context == 2048
    shifted = ReflectionVocab({t: 32001 + i for i, t in enumerate(LLAMA2_ORDER)})
    assert shifted.trained_context is None


def test_instruct_model_is_refused_with_a_clear_message():
    with pytest.raises(UnsupportedModelError, match="not a Self-RAG model"):
        engine(ScriptedModel(reflection=False))


def test_engine_config_from_settings():
    from localrag.answering.generate.selfrag import EngineConfig
    from localrag.settings import Settings

    s = Settings(retrieval_mode="always", threshold=0.3, k=3, w_rel=0.5, w_sup=2.0,
                 w_use=0.0, use_seq_score=False, strict=True, beam_width=1,
                 max_segments=2, max_tokens=64, n_ctx=1024)
    c = EngineConfig.from_settings(s)
    assert (c.mode, c.threshold, c.k, c.strict, c.beam_width, c.max_segments,
            c.max_tokens, c.n_ctx) == ("always", 0.3, 3, True, 1, 2, 64, 1024)
    assert c.weights == Weights(w_rel=0.5, w_sup=2.0, w_use=0.0, use_seq=False)


def test_scripted_model_probabilities_are_exact():
    m = ScriptedModel()
    m.rule({"Paris": 0.6, "London": 0.3}, after=["Capital"])
    prefix = m.tokenize("Capital")
    # nothing matches "The Capital"'s suffix " Capital"; the bare piece does
    ctx = [m.piece_id("Capital")]
    lps = m.next_logprobs(ctx, [m.piece_id("Paris"), m.piece_id("London"), m.unk_id, m.eos_id])
    assert [math.exp(v) for v in lps.values()] == pytest.approx([0.6, 0.3, 0.1, 0.0], abs=EXACT)
    (gen,) = m.generate(ctx, [], max_tokens=5, watch_ids=[m.piece_id("London")])
    assert [m.piece(t) for t in gen.tokens] == ["Paris", "</s>"] and gen.finish == "eos"
    assert gen.steps[0].logprob == pytest.approx(math.log(0.6), abs=EXACT)
    assert gen.steps[0].watched == {m.piece_id("London"): pytest.approx(math.log(0.3), abs=EXACT)}
    assert prefix != ctx     # the tokenizer put a space piece before "Capital"
    with pytest.raises(Exception, match="exceeds the context"):
        ScriptedModel(n_ctx=4).generate(list(range(3)), [[1, 2]], max_tokens=1)


def test_irrelevant_passage_is_judged_and_its_answer_labelled_without_evidence():
    m = question_model()
    m.on_passage("alpha", isrel={"[Irrelevant]": 0.7, "[Relevant]": 0.3}, text="Guess.")
    ans = engine(m).answer("Q?", retrieve=Retriever([passage(1, "alpha")]))
    j = ans.passages[0]
    assert j.relevance == pytest.approx(0.3, abs=EXACT) and j.relevant is False
    seg = ans.segments[0]
    assert (seg.label, seg.label_source, seg.citation) == ("no_retrieval", "irrelevant", None)
    assert seg.scores.sup is None


def test_decision_is_reported_before_any_segment():
    """on_decision fires once, with the final decision, before the first segment."""
    m, r = worked_example_model()
    events: list[tuple[str, object]] = []
    ans = engine(m, weights=NO_SEQ).answer(
        "Q?", retrieve=r, on_decision=lambda d: events.append(("decision", d)),
        on_segment=lambda s: events.append(("segment", s)))
    assert [kind for kind, _ in events][:2] == ["decision", "segment"]
    assert [kind for kind, _ in events].count("decision") == 1
    assert events[0][1] is ans.decision and ans.decision.retrieved
