"""Issue 17, a lead for code search (stop 47): what a code chunk's vector should be made of.
Prints figures, asserts nothing.

    python bench/code_prose_embedding.py [--corpora pycode,pycode2]

A source file's chunk is embedded today as its title and its text, code and all
(chunker.embedding_text). A question in a person's words meets the docstrings, comments
and names of that code, not its statements. Over the bench index of each corpus (python
bench/bench_retrieval.py --corpora C --build-only), this embeds every chunk four ways with
the shipped embedder and ranks the chunks by cosine alone (the dense side of search, no
BM25, no second stage) for each natural question, counting the answering chunk (its file,
holding the key phrase) in the top 5:

- raw: the title and the text, as indexed;
- prose: the title, the names of the def and class lines, and the chunk's sentences as the
  answer path reads them (extract.sentence_spans: docstrings and comments without their
  marks, no statements of code);
- mean: the mean of the two cosines (two vectors a chunk); their normalised sum as one
  vector: "one vector";
- prose first: the prose, then the text (one embedding; the embedder's window cuts the
  text where it overflows).
- indexer's: what the index embeds since stop 48 (indexer/code_prose.py: definitions'
  names, comments and docstrings, the compound names of the statements as words; the
  text where that has fewer than 8 words), with the string and comment regions read from
  the file (code_prose.Regions); and the same with the messages of code (stop 52,
  code_prose.READ_MESSAGES: strings of prose in lines of code).

With --fused, the shipped search (fusion with BM25, the relevance model's second stage,
feedback) runs on a copy of the bench index whose stored vectors are replaced by the
raw (the text, as embedded before stop 48), prose, prose-first or indexer's ones (the HNSW
file rebuilt from them), against the index as built, for the natural questions and the
exact lookups (--messages-only: the indexer's two readings alone, dense and fused). Corpora: pycode, pycode2,
pycode3, pycode4, ccode (C headers), ccode2.
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

from retrieval_data import corpus, norm, questions  # noqa: E402


def main() -> None:
    from bench_relevance import index_dir

    from indexer.chunker import embedding_text
    from indexer import code_prose
    from indexer.code_prose import Regions, prose_of_code
    from indexer.embedder import Embedder
    from localrag.answering.generate import extract as ex
    from localrag.answering.generate.source_code import DEF_LINE

    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--corpora", default="pycode,pycode2")
    ap.add_argument("--fused", action="store_true", help="also the shipped search on re-embedded copies")
    ap.add_argument("--messages-only", action="store_true", help="only the indexer's reading "
                    "without and with messages of code (stop 52)")
    args = ap.parse_args()
    emb = Embedder(backend="onnx-int8")     # the bench indexes' backend

    starts: dict = {}

    def own_prose(path: str, start: int, text: str) -> str:
        """The indexer's reading (indexer/code_prose.py), the string state from the file."""
        if path not in starts:
            starts[path] = Regions(Path(path).read_text(encoding="utf-8", errors="replace"))
        return prose_of_code(text, starts[path].at(start))

    def unit(m: np.ndarray) -> np.ndarray:
        return m / np.linalg.norm(m, axis=1, keepdims=True)

    def prose(title: str, text: str) -> str:
        names = [m.group(0).strip() for line in text.split("\n") for m in [DEF_LINE.match(line)] if m]
        return embedding_text(title, " ".join(names + [s.text for s in ex.sentence_spans(text)]) or text)

    for name in args.corpora.split(","):
        con = sqlite3.connect(str(index_dir(name) / "index" / "index.db"))
        rows = con.execute("select c.id, f.path, c.title, c.text, c.char_start from chunks c "
                           "join files f on f.id = c.file_id").fetchall()
        roots = [r[0] for r in con.execute("select path from roots")]
        con.close()

        def rel(path: str) -> str:
            root = next((r for r in roots if path.startswith(r)), None)
            return os.path.relpath(path, root) if root else path

        if not args.messages_only:
            raw = unit(emb.encode([embedding_text(t, x) for _, _, t, x, _ in rows]))
            pro = unit(emb.encode([prose(t, x) for _, _, t, x, _ in rows]))
            first = unit(emb.encode([prose(t, x) + "\n" + x for _, _, t, x, _ in rows]))
        code_prose.READ_MESSAGES = False   # the indexer's reading before stop 52, then with messages
        own = unit(emb.encode([embedding_text(t, own_prose(p, s, x) or x) for _, p, t, x, s in rows]))
        code_prose.READ_MESSAGES = True
        said = unit(emb.encode([embedding_text(t, own_prose(p, s, x) or x) for _, p, t, x, s in rows]))
        qs = questions(corpus(name), "natural")
        qv = unit(emb.encode([q.question for q in qs]))
        found = {}
        readings = (("indexer's", own), ("indexer's with messages", said))
        if not args.messages_only:
            readings = (("raw", raw), ("prose", pro), ("mean", (raw + pro) / 2), ("one vector", unit(raw + pro)),
                        ("prose first", first)) + readings
        for label, m in readings:
            found[label] = sum(
                any(rel(rows[i][1]) == q.file and norm(q.key_phrase) in norm(rows[i][3])
                    for i in np.argsort(-(m @ v))[:5]) for q, v in zip(qs, qv))
        print(f"{name}: {len(rows)} chunks, {len(qs)} natural questions; dense recall@5 "
              + ", ".join(f"{k} {v}/{len(qs)}" for k, v in found.items()), flush=True)
        if args.fused:
            variants = {"indexer's": own, "indexer's with messages (stop 52)": said}
            if not args.messages_only:
                variants = {"raw (before stop 48)": raw, "prose": pro, "prose first": first, **variants}
            shipped_search(name, {r[0]: k for k, r in enumerate(rows)}, variants)


