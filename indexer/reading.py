"""Reading a file's bytes safely: stable snapshot, size limit, decoding, human reasons.

Tests patch `reading.open` (a module global looked up before the builtin) to simulate
permission errors when running as root, where chmod 000 does not block reads.
"""

from __future__ import annotations

import errno
import hashlib
import os
import shlex
import stat
import time
from dataclasses import dataclass

from indexer.records import FileState


class FileSkip(Exception):
    """The file cannot or should not be indexed; `state`, `reason` and `kind` (one of
    indexer.reasons.KINDS, for grouping in status) go to its row."""

    def __init__(self, state: FileState, reason: str, kind: str = "other") -> None:
        super().__init__(reason)
        self.state: FileState = state
        self.reason = reason
        self.kind = kind


class FileVanished(Exception):
    """The file disappeared between listing and reading."""


@dataclass
class FileSnapshot:
    path: str
    data: bytes
    size: int
    mtime_ns: int
    sha256: str


def human_bytes(n: float) -> str:
    for unit in ("bytes", "KB", "MB", "GB"):
        if n < 1024 or unit == "GB":
            return f"{n:.0f} {unit}" if unit == "bytes" else f"{n:.1f} {unit}"
        n /= 1024
    return f"{n:.1f} GB"


def too_large_reason(size: int, limit: int) -> str:
    return (f"file is {human_bytes(size)}, over the {human_bytes(limit)} size limit "
            "(raise max_file_mb in the settings to index it)")


def special_file_reason(mode: int) -> str:
    """Why a FIFO, device or socket is not read (it is never even opened: opening a
    FIFO waits for a writer, reading a device such as /dev/zero never ends)."""
    if stat.S_ISFIFO(mode):
        what = "named pipe (FIFO)"
    elif stat.S_ISCHR(mode):
        what = "character device"
    elif stat.S_ISBLK(mode):
        what = "block device"
    elif stat.S_ISSOCK(mode):
        what = "socket"
    else:
        what = "special file"
    return f"not a regular file but a {what}: never opened, nothing to index"


def os_error_kind(exc: OSError) -> str:
    if isinstance(exc, PermissionError) or exc.errno in (errno.EACCES, errno.EPERM):
        return "permission"
    if exc.errno == errno.ELOOP:
        return "symlink"
    return "unreadable"


def _open_nonblocking(path: str, flags: int) -> int:
    # O_NONBLOCK: should the path have become a FIFO since it was listed, open() returns
    # at once instead of waiting for a writer (the fstat check below then skips it).
    return os.open(path, flags | getattr(os, "O_NONBLOCK", 0) | getattr(os, "O_NOCTTY", 0))


def os_error_reason(path: str, exc: OSError) -> str:
    """Words a person can act on for an OSError while reading `path`."""
    quoted = shlex.quote(path)
    if isinstance(exc, PermissionError) or exc.errno in (errno.EACCES, errno.EPERM):
        return (f"permission denied: run `chmod u+r {quoted}` (or fix its owner with "
                f"`sudo chown $USER {quoted}`) so localrag can read it")
    if exc.errno == errno.ELOOP:
        return "symlink loop: the link points (through other links) back to itself"
    if exc.errno == errno.EISDIR:
        return "is a folder, not a file"
    if exc.errno == errno.EIO:
        return "input/output error while reading (failing disk or unmounted network drive?)"
    return f"cannot read the file: {exc.strerror or exc}"


def read_snapshot(path: str, *, max_bytes: int, retries: int = 3) -> FileSnapshot:
    """Read the whole file, making sure it did not change while being read.

    Compares (mtime, size) before and after the read and retries a few times, so a file
    being saved while we read it is never indexed half-written.
    """
    for attempt in range(retries):
        try:
            before = os.stat(path)
            if not stat.S_ISREG(before.st_mode):
                raise FileSkip("skipped", special_file_reason(before.st_mode), "special_file")
            if before.st_size > max_bytes:
                raise FileSkip("skipped", too_large_reason(before.st_size, max_bytes), "too_large")
            with open(path, "rb", opener=_open_nonblocking) as fh:
                opened = os.fstat(fh.fileno())
                if not stat.S_ISREG(opened.st_mode):   # swapped for a FIFO or device
                    raise FileSkip("skipped", special_file_reason(opened.st_mode), "special_file")
                data = fh.read(max_bytes + 1)
            after = os.stat(path)
        except FileNotFoundError as exc:
            raise FileVanished(path) from exc
        except OSError as exc:
            raise FileSkip("error", os_error_reason(path, exc), os_error_kind(exc)) from exc
        if len(data) > max_bytes:
            raise FileSkip("skipped", too_large_reason(len(data), max_bytes), "too_large")
        stable = (before.st_mtime_ns, before.st_size) == (after.st_mtime_ns, after.st_size)
        if stable and len(data) == after.st_size:
            return FileSnapshot(path, data, after.st_size, after.st_mtime_ns,
                                hashlib.sha256(data).hexdigest())
        time.sleep(0.05 * (attempt + 1))
    raise FileSkip("error", "the file kept changing while being read; it will be indexed "
                   "once it is saved and quiet (next run, or the watcher's next event)",
                   "changing")


