"""Why a file is not indexed: the kinds of reasons, their labels, and safe text for paths.

Every skipped or failed file gets a reason written for a person (it names the fix) and
a kind from KINDS. The kind is stored next to the reason (files.reason_kind), so that
`localrag status` and the TUI can group thousands of skips ("unsupported file types:
4,210") and list one group in full (`localrag status --reason unsupported_type`).
"""

from __future__ import annotations

import os

# kind -> label of the group, in the order status shows groups of equal size.
KINDS: dict[str, str] = {
    "permission": "permission denied",
    "unreadable": "read errors",
    "damaged": "damaged or invalid documents",
    "encrypted": "password-protected documents",
    "undecodable": "text in an unknown encoding",
    "changing": "files that kept changing while being read",
    "parse_failed": "files the parser failed on",
    "bad_name": "names that are not valid UTF-8",
    "special_file": "not regular files (pipes, devices, sockets)",
    "unsupported_type": "unsupported file types",
    "too_large": "over the size limit",
    "minified": "minified code (*.min.js, *.min.css, *.min.mjs, *.min.cjs)",
    "generated": "a documentation site's generated files (search index, scripts, source copies)",
    "empty": "empty files",
    "binary": "binary content",
    "no_text": "no text to index",
    "hidden": "hidden files and folders",
    "gitignore": "ignored by a .gitignore",
    "ignored_folder": "ignored folders (built-in list)",
    "symlink": "symlinks not followed (outside the root, loops, broken, duplicates)",
    "other": "other reasons",
}


def label(kind: str | None) -> str:
    return KINDS.get(kind or "other", kind or "other")


# Reasons written before reason kinds were stored (schema 1), by how they start. Only
# used once, by the migration that adds the column; new rows get their kind where the
# reason is written.
_LEGACY_PREFIXES: list[tuple[str, str]] = [
    ("permission denied", "permission"),
    ("input/output error", "unreadable"),
    ("cannot read the file", "unreadable"),
    ("is a folder", "unreadable"),
    ("cannot read DOCX", "damaged"),
    ("cannot read PDF", "damaged"),
    ("PDF is password-protected", "encrypted"),
    ("cannot decode the text", "undecodable"),
    ("the file kept changing", "changing"),
    ("could not parse the file", "parse_failed"),
    ("not a regular file", "special_file"),
    ("unsupported file type", "unsupported_type"),
    ("file is ", "too_large"),
    ("empty file", "empty"),
    ("binary content", "binary"),
    ("no text found", "no_text"),
    ("PDF has no text layer", "no_text"),
    ("hidden ", "hidden"),
    ("ignored by ", "gitignore"),
    ("ignored folder", "ignored_folder"),
    ("symlink", "symlink"),
    ("broken symlink", "symlink"),
]


def legacy_kind(reason: str | None) -> str:
    """The kind of a reason stored without one (an index written by schema 1)."""
    text = reason or ""
    for prefix, kind in _LEGACY_PREFIXES:
        if text.startswith(prefix):
            return kind
    return "other"


def is_valid_name(path: str) -> bool:
    """False for a path holding bytes that are not UTF-8 (Linux lets any bytes be a
    name; Python hands them over as lone surrogates, which SQLite cannot store)."""
    try:
        path.encode("utf-8")
    except UnicodeEncodeError:
        return False
    return True


def printable(text: str) -> str:
    """`text` with undecodable bytes shown as \\xNN: safe to store, print and dump as JSON.

    A file name byte 0xE9 (Latin-1 "é") arrives as the surrogate U+DCE9 and leaves as
    the four characters `\\xe9`, so the person sees which byte is wrong.
    """
    if is_valid_name(text):
        return text
    try:
        raw = os.fsencode(text)
    except UnicodeEncodeError:      # a lone surrogate that is not an escaped byte
        return text.encode("utf-8", "backslashreplace").decode("utf-8")
    return raw.decode("utf-8", "backslashreplace")
