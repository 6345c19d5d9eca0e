"""Typeset PDFs (papers, manuals, books): what reading their layout (indexer/parse_pdf.py:
running headers and footers dropped, table-of-contents and index lines that point to a
page dropped, words broken at a line's end mended, sections from the PDF's outline,
footnotes and code examples set apart, a sentence over a page break read whole) does for
search. Prints figures, asserts nothing.

    python bench/pdf_layout.py [--corpora rpdf] [--reuse] [--parts]

Two indexes are built side by side in one run: as shipped, and with the layout steps
switched off (indexer.parse_pdf's functions patched here, nowhere else), which is how every
release before stop 42 read a PDF: each page's text layer as one block, with no heading.
--parts adds one index per step left out. Each index is searched as the product searches
(the fused order and the relevance model's second stage) with the corpus's natural and
exact questions; recall@5 is by key phrase in the answering file's passage.
"""

from __future__ import annotations

import argparse
import os
import sys
from pathlib import Path

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE.parent))
sys.path.insert(0, str(HERE))
os.environ.setdefault("HF_HUB_OFFLINE", "1")

from retrieval_data import OUT, PDFS, corpus, norm, questions  # noqa: E402

STEPS = {"running": ("without_running_lines", lambda texts: texts),
         "pointers": ("without_page_pointers", lambda texts: texts),
         "hyphens": ("dehyphenated", lambda texts: texts),
         "outline": ("_outline", lambda reader: {}),
         "footnotes": ("footnotes_apart", lambda texts, headings=None: (texts, [[] for _ in texts])),
         "pagebreaks": ("sentences_across_pages", lambda bodies: bodies),
         "code": ("code_apart", lambda bodies: bodies)}
VARIANTS = {"before": tuple(STEPS), "data": ()}   # "data": the index the other benches use
PART_VARIANTS = {f"no-{step}": (step,) for step in STEPS}


def build(name: str, tag: str, off: tuple[str, ...], reuse: bool) -> tuple[Path, dict]:
    from bench_retrieval import build_index

    from indexer import parse_pdf

    data_dir = OUT / name / tag
    saved = {step: getattr(parse_pdf, STEPS[step][0]) for step in off}
    for step in off:
        setattr(parse_pdf, STEPS[step][0], STEPS[step][1])
    try:
        info = build_index(corpus(name), data_dir, reuse=reuse, backend="onnx-int8")
    finally:
        for step, fn in saved.items():
            setattr(parse_pdf, STEPS[step][0], fn)
    return data_dir, info


def measure(data_dir: Path, qs: list, scorer) -> dict:  # noqa: ANN001
    from bench_retrieval import LocalIndex

    local = LocalIndex(data_dir, "onnx-int8")
    hits = titled = slots = 0
    for q in qs:
        res = local.idx.search(q.question, k=5, judge=scorer)
        key = norm(q.key_phrase)
        hits += any(local.rel(p.path) == q.file and key in norm(p.text) for p in res)
        slots += len(res)
        titled += sum(" > " in (p.title or "") for p in res)
    local.idx.close()
    return {"recall": hits / max(len(qs), 1), "hits": hits, "n": len(qs), "titled": titled / max(slots, 1)}


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--corpora", default=",".join(PDFS))
    ap.add_argument("--reuse", action="store_true", help="reuse indexes built by an earlier run")
    ap.add_argument("--parts", action="store_true", help="also one index per layout step left out")
    args = ap.parse_args()
    from sentence_rerank import PassageScorer

    scorer = PassageScorer(str(HERE.parent / "indexer" / "data" / "relevance"))
    variants = dict(VARIANTS, **(PART_VARIANTS if args.parts else {}))
    for name in args.corpora.split(","):
        print(f"== {name}: {corpus(name).root}")
        rows = {}
        for tag, off in variants.items():
            data_dir, info = build(name, tag, off, args.reuse)
            rows[tag] = (info, {w: measure(data_dir, questions(corpus(name), w), scorer)
                                for w in ("natural", "exact")})
        print(f"{'':34} {'files':>5} {'chunks':>7} {'build s':>8} | {'recall@5':>12} | {'exact@5':>12} | titled")
        for tag, off in variants.items():
            info, m = rows[tag]
            nat, ex = m["natural"], m["exact"]
            label = ({"before": "page text as is (before)", "data": "layout read (shipped)"}[tag]
                     if tag in VARIANTS else f"without {STEPS[off[0]][0]}")
            print(f"{label:34} {info['files']:>5} {info['chunks']:>7} {info['seconds']:>8.1f} | "
                  f"{nat['hits']:>2}/{nat['n']:<2} {nat['recall']:.3f} | {ex['hits']:>2}/{ex['n']:<2} "
                  f"{ex['recall']:.3f} | {nat['titled']:.2f}")
        print("(recall@5: the answering file's passage holding the key phrase in the top 5; titled: the "
              "share of top-5 passages of the natural questions whose title names a section)")


if __name__ == "__main__":
    main()
