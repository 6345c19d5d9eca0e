"""Retrieval over a mixed personal folder: mail, office files, e-books, notebooks, RTF,
notes and PDFs. Prints recall@5 and @10 per format (does a passage of the right file that
holds the answer come back in the top k?), how often that passage also names the right
unit (subject, page, slide, sheet, chapter, cell, heading, line), and the same recall for
the dense and the lexical side alone.

    python bench/bench_formats.py            # the personal corpus: bench/personal_corpus.py
                                             # builds bench/out/personal/ from Debian docs,
                                             # questions in bench/data/personal/questions.jsonl
    python bench/bench_formats.py --toy      # the 13 generated toy facts (a smoke check)

Asserts nothing; the folders are regenerated on every run (both git-ignored).
"""

from __future__ import annotations

import io
import mailbox
import os
import re
import shutil
import sys
import tempfile
import zipfile
from collections import defaultdict
from email.message import EmailMessage
from pathlib import Path

os.environ.setdefault("HF_HUB_OFFLINE", "1")
ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

FOLDER = ROOT / "bench" / "out" / "formats-toy"

# (file, unit the citation must name, fact, question)
FACTS = [
    ("inbox.mbox", "Boiler service", "The plumber serviced the boiler on 4 March and replaced the pressure valve.",
     "When was the boiler serviced and what part was replaced?"),
    ("inbox.mbox", "School trip", "The school trip to the aquarium leaves at 8:15 from the north gate.",
     "What time does the aquarium trip leave?"),
    ("inbox.mbox", "Insurance renewal", "Our car insurance renews on 30 June at 612 euros a year.",
     "How much does the car insurance cost per year?"),
    ("invite.eml", "Birthday dinner", "Grandma's birthday dinner is at the Lantern restaurant, table for nine.",
     "Where is grandma's birthday dinner?"),
    ("plans.pptx", "Slide 2", "The new kitchen will have an induction hob and a larder cupboard.",
     "What kind of hob will the new kitchen have?"),
    ("plans.pptx", "Slide 3", "The builders start demolition in the second week of September.",
     "When do the builders start demolition?"),
    ("budget.xlsx", "Household", "Water bill | 38 | monthly",
     "How much is the monthly water bill?"),
    ("garden.odt", "Compost", "Turn the compost heap every three weeks and keep it damp like a sponge.",
     "How often should the compost heap be turned?"),
    ("running.ods", "Log", "Parkrun | 5 km | 24:31 | personal best",
     "What was my personal best parkrun time?"),
    ("novel.epub", "Chapter 2", "The lighthouse keeper hid the letters inside the brass telescope.",
     "Where did the lighthouse keeper hide the letters?"),
    ("recipe.rtf", "", "Soak the chickpeas overnight, then simmer them for ninety minutes with a bay leaf.",
     "How long should the chickpeas simmer?"),
    ("analysis.ipynb", "cell", "We removed outliers above three standard deviations before fitting the model.",
     "How were outliers removed before fitting?"),
    ("notes.md", "Bike", "The bike lock combination is the year the bridge was built.",
     "What is the bike lock combination based on?"),
]
FILLER = ["The weather was mild and the meeting ran long.", "Remember to water the plants on Friday.",
          "The library closes early on public holidays.", "Parking near the station costs two euros."]


def _message(subject: str, body: str) -> EmailMessage:
    m = EmailMessage()
    m["Subject"], m["From"], m["To"] = subject, "sam@example.org", "me@example.org"
    m["Date"] = "Mon, 04 Mar 2024 09:00:00 +0000"
    m.set_content(body + "\n\n" + " ".join(FILLER))
    return m


