"""The units of an answer: what one support label and one citation attach to.

An answer is Markdown. A person reads it as sentences of prose, whole list items and
whole code blocks, so those are the units (the rule, also in the README):

* a paragraph of prose gives one unit per sentence (`lexical.split_sentences`); a heading
  line is a sentence of its own (its text keeps the `#` markers);
* a list item (`-`, `*`, `+`, `•`, `1.`, `1)`) is one unit with everything under it:
  its continuation lines, its sub-items and any code inside it;
* a code block is one unit, whatever its form: fenced (```` ``` ```` or `~~~`), indented
  by four spaces after a blank line, a reStructuredText literal block (a paragraph ending
  in `::`, or `.. code-block:: lang` / `.. code:: lang`) or an AsciiDoc listing between
  `----` lines. Its text is always a fenced Markdown block (with the language, if given),
  so every front end renders and copies it the same way;
* markup that carries no words is never a unit: a piece with no letter or digit (`..`,
  `::`, `---`) is dropped, a piece with no letter (`[2]`, `1.`) joins the sentence before
  it, reST directive and footnote markers (`.. note::`, `.. [2]`) are removed and their
  text kept, and a paragraph's closing `::` becomes `:`.

`split_units(text)` gives the units in order; `join_units(units)` puts units (or answer
segments, which carry the same `kind`, `text` and `starts_block`) back together as
Markdown. The CLI, `ask --json`, the Markdown export and the terminal app all show these
units, so they agree on what each label covers.
"""

from __future__ import annotations

import re
from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from typing import Literal, Protocol

from localrag.answering.judge.lexical import split_sentences

UnitKind = Literal["sentence", "code", "list_item"]


@dataclass(frozen=True)
class Unit:
    """One unit of an answer.

    kind: "sentence" (of prose, or a heading), "code" (a whole code block) or
    "list_item" (a whole list item).
    text: the unit's Markdown: the sentence; the code block with its fences; the item
    with its marker (continuation lines indented under it).
    starts_block: the unit begins a new paragraph, list or code block rather than
    continuing the previous unit's paragraph or list (False for the first unit).
    """

    kind: UnitKind
    text: str
    starts_block: bool = False

    @property
    def plain(self) -> str:
        """The words without Markdown structure: the code without its fences, the item
        without its marker (what a support check compares with a passage)."""
        return plain_text(self.kind, self.text)

    @property
    def finished(self) -> bool:
        """Whether the unit looks complete: a code block with its closing fence, a
        sentence or list item ending in . ! ? or … (a cut-off generation's last unit
        usually is not)."""
        return unit_finished(self.kind, self.text)


class UnitLike(Protocol):
    kind: str
    text: str
    starts_block: bool


# --- block patterns -------------------------------------------------------------------------
_FENCE = re.compile(r"^( {0,3})(`{3,}|~{3,})\s*([^`\s]*)[^`]*$")
_LIST_ITEM = re.compile(r"^( {0,3})([-*+•]|\d{1,9}[.)])(?:[ \t]+(.*))?$")
_HEADING = re.compile(r"^ {0,3}#{1,6}(?:[ \t]+.*)?$")
_SETEXT = re.compile(r"^ {0,3}(=+|-+)[ \t]*$")
_THEMATIC = re.compile(r"^ {0,3}([-*_])(?:[ \t]*\1){2,}[ \t]*$")
_ASCIIDOC = re.compile(r"^(-{4,}|\.{4,})[ \t]*$")
_REST_CODE = re.compile(r"^(\s*)\.\.[ \t]+(?:code-block|code|sourcecode)::[ \t]*(\S*)")
_REST_MARKER = re.compile(r"^\s*\.\.(?:[ \t]+(?:\[[^\]]*\]|\|[^|]*\|[ \t]*[\w-]+::|[\w-]+::))?[ \t]*")
_INDENTED = re.compile(r"^(?: {4}|\t)")
_QUOTE = re.compile(r"^ {0,3}> ?")
_HAS_LETTER = re.compile(r"[^\W\d_]")
_HAS_ALNUM = re.compile(r"[^\W_]")
_END = re.compile(r"[.!?\u2026][\"')\]’”*_`]*$")


def indent_width(line: str) -> int:
    """Leading spaces of `line`, tabs counted as 4 (how code units are shown)."""
    return len(line.expandtabs(4)) - len(line.expandtabs(4).lstrip())


def dedent_lines(lines: Sequence[str], n: int) -> list[str]:
    out = []
    for line in lines:
        line = line.expandtabs(4)
        cut = min(n, len(line) - len(line.lstrip()))
        out.append(line[cut:])
    return out


