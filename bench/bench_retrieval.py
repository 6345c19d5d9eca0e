"""Retrieval benchmark on real documents: prints figures, asserts nothing.

    python bench/bench_retrieval.py                     # everything, both corpora
    python bench/bench_retrieval.py --corpora git --no-speed --no-latency   # quality only
    python bench/bench_retrieval.py --reuse             # keep built indexes (no index timing)

Corpora (bench/retrieval_data.py): the Linux kernel's documentation sources (2,030
files) and git's AsciiDoc manuals (292 files), from Debian packages. Questions:
bench/data/retrieval/{kernel,git}.jsonl, 72 each, written by people in their own words;
odd ids are the dev half (used for tuning), even ids the test half (reported).

Hit rule: a top-k passage from the question's file whose text, lower-cased with
whitespace runs made single spaces, holds the key phrase (normalised the same way). For
localrag, whose passages are cleaned of markup, the key phrase must be in the cleaned
passage AND in the file's own lines start_line..end_line (so cleaning can never make a
hit that the cited lines do not hold). The baseline's windows are raw file text.

Systems, per corpus, each over the same questions:
- dense / lexical / fused: localrag's own index, built here by localrag's
  pipeline (walk, parse, clean, chunk in word pieces, embed, SQLite + HNSW + BM25).
  dense = HNSW over MiniLM vectors; lexical = BM25 over every content term;
  fused = weighted RRF, what `localrag search` returns.
- baseline: fixed 200-word windows (no overlap), exact MiniLM cosine (float32),
  FTS5 BM25 over every query term (OR), RRF k=60, implemented here.
Figures: recall@1/5/10 and MRR (over the top 10), for dev and test; index time, chunks/s
and word pieces embedded per second; search latency p50/p99 at 100k chunks; fresh
process `localrag search` p50; and, on a slice of the kernel corpus, indexing by the
landed main (run from a separate checkout, --main) side by side with this tree.
"""

from __future__ import annotations

import argparse
import json
import os
import re
import shutil
import sqlite3
import statistics
import subprocess
import sys
import time
from pathlib import Path

import numpy as np

os.environ.setdefault("HF_HUB_OFFLINE", "1")
HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE.parent))
sys.path.insert(0, str(HERE))

from retrieval_data import (OUT, Corpus, EmbeddingCache, Question, baseline_windows,  # noqa: E402
                            corpus, is_markup_extracted, norm, questions)

os.environ.setdefault("LOCALRAG_CACHE_DIR", str(OUT.parent / "cache"))
KS = (1, 5, 10)


# --- scoring ---------------------------------------------------------------------------

class FileLines:
    def __init__(self, root: Path) -> None:
        self.root = root
        self._cache: dict[str, list[str]] = {}

    def span(self, path: str, start: int | None, end: int | None) -> str:
        lines = self._cache.get(path)
        if lines is None:
            lines = self._cache[path] = Path(path).read_text(encoding="utf-8", errors="replace").split("\n")
        if start is None:
            return "\n".join(lines)
        return "\n".join(lines[start - 1:end])


def first_hit(q: Question, passages: list[tuple[str, str, str]], k: int = 10) -> int | None:
    """1-based rank of the first hit among (relative file, cleaned text, source span)."""
    key = norm(q.key_phrase)
    for rank, (rel, text, source) in enumerate(passages[:k], start=1):
        if rel == q.file and key in norm(text) and (not q.in_source or key in norm(source)):
            return rank
    return None


def summarise(ranks: list[int | None]) -> dict[str, float]:
    n = len(ranks) or 1
    out = {f"R@{k}": sum(1 for r in ranks if r is not None and r <= k) / n for k in KS}
    out["MRR"] = sum(1.0 / r for r in ranks if r is not None and r <= 10) / n
    return out


# --- the baseline ----------------------------------------------------------------------

