"""End to end: the Self-RAG engine over real llama.cpp with the tiny test GGUF.

The test model (scripts/make_test_gguf.py) has the real Llama 2 vocabulary plus the 16
Self-RAG tokens at 32000..32015, random weights, and, for the last tests, weights set by
hand ("bias" and "context" rules) that make it write real reflection tokens in the order
of the training data, so that the engine's loop is checked on token ids coming from the
real backend:

    [Retrieval]<paragraph>P</paragraph>[Relevant] Paris.[Fully supported]
    [Continue to Use Evidence] Rome![No Retrieval] Nice?[Utility:5]</s>

where the sentence after `[Continue to Use Evidence]` is "Rome!" only while a passage
holding the word "company" is in the model's context ("Lyon!" otherwise), and where
p([Retrieval]) at the `[Continue to Use Evidence]` position is about 0.3.
Everything runs with one thread (PLATFORM.md: llama.cpp threads spin-wait on 2 shared cores).
"""

from __future__ import annotations

import math

import pytest

from conftest_models import THREADS, _make_test_gguf_module, test_gguf_factory, tiny_gguf, tiny_model  # noqa: F401
from localrag.answering.generate.prompting import encode_text, prompt_ids
from localrag.answering.judge.scoring import retrieve_probability
from localrag.answering.generate.selfrag import EngineConfig, SelfRagEngine
from models.base import ModelStats
from models.reflection import ALL_TOKENS, RETRIEVE_NO, RETRIEVE_YES, ReflectionVocab
from selfrag_helpers import Retriever, passage

QUESTION = "When was the Eiffel tower built, and by whom?"
LABELS = {"fully", "partially", "none", "no_retrieval"}
PASSAGES = [
    passage(1, "The Eiffel Tower was built from 1887 to 1889 by the company of Gustave Eiffel.",
            title="eiffel.md"),
    passage(2, "Paris is the capital of France. The tower stands on the Champ de Mars.",
            title="paris.md"),
    passage(3, "Gustave Eiffel also designed the internal frame of the Statue of Liberty.",
            title="gustave.md"),
]
# after `</paragraph>` the biased model writes: [Relevant] ▁Paris . [Fully supported]
# [Utility:5] </s>  -- a complete short Self-RAG answer, on real token ids.
SHORT_ANSWER_RULES = [
    ("</paragraph>", "[Relevant]"), ("[Relevant]", "▁Paris"), ("▁Paris", "."),
    (".", "[Fully supported]"), ("[Fully supported]", "[Utility:5]"), ("[Utility:5]", "</s>"),
]
# the same, but it asks for new evidence after each segment: the beam search grows
LONG_ANSWER_RULES = [
    ("</paragraph>", "[Relevant]"), ("[Relevant]", "▁Paris"), ("▁Paris", "."),
    (".", "[Fully supported]"), ("[Fully supported]", "[Retrieval]"),
]
# a training-shaped answer (module docstring); [Retrieval] after the prompt's last "\n"
TRAINED_RULES = [
    ("<0x0A>", "[Retrieval]"), ("</paragraph>", "[Relevant]"), ("[Relevant]", "▁Paris"),
    ("▁Paris", "."), (".", "[Fully supported]"),
    ("[Fully supported]", "[Continue to Use Evidence]"),
    ("[Fully supported]", "[Retrieval]", 11.8),          # p([Retrieval]) ~ 0.3 there
    ("[Continue to Use Evidence]", "▁Lyon"),
    ("[Continue to Use Evidence]", "▁Rome", 11.0),       # + the context rule: Rome wins
    ("▁Lyon", "!"), ("▁Rome", "!"), ("!", "[No Retrieval]"), ("[No Retrieval]", "▁Nice"),
    ("▁Nice", "?"), ("?", "[Utility:5]"), ("[Utility:5]", "</s>"),
]
TRAINED_CONTEXT = ("▁company", "▁Rome", 2.0)              # in PASSAGES[0] only


