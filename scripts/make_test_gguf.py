"""Write a tiny llama-architecture GGUF with the real Self-RAG vocabulary, for tests.

The tokenizer is the Llama 2 SentencePiece vocabulary (32,000 pieces, copied from
tests/data/ggml-vocab-llama-spm.gguf, see tests/data/README.md) plus the 16 Self-RAG
tokens appended as USER_DEFINED (GGUF token_type 4) at ids 32000..32015, in the order of
../shared/design/SELFRAG.md section 1, exactly as in the public Self-RAG conversions. So
llama.cpp tokenizes `[Retrieval]` to the single id 32001 as it does with the real model.

The weights are random (seeded): the file exercises the plumbing (token lookup, logits,
KV-cache branching, batching), not language. It loads and generates in well under a
second. `--dtype q8_0` writes quantized matrices so that the AMX repacking path of
llama.cpp (PLATFORM.md) is exercised by tests.

`--bias PREV=NEXT` (repeatable) makes the random model follow bigram rules: whenever the
last input token is PREV, the next token is NEXT by a wide margin. Each rule owns one
residual dimension: PREV's embedding carries a large value there, NEXT's output row reads
it, and no layer writes into it (the rows of attn_output / ffn_down for that dimension
are zero), so the rule holds in every context. The output rows of every NEXT token keep
no random part (they read only their rules' dimensions), so their logits are set by hand
alone. `PREV=NEXT@W` gives a rule the output weight W instead of 12: two rules with the
same PREV then set the balance between two next tokens (12 vs 11.8: both likely, the
first a little more), which is how a test meets a Retrieve-group position where
p([Retrieval]) is neither 0 nor 1. Tests use the rules to make the engine meet real
reflection tokens in a training-shaped order, e.g. `</paragraph>=[Relevant]`,
`[Relevant]=▁Paris`, `▁Paris=.`, `.=[Fully supported]`,
`[Fully supported]=[Continue to Use Evidence]`, ...

`--context MARKER=NEXT@W` (at most one) makes NEXT's logit grow by W x (a signal) at
every position after MARKER occurred ANYWHERE earlier in the context: layer 0's first
attention head has zero queries, so it attends uniformly to every earlier position; its
values read a dimension that only MARKER's embedding sets, and its output writes that
average into a dimension only NEXT's output row reads. Combined with two bigram rules
(`[Continue to Use Evidence]=▁Lyon`, `[Continue to Use Evidence]=▁Rome@11`) the model
writes Rome after `[Continue to Use Evidence]` only while a passage containing MARKER is
in its context, and Lyon otherwise: a test can see whether the passage was kept.
MARKER may be several pieces (`A|B|C=NEXT@W` on the command line, a tuple in Python):
each of them sets the marker dimension. tests/test_check_selfrag.py uses that to make a
model that "was trained" with or without a "▁" after special tokens: the pieces that only
the other tokenization produces make it write `</s>` instead of the reflection token due.

    python scripts/make_test_gguf.py --out /tmp/selfrag-tiny.gguf [--dim 64] [--layers 2]
        [--seed 0] [--dtype f32|f16|q8_0] [--reflection all|partial|none]
        [--bias PREV=NEXT[@W] ...] [--context MARKER=NEXT@W]
"""

from __future__ import annotations

import argparse
import sys
from collections.abc import Sequence
from functools import lru_cache
from pathlib import Path

import numpy as np

REPO = Path(__file__).resolve().parent.parent
VOCAB_FILE = REPO / "tests" / "data" / "ggml-vocab-llama-spm.gguf"

