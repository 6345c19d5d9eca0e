"""PDF: the text layer of each page, read as typeset (running headers and footers, the
contents' and index's page pointers left out, words broken at a line's end mended,
footnotes and code examples set apart, a sentence over a page break read whole, sections
from the PDF's outline); a page without a text layer can be read by OCR (optional)."""

from __future__ import annotations

import io
import logging
import re
from dataclasses import replace

from indexer.documents import Block, ParsedDoc, lines_of, paragraphs, set_heading, short
from indexer.reading import FileSkip


# --- PDF -------------------------------------------------------------------------------

OCR_HOW = ('to read it by OCR: `pip install "localrag[ocr]"`, then '
           '`localrag settings --set ocr true` and index again')


OCR_MISSING = "scanned: no text layer, and OCR is on but its package is not installed"


def scanned_reason() -> str:
    return f"scanned: no text layer (the pages are images); {OCR_HOW}"


def ocr_may_read(reason: str) -> bool:
    """Whether a scan skipped for this reason is worth reading again once OCR is on: it
    was skipped with OCR off, or with its package missing (then installed, as the reason
    said). One that OCR already read and found blank is not read again."""
    return reason.startswith(scanned_reason()) or reason.startswith(OCR_MISSING)


LIGATURES = str.maketrans({"\ufb00": "ff", "\ufb01": "fi", "\ufb02": "fl", "\ufb03": "ffi",
                           "\ufb04": "ffl", "\ufb05": "st", "\ufb06": "st"})
"""Typeset ligatures as the letters they join: a PDF's text layer often keeps the glyph
(U+FB01 for "fi"), and then a search for "configuration" would never match the
"conﬁguration" of fontconfig's or bzip2's manual (bench/bench_formats.py found it)."""


def parse_pdf(data: bytes, *, ocr: bool = False) -> ParsedDoc:
    """Text layer of each page; blocks never span pages (chunks inherit that). `ocr`:
    pages without a text layer are read by OCR (rapidocr, the optional `[ocr]` extra)."""
    logging.getLogger("pypdf").setLevel(logging.ERROR)  # its warnings would litter the TUI
    try:
        from pypdf import PdfReader

        reader = PdfReader(io.BytesIO(data))
        if reader.is_encrypted:
            _decrypt_without_password(reader)
        pages = list(reader.pages)
    except FileSkip:
        raise
    except Exception as exc:
        raise FileSkip("error", f"cannot read PDF: the file is damaged or not a PDF "
                       f"({short(exc)}); re-export or re-download it", "damaged") from None
    texts: list[str] = []
    reader_ocr: _Ocr | None = None
    for number, page in enumerate(pages, start=1):
        try:
            text = (page.extract_text() or "").replace("\r\n", "\n").replace("\x00", "")
            text = text.translate(LIGATURES)
        except Exception:  # one bad page must not lose the others
            text = ""
        text = text.strip()
        if not text and ocr:
            if reader_ocr is None:
                reader_ocr = _Ocr(data)
            text = reader_ocr.page_text(number - 1)
        texts.append(text)
    texts = without_page_pointers(without_running_lines(texts))
    headings = _outline(reader)
    bodies, notes = footnotes_apart(texts, headings)
    texts = dehyphenated([_with_notes(body, page_notes) for body, page_notes
                          in zip(code_apart(sentences_across_pages(bodies)), notes)])
    parts: list[str] = []
    blocks: list[Block] = []
    pos = 0
    stack: list[tuple[int, str]] = []
    for number, text in enumerate(texts, start=1):
        if not text:
            for level, title in headings.get(number - 1, ()):   # a section on a blank page
                set_heading(stack, level, title)
            continue
        if parts:
            parts.append("\n\n")
            pos += 2
        text, page_blocks = _page_blocks(text, pos, number, headings.get(number - 1, ()), stack)
        blocks.extend(page_blocks or [Block(pos, pos + len(text), "text", (), number)])
        parts.append(text)
        pos += len(text)
    if not blocks:
        if ocr and reader_ocr is not None and reader_ocr.missing:
            raise FileSkip("skipped", f"{OCR_MISSING}: `pip install \"localrag[ocr]\"`", "no_text")
        if ocr:
            raise FileSkip("skipped", "scanned: no text layer, and OCR found no text on its "
                           "pages", "no_text")
        raise FileSkip("skipped", scanned_reason(), "no_text")
    text = "".join(parts)
    blocks = [replace(b, kind="code") if b.kind == "text" and all(_code_lines(text[b.start:b.end].split("\n")))
              else b for b in blocks]
    return ParsedDoc(text, blocks, has_lines=False)


