"""Plain text, Markdown, reStructuredText (and AsciiDoc) and source code: the text is the
file's own, so every block is cited by its lines."""

from __future__ import annotations

import re

from indexer.documents import Block, ParsedDoc, lines_of, paragraphs, set_heading


# --- text formats ----------------------------------------------------------------------

def parse_plain(text: str) -> ParsedDoc:
    return ParsedDoc(text, paragraphs(text))


_ATX = re.compile(r"^ {0,3}(#{1,6})[ \t]+(.*?)[ \t#]*$")
_FENCE = re.compile(r"^ {0,3}(`{3,}|~{3,})")
_SETEXT = re.compile(r"^ {0,3}(=+|-+)[ \t]*$")


def parse_markdown(text: str) -> ParsedDoc:
    blocks: list[Block] = []
    stack: list[tuple[int, str]] = []
    path: tuple[str, ...] = ()
    lines = lines_of(text)
    para: list[tuple[int, int, str]] = []

    def end_para() -> None:
        if para:
            blocks.append(Block(para[0][0], para[-1][1], "text", path))
            para.clear()

    i = 0
    while i < len(lines):
        start, end, line = lines[i]
        fence = _FENCE.match(line)
        if fence:
            end_para()
            marker = fence.group(1)
            j = i + 1
            while j < len(lines) and not lines[j][2].lstrip().startswith(marker):
                j += 1
            last = min(j, len(lines) - 1)
            blocks.append(Block(start, lines[last][1], "code", path))
            i = last + 1
            continue
        atx = _ATX.match(line)
        if atx:
            end_para()
            path = set_heading(stack, len(atx.group(1)), atx.group(2).strip() or "(untitled)")
            blocks.append(Block(start, end, "heading", path))
        elif (_SETEXT.match(line) and len(para) == 1 and line.strip()
              and not (line.strip().startswith("-") and not para[0][2].strip())):
            title_start, _, title = para.pop()
            path = set_heading(stack, 1 if line.strip()[0] == "=" else 2, title.strip())
            blocks.append(Block(title_start, end, "heading", path))
        elif not line.strip():
            end_para()
        else:
            para.append((start, end, line))
        i += 1
    end_para()
    return ParsedDoc(text, blocks)


_RST_ADORN = re.compile(r"^([=\-`:'\"~^_*+#<>.])\1{2,}\s*$")


def parse_rst(text: str, *, overlines: bool = True) -> ParsedDoc:
    """Paragraphs, with section titles found by their over/underlines (level = order seen).
    AsciiDoc titles are underlined the same way but never overlined (`overlines=False`:
    there a line between two `----` lines is a listing block, not a title)."""
    blocks: list[Block] = []
    styles: list[tuple[str, bool]] = []
    stack: list[tuple[int, str]] = []
    path: tuple[str, ...] = ()
    for para in paragraphs(text):
        raw = text[para.start:para.end].split("\n")
        title = None
        if len(raw) >= 2 and _RST_ADORN.match(raw[1]) and raw[0].strip() and not _RST_ADORN.match(raw[0]) \
                and len(raw[1].strip()) >= len(raw[0].strip()) \
                and (overlines or len(raw[1].strip()) <= len(raw[0].strip()) + 2):   # AsciiDoc: same length
            title, style, head_lines = raw[0].strip(), (raw[1].strip()[0], False), 2
        elif overlines and len(raw) >= 3 and _RST_ADORN.match(raw[0]) and _RST_ADORN.match(raw[2]) and raw[1].strip():
            title, style, head_lines = raw[1].strip(), (raw[0].strip()[0], True), 3
        if title is None:
            blocks.append(Block(para.start, para.end, "text", path))
            continue
        if style not in styles:
            styles.append(style)
        path = set_heading(stack, styles.index(style) + 1, title)
        head_end = para.start + sum(len(line) + 1 for line in raw[:head_lines]) - 1
        blocks.append(Block(para.start, head_end, "heading", path))
        rest = text[head_end:para.end]
        if rest.strip():
            blocks.extend(paragraphs(rest, head_end, heading_path=path))
    return ParsedDoc(text, blocks)


DEF_LINE = re.compile(
    r"^(?P<indent>[ \t]*)(?:export\s+|pub(?:\([^)]*\))?\s+|public\s+|private\s+|static\s+|async\s+)*"
    r"(?P<kind>def|class|function|func|fn|interface|struct|impl|trait|module|enum)\s+(?P<name>[A-Za-z_$][\w$]*)"
)
"""A definition's first line in most languages (its keyword and name): parse_code's headings,
and the names code_prose embeds."""


def parse_code(text: str) -> ParsedDoc:
    """Source code: blank-line separated blocks; top-level definitions become headings."""
    blocks: list[Block] = []
    stack: list[tuple[int, str]] = []
    path: tuple[str, ...] = ()
    for para in paragraphs(text, kind="code"):
        line_start = text.rfind("\n", 0, para.start) + 1   # keep the indentation
        first_line = text[line_start:para.end].split("\n", 1)[0]
        m = DEF_LINE.match(first_line)
        if m and len(m.group("indent").expandtabs(4)) <= 4:
            level = 1 if not m.group("indent") else 2
            path = set_heading(stack, level, m.group("name"))
        blocks.append(Block(para.start, para.end, "code", path))
    return ParsedDoc(text, blocks)