def _trim_blank(lines: list[str]) -> list[str]:
    while lines and not lines[0].strip():
        lines = lines[1:]
    while lines and not lines[-1].strip():
        lines = lines[:-1]
    return lines


def closes_fence(line: str, fence: str) -> bool:
    """Whether `line` closes a Markdown block opened by `fence` ("```", "~~~~"): the same
    character, at least as many, nothing else."""
    stripped = line.strip()
    return bool(stripped) and set(stripped) == {fence[0]} and len(stripped) >= len(fence)


def fenced(code_lines: Sequence[str], lang: str = "", *, closed: bool = True) -> str:
    """A fenced Markdown code block; the fence is longer than any backtick run inside."""
    longest = max((len(m.group(0)) for line in code_lines for m in re.finditer(r"`{3,}", line)),
                  default=0)
    fence = "`" * max(3, longest + 1)
    body = "\n".join(code_lines)
    text = f"{fence}{lang}\n{body}" if code_lines else f"{fence}{lang}"
    return f"{text}\n{fence}" if closed else text


def inline_code(text: str) -> str:
    """`text` as Markdown inline code on one line; the backtick run around it is longer
    than any inside, with a space where the text itself starts or ends with a backtick."""
    text = " ".join(text.split())
    longest = max((len(m.group(0)) for m in re.finditer(r"`+", text)), default=0)
    tick = "`" * (longest + 1)
    pad = " " if text.startswith("`") or text.endswith("`") else ""
    return f"{tick}{pad}{text}{pad}{tick}"


def code_body(text: str) -> str:
    """The code of a code unit: its lines without the fences."""
    lines = text.split("\n")
    m = _FENCE.match(lines[0]) if lines else None
    if not m:
        return text
    fence = m.group(2)
    body = lines[1:]
    if body and closes_fence(body[-1], fence):
        body = body[:-1]
    return "\n".join(body)


def code_language(text: str) -> str:
    """The language named after a code unit's opening fence ("" when none)."""
    m = _FENCE.match(text.split("\n", 1)[0])
    return m.group(3) if m else ""


def plain_text(kind: str, text: str) -> str:
    if kind == "code":
        return code_body(text)
    if kind == "list_item":
        lines = text.split("\n")
        m = _LIST_ITEM.match(lines[0])
        first = (m.group(3) or "") if m else lines[0]
        return " ".join(" ".join([first, *(line.strip() for line in lines[1:])]).split())
    return re.sub(r"^ {0,3}#{1,6}[ \t]*", "", text).strip()


def unit_finished(kind: str, text: str) -> bool:
    if kind == "code":
        lines = text.rstrip().split("\n")
        m = _FENCE.match(lines[0])
        if not m or len(lines) < 2:
            return False
        last = lines[-1].strip()
        return bool(last) and set(last) == {m.group(2)[0]} and len(last) >= len(m.group(2))
    last_line = text.rstrip().split("\n")[-1].strip()
    return bool(_END.search(last_line))


# --- the block parser -----------------------------------------------------------------------
@dataclass
class _Block:
    kind: Literal["paragraph", "heading", "code", "list_item"]
    text: str
    new_list: bool = False       # a list item that starts a list


