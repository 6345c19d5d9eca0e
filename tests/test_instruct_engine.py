"""InstructEngine: the answer loop for ordinary instruct models.

Unit tests run the real loop against the scripted fake model (models/scripted.py) and a
stub critic with fixed judgments, so every number is known. The integration test at the
end runs real SmolLM2 (llama.cpp) with the real embedding critic.
"""

from __future__ import annotations

import math
import threading
from collections.abc import Sequence

import pytest

from indexer.records import Passage
from localrag.answering.judge.critics import SupportJudgement
from localrag.errors import AnswerCancelled
from localrag.answering.generate.instruct import InstructEngine, common_prefix_len
from localrag.answering.judge.scoring import Weights
from localrag.answering.generate.selfrag import EngineConfig
from models.scripted import EOS, ScriptedModel


def passage(i: int, title: str, text: str) -> Passage:
    return Passage(chunk_id=i, path=f"/notes/{title}", title=title, text=text,
                   start_line=1 + 10 * i, end_line=5 + 10 * i, page=None, char_start=0,
                   char_end=len(text), score=1.0 - 0.1 * i)


DENTIST = passage(0, "calendar.md", "Dentist Dr Okafor on Tuesday 14 May at 9:30.")
GARDEN = passage(1, "garden.md", "Plant the tomatoes out in mid May after the frost.")
BREAD = passage(2, "recipes.md", "Bake the banana bread for 60 minutes.")
PASSAGES = [DENTIST, GARDEN, BREAD]


class StubCritic:
    """Fixed judgments: relevance by title, support label by (passage title, word)."""

    name = "stub-critic"

    def __init__(self, *, retrieve_p: float = 0.9, after_search: bool = True,
                 relevance: dict[str, float] | None = None,
                 support: dict[tuple[str, str], str] | None = None) -> None:
        self.retrieve_p = retrieve_p
        self.decides_after_search = after_search
        self.rel = relevance or {"calendar.md": 0.9, "garden.md": 0.6, "recipes.md": 0.1}
        self.sup = support or {}
        self.calls: list[str] = []

    def retrieve_probability(self, question: str, passages: Sequence[str]) -> float:
        self.calls.append(f"retrieve:{len(passages)}")
        return self.retrieve_p

    def relevance(self, question: str, passages: Sequence[str]) -> list[float]:
        self.calls.append("relevance")
        return [self.rel[p.split("\n", 1)[0]] for p in passages]

    def prepare(self, sentences: Sequence[str], passages: Sequence[str]) -> None:
        self.calls.append(f"prepare:{len(sentences)}:{len(passages)}")

    def support(self, sentences: Sequence[str], passage: str) -> list[SupportJudgement]:
        title = passage.split("\n", 1)[0]
        out = []
        for s in sentences:
            label = next((lab for (t, word), lab in self.sup.items()
                          if t == title and word in s), "none")
            probs = {"fully": (1.0, 0.0, 0.0), "partially": (0.0, 1.0, 0.0),
                     "none": (0.0, 0.0, 1.0), "unchecked": (0.0, 0.0, 1.0)}[label]
            out.append(SupportJudgement(*probs, label))  # type: ignore[arg-type]
        return out


ASSISTANT = ["assistant", "|", ">", "\n"]


def scripted(*, word_p: dict[str, float] | None = None, n_ctx: int = 4096) -> ScriptedModel:
    """An instruct model that answers from whichever note its prompt holds."""
    m = ScriptedModel(reflection=False, n_ctx=n_ctx, name="scripted-instruct")
    word_p = word_p or {}
    answers = {
        "Okafor": "Your appointment is with Dr Okafor on 14 May. It is at 9:30.",
        "tomatoes": "Plant them in mid May.",
        "banana": "Bake for 60 minutes.",
    }
    # no note in the prompt: the model's own words (added first: on equal suffixes the
    # rule added last wins, so the note-specific rules below take precedence)
    steps = [{piece: 0.5} for piece in m.pieces("I do not know.")] + [{EOS: 1.0}]
    m.script(steps, after=ASSISTANT)
    for key, text in answers.items():
        p = word_p.get(key, 0.9)
        steps = [{piece: p} for piece in m.pieces(text)] + [{EOS: 1.0}]
        m.script(steps, after=ASSISTANT, contains=key)
    return m


