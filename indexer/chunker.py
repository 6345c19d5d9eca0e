"""Structure-aware chunks: packed from a ParsedDoc's blocks, cut only at unit boundaries.

Units are sentences (prose) or lines (code). A chunk holds about `chunk_words` words,
starts a fresh chunk at each heading (small sections are merged), carries a little
overlap when a long section is split, and never spans two PDF pages.
"""

from __future__ import annotations

import bisect
import re
from dataclasses import dataclass

from indexer.parsers import Block, ParsedDoc


@dataclass
class Chunk:
    ord: int
    title: str
    text: str
    start_line: int | None
    end_line: int | None
    page: int | None
    char_start: int
    char_end: int


@dataclass
class _Unit:
    start: int
    end: int
    words: int
    heading: bool
    head: tuple[str, ...] = ()   # heading path of the block the unit comes from


def _common_prefix(paths: list[tuple[str, ...]]) -> tuple[str, ...]:
    first = paths[0]
    n = len(first)
    for p in paths[1:]:
        n = min(n, len(p))
        for i in range(n):
            if p[i] != first[i]:
                n = i
                break
    return first[:n]


_SENTENCE_END = re.compile(r"(?<=[.!?:;])\s+|\n")
_WORD = re.compile(r"\S+")


def _units(doc: ParsedDoc, block: Block, max_words: int) -> list[_Unit]:
    text = doc.text
    if block.kind == "heading":
        return [_Unit(block.start, block.end, _count(text, block.start, block.end), True)]
    splitter = re.compile(r"\n") if block.kind == "code" else _SENTENCE_END
    pieces, pos = [], block.start
    for m in splitter.finditer(text, block.start, block.end):
        if m.start() > pos:
            pieces.append((pos, m.start()))
        pos = m.end()
    if pos < block.end:
        pieces.append((pos, block.end))
    units = []
    for start, end in pieces:
        words = list(_WORD.finditer(text, start, end))
        if not words:
            continue
        # A unit longer than a chunk (a run-on line, a minified file) is cut by words.
        for i in range(0, len(words), max_words):
            group = words[i:i + max_words]
            units.append(_Unit(group[0].start(), group[-1].end(), len(group), False))
    return units


def _count(text: str, start: int, end: int) -> int:
    return sum(1 for _ in _WORD.finditer(text, start, end))


class _LineIndex:
    def __init__(self, text: str) -> None:
        self._starts = [0] + [m.end() for m in re.finditer("\n", text)]

    def line_of(self, offset: int) -> int:
        return bisect.bisect_right(self._starts, offset)   # 1-based


def chunk_document(doc: ParsedDoc, *, file_name: str, chunk_words: int = 200) -> list[Chunk]:
    target = max(20, chunk_words)
    max_unit = max(target, int(target * 1.2))
    min_section = max(10, target // 4)      # smaller sections merge into the next one
    overlap = max(5, target // 10)
    lines = _LineIndex(doc.text) if doc.has_lines else None
    chunks: list[Chunk] = []

    cur: list[_Unit] = []
    carried = 0                              # leading units of `cur` from the last chunk
    cur_words = fresh_words = 0
    cur_head: tuple[str, ...] = ()
    cur_page: int | None = None

    def emit(carry: bool) -> None:
        nonlocal cur, cur_words, fresh_words, carried
        if not cur or fresh_words == 0:
            cur, cur_words, fresh_words, carried = [], 0, 0, 0
            return
        start, end = cur[0].start, cur[-1].end
        # A chunk holding text from several sections is named after what they share
        # ("notes.md > Server", not the first one's "notes.md > Server > Move").
        heads = [u.head for u in cur[carried:] if not u.heading]
        path = _common_prefix(heads) if heads else cur_head
        title = " > ".join((file_name,) + path)
        chunks.append(Chunk(
            ord=len(chunks), title=title, text=doc.text[start:end],
            start_line=lines.line_of(start) if lines else None,
            end_line=lines.line_of(max(start, end - 1)) if lines else None,
            page=cur_page, char_start=start, char_end=end,
        ))
        kept: list[_Unit] = []
        if carry:
            words = 0
            for unit in reversed(cur):
                # at least the last sentence when it is short, else up to `overlap` words
                limit = max(overlap, target // 4) if not kept else overlap
                if words + unit.words > limit or unit.heading:
                    break
                kept.insert(0, unit)
                words += unit.words
        cur, cur_words, fresh_words = kept, sum(u.words for u in kept), 0
        carried = len(kept)

    for block in doc.blocks:
        new_page = block.page != cur_page
        if cur and (new_page or (block.kind == "heading" and fresh_words >= min_section)):
            emit(carry=False)
        if not cur or new_page:
            cur_head, cur_page = block.heading_path, block.page
        elif block.kind == "heading" and all(u.heading for u in cur):
            cur_head = block.heading_path   # only headings so far: the deeper one names it
        for unit in _units(doc, block, max_unit):
            unit.head = block.heading_path
            if cur_words + unit.words > target and fresh_words > 0:
                emit(carry=True)
                cur_head = block.heading_path
            cur.append(unit)
            cur_words += unit.words
            fresh_words += unit.words
    emit(carry=False)
    return chunks
