"""Decoding through real llama.cpp: raw-logit log-probs, prefix reuse, batched branches
equal to branches run one by one, stop/EOS/length handling, the context limit."""

from __future__ import annotations

import numpy as np
import pytest

from conftest_models import THREADS, smollm2_model, smollm2_path, test_gguf_factory, tiny_gguf, tiny_model  # noqa: F401
from models.base import ModelStats
from models.llama_backend import LlamaModel
from models.reflection import GROUPS, ReflectionVocab

pytestmark = pytest.mark.slow

PROMPT = "### Instruction:\nWho built the Eiffel Tower, and when?\n\n### Response:\n"
PASSAGES = [
    "Eiffel Tower\nThe tower was built by Gustave Eiffel's company from 1887 to 1889.",
    "Paris\nParis is the capital of France.",
    "Gustave Eiffel\nAn engineer.",
    "Statue of Liberty\nThe internal structure was designed by Gustave Eiffel and finished in 1886 in New York.",
    "Bridges\nMany bridges.",
]

# Tolerances for batched vs one-by-one results. llama.cpp is not batch-invariant: a row
# evaluated inside a batch of several sequences goes through differently blocked matrix
# products and attention over the f16 KV cache than the same row alone. With the f32
# test model the largest differences seen over 5 branches x 12 steps were 3e-3 in a
# log-probability and 8e-4 in a probability renormalised within a reflection group
# (one-by-one against the plain single-token reference: 2e-5). The tolerances below are
# a few times those. They are enough for Self-RAG: its scores are weighted sums of
# group-renormalised probabilities (weights of order 1) plus exp(mean log-prob), so
# these tolerances move a candidate score by at most ~1e-2, far below the gaps that
# decide a ranking (SELFRAG.md's example: 2.00 vs 1.50). Greedy tokens must be identical:
# the random test model's next-token distributions are peaked, so an argmax flip would
# need two logits tied to within the error above.
LOGPROB_TOL = 1e-2          # per-step log-probability, batched vs one by one
GROUP_PROB_TOL = 5e-3       # probability renormalised within a reflection-token group
REFERENCE_TOL = 1e-3        # next_logprobs vs the one-token-per-decode reference path


def reference_logprobs(path, tokens: list[int]) -> np.ndarray:
    """Full log-softmax after `tokens`, through an independent path: the plain
    llama.cpp API, one token per llama_decode call, a fresh single-sequence context."""
    import llama_cpp as lc

    model = lc.llama_model_load_from_file(str(path).encode(), lc.llama_model_default_params())
    cp = lc.llama_context_default_params()
    cp.n_ctx, cp.n_threads, cp.n_threads_batch = 512, THREADS, THREADS
    ctx = lc.llama_init_from_model(model, cp)
    try:
        for tok in tokens:
            one = (lc.llama_token * 1)(tok)
            assert lc.llama_decode(ctx, lc.llama_batch_get_one(one, 1)) == 0
        n_vocab = lc.llama_vocab_n_tokens(lc.llama_model_get_vocab(model))
        row = np.ctypeslib.as_array(lc.llama_get_logits_ith(ctx, -1), shape=(n_vocab,)).astype(np.float64)
    finally:
        lc.llama_free(ctx)
        lc.llama_model_free(model)
    m = row.max()
    return row - (m + np.log(np.exp(row - m).sum()))


def fresh(model: LlamaModel) -> None:
    model.clear_cache()
    model.stats = ModelStats()


def prompt_ids(model) -> list[int]:
    return model.tokenize(PROMPT, add_bos=True)


def branch_ids(model, vocab: ReflectionVocab) -> list[list[int]]:
    head = [vocab["[Retrieval]"], vocab["<paragraph>"]]
    return [head + model.tokenize(p, special=False) + [vocab["</paragraph>"]] for p in PASSAGES]


