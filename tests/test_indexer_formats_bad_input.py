"""Bad input in the new formats: corrupt, truncated, encrypted, wrong extension, huge.
Each becomes a reason naming the problem and the fix; none raises out of the parser,
blocks the run or loses what is indexed."""

from __future__ import annotations

import io
import json
import mailbox
import os
import sys
import zipfile

import pytest

from indexer.parsers import parse_bytes
from indexer.reading import FileSkip
from indexer_corpus import make_pdf
from test_indexer_formats import make_epub, make_pptx, message

OLE_ENCRYPTED = b"\xd0\xcf\x11\xe0\xa1\xb1\x1a\xe1" + b"\x00" * 64 + "EncryptionInfo".encode("utf-16-le") + b"\x00" * 512
OLE_OLD = b"\xd0\xcf\x11\xe0\xa1\xb1\x1a\xe1" + b"\x00" * 1024


def xlsx_bytes() -> bytes:
    import openpyxl

    book = openpyxl.Workbook()
    book.active.append(["Item", "Cost"])
    out = io.BytesIO()
    book.save(out)
    return out.getvalue()


def odt_bytes() -> bytes:
    from odf.opendocument import OpenDocumentText
    from odf.text import P

    doc = OpenDocumentText()
    doc.text.addElement(P(text="A short note about the garden shed."))
    out = io.BytesIO()
    doc.write(out)
    return out.getvalue()


GOOD = {".pptx": lambda: make_pptx([("Plan", "Ship it.", "")]), ".xlsx": xlsx_bytes,
        ".odt": odt_bytes, ".epub": lambda: make_epub([("One", "The first chapter.")])}
FIXES = ("re-save", "save", "rename", "copy it again", "decrypt", "convert", "DRM-free", "open it")


def reason_of(data: bytes, ext: str) -> FileSkip:
    with pytest.raises(FileSkip) as err:
        parse_bytes(data, ext=ext, name="x" + ext)
    skip = err.value
    assert skip.reason and any(fix in skip.reason for fix in FIXES), skip.reason
    return skip


