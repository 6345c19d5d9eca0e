"""A quote shown as the answer (✔) comes with the sentences right before and after it in its
paragraph, as one excerpt under one mark (stop 56, extract.answer_neighbours,
SHOW_NEIGHBOURS): the relevance model often puts a sentence of the answering paragraph
first, not the one that answers; the paragraph around it holds it."""

from __future__ import annotations

import pytest

from localrag.answering.generate import extract as ex

# git-archimport.txt's -f, the answer ("cannot handle directory renames") after the quote
GIT = ("-f::\n\tUse the fast patchset import strategy. This can be significantly faster for large "
       "trees, but cannot handle directory renames or permissions changes. The default strategy "
       "is slow and safe.\n\n-o::\n\tUse this for compatibility with old-style branch names.\n")
LIST = ("Options:\n\n- one: the first item.\n- two: the second item.\n- three: the third item.\n")
CODE = ("Create the repository first. Then add the files you want to track with:\n\n"
        "    $ git add .\n    $ git commit -m first\n\nThat records the first commit.\n")


def _quote(text: str, opening: str, answers: float, *, code: bool = False) -> ex.Quote:
    span = next(s for s in ex.candidate_units(text) if s.text.startswith(opening))
    return ex.Quote(0, span, answers, ex.code_after(text, span) if code else None, answers=answers)


def _units(texts, quotes, roles):  # noqa: ANN001, ANN202
    role = {id(q): r for q, r in zip(quotes, roles)}
    return [(any(role[id(q)] for q in u), " ".join(q.span.text for q in u)) for u in ex.excerpts(quotes, texts)]


def test_a_quote_shown_as_the_answer_comes_with_its_paragraphs_neighbours():
    main = _quote(GIT, "This can be significantly", 0.6)
    other = _quote(GIT, "Use this for compatibility", 0.1)     # under the floor: context
    quotes = [main, other]
    roles = ex.answer_roles(quotes)
    assert roles == [True, False]
    grown, grown_roles = ex.answer_neighbours("what's the catch with the fast import?", [GIT], quotes, roles)
    assert [(q.span.text[:12], q.context, r) for q, r in zip(grown, grown_roles)] == [
        ("Use the fast", "before", True), ("This can be ", "", True), ("The default ", "after", True),
        ("Use this for", "", False)]
    units = _units([GIT], grown, grown_roles)
    assert units[0] == (True, "Use the fast patchset import strategy. This can be significantly faster for "
                              "large trees, but cannot handle directory renames or permissions changes. "
                              "The default strategy is slow and safe.")
    assert units[1] == (False, "Use this for compatibility with old-style branch names.")   # context: alone


def test_no_neighbour_across_a_paragraph_a_list_item_or_a_code_block():
    first = _quote(GIT, "Use the fast", 0.6)            # first of its paragraph: nothing before
    grown, _ = ex.answer_neighbours("q", [GIT], [first], [True])
    assert [q.context for q in grown] == ["", "after"]
    item = _quote(LIST, "- two", 0.6)
    assert ex.answer_neighbours("q", [LIST], [item], [True])[0] == [item]     # items stand alone
    lead = _quote(CODE, "Then add the files", 0.6, code=True)
    assert lead.code is not None                        # the premise
    grown, _ = ex.answer_neighbours("q", [CODE], [lead], [True])
    assert [q.context for q in grown] == ["before", ""]   # its block comes after it, no sentence


# readline.h: two comments one after the other, the first a section's heading (ccode6-023)
C_HEADER = ("/* Variables to control readline signal handling. */\n"
            "/* If non-zero, readline will install its own signal handlers for\n"
            "   SIGINT, SIGTERM, SIGHUP, SIGQUIT, SIGALRM, SIGTSTP, SIGTTIN, and SIGTTOU. */\n"
            "extern int rl_catch_signals;\n")


def test_no_neighbour_that_would_stand_as_a_unit_of_its_own():
    """A neighbour is only what excerpts joins into the quote's unit (nothing but white space
    between, the first ending a statement): the comment before, behind its " */ /* ", would
    have been a ✔ unit of its own, a section heading."""
    main = _quote(C_HEADER, "If non-zero", 0.6)
    assert [u.text[:9] for u in ex.candidate_units(C_HEADER)] == ["Variables", "If non-ze"]   # the premise
    assert ex.answer_neighbours("q", [C_HEADER], [main], [True])[0] == [main]


def test_a_neighbour_quoted_already_is_not_quoted_twice():
    main = _quote(GIT, "This can be significantly", 0.6)
    after = _quote(GIT, "The default strategy", 0.5)
    grown, roles = ex.answer_neighbours("q", [GIT], [main, after], [True, True])
    assert [q.span.text[:12] for q in grown].count("The default ") == 1
    assert len(grown) == 3 and all(roles)


def test_the_rule_before_keeps_the_quote_alone(monkeypatch):
    main = _quote(GIT, "This can be significantly", 0.6)
    monkeypatch.setattr(ex, "SHOW_NEIGHBOURS", False)
    assert ex.answer_neighbours("q", [GIT], [main], [True]) == ([main], [True])