class Baseline:
    """200-word windows, exact cosine (float32 MiniLM), FTS5 BM25 over all terms, RRF."""

    def __init__(self, c: Corpus, embed_cache: EmbeddingCache, embedder) -> None:  # noqa: ANN001
        self.windows = baseline_windows(c)
        self.vecs = embed_cache.get_many("onnx", [t for _, t in self.windows],
                                         lambda x: embedder.encode(x, batch_size=32),
                                         batch=512, progress=f"baseline {c.name}")
        self.db = sqlite3.connect(":memory:")
        self.db.execute("CREATE VIRTUAL TABLE w USING fts5(text, tokenize='porter')")
        self.db.executemany("INSERT INTO w(rowid, text) VALUES (?, ?)",
                            [(i + 1, t) for i, (_, t) in enumerate(self.windows)])

    def rank(self, query: str, qvec: np.ndarray, depth: int = 50) -> dict[str, list[int]]:
        sims = self.vecs @ qvec
        dense = list(np.argsort(-sims, kind="stable")[:depth])
        terms = list(dict.fromkeys(w.lower() for w in re.findall(r"\w+", query)))
        match = " OR ".join('"' + t.replace('"', '""') + '"' for t in terms)
        lexical = [r[0] - 1 for r in self.db.execute(
            "SELECT rowid FROM w WHERE w MATCH ? ORDER BY rank LIMIT ?", (match, depth))] if match else []
        fused: dict[int, float] = {}
        for ranking in (dense, lexical):
            for r, i in enumerate(ranking, start=1):
                fused[int(i)] = fused.get(int(i), 0.0) + 1.0 / (60 + r)
        fused_ids = [i for i, _ in sorted(fused.items(), key=lambda kv: (-kv[1], kv[0]))]
        return {"dense": [int(i) for i in dense], "lexical": lexical, "fused": fused_ids}

    def passages(self, ids: list[int]) -> list[tuple[str, str, str]]:
        return [(self.windows[i][0], self.windows[i][1], self.windows[i][1]) for i in ids]


# --- localrag's index ------------------------------------------------------------------

def word_pieces_of_index(idx) -> tuple[int, int]:  # noqa: ANN001
    """(word pieces embedded, word pieces of the chunk texts that fell past the window)."""
    emb = idx.embedder
    embedded = cut = 0
    rows = idx.store.conn.execute("SELECT title, text FROM chunks").fetchall()
    from indexer.chunker import embedding_text

    for i in range(0, len(rows), 2000):
        counts = emb.count_tokens([embedding_text(t, x) for t, x in rows[i:i + 2000]])
        for n in counts:
            embedded += min(n + 2, emb.window)
            cut += max(0, n + 2 - emb.window)
    return embedded, cut


def build_index(c: Corpus, data_dir: Path, *, reuse: bool, backend: str, chunk_tokens: int = 0,
                window: int | None = None, chunk_words: int | None = None) -> dict:
    """localrag's index of the corpus in data_dir/index (timed unless reused)."""
    from indexer.embedder import Embedder
    from indexer.index import Index
    from indexer.options import IndexOptions

    info_path = data_dir / "build.json"
    if reuse and info_path.exists():
        return json.loads(info_path.read_text()) | {"reused": True}
    shutil.rmtree(data_dir, ignore_errors=True)
    data_dir.mkdir(parents=True)
    folder = data_dir / "docs"
    for f in c.files:   # a copy, so that the index holds exactly the corpus files
        dst = folder / f.relative_to(c.root)
        dst.parent.mkdir(parents=True, exist_ok=True)
        shutil.copyfile(f, dst)
    opts = IndexOptions(chunk_tokens=chunk_tokens)
    if chunk_words:
        opts.chunk_words = chunk_words
    emb = Embedder(backend=backend, window=window)
    t0 = time.perf_counter()
    emb.encode(["load the model"])          # loading counts as indexing time
    idx = Index(data_dir / "index", options=opts, embedder=emb)
    idx.add_root(folder)
    report = idx.update()
    elapsed = time.perf_counter() - t0
    embedded, cut = word_pieces_of_index(idx)
    chunks = idx.status().chunks
    idx.close()
    info = {"seconds": elapsed, "chunks": chunks, "files": report.added, "word_pieces": embedded,
            "cut": cut, "backend": backend, "reused": False,
            "built_at": time.strftime("%Y-%m-%d %H:%M"), "load_at_end": os.getloadavg()[0]}
    info_path.write_text(json.dumps(info))
    return info