class _Parser:
    def __init__(self, text: str) -> None:
        self.lines = text.replace("\r\n", "\n").replace("\r", "\n").split("\n")
        self.i = 0
        self.blocks: list[_Block] = []
        self.after_blank = True          # at a block boundary (start or after a blank line)
        self.prose_next = False          # after ".. note::": its indented body is prose

    def run(self) -> list[_Block]:
        while self.i < len(self.lines):
            line = self.lines[self.i]
            if not line.strip():
                self.i += 1
                self.after_blank = True
                continue
            self._block(line)
        return self.blocks

    def _add(self, block: _Block) -> None:
        self.blocks.append(block)
        self.after_blank = False
        self.prose_next = False

    def _block(self, line: str) -> None:
        if _FENCE.match(line):
            return self._fence()
        m = _REST_CODE.match(line)
        if m:
            return self._rest_code(m)
        if _ASCIIDOC.match(line.rstrip()) and self.after_blank and self._asciidoc():
            return
        if (_INDENTED.match(line) and self.after_blank and not self._in_list()
                and not self.prose_next):
            return self._indented()
        item = _LIST_ITEM.match(line)
        if item and item.group(3) and not _THEMATIC.match(line):
            return self._list_item()      # (a bare "42." or "-" line is not a list)
        if _HEADING.match(line):
            self.i += 1
            text = re.sub(r"[ \t]+#+[ \t]*$", "", line.strip())
            if _HAS_ALNUM.search(text):
                self._add(_Block("heading", text))
            return
        if _THEMATIC.match(line) or _ASCIIDOC.match(line.rstrip()):
            self.i += 1             # a rule between parts: no words, no unit
            return
        self._paragraph()

    def _in_list(self) -> bool:
        return bool(self.blocks) and self.blocks[-1].kind == "list_item" and not self.after_blank

    def _fence(self) -> None:
        m = _FENCE.match(self.lines[self.i])
        assert m
        indent, fence, lang = len(m.group(1)), m.group(2), m.group(3)
        body: list[str] = []
        self.i += 1
        closed = False
        while self.i < len(self.lines):
            line = self.lines[self.i]
            self.i += 1
            if closes_fence(line, fence):
                closed = True
                break
            body.append(line)
        if not closed:
            while body and not body[-1].strip():
                body.pop()
        self._add(_Block("code", fenced(dedent_lines(body, indent), lang, closed=closed)))

    def _indented_body(self, min_indent: int) -> list[str]:
        """Lines from self.i that are blank or indented more than `min_indent`."""
        body: list[str] = []
        while self.i < len(self.lines):
            line = self.lines[self.i]
            if line.strip() and indent_width(line) <= min_indent:
                break
            body.append(line)
            self.i += 1
        body = _trim_blank(body)
        indent = min((indent_width(x) for x in body if x.strip()), default=0)
        return dedent_lines(body, indent)

    def _rest_code(self, m: re.Match[str]) -> None:
        base, lang = indent_width(m.group(1)), m.group(2)
        self.i += 1
        # directive options (":linenos:") come first
        while self.i < len(self.lines) and re.match(r"^\s+:[\w-]+:", self.lines[self.i]):
            self.i += 1
        body = self._indented_body(base)
        if body:
            self._add(_Block("code", fenced(body, lang)))
        else:
            self.after_blank = False

    def _asciidoc(self) -> bool:
        """A listing block between two equal delimiter lines ("----"); False when the
        opening line has no closing partner (then it is a rule)."""
        delim = self.lines[self.i].rstrip()
        for j in range(self.i + 1, len(self.lines)):
            if self.lines[j].rstrip() == delim:
                body = _trim_blank(self.lines[self.i + 1:j])
                self.i = j + 1
                if body:
                    self._add(_Block("code", fenced(body)))
                return True
        return False

    def _indented(self) -> None:
        body = self._indented_body(3)
        self._add(_Block("code", fenced(body)))

    def _list_item(self) -> None:
        first = self.lines[self.i]
        m = _LIST_ITEM.match(first)
        assert m
        base = len(m.group(1))
        content_col = base + len(m.group(2)) + 1
        new_list = not (self.blocks and self.blocks[-1].kind == "list_item")
        lines = [first[base:].rstrip()]
        self.i += 1
        while self.i < len(self.lines):
            line = self.lines[self.i]
            if not line.strip():
                # a blank line continues the item only if indented content follows
                j = self.i
                while j < len(self.lines) and not self.lines[j].strip():
                    j += 1
                if j < len(self.lines) and indent_width(self.lines[j]) >= content_col:
                    lines += [""] * (j - self.i)
                    self.i = j
                    continue
                break
            ind = indent_width(line)
            if ind <= base and (_LIST_ITEM.match(line) or _FENCE.match(line) or
                                _HEADING.match(line) or _THEMATIC.match(line)):
                break                       # the next item, or a new block
            if ind > base and _FENCE.match(line.strip()):
                # a code block inside the item: keep it whole
                fm = _FENCE.match(line.strip())
                assert fm
                lines.append(line.expandtabs(4)[base:].rstrip())
                self.i += 1
                while self.i < len(self.lines):
                    inner = self.lines[self.i]
                    lines.append(inner.expandtabs(4)[min(base, indent_width(inner)):].rstrip())
                    self.i += 1
                    s = inner.strip()
                    if s and set(s) == {fm.group(2)[0]} and len(s) >= len(fm.group(2)):
                        break
                continue
            lines.append(line.expandtabs(4)[min(base, ind):].rstrip())
            self.i += 1
        # continuation lines sit under the item's text
        out = [lines[0]]
        for extra in lines[1:]:
            if extra and indent_width(extra) < content_col - base:
                extra = " " * (content_col - base) + extra.lstrip()
            out.append(extra)
        text = "\n".join(out).rstrip()
        body = plain_text("list_item", text)
        if not _HAS_ALNUM.search(body):
            self.after_blank = False
            return                          # an empty bullet
        self._add(_Block("list_item", text, new_list=new_list or self.after_blank))

    def _paragraph(self) -> None:
        lines: list[str] = []
        while self.i < len(self.lines):
            line = self.lines[self.i]
            if not line.strip():
                break
            if lines and (_FENCE.match(line) or _HEADING.match(line) or _REST_CODE.match(line)
                          or _interrupts_paragraph(line)):
                break
            if lines and _SETEXT.match(line):
                # "Title\n=====": the paragraph so far is a heading
                self.i += 1
                level = "#" if line.strip()[0] == "=" else "##"
                title = " ".join(x.strip() for x in lines)
                if _HAS_ALNUM.search(title):
                    self._add(_Block("heading", f"{level} {title}"))
                return
            lines.append(_QUOTE.sub("", line))
            self.i += 1
        text = " ".join(x.strip() for x in lines)
        directive = bool(re.match(r"\s*\.\.[ \t]+[\w-]+::", text))
        if re.match(r"\s*\.\.(\s|$)", text):      # ".. note::", ".. [2]", a bare ".."
            text = _REST_MARKER.sub("", text)
        literal = text.endswith("::")
        if literal:
            # reST: "Example::" introduces a literal block and reads "Example:"
            text = text[:-2].rstrip()
            text = text + ":" if text and not text.endswith(":") else text
        if text.strip():
            self._add(_Block("paragraph", text))
        else:
            self.after_blank = False
        self.prose_next = directive
        if literal:
            j = self.i
            while j < len(self.lines) and not self.lines[j].strip():
                j += 1
            if j < len(self.lines) and indent_width(self.lines[j]) > 0:
                self.i = j
                body = self._indented_body(0)
                if body:
                    self._add(_Block("code", fenced(body)))


