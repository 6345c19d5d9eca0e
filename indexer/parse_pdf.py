"""PDF: the text layer of each page; a page without one can be read by OCR (optional)."""

from __future__ import annotations

import io
import logging

from indexer.documents import Block, ParsedDoc, paragraphs, short
from indexer.reading import FileSkip


# --- PDF -------------------------------------------------------------------------------

OCR_HOW = ('to read it by OCR: `pip install "localrag[ocr]"`, then '
           '`localrag settings --set ocr true` and index again')


OCR_MISSING = "scanned: no text layer, and OCR is on but its package is not installed"


def scanned_reason() -> str:
    return f"scanned: no text layer (the pages are images); {OCR_HOW}"


def ocr_may_read(reason: str) -> bool:
    """Whether a scan skipped for this reason is worth reading again once OCR is on: it
    was skipped with OCR off, or with its package missing (then installed, as the reason
    said). One that OCR already read and found blank is not read again."""
    return reason.startswith(scanned_reason()) or reason.startswith(OCR_MISSING)


LIGATURES = str.maketrans({"\ufb00": "ff", "\ufb01": "fi", "\ufb02": "fl", "\ufb03": "ffi",
                           "\ufb04": "ffl", "\ufb05": "st", "\ufb06": "st"})
"""Typeset ligatures as the letters they join: a PDF's text layer often keeps the glyph
(U+FB01 for "fi"), and then a search for "configuration" would never match the
"conﬁguration" of fontconfig's or bzip2's manual (bench/bench_formats.py found it)."""


def parse_pdf(data: bytes, *, ocr: bool = False) -> ParsedDoc:
    """Text layer of each page; blocks never span pages (chunks inherit that). `ocr`:
    pages without a text layer are read by OCR (rapidocr, the optional `[ocr]` extra)."""
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
    reader_ocr: _Ocr | None = None
    for number, page in enumerate(pages, start=1):
        try:
            text = (page.extract_text() or "").replace("\r\n", "\n").replace("\x00", "")
            text = text.translate(LIGATURES)
        except Exception:  # one bad page must not lose the others
            text = ""
        text = text.strip()
        if not text and ocr:
            if reader_ocr is None:
                reader_ocr = _Ocr(data)
            text = reader_ocr.page_text(number - 1)
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
        if ocr and reader_ocr is not None and reader_ocr.missing:
            raise FileSkip("skipped", f"{OCR_MISSING}: `pip install \"localrag[ocr]\"`", "no_text")
        if ocr:
            raise FileSkip("skipped", "scanned: no text layer, and OCR found no text on its "
                           "pages", "no_text")
        raise FileSkip("skipped", scanned_reason(), "no_text")
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


class _Ocr:
    """OCR of a PDF's pages: pypdfium2 renders a page (Apache-2.0 / BSD), rapidocr reads
    it with its bundled ONNX models (Apache-2.0); both from the optional `[ocr]` extra.
    Off by default: 13-17 s for a full page on two cores (README)."""

    DPI = 200

    def __init__(self, data: bytes) -> None:
        self.missing = False
        self._pdf = self._engine = None
        try:
            import numpy  # noqa: F401
            import pypdfium2
            from rapidocr_onnxruntime import RapidOCR
        except Exception:
            self.missing = True
            return
        logging.getLogger("RapidOCR").setLevel(logging.ERROR)
        try:
            self._pdf = pypdfium2.PdfDocument(data)
            self._engine = RapidOCR()
        except Exception:
            self._pdf = None

    def page_text(self, index: int) -> str:
        if self._pdf is None or self._engine is None:
            return ""
        try:
            import numpy as np

            image = self._pdf[index].render(scale=self.DPI / 72).to_pil().convert("RGB")
            found, _ = self._engine(np.array(image))
        except Exception:   # one page OCR cannot read loses nothing else
            return ""
        # rapidocr: [box, text, score] per line, top to bottom
        return "\n".join(str(line[1]) for line in (found or []) if line[1].strip())
