"""Mail: one message (.eml), a mailbox (.mbox, read message by message, never whole) and
Maildir folders (their messages are .eml files to the walker).

Each message is one unit, named "Subject — From, Date"; an mbox message also carries the
line of its "From " line, so a citation opens the mailbox there. Attachments of the
formats localrag reads are indexed as parts of their message.
"""

from __future__ import annotations

import email
import email.policy
import os
import re
from collections.abc import Callable, Iterator
from typing import IO

from indexer.documents import DocBuilder, ParsedDoc, short
from indexer.reading import FileSkip

ATTACHMENT_EXT = {".pdf", ".docx", ".pptx", ".xlsx", ".odt", ".ods", ".odp", ".epub", ".rtf",
                  ".txt", ".md", ".rst", ".html", ".htm", ".csv", ".eml", ".ipynb"}
MAX_DEPTH = 2            # a message attached to a message attached to a message: enough
_FROM_ESCAPED = re.compile(rb"^>+From ")
# parsers.parse_bytes, handed in by the dispatcher (no import circle): reads attachments
Parse = Callable[..., ParsedDoc]


def message_heading(msg) -> str:  # noqa: ANN001 - email.message.Message
    def header(name: str) -> str:
        try:
            return " ".join(str(msg.get(name, "") or "").split())
        except Exception:   # an undecodable header
            return ""
    subject = header("Subject") or "(no subject)"
    who = ", ".join(x for x in (header("From"), header("Date")) if x)
    return f"{subject} — {who}" if who else subject


def _encrypted(msg) -> bool:  # noqa: ANN001
    ctype = msg.get_content_type()
    return ctype in ("multipart/encrypted", "application/pkcs7-mime", "application/x-pkcs7-mime")


def _other_text(msg):  # noqa: ANN001, ANN202 - email.message.EmailMessage
    """The first inline text part of another kind (text/asciidoc, text/x-diff, text/markdown,
    ...): git's mailed patches and howtos say `Content-type: text/asciidoc`, and without
    this only their headers were indexed."""
    for part in msg.walk():
        if part.get_content_maintype() == "text" and part.get_content_disposition() != "attachment":
            return part
    return None


def add_message(out: DocBuilder, msg, *, unit: int, line: int | None, ocr: bool,  # noqa: ANN001
                depth: int, parse: Parse | None) -> None:
    """The message's headers, body and readable attachments as blocks of one unit."""
    head = (message_heading(msg),)
    fields = []
    for name in ("Subject", "From", "To", "Cc", "Date"):
        try:
            value = " ".join(str(msg.get(name, "") or "").split())
        except Exception:
            value = ""
        if value:
            fields.append(f"{name}: {value}")
    out.add("\n".join(fields), "text", head, unit=unit, line=line)
    if _encrypted(msg):
        out.add("(encrypted message: only its headers are indexed)", "text", head, unit=unit, line=line)
        return
    try:
        body = msg.get_body(preferencelist=("plain", "html")) or _other_text(msg)
    except Exception:
        body = None
    if body is not None:
        try:
            content = body.get_content()
        except Exception:   # an unknown charset or broken transfer encoding
            payload = body.get_payload(decode=True) or b""
            content = payload.decode("utf-8", "replace") if isinstance(payload, bytes) else str(payload)
        if body.get_content_type() == "text/html":
            from indexer.parse_html import parse_html

            content = parse_html(content, main_content=False).text
        out.add(content.replace("\r\n", "\n"), "text", head, unit=unit, line=line, split=True)
    try:
        attachments = list(msg.iter_attachments())
    except Exception:
        attachments = []
    for part in attachments:
        name = part.get_filename() or ""
        ext = os.path.splitext(name.lower())[1]
        if ext not in ATTACHMENT_EXT or depth >= MAX_DEPTH or parse is None:
            continue
        try:
            data = part.get_payload(decode=True) or b""
            sub = parse(data, ext=ext, name=name, ocr=ocr, depth=depth + 1)
        except Exception:   # an attachment that cannot be read loses nothing else
            continue
        for block in sub.blocks:
            kind = "text" if block.kind == "heading" else block.kind
            out.add(sub.text[block.start:block.end], kind,
                    head + (f"attachment {name}",) + block.heading_path, unit=unit, line=line)


def _not_mail(what: str) -> FileSkip:
    return FileSkip("error", f"cannot read {what}: not an e-mail message (no mail headers such "
                    "as From:, Subject: or Date: at its start); if it is another kind of file, "
                    "rename it with that kind's extension", "damaged")