RUNNING_EDGE = 3
"""Running headers and footers are looked for among a page's first and last this many
lines: a book's "Chapter 5: Arrays and matrices" and page number, a paper's short title and
authors, a journal's footer."""
_NUMBER = re.compile(r"\d+")
_ROMAN_PAGE = re.compile(r"[ivxlc]+", re.IGNORECASE)
_ROMAN_EDGE = re.compile(r"^[ivxlc]+(?= )|(?<= )[ivxlc]+$")


def _edge_key(line: str) -> str:
    """A line as it repeats from page to page: numbers (the page's) as "#", also a roman one
    at the line's start or end, case and spacing ignored."""
    key = " ".join(_NUMBER.sub("#", line).lower().split())
    if _ROMAN_PAGE.fullmatch(key):
        return "#"
    return _ROMAN_EDGE.sub("#", key)     # "xii Foreword by R. E. Viewer": a front matter's page


def without_running_lines(texts: list[str]) -> list[str]:
    """Each page's text without its running header and footer lines: a line among a
    page's first or last RUNNING_EDGE lines that, numbers aside, is also among those of a
    page one or two before or after it (two: a book's left and right pages differ). The
    page number alone ("24", "xii") is one such line. Left in, the header runs into the
    page's first sentence ("Chapter 5: Arrays and matrices 24 5.6 Generalized transpose
    of an array The function aperm ...") and repeats in every chunk's words. Needs three
    pages with text; a shorter document is left as it is."""
    if sum(1 for t in texts if t) < 3:
        return texts
    edges: list[tuple[set[str], set[str]]] = []
    for text in texts:
        lines = [ln for ln in text.split("\n") if ln.strip()]
        edges.append(({_edge_key(ln) for ln in lines[:RUNNING_EDGE]},
                      {_edge_key(ln) for ln in lines[-RUNNING_EDGE:]}))
    templates = _header_templates(edges)
    out = []
    for i, text in enumerate(texts):
        if not text:
            out.append(text)
            continue
        near = [edges[j] for j in (i - 2, i - 1, i + 1, i + 2) if 0 <= j < len(texts) and j != i]
        top = set().union(*(e[0] for e in near)) if near else set()
        bottom = set().union(*(e[1] for e in near)) if near else set()
        lines = text.split("\n")
        filled = [k for k, ln in enumerate(lines) if ln.strip()]
        drop = {k for k in filled[:RUNNING_EDGE] if _edge_key(lines[k]) in top}
        drop |= {k for k in filled[-RUNNING_EDGE:] if _edge_key(lines[k]) in bottom}
        # a number alone on the page's first or last line: its number (a chapter's first
        # page has it at the foot where its neighbours have it in their header)
        drop |= {k for k in (filled[0], filled[-1]) if _edge_key(lines[k]) == "#"}
        first = _edge_key(lines[filled[0]])
        if first.endswith("#") and " ".join(first.split()[:2]) in templates:
            drop.add(filled[0])   # a chapter's one page after its first: "Chapter 9: Loops 44"
        # only an unbroken run from the edge: a line below a kept one is the page's own
        head = 0
        while head < len(filled) and filled[head] in drop:
            head += 1
        tail = len(filled)
        while tail > head and filled[tail - 1] in drop:
            tail -= 1
        kept = set(filled[head:tail])
        out.append("\n".join(ln for k, ln in enumerate(lines) if k in kept or not ln.strip()).strip())
    return out if any(out) else texts    # pages of one repeated line each: that is the text


