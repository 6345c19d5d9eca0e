"""Which parser reads a file, by its extension: a dispatcher only.

Every parser (indexer/parse_*.py, one module per format family) returns a ParsedDoc
(indexer/documents.py): the extracted text plus blocks that point into it by character
offsets. The chunker only ever cuts at those offsets, so every chunk knows its exact
place: lines for text formats, page for PDF, the slide, sheet rows, message or cell for
the others (its heading path names it, Block.line gives its line in the file where there
is one). Bad input becomes a FileSkip with a reason that names the fix.
"""

from __future__ import annotations

from indexer.code_prose import DATA_EXT
from indexer.documents import Block, ParsedDoc  # noqa: F401 - re-exported for callers
from indexer.parse_html import parse_html
from indexer.parse_ooxml import parse_docx, parse_pptx, parse_xlsx
from indexer.parse_pdf import parse_pdf
from indexer.parse_text import parse_code, parse_markdown, parse_plain, parse_rst
from indexer.reading import decode_text

MARKDOWN_EXT = {".md", ".markdown", ".mdown", ".mkd"}
RST_EXT = {".rst", ".rest"}
HTML_EXT = {".html", ".htm", ".xhtml"}
PLAIN_EXT = {".txt", ".text", ".org", ".adoc", ".tex", ".log", ".csv", ""}
MAIL_EXT = {".eml", ".mbox"}
ODF_EXT = {".odt", ".ods", ".odp"}
STREAMED_EXT = {".mbox"}     # read from the file message by message, never whole

# extension -> the parser's name, as `localrag index --dry-run` shows it
_NAMED = {
    ".pdf": "pdf", ".docx": "docx", ".pptx": "pptx", ".xlsx": "xlsx", ".odt": "odt",
    ".ods": "ods", ".odp": "odp", ".epub": "epub", ".rtf": "rtf", ".ipynb": "notebook",
    ".eml": "email", ".mbox": "mbox",
}


def parser_name(ext: str, name: str = "") -> str:
    """The parser that reads a file with this extension (for --dry-run)."""
    if ext in _NAMED:
        return _NAMED[ext]
    if ext in HTML_EXT:
        return "html"
    if ext in MARKDOWN_EXT:
        return "markdown"
    if ext in RST_EXT:
        return "rst"
    if ext in PLAIN_EXT:
        return "text (markup sniffed)" if ext == ".txt" else "text"
    return "code"


def parse_bytes(data: bytes, *, ext: str, name: str = "", ocr: bool = False,
                depth: int = 0) -> ParsedDoc:
    """Dispatch on the extension; raises FileSkip with a reason a person can act on.
    `name` (the file's name) tells a `.txt` file's markup when it says it (`vm.rst.txt`).
    `ocr`: read PDF pages without a text layer by OCR (the `ocr` setting). `depth`: how
    deep inside other documents this one is (a mail's attachment), so nesting ends."""
    if ext == ".pdf":
        return parse_pdf(data, ocr=ocr)
    if ext == ".docx":
        return parse_docx(data)
    if ext == ".pptx":
        return parse_pptx(data)
    if ext == ".xlsx":
        return parse_xlsx(data)
    if ext in ODF_EXT:
        from indexer.parse_odf import parse_odf

        return parse_odf(data, ext=ext)
    if ext == ".epub":
        from indexer.parse_epub import parse_epub

        return parse_epub(data)
    if ext in MAIL_EXT:
        from indexer.parse_mail import parse_eml, parse_mbox_bytes

        if ext == ".mbox":
            return parse_mbox_bytes(data, ocr=ocr, depth=depth, parse=parse_bytes)
        return parse_eml(data, ocr=ocr, depth=depth, parse=parse_bytes)
    if ext == ".rtf":
        from indexer.parse_rtf import parse_rtf

        return parse_rtf(data)
    text = decode_text(data, ext=ext)
    if ext == ".ipynb":
        from indexer.parse_notebook import parse_notebook

        return parse_notebook(text)
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
    return code_doc(text, ext)


def code_doc(text: str, ext: str) -> ParsedDoc:
    """A file the code parser reads: a program's chunks are embedded by their prose, a
    data file's (JSON, YAML, ...) as they are (indexer/code_prose.py)."""
    doc = parse_code(text)
    doc.prose_embedding = ext not in DATA_EXT
    return doc


def parse_path(path: str, *, ext: str, ocr: bool = False) -> ParsedDoc:
    """A file of a STREAMED_EXT format, read from its path piece by piece."""
    from indexer.parse_mail import parse_mbox_file

    return parse_mbox_file(path, ocr=ocr, parse=parse_bytes)
