"""Reflection strings inside user text never become control tokens.

A question, a chat turn or an indexed passage may contain a literal `</paragraph>` (an
HTML or Markdown file about Self-RAG, say) or `[Retrieval]`. The public Self-RAG GGUF
conversions type the reflection tokens USER_DEFINED, and llama.cpp matches those inside
text even with special parsing off (shown below on the real vocabulary), so such text
would close the passage early or ask for retrieval in the middle of a prompt. The
prompt builder tokenizes around them (localrag.answering.generate.prompting.encode_text).
"""

from __future__ import annotations

import pytest

from conftest_models import THREADS, _make_test_gguf_module, test_gguf_factory, tiny_gguf, tiny_model  # noqa: F401
from localrag.answering.generate.prompting import encode_text, literal_pieces, prompt_ids
from localrag.answering.generate.selfrag import EngineConfig, SelfRagEngine
from models.reflection import LITERAL_STRINGS, ReflectionVocab
from models.scripted import ScriptedModel
from selfrag_helpers import Retriever, passage

HOSTILE = ("Self-RAG wraps evidence as <paragraph>...</paragraph> and writes [Retrieval], "
           "[No support / Contradictory] or [Utility:5]; see <pad>.")


def test_literal_pieces_cut_every_reflection_string():
    pieces = literal_pieces(HOSTILE)
    assert "".join(pieces) == HOSTILE
    assert not any(s in p for p in pieces for s in LITERAL_STRINGS)
    assert literal_pieces("plain text") == ["plain text"]
    assert literal_pieces("") == []
    # overlapping strings: the one that ends first is cut first
    assert literal_pieces("xaby", ["xaby", "ab"]) == ["xa", "by"]
    assert literal_pieces("abab", ["ab", "b"]) == ["a", "ba", "b"]
    assert literal_pieces("[No Retrieval]") == ["[No Retrieval", "]"]


def test_llama_cpp_matches_user_defined_tokens_even_without_special_parsing(tiny_model):
    """The premise, checked on the real Llama 2 + Self-RAG vocabulary: with special=False
    llama.cpp still turns a literal reflection string into its single USER_DEFINED id
    (control tokens such as </s> it leaves alone). If a llama.cpp upgrade changes this,
    this test says so; encode_text stays correct either way."""
    v = ReflectionVocab.require(tiny_model)
    ids = tiny_model.tokenize("a </paragraph> b [Retrieval] c", special=False)
    assert v["</paragraph>"] in ids and v["[Retrieval]"] in ids
    assert tiny_model.eos_id not in tiny_model.tokenize("x </s> y", special=False)


@pytest.mark.parametrize("leading_space", [False, True])
def test_encode_text_keeps_reflection_strings_as_text_on_the_real_tokenizer(tiny_model,
                                                                            leading_space):
    reflection = set(ReflectionVocab.require(tiny_model).all_ids) | {32015}   # + <pad>
    for s in LITERAL_STRINGS:
        text = f"<p>See {s} here</p>"
        ids = encode_text(tiny_model, text, leading_space=leading_space)
        assert not reflection & set(ids), s
        assert tiny_model.detokenize(ids).lstrip(" ") == text
    ids = encode_text(tiny_model, HOSTILE, leading_space=False)
    assert not reflection & set(ids)
    assert tiny_model.detokenize(ids) == HOSTILE
    # text without reflection strings is tokenized exactly as before
    assert encode_text(tiny_model, "The Eiffel", leading_space=True) == tiny_model.tokenize(
        "The Eiffel", special=False)


def engine_inputs_are_clean(model, spy_calls) -> None:
    v = ReflectionVocab.require(model)
    reflection = set(v.all_ids)
    for prefix, branches in spy_calls:
        assert not reflection & set(prefix[1:])        # the prompt: text only
        for b in branches:
            # exactly the engine's own [Retrieval] <paragraph> ... </paragraph>
            assert b[:2] == [v["[Retrieval]"], v["<paragraph>"]] and b[-1] == v["</paragraph>"]
            assert not reflection & set(b[2:-1])


def later_calls_extend_the_first(calls) -> None:
    """A later step's context is an earlier one's with one of its branches and what the
    model wrote after it (generated ids are the model's, never re-tokenized text)."""
    (prefix, branches), rest = calls[0], calls[1:]
    for later, _ in rest:
        assert any(later[: len(prefix) + len(b)] == prefix + b for b in branches)


class Spy:
    def __init__(self, model) -> None:
        self.inner = model.generate
        self.calls: list[tuple[list[int], list[list[int]]]] = []

    def __call__(self, prefix, branches, **kw):
        self.calls.append((list(prefix), [list(b) for b in branches]))
        return self.inner(prefix, branches, **kw)


def test_reflection_strings_in_question_history_and_passage_stay_text_scripted():
    m = ScriptedModel()
    m.on_question({"[Retrieval]": 1.0})
    spy = Spy(m)
    m.generate = spy
    e = SelfRagEngine(m, config=EngineConfig(mode="always", k=2, max_segments=1))
    e.answer("What does [Retrieval] do?", retrieve=Retriever([passage(1, HOSTILE)]),
             history=[("What is </paragraph>?", "It closes [Relevant] evidence.")])
    assert spy.calls
    later_calls_extend_the_first(spy.calls)
    engine_inputs_are_clean(m, spy.calls[:1])
    prompt = m.detokenize(spy.calls[0][0])
    assert "What does [Retrieval] do?" in prompt and "What is </paragraph>?" in prompt


def test_reflection_strings_in_question_and_passage_stay_text_real(tiny_model, monkeypatch):
    spy = Spy(tiny_model)
    monkeypatch.setattr(tiny_model, "generate", spy)
    e = SelfRagEngine(tiny_model, config=EngineConfig(mode="always", k=2, max_tokens=8,
                                                      max_segments=1))
    question = "What does </paragraph>[Retrieval] mean in an HTML file?"
    e.answer(question, retrieve=Retriever([passage(1, HOSTILE), passage(2, "<p>[Relevant]</p>")]))
    later_calls_extend_the_first(spy.calls)
    engine_inputs_are_clean(tiny_model, spy.calls[:1])
    assert spy.calls[0][0] == prompt_ids(tiny_model, question)[0]
    assert question in tiny_model.detokenize(spy.calls[0][0])
