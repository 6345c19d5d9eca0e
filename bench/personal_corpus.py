"""A mixed "personal folder" for the retrieval bench (issue 20), built deterministically from
documentation that Debian installs: mail, office files, e-books, notebooks, RTF, notes and
PDFs, each written with its format's own library from real text. Nothing here is committed
but this script (and the questions in bench/data/personal/); the Python and SQLite
documentation are never used.

    python bench/personal_corpus.py [FOLDER]      # default bench/out/personal/ (git-ignored)

Sources and licenses (from /usr/share/doc/<pkg>/copyright):

| files | source | license |
|---|---|---|
| mail/git-list.mbox (6 messages), mail/saved/*.eml (3), mail/Maildir/cur (3) | git-doc `howto/*.txt`: real git mailing-list messages (From/Subject/Date headers) | GPL-2 |
| papers/*.pdf (4) | libtasn1-doc `libtasn1.pdf`; shared-mime-info `shared-mime-info-spec.pdf`; bzip2 `manual.pdf.gz`; fontconfig `fontconfig-user.pdf.gz` (gunzipped, copied as they are) | GFDL-1.3; GPL-2+; BSD-variant; HPND-style (fontconfig) |
| office/*.docx (4), office/*.odt (4), notes/*.md (3), notes/*.txt (3) | debian-reference-en: `/usr/share/debian-reference/chNN.en.html`, one section each, paragraph by paragraph with headings | GPL-2+ |
| office/*.xlsx (3), office/*.ods (3) | debian-reference-en tables (one sheet per table) | GPL-2+ |
| slides/*.pptx (3), slides/*.odp (3) | rust-doc "The Rust Programming Language" (`html/book/chNN-*.html`): an outline, a slide per heading with the first sentences of its paragraphs | MIT or Apache-2.0 |
| books/*.epub (3) | rust-doc book, two or three chapters each | MIT or Apache-2.0 |
| notebooks/*.ipynb (3) | postgresql-doc-15 tutorial pages: prose as markdown cells, SQL examples as code cells | PostgreSQL |
| notes/*.rtf (3) | git-doc `technical/*.txt` design notes, paragraph by paragraph | GPL-2 |
"""

from __future__ import annotations

import email
import email.utils
import gzip
import json
import mailbox
import re
import shutil
import sys
import textwrap
import warnings
import zipfile
from pathlib import Path
from xml.sax.saxutils import escape

ROOT = Path(__file__).resolve().parents[1]
DEFAULT = ROOT / "bench" / "out" / "personal"
DEBREF = Path("/usr/share/debian-reference")
RUST = Path("/usr/share/doc/rust-doc/html/book")
PG = Path("/usr/share/doc/postgresql-doc-15/html")
GIT = Path("/usr/share/doc/git-doc")

# name in the folder -> source (relative file names below, one row per built file)
MAIL_MBOX = ["howto/maintain-git.txt", "howto/revert-a-faulty-merge.txt", "howto/recover-corrupted-blob-object.txt",
             "howto/update-hook-example.txt", "howto/using-signed-tag-in-pull-request.txt",
             "howto/keep-canonical-history-correct.txt"]
MAIL_EML = {"post-update-hook.eml": "howto/rebuild-from-update-hook.txt",
            "revert-commit.eml": "howto/revert-branch-rebase.txt",
            "merge-subtree.eml": "howto/using-merge-subtree.txt"}
MAIL_MAILDIR = ["howto/recover-corrupted-object-harder.txt", "howto/separating-topic-branches.txt",
                "howto/setup-git-server-over-http.txt"]
PDFS = {"libtasn1.pdf": "/usr/share/doc/libtasn1-doc/libtasn1.pdf",
        "shared-mime-info-spec.pdf": "/usr/share/doc/shared-mime-info/shared-mime-info-spec.pdf",
        "bzip2-manual.pdf": "/usr/share/doc/bzip2/manual.pdf.gz",
        "fontconfig-user.pdf": "/usr/share/doc/fontconfig/fontconfig-user.pdf.gz"}
