"""OpenDocument (LibreOffice): text (.odt) by heading path, spreadsheets (.ods) by sheet
and rows, presentations (.odp) by slide. Read from the zip's content.xml with the
standard library's XML parser (no extra package)."""

from __future__ import annotations

import io
import zipfile
from xml.etree import ElementTree as ET

from indexer.documents import DocBuilder, ParsedDoc, set_heading, short
from indexer.parse_ooxml import ZipFormat, damaged_zip, slide_heading, zip_container_problem
from indexer.reading import FileSkip

NS = {
    "office": "urn:oasis:names:tc:opendocument:xmlns:office:1.0",
    "text": "urn:oasis:names:tc:opendocument:xmlns:text:1.0",
    "table": "urn:oasis:names:tc:opendocument:xmlns:table:1.0",
    "draw": "urn:oasis:names:tc:opendocument:xmlns:drawing:1.0",
    "presentation": "urn:oasis:names:tc:opendocument:xmlns:presentation:1.0",
    "manifest": "urn:oasis:names:tc:opendocument:xmlns:manifest:1.0",
}
_FORMATS = {
    ".odt": ZipFormat("ODT", ".odt", "an OpenDocument text", "content.xml",
                      "an old binary Word (.doc) file", "LibreOffice Writer"),
    ".ods": ZipFormat("ODS", ".ods", "an OpenDocument spreadsheet", "content.xml",
                      "an old binary Excel (.xls) file", "LibreOffice Calc"),
    ".odp": ZipFormat("ODP", ".odp", "an OpenDocument presentation", "content.xml",
                      "an old binary PowerPoint (.ppt) file", "LibreOffice Impress"),
}
ROWS_PER_UNIT = 20


def _q(name: str) -> str:
    prefix, local = name.split(":")
    return f"{{{NS[prefix]}}}{local}"


def _text(el: ET.Element) -> str:
    """An element's text with <text:s/>, tabs and line breaks as spaces; notes left out."""
    out: list[str] = []

    def walk(e: ET.Element) -> None:
        if e.tag in (_q("text:note"), _q("office:annotation")):
            return
        if e.text:
            out.append(e.text)
        for child in e:
            if child.tag in (_q("text:s"), _q("text:tab"), _q("text:line-break")):
                out.append(" ")
            walk(child)
            if child.tail:
                out.append(child.tail)
    walk(el)
    return " ".join("".join(out).split())


def parse_odf(data: bytes, *, ext: str) -> ParsedDoc:
    fmt = _FORMATS[ext]
    problem = zip_container_problem(data, fmt)
    if problem is not None:
        raise problem
    try:
        with zipfile.ZipFile(io.BytesIO(data)) as archive:
            if _encrypted(archive):
                raise FileSkip("error", f"cannot read {fmt.label}: the document is "
                               "password-protected; save an unprotected copy to index it",
                               "encrypted")
            content = archive.read("content.xml")
        root = ET.fromstring(content)
    except FileSkip:
        raise
    except (zipfile.BadZipFile, EOFError, OSError) as exc:
        raise damaged_zip(exc, fmt) from None
    except Exception as exc:   # XML that does not parse: a truncated or broken file
        raise FileSkip("error", f"cannot read {fmt.label}: its content.xml is damaged "
                       f"({short(exc)}); re-save it from {fmt.app}", "damaged") from None
    body = root.find(_q("office:body"))
    if body is None:
        return ParsedDoc("", [], has_lines=False)
    out = DocBuilder()
    if ext == ".odt":
        _odt(body, out)
    elif ext == ".ods":
        _ods(body, out)
    else:
        _odp(body, out)
    return out.doc()


def _encrypted(archive: zipfile.ZipFile) -> bool:
    try:
        manifest = archive.read("META-INF/manifest.xml")
    except KeyError:
        return False
    return b"encryption-data" in manifest


def _odt(body: ET.Element, out: DocBuilder) -> None:
    stack: list[tuple[int, str]] = []
    path: tuple[str, ...] = ()
    for el in body.iter():
        if el.tag == _q("text:h"):
            title = _text(el)
            if title:
                level = int(el.get(_q("text:outline-level"), "1") or 1)
                path = set_heading(stack, level, title)
                out.add(title, "heading", path)
        elif el.tag == _q("text:p"):
            out.add(_text(el), "text", path)


def _ods(body: ET.Element, out: DocBuilder) -> None:
    from openpyxl.utils import get_column_letter   # only its column letters

    unit = 0
    for sheet in body.iter(_q("table:table")):
        name = sheet.get(_q("table:name"), "Sheet")
        rows: list[tuple[int, int, int, str]] = []
        r = 0
        for row in sheet.iter(_q("table:table-row")):
            repeat = min(int(row.get(_q("table:number-rows-repeated"), "1") or 1), 10_000)
            cells, c = [], 0
            for cell in row:
                if cell.tag not in (_q("table:table-cell"), _q("table:covered-table-cell")):
                    continue
                span = min(int(cell.get(_q("table:number-columns-repeated"), "1") or 1), 1024)
                value = " ".join(_text(p) for p in cell.iter(_q("text:p"))).strip()
                c += 1
                if value:
                    cells.append((c, value))
                c += span - 1
            r += 1
            if cells:
                rows.append((r, cells[0][0], cells[-1][0], " | ".join(v for _, v in cells)))
            r += repeat - 1
        for i in range(0, len(rows), ROWS_PER_UNIT):
            group = rows[i:i + ROWS_PER_UNIT]
            unit += 1
            cells_range = (f"{get_column_letter(min(g[1] for g in group))}{group[0][0]}:"
                           f"{get_column_letter(max(g[2] for g in group))}{group[-1][0]}")
            for _, _, _, line in group:
                out.add(line, "text", (name, cells_range), unit=unit)


def _odp(body: ET.Element, out: DocBuilder) -> None:
    for number, page in enumerate(body.iter(_q("draw:page")), start=1):
        title = ""
        for frame in page.iter(_q("draw:frame")):
            if frame.get(_q("presentation:class")) == "title":
                title = " ".join(_text(p) for p in frame.iter(_q("text:p")))
                break
        head = (slide_heading(number, title),)
        out.add(title, "heading", head, unit=number)
        notes = page.find(_q("presentation:notes"))
        in_notes = set(notes.iter(_q("text:p"))) if notes is not None else set()
        for p in page.iter(_q("text:p")):
            if p in in_notes:
                continue
            text = _text(p)
            if text and text != title:
                out.add(text, "text", head, unit=number)
        if notes is not None:
            note = "\n".join(_text(p) for p in notes.iter(_q("text:p")))
            out.add(note, "text", head + ("Notes",), unit=number)
