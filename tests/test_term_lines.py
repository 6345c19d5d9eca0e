"""The passage that defines what a lookup names comes first (issue 17, point 3;
indexer/term_lines.py, search.PIN_DEFINED).

Measured on zsh's manual (bench/defined_terms.py): "setopt pathdirs", "what does [[ -N file ]]
test?" and "zsh exit code 126" ranked their defining passage 6th-16th, under passages that
mention the term more often or in fewer words."""

from __future__ import annotations

import pytest

from indexer import search
from indexer.term_lines import LOOKUP_WORDS, defining_passages, is_lookup, match_length, query_tokens

OPTIONS = """PATH_DIRS (-Q) <D>:

    Perform a path search even on command names with slashes in them.

-N file:

    true if file exists and its access time is not newer than its modification time.

126:

    The executable file has insufficient permissions.
"""


@pytest.mark.parametrize("query, length", [
    ("setopt pathdirs", 1),                    # case and "_" as zsh accepts them
    ("setopt PATH_DIRS", 1),
    ("what does [[ -N file ]] test?", 2),      # the flag with its argument
    ("zsh exit code 126", 1),
    ("what does [[ -n file ]] test?", 0),      # "-n" is another flag than "-N"
    ("path dirs", 0),                          # words are not the identifier
    ("what does -Q do", 0),                    # an annotation is not the name
])
def test_a_term_line_matches_the_name_as_a_person_types_it(query, length):
    assert match_length(query_tokens(query), OPTIONS) == length


@pytest.mark.parametrize("term, query, length", [
    ("$penv{<variable-name>}", "what is $penv{PATH} in CMakePresets.json?", 1),
    ("CMAKE_<LANG>_FLAGS", "CMAKE_CXX_FLAGS", 1),
    ("CMAKE_<LANG>_FLAGS", "CMAKE_CXX_FLAGS_DEBUG", 0),
    ("--target <tgt>, -t <tgt>", "cmake --build . --target install", 1),   # a spaced placeholder: an argument
    ("$penv{<variable-name>}", "what is $env{PATH}", 0),
    ("<pathspec>...", "GIT_TEMPLATE_DIR", 0),        # a placeholder alone names anything
    ("-D <var>=<value>", "cmake -D FOO=bar", 0),
])
def test_a_placeholder_inside_a_name_stands_for_what_is_typed_there(term, query, length):
    # cmake's presets manual defines "$penv{<variable-name>}"; a person looks up $penv{PATH}
    assert match_length(query_tokens(query), f"{term}:\n\n    Similar to $env.\n") == length


@pytest.mark.parametrize("term", ["-E [help]", "_files", "3", "-9", "Example", "For instance, do this"])
def test_a_plain_word_a_short_flag_alone_or_a_small_number_defines_nothing(term):
    # "-E" names an option of many commands; "_files" reads as "files"; "3:" numbers a list
    text = f"{term}:\n\n    something\n"
    assert match_length(query_tokens(f"cmake {term} remove files 3 -9 example for instance do this"), text) == 0


def test_the_longest_name_wins_and_a_term_many_passages_define_pins_none():
    texts = {1: "-N:\n\n    Create a new keymap.\n", 2: OPTIONS, 3: "Some prose about -N file tests."}
    assert defining_passages("what does [[ -N file ]] test?", texts) == [2]
    # three passages define "--verbose": nothing in particular is its definition
    many = {i: "--verbose:\n\n    Say more.\n" for i in range(3)}
    assert defining_passages("--verbose", many) == []
    assert defining_passages("--verbose", dict(list(many.items())[:2])) == [0, 1]
    assert defining_passages("how do I undo a commit", texts) == []


