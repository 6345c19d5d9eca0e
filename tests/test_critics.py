"""Critics measured on the labelled set tests/data/critic_cases.json.

The embedding + lexical critic must be clearly better than chance; SmolLM2-135M's own
judgments are measured and printed (run with -s), and `choose_critic` must follow
`critics.MEASURED`, which records those figures.
"""

from __future__ import annotations

import math

import numpy as np

import pytest

from conftest_models import smollm2_model, smollm2_path  # noqa: F401  (pytest fixtures)
from instruct_fixtures import CASES, embed  # noqa: F401
from localrag.answering.judge import lexical
from critic_evaluation import auc, auc_noise_bound, format_figures, load_cases, measure_critic
from localrag.answering.judge.critics import (MEASURE_COMMAND, MEASURED, CompositeCritic, EmbeddingCritic,
                              SupportJudgement, SupportRules, choose_critic, guard_label, model_key,
                              ordinal_support, trusted, whole_statement)
from localrag.answering.judge.model_critic import ModelCritic, first_token_ids
from models.scripted import ScriptedModel


# How far SmolLM2's judge AUCs on critic_cases.json move with the conditions llama.cpp runs
# under: measured by bench/bench_judge_spread.py on a 2-core AMD EPYC (llama-cpp-python
# 0.3.36, SmolLM2's Q8_0 CPU copy), every combination of threads 1 / 2, repacked kernels
# (extra buffer types) on / off and 512 / 64 prompt tokens per llama_decode call:
#
#   condition                    retrieve  relevance  support   (accuracy: all conditions)
#   512 tokens, 1 or 2 threads,   0.7344    0.6286    0.4328    0.6875 / 0.3226 / 0.5484
#     repacked on or off
#   64 tokens, 1 or 2 threads,    0.7656    0.6000    0.4580    the same
#     repacked on or off
#
# Threads and kernels moved nothing; the batch layout moved each AUC by up to 0.031.
# Issue 21 saw retrieve 0.766 against the recorded 0.73 on another machine's build: 0.036.
# The bound is the largest move seen for each judgment, plus one positive/negative pair
# changing order (1 / pairs): +-0.052 retrieve (8 x 8 pairs), +-0.034 relevance (21 x 10),
# +-0.030 support (14 x 17; the score-noise bound used before allowed +-0.4 there). The
# test runs under the recorded conditions (PINNED).
JUDGE_AUC_SPREAD = {"retrieve": 0.036, "relevance": 0.029, "support": 0.026}
PINNED = {"n_threads": 1, "batch_tokens": 512, "n_gpu_layers": 0}


@pytest.fixture(scope="module")
def cases():
    return load_cases(CASES)


@pytest.fixture(scope="module")
def embedding_figures(embed, cases):  # noqa: F811
    return measure_critic(EmbeddingCritic(embed), cases)


@pytest.fixture(scope="module")
def smollm2_figures(smollm2_model, cases):  # noqa: F811
    return measure_critic(ModelCritic(smollm2_model), cases)


# --- the labelled set and the measure ---------------------------------------------------

def test_the_labelled_set_covers_every_kind(cases):
    labels = {(c.relevant, c.support) for c in cases.cases}
    assert {(True, "fully"), (True, "partially"), (True, "none"), (False, "none")} <= labels
    assert 25 <= len(cases.cases) <= 40
    assert {r.retrieve for r in cases.retrieve} == {True, False}


def test_auc():
    assert auc([0.9, 0.8, 0.1], [True, True, False]) == 1.0
    assert auc([0.1, 0.9], [True, False]) == 0.0
    assert auc([0.5, 0.5], [True, False]) == 0.5
    assert auc([0.5], [True]) is None
    # a pair closer than 2 * noise can swap: (0.50, 0.505) and (0.50, 0.515), not (0.50, 0.53)
    assert auc_noise_bound([0.50, 0.90, 0.505, 0.10], [True, True, False, False], 0.01) == 0.25
    assert auc_noise_bound([0.50, 0.90, 0.515, 0.10], [True, True, False, False], 0.01) == 0.25
    assert auc_noise_bound([0.50, 0.90, 0.53, 0.10], [True, True, False, False], 0.01) == 0.0
    assert auc_noise_bound([0.5, 0.5], [True, False], 0.0) == 0.0


# --- the embedding critic (real all-MiniLM-L6-v2) -------------------------------------------

