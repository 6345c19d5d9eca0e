"""Bad input the indexer meets in real folders: special files, broken Word documents,
encrypted PDFs, UTF-16 text, names that are not UTF-8, files that vanish or shrink while
read. Each gets a reason (and its kind); none blocks or ends a run; the rest is indexed.
"""

from __future__ import annotations

import builtins
import io
import json
import os
import socket
import stat
import subprocess
import sys
import threading
import zipfile
from pathlib import Path

import pytest

from indexer import reading
from indexer.errors import IndexerError
from indexer_corpus import make_docx, make_pdf

ROOT = Path(__file__).resolve().parents[1]


def rows(idx) -> dict[str, tuple[str, str | None, str | None]]:
    """basename -> (state, reason, reason_kind) from the store itself."""
    got = idx.store.conn.execute("SELECT path, state, reason, reason_kind FROM files").fetchall()
    return {os.path.basename(p): (s, r, k) for p, s, r, k in got}


def update_within(idx, seconds: float = 120, **kwargs):
    """idx.update() in a thread: a run that blocks (say on a FIFO) fails the test instead
    of hanging it."""
    out: dict[str, object] = {}

    def target() -> None:
        try:
            out["report"] = idx.update(**kwargs)
        except BaseException as exc:   # noqa: BLE001 - handed to the test below
            out["error"] = exc

    thread = threading.Thread(target=target, daemon=True)
    thread.start()
    thread.join(seconds)
    assert not thread.is_alive(), "the index run blocked"
    if "error" in out:
        raise out["error"]  # type: ignore[misc]
    return out["report"]


# --- FIFOs, sockets, devices ------------------------------------------------------------

def test_fifos_sockets_and_devices_are_never_opened(tmp_path, make_index, monkeypatch):
    root = tmp_path / "docs"
    root.mkdir()
    (root / "good.md").write_text("The lamprey clings to rocks in fast water.\n")
    os.mkfifo(root / "pipe.md")              # opening it for reading would wait forever
    os.mkfifo(root / ".gitignore")           # the walker reads .gitignore files too
    server = socket.socket(socket.AF_UNIX)
    server.bind(str(root / "agent.sock"))
    device = None
    try:
        os.mknod(root / "null.txt", stat.S_IFCHR | 0o600, os.makedev(1, 3))   # /dev/null's
        device = "null.txt"
    except (PermissionError, OSError):
        pass   # creating a device node needs CAP_MKNOD; read_snapshot is checked on /dev below
    opened: list[str] = []
    real_open = builtins.open

    def recording_open(path, *args, **kwargs):
        opened.append(os.fspath(path))
        return real_open(path, *args, **kwargs)

    monkeypatch.setattr(reading, "open", recording_open, raising=False)
    idx = make_index()
    idx.add_root(root)
    report = update_within(idx)
    got = rows(idx)
    assert got["good.md"][0] == "indexed" and report.added == 1
    assert got["pipe.md"][0] == "skipped" and got["pipe.md"][2] == "special_file"
    assert "named pipe (FIFO)" in got["pipe.md"][1] and "never opened" in got["pipe.md"][1]
    assert got["agent.sock"][0] == "skipped" and "socket" in got["agent.sock"][1]
    if device:
        assert got[device][0] == "skipped" and "character device" in got[device][1]
    assert opened == [str(root / "good.md")]
    server.close()

    # The real devices: classified from stat, never read (/dev/zero would never end).
    for dev in ("/dev/null", "/dev/zero"):
        with pytest.raises(reading.FileSkip) as info:
            reading.read_snapshot(dev, max_bytes=1000)
        assert info.value.kind == "special_file" and "character device" in info.value.reason

    # A FIFO (or a device) is never added as a root either.
    with pytest.raises(IndexerError, match="pipe, device or socket"):
        idx.add_root(root / "pipe.md")


def test_file_swapped_for_a_fifo_after_listing_does_not_block(tmp_path, make_index, monkeypatch):
    root = tmp_path / "docs"
    root.mkdir()
    target = root / "swapped.md"
    target.write_text("A regular file when listed.\n")
    (root / "stays.md").write_text("The nightjar hunts moths at dusk.\n")
    real_open = builtins.open

    def swap_then_open(path, *args, **kwargs):
        if os.fspath(path) == str(target) and not stat.S_ISFIFO(os.lstat(target).st_mode):
            target.unlink()
            os.mkfifo(target)     # between read_snapshot's stat and its open
        return real_open(path, *args, **kwargs)

    monkeypatch.setattr(reading, "open", swap_then_open, raising=False)
    idx = make_index()
    idx.add_root(root)
    update_within(idx, 60)
    got = rows(idx)
    assert got["stays.md"][0] == "indexed"
    assert got["swapped.md"][0] == "skipped" and "named pipe" in got["swapped.md"][1]


