"""Mail, OpenDocument, EPUB, PowerPoint, Excel, RTF, notebooks, scanned PDFs and web pages:
each made with the format's own library (or zip + XML, as the format is defined), parsed,
chunked, and cited by the unit a person can open."""

from __future__ import annotations

import io
import mailbox
import os
import zipfile
from email.message import EmailMessage
from pathlib import Path

import pytest

from indexer.chunker import chunk_document
from indexer.parsers import parse_bytes, parse_path, parser_name
from indexer.reading import FileSkip
from indexer_corpus import make_docx, make_pdf


def chunks_of(data: bytes, ext: str, name: str = "f", **kw):
    return chunk_document(parse_bytes(data, ext=ext, name=name + ext, **kw), file_name=name + ext)


def message(subject: str, sender: str, body: str, *, attach: tuple[str, bytes] | None = None) -> EmailMessage:
    m = EmailMessage()
    m["Subject"], m["From"], m["To"] = subject, sender, "me@example.org"
    m["Date"] = "Tue, 05 Mar 2024 10:00:00 +0000"
    m.set_content(body)
    if attach:
        m.add_attachment(attach[1], maintype="application", subtype="octet-stream", filename=attach[0])
    return m


# --- mail -----------------------------------------------------------------------------

def test_eml_is_cited_by_subject_sender_and_date_with_its_attachments(tmp_path):
    doc_path = tmp_path / "quote.docx"
    make_docx(doc_path, [("h1", "Roof repair"), ("p", "The roofer quotes 1800 euros for the slates.")])
    m = message("Roof quote", "Ann <ann@example.org>", "See the attached quote.",
                attach=("quote.docx", doc_path.read_bytes()))
    chunks = chunks_of(m.as_bytes(), ".eml", "roof")
    assert {c.title for c in chunks} == {
        "roof.eml > Roof quote — Ann <ann@example.org>, Tue, 05 Mar 2024 10:00:00 +0000"}
    text = "\n".join(c.text for c in chunks)
    assert "See the attached quote." in text and "1800 euros for the slates" in text
    assert all(c.start_line == 1 for c in chunks)


def test_a_mail_body_of_another_text_type_is_read():
    """git's mailed howtos say `Content-type: text/asciidoc`: the body is text all the same
    (only the headers were indexed before)."""
    raw = ("From: Junio <gitster@example.org>\nSubject: Maintaining git\n"
           "Date: Tue, 05 Mar 2024 10:00:00 +0000\nMIME-Version: 1.0\n"
           "Content-type: text/asciidoc\n\nThe maintainer tags a release from the master branch.\n")
    text = "\n".join(c.text for c in chunks_of(raw.encode(), ".eml", "howto"))
    assert "tags a release from the master branch" in text


def test_pdf_ligatures_are_read_as_their_letters():
    """Helvetica's 'fi' and 'fl' glyphs (StandardEncoding 0o256, 0o257): pypdf gives U+FB01
    and U+FB02, which no typed query matches."""
    pdf = make_pdf(["The conQQFIguration QQFLows here."]).replace(b"QQFI", b"\\256").replace(b"QQFL", b"\\257")
    doc = parse_bytes(pdf, ext=".pdf")
    assert "The configuration flows here." in doc.text


def test_mbox_messages_are_units_cited_at_their_line(tmp_path):
    path = tmp_path / "inbox.mbox"
    box = mailbox.mbox(str(path))
    box.add(message("Boiler", "bob@example.org", "The boiler was serviced.\n\nFrom now on it is yearly."))
    box.add(message("Garden", "cy@example.org", "The hedge is cut in May."))
    box.close()
    lines = path.read_text().split("\n")
    from_lines = [i + 1 for i, line in enumerate(lines) if line.startswith("From ")]
    assert len(from_lines) == 2            # mailbox escaped the body's "From now on"
    doc = parse_path(str(path), ext=".mbox")
    chunks = chunk_document(doc, file_name="inbox.mbox")
    assert [c.start_line for c in chunks] == from_lines
    assert chunks[0].title.startswith("inbox.mbox > Boiler — bob@example.org")
    assert "From now on it is yearly." in chunks[0].text     # unescaped
    assert "hedge" not in chunks[0].text                     # one message per chunk
    assert parse_bytes(path.read_bytes(), ext=".mbox").text == doc.text


