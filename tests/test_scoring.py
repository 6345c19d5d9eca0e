"""Unit tests of the pure Self-RAG scoring functions (SELFRAG.md sections 3-4)."""

from __future__ import annotations

import math

import pytest

from localrag.answering.judge.scoring import (
    Weights,
    group_probs,
    label_from_issup,
    mean_logprob,
    retrieve_probability,
    s_rel,
    s_sup,
    s_use,
    should_retrieve,
    total_score,
)

EXACT = 1e-12

# The worked example's critique parts, each produced from group probabilities:
# A: s_rel 0.90, s_sup 0.80, s_use 0.60;  B: 0.85, 0.30, 0.70
A = dict(rel=s_rel(0.9, 0.1), sup=s_sup(0.6, 0.4, 0.0), use=s_use(0, 0, 0, 0.8, 0.2))
B = dict(rel=s_rel(0.85, 0.15), sup=s_sup(0.1, 0.4, 0.5), use=s_use(0, 0, 0, 0.6, 0.4))


def test_worked_example_parts():
    assert A["rel"] == pytest.approx(0.90, abs=EXACT)
    assert A["sup"] == pytest.approx(0.80, abs=EXACT)
    assert A["use"] == pytest.approx(0.60, abs=EXACT)
    assert B["rel"] == pytest.approx(0.85, abs=EXACT)
    assert B["sup"] == pytest.approx(0.30, abs=EXACT)
    assert B["use"] == pytest.approx(0.70, abs=EXACT)


def test_worked_example_default_weights():
    w = Weights(use_seq=False)
    assert total_score(**A, seq_mean_logprob=None, weights=w) == pytest.approx(2.00, abs=EXACT)
    assert total_score(**B, seq_mean_logprob=None, weights=w) == pytest.approx(1.50, abs=EXACT)


def test_worked_example_sup_weight_two_doubles_gap():
    w = Weights(w_sup=2.0, use_seq=False)
    a = total_score(**A, seq_mean_logprob=None, weights=w)
    b = total_score(**B, seq_mean_logprob=None, weights=w)
    assert a == pytest.approx(2.80, abs=EXACT)
    assert b == pytest.approx(1.80, abs=EXACT)
    assert a - b == pytest.approx(2 * 0.50, abs=EXACT)


def test_sequence_term_is_exp_of_mean_and_can_be_switched_off():
    seq = mean_logprob([math.log(0.5), math.log(0.5), 0.0, 0.0])
    assert seq == pytest.approx(math.log(0.5) / 2, abs=EXACT)
    on = total_score(rel=0.9, sup=0.8, use=0.6, seq_mean_logprob=seq, weights=Weights())
    off = total_score(rel=0.9, sup=0.8, use=0.6, seq_mean_logprob=seq,
                      weights=Weights(use_seq=False))
    assert on == pytest.approx(2.0 + math.sqrt(0.5), abs=EXACT)
    assert off == pytest.approx(2.0, abs=EXACT)
    assert mean_logprob([]) is None


def test_none_terms_count_zero():
    assert total_score(rel=None, sup=None, use=None, seq_mean_logprob=None,
                       weights=Weights()) == 0.0
    assert total_score(rel=0.5, sup=None, use=None, seq_mean_logprob=None,
                       weights=Weights(w_rel=2.0)) == pytest.approx(1.0)


def test_group_probs_renormalises_full_vocabulary_probabilities():
    lps = {10: math.log(0.03), 11: math.log(0.01), 99: math.log(0.5)}
    assert group_probs(lps, [10, 11]) == pytest.approx([0.75, 0.25], abs=EXACT)
    # a missing id is probability 0
    assert group_probs(lps, [10, 12]) == pytest.approx([1.0, 0.0], abs=EXACT)
    # nothing known about the group: all zeros (no pretend 50/50)
    assert group_probs(lps, [12, 13]) == [0.0, 0.0]
    assert group_probs({12: -math.inf}, [12]) == [0.0]


def test_retrieve_probability_uses_probabilities_not_logprobs():
    p_yes, p_no = 0.15, 0.85
    r = retrieve_probability(p_yes, p_no)
    assert r == pytest.approx(0.15, abs=EXACT)
    assert not should_retrieve("adaptive", r, 0.2)
    # the released script's bug: the log-prob ratio gives the opposite decision here
    buggy = math.log(p_yes) / (math.log(p_yes) + math.log(p_no))
    assert buggy > 0.9 and should_retrieve("adaptive", buggy, 0.2)
    # unnormalised full-vocabulary probabilities are renormalised in the group
    assert retrieve_probability(0.05, 0.15) == pytest.approx(0.25, abs=EXACT)
    assert retrieve_probability(0.0, 0.0) == 0.0


def test_should_retrieve_modes_and_threshold():
    assert should_retrieve("adaptive", 0.25, 0.2)
    assert not should_retrieve("adaptive", 0.15, 0.2)
    assert not should_retrieve("adaptive", 0.2, 0.2)      # strictly greater
    assert should_retrieve("always", 0.0, 0.2)
    assert should_retrieve("always", None)
    assert not should_retrieve("never", 1.0, 0.2)
    with pytest.raises(ValueError):
        should_retrieve("sometimes", 0.5)
    with pytest.raises(ValueError):
        should_retrieve("adaptive", None)


def test_scores_renormalise_within_their_group():
    assert s_rel(0.3, 0.1) == pytest.approx(0.75, abs=EXACT)
    assert s_sup(0.3, 0.1, 0.1) == pytest.approx(0.6 + 0.1, abs=EXACT)
    assert s_use(0.02, 0, 0, 0, 0.02) == pytest.approx(0.0, abs=EXACT)
    assert s_use([0.0, 0.0, 0.0, 0.0, 0.3]) == pytest.approx(1.0, abs=EXACT)
    assert s_use([0.1, 0.0, 0.0, 0.0, 0.0]) == pytest.approx(-1.0, abs=EXACT)
    assert s_use(0, 0.2, 0.2, 0.2, 0) == pytest.approx((-0.5 + 0 + 0.5) / 3, abs=EXACT)
    with pytest.raises(ValueError):
        s_use(0.5, 0.5)


def test_labels():
    assert label_from_issup("[Fully supported]") == "fully"
    assert label_from_issup("[Partially supported]") == "partially"
    assert label_from_issup("[No support / Contradictory]") == "none"
    assert label_from_issup(None) == "none"
    assert label_from_issup([0.6, 0.3, 0.1]) == "fully"
    assert label_from_issup([0.2, 0.5, 0.3]) == "partially"
    assert label_from_issup([0.1, 0.2, 0.7]) == "none"
    assert label_from_issup([0.4, 0.4, 0.2]) == "partially"   # ties go to the weaker label
    with pytest.raises(ValueError):
        label_from_issup("[Relevant]")