# SELFRAG.md section 1, ids 32000..32015 in this order. Kept here (not imported from
# models.reflection) because the file must look like the real conversion, including
# `<pad>`, which the reflection vocabulary does not use.
SELFRAG_TOKENS: tuple[str, ...] = (
    "[No Retrieval]",
    "[Retrieval]",
    "[Continue to Use Evidence]",
    "[Irrelevant]",
    "[Relevant]",
    "<paragraph>",
    "</paragraph>",
    "[Utility:1]",
    "[Utility:2]",
    "[Utility:3]",
    "[Utility:4]",
    "[Utility:5]",
    "[Fully supported]",
    "[Partially supported]",
    "[No support / Contradictory]",
    "<pad>",
)
# "partial" leaves out the IsSup group: a model that is neither Self-RAG nor usable.
PARTIAL_DROPPED = ("[Fully supported]", "[Partially supported]", "[No support / Contradictory]")
USER_DEFINED = 4  # gguf.TokenType.USER_DEFINED
BIAS_INPUT = 8.0    # value of a rule's dimension in PREV's embedding (others are ~N(0, 1))
BIAS_OUTPUT = 12.0  # weight of that dimension in NEXT's output row: a logit margin of ~60
CONTEXT_INPUT = 8.0     # value of the marker dimension in MARKER's embedding
CONTEXT_VALUE = 200.0   # head-0 value weight: the uniform average over ~40-100 positions
                        # leaves a signal of ~10-30 in the residual (pre-norm)

Rule = tuple[str, str] | tuple[str, str, float]


@lru_cache(maxsize=2)   # tests write several variants from the same vocabulary
def _read_llama2_vocab(path: Path) -> tuple[list[str], list[float], list[int]]:
    from gguf import GGUFReader

    reader = GGUFReader(str(path))

    def field(name: str) -> list:
        value = reader.fields[name].contents()
        assert isinstance(value, list), name
        return value

    return (
        field("tokenizer.ggml.tokens"),
        [float(s) for s in field("tokenizer.ggml.scores")],
        [int(t) for t in field("tokenizer.ggml.token_type")],
    )