def test_a_huge_mbox_is_streamed_never_read_whole(tmp_path):
    """A mailbox far larger than what parsing it holds in memory: 40 messages with a
    1 MB attachment each (not a readable type) is about 55 MB on disk."""
    import tracemalloc

    path = tmp_path / "big.mbox"
    box = mailbox.mbox(str(path))
    blob = os.urandom(1 << 20)
    for i in range(40):
        box.add(message(f"Report {i}", "x@example.org", f"Weekly report number {i}.",
                        attach=(f"data{i}.bin", blob)))
    box.close()
    size = path.stat().st_size
    assert size > 50_000_000
    tracemalloc.start()
    try:
        doc = parse_path(str(path), ext=".mbox")
        peak = tracemalloc.get_traced_memory()[1]
    finally:
        tracemalloc.stop()
    assert "Weekly report number 39." in doc.text
    assert peak < size / 2, f"peak {peak} bytes for a {size}-byte mailbox"


def test_maildir_messages_are_read_as_mail(tmp_path):
    from indexer import walk
    from indexer.options import IndexOptions

    md = mailbox.Maildir(str(tmp_path / "Mail"))
    md.add(message("Trip", "dee@example.org", "The train leaves at 7."))
    md.add(message("Seen", "dee@example.org", "Read already."))
    md.close()
    for sub in ("cur", "new"):   # a project that happens to have new/, cur/ and tmp/
        (tmp_path / "proj" / sub).mkdir(parents=True)
    (tmp_path / "proj" / "tmp").mkdir()
    (tmp_path / "proj" / "new" / "notes.md").write_text("# Plans\n\nThe new plan.\n")
    (tmp_path / "proj" / "cur" / "1700000000.draft.txt").write_text("Current draft.\n")
    found = walk.scan([(str(tmp_path), str(tmp_path))], IndexOptions())
    exts = {os.path.relpath(c.path, tmp_path).split(os.sep)[0] + "/" + c.ext
            for c in found.candidates.values()}
    assert exts == {"Mail/.eml", "proj/.md", "proj/.txt"}
    mails = [c for c in found.candidates.values() if "/Mail/new/" in c.path]
    assert len(mails) == 2
    assert any("The train leaves at 7." in parse_bytes(Path(c.path).read_bytes(), ext=".eml").text
               for c in mails)


# --- OpenDocument ------------------------------------------------------------------------

def _odf_bytes(doc) -> bytes:  # noqa: ANN001
    out = io.BytesIO()
    doc.write(out)
    return out.getvalue()


def test_odt_heading_path_ods_sheet_and_rows_odp_slides():
    from odf.draw import Frame, Page, TextBox
    from odf.opendocument import OpenDocumentPresentation, OpenDocumentSpreadsheet, OpenDocumentText
    from odf.style import MasterPage, PageLayout
    from odf.table import Table, TableCell, TableRow
    from odf.text import H, P

    odt = OpenDocumentText()
    for el in (H(outlinelevel=1, text="Garden"), P(text="Tomatoes need sun."),
               H(outlinelevel=2, text="Pests"), P(text="Aphids hate soapy water.")):
        odt.text.addElement(el)
    chunks = chunks_of(_odf_bytes(odt), ".odt", "g")
    assert "Aphids hate soapy water." in chunks[-1].text
    doc = parse_bytes(_odf_bytes(odt), ext=".odt")
    assert [b.heading_path for b in doc.blocks][-1] == ("Garden", "Pests")

    ods = OpenDocumentSpreadsheet()
    table = Table(name="Budget")
    for row in [["Item", "Cost"], ["Boiler", "420"], ["Roof", "1800"]]:
        tr = TableRow()
        for value in row:
            cell = TableCell()
            cell.addElement(P(text=value))
            tr.addElement(cell)
        table.addElement(tr)
    ods.spreadsheet.addElement(table)
    (chunk,) = chunks_of(_odf_bytes(ods), ".ods", "b")
    assert chunk.title == "b.ods > Budget > A1:B3"
    assert "Roof | 1800" in chunk.text

    odp = OpenDocumentPresentation()
    layout = PageLayout(name="L")
    odp.automaticstyles.addElement(layout)
    master = MasterPage(name="M", pagelayoutname=layout)
    odp.masterstyles.addElement(master)
    for title, body in [("Plans", "We move in June."), ("Costs", "Movers cost 900 euros.")]:
        page = Page(masterpagename=master)
        frame = Frame(width="20cm", height="3cm", x="1cm", y="1cm", attributes={"class": "title"})
        box = TextBox()
        box.addElement(P(text=title))
        frame.addElement(box)
        page.addElement(frame)
        frame2 = Frame(width="20cm", height="10cm", x="1cm", y="5cm")
        box2 = TextBox()
        box2.addElement(P(text=body))
        frame2.addElement(box2)
        page.addElement(frame2)
        odp.presentation.addElement(page)
    chunks = chunks_of(_odf_bytes(odp), ".odp", "talk")
    assert [(c.title, c.text.split("\n\n")[-1]) for c in chunks] == [
        ("talk.odp > Slide 1: Plans", "We move in June."),
        ("talk.odp > Slide 2: Costs", "Movers cost 900 euros.")]


