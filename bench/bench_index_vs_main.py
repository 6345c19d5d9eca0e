"""Indexing time of this tree against the main branch, side by side: prints figures,
asserts nothing.

    python bench/bench_index_vs_main.py [--corpus kernel] [--pieces 400000] [--rounds 2]

Copies the first files of a bench corpus (bench/retrieval_data.py; kernel: its
KERNEL_DIRS, the largest) up to about --pieces word pieces into a temporary folder, exports
the main branch (`git archive main`) next to it, then indexes the folder into a fresh
index with each tree in turn, in fresh processes, alternating main / this tree for
--rounds rounds (the machine is shared: interleaving keeps the ratio fair). Prints each
run's seconds, word pieces per second (of the chunks indexed), peak RSS, and the ratio.
Both trees chunk the same way, so the word pieces match; the count is printed to show it.
"""

from __future__ import annotations

import argparse
import json
import os
import shutil
import subprocess
import sys
import tempfile
from pathlib import Path

REPO = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(REPO))

DRIVER = r"""
import json, os, resource, sys, time
from pathlib import Path
import indexer
from indexer.embedder import Embedder
from indexer.index import Index
from indexer.options import IndexOptions
emb = Embedder()
emb.encode(["warm up the model " * 20] * 8)
opts = IndexOptions(extensions=[".txt", ".md", ".rst", ".html"], max_file_bytes=20 * 2**20)
idx = Index(Path(sys.argv[2]), options=opts, embedder=emb)
idx.add_root(sys.argv[1])
t = time.perf_counter()
report = idx.update()
elapsed = time.perf_counter() - t
texts = [f"{a}\n{b}" for a, b in idx.store.conn.execute("SELECT title, text FROM chunks")]
pieces = sum(emb.count_tokens(texts)) + 2 * len(texts)
print(json.dumps({"tree": os.path.dirname(os.path.dirname(indexer.__file__)), "s": elapsed,
                  "chunks": len(texts), "pieces": pieces, "files": report.added,
                  "rss_mb": resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024}))
"""


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--corpus", default="kernel")
    ap.add_argument("--pieces", type=int, default=400_000, help="about this many word pieces")
    ap.add_argument("--rounds", type=int, default=2)
    ap.add_argument("--main-ref", default="main")
    ap.add_argument("--variant", action="append", default=[], metavar="NAME:VAR=VALUE",
                    help="also this tree with an environment variable set, e.g. "
                    "streams1:LOCALRAG_EMBED_STREAMS=1")
    args = ap.parse_args()

    from bench.retrieval_data import corpus
    from indexer.embedder import Embedder

    work = Path(tempfile.mkdtemp(prefix="index_vs_main_", dir=REPO / "bench" / "out"))
    try:
        c = corpus(args.corpus)
        tok = Embedder().tokenizer()
        folder, total = work / "corpus", 0
        for f in c.files:
            if total >= args.pieces:
                break
            dst = folder / f.relative_to(c.root)
            dst.parent.mkdir(parents=True, exist_ok=True)
            shutil.copyfile(f, dst)
            total += len(tok.encode(f.read_text(errors="replace")).ids)
        main_tree = work / "main_tree"
        main_tree.mkdir()
        archive = subprocess.run(["git", "-C", str(REPO), "archive", args.main_ref],
                                 capture_output=True, check=True).stdout
        subprocess.run(["tar", "-x", "-C", str(main_tree)], input=archive, check=True)
        print(f"{args.corpus}: {sum(1 for _ in folder.rglob('*') if _.is_file())} files, "
              f"~{total} word pieces of raw text", flush=True)
        trees = {"main": (main_tree, {}), "this": (REPO, {})}
        for v in args.variant:
            name, _, assignment = v.partition(":")
            key, _, value = assignment.partition("=")
            trees[name] = (REPO, {key: value})
        runs: dict[str, list[dict]] = {n: [] for n in trees}
        for r in range(args.rounds):
            for name, (tree, extra) in trees.items():
                index_dir = work / f"index_{name}_{r}"
                env = dict(os.environ, PYTHONPATH=str(tree), HF_HUB_OFFLINE="1", **extra)
                out = subprocess.run([sys.executable, "-c", DRIVER, str(folder), str(index_dir)],
                                     env=env, capture_output=True, text=True, cwd=tree)
                if out.returncode != 0:
                    raise SystemExit(f"{name} failed:\n{out.stderr[-3000:]}")
                fig = json.loads(out.stdout.strip().splitlines()[-1])
                assert Path(fig["tree"]).resolve() == tree.resolve(), fig["tree"]
                runs[name].append(fig)
                print(f"round {r + 1} {name:5s}: {fig['s']:7.1f} s  {fig['files']} files  "
                      f"{fig['chunks']} chunks  {fig['pieces']} word pieces  "
                      f"{fig['pieces'] / fig['s']:6.0f} wp/s  peak RSS {fig['rss_mb']:.0f} MB",
                      flush=True)
                shutil.rmtree(index_dir, ignore_errors=True)
        best = {n: min(x["s"] for x in runs[n]) for n in runs}
        for name in runs:
            if name == "main":
                continue
            ratios = [t["s"] / m["s"] for m, t in zip(runs["main"], runs[name])]
            print(f"{name} / main time: best {best[name] / best['main']:.2f}, per round "
                  + ", ".join(f"{x:.2f}" for x in ratios)
                  + f"; word pieces/s (best): main {runs['main'][0]['pieces'] / best['main']:.0f}, "
                  f"{name} {runs[name][0]['pieces'] / best[name]:.0f}")
    finally:
        shutil.rmtree(work, ignore_errors=True)


if __name__ == "__main__":
    main()