_BROKEN_WORD = re.compile(r"((?<=-))?([^\W\d_]+)-\n([^\W\d_]+)(\S*)([ \t]+)?")
# an identifier broken after one of its underscores ("LD_" / "LIBRARY_PATH", "R_init_" /
# "pkgname"): not a name that starts and ends with one ("_R_CHECK_TIMINGS_" / "is"), nor
# one that ends with two ("__linux__" / "macOS:", a list of names one a line)
_BROKEN_NAME = re.compile(r"(?<!\w)([A-Za-z0-9](?:[\w.]*[A-Za-z0-9.])?_)\n([A-Za-z0-9]\S*)([ \t]+)?")
_BROKEN_PAIR = re.compile(r"[^\W\d_]+-\n[^\W\d_]+")
_WORDS = re.compile(r"[^\W\d_]+(?:-[^\W\d_]+)*")


def dehyphenated(texts: list[str]) -> list[str]:
    """Words the typesetting broke at a line's end made whole again: "recom-\nmended"
    -> "recommended" (the rest of the line moves down), so that search and quotes read
    the word; LaTeX and TeX break about one word a page. A compound keeps its hyphen
    ("Debian-\nbased" -> "Debian-based"): the document itself decides, by the form it
    uses on one line elsewhere (the joined word or the hyphenated one), else a word whose
    two parts it shows as words of their own keeps it ("network-\nmounted", "stack-\nbased");
    a word it never shows whole is joined when its second part starts in lower case ("de-\nfault"), kept
    hyphenated otherwise ("non-\nASCII"), and so is a word already hyphenated ("cut-and-\n
    paste"). Likewise an identifier broken after one of its underscores, as texinfo breaks
    them ("LD_\nLIBRARY_PATH" -> "LD_LIBRARY_PATH": an exact lookup types it whole), but not
    a name that starts and ends with one ("_R_CHECK_TIMINGS_\nis") or ends with two
    ("__linux__\nmacOS:", names one a line)."""
    seen: set[str] = set()
    for text in texts:   # the words the document shows whole (not the halves of broken ones)
        seen.update(w.lower() for w in _WORDS.findall(_BROKEN_PAIR.sub(" ", text)))

    def mend(m: re.Match) -> str:
        joined, first, second, rest, space = m.groups()
        whole, compound = first + second, f"{first}-{second}"
        if joined is not None or compound.lower() in seen:   # "cut-and-" / "paste"
            word = compound
        elif whole.lower() in seen:
            word = whole
        elif first.lower() in seen and second.lower() in seen:   # "stack-" / "based"
            word = compound
        else:
            word = whole if second[0].islower() else compound
        return word + rest + ("\n" if space else "")

    texts = [_BROKEN_NAME.sub(_join_name, t) if "_\n" in t else t for t in texts]
    return [_BROKEN_WORD.sub(mend, text) if "-\n" in text else text for text in texts]


def _join_name(m: re.Match) -> str:
    """A name's two parts as one, the rest of its second line moved down after it."""
    first, second, space = m.groups()
    return first + second + ("\n" if space else "")


_PAGE_POINTER = re.compile(r"[^\n]*?(?:\.[ \t]?){4,}[ \t]*(?:\d+|[ivxlc]+)(?:[ \t]*[,\u2013-][ \t]*\d+)*[ \t]*",
                           re.IGNORECASE)


