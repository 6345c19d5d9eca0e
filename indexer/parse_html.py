"""HTML: the page's main content (navigation, sidebars, footers left out), by block
element, headings kept as the heading path, each block cited by its line in the file.
A definition list's term ends with ":" (_term) and its description is indented under it
(_description_depth), as a manual page's are.

Which parts are the main content is the page's own call where it declares it (its one
<main> element or role="main" element: declared_main), and trafilatura's otherwise
(Apache-2.0): its extracted text
is matched back to the page's own elements, so what is kept still knows its heading and
its line. Without trafilatura, or when it finds almost nothing (an index page of links),
the whole page is read, with <nav>, <header>, <footer> and <aside> left out. The
navigation bars of texinfo, DocBook, Sphinx and mdBook pages (by their class) and buttons
go either way.
"""

from __future__ import annotations

import logging
import re

from indexer.documents import Block, ParsedDoc, set_heading

_HTML_BLOCKS = {
    "p", "div", "section", "article", "main", "header", "footer", "aside", "nav", "li", "dt", "dd",
    "blockquote", "pre", "table", "tr", "td", "th", "h1", "h2", "h3", "h4", "h5", "h6",
    "figcaption", "caption", "form", "body", "ul", "ol", "dl", "details", "summary",
}
_CHROME = ["nav", "header", "footer", "aside"]
# navigation bars of the documentation generators (texinfo, DocBook, Sphinx, mdBook), by class
_CHROME_CLASSES = {"header", "nav-panel", "navheader", "navfooter", "sphinxsidebar", "related",
                   "breadcrumb", "breadcrumbs", "menu-bar"}
_PERMALINK_CLASSES = ["copiable-anchor", "copiable-link", "headerlink", "id_link"]   # texinfo,
# Sphinx, PostgreSQL 16's DocBook
_PERMALINK_SIGNS = {"¶", "#", "§", "🔗"}     # a link to its own heading, by its sign alone
MIN_MAIN_WORDS = 25      # main content shorter than this: read the whole page instead


def _norm(text: str) -> str:
    return " ".join(re.sub(r"[^\w]+", " ", text.lower()).split())


def main_text(html: str) -> str | None:
    """The page's main content as trafilatura sees it, normalised; None when unknown."""
    try:
        logging.getLogger("trafilatura").setLevel(logging.CRITICAL)
        import trafilatura
    except Exception:   # not installed (or its lxml extras missing): whole page
        return None
    try:
        got = trafilatura.extract(html, output_format="txt", include_tables=True,
                                  include_comments=False, favor_recall=True, deduplicate=False)
    except Exception:
        return None
    if not got or len(got.split()) < MIN_MAIN_WORDS:
        return None
    return " " + _norm(got) + " "


def declared_main(soup: object) -> object | None:
    """The content the page itself declares: its one <main> element, or else its one element
    marked role="main" (Sphinx's <div class="body" role="main">), when it holds at least
    MIN_MAIN_WORDS words. The author's mark is read before trafilatura's guess, which can keep
    a small part of a long page: of CMake's generator-expressions manual (8,400 words in its
    role="main" element) it found 800, so most expressions were never indexed."""
    found = soup.find_all("main") or soup.find_all(attrs={"role": "main"})
    if len(found) != 1 or len(found[0].get_text(" ").split()) < MIN_MAIN_WORDS:
        return None
    return found[0]


def _term_list(dl: object) -> bool:
    """A definition list of terms and their descriptions: not a table of contents (DocBook's
    <dl class="toc">, nested in one or not)."""
    if dl is None:
        return False
    return not any("toc" in (t.get("class") or ())                         # type: ignore[attr-defined]
                   for t in [dl, *dl.find_parents("dl")])                  # type: ignore[attr-defined]


def _term(dt: object, text: str) -> bool:
    """A definition list's term that its description follows (a <dt> with a <dd> after
    it, or after the terms that follow it; not in a table of contents): its text is ended
    with ":", as a term line of AsciiDoc or a manual page reads, so that a quote from the
    description can bring the name it describes (PostgreSQL's "RESTART IDENTITY",
    "ON_ERROR_STOP"). A term that ends in punctuation of its own, or holds a sentence end
    (zsh's FAQ: "3.8: Why do the cursor (arrow) keys not work? (And other terminal
    oddities.)"), is left as it is. `text`: the term as the page shows it, inline pieces
    joined as written (Sphinx's "flask.json." and "jsonify" are two spans of one name, not a
    sentence ending in "json.")."""
    if not _term_list(dt.find_parent("dl")):                               # type: ignore[attr-defined]
        return False
    nxt = dt.find_next_sibling(lambda t: t.name != "dt")                    # type: ignore[attr-defined]
    return (nxt is not None and nxt.name == "dd" and not re.search(r"[.!?:;,]$", text)
            and not re.search(r"\w[?!](?:\s|$)|[a-z]{2}\.\s", text))   # a FAQ's question is a heading


DESCRIPTION_INDENT = "    "


def _description_depth(block: object) -> int:
    """How many descriptions (<dd> of a term list) the block is in: each indents its
    paragraphs by DESCRIPTION_INDENT under the term, as a manual page does, so that every
    paragraph of a description, not only its first, can be told to belong to its term."""
    if block is None:
        return 0
    dds = ([block] if getattr(block, "name", "") == "dd" else []) + list(block.find_parents("dd"))  # type: ignore[attr-defined]
    return sum(_term_list(dd.find_parent("dl")) for dd in dds)