def test_embedding_critic_figures(embedding_figures):
    print("\n" + format_figures("embedding+lexical", embedding_figures))
    print(f"(command: {MEASURE_COMMAND})")
    assert embedding_figures["relevance"]["auc"] >= 0.9
    assert embedding_figures["support"]["auc"] >= 0.9
    assert embedding_figures["support_full"]["auc"] >= 0.9
    assert embedding_figures["retrieve"]["auc"] >= 0.9
    # the hand-made set is a fixture only: label accuracy is not asked of it (the labels
    # now abstain on paraphrases, which this set is full of); the reported figures come
    # from the real set's test half (test_embedding_critic_meets_the_label_targets_...)


def test_embedding_critic_catches_a_wrong_number(embed):  # noqa: F811
    critic = EmbeddingCritic(embed)
    note = "documents.md\nPassport expires 2027-08-19; renew six months before travel."
    right, wrong = critic.support(["Your passport expires on 2027-08-19.",
                                   "Your passport expires on 2025-08-19."], note)
    # a paraphrase is not a copy: the critic does not claim "fully", it abstains
    assert right.label == "unchecked" and right.score > 0.9
    assert wrong.label == "none" and wrong.score < 0.2
    (copy,) = critic.support(["Passport expires 2027-08-19; renew six months before travel."],
                             note)
    assert copy.label == "fully"


_ZLE = ("zle_bracketed_paste\nMany terminal emulators have a feature that allows applications to "
        "identify when text is pasted into the terminal. This option is used to enable bracketed "
        "paste when ZLE is active and disable it at other times. Unsetting the parameter has the "
        "effect of ensuring that bracketed paste remains disabled.")
_CMAKE = ("For single configuration generators like Makefile Generators and Ninja, the "
          "configuration is specified at configure time by the CMAKE_BUILD_TYPE variable.")
_APACHE = ("QUERY_STRING\nThe QUERY_STRING variable is set to anything that appears after a "
           "question mark (?)\nat the end of a requested URL.")


@pytest.mark.parametrize("sentence, passage", [
    # SmolLM2 calls the passage "the note" (the prompt's word) and swaps the subject in
    ("This note is used to enable bracketed paste when ZLE is active and disable it at other times.", _ZLE),
    # the condition the passage states it under, dropped
    ("The configuration is specified at configure time by the CMAKE_BUILD_TYPE variable.", _CMAKE),
    # the rest of a sentence cut by a line break
    ("at the end of a requested URL.", _APACHE),
])
def test_a_near_copy_is_not_fully_supported(embed, sentence, passage):  # noqa: F811
    """A model sentence is "fully" supported only when it says one whole sentence of the
    passage (SupportRules.full_whole): copying most of one is how SmolLM2 says something
    the passage does not (stop 62: its "fully" sentences were judged supported 0.76 of the
    time in the answer rounds, 0.96-0.98 with the rule). Each is "fully" by the copy rule
    alone, which this test checks too, so it fails without the rule."""
    (alone,) = EmbeddingCritic(embed, rules=SupportRules(full_whole=False)).support([sentence], passage)
    assert alone.label == "fully"
    (judged,) = EmbeddingCritic(embed).support([sentence], passage)
    assert judged.label == "unchecked"


@pytest.mark.parametrize("sentence, passage", [
    ("This option is used to enable bracketed paste when ZLE is active and disable it at other times.", _ZLE),
    (_CMAKE, _CMAKE),
    # the line above the sentence (a term, a title) is no part of it
    ("The QUERY_STRING variable is set to anything that appears after a question mark (?)\n"
     "at the end of a requested URL.", _APACHE),
    # a comment's marks and a literal's brackets around the words
    ("The function is called with one argument; a NULL terminated array of (char *).",
     "/* Called when completion is done.\n   The function is called with one argument; a NULL "
     "terminated array of (char *). */"),
])
def test_a_whole_sentence_copied_is_fully_supported(embed, sentence, passage):  # noqa: F811
    (judged,) = EmbeddingCritic(embed).support([sentence], passage)
    assert judged.label == "fully"
    assert whole_statement(sentence, passage)


# --- SmolLM2's own judgments (real llama.cpp) ----------------------------------------------

