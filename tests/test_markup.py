"""Markup cleaning (indexer/markup.py): prose for the embedder and the model, every line
in its place so citations still point at the file's own lines. No model needed."""

from __future__ import annotations

from indexer.chunker import chunk_document
from indexer.markup import clean_lines, sniff
from indexer.parsers import parse_bytes

RST = """.. SPDX-License-Identifier: GPL-2.0

.. _memory_allocation:

=======================
Memory Allocation Guide
=======================

You can allocate small chunks using `kmalloc` or :c:func:`kmem_cache_alloc`
families; see :ref:`the GFP flags <mm-api-gfp-flags>` and ``GFP_KERNEL``.

.. code-block:: c
   :caption: example

   ptr = kzalloc(size, GFP_KERNEL);

.. note::
   Use **vmalloc** for *large* areas, as in `the guide <https://example.org>`_.

Literal blocks follow::

    echo 1 > /proc/sys/vm/overcommit_memory
"""

ADOC = """git-worktree(1)
===============

NAME
----
git-worktree - Manage multiple working trees

DESCRIPTION
-----------
[[def_worktree]]
A linked worktree is prepared by linkgit:git-init[1] or
linkgit:git-clone[1]. Run `git worktree
add ../hotfix` for a 'throwaway' tree.

--force::
	Override the safeguards.

include::config/worktree.txt[]

------------
$ git worktree list
------------
"""


def test_cleaning_keeps_every_line_in_place():
    for text, kind in ((RST, "rst"), (ADOC, "asciidoc")):
        cleaned = clean_lines(text, kind)
        assert cleaned.count("\n") == text.count("\n")
        for raw_line, clean_line in zip(text.split("\n"), cleaned.split("\n")):
            # each cleaned line comes from its own source line: its words are the
            # line's words (or a subset, markup removed)
            raw_words = set(raw_line.replace("`", " ").replace("'", " ").split())
            for word in clean_line.replace("(", " ").replace(")", " ").split():
                assert any(word.strip(":,.;*") in w for w in raw_words) or word in ("Note:",), (raw_line, clean_line)


def test_a_link_wrapped_across_lines_keeps_the_line_count():
    """Real kernel files wrap `text <url>`_ links (filesystems/fscrypt.rst:
    `Android's key\nmanagement system\n<https://...>`_); the cleaner used to swallow those
    line breaks, so the cleaned text lost lines and the whole file failed to index."""
    text = ("Use the `fscrypt\n<https://github.com/google/fscrypt>`_ tool, or\n"
            "`Android's key\nmanagement system\n<https://source.android.com/x>`_.\n\n"
            "Section\n=======\n\nMore text.\n")
    cleaned = clean_lines(text, "rst")
    assert cleaned.count("\n") == text.count("\n")
    assert cleaned.split("\n")[0] == "Use the fscrypt"
    assert "Android's key" in cleaned and "https" not in cleaned
    doc = parse_bytes(text.encode(), ext=".rst")      # raised IndexError before
    assert doc.text.split("\n")[9] == "More text."


def test_rst_markup_is_removed_and_prose_kept():
    cleaned = clean_lines(RST, "rst")
    for gone in ("SPDX", "_memory_allocation", "code-block", ":caption:", ":c:func:", ":ref:",
                 "``", "`", "**", "https://example.org", "====", "::"):
        assert gone not in cleaned, gone
    for kept in ("Memory Allocation Guide", "using kmalloc or kmem_cache_alloc", "see the GFP flags and GFP_KERNEL",
                 "ptr = kzalloc(size, GFP_KERNEL);", "Note:", "Use vmalloc for large areas, as in the guide.",
                 "Literal blocks follow:", "echo 1 > /proc/sys/vm/overcommit_memory"):
        assert kept in cleaned, kept


def test_asciidoc_markup_is_removed_and_prose_kept():
    cleaned = clean_lines(ADOC, "asciidoc")
    for gone in ("linkgit:", "[[def_worktree]]", "include::", "------------", "`", "'throwaway'", "--force::"):
        assert gone not in cleaned, gone
    for kept in ("prepared by git-init(1) or", "git-clone(1). Run git worktree\nadd ../hotfix for a throwaway tree.",
                 "--force:", "$ git worktree list"):
        assert kept in cleaned, kept