def retriever(passages: list[Passage]):
    calls: list[tuple[str, int]] = []

    def retrieve(query: str, k: int) -> list[Passage]:
        calls.append((query, k))
        return passages[:k]

    retrieve.calls = calls  # type: ignore[attr-defined]
    return retrieve


def config(**kw) -> EngineConfig:
    kw.setdefault("k", 3)
    return EngineConfig(**kw)


def test_one_generate_call_for_the_best_scored_passages_with_a_shared_prefix():
    model = scripted()
    critic = StubCritic(support={("calendar.md", "Okafor"): "fully",
                                 ("calendar.md", "9:30"): "partially",
                                 ("garden.md", "May"): "fully"})
    engine = InstructEngine(model, config=config(), critic=critic)
    streamed = []
    ans = engine.answer("When is my dentist appointment?", retrieve=retriever(PASSAGES),
                        on_segment=streamed.append)

    # the two best relevance scores (max_candidates 2): calendar and garden -> 2 branches in ONE call
    assert len(model.calls) == 1
    call = model.calls[0]
    assert len(call.branches) == 2
    prefix_text = model.detokenize(call.prefix)
    assert "When is my dentist appointment?" in prefix_text     # the question is shared
    assert "Okafor" not in prefix_text and "tomatoes" not in prefix_text
    assert "Okafor" in model.detokenize(call.branches[0])
    assert "tomatoes" in model.detokenize(call.branches[1])

    assert ans.critic == "stub-critic"
    assert ans.decision.retrieved and ans.decision.probability == pytest.approx(0.9)
    # relevance is a score, never a verdict: no critic's labels met the AUC target
    assert [j.relevant for j in ans.passages] == [None, None, None]
    assert [j.relevance for j in ans.passages] == [0.9, 0.6, 0.1]
    assert [s.text for s in ans.segments] == [
        "Your appointment is with Dr Okafor on 14 May.", "It is at 9:30."]
    assert [s.label for s in ans.segments] == ["fully", "partially"]
    assert all(s.citation == 0 and s.passage == DENTIST for s in ans.segments)
    assert streamed == ans.segments

    # the scores are scoring.total_score's: exp(mean log p) + w_rel s_rel + w_sup s_sup
    seg = ans.segments[0]
    assert seg.scores.rel == pytest.approx(0.9)
    assert seg.scores.sup == pytest.approx(1.0)
    assert ans.segments[1].scores.sup == pytest.approx(0.5)
    n_words = len(model.pieces("Your appointment is with Dr Okafor on 14 May. It is at 9:30."))
    mean_lp = (n_words * math.log(0.9) + 0.0) / (n_words + 1)      # EOS step has p = 1
    assert seg.scores.seq == pytest.approx(math.exp(mean_lp))
    assert seg.scores.total == pytest.approx(math.exp(mean_lp) + 0.9 + 0.75)
    # garden candidate: exp(mean) + 0.6 + 1.0 < dentist's total, so dentist wins


def test_weights_change_the_winner():
    critic = StubCritic(support={("calendar.md", "Okafor"): "unchecked",
                                 ("garden.md", "May"): "fully"})
    for w_sup, winner in ((0.1, 0), (2.0, 1)):
        engine = InstructEngine(scripted(), config=config(weights=Weights(w_sup=w_sup)),
                                critic=critic)
        ans = engine.answer("When?", retrieve=retriever(PASSAGES))
        assert {s.citation for s in ans.segments} == {winner}


def test_strict_mode_drops_unsupported_candidates():
    critic = StubCritic(support={("calendar.md", "Okafor"): "fully",
                                 ("garden.md", "May"): "fully"})
    engine = InstructEngine(scripted(), config=config(strict=True), critic=critic)
    ans = engine.answer("When?", retrieve=retriever(PASSAGES))
    # the dentist answer's second sentence ("It is at 9:30.") is unsupported: dropped
    assert ans.passages[0].dropped and "strict" in (ans.passages[0].drop_reason or "")
    assert not ans.passages[1].dropped
    assert [s.citation for s in ans.segments] == [1]
    assert ans.segments[0].label == "fully"