# --- DOCX -------------------------------------------------------------------------------

def test_docx_that_is_not_a_zip_or_is_corrupt(tmp_path, make_index):
    root = tmp_path / "docs"
    root.mkdir()
    make_docx(root / "good.docx", [("h1", "Hedgehogs"), ("p", "The hedgehog hibernates in leaves.")])
    real = (root / "good.docx").read_bytes()
    (root / "notzip.docx").write_text("Just text someone saved with a .docx name.\n")
    (root / "truncated.docx").write_bytes(real[: len(real) // 2])       # an interrupted copy
    (root / "olddoc.docx").write_bytes(b"\xd0\xcf\x11\xe0\xa1\xb1\x1a\xe1" + b"\x00" * 1024)
    buf = io.BytesIO()
    with zipfile.ZipFile(buf, "w") as z:
        z.writestr("hello.txt", "a zip, but no Word document inside")
    (root / "plainzip.docx").write_bytes(buf.getvalue())
    # flip bytes inside word/document.xml's compressed data: the archive opens, the part fails
    with zipfile.ZipFile(io.BytesIO(real)) as z:
        info = z.getinfo("word/document.xml")
    data = bytearray(real)
    start = info.header_offset + 30 + len(info.filename) + len(info.extra)
    for i in range(start + 10, start + min(60, info.compress_size - 1)):
        data[i] ^= 0x5A
    (root / "bitrot.docx").write_bytes(bytes(data))

    idx = make_index()
    idx.add_root(root)
    report = idx.update()
    got = rows(idx)
    assert got["good.docx"][0] == "indexed"
    assert "hedgehog" in idx.search("where does the hedgehog hibernate", k=1)[0].text
    for name in ("notzip.docx", "truncated.docx", "olddoc.docx", "plainzip.docx", "bitrot.docx"):
        state, reason, kind = got[name]
        assert state == "error" and kind == "damaged", (name, reason)
        assert reason.startswith("cannot read DOCX") and ("save it" in reason or "re-save" in reason)
    assert "is not one" in got["notzip.docx"][1]
    assert "damaged or truncated" in got["truncated.docx"][1]
    assert "old binary Word (.doc)" in got["olddoc.docx"][1]
    assert "no word/document.xml" in got["plainzip.docx"][1]
    assert report.errors == 5 and report.added == 1


# --- PDF --------------------------------------------------------------------------------

def _encrypted(pdf: bytes, user: str, owner: str, algorithm: str) -> bytes:
    from pypdf import PdfReader, PdfWriter

    writer = PdfWriter()
    writer.append(PdfReader(io.BytesIO(pdf)))
    writer.encrypt(user_password=user, owner_password=owner, algorithm=algorithm)
    out = io.BytesIO()
    writer.write(out)
    return out.getvalue()


def test_encrypted_pdfs(tmp_path, make_index):
    root = tmp_path / "docs"
    root.mkdir()
    plain = make_pdf(["The ibex climbs the steep dam wall.", "It licks salt from the stones."])
    (root / "locked_rc4.pdf").write_bytes(_encrypted(plain, "secret", "owner", "RC4-128"))
    (root / "locked_aes.pdf").write_bytes(_encrypted(plain, "secret", "owner", "AES-256"))
    # Only an owner password (printing/copying restricted): opens with the empty password.
    (root / "restricted.pdf").write_bytes(_encrypted(
        make_pdf(["The okapi has striped legs like a zebra."]), "", "owner", "AES-128"))
    idx = make_index()
    idx.add_root(root)
    idx.update()
    got = rows(idx)
    for name in ("locked_rc4.pdf", "locked_aes.pdf"):
        state, reason, kind = got[name]
        assert (state, kind) == ("error", "encrypted"), (name, reason)
        assert "password-protected" in reason and "unprotected copy" in reason
    assert got["restricted.pdf"][0] == "indexed"
    hit = idx.search("okapi striped legs", k=1)[0]
    assert hit.path.endswith("restricted.pdf") and hit.page == 1


def test_aes_pdf_without_the_crypto_package_says_what_to_install(monkeypatch):
    """pypdf opens AES-encrypted PDFs only with `cryptography` (a dependency); should it
    be missing, the reason names the package rather than calling the PDF damaged."""
    from pypdf import PdfReader
    from pypdf.errors import DependencyError

    from indexer.parsers import parse_pdf

    data = _encrypted(make_pdf(["Restricted but readable."]), "", "owner", "AES-128")

    def no_crypto(self, password):
        raise DependencyError("cryptography>=3.1 is required for AES algorithm")

    monkeypatch.setattr(PdfReader, "decrypt", no_crypto)
    with pytest.raises(reading.FileSkip) as info:
        parse_pdf(data)
    assert info.value.kind == "encrypted" and "pip install cryptography" in info.value.reason


# --- UTF-16 -----------------------------------------------------------------------------

TEXT16 = ("# Café notes\n\nThe Zürich tram stops at Bürkliplatz.\n\n"
          "Crème brûlée needs a blowtorch.\n")


def test_utf16_with_and_without_bom(tmp_path, make_index):
    root = tmp_path / "docs"
    root.mkdir()
    (root / "le_bom.md").write_bytes(TEXT16.encode("utf-16"))          # BOM + little endian
    (root / "be_bom.md").write_bytes(b"\xfe\xff" + TEXT16.encode("utf-16-be"))
    (root / "le.md").write_bytes(TEXT16.replace("tram", "ferry").encode("utf-16-le"))
    (root / "be.md").write_bytes(TEXT16.replace("tram", "funicular").encode("utf-16-be"))
    (root / "windows.txt").write_bytes("line one\r\nthe lynx\r\n".encode("utf-16-le"))
    # NULs on both sides of the byte pairs: binary, not UTF-16
    (root / "blob.txt").write_bytes(bytes(range(256)) * 8)
    idx = make_index()
    idx.add_root(root)
    idx.update()
    got = rows(idx)
    for name in ("le_bom.md", "be_bom.md", "le.md", "be.md", "windows.txt"):
        assert got[name][0] == "indexed", (name, got[name])
    assert got["blob.txt"][0] == "skipped" and got["blob.txt"][2] == "binary"
    for name, word in (("le.md", "ferry"), ("be.md", "funicular"), ("le_bom.md", "tram")):
        texts = [c for (c,) in idx.store.conn.execute(
            "SELECT c.text FROM chunks c JOIN files f ON f.id=c.file_id WHERE f.path=?",
            (str(root / name),))]
        joined = "\n".join(texts)
        assert f"The Zürich {word} stops at Bürkliplatz." in joined     # decoded, not mojibake
        assert "\x00" not in joined and "\ufeff" not in joined
    hit = next(p for p in idx.search("crème brûlée blowtorch", k=6) if p.path.endswith("be.md"))
    assert hit.end_line == 5            # lines counted in the decoded text
    lynx = [p for p in idx.search("lynx", k=6) if p.path.endswith("windows.txt")][0]
    assert lynx.text.splitlines() == ["line one", "the lynx"]           # CRLF normalised


def test_utf16_decoding_rules():
    # UTF-32 with a BOM is not mistaken for UTF-16
    assert reading.decode_text("snow leopard".encode("utf-32"), ext=".txt") == "snow leopard"
    with pytest.raises(reading.FileSkip) as info:   # a BOM, then an odd byte count
        reading.decode_text(b"\xff\xfe" + "abc".encode("utf-16-le") + b"\x00\xd8", ext=".txt")
    assert info.value.kind == "undecodable" and "re-save the file as UTF-8" in info.value.reason


# --- names that are not UTF-8 -------------------------------------------------------------

def test_names_that_are_not_utf8_are_skipped_with_a_reason(tmp_path, make_index, embedder):
    root = tmp_path / "docs"
    root.mkdir()
    (root / "good.md").write_text("The marmot whistles at the hikers.\n")
    raw_root = os.fsencode(root)
    with open(raw_root + b"/caf\xe9.md", "wb") as fh:              # Latin-1 "café.md"
        fh.write(b"Notes on the espresso machine.\n")
    os.mkdir(raw_root + b"/d\xf6cs")                               # Latin-1 "döcs"
    with open(raw_root + b"/d\xf6cs/inner.md", "wb") as fh:
        fh.write(b"Inside a folder with a Latin-1 name.\n")
    os.symlink(raw_root + b"/caf\xe9.md", raw_root + b"/link.md")  # a valid name, odd target
    idx = make_index()
    idx.add_root(root)
    report = idx.update()
    got = rows(idx)
    assert got["good.md"][0] == "indexed"
    assert got["caf\\xe9.md"][0] == "skipped" and got["caf\\xe9.md"][2] == "bad_name"
    assert "not valid UTF-8" in got["caf\\xe9.md"][1] and "rename it" in got["caf\\xe9.md"][1]
    assert got["d\\xf6cs"][2] == "bad_name"                        # the folder, once
    assert "inner.md" not in got
    assert got["link.md"][0] == "indexed"         # the link's own name is fine
    assert {p.path for p in report.problems} >= {str(root / "caf\\xe9.md")}
    # a second run: nothing changed, nothing reported again, nothing crashes
    again = idx.update()
    assert again.added == again.updated == again.removed == 0 and again.problems == []
    # an update of just that path (what the watcher does) works too
    idx.update([os.fsdecode(raw_root + b"/caf\xe9.md")])
    idx.close()

    # the command line prints it safely, as text and as JSON
    env = dict(os.environ, LOCALRAG_HOME=str(tmp_path / "data"), PYTHONPATH=str(ROOT),
               HF_HUB_OFFLINE="1")
    (tmp_path / "data").mkdir()
    os.symlink(tmp_path / "index", tmp_path / "data" / "index")
    text = subprocess.run([sys.executable, "-m", "localrag", "status", "--reason", "bad_name"],
                          env=dict(env, PYTHONIOENCODING="ascii"), capture_output=True,
                          text=True, timeout=120)
    assert text.returncode == 0, text.stderr
    assert f"{root}/caf\\xe9.md: the name is not valid UTF-8" in text.stdout
    out = subprocess.run([sys.executable, "-m", "localrag", "status", "--json", "--all"],
                         env=env, capture_output=True, timeout=120)
    assert out.returncode == 0, out.stderr
    status = json.loads(out.stdout)
    bad = next(g for g in status["problems"] if g["kind"] == "bad_name")
    assert sorted(f["path"] for f in bad["files"]) == [f"{root}/caf\\xe9.md", f"{root}/d\\xf6cs"]

    # renamed to UTF-8: indexed, and its old row is gone
    os.rename(raw_root + b"/caf\xe9.md", os.fsencode(root / "café.md"))
    idx2 = make_index()
    idx2.update()
    got = rows(idx2)
    assert got["café.md"][0] == "indexed" and "caf\\xe9.md" not in got


def test_a_root_whose_name_is_not_utf8_is_refused(tmp_path, make_index):
    bad = os.fsencode(tmp_path) + b"/not\xffutf8"
    os.mkdir(bad)
    idx = make_index()
    with pytest.raises(IndexerError, match="not valid UTF-8"):
        idx.add_root(os.fsdecode(bad))
    assert idx.roots() == []


# --- files that vanish or shrink while read ------------------------------------------------

def test_file_that_vanishes_while_being_read(tmp_path, make_index, monkeypatch):
    root = tmp_path / "docs"
    root.mkdir()
    target = root / "draft.md"
    target.write_text("First draft about the pika.\n")
    (root / "stays.md").write_text("The stoat turns white in winter.\n")
    idx = make_index()
    idx.add_root(root)
    idx.update()
    assert "pika" in idx.search("pika", k=1)[0].text
    target.write_text("Second draft about the pika, longer.\n")
    real_open = builtins.open

    def open_then_delete(path, *args, **kwargs):
        fh = real_open(path, *args, **kwargs)
        if os.fspath(path) == str(target):
            target.unlink()    # deleted while we hold it open: the read itself still works
        return fh

    monkeypatch.setattr(reading, "open", open_then_delete, raising=False)
    report = idx.update()
    assert any(p.path == str(target) and "vanished" in p.reason for p in report.problems)
    assert "draft.md" not in rows(idx)                       # its old row went with it
    assert all(not p.path.endswith("draft.md") for p in idx.search("pika", k=3))
    assert rows(idx)["stays.md"][0] == "indexed"


def test_file_that_shrinks_while_being_read(tmp_path, make_index, monkeypatch):
    root = tmp_path / "docs"
    root.mkdir()
    target = root / "log.md"
    target.write_text("Kept line about the beaver dam.\n" + "Soon cut away: the otter slides. " * 200)
    final = b"Kept line about the beaver dam.\n"
    real_open = builtins.open
    calls = {"n": 0}

    class HalfThenTruncate(io.RawIOBase):
        """Reads part of the file, then the file is truncated under it (log rotation)."""

        def __init__(self, fh) -> None:
            self.fh = fh

        def readable(self) -> bool:
            return True

        def read(self, n=-1):
            part = self.fh.read(100)
            with real_open(target, "r+b") as w:
                w.truncate(len(final))
            return part + self.fh.read()

        def fileno(self) -> int:
            return self.fh.fileno()

        def close(self) -> None:
            self.fh.close()
            super().close()

    def shrinking_open(path, *args, **kwargs):
        fh = real_open(path, *args, **kwargs)
        if os.fspath(path) == str(target):
            calls["n"] += 1
            if calls["n"] == 1:
                return HalfThenTruncate(fh)
        return fh

    monkeypatch.setattr(reading, "open", shrinking_open, raising=False)
    idx = make_index()
    idx.add_root(root)
    idx.update()
    assert calls["n"] == 2                                   # the short read was noticed
    import hashlib

    sha, size = idx.store.conn.execute("SELECT sha256, size FROM files WHERE path=?",
                                       (str(target),)).fetchone()
    assert size == len(final) and sha == hashlib.sha256(final).hexdigest()
    texts = [t for (t,) in idx.store.conn.execute("SELECT text FROM chunks")]
    assert any("beaver dam" in t for t in texts) and not any("otter" in t for t in texts)
