"""Per-format text extraction that keeps structure: headings, paragraphs, code, pages.

Every parser returns a ParsedDoc: the extracted text plus blocks that point into it by
character offsets. The chunker only ever cuts at those offsets, so every chunk knows its
exact place (lines for text formats, page for PDF).
"""

from __future__ import annotations

import io
import logging
import re
from dataclasses import dataclass, field

from indexer.reading import FileSkip, decode_text

MARKDOWN_EXT = {".md", ".markdown", ".mdown", ".mkd"}
RST_EXT = {".rst", ".rest"}
HTML_EXT = {".html", ".htm", ".xhtml"}
PLAIN_EXT = {".txt", ".text", ".org", ".adoc", ".tex", ".log", ".csv", ""}


@dataclass
class Block:
    start: int                       # offsets into ParsedDoc.text
    end: int
    kind: str                        # "heading", "text" or "code"
    heading_path: tuple[str, ...] = ()
    page: int | None = None          # 1-based, PDF only


@dataclass
class ParsedDoc:
    text: str
    blocks: list[Block] = field(default_factory=list)
    has_lines: bool = True           # False for PDF: cite pages, not lines


def parse_bytes(data: bytes, *, ext: str, name: str = "") -> ParsedDoc:
    """Dispatch on the extension; raises FileSkip with a reason a person can act on.
    `name` (the file's name) tells a `.txt` file's markup when it says it (`vm.rst.txt`)."""
    if ext == ".pdf":
        return parse_pdf(data)
    if ext == ".docx":
        return parse_docx(data)
    text = decode_text(data, ext=ext)
    if ext in HTML_EXT:
        return parse_html(text)
    # Markup is cleaned for reading (indexer/markup.py: every line stays in its place)
    from indexer.markup import clean_doc, sniff

    if ext in MARKDOWN_EXT:
        return clean_doc(parse_markdown(text), "markdown")
    if ext in RST_EXT:
        return clean_doc(parse_rst(text), "rst")
    if ext in PLAIN_EXT:
        markup = sniff(text, name) if ext == ".txt" else None   # Sphinx _sources, git's manuals
        if markup == "markdown":
            return clean_doc(parse_markdown(text), "markdown")
        if markup == "rst":
            return clean_doc(parse_rst(text), "rst")
        if markup == "asciidoc":
            return clean_doc(parse_rst(text, overlines=False), "asciidoc")
        return parse_plain(text)
    return parse_code(text)


# --- helpers ---------------------------------------------------------------------------

def _lines(text: str) -> list[tuple[int, int, str]]:
    """(start, end, line) without the newline, for every line."""
    out, pos = [], 0
    for line in text.split("\n"):
        out.append((pos, pos + len(line), line))
        pos += len(line) + 1
    return out


def _paragraphs(text: str, base: int = 0, *, kind: str = "text",
                heading_path: tuple[str, ...] = (), page: int | None = None) -> list[Block]:
    """Blank-line separated paragraphs of `text` as blocks (offsets shifted by base)."""
    blocks = []
    for m in re.finditer(r"\S(?:.*?\S)?(?=\n[ \t]*\n|\s*\Z)", text, flags=re.S):
        blocks.append(Block(base + m.start(), base + m.end(), kind, heading_path, page))
    return blocks


def _set_heading(stack: list[tuple[int, str]], level: int, title: str) -> tuple[str, ...]:
    while stack and stack[-1][0] >= level:
        stack.pop()
    stack.append((level, title))
    return tuple(t for _, t in stack)


# --- text formats ----------------------------------------------------------------------

def parse_plain(text: str) -> ParsedDoc:
    return ParsedDoc(text, _paragraphs(text))


_ATX = re.compile(r"^ {0,3}(#{1,6})[ \t]+(.*?)[ \t#]*$")
_FENCE = re.compile(r"^ {0,3}(`{3,}|~{3,})")
_SETEXT = re.compile(r"^ {0,3}(=+|-+)[ \t]*$")


