"""PDF: the text layer of each page; a page without one can be read by OCR (optional)."""

from __future__ import annotations

import io
import logging

from indexer.documents import Block, ParsedDoc, paragraphs, short
from indexer.reading import FileSkip


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
                       f"({short(exc)}); re-export or re-download it", "damaged") from None
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
        page_blocks = paragraphs(text, pos, page=number)
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
                       f"({short(exc)}); save an unprotected copy to index it", "encrypted") from None
    if not opened:
        raise FileSkip("error", "PDF is password-protected; save an unprotected copy "
                       "to index it", "encrypted")