def without_page_pointers(texts: list[str]) -> list[str]:
    """Each page without the lines that only point to a page through a dot leader: a table
    of contents' "1.1 Package structure ........ 3" and an index's "R_alloc . . . . . 110".
    The pages they point to are indexed; kept, they are what search finds for a name (the
    index lists every name once more, in a passage of nothing but names and numbers). Four
    dots at least: an ellipsis ("1, 2, ... 10") is three. On a page that is half such lines
    or more, a numbered entry's first line that wraps above its pointer goes with it ("7.18
    Why does the output from anova() depend on the" / "order of factors in the model? . . .
    57")."""
    out = []
    for text in texts:
        if "...." not in text and ". . . ." not in text:
            out.append(text)
            continue
        lines = text.split("\n")
        drop = [bool(_PAGE_POINTER.fullmatch(ln)) for ln in lines]
        filled = sum(1 for ln in lines if ln.strip())
        if 2 * sum(drop) >= filled:       # a contents or index page: an entry wraps
            for k in range(len(lines) - 1):
                if (drop[k + 1] and not drop[k] and _ENTRY.match(lines[k])
                        and not _ENTRY.match(lines[k + 1]) and not _ENDS.search(lines[k])):
                    drop[k] = True        # "7.18 Why does the output from anova() depend on the"
        kept = [ln for ln, gone in zip(lines, drop) if not gone]
        out.append("\n".join(kept).strip() if len(kept) < len(lines) else text)
    return out


_ENDS = re.compile(r"[.?!:;][)\]’”\"']*\s*$")
_ENTRY = re.compile(r"\s*(?:\d+|[A-Z])(?:\.\d+)*\.?\s+\S")   # "7.18 Why ...", "B.2 Options"


_FOOTNOTE_START = re.compile(r"([1-9]\d{0,2})[ \t]+(?=[^\W\d_]|[‘“\"(\[]|https?:)")
MAX_FOOTNOTE_SHARE = 0.5
"""Footnotes are looked for in a page's last half of lines at most."""
MAX_NOTE_LINES = 6
"""... and each is this many lines at most: a longer run under a numbered line is the
page's own text (a list of return values, "1 if the algorithm converged ...")."""


def _footnote_marks(body: str, number: int) -> list[re.Match]:
    """Where `number` stands as a footnote mark in a page's text: glued to the end of a
    word, or to the punctuation after one ("UTF-16LE1", "installs.1 There")."""
    return list(re.finditer(rf"(?<=[^\W\d_])([.,;:)\]’”]?){number}(?![\d\w])", body))


def footnotes_apart(texts: list[str], headings: dict[int, list[tuple[int, str]]] | None = None
                    ) -> tuple[list[str], list[list[str]]]:
    """Each page split into its body and its footnotes, the marks taken out of the body.
    A footnote starts on a line of the page's lower half with its number and a word
    ("1 There are reports of ..."), the same number standing as a mark in the text above
    it, glued to a word ("UTF-16LE1", "installs.1"); the footnotes after it on the page
    follow in number order, the lines between them are theirs. The text layer runs a
    page's footnotes on from its last line: "... page 24.) 1 the distinction is subtle"
    would read as one sentence, and "installs.1 There" as no sentence end at all. A note
    is kept, without its number, as a paragraph of its own at the page's end. A mark is
    taken out only where it stands once on the page (else "log2" could be one). Not a
    footnote: a section heading ("2 Sectioning and equations": a title of the page in the
    outline `headings`, by 0-based page, or a short capitalised line with more under it),
    nor a line that goes on from a formula ("M(n|n) =" / "1 has been used in (9)")."""
    bodies: list[str] = []
    notes: list[list[str]] = []
    for page, text in enumerate(texts):
        lines = text.split("\n")
        titles = {_bare_title(t) for _, t in (headings or {}).get(page, ())} - {""}
        low = max(1, len(lines) - int(len(lines) * MAX_FOOTNOTE_SHARE))
        found: tuple[int, list[tuple[int, int]]] | None = None
        for k in range(low, len(lines)):
            m = _FOOTNOTE_START.match(lines[k])
            if not m or _FORMULA_END.search(lines[k - 1]) or _bare_title(lines[k]) in titles:
                continue
            if (len(lines[k]) <= 40 and lines[k][m.end()].isupper() and "://" not in lines[k]
                    and not _ENDS.search(lines[k]) and k + 1 < len(lines)
                    and not _FOOTNOTE_START.match(lines[k + 1])):
                continue     # "2 Sectioning and equations" / "Sections, subsections, ..."
            body = "\n".join(lines[:k])
            chain, expected = [], int(m.group(1))
            for j in range(k, len(lines)):
                n = _FOOTNOTE_START.match(lines[j])
                if n and int(n.group(1)) == expected:
                    chain.append((j, expected))
                    expected += 1
            ends = [j for j, _ in chain[1:]] + [len(lines)]
            if (all(b - a <= MAX_NOTE_LINES for (a, _), b in zip(chain, ends))
                    and all(_footnote_marks(body, number) for _, number in chain)):
                found = (k, chain)
                break
        if found is None:
            bodies.append(text)
            notes.append([])
            continue
        k, chain = found
        body = "\n".join(lines[:k]).rstrip()
        for _, number in chain:
            marks = _footnote_marks(body, number)
            if len(marks) == 1:
                m = marks[0]
                body = body[:m.start()] + m.group(1) + body[m.end():]
        page_notes = []
        for (j, number), nxt in zip(chain, [j for j, _ in chain[1:]] + [len(lines)]):
            first = _FOOTNOTE_START.match(lines[j])
            page_notes.append("\n".join([lines[j][first.end():]] + lines[j + 1:nxt]).strip())
        bodies.append(body)
        notes.append([n for n in page_notes if n])
    return bodies, notes