class GenerateSpy:
    """Wraps model.generate (instance attribute) and records each call's branch count,
    arguments and generations."""

    def __init__(self, model) -> None:
        self.model = model
        self.inner = model.generate
        self.calls: list[int] = []
        self.args: list[tuple[list[int], list[list[int]]]] = []
        self.outputs: list = []
        self.prompt_tokens: list[int] = []   # model.stats.prompt_tokens after each call

    def clear(self) -> None:
        self.calls.clear()
        self.args.clear()
        self.outputs.clear()

    def __call__(self, prefix, branches, **kw):
        self.calls.append(len(branches))
        self.args.append((list(prefix), [list(b) for b in branches]))
        out = self.inner(prefix, branches, **kw)
        self.outputs.append(out)
        self.prompt_tokens.append(self.model.stats.prompt_tokens)
        return out


@pytest.fixture
def spy(tiny_model, monkeypatch):
    s = GenerateSpy(tiny_model)
    monkeypatch.setattr(tiny_model, "generate", s)
    return s


def fresh(model) -> None:
    model.clear_cache()
    model.stats = ModelStats()


def reflection_strings() -> list[str]:
    return [*ALL_TOKENS, "<pad>", "</s>", "<s>"]


def check_segments(answer) -> None:
    # a random-weight model rarely ends a sentence: an answer cut at the limits then
    # leaves out its unfinished sentence (never half a sentence), and may be empty
    cut = any("unfinished last sentence was left out" in n for n in answer.notes)
    assert answer.segments or cut, "the answer has no segment"
    for seg in answer.segments:
        assert seg.label in LABELS
        for token in reflection_strings():
            assert token not in seg.text, f"{token!r} leaked into {seg.text!r}"
        scores = [seg.scores.rel, seg.scores.sup, seg.scores.use, seg.scores.seq, seg.scores.total]
        assert all(math.isfinite(v) for v in scores if v is not None), seg.scores
        assert seg.scores.total is not None and math.isfinite(seg.scores.total)
        if seg.citation is not None:
            assert 0 <= seg.citation < len(answer.passages)
            assert seg.passage is answer.passages[seg.citation].passage


def measured_retrieve_probability(model, question: str) -> float:
    """p([Retrieval]) / (p([Retrieval]) + p([No Retrieval])) read straight from llama.cpp.

    The prompt is tokenized here as one string (BOS + SELFRAG.md's template) rather than
    by the engine's prompt builder, and the ratio is taken on probabilities."""
    text = f"### Instruction:\n{question}\n\n### Response:\n"
    ids = model.tokenize(text, add_bos=True, special=False)
    assert ids == prompt_ids(model, question)[0]
    yes, no = model.token_id(RETRIEVE_YES), model.token_id(RETRIEVE_NO)
    lps = model.next_logprobs(ids, [yes, no])
    p_yes, p_no = math.exp(lps[yes]), math.exp(lps[no])
    return p_yes / (p_yes + p_no)


# --- (a) always retrieve, K = 3 ----------------------------------------------------------

def test_always_mode_answers_with_three_passages_in_one_batched_call(tiny_model, spy):
    fresh(tiny_model)
    retriever = Retriever(PASSAGES)
    engine = SelfRagEngine(tiny_model, config=EngineConfig(mode="always", k=3, max_tokens=24,
                                                           max_segments=3))
    answer = engine.answer(QUESTION, retrieve=retriever)

    assert answer.decision.retrieved is True
    assert answer.decision.probability is None          # "always" does not ask the model
    assert [j.passage for j in answer.passages] == PASSAGES
    assert all(0.0 <= j.relevance <= 1.0 for j in answer.passages)
    check_segments(answer)
    assert answer.critic == "selfrag" and answer.model == tiny_model.name

    # every expansion with evidence is ONE generate call holding all K=3 branches
    with_evidence_calls = [c for c in spy.calls if c == 3]
    # 0 branches: a segment cut at max_tokens goes on in the same sequence
    assert spy.calls and all(c in (0, 1, 3) for c in spy.calls)
    assert len(retriever.queries) == len(with_evidence_calls)
    # the first expansion's three children are the three passages, in order
    first = [n for n in engine.last_trace if n.depth == 1]
    assert [n.passage for n in first] == [0, 1, 2]
    # the shared prompt was evaluated once in the first call: fewer prompt tokens than
    # K full prompts
    prompt = prompt_ids(tiny_model, QUESTION)[0]
    assert spy.prompt_tokens[0] < 3 * len(prompt) + sum(
        len(tiny_model.tokenize(f"{p.title}\n{p.text}", special=False)) + 3 for p in PASSAGES)


# --- (b) adaptive: the threshold decides ---------------------------------------------------

