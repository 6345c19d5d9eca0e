"""Indexing benchmark: prints figures, asserts nothing.

    python bench/bench_index.py                 # 500 generated files (small default)
    python bench/bench_index.py --files 5000    # bigger generated corpus
    python bench/bench_index.py --folder DIR    # any folder (e.g. /usr/share/doc/python3.11)
    python bench/bench_index.py --burst 10000   # also: watcher burst of N new files

Figures: files/s, chunks/s, MB/s, peak RSS, index bytes per chunk, unchanged re-run time,
save-to-searchable latency under watch, pipeline embedding throughput vs raw encode.
"""

from __future__ import annotations

import argparse
import os
import shutil
import sys
import tempfile
import threading
import time
from pathlib import Path

os.environ.setdefault("HF_HUB_OFFLINE", "1")
sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

WORDS = ("river stone light paper engine garden music winter market signal forest cable "
         "harbor window silver orbit canvas ladder thunder meadow copper lantern").split()


def generate(folder: Path, n: int) -> None:
    import random

    rng = random.Random(7)
    for i in range(n):
        sub = folder / f"part{i % 10}"
        sub.mkdir(parents=True, exist_ok=True)
        paras = []
        for p in range(rng.randint(1, 4)):
            sent = " ".join(rng.choice(WORDS) for _ in range(rng.randint(30, 90)))
            paras.append(f"## Section {p}\n\nDocument {i} section {p}: {sent}.\n")
        (sub / f"doc_{i:05d}.md").write_text(f"# Document {i}\n\n" + "\n".join(paras))


class PeakRSS:
    def __init__(self) -> None:
        import psutil

        self.proc = psutil.Process()
        self.peak = self.proc.memory_info().rss
        self._stop = threading.Event()
        self._t = threading.Thread(target=self._run, daemon=True)

    def _run(self) -> None:
        while not self._stop.wait(0.05):
            self.peak = max(self.peak, self.proc.memory_info().rss)

    def __enter__(self) -> "PeakRSS":
        self._t.start()
        return self

    def __exit__(self, *a: object) -> None:
        self._stop.set()
        self._t.join()


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--files", type=int, default=500)
    ap.add_argument("--folder", type=Path)
    ap.add_argument("--burst", type=int, default=0, help="watcher burst of N new files")
    ap.add_argument("--keep", action="store_true")
    args = ap.parse_args()

    from indexer.embedder import Embedder
    from indexer.index import Index
    from indexer.options import IndexOptions

    work = Path(tempfile.mkdtemp(prefix="bench_index_"))
    corpus = args.folder.resolve() if args.folder else work / "corpus"
    if not args.folder:
        generate(corpus, args.files)
    embedder = Embedder()
    t = time.perf_counter()
    # warm up with chunk-sized texts: the first large encode pays one-off kernel set-up,
    # which would otherwise be charged to the pipeline and not to the raw encode below
    embedder.encode([" ".join(WORDS * 4)] * 64, batch_size=64)
    print(f"model load: {time.perf_counter() - t:.1f} s")
    opts = IndexOptions(extensions=[".md", ".txt", ".rst", ".py", ".html", ".pdf", ".docx"],
                        max_file_bytes=20 * 2**20)
    idx = Index(work / "index", options=opts, embedder=embedder)
    idx.add_root(corpus)
    with PeakRSS() as rss:
        t = time.perf_counter()
        report = idx.update()
        elapsed = time.perf_counter() - t
    st = idx.status()
    mb = sum(Path(p).stat().st_size for p, in idx.store.conn.execute(
        "SELECT path FROM files WHERE state='indexed'")) / 2**20
    print(f"corpus: {corpus} files indexed={st.files_indexed} skipped={st.files_skipped} "
          f"errors={st.files_error} chunks={st.chunks} text={mb:.1f} MB")
    print(f"index: {elapsed:.1f} s  {report.added / elapsed:.1f} files/s  "
          f"{report.chunks_added / elapsed:.1f} chunks/s  {mb / elapsed:.2f} MB/s  "
          f"peak RSS {rss.peak / 2**20:.0f} MB")
    print(f"index size: {(st.db_bytes + st.hnsw_bytes) / max(1, st.chunks):.0f} bytes/chunk "
          f"(sqlite {st.db_bytes / 2**20:.1f} MB incl. embeddings + FTS, hnsw {st.hnsw_bytes / 2**20:.1f} MB)")

    # unchanged re-run (fresh Index object: includes opening the HNSW cache)
    idx.close()
    t = time.perf_counter()
    idx = Index(work / "index", options=opts, embedder=embedder)
    again = idx.update()
    print(f"unchanged re-run of {again.unchanged} files: {time.perf_counter() - t:.3f} s "
          f"(target < 2 s for 500 files)")

    # pipeline embedding throughput vs raw encode on the same chunk texts
    texts = [f"{a}\n{b}" for a, b in idx.store.conn.execute("SELECT title, text FROM chunks")]
    t = time.perf_counter()
    embedder.encode(texts, batch_size=64)
    raw = len(texts) / (time.perf_counter() - t)
    pipeline = report.chunks_added / elapsed
    print(f"embedding: raw encode {raw:.1f} chunks/s, pipeline {pipeline:.1f} chunks/s, "
          f"ratio {pipeline / raw:.2f} (target >= 0.8)")

    # save -> searchable under watch
    events = []
    watcher = idx.watch(events.append, debounce_s=0.3)
    watcher.flush()
    target = next(corpus.rglob("*.md")) if args.folder is None else None
    if target is not None:
        lat = []
        for i in range(5):
            token = f"zyxcanary{i}q"
            target.write_text(f"# Changed\n\nThe secret word is {token}.\n")
            t = time.perf_counter()
            while not any(token in p.text for p in idx.search(token, k=1)):
                time.sleep(0.01)
            lat.append(time.perf_counter() - t)
            time.sleep(0.3)
        lat.sort()
        print(f"save -> searchable under watch (debounce 0.3 s): median {lat[2]:.2f} s, "
              f"max {lat[-1]:.2f} s (target < 2 s)")
    if args.burst:
        burst = corpus / "burst"
        with PeakRSS() as rss:
            t = time.perf_counter()
            generate(burst, args.burst)
            want = idx.status().files_indexed + args.burst
            while idx.status().files_indexed < want:
                time.sleep(0.5)
            print(f"watch burst: {args.burst} new files indexed in {time.perf_counter() - t:.1f} s, "
                  f"batches {len(events)}, peak RSS {rss.peak / 2**20:.0f} MB")
    watcher.stop()
    idx.close()
    if not args.keep:
        shutil.rmtree(work, ignore_errors=True)


if __name__ == "__main__":
    main()
