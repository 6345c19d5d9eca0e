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
are zero), so the rule holds in every context. Tests use it to make the engine meet
real reflection tokens, e.g. `</paragraph>=[Relevant]`, `[Relevant]=▁Paris`.

    python scripts/make_test_gguf.py --out /tmp/selfrag-tiny.gguf [--dim 64] [--layers 2]
        [--seed 0] [--dtype f32|f16|q8_0] [--reflection all|partial|none]
        [--bias PREV=NEXT ...]
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
    bias: Sequence[tuple[str, str]] = (),
) -> Path:
    """Write the test model to `out` and return its path.

    `bias`: (PREV, NEXT) vocabulary pieces (e.g. "[Relevant]", "▁Paris", "</s>"): after
    PREV the model writes NEXT (see the module docstring). At most dim // 4 rules."""
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
    piece_id = {t: i for i, t in enumerate(tokens)}
    rules: list[tuple[int, int]] = []
    for prev, nxt in bias:
        for piece in (prev, nxt):
            if piece not in piece_id:
                raise ValueError(f"bias rule piece {piece!r} is not in the vocabulary")
        rules.append((piece_id[prev], piece_id[nxt]))
    # the last len(rules) dimensions of the residual stream carry the rules
    rule_dims = list(range(dim - len(rules), dim))

    n_head = max(1, dim // 16)
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
    embd[:, rule_dims] = 0.0
    for d, (prev, _) in zip(rule_dims, rules):
        embd[prev, d] = BIAS_INPUT

    def no_rule_rows(m: np.ndarray) -> np.ndarray:
        # layer outputs (rows = residual dims) must not disturb the rule dimensions
        m[rule_dims, :] = 0.0
        return m

    add_matrix("token_embd.weight", embd)
    for i in range(layers):
        add_norm(f"blk.{i}.attn_norm.weight")
        add_matrix(f"blk.{i}.attn_q.weight", matrix(dim, dim, 1.0 / np.sqrt(dim)))
        add_matrix(f"blk.{i}.attn_k.weight", matrix(dim, dim, 1.0 / np.sqrt(dim)))
        add_matrix(f"blk.{i}.attn_v.weight", matrix(dim, dim, 1.0 / np.sqrt(dim)))
        add_matrix(f"blk.{i}.attn_output.weight", no_rule_rows(matrix(dim, dim, 1.0 / np.sqrt(dim))))
        add_norm(f"blk.{i}.ffn_norm.weight")
        add_matrix(f"blk.{i}.ffn_gate.weight", matrix(n_ff, dim, 1.0 / np.sqrt(dim)))
        add_matrix(f"blk.{i}.ffn_up.weight", matrix(n_ff, dim, 1.0 / np.sqrt(dim)))
        add_matrix(f"blk.{i}.ffn_down.weight", no_rule_rows(matrix(dim, n_ff, 1.0 / np.sqrt(n_ff))))
    add_norm("output_norm.weight")
    output = matrix(n_vocab, dim, 3.0 / np.sqrt(dim))
    output[:, rule_dims] = 0.0
    for d, (_, nxt) in zip(rule_dims, rules):
        output[nxt, d] = BIAS_OUTPUT
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
    parser.add_argument("--bias", action="append", default=[], metavar="PREV=NEXT",
                        help="bigram rule: after vocabulary piece PREV write NEXT (repeatable)")
    args = parser.parse_args(argv)
    rules = []
    for rule in args.bias:
        prev, sep, nxt = rule.rpartition("=")
        if not sep or not prev or not nxt:
            parser.error(f"--bias wants PREV=NEXT, got {rule!r}")
        rules.append((prev, nxt))
    path = write_test_gguf(args.out, dim=args.dim, layers=args.layers, seed=args.seed,
                           dtype=args.dtype, reflection=args.reflection, bias=rules)
    print(f"wrote {path} ({path.stat().st_size / 1e6:.1f} MB)")
    return 0


if __name__ == "__main__":
    sys.exit(main())
