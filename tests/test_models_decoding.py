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

# Tolerances: batched against one-by-one evaluation, on any x86-64 CPU.
#
# What llama.cpp guarantees. Nothing bitwise: it is not batch-invariant. A prompt
# evaluated as one batch goes through other kernels than the same tokens decoded one at a
# time (llamafile's tiled sgemm or repacked AVX2 / AVX-512 / AMX kernels for a batch,
# plain vec_dot loops for one row), with other blockings and so other f32 accumulation
# orders; which kernels run depends on the CPU. Its maintainers say so (llama.cpp issue
# #4479: "different logits can be expected between batch size 1 and batch size 2 because
# they use different matrix multiplications kernels"), and its own cross-backend test,
# test-backend-ops, accepts a normalised mean squared error of 5e-4 for MUL_MAT.
#
# What that means for us. The accumulation differences themselves are f32-sized (~1e-7
# relative). They grow where both paths round to f16: the KV cache is f16, and the
# attention products convert Q and the softmax weights to f16 before multiplying. A value
# that ends 1e-7 away from an f16 rounding boundary in one kernel rounds the other way in
# the other, a change of one f16 unit roundoff (u16 = 2**-11, relative) of that value, and
# such changes carry into every later position and layer. So the difference of a logit
# (and of a log-probability, which is a logit minus a logsumexp) is bounded by a few u16
# at the scale of the logits, not by an absolute number: LOGIT_TOL = 4 * u16 * scale, with
# scale = the largest |log-prob - mean| of the test model after the test prompt (12.6 for
# the seeded f32 test model, so LOGIT_TOL = 0.025). The factor 4 covers the two attention
# layers and the f16 roundings inside each.
#
# Measured (full vocabulary, batched prompt vs one token per decode): 3.3e-4 on the test
# prompt on AMD EPYC Zen 4 (AVX-512), 1.9e-3 on another AMD EPYC (issue 8), 8.4e-3 on an
# 86-token prompt (Zen 4): a third of the tolerance at most. A real fault is two orders
# larger: a cache that dropped the last token changes log-probs by 14.7, a changed early
# token by 2.7, a missing BOS by 1.8.
#
# A probability renormalised within a reflection-token group moves by at most
# p(1 - p) * 2 * LOGIT_TOL <= LOGIT_TOL / 2 when each log-prob moves by LOGIT_TOL: that
# is the group tolerance (0.012; measured 8.1e-4; a changed early token moves it by 0.07 or
# more). For Self-RAG this is harmless: scores are weighted sums of such probabilities
# (weights of order 1) plus exp(mean log-prob), so a candidate's score moves by ~0.03 at
# most, far below the gaps that decide a ranking (SELFRAG.md's example: 2.00 vs 1.50).
# Greedy tokens must be identical: the random test model's distributions are peaked, so
# an argmax flip would need two logits tied to within LOGIT_TOL.
U16 = 2.0 ** -11            # unit roundoff of IEEE half precision (10 mantissa bits)
LOGIT_SCALE_FACTOR = 4      # see above: f16 roundings in each of the two attention layers


@pytest.fixture(scope="module")
def logit_tol(tiny_model, tiny_gguf) -> float:
    """4 * u16 * the largest |log-prob - mean| of the test model after PROMPT."""
    ref = reference_logprobs(tiny_gguf, tiny_model.tokenize(PROMPT, add_bos=True))
    return LOGIT_SCALE_FACTOR * U16 * float(np.abs(ref - ref.mean()).max())


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


