"""Markup cleaning: reStructuredText, AsciiDoc and Markdown as a reader (and the embedder,
BM25 and the answer model) should see them, with every line kept in its place.

Cleaning works line by line and never adds or removes a newline: line N of the cleaned
text is line N of the file. Markup characters go (``literal`` -> literal, `:func:`x`` ->
x, `linkgit:git-add[1]` -> git-add(1), link targets and directive lines -> empty), the
words stay. So chunk line numbers, and therefore citations, still point at the file's
own lines, while what is embedded, searched and shown to the model is the prose.

`clean_doc` applies it to a ParsedDoc whose blocks were found on the raw text (headings
need their underlines): block offsets are carried over line by line.
"""

from __future__ import annotations

import re
from collections.abc import Callable

from indexer.documents import Block, ParsedDoc

# --- reStructuredText --------------------------------------------------------------------

_ADORN = re.compile(r"^\s*([=\-`:'\"~^_*+#<>.])\1{2,}\s*$")
_SIMPLE_TABLE = re.compile(r"^\s*=+( +=+)+\s*$")
_GRID_BORDER = re.compile(r"^\s*\+([-=+:]+\+)+\s*$")
_RST_TARGET = re.compile(r"^\s*\.\.\s+_[^:]*:.*$|^\s*__\s+\S.*$")
_RST_DIRECTIVE = re.compile(r"^(\s*)\.\.\s+(\|[^|]+\|\s+)?([\w:.-]+)::\s?(.*)$")
_RST_COMMENT = re.compile(r"^\s*\.\.(\s.*)?$")
_RST_OPTION = re.compile(r"^\s+:[\w -]+:(\s.*)?$")
_ADMONITIONS = {"note", "warning", "attention", "caution", "danger", "error", "hint",
                "important", "tip", "seealso", "todo", "admonition", "versionadded",
                "versionchanged", "deprecated", "rubric", "topic", "sidebar", "centered"}
# directives whose argument is content a reader sees (a signature, a name, a caption)
_KEEP_ARGS = {"function", "macro", "type", "struct", "union", "enum", "enumerator", "member",
              "var", "data", "class", "method", "attribute", "exception", "module", "option",
              "describe", "envvar", "program", "cmdoption", "figure", "table", "csv-table",
              "list-table", "glossary", "productionlist", "object"}
_ONE_NL = r"[^`\n]+(?:\n[^`\n]+)?"       # inline text, at most one line break inside
_RST_BACKTICKS = [
    (re.compile(r"``(" + _ONE_NL + r")``"), r"\1"),                                  # ``literal``
    (re.compile(r":[\w:+.-]+:`([^`<]*?)\s*<[^`>]*>`"), r"\1"),                  # :ref:`title <x>`
    (re.compile(r":[\w:+.-]+:`(" + _ONE_NL + r")`"), r"\1"),                        # :c:func:`x`
    (re.compile(r"`([^`<]+?)\s*<[^`>]*>`__?"), r"\1"),                            # `text <url>`_
    (re.compile(r"`(" + _ONE_NL + r")`(?:__?)?"), r"\1"),                             # `x`, `x`_
]
_STRONG = re.compile(r"(?<![\w*])\*\*(\S(?:.*?\S)?)\*\*(?![\w*])")
_EMPH = re.compile(r"(?<![\w*])\*(\S(?:.*?\S)?)\*(?![\w*])")
_FOOTNOTE_REF = re.compile(r"\s?\[(?:#\w*|\*|\d+)\]_")
_SUBST = re.compile(r"\|([\w -]+)\|(?:__?)?")


def _rst_backticks(text: str) -> str:
    """Backtick markup removed; a line break inside the markup (`text\n<url>`_ wraps in
    real files) stays, after the kept text, so the line count never changes."""
    def keep_lines(m: re.Match[str], repl: str) -> str:
        kept = m.expand(repl)
        return kept + "\n" * (m.group(0).count("\n") - kept.count("\n"))
    for pattern, repl in _RST_BACKTICKS:
        text = pattern.sub(lambda m, r=repl: keep_lines(m, r), text)
    return text


def _rst_inline(line: str) -> str:
    line = _STRONG.sub(r"\1", line)
    line = _EMPH.sub(r"\1", line)
    line = _FOOTNOTE_REF.sub("", line)
    line = _SUBST.sub(r"\1", line)
    return line


_RST_CODE_DIRECTIVES = {"code-block", "code", "sourcecode"}


