"""Exact lookups a word tokenizer cannot see (stop 37): symbols ("<<<", "g&"), option flags
whose name is a common word ("--not-a-term"), and an identifier typed joined as zsh
accepts it ("setopt pathdirs" for PATH_DIRS). BM25 indexes each such token whole
(indexer.bm25.exact_terms) beside the word terms; an index saved before (BM25 format 2) is
searched as it is by a reader and rebuilt once by a writer."""

from __future__ import annotations

import json

import pytest

from indexer.bm25 import FORMAT, Tokenizer, exact_terms

STEM = Tokenizer().stem


@pytest.mark.parametrize("text, expected", [
    ("what is <<< in zsh?", ["<<<"]),
    ("*g&*", ["g&"]),                                   # vim's tag stars stripped
    ("what does --not-a-term do?", ["--not-a-term", "not-a-term"]),
    ("PATH_DIRS (-Q) <D>", ["pathdir", "-Q", "<d>"]),   # joined and stemmed, as "pathdirs" is
    ("static IP 192.168.1.40.", ["192.168.1.40"]),
    ("why use <C-G>U here", ["<c-g>u"]),
])
def test_tokens_with_symbols_are_terms_whole(text, expected):
    assert exact_terms(text, STEM) == expected


@pytest.mark.parametrize("text", ["It doesn't work, e.g. here.", "Debian’s way (mostly) works."])
def test_prose_gives_no_exact_terms(text):
    assert exact_terms(text, STEM) == []


@pytest.mark.parametrize("text, expected", [
    # code glues names into expressions: the names stay, the expressions are not terms
    ("x = np.zeros((n, 3), dtype=np.float32)[mask]", ["np.zeros", "np.float32"]),
    ("ls --color=auto", ["--color"]),
    ("os.path.join(a, b) and f(a=1)", ["os.path.join"]),
    ("2*k**2 + 843750*p**4", []),
    ("[[ -N file ]]", ["[[", "-N", "]]"]),                # punctuation alone stays whole
    # numbers of data, which no one types back; addresses and versions stay
    ("0.07483045 4.6454886e+00 1e-05 -1.969181049384918e-01j", []),
    ("3.11.7 and 10.0.0.1, Windows 10.0.19045", ["3.11.7", "10.0.0.1", "10.0.19045"]),
])
def test_code_gives_its_names_and_data_numbers_give_none(text, expected):
    assert exact_terms(text, STEM) == expected


def test_a_one_letter_option_keeps_its_case(tmp_path):
    """"-N file" and "-n string" are two tests of zsh's [[ ]]: lower-cased they were one term."""
    from indexer.bm25 import Bm25Index

    assert exact_terms("[[ -N file ]]", STEM) == ["[[", "-N", "]]"]
    assert exact_terms("ls [-L]", STEM) == ["-L"]            # in brackets too
    bm = Bm25Index(tmp_path)
    bm.add_many([(1, "-n string: true if the length of the string is non-zero."),
                 (2, "-N file: true if the file's access time is not newer than its modification time")])
    assert [cid for cid, _ in bm.search("what does -N do?", 2)][0] == 2
    assert [cid for cid, _ in bm.search("what does -n do?", 2)][0] == 1


def test_a_joined_identifier_matches_its_underscore_form():
    assert STEM("pathdirs") in exact_terms("PATH_DIRS", STEM)


DOCS = {
    "options.md": "# Options\n\nPATH_DIRS\n\n    Perform a path search even on command names with slashes in them.\n",
    "redirect.md": "# Redirection\n\n<<< word\n\n    Perform shell expansion on word and pass the result to standard input.\n",
    "starting.md": "# Starting\n\n--not-a-term\n\n    Tells Vim that the user knows that the input and/or output is not connected to a terminal.\n",
    "change.md": "# Changes\n\ng&\n\n    Synonym for `:%s//~/&` (repeat last substitute with last search pattern on all lines with the same flags).\n",
}
NEIGHBOURS = {     # entries of the same kind, in the same words: what the term alone tells apart
    "auto.md": "# Options\n\nAUTO_CD\n\n    If a command names a directory, change to it: a path search on the directory names.\n",
    "hash.md": "# Options\n\nHASH_DIRS\n\n    Whenever a command name is hashed, hash the directories in the path with slashes in them.\n",
    "script.md": "# Options\n\nPATH_SCRIPT\n\n    Perform a path search for a script named with slashes in its command name.\n",
    "ttyfail.md": "# Starting\n\n--ttyfail\n\n    When the input or output is not connected to a terminal, the user knows Vim exits at once.\n",
    "noplugin.md": "# Starting\n\n--noplugin\n\n    Skip loading plugins when the input and output are not a terminal.\n",
    "gtilde.md": "# Changes\n\ng~\n\n    Switch case on all lines with the same flags as the last substitute and search pattern.\n",
    "gq.md": "# Changes\n\ngq\n\n    Format all lines; repeat the last substitute with the same flags and the last search pattern.\n",
}
FILLER = ("# Note {i}\n\nThe path of the search starts at the top. Commands and terminals are "
          "described in words here: input, output, shell, word, pattern, options and names. "
          "Use it to perform a search when the user knows what to look for.\n")


def _index_of(tmp_path, make_index, files: dict[str, str]):  # noqa: ANN001, ANN202
    """An index (tmp_path/index) of `files` written to tmp_path/notes, updated."""
    folder = tmp_path / "notes"
    folder.mkdir()
    for name, text in files.items():
        (folder / name).write_text(text)
    idx = make_index()
    idx.add_root(folder)
    idx.update()
    return idx


@pytest.fixture()
def lookup_index(tmp_path, make_index):
    fillers = {f"note-{i:02d}.md": FILLER.format(i=i) for i in range(60)}
    return _index_of(tmp_path, make_index, {**DOCS, **NEIGHBOURS, **fillers})


@pytest.mark.parametrize("query, file", [
    ("setopt pathdirs", "options.md"),
    ("what is <<< in zsh?", "redirect.md"),
    ("what does --not-a-term do?", "starting.md"),
    ("g&", "change.md"),
])
def test_exact_lookups_find_their_note_first(lookup_index, query, file):
    """Real index (SQLite, hnswlib, BM25), real embedder: the note defining the term is the
    first hit; with the word terms alone none of these queries names it."""
    hits = lookup_index.search(query, k=5)
    assert hits and hits[0].path.endswith(file), [h.path for h in hits]


def test_an_index_saved_before_is_read_as_it_is_and_rebuilt_by_a_writer(tmp_path, make_index, embedder, index_options):
    from indexer.index import Index

    _index_of(tmp_path, make_index, DOCS).close()
    meta_path = tmp_path / "index" / "lexical.json"
    meta = json.loads(meta_path.read_text())
    assert meta["format"] == FORMAT
    meta["format"] = 2                               # as an index saved by the release before
    meta_path.write_text(json.dumps(meta))
    reader = Index(tmp_path / "index", options=index_options, embedder=embedder, one_shot=True)
    try:
        reader.search("anything at all", k=1)
        assert reader._vectors.lexical_outcome == "loaded"   # searched as it is, not rebuilt
    finally:
        reader.close()
    assert json.loads(meta_path.read_text())["format"] == 2
    writer = make_index()
    writer.update()
    assert json.loads(meta_path.read_text())["format"] == FORMAT   # rebuilt once and saved
    assert writer.search("setopt pathdirs", k=1)[0].path.endswith("options.md")