def test_strict_mode_with_nothing_supported_answers_without_retrieval():
    engine = InstructEngine(scripted(), config=config(strict=True), critic=StubCritic())
    ans = engine.answer("When?", retrieve=retriever(PASSAGES))
    assert ans.decision.retrieved
    assert all(s.label == "no_retrieval" and s.citation is None for s in ans.segments)
    assert ans.text == "I do not know."
    assert any("strict mode" in n for n in ans.notes)


def test_adaptive_threshold_and_modes():
    for p, retrieved in ((0.15, False), (0.25, True)):
        model = scripted()
        critic = StubCritic(retrieve_p=p, after_search=False)
        r = retriever(PASSAGES)
        ans = InstructEngine(model, config=config(threshold=0.2), critic=critic).answer(
            "When?", retrieve=r)
        assert ans.decision.retrieved is retrieved
        assert len(r.calls) == (1 if retrieved else 0)   # question-only critic asks first
        assert ans.decision.probability == pytest.approx(p)
    r = retriever(PASSAGES)
    ans = InstructEngine(scripted(), config=config(mode="never"), critic=StubCritic()).answer(
        "When?", retrieve=r)
    assert not r.calls and not ans.decision.retrieved
    assert [s.label for s in ans.segments] == ["no_retrieval"]
    ans = InstructEngine(scripted(), config=config(mode="always"),
                         critic=StubCritic(retrieve_p=0.0)).answer("When?", retrieve=retriever(PASSAGES))
    assert ans.decision.retrieved and ans.decision.probability is None


def test_empty_index_and_an_unanswering_passage_are_said():
    ans = InstructEngine(scripted(), config=config(), critic=StubCritic()).answer(
        "When?", retrieve=retriever(PASSAGES), index_empty=True)
    assert not ans.decision.retrieved and "index is empty" in ans.notes[0]
    ans = InstructEngine(scripted(), config=config(), critic=StubCritic()).answer(
        "When?", retrieve=retriever([BREAD]))
    # a low relevance score drops nothing: the recipe note gets its candidate, whose
    # sentence it does not support, so the model's own-knowledge answer is said as such
    assert [s.label for s in ans.segments] == ["no_retrieval"]
    assert len(ans.passages) == 1 and ans.passages[0].relevant is None
    assert any("nothing in the passages answers the question" in n for n in ans.notes)
    ans = InstructEngine(scripted(), config=config(), critic=StubCritic()).answer(
        "When?", retrieve=retriever([]))
    assert not ans.decision.retrieved and any("no passage matched" in n for n in ans.notes)


def test_cancel_raises():
    cancel = threading.Event()
    cancel.set()
    with pytest.raises(AnswerCancelled):
        InstructEngine(scripted(), config=config(), critic=StubCritic()).answer(
            "When?", retrieve=retriever(PASSAGES), cancel=cancel)


def test_history_is_in_the_shared_prefix_and_search_uses_the_query():
    model = scripted()
    r = retriever(PASSAGES)
    InstructEngine(model, config=config(), critic=StubCritic()).answer(
        "and when?", retrieve=r, search_query="and when? (dentist)",
        history=[("Who is my dentist?", "Dr Okafor.")])
    assert r.calls == [("and when? (dentist)", 3)]
    assert "Who is my dentist?" in model.detokenize(model.calls[0].prefix)


def test_long_passages_are_trimmed_to_the_context():
    long_text = "Dentist Dr Okafor. " + "filler words " * 400
    long = passage(0, "calendar.md", long_text)
    model = scripted(n_ctx=400)
    ans = InstructEngine(model, config=config(max_tokens=60, n_ctx=400), critic=StubCritic(),
                         fit_tokens=0).answer("When?", retrieve=retriever([long]))
    call = model.calls[0]
    assert len(call.prefix) + max(len(b) for b in call.branches) + call.max_tokens <= 400
    assert any("trimmed" in n for n in ans.notes)


