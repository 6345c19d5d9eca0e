"""Issue 17's speed figures against the main it was filed on, side by side in one run:
prints figures, asserts nothing.

    python bench/bench_speed_vs_main.py [--main-ref 006a393] [--corpus postgres] [--questions 10]

The issue's speed targets compare with "today's main" (006a393, the commit it measured):
answer p50 at most 1.2x that main's, and a fresh-process `localrag search` p50 of at most
3 s on 2 cores with reranking. This exports that commit (`git archive`) next to this tree,
copies the corpus's files (bench/retrieval_data.py) into a temporary folder and, for each
tree in its own process (its own defaults, as a person who installed it would have them):

1. indexes the folder into a fresh data directory (timed, printed, not part of the ratios);
2. answers the corpus's first natural questions with the default model (SmolLM2, mode
   always, each in a fresh chat), the two trees taking turns question by question (the
   order flips every question), so that the machine's load falls on both alike; the first
   answer of each (the model loads) is not counted;
3. runs `localrag search QUESTION -k 5` in fresh processes, in turns: main, this tree (its
   default: the relevance model rereads the fused top 20, `relevance_rerank`), this tree
   without that second stage, and this tree with the learned ranker instead (`rerank =
   true`, `relevance_rerank = false`); each a copy of its data directory with the settings;
4. times the second stage itself in one process (Assistant.search on the same index with
   relevance_rerank on and off, in turns, each question once warm): the reranking cost per
   query.

Needs only the Debian documentation package of the corpus (postgresql-doc-15 for postgres).
About 14 minutes on 2 cores.
"""

from __future__ import annotations

import argparse
import dataclasses
import json
import os
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

REPO = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(REPO))
sys.path.insert(0, str(REPO / "bench"))
os.environ.setdefault("HF_HUB_OFFLINE", "1")

WORKER = r"""
import json, sys, time
from localrag.assistant import Assistant
data_dir, docs = sys.argv[1], sys.argv[2]
a = Assistant.open(data_dir, overrides={"retrieval_mode": "always"})
t = time.perf_counter()
a.add_root(docs)
a.update_index()
print(json.dumps({"indexed_s": time.perf_counter() - t}), flush=True)
for line in sys.stdin:
    q = json.loads(line)["q"]
    a.new_chat()
    t = time.perf_counter()
    answer = a.ask(q, save=False)
    print(json.dumps({"s": time.perf_counter() - t}), flush=True)
a.close()
"""


class Tree:
    """One tree's answering process: indexes on start, then answers a question a line."""

    def __init__(self, label: str, tree: Path, data_dir: Path, docs: Path) -> None:
        self.label, self.tree, self.data_dir = label, tree, data_dir
        self.env = dict(os.environ, PYTHONPATH=str(tree))
        self.proc = subprocess.Popen([sys.executable, "-c", WORKER, str(data_dir), str(docs)],
                                     cwd=str(tree), env=self.env, text=True,
                                     stdin=subprocess.PIPE, stdout=subprocess.PIPE)
        self.indexed_s = self._reply()["indexed_s"]
        self.times: list[float] = []

    def _reply(self) -> dict:
        assert self.proc.stdout is not None
        while True:
            line = self.proc.stdout.readline()
            if not line:
                raise SystemExit(f"{self.label}: the answering process ended (exit {self.proc.wait()})")
            if line.startswith("{"):
                return json.loads(line)

    def ask(self, question: str) -> float:
        assert self.proc.stdin is not None
        self.proc.stdin.write(json.dumps({"q": question}) + "\n")
        self.proc.stdin.flush()
        return self._reply()["s"]

    def close(self) -> None:
        if self.proc.stdin:
            self.proc.stdin.close()
        self.proc.wait(timeout=120)


def fresh_search(tree: Path, data_dir: Path, query: str) -> float:
    env = dict(os.environ, PYTHONPATH=str(tree))
    t = time.perf_counter()
    proc = subprocess.run([sys.executable, "-m", "localrag", "--data-dir", str(data_dir), "search", query,
                           "-k", "5"], env=env, capture_output=True, text=True, cwd=str(tree))
    elapsed = time.perf_counter() - t
    if proc.returncode != 0:
        raise SystemExit(f"localrag search failed in {tree}: {proc.stderr[-600:]}")
    return elapsed


def p50(xs: list[float]) -> float:
    return statistics.median(xs)