def test_next_logprobs_match_a_one_by_one_reference(tiny_model, tiny_gguf, logit_tol):
    assert 0.01 < logit_tol < 0.05        # the seeded test model's logit scale (see above)
    fresh(tiny_model)
    tokens = prompt_ids(tiny_model)
    all_ids = list(range(tiny_model.n_vocab))
    got = tiny_model.next_logprobs(tokens, all_ids)
    ref = reference_logprobs(tiny_gguf, tokens)
    got_arr = np.array([got[i] for i in all_ids])
    assert np.abs(got_arr - ref).max() < logit_tol
    # a full-vocabulary softmax: exp of the log-probs sums to 1 up to float64 rounding
    # over 32k terms (~1e-12), far inside 1e-6
    assert abs(np.logaddexp.reduce(got_arr)) < 1e-6
    # Same after reusing the cached prefix and evaluating only an extension.
    longer = tokens + tiny_model.tokenize("[Retrieval]<paragraph>Gustave Eiffel")
    got2 = tiny_model.next_logprobs(longer, [32003, 32004])
    ref2 = reference_logprobs(tiny_gguf, longer)
    assert max(abs(got2[i] - ref2[i]) for i in (32003, 32004)) < logit_tol
    # ...and the tolerance is far below what a wrong context does: the reference after
    # the prompt without its last token differs by more than 40 tolerances
    wrong = reference_logprobs(tiny_gguf, tokens[:-1])
    assert np.abs(wrong - ref).max() > 40 * logit_tol


def test_prefix_is_evaluated_once_and_reused(tiny_model, logit_tol):
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
    assert max(abs(again[i] - first[i]) for i in first) < logit_tol   # 1 row vs a batch

    # A different prefix shares only BOS and the first words.
    before = tiny_model.stats.prompt_tokens
    other = tiny_model.tokenize("### Instruction:\nWhat is the capital of France?", add_bos=True)
    common = next(i for i, (a, b) in enumerate(zip(prefix, other)) if a != b)
    tiny_model.next_logprobs(other, [32000])
    assert tiny_model.stats.prompt_tokens - before == len(other) - common


def _normalised(watched: dict[int, float], ids: list[int]) -> np.ndarray:
    p = np.exp([watched[i] for i in ids])
    return p / p.sum()


def assert_same_generations(batched, single, watch_groups, logit_tol: float) -> None:
    assert len(batched) == len(single)
    group_prob_tol = logit_tol / 2          # p(1 - p) * 2 * logit_tol at most
    for b, s in zip(batched, single):
        assert b.tokens == s.tokens and b.finish == s.finish
        for sb, ss in zip(b.steps, s.steps):
            assert abs(sb.logprob - ss.logprob) < logit_tol
            for ids in watch_groups:
                assert np.abs(_normalised(sb.watched, ids) - _normalised(ss.watched, ids)).max() < group_prob_tol


def test_batched_branches_equal_branches_run_one_by_one(tiny_model, logit_tol):
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
    assert_same_generations(batched, single, groups, logit_tol)
    # One llama_decode per step for all five (plus one for the prefix and branches),
    # against at least one per step per branch when run one by one.
    assert batched_stats.decode_calls <= 12 + 2
    assert single_stats.decode_calls >= 5 * 12
    # The prefix is evaluated once: the one-by-one runs re-use it from the cache too.
    assert batched_stats.prompt_tokens == len(prefix) + sum(map(len, branches))
    assert single_stats.prompt_tokens == batched_stats.prompt_tokens


def test_more_branches_than_the_context_was_made_for(tiny_model, logit_tol):
    vocab = ReflectionVocab.require(tiny_model)
    prefix = prompt_ids(tiny_model)
    branches = (branch_ids(tiny_model, vocab) * 2)[:9]      # 9 + 1 sequences > 8
    fresh(tiny_model)
    batched = tiny_model.generate(prefix, branches, max_tokens=4, watch_ids=vocab.group("isrel"))
    single = [tiny_model.generate(prefix, [b], max_tokens=4, watch_ids=vocab.group("isrel"))[0]
              for b in (branches[0], branches[8])]
    assert_same_generations([batched[0], batched[8]], single, [vocab.group("isrel")], logit_tol)
    assert batched[0].tokens == batched[5].tokens     # same branch, same continuation


def test_empty_branch_list_continues_the_prefix(tiny_model):
    prefix = prompt_ids(tiny_model)
    (alone,) = tiny_model.generate(prefix, [], max_tokens=5)
    (empty,) = tiny_model.generate(prefix, [[]], max_tokens=5)
    assert alone.tokens == empty.tokens and len(alone.steps) == 5 and alone.finish == "length"
    # The first step is read from the same cached prefix logits as next_logprobs: the same
    # row, no kernel in between, so equal up to float64 rounding of the log-softmax
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