# (folder file, debian-reference chapter, index of its level-2 section)
DOCX = [("system-init.docx", "ch03", 0), ("network-setup.docx", "ch05", 0),
        ("i18n.docx", "ch08", 1), ("data-management.docx", "ch10", 0)]
ODT = [("authentication.odt", "ch04", 0), ("network-apps.odt", "ch06", 2),
       ("system-tips.odt", "ch09", 0), ("data-conversion.odt", "ch11", 0)]
MD = [("shell-scripts.md", "ch12", 0), ("make-notes.md", "ch12", 1), ("fonts.md", "ch07", 4)]
TXT = [("package-tips.txt", "ch02", 1), ("tutorial-notes.txt", "ch01", 1), ("auth-security.txt", "ch04", 5)]
XLSX = [("gnu-linux-tutorials.xlsx", "ch01"), ("package-tools.xlsx", "ch02"), ("system-tips.xlsx", "ch09")]
ODS = [("network-tools.ods", "ch05"), ("network-apps.ods", "ch06"), ("data-tools.ods", "ch10")]
PPTX = [("ownership.pptx", "ch04-01-what-is-ownership.html"), ("traits.pptx", "ch10-02-traits.html"),
        ("threads.pptx", "ch16-01-threads.html")]
ODP = [("closures.odp", "ch13-01-closures.html"), ("hash-maps.odp", "ch08-03-hash-maps.html"),
       ("rc-pointers.odp", "ch15-04-rc.html")]
EPUB = [("rust-errors.epub", ["ch09-01-unrecoverable-errors-with-panic.html",
                              "ch09-02-recoverable-errors-with-result.html", "ch09-03-to-panic-or-not-to-panic.html"]),
        ("rust-smart-pointers.epub", ["ch15-01-box.html", "ch15-02-deref.html", "ch15-03-drop.html"]),
        ("rust-concurrency.epub", ["ch16-02-message-passing.html", "ch16-03-shared-state.html"])]
IPYNB = [("sql-queries.ipynb", ["tutorial-select.html", "tutorial-agg.html"]),
         ("sql-joins.ipynb", ["tutorial-join.html", "tutorial-fk.html"]),
         ("sql-window-functions.ipynb", ["tutorial-window.html", "tutorial-transactions.html"])]
RTF = [("racy-git.rtf", "technical/racy-git.txt"), ("partial-clone.rtf", "technical/partial-clone.txt"),
       ("shallow.rtf", "technical/shallow.txt")]


def clean(s: str) -> str:
    return " ".join(s.split())


def soup(path: Path):  # noqa: ANN201
    from bs4 import BeautifulSoup, XMLParsedAsHTMLWarning

    warnings.filterwarnings("ignore", category=XMLParsedAsHTMLWarning)

    return BeautifulSoup(path.read_bytes(), "lxml")


def items(root) -> list[tuple]:  # noqa: ANN001
    """('h', level, text), ('p', text), ('pre', text), ('table', caption, rows) in order."""
    out: list[tuple] = []

    def walk(el) -> None:  # noqa: ANN001
        for c in el.children:
            name = getattr(c, "name", None)
            if name is None:
                continue
            if name in ("script", "style", "nav", "header", "footer"):
                continue
            if re.fullmatch(r"h[1-6]", name):
                t = clean(c.get_text(" "))
                if t:
                    out.append(("h", int(name[1]), t))
            elif name == "p" or (name == "dd" and not c.find(["p", "pre", "table"])):
                t = clean(c.get_text(" "))
                if t:
                    out.append(("p", t))
            elif name == "pre":
                out.append(("pre", c.get_text().strip("\n")))
            elif name == "table":
                cap = c.find_previous(["p"], class_="title") if c.find("caption") is None else c.find("caption")
                caption = clean(cap.get_text(" ")) if cap is not None else ""
                rows = [[clean(td.get_text(" ")) for td in tr.find_all(["td", "th"])] for tr in c.find_all("tr")]
                out.append(("table", caption, [r for r in rows if any(r)]))
            elif name == "li" and not c.find(["p", "pre", "ul", "ol", "table"]):
                t = clean(c.get_text(" "))
                if t:
                    out.append(("p", t))
            else:
                walk(c)

    walk(root)
    return out