@pytest.mark.parametrize("roles", [[False], []])
def test_nothing_grows_without_an_answer(roles):
    quotes = [_quote(GIT, "This can be significantly", 0.6)][:len(roles)]
    assert ex.answer_neighbours("q", [GIT], quotes, roles) == (quotes, roles)


def test_the_answer_engine_shows_a_check_quote_with_its_neighbours_in_one_unit(monkeypatch):
    """The instruct engine (scripted model, scripted relevance model): the quote the model
    judges to answer is shown with the sentences right before and after it in its
    paragraph, one ✔ unit at the quote's paragraph; the rule before shows it alone."""
    from test_instruct_engine import StubCritic, _hash_embed, config, passage, retriever, scripted

    from localrag.answering.generate.instruct import InstructEngine

    doc = passage(0, "git-archimport.txt", GIT)
    other = passage(1, "git-fast-import.txt", "Imports are fast. Each one is checked. Nothing is lost. "
                    "Every mark is kept.\n")     # read as related: the other three quotes

    def answers(question, texts):  # noqa: ANN001, ANN202
        return [0.95 if "This can be significantly" in t else 0.1 if "git-fast-import" in t else 0.001
                for t in texts]

    def ask() -> list:
        critic = StubCritic(relevance={"git-archimport.txt": 0.9, "git-fast-import.txt": 0.9})
        ans = InstructEngine(scripted(), config=config(), critic=critic, embed=_hash_embed, answers=answers).answer(
            "What's the catch with archimport's fast import?", retrieve=retriever([doc, other]))
        return [s for s in ans.segments if s.origin == "quote" and s.role == "answer"]

    shown = ask()
    assert shown[0].text == ("Use the fast patchset import strategy. This can be significantly faster for large "
                             "trees, but cannot handle directory renames or permissions changes. The default "
                             "strategy is slow and safe.")
    assert shown[0].line == doc.start_line + 1          # cited at its first sentence's line
    monkeypatch.setattr(ex, "SHOW_NEIGHBOURS", False)
    assert ask()[0].text == ("Use the fast patchset import strategy. This can be significantly faster for "
                             "large trees, but cannot handle directory renames or permissions changes.")
    #                          (the sentence before as reading context: "This" refers back to it)


# zsh's Conditional Expressions: the answer, then a context quote, then the ✔ quote (zsh-061)
ZSH_COND = ("Filename generation is not performed on any form of argument to conditions. However, it can "
            "be forced when the option EXTENDED_GLOB is in effect by using an explicit glob qualifier. "
            "A normal glob qualifier expression may appear between the q and the closing parenthesis. "
            "The results of filename generation are joined together to form a single word.\n\n"
            "This special use of filename generation is only available with the [[ syntax.\n")


def test_a_quote_quoted_already_beside_the_answer_passes_its_neighbour_on():
    """The ✔ quote's neighbour before it was a › context quote: excerpts joins the two into the
    ✔ unit, so the unit's neighbour is the sentence before both; without it the unit opened on
    "However, it can be forced ...", the answer left out right before it."""
    main = _quote(ZSH_COND, "A normal glob qualifier", 0.6)
    context = _quote(ZSH_COND, "However, it can", 0.1)
    quotes = [main, context]
    roles = ex.answer_roles(quotes)
    assert roles == [True, False]                       # the premise
    grown, grown_roles = ex.answer_neighbours("are globs expanded in [[ ]]?", [ZSH_COND], quotes, roles)
    units = _units([ZSH_COND], grown, grown_roles)
    assert units[0] == (True, "Filename generation is not performed on any form of argument to conditions. "
                              "However, it can be forced when the option EXTENDED_GLOB is in effect by "
                              "using an explicit glob qualifier. A normal glob qualifier expression may "
                              "appear between the q and the closing parenthesis. The results of filename "
                              "generation are joined together to form a single word.")
    assert len(units) == 1


# CMake's cross-compiling guide: a sentence, then a lead-in to a list of terms (cmake-017)
# (its terms written without ":", so that the lead-in stays quotable: with them the list is
# a definition list, and a lead-in of prose with no code after it is no candidate at all)
CMAKE_TRY_RUN = ("If that is the case, it will not try to run the executable. Instead it will create cache "
                 "variables which must be filled by the user. These cache entries are:\n\n<runResultVar>\n\n"
                 "    Exit code if the executable were to be run on the target platform.\n")


def test_a_lead_in_never_ends_a_unit_after_its_quote():
    """"These cache entries are:" opens with a back-reference, so it came after its quote as
    reading context, and the unit ended on a colon without the entries (judged noise); a
    sentence ending in ":" is neither reading context nor a neighbour after a quote."""
    units = ex.candidate_units(CMAKE_TRY_RUN)
    main = next(u for u in units if u.text.startswith("Instead it will"))
    assert any(u.text == "These cache entries are:" for u in units)     # the premise: quotable
    assert ex.reading_context(CMAKE_TRY_RUN, units, main) == (None, None)
    quote = _quote(CMAKE_TRY_RUN, "Instead it will", 0.6)
    grown, _ = ex.answer_neighbours("q", [CMAKE_TRY_RUN], [quote], [True])
    assert [(q.span.text[:10], q.context) for q in grown] == [("If that is", "before"), ("Instead it", "")]
