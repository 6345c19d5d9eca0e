"""What every parser returns: a document's text and the blocks that point into it.

A module of its own so that the parsers (indexer/parse_*.py), the markup cleaner
(indexer/markup.py) and the chunker all import the types from here and never from each
other: no import circle.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field


@dataclass
class Block:
    start: int                       # offsets into ParsedDoc.text
    end: int
    kind: str                        # "heading", "text" or "code"
    heading_path: tuple[str, ...] = ()
    page: int | None = None          # 1-based, PDF only
    unit: int | None = None          # the cited unit (slide, sheet rows, message, cell,
    #                                  chapter): chunks never span two; None = one flow
    line: int | None = None          # the unit's line in the file when the text is not
    #                                  the file's own lines (a message in an mbox, a cell
    #                                  in a notebook): cited and opened there


@dataclass
class ParsedDoc:
    text: str
    blocks: list[Block] = field(default_factory=list)
    has_lines: bool = True           # False: text lines are not the file's (PDF, office
    #                                  files, mail): cite the page, unit or Block.line
    prose_embedding: bool = False    # source code: chunks are embedded by their names,
    #                                  comments and docstrings (indexer/code_prose.py)


# --- helpers the parsers share ------------------------------------------------------------

def lines_of(text: str) -> list[tuple[int, int, str]]:
    """(start, end, line) without the newline, for every line."""
    out, pos = [], 0
    for line in text.split("\n"):
        out.append((pos, pos + len(line), line))
        pos += len(line) + 1
    return out


def paragraphs(text: str, base: int = 0, *, kind: str = "text",
               heading_path: tuple[str, ...] = (), page: int | None = None,
               unit: int | None = None, line: int | None = None) -> list[Block]:
    """Blank-line separated paragraphs of `text` as blocks (offsets shifted by base)."""
    blocks = []
    for m in re.finditer(r"\S(?:.*?\S)?(?=\n[ \t]*\n|\s*\Z)", text, flags=re.S):
        blocks.append(Block(base + m.start(), base + m.end(), kind, heading_path, page, unit, line))
    return blocks


def set_heading(stack: list[tuple[int, str]], level: int, title: str) -> tuple[str, ...]:
    while stack and stack[-1][0] >= level:
        stack.pop()
    stack.append((level, title))
    return tuple(t for _, t in stack)


def short(exc: BaseException) -> str:
    msg = str(exc).strip().splitlines()[0] if str(exc).strip() else type(exc).__name__
    return msg[:160]


class DocBuilder:
    """Builds a ParsedDoc from pieces of text, each its own block, separated by blank
    lines (the office, mail, notebook and e-book parsers all build documents this way)."""

    def __init__(self) -> None:
        self.parts: list[str] = []
        self.blocks: list[Block] = []
        self.pos = 0

    def add(self, text: str, kind: str = "text", heading_path: tuple[str, ...] = (), *,
            page: int | None = None, unit: int | None = None, line: int | None = None,
            split: bool = False) -> None:
        """`split`: cut `text` into its blank-line separated paragraphs (one block each)."""
        text = text.strip("\n") if kind == "code" else text.strip()
        if not text:
            return
        if self.parts:
            self.parts.append("\n\n")
            self.pos += 2
        if split:
            self.blocks.extend(paragraphs(text, self.pos, kind=kind, heading_path=heading_path,
                                          page=page, unit=unit, line=line))
        else:
            self.blocks.append(Block(self.pos, self.pos + len(text), kind, heading_path, page,
                                     unit, line))
        self.parts.append(text)
        self.pos += len(text)

    def doc(self, *, has_lines: bool = False) -> ParsedDoc:
        return ParsedDoc("".join(self.parts), self.blocks, has_lines)