def test_next_logprobs_match_a_one_by_one_reference(tiny_model, tiny_gguf):
    fresh(tiny_model)
    tokens = prompt_ids(tiny_model)
    all_ids = list(range(tiny_model.n_vocab))
    got = tiny_model.next_logprobs(tokens, all_ids)
    ref = reference_logprobs(tiny_gguf, tokens)
    got_arr = np.array([got[i] for i in all_ids])
    assert np.abs(got_arr - ref).max() < REFERENCE_TOL
    assert abs(np.logaddexp.reduce(got_arr)) < 1e-6        # a full-vocabulary softmax
    # Same after reusing the cached prefix and evaluating only an extension.
    longer = tokens + tiny_model.tokenize("[Retrieval]<paragraph>Gustave Eiffel")
    got2 = tiny_model.next_logprobs(longer, [32003, 32004])
    ref2 = reference_logprobs(tiny_gguf, longer)
    assert max(abs(got2[i] - ref2[i]) for i in (32003, 32004)) < REFERENCE_TOL


def test_prefix_is_evaluated_once_and_reused(tiny_model):
    fresh(tiny_model)
    vocab = ReflectionVocab.require(tiny_model)
    prefix = prompt_ids(tiny_model)
    first = tiny_model.next_logprobs(prefix, vocab.group("retrieve"))
    assert tiny_model.stats.prompt_tokens == len(prefix)

    tiny_model.next_logprobs(prefix, vocab.group("retrieve"))
    assert tiny_model.stats.prompt_tokens == len(prefix)            # nothing new

    extension = [vocab["[Retrieval]"], vocab["<paragraph>"]]
    tiny_model.next_logprobs(prefix + extension, vocab.group("isrel"))
    assert tiny_model.stats.prompt_tokens == len(prefix) + len(extension)

    branches = branch_ids(tiny_model, vocab)[:2]
    before = tiny_model.stats.prompt_tokens
    tiny_model.generate(prefix + extension, branches, max_tokens=3)
    assert tiny_model.stats.prompt_tokens - before == sum(map(len, branches))

    # A shorter prefix (already cached): only its last token is evaluated again, for logits.
    before = tiny_model.stats.prompt_tokens
    again = tiny_model.next_logprobs(prefix, vocab.group("retrieve"))
    assert tiny_model.stats.prompt_tokens - before == 1
    assert max(abs(again[i] - first[i]) for i in first) < REFERENCE_TOL

    # A different prefix shares only BOS and the first words.
    before = tiny_model.stats.prompt_tokens
    other = tiny_model.tokenize("### Instruction:\nWhat is the capital of France?", add_bos=True)
    common = next(i for i, (a, b) in enumerate(zip(prefix, other)) if a != b)
    tiny_model.next_logprobs(other, [32000])
    assert tiny_model.stats.prompt_tokens - before == len(other) - common


def _normalised(watched: dict[int, float], ids: list[int]) -> np.ndarray:
    p = np.exp([watched[i] for i in ids])
    return p / p.sum()


def assert_same_generations(batched, single, watch_groups) -> None:
    assert len(batched) == len(single)
    for b, s in zip(batched, single):
        assert b.tokens == s.tokens and b.finish == s.finish
        for sb, ss in zip(b.steps, s.steps):
            assert abs(sb.logprob - ss.logprob) < LOGPROB_TOL
            for ids in watch_groups:
                assert np.abs(_normalised(sb.watched, ids) - _normalised(ss.watched, ids)).max() < GROUP_PROB_TOL


def test_batched_branches_equal_branches_run_one_by_one(tiny_model):
    vocab = ReflectionVocab.require(tiny_model)
    prefix = prompt_ids(tiny_model) + [vocab["[Retrieval]"]]
    branches = branch_ids(tiny_model, vocab)
    watch = vocab.all_ids
    fresh(tiny_model)
    batched = tiny_model.generate(prefix, branches, max_tokens=12, watch_ids=watch)
    batched_stats = tiny_model.stats
    fresh(tiny_model)
    single = [tiny_model.generate(prefix, [b], max_tokens=12, watch_ids=watch)[0] for b in branches]
    single_stats = tiny_model.stats

    assert [len(g.steps) for g in batched] == [12] * 5
    assert all(set(step.watched) == set(watch) for g in batched for step in g.steps)
    groups = [vocab.group(name) for name in GROUPS]
    assert_same_generations(batched, single, groups)
    # One llama_decode per step for all five (plus one for the prefix and branches),
    # against at least one per step per branch when run one by one.
    assert batched_stats.decode_calls <= 12 + 2
    assert single_stats.decode_calls >= 5 * 12
    # The prefix is evaluated once: the one-by-one runs re-use it from the cache too.
    assert batched_stats.prompt_tokens == len(prefix) + sum(map(len, branches))
    assert single_stats.prompt_tokens == batched_stats.prompt_tokens