# How far the renormalised Retrieve probability may move when llama.cpp evaluates the same
# prompt in another batch shape (its prefix cache holds earlier answers' sequences): the
# group tolerance of tests/test_models_decoding.py, p(1 - p) * 2 * LOGIT_TOL <= LOGIT_TOL / 2
# with LOGIT_TOL = 0.025 for the seeded test model. Measured here: 3.8e-5 on a 2-core AMD
# EPYC with AVX2 and no AVX-512 (the second answer below), under 1e-6 on Zen 4 and Sapphire
# Rapids. A changed early token of the prompt moves it by 0.07 or more (same file).
RETRIEVE_TOL = 0.0125


def test_adaptive_decision_is_the_renormalised_probability_and_follows_the_threshold(tiny_model, spy):
    fresh(tiny_model)
    prob = measured_retrieve_probability(tiny_model, QUESTION)
    assert 2 * RETRIEVE_TOL < prob < 1.0 - 2 * RETRIEVE_TOL
    # thresholds just beyond the noise on either side: each must decide one way only
    below, above = prob - 2 * RETRIEVE_TOL, prob + 2 * RETRIEVE_TOL

    low = SelfRagEngine(tiny_model, config=EngineConfig(mode="adaptive", threshold=below, k=3,
                                                        max_tokens=12, max_segments=1))
    retriever = Retriever(PASSAGES)
    answer = low.answer(QUESTION, retrieve=retriever)
    # the same prompt, perhaps in another batch shape than before (RETRIEVE_TOL)
    assert answer.decision.probability == pytest.approx(prob, abs=RETRIEVE_TOL)
    assert answer.decision.probability == pytest.approx(retrieve_probability(prob, 1 - prob),
                                                        abs=RETRIEVE_TOL)
    assert answer.decision.retrieved is True and retriever.queries
    assert len(answer.passages) == 3
    check_segments(answer)

    high = SelfRagEngine(tiny_model, config=EngineConfig(mode="adaptive", threshold=above, k=3,
                                                         max_tokens=12, max_segments=1))
    retriever = Retriever(PASSAGES)
    spy.calls.clear()
    answer = high.answer(QUESTION, retrieve=retriever)
    assert answer.decision.probability == pytest.approx(prob, abs=RETRIEVE_TOL)   # as above
    assert answer.decision.retrieved is False
    assert retriever.queries == [] and answer.passages == []
    # one branch: [No Retrieval] + the answer (then 0: a cut answer goes on)
    assert spy.calls[0] == 1 and set(spy.calls[1:]) <= {0}
    check_segments(answer)
    assert {s.label for s in answer.segments} <= {"no_retrieval"}   # (may be empty: cut)
    assert all(s.citation is None for s in answer.segments)


# --- (c) a passage far longer than the context ---------------------------------------------

def test_passage_longer_than_the_context_is_trimmed_with_a_note(tiny_gguf):
    from models.loader import load_model

    model = load_model(tiny_gguf, n_ctx=512, n_threads=THREADS)
    try:
        huge = passage(7, " ".join(["The tower was repainted in many colours over the years."] * 300),
                       title="long.md")
        assert len(model.tokenize(huge.text, special=False)) > 4 * model.n_ctx
        engine = SelfRagEngine(model, config=EngineConfig(mode="always", k=2, max_tokens=16,
                                                          max_segments=2, n_ctx=512))
        answer = engine.answer(QUESTION, retrieve=Retriever([huge, PASSAGES[0]]))
        assert any("trimmed" in n and huge.locator in n for n in answer.notes), answer.notes
        assert [j.passage for j in answer.passages] == [huge, PASSAGES[0]]
        check_segments(answer)
        assert model.stats.generated_tokens > 0
    finally:
        model.close()


# --- (c2) the prompt within the 2,048 tokens the Llama 2 models were trained on -----------