_CODE_START = re.compile(
    r"^\s*(?:R?>\s|\$\s|>>\s|#include\b|#define\b|#!)"      # a prompt, a preprocessor line
    r"|^\s*[\w.$@\[\]\"']+\s*<-\s"                                # an assignment: "x <- 1"
    r"|^\s*[\w.$@:]+\([^\n]*\)\s*[;,]?\s*$"                        # a call alone: "par(col=4)"
    r"|[()=\[\]*<>][^\n]*[;{]\s*$|^\s*[{}]\s*$")                    # a C statement, a brace
_CONTINUED = re.compile(r"\s*\+\s")
_COMMENT = re.compile(r"\s(?:#|//)\s.*$")
_STRING = re.compile(r"\"[^\"]*\"|'[^']*'")
_PROSE = re.compile(r"[^\W\d_]{2,} [^\W\d_]{2,} [^\W\d_]{2,} [^\W\d_]{2,}|[.:;] +[(A-Z‘“]")


def code_line(line: str) -> bool:
    """A line of a code example as a PDF's text layer gives it: a prompt ("> plot(x)",
    "$ make"), an assignment ("x <- c(1, 2)"), a call alone on its line, a C statement or
    brace; not a line of prose that names code ("scan() function for input. (see ...)",
    "row <- mat[2, ], it is by default turned into"): four words in a row or a sentence's
    end outside the line's strings and trailing comment make it prose."""
    if not _CODE_START.search(line):
        return False
    bare = _STRING.sub('""', _COMMENT.sub("", line))
    return not _PROSE.search(bare)


def _code_lines(lines: list[str]) -> list[bool]:
    """Per line of a page, whether it belongs to a code example: a code_line, R's
    continuation prompt ("+ ...") after one, or a short line between two of them that ends
    no sentence (an output such as "[1] FALSE")."""
    code = [code_line(ln) for ln in lines]
    for k in range(1, len(lines)):
        if code[k - 1] and _CONTINUED.match(lines[k]):
            code[k] = True
    for k in range(1, len(lines) - 1):
        if (code[k - 1] and code[k + 1] and not code[k] and len(lines[k].split()) <= 6
                and not _ENDS.search(lines[k])):
            code[k] = True
    return code