def test_smollm2_judge_figures_are_recorded(smollm2_figures, smollm2_model, cases):  # noqa: F811
    import models.llama_backend as backend

    print("\n" + format_figures(f"model-judge ({smollm2_model.name})", smollm2_figures))
    print(f"(command: {MEASURE_COMMAND})")
    # the conditions the figures were recorded under (the spreads above are beyond them)
    assert (smollm2_model.n_threads, backend.BATCH_TOKENS) == (PINNED["n_threads"],
                                                               PINNED["batch_tokens"])
    assert smollm2_model.path.suffix == ".gguf" and "q8_0" in smollm2_model.path.name.lower()
    recorded = MEASURED[model_key(smollm2_model)]
    sizes = {"retrieve": len(cases.retrieve), "relevance": len(cases.cases),
             "support": len(cases.cases)}
    for judgment in ("retrieve", "relevance", "support"):
        figures = smollm2_figures[judgment]
        # every case judged, and judged apart: scores that do not vary (a judge reading
        # the wrong position, or falling back to a constant) rank nothing
        assert figures["n"] == sizes[judgment] and len(set(figures["scores"])) > 1, judgment
        n_pos = sum(figures["positive"])
        pairs = n_pos * (len(figures["positive"]) - n_pos)
        tolerance = JUDGE_AUC_SPREAD[judgment] + 1 / pairs
        assert figures["auc"] == pytest.approx(getattr(recorded, judgment).auc,
                                               abs=tolerance), judgment
        # the labels at the threshold did not move at all under any condition measured:
        # the recorded accuracy (two decimals) within one label of the n judged
        assert figures["accuracy"] == pytest.approx(getattr(recorded, judgment).accuracy,
                                                    abs=1 / figures["n"]), judgment
    # PLATFORM.md: as a judge of relevance SmolLM2-135M carries little signal
    assert smollm2_figures["relevance"]["auc"] < 0.8
    assert smollm2_figures["support"]["auc"] < 0.8


def test_choose_critic_uses_the_model_only_where_it_carried_signal(smollm2_model, embed):  # noqa: F811
    critic = choose_critic(smollm2_model, embed)
    figures = MEASURED[model_key(smollm2_model)]
    assert not any(trusted(f) for f in (figures.retrieve, figures.relevance, figures.support))
    assert isinstance(critic, EmbeddingCritic) and critic.name == "embedding+lexical"


def test_choose_critic_composes_a_trusted_judge(embed):  # noqa: F811
    from localrag.answering.judge.critics import CriticFigures, Measured

    model = ScriptedModel(reflection=False, name="toy-judge")
    table = {"toy-judge": CriticFigures(retrieve=Measured(0.9, 0.9), relevance=None,
                                        support=Measured(0.6, 0.5))}
    critic = choose_critic(model, embed, measured=table)
    assert isinstance(critic, CompositeCritic)
    assert critic.name == ("retrieve:model-judge, relevance:embedding+lexical, "
                           "support:embedding+lexical")
    assert critic.decides_after_search is False
    assert isinstance(choose_critic(ScriptedModel(reflection=False, name="unknown"), embed),
                      EmbeddingCritic)


# --- the model critic's arithmetic (scripted model: exact numbers) ------------------------------

def test_model_critic_reads_and_renormalises_answer_tokens():
    model = ScriptedModel(reflection=False, space_prefix=False)
    yes_ids, no_ids = first_token_ids(model, (("yes", "Yes"), ("no", "No")))
    assert len(yes_ids) == 2 and len(no_ids) == 2
    # after the assistant header: yes 0.3 + Yes 0.1 vs no 0.05 + No 0.05 (rest elsewhere)
    model.rule({"yes": 0.3, "Yes": 0.1, "no": 0.05, "No": 0.05},
               after=["assistant", "|", ">", "\n"])
    critic = ModelCritic(model)
    (p,) = critic.relevance("q?", ["title\ntext"])
    assert p == pytest.approx(0.4 / 0.5)
    # only the handful of answer ids is asked for, never the whole vocabulary
    tokens, ids = model.logprob_calls[-1]
    assert len(ids) <= 10


def test_model_critic_support_is_graded():
    model = ScriptedModel(reflection=False, space_prefix=False)
    model.rule({"fully": 0.2, "partially": 0.6, "no": 0.2}, after=["assistant", "|", ">", "\n"])
    (j,) = ModelCritic(model).support(["The sky is blue."], "notes\nThe sky is blue.")
    assert (j.p_full, j.p_partial, j.p_none) == pytest.approx((0.2, 0.6, 0.2))
    assert j.score == pytest.approx(0.2 + 0.5 * 0.6)
    assert j.label == "partially"


# --- label honesty and the lexical check ------------------------------------------------------

def test_no_fully_supported_without_a_strong_lexical_match():
    j = SupportJudgement(0.9, 0.1, 0.0, "fully")
    passage = "bike.md\nTyres 28 mm, pressure 80 psi front and 85 psi rear."
    kept = guard_label(j, "Use 80 psi front and 85 psi rear.", passage)
    assert kept.label == "fully"
    demoted = guard_label(j, "Use 90 psi front and 85 psi rear.", passage)
    assert demoted.label == "partially"
    assert demoted.score == pytest.approx(0.5)          # full mass counted as partial
    assert math.isclose(demoted.p_full + demoted.p_partial + demoted.p_none, 1.0)