# --- EPUB --------------------------------------------------------------------------------

def make_epub(chapters: list[tuple[str, str]], *, encrypt: bool = False,
              stem: str = "ch") -> bytes:
    """An EPUB 3 as the format defines it: a zip with mimetype, container.xml, an OPF
    package and one XHTML file per chapter (named `stem` + number; the OPF's hrefs are
    URLs, so a space is written %20 there)."""
    from urllib.parse import quote

    out = io.BytesIO()
    with zipfile.ZipFile(out, "w") as z:
        z.writestr("mimetype", "application/epub+zip", compress_type=zipfile.ZIP_STORED)
        z.writestr("META-INF/container.xml",
                   '<?xml version="1.0"?><container version="1.0" xmlns="urn:oasis:names:tc:'
                   'opendocument:xmlns:container"><rootfiles><rootfile full-path="OEBPS/book.opf" '
                   'media-type="application/oebps-package+xml"/></rootfiles></container>')
        items = "".join(f'<item id="c{i}" href="{quote(f"text/{stem}{i}.xhtml")}" '
                        'media-type="application/xhtml+xml"/>' for i in range(len(chapters)))
        refs = "".join(f'<itemref idref="c{i}"/>' for i in range(len(chapters)))
        z.writestr("OEBPS/book.opf",
                   '<?xml version="1.0"?><package xmlns="http://www.idpf.org/2007/opf" version="3.0">'
                   f'<metadata/><manifest>{items}</manifest><spine>{refs}</spine></package>')
        for i, (title, body) in enumerate(chapters):
            z.writestr(f"OEBPS/text/{stem}{i}.xhtml",
                       f'<html xmlns="http://www.w3.org/1999/xhtml"><head><title>{title}</title></head>'
                       f"<body><h1>{title}</h1><p>{body}</p></body></html>")
        if encrypt:
            refs = "".join(f'<EncryptedData><CipherData><CipherReference URI="OEBPS/text/{stem}{i}.xhtml"/>'
                           "</CipherData></EncryptedData>" for i in range(len(chapters)))
            z.writestr("META-INF/encryption.xml", f"<encryption>{refs}</encryption>")
    return out.getvalue()


def test_epub_chapters_in_spine_order_with_headings():
    data = make_epub([("The Harbour", "Boats rest in the harbour at night."),
                      ("The Storm", "The storm broke the pier in two.")])
    chunks = chunks_of(data, ".epub", "sea")
    assert [c.title for c in chunks] == ["sea.epub > Chapter 1 > The Harbour",
                                         "sea.epub > Chapter 2 > The Storm"]
    assert "pier in two" in chunks[1].text
    spaced = make_epub([("The Harbour", "Boats rest in the harbour at night.")], stem="Chapter ")
    assert "harbour at night" in parse_bytes(spaced, ext=".epub").text   # href Chapter%200.xhtml


# --- PowerPoint, Excel ---------------------------------------------------------------------

def make_pptx(slides: list[tuple[str, str, str]]) -> bytes:
    from pptx import Presentation

    deck = Presentation()
    for title, body, notes in slides:
        slide = deck.slides.add_slide(deck.slide_layouts[1])
        slide.shapes.title.text = title
        slide.placeholders[1].text = body
        if notes:
            slide.notes_slide.notes_text_frame.text = notes
    out = io.BytesIO()
    deck.save(out)
    return out.getvalue()