def parse_markdown(text: str) -> ParsedDoc:
    blocks: list[Block] = []
    stack: list[tuple[int, str]] = []
    path: tuple[str, ...] = ()
    lines = _lines(text)
    para: list[tuple[int, int, str]] = []

    def end_para() -> None:
        if para:
            blocks.append(Block(para[0][0], para[-1][1], "text", path))
            para.clear()

    i = 0
    while i < len(lines):
        start, end, line = lines[i]
        fence = _FENCE.match(line)
        if fence:
            end_para()
            marker = fence.group(1)
            j = i + 1
            while j < len(lines) and not lines[j][2].lstrip().startswith(marker):
                j += 1
            last = min(j, len(lines) - 1)
            blocks.append(Block(start, lines[last][1], "code", path))
            i = last + 1
            continue
        atx = _ATX.match(line)
        if atx:
            end_para()
            path = _set_heading(stack, len(atx.group(1)), atx.group(2).strip() or "(untitled)")
            blocks.append(Block(start, end, "heading", path))
        elif (_SETEXT.match(line) and len(para) == 1 and line.strip()
              and not (line.strip().startswith("-") and not para[0][2].strip())):
            title_start, _, title = para.pop()
            path = _set_heading(stack, 1 if line.strip()[0] == "=" else 2, title.strip())
            blocks.append(Block(title_start, end, "heading", path))
        elif not line.strip():
            end_para()
        else:
            para.append((start, end, line))
        i += 1
    end_para()
    return ParsedDoc(text, blocks)


_RST_ADORN = re.compile(r"^([=\-`:'\"~^_*+#<>.])\1{2,}\s*$")


def parse_rst(text: str, *, overlines: bool = True) -> ParsedDoc:
    """Paragraphs, with section titles found by their over/underlines (level = order seen).
    AsciiDoc titles are underlined the same way but never overlined (`overlines=False`:
    there a line between two `----` lines is a listing block, not a title)."""
    blocks: list[Block] = []
    styles: list[tuple[str, bool]] = []
    stack: list[tuple[int, str]] = []
    path: tuple[str, ...] = ()
    for para in _paragraphs(text):
        raw = text[para.start:para.end].split("\n")
        title = None
        if len(raw) >= 2 and _RST_ADORN.match(raw[1]) and raw[0].strip() and not _RST_ADORN.match(raw[0]) \
                and len(raw[1].strip()) >= len(raw[0].strip()) \
                and (overlines or len(raw[1].strip()) <= len(raw[0].strip()) + 2):   # AsciiDoc: same length
            title, style, head_lines = raw[0].strip(), (raw[1].strip()[0], False), 2
        elif overlines and len(raw) >= 3 and _RST_ADORN.match(raw[0]) and _RST_ADORN.match(raw[2]) and raw[1].strip():
            title, style, head_lines = raw[1].strip(), (raw[0].strip()[0], True), 3
        if title is None:
            blocks.append(Block(para.start, para.end, "text", path))
            continue
        if style not in styles:
            styles.append(style)
        path = _set_heading(stack, styles.index(style) + 1, title)
        head_end = para.start + sum(len(line) + 1 for line in raw[:head_lines]) - 1
        blocks.append(Block(para.start, head_end, "heading", path))
        rest = text[head_end:para.end]
        if rest.strip():
            blocks.extend(_paragraphs(rest, head_end, heading_path=path))
    return ParsedDoc(text, blocks)


_DEF = re.compile(
    r"^(?P<indent>[ \t]*)(?:export\s+|pub(?:\([^)]*\))?\s+|public\s+|private\s+|static\s+|async\s+)*"
    r"(?:def|class|function|func|fn|interface|struct|impl|trait|module|enum)\s+(?P<name>[A-Za-z_$][\w$]*)"
)


def parse_code(text: str) -> ParsedDoc:
    """Source code: blank-line separated blocks; top-level definitions become headings."""
    blocks: list[Block] = []
    stack: list[tuple[int, str]] = []
    path: tuple[str, ...] = ()
    for para in _paragraphs(text, kind="code"):
        line_start = text.rfind("\n", 0, para.start) + 1   # keep the indentation
        first_line = text[line_start:para.end].split("\n", 1)[0]
        m = _DEF.match(first_line)
        if m and len(m.group("indent").expandtabs(4)) <= 4:
            level = 1 if not m.group("indent") else 2
            path = _set_heading(stack, level, m.group("name"))
        blocks.append(Block(para.start, para.end, "code", path))
    return ParsedDoc(text, blocks)


