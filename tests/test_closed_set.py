"""Closed-set answers (SELFRAG.md section 4): candidates that give the same label
(true/false, yes/no, A-E) pool their scores; the best sum wins."""

from __future__ import annotations

import pytest

from localrag.answering.judge.scoring import Weights, closed_set_choice, closed_set_key

try:
    from selfrag_helpers import Retriever, engine, passage, question_model
except ImportError:  # pragma: no cover
    from tests.selfrag_helpers import Retriever, engine, passage, question_model


@pytest.mark.parametrize("text, key", [
    ("True", "true"), ("false.", "false"), ("Yes!", "yes"), ("  no ", "no"),
    ("B", "b"), ("(b)", "b"), ("B) Paris", "b"), ("c: 42", "c"), ("E.", "e"),
    ("A dog barked.", None), ("Yes, the lease ends in June.", None), ("F", None),
    ("The answer is B.", None), ("", None),
])
def test_closed_set_key(text, key):
    assert closed_set_key(text) == key


def test_pooled_sum_beats_the_single_best_candidate():
    choice = closed_set_choice(["True", "False", "true."], [1.5, 1.8, 1.4])
    assert choice is not None
    assert (choice.key, choice.votes, choice.best) == ("true", 2, 0)
    assert choice.total == pytest.approx(2.9, abs=1e-12)


def test_no_pooling_for_free_text_or_when_nothing_agrees():
    assert closed_set_choice(["True", "False"], [1.5, 1.8]) is None          # all differ
    assert closed_set_choice(["True", "It is true."], [1.5, 1.8]) is None    # free text
    assert closed_set_choice(["True"], [1.0]) is None


def test_equal_sums_go_to_the_earlier_candidate():
    choice = closed_set_choice(["A", "B", "B", "A"], [1.0, 1.0, 1.0, 1.0])
    assert choice is not None and (choice.key, choice.best) == ("a", 0)


def _true_false_model():
    """Three passages: 'False' scores best alone (rel 1, full support) but two weaker
    candidates answer 'True'."""
    m = question_model()
    strong = {"[Fully supported]": 1.0}
    weak = {"[Fully supported]": 0.5, "[Partially supported]": 0.5}
    for word, text in (("one", "True."), ("two", "False."), ("three", "True.")):
        m.on_passage(word, isrel={"[Relevant]": 1.0} if word == "two" else
                     {"[Relevant]": 0.8, "[Irrelevant]": 0.2}, text=text,
                     issup=strong if word == "two" else weak,
                     end=[{"[Utility:5]": 1.0}, {"</s>": 1.0}])
    return m, Retriever([passage(1, "one"), passage(2, "two"), passage(3, "three")])


def test_selfrag_engine_pools_closed_set_candidates():
    m, r = _true_false_model()
    weights = Weights(use_seq=False)
    # alone: False = 1 + 1 + 0.5 = 2.5; each True = 0.8 + 0.75 + 0.5 = 2.05; pooled 4.1
    answer = engine(m, weights=weights).answer("Is the sky green?", retrieve=r)
    assert answer.text == "True."
    assert answer.segments[0].citation == 0
    assert any("closed-set" in n and "2 candidates" in n for n in answer.notes)


def test_selfrag_engine_free_text_keeps_the_best_single_candidate():
    m = question_model()
    for word, text, rel in (("one", "It is true.", 0.8), ("two", "It is false.", 1.0),
                            ("three", "It is true.", 0.8)):
        m.on_passage(word, isrel={"[Relevant]": rel, "[Irrelevant]": 1 - rel}, text=text,
                     issup={"[Fully supported]": 1.0}, end=[{"[Utility:5]": 1.0}, {"</s>": 1.0}])
    r = Retriever([passage(1, "one"), passage(2, "two"), passage(3, "three")])
    answer = engine(m, weights=Weights(use_seq=False)).answer("Is the sky green?", retrieve=r)
    assert answer.text == "It is false."
    assert not any("closed-set" in n for n in answer.notes)