def _indent_of(line: str) -> int:
    return len(line) - len(line.lstrip())


def clean_rst_lines(lines: list[str], literal: set[int] | None = None) -> list[str]:
    """Lines of reST as a reader sees them. The body of a literal block (after a
    paragraph ending in "::" or a code-block directive, indented deeper) is code and is
    kept as written: inline cleaning would eat its quotes, "..." lines and asterisks."""
    out: list[str] = []
    in_directive = False      # right after a directive line: its :option: lines go too
    literal_at: int | None = None   # a literal block may follow, indented deeper than this
    in_literal = False
    for number, line in enumerate(lines):
        stripped = line.strip()
        if literal_at is not None and (not stripped or _indent_of(line) > literal_at):
            if stripped and not (in_directive and _RST_OPTION.match(line) and not in_literal):
                in_literal = True
            if in_literal:
                if literal is not None:
                    literal.add(number)
                out.append(line)
                in_directive = False
                continue
        elif stripped:
            literal_at, in_literal = None, False
        if not stripped:
            out.append("")
            in_directive = False
            continue
        if in_directive and _RST_OPTION.match(line):
            out.append("")
            continue
        in_directive = False
        if _ADORN.match(line) or _SIMPLE_TABLE.match(line) or _GRID_BORDER.match(line) \
                or _RST_TARGET.match(line) or stripped == "::":
            out.append("")
            continue
        m = _RST_DIRECTIVE.match(line)
        if m:
            in_directive = True
            indent, _, name, arg = m.groups()
            base = name.rsplit(":", 1)[-1].lower()
            if base in _RST_CODE_DIRECTIVES:
                literal_at, in_literal = len(indent), False
            if base in _ADMONITIONS:
                label = base.capitalize() if base != "seealso" else "See also"
                out.append(f"{indent}{label}: {_rst_inline(arg)}".rstrip())
            elif base in _KEEP_ARGS or m.group(2):   # substitution definitions keep their text
                out.append(indent + _rst_inline(arg))
            else:
                out.append("")   # code-block, toctree, kernel-doc, include, only, ...
            continue
        if _RST_COMMENT.match(line):
            out.append("")
            continue
        if stripped.startswith("|") and stripped.endswith("|") and stripped.count("|") >= 2:
            line = line.replace("|", " ")   # a grid table row
        if line.endswith("::"):
            line = line[:-1]               # "as follows::" reads "as follows:"
            literal_at, in_literal = _indent_of(line), False
        out.append(_rst_inline(line))
    return out


# --- AsciiDoc ------------------------------------------------------------------------------

_ADOC_DELIM = re.compile(r"^(-{4,}|\.{4,}|={4,}|\*{4,}|_{4,}|\+{4,}|/{4,}|--|\+|\|={3,})\s*$")
_ADOC_MACRO_LINE = re.compile(r"^(include|ifdef|ifndef|ifeval|endif)::.*\[.*\]\s*$")
_ADOC_ATTR_ENTRY = re.compile(r"^:!?[\w-]+!?:(\s.*)?$")
_ADOC_BLOCK_ATTR = re.compile(r"^\[[^\]]*\]\s*$")
_ADOC_ANCHOR = re.compile(r"\[\[[^\]]*\]\]")
_ADOC_LINKGIT = re.compile(r"linkgit:([\w.-]+)\[(\d+)\]")
_ADOC_URL = re.compile(r"\b((?:https?|ftp|mailto):[^\s\[]+)\[([^\]]*)\]")
_ADOC_LABEL = re.compile(r"^(\s*\S.*?)(::|;;|:::|::::)\s*$")
_ADOC_LABEL_INLINE = re.compile(r"^(\s*\S.*?)::\s+(\S.*)$")
_ADOC_TITLE = re.compile(r"^(={1,5})\s+(\S.*?)\s*=*\s*$")
_ADOC_DOT_TITLE = re.compile(r"^\.(\w.*)$")
_ADOC_BACKTICK = re.compile(r"`([^`]+)`")
_ADOC_PLUS = re.compile(r"(?<![\w+])\+([^+\s][^+]*?)\+(?![\w+])")
_ADOC_SINGLE = re.compile(r"(?<![\w'])'(\S(?:[^'\n]*?\S)?)'(?![\w'])")
_ADOC_STRONG = re.compile(r"(?<![\w*])\*(\S(?:[^*\n]*?\S)?)\*(?![\w*])")
_ADOC_UNDER = re.compile(r"(?<![\w_])_(\S(?:[^_\n]*?\S)?)_(?![\w_])")
_ADOC_ATTR_REF = {"{litdd}": "--", "{caret}": "^", "{tilde}": "~", "{empty}": "", "{nbsp}": " ",
                  "{startsb}": "[", "{endsb}": "]", "{vbar}": "|", "{plus}": "+", "{sp}": " "}
