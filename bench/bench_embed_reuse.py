"""How much embedding the text_key reuse saves on real folders: prints figures, asserts nothing.

    python bench/bench_embed_reuse.py /usr/share/doc/linux-doc-6.1/html/_sources /usr/share/doc

For each folder: the chunks an index of it holds (whole-file copies excluded: those were
reused before text keys, by file hash), the word pieces in them, and the share of both
that reuse saves (a chunk whose embedding text, title included, was seen before in the
same folder). Parsing and chunking only; nothing is embedded (a second run over changed
files saves more: every unchanged chunk of an edited file is reused).
"""

from __future__ import annotations

import argparse
import hashlib
import os
import sys
import time
from pathlib import Path

os.environ.setdefault("HF_HUB_OFFLINE", "1")
sys.path.insert(0, str(Path(__file__).resolve().parents[1]))


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("folders", nargs="+", type=Path)
    args = ap.parse_args()

    from indexer import reading, walk
    from indexer.chunker import chunk_document, embedding_text, sizer_for
    from indexer.embedder import Embedder
    from indexer.options import IndexOptions
    from indexer.parsers import parse_bytes

    embedder = Embedder()
    opts = IndexOptions()
    sizer = sizer_for(embedder, opts.chunk_tokens)
    for folder in args.folders:
        t = time.perf_counter()
        root = os.path.abspath(folder)
        scan = walk.scan([(root, root)], opts)
        seen_files: set[str] = set()
        seen: set[bytes] = set()
        files = copies = chunks = dup_chunks = pieces = dup_pieces = 0
        for cand in scan.candidates.values():
            try:
                snap = reading.read_snapshot(cand.path, max_bytes=opts.max_file_bytes)
            except (reading.FileSkip, reading.FileVanished):
                continue
            if snap.sha256 in seen_files:
                copies += 1
                continue
            seen_files.add(snap.sha256)
            name = os.path.basename(cand.path)
            try:
                doc = parse_bytes(snap.data, ext=cand.ext, name=name)
                found = chunk_document(doc, file_name=name, chunk_words=opts.chunk_words, sizer=sizer)
            except Exception:   # noqa: BLE001 - a file the index would mark as an error
                continue
            files += 1
            texts = [embedding_text(c.title, c.text) for c in found]
            counts = embedder.count_tokens(texts)
            for text, n in zip(texts, counts):
                key = hashlib.blake2b(text.encode("utf-8", "surrogatepass"), digest_size=16).digest()
                chunks += 1
                pieces += n + 2
                if key in seen:
                    dup_chunks += 1
                    dup_pieces += n + 2
                seen.add(key)
        print(f"{folder}: {files} files (+{copies} whole-file copies), {chunks} chunks, "
              f"{pieces} word pieces; reuse saves {dup_chunks} chunks "
              f"({100 * dup_chunks / max(1, chunks):.1f}%), {100 * dup_pieces / max(1, pieces):.1f}% "
              f"of word pieces  [{time.perf_counter() - t:.0f} s]", flush=True)


if __name__ == "__main__":
    main()
