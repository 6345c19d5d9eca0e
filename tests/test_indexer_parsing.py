"""Format parsers and the structure-aware chunker (no embeddings needed)."""

from __future__ import annotations

import pytest

from indexer.chunker import chunk_document
from indexer.parsers import parse_bytes
from indexer.reading import FileSkip
from indexer_corpus import make_docx, make_pdf


def words(n: int, start: int = 0) -> str:
    return " ".join(f"w{i}." if i % 12 == 11 else f"w{i}" for i in range(start, start + n))


def test_markdown_headings_code_and_line_spans():
    text = (f"# Guide\n\nIntro {words(10)}\n\n## Install\n\n{words(120)}\n\n"
            "```sh\npip install thing\n```\n\n## Usage\n\n" + words(40, 500) + "\n")
    doc = parse_bytes(text.encode(), ext=".md")
    chunks = chunk_document(doc, file_name="guide.md", chunk_words=60)
    lines = text.split("\n")
    for c in chunks:
        # offsets point into the file text, line spans match the offsets
        assert text[c.char_start:c.char_end] == c.text
        assert "\n".join(lines[c.start_line - 1:c.end_line]).find(c.text.split("\n")[0]) >= 0
        assert c.page is None
    titles = [c.title for c in chunks]
    assert any(t == "guide.md > Guide > Install" for t in titles)
    assert titles[-1] == "guide.md > Guide > Usage"
    usage = chunks[-1]
    assert usage.text.startswith("## Usage")          # a heading starts a new chunk
    assert usage.start_line == lines.index("## Usage") + 1


def test_a_chunk_of_several_small_sections_is_named_after_what_they_share():
    text = ("# Home server\n\n## Move\n\nWe moved it to the basement in March.\n\n"
            "## Backups\n\nBackups run nightly at 02:00.\n")
    chunks = chunk_document(parse_bytes(text.encode(), ext=".md"), file_name="server.md")
    assert [(c.title, c.start_line, c.end_line) for c in chunks] == [("server.md > Home server", 1, 9)]


def test_long_section_is_split_with_overlap_and_bounded_size():
    text = "# Big\n\n" + words(700) + "\n"
    chunks = chunk_document(parse_bytes(text.encode(), ext=".md"), file_name="b.md", chunk_words=100)
    sizes = [len(c.text.split()) for c in chunks]
    assert len(chunks) >= 7
    assert max(sizes) <= 120
    assert min(sizes[:-1]) >= 50
    for a, b in zip(chunks, chunks[1:]):
        assert b.char_start < a.char_end                  # a little overlap
        assert a.char_end - b.char_start < len(a.text) / 2


def test_rst_sections():
    text = "=====\nTitle\n=====\n\nIntro text.\n\nPart A\n------\n\nAlpha text here.\n\nPart B\n------\n\nBeta text.\n"
    doc = parse_bytes(text.encode(), ext=".rst")
    paths = {doc.text[b.start:b.end]: b.heading_path for b in doc.blocks if b.kind == "text"}
    assert paths["Alpha text here."] == ("Title", "Part A")
    assert paths["Beta text."] == ("Title", "Part B")


def test_html_drops_scripts_and_keeps_headings():
    html = ("<html><head><title>T</title><style>.x{}</style></head><body><h1>Cats</h1>"
            "<p>Cats purr <b>loudly</b>.</p><script>var secret=1;</script><h2>Food</h2>"
            "<ul><li>fish</li><li>milk</li></ul><pre>code  block</pre></body></html>")
    doc = parse_bytes(html.encode(), ext=".html")
    assert "secret" not in doc.text and ".x{}" not in doc.text
    assert "Cats purr loudly ." in doc.text or "Cats purr loudly." in doc.text
    chunks = chunk_document(doc, file_name="c.html", chunk_words=60)
    assert chunks[0].title.startswith("c.html > Cats")
    assert "code  block" in doc.text                   # <pre> whitespace kept


def test_pdf_pages_are_never_mixed_in_one_chunk():
    pdf = make_pdf(["Apples grow on trees in the orchard.", "Pears are softer than apples.",
                    "Plums come last."])
    doc = parse_bytes(pdf, ext=".pdf")
    chunks = chunk_document(doc, file_name="f.pdf", chunk_words=200)   # all would fit in one
    assert [c.page for c in chunks] == [1, 2, 3]
    assert "Pears" in chunks[1].text and "Apples" not in chunks[1].text
    assert all(c.start_line is None for c in chunks)


def test_docx_headings():
    import io
    import tempfile
    from pathlib import Path

    with tempfile.TemporaryDirectory() as tmp:
        path = Path(tmp) / "d.docx"
        make_docx(path, [("h1", "Report"), ("p", "Summary text."), ("h2", "Numbers"), ("p", "Forty two.")])
        doc = parse_bytes(path.read_bytes(), ext=".docx")
    chunks = chunk_document(doc, file_name="d.docx", chunk_words=20)
    assert "Forty two." in doc.text
    assert any(b.heading_path == ("Report", "Numbers") for b in doc.blocks)
    assert chunks[0].title.startswith("d.docx > Report")
    assert io is not None


def test_code_definitions_name_chunks():
    src = "import os\n\n\nclass Store:\n    x = 1\n\n    def save(self):\n        return 2\n\n\ndef helper():\n    pass\n"
    doc = parse_bytes(src.encode(), ext=".py")
    heads = [b.heading_path for b in doc.blocks]
    assert ("Store", "save") in heads and ("helper",) in heads


@pytest.mark.parametrize("data,ext,state,fragment", [
    (b"%PDF-1.4 garbage that is not a pdf", ".pdf", "error", "cannot read PDF"),
    (b"not a zip file at all", ".docx", "error", "cannot read DOCX"),
    (b"text\x00\x01\x02binary", ".txt", "skipped", "binary content"),
    (b"hello \x81\x8d\x8f\x90 world", ".txt", "error", "cannot decode"),
    (make_pdf([""]), ".pdf", "skipped", "no text layer"),
])
def test_bad_content_gives_reasons(data, ext, state, fragment):
    with pytest.raises(FileSkip) as info:
        parse_bytes(data, ext=ext)
    assert info.value.state == state
    assert fragment in info.value.reason


def test_windows_1252_text_is_decoded():
    doc = parse_bytes("café crème".encode("cp1252"), ext=".txt")
    assert doc.text == "café crème"