_ADOC_ATTR_ANY = re.compile(r"\{[\w-]+\}")


def _adoc_inline(line: str) -> str:
    line = _ADOC_ANCHOR.sub("", line)
    for ref, value in _ADOC_ATTR_REF.items():      # first: linkgit:git-web{litdd}browse[1]
        line = line.replace(ref, value)
    line = _ADOC_LINKGIT.sub(r"\1(\2)", line)
    line = _ADOC_URL.sub(lambda m: m.group(2) or m.group(1), line)
    line = _ADOC_BACKTICK.sub(r"\1", line)
    line = _ADOC_PLUS.sub(r"\1", line)
    line = _ADOC_SINGLE.sub(r"\1", line)
    line = _ADOC_STRONG.sub(r"\1", line)
    line = _ADOC_UNDER.sub(r"\1", line)
    return line


_ADOC_LISTING = re.compile(r"^(-{4,}|\.{4,})$")
_ADOC_CALLOUT_ITEM = re.compile(r"^<\d+>\s+")


def clean_asciidoc_lines(lines: list[str]) -> list[str]:
    """Lines of AsciiDoc as a reader sees them. A listing or literal block (between
    "----" or "...." lines) is code and is kept as written; its delimiters go. A
    delimiter opens a block only after a blank line, a "+", a block attribute or a
    block title: under a text line it is a two-line section title's underline."""
    out: list[str] = []
    listing: str | None = None
    prev = ""
    for line in lines:
        stripped = line.strip()
        if listing is not None:
            if _ADOC_LISTING.match(line.rstrip()) and line[0] == listing[0]:   # any length
                listing = None
                out.append("")
            else:
                out.append(line)
            prev = line
            continue
        if _ADOC_LISTING.match(line.rstrip()) and not (      # delimiters start the line
                prev.strip() and abs(len(prev.strip()) - len(stripped)) <= 2):
            listing = stripped
            out.append("")
            prev = line
            continue
        prev = line
        if not stripped or _ADORN.match(line) or _ADOC_DELIM.match(stripped) \
                or _ADOC_MACRO_LINE.match(stripped) or _ADOC_ATTR_ENTRY.match(line) \
                or _ADOC_BLOCK_ATTR.match(stripped):
            out.append("")
            continue
        line = _ADOC_CALLOUT_ITEM.sub("", line)      # "<1> Create a .git directory."
        m = _ADOC_TITLE.match(line)
        if m:
            out.append(_adoc_inline(m.group(2)))
            continue
        m = _ADOC_DOT_TITLE.match(line)
        if m:
            out.append(_adoc_inline(m.group(1)))
            continue
        m = _ADOC_LABEL.match(line)
        if m and not line.lstrip().startswith(("$", "#")):
            out.append(_adoc_inline(m.group(1)) + ":")   # "--force::" reads "--force:"
            continue
        m = _ADOC_LABEL_INLINE.match(line)
        if m and " " not in m.group(1).strip():
            out.append(_adoc_inline(m.group(1)) + ": " + _adoc_inline(m.group(2)))
            continue
        out.append(_adoc_inline(line))
    return out


# --- Markdown ------------------------------------------------------------------------------

