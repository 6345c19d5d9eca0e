"""An index of N chunks (default 200,000), measured: prints figures, asserts nothing.

    python bench/bench_scale.py --n 200000 [--real 1500] [--cache bench/out/scale]

Built once into --cache (bench/out is git-ignored) and reused by later runs:
- real chunks: kernel docs chunks (bench/retrieval_data.py), chunked as the index
  chunks them and embedded with the real model (embedded once, kept in real.npz);
- the rest, as bench/bench_search.py's 100k case does: noisy copies, each a real
  chunk's vector plus Gaussian noise (sigma 0.05 per dimension, renormalised) and its
  text with the words rotated by a random offset plus a copy number (so BM25 postings
  grow like a real corpus's, not like one text repeated).
The chunks go through the normal store (SQLite + FTS5), the HNSW and BM25 caches are
built by the normal code (VectorIndex.open) and saved.

Figures, in one run: build times; disk size; in a fresh searching process its RSS, the
open time, hybrid search p50/p99 before reranking (query embedded outside the timing);
fresh-process `localrag search` p50 (it scans the saved vectors in place), in turns with
the same search in a fresh process that loads the HNSW graph first (as it did before); with `localrag watch` running, save -> searchable
(polled from another process, as a person's search would be); time until the app's
question box is usable (headless, from process start).
"""

from __future__ import annotations

import argparse
import json
import os
import shutil
import statistics
import subprocess
import sys
import time
from pathlib import Path

os.environ.setdefault("HF_HUB_OFFLINE", "1")
REPO = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(REPO))

QUERIES = ["how do I enable kernel debugging with dynamic printk", "memory barrier ordering rules",
           "PCI device power management suspend", "filesystem mount options for ext4",
           "scheduler real time priority", "GFP_KERNEL allocation in interrupt context",
           "device tree bindings for a gpio controller", "how to submit a patch to the mailing list",
           "cgroup memory limits", "tracing with ftrace function graph", "USB gadget configfs",
           "network driver NAPI polling", "spinlock versus mutex", "kernel module parameters",
           "DMA mapping API coherent buffers", "page cache writeback tuning", "RCU read side",
           "watchdog timer driver", "input subsystem event codes", "sysfs attribute files"]


def real_chunks(cache: Path, n: int):
    import numpy as np

    path = cache / "real.npz"
    if path.exists():
        z = np.load(path, allow_pickle=False)
        return [str(t) for t in z["texts"]], z["vecs"]
    from bench.bench_embed_speed import real_chunks as kernel_chunks
    from indexer.embedder import Embedder

    emb = Embedder()
    texts = kernel_chunks(emb, n)
    t = time.perf_counter()
    vecs = emb.encode(texts, batch_size=64)
    print(f"embedded {len(texts)} real kernel chunks in {time.perf_counter() - t:.0f} s", flush=True)
    cache.mkdir(parents=True, exist_ok=True)
    np.savez(path, texts=np.array(texts), vecs=vecs)
    return texts, vecs


