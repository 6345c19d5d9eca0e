"""Structure-aware chunks: packed from a ParsedDoc's blocks, cut only at unit boundaries.

Units are sentences (prose) or lines (code). A chunk starts fresh at each heading (small
sections are merged), carries a little overlap when a long section is split, and never
spans two PDF pages or two units (slides, messages, notebook cells, sheet rows).

Size is measured in the embedder's own word pieces when a `Sizer` is given (what
localrag does): the text the embedder reads, "title\ntext" plus [CLS] and [SEP], fits
its window (256 for MiniLM), so every word piece of every chunk is embedded; nothing
falls past the window. ReStructuredText and code run at about two word pieces per
word, so a word budget cannot promise that. Without a Sizer, size is in words
(`chunk_words`), the old rule, kept for callers that have no tokenizer.
"""

from __future__ import annotations

import bisect
import re
from collections.abc import Callable
from dataclasses import dataclass

from indexer.code_prose import Regions, prose_of_code
from indexer.documents import Block, ParsedDoc


@dataclass(frozen=True)
class Sizer:
    """Chunk size in word pieces.

    count: texts -> word pieces of each (no special tokens); additive over whitespace.
    window: the most word pieces the embedder reads, special tokens included.
    target: word pieces wanted per embedded text (title included); at most window - 2.
    specials: tokens the embedder adds around a text ([CLS], [SEP]).
    """

    count: Callable[[list[str]], list[int]]
    window: int
    target: int = 0
    specials: int = 2
    max_title: int = 48      # a deeper heading path is shortened for embedding

    @property
    def limit(self) -> int:
        """Word pieces of title + text that still fit the window."""
        return self.window - self.specials

    @property
    def budget(self) -> int:
        return min(self.target, self.limit) if self.target > 0 else self.limit


CHUNKER_VERSION = 11  # 1: words; 2: word pieces fitted to the window, cleaned markup;
#                       3: links wrapped across lines no longer shift later lines;
#                       4: units (slides, messages, cells) never shared, HTML's main
#                          content cited by file line, headings cleaned of markup;
#                       5: HTML definition lists read as a manual's options (a term ends
#                          in ":", its description indented), "¶" permalinks left out:
#                          the parser's text changed, so every file is read again (a
#                          chunk whose text is unchanged keeps its vector);
#                       6: a Markdown list item that is one link alone reads as a plain
#                          line (markup._MD_LINK_ITEM: a table of contents, not a statement);
#                       7: an HTML term written as several inline pieces (Sphinx's
#                          "flask.json." + "jsonify") is read as the page shows it, so a
#                          module function's signature is a term like any other
#                       8: a PDF's layout read: running headers and footers dropped,
#                          words broken at a line's end mended, sections from its outline
#                       9: a PDF's footnotes and code examples set apart (the marks out
#                          of the words), a sentence over a page break read whole at its
#                          first page
#                      10: a program's chunks are embedded by their prose (code_prose.py);
#                          only source files are read again (CODE_ONLY_VERSIONS)
#                      11: ... and by the words of their messages (code_prose.READ_MESSAGES:
#                          an error's, a warning's or a help text's string of prose)
CODE_ONLY_VERSIONS = frozenset({10, 11})
"""Versions that change what source files' chunks are, nothing else's: an index built at
the version before is brought up to them by reading its source files again, not every file
(Index._check_chunking)."""


def sizer_for(embedder, chunk_tokens: int = 0) -> Sizer | None:  # noqa: ANN001 - an Embedder
    """The Sizer of an indexer.embedder.Embedder (its tokenizer and window); None for an
    embedder without them (chunks are then sized in words)."""
    count, window = getattr(embedder, "count_tokens", None), getattr(embedder, "window", None)
    if count is None or not window:
        return None
    return Sizer(count=count, window=int(window), target=chunk_tokens)


def chunking_signature(chunk_words: int, chunk_tokens: int, embedder) -> str:  # noqa: ANN001
    """Stored with the index: when it changes, every file is chunked and embedded again
    (each keeps its old chunks, still searchable, until its new ones replace them)."""
    window = getattr(embedder, "window", None)
    if not window:
        return str(chunk_words)
    engine = getattr(embedder, "engine", "")
    return f"{chunk_words}|tokens={chunk_tokens or window}|v{CHUNKER_VERSION}|{engine}"