def test_pptx_is_cited_by_slide_with_its_notes():
    data = make_pptx([("Roadmap", "Ship the beta in May.", "Say that May is firm."),
                      ("Risks", "The supplier may be late.", "")])
    chunks = chunks_of(data, ".pptx", "deck")
    assert [c.title for c in chunks] == ["deck.pptx > Slide 1: Roadmap", "deck.pptx > Slide 2: Risks"]
    assert "Ship the beta in May." in chunks[0].text and "Say that May is firm." in chunks[0].text
    assert "supplier" not in chunks[0].text
    assert chunks[0].text.count("Roadmap") == 1          # the title once, not again as body
    assert all(c.start_line is None and c.page is None for c in chunks)


def test_xlsx_values_not_formulas_cited_by_sheet_and_range():
    import openpyxl

    book = openpyxl.Workbook()
    sheet = book.active
    sheet.title = "Budget"
    sheet.append(["Item", "Cost"])
    sheet.append(["Boiler", 420])
    sheet.append(["Total", "=SUM(B2:B2)"])     # no cached value: left out, never the formula
    log = book.create_sheet("Log")
    for i in range(30):
        log.append([f"day {i}", f"walked {i} km"])
    late = book.create_sheet("Later")          # a table that starts at C3, not A1
    late["C3"], late["D3"], late["C4"], late["D4"] = "Rent", 900, "Water", 38
    out = io.BytesIO()
    book.save(out)
    chunks = chunks_of(out.getvalue(), ".xlsx", "money")
    titles = [c.title for c in chunks]
    assert titles[0] == "money.xlsx > Budget > A1:B3"
    assert "money.xlsx > Log > A1:B20" in titles and "money.xlsx > Log > A21:B30" in titles
    assert "money.xlsx > Later > C3:D4" in titles
    assert "Boiler | 420" in chunks[0].text and "SUM" not in chunks[0].text


# --- RTF, notebooks --------------------------------------------------------------------------

def test_rtf_paragraphs():
    rtf = (rb"{\rtf1\ansi\deff0{\fonttbl{\f0 Times;}}\f0\fs24 The lighthouse keeper logs "
           rb"the weather.\par The lamp is lit at dusk \u8212? every day.\par}")
    doc = parse_bytes(rtf, ext=".rtf")
    assert [doc.text[b.start:b.end] for b in doc.blocks] == [
        "The lighthouse keeper logs the weather.", "The lamp is lit at dusk \u2014 every day."]
    assert "\\par" not in doc.text and "fonttbl" not in doc.text


def test_notebook_cells_without_outputs_cited_by_cell_and_line():
    import nbformat

    nb = nbformat.v4.new_notebook()
    nb.cells = [nbformat.v4.new_markdown_cell("# Cleaning\n\nWe drop rows with a **missing** price."),
                nbformat.v4.new_code_cell("df = df.dropna(subset=['price'])",
                                          outputs=[nbformat.v4.new_output("stream", text="OUTPUT 123")])]
    text = nbformat.writes(nb)
    chunks = chunks_of(text.encode(), ".ipynb", "clean")
    assert [c.title for c in chunks] == ["clean.ipynb > Cleaning > cell 1", "clean.ipynb > Cleaning > cell 2"]
    assert "missing price" in chunks[0].text and "**" not in chunks[0].text
    assert "OUTPUT 123" not in "".join(c.text for c in chunks)
    lines = text.split("\n")
    for c in chunks:   # the cell's line in the .ipynb file
        assert '"cell_type"' in lines[c.start_line - 1]


# --- scanned PDFs ---------------------------------------------------------------------------

def scanned_pdf(text: str) -> bytes:
    """A page of text rendered to an image and saved as an image-only PDF (a scan)."""
    pdfium = pytest.importorskip("pypdfium2")   # in the [ocr] extra and in [test]
    image = pdfium.PdfDocument(make_pdf([text]))[0].render(scale=200 / 72).to_pil().convert("L")
    out = io.BytesIO()
    image.save(out, format="PDF", resolution=200)
    return out.getvalue()


def test_scanned_pdf_reason_says_how_to_turn_ocr_on():
    with pytest.raises(FileSkip) as err:
        parse_bytes(scanned_pdf("The keeper logs the weather."), ext=".pdf")
    assert err.value.kind == "no_text"
    assert err.value.reason.startswith("scanned: no text layer")
    assert 'pip install "localrag[ocr]"' in err.value.reason and "--set ocr true" in err.value.reason