def second_stage_cost(data_dir: Path, qs: list[str]) -> None:
    """The relevance model's rerank of the fused top 20, per query, in one warm process:
    Assistant.search with relevance_rerank on and off in turns (this tree). "Every passage
    new": the model's kept text vectors are dropped before each query (a first question);
    "in a session": kept across the questions, as the app, the watcher and `ask` keep them
    (a passage search brings back is not read again)."""
    from indexer.relevance_model import shared_relevance_model
    from localrag.assistant import Assistant

    def run(keep: bool) -> tuple[list[float], list[float]]:
        on: list[float] = []
        off: list[float] = []
        with Assistant.open(data_dir) as a:
            a.search(qs[0], k=5)                    # loads the embedder and the relevance model
            shared_relevance_model()._vectors.clear()
            for n, q in enumerate(qs):
                for flag in ((True, False) if n % 2 else (False, True)):
                    a.settings = dataclasses.replace(a.settings, relevance_rerank=flag)
                    if flag and not keep:
                        shared_relevance_model()._vectors.clear()
                    t0 = time.perf_counter()
                    a.search(q, k=5)
                    (on if flag else off).append(time.perf_counter() - t0)
        return on, off

    print(f"\n  the second stage in one warm process, {len(qs)} questions, in turns:")
    for keep, label in ((False, "every passage new"), (True, "in a session")):
        on, off = run(keep)
        print(f"    {label:<18} search p50 {p50(on):.3f} s with it, {p50(off):.3f} s without: "
              f"{p50(on) - p50(off):.3f} s a query")


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--main-ref", default="006a393", help="the main to compare with (the issue's)")
    ap.add_argument("--corpus", default="postgres")
    ap.add_argument("--questions", type=int, default=10, help="answers counted per tree")
    ap.add_argument("--search-runs", type=int, default=5, help="fresh searches per way")
    ap.add_argument("--keep", default="", help="keep the work folder here instead of a temporary one")
    args = ap.parse_args()
    from retrieval_data import corpus, questions

    c = corpus(args.corpus)
    qs = [q.question for q in questions(c, "natural")][:args.questions + 1]
    work = Path(args.keep) if args.keep else Path(tempfile.mkdtemp(prefix="speed-vs-main-"))
    try:
        main_tree = work / "main"
        shutil.rmtree(main_tree, ignore_errors=True)
        main_tree.mkdir(parents=True)
        archive = subprocess.run(["git", "archive", args.main_ref], cwd=REPO, capture_output=True, check=True)
        subprocess.run(["tar", "-x", "-C", str(main_tree)], input=archive.stdout, check=True)
        docs = work / "docs"
        shutil.rmtree(docs, ignore_errors=True)
        for f in c.files:
            dst = docs / f.relative_to(c.root)
            dst.parent.mkdir(parents=True, exist_ok=True)
            shutil.copyfile(f, dst)
        head = subprocess.run(["git", "rev-parse", "--short", "HEAD"], cwd=REPO, capture_output=True,
                              text=True).stdout.strip()
        print(f"{args.corpus}: {len(c.files)} files; main {args.main_ref} against this tree ({head}), "
              f"{os.cpu_count()} cores")
        for d in ("data-main", "data-this", "data-this-rerank"):
            shutil.rmtree(work / d, ignore_errors=True)
        trees = [Tree(f"main {args.main_ref}", main_tree, work / "data-main", docs)]
        trees.append(Tree("this tree", REPO, work / "data-this", docs))
        for t in trees:
            print(f"  indexed by {t.label}: {t.indexed_s:.0f} s")
        for n, q in enumerate(qs):
            for t in trees[::1 if n % 2 else -1]:
                s = t.ask(q)
                if n:
                    t.times.append(s)
        for t in trees:
            t.close()
        base = p50(trees[0].times)
        print(f"\n  answer (mode always, default model), {len(qs) - 1} questions, in turns:")
        for t in trees:
            print(f"    {t.label:<16} p50 {p50(t.times):6.2f} s  (min {min(t.times):.2f}, max {max(t.times):.2f})"
                  f"  x{p50(t.times) / base:.2f}")

        def with_settings(name: str, pairs: list[tuple[str, str]]) -> Path:
            d = work / name
            shutil.rmtree(d, ignore_errors=True)
            shutil.copytree(work / "data-this", d)
            for key, value in pairs:
                subprocess.run([sys.executable, "-m", "localrag", "--data-dir", str(d), "settings",
                                "--set", key, value], cwd=REPO,
                               env=dict(os.environ, PYTHONPATH=str(REPO)), check=True, capture_output=True)
            return d

        ways = [(f"main {args.main_ref}", main_tree, work / "data-main"),
                ("this tree", REPO, work / "data-this"),
                ("this, no 2nd stage", REPO, with_settings("data-this-fused", [("relevance_rerank", "false")])),
                ("this, learned rank", REPO, with_settings("data-this-rerank", [("relevance_rerank", "false"),
                                                                                  ("rerank", "true")]))]
        times: dict[str, list[float]] = {w[0]: [] for w in ways}
        for run in range(args.search_runs + 1):
            query = qs[run % len(qs)]
            for label, tree, data_dir in ways[::1 if run % 2 else -1]:
                s = fresh_search(tree, data_dir, query)
                if run:             # the first round warms the file cache
                    times[label].append(s)
        base = p50(times[ways[0][0]])
        print(f"\n  fresh-process `localrag search -k 5`, {args.search_runs} runs each, in turns:")
        for label, ts in times.items():
            print(f"    {label:<18} p50 {p50(ts):6.2f} s  (min {min(ts):.2f}, max {max(ts):.2f})  x{p50(ts) / base:.2f}")
        second_stage_cost(work / "data-this", qs)
    finally:
        if not args.keep:
            shutil.rmtree(work, ignore_errors=True)


if __name__ == "__main__":
    main()
