"""A documentation site indexed whole, as a person points localrag at it: what its generator's
own files (indexer/doc_builds.py) cost search. Prints figures, asserts nothing.

    python bench/doc_site.py [--corpora flask] [--reuse]

For each site (bench/retrieval_data.py SITES: every file of the installed folder) two
indexes are built side by side in one run: as shipped, and with the generated-file rule
switched off (indexer.doc_builds.DocBuilds.reason patched to None here, nowhere else), which
is how every release before stop 41 indexed such a folder. Both are searched as the product
searches (the fused order, the relevance model's second stage) with the corpus's natural
and exact questions. Per index: files, chunks and build seconds; recall@5 by key phrase
(the answering page itself, not a copy of its source); the share of top-5 slots taken by
files the rule skips; the distinct files in a top 5.
"""

from __future__ import annotations

import argparse
import os
import sys
from pathlib import Path
from statistics import mean

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE.parent))
sys.path.insert(0, str(HERE))
os.environ.setdefault("HF_HUB_OFFLINE", "1")

from retrieval_data import OUT, SITES, corpus, norm, questions  # noqa: E402


def build(name: str, tag: str, rule: bool, reuse: bool) -> tuple[Path, dict]:
    from bench_retrieval import build_index

    from indexer import doc_builds

    data_dir = OUT / name / tag
    original = doc_builds.DocBuilds.reason
    if not rule:
        doc_builds.DocBuilds.reason = lambda self, path, *, is_dir: None   # the walk before the rule
    try:
        info = build_index(corpus(name), data_dir, reuse=reuse, backend="onnx-int8")
    finally:
        doc_builds.DocBuilds.reason = original
    return data_dir, info


def generated_paths(name: str) -> set[str]:
    """The files and folders the shipped rule skips in the site, relative to its root."""
    from indexer.options import IndexOptions
    from indexer.walk import scan

    root = str(corpus(name).root)
    return {os.path.relpath(p, root).replace(os.sep, "/")
            for p, s in scan([(root, root)], IndexOptions()).skips.items() if s.kind == "generated"}


def generated(rel: str, skipped: set[str]) -> bool:
    """`rel` is a file the rule skips, or lies in a folder it skips."""
    parts = rel.split("/")
    return any("/".join(parts[:i]) in skipped for i in range(1, len(parts) + 1))


def measure(data_dir: Path, qs: list, scorer, skipped: set[str]) -> dict:  # noqa: ANN001
    from bench_retrieval import LocalIndex

    local = LocalIndex(data_dir, "onnx-int8")
    hits, slots, junk, distinct = 0, 0, 0, []
    for q in qs:
        res = local.idx.search(q.question, k=5, judge=scorer)
        rels = [local.rel(p.path) for p in res]
        key = norm(q.key_phrase)
        hits += any(r == q.file and key in norm(p.text) for r, p in zip(rels, res))
        slots += len(rels)
        junk += sum(generated(r, skipped) for r in rels)
        distinct.append(len(set(rels)))
    local.idx.close()
    return {"recall": hits / len(qs), "hits": hits, "n": len(qs), "junk": junk / max(slots, 1),
            "distinct": mean(distinct)}


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--corpora", default=",".join(SITES))
    ap.add_argument("--reuse", action="store_true", help="reuse indexes built by an earlier run")
    args = ap.parse_args()
    from sentence_rerank import PassageScorer

    scorer = PassageScorer(str(HERE.parent / "indexer" / "data" / "relevance"))
    for name in args.corpora.split(","):
        print(f"== {name}: {corpus(name).root}")
        rows = {}
        skipped = generated_paths(name)
        for tag, rule in (("before", False), ("data", True)):   # "data": the other benches' index
            data_dir, info = build(name, tag, rule, args.reuse)
            rows[tag] = (info, {w: measure(data_dir, questions(corpus(name), w), scorer, skipped)
                                for w in ("natural", "exact")})
        print(f"{'':28} {'files':>6} {'chunks':>7} {'build s':>8} | {'recall@5':>9} {'generated':>9} "
              f"{'distinct':>8} | {'exact@5':>8} {'generated':>9} {'distinct':>8}")
        for tag, label in (("before", "every file (before)"), ("data", "generated files skipped")):
            info, m = rows[tag]
            nat, ex = m["natural"], m["exact"]
            print(f"{label:28} {info['files']:>6} {info['chunks']:>7} {info['seconds']:>8.1f} | "
                  f"{nat['hits']:>3}/{nat['n']:<3} {nat['recall']:.3f} {nat['junk']:>8.2f} {nat['distinct']:>8.2f} | "
                  f"{ex['hits']:>2}/{ex['n']:<2} {ex['recall']:.3f} {ex['junk']:>8.2f} {ex['distinct']:>8.2f}")
        print("(recall@5: the answering page's passage holding the key phrase in the top 5; generated: the "
              "share of top-5 slots taken by files the rule skips; distinct: files in a top 5)")


if __name__ == "__main__":
    main()