def code_apart(bodies: list[str]) -> list[str]:
    """Each page with its code examples set apart by blank lines: a run of code lines (a
    line between two of them goes with them when it is short and ends no sentence, an
    output such as "[1] FALSE") is a paragraph of its own. The text layer has no fonts: run
    on, "For example, rowmatrix <- mat[2, , drop = FALSE] # creates a row matrix" reads as
    one sentence of prose and could be quoted as one."""
    out = []
    for body in bodies:
        lines = body.split("\n")
        code = _code_lines(lines)
        if not any(code):
            out.append(body)
            continue
        kept: list[str] = []
        for k, line in enumerate(lines):
            starts = code[k] and (k == 0 or not code[k - 1])
            ends_run = k > 0 and code[k - 1] and not code[k]
            if (starts or ends_run) and kept and kept[-1].strip():
                kept.append("")
            kept.append(line)
        out.append("\n".join(kept))
    return out


_FORMULA_END = re.compile(r"(?:=|\s\+|[−×·])\s*$")   # not "C++", "<Rmath.h>", a broken word, a URL


def _bare_title(text: str) -> str:
    """A heading's letters and digits without its section number ("2 Sectioning" ->
    "sectioning")."""
    m = _SECTION_NUMBER.match(text)
    return _title_key(text[m.end():] if m else text)


def _with_notes(body: str, notes: list[str]) -> str:
    """A page's text again: its body, then each footnote as a paragraph of its own."""
    return "\n\n".join([body, *notes]) if body else "\n\n".join(notes)


_SENTENCE_END = re.compile(r"(\w*)[.?!][)\]’”\"']*(?=\s|$)")
_ABBREVIATIONS = frozenset({"e.g", "i.e", "g", "e", "etc", "vs", "cf", "al", "vol", "no", "pp", "p",
                            "fig", "eq", "sec", "ch", "ed", "dr", "mr", "ms", "approx", "resp"})
_RUNS_ON = re.compile(r"(?:[^\W\d_],?|[^\W\d_]-)$")   # a line that stops mid-sentence
_CAPTION = re.compile(r"(?:Figure|Fig\.|Table|Listing)\s*[\dA-Z][\w.]*[:.]\s", re.IGNORECASE)
_CODE_MARK = re.compile(r"<-|[{}#=;]|\$ |^>")
MAX_CARRIED_LINES = 3


def sentences_across_pages(bodies: list[str]) -> list[str]:
    """Pages whose last sentence runs on to the next page given the rest of it, from the
    next page's top up to its sentence end (at most MAX_CARRIED_LINES lines): the
    sentence is read, quoted and cited whole, at the page where it starts, as a reader
    cites it. Else the page would end in "... to use C++14 code in a package, the" and
    the next start with "package's Makevars file (or ...)", two halves that no one can
    quote. Only prose: the page's last line stops after a word, a comma or a word broken
    by a hyphen, and holds no code ("<-", "=", braces, a prompt); the next page's first
    line goes on in lower case. A last line that starts with a number and a word is taken
    for a footnote (its mark not found) and a caption ("Table 1.3: ...") for a float's: the
    page's body sentence broke above them, where the rest cannot go. Both are left as they are."""
    out = list(bodies)
    for i in range(len(out) - 1):
        here, there = out[i], out[i + 1]
        if not here.strip() or not there.strip():
            continue
        last = here.rstrip().rsplit("\n", 1)[-1]
        first = there.lstrip().split("\n", 1)[0]
        if (not _RUNS_ON.search(last) or _CODE_MARK.search(last) or len(last.split()) < 4
                or _FOOTNOTE_START.match(last)                # a footnote not told as one
                or _CAPTION.match(last)                       # "Figure 2: Image created ..."
                or not first[:1].islower() or _CODE_MARK.search(first)):
            continue
        there = there.lstrip()
        head = "\n".join(there.split("\n")[:MAX_CARRIED_LINES])
        end = next((m for m in _SENTENCE_END.finditer(head)
                    if m.group(1).lower() not in _ABBREVIATIONS or m.group(0)[-1] in "?!"), None)
        if end is None or len(head[:end.end()].strip()) <= 3:     # "c." alone: a list's label
            continue
        out[i] = here.rstrip() + "\n" + there[:end.end()]
        out[i + 1] = there[end.end():].lstrip(" \t").lstrip("\n")
    return out


