"""Inline Markdown (code spans, emphasis, links) as Rich text, for one unit's line.

Block structure (paragraphs, lists, code blocks) is already resolved by localrag.answering.label.units;
what is left inside a sentence or a list item is inline markup, rendered here with the
same parser Textual's Markdown widget uses (markdown-it).
"""

from __future__ import annotations

from functools import lru_cache

from markdown_it import MarkdownIt
from rich.style import Style
from rich.text import Text

CODE_STYLE = "bold"
"""Inline code: bold in both themes (a background colour that reads well on dark and on
light backgrounds does not exist; the theme-aware colours are for whole code blocks)."""


@lru_cache(maxsize=1)
def _parser() -> MarkdownIt:
    return MarkdownIt("commonmark", {"html": False})


def inline_markdown(text: str) -> Text:
    """`text` with its inline Markdown applied; anything the parser does not know is
    kept as written."""
    out = Text()
    try:
        tokens = _parser().parseInline(text)
    except Exception:                  # never let odd model output break the screen
        return Text(text)
    styles: list[Style] = []
    for token in tokens:
        for child in token.children or []:
            kind = child.type
            if kind == "text":
                out.append(child.content, style=Style.combine(styles) if styles else None)
            elif kind == "code_inline":
                out.append(child.content, style=Style.combine([*styles, Style.parse(CODE_STYLE)]))
            elif kind in ("softbreak", "hardbreak"):
                out.append("\n" if kind == "hardbreak" else " ")
            elif kind == "strong_open":
                styles.append(Style(bold=True))
            elif kind == "em_open":
                styles.append(Style(italic=True))
            elif kind == "link_open":
                href = str(child.attrs.get("href", ""))
                styles.append(Style(underline=True, link=href or None))
            elif kind in ("strong_close", "em_close", "link_close"):
                if styles:
                    styles.pop()
            elif kind == "image":
                out.append(child.content or str(child.attrs.get("src", "")))
            else:                      # html_inline and the like: as written
                out.append(child.content or child.markup)
    return out