@pytest.mark.parametrize("ext", sorted(GOOD))
def test_zip_formats_corrupt_truncated_and_misnamed(ext):
    label = ext[1:].upper()
    real = GOOD[ext]()
    assert parse_bytes(real, ext=ext).blocks                         # the good one reads
    truncated = reason_of(real[: len(real) // 2], ext)               # an interrupted copy
    assert truncated.kind == "damaged" and label in truncated.reason and "truncated" in truncated.reason
    garbage = reason_of(os.urandom(4096), ext)
    assert garbage.kind == "damaged" and f"not {'an' if label[0] in 'AEIOU' else 'a'}" in garbage.reason
    misnamed = reason_of(make_pdf(["A PDF saved with the wrong name."]), ext)
    assert misnamed.kind == "damaged" and "zip archive" in misnamed.reason
    other_zip = io.BytesIO()
    with zipfile.ZipFile(other_zip, "w") as z:
        z.writestr("hello.txt", "a zip of something else")
    assert "a zip archive but not" in reason_of(other_zip.getvalue(), ext).reason


@pytest.mark.parametrize("ext", [".pptx", ".xlsx"])
def test_password_protected_office_files(ext):
    skip = reason_of(OLE_ENCRYPTED, ext)
    assert skip.kind == "encrypted" and "password-protected" in skip.reason
    old = reason_of(OLE_OLD, ext)
    assert old.kind == "damaged" and "old binary" in old.reason


def test_password_protected_odt_and_drm_epub():
    real = odt_bytes()
    src, out = zipfile.ZipFile(io.BytesIO(real)), io.BytesIO()
    with zipfile.ZipFile(out, "w") as z:
        for item in src.infolist():
            body = src.read(item)
            if item.filename == "META-INF/manifest.xml":   # what LibreOffice writes for a password
                body = body.replace(b"</manifest:manifest>",
                                    b"<manifest:encryption-data/></manifest:manifest>")
            z.writestr(item, body)
    skip = reason_of(out.getvalue(), ".odt")
    assert skip.kind == "encrypted" and "password-protected" in skip.reason
    drm = reason_of(make_epub([("One", "Locked.")], encrypt=True), ".epub")
    assert drm.kind == "encrypted" and "DRM" in drm.reason


def test_mail_notebook_and_rtf_bad_input():
    assert "not an e-mail message" in reason_of(b"just some words, no headers at all\n", ".eml").reason
    assert reason_of(os.urandom(2048).replace(b"\x00", b"") + b"\x00", ".eml").kind in ("binary", "damaged")
    pgp = message("Secret", "a@example.org", "x")
    pgp.replace_header("Content-Type", 'multipart/encrypted; protocol="application/pgp-encrypted"')
    assert reason_of(pgp.as_bytes(), ".eml").kind == "encrypted"
    assert "rename it to .eml" in reason_of(message("One", "a@x.org", "hi").as_bytes(), ".mbox").reason
    nb = json.dumps({"cells": [{"cell_type": "markdown", "source": "# T"}], "nbformat": 4,
                     "nbformat_minor": 5, "metadata": {}})
    truncated = reason_of(nb[: len(nb) // 2].encode(), ".ipynb")
    assert truncated.kind == "damaged" and "notebook" in truncated.reason
    assert "not an RTF document" in reason_of(b"plain words in a .rtf file\n", ".rtf").reason


def test_truncated_mbox_keeps_the_whole_messages(tmp_path):
    path = tmp_path / "in.mbox"
    box = mailbox.mbox(str(path))
    box.add(message("First", "a@example.org", "The first message is whole."))
    box.add(message("Second", "b@example.org", "The second one is cut " + "off " * 200))
    box.close()
    data = path.read_bytes()
    doc = parse_bytes(data[: len(data) - 400], ext=".mbox")
    assert "The first message is whole." in doc.text and "The second one is cut" in doc.text


def test_an_index_run_with_bad_files_of_every_new_format(tmp_path, make_index):
    """One run: the broken files get reasons (errors are retried next run), the good ones
    are indexed, and an mbox over the size limit is streamed and indexed anyway."""
    from indexer.options import IndexOptions

    root = tmp_path / "docs"
    root.mkdir()
    (root / "good.md").write_text("The lamprey clings to rocks in fast water.\n")
    (root / "deck.pptx").write_bytes(make_pptx([("Otters", "Otters hold hands while sleeping.", "")]))
    (root / "broken.pptx").write_bytes(GOOD[".pptx"]()[:3000])
    (root / "locked.xlsx").write_bytes(OLE_ENCRYPTED)
    (root / "notes.odt").write_text("text with the wrong extension")
    (root / "book.epub").write_bytes(make_epub([("One", "x")], encrypt=True))
    (root / "scan.pdf").write_bytes(make_pdf([""]))
    box = mailbox.mbox(str(root / "big.mbox"))
    blob = os.urandom(300_000)
    for i in range(6):
        box.add(message(f"Report {i}", "x@example.org", f"Badgers dig setts, report {i}.",
                        attach=(f"d{i}.bin", blob)))
    box.close()
    assert (root / "big.mbox").stat().st_size > 2_000_000
    opts = IndexOptions(max_file_bytes=1_000_000, chunk_words=60, batch_size=16)
    idx = make_index(opts)
    idx.add_root(root)
    report = idx.update()
    got = {os.path.basename(p): (s, r, k) for p, s, r, k in idx.store.conn.execute(
        "SELECT path, state, reason, reason_kind FROM files").fetchall()}
    for name in ("good.md", "deck.pptx", "big.mbox"):
        assert got[name][0] == "indexed", (name, got[name])
    assert got["broken.pptx"][2] == "damaged" and "PPTX" in got["broken.pptx"][1]
    assert got["locked.xlsx"][2] == "encrypted"
    assert got["notes.odt"][2] == "damaged" and "ODT" in got["notes.odt"][1]
    assert got["book.epub"][2] == "encrypted"
    assert got["scan.pdf"][2] == "no_text" and 'localrag[ocr]' in got["scan.pdf"][1]
    assert report.added == 3
    hits = idx.search("Which report says badgers dig setts?", k=3)
    assert hits and hits[0].path.endswith("big.mbox") and hits[0].start_line is not None


def test_files_once_unsupported_and_scans_once_skipped_are_read_when_they_can_be(tmp_path, make_index):
    """An index made before localrag read .pptx (or with OCR off): the next run reads what
    it now can, though the files did not change."""
    from indexer.options import IndexOptions

    root = tmp_path / "docs"
    root.mkdir()
    (root / "deck.pptx").write_bytes(make_pptx([("Otters", "Otters hold hands while sleeping.", "")]))
    (root / "scan.pdf").write_bytes(make_pdf([""]))
    old = make_index(IndexOptions(extensions=[".md", ".pdf"], chunk_words=60))
    old.add_root(root)
    old.update()
    old.close()
    new = make_index(IndexOptions(chunk_words=60, ocr=True))
    report = new.update()
    got = {os.path.basename(p): (s, r) for p, s, r in new.store.conn.execute(
        "SELECT path, state, reason FROM files").fetchall()}
    assert got["deck.pptx"][0] == "indexed" and report.updated == 1
    assert got["scan.pdf"][0] == "skipped" and "OCR" in got["scan.pdf"][1]
    assert not got["scan.pdf"][1].startswith("scanned: no text layer (")   # read again, with OCR
    assert new.update().unchanged == 2                                         # and then left alone


def test_a_scan_skipped_for_a_missing_ocr_package_is_read_once_it_is_installed(
        tmp_path, make_index, monkeypatch):
    """The reason says `pip install "localrag[ocr]"`; after that the unchanged PDF is read."""
    pytest.importorskip("rapidocr_onnxruntime")   # the [ocr] extra; [test] installs it
    from indexer.options import IndexOptions

    root = tmp_path / "docs"
    root.mkdir()
    (root / "scan.pdf").write_bytes(make_pdf([""]))
    idx = make_index(IndexOptions(chunk_words=60, ocr=True))
    idx.add_root(root)
    monkeypatch.setitem(sys.modules, "rapidocr_onnxruntime", None)   # not installed: import fails
    idx.update()
    (reason,) = idx.store.conn.execute("SELECT reason FROM files").fetchone()
    assert "its package is not installed" in reason and 'pip install "localrag[ocr]"' in reason
    monkeypatch.delitem(sys.modules, "rapidocr_onnxruntime")           # installed now
    assert idx.update().unchanged == 0
    (reason,) = idx.store.conn.execute("SELECT reason FROM files").fetchone()
    assert reason.startswith("scanned: no text layer, and OCR found no text")   # read by OCR
    assert idx.update().unchanged == 1                                           # then left alone
