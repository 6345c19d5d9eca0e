"""What a chunk of source code is embedded as: its prose, not its statements.

A question in a person's words ("how do I refresh an expired token?") meets a source
file's docstrings, comments and names, not its `if`s and assignments; embedded whole, a
chunk of code lands among other code, near no question. So a code chunk's vector is made
from its definitions' names and the text of its comments and docstrings. BM25 still reads
the whole text (an identifier typed exactly is found there), and the chunk's text,
citations and quotes are unchanged: only what the embedder reads differs.

Measured on two held-out Python corpora (bench/code_prose_embedding.py): see the README.

The indexer reads this on its own, with no part of the answer path's sentence rules (the
indexer imports nothing from localrag): line comments (`#`, `//`, `--`, `;`), block
comments (`/* */`, with their `*` gutters) and triple-quoted strings, also when a chunk
opens or ends inside one.
"""

from __future__ import annotations

import bisect
import re

from indexer.parse_text import DEF_LINE

# Formats read by the code parser that are data, not programs: their keys and values
# are what a question meets, and a comment here and there is no summary of them.
DATA_EXT = frozenset({
    ".json", ".jsonl", ".ndjson", ".yaml", ".yml", ".toml", ".ini", ".cfg", ".conf",
    ".properties", ".env", ".xml", ".svg", ".plist", ".lock", ".tsv", ".bib", ".srt",
    ".vtt", ".po", ".pot", ".diff", ".patch",
})

READ_MESSAGES = True
"""The words of a program's messages are prose too (stop 52): a one-line string in a line of
code whose words are prose ("Document must have exactly one root.", a help text, a
warning), read as a line of its own. A question often quotes the error it met, or asks what
an option's help says; the answer path quotes such messages
(localrag.answering.generate.source_code.READ_MESSAGES). Off: comments, docstrings and names
only, as stop 48 built it."""

MIN_WORDS = 8
"""A chunk with fewer words of prose than this is embedded as it is (a block of bare code:
a few names would say less than its statements)."""

_LINE_COMMENT = re.compile(r"^[ \t]*(?:#+|//+!?|--|;+)(?=[ \t]|$)[ \t]*(.*)$")
_TRAILING = re.compile(r"[ \t]#[ \t]+(\S.*)$|[;{}][ \t]*//[ \t]+(\S.*)$")   # not Python's a // b
_TRIPLE = re.compile(r"\"\"\"|'''")
_BLOCK_OPEN = re.compile(r"/\*+!?")
_BLOCK_CLOSE = re.compile(r"\*+/")
_GUTTER = re.compile(r"^[ \t]*\*(?!/)[ \t]?")
_WORD = re.compile(r"[A-Za-z]{2,}")
_COMPOUND = re.compile(r"\b[A-Za-z]+(?:_[A-Za-z]+)+\b|\b[a-z]+(?:[A-Z][a-z]+)+\b")
_PRAGMA = re.compile(r"-\*-.*-\*-|^(?:noqa|type:|pylint:|fmt:|vim?:|eslint|prettier-|@ts-|NOLINT)|^!")
_COMMENTED = re.compile(r"(?:^|\s)(?:#|//)\s")     # "# see /* below": in a line comment
_MARK = re.compile(r"\"\"\"|'''|/\*|\*/")


class Regions:
    """Where a whole file's triple-quoted strings and /* */ comments open and close, read
    from its start: a chunk that opens inside one (a long docstring or a header's comment
    block the chunker cut) cannot tell so from its own text."""

    def __init__(self, text: str) -> None:
        self.starts: list[int] = [0]
        self.states: list[str] = [""]
        state = ""
        for m in _MARK.finditer(text):
            mark = m.group(0)
            if state == "" and mark != "*/" and (mark != "/*" or _opens_comment(text, m.start())):
                state = mark
            elif (state == "/*" and mark == "*/") or (state not in ("", "/*") and mark == state):
                state = ""
            else:
                continue
            self.starts.append(m.start())
            self.states.append(state)

    def at(self, pos: int) -> str:
        """The mark ("/*", or a triple quote) of the comment or string offset `pos` of the
        file is in; "" in code."""
        return self.states[bisect.bisect_left(self.starts, pos) - 1] if pos > 0 else ""