def debref_section(chapter: str, n: int) -> list[tuple]:
    """The n-th level-2 section of a Debian Reference chapter (its h2 and what follows)."""
    s = soup(DEBREF / f"{chapter}.en.html")
    sects = [d for d in s.find_all("div", class_="section")
             if d.find("h2", class_="title") is not None and d.find_parent("div", class_="section") is None]
    return [i for i in items(sects[n]) if i[0] != "table"]


def debref_tables(chapter: str, limit: int = 4) -> list[tuple[str, list[list[str]]]]:
    s = soup(DEBREF / f"{chapter}.en.html")
    out = []
    for div in s.find_all("div", class_="table"):
        title = div.find("p", class_="title")
        rows = [[clean(td.get_text(" ")) for td in tr.find_all(["td", "th"])] for tr in div.find_all("tr")]
        rows = [r for r in rows if any(r)]
        if title is not None and len(rows) > 2:
            out.append((clean(title.get_text(" ")), rows))
    return out[:limit]


def rust_page(name: str) -> list[tuple]:
    main = soup(RUST / name).find("main")
    return items(main)


def pg_page(name: str) -> list[tuple]:
    s = soup(PG / name)
    body = s.find("div", class_=["sect1", "chapter"]) or s.body
    return items(body)


def sentences(text: str, n: int) -> str:
    parts = re.split(r"(?<=[.!?])\s+(?=[A-Z])", text)
    return " ".join(parts[:n])


# --- mail -----------------------------------------------------------------------------------

def git_message(rel: str) -> email.message.EmailMessage:
    """The list message as a mail client saves it: its From/Subject/Date and its body, of the
    text type the file declares ("Content-type: text/asciidoc"; the mail parser reads any
    inline text/* body)."""
    from email.message import EmailMessage

    src = email.message_from_bytes((GIT / rel).read_bytes())
    m = EmailMessage()
    for h in ("From", "Subject", "Date"):
        if src[h]:
            m[h] = src[h]
    m["To"] = "git@vger.kernel.org"
    m["Message-ID"] = f"<{Path(rel).stem}@example.org>"
    m.set_content(src.get_payload(), subtype=src.get_content_subtype(), charset="utf-8")
    return m


def build_mail(folder: Path) -> None:
    (folder / "mail" / "saved").mkdir(parents=True)
    box = mailbox.mbox(str(folder / "mail" / "git-list.mbox"))
    for rel in MAIL_MBOX:
        m = mailbox.mboxMessage(git_message(rel))
        m.set_from("MAILER-DAEMON", email.utils.parsedate_to_datetime(m["Date"]).utctimetuple())
        box.add(m)
    box.flush()
    box.close()
    for name, rel in MAIL_EML.items():
        (folder / "mail" / "saved" / name).write_bytes(git_message(rel).as_bytes())
    md = folder / "mail" / "Maildir"
    for sub in ("cur", "new", "tmp"):
        (md / sub).mkdir(parents=True)
    for i, rel in enumerate(MAIL_MAILDIR):   # fixed names, so the folder is deterministic
        (md / "cur" / f"17000000{i:02d}.M{i}P1.laptop:2,S").write_bytes(git_message(rel).as_bytes())


# --- office ---------------------------------------------------------------------------------

def build_docx(path: Path, its: list[tuple]) -> None:
    import docx

    d = docx.Document()
    for it in its:
        if it[0] == "h":
            d.add_heading(it[2], level=min(max(it[1] - 1, 1), 4))
        elif it[0] == "p":
            d.add_paragraph(it[1])
        elif it[0] == "pre":
            for line in it[1].splitlines():
                d.add_paragraph(line, style="No Spacing")
    import datetime

    d.core_properties.created = datetime.datetime(2020, 1, 1)
    d.core_properties.modified = datetime.datetime(2020, 1, 1)
    d.save(str(path))