def test_scanned_pdf_is_read_by_ocr_when_it_is_on():
    pytest.importorskip("rapidocr_onnxruntime")   # the [ocr] extra; [test] installs it
    doc = parse_bytes(scanned_pdf("The lighthouse keeper writes the weather in the log."),
                      ext=".pdf", ocr=True)
    assert "lighthouse keeper writes the weather" in doc.text
    assert doc.blocks[0].page == 1


# --- HTML main content -------------------------------------------------------------------------

def test_html_main_content_without_navigation_cited_by_file_line():
    nav = "".join(f'<li><a href="p{i}.html">Other page number {i}</a></li>' for i in range(30))
    body = " ".join(f"Sentence {i} about tuning the violin strings before a concert." for i in range(12))
    html = (f"<html><head><title>Violin</title></head><body>\n<nav><ul>{nav}</ul></nav>\n"
            f'<div class="sidebar"><h3>Navigation</h3><ul>{nav}</ul></div>\n'
            f"<main>\n<h1>Violin care</h1>\n<h2>Strings</h2>\n<p>{body}</p>\n</main>\n"
            "<footer>Copyright 2024 Example Corp. All rights reserved.</footer>\n</body></html>")
    pytest.importorskip("trafilatura")
    chunks = chunks_of(html.encode(), ".html", "v")
    text = "\n".join(c.text for c in chunks)
    assert "Other page number" not in text and "Copyright" not in text
    assert "tuning the violin strings" in text
    assert chunks[-1].title == "v.html > Violin care > Strings"
    lines = html.split("\n")
    assert "<h1>Violin care" in lines[chunks[0].start_line - 1]


@pytest.mark.parametrize("page,sentence,nav", [
    ("/usr/share/doc/linux-doc-6.1/html/PCI/pci-iov-howto.html",
     "Single Root I/O Virtualization (SR-IOV) is a PCI Express Extended capability",
     "Kernel Maintainer Handbook"),
    ("/usr/share/doc/libffi8/html/The-Basics.html",
     "libffi assumes that you have a pointer to the function you wish to call", "Up: Using libffi"),
    ("/usr/share/doc/git/html/git-add.html",
     "This command updates the index using the current content found in the working tree",
     "Last updated")])
def test_html_real_pages_keep_their_content_not_their_navigation(page, sentence, nav):
    """Debian's own HTML manuals (linux-doc: Sphinx with a sidebar; libffi: texinfo)."""
    if not os.path.exists(page):
        pytest.skip(f"{page} is not installed on this machine")
    from indexer.parse_html import parse_html

    data = Path(page).read_bytes()
    doc = parse_bytes(data, ext=".html")
    whole = parse_html(data.decode("utf-8"), main_content=False)
    lines = data.decode("utf-8", "replace").split("\n")
    assert sentence in " ".join(doc.text.split())
    assert 200 < len(doc.text.split()) <= len(whole.text.split())
    assert nav in " ".join(whole.text.split()) and nav not in " ".join(doc.text.split())
    for block in doc.blocks[:20]:   # each block's line holds the start of its element
        assert block.line is not None and 1 <= block.line <= len(lines)


def test_html_declared_main_is_read_whole_whatever_trafilatura_guesses(monkeypatch):
    """A page that marks its content (<div role="main">, as Sphinx does; or <main>) is read
    by that mark: trafilatura kept 800 of the 8,400 words of CMake's generator-expressions
    manual, so $<CONFIG> and most other expressions were never indexed. Here its guess is
    made to keep one paragraph only; the whole marked element is read, nothing outside it."""
    from indexer import parse_html as ph

    monkeypatch.setattr(ph, "main_text", lambda html: " the first paragraph only ")
    paras = [" ".join(f"Expression {i} word {j} of its description." for j in range(6)) for i in range(5)]
    html = ('<html><body>\n<div class="related"><a href="x.html">next</a> Previous topic</div>\n'
            '<div class="sphinxsidebar"><h3>Table of Contents</h3><ul><li>Other manual page</li></ul></div>\n'
            '<div class="body" role="main">\n<h1>cmake-generator-expressions(7)</h1>\n'
            + "".join(f"<h2>Expression {i}</h2>\n<p>{p}</p>\n" for i, p in enumerate(paras))
            + '</div>\n<div class="footer">Copyright 2000-2022 Kitware</div>\n</body></html>')
    doc = ph.parse_html(html)
    text = " ".join(doc.text.split())
    assert all(p in text for p in paras)
    assert not any(w in text for w in ("Previous topic", "Other manual page", "Kitware", "Table of Contents"))
    assert doc.blocks[0].kind == "heading" and doc.text.startswith("cmake-generator-expressions(7)")
    # two elements marked main: no declared content, trafilatura's guess decides as before
    twice = html.replace('<div class="footer">', '<div role="main"><p>Second main.</p></div><div class="footer">')
    assert "Expression 3 word 2" not in ph.parse_html(twice).text


