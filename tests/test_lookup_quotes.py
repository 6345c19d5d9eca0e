"""A lookup's answer quotes the definition it looks up, with its flag (issue 17, point 4).

zsh's "what does [[ -N file ]] test?" found the passage of "-N file:" first (search's pinned
definition) and quoted "In each of the above expressions, if file is of the form
‘/dev/fd/n’ ..." instead of its description, which was quoted, when it was, without its
flag: "true if file exists and its access time is not newer than its modification time"
says "file", the argument, and so read as naming its term line."""

from __future__ import annotations

import zlib
from collections.abc import Sequence

import numpy as np
import pytest

from localrag.answering.generate import extract
from localrag.answering.generate.extract import subject_of

ZSH_TESTS = """12 Conditional Expressions

-w file:

    true if file exists and is writable by current process.

-N file:

    true if file exists and its access time is not newer than its modification time.

In each of the above expressions, if file is of the form ‘/dev/fd/n’, where n is an integer, \
then the test applied to the open file whose descriptor number is n, even if the underlying \
system does not support the /dev/fd directory.

-t fd:

    true if file descriptor number fd is open and associated with a terminal device.

-D:

    controls default completion behavior for the arguments of commands not assigned any special behavior.

VALUE <name>:

    Request the data stored in value named <name>.

-R [ -c ] [ display-string ] [ string ... ]:

    If no strings are given but the -c option is used such a list is cleared.

-W --password:

    In some cases it is worth typing -W to avoid the extra connection attempt.
"""


def _span(text: str, opening: str) -> extract.Span:
    return next(s for s in extract.candidate_units(text) if s.text.startswith(opening))


@pytest.mark.parametrize("opening, subject", [
    ("true if file exists and its access", "-N file:"),
    ("true if file exists and is writable", "-w file:"),
    # a flag alone, or with an argument of two letters, is a name all the same
    ("true if file descriptor number fd", "-t fd:"),
    ("controls default completion behavior", "-D:"),
    # a placeholder is the keyword's argument: "value named <name>" does not name VALUE
    ("Request the data stored in value named", "VALUE <name>:"),
    # a flag in brackets is an optional part of the line, not its name
    ("If no strings are given", "-R [ -c ] [ display-string ] [ string ... ]:"),
])
def test_an_option_with_its_argument_is_named_by_its_flag_alone(opening, subject):
    found = subject_of(ZSH_TESTS, _span(ZSH_TESTS, opening))
    assert found is not None and found.text == subject


def test_a_sentence_that_writes_the_flag_names_it_itself(monkeypatch):
    assert subject_of(ZSH_TESTS, _span(ZSH_TESTS, "In some cases it is worth typing -W")) is None
    # before: the argument's word in the sentence counted as naming the line
    monkeypatch.setattr(extract, "READ_FLAG_NAMES", False)
    for opening in ("true if file exists and its access", "true if file descriptor number fd",
                    "controls default completion behavior", "Request the data stored in value named"):
        assert subject_of(ZSH_TESTS, _span(ZSH_TESTS, opening)) is None, opening


def _hash_embed(texts: Sequence[str]):  # noqa: ANN202
    """Bags of words hashed into 16 dimensions, the same in every process (crc32)."""
    out = np.zeros((len(texts), 16), dtype=np.float32)
    for i, t in enumerate(texts):
        for w in t.lower().split():
            out[i, zlib.crc32(w.encode()) % 16] += 1.0
    return out


def _model(question: str, texts: Sequence[str]) -> list[float]:
    """A relevance model that, as the real one did, ranks the paragraph about every
    expression above the description of -N."""
    return [0.6 if "In each of the above" in t else 0.05 for t in texts]


def _first(question: str) -> str:
    choice = extract.choose_quotes(question, [ZSH_TESTS], _hash_embed, answers=_model,
                                   titles=["Conditional Expressions"])
    return choice.quotes[0].span.text


def test_a_lookup_quotes_the_description_under_the_name_it_looks_up_first(monkeypatch):
    assert _first("what does [[ -N file ]] test?").startswith("true if file exists and its access time")
    # a question in words that names the test is no lookup of it: the model's order stays
    assert _first("why does my backup script see [[ -N file ]] as true right after it reads "
                  "the file").startswith("In each of the above")
    monkeypatch.setattr(extract, "LOOKUP_DEFINITIONS_FIRST", False)
    assert _first("what does [[ -N file ]] test?").startswith("In each of the above")


def test_the_definitions_raised_are_those_of_the_longest_name():
    text = "-N:\n\n    Create a new keymap.\n\n" + ZSH_TESTS
    cands = extract.candidates_of("what does [[ -N file ]] test?", [text])
    said = extract.definitions_first("what does [[ -N file ]] test?", [text], cands, [0.1] * (len(cands) - 1) + [0.9])
    top = max(said)
    raised = [c.span.text for c, p in zip(cands, said) if p == top]
    assert any(t.startswith("true if file exists and its access") for t in raised)
    assert "Create a new keymap." not in raised