def build_odt(path: Path, its: list[tuple]) -> None:
    from odf.opendocument import OpenDocumentText
    from odf.text import H, P

    doc = OpenDocumentText()
    for it in its:
        if it[0] == "h":
            doc.text.addElement(H(outlinelevel=max(it[1] - 1, 1), text=it[2]))
        elif it[0] == "p":
            doc.text.addElement(P(text=it[1]))
        elif it[0] == "pre":
            for line in it[1].splitlines():
                doc.text.addElement(P(text=line))
    doc.save(str(path))


def sheet_name(title: str, used: set[str]) -> str:
    name = re.sub(r"^Table\s+[\d.]+\.\s*", "", title)
    name = re.sub(r"[\[\]:*?/\\]", " ", name)[:31].strip()
    base, i = name, 2
    while name in used:
        name = f"{base[:28]} {i}"
        i += 1
    used.add(name)
    return name


def build_xlsx(path: Path, tables: list) -> None:
    import openpyxl

    book = openpyxl.Workbook()
    book.remove(book.active)
    used: set[str] = set()
    for title, rows in tables:
        sh = book.create_sheet(sheet_name(title, used))
        for r in rows:
            sh.append(r)
    book.save(str(path))


def build_ods(path: Path, tables: list) -> None:
    from odf.opendocument import OpenDocumentSpreadsheet
    from odf.table import Table, TableCell, TableRow
    from odf.text import P

    doc = OpenDocumentSpreadsheet()
    used: set[str] = set()
    for title, rows in tables:
        t = Table(name=sheet_name(title, used))
        for r in rows:
            tr = TableRow()
            for v in r:
                c = TableCell(valuetype="string")
                c.addElement(P(text=v))
                tr.addElement(c)
            t.addElement(tr)
        doc.spreadsheet.addElement(t)
    doc.save(str(path))


def outline(its: list[tuple]) -> list[tuple[str, list[str]]]:
    """A slide per heading: the first two sentences of up to three of its paragraphs."""
    slides: list[tuple[str, list[str]]] = []
    for it in its:
        if it[0] == "h":
            slides.append((it[2], []))
        elif it[0] == "p" and slides and len(slides[-1][1]) < 3:
            slides[-1][1].append(sentences(it[1], 2))
    return [s for s in slides if s[1]]


def build_pptx(path: Path, slides: list) -> None:
    from pptx import Presentation

    deck = Presentation()
    for title, bullets in slides:
        s = deck.slides.add_slide(deck.slide_layouts[1])
        s.shapes.title.text = title
        tf = s.placeholders[1].text_frame
        tf.text = bullets[0]
        for b in bullets[1:]:
            tf.add_paragraph().text = b
    deck.save(str(path))


def build_odp(path: Path, slides: list) -> None:
    from odf.draw import Frame, Page, TextBox
    from odf.opendocument import OpenDocumentPresentation
    from odf.style import MasterPage, PageLayout
    from odf.text import P

    doc = OpenDocumentPresentation()
    layout = PageLayout(name="PL")
    doc.automaticstyles.addElement(layout)
    master = MasterPage(name="Default", pagelayoutname=layout)
    doc.masterstyles.addElement(master)
    for i, (title, bullets) in enumerate(slides, 1):
        page = Page(name=f"page{i}", masterpagename=master)
        for j, lines in enumerate(([title], bullets)):
            fr = Frame(width="24cm", height="3cm" if j == 0 else "12cm", x="2cm", y="1cm" if j == 0 else "5cm")
            tb = TextBox()
            for line in lines:
                tb.addElement(P(text=line))
            fr.addElement(tb)
            page.addElement(fr)
        doc.presentation.addElement(page)
    doc.save(str(path))


def xhtml(its: list[tuple]) -> str:
    body = []
    for it in its:
        if it[0] == "h":
            body.append(f"<h{it[1]}>{escape(it[2])}</h{it[1]}>")
        elif it[0] == "p":
            body.append(f"<p>{escape(it[1])}</p>")
        elif it[0] == "pre":
            body.append(f"<pre>{escape(it[1])}</pre>")
    return ('<?xml version="1.0" encoding="utf-8"?>\n<html xmlns="http://www.w3.org/1999/xhtml"><head><title>'
            '</title></head><body>' + "\n".join(body) + "</body></html>")