def test_common_prefix_leaves_every_branch_a_token():
    assert common_prefix_len([[1, 2, 3], [1, 2, 4]]) == 2
    assert common_prefix_len([[1, 2, 3], [1, 2, 3]]) == 2
    assert common_prefix_len([[1, 2, 3]]) == 2
    assert common_prefix_len([[5], [6]]) == 0


def test_answer_sentences_drop_prompt_echo_and_bare_headings() -> None:
    from localrag.answering.generate.instruct import answer_sentences

    text = ("Tomato plants need six hours of sun.\nWater them deeply\ntwice a week.\n\n"
            "## Basil\n\nUsing only this note, answer the question: How much sun?\n"
            "Answer the question using only this note.\n"
            "How much sun do tomatoes need?")
    assert answer_sentences(text, "How much sun do tomatoes need?") == [
        "Tomato plants need six hours of sun.", "Water them deeply twice a week."]


def test_the_critic_is_prepared_once_with_every_candidate_sentence():
    critic = StubCritic()
    engine = InstructEngine(scripted(), config=config(), critic=critic)
    engine.answer("When?", retrieve=retriever(PASSAGES))
    # two relevant passages: the dentist answer has 2 sentences, the garden answer 1
    assert [c for c in critic.calls if c.startswith("prepare")] == ["prepare:3:2"]


def test_closed_set_candidates_pool_their_scores():
    """Three notes, answers yes / no / yes: 'no' is the best single candidate, the two
    'yes' candidates together score more (SELFRAG.md section 4)."""
    m = ScriptedModel(reflection=False, name="scripted-instruct")
    for key, text in (("first", "Yes."), ("second", "No."), ("third", "Yes.")):
        m.script([{piece: 0.9} for piece in m.pieces(text)] + [{EOS: 1.0}],
                 after=ASSISTANT, contains=key)
    notes = [passage(i, f"{key}.md", f"The {key} note.") for i, key in
             enumerate(("first", "second", "third"))]
    critic = StubCritic(relevance={"first.md": 0.6, "second.md": 1.0, "third.md": 0.6},
                        support={("first.md", "Yes"): "partially", ("second.md", "No"): "fully",
                                 ("third.md", "Yes"): "partially"})
    ans = InstructEngine(m, config=config(), critic=critic, max_candidates=3).answer("Is it on?",
                                                                   retrieve=retriever(notes))
    assert ans.text == "Yes."
    assert ans.segments[0].citation == 0
    assert any("closed-set answer: 2 candidates" in n for n in ans.notes)


def test_answer_sentences_drop_loops_and_a_cut_off_tail() -> None:
    from localrag.answering.generate.instruct import answer_sentences

    looped = ("Backups run nightly at 02:00 to the NAS. Backups run nightly at 02:00 to the NAS.\n"
              "backups run  nightly at 02:00 to the NAS. Backups run nightly at")
    assert answer_sentences(looped, "When?", complete=False) == [
        "Backups run nightly at 02:00 to the NAS."]
    # finished at EOS: the last sentence is the model's own ending, kept
    assert answer_sentences("It is on the NAS. It runs at", "When?") == [
        "It is on the NAS.", "It runs at"]
    # cut off, but the only sentence: kept (half an answer beats none)
    assert answer_sentences("Backups run nightly at", "When?", complete=False) == [
        "Backups run nightly at"]
    assert answer_sentences('He said "yes." Then', "Q?", complete=False) == ['He said "yes."']


def test_headings_reach_the_model_as_plain_lines() -> None:
    from localrag.answering.generate.instruct import prompt_text

    model = scripted()
    note = passage(0, "calendar.md", "# Health\n\n## Dentist ##\n\nDr Okafor on 14 May.\n"
                                     "    # indented code stays\n#hashtag stays")
    InstructEngine(model, config=config(), critic=StubCritic()).answer(
        "When?", retrieve=retriever([note]))
    call = model.calls[0]
    branch = model.detokenize(call.prefix + call.branches[0])
    assert "Health:" in branch and "Dentist:" in branch and "## " not in branch
    assert prompt_text(note.text).endswith("    # indented code stays\n#hashtag stays")