# --- HTML ------------------------------------------------------------------------------

_HTML_BLOCKS = {
    "p", "div", "section", "article", "main", "header", "footer", "aside", "nav", "li", "dt", "dd",
    "blockquote", "pre", "table", "tr", "td", "th", "h1", "h2", "h3", "h4", "h5", "h6",
    "figcaption", "caption", "form", "body", "ul", "ol", "dl", "details", "summary",
}


def parse_html(html: str) -> ParsedDoc:
    from bs4 import BeautifulSoup, Comment, Doctype, ProcessingInstruction

    soup = BeautifulSoup(html, "html.parser")
    for tag in soup(["script", "style", "noscript", "template", "svg", "head"]):
        tag.decompose()
    groups: list[tuple[object, list[str]]] = []
    for s in soup.find_all(string=True):
        if isinstance(s, (Comment, Doctype, ProcessingInstruction)) or not s.strip():
            continue
        block = s.find_parent(lambda t: t.name in _HTML_BLOCKS)
        if groups and groups[-1][0] is block:
            groups[-1][1].append(str(s))
        else:
            groups.append((block, [str(s)]))
    parts: list[str] = []
    blocks: list[Block] = []
    stack: list[tuple[int, str]] = []
    path: tuple[str, ...] = ()
    pos = 0
    for block, strings in groups:
        name = getattr(block, "name", "") or ""
        if name == "pre":
            piece = "".join(strings).strip("\n")
        else:
            piece = " ".join(" ".join(strings).split())
        if not piece:
            continue
        kind = "text"
        if re.fullmatch(r"h[1-6]", name):
            path = _set_heading(stack, int(name[1]), piece)
            kind = "heading"
        elif name == "pre":
            kind = "code"
        if parts:
            parts.append("\n\n")
            pos += 2
        parts.append(piece)
        blocks.append(Block(pos, pos + len(piece), kind, path))
        pos += len(piece)
    return ParsedDoc("".join(parts), blocks)


# --- DOCX ------------------------------------------------------------------------------

_OLE_MAGIC = b"\xd0\xcf\x11\xe0\xa1\xb1\x1a\xe1"   # Compound File: .doc, or an encrypted .docx


def _docx_container_problem(data: bytes) -> FileSkip | None:
    """A .docx is a zip archive; say what the file is instead when it is not one."""
    import zipfile

    if data.startswith(_OLE_MAGIC):
        if "EncryptionInfo".encode("utf-16-le") in data:
            return FileSkip("error", "cannot read DOCX: the document is password-protected; "
                            "save an unprotected copy to index it", "encrypted")
        return FileSkip("error", "cannot read DOCX: this is an old binary Word (.doc) file "
                        "with a .docx name; open it in Word or LibreOffice and save it as "
                        ".docx", "damaged")
    if not data.startswith(b"PK"):
        return FileSkip("error", "cannot read DOCX: not a Word document (a .docx is a zip "
                        "archive and this file is not one); re-save it from Word or "
                        "LibreOffice as .docx", "damaged")
    try:
        with zipfile.ZipFile(io.BytesIO(data)) as archive:   # reads the directory only
            names = set(archive.namelist())
    except Exception as exc:
        return _damaged_zip(exc)
    if "word/document.xml" not in names:
        return FileSkip("error", "cannot read DOCX: a zip archive but not a Word document "
                        "(no word/document.xml); re-save it from Word or LibreOffice as .docx",
                        "damaged")
    return None


def _damaged_zip(exc: BaseException) -> FileSkip:
    return FileSkip("error", f"cannot read DOCX: the zip archive is damaged or truncated "
                    f"({_short(exc)}), as after an interrupted download or copy; copy it "
                    "again or re-save it from Word or LibreOffice", "damaged")


