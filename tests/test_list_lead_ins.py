"""A list item is read with the sentence that introduces its list (stop 49,
extract.list_lead_in): the relevance model reads the item alone and under its lead-in and
keeps the better reading, and a quoted item shows its lead-in in the same unit. Alone,
"- HarfBuzz for complex text shaping" does not say that Pango depends on it."""

from __future__ import annotations

from collections.abc import Sequence

import pytest

from localrag.answering.generate import extract
from localrag.answering.generate.extract import list_lead_in, sentence_spans

PANGO = """To use the Free Software stack backend, Pango depends on the following
libraries:

- FontConfig for font discovery,
- FreeType for font access,
- HarfBuzz for complex text shaping
- fribidi for bidirectional text handling

Cairo support depends on the Cairo library.
"""

NESTED = """- openssl
  the OpenSSL command line tool, a swiss army knife for cryptographic tasks,
  testing and analyzing. It can be used for
  - creation of key parameters
  - creation of X.509 certificates, CSRs and CRLs

* The gettext domains have been renamed to better match the
  actual ISO number:
  - ISO 639-2: Renamed from iso_639 to iso_639-2
  - ISO 3166-2: Renamed from iso_3166_2 to iso_3166-2
"""

NO_LEAD = """### Memory allocation

* Malloc(), Calloc(), etc. from util.h abort in Out-of-Memory situations
* UncheckedMalloc(), etc. return nullptr in OOM situations

The build was tested on three systems.
- the laptop in the office is the fastest of them by far
"""


def _lead(text: str, starts: str) -> str | None:
    span = next(s for s in sentence_spans(text) if s.text.startswith(starts))
    got = list_lead_in(text, span)
    return None if got is None else got.text


def test_an_items_lead_in_is_the_sentence_that_introduces_its_list():
    lead = "To use the Free Software stack backend, Pango depends on the following libraries:"
    assert _lead(PANGO, "- HarfBuzz") == lead            # over the items before it
    assert _lead(PANGO, "- FontConfig") == lead
    assert _lead(PANGO, "Cairo support") is None         # prose is no item
    assert _lead(NESTED, "- creation of X.509") == "It can be used for"   # left open
    assert _lead(NESTED, "- ISO 3166-2") == ("* The gettext domains have been renamed to better "
                                            "match the actual ISO number:")   # a parent item
    assert _lead(NESTED, "- openssl") is None            # the first line of the text


@pytest.mark.parametrize("starts", ["* UncheckedMalloc", "* Malloc", "- the laptop"])
def test_a_heading_or_a_finished_sentence_introduces_no_list(starts):
    assert _lead(NO_LEAD, starts) is None


def test_a_long_paragraph_run_into_a_list_is_no_lead_in_and_the_rule_can_be_switched_off(monkeypatch):
    long = ("This paragraph goes on " + "and on " * 40 + "before the list:\n"
            "- an item that follows the long paragraph above\n")
    assert _lead(long, "- an item") is None
    monkeypatch.setattr(extract, "READ_LEAD_INS", False)
    assert _lead(PANGO, "- HarfBuzz") is None


def _hash_embed(texts: Sequence[str]):
    """Bags of words hashed into 16 dimensions, the same in every process (crc32, not the
    salted hash())."""
    import zlib

    import numpy as np

    out = np.zeros((len(texts), 16), dtype=np.float32)
    for i, t in enumerate(texts):
        for w in t.lower().split():
            out[i, zlib.crc32(w.encode()) % 16] += 1.0
    return out


def test_the_model_reads_an_item_under_its_lead_in_and_keeps_its_best_reading():
    """A scripted relevance model: the item answers only when read under its lead-in; an
    item that answers alone keeps its probability when its lead-in reads worse (the best
    reading counts). Without lead-ins (the rule before) the answering item is not first."""
    question = "What does Pango use to shape Arabic text?"
    read: list[str] = []

    def answers(q: str, texts: Sequence[str]) -> list[float]:
        read.extend(texts)
        return [0.95 if "Pango depends" in t and "HarfBuzz" in t else
                0.6 if t.endswith("Cairo support depends on the Cairo library.") else 0.05
                for t in texts]

    choice = extract.choose_quotes(question, [PANGO], _hash_embed, answers=answers)
    first = choice.quotes[0]
    assert first.span.text == "- HarfBuzz for complex text shaping"
    assert first.answers is not None and first.answers > choice.quotes[1].answers
    assert first.intro is not None and first.intro.text.startswith("To use the Free Software")
    assert any(t.endswith("- HarfBuzz for complex text shaping") and "Pango depends" not in t for t in read)
    extract.READ_LEAD_INS = False
    try:
        before = extract.choose_quotes(question, [PANGO], _hash_embed, answers=answers)
    finally:
        extract.READ_LEAD_INS = True
    assert before.quotes[0].span.text.startswith("Cairo support")

    def alone_better(q: str, texts: Sequence[str]) -> list[float]:
        return [0.2 if "Pango depends" in t else 0.9 if t.endswith("HarfBuzz for complex text shaping")
                else 0.05 for t in texts]

    best = extract.choose_quotes(question, [PANGO], _hash_embed, answers=alone_better).quotes[0]
    assert best.span.text == "- HarfBuzz for complex text shaping"
    unread = extract.choose_quotes(question, [PANGO], _hash_embed, answers=alone_better).quotes
    extract.READ_LEAD_INS = False
    try:
        plain = extract.choose_quotes(question, [PANGO], _hash_embed, answers=alone_better).quotes
    finally:
        extract.READ_LEAD_INS = True
    assert unread[0].answers == pytest.approx(plain[0].answers)   # the same best reading