def test_model_sentences_are_the_answer_only_when_the_relevance_model_says_they_answer():
    """With the relevance model (issue 17), a supported model sentence that does not answer
    is shown as context (›), never with the answer's ✔; the model reads it under its
    passage's title."""
    critic = StubCritic(support={("calendar.md", "Okafor"): "fully",
                                 ("calendar.md", "9:30"): "fully"})
    read: list[str] = []

    def answers(question: str, texts: Sequence[str]) -> list[float]:
        read.extend(texts)
        return [0.9 if "Okafor" in t else 0.1 for t in texts]

    ans = InstructEngine(scripted(), config=config(), critic=critic, answers=answers).answer(
        "Who is my dentist?", retrieve=retriever(PASSAGES))
    assert [(s.text, s.label, s.role) for s in ans.segments] == [
        ("Your appointment is with Dr Okafor on 14 May.", "fully", "answer"),
        ("It is at 9:30.", "fully", "context")]
    assert read[0].startswith("calendar.md\n")
    assert not any("judged none of these" in n for n in ans.notes)
    nothing = InstructEngine(scripted(), config=config(), critic=critic,
                             answers=lambda q, texts: [0.1] * len(texts)).answer(
        "Who is my dentist?", retrieve=retriever(PASSAGES))
    assert [s.role for s in nothing.segments] == ["context", "context"]
    assert any("judged none of these sentences to answer" in n for n in nothing.notes)
    plain = InstructEngine(scripted(), config=config(), critic=critic).answer(
        "Who is my dentist?", retrieve=retriever(PASSAGES))
    assert [s.role for s in plain.segments] == ["answer", "answer"]   # no model: as before


def test_a_relevance_model_that_cannot_be_read_is_a_note_not_a_failure():
    from indexer.relevance_model import RelevanceModelMissing

    def broken(question: str, texts: Sequence[str]) -> list[float]:
        raise RelevanceModelMissing("The relevance model /x/relevance.int8.onnx cannot be read (bad file); reinstall localrag")

    critic = StubCritic(support={("calendar.md", "Okafor"): "fully"})
    ans = InstructEngine(scripted(), config=config(), critic=critic, answers=broken).answer(
        "Who is my dentist?", retrieve=retriever(PASSAGES))
    assert [s.role for s in ans.segments] == ["answer"]
    assert any("cannot be read" in n and "not checked as answers" in n for n in ans.notes)



def _hash_embed(texts):
    import zlib

    import numpy as np

    return np.array([np.random.default_rng(zlib.crc32(t.encode())).normal(size=16) for t in texts],
                    dtype=np.float32)


def test_quotes_are_still_chosen_when_the_relevance_model_cannot_be_read():
    from indexer.relevance_model import RelevanceModelMissing

    def broken(question: str, texts: Sequence[str]) -> list[float]:
        raise RelevanceModelMissing("The relevance model in /x cannot be read (bad file); reinstall localrag")

    critic = StubCritic(support={("calendar.md", "Okafor"): "fully"})
    ans = InstructEngine(scripted(), config=config(), critic=critic, embed=_hash_embed,
                         answers=broken).answer("Who is my dentist?", retrieve=retriever(PASSAGES))
    quotes = [s for s in ans.segments if s.origin == "quote"]
    assert quotes and any(s.role == "answer" for s in quotes)   # the scorer's roles: its best answers
    assert any("quotes were chosen without it" in n for n in ans.notes)
    assert not any("judged none of these" in n for n in ans.notes)