def parse_docx(data: bytes) -> ParsedDoc:
    problem = _docx_container_problem(data)
    if problem is not None:
        raise problem
    try:
        import docx
        from docx.table import Table
        from docx.text.paragraph import Paragraph

        document = docx.Document(io.BytesIO(data))
    except Exception as exc:
        import zipfile
        import zlib

        if isinstance(exc, (zipfile.BadZipFile, zlib.error, EOFError)):
            raise _damaged_zip(exc) from None
        raise FileSkip("error", f"cannot read DOCX: not a valid Word document ({_short(exc)}); "
                       "re-save it from Word or LibreOffice", "damaged") from None
    pieces: list[tuple[str, int | None]] = []   # (text, heading level or None)
    body = document.element.body
    for child in body.iterchildren():
        tag = child.tag.rsplit("}", 1)[-1]
        if tag == "p":
            para = Paragraph(child, document)
            text = para.text.strip()
            if not text:
                continue
            style = (para.style.name if para.style is not None else "") or ""
            level = None
            m = re.match(r"(?:Heading|Überschrift|Titre)\s*(\d)", style)
            if m:
                level = int(m.group(1))
            elif style == "Title":
                level = 1
            pieces.append((text, level))
        elif tag == "tbl":
            for row in Table(child, document).rows:
                cells = [c.text.strip() for c in row.cells]
                line = " | ".join(dict.fromkeys(c for c in cells if c))
                if line:
                    pieces.append((line, None))
    parts, blocks, pos = [], [], 0
    stack: list[tuple[int, str]] = []
    path: tuple[str, ...] = ()
    for text, level in pieces:
        if parts:
            parts.append("\n\n")
            pos += 2
        if level is not None:
            path = _set_heading(stack, level, text)
        parts.append(text)
        blocks.append(Block(pos, pos + len(text), "heading" if level else "text", path))
        pos += len(text)
    return ParsedDoc("".join(parts), blocks)


# --- PDF -------------------------------------------------------------------------------

def parse_pdf(data: bytes) -> ParsedDoc:
    """Text layer of each page; blocks never span pages (chunks inherit that)."""
    logging.getLogger("pypdf").setLevel(logging.ERROR)  # its warnings would litter the TUI
    try:
        from pypdf import PdfReader

        reader = PdfReader(io.BytesIO(data))
        if reader.is_encrypted:
            _decrypt_without_password(reader)
        pages = list(reader.pages)
    except FileSkip:
        raise
    except Exception as exc:
        raise FileSkip("error", f"cannot read PDF: the file is damaged or not a PDF "
                       f"({_short(exc)}); re-export or re-download it", "damaged") from None
    parts: list[str] = []
    blocks: list[Block] = []
    pos = 0
    for number, page in enumerate(pages, start=1):
        try:
            text = (page.extract_text() or "").replace("\r\n", "\n").replace("\x00", "")
        except Exception:  # one bad page must not lose the others
            text = ""
        text = text.strip()
        if not text:
            continue
        if parts:
            parts.append("\n\n")
            pos += 2
        page_blocks = _paragraphs(text, pos, page=number)
        blocks.extend(page_blocks or [Block(pos, pos + len(text), "text", (), number)])
        parts.append(text)
        pos += len(text)
    if not blocks:
        raise FileSkip("skipped", "PDF has no text layer (scanned pages?); run OCR on it "
                       "(for example `ocrmypdf in.pdf out.pdf`) to index it", "no_text")
    return ParsedDoc("".join(parts), blocks, has_lines=False)


def _decrypt_without_password(reader) -> None:  # noqa: ANN001 - pypdf.PdfReader
    """Open an encrypted PDF with the empty user password, which is how PDFs that only
    restrict printing or copying are made; one that needs a password is reported."""
    from pypdf.errors import DependencyError

    try:
        opened = reader.decrypt("")
    except DependencyError:
        raise FileSkip("error", "PDF is encrypted with AES, and reading it needs the "
                       "`cryptography` package: `pip install cryptography`", "encrypted") from None
    except Exception as exc:
        raise FileSkip("error", f"PDF is encrypted in a way that cannot be opened "
                       f"({_short(exc)}); save an unprotected copy to index it", "encrypted") from None
    if not opened:
        raise FileSkip("error", "PDF is password-protected; save an unprotected copy "
                       "to index it", "encrypted")


def _short(exc: BaseException) -> str:
    msg = str(exc).strip().splitlines()[0] if str(exc).strip() else type(exc).__name__
    return msg[:160]