def test_txt_files_in_rst_or_asciidoc_are_recognised_and_plain_text_is_left_alone():
    assert sniff(RST) == "rst"
    assert sniff(ADOC) == "asciidoc"
    plain = "Shopping list\n\nMilk, eggs: and bread.\nCall Bob at 5.\n"
    assert sniff(plain) is None
    doc = parse_bytes(plain.encode(), ext=".txt")
    assert doc.text == plain


def test_chunks_of_a_cleaned_file_cite_the_files_own_lines():
    doc = parse_bytes(RST.encode(), ext=".txt")     # a Sphinx _sources file
    assert "`" not in doc.text and doc.text.count("\n") == RST.count("\n")
    chunks = chunk_document(doc, file_name="memory-allocation.rst.txt", chunk_words=25)
    assert len(chunks) >= 2
    lines = RST.split("\n")
    for c in chunks:
        source = " ".join(lines[c.start_line - 1:c.end_line])
        # the chunk's first and last words are on its first and last cited lines
        first, last = c.text.split()[0], c.text.split()[-1]
        assert first.strip("*`:").lower() in lines[c.start_line - 1].lower(), (c.start_line, c.text[:40])
        assert last.strip("*`:.").lower() in lines[c.end_line - 1].lower(), (c.end_line, c.text[-40:])
        assert all(w.strip("().,;:") in source for w in c.text.split() if w.isalpha())
    titles = {c.title for c in chunks}
    assert "memory-allocation.rst.txt > Memory Allocation Guide" in titles


def test_git_manual_headings_become_titles():
    doc = parse_bytes(ADOC.encode(), ext=".txt")
    paths = {doc.text[b.start:b.end]: b.heading_path for b in doc.blocks}
    assert paths["git-worktree - Manage multiple working trees"] == ("git-worktree(1)", "NAME")
    assert paths["--force:\n\tOverride the safeguards."] == ("git-worktree(1)", "DESCRIPTION")
    # a listing between ---- delimiters is not taken for a heading
    assert paths["$ git worktree list"] == ("git-worktree(1)", "DESCRIPTION")


def test_code_blocks_are_kept_as_written():
    """Inline cleaning inside a listing would change the code a person copies: AsciiDoc
    emphasis quotes ('First part'), reST "..." lines and *globs* must stay."""
    adoc = ("EXAMPLES\n--------\n\nTest each change:\n+\n----\n"
            "$ git commit -m 'First part'     # commit it\n ...\n$ ls *.c\n----\n"
            "+\nIt is 'quoted' prose.\n\nTitle under a line\n------------------\nText.\n")
    cleaned = clean_lines(adoc, "asciidoc").split("\n")
    assert cleaned[6] == "$ git commit -m 'First part'     # commit it"
    assert cleaned[7:9] == [" ...", "$ ls *.c"]
    assert cleaned[5] == cleaned[9] == ""               # the delimiters go
    assert cleaned[11] == "It is quoted prose."          # prose is still cleaned
    # a dash line under a text line of its length is a title's underline, no listing:
    # the text after it is still cleaned
    assert cleaned[14] == "" and cleaned[15] == "Text."
    rst = ("Run this::\n\n    $ echo '*' > `pwd`/x\n    ...\n\nThen *read* it.\n\n"
           ".. code-block:: sh\n   :caption: demo\n\n   ls *.rst\n")
    lines = clean_lines(rst, "rst").split("\n")
    assert lines[0] == "Run this:"
    assert lines[2:4] == ["    $ echo '*' > `pwd`/x", "    ..."]
    assert lines[5] == "Then read it."
    assert lines[8] == "" and lines[10] == "   ls *.rst"


def test_which_markup_a_txt_file_is():
    # Sphinx's _sources copies say it in their names, whatever the text looks like
    assert sniff("Plain words only.\n", "vm.rst.txt") == "rst"
    assert sniff("Plain words only.\n", "README.md.txt") == "markdown"
    # git's manuals have many "--bare::" terms (a reST-looking sign) but AsciiDoc's own
    git_page = ("git-init(1)\n===========\n\n--quiet::\n\n\tOnly print errors.\n\n"
                "--bare::\n\n\tCreate a bare repository.\n\n--template=<dir>::\n\n\tx\n\n"
                "See linkgit:git-add[1].\n+\nMore.\n\ninclude::config/init.txt[]\n")
    assert sniff(git_page, "git-init.txt") == "asciidoc"
    doc = parse_bytes(git_page.encode(), ext=".txt", name="git-init.txt")
    assert "git-add(1)" in doc.text and "linkgit" not in doc.text