def shipped_search(name: str, row_of: dict[int, int], variants: dict) -> None:  # noqa: ANN001
    """Recall@5 of Index.search with the shipped passage judge, natural and exact, on the
    bench index and on copies of it with each variant's vectors stored instead."""
    import shutil
    import tempfile

    from bench_relevance import index_dir
    from bench_retrieval import LocalIndex
    from sentence_rerank import PassageScorer

    scorer = PassageScorer(str(HERE.parent / "indexer" / "data" / "relevance"))
    src = index_dir(name)
    sets = {w: questions(corpus(name), w) for w in ("natural", "exact")}

    def recall(local) -> dict[str, int]:  # noqa: ANN001
        out = {}
        for which, qs in sets.items():
            hit = 0
            for q in qs:
                order = [p.chunk_id for p in local.idx.search(q.question, k=5, judge=scorer)]
                got = local.idx.store.fetch_chunks(order)
                hit += any(c in got and local.rel(got[c][1]) == q.file and norm(q.key_phrase) in norm(got[c][3])
                           for c in order)
            out[which] = hit
        return out

    local = LocalIndex(src, "onnx-int8")
    base = recall(local)
    local.idx.close()
    line = [f"as built: natural {base['natural']}/{len(sets['natural'])}, exact {base['exact']}/{len(sets['exact'])}"]
    for label, m in variants.items():
        tmp = Path(tempfile.mkdtemp(prefix="codeprose-"))
        shutil.copytree(src / "index", tmp / "index")
        for f in ("vectors.hnsw", "vectors.json"):
            (tmp / "index" / f).unlink(missing_ok=True)
        con = sqlite3.connect(str(tmp / "index" / "index.db"))
        con.executemany("UPDATE chunks SET embedding = ? WHERE id = ?",
                        [(np.asarray(m[k], dtype=np.float32).tobytes(), cid) for cid, k in row_of.items()])
        con.commit()
        con.close()
        local = LocalIndex(tmp, "onnx-int8")
        local.docs = str(src / "docs") + os.sep
        got = recall(local)
        local.idx.close()
        shutil.rmtree(tmp, ignore_errors=True)
        line.append(f"{label}: natural {got['natural']}, exact {got['exact']}")
    print(f"  {name}, the shipped search, recall@5: " + "; ".join(line), flush=True)


if __name__ == "__main__":
    main()
