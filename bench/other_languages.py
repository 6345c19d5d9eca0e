"""Search on documents in another language: the Debian Reference in English, Japanese and
German, the same 40 questions written in each language by annotator sessions
(bench/data/retrieval/debref-{ja,de}.jsonl, RUBRIC-questions.md "Other languages"). Prints
figures, asserts nothing; nothing here was tuned on these sets.

    python bench/bench_retrieval.py --corpora debref-ja,debref-de --build-only   # once
    python bench/other_languages.py

recall@5 by the key-phrase rule (bench_retrieval's: the key phrase in a top-5 passage of
the answering file) for each side alone, the fused first stage and the shipped search
(Index.search with the product's passage judge: the relevance model over the fused top 20).
The embedding model (all-MiniLM-L6-v2) and the relevance model read English: a query in
another language (another script, or py3langid's confident guess for one with accented
Latin letters) is fused at search.OTHER_LANGUAGE_ALPHA and not judged
(indexer.language.reads_query). `--alphas` fuses every question at each weight given, with
and without the judge, for choosing that weight (on debref-ja; zh-cn, de and fr left out).
"""

from __future__ import annotations

import argparse
import os
import statistics
import sys
import time
from pathlib import Path

os.environ.setdefault("HF_HUB_OFFLINE", "1")
HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE.parent))
sys.path.insert(0, str(HERE))

from retrieval_data import corpus, norm, questions  # noqa: E402

SIDES = ("dense", "lexical", "fused", "search")


def main() -> None:
    from bench_relevance import index_dir
    from bench_retrieval import LocalIndex
    from sentence_rerank import PassageScorer

    from indexer import search
    from indexer.language import reads_query

    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--corpora", default="debref,debref-ja,debref-zh-cn,debref-de,debref-fr")
    ap.add_argument("--k", type=int, default=5)
    ap.add_argument("--which", default="natural", help="the question set: natural or exact")
    ap.add_argument("--model-dir", default=str(HERE.parent / "indexer" / "data" / "relevance"))
    ap.add_argument("--show-misses", action="store_true", help="print each question the search misses")
    ap.add_argument("--quotes", action="store_true",
                    help="also: how often the quotes the answer path picks from the search's five passages "
                         "hold the key phrase (by the quote scorer alone where the relevance model does not "
                         "read the question, as the answer path does)")
    ap.add_argument("--quotes-with-model", action="store_true",
                    help="with --quotes: the relevance model's combination picks the quotes of every question")
    ap.add_argument("--lexical-weights", default="",
                    help="with --quotes: the quotes of a question read as another language at these "
                         "lexical weights (extract.UNREAD_LEXICAL_WEIGHT as shipped), e.g. 0,0.25,0.5,0.75,1")
    ap.add_argument("--alphas", default="", help="also fuse at these cosine weights (0.5,0.3,...): "
                    "fused and search recall at each, for every question of the corpus")
    ap.add_argument("--no-back-references", action="store_true", help="the search's judge reads a "
                    "sentence opening with a back-reference alone, as before stop 55 "
                    "(extract.READ_BACK_REFERENCES off)")
    args = ap.parse_args()
    if args.no_back_references:
        from localrag.answering.generate import extract

        extract.READ_BACK_REFERENCES = False
    scorer = PassageScorer(args.model_dir)
    print(f"recall@{args.k} by the key-phrase rule; in brackets the median rank of the answering "
          f"passage among the first 50 of that side, where found")
    for name in args.corpora.split(","):
        local = LocalIndex(index_dir(name), "onnx-int8")
        qs = questions(corpus(name), args.which)
        found = {s: 0 for s in SIDES}
        ranks: dict[str, list[int]] = {s: [] for s in SIDES}
        times = []
        # per lexical weight: questions whose passages hold the phrase; quoted at all; first
        quote_weights = [float(w) for w in args.lexical_weights.split(",")] if args.lexical_weights else [None]
        quoted_at = {w: [0, 0, 0] for w in quote_weights}
        alphas = [float(a) for a in args.alphas.split(",") if a]
        at = {a: [0, 0, 0.0] for a in alphas}   # alpha -> [fused found, search found, fused MRR sum]
        for q in qs:
            v = local.idx.embedder.encode([q.question])[0]
            dense, lexical = search.scored_rankings(local.vectors, v, q.question, 50)
            pins = search.lexical_winners(lexical)
            alpha = search.ALPHA if reads_query(local.idx.embedder.languages, q.question) \
                else search.OTHER_LANGUAGE_ALPHA
            fused = search.fuse(dense, lexical, pinned=pins, alpha=alpha)
            t0 = time.perf_counter()
            order = [p.chunk_id for p in local.idx.search(q.question, k=20, judge=scorer)]
            times.append(time.perf_counter() - t0)
            if args.quotes:
                for w in quote_weights:
                    quote_hits(local, q, order[:args.k], scorer, quoted_at[w], with_model=args.quotes_with_model,
                               lexical_weight=w)
            lists = {"dense": [c for c, _ in dense], "lexical": [c for c, _ in lexical],
                     "fused": [c for c, _ in fused], "search": order}
            key = norm(q.key_phrase)
            for a in alphas:
                fa = search.fuse(dense, lexical, pinned=pins, alpha=a)
                ha = local.idx.store.fetch_chunks([cid for cid, _ in fa[:search.JUDGE_DEPTH]])
                oa, _ = search.rerank_judged(scorer, q.question, fa, ha, keep_first=pins)
                got = local.idx.store.fetch_chunks([c for c, _ in fa[:50]] + oa[:args.k])
                for j, ids in enumerate(([c for c, _ in fa], oa)):
                    at[a][j] += any(local.rel(got[c][1]) == q.file and key in norm(got[c][3])
                                    for c in ids[:args.k] if c in got)
                at[a][2] += next((1 / r for r, (c, _) in enumerate(fa[:50], 1) if c in got and
                                  local.rel(got[c][1]) == q.file and key in norm(got[c][3])), 0.0)
            rows = local.idx.store.fetch_chunks(list({c for ids in lists.values() for c in ids[:50]}))
            for side, ids in lists.items():
                for rank, cid in enumerate(ids[:50], 1):
                    r = rows.get(cid)
                    if r is not None and local.rel(r[1]) == q.file and key in norm(r[3]):
                        ranks[side].append(rank)
                        found[side] += rank <= args.k
                        if side == "search" and args.show_misses and rank > args.k:
                            print(f"  miss {q.id} (rank {rank}): {q.question}")
                        break
                else:
                    if side == "search" and args.show_misses:
                        print(f"  miss {q.id} (below 50): {q.question}")
        n = len(qs) or 1
        other = sum(not reads_query(local.idx.embedder.languages, q.question) for q in qs)
        print(f"{name} ({len(qs)} questions): " + "; ".join(
            f"{s} {found[s] / n:.3f} [{statistics.median(ranks[s]) if ranks[s] else '-'}]" for s in SIDES)
            + f"; search p50 {statistics.median(times) if times else 0:.2f} s; "
            f"{other} read as a language the embedding model does not read")
        if args.quotes:
            for w, quoted in quoted_at.items():
                at_w = "" if w is None else f" (lexical weight {w:g})"
                print(f"  quotes{at_w}: of the {quoted[0]} questions whose five passages hold the key "
                      f"phrase, a quote holds it for {quoted[1]}, the first quote for {quoted[2]}")
        if alphas:
            print("  at cosine weight: " + "; ".join(
                f"{a:g}: fused {at[a][0] / n:.3f} (MRR {at[a][2] / n:.3f}), judged {at[a][1] / n:.3f}"
                for a in alphas))
        local.idx.close()