def test_a_question_that_names_a_term_is_no_lookup_of_it():
    # apache's module index defines mod_cache in one line; for a question about how long
    # it caches, that line pushed the answer out of the top 5 (bench/defined_terms.py)
    index = {1: "mod_cache:\n\n    RFC 2616 compliant HTTP caching filter.\n"}
    assert defining_passages("mod_cache", index) == [1]
    assert defining_passages("what does mod_cache do?", index) == [1]
    assert defining_passages("mod_cache how long cached if no expires header", index) == []
    assert LOOKUP_WORDS == 4
    assert is_lookup("zsh exit code 126") and is_lookup("what does [[ -N file ]] test?")
    assert not is_lookup("mod_cache how long cached if no expires header")


def _options_page(n: int = 48) -> str:
    """An HTML manual page of `n` options as a definition list, PATH_DIRS among them."""
    import random

    rng = random.Random(3)
    words = ("shell command history directory completion prompt expansion glob pattern file "
             "variable parameter function alias job signal terminal editor line search").split()
    items = []
    for i in range(n):
        name = "PATH_DIRS" if i == n // 2 else f"OPTION_{i:02d}_{rng.choice(words).upper()}"
        desc = ("Perform a path search even on command names with slashes in them."
                if name == "PATH_DIRS" else
                " ".join(rng.choice(words) for _ in range(40)).capitalize() + ".")
        items.append(f"<dt>{name} (-{chr(65 + i % 26)}) &lt;D&gt;</dt><dd><p>{desc}</p></dd>")
    return ("<html><head><title>Options</title></head><body><h1>Options</h1><dl>"
            + "".join(items) + "</dl></body></html>")


def _mentions(i: int) -> str:
    """A short page that mentions setopt and PATH_DIRS in passing, as a manual's other pages do."""
    return (f"<html><head><title>Builtin {i}</title></head><body><h1>Builtin {i}</h1>"
            f"<p>Use setopt to change options; with setopt PATH_DIRS set, command number {i} "
            f"looks up its argument in the path. See setopt for the PATH_DIRS option.</p></body></html>")


def test_the_defining_passage_of_a_lookup_comes_first_on_a_real_index(tmp_path, make_index):
    folder = tmp_path / "manual"
    folder.mkdir()
    (folder / "Options.html").write_text(_options_page())
    for i in range(12):
        (folder / f"builtin-{i:02d}.html").write_text(_mentions(i))
    idx = make_index()
    idx.add_root(folder)
    idx.update()

    def judge(q, passages):  # noqa: ANN001, ANN202 - every passage alike: the fused order stays
        return [0.0] * len(passages)

    def rank(query: str) -> int | None:
        hits = idx.search(query, k=10, judge=judge)
        return next((i for i, h in enumerate(hits, 1) if "Perform a path search" in h.text), None)

    assert search.PIN_DEFINED
    assert rank("setopt pathdirs") == 1
    # without the pin, the pages that mention it in few words bury its definition
    search.PIN_DEFINED = False
    try:
        without = rank("setopt pathdirs")
    finally:
        search.PIN_DEFINED = True
    assert without is None or without > 5, without


@pytest.mark.parametrize("term, query, length", [
    ("<<< word", "what is <<< in zsh?", 1),              # zsh's here-string, typed without its argument
    ("--output file", "git log --output", 1),
    ("--format=<format>", "git log --format", 1),
    ("--format=<format>", "git log --format=oneline", 1),   # the value in its placeholder, as before
    ("<<< word", "what does <<< word do", 2),            # the whole name stays the longer match
    ("-u fd file", "zsh -u fd", 0),                      # a one-letter flag alone names nothing
])
def test_an_option_is_defined_by_its_line_without_its_arguments(term, query, length, monkeypatch):
    text = f"{term}:\n\n    Perform shell expansion on word and pass the result to standard input.\n"
    assert match_length(query_tokens(query), text) == length
    from indexer import term_lines

    monkeypatch.setattr(term_lines, "ARGUMENTS_OPTIONAL", False)
    if length == 1 and "=" not in query:
        assert match_length(query_tokens(query), text) == 0     # before: only the whole name
