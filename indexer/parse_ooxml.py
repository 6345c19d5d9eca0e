"""Office Open XML: Word (.docx), PowerPoint (.pptx) and Excel (.xlsx) files."""

from __future__ import annotations

import io
import re
from dataclasses import dataclass

from indexer.documents import Block, DocBuilder, ParsedDoc, set_heading, short
from indexer.reading import FileSkip


# --- the zip container (shared with OpenDocument and EPUB) --------------------------------

_OLE_MAGIC = b"\xd0\xcf\x11\xe0\xa1\xb1\x1a\xe1"   # Compound File: .doc, or an encrypted .docx


@dataclass(frozen=True)
class ZipFormat:
    """How one zip-based format is named in reasons, and the member every file has."""

    label: str          # "DOCX"
    ext: str            # ".docx"
    what: str           # "a Word document"
    member: str         # "word/document.xml"
    old: str            # "an old binary Word (.doc) file"
    app: str            # "Word or LibreOffice"


DOCX = ZipFormat("DOCX", ".docx", "a Word document", "word/document.xml",
                 "an old binary Word (.doc) file", "Word or LibreOffice")
PPTX = ZipFormat("PPTX", ".pptx", "a PowerPoint presentation", "ppt/presentation.xml",
                 "an old binary PowerPoint (.ppt) file", "PowerPoint or LibreOffice")
XLSX = ZipFormat("XLSX", ".xlsx", "an Excel workbook", "xl/workbook.xml",
                 "an old binary Excel (.xls) file", "Excel or LibreOffice")


def zip_container_problem(data: bytes, fmt: ZipFormat) -> FileSkip | None:
    """An OOXML, OpenDocument or EPUB file is a zip archive; say what the file is
    instead when it is not one (encrypted, an old binary file, damaged, something else)."""
    import zipfile

    if data.startswith(_OLE_MAGIC):
        if "EncryptionInfo".encode("utf-16-le") in data:
            return FileSkip("error", f"cannot read {fmt.label}: the document is password-protected; "
                            "save an unprotected copy to index it", "encrypted")
        return FileSkip("error", f"cannot read {fmt.label}: this is {fmt.old} with a {fmt.ext} "
                        f"name; open it in {fmt.app} and save it as {fmt.ext}", "damaged")
    if not data.startswith(b"PK"):
        return FileSkip("error", f"cannot read {fmt.label}: not {fmt.what} "
                        f"(a {fmt.ext} is a zip archive and this file is not one); re-save it "
                        f"from {fmt.app} as {fmt.ext}", "damaged")
    try:
        with zipfile.ZipFile(io.BytesIO(data)) as archive:   # reads the directory only
            names = set(archive.namelist())
    except Exception as exc:
        return damaged_zip(exc, fmt)
    if fmt.member not in names:
        return FileSkip("error", f"cannot read {fmt.label}: a zip archive but not {fmt.what} "
                        f"(no {fmt.member}); re-save it from {fmt.app} as {fmt.ext}", "damaged")
    return None


def damaged_zip(exc: BaseException, fmt: ZipFormat = DOCX) -> FileSkip:
    return FileSkip("error", f"cannot read {fmt.label}: the zip archive is damaged or truncated "
                    f"({short(exc)}), as after an interrupted download or copy; copy it "
                    f"again or re-save it from {fmt.app}", "damaged")


def _open_failed(exc: BaseException, fmt: ZipFormat) -> FileSkip:
    import zipfile
    import zlib

    if isinstance(exc, (zipfile.BadZipFile, zlib.error, EOFError)):
        return damaged_zip(exc, fmt)
    return FileSkip("error", f"cannot read {fmt.label}: not a valid {fmt.what.split(' ', 1)[1]} "
                    f"({short(exc)}); re-save it from {fmt.app}", "damaged")


# --- DOCX ------------------------------------------------------------------------------

def parse_docx(data: bytes) -> ParsedDoc:
    problem = zip_container_problem(data, DOCX)
    if problem is not None:
        raise problem
    try:
        import docx
        from docx.table import Table
        from docx.text.paragraph import Paragraph

        document = docx.Document(io.BytesIO(data))
    except Exception as exc:
        raise _open_failed(exc, DOCX) from None
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
            path = set_heading(stack, level, text)
        parts.append(text)
        blocks.append(Block(pos, pos + len(text), "heading" if level else "text", path))
        pos += len(text)
    return ParsedDoc("".join(parts), blocks, has_lines=False)   # a .docx has no lines to open at