def test_ordinal_support_probabilities():
    for x in (0.0, 0.3, 0.5, 0.7, 0.85, 1.0):
        full, partial, none = ordinal_support(x, partial_at=0.5, full_at=0.85, width=0.05)
        assert min(full, partial, none) >= 0 and math.isclose(full + partial + none, 1.0)
    assert ordinal_support(0.5, partial_at=0.5, full_at=0.85, width=0.05)[2] == pytest.approx(0.5)


def test_sentences_and_key_tokens():
    assert lexical.split_sentences(
        "Dentist Dr. Okafor on 14 May. Release 2.3 moves!\nBring the card") == [
        "Dentist Dr. Okafor on 14 May.", "Release 2.3 moves!", "Bring the card"]
    assert lexical.key_tokens("Jonas owns the fix for release 2.3 by 2024-04-15") == [
        "jona", "2.3", "2024-04-15"]
    ov = lexical.overlap("The password is birch-canoe-42.", "wifi password: birch-canoe-42")
    assert ov.key_frac == 1.0 and ov.strong


def test_embedding_critic_prepare_embeds_in_one_pass(embed):  # noqa: F811
    calls: list[int] = []

    def counting(texts):
        calls.append(len(texts))
        return embed(texts)

    critic = EmbeddingCritic(counting)
    note = "house.md\nReplace the water filter every six months. The boiler is serviced in autumn."
    sentences = ["Replace the water filter every six months.", "The boiler is serviced in autumn."]
    critic.prepare(sentences, [note])
    assert len(calls) == 1
    judged = critic.support(sentences, note)
    assert len(calls) == 1                       # support reads what prepare embedded
    assert [j.label for j in judged] == ["fully", "fully"]


def test_sentence_split_keeps_closing_quotes_and_ends_at_a_bare_no():
    from localrag.answering.judge.lexical import split_sentences

    assert split_sentences('He said "yes." Then he left.') == ['He said "yes."', "Then he left."]
    assert split_sentences("Dr. Okafor came. (It was late.) Then") == [
        "Dr. Okafor came.", "(It was late.)", "Then"]
    assert split_sentences("No. The backup is encrypted.") == ["No.", "The backup is encrypted."]
    assert split_sentences("See No. 5 on the list.") == ["See No. 5 on the list."]


def test_sentence_split_keeps_a_literals_stop():
    """zsh's prompt manual: "%6." is a strftime format, its stop no sentence's end (the quote
    was cut to "... hence %6."); nor is a "?" or "." standing alone as a word (Apache's "the
    ? and * wildcard characters" was quoted as "... which may contain the ?"); a percentage's
    stop still ends a sentence, and so does a lone stop before a capital."""
    from localrag.answering.judge.lexical import split_sentences

    text = ("A number of digits up to 9 may be given following the %; hence %6. outputs "
            "microseconds, and %9. outputs nanoseconds. The next one.")
    assert split_sentences(text) == [
        "A number of digits up to 9 may be given following the %; hence %6. outputs microseconds, "
        "and %9. outputs nanoseconds.", "The next one."]
    assert split_sentences("The call %. gives fractions. Done.") == ["The call %. gives fractions.", "Done."]
    assert split_sentences("It grew by 50%. then fell. It is %s. Next.") == [
        "It grew by 50%.", "then fell.", "It is %s.", "Next."]
    assert split_sentences("A pattern may contain the ? and * wildcard characters. ? matches any "
                           "single character. The list contains . (the current directory).") == [
        "A pattern may contain the ? and * wildcard characters.", "? matches any single character.",
        "The list contains . (the current directory)."]
    assert split_sentences("Run it in Flatpak . No setup is needed.") == ["Run it in Flatpak .", "No setup is needed."]


def test_sentence_split_keeps_a_stop_inside_brackets():
    """CMake's "If a set(... CACHE ...) call in the -C file ..." was cut after "set(..." and
    quoted from "CACHE ...) call" (cmake-008, judged noise): a stop inside brackets that close
    later in the sentence, which goes on after them, ends nothing. A synopsis's ellipsis, a
    bracket that ends the sentence and one never closed are read as before."""
    from localrag.answering.judge.lexical import split_sentences

    assert split_sentences("If a set(... CACHE ...) call in the -C file does not use FORCE, the -D "
                           "argument wins. Next one.") == [
        "If a set(... CACHE ...) call in the -C file does not use FORCE, the -D argument wins.", "Next one."]
    assert split_sentences('The driver can allocate "coherent" (a.k.a. shared) memory. Then it maps it.') == [
        'The driver can allocate "coherent" (a.k.a. shared) memory.', "Then it maps it."]
    assert split_sentences("Use it. (It is fast. Really.) Then go.") == [
        "Use it.", "(It is fast.", "Really.)", "Then go."]
    assert split_sentences("| ALL [ PRIVILEGES ] ( column_name [, ...] ) } ON [ TABLE ] table_name") == [
        "| ALL [ PRIVILEGES ] ( column_name [, ...]", ") } ON [ TABLE ] table_name"]
    assert split_sentences("See the list (below. It is long.") == ["See the list (below.", "It is long."]