_MD_FENCE = re.compile(r"^ {0,3}(`{3,}|~{3,}).*$")
_MD_REFDEF = re.compile(r"^ {0,3}\[[^\]]+\]:\s+\S+.*$")
_MD_IMAGE = re.compile(r"!\[([^\]]*)\]\([^)]*\)")
_MD_LINK = re.compile(r"\[([^\]]+)\]\([^)]*\)")
_MD_REFLINK = re.compile(r"\[([^\]]+)\]\[[^\]]*\]")
_MD_CODE = re.compile(r"`+([^`]+?)`+")
_MD_STRONG = re.compile(r"(\*\*|__)(?=\S)(.+?)(?<=\S)\1")
_MD_EMPH = re.compile(r"(?<![\w*])([*_])(?=\S)(.+?)(?<=\S)\1(?![\w*])")
_MD_HTML = re.compile(r"</?[A-Za-z][\w-]*(?:\s[^<>]*)?/?>|<!--.*?-->")
_MD_TABLE_RULE = re.compile(r"^\s*\|?\s*:?-{3,}:?\s*(\|\s*:?-{3,}:?\s*)*\|?\s*$")
_MD_LINK_ITEM = re.compile(r"^(\s*)((?:[-*+]|\d{1,3}[.)])\s+)(\[[^\]]+\](?:\([^)]*\)|\[[^\]]*\]))\s*$")
"""A list item that is one link and nothing else ("* [Building without Intl
support](#building-without-intl-support)"): a table of contents or a list of documents.
Its text is a title, so the item reads as a plain line, its marker blanked (columns kept),
as an HTML list does: localrag quotes list items as statements
(localrag.answering.generate.extract.whole_list_item), and a title is none."""


def _md_inline(line: str) -> str:
    line = _MD_IMAGE.sub(r"\1", line)
    line = _MD_LINK.sub(r"\1", line)
    line = _MD_REFLINK.sub(r"\1", line)
    line = _MD_HTML.sub("", line)
    line = _MD_CODE.sub(r"\1", line)
    line = _MD_STRONG.sub(r"\2", line)
    line = _MD_EMPH.sub(r"\2", line)
    return line


def clean_markdown_lines(lines: list[str]) -> list[str]:
    """Inline markup only: links, images, emphasis, code spans, HTML tags, reference
    definitions. Headings (`## Setup`) and code fences stay: they are structure the
    chunker and the prompts read, and plain enough for the embedder."""
    out: list[str] = []
    in_fence = None
    for line in lines:
        fence = _MD_FENCE.match(line)
        if in_fence is not None:
            if fence and line.strip().startswith(in_fence):
                in_fence = None
            out.append(line)       # code stays as it is
            continue
        if fence:
            in_fence = fence.group(1)[:3]
            out.append(line)
            continue
        if _MD_REFDEF.match(line) or _MD_TABLE_RULE.match(line):
            out.append("")
            continue
        if line.lstrip().startswith("|"):
            line = line.replace("|", " ")
        item = _MD_LINK_ITEM.match(line)
        if item:
            line = item.group(1) + " " * len(item.group(2)) + item.group(3)
        out.append(_md_inline(line))
    return out


CLEANERS: dict[str, Callable[[list[str]], list[str]]] = {
    "rst": clean_rst_lines,
    "asciidoc": clean_asciidoc_lines,
    "markdown": clean_markdown_lines,
}


# inline markup whose two ends sit on neighbouring lines (the line pass cannot see it)
_ACROSS = {
    "rst": [],
    "asciidoc": [re.compile(r"`([^`\n]+\n[^`\n]+)`"),
                 re.compile(r"(?<![\w'])'([^'\s][^'\n]*\n[^'\n]*[^'\s])'(?![\w'])")],
    "markdown": [re.compile(r"(?<!`)`([^`\n]+\n[^`\n]+)`(?!`)")],
}


def clean_lines(text: str, kind: str) -> str:
    """`text` cleaned as `kind` markup; the same number of lines, each in its place."""
    if kind == "rst":   # backtick markup first: it may span a line break (not in code)
        raw = text.split("\n")
        literal: set[int] = set()
        clean_rst_lines(raw, literal)
        runs: list[str] = []
        start = 0
        for i in range(len(raw) + 1):
            if i == len(raw) or i in literal:
                if i > start:
                    runs.append(_rst_backticks("\n".join(raw[start:i])))
                if i < len(raw):
                    runs.append(raw[i])
                start = i + 1
        text = "\n".join(runs)
    lines = text.split("\n")
    cleaned = CLEANERS[kind](lines)
    assert len(cleaned) == len(lines)
    out = "\n".join(cleaned)
    for pattern in _ACROSS[kind]:
        out = pattern.sub(r"\1", out)   # the newline inside the group stays
    return out


# --- which markup is a .txt file? --------------------------------------------------------

_SNIFF_RST = re.compile(r"^\.\. [\w:-]+::|^\.\. _[^:\n]+:\s*$|:(?:ref|doc|c:func|func|c:type|"
                        r"option|kbd|code|file|term|envvar|manpage):`", re.M)