def _header_templates(edges: list[tuple[set[str], set[str]]]) -> set[str]:
    """The first two words of a running header that names the chapter and the page, when
    at least three chapters' headers share them ("chapter #:" of "Chapter 5: Arrays and
    matrices 24"): a chapter with one page after its first has no neighbour with its
    header, and is told by this."""
    shared: dict[str, set[str]] = {}
    for i, (top, _) in enumerate(edges):
        near = set().union(*(edges[j][0] for j in (i - 2, i - 1, i + 1, i + 2) if 0 <= j < len(edges)))
        for key in top & near:
            words = key.split()
            if len(words) > 2 and key.endswith("#") and "#" in " ".join(words[:2]):
                shared.setdefault(" ".join(words[:2]), set()).add(key)
    return {prefix for prefix, keys in shared.items() if len(keys) >= 3}


def _outline(reader) -> dict[int, list[tuple[int, str]]]:  # noqa: ANN001 - pypdf.PdfReader
    """The PDF's outline (its bookmarks: the table of contents a viewer shows), as
    (level, title) by 0-based page, in order; empty when it has none or it cannot be read."""
    found: dict[int, list[tuple[int, str]]] = {}

    def walk(items, level: int) -> None:  # noqa: ANN001
        for item in items:
            if isinstance(item, list):
                walk(item, level + 1)
                continue
            try:
                page = reader.get_destination_page_number(item)
                title = " ".join(str(item.title).split())
            except Exception:
                continue
            if page is not None and page >= 0 and title:
                found.setdefault(page, []).append((level, title))

    try:
        walk(reader.outline, 1)
    except Exception:
        return {}
    return found


def _title_key(text: str) -> str:
    return "".join(ch for ch in text.lower() if ch.isalnum())


_SECTION_NUMBER = re.compile(r"(?:[0-9]+|[A-Z]|[IVXLC]+)(?:\.[0-9]+)*\.?\s+|(?:chapter|appendix|part|section)\s+\S+\s*[:.]?\s*",
                             re.IGNORECASE)


def _heading_line(lines: list[tuple[int, int, str]], start: int, title: str) -> tuple[int, int] | None:
    """The line (or two lines, a wrapped title) at or after `start` that shows the outline
    title `title`, as (first, last) line index: the same letters and digits, else the
    title after the section number the page prints and the outline leaves out
    ("Introduction" for "1 Introduction", "Appendix A The Reference" for "A The Reference")."""
    want = _title_key(title)
    if not want:
        return None
    bare = _title_key(_SECTION_NUMBER.sub("", title, count=1)) if _SECTION_NUMBER.match(title) else want
    unnumbered = None                                  # the first line matching without its number
    for i in range(start, len(lines)):
        for j in (i, i + 1):
            if j >= len(lines):
                break
            text = " ".join(ln for _, _, ln in lines[i:j + 1]).strip()
            key = _title_key(text)
            if len(key) > 3 * len(want) + 12:
                break
            if key == want:
                return i, j
            if unnumbered is None:
                without = _title_key(_SECTION_NUMBER.sub("", text, count=1))
                if without and without in (want, bare):
                    unnumbered = (i, j)
    return unnumbered


