"""A sentence whose description opened above its passage (a chunk that starts in the middle
of an option's paragraph) is named after the term line the file has right before the
passage (Passage.before), as it would be were the line in the passage (stop 56,
extract.READ_TERMS_ABOVE_PASSAGE). Without it "The default value is four megabytes (4MB)."
was quoted with no name: true, but it says nothing of which setting."""

from __future__ import annotations

import pytest

from localrag.answering.generate import extract as ex

# git-index-pack.txt, cut where a chunk of the bench index starts: in --threads's paragraph
LEAD = ("--stdin::\n\tWhen this flag is provided, the pack is read from stdin\n\tinstead and a copy is "
        "then written to <pack-file>.\n\n--threads=<n>::\n\tSpecifies the number of threads to spawn "
        "when resolving\n\tdeltas. This requires that index-pack be compiled with\n\t")
PASSAGE = ("pthreads otherwise this option is ignored with a warning.\n\tThis is meant to reduce "
           "packing time on multiprocessor\n\tmachines. The required amount of memory for the delta "
           "search\n\twindow is however multiplied by the number of threads.\n\n"
           "--max-input-size=<size>::\n\tDie, if the pack is larger than <size>.\n")
# PostgreSQL's work_mem as the HTML parser reads it: a term line, its paragraphs indented
PG_LEAD = ("work_mem (integer):\n\n    Sets the base maximum amount of memory to be used by a query "
           "operation (such as a sort or hash table) before writing to temporary disk files.\n\n")
PG_PASSAGE = ("    If this value is specified without units, it is taken as kilobytes. The default "
              "value is four megabytes (4MB).\n\n    Note that a complex query might perform several "
              "sort and hash operations at the same time.\n\nhash_mem_multiplier (floating point):\n\n"
              "    Used to compute the maximum amount of memory that hash-based operations can use.\n")


def _span(text: str, opening: str) -> ex.Span:
    return next(s for s in ex.candidate_units(text) if s.text.startswith(opening))


@pytest.mark.parametrize("lead, passage, opening, term", [
    (LEAD, PASSAGE, "This is meant to reduce", "--threads=<n>::"),
    (PG_LEAD, PG_PASSAGE, "The default value is four", "work_mem (integer):"),
    (PG_LEAD, PG_PASSAGE, "Note that a complex query", "work_mem (integer):"),   # its next paragraph
])
def test_a_description_cut_by_its_passage_is_named_from_the_text_before_it(lead, passage, opening, term,
                                                                           monkeypatch):
    span = _span(passage, opening)
    assert ex.subject_of(passage, span) is None          # the passage alone holds no name
    found = ex.subject_of(passage, span, lead)
    assert found is not None and found.text == term
    assert found.end <= 0 and (lead + passage)[found.start + len(lead):found.end + len(lead)] == term
    assert term in ex.answer_text(passage, span, "git-index-pack.txt", lead)     # the model reads it
    monkeypatch.setattr(ex, "READ_TERMS_ABOVE_PASSAGE", False)
    assert ex.subject_of(passage, span, lead) is None    # the rule before


def test_a_term_further_down_the_passage_is_still_its_own():
    span = _span(PASSAGE, "Die, if the pack")
    assert ex.subject_of(PASSAGE, span, LEAD).text == "--max-input-size=<size>::"
    span = _span(PG_PASSAGE, "Used to compute")
    assert ex.subject_of(PG_PASSAGE, span, PG_LEAD).text == "hash_mem_multiplier (floating point):"


@pytest.mark.parametrize("lead, passage, opening", [
    # a paragraph of its own at the passage's top, after a blank line and a description that
    # ended: the file's term line above names the paragraph before, not this one
    ("--stdin::\n\tRead the pack from stdin.\n\nUnrelated prose that ends here.\n\n",
     "Packs are checked as they are read. Nothing is written twice.\n", "Packs are checked"),
    # the passage's paragraph is indented, but a line less indented stands above it in the passage
    ("--stdin::\n\t", "Read the pack.\n\nA note at the margin.\n\n\tAn indented remark follows.\n",
     "An indented remark"),
])
def test_no_name_from_before_a_passage_whose_paragraph_starts_there(lead, passage, opening):
    assert ex.subject_of(passage, _span(passage, opening), lead) is None


def _long_option_page() -> str:
    """An asciidoc manual page whose option's description is longer than a chunk, so that a
    later chunk starts inside it, away from its term line."""
    body = " ".join(f"Remark {n} on the resolver: every worker reads its own share of the objects "
                    f"and writes what it found to the shared table before the next pass begins."
                    for n in range(16))
    lines = [body[i:i + 72] for i in range(0, len(body), 72)]
    return ("git-resolve(1)\n==============\n\nOPTIONS\n-------\n--workers=<n>::\n\tSpecifies how many "
            "workers resolve deltas.\n" + "".join(f"\t{x}\n" for x in lines)
            + "\tA value of 0 picks the count from the processors found, at most three.\n\n"
            "--quiet::\n\tPrint nothing.\n")


def test_the_answer_path_names_a_cut_description_from_the_stored_text_before_it(tmp_path, embedder):
    """Over the real index (Assistant._retrieve: each passage with the file's stored text
    before it): the chunk holding the description's last sentence lacks the term line, and
    the quote of that sentence brings the term line, verbatim, from the text above it."""
    from localrag.assistant import Assistant
    from localrag.paths import Paths
    from localrag.settings import Settings

    src = tmp_path / "src"
    src.mkdir()
    page = _long_option_page()
    (src / "git-resolve.txt").write_text(page, encoding="utf-8")
    question = "what does a value of 0 workers mean for the resolver?"
    with Assistant(paths=Paths.resolve(tmp_path / "data"), settings=Settings(), embedder=embedder) as a:
        a.add_root(src)
        a.update_index()
        passages = a._retrieve(question, 5)
    cut = next(p for p in passages if "A value of 0 picks" in p.text)
    assert "--workers=<n>::" not in cut.text and "--workers=<n>::" in cut.before     # the premise
    span = _span(cut.text, "A value of 0 picks")
    assert ex.subject_of(cut.text, span) is None
    quotes = ex.choose_quotes(question, [cut.text], embedder.encode, max_quotes=8, leads=[cut.before]).quotes
    quote = next(q for q in quotes if q.span.text.startswith("A value of 0 picks"))
    assert quote.subject is not None and quote.subject.text == "--workers=<n>::"
    above = page[:page.index("A value of 0 picks")]
    assert quote.subject.text in above                   # the file's own line, above the sentence