def code_only_change(stored: str, want: str) -> bool:
    """Whether two chunking signatures differ only by chunker versions that change source
    files alone (CODE_ONLY_VERSIONS), from an older to a newer one."""
    old, new = stored.split("|"), want.split("|")
    if len(old) != 4 or len(new) != 4 or old[:2] + old[3:] != new[:2] + new[3:]:
        return False
    try:
        was, now = int(old[2].lstrip("v")), int(new[2].lstrip("v"))
    except ValueError:
        return False
    return was < now and all(v in CODE_ONLY_VERSIONS for v in range(was + 1, now + 1))


def embedding_text(title: str, text: str) -> str:
    """What the embedder reads for a title and a text (the bench uses this)."""
    return f"{title}\n{text}"


def chunk_embedding_text(chunk: "Chunk") -> str:
    """What the embedder reads for a chunk: its title and its text, or for source code
    its prose in place of the text (Chunk.embed)."""
    return embedding_text(chunk.title, chunk.embed or chunk.text)


def text_key(prefix: str, text: str) -> bytes:
    """16-byte digest of what is embedded, with the model/engine/window in `prefix`:
    equal keys mean the same vector, so a stored one can be reused."""
    import hashlib

    return hashlib.blake2b(f"{prefix}\x00{text}".encode("utf-8", "surrogatepass"),
                           digest_size=16).digest()


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
    embed: str = ""     # what is embedded instead of the text (a program's prose), if not it


@dataclass
class _Unit:
    start: int
    end: int
    words: int
    heading: bool
    head: tuple[str, ...] = ()   # heading path of the block the unit comes from
    cost: int = 0                # word pieces (or words without a Sizer)


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


def _pieces(doc: ParsedDoc, block: Block) -> list[tuple[int, int]]:
    """Sentences (prose) or lines (code) of a block, as (start, end) offsets."""
    text = doc.text
    if block.kind == "heading":
        return [(block.start, block.end)]
    splitter = re.compile(r"\n") if block.kind == "code" else _SENTENCE_END
    pieces, pos = [], block.start
    for m in splitter.finditer(text, block.start, block.end):
        if m.start() > pos:
            pieces.append((pos, m.start()))
        pos = m.end()
    if pos < block.end:
        pieces.append((pos, block.end))
    return pieces


class _LineIndex:
    def __init__(self, text: str) -> None:
        self._starts = [0] + [m.end() for m in re.finditer("\n", text)]

    def line_of(self, offset: int) -> int:
        return bisect.bisect_right(self._starts, offset)   # 1-based


def _units(doc: ParsedDoc, max_words: int, sizer: Sizer | None, max_cost: Callable[[tuple[str, ...]], int]
           ) -> list[tuple[Block, list[_Unit]]]:
    """Every block's units with their sizes; a unit longer than a chunk (a run-on line,
    a minified file) is cut between words."""
    text = doc.text
    raw: list[tuple[Block, list[list[re.Match]]]] = []
    for block in doc.blocks:
        groups = []
        for start, end in _pieces(doc, block):
            words = list(_WORD.finditer(text, start, end))
            if words:
                groups.append(words)
        raw.append((block, groups))
    if sizer is not None:
        flat = [text[g[0].start():g[-1].end()] for _, groups in raw for g in groups]
        costs = iter(sizer.count(flat))
    out = []
    for block, groups in raw:
        units = []
        heading = block.kind == "heading"
        for words in groups:
            cost = next(costs) if sizer is not None else len(words)
            limit = max_cost(block.heading_path)
            if len(words) <= max_words and cost <= limit:
                units.append(_Unit(words[0].start(), words[-1].end(), len(words), heading,
                                   block.heading_path, cost))
                continue
            word_costs = (sizer.count([w.group() for w in words]) if sizer is not None
                          else [1] * len(words))
            if sizer is not None and max(word_costs) > limit:   # one "word" bigger than a chunk
                words, word_costs = _split_words(text, words, word_costs, limit, sizer)
            group_start, group_cost = 0, 0
            for i, wc in enumerate(word_costs + [None]):
                if wc is None or (i > group_start and (group_cost + wc > limit or i - group_start >= max_words)):
                    part = words[group_start:i]
                    units.append(_Unit(part[0].start(), part[-1].end(), len(part), heading,
                                       block.heading_path, group_cost))
                    group_start, group_cost = i, 0
                if wc is not None:
                    group_cost += wc
        out.append((block, units))
    return out