def quote_hits(local, q, ids: list[int], scorer, quoted: list[int], *,  # noqa: ANN001
               with_model: bool = False, lexical_weight: float | None = None) -> None:
    """Counts into `quoted` whether the five passages hold the key phrase, whether a quote
    holds it and whether the first does: quotes as the answer path picks them (the
    relevance model only for a question it reads, else the scorer mixed with the question's
    terms at `lexical_weight`, extract.UNREAD_LEXICAL_WEIGHT unless given; `with_model`: the
    relevance model for every question)."""
    from indexer.language import reads_query
    from indexer.relevance_model import LANGUAGES, RelevanceModel
    from localrag.answering.generate.extract import UNREAD_LEXICAL_WEIGHT, choose_quotes

    lexical_weight = UNREAD_LEXICAL_WEIGHT if lexical_weight is None else lexical_weight

    rows = local.idx.store.fetch_chunks(ids)
    texts = [rows[c][3] for c in ids if c in rows]
    key = norm(q.key_phrase)
    if not any(key in norm(t) for t in texts):
        return
    quoted[0] += 1
    read = reads_query(LANGUAGES, q.question)
    answers = scorer.model.probabilities if read or with_model else None
    choice = choose_quotes(q.question, texts, local.idx.embedder.encode, answers=answers,
                           titles=[rows[c][2] for c in ids if c in rows],
                           lexical_weight=0.0 if read else lexical_weight)
    spans = [norm(x.span.text) for x in choice.quotes]
    quoted[1] += any(key in s for s in spans)
    quoted[2] += bool(spans) and key in spans[0]


if __name__ == "__main__":
    main()
