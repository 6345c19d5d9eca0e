"""Which quotes to show as the answer (extract.ANSWER_RELATIVE): on the stored top-5
passages of the test half and the held-out set (tests/data/quotes_*_top5.json.gz), the
share of units shown as the answer that hold the key phrase, and the questions with the
key phrase in such a unit, for several rules. Chosen on the test half; held-out measured.

    python scripts/measure_quote_roles.py
"""

from __future__ import annotations

import gzip
import json
import sys
from pathlib import Path

REPO = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(REPO))


def main() -> None:
    from indexer.embedder import Embedder
    from localrag.answering.generate import extract

    emb = Embedder()

    def norm(t: str) -> str:
        return " ".join(t.split()).lower()

    for name in ("test", "heldout"):
        rows = json.loads(gzip.decompress((REPO / "tests" / "data" / f"quotes_{name}_top5.json.gz").read_bytes()))
        recs = []
        for r in rows:
            key = norm(r["key_phrase"])
            texts = [p["text"] for p in r["passages"]]
            right = {i for i, p in enumerate(r["passages"]) if p["path"] == r["file"] and key in norm(p["text"])}
            quotes = extract.select_quotes(r["question"], texts, emb.encode)
            recs.append([(next(x for x in g if not x.context).score,
                          any(x.passage in right and key in norm(x.span.text) for x in g), len(g))
                         for g in extract.quote_groups(quotes)])
        print(f"{name} ({len(rows)} questions)")
        for rule in (1.01, 0.99, 0.97, 0.95, 0.9, 0.8, 0.0):
            units = hits = answered = 0
            for g in recs:
                if not g:
                    continue
                best = max(s for s, _, _ in g)
                sel = [x for x in g if x[0] >= min(rule, 1.0) * best]
                units += sum(n for _, _, n in sel)
                hits += sum(n for _, h, n in sel if h)
                answered += any(h for _, h, _ in sel)
            label = "best only" if rule > 1 else ("every quote" if rule == 0 else f">= {rule:.2f} x best")
            print(f"  {label:<16} units shown as the answer {units:>4}, holding the key phrase "
                  f"{hits / max(units, 1):.2f}; questions with it in such a unit {answered}")


if __name__ == "__main__":
    main()