def write_test_gguf(
    out: Path | str,
    *,
    dim: int = 64,
    layers: int = 2,
    seed: int = 0,
    dtype: str = "f32",
    reflection: str = "all",
    context_length: int = 4096,
    vocab_file: Path | str = VOCAB_FILE,
    bias: Sequence[Rule] = (),
    context: tuple[str | Sequence[str], str, float] | None = None,
) -> Path:
    """Write the test model to `out` and return its path.

    `bias`: (PREV, NEXT) or (PREV, NEXT, weight) vocabulary pieces (e.g. "[Relevant]",
    "▁Paris", "</s>"): after PREV the model writes NEXT (see the module docstring). At
    most dim // 4 rules. `context`: (MARKER, NEXT, weight), see the module docstring."""
    import gguf

    if dtype not in ("f32", "f16", "q8_0"):
        raise ValueError(f"dtype must be f32, f16 or q8_0, not {dtype!r}")
    if reflection not in ("all", "partial", "none"):
        raise ValueError(f"reflection must be all, partial or none, not {reflection!r}")
    if dim % 32:
        raise ValueError("dim must be a multiple of 32 (Q8_0 blocks, head size)")
    out = Path(out)
    out.parent.mkdir(parents=True, exist_ok=True)

    if not Path(vocab_file).is_file():
        raise FileNotFoundError(
            f"the Llama 2 vocabulary file {vocab_file} is missing (see tests/data/README.md; "
            "the repository's .gitignore must not exclude it)")
    tokens, scores, types = _read_llama2_vocab(Path(vocab_file))
    if reflection == "all":
        added = list(SELFRAG_TOKENS)
    elif reflection == "partial":
        added = [t for t in SELFRAG_TOKENS if t not in PARTIAL_DROPPED]
    else:
        added = []
    tokens = list(tokens) + added
    scores = list(scores) + [0.0] * len(added)
    types = list(types) + [USER_DEFINED] * len(added)
    n_vocab = len(tokens)
    if len(bias) > dim // 4:
        raise ValueError(f"at most {dim // 4} bias rules fit dim={dim}")
    if context is not None and dim // max(1, dim // 16) < 2:
        raise ValueError("the context rule needs attention heads of at least 2 dimensions")
    piece_id = {t: i for i, t in enumerate(tokens)}

    def known(piece: str) -> int:
        if piece not in piece_id:
            raise ValueError(f"bias rule piece {piece!r} is not in the vocabulary")
        return piece_id[piece]

    rules: list[tuple[int, int, float]] = []
    for rule in bias:
        prev, nxt = rule[0], rule[1]
        weight = float(rule[2]) if len(rule) > 2 else BIAS_OUTPUT   # type: ignore[misc]
        rules.append((known(prev), known(nxt), weight))
    # the last len(rules) dimensions of the residual stream carry the rules, the two
    # before them the context rule (marker, then the averaged signal)
    rule_dims = list(range(dim - len(rules), dim))
    markers: list[int] = []
    if context is not None:
        marker = context[0]
        markers = [known(marker)] if isinstance(marker, str) else [known(x) for x in marker]
    ctx_rule = None if context is None else (markers[0], known(context[1]), float(context[2]))
    ctx_dims = [] if ctx_rule is None else [dim - len(rules) - 2, dim - len(rules) - 1]
    reserved = ctx_dims + rule_dims
    hand_rows = sorted({nxt for _, nxt, _ in rules} | ({ctx_rule[1]} if ctx_rule else set()))

    n_head = max(1, dim // 16)
    head = dim // n_head
    n_ff = 2 * dim
    arch = "llama"
    writer = gguf.GGUFWriter(str(out), arch)
    writer.add_name(f"selfrag-test-tiny-{dtype}" + ("" if reflection == "all" else f"-{reflection}"))
    writer.add_context_length(context_length)
    writer.add_embedding_length(dim)
    writer.add_block_count(layers)
    writer.add_feed_forward_length(n_ff)
    writer.add_head_count(n_head)
    writer.add_head_count_kv(n_head)
    writer.add_layer_norm_rms_eps(1e-5)
    writer.add_rope_dimension_count(dim // n_head)
    writer.add_vocab_size(n_vocab)
    file_type = {"f32": gguf.LlamaFileType.ALL_F32, "f16": gguf.LlamaFileType.MOSTLY_F16,
                 "q8_0": gguf.LlamaFileType.MOSTLY_Q8_0}[dtype]
    writer.add_file_type(file_type)
    writer.add_tokenizer_model("llama")
    writer.add_tokenizer_pre("default")
    writer.add_token_list(tokens)
    writer.add_token_scores(scores)
    writer.add_token_types(types)
    writer.add_bos_token_id(1)
    writer.add_eos_token_id(2)
    writer.add_unk_token_id(0)
    if reflection == "all":
        writer.add_pad_token_id(32015)
    writer.add_add_bos_token(True)
    writer.add_add_eos_token(False)

    rng = np.random.default_rng(seed)

    def matrix(rows: int, cols: int, scale: float) -> np.ndarray:
        # numpy shape (rows, cols) is ggml ne = [cols, rows]: cols is the input size.
        return (rng.standard_normal((rows, cols)) * scale).astype(np.float32)

    def add_matrix(name: str, data: np.ndarray) -> None:
        if dtype == "f32":
            writer.add_tensor(name, data)
        elif dtype == "f16":
            writer.add_tensor(name, data.astype(np.float16))
        else:
            qtype = gguf.GGMLQuantizationType.Q8_0
            writer.add_tensor(name, gguf.quants.quantize(data, qtype), raw_dtype=qtype)

    def add_norm(name: str) -> None:
        writer.add_tensor(name, np.ones(dim, dtype=np.float32))  # norms stay f32

    # Scales chosen so that next-token distributions are peaked rather than uniform:
    # greedy argmax then has clear winners, which keeps batched-vs-sequential
    # comparisons meaningful with a random model.
    # (draw order kept as before the rules existed: same seed, same weights without rules)
    embd = matrix(n_vocab, dim, 1.0)
    embd[:, reserved] = 0.0
    for d, (prev, _, _) in zip(rule_dims, rules):
        embd[prev, d] = BIAS_INPUT
    if ctx_rule is not None:
        embd[markers, ctx_dims[0]] = CONTEXT_INPUT

    def no_rule_rows(m: np.ndarray) -> np.ndarray:
        # layer outputs (rows = residual dims) must not disturb the hand-set dimensions
        m[reserved, :] = 0.0
        return m

    add_matrix("token_embd.weight", embd)
    for i in range(layers):
        q = matrix(dim, dim, 1.0 / np.sqrt(dim))
        k = matrix(dim, dim, 1.0 / np.sqrt(dim))
        v = matrix(dim, dim, 1.0 / np.sqrt(dim))
        o = no_rule_rows(matrix(dim, dim, 1.0 / np.sqrt(dim)))
        if ctx_rule is not None and i == 0:
            # head 0: zero queries -> uniform attention over every earlier position; its
            # one value reads the marker dimension; its output goes to the signal dimension
            q[:head, :] = 0.0
            v[:head, :] = 0.0
            v[0, ctx_dims[0]] = CONTEXT_VALUE
            o[:, :head] = 0.0
            o[ctx_dims[1], 0] = 1.0
        add_norm(f"blk.{i}.attn_norm.weight")
        add_matrix(f"blk.{i}.attn_q.weight", q)
        add_matrix(f"blk.{i}.attn_k.weight", k)
        add_matrix(f"blk.{i}.attn_v.weight", v)
        add_matrix(f"blk.{i}.attn_output.weight", o)
        add_norm(f"blk.{i}.ffn_norm.weight")
        add_matrix(f"blk.{i}.ffn_gate.weight", matrix(n_ff, dim, 1.0 / np.sqrt(dim)))
        add_matrix(f"blk.{i}.ffn_up.weight", matrix(n_ff, dim, 1.0 / np.sqrt(dim)))
        add_matrix(f"blk.{i}.ffn_down.weight", no_rule_rows(matrix(dim, n_ff, 1.0 / np.sqrt(n_ff))))
    add_norm("output_norm.weight")
    output = matrix(n_vocab, dim, 3.0 / np.sqrt(dim))
    output[:, reserved] = 0.0
    output[hand_rows, :] = 0.0        # NEXT tokens: logits set by the rules alone
    for d, (_, nxt, weight) in zip(rule_dims, rules):
        output[nxt, d] = weight
    if ctx_rule is not None:
        output[ctx_rule[1], ctx_dims[1]] = ctx_rule[2]
    add_matrix("output.weight", output)

    writer.write_header_to_file()
    writer.write_kv_data_to_file()
    writer.write_tensors_to_file()
    writer.close()
    return out


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--out", type=Path, required=True, help="GGUF file to write")
    parser.add_argument("--dim", type=int, default=64, help="embedding size (multiple of 32)")
    parser.add_argument("--layers", type=int, default=2)
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument("--dtype", choices=("f32", "f16", "q8_0"), default="f32")
    parser.add_argument("--reflection", choices=("all", "partial", "none"), default="all",
                        help="which Self-RAG tokens to add (partial: IsSup group missing)")
    parser.add_argument("--bias", action="append", default=[], metavar="PREV=NEXT[@W]",
                        help="bigram rule: after vocabulary piece PREV write NEXT (repeatable)")
    parser.add_argument("--context", metavar="MARKER=NEXT@W",
                        help="NEXT gains W x a signal wherever MARKER occurred earlier")
    args = parser.parse_args(argv)

    def parse(rule: str, option: str) -> tuple:
        body, at, weight = rule.rpartition("@")
        try:
            w = float(weight) if at else None
        except ValueError:
            body, w = rule, None
        if not at:
            body = rule
        prev, sep, nxt = body.rpartition("=")
        if not sep or not prev or not nxt:
            parser.error(f"{option} wants PREV=NEXT[@W], got {rule!r}")
        return (prev, nxt) if w is None else (prev, nxt, w)

    rules = [parse(rule, "--bias") for rule in args.bias]
    context = None
    if args.context:
        context = parse(args.context, "--context")
        if len(context) != 3:
            parser.error("--context wants MARKER=NEXT@W")
        if "|" in context[0]:
            context = (tuple(context[0].split("|")), context[1], context[2])
    path = write_test_gguf(args.out, dim=args.dim, layers=args.layers, seed=args.seed,
                           dtype=args.dtype, reflection=args.reflection, bias=rules,
                           context=context)
    print(f"wrote {path} ({path.stat().st_size / 1e6:.1f} MB)")
    return 0


if __name__ == "__main__":
    sys.exit(main())