def test_html_cmake_generator_expressions_page_is_indexed_whole():
    page = "/usr/share/doc/cmake-doc/html/manual/cmake-generator-expressions.7.html"
    if not os.path.exists(page):
        pytest.skip(f"{page} is not installed on this machine (cmake-doc)")
    pytest.importorskip("trafilatura")
    text = " ".join(parse_bytes(Path(page).read_bytes(), ext=".html").text.split())
    # $<CONFIG>'s description stands in the first half of the page, which trafilatura dropped
    assert "configuration name" in text.lower() and "$<CONFIG>" in text
    assert len(text.split()) > 6000


def _docbook_page() -> str:
    """A page shaped like PostgreSQL's DocBook manual: navigation bars by class, and a
    setting described in a paragraph of nested inline markup."""
    nav = "".join(f'<a href="p{i}.html">Chapter {i} of the guide</a> ' for i in range(12))
    filler = " ".join(f"Setting number {i} changes how the server plans a query." for i in range(8))
    return ("<html><body>\n"
            f'<div class="navheader"><table><tr><td>{nav}</td></tr></table></div>\n'
            '<div class="sect2"><h3 class="title">20.13.2. Platform Compatibility</h3>\n'
            f"<p>{filler}</p>\n"
            '<dl class="variablelist"><dt id="guc-transform-null-equals">'
            '<code class="varname">transform_null_equals</code> (<code class="type">boolean</code>)</dt>\n'
            '<dd><p>When on, expressions of the form <code class="literal"><em class="replaceable">'
            '<code>expr</code></em> =\n NULL</code> (or <code class="literal">NULL =\n'
            ' <em class="replaceable"><code>expr</code></em></code>) are treated as\n'
            ' <code class="literal"><em class="replaceable"><code>expr</code></em> IS NULL</code>,'
            ' that is, they return true if <em class="replaceable"><code>expr</code></em> evaluates'
            ' to the null value, and false otherwise.</p>\n'
            "<p>Note that this option only affects the exact form <code>= NULL</code>.<br>"
            "It is off by default.</p></dd></dl>\n"
            '<pre class="programlisting"><span>SELECT 1;</span>\n\n<span>SELECT 2;</span></pre>\n'
            f"<p>{filler}</p></div>\n"
            f'<div class="navfooter"><table><tr><td>{nav}</td></tr></table></div>\n'
            "</body></html>")


def test_html_paragraph_of_nested_inline_markup_is_kept_whole():
    """trafilatura garbles such a paragraph ("exprexpr IS NULL", its tail lost), so the
    paragraph never matched its text and was dropped from the index: the answer to "is
    there a setting that treats = NULL as IS NULL?" was gone. Inline markup joins as the
    page shows it, with no spaces added inside "(boolean)" or before a comma."""
    pytest.importorskip("trafilatura")
    doc = parse_bytes(_docbook_page().encode(), ext=".html")
    text = " ".join(doc.text.split())
    assert ("When on, expressions of the form expr = NULL (or NULL = expr) are treated as "
            "expr IS NULL, that is, they return true if expr evaluates to the null value, "
            "and false otherwise.") in text
    assert "transform_null_equals (boolean)" in text
    assert "exact form = NULL. It is off by default." in text        # <br> is a space
    assert "SELECT 1;\n\nSELECT 2;" in doc.text                       # code keeps its lines
    assert "Chapter 3 of the guide" not in text                       # navigation left out