def test_prompt_stays_within_2048_tokens_for_the_llama2_selfrag_layout(tiny_gguf):
    from models.loader import load_model

    model = load_model(tiny_gguf, n_ctx=4096, n_threads=THREADS)
    try:
        spy = GenerateSpy(model)
        model.generate = spy
        engine = SelfRagEngine(model, config=EngineConfig(mode="always", k=1, max_tokens=8,
                                                          max_segments=1, n_ctx=4096))
        assert engine.n_ctx == 4096 and engine.prompt_limit == 2048
        turn = " ".join(["the tower was repainted"] * 30)          # ~120 tokens a turn
        history = [(f"Question {t}: {turn}?", f"Answer {t}: {turn}.") for t in range(8)]
        huge = passage(7, " ".join(["The tower was repainted in many colours."] * 400))
        answer = engine.answer(QUESTION, retrieve=Retriever([huge]), history=history)
        prefix, (branch,) = spy.args[0]
        assert len(prefix) <= 1024 and len(prefix) + len(branch) <= 2048
        assert len(prefix) + len(branch) > 2000                    # the passage fills it
        text = model.detokenize(prefix)
        assert "Question 7" in text and "Question 0" not in text
        assert any("earlier turn(s) left out" in n and "2048 tokens" in n for n in answer.notes)
        assert any("trimmed" in n for n in answer.notes)
        check_segments(answer)
    finally:
        model.close()


# --- (d) a biased model that writes real reflection tokens --------------------------------

@pytest.fixture(scope="module")
def biased_models(tmp_path_factory):
    from models.loader import load_model

    writer = _make_test_gguf_module()
    folder = tmp_path_factory.mktemp("biased")
    models = {
        name: load_model(writer.write_test_gguf(folder / f"{name}.gguf", bias=rules,
                                                context=context),
                         n_ctx=1024, n_threads=THREADS)
        for name, rules, context in (("short", SHORT_ANSWER_RULES, None),
                                     ("long", LONG_ANSWER_RULES, None),
                                     ("trained", TRAINED_RULES, TRAINED_CONTEXT))
    }
    yield models
    for m in models.values():
        m.close()


def test_reflection_tokens_from_llama_cpp_are_parsed_into_labels_and_scores(biased_models):
    model = biased_models["short"]
    vocab = ReflectionVocab.require(model)
    spy = GenerateSpy(model)
    model.generate = spy
    try:
        engine = SelfRagEngine(model, config=EngineConfig(mode="always", k=3, max_tokens=24))
        answer = engine.answer(QUESTION, retrieve=Retriever(PASSAGES))
    finally:
        del model.generate
    assert spy.calls == [3]
    # llama.cpp itself writes the reflection tokens as single ids, in the planned order
    branch = [vocab["[Retrieval]"], vocab["<paragraph>"],
              *model.tokenize("eiffel.md\nx", special=False), vocab["</paragraph>"]]
    (out,) = model.generate(prompt_ids(model, QUESTION)[0], [branch], max_tokens=10)
    assert out.finish == "eos"
    assert out.tokens[0] == vocab["[Relevant]"]
    assert model.detokenize(out.tokens[1:3]).strip() == "Paris."
    assert out.tokens[3:] == [vocab["[Fully supported]"], vocab["[Utility:5]"], model.eos_id]

    assert answer.text == "Paris."
    (seg,) = answer.segments
    assert seg.label == "fully"
    assert seg.citation in (0, 1, 2)
    assert seg.scores.rel == pytest.approx(1.0, abs=1e-6)
    assert seg.scores.sup == pytest.approx(1.0, abs=1e-6)
    assert seg.scores.use == pytest.approx(1.0, abs=1e-6)     # [Utility:5] weighs +1
    assert seg.scores.seq == pytest.approx(1.0, abs=1e-3)
    assert seg.scores.total == pytest.approx(1.0 + 1.0 + 1.0 + 0.5, abs=1e-3)
    assert all(j.relevant and j.relevance == pytest.approx(1.0, abs=1e-6) for j in answer.passages)
    check_segments(answer)


def test_segment_beam_search_grows_on_real_retrieval_tokens(biased_models):
    model = biased_models["long"]
    retriever = Retriever(PASSAGES)
    engine = SelfRagEngine(model, config=EngineConfig(mode="always", k=3, max_tokens=16,
                                                      beam_width=2, max_segments=3))
    streamed = []
    answer = engine.answer(QUESTION, retrieve=retriever, on_segment=streamed.append)
    # every segment ends with [Retrieval]: retrieve again, up to the limit
    assert len(retriever.queries) == 1 + 2 + 2          # root, then 2 beams x 2 steps
    # depth 4: at the limit the pending [Retrieval] goes on once without new evidence
    assert max(n.depth for n in engine.last_trace) == 4
    assert [s.text for s in answer.segments] == ["Paris.", "Paris.", "Paris."]
    assert all(s.label == "fully" and s.label_source == "own" for s in answer.segments)
    assert any("limit of 3 segments" in n for n in answer.notes)
    assert [s.text for s in streamed] == [s.text for s in answer.segments]
    check_segments(answer)