class _Span:
    """A piece of one long word, shaped like a regex match for the packing code."""

    def __init__(self, text: str, start: int, end: int) -> None:
        self._text, self._start, self._end = text, start, end

    def start(self) -> int:
        return self._start

    def end(self) -> int:
        return self._end

    def group(self) -> str:
        return self._text[self._start:self._end]


def _split_words(text: str, words: list, costs: list[int], limit: int, sizer: Sizer
                 ) -> tuple[list, list[int]]:
    """Words of more word pieces than a chunk holds (minified code, base64, long tables
    without spaces) cut into character runs that each fit."""
    out_words, out_costs = [], []
    for w, cost in zip(words, costs):
        if cost <= limit:
            out_words.append(w)
            out_costs.append(cost)
            continue
        start, end = w.start(), w.end()
        step = max(1, int((end - start) * limit / cost * 0.8))
        pos = start
        while pos < end:
            stop = min(end, pos + step)
            piece_cost = sizer.count([text[pos:stop]])[0]
            while piece_cost > limit and stop - pos > 1:
                stop = pos + (stop - pos) // 2
                piece_cost = sizer.count([text[pos:stop]])[0]
            out_words.append(_Span(text, pos, stop))
            out_costs.append(piece_cost)
            pos = stop
    return out_words, out_costs