def test_html_mdbook_page_keeps_its_headings_and_drops_its_menu():
    """mdBook (the Rust books and many projects' docs) marks each heading's own anchor
    <a class="header">: the navigation rule for texinfo's <div class="header"> removed
    every heading's text, so no chunk knew its section. Its theme menu of buttons
    ("Light Rust Coal Navy Ayu") was read as the page's first words."""
    filler = " ".join(f"Closure number {i} captures its environment by reference." for i in range(8))
    page = ("<html><body>\n"
            '<nav id="sidebar" class="sidebar"><ol><li><a href="a.html">1. Getting started</a></li></ol></nav>\n'
            '<div id="page-wrapper"><div class="page">\n'
            '<div id="menu-bar" class="menu-bar sticky bordered">'
            '<button id="theme-toggle" class="icon-button" type="button">Theme</button>'
            '<ul id="theme-list" class="theme-popup" role="menu">'
            '<li role="none"><button role="menuitem" class="theme" id="light">Light</button></li>'
            '<li role="none"><button role="menuitem" class="theme" id="coal">Coal</button></li></ul>'
            '<h1 class="menu-title">The Example Book</h1></div>\n'
            '<div id="content" class="content"><main>\n'
            '<h1 id="closures"><a class="header" href="#closures">Closures</a></h1>\n'
            f"<p>{filler}</p>\n"
            '<h2 id="moving"><a class="header" href="#moving">Moving captured values</a></h2>\n'
            "<p>The move keyword forces the closure to take ownership of the values it uses.</p>\n"
            f"<p>{filler}</p>\n"
            "</main></div></div></div></body></html>")
    chunks = chunks_of(page.encode(), ".html", "ch13")
    text = " ".join(" ".join(c.text for c in chunks).split())
    assert "take ownership of the values it uses" in text
    assert not any(word in text for word in ("Light", "Coal", "Theme", "The Example Book"))
    assert any(c.title == "ch13.html > Closures > Moving captured values" for c in chunks)


# --- titles, dry run ---------------------------------------------------------------------------

def test_titles_are_cleaned_of_markup():
    text = (":mod:`pathlib` --- Object-oriented filesystem paths\n"
            "=====================================================\n\n"
            "This module offers classes representing filesystem paths.\n")
    (chunk,) = chunks_of(text.encode(), ".txt", "pathlib.rst")
    assert chunk.title == "pathlib.rst.txt > pathlib — Object-oriented filesystem paths"


def test_every_new_format_names_its_parser():
    assert [parser_name(e) for e in (".eml", ".mbox", ".odt", ".ods", ".odp", ".epub", ".pptx",
                                     ".xlsx", ".rtf", ".ipynb", ".pdf", ".html")] == [
        "email", "mbox", "odt", "ods", "odp", "epub", "pptx", "xlsx", "rtf", "notebook", "pdf", "html"]


def test_a_slide_is_shown_alone_and_the_dry_run_names_parsers(tmp_path, make_index, capsys):
    root = tmp_path / "docs"
    root.mkdir()
    (root / "deck.pptx").write_bytes(make_pptx([("Otters", "Otters hold hands while they sleep.", ""),
                                                ("Beavers", "Beavers build dams from branches.", "")]))
    (root / "inbox.eml").write_bytes(message("Trip", "dee@example.org", "The train leaves at 7.").as_bytes())
    from indexer.options import IndexOptions

    idx = make_index(IndexOptions(chunk_words=60, batch_size=16))
    idx.add_root(root)
    dry = idx.update(dry_run=True)
    assert dry.parsers == {str(root / "deck.pptx"): "pptx", str(root / "inbox.eml"): "email"}
    idx.update()
    hit = next(h for h in idx.search("Which animal builds dams?", k=5) if h.path.endswith("deck.pptx"))
    assert hit.title == "deck.pptx > Slide 2: Beavers"
    text, start, end = idx.surrounding(hit)
    assert "Beavers build dams" in text[start:end] and "Otters" not in text

    from localrag.cli import main

    assert main(["--data-dir", str(tmp_path / "home"), "index", "--dry-run", str(root)]) == 0
    out = capsys.readouterr().out
    assert f"index  {root / 'deck.pptx'}  (pptx)" in out and f"index  {root / 'inbox.eml'}  (email)" in out


def test_docx_cites_its_heading_path_not_lines_it_does_not_have(tmp_path):
    path = tmp_path / "w.docx"
    make_docx(path, [("h1", "Boiler"), ("p", "Serviced every autumn by the plumber.")])
    (chunk,) = chunks_of(path.read_bytes(), ".docx", "w")
    assert chunk.title == "w.docx > Boiler" and chunk.start_line is None and chunk.page is None