def build(data: Path, n: int, texts: list[str], vecs) -> None:
    import numpy as np

    from indexer.embedder import Embedder
    from indexer.index import Index
    from indexer.options import IndexOptions

    rng = np.random.default_rng(3)
    idx = Index(data / "index", options=IndexOptions(), embedder=Embedder())
    store = idx.store
    t = time.perf_counter()
    per_file = 50
    for start in range(0, n, 20_000):
        stop = min(n, start + 20_000)
        src = np.arange(start, stop) % len(texts)
        noisy = vecs[src] + rng.normal(0, 0.05, (len(src), vecs.shape[1])).astype(np.float32)
        noisy /= np.linalg.norm(noisy, axis=1, keepdims=True)
        noisy[src == np.arange(start, stop)] = vecs[src[src == np.arange(start, stop)]]  # the originals
        with store.transaction(bump=True) as conn:
            for f0 in range(start, stop, per_file):
                path = f"/bench/part{f0 // 100_000}/file_{f0 // per_file:06d}.txt"
                fid = store.upsert_file(conn, path=path, root="/bench", mtime_ns=1, size=1, sha256=path,
                                        state="indexed", reason=None, chunks=min(per_file, stop - f0))
                rows = []
                for j in range(f0, min(f0 + per_file, stop)):
                    words = texts[j % len(texts)].split()
                    if j >= len(texts):
                        k = int(rng.integers(0, len(words)))
                        words = words[k:] + words[:k] + [f"copy{j % 5000}"]
                    text = " ".join(words)
                    rows.append((j - f0, f"file_{f0 // per_file:06d}.txt", text, 1, 1, None, 0, len(text)))
                store.insert_chunks(conn, fid, rows, noisy[f0 - start:f0 - start + len(rows)])
            store.set_meta(conn, "embedding_model", idx.embedder.name)
            store.set_meta(conn, "dim", str(vecs.shape[1]))
        print(f"  stored {stop} chunks ({time.perf_counter() - t:.0f} s)", flush=True)
    store_s = time.perf_counter() - t
    t = time.perf_counter()
    with idx._writing():
        idx._vectors_index().save()
    print(f"built: SQLite + FTS5 {store_s:.0f} s; HNSW + BM25 from SQLite and saved "
          f"{time.perf_counter() - t:.0f} s", flush=True)
    idx.close()


SEARCHER = r"""
import json, os, sys, time
t0 = time.perf_counter()
import numpy as np, psutil
from indexer.embedder import Embedder
from indexer.index import Index
from indexer.options import IndexOptions
from indexer.search import hybrid_search
emb = Embedder()
idx = Index(sys.argv[1], options=IndexOptions(), embedder=emb)
vectors = idx._vectors_index()
opened = time.perf_counter() - t0
queries = json.loads(sys.argv[2])
qvecs = emb.encode(queries)
for q, v in zip(queries[:3], qvecs):
    hybrid_search(idx.store, vectors, v, q, k=5)    # warm
times = []
for r in range(5):
    for q, v in zip(queries, qvecs):
        t = time.perf_counter()
        hybrid_search(idx.store, vectors, v, q, k=5)
        times.append(time.perf_counter() - t)
ms = np.array(times) * 1000
print(json.dumps({"open_s": opened, "p50": float(np.percentile(ms, 50)), "p99": float(np.percentile(ms, 99)),
                  "rss_mb": psutil.Process().memory_info().rss / 2**20, "chunks": len(vectors)}))
"""

LOADED_SEARCH = r"""
import sys
from localrag.assistant import Assistant
with Assistant.open(one_shot=False) as a:
    for n, p in enumerate(a.search(sys.argv[1]), 1):
        print(n, p.locator)
"""