def test_a_question_the_relevance_model_cannot_read_gets_no_answer_marks():
    """The shipped relevance model reads English (relevance_model.LANGUAGES): asked in
    Japanese, its judgment would be noise, so it is not asked. Quotes are still chosen (by
    the scorer) and every unit is shown as context, with a note saying why; passages are
    "relevance not checked". The same passages asked in English are judged as before."""
    read: list[str] = []

    def answers(question: str, texts: Sequence[str]) -> list[float]:
        read.extend(texts)
        return [0.95] * len(texts)

    notes = [passage(0, "calendar.md", "歯医者はオカフォー先生です。予約は五月十四日の九時半です。Dr Okafor."),
             passage(1, "garden.md", "トマトは五月中旬に植えます。霜のあとにします。"),
             passage(2, "recipes.md", "バナナブレッドは六十分焼きます。")]
    critic = StubCritic(support={("calendar.md", "Okafor"): "fully"})
    ans = InstructEngine(scripted(), config=config(), critic=critic, embed=_hash_embed,
                         answers=answers).answer("歯医者の予約はいつですか？", retrieve=retriever(notes))
    assert read == []
    assert any(s.origin == "quote" for s in ans.segments)
    assert ans.segments and all(s.role == "context" for s in ans.segments)
    assert any("reads English only" in n for n in ans.notes)
    assert not any("judged none of these" in n for n in ans.notes)
    assert [j.relevant for j in ans.passages] == [None, None, None]
    no_quotes = InstructEngine(scripted(), config=config(), critic=critic, answers=answers).answer(
        "歯医者の予約はいつですか？", retrieve=retriever(notes))      # no embedder: no quotes at all
    assert read == [] and all(s.role == "context" for s in no_quotes.segments)
    assert any("reads English only" in n for n in no_quotes.notes)
    english = InstructEngine(scripted(), config=config(), critic=critic, embed=_hash_embed,
                             answers=answers).answer("When is my dentist appointment?",
                                                     retrieve=retriever(notes))
    assert read and any(s.role == "answer" for s in english.segments)
    assert not any("reads English only" in n for n in english.notes)