def test_more_branches_than_the_context_was_made_for(tiny_model):
    vocab = ReflectionVocab.require(tiny_model)
    prefix = prompt_ids(tiny_model)
    branches = (branch_ids(tiny_model, vocab) * 2)[:9]      # 9 + 1 sequences > 8
    fresh(tiny_model)
    batched = tiny_model.generate(prefix, branches, max_tokens=4, watch_ids=vocab.group("isrel"))
    single = [tiny_model.generate(prefix, [b], max_tokens=4, watch_ids=vocab.group("isrel"))[0]
              for b in (branches[0], branches[8])]
    assert_same_generations([batched[0], batched[8]], single, [vocab.group("isrel")])
    assert batched[0].tokens == batched[5].tokens     # same branch, same continuation


def test_empty_branch_list_continues_the_prefix(tiny_model):
    prefix = prompt_ids(tiny_model)
    (alone,) = tiny_model.generate(prefix, [], max_tokens=5)
    (empty,) = tiny_model.generate(prefix, [[]], max_tokens=5)
    assert alone.tokens == empty.tokens and len(alone.steps) == 5 and alone.finish == "length"
    # The first step is read from the same cached prefix logits as next_logprobs.
    ref = tiny_model.next_logprobs(prefix, [alone.tokens[0]])
    assert abs(ref[alone.tokens[0]] - alone.steps[0].logprob) < 1e-9


def test_stop_ids_end_a_branch_and_are_kept(tiny_model):
    prefix = prompt_ids(tiny_model)
    (free,) = tiny_model.generate(prefix, [], max_tokens=8)
    stop = free.tokens[3]
    first = free.tokens.index(stop)
    (stopped,) = tiny_model.generate(prefix, [], max_tokens=8, stop_ids={stop})
    assert stopped.finish == "stop"
    assert stopped.tokens == free.tokens[: first + 1]


def test_branches_stop_at_the_context_limit_without_overflow(test_gguf_factory):
    with LlamaModel(test_gguf_factory(), n_ctx=64, n_threads=THREADS) as model:
        vocab = ReflectionVocab.require(model)
        prefix = [1] + list(range(300, 339))                   # 40 tokens
        branches = [[vocab["[Retrieval]"], vocab["<paragraph>"], 100 + k, 200 + k, vocab["</paragraph>"]]
                    for k in range(5)]
        gens = model.generate(prefix, branches, max_tokens=50)
        singles = [model.generate(prefix, [b], max_tokens=50)[0] for b in branches]
        # Positions 45..63 are evaluated, the token sampled after position 63 ends it.
        for g, s in zip(gens, singles):
            assert g.tokens == s.tokens
            assert g.finish == "length" and len(g.steps) == 64 - 45 + 1
        # A branch that cannot be evaluated at all gets an empty "length" result.
        too_long = model.generate(prefix, [list(range(100, 130)), branches[0]], max_tokens=5)
        assert too_long[0].steps == [] and too_long[0].finish == "length"
        assert too_long[1].tokens == gens[0].tokens[:5]
        with pytest.raises(ValueError):
            model.next_logprobs(list(range(100, 170)), [1])


def test_default_model_ends_an_answer_with_eos(smollm2_model):
    question = "What is the capital of France? Answer in one short sentence."
    prompt = smollm2_model.chat_prompt([{"role": "user", "content": question}])
    (gen,) = smollm2_model.generate(smollm2_model.tokenize(prompt), [], max_tokens=48)
    assert gen.finish == "eos"
    assert smollm2_model.is_eog(gen.tokens[-1])
    text = smollm2_model.detokenize(gen.tokens[:-1])
    assert "Paris" in text and "<|im_end|>" not in text
    assert all(step.logprob <= 0 for step in gen.steps)
