"""Prompt ids built piecewise (SELFRAG.md section 2 and 'tokenization drift')."""

from __future__ import annotations

from pathlib import Path

import pytest

from localrag.answering.generate.prompting import PROMPT_TEMPLATE, build_ids, encode_text, prompt_ids
from models.base import LanguageModel, ModelKind
from models.reflection import ReflectionVocab
from models.scripted import ScriptedModel

LLAMA_VOCAB = Path(__file__).parent / "data" / "ggml-vocab-llama-spm.gguf"


def test_scripted_model_mimics_the_space_after_special_drift():
    m = ScriptedModel()
    ids = m.tokenize("<paragraph>The cat</paragraph>")
    assert [m.piece(i) for i in ids] == ["<paragraph>", " The", " cat", "</paragraph>"]
    assert ReflectionVocab.lookup(m)[1] == []
    assert ScriptedModel(reflection=False).kind is ModelKind.INSTRUCT


def test_build_ids_has_one_bos_and_no_space_after_special_ids():
    m = ScriptedModel()
    v = ReflectionVocab.require(m)
    ids = build_ids(m, ["Q:", v["[Retrieval]"], v["<paragraph>"], "The cat", v["</paragraph>"]],
                    bos=True)
    assert [m.piece(i) for i in ids] == [
        "<s>", " Q", ":", "[Retrieval]", "<paragraph>", "The", " cat", "</paragraph>"]
    spaced = build_ids(m, [v["<paragraph>"], "The"], space_after_special=True)
    assert [m.piece(i) for i in spaced] == ["<paragraph>", " The"]
    # "<s>" typed in the question stays text when tokenized without special parsing
    p, _ = prompt_ids(m, "what is <s>?")
    assert p.count(m.bos_id) == 1


def test_prompt_template_is_the_papers():
    assert PROMPT_TEMPLATE.format(instruction="X") == "### Instruction:\nX\n\n### Response:\n"


class _VocabOnly(LanguageModel):
    """The real Llama 2 SentencePiece tokenizer through llama.cpp (no weights)."""

    kind = ModelKind.SELFRAG
    n_ctx = 4096
    eos_id = 2
    bos_id = 1
    name = "llama-vocab"

    def __init__(self, path: Path) -> None:
        super().__init__()
        import llama_cpp

        self._llm = llama_cpp.Llama(str(path), vocab_only=True, verbose=False)

    def tokenize(self, text, *, add_bos=False, special=True):
        return self._llm.tokenize(text.encode(), add_bos=add_bos, special=special)

    def detokenize(self, ids):
        return self._llm.detokenize(list(ids)).decode("utf-8", errors="replace")

    def next_logprobs(self, tokens, ids):  # pragma: no cover - tokenizer only
        raise NotImplementedError

    def generate(self, prefix, branches, **kw):  # pragma: no cover - tokenizer only
        raise NotImplementedError


@pytest.fixture(scope="module")
def llama_vocab() -> _VocabOnly:
    return _VocabOnly(LLAMA_VOCAB)


def test_encode_text_without_leading_space_on_the_real_llama_tokenizer(llama_vocab):
    m = llama_vocab
    plain = m.tokenize("The Eiffel", special=False)
    bare = encode_text(m, "The Eiffel", leading_space=False)
    assert plain[0] == 450            # "▁The": what llama.cpp inserts after a special token
    assert bare[0] == 1576            # "The": what the model writes after a reflection token
    assert bare[1:] == plain[1:]
    assert m.detokenize(bare) == "The Eiffel"
    assert encode_text(m, "The Eiffel", leading_space=True) == plain
    ids = build_ids(m, [PROMPT_TEMPLATE.format(instruction="Hi")], bos=True)
    assert ids[0] == 1 and ids.count(1) == 1