def test_passages_are_judged_to_hold_the_answer_by_their_best_sentence(monkeypatch):
    """Where the passage verdicts meet the AUC and accuracy targets on every corpus left out
    (extract.PASSAGES_CHECKED), each passage is judged by the best answer probability among
    its sentences (PASSAGE_ANSWER_FLOOR), said in the sources and in the decision line; the
    JSON keeps the verdict. Without the model, with one that cannot be read, or with the
    gate not met (as shipped since stop 57: AUC 0.838 on apache and cmake), nothing is judged
    (relevance not checked), and no passage is dropped either way."""
    from localrag.answering.generate import instruct
    from localrag.answering.generate.extract import PASSAGE_ACCURACY, PASSAGE_AUC, PASSAGES_CHECKED
    from localrag.answering.label.answer import answer_from_json

    from localrag.answering.judge.critics import TRUST_ACCURACY, TRUST_AUC

    # the gate is the measured figures against the targets; as shipped the AUC falls short
    met = min(PASSAGE_AUC.values()) >= TRUST_AUC and min(PASSAGE_ACCURACY.values()) >= TRUST_ACCURACY
    assert PASSAGES_CHECKED is met is instruct.PASSAGES_CHECKED is False
    assert {"apache", "cmake", "zsh"} <= set(PASSAGE_AUC) and min(PASSAGE_AUC.values()) < TRUST_AUC
    monkeypatch.setattr(instruct, "PASSAGES_CHECKED", True)     # the gate met: verdicts
    from localrag.answering.label.render import decision_line, relevance_words

    def answers(question: str, texts: Sequence[str]) -> list[float]:
        return [0.95 if "Okafor" in t else 0.01 for t in texts]

    critic = StubCritic(support={("calendar.md", "Okafor"): "fully"})
    ans = InstructEngine(scripted(), config=config(), critic=critic, embed=_hash_embed,
                         answers=answers).answer("Who is my dentist?", retrieve=retriever(PASSAGES))
    assert [j.passage.title for j in ans.passages] == ["calendar.md", "garden.md", "recipes.md"]
    assert [j.relevant for j in ans.passages] == [True, False, False]
    assert all(j.verdict == "answers" and not j.dropped for j in ans.passages)
    assert ans.passages[0].answer_probability > 0.5 > ans.passages[1].answer_probability
    # the critic's score is kept for ordering and the candidates' totals
    assert [j.relevance for j in ans.passages] == [0.9, 0.6, 0.1]
    assert "1 of 3 passages judged to hold the answer" in decision_line(ans)
    assert relevance_words(ans.passages[1]).endswith("judged not to hold the answer")
    again = answer_from_json(ans.to_json())
    assert ([(j.relevant, j.verdict, j.answer_probability) for j in again.passages]
            == [(j.relevant, j.verdict, j.answer_probability) for j in ans.passages])
    # a passage without a sentence the model read is not checked, and said so
    mixed_critic = StubCritic(support={("calendar.md", "Okafor"): "fully"},
                              relevance={"calendar.md": 0.9, "empty.md": 0.5, "recipes.md": 0.1})
    mixed = InstructEngine(scripted(), config=config(), critic=mixed_critic, embed=_hash_embed,
                           answers=answers).answer("Who is my dentist?", retrieve=retriever(
                               [DENTIST, passage(3, "empty.md", "a b c"), BREAD]))
    assert [j.relevant for j in mixed.passages] == [True, None, False]
    assert "1 of 2 passages judged to hold the answer (1 not checked)" in decision_line(mixed)
    # the verdict has a floor of its own (chosen on judged passages), apart from the floor
    # of a quote's role: over it, the passage is judged not to hold the answer while its
    # sentence is still quoted as the answer
    from localrag.answering.generate.extract import PASSAGE_ANSWER_FLOOR, QUOTE_ANSWER_FLOOR

    assert PASSAGE_ANSWER_FLOOR == 0.325 > QUOTE_ANSWER_FLOOR
    with monkeypatch.context() as m:
        m.setattr(instruct, "PASSAGE_ANSWER_FLOOR", ans.passages[0].answer_probability + 0.01)
        strict = InstructEngine(scripted(), config=config(), critic=critic, embed=_hash_embed,
                                answers=answers).answer("Who is my dentist?", retrieve=retriever(PASSAGES))
    assert [j.relevant for j in strict.passages] == [False, False, False]
    assert any(s.origin == "quote" and s.role == "answer" and "Okafor" in s.text for s in strict.segments)

    def broken(question: str, texts: Sequence[str]) -> list[float]:
        from indexer.relevance_model import RelevanceModelMissing
        raise RelevanceModelMissing("The relevance model in /x cannot be read (bad file); reinstall localrag")

    for kw in ({}, {"answers": broken}):
        plain = InstructEngine(scripted(), config=config(), critic=critic, embed=_hash_embed,
                               **kw).answer("Who is my dentist?", retrieve=retriever(PASSAGES))
        assert len(plain.passages) == 3 and all(j.relevant is None for j in plain.passages)
        assert "relevance not checked" in decision_line(plain)
    monkeypatch.setattr(instruct, "PASSAGES_CHECKED", False)     # as shipped: nothing judged
    shipped = InstructEngine(scripted(), config=config(), critic=critic, embed=_hash_embed,
                             answers=answers).answer("Who is my dentist?", retrieve=retriever(PASSAGES))
    assert all(j.relevant is None and j.verdict == "relevant" and j.answer_probability is None
               for j in shipped.passages)
    assert [j.relevance for j in shipped.passages] == [0.9, 0.6, 0.1]


def test_the_nothing_answers_note_needs_every_unit_to_be_context():
    """A unit the model judged an answer but the critic could not check (?) is still shown
    as the answer: no note that nothing answers."""
    critic = StubCritic(support={("calendar.md", "Okafor"): "unchecked"})
    ans = InstructEngine(scripted(), config=config(), critic=critic,
                         answers=lambda q, texts: [0.9] * len(texts)).answer(
        "Who is my dentist?", retrieve=retriever(PASSAGES))
    assert ans.segments and all(s.role == "answer" for s in ans.segments)
    assert not any("judged none of these" in n for n in ans.notes)


