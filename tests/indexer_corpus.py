"""Helpers that write small test documents (PDF, DOCX, text corpora) for the indexer tests."""

from __future__ import annotations

from pathlib import Path


def make_pdf(pages: list[str | list[str]], outline: list[tuple[int, str, int]] = ()) -> bytes:
    """A minimal valid PDF (Helvetica), built by hand: a page is one text line, or a list
    of lines set one below the other. `outline`: bookmarks (level, title, 0-based page),
    in order, a level-2 entry under the level-1 entry before it (added with pypdf)."""
    raw = _pdf_pages(pages)
    if not outline:
        return raw
    import io

    from pypdf import PdfReader, PdfWriter

    writer = PdfWriter(clone_from=PdfReader(io.BytesIO(raw)))
    parents: dict[int, object] = {}
    for level, title, page in outline:
        parents[level] = writer.add_outline_item(title=title, page_number=page, parent=parents.get(level - 1))
    out = io.BytesIO()
    writer.write(out)
    return out.getvalue()


def _pdf_pages(pages: list[str | list[str]]) -> bytes:
    objects: list[bytes] = []
    n = len(pages)
    font_id = 3 + 2 * n
    kids = " ".join(f"{3 + 2 * i} 0 R" for i in range(n))
    objects.append(b"<< /Type /Catalog /Pages 2 0 R >>")
    objects.append(f"<< /Type /Pages /Kids [{kids}] /Count {n} >>".encode())
    for i, text in enumerate(pages):
        page_id, content_id = 3 + 2 * i, 4 + 2 * i
        objects.append(
            f"<< /Type /Page /Parent 2 0 R /MediaBox [0 0 612 792] /Contents {content_id} 0 R "
            f"/Resources << /Font << /F1 {font_id} 0 R >> >> >>".encode())
        lines = [text] if isinstance(text, str) else text
        shown = " 0 -14 Td ".join(
            "({}) Tj".format(ln.replace("\\", "\\\\").replace("(", "\\(").replace(")", "\\)"))
            for ln in lines)
        stream = f"BT /F1 12 Tf 72 720 Td {shown} ET".encode()
        objects.append(b"<< /Length %d >>\nstream\n" % len(stream) + stream + b"\nendstream")
    objects.append(b"<< /Type /Font /Subtype /Type1 /BaseFont /Helvetica >>")
    out = bytearray(b"%PDF-1.4\n")
    offsets = []
    for number, body in enumerate(objects, start=1):
        offsets.append(len(out))
        out += b"%d 0 obj\n" % number + body + b"\nendobj\n"
    xref = len(out)
    out += b"xref\n0 %d\n0000000000 65535 f \n" % (len(objects) + 1)
    for off in offsets:
        out += b"%010d 00000 n \n" % off
    out += b"trailer\n<< /Size %d /Root 1 0 R >>\nstartxref\n%d\n%%%%EOF\n" % (len(objects) + 1, xref)
    return bytes(out)


def make_docx(path: Path, parts: list[tuple[str, str]]) -> None:
    """parts: ("h1"|"h2"|"p", text)."""
    import docx

    document = docx.Document()
    for kind, text in parts:
        if kind.startswith("h"):
            document.add_heading(text, level=int(kind[1]))
        else:
            document.add_paragraph(text)
    document.save(str(path))


TOPICS = ["volcano", "sourdough", "telescope", "glacier", "violin", "orchard", "lighthouse",
          "cathedral", "submarine", "beehive", "compass", "windmill"]


def write_corpus(folder: Path, n_files: int, *, paragraphs: int = 2) -> list[Path]:
    """Deterministic small Markdown corpus; file i talks about TOPICS[i % len(TOPICS)]."""
    folder.mkdir(parents=True, exist_ok=True)
    paths = []
    for i in range(n_files):
        topic = TOPICS[i % len(TOPICS)]
        body = [f"# Notes {i} about the {topic}\n"]
        for p in range(paragraphs):
            body.append(f"Paragraph {p} of file {i}. The {topic} number {i} is described here "
                        f"with plain words about its history, its parts and how people use it. "
                        f"Item {i}-{p} closes the paragraph.\n")
        path = folder / f"note_{i:04d}.md"
        path.write_text("\n".join(body), encoding="utf-8")
        paths.append(path)
    return paths