def parse_eml(data: bytes, *, ocr: bool = False, depth: int = 0,
              parse: Parse | None = None) -> ParsedDoc:
    if b"\x00" in data[:4096]:
        raise FileSkip("skipped", "binary content (NUL bytes) in a .eml file: not an e-mail "
                       "message; if it is another kind of file, rename it with that kind's "
                       "extension", "binary")
    msg = email.message_from_bytes(data, policy=email.policy.default)
    if not any(k.lower() in ("from", "subject", "date", "to", "message-id") for k in msg.keys()):
        raise _not_mail("EML")
    if _encrypted(msg) and depth == 0:
        raise FileSkip("error", "the message is encrypted (PGP or S/MIME); decrypt it in your "
                       "mail program and save a decrypted copy to index it", "encrypted")
    out = DocBuilder()
    add_message(out, msg, unit=1, line=1, ocr=ocr, depth=depth, parse=parse)
    return out.doc()


def mbox_messages(fh: IO[bytes]) -> Iterator[tuple[int, bytes]]:
    """(line of its "From " line, the message's bytes) for each message of an mbox, read
    line by line: one message in memory at a time, whatever the mailbox's size. A
    ">From " line is unescaped (mboxrd), as the mailbox module does."""
    buf: list[bytes] = []
    start = 0
    prev_blank = True
    for number, raw in enumerate(fh, start=1):
        if raw.startswith(b"From ") and prev_blank:
            if buf:
                yield start, b"".join(buf)
            buf, start = [], number
        elif start:
            buf.append(raw[1:] if _FROM_ESCAPED.match(raw) else raw)
        elif raw.strip():
            raise FileSkip("error", "cannot read MBOX: not an mbox mailbox (it must start with "
                           "a \"From \" line); if it is a single message, rename it to .eml",
                           "damaged")
        prev_blank = not raw.strip()
    if buf or start:
        yield start, b"".join(buf)


def _parse_mbox(fh: IO[bytes], *, ocr: bool, depth: int, parse: Parse | None) -> ParsedDoc:
    out = DocBuilder()
    for unit, (line, raw) in enumerate(mbox_messages(fh), start=1):
        try:
            msg = email.message_from_bytes(raw, policy=email.policy.default)
            add_message(out, msg, unit=unit, line=line, ocr=ocr, depth=depth, parse=parse)
        except FileSkip:
            raise
        except Exception:   # one broken message loses nothing else
            continue
    return out.doc()


def parse_mbox_bytes(data: bytes, *, ocr: bool = False, depth: int = 0,
                     parse: Parse | None = None) -> ParsedDoc:
    import io

    return _parse_mbox(io.BytesIO(data), ocr=ocr, depth=depth, parse=parse)


def parse_mbox_file(path: str, *, ocr: bool = False, parse: Parse | None = None) -> ParsedDoc:
    """An mbox read from its path, message by message (a mailbox of gigabytes is never
    held in memory: only the current message and the text extracted so far)."""
    try:
        with open(path, "rb") as fh:
            return _parse_mbox(fh, ocr=ocr, depth=0, parse=parse)
    except FileSkip:
        raise
    except OSError as exc:
        from indexer.reading import os_error_kind, os_error_reason

        raise FileSkip("error", os_error_reason(path, exc), os_error_kind(exc)) from None
    except Exception as exc:
        raise FileSkip("error", f"cannot read MBOX: {short(exc)}", "damaged") from None


MAILDIR_NAME = re.compile(r"\d{9,}\.[^/]+")
"""A Maildir message's name: its delivery time in seconds, a dot, a unique part and the
host, then maybe ':2,' and flags (`1700000000.M0P1.laptop:2,S`)."""


def is_maildir_message(path: str) -> bool:
    """A file named like a message in a Maildir's cur/ or new/ folder (next to tmp/). Any
    other file there (a project's `new/notes.md`, `cur/report.pdf`) keeps its own parser."""
    from indexer.options import BASIC_EXTENSIONS

    folder = os.path.dirname(path)
    name = os.path.basename(path)
    return (os.path.basename(folder) in ("cur", "new")
            and MAILDIR_NAME.fullmatch(name) is not None
            and os.path.splitext(name)[1].lower() not in BASIC_EXTENSIONS
            and os.path.isdir(os.path.join(os.path.dirname(folder), "tmp")))
