"""Reading a file's bytes safely: stable snapshot, size limit, decoding, human reasons.

Tests patch `reading.open` (a module global looked up before the builtin) to simulate
permission errors when running as root, where chmod 000 does not block reads.
"""

from __future__ import annotations

import errno
import hashlib
import os
import shlex
import time
from dataclasses import dataclass

from indexer.records import FileState


class FileSkip(Exception):
    """The file cannot or should not be indexed; `state` and `reason` go to its row."""

    def __init__(self, state: FileState, reason: str) -> None:
        super().__init__(reason)
        self.state: FileState = state
        self.reason = reason


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
            if before.st_size > max_bytes:
                raise FileSkip("skipped", too_large_reason(before.st_size, max_bytes))
            with open(path, "rb") as fh:
                data = fh.read(max_bytes + 1)
            after = os.stat(path)
        except FileNotFoundError as exc:
            raise FileVanished(path) from exc
        except OSError as exc:
            raise FileSkip("error", os_error_reason(path, exc)) from exc
        if len(data) > max_bytes:
            raise FileSkip("skipped", too_large_reason(len(data), max_bytes))
        stable = (before.st_mtime_ns, before.st_size) == (after.st_mtime_ns, after.st_size)
        if stable and len(data) == after.st_size:
            return FileSnapshot(path, data, after.st_size, after.st_mtime_ns,
                                hashlib.sha256(data).hexdigest())
        time.sleep(0.05 * (attempt + 1))
    raise FileSkip("error", "the file kept changing while being read; it will be indexed "
                   "once it is saved and quiet (next run, or the watcher's next event)")


_CONTROL = set(range(0, 9)) | {11, 14, 15, 16, 17, 18, 19, 20, 21, 22, 23, 24, 25, 26, 28, 29, 30, 31, 127}


def decode_text(data: bytes, *, ext: str) -> str:
    """Bytes of a text-format file to str, or FileSkip with the reason."""
    if b"\x00" in data[:8192] and not data.startswith((b"\xff\xfe", b"\xfe\xff")):
        raise FileSkip("skipped", f"binary content (NUL bytes) in a {ext or 'text'} file; "
                       "nothing readable to index")
    if data.startswith((b"\xff\xfe", b"\xfe\xff")):
        try:
            return data.decode("utf-16")
        except UnicodeDecodeError:
            pass
    try:
        text = data.decode("utf-8-sig")
    except UnicodeDecodeError as utf8_error:
        try:
            text = data.decode("cp1252")  # old Windows / Latin-1 notes are common
        except UnicodeDecodeError:
            bad = data[utf8_error.start]
            raise FileSkip("error", f"cannot decode the text: not UTF-8 or Windows-1252 "
                           f"(byte 0x{bad:02x} at offset {utf8_error.start}); re-save the "
                           "file as UTF-8 to index it") from None
    sample = text[:8192]
    if sample and sum(ord(c) in _CONTROL for c in sample) > 0.05 * len(sample):
        raise FileSkip("skipped", f"binary content (control characters) in a {ext or 'text'} "
                       "file; nothing readable to index")
    return text.replace("\r\n", "\n").replace("\r", "\n")