def test_a_quotes_subject_is_part_of_its_unit_under_one_mark():
    """A sentence that describes a term it does not name ("Specifies the maximum ...")
    is quoted with the term line (extract.subject_of) in the same unit: one mark for the
    name and what it says, never a ✔ on the bare name. The unit's line is the sentence's
    own; renderings show the term as inline code before the quote; a saved chat keeps it."""
    from localrag.answering.label.answer import answer_from_json
    from localrag.answering.label.render import answer_to_markdown, answer_to_text

    text = ("The role and meaning of these parameters does not change.\n\n"
            "max_wal_senders ( integer )\n\nSpecifies the maximum number of concurrent "
            "connections from standby servers. The default is 10 .")
    doc = passage(0, "replication.html", text)
    critic = StubCritic(relevance={"replication.html": 0.9})

    def answers(question: str, texts: Sequence[str]) -> list[float]:
        return [0.9 if "Specifies the maximum" in t else 0.05 for t in texts]

    ans = InstructEngine(scripted(), config=config(), critic=critic, embed=_hash_embed,
                         answers=answers).answer("How many standby servers can connect at once?",
                                                 retrieve=retriever([doc]))
    quotes = [s for s in ans.segments if s.origin == "quote"]
    first = quotes[0]
    assert first.text.startswith("Specifies the maximum") and first.kind == "sentence"
    assert first.subject == "max_wal_senders ( integer )" and first.role == "answer"
    assert first.line == doc.start_line + 4           # the sentence's own line, not the term's
    assert not any(s.kind == "code" and "max_wal_senders" in s.text for s in ans.segments)
    assert "✔ `max_wal_senders ( integer )` “Specifies the maximum" in answer_to_text(ans)
    assert "✔ `max_wal_senders ( integer )` “Specifies the maximum" in answer_to_markdown(ans)
    again = answer_from_json(ans.to_json())
    assert [s.subject for s in again.segments] == [s.subject for s in ans.segments]
    old = ans.to_json()
    for seg in old["segments"]:
        seg.pop("subject")                             # a chat saved before subjects
    assert all(s.subject is None for s in answer_from_json(old).segments)
    # the best quote is the description's second sentence: it is named, and the sentence
    # before it (chosen too) joins it in one excerpt, in the file's order, under the name

    def later_first(question: str, texts: Sequence[str]) -> list[float]:
        return [0.9 if "The default is 10" in t else 0.6 if "Specifies the maximum" in t else 0.05
                for t in texts]

    ans = InstructEngine(scripted(), config=config(), critic=critic, embed=_hash_embed,
                         answers=later_first).answer("How many standby servers can connect at once?",
                                                     retrieve=retriever([doc]))
    first = [s for s in ans.segments if s.origin == "quote"][0]
    assert first.text.startswith("Specifies the maximum") and first.text.endswith("The default is 10 .")
    assert first.subject == "max_wal_senders ( integer )"


def test_an_answer_and_the_sentence_the_file_says_next_are_one_excerpt_under_one_mark():
    """Two chosen quotes that follow each other in the file are shown as one excerpt, one
    unit: the answer's ✔ when either is judged to answer (the role rule leaves the second
    below the best one's share: alone it would be context), at the first one's line."""
    text = ("Backups run nightly. The archive is kept for 30 days, then deleted.\n\n"
            "## Restores\n\nRestores need an admin ticket.")
    doc = passage(0, "backup.md", text)
    critic = StubCritic(relevance={"backup.md": 0.9})

    def answers(question: str, texts: Sequence[str]) -> list[float]:
        return [0.9 if "nightly" in t else 0.3 if "30 days" in t else 0.01 for t in texts]

    ans = InstructEngine(scripted(), config=config(), critic=critic, embed=_hash_embed,
                         answers=answers).answer("How often do backups run?",
                                                 retrieve=retriever([doc]))
    quotes = [s for s in ans.segments if s.origin == "quote"]
    first = quotes[0]
    assert first.text == "Backups run nightly. The archive is kept for 30 days, then deleted."
    assert first.role == "answer" and first.line == doc.start_line
    assert not any(s.text.startswith("The archive") for s in quotes)     # not a unit of its own
    # a heading between: apart, and context
    assert [(s.text, s.role) for s in quotes[1:]] == [("Restores need an admin ticket.", "context")]