# --- (e) the loop as trained, on a hand-weighted model -------------------------------------

def branch_ids(model, p) -> list[int]:
    v = ReflectionVocab.require(model)
    return [v["[Retrieval]"], v["<paragraph>"],
            *encode_text(model, f"{p.title}\n{p.text}", leading_space=False), v["</paragraph>"]]


@pytest.fixture
def trained(biased_models):
    model = biased_models["trained"]
    model.clear_cache()
    spy = GenerateSpy(model)
    model.generate = spy
    yield model, spy
    del model.generate


def test_continue_to_use_evidence_goes_on_with_the_passage_in_context(trained):
    model, spy = trained
    v = ReflectionVocab.require(model)
    retriever = Retriever(PASSAGES)
    engine = SelfRagEngine(model, config=EngineConfig(mode="always", k=3, max_tokens=24))
    answer = engine.answer(QUESTION, retrieve=retriever)
    assert spy.calls == [3] and len(retriever.queries) == 1   # one sequence per passage
    # llama.cpp wrote the whole training-shaped answer in each branch; the sentence after
    # [Continue to Use Evidence] depends on the passage still in context
    words = {w: model.tokenize(w, special=False) for w in ("Paris.", "Rome!", "Lyon!", "Nice?")}
    assert all(len(ids) == 2 for ids in words.values())      # "▁Paris" "." etc.
    for p, gen in zip(PASSAGES, spy.outputs[0]):
        second = "Rome!" if "company" in p.text else "Lyon!"
        assert gen.finish == "eos"
        assert gen.tokens == [
            v["[Relevant]"], *words["Paris."], v["[Fully supported]"],
            v["[Continue to Use Evidence]"], *words[second],
            v["[No Retrieval]"], *words["Nice?"], v["[Utility:5]"], model.eos_id]
    paris, second, nice = answer.segments
    c = paris.citation
    assert (paris.text, paris.label, paris.label_source) == ("Paris.", "fully", "own")
    assert second.text == ("Rome!" if "company" in PASSAGES[c].text else "Lyon!")
    assert (second.label, second.label_source, second.citation) == ("fully", "segment", c)
    assert (nice.text, nice.label, nice.label_source, nice.citation) == (
        "Nice?", "no_retrieval", "retrieval", None)
    check_segments(answer)

    # with only the passage holding "company": the answer reads as the model wrote it
    spy.clear()
    only = engine.answer(QUESTION, retrieve=Retriever([PASSAGES[0]]))
    assert only.text == "Paris. Rome! Nice?"
    assert [s.citation for s in only.segments] == [0, 0, None]
    assert spy.calls == [1]


def measured_continue_r(model, p) -> float:
    """p([Retrieval]) over the Retrieve group at the position after "[Fully supported]",
    read straight from llama.cpp's logits."""
    v = ReflectionVocab.require(model)
    ids = [*prompt_ids(model, QUESTION)[0], *branch_ids(model, p), v["[Relevant]"],
           *model.tokenize("Paris.", special=False), v["[Fully supported]"]]
    group = [v["[Retrieval]"], v["[Continue to Use Evidence]"], v["[No Retrieval]"]]
    lps = model.next_logprobs(ids, group)
    probs = [math.exp(lps[i]) for i in group]
    return probs[0] / sum(probs)