def test_a_quoted_item_shows_its_lead_in_once_in_its_own_unit():
    """The engine shows the lead-in inside the item's quotation marks, with "…" where other
    items stand between them, once for items of one list quoted in a row; the unit's line is
    the item's own; a saved chat keeps it, and one saved before lead-ins reads."""
    from test_instruct_engine import StubCritic, config, passage, retriever, scripted

    from localrag.answering.generate.instruct import InstructEngine
    from localrag.answering.label.answer import answer_from_json
    from localrag.answering.label.render import answer_to_text

    doc = passage(0, "README.md", PANGO)

    def answers(question: str, texts: Sequence[str]) -> list[float]:
        return [0.95 if "Pango depends" in t and "HarfBuzz" in t else
                0.9 if "Pango depends" in t and "fribidi" in t else 0.05 for t in texts]

    ans = InstructEngine(scripted(), config=config(), critic=StubCritic(relevance={"README.md": 0.9}),
                         embed=_hash_embed, answers=answers).answer(
        "What does Pango use to shape and order Arabic text?", retrieve=retriever([doc]))
    quotes = [s for s in ans.segments if s.origin == "quote"]
    items = [s for s in quotes if "HarfBuzz" in s.text or "fribidi" in s.text]
    assert len(items) == 2
    first, second = items                                # in the order shown
    assert first.lead == ("To use the Free Software stack backend, Pango depends on the "
                          "following libraries: …")
    assert second.lead is None                           # the same lead-in, shown once
    harfbuzz = next(s for s in items if "HarfBuzz" in s.text)
    assert harfbuzz.line == doc.start_line + 5           # the item's own line
    assert (f"“To use the Free Software stack backend, Pango depends on the following libraries: … "
            f"{first.text}”") in answer_to_text(ans)
    again = answer_from_json(ans.to_json())
    assert [s.lead for s in again.segments] == [s.lead for s in ans.segments]
    old = ans.to_json()
    for seg in old["segments"]:
        seg.pop("lead")                                  # a chat saved before lead-ins
    assert all(s.lead is None for s in answer_from_json(old).segments)


def test_a_lead_in_quoted_itself_is_not_shown_again_before_its_item():
    text = ("Configuration happens in three steps, all of them described in the manual:\n"
            "- run the configure script with the prefix of your choice\n")
    lead_in, item = sentence_spans(text)
    assert list_lead_in(text, item) == lead_in
    cands = [extract.Candidate(0, 0.0, lead_in, lead_in.text), extract.Candidate(0, 1.0, item, item.text)]
    both = extract.pick_quotes("q", [text], cands, [0.9, 0.8])
    assert [q.intro for q in both] == [None, None]
    alone = extract.pick_quotes("q", [text], cands[1:], [0.8])
    assert alone[0].intro == lead_in


def test_the_item_before_or_a_sentence_ended_further_on_is_no_lead_in():
    """Walking up over the list, a line at the item's depth that is no item can be the
    wrapped end of the item before it ("lazy" Markdown continuation) or a line that ends
    mid-sentence: neither introduces the list."""
    lazy = ("* the first item is wrapped\nonto a line of its own without indent\n"
            "* the second item of the same list follows it\n")
    assert _lead(lazy, "* the second item") is None
    wrapped = ("Widths are now configurable with the\nCATWIDTH directive (see the manual).\n"
               "* Groff 1.20 was recently released with the preconv program\n")
    assert _lead(wrapped, "* Groff") is None


def test_search_judges_a_passage_by_its_items_best_reading_as_the_answer_path_does():
    """The search's second stage (passage_judge.SentenceJudge) reads what the answer path
    reads: an item under its lead-in too, so the answer path reads nothing anew and a
    passage whose item answers only under its lead-in is judged to hold the answer."""
    from localrag.answering.passage_judge import SentenceJudge

    read: list[str] = []

    def answers(q: str, texts: Sequence[str]) -> list[float]:
        read.extend(texts)
        return [0.9 if "Pango depends" in t and "HarfBuzz" in t else 0.1 for t in texts]

    judge = SentenceJudge(answers)
    other = "Cairo is a 2D graphics library with support for multiple output devices.\n"
    assert judge("What does Pango use to shape Arabic text?", [("README", PANGO), ("cairo", other)]) == \
        pytest.approx([0.9, 0.1])
    choice_read: list[str] = []

    def again(q: str, texts: Sequence[str]) -> list[float]:
        choice_read.extend(texts)
        return answers(q, texts)

    extract.choose_quotes("What does Pango use to shape Arabic text?", [PANGO], _hash_embed,
                          answers=again, titles=["README"])
    assert set(choice_read) <= set(read)


def test_no_parent_item_one_column_off_or_on_a_passages_first_line():
    """A C comment's gutter one column off ("*   a certificate ... disabled," on a chunk's
    first line, " * @FLAG: ..." under it) and a passage's first line, whose indent the
    chunker lost (a changelog's item above its siblings), are no parent items."""
    gutter = ("*   a certificate authority. This flag should normally be disabled,\n"
              " *   unless you know what this means.\n"
              " * @GNUTLS_VERIFY_DO_NOT_ALLOW_SAME: If a certificate is not signed by anyone\n")
    assert all(list_lead_in(gutter, s) is None for s in sentence_spans(gutter))
    changelog = ("- edit documentation; mention the sans and sansbold versions\n"
                 "  - add upright, sans serif Greek letters for math\n")
    assert _lead(changelog, "- add upright") is None
    assert _lead(NESTED, "- ISO 3166-2") is not None          # a real parent, two columns less