_SNIFF_ADOC = re.compile(r"linkgit:[\w.-]+\[\d\]|^(?:include|ifdef|ifndef|endif)::[^\n]*\[[^\n]*\]$|"
                         r"^\[\[[^\]\n]+\]\]$|^\[(?:verse|source[^\]\n]*|NOTE|listing|literal)\]$|"
                         r"^\+$", re.M)      # "+" alone: AsciiDoc's list continuation
# shared by both: a paragraph ending in "::" before a blank line (a reST literal block, an
# AsciiDoc labelled list) and ":name: value" lines (reST field lists, AsciiDoc attributes)
_SNIFF_EITHER = re.compile(r"^[^\n]*::\n\n|^:[\w-]+:\s", re.M)
# Sphinx's `_sources` copies keep the source's own suffix before ".txt"
_SUFFIX_KIND = {".rst": "rst", ".rest": "rst", ".md": "markdown", ".markdown": "markdown",
                ".adoc": "asciidoc", ".asciidoc": "asciidoc"}


def sniff(text: str, name: str = "") -> str | None:
    """'rst', 'asciidoc' or 'markdown' for a .txt file written in that markup (Sphinx's
    `_sources` folders, git's manuals), else None (plain text stays plain).

    A name like `vm.rst.txt` says it; otherwise the text's own signs decide: reST
    directives, roles and targets against AsciiDoc's linkgit:, include::[] and block
    attributes. Signs both share (a line ending in "::", ":field:" lines) only count for
    reST when no AsciiDoc sign outweighs them (git's manuals have many "--bare::" lines)."""
    lower = name.lower()
    if lower.endswith(".txt"):
        kind = _SUFFIX_KIND.get("." + lower[:-4].rsplit(".", 1)[-1]) if "." in lower[:-4] else None
        if kind is not None:
            return kind
    sample = text[:200_000]
    rst = len(_SNIFF_RST.findall(sample))
    adoc = len(_SNIFF_ADOC.findall(sample))
    either = len(_SNIFF_EITHER.findall(sample))
    if adoc >= 2 and adoc > rst:
        return "asciidoc"
    if rst + either >= 2:
        return "rst"
    return None


# --- carrying a parsed document over -----------------------------------------------------

def _line_starts(text: str) -> list[int]:
    starts = [0]
    pos = text.find("\n")
    while pos != -1:
        starts.append(pos + 1)
        pos = text.find("\n", pos + 1)
    return starts


def clean_title(title: str, kind: str) -> str:
    """A heading as a reader sees it, like the passage text: roles, literals and links
    go (":mod:`pathlib` --- Object-oriented..." reads "pathlib — Object-oriented...")."""
    cleaned = clean_lines(title, kind).strip()
    if kind == "rst":
        cleaned = re.sub(r"\s+---\s+", " — ", cleaned)   # Sphinx renders "---" as an em dash
    return " ".join(cleaned.split()) or title


def clean_doc(doc: ParsedDoc, kind: str) -> ParsedDoc:
    """The same document with cleaned text; blocks keep their lines (empty ones drop)."""
    import bisect

    raw = doc.text
    text = clean_lines(raw, kind)
    raw_starts, new_starts = _line_starts(raw), _line_starts(text)
    raw_len = [(raw_starts[i + 1] - 1 if i + 1 < len(raw_starts) else len(raw)) - raw_starts[i]
               for i in range(len(raw_starts))]

    def line_of(offset: int) -> int:
        return bisect.bisect_right(raw_starts, offset) - 1

    def new_line_end(line: int) -> int:
        return new_starts[line + 1] - 1 if line + 1 < len(new_starts) else len(text)

    blocks: list[Block] = []
    titles: dict[tuple[str, ...], tuple[str, ...]] = {}
    for block in doc.blocks:
        first, last = line_of(block.start), line_of(max(block.start, block.end - 1))
        start = new_starts[first]
        if block.start - raw_starts[first] >= raw_len[first]:   # started past the line's end
            start = new_line_end(first)
        end = new_line_end(last)
        while start < end and text[start].isspace():
            start += 1
        while end > start and text[end - 1].isspace():
            end -= 1
        if start >= end:
            continue   # only markup: nothing left to read
        path = titles.get(block.heading_path)
        if path is None:
            path = titles[block.heading_path] = tuple(clean_title(t, kind) for t in block.heading_path)
        blocks.append(Block(start, end, block.kind, path, block.page))
    return ParsedDoc(text, blocks, doc.has_lines)