def build_epub(path: Path, chapters: list[list[tuple]], title: str) -> None:
    with zipfile.ZipFile(path, "w") as z:
        z.writestr(zipfile.ZipInfo("mimetype", (2020, 1, 1, 0, 0, 0)), "application/epub+zip")

        def put(name: str, data: str) -> None:
            z.writestr(zipfile.ZipInfo(name, (2020, 1, 1, 0, 0, 0)), data, compress_type=zipfile.ZIP_DEFLATED)

        put("META-INF/container.xml", '<?xml version="1.0"?><container version="1.0" xmlns="urn:oasis:names:tc:'
            'opendocument:xmlns:container"><rootfiles><rootfile full-path="OEBPS/content.opf" media-type='
            '"application/oebps-package+xml"/></rootfiles></container>')
        manifest = "".join(f'<item id="c{i}" href="c{i}.xhtml" media-type="application/xhtml+xml"/>'
                           for i in range(len(chapters)))
        spine = "".join(f'<itemref idref="c{i}"/>' for i in range(len(chapters)))
        put("OEBPS/content.opf", '<?xml version="1.0"?><package xmlns="http://www.idpf.org/2007/opf" version="3.0">'
            f'<metadata xmlns:dc="http://purl.org/dc/elements/1.1/"><dc:title>{escape(title)}</dc:title>'
            f'</metadata><manifest>{manifest}</manifest><spine>{spine}</spine></package>')
        for i, its in enumerate(chapters):
            put(f"OEBPS/c{i}.xhtml", xhtml(its))


def build_ipynb(path: Path, pages: list[list[tuple]]) -> None:
    import nbformat

    nb = nbformat.v4.new_notebook()
    cells, prose = [], []
    for its in pages:
        for it in its:
            if it[0] == "h":
                if prose:
                    cells.append(nbformat.v4.new_markdown_cell("\n\n".join(prose)))
                prose = ["#" * min(it[1], 6) + " " + it[2]]
            elif it[0] == "p":
                prose.append(it[1])
            elif it[0] == "pre":
                if prose:
                    cells.append(nbformat.v4.new_markdown_cell("\n\n".join(prose)))
                    prose = []
                cells.append(nbformat.v4.new_code_cell(it[1]))
    if prose:
        cells.append(nbformat.v4.new_markdown_cell("\n\n".join(prose)))
    for i, c in enumerate(cells):
        c["id"] = f"cell-{i}"
    nb.cells = cells
    nb.metadata["kernelspec"] = {"name": "sql", "display_name": "SQL", "language": "sql"}
    path.write_text(nbformat.writes(nb))


def rtf_escape(s: str) -> str:
    out = []
    for ch in s:
        if ch in "\\{}":
            out.append("\\" + ch)
        elif ord(ch) > 127:
            out.append(f"\\u{ord(ch) if ord(ch) < 32768 else ord(ch) - 65536}?")
        else:
            out.append(ch)
    return "".join(out)


def asciidoc_paragraphs(text: str) -> list[tuple[str, str]]:
    """(kind, text) from an asciidoc file: headings (underlined or '=' prefixed) and prose."""
    out = []
    for block in re.split(r"\n\s*\n", text):
        lines = [ln for ln in block.splitlines() if ln.strip()]
        if not lines:
            continue
        if len(lines) == 2 and re.fullmatch(r"[-=~^]{3,}", lines[1].strip()):
            out.append(("h", lines[0].strip()))
            lines = []
        elif lines[0].startswith("="):
            out.append(("h", lines[0].lstrip("= ").strip()))
            lines = lines[1:]
        if lines and not all(re.fullmatch(r"[-=~^]{3,}|\s*-{4,}\s*", ln) for ln in lines):
            body = " ".join(ln.strip() for ln in lines if not re.fullmatch(r"\s*[-.]{4,}\s*", ln))
            body = body.replace("`", "")
            if body:
                out.append(("p", clean(body)))
    return out