class LocalIndex:
    def __init__(self, data_dir: Path, backend: str) -> None:
        from indexer.embedder import Embedder
        from indexer.index import Index
        from indexer.options import IndexOptions

        self.data_dir = data_dir
        self.idx = Index(data_dir / "index", options=IndexOptions(), embedder=Embedder(backend=backend))
        self.vectors = self.idx._vectors_index()
        self.docs = str(data_dir / "docs") + os.sep
        self.lines = FileLines(data_dir)

    def rel(self, path: str) -> str:
        return path[len(self.docs):] if path.startswith(self.docs) else path

    def rank(self, query: str, qvec: np.ndarray, depth: int = 50) -> dict[str, list[int]]:
        from indexer import search

        dense, lexical = search.rankings(self.vectors, qvec, query, depth)
        fused = [cid for cid, _ in search.fuse(dense, lexical)]
        return {"dense": dense, "lexical": lexical, "fused": fused}

    def passages(self, ids: list[int]) -> list[tuple[str, str, str]]:
        rows = self.idx.store.fetch_chunks(list(ids))
        out = []
        for cid in ids:
            r = rows.get(cid)
            if r is None:
                continue
            out.append((self.rel(r[1]), r[3], self.lines.span(r[1], r[4], r[5])))
        return out


class RawLexical:
    """The same chunks, BM25 over their raw source lines instead of the cleaned text:
    what cleaning does for the lexical side (judged by the same hit rule)."""

    def __init__(self, local: LocalIndex) -> None:
        import tempfile

        from indexer.bm25 import Bm25Index

        self.local = local
        self.bm = Bm25Index(Path(tempfile.mkdtemp()))
        rows = local.idx.store.conn.execute(
            "SELECT c.id, c.title, f.path, c.start_line, c.end_line FROM chunks c JOIN files f ON f.id = c.file_id"
        ).fetchall()
        self.bm.add_many([(cid, title + "\n" + local.lines.span(path, a, b)) for cid, title, path, a, b in rows])

    def rank(self, query: str, qvec: np.ndarray, depth: int = 50) -> dict[str, list[int]]:
        return {"lexical": [cid for cid, _ in self.bm.search(query, depth)]}

    def passages(self, ids: list[int]) -> list[tuple[str, str, str]]:
        return self.local.passages(ids)


def evaluate(system, qs: list[Question], qvecs: np.ndarray, names: list[str]) -> dict:  # noqa: ANN001
    ranks: dict[str, list[int | None]] = {n: [] for n in names}
    for q, v in zip(qs, qvecs):
        lists = system.rank(q.question, v)
        for n in names:
            ranks[n].append(first_hit(q, system.passages(lists[n][:10])))
    return ranks


def print_quality(name: str, qs: list[Question], table: dict[str, dict[str, list]]) -> None:
    for split in ("test", "dev"):
        mask = [q.split == split for q in qs]
        print(f"\n  {name} — {split} half ({sum(mask)} questions)")
        print(f"  {'system':<22}{'R@1':>7}{'R@5':>7}{'R@10':>7}{'MRR':>7}")
        for system, ranks in table.items():
            s = summarise([r for r, m in zip(ranks, mask) if m])
            print(f"  {system:<22}{s['R@1']:>7.3f}{s['R@5']:>7.3f}{s['R@10']:>7.3f}{s['MRR']:>7.3f}")


# --- speed: the landed main side by side ------------------------------------------------

SPEED_SCRIPT = r"""
import json, sys, time, os
from pathlib import Path
from indexer.embedder import Embedder
from indexer.index import Index
from indexer.options import IndexOptions
folder, index_dir = sys.argv[1], sys.argv[2]
t0 = time.perf_counter()
emb = Embedder()
emb.encode(["load the model"])
idx = Index(Path(index_dir), options=IndexOptions(), embedder=emb)
idx.add_root(folder)
idx.update()
elapsed = time.perf_counter() - t0
rows = idx.store.conn.execute("SELECT title, text FROM chunks").fetchall()
print(json.dumps({"seconds": elapsed, "chunks": len(rows), "texts": [t + "\n" + x for t, x in rows]}))
"""


