"""The PDF layout steps that move text (indexer/parse_pdf.py: footnotes_apart,
sentences_across_pages and code_apart) on PDFs nobody tuned them on, listed for an annotator to judge.
Prints counts, asserts nothing; writes a random sample of what each step did.

    python bench/pdf_layout_audit.py --set gnu-manuals --out DIR     # gnuplot, Octave, Asymptote
    python bench/pdf_layout_audit.py --set latex-papers --out DIR    # TeX Live's sample articles

DIR/items.json holds up to 30 pages with footnotes found (the page's text as extracted,
the notes, the body's end after the marks are taken out), up to 40 page breaks whose
sentence was carried (the page's end, the next page's top, the text carried) and up to 40
code examples set apart (code_apart: the run and the text around it). An
annotator judges them with data/pdf_audit/RUBRIC-pdf-layout.md; the verdicts of the
stop-43 audit are in data/pdf_audit/ (each line names its file and page).

Sets: `gnu-manuals` needs Debian's gnuplot-doc, octave-doc and asymptote-doc;
`latex-papers` texlive-publishers-doc (LaTeX sample articles, many two-column).
"""

from __future__ import annotations

import argparse
import glob
import json
import logging
import random
import sys
from pathlib import Path

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE.parent))

TEXLIVE = "/usr/share/texlive/texmf-dist/doc/latex"
SETS = {
    "gnu-manuals": lambda: ["/usr/share/doc/gnuplot/gnuplot.pdf", "/usr/share/doc/octave/octave.pdf",
                            "/usr/share/doc/asymptote/asymptote.pdf", "/usr/share/doc/asymptote/CAD.pdf",
                            "/usr/share/doc/asymptote/asy-latex.pdf", "/usr/share/doc/octave/liboctave.pdf"],
    "latex-papers": lambda: sorted(glob.glob(f"{TEXLIVE}/*/*sample*.pdf") + glob.glob(f"{TEXLIVE}/*/samples/*.pdf")
                                   + glob.glob(f"{TEXLIVE}/*/*template*.pdf")),
}


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--set", choices=sorted(SETS), required=True)
    ap.add_argument("--out", type=Path, required=True)
    ap.add_argument("--seed", type=int, default=7)
    args = ap.parse_args()
    from pypdf import PdfReader

    from indexer import parse_pdf as P

    logging.getLogger("pypdf").setLevel(logging.ERROR)
    notes_found, carried, code_runs = [], [], []
    pages = 0
    for path in SETS[args.set]():
        try:
            reader = PdfReader(path)
            texts = [(p.extract_text() or "").replace("\r\n", "\n").translate(P.LIGATURES).strip()
                     for p in reader.pages]
        except Exception as exc:  # a sample that pypdf cannot read is not this bench's subject
            print(f"skipped {path}: {exc}")
            continue
        pages += len(texts)
        texts = P.without_page_pointers(P.without_running_lines(texts))
        bodies, notes = P.footnotes_apart(texts, P._outline(reader))
        name = Path(path).name
        for i, (text, body, page_notes) in enumerate(zip(texts, bodies, notes)):
            if page_notes:
                notes_found.append({"file": name, "page": i + 1, "page_text_as_extracted": text[-1800:],
                                    "body_end_after": body[-600:], "footnotes_found": page_notes})
        for i, body in enumerate(P.code_apart(bodies)):
            paragraphs = body.split("\n\n")
            for k, para in enumerate(paragraphs):
                lines = [ln for ln in para.split("\n") if ln.strip()]
                if lines and all(P.code_line(ln) for ln in lines[:1] + lines[-1:]) and \
                        para not in bodies[i].split("\n\n"):
                    code_runs.append({"file": name, "page": i + 1,
                                      "text_before": paragraphs[k - 1][-300:] if k else "",
                                      "set_apart_as_code": para,
                                      "text_after": paragraphs[k + 1][:300] if k + 1 < len(paragraphs) else ""})
        for i in range(len(bodies) - 1):
            pair = P.sentences_across_pages([bodies[i], bodies[i + 1]])
            if pair[0] != bodies[i]:
                carried.append({"file": name, "page": i + 1, "end_of_page": bodies[i][-400:],
                                "top_of_next_page": bodies[i + 1][:400],
                                "carried_to_this_page": pair[0][len(bodies[i].rstrip()):]})
    print(f"{args.set}: {pages} pages; footnotes found on {len(notes_found)} pages; "
          f"{len(carried)} sentences carried over a page break; {len(code_runs)} code examples set apart")
    rng = random.Random(args.seed)
    args.out.mkdir(parents=True, exist_ok=True)
    (args.out / "items.json").write_text(json.dumps(
        {"footnotes": rng.sample(notes_found, min(30, len(notes_found))),
         "continuations": rng.sample(carried, min(40, len(carried))),
         "code": rng.sample(code_runs, min(40, len(code_runs)))}, ensure_ascii=False, indent=1))


if __name__ == "__main__":
    main()
