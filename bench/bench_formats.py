"""Retrieval over a mixed personal folder: mail, office files, an e-book, a notebook and
notes, generated with each format's own library. Prints recall@5 per format (does the
passage that holds the answer come back in the top 5, cited by the right unit?).

    python bench/bench_formats.py            # writes bench/data/personal/ (ignored by git)

Asserts nothing; the folder is regenerated on every run.
"""

from __future__ import annotations

import io
import mailbox
import os
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

FOLDER = ROOT / "bench" / "data" / "personal"

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


def main() -> None:
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


if __name__ == "__main__":
    main()