def speed_side_by_side(main_tree: Path, slice_every: int, out: Path) -> None:
    from indexer.embedder import Embedder

    c = corpus("kernel")
    files = c.files[::slice_every]
    folder = out / "speed" / "docs"
    shutil.rmtree(out / "speed", ignore_errors=True)
    for f in files:
        dst = folder / f.relative_to(c.root)
        dst.parent.mkdir(parents=True, exist_ok=True)
        shutil.copyfile(f, dst)
    counter = Embedder(backend="onnx")
    results = {}
    for label, tree in (("main (landed)", main_tree), ("this tree", HERE.parent)):
        env = dict(os.environ, PYTHONPATH=str(tree))
        index_dir = out / "speed" / label.split()[0] / "index"
        proc = subprocess.run([sys.executable, "-c", SPEED_SCRIPT, str(folder), str(index_dir)],
                              env=env, capture_output=True, text=True, cwd=str(tree))
        if proc.returncode != 0:
            print(f"  {label}: failed: {proc.stderr[-600:]}")
            return
        data = json.loads(proc.stdout.strip().splitlines()[-1])
        counts = counter.count_tokens(data["texts"])
        embedded = sum(min(n + 2, counter.window) for n in counts)
        total = sum(n + 2 for n in counts)
        results[label] = (data["seconds"], data["chunks"], embedded, total)
    print(f"\n  Indexing side by side: every {slice_every}th kernel file ({len(files)} files), "
          "each run in a fresh process, same machine, same session")
    print(f"  {'tree':<16}{'seconds':>9}{'chunks':>8}{'chunks/s':>10}{'wp embedded':>13}{'wp/s':>8}{'wp cut':>8}")
    for label, (sec, chunks, embedded, total) in results.items():
        print(f"  {label:<16}{sec:>9.1f}{chunks:>8}{chunks / sec:>10.1f}{embedded:>13}"
              f"{embedded / sec:>8.0f}{(total - embedded) / total:>8.1%}")
    (m_sec, *_), (t_sec, *_) = results["main (landed)"], results["this tree"]
    print(f"  time ratio this tree / main: {t_sec / m_sec:.2f}")


# --- latency at 100k chunks --------------------------------------------------------------

