"""Issue 17: search recall@5 as annotators judge it, beside the key-phrase rule. Prints
figures, asserts nothing.

    python bench/judged_recall.py --alphas 0.3,0.4,0.6,0.7   # kernel, git, postgres, debref, zsh
    python bench/judged_recall.py --export /tmp/extra         # what nobody judged yet, for annotators

The key-phrase rule (bench_retrieval.py: a top-5 passage of the answering file holds the
question's verbatim key phrase) misses answers said in other words, in another file or in
another chunk of the same page. Here each natural question's top 5 of today's search (the
shipped fused order, dense alone and BM25 alone for the "best single side", and score fusion
at `--alphas`) is looked up among the passages annotators judged with
bench/data/relevance/RUBRIC-relevance.md (`tojudge-<c>[-<round>].jsonl` with
`judged[2|3]-<c>[-<round>].jsonl`: one annotator's label, or with three their median),
matched by question, file and text, so an index rebuilt since keeps its labels. A question is
found at 5 when one of its five passages is labelled 2 (answers). A passage nobody judged
counts as not answering; their number is printed beside each figure, and `--export` writes
them out (`tojudge-<c>-extra.jsonl`'s format) for the next round of annotators. With
`--alphas`, alpha is also chosen each corpus left out (the best mean on the others).
`--write-fused` writes each question's fused top 5 with its label (fused-<c>.jsonl, today's
passages for relevance_combiner.py).
"""

from __future__ import annotations

import argparse
import json
import os
import sys
from pathlib import Path

os.environ.setdefault("HF_HUB_OFFLINE", "1")
HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE.parent))
sys.path.insert(0, str(HERE))

from bench_relevance_model import judged_passages  # noqa: E402
from retrieval_data import corpus, norm, questions  # noqa: E402

REL = HERE / "data" / "relevance"
SIDES = ("fused", "dense", "lexical")


def same_text(text: str) -> str:
    """A passage's text as labels match it: white space collapsed and permalink signs left out
    (stop 57 dropped Apache's "¶" from its headings; the passages judged before keep their
    labels)."""
    return " ".join(text.replace("¶", " ").split())