APP = r"""
import asyncio, sys, time
from localrag.assistant import Assistant
from tui.app import create_app
start = float(sys.argv[2])
async def main():
    assistant = Assistant.open(sys.argv[1])
    app = create_app(assistant, load_model=False)
    async with app.run_test(size=(100, 30)) as pilot:
        while True:
            box = app.screen.query("#question")
            if box and app.focused is box.first() and not box.first().disabled:
                break
            await asyncio.sleep(0.01)
        print(time.time() - start, flush=True)
    assistant.close()
asyncio.run(main())
"""


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--n", type=int, default=200_000)
    ap.add_argument("--real", type=int, default=1500)
    ap.add_argument("--cache", type=Path, default=REPO / "bench" / "out" / "scale")
    ap.add_argument("--rebuild", action="store_true")
    args = ap.parse_args()

    texts, vecs = real_chunks(args.cache, args.real)
    data = args.cache / f"data_{args.n}"
    if args.rebuild or not (data / "index" / "vectors.hnsw").exists():
        shutil.rmtree(data, ignore_errors=True)
        build(data, args.n, texts, vecs)
    index = data / "index"
    disk = sum(p.stat().st_size for p in index.iterdir() if p.is_file())
    parts = ", ".join(f"{p.name} {p.stat().st_size / 2**20:.0f} MB" for p in sorted(index.iterdir())
                      if p.is_file() and p.stat().st_size > 2**20)
    print(f"N = {args.n}: disk {disk / 2**30:.2f} GB ({disk / args.n:.0f} bytes/chunk: {parts})", flush=True)
    env = dict(os.environ, PYTHONPATH=str(REPO), HF_HUB_OFFLINE="1", LOCALRAG_HOME=str(data))

    out = subprocess.run([sys.executable, "-c", SEARCHER, str(index), json.dumps(QUERIES)], env=env,
                         capture_output=True, text=True, cwd=REPO)
    if out.returncode:
        raise SystemExit(out.stderr[-3000:])
    s = json.loads(out.stdout.strip().splitlines()[-1])
    print(f"searching process: open {s['open_s']:.1f} s, RSS {s['rss_mb']:.0f} MB; hybrid search "
          f"(before reranking, query embedded) p50 {s['p50']:.1f} ms p99 {s['p99']:.1f} ms "
          f"over {len(QUERIES) * 5} searches", flush=True)

    # `localrag search` scans the saved HNSW file in place (one_shot); beside it, in turns,
    # the same search in a fresh process that loads the graph (what it did before)
    fresh: dict[str, list[float]] = {"scan": [], "load": []}
    for q in QUERIES[:5]:
        for how, cmd in (("scan", [sys.executable, "-m", "localrag", "search", q]),
                         ("load", [sys.executable, "-c", LOADED_SEARCH, q])):
            t = time.perf_counter()
            r = subprocess.run(cmd, env=env, capture_output=True, text=True, cwd=REPO)
            fresh[how].append(time.perf_counter() - t)
            if r.returncode:
                raise SystemExit(r.stderr[-2000:])
    for how, label in (("scan", "`localrag search` (vectors scanned in place)"),
                       ("load", "the same search loading the HNSW graph first")):
        print(f"fresh-process {label}: p50 {statistics.median(fresh[how]):.2f} s "
              f"(max {max(fresh[how]):.2f} s over {len(fresh[how])})", flush=True)

    t = time.time()
    r = subprocess.run([sys.executable, "-c", APP, str(data), repr(t)], env=env, capture_output=True,
                       text=True, cwd=REPO, timeout=300)
    if r.returncode:
        print(f"app start failed: {r.stderr[-1500:]}")
    else:
        print(f"app: question box usable {float(r.stdout.strip().splitlines()[-1]):.2f} s after "
              "process start (headless)", flush=True)

    watch_latency(data, env)


def watch_latency(data: Path, env: dict) -> None:
    from indexer.embedder import Embedder
    from indexer.index import Index
    from indexer.options import IndexOptions

    docs = data / "docs"
    docs.mkdir(exist_ok=True)
    note = docs / "note.md"
    note.write_text("# Note\n\nNothing here yet.\n")
    subprocess.run([sys.executable, "-m", "localrag", "index", str(docs)], env=env, check=True,
                   capture_output=True, cwd=REPO)
    watch = subprocess.Popen([sys.executable, "-m", "localrag", "watch", "--debounce", "0.3"], env=env,
                             stdout=subprocess.PIPE, text=True, cwd=REPO)
    try:
        line = watch.stdout.readline()          # "Watching N roots" once it is running
        assert line.startswith("Watching"), line
        reader = Index(data / "index", options=IndexOptions(), embedder=Embedder())
        reader.search("warm up")
        lat = []
        for i in range(5):
            token = f"zyxcanary{i}q"
            note.write_text(f"# Changed\n\nThe secret word is {token}.\n")
            t = time.perf_counter()
            while not any(token in p.text for p in reader.search(token, k=1)):
                if time.perf_counter() - t > 60:
                    break
            lat.append(time.perf_counter() - t)
        reader.close()
        print(f"save -> searchable with `localrag watch` running (debounce 0.3 s): median "
              f"{statistics.median(lat):.2f} s, max {max(lat):.2f} s (in order: "
              + ", ".join(f"{x:.2f}" for x in lat) + ")", flush=True)
    finally:
        watch.terminate()
        watch.wait(30)


if __name__ == "__main__":
    main()
