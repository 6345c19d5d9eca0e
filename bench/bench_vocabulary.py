"""BM25's vocabulary on a folder of code: how many terms, and what a search pays to open it.

    python bench/bench_vocabulary.py [--folder DIR] [--files 20000] [--turns 5]

Prints figures, asserts nothing. Default folder: this Python's site-packages (code and its
docs: .py .md .rst .txt), the worst case for exact terms. Each file is cut into pieces of
1,500 characters (about a chunk) and indexed by BM25 alone (no embeddings), under
bench/out/vocabulary/.

Figures, in one run:
- distinct word terms, exact terms as shipped, and exact terms under stop 37's rule
  (every token with punctuation kept whole: code expressions and data numbers too);
- the saved files' size;
- in fresh processes, in turns: opening the index and looking up 20 queries' terms with
  the saved table (as shipped) and with the same vocabulary read into a dict (as format
  3's reader did; its vocabulary was larger, stop 37's rule), wall time and peak RSS
  (VmHWM: Linux).
"""

from __future__ import annotations

import argparse
import json
import os
import re
import shutil
import site
import statistics
import subprocess
import sys
import time
from pathlib import Path

REPO = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(REPO))

from indexer.bm25 import _EDGE, _PART, _PLAIN, _PROSE_TOKEN, _WORD, MAX_EXACT_CHARS  # noqa: E402

QUERIES = ["numpy zeros dtype float32", "os.path.join", "--color=auto", "how do I parse json",
           "self.assertEqual", "sqlalchemy session commit", "token-0150-zq", "GFP_KERNEL",
           "async def", "import torch.nn as nn", "__init__.py", "pytest fixture scope",
           "http://localhost:8080", "utf-8 decode error", "x86_64", "<<<", "[[ -n file ]]",
           "np.float32", "requests.get timeout", "setup.cfg"]


def stop37_exact_terms(text: str, stem) -> list[str]:  # noqa: ANN001
    """Stop 37's rule, for the side-by-side: every token with punctuation, whole."""
    out = []
    for raw in text.lower().split():
        token = raw.strip(_EDGE)
        if (len(token) < 2 or len(token) > MAX_EXACT_CHARS or _PLAIN.fullmatch(token)
                or _PROSE_TOKEN.fullmatch(token)):
            continue
        if _WORD.fullmatch(token):
            parts = _PART.findall(token)
            if len(parts) > 1:
                out.append(stem("".join(parts)))
            continue
        out.append(token)
        bare = token.lstrip("-")
        if bare != token and "-" in bare:
            out.append(bare)
    return out


def texts(folder: Path, files: int):
    n = 0
    for dirpath, _, names in sorted(os.walk(folder)):
        for name in sorted(names):
            if not name.endswith((".py", ".md", ".rst", ".txt")):
                continue
            try:
                text = (Path(dirpath) / name).read_text(encoding="utf-8")
            except (OSError, UnicodeDecodeError):
                continue
            for i in range(0, len(text), 1500):
                yield text[i:i + 1500]
            n += 1
            if n >= files:
                return


def build(folder: Path, files: int, out: Path) -> dict:
    from indexer.bm25 import Bm25Index, exact_terms

    shutil.rmtree(out, ignore_errors=True)
    bm = Bm25Index(out)
    stem = bm.tokenize.stem
    words: set[str] = set()
    shipped: set[str] = set()
    before: set[str] = set()
    batch = []
    t0 = time.perf_counter()
    for i, text in enumerate(texts(folder, files)):
        batch.append((i, text))
        before.update(stop37_exact_terms(text, stem))
        shipped.update(exact_terms(text, stem))
        words.update(bm.tokenize(text))
        if len(batch) == 2000:
            bm.add_many(batch)
            batch = []
    bm.add_many(batch)
    bm.generation = 1
    t1 = time.perf_counter()
    bm.save()
    save_s = time.perf_counter() - t1
    size = sum(p.stat().st_size for p in out.iterdir())
    return {"chunks": len(bm), "word terms": len(words), "exact terms": len(shipped - words),
            "exact terms, stop 37's rule": len(before - words), "vocabulary": len(bm.vocab),
            "build s": round(t1 - t0, 1), "save s (sorts the table)": round(save_s, 2),
            "files MB": round(size / 1e6, 1)}


PROBE = """
import json, sys, time
def hwm_kb():   # this process's own peak (ru_maxrss would count the parent's before exec)
    for line in open("/proc/self/status"):
        if line.startswith("VmHWM:"):
            return float(line.split()[1])
    return float("nan")
t0 = time.perf_counter()
sys.path.insert(0, {repo!r})
from indexer.bm25 import Bm25Index
t1 = time.perf_counter()
bm = Bm25Index({out!r})
assert bm._load()
if {as_dict}:
    bm.vocab.writable()        # the terms read into a dict, as format 3's reader did
t2 = time.perf_counter()
found = sum(len(bm.query_terms(q)) for q in {queries!r})
t3 = time.perf_counter()
print(json.dumps({{"open s": t2 - t1, "lookups ms": (t3 - t2) * 1000, "terms found": found,
                  "peak RSS MB": hwm_kb() / 1024}}))
"""


def probe(out: Path, as_dict: bool) -> dict:
    code = PROBE.format(repo=str(REPO), out=str(out), as_dict=as_dict, queries=QUERIES)
    got = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    return json.loads(got.stdout)


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--folder", type=Path, default=Path(site.getsitepackages()[0]))
    ap.add_argument("--files", type=int, default=20000)
    ap.add_argument("--turns", type=int, default=5)
    ap.add_argument("--out", type=Path, default=REPO / "bench" / "out" / "vocabulary")
    args = ap.parse_args()
    print(f"folder {args.folder}, first {args.files} text files")
    figures = build(args.folder, args.files, args.out)
    for key, value in figures.items():
        print(f"  {key}: {value:,}" if isinstance(value, int) else f"  {key}: {value}")
    runs: dict[str, list[dict]] = {"table (shipped)": [], "dict (format 3)": []}
    for _ in range(args.turns):
        runs["table (shipped)"].append(probe(args.out, False))
        runs["dict (format 3)"].append(probe(args.out, True))
    print(f"fresh process, {args.turns} turns each, p50:")
    for name, got in runs.items():
        med = {k: statistics.median(r[k] for r in got) for k in got[0]}
        print(f"  {name}: open {med['open s']:.3f} s, 20 queries' lookups {med['lookups ms']:.1f} ms, "
              f"terms found {med['terms found']:.0f}, peak RSS {med['peak RSS MB']:.0f} MB")
    table, as_dict = (statistics.median(r["open s"] for r in got) for got in runs.values())
    print(f"  open, dict / table: x{as_dict / max(table, 1e-9):.1f}")


if __name__ == "__main__":
    main()