def build_rtf(path: Path, rel: str) -> None:
    parts = [r"{\rtf1\ansi\deff0{\fonttbl{\f0 Times New Roman;}}\f0\fs24 "]
    for kind, t in asciidoc_paragraphs((GIT / rel).read_text(errors="replace")):
        if kind == "h":
            parts.append(r"{\b\fs28 " + rtf_escape(t) + r"}\par ")
        else:
            parts.append(rtf_escape(t) + r"\par ")
    parts.append("}")
    path.write_bytes("".join(parts).encode("ascii"))


def to_markdown(its: list[tuple]) -> str:
    out = []
    for it in its:
        if it[0] == "h":
            out.append("#" * max(it[1] - 1, 1) + " " + it[2])
        elif it[0] == "p":
            out.append(it[1])
        elif it[0] == "pre":
            out.append("```\n" + it[1] + "\n```")
    return "\n\n".join(out) + "\n"


def to_text(its: list[tuple]) -> str:
    out = []
    for it in its:
        if it[0] == "h":
            out.append(it[2] + "\n" + "=" * len(it[2]))
        elif it[0] == "p":
            out.append(textwrap.fill(it[1], 78))
        elif it[0] == "pre":
            out.append(textwrap.indent(it[1], "    "))
    return "\n\n".join(out) + "\n"


_STAMP = re.compile(rb"\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d(?:\.\d+)?Z?")


def pin_zip(path: Path) -> None:
    """Rewrite an office zip with fixed entry times and fixed dates in its metadata, so the
    same sources give the same bytes (the libraries stamp the time of the build)."""
    with zipfile.ZipFile(path) as z:
        entries = [(i.filename, i.compress_type, z.read(i.filename)) for i in z.infolist()]
    with zipfile.ZipFile(path, "w") as z:
        for name, how, data in entries:
            if name in ("docProps/core.xml", "meta.xml"):
                data = _STAMP.sub(b"2020-01-01T00:00:00Z", data)
            z.writestr(zipfile.ZipInfo(name, (2020, 1, 1, 0, 0, 0)), data, compress_type=how)


def build(folder: Path = DEFAULT) -> dict[str, int]:
    """Write the folder from scratch; returns the number of files per format."""
    shutil.rmtree(folder, ignore_errors=True)
    for sub in ("papers", "office", "slides", "books", "notebooks", "notes"):
        (folder / sub).mkdir(parents=True)
    build_mail(folder)
    for name, src in PDFS.items():
        data = Path(src).read_bytes()
        (folder / "papers" / name).write_bytes(gzip.decompress(data) if src.endswith(".gz") else data)
    for name, ch, n in DOCX:
        build_docx(folder / "office" / name, debref_section(ch, n))
    for name, ch, n in ODT:
        build_odt(folder / "office" / name, debref_section(ch, n))
    for name, ch in XLSX:
        build_xlsx(folder / "office" / name, debref_tables(ch))
    for name, ch in ODS:
        build_ods(folder / "office" / name, debref_tables(ch))
    for name, page in PPTX:
        build_pptx(folder / "slides" / name, outline(rust_page(page)))
    for name, page in ODP:
        build_odp(folder / "slides" / name, outline(rust_page(page)))
    for name, pages in EPUB:
        build_epub(folder / "books" / name, [rust_page(p) for p in pages], name[:-5])
    for name, pages in IPYNB:
        build_ipynb(folder / "notebooks" / name, [pg_page(p) for p in pages])
    for name, rel in RTF:
        build_rtf(folder / "notes" / name, rel)
    for name, ch, n in MD:
        (folder / "notes" / name).write_text(to_markdown(debref_section(ch, n)))
    for name, ch, n in TXT:
        (folder / "notes" / name).write_text(to_text(debref_section(ch, n)))
    for sub in ("office", "slides"):
        for p in sorted((folder / sub).iterdir()):
            pin_zip(p)
    counts: dict[str, int] = {}
    for p in sorted(folder.rglob("*")):
        if p.is_file():
            fmt = "maildir" if p.parent.name == "cur" else p.suffix.lstrip(".")
            counts[fmt] = counts.get(fmt, 0) + 1
    return counts