def test_adaptive_threshold_at_a_real_retrieve_group_position(trained):
    model, spy = trained
    rs = [measured_continue_r(model, p) for p in PASSAGES[:2]]
    assert all(0.1 < r < 0.6 for r in rs), rs
    # above every r: the model's [Continue to Use Evidence] stands, nothing is fetched
    high = SelfRagEngine(model, config=EngineConfig(mode="adaptive", threshold=max(rs) + 0.01,
                                                    k=2, beam_width=1, max_tokens=24))
    retriever = Retriever(PASSAGES[:2], [PASSAGES[2]])
    answer = high.answer(QUESTION, retrieve=retriever)
    assert answer.decision.retrieved and len(retriever.queries) == 1
    assert [s.text for s in answer.segments][0::2] == ["Paris.", "Nice?"]
    # below every r: the segment ends there and new passages are fetched
    low = SelfRagEngine(model, config=EngineConfig(mode="adaptive", threshold=min(rs) - 0.01,
                                                   k=2, beam_width=1, max_tokens=24,
                                                   max_segments=2))
    retriever = Retriever(PASSAGES[:2], [PASSAGES[2]])
    spy.clear()
    answer = low.answer(QUESTION, retrieve=retriever)
    assert len(retriever.queries) == 2 and spy.calls[:2] == [2, 1]
    first, second = answer.segments[:2]
    assert (first.text, second.text) == ("Paris.", "Paris.")
    assert answer.passages[first.citation].passage in PASSAGES[:2]
    assert answer.passages[second.citation].passage == PASSAGES[2]
    # the second round's context: the first passage's frame and segment, then [Retrieval]
    prefix, (branch,) = spy.args[1]
    v = ReflectionVocab.require(model)
    assert prefix[-1] == v["[Fully supported]"] and branch[0] == v["[Retrieval]"]
    first = prefix.index(v["[Relevant]"])
    assert prefix[first - 1] == v["</paragraph>"] and v["<paragraph>"] in prefix[:first]
    check_segments(answer)


def test_at_stop_writes_another_token_and_the_sequence_goes_on_from_it(trained):
    """The backend half of the loop: at a stop id, `at_stop` may write another token; the
    branch goes on in the same llama.cpp sequence and what follows depends on it."""
    model, _ = trained
    v = ReflectionVocab.require(model)
    asked = []

    def rule(step):
        asked.append(step.token)
        return v["[No Retrieval]"] if step.token == v["[Continue to Use Evidence]"] else None

    (gen,) = model.generate(prompt_ids(model, QUESTION)[0], [branch_ids(model, PASSAGES[1])],
                            max_tokens=16, stop_ids=[v["[Continue to Use Evidence]"]],
                            watch_ids=v.all_ids, at_stop=rule)
    assert asked == [v["[Continue to Use Evidence]"]]
    step = gen.steps[4]
    assert (step.token, step.replaced) == (v["[No Retrieval]"], v["[Continue to Use Evidence]"])
    assert step.logprob == pytest.approx(step.watched[v["[No Retrieval]"]], abs=1e-9)
    assert step.logprob < -10                       # not what the model would have written
    assert gen.tokens[5:] == [*model.tokenize("Nice?", special=False), v["[Utility:5]"],
                              model.eos_id]
    assert gen.finish == "eos"


def test_assistant_end_to_end_labels_every_sentence_and_says_from_where(tmp_path, embedder):
    """The facade with a real index, the real embedder and the hand-weighted model: the
    sentence after [Continue to Use Evidence] has no IsSup token of its own, so the
    fallback critic the Assistant gives the Self-RAG engine labels it."""
    from localrag.assistant import Assistant
    from localrag.paths import Paths
    from localrag.settings import Settings
    from models.loader import load_model

    notes = tmp_path / "notes"
    notes.mkdir()
    (notes / "eiffel.md").write_text(PASSAGES[0].text + "\n")
    gguf = _make_test_gguf_module().write_test_gguf(tmp_path / "trained.gguf", bias=TRAINED_RULES,
                                                    context=TRAINED_CONTEXT)
    settings = Settings()
    settings.set("retrieval_mode", "always")
    settings.set("k", 1)
    model = load_model(gguf, n_ctx=1024, n_threads=THREADS)
    with Assistant(paths=Paths.resolve(tmp_path / "data"), settings=settings, model=model,
                   embedder=embedder) as assistant:
        assistant.add_root(notes)
        assistant.update_index()
        answer = assistant.ask(QUESTION)
    assert [(s.text, s.label_source, s.citation) for s in answer.segments] == [
        ("Paris.", "own", 0), ("Rome!", "critic", 0), ("Nice?", "retrieval", None)]
    assert answer.segments[0].label == "fully"
    assert answer.segments[1].label == "none"    # nothing in the passage says "Rome"
    assert [s["label_source"] for s in answer.to_json()["segments"]] == ["own", "critic", "retrieval"]
    assert any("fallback critic (embedding+lexical)" in n for n in answer.notes)
