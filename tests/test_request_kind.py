"""The retrieve decision for instruct models (localrag.answering.decide), measured on the TEST
half of the labelled decision set (tests/data/decision/prompts.jsonl, even ids). The
weights and the nearest-neighbour examples come from the dev half (odd ids) and the
training prompts (train.jsonl) only."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from instruct_fixtures import embed  # noqa: F401  (pytest fixture: the real MiniLM)
from localrag.answering import decide as rk
from localrag.answering.judge.critics import EmbeddingCritic
from localrag.answering.generate.instruct import InstructEngine
from localrag.answering.generate.selfrag import EngineConfig
from models.scripted import ScriptedModel

SET = Path(__file__).parent / "data" / "decision" / "prompts.jsonl"
TARGET = 0.85      # issue 9: >= 85% right both ways on the test half
RECORDED = (28, 28)   # right of 28 needing files / of 32 not (localrag/answering/decide.py;
# 30 of 32 before stop 59 added the manuals' questions to the fit)
# How far a request's probability may move between machines: the only float input is the
# embedding cue (knn). Measured on the 60 test prompts (2-core AMD EPYC): onnxruntime with
# 1 or 2 threads gives identical probabilities; even replacing the int8 ONNX model by the
# float ONNX or torch one moves p by at most 0.0153. A prompt closer than this margin to
# the threshold may flip: since stop 59 "come up with five funny names for the rubber duck
# on my desk" sits at p = 0.21 against 0.2, so the bound allows it to land on either side.
PROBABILITY_NOISE = 0.02


def _rows(parity: int) -> list[dict]:
    rows = [json.loads(line) for line in SET.read_text(encoding="utf-8").splitlines() if line.strip()]
    return [r for r in rows if int(r["id"].split("-")[1]) % 2 == parity]


def test_examples_are_dev_and_training_prompts_only():
    """No test prompt may serve as a nearest-neighbour example."""
    examples = {p for p, _ in rk.load_examples()}
    test_prompts = {r["prompt"] for r in _rows(0)}
    train = SET.with_name("train.jsonl").read_text(encoding="utf-8").splitlines()
    manuals = Path(__file__).parent.parent / "bench" / "data" / "retrieval"   # the training manuals'
    asked = {json.loads(t)["question"] for c in ("kernel", "git", "rust", "vim")   # questions (stop 59)
             for t in (manuals / f"train-{c}.jsonl").read_text(encoding="utf-8").splitlines() if t.strip()}
    allowed = ({r["prompt"] for r in _rows(1)} | {json.loads(t)["prompt"] for t in train if t.strip()}
               | asked)
    assert len(examples) >= 200 and not examples & test_prompts
    assert examples <= allowed


def test_decision_on_the_test_half_is_right_both_ways(embed):  # noqa: F811
    classifier = rk.RequestClassifier(embed)
    test = _rows(0)
    needs = [r for r in test if r["retrieve"]]
    no_needs = [r for r in test if not r["retrieve"]]
    assert len(needs) >= 20 and len(no_needs) >= 20
    threshold = EngineConfig().threshold
    p_needs = [classifier.classify(r["prompt"]).probability for r in needs]
    p_no = [classifier.classify(r["prompt"]).probability for r in no_needs]
    right_needs = sum(p > threshold for p in p_needs)
    right_no = sum(p <= threshold for p in p_no)
    print(f"\nrequest kind, test half: retrieves when needed {right_needs}/{len(needs)}, "
          f"answers without files when not {right_no}/{len(no_needs)}")
    assert (len(needs), len(no_needs)) == (28, 32)
    assert right_needs / len(needs) >= TARGET
    assert right_no / len(no_needs) >= TARGET
    # the recorded figures, less only the prompts whose side of the threshold the noise
    # between machines could change (none today: the bound is the recorded figure itself)
    near = lambda ps: sum(abs(p - threshold) < PROBABILITY_NOISE for p in ps)  # noqa: E731
    assert right_needs >= RECORDED[0] - near(p_needs)
    assert right_no >= RECORDED[1] - near(p_no)


def test_reason_names_the_kind_of_request(embed):  # noqa: F811
    poem = rk.RequestClassifier(None).classify("Write a four-line poem about autumn leaves.")
    assert "creative" in poem.cues and poem.reason == "request looks like creative"
    # arithmetic in words is arithmetic: no search, and the reason says so (the docstring
    # of localrag.answering.decide names this very request)
    threshold = EngineConfig().threshold
    for classifier in (rk.RequestClassifier(None), rk.RequestClassifier(embed)):
        sums = classifier.classify("What is 12 times 7?")
        assert "arithmetic" in sums.cues and sums.reason == "request looks like arithmetic"
        assert sums.probability <= threshold
    notes = rk.RequestClassifier(None).classify("what did we decide in my notes about the NAS?")
    assert notes.reason == "request refers to your files"


@pytest.mark.parametrize("prompt, code_task", [
    # things to write: a code request, whatever comes after its head
    ("C function that checks whether an unsigned int is a power of two", True),
    ("awk command to sum the 3rd column of a comma separated file", True),
    ("I need a bash one-liner to count lines in all .c files", True),
    ("write a python function that reverses a string", True),
    # questions about a manual that name a function or script they are about (cmake-037,
    # git's "entire function that contains each match", zsh's "compctl -K function that")
    ("How can I run configure_file on a shell script that uses its own ${...} variables "
     "without CMake substituting them?", False),
    ("With git grep, how can I see the entire function that contains each match?", False),
    ("I wrote a compctl -K function that fills an array with candidates, but completion "
     "offers nothing.", False),
    ("how does the rtmutex code avoid a userspace program building a huge PI chain?", False),
])
def test_a_code_request_is_one_that_asks_for_code_not_one_that_names_it(prompt, code_task):
    """The code-task cue (no files needed) fires on a request whose head is a thing to
    write, not on a question that names a function or script it is about: it fired on 17 of
    the manuals' questions, and cmake-037's was answered without a search (p 0.19)."""
    assert bool(rk.cue_vector(prompt)["code_task"]) is code_task


def test_a_question_why_a_program_computes_something_is_no_sum():
    assert rk.cue_vector("what is 17 * 23")["arithmetic"]
    assert not rk.cue_vector("Why does $(( 6/8 )) print 0 in zsh instead of 0.75?")["arithmetic"]
    assert not rk.cue_vector("what does echo $(( 2**10 )) print in zsh?")["arithmetic"]


@pytest.mark.parametrize("prompt", [
    'CMake Error: The INTERFACE_POSITION_INDEPENDENT_CODE property of "lib2" does not agree',
    "fatal: merge program failed",
    "E325: ATTENTION Found a swap file",
])
def test_an_error_message_pasted_as_printed_is_looked_up(prompt):
    """A pasted message is a lookup even without "what does it mean": cmake's, with its
    quoted target name, read as pasted text and was answered without a search (p 0.12)."""
    assert rk.cue_vector(prompt)["error_help"]
    assert rk.RequestClassifier(None).classify(prompt).probability > EngineConfig().threshold


def test_default_threshold_sits_at_the_fitted_even_odds():
    """A request whose logit is exactly 0 is reported at EVEN_ODDS_AT (0.2), the default."""
    zero = {k: 0.0 for k in rk.WEIGHTS if k != "bias"}
    w = {**{k: 0.0 for k in rk.WEIGHTS}, "bias": 0.0}
    assert rk.probability(zero, w) == pytest.approx(rk.EVEN_ODDS_AT, abs=1e-12)


def _engine(embed, **cfg):  # noqa: F811
    model = ScriptedModel(reflection=False)
    return InstructEngine(model, config=EngineConfig(**cfg), critic=EmbeddingCritic(embed))


@pytest.mark.parametrize("prompt", [
    "Write a four-line poem about autumn leaves.",
    "Translate into German: the backup finished at noon.",
    "hi there!",
])
def test_instruct_engine_answers_without_searching_when_no_file_is_needed(embed, prompt):  # noqa: F811
    searched: list[str] = []

    def retrieve(query: str, k: int):
        searched.append(query)
        return []

    answer = _engine(embed).answer(prompt, retrieve=retrieve)
    assert searched == []                      # the decision came before any search
    assert answer.decision.retrieved is False
    assert "request looks like" in answer.decision.reason
    assert all(s.label == "no_retrieval" for s in answer.segments)


def test_instruct_engine_searches_for_a_question_about_the_files(embed):  # noqa: F811
    searched: list[str] = []

    def retrieve(query: str, k: int):
        searched.append(query)
        return []

    answer = _engine(embed).answer("how do I turn on the magic SysRq key?", retrieve=retrieve)
    assert searched == ["how do I turn on the magic SysRq key?"]
    assert answer.decision.probability is not None and answer.decision.probability > 0.2
