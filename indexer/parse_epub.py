"""EPUB e-books: the chapters in reading order (the package's spine), each read by the
HTML parser; cited by chapter and heading. A zip archive read with the standard library
(EbookLib is AGPL, so not used)."""

from __future__ import annotations

import io
import posixpath
import zipfile
from urllib.parse import unquote
from xml.etree import ElementTree as ET

from indexer.documents import DocBuilder, ParsedDoc, short
from indexer.parse_ooxml import ZipFormat, damaged_zip, zip_container_problem
from indexer.reading import FileSkip, decode_text

EPUB = ZipFormat("EPUB", ".epub", "an EPUB e-book", "META-INF/container.xml",
                 "an Office document, not an e-book,", "Calibre")
_OPF = "{http://www.idpf.org/2007/opf}"
_CONTAINER = "{urn:oasis:names:tc:opendocument:xmlns:container}"


def _damaged(what: str) -> FileSkip:
    return FileSkip("error", f"cannot read EPUB: {what}; convert it again (for example with "
                    "Calibre's `ebook-convert book.epub fixed.epub`)", "damaged")


def parse_epub(data: bytes) -> ParsedDoc:
    problem = zip_container_problem(data, EPUB)
    if problem is not None:
        raise problem
    try:
        archive = zipfile.ZipFile(io.BytesIO(data))
        names = set(archive.namelist())
        container = ET.fromstring(archive.read("META-INF/container.xml"))
        rootfile = container.find(f".//{_CONTAINER}rootfile")
        if rootfile is None or not rootfile.get("full-path"):
            raise _damaged("META-INF/container.xml names no package file")
        opf_path = rootfile.get("full-path", "")
        opf = ET.fromstring(archive.read(opf_path))
    except FileSkip:
        raise
    except (zipfile.BadZipFile, EOFError, OSError) as exc:
        raise damaged_zip(exc, EPUB) from None
    except Exception as exc:
        raise _damaged(f"its package is damaged ({short(exc)})") from None
    encrypted = _encrypted_files(archive, names)
    base = posixpath.dirname(opf_path)
    manifest = {item.get("id"): item for item in opf.iter(f"{_OPF}item")}
    spine = [manifest.get(ref.get("idref")) for ref in opf.iter(f"{_OPF}itemref")]
    # hrefs are URLs: "Chapter%201.xhtml" is the zip member "Chapter 1.xhtml"
    chapters = [posixpath.normpath(posixpath.join(base, unquote(item.get("href", "").split("#")[0])))
                for item in spine if item is not None and item.get("href")]
    if chapters and all(c in encrypted for c in chapters):
        raise FileSkip("error", "cannot read EPUB: the e-book is DRM-protected (its chapters "
                       "are encrypted); only a DRM-free copy can be indexed", "encrypted")
    from indexer.parse_html import parse_html

    out = DocBuilder()
    for number, chapter in enumerate(chapters, start=1):
        if chapter in encrypted or chapter not in names:
            continue
        try:
            html = decode_text(archive.read(chapter), ext=".xhtml")
            doc = parse_html(html, main_content=False)   # a chapter is all content
        except Exception:   # one damaged chapter loses nothing else
            continue
        label = f"Chapter {number}"
        for block in doc.blocks:
            out.add(doc.text[block.start:block.end], block.kind,
                    (label,) + block.heading_path, unit=number)
    return out.doc()


def _encrypted_files(archive: zipfile.ZipFile, names: set[str]) -> set[str]:
    """Files that META-INF/encryption.xml lists (fonts are often only obfuscated)."""
    if "META-INF/encryption.xml" not in names:
        return set()
    try:
        root = ET.fromstring(archive.read("META-INF/encryption.xml"))
    except Exception:
        return set()
    return {ref.get("URI", "") for ref in root.iter()
            if ref.tag.endswith("CipherReference") and ref.get("URI")}