def test_sentence_split_keeps_a_stop_inside_quotes_that_the_sentence_goes_on_after():
    """zsh's "The value of a pipeline is the value of the last command, unless the pipeline
    is preceded by ‘!’ in which case ..." was quoted up to "‘!’" (zsh-050, judged a fragment):
    a stop in quotes followed by a word in lower case ends nothing; before a capital it still
    does."""
    from localrag.answering.judge.lexical import split_sentences

    assert split_sentences("The value is the last command's, unless the pipeline is preceded by ‘!’ in "
                           "which case it is inverted. If a pipeline is preceded by ‘coproc’, it runs.") == [
        "The value is the last command's, unless the pipeline is preceded by ‘!’ in which case it is "
        "inverted.", "If a pipeline is preceded by ‘coproc’, it runs."]
    assert split_sentences('Write "Hello, world!" back to the client. Then close.') == [
        'Write "Hello, world!" back to the client.', "Then close."]
    assert split_sentences('He said "Go." Then he left.') == ['He said "Go."', "Then he left."]


# --- the real-document set (tests/data/critic_real): TEST half only ------------------------

@pytest.fixture(scope="module")
def real_set():
    from critic_evaluation import load_real_set

    return load_real_set()


def test_real_set_is_split_by_question_and_covers_the_failure_kinds(real_set):
    sentences, relevance = real_set
    for c in [*sentences, *relevance]:
        number = int(c.id.split("-")[1])
        assert c.split == ("dev" if number % 2 else "test"), c.id
    model = [c for c in sentences if c.source == "model"]
    assert len(model) >= 400 and len(relevance) >= 200
    kinds = {c.noise_kind for c in model if not c.meaningful}
    assert {"markup", "code", "repeat", "filler", "echo", "fragment"} <= kinds
    assert {c.support for c in model if c.meaningful} == {"fully", "partially", "none"}


def test_embedding_critic_meets_the_label_targets_on_the_test_half(embed, real_set):  # noqa: F811
    from critic_evaluation import format_real, measure_real
    from localrag.answering.judge.critics import MEASURED_TEST

    m = measure_real(EmbeddingCritic(embed), *real_set, split="test")
    print("\n" + format_real("embedding+lexical", "test", m))
    recorded = MEASURED_TEST["embedding+lexical"]
    assert m["full_precision"] >= 0.90
    assert m["noise_supported"] == 0
    assert m["partial_right"] is None or m["partial_right"] >= 0.5
    # the figures critics.py reports are the ones this run gives (the embedding model is
    # deterministic on CPU to well within these margins)
    assert m["full_precision"] == pytest.approx(recorded.full_precision, abs=0.02)
    assert m["relevance_auc"] == pytest.approx(recorded.relevance_auc, abs=0.02)
    if recorded.partial_right is not None:
        assert m["partial_right"] == pytest.approx(recorded.partial_right, abs=0.03)


def test_the_embedding_cache_bound_never_loses_a_text_being_looked_up():
    """A long session (a bench run, a person asking many questions in the app) fills the
    critic's cache past its bound; the clear used to happen between embedding the new
    texts and looking up the cached ones, and the answer died with a KeyError."""
    calls: list[int] = []

    def embed(texts):
        calls.append(len(texts))
        return np.array([[float(len(t)), 1.0] for t in texts], dtype=np.float32)

    critic = EmbeddingCritic(embed)
    critic._vectors([f"text {i}" for i in range(4097)])          # past the bound
    vecs = critic._vectors(["text 1", "a new sentence", "text 2"])  # cached and new mixed
    expected = np.array([[6.0, 1.0], [14.0, 1.0], [6.0, 1.0]])
    expected /= np.linalg.norm(expected, axis=1, keepdims=True)
    np.testing.assert_allclose(vecs, expected, rtol=1e-6)    # each text its own vector
    assert calls[-1] <= 3                                      # the cleared cache re-embeds