def chunk_document(doc: ParsedDoc, *, file_name: str, chunk_words: int = 200,
                   sizer: Sizer | None = None, overlap: float = 0.1) -> list[Chunk]:
    """Chunks of `doc`. With a `sizer`, each chunk's embedding text (title + text) fits the
    embedder's window and holds at most `chunk_words` words; without one, the size is
    `chunk_words` words. `overlap`: the share of a chunk repeated at the start of the
    next one when a long section is split."""
    target_words = max(20, chunk_words)
    lines = _LineIndex(doc.text) if doc.has_lines else None
    regions = Regions(doc.text) if doc.prose_embedding else None
    titles: dict[tuple[str, ...], tuple[str, int]] = {}

    def title_of(path: tuple[str, ...]) -> tuple[str, int]:
        """(title, its word pieces) for a heading path; a path too long to embed next to
        the text keeps its first and last headings."""
        got = titles.get(path)
        if got is None:
            title = " > ".join((file_name,) + path)
            cost = sizer.count([title])[0] if sizer is not None else 0
            if sizer is not None and cost > sizer.max_title and len(path) > 1:
                title = " > ".join((file_name, path[0], "…", path[-1]))
                cost = sizer.count([title])[0]
            got = titles[path] = (title, cost)
        return got

    if sizer is not None:
        budget = sizer.budget

        def max_cost(path: tuple[str, ...]) -> int:
            return max(8, budget - title_of(path)[1])
    else:
        budget = target_words

        def max_cost(path: tuple[str, ...]) -> int:
            return max(target_words, int(target_words * 1.2))
    max_unit_words = target_words if sizer is not None else max(target_words, int(target_words * 1.2))
    min_section_words = max(10, target_words // 4)      # smaller sections merge into the next one
    overlap_words = max(5, target_words // 10) if overlap > 0 else 0
    overlap_cost = int(budget * overlap) if sizer is not None else overlap_words
    chunks: list[Chunk] = []

    cur: list[_Unit] = []
    carried = 0                              # leading units of `cur` from the last chunk
    cur_words = fresh_words = cur_cost = 0
    cur_head: tuple[str, ...] = ()
    cur_page: int | None = None
    cur_unit: int | None = None
    cur_lines: list[int] = []                # Block.line of the chunk's blocks (no own lines)
    cur_limit = budget                       # cost allowed for the text of the chunk being built

    def emit(carry: bool) -> None:
        nonlocal cur, cur_words, fresh_words, carried, cur_cost
        if not cur or fresh_words == 0:
            cur, cur_words, fresh_words, carried, cur_cost = [], 0, 0, 0, 0
            return
        # A chunk holding text from several sections is named after what they share
        # ("notes.md > Server", not the first one's "notes.md > Server > Move").
        heads = [u.head for u in cur[carried:] if not u.heading]
        path = _common_prefix(heads) if heads else cur_head
        parts = [cur]
        if sizer is not None:
            parts = _fit(parts, path)
        for part in parts:
            start, end = part[0].start, part[-1].end
            if lines:
                first, last = lines.line_of(start), lines.line_of(max(start, end - 1))
            else:   # the file's line of the unit (an mbox message, an HTML element), if any
                first = min(cur_lines) if cur_lines else None
                last = max(cur_lines) if cur_lines else None
            text = doc.text[start:end]
            chunks.append(Chunk(
                ord=len(chunks), title=title_of(path)[0], text=text,
                start_line=first, end_line=last,
                page=cur_page, char_start=start, char_end=end,
                embed=prose_of_code(text, regions.at(start)) if regions is not None else "",
            ))
        kept: list[_Unit] = []
        if carry and overlap > 0:
            words = cost = 0
            for unit in reversed(cur):
                # at least the last sentence when it is short, else up to the overlap
                word_limit = max(overlap_words, target_words // 4) if not kept else overlap_words
                cost_limit = max(overlap_cost, budget // 4) if not kept else overlap_cost
                if words + unit.words > word_limit or cost + unit.cost > cost_limit or unit.heading:
                    break
                kept.insert(0, unit)
                words += unit.words
                cost += unit.cost
        del cur_lines[:-1]
        cur, cur_words, fresh_words = kept, sum(u.words for u in kept), 0
        cur_cost = sum(u.cost for u in kept)
        carried = len(kept)

    def _fit(parts: list[list[_Unit]], path: tuple[str, ...]) -> list[list[_Unit]]:
        """Check the exact word pieces of each embedding text; split any that would not
        fit (counts are additive for BERT tokenizers, so this is a safety net)."""
        out = []
        for part in parts:
            title = title_of(path)[0]
            text = doc.text[part[0].start:part[-1].end]
            if len(part) == 1 or sizer.count([embedding_text(title, text)])[0] <= sizer.limit:
                out.append(part)
            else:
                half = len(part) // 2
                out.extend(_fit([part[:half], part[half:]], path))
        return out

    for block, units in _units(doc, max_unit_words, sizer, max_cost):
        # a new page or unit (slide, message, cell, sheet rows) always starts a chunk
        new_page = block.page != cur_page or block.unit != cur_unit
        if cur and (new_page or (block.kind == "heading" and fresh_words >= min_section_words)):
            emit(carry=False)
        if not cur or new_page:
            cur_head, cur_page, cur_unit = block.heading_path, block.page, block.unit
            cur_lines.clear()
        if block.line is not None:
            cur_lines.append(block.line)
        elif block.kind == "heading" and all(u.heading for u in cur):
            cur_head = block.heading_path   # only headings so far: the deeper one names it
        for unit in units:
            if fresh_words == 0:
                cur_limit = max_cost(unit.head)
            too_big = (cur_words + unit.words > target_words
                       or (sizer is not None and cur_cost + unit.cost > cur_limit))
            if too_big and fresh_words > 0:
                emit(carry=True)
                cur_head = block.heading_path
                cur_limit = max_cost(unit.head)
                while sizer is not None and cur and cur_cost + unit.cost > cur_limit:   # room for it
                    dropped = cur.pop(0)
                    cur_words -= dropped.words
                    cur_cost -= dropped.cost
                    carried -= 1
            cur.append(unit)
            cur_words += unit.words
            fresh_words += unit.words
            cur_cost += unit.cost
    emit(carry=False)
    return chunks