def _opens_comment(text: str, at: int) -> bool:
    """Whether the "/*" at `at` opens a comment: not inside a one-line string ("*/*.py")
    or a line comment, and at a line's start or after a blank or the end of a statement."""
    before = text[text.rfind("\n", 0, at) + 1:at]
    return (not _quoted(before, len(before)) and not _COMMENTED.search(before)
            and (not before.strip() or before[-1] in " \t;{}),"))


def prose_of_code(text: str, opens_in: str = "") -> str:
    """The names of a chunk's definitions and the text of its comments and docstrings,
    one line each, then the compound names its statements use, as words (a call to
    `is_origin_allowed` says "is origin allowed"); '' when that is fewer than MIN_WORDS
    words. `opens_in`: the string or comment the chunk opens inside (Regions.at)."""
    out: list[str] = []
    names: list[str] = []         # compound names the code uses: is_origin_allowed
    in_string, in_block = opens_in in ('"""', "'''"), opens_in == "/*"
    for line in text.split("\n"):
        rest = line
        if in_block:
            close = _BLOCK_CLOSE.search(rest)
            body = rest[:close.start()] if close else rest
            out.append(_GUTTER.sub("", body).strip())
            if not close:
                continue
            in_block, rest = False, rest[close.end():]
        pieces = _TRIPLE.split(rest)
        if len(pieces) > 1 or in_string:
            # alternate code and string pieces; the strings are prose
            code_parts = []
            for n, piece in enumerate(pieces):
                if n:
                    in_string = not in_string
                if in_string:
                    out.append(piece.strip())
                else:
                    code_parts.append(piece)
            rest = " ".join(code_parts)
            if not rest.strip():
                continue
        m = DEF_LINE.match(rest)
        if m:
            out.append(f"{m.group('kind')} {m.group('name')}")
        else:
            names.extend(n for n in _COMPOUND.findall(rest) if n not in names)
        m = _LINE_COMMENT.match(rest)
        if m:
            out.append(m.group(1).strip())
            continue
        if READ_MESSAGES and ('"' in rest or "'" in rest):
            out.extend(_messages(rest))
        opened = _BLOCK_OPEN.search(rest)
        if opened and not _quoted(rest, opened.start()):
            body = rest[opened.end():]
            close = _BLOCK_CLOSE.search(body)
            out.append(_GUTTER.sub("", body[:close.start()] if close else body).strip())
            in_block = close is None
            continue
        m = _TRAILING.search(rest)
        if m and not _quoted(rest, m.start()):
            out.append((m.group(1) or m.group(2)).strip())
    prose = "\n".join(p for p in out if _WORD.search(p) and not _PRAGMA.search(p))
    if names and prose:
        prose += "\n" + " ".join(_words_of(n) for n in names)
    return prose if len(_WORD.findall(prose)) >= MIN_WORDS else ""


_STRING = re.compile(r"""[rRbBuUfF]{0,2}(["'])((?:(?!\1)[^\\\n]|\\.)*)\1""")
_PROSE_TOKEN = re.compile(r"[A-Za-z][a-z'’]*[,;:.!?]?")


def _messages(line: str) -> list[str]:
    """The one-line strings of a line of code (before a "#" or "//" comment) whose words are
    prose: at least three words of letters, as many as the other tokens ("Document must have
    exactly one root.", not "%s=%s" or "--width")."""
    out = []
    for m in _STRING.finditer(line):
        if _COMMENTED.search(line[:m.start()]) or line[max(m.start() - 1, 0):m.start()].isalnum():
            break                        # a comment's quotes; a name's letters ("don't")
        tokens = m.group(2).split()
        words = [t for t in tokens if _PROSE_TOKEN.fullmatch(t)]
        if len(words) >= 3 and 2 * len(words) >= len(tokens):
            out.append(m.group(2).strip())
    return out


def _words_of(name: str) -> str:
    """is_origin_allowed, isOriginAllowed -> "is origin allowed"."""
    return re.sub(r"(?<=[a-z])(?=[A-Z])", " ", name).replace("_", " ").lower()


def _quoted(line: str, pos: int) -> bool:
    """Whether `pos` lies inside a one-line string literal of `line`."""
    head = line[:pos]
    return head.count('"') % 2 == 1 or head.count("'") % 2 == 1