def _page_blocks(text: str, base: int, page: int, entries, stack: list[tuple[int, str]]  # noqa: ANN001
                 ) -> tuple[str, list[Block]]:
    """One page's text and blocks: its paragraphs under the outline's headings, each
    heading the page shows a block of its own where it stands, set apart by blank lines
    (the page prints it on a line of its own, above its section's first sentence; run
    together, "2.12 Why is R named R? The name is partly based ..." would read as one
    sentence). A heading of the outline not found on its page (drawn as an image, or worded
    apart) names the page from its top. `stack` is the heading path so far (carried from
    page to page)."""
    lines = text.split("\n")
    located = lines_of(text)
    prior = tuple(t for _, t in stack)                  # the section the page goes on with
    cuts: list[tuple[int, int, tuple[str, ...]]] = []   # (first line, last line, path)
    at = 0
    for level, title in entries:
        found = _heading_line(located, at, title)
        shown = " ".join(" ".join(lines[found[0]:found[1] + 1]).split()) if found else ""
        path = set_heading(stack, level, shown or title)   # as the page shows it, numbered
        if found is None:
            if not cuts:
                cuts.append((0, -1, path))       # from the page's top, with no heading line
            else:
                cuts[-1] = (cuts[-1][0], cuts[-1][1], path)
            continue
        cuts.append((found[0], found[1], path))
        at = found[1] + 1
    if not cuts:
        return text, paragraphs(text, base, heading_path=prior, page=page)
    # the page again, each heading line a paragraph of its own
    starts = {a for a, b, _ in cuts if b >= 0}
    ends = {b for _, b, _ in cuts if b >= 0}
    out: list[str] = []
    moved: dict[int, int] = {}
    for k, line in enumerate(lines):
        if k in starts and out and out[-1].strip():
            out.append("")
        moved[k] = len(out)
        out.append(line)
        if k in ends and k + 1 < len(lines) and lines[k + 1].strip():
            out.append("")
    text = "\n".join(out)
    located = lines_of(text)
    blocks: list[Block] = []
    first = moved[cuts[0][0]]
    if first > 0:      # text above the page's first heading: the section before goes on
        blocks += paragraphs(text[:located[first][0]], base, heading_path=prior, page=page)
    for k, (a, b, path) in enumerate(cuts):
        body_start = 0 if b < 0 else located[moved[b]][1]
        if b >= 0:
            blocks.append(Block(base + located[moved[a]][0], base + located[moved[b]][1], "heading", path, page))
        end = located[moved[cuts[k + 1][0]]][0] if k + 1 < len(cuts) else len(text)
        blocks += paragraphs(text[body_start:end], base + body_start, heading_path=path, page=page)
    return text, blocks


def _decrypt_without_password(reader) -> None:  # noqa: ANN001 - pypdf.PdfReader
    """Open an encrypted PDF with the empty user password, which is how PDFs that only
    restrict printing or copying are made; one that needs a password is reported."""
    from pypdf.errors import DependencyError

    try:
        opened = reader.decrypt("")
    except DependencyError:
        raise FileSkip("error", "PDF is encrypted with AES, and reading it needs the "
                       "`cryptography` package: `pip install cryptography`", "encrypted") from None
    except Exception as exc:
        raise FileSkip("error", f"PDF is encrypted in a way that cannot be opened "
                       f"({short(exc)}); save an unprotected copy to index it", "encrypted") from None
    if not opened:
        raise FileSkip("error", "PDF is password-protected; save an unprotected copy "
                       "to index it", "encrypted")


class _Ocr:
    """OCR of a PDF's pages: pypdfium2 renders a page (Apache-2.0 / BSD), rapidocr reads
    it with its bundled ONNX models (Apache-2.0); both from the optional `[ocr]` extra.
    Off by default: 13-17 s for a full page on two cores (README)."""

    DPI = 200

    def __init__(self, data: bytes) -> None:
        self.missing = False
        self._pdf = self._engine = None
        try:
            import numpy  # noqa: F401
            import pypdfium2
            from rapidocr_onnxruntime import RapidOCR
        except Exception:
            self.missing = True
            return
        logging.getLogger("RapidOCR").setLevel(logging.ERROR)
        try:
            self._pdf = pypdfium2.PdfDocument(data)
            self._engine = RapidOCR()
        except Exception:
            self._pdf = None

    def page_text(self, index: int) -> str:
        if self._pdf is None or self._engine is None:
            return ""
        try:
            import numpy as np

            image = self._pdf[index].render(scale=self.DPI / 72).to_pil().convert("RGB")
            found, _ = self._engine(np.array(image))
        except Exception:   # one page OCR cannot read loses nothing else
            return ""
        # rapidocr: [box, text, score] per line, top to bottom
        return "\n".join(str(line[1]) for line in (found or []) if line[1].strip())