def build(folder: Path) -> None:
    import nbformat
    import openpyxl
    from odf.opendocument import OpenDocumentSpreadsheet, OpenDocumentText
    from odf.table import Table, TableCell, TableRow
    from odf.text import H, P
    from pptx import Presentation

    shutil.rmtree(folder, ignore_errors=True)
    folder.mkdir(parents=True)
    box = mailbox.mbox(str(folder / "inbox.mbox"))
    for file, unit, fact, _ in FACTS:
        if file == "inbox.mbox":
            box.add(_message(unit, fact))
    for filler in FILLER:
        box.add(_message("Newsletter", filler))
    box.close()
    (folder / "invite.eml").write_bytes(_message("Birthday dinner", FACTS[3][2]).as_bytes())

    deck = Presentation()
    for title, body in [("Kitchen plans", "Overview of the renovation."), ("Kitchen", FACTS[4][2]),
                        ("Schedule", FACTS[5][2])]:
        slide = deck.slides.add_slide(deck.slide_layouts[1])
        slide.shapes.title.text = title
        slide.placeholders[1].text = body
    deck.save(str(folder / "plans.pptx"))

    book = openpyxl.Workbook()
    sheet = book.active
    sheet.title = "Household"
    for row in [["Item", "Euros", "When"], ["Rent", 950, "monthly"], ["Water bill", 38, "monthly"],
                ["Council tax", 1420, "yearly"]]:
        sheet.append(row)
    book.save(str(folder / "budget.xlsx"))

    odt = OpenDocumentText()
    for el in (H(outlinelevel=1, text="Garden notes"), P(text=FILLER[1]), H(outlinelevel=2, text="Compost"),
               P(text=FACTS[7][2])):
        odt.text.addElement(el)
    odt.save(str(folder / "garden.odt"))
    ods = OpenDocumentSpreadsheet()
    table = Table(name="Log")
    for row in [["Run", "Distance", "Time", "Note"], ["Canal", "10 km", "52:10", ""],
                ["Parkrun", "5 km", "24:31", "personal best"]]:
        tr = TableRow()
        for value in row:
            cell = TableCell()
            cell.addElement(P(text=value))
            tr.addElement(cell)
        table.addElement(tr)
    ods.spreadsheet.addElement(table)
    ods.save(str(folder / "running.ods"))

    with zipfile.ZipFile(folder / "novel.epub", "w") as z:
        z.writestr("mimetype", "application/epub+zip")
        z.writestr("META-INF/container.xml", '<container xmlns="urn:oasis:names:tc:opendocument:xmlns:'
                   'container"><rootfiles><rootfile full-path="book.opf"/></rootfiles></container>')
        z.writestr("book.opf", '<package xmlns="http://www.idpf.org/2007/opf"><manifest>'
                   '<item id="a" href="a.xhtml"/><item id="b" href="b.xhtml"/></manifest>'
                   '<spine><itemref idref="a"/><itemref idref="b"/></spine></package>')
        z.writestr("a.xhtml", f"<html><body><h1>The Storm</h1><p>{FILLER[0]}</p></body></html>")
        z.writestr("b.xhtml", f"<html><body><h1>The Letters</h1><p>{FACTS[9][2]}</p></body></html>")
    (folder / "recipe.rtf").write_bytes(b"{\\rtf1\\ansi{\\fonttbl\\f0 Times;}\\f0 Hummus\\par "
                                        + FACTS[10][2].encode() + b"\\par}")
    nb = nbformat.v4.new_notebook()
    nb.cells = [nbformat.v4.new_markdown_cell("# Analysis\n\n" + FACTS[11][2]),
                nbformat.v4.new_code_cell("model.fit(X, y)")]
    (folder / "analysis.ipynb").write_text(nbformat.writes(nb))
    (folder / "notes.md").write_text(f"# Notes\n\n## Bike\n\n{FACTS[12][2]}\n\n## Misc\n\n{FILLER[2]}\n")


def main_toy() -> None:
    from indexer.embedder import Embedder
    from indexer.index import Index
    from indexer.options import IndexOptions

    build(FOLDER)
    with tempfile.TemporaryDirectory() as tmp:
        idx = Index(Path(tmp) / "index", options=IndexOptions(), embedder=Embedder())
        idx.add_root(FOLDER)
        report = idx.update()
        print(f"indexed {report.added} files, {report.chunks_added} chunks; problems: "
              f"{[(p.path, p.reason) for p in report.problems]}")
        hits_by_format: dict[str, list[int]] = defaultdict(list)
        for file, unit, fact, question in FACTS:
            hits = idx.search(question, k=5)
            # a small section merges with its neighbours: its heading is then in the text
            found = any(h.path.endswith(file) and (unit in h.title or unit in h.text)
                        and fact.split()[1] in h.text
                        for h in hits)
            hits_by_format[Path(file).suffix].append(int(found))
            if not found:
                print(f"  missed: {question} -> {[h.title for h in hits[:3]]}")
        idx.close()
    print("format   questions  recall@5")
    for ext, got in hits_by_format.items():
        print(f"{ext:8} {len(got):9}  {sum(got) / len(got):.2f}")
    total = [g for got in hits_by_format.values() for g in got]
    print(f"{'all':8} {len(total):9}  {sum(total) / len(total):.2f}")


def _norm(s: str) -> str:
    return " ".join(s.split()).lower()


def unit_named(q: dict, title: str, text: str, page: int | None, start: int | None, end: int | None, *,
               strict: bool = False) -> bool:
    """Does the passage's citation name the question's unit? Not `strict`: a section
    heading inside the passage's text counts too (a small section merged into the chunk
    that starts at its parent section, whose heading is then the title)."""
    unit = q["unit"]
    if not unit:                                   # RTF: the file is the citation
        return True
    if unit.startswith("page "):
        return page == int(unit.split()[1])
    if unit.startswith("line "):
        n = int(unit.split()[1])
        return start is not None and end is not None and start <= n <= end
    parts = [p.strip() for p in title.split(">")]
    if unit.startswith(("Slide ", "Chapter ", "cell ")):   # "Slide 3: Title", "cell 4-6"
        m = re.match(r"(Slide|Chapter|cell)s? (\d+)", unit)
        for p in parts:
            pm = re.match(rf"{m.group(1)}s? (\d+)(?:\D+(\d+))?", p)
            if pm and int(pm.group(1)) <= int(m.group(2)) <= int(pm.group(2) or pm.group(1)):
                return True
        return False
    if unit in title:
        return True
    return (not strict and q["format"] in ("docx", "odt", "md", "epub", "html")
            and _norm(unit) in _norm(text))


