"""A sentence that opens with a back-reference ("This adds per-completion display strings.")
is read by the relevance model also after the sentence it refers back to, as the answer shows
it (extract.reading_context), the better reading counting (stop 55,
extract.READ_BACK_REFERENCES). Alone, "This" names nothing: on the judged pools such answering
sentences came first less often than others."""

from __future__ import annotations

from collections.abc import Sequence

import pytest

from localrag.answering.generate import extract

ZSH = """compadd options

The -d option takes the name of an array of display strings, one per match. This adds
per-completion display strings. Matches without one are listed as they are inserted.

The -X option gives an explanation shown above the matches.
"""
QUESTION = "Can the completion list show a friendlier label than the word that is inserted?"


def _hash_embed(texts: Sequence[str]):
    """Bags of words hashed into 16 dimensions, the same in every process (crc32)."""
    import zlib

    import numpy as np

    out = np.zeros((len(texts), 16), dtype=np.float32)
    for i, t in enumerate(texts):
        for w in t.lower().split():
            out[i, zlib.crc32(w.encode()) % 16] += 1.0
    return out


def _span(text: str, opening: str) -> extract.Span:
    return next(s for s in extract.candidate_units(text) if s.text.startswith(opening))


def test_a_back_reference_is_also_read_after_the_sentence_it_refers_to(monkeypatch):
    span = _span(ZSH, "This adds")
    readings = extract.answer_texts(ZSH, span, "zshcompwid")
    assert readings[0] == "zshcompwid\nThis adds per-completion display strings."
    assert readings[1] == ("zshcompwid\nThe -d option takes the name of an array of display strings, "
                           "one per match. This adds per-completion display strings.")
    # a sentence that opens otherwise, or whose sentence before is in another paragraph,
    # is read alone
    assert len(extract.answer_texts(ZSH, _span(ZSH, "Matches without"), "t")) == 1
    assert len(extract.answer_texts("Intro.\n\nThis stands alone here.\n", _span(
        "Intro.\n\nThis stands alone here.\n", "This stands"))) == 1
    monkeypatch.setattr(extract, "READ_BACK_REFERENCES", False)
    assert extract.answer_texts(ZSH, span, "zshcompwid") == readings[:1]


def test_the_answer_and_the_search_keep_a_back_references_best_reading(monkeypatch):
    """A scripted relevance model: "This adds ..." answers only when read after the sentence
    that names the -d option; it is then the first quote, shown with that sentence above it,
    and the search's judge gives its passage that probability. Read alone (the rule before)
    the other paragraph's sentence comes first."""
    from localrag.answering.passage_judge import SentenceJudge

    def answers(q: str, texts: Sequence[str]) -> list[float]:
        return [0.9 if "-d option" in t and "This adds" in t else
                0.5 if "-X option" in t else 0.05 for t in texts]

    choice = extract.choose_quotes(QUESTION, [ZSH], _hash_embed, answers=answers, titles=["zshcompwid"])
    assert choice.quotes[0].span.text == "This adds per-completion display strings."
    first = extract.excerpts(choice.quotes, [ZSH])[0]     # shown with the sentence it refers to
    assert [q.span.text[:13] for q in first][:2] == ["The -d option", "This adds per"]
    assert SentenceJudge(answers)(QUESTION, [("zshcompwid", ZSH)]) == pytest.approx([0.9])
    monkeypatch.setattr(extract, "READ_BACK_REFERENCES", False)
    before = extract.choose_quotes(QUESTION, [ZSH], _hash_embed, answers=answers, titles=["zshcompwid"])
    assert before.quotes[0].span.text.startswith("The -X option")
    assert SentenceJudge(answers)(QUESTION, [("zshcompwid", ZSH)]) == pytest.approx([0.5])


def test_the_measured_switch_reads_every_sentence_after_the_one_before_it(monkeypatch):
    """extract.READ_SENTENCE_BEFORE (off: measured by bench/back_references.py
    --sentence-before and not kept) reads a sentence that opens on no back-reference after
    the sentence before it in its paragraph, never across a paragraph break."""
    span = _span(ZSH, "Matches without")
    assert len(extract.answer_texts(ZSH, span, "t")) == 1
    monkeypatch.setattr(extract, "READ_SENTENCE_BEFORE", True)
    assert extract.answer_texts(ZSH, span, "t")[1] == (
        "t\nThis adds per-completion display strings. Matches without one are listed as they are inserted.")
    assert len(extract.answer_texts(ZSH, _span(ZSH, "The -X option"), "t")) == 1   # a paragraph's first
    assert len(extract.answer_texts(ZSH, _span(ZSH, "The -d option"), "t")) == 1
