"""Issue 17, after stop 48's prose embedding of programs: should the code blocks inside
documentation (a Markdown fence, an HTML <pre>, an rST literal block, a PDF's code example)
be embedded by their prose too? Prints figures, asserts nothing.

    python bench/doc_code_embedding.py [--corpora postgres,debref,...]

Over each bench index (python bench/bench_retrieval.py --corpora C --build-only), every file
is parsed again to find its code blocks; each chunk that holds some is embedded again with
each of its code blocks replaced by
- "dropped": nothing;
- "prose": the block's prose as a program's is read (indexer/code_prose.py, comments and
  compound names as words; nothing where it has fewer than 8 words);
and the shipped search (fusion with BM25, the relevance model's second stage, feedback) runs
on a copy of the index with those vectors stored, against the index as built: recall@5 by
key phrase of the natural questions and the exact lookups
(code_prose_embedding.shipped_search).
"""

from __future__ import annotations

import argparse
import os
import sqlite3
import sys
from pathlib import Path

os.environ.setdefault("HF_HUB_OFFLINE", "1")
HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE.parent))
sys.path.insert(0, str(HERE))

import numpy as np  # noqa: E402

ALL = "postgres,debref,zsh,flask,rpdf,gnupdf,mdnotes,mdnotes2"


def main() -> None:
    from bench_relevance import index_dir
    from code_prose_embedding import shipped_search

    from indexer.chunker import embedding_text
    from indexer.code_prose import prose_of_code
    from indexer.embedder import Embedder
    from indexer.parsers import parse_bytes
    from indexer.walk import file_ext

    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--corpora", default=ALL)
    args = ap.parse_args()
    emb = Embedder(backend="onnx-int8")     # the bench indexes' backend

    for name in args.corpora.split(","):
        con = sqlite3.connect(str(index_dir(name) / "index" / "index.db"))
        rows = con.execute("select c.id, f.path, c.title, c.text, c.char_start, c.char_end, c.embedding "
                           "from chunks c join files f on f.id = c.file_id order by f.path, c.ord").fetchall()
        con.close()
        base = np.stack([np.frombuffer(r[6], dtype=np.float32) for r in rows])
        codes: dict[str, list[tuple[int, int]]] = {}
        texts: dict[str, str] = {}
        for path in sorted({r[1] for r in rows}):
            try:
                doc = parse_bytes(Path(path).read_bytes(), ext=file_ext(path), name=os.path.basename(path))
            except Exception:   # noqa: BLE001 - a file the index skipped since
                continue
            texts[path] = doc.text
            codes[path] = [(b.start, b.end) for b in doc.blocks if b.kind == "code"]
        changed = {"dropped": {}, "prose": {}}
        mismatched = 0
        for k, (cid, path, title, text, a, b, _) in enumerate(rows):
            if path not in texts or texts[path][a:b] != text:
                mismatched += 1
                continue
            spans = [(max(s, a), min(e, b)) for s, e in codes[path] if s < b and e > a]
            if not spans:
                continue
            for label in changed:
                out, pos = [], a
                for s, e in spans:
                    out.append(texts[path][pos:s])
                    if label == "prose":
                        out.append(prose_of_code(texts[path][s:e]))
                    pos = e
                out.append(texts[path][pos:b])
                new = "".join(out).strip()
                changed[label][k] = embedding_text(title, new or text)
        print(f"{name}: {len(rows)} chunks, {len(changed['dropped'])} hold code blocks "
              f"({mismatched} chunks not matched to their file's text, left as they are)", flush=True)
        variants = {}
        for label, got in changed.items():
            m = base.copy()
            if got:
                keys = list(got)
                vecs = emb.encode([got[k] for k in keys])
                m[keys] = vecs / np.linalg.norm(vecs, axis=1, keepdims=True)
            variants[label] = m
        shipped_search(name, {r[0]: k for k, r in enumerate(rows)}, variants)


if __name__ == "__main__":
    main()