def parse_html(html: str, *, main_content: bool = True) -> ParsedDoc:
    """`main_content`: keep only what trafilatura finds to be the page's content (an
    e-book chapter is all content: False)."""
    from bs4 import BeautifulSoup, Comment, Doctype, ProcessingInstruction

    soup = BeautifulSoup(html, "html.parser")
    # never the document's text: code, and controls (mdBook's theme menu, "Copy" buttons)
    for tag in soup(["script", "style", "noscript", "template", "svg", "head", "button", "select"]):
        tag.decompose()
    declared = declared_main(soup) if main_content else None
    main = main_text(html) if main_content and declared is None else None
    if main_content and main is None:
        for tag in soup(_CHROME):
            tag.decompose()
    # the "¶" / "#" permalinks that texinfo, Sphinx and DocBook put after terms and headings
    for tag in soup.find_all("a", class_=_PERMALINK_CLASSES):
        tag.decompose()
    for tag in soup.find_all("a", href=re.compile(r"^#")):   # any other site's: Apache's
        if tag.get_text().strip() in _PERMALINK_SIGNS:            # <a class="permalink">&para;</a>
            tag.decompose()
    if main_content:
        # blocks only: mdBook marks every heading's own anchor <a class="header">
        for tag in soup.find_all(lambda t: t.name in _HTML_BLOCKS and
                                 any(c in _CHROME_CLASSES for c in t.get("class") or ())):
            tag.decompose()
    groups: list[tuple[object, list[str], int | None]] = []
    for br in soup.find_all("br"):
        br.replace_with("\n")
    for s in (declared or soup).find_all(string=True):
        if isinstance(s, (Comment, Doctype, ProcessingInstruction)):
            continue
        block = s.find_parent(lambda t: t.name in _HTML_BLOCKS)
        if groups and groups[-1][0] is block:
            groups[-1][1].append(str(s))   # inline pieces join as the page shows them:
        elif s.strip():                    # "<code>expr</code> IS NULL", "(<em>x</em>)"
            line = getattr(s.parent, "sourceline", None)
            groups.append((block, [str(s)], line))
    pieces: list[tuple[str, str, int | None]] = []     # (kind or "h<n>", text, line)
    chrome: list[bool] = []                            # inside <nav>, <header>, ...
    for block, strings, line in groups:
        name = getattr(block, "name", "") or ""
        if name == "pre":
            piece = "".join(strings).strip("\n")
        else:
            piece = " ".join("".join(strings).split())
        if piece and name == "dt" and _term(block, piece):
            piece += ":"
        depth = _description_depth(block) if piece else 0
        if depth:
            piece = "\n".join(DESCRIPTION_INDENT * depth + x if x.strip() else x
                              for x in piece.split("\n"))
        if piece:
            kind = name if re.fullmatch(r"h[1-6]", name) else ("code" if name == "pre" else "text")
            pieces.append((kind, piece, line))
            chrome.append(block is not None and (getattr(block, "name", "") in _CHROME or
                                                 block.find_parent(_CHROME) is not None))
    if main is not None:
        pieces = _main_pieces(pieces, main, chrome)
    parts: list[str] = []
    blocks: list[Block] = []
    stack: list[tuple[int, str]] = []
    path: tuple[str, ...] = ()
    pos = 0
    for kind, piece, line in pieces:
        if kind.startswith("h"):
            path = set_heading(stack, int(kind[1]), piece)
            kind = "heading"
        if parts:
            parts.append("\n\n")
            pos += 2
        parts.append(piece)
        blocks.append(Block(pos, pos + len(piece), kind, path, line=line))
        pos += len(piece)
    return ParsedDoc("".join(parts), blocks, has_lines=False)


def _main_pieces(pieces: list[tuple[str, str, int | None]], main: str,
                 chrome: list[bool] | None = None) -> list[tuple[str, str, int | None]]:
    """The pieces whose words are in the main text, and every piece between the first and
    the last of those that is not inside <nav>, <header>, <footer> or <aside>: the main
    content is one stretch of the page, and trafilatura garbles paragraphs with nested
    inline markup (DocBook's <code><em><code>expr</code></em> IS NULL</code> comes out as
    "exprexpr IS NULL", the rest of the paragraph lost), so such a paragraph never matches
    its text although it is the content. A heading stays when it is matched, or when the
    text right after it is kept (extractors often drop the page's own title)."""
    keep = [f" {_norm(p)} " in main if _norm(p) else False for _, p, _ in pieces]
    chrome = chrome if chrome is not None else [False] * len(pieces)
    hits = [i for i, k in enumerate(keep) if k]
    if hits:
        for i in range(hits[0], hits[-1] + 1):
            keep[i] = keep[i] or (not chrome[i] and bool(_norm(pieces[i][1])))
    for i, (kind, _, _) in enumerate(pieces):
        if kind.startswith("h") and not keep[i]:
            nxt = next((j for j in range(i + 1, len(pieces)) if not pieces[j][0].startswith("h")), None)
            keep[i] = nxt is not None and keep[nxt]
    return [p for p, k in zip(pieces, keep) if k]