def main_personal(args) -> None:  # noqa: ANN001
    import json
    import time

    from bench.personal_corpus import DEFAULT, QUESTIONS, build
    from indexer import search
    from indexer.embedder import Embedder
    from indexer.index import Index
    from indexer.options import IndexOptions

    folder = DEFAULT
    counts = build(folder)
    questions = [json.loads(line) for line in QUESTIONS.read_text().splitlines() if line.strip()]
    print(f"corpus {folder.relative_to(ROOT)}: {sum(counts.values())} files {counts}; "
          f"{len(questions)} questions")
    depth = 10
    results = []
    with tempfile.TemporaryDirectory() as tmp:
        t0 = time.perf_counter()
        idx = Index(Path(tmp) / "index", options=IndexOptions(), embedder=Embedder())
        idx.add_root(folder)
        report = idx.update()
        secs = time.perf_counter() - t0
        print(f"indexed {report.added} files, {report.chunks_added} chunks in {secs:.0f} s; problems: "
              f"{[(p.path, p.reason) for p in report.problems]}")
        vectors = idx._vectors_index()
        for q in questions:
            want = str((folder / q["file"]).resolve())
            kp = _norm(q["key_phrase"])

            def judge(rows: list[tuple], q=q, want=want, kp=kp) -> tuple[int | None, ...]:
                """Ranks (1-based, None if not in the list) of the first passage of the file
                holding the phrase, of the first such passage that also names the unit, and
                of the first whose title (or page, lines) names it."""
                hit = cited = titled = None
                for rank, (path, title, text, start, end, page) in enumerate(rows, 1):
                    if str(Path(path).resolve()) == want and kp in _norm(text):
                        hit = hit or rank
                        if cited is None and unit_named(q, title, text, page, start, end):
                            cited = rank
                        if titled is None and unit_named(q, title, text, page, start, end, strict=True):
                            titled = rank
                return hit, cited, titled

            fused = [(h.path, h.title, h.text, h.start_line, h.end_line, h.page)
                     for h in idx.search(q["question"], k=depth)]
            row = {"id": q["id"], "format": q["format"], "question": q["question"], "file": q["file"],
                   "top": [r[1] for r in fused[:3]]}
            row["fused"], row["fused_cited"], row["fused_titled"] = judge(fused)
            if args.sides:
                qvec = idx.embedder.encode([q["question"]])[0]
                dense, lexical = search.rankings(vectors, qvec, q["question"], depth)
                for name, ids in (("dense", dense), ("lexical", lexical)):
                    got = idx.store.fetch_chunks(list(ids))
                    rows = [(got[c][1], got[c][2], got[c][3], got[c][4], got[c][5], got[c][6])
                            for c in ids if c in got]
                    row[name] = judge(rows)[0]
            results.append(row)
        idx.close()
    out = ROOT / "bench" / "out" / "personal-results.json"
    out.write_text(json.dumps(results, indent=1, ensure_ascii=False))

    def rate(rows: list[dict], key: str, k: int) -> str:
        return f"{sum(1 for r in rows if r.get(key) is not None and r[key] <= k) / len(rows):.2f}"

    order = ["mbox", "eml", "maildir", "pdf", "docx", "odt", "xlsx", "ods", "pptx", "odp", "epub",
             "ipynb", "rtf", "md", "txt"]
    groups = {f: [r for r in results if r["format"] == f] for f in order}
    groups["all"] = results
    head = f"{'format':8} {'qs':>3}  {'R@5':>5} {'R@10':>5} {'cited@5':>7} {'title@5':>7}"
    if args.sides:
        head += f"  {'dense@5':>7} {'lex@5':>6}"
    print(head)
    for f, rows in groups.items():
        if not rows:
            continue
        line = (f"{f:8} {len(rows):3}  {rate(rows, 'fused', 5):>5} {rate(rows, 'fused', 10):>5} "
                f"{rate(rows, 'fused_cited', 5):>7} {rate(rows, 'fused_titled', 5):>7}")
        if args.sides:
            line += f"  {rate(rows, 'dense', 5):>7} {rate(rows, 'lexical', 5):>6}"
        print(line)
    for r in results:
        if r["fused"] is None or r["fused"] > 5:
            print(f"  miss@5 {r['id']} [{r['format']}] {r['question']!r}: rank {r['fused']}; top 3 {r['top']}")
        elif r["fused_cited"] is None or r["fused_cited"] > 5:
            print(f"  uncited {r['id']} [{r['format']}]: found at {r['fused']} but the unit is not named: "
                  f"{r['top']}")
    print(f"per-question ranks: {out.relative_to(ROOT)}")


if __name__ == "__main__":
    import argparse

    ap = argparse.ArgumentParser()
    ap.add_argument("--toy", action="store_true", help="the 13 generated toy facts instead")
    ap.add_argument("--no-sides", dest="sides", action="store_false",
                    help="skip the dense-only and lexical-only figures")
    a = ap.parse_args()
    main_toy() if a.toy else main_personal(a)