def labels_of(name: str) -> dict[tuple[str, str, str], int]:
    """(question id, file, text) -> label, over every judged round of a corpus
    (tojudge-<name>.jsonl, then tojudge-<name>-<round>.jsonl by name); no passage is in two
    rounds (each round holds what the earlier ones had not judged), and if one were, the
    first read would stand."""
    out: dict[tuple[str, str, str], int] = {}
    rounds = [name] + sorted(p.name[len("tojudge-"):-len(".jsonl")]
                             for p in REL.glob(f"tojudge-{name}-*.jsonl"))
    for rnd in rounds:
        if not (REL / f"judged-{rnd}.jsonl").exists():
            continue
        for r in judged_passages(rnd):
            out.setdefault((r["qid"], r["chunk_key"].rsplit("#", 1)[0], same_text(r["text"])), int(r["label"]))
    return out


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--corpora", default="kernel,git,postgres,debref,zsh")
    ap.add_argument("--k", type=int, default=5)
    ap.add_argument("--export", default="", help="folder for the passages nobody judged yet")
    ap.add_argument("--write-fused", action="store_true",
                    help="write each question's fused top k with its label to bench/data/relevance/"
                         "fused-<c>.jsonl (what relevance_combiner.py reads as today's passages)")
    ap.add_argument("--rerank", action="store_true",
                    help="also the learned ranker's order (Index.search(rerank=True), the shipped weights)")
    ap.add_argument("--alphas", default="", help="also score fusion at these alphas (e.g. 0.3,0.4,0.6)")
    ap.add_argument("--sentence-rerank", default="",
                    help="a relevance model's folder: also the fused top --depth reordered by each "
                         "passage's best sentence (sentence_rerank.py), at --betas")
    ap.add_argument("--depth", type=int, default=20)
    ap.add_argument("--which", default="natural", help="natural, or exact: the exact lookups (key-phrase "
                    "rule only: nobody judged their passages)")
    ap.add_argument("--betas", default="0.25,0.5,1,2")
    args = ap.parse_args()
    from bench_relevance import index_dir
    from bench_retrieval import LocalIndex

    from indexer import search

    alphas = [float(a) for a in args.alphas.split(",") if a]
    betas = [float(b) for b in args.betas.split(",") if b] if args.sentence_rerank else []
    scorer = None
    if args.sentence_rerank:
        from sentence_rerank import PassageScorer

        scorer = PassageScorer(args.sentence_rerank)
    exact = args.which == "exact"
    if exact:
        print(f"recall@{args.k} of the exact lookups by the key-phrase rule (nobody judged their passages)")
    else:
        print(f"recall@{args.k} of natural questions: judged (a passage labelled 'answers') and by the "
              f"key-phrase rule; [n] passages of those top {args.k}s nobody judged (counted as not answering)")
    results: dict[str, dict[str, float]] = {}   # corpus -> side -> judged recall
    for name in args.corpora.split(","):
        labels = labels_of(name)
        if not labels and not args.export and args.which == "natural":
            print(f"{name}: no judged passages under {REL} (--export writes its top {args.k}s)")
            continue
        local = LocalIndex(index_dir(name), "onnx-int8")
        qs = questions(corpus(name), args.which)
        sides = SIDES + (("reranked",) if args.rerank else ()) + (("shipped",) if scorer is not None else ()) \
            + tuple(f"alpha {a:g}" for a in alphas) \
            + tuple(f"beta {b:g}" for b in betas)
        judged = {s: 0 for s in sides}
        phrase = {s: 0 for s in sides}
        unjudged = {s: 0 for s in sides}
        agree = [0, 0]          # key-phrase passages judged 'answers', of those judged
        export: dict[tuple[str, str, str], dict] = {}
        fused_rows: list[dict] = []
        for q in qs:
            v = local.idx.embedder.encode([q.question])[0]
            dense, lexical = search.scored_rankings(local.vectors, v, q.question, 50)
            lists = {"fused": [cid for cid, _ in search.fuse(dense, lexical)][:args.k],
                     "dense": [cid for cid, _ in dense][:args.k],
                     "lexical": [cid for cid, _ in lexical][:args.k]}
            if args.rerank:
                lists["reranked"] = [p.chunk_id for p in local.idx.search(q.question, k=args.k, rerank=True)]
            for a in alphas:
                lists[f"alpha {a:g}"] = [cid for cid, _ in search.fuse(dense, lexical, alpha=a)][:args.k]
            if scorer is not None:          # the search as shipped (Index.search with the judge:
                lists["shipped"] = [p.chunk_id for p in   # feedback, then the second stage)
                                    local.idx.search(q.question, k=args.k, judge=scorer)]
            if betas:
                fused = search.fuse(dense, lexical)[:args.depth]
                head = local.idx.store.fetch_chunks([cid for cid, _ in fused])
                pins = search.lexical_winners(lexical)
                for b in betas:                 # the product's second stage at weight b
                    order, _ = search.rerank_judged(scorer, q.question, fused, head, depth=args.depth,
                                                    weight=b, keep_first=pins)
                    lists[f"beta {b:g}"] = order[:args.k]
            rows = local.idx.store.fetch_chunks(list({c for ids in lists.values() for c in ids}))
            key = norm(q.key_phrase)
            for side, ids in lists.items():
                found = hit = False
                for rank, cid in enumerate(ids, 1):
                    r = rows[cid]
                    rel = local.rel(r[1])
                    got = labels.get((q.id, rel, same_text(r[3])))
                    has_phrase = rel == q.file and key in norm(r[3]) and (
                        not q.in_source or key in norm(local.lines.span(r[1], r[4], r[5])))
                    hit |= has_phrase
                    passage = dict(qid=q.id, question=q.question, rank=rank,
                                   chunk_key=f"{rel}#{cid}", title=r[2], text=r[3])
                    if side == "fused":
                        fused_rows.append({**passage, "label": got})
                    if got is None:
                        unjudged[side] += 1
                        export.setdefault((q.id, rel, r[3]), passage)
                    else:
                        found |= got == 2
                        if has_phrase and side == "fused":
                            agree[0] += got == 2
                            agree[1] += 1
                judged[side] += found
                phrase[side] += hit
        n = len(qs)
        results[name] = {side: (phrase if exact else judged)[side] / n for side in sides}

        def figure(side: str) -> str:
            if exact:
                return f"{phrase[side] / n:.3f} key phrase"
            return (f"{judged[side] / n:.3f} judged [{unjudged[side]}], "
                    f"{phrase[side] / n:.3f} key phrase")

        print(f"{name} ({n} questions): " + "; ".join(f"{side} {figure(side)}" for side in SIDES))
        if args.rerank:
            print(f"  learned ranker (rerank): {figure('reranked')}")
        if alphas:
            print(f"  score fusion (shipped alpha {search.ALPHA:g}) at other alphas: " + "; ".join(
                f"{side} {figure(side)}" for side in sides if side.startswith("alpha")))
        if scorer is not None:
            print(f"  the search as shipped (Index.search with the judge: the first passages' feedback, "
                  f"then the second stage at beta {search.JUDGE_WEIGHT:g}): {figure('shipped')}")
        if betas:
            print(f"  fused top {args.depth} reordered by the best sentence: " + "; ".join(
                f"{side} {figure(side)}" for side in sides if side.startswith("beta")))
        if not exact:
            print(f"  fused top-{args.k} passages holding the key phrase judged 'answers': {agree[0]} of {agree[1]}")
        if args.write_fused:
            path = REL / f"fused-{name}.jsonl"
            path.write_text("".join(json.dumps(x, ensure_ascii=False) + "\n" for x in fused_rows))
            print(f"  fused top {args.k}s with their labels -> {path}")
        if args.export and export:
            out = Path(args.export)
            out.mkdir(parents=True, exist_ok=True)
            path = out / f"tojudge-{name}-extra.jsonl"
            path.write_text("".join(json.dumps(x, ensure_ascii=False) + "\n" for x in export.values()))
            print(f"  {len(export)} passages nobody judged -> {path}")
        local.idx.close()
    if alphas and len(results) > 2:
        choose_alpha(results, search.ALPHA, alphas)
    if betas and len(results) > 2:
        choose_beta(results, betas, "key phrase" if exact else "judged recall")