def stream_snapshot(path: str, *, block: int = 1 << 20) -> FileSnapshot:
    """Size, mtime and sha256 of a file read in blocks, without its bytes (`data` is
    empty): for formats parsed from the path piece by piece (an mbox of gigabytes)."""
    try:
        before = os.stat(path)
        if not stat.S_ISREG(before.st_mode):
            raise FileSkip("skipped", special_file_reason(before.st_mode), "special_file")
        digest = hashlib.sha256()
        with open(path, "rb", opener=_open_nonblocking) as fh:
            while piece := fh.read(block):
                digest.update(piece)
        after = os.stat(path)
    except FileNotFoundError as exc:
        raise FileVanished(path) from exc
    except OSError as exc:
        raise FileSkip("error", os_error_reason(path, exc), os_error_kind(exc)) from exc
    if (before.st_mtime_ns, before.st_size) != (after.st_mtime_ns, after.st_size):
        raise FileSkip("error", "the file kept changing while being read; it will be indexed "
                       "once it is saved and quiet (next run, or the watcher's next event)",
                       "changing")
    return FileSnapshot(path, b"", after.st_size, after.st_mtime_ns, digest.hexdigest())


_CONTROL = set(range(0, 9)) | {11, 14, 15, 16, 17, 18, 19, 20, 21, 22, 23, 24, 25, 26, 28, 29, 30, 31, 127}


_BOMS: tuple[tuple[bytes, str], ...] = (
    (b"\xff\xfe\x00\x00", "utf-32"), (b"\x00\x00\xfe\xff", "utf-32"),   # before UTF-16's
    (b"\xff\xfe", "utf-16"), (b"\xfe\xff", "utf-16"),
)


def _utf16_without_bom(sample: bytes) -> str | None:
    """"utf-16-le"/"utf-16-be" when NUL bytes sit on one side of each byte pair only.

    Text from Windows tools written without a byte-order mark: every ASCII character is
    one byte and a NUL, so about half the bytes are NUL, all at odd (LE) or all at even
    (BE) offsets. Binary files have NULs on both sides. Text with no ASCII at all (all
    CJK, say) has no NULs and cannot be told from other encodings by this test: it ends
    as "cannot decode", which names the fix (re-save as UTF-8).
    """
    pairs = len(sample) // 2
    if pairs < 2:
        return None
    even = sample[0:2 * pairs:2].count(0)
    odd = sample[1:2 * pairs:2].count(0)
    if odd >= 0.3 * pairs and even <= 0.02 * pairs:
        return "utf-16-le"
    if even >= 0.3 * pairs and odd <= 0.02 * pairs:
        return "utf-16-be"
    return None


def decode_text(data: bytes, *, ext: str) -> str:
    """Bytes of a text-format file to str, or FileSkip with the reason.

    UTF-8 (with or without BOM), UTF-16 and UTF-32 with a BOM, UTF-16 without a BOM
    (sniffed from where the NULs are), else Windows-1252.
    """
    for bom, codec in _BOMS:
        if data.startswith(bom):
            try:
                return _clean(data.decode(codec), ext)
            except UnicodeDecodeError as exc:
                raise FileSkip("error", f"cannot decode the text: it starts with a {codec.upper()} "
                               f"byte-order mark but is not valid {codec.upper()} (at byte "
                               f"{exc.start}); re-save the file as UTF-8 to index it",
                               "undecodable") from None
    head = data[:8192]
    if b"\x00" in head:
        codec = _utf16_without_bom(head)
        if codec is not None:
            try:
                return _clean(data.decode(codec), ext)
            except UnicodeDecodeError:
                pass   # NULs in a pattern that only looked like UTF-16: binary after all
        raise FileSkip("skipped", f"binary content (NUL bytes) in a {ext or 'text'} file; "
                       "nothing readable to index", "binary")
    try:
        text = data.decode("utf-8-sig")
    except UnicodeDecodeError as utf8_error:
        try:
            text = data.decode("cp1252")  # old Windows / Latin-1 notes are common
        except UnicodeDecodeError:
            bad = data[utf8_error.start]
            raise FileSkip("error", f"cannot decode the text: not UTF-8 or Windows-1252 "
                           f"(byte 0x{bad:02x} at offset {utf8_error.start}); re-save the "
                           "file as UTF-8 to index it", "undecodable") from None
    return _clean(text, ext)


def _clean(text: str, ext: str) -> str:
    sample = text[:8192]
    if sample and sum(ord(c) in _CONTROL for c in sample) > 0.05 * len(sample):
        raise FileSkip("skipped", f"binary content (control characters) in a {ext or 'text'} "
                       "file; nothing readable to index", "binary")
    return text.replace("\r\n", "\n").replace("\r", "\n")