# --- the annotator's helper: where a key phrase lies, as the parser reads the file -------------

QUESTIONS = ROOT / "bench" / "data" / "personal" / "questions.jsonl"


def parse_file(path: Path):  # noqa: ANN201
    """The ParsedDoc the index reads (a Maildir message reads as .eml)."""
    sys.path.insert(0, str(ROOT))
    from indexer.parsers import parse_bytes

    ext = ".eml" if path.parent.name in ("cur", "new") else path.suffix.lower()
    return parse_bytes(path.read_bytes(), ext=ext, name=path.name)


def unit_of(fmt: str, doc, phrase: str) -> str | None:  # noqa: ANN001
    """The unit a citation of `phrase` must name: the mail's subject, "page N", "Slide N", the
    sheet's name, "Chapter N", "cell N", the section heading, "line N"; "" for RTF (its
    passages cite the file only); None when the phrase is not in one block of the text."""
    words = phrase.split()
    m = re.search(r"\s+".join(re.escape(w) for w in words), doc.text, flags=re.IGNORECASE)
    if m is None:
        return None
    if fmt == "txt":
        return f"line {doc.text.count(chr(10), 0, m.start()) + 1}"
    if fmt == "rtf":
        return ""
    for b in doc.blocks:
        if b.start <= m.start() < b.end:
            hp = b.heading_path
            if fmt == "pdf":
                return f"page {b.page}"
            if fmt in ("mbox", "eml", "maildir"):
                return hp[0].split(" \u2014 ")[0]
            if fmt in ("pptx", "odp"):
                return hp[0].split(":")[0]
            if fmt in ("xlsx", "ods", "epub"):
                return hp[0]
            return hp[-1] if hp else ""
    return None


def check(folder: Path = DEFAULT, questions: Path = QUESTIONS, *, fill_units: bool = False) -> int:
    """Every key phrase found (whitespace collapsed, case ignored) in its file as parsed, in
    one block, and in at most 3 files of the folder; ids unique. Prints the counts; with
    `fill_units`, rewrites each question's "unit" from where its phrase lies."""
    from collections import Counter

    rows = [json.loads(line) for line in questions.read_text().splitlines() if line.strip()]
    docs = {str(p.relative_to(folder)): parse_file(p) for p in sorted(folder.rglob("*")) if p.is_file()}
    flat = {k: " ".join(d.text.split()).lower() for k, d in docs.items()}
    problems = 0
    for r in rows:
        kp = " ".join(r["key_phrase"].split()).lower()
        where = [k for k, t in flat.items() if kp in t]
        unit = unit_of(r["format"], docs[r["file"]], r["key_phrase"]) if r["file"] in docs else None
        if r["file"] not in where or unit is None:
            problems += 1
            print(f"NOT FOUND {r['id']} {r['file']}: {r['key_phrase']!r}")
        elif len(where) > 3:
            print(f"common ({len(where)} files) {r['id']}: {r['key_phrase']!r}")
        elif not fill_units and unit != r["unit"]:
            problems += 1
            print(f"unit {r['id']}: {r['unit']!r} but the phrase lies in {unit!r}")
        if fill_units and unit is not None:
            r["unit"] = unit
    ids = [r["id"] for r in rows]
    if len(set(ids)) != len(ids):
        problems += 1
        print("duplicate ids")
    if fill_units:
        questions.write_text("".join(json.dumps(r, ensure_ascii=False) + "\n" for r in rows))
    print(f"{len(rows)} questions, {len({r['file'] for r in rows})} files, per format "
          f"{dict(Counter(r['format'] for r in rows))}; {problems} problems")
    return problems


if __name__ == "__main__":
    import argparse

    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("folder", nargs="?", type=Path, default=DEFAULT)
    ap.add_argument("--check", action="store_true", help="validate questions.jsonl against the built folder")
    ap.add_argument("--fill-units", action="store_true", help="(annotator) write each question's unit")
    a = ap.parse_args()
    print(json.dumps(build(a.folder)))
    if a.check or a.fill_units:
        sys.exit(1 if check(a.folder, fill_units=a.fill_units) else 0)
