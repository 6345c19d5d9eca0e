"""Jupyter notebooks: markdown and code cells as blocks, outputs left out (they are
results, often huge, base64 images or tracebacks). Cited by cell ("cell 4") and the cell's
line in the .ipynb file, so `e` opens the notebook's JSON there."""

from __future__ import annotations

import re

from indexer.documents import DocBuilder, ParsedDoc, set_heading, short
from indexer.reading import FileSkip

_CELL_START = re.compile(r'"cell_type"\s*:')
_ATX = re.compile(r"^ {0,3}(#{1,6})[ \t]+(.*?)[ \t#]*$")


def parse_notebook(text: str) -> ParsedDoc:
    try:
        import nbformat

        nb = nbformat.reads(text, as_version=4)
    except Exception as exc:
        raise FileSkip("error", f"cannot read the notebook: not valid notebook JSON "
                       f"({short(exc)}); open it in Jupyter and save it again", "damaged") from None
    from indexer.markup import clean_lines, clean_title

    line_of_cell = [text.count("\n", 0, m.start()) + 1 for m in _CELL_START.finditer(text)]
    out = DocBuilder()
    stack: list[tuple[int, str]] = []
    path: tuple[str, ...] = ()
    for number, cell in enumerate(nb.get("cells", []), start=1):
        source = cell.get("source", "")
        if isinstance(source, list):
            source = "".join(source)
        line = line_of_cell[number - 1] if number - 1 < len(line_of_cell) else None
        label = f"cell {number}"
        kind = cell.get("cell_type")
        if kind == "markdown":
            for para in re.split(r"\n[ \t]*\n", source):
                m = _ATX.match(para.strip()) if "\n" not in para.strip() else None
                if m:
                    path = set_heading(stack, len(m.group(1)), clean_title(m.group(2), "markdown"))
                    out.add(clean_lines(para, "markdown"), "heading", path + (label,),
                            unit=number, line=line)
                else:
                    out.add(clean_lines(para, "markdown"), "text", path + (label,),
                            unit=number, line=line)
        elif kind in ("code", "raw"):
            out.add(source, "code", path + (label,), unit=number, line=line)
    return out.doc()