def latency_at(n_target: int, source: LocalIndex, qs: list[tuple[str, np.ndarray]], out: Path) -> None:
    """A 100k-chunk index made of the real kernel chunks, each repeated with its real
    embedding plus small noise (sigma 0.01 per dimension, renormalised: cosine to the
    original about 0.98) and its real text: realistic vectors and postings."""
    from indexer.index import Index
    from indexer.options import IndexOptions
    from indexer.search import hybrid_search

    folder = out / "latency"
    shutil.rmtree(folder, ignore_errors=True)
    store = source.idx.store
    rows = store.conn.execute(
        "SELECT title, text, start_line, end_line, char_start, char_end, embedding FROM chunks ORDER BY id"
    ).fetchall()
    idx = Index(folder / "index", options=IndexOptions(), embedder=source.idx.embedder)
    rng = np.random.default_rng(0)
    t0 = time.perf_counter()
    copies = -(-n_target // len(rows))
    made = 0
    with idx.store.transaction(bump=True) as conn:
        for copy in range(copies):
            for start in range(0, len(rows), 50):
                part = rows[start:start + 50][: n_target - made]
                if not part:
                    break
                path = f"/bench/copy{copy}/file_{start // 50:06d}.txt"
                fid = idx.store.upsert_file(conn, path=path, root="/bench", mtime_ns=1, size=1, sha256=path,
                                            state="indexed", reason=None, chunks=len(part))
                vecs = np.vstack([np.frombuffer(r[6], dtype=np.float32) for r in part])
                if copy:
                    vecs = vecs + rng.normal(0, 0.01, vecs.shape).astype(np.float32)
                    vecs /= np.linalg.norm(vecs, axis=1, keepdims=True)
                idx.store.insert_chunks(conn, fid, [(j, r[0], r[1], r[2], r[3], None, r[4], r[5])
                                                    for j, r in enumerate(part)], vecs)
                made += len(part)
        idx.store.set_meta(conn, "embedding_model", idx.embedder.name)
        idx.store.set_meta(conn, "dim", str(idx.embedder.dim))
        conn.execute("INSERT OR IGNORE INTO roots(path, added_at) VALUES ('/bench', 0)")
    vectors = idx._vectors_index()
    vectors.save()
    build = time.perf_counter() - t0
    times = []
    for _ in range(2):
        for text, qv in qs:
            t = time.perf_counter()
            hybrid_search(idx.store, vectors, qv, text, k=5)
            times.append(time.perf_counter() - t)
    ms = np.array(times[len(qs):]) * 1000   # the second pass: warm caches, as in daily use
    t_enc = []
    for text, _ in qs[:40]:
        t = time.perf_counter()
        idx.embedder.encode([text])
        t_enc.append(time.perf_counter() - t)
    print(f"\n  Search latency at {len(idx.store.chunk_ids())} chunks ({len(rows)} real kernel chunks, "
          f"repeated with noisy copies of their real embeddings; built in {build:.0f} s)")
    print(f"  hybrid search (HNSW + BM25 + fusion + rows), {len(qs)} queries: "
          f"p50 {np.percentile(ms, 50):.1f} ms, p99 {np.percentile(ms, 99):.1f} ms")
    print(f"  query embedding (onnx-int8): p50 {np.percentile(np.array(t_enc) * 1000, 50):.1f} ms")
    idx.close()
    shutil.rmtree(folder, ignore_errors=True)


def cli_latency(data_dir: Path, query: str, runs: int, tree: Path) -> list[float]:
    env = dict(os.environ, PYTHONPATH=str(tree))
    times = []
    for _ in range(runs):
        t = time.perf_counter()
        proc = subprocess.run([sys.executable, "-m", "localrag", "--data-dir", str(data_dir), "search", query,
                               "-k", "5"], env=env, capture_output=True, text=True, cwd=str(tree))
        times.append(time.perf_counter() - t)
        if proc.returncode != 0:
            print("  CLI failed:", proc.stderr[-400:])
            break
    return times


# --- main -------------------------------------------------------------------------------

def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--corpora", default="kernel,git")
    ap.add_argument("--reuse", action="store_true", help="reuse indexes built by an earlier run")
    ap.add_argument("--backend", default="onnx-int8", help="embedding backend of localrag's index")
    ap.add_argument("--no-speed", action="store_true", help="skip the side-by-side with main")
    ap.add_argument("--main", default="/work/wt/basemain", help="a checkout of the landed main")
    ap.add_argument("--slice", type=int, default=10, help="side by side on every Nth kernel file")
    ap.add_argument("--no-latency", action="store_true")
    ap.add_argument("--latency-chunks", type=int, default=100_000)
    ap.add_argument("--cli-runs", type=int, default=5)
    ap.add_argument("--kernel-every", type=int, default=1,
                    help="kernel slice: the questions' files plus every Nth other file (1 = all 2,030)")
    ap.add_argument("--build-only", action="store_true", help="build (and time) the indexes, then stop")
    ap.add_argument("--window", type=int, default=0, help="embedder window in word pieces (0: localrag's default)")
    ap.add_argument("--chunk-words", type=int, default=0, help="chunk word cap (0: localrag's default)")
    ap.add_argument("--compare", default="",
                    help="more built indexes to evaluate, as corpus:tag:backend:label,... (no timing)")
    ap.add_argument("--tag", default="data", help="folder name of the built index under bench/out/retrieval/CORPUS")
    args = ap.parse_args()

    from indexer.embedder import Embedder

    import platform

    print(f"machine: {platform.processor() or platform.machine()}, {os.cpu_count()} CPUs "
          f"({_cpu_name()}), load average {os.getloadavg()[0]:.1f} at start")
    cache = EmbeddingCache(OUT / "embeddings.db")
    fp32 = Embedder(backend="onnx")     # the baseline's exact MiniLM (matches torch to 1e-6)
    locals_: dict[str, LocalIndex] = {}
    for name in args.corpora.split(","):
        c = corpus(name, every=args.kernel_every if name == "kernel" else 1)
        qs = questions(c)
        print(f"\n=== {name}: {len(c.files)} files, {len(qs)} questions "
              f"({sum(q.split == 'dev' for q in qs)} dev / {sum(q.split == 'test' for q in qs)} test)")
        data_dir = OUT / name / (args.tag if c.name != "kernel" or args.kernel_every == 1
                                 else f"{args.tag}-every{args.kernel_every}")
        info = build_index(c, data_dir, reuse=args.reuse, backend=args.backend,
                           window=args.window or None, chunk_words=args.chunk_words or None)
        note = (f" (built by this script at {info.get('built_at', '?')}, reused now)"
                if info.get("reused") else "")
        print(f"  localrag index: {info['files']} files, {info['chunks']} chunks in {info['seconds']:.0f} s"
              f"{note}: {info['chunks'] / info['seconds']:.1f} chunks/s, "
              f"{info['word_pieces'] / info['seconds']:.0f} word pieces embedded/s, "
              f"{info['cut']} word pieces past the window ({args.backend})")
        if args.build_only:
            continue
        local = locals_[name] = LocalIndex(data_dir, args.backend)
        # one query per encode, as `localrag search` does (int8 activations are quantised
        # per batch, so a batch of questions would give slightly different vectors)
        qvec_local = np.vstack([local.idx.embedder.encode([q.question]) for q in qs])
        table = evaluate(local, qs, qvec_local, ["dense", "lexical", "fused"])
        base = Baseline(c, cache, fp32)
        qvec_fp32 = np.vstack([fp32.encode([q.question]) for q in qs])
        btable = evaluate(base, qs, qvec_fp32, ["dense", "lexical", "fused"])
        print(f"  baseline: {len(base.windows)} windows of 200 words")
        rows = {f"localrag {k}": v for k, v in table.items()}
        rows.update({f"baseline {k}": v for k, v in btable.items()})
        raw = RawLexical(local)
        rows["idea: BM25 on raw markup"] = evaluate(raw, qs, qvec_local, ["lexical"])["lexical"]
        for spec in filter(None, args.compare.split(",")):
            cname, tag, backend, label = spec.split(":")
            if cname != name:
                continue
            extra_dir = OUT / name / tag
            extra = LocalIndex(extra_dir, backend)
            qv = np.vstack([extra.idx.embedder.encode([q.question]) for q in qs])
            t = evaluate(extra, qs, qv, ["dense", "lexical", "fused"])
            rows.update({f"idea: {label} {k}": v for k, v in t.items()})
            extra.idx.close()
        print_quality(name, qs, rows)
        (OUT / name / "ranks.json").write_text(json.dumps({k: v for k, v in rows.items()}))

    if args.build_only:
        return
    if not args.no_latency and "kernel" in locals_:
        qs = questions(corpus("kernel")) + (questions(corpus("git")) if "git" in locals_ else [])
        local = locals_["kernel"]
        vecs = local.idx.embedder.encode([q.question for q in qs])
        latency_at(args.latency_chunks, local, [(q.question, v) for q, v in zip(qs, vecs)], OUT)
    if args.cli_runs and locals_:
        name = "git" if "git" in locals_ else next(iter(locals_))
        times = cli_latency(OUT / name / "data", "how do I undo the last commit", args.cli_runs, HERE.parent)
        print(f"\n  fresh-process `localrag search` on the {name} index, {len(times)} runs: "
              f"p50 {statistics.median(times):.2f} s (min {min(times):.2f}, max {max(times):.2f})")
    if not args.no_speed:
        speed_side_by_side(Path(args.main), args.slice, OUT)


def _cpu_name() -> str:
    try:
        for line in open("/proc/cpuinfo"):
            if line.startswith("model name"):
                return line.split(":", 1)[1].strip()
    except OSError:
        pass
    return "unknown CPU"


if __name__ == "__main__":
    main()