def choose_beta(results: dict[str, dict[str, float]], betas: list[float], what: str = "judged recall") -> None:
    """Leave-one-corpus-out: the beta (sentence rerank weight) with the best mean judged
    recall (or key-phrase recall, for the exact lookups) on the other corpora (ties to the
    larger beta), reported on the corpus left out."""
    print(f"\nthe sentence rerank's beta chosen on {what}@5, each corpus left out:")
    for out in results:
        rest = [c for c in results if c != out]
        mean = {b: sum(results[c][f"beta {b:g}"] for c in rest) / len(rest) for b in betas}
        best = max(mean, key=lambda b: (round(mean[b], 9), b))
        print(f"  {out}: beta {best:g} (mean on the others {mean[best]:.3f}) -> "
              f"{results[out][f'beta {best:g}']:.3f} on {out} (fused {results[out]['fused']:.3f})")


def choose_alpha(results: dict[str, dict[str, float]], shipped: float, alphas: list[float]) -> None:
    """Leave-one-corpus-out: the alpha with the best mean judged recall on the other corpora
    (ties to the shipped one, then the nearest), reported on the corpus left out."""
    print(f"\nscore fusion's alpha chosen on judged recall@5, each corpus left out (shipped {shipped:g}):")
    side = {shipped: "fused", **{a: f"alpha {a:g}" for a in alphas}}
    for out in results:
        rest = [c for c in results if c != out]
        mean = {a: sum(results[c][s] for c in rest) / len(rest) for a, s in side.items()}
        best = max(mean, key=lambda a: (round(mean[a], 9), a == shipped, -abs(a - shipped)))
        print(f"  {out}: alpha {best:g} (mean on the others {mean[best]:.3f}; shipped "
              f"{mean[shipped]:.3f}) -> {results[out][side[best]]:.3f} on {out} (shipped "
              f"{results[out]['fused']:.3f})")


if __name__ == "__main__":
    main()