def _interrupts_paragraph(line: str) -> bool:
    """A list item that may start inside a paragraph: a bullet, or an ordered item
    numbered 1 (CommonMark's rule, so "2024. It was" on a wrapped line stays prose)."""
    m = _LIST_ITEM.match(line)
    if not m or _THEMATIC.match(line) or not m.group(3):
        return False
    return not m.group(2)[0].isdigit() or m.group(2)[:-1] == "1"


def _sentences(paragraph: str) -> list[str]:
    """The sentences of a paragraph; pieces without words join a neighbour or go."""
    out: list[str] = []
    pending = ""                     # letterless pieces before the first real sentence
    for piece in split_sentences(paragraph):
        if not _HAS_ALNUM.search(piece):
            continue                 # "..", "::", "—"
        if not _HAS_LETTER.search(piece):
            if out:
                out[-1] = f"{out[-1]} {piece}"
            else:
                pending = f"{pending} {piece}".strip()
            continue
        out.append(f"{pending} {piece}".strip() if pending else piece)
        pending = ""
    if pending:                      # only digits: "42." is still an answer
        out.append(pending)
    return out


def split_units(text: str) -> list[Unit]:
    """The units of Markdown `text`, in order (see the module docstring)."""
    units: list[Unit] = []
    for block in _Parser(text).run():
        if block.kind == "paragraph":
            pieces: list[tuple[UnitKind, str]] = [("sentence", s) for s in _sentences(block.text)]
        elif block.kind == "heading":
            pieces = [("sentence", block.text)]
        elif block.kind == "list_item":
            pieces = [("list_item", block.text)]
        else:
            pieces = [("code", block.text)]
        for n, (kind, piece) in enumerate(pieces):
            starts = bool(units) and n == 0 and (block.kind != "list_item" or block.new_list
                                                  or units[-1].kind != "list_item")
            units.append(Unit(kind, piece, starts))
    return units


def join_units(units: Iterable[UnitLike]) -> str:
    """Units (or answer segments) back as one Markdown text.

    Sentences of one paragraph are joined by a space, items of one list by a line break,
    everything else by a blank line. A heading always stands alone."""
    out: list[str] = []
    prev: UnitLike | None = None
    for u in units:
        text = u.text.strip("\n")
        if not text.strip():
            continue
        if prev is not None:
            heading = prev.text.lstrip().startswith("#") or text.lstrip().startswith("#")
            if u.kind == prev.kind == "sentence" and not u.starts_block and not heading:
                out.append(" ")
            elif u.kind == prev.kind == "list_item" and not u.starts_block:
                out.append("\n")
            else:
                out.append("\n\n")
        out.append(text.strip() if u.kind == "sentence" else text)
        prev = u
    return "".join(out)


__all__ = ["Unit", "UnitKind", "code_body", "code_language", "dedent_lines", "fenced",
           "indent_width", "inline_code", "join_units",
           "plain_text", "split_units", "unit_finished"]