# --- PPTX ------------------------------------------------------------------------------

def slide_heading(number: int, title: str) -> str:
    return f"Slide {number}: {title}" if title else f"Slide {number}"


def parse_pptx(data: bytes) -> ParsedDoc:
    """One unit per slide, named "Slide N: its title"; the speaker notes follow the slide's
    text under "Notes". Cited by slide: the title says which one."""
    problem = zip_container_problem(data, PPTX)
    if problem is not None:
        raise problem
    try:
        import pptx

        deck = pptx.Presentation(io.BytesIO(data))
        slides = list(deck.slides)
    except Exception as exc:
        raise _open_failed(exc, PPTX) from None
    out = DocBuilder()
    for number, slide in enumerate(slides, start=1):
        try:
            title_shape = slide.shapes.title
            title = " ".join((title_shape.text_frame.text if title_shape is not None else "").split())
            head = (slide_heading(number, title),)
            out.add(title, "heading", head, unit=number)
            title_id = title_shape.shape_id if title_shape is not None else None
            for shape in _shapes(slide.shapes):
                if shape.shape_id == title_id:   # python-pptx hands out new proxies: compare ids
                    continue
                if getattr(shape, "has_table", False) and shape.has_table:
                    for row in shape.table.rows:
                        cells = [" ".join(c.text.split()) for c in row.cells]
                        out.add(" | ".join(c for c in cells if c), "text", head, unit=number)
                elif getattr(shape, "has_text_frame", False) and shape.has_text_frame:
                    for para in shape.text_frame.paragraphs:
                        out.add(para.text, "text", head, unit=number)
            if slide.has_notes_slide:
                notes = slide.notes_slide.notes_text_frame
                if notes is not None and notes.text.strip():
                    out.add(notes.text, "text", head + ("Notes",), unit=number, split=True)
        except Exception:   # one odd slide must not lose the others
            continue
    return out.doc()


def _shapes(shapes):  # noqa: ANN001, ANN202 - python-pptx shape collections
    """Every shape, those inside groups too, in reading order."""
    for shape in shapes:
        if getattr(shape, "shape_type", None) == 6:   # MSO_SHAPE_TYPE.GROUP
            yield from _shapes(shape.shapes)
        else:
            yield shape


# --- XLSX ------------------------------------------------------------------------------

ROWS_PER_UNIT = 20   # rows cited together: "Budget > A1:F20"


def parse_xlsx(data: bytes) -> ParsedDoc:
    """Cell values (never formulas: the values Excel last saved), a row per line
    ("a | b | c"), read row by row (openpyxl's read-only mode). Every ROWS_PER_UNIT rows
    of a sheet are one unit, named by the sheet and the cell range they cover."""
    problem = zip_container_problem(data, XLSX)
    if problem is not None:
        raise problem
    try:
        import openpyxl

        book = openpyxl.load_workbook(io.BytesIO(data), read_only=True, data_only=True)
    except Exception as exc:
        raise _open_failed(exc, XLSX) from None
    from openpyxl.utils import get_column_letter

    out = DocBuilder()
    unit = 0
    try:
        for sheet in book.worksheets:
            rows: list[tuple[int, int, int, str]] = []   # (row, first col, last col, line)
            try:
                first_row = sheet.min_row or 1
                first_col = sheet.min_column or 1
                # ask for the rows from the first used cell, so the numbering matches
                # (iter_rows() alone starts at A1 whatever the sheet's dimensions say)
                for r, values in enumerate(sheet.iter_rows(min_row=first_row, min_col=first_col,
                                                           values_only=True), start=first_row):
                    cols = [(c, v) for c, v in enumerate(values, start=first_col)
                            if v is not None and str(v).strip()]
                    if cols:
                        line = " | ".join(" ".join(str(v).split()) for _, v in cols)
                        rows.append((r, cols[0][0], cols[-1][0], line))
            except Exception:   # a damaged sheet: keep the rows read so far and the others
                pass
            for i in range(0, len(rows), ROWS_PER_UNIT):
                group = rows[i:i + ROWS_PER_UNIT]
                unit += 1
                cells = (f"{get_column_letter(min(g[1] for g in group))}{group[0][0]}:"
                         f"{get_column_letter(max(g[2] for g in group))}{group[-1][0]}")
                head = (sheet.title, cells)
                for _, _, _, line in group:
                    out.add(line, "text", head, unit=unit)
    finally:
        book.close()
    return out.doc()
