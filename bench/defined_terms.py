"""Issue 17, point 3: the passage that defines what a lookup names, pinned (search.PIN_DEFINED,
indexer/term_lines.py). Prints figures, asserts nothing.

    python bench/defined_terms.py [--corpora zsh,apache,cmake,...]

The shipped search (Index.search with the product's passage judge over the bench index,
python bench/bench_retrieval.py --corpora C --build-only) run with the pin off and on, side
by side, question by question: recall@5 by the key-phrase rule on the natural questions and
the exact lookups, every question that moves named, and the search's time with each (p50,
one warm process; the pin reads the first 50 passages' term lines).

    python bench/defined_terms.py --quotes [--corpora ...]

the answer side (extract.LOOKUP_DEFINITIONS_FIRST): for each exact lookup whose five passages
(the shipped search's) hold its key phrase, whether the first quote the answer path picks
(choose_quotes with the relevance model) holds it, and whether any quote does, with the
lookup's definition first and without, side by side (--rule mentions: with the sentences
that write the lookup's exact names first where no definition is found, and without,
extract.LOOKUP_MENTIONS_FIRST).

    python bench/defined_terms.py --roles [--which natural] [--corpora ...]

the roles (extract.LOOKUP_MENTIONS_ANSWER): every exact lookup answered by the quote path
as the answer path forms its units (choose_quotes with the relevance model and each
passage's text before it, answer_roles, answer_neighbours, excerpts), with the rule off and
on side by side: the lookups with the key phrase in a unit shown as the answer (✔), and the
share of ✔ units that hold it (the key phrase stands for the annotators' "answers", as in
every search figure; a unit may answer without it, so both are lower bounds), at each limit
of the words a lookup may have besides its exact names (extract.LOOKUP_MENTION_OTHER_WORDS).

    python bench/defined_terms.py --choose-lookup-words [--corpora ...]

chooses term_lines.LOOKUP_WORDS: at each count, how many of the corpora's exact lookups
have more content words and how many natural questions as few (no index needed); the
default corpora are the training ones (zsh, apache and cmake left out).
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

CORPORA = "kernel,git,postgres,debref,flask,ccode,ccode2,ccode3,ccode4,ccode5,ccode6,pycode4,zsh,apache,cmake"
TRAINING = ("kernel,git,postgres,debref,flask,rust,vim,ccode,ccode2,ccode4,ccode5,ccode6,pycode,pycode2,"
            "pycode3,pycode4")


def choose_lookup_words(names: list[str]) -> None:
    from indexer.term_lines import is_lookup

    qs: dict[str, list[str]] = {"natural": [], "exact": []}
    for n in names:
        try:
            got = {w: [q.question for q in questions(corpus(n), w)] for w in qs}
        except SystemExit as e:     # its documentation package is not installed here
            print(f"{n} left out: {e}")
            continue
        for w in qs:
            qs[w] += got[w]
    print(f"{len(qs['exact'])} exact lookups and {len(qs['natural'])} natural questions")
    for most in range(2, 8):
        long_lookups = sum(not is_lookup(q, most=most) for q in qs["exact"])
        short_questions = sum(is_lookup(q, most=most) for q in qs["natural"])
        print(f"  at most {most} content words: {long_lookups} lookups read as questions, "
              f"{short_questions} questions as lookups: {long_lookups + short_questions} misread")


def main() -> None:
    from bench_relevance import index_dir
    from bench_retrieval import LocalIndex
    from sentence_rerank import PassageScorer

    from indexer import search, term_lines

    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--corpora", default="")
    ap.add_argument("--choose-lookup-words", action="store_true")
    ap.add_argument("--quotes", action="store_true", help="the answer side: the first quote of each lookup")
    ap.add_argument("--roles", action="store_true", help="the answer side: the roles of each lookup's units")
    ap.add_argument("--which", default="exact", choices=["exact", "natural"],
                    help="with --roles: the exact lookups, or the natural questions (the rule reads "
                    "the few that are lookups)")
    ap.add_argument("--rule", default="definitions", choices=["definitions", "mentions", "arguments"],
                    help="with --quotes, the rule switched: extract.LOOKUP_DEFINITIONS_FIRST, "
                    "extract.LOOKUP_MENTIONS_FIRST (the definitions rule on both ways), or "
                    "term_lines.ARGUMENTS_OPTIONAL (the others on); without --quotes, arguments "
                    "switches term_lines.ARGUMENTS_OPTIONAL with the pin on instead of the pin")
    ap.add_argument("--k", type=int, default=5)
    ap.add_argument("--model-dir", default=str(HERE.parent / "indexer" / "data" / "relevance"))
    args = ap.parse_args()
    if args.choose_lookup_words:
        choose_lookup_words((args.corpora or TRAINING).split(","))
        return
    args.corpora = args.corpora or CORPORA
    scorer = PassageScorer(args.model_dir)
    if args.roles:
        lookup_roles(args.corpora.split(","), scorer, args.k, args.which)
        return
    if args.quotes:
        lookup_quotes(args.corpora.split(","), scorer, args.k,
                      {"mentions": "LOOKUP_MENTIONS_FIRST", "arguments": "term_lines.ARGUMENTS_OPTIONAL"}.get(
                          args.rule, "LOOKUP_DEFINITIONS_FIRST"))
        return
    total = {w: [0, 0, 0] for w in ("natural", "exact")}   # questions, found off, found on
    pin_ms: list[float] = []
    for name in args.corpora.split(","):
        local = LocalIndex(index_dir(name), "onnx-int8")
        line = []
        for which in ("natural", "exact"):
            qs = questions(corpus(name), which)
            if not qs:
                continue
            found = {False: 0, True: 0}
            moved = []
            for q in qs:
                key = norm(q.key_phrase)
                hit = {}
                for pin in (False, True):
                    if args.rule == "arguments":
                        term_lines.ARGUMENTS_OPTIONAL = pin
                    else:
                        search.PIN_DEFINED = pin
                    got = local.idx.search(q.question, k=args.k, judge=scorer)
                    hit[pin] = any(local.rel(p.path) == q.file and key in norm(p.text) for p in got)
                    found[pin] += hit[pin]
                pin_ms.append(pin_cost(local, q.question))
                if hit[False] != hit[True]:
                    moved.append(f"{'+' if hit[True] else '-'}{q.id}")
            total[which][0] += len(qs)
            total[which][1] += found[False]
            total[which][2] += found[True]
            line.append(f"{which} {found[False]} -> {found[True]} of {len(qs)}"
                        + (f" ({' '.join(moved)})" if moved else ""))
        search.PIN_DEFINED = term_lines.ARGUMENTS_OPTIONAL = True
        local.idx.close()
        print(f"{name}: " + "; ".join(line), flush=True)
    for which, (n, off, on) in total.items():
        print(f"all {which}: recall@{args.k} {off}/{n} ({off / max(n, 1):.3f}) -> {on}/{n} ({on / max(n, 1):.3f})")
    print(f"the pin's own work (the first {search.DEPTH} fused passages fetched and read): p50 "
          f"{statistics.median(pin_ms or [0]):.1f} ms, p90 {statistics.quantiles(pin_ms, n=10)[-1]:.1f} ms a query")


def lookup_quotes(names: list[str], scorer, k: int,  # noqa: ANN001
                  rule: str = "LOOKUP_DEFINITIONS_FIRST") -> None:
    from bench_relevance import index_dir
    from bench_retrieval import LocalIndex

    from indexer import term_lines
    from localrag.answering.generate import extract

    total = [0, 0, 0, 0, 0]   # held, first off, first on, any off, any on
    module, constant = (term_lines, rule.split(".")[1]) if rule.startswith("term_lines.") else (extract, rule)
    for name in names:
        local = LocalIndex(index_dir(name), "onnx-int8")
        counts = [0, 0, 0, 0, 0]
        moved = []
        for q in questions(corpus(name), "exact"):
            got = local.idx.search(q.question, k=k, judge=scorer)
            texts = [p.text for p in got]
            key = norm(q.key_phrase)
            if not any(key in norm(t) for t in texts):
                continue
            counts[0] += 1
            first = {}
            for on in (False, True):
                setattr(module, constant, on)
                choice = extract.choose_quotes(q.question, texts, local.idx.embedder.encode,
                                               answers=scorer.model.probabilities,
                                               titles=[p.title for p in got])
                spans = [norm(x.span.text) for x in choice.quotes]
                first[on] = bool(spans) and key in spans[0]
                counts[1 + on] += first[on]
                counts[3 + on] += any(key in s for s in spans)
            if first[False] != first[True]:
                moved.append(f"{'+' if first[True] else '-'}{q.id}")
        setattr(module, constant, True)
        local.idx.close()
        total = [a + b for a, b in zip(total, counts)]
        print(f"{name}: of {counts[0]} lookups whose five passages hold the key phrase, the first quote "
              f"holds it {counts[1]} -> {counts[2]}, a quote {counts[3]} -> {counts[4]}"
              + (f" ({' '.join(moved)})" if moved else ""), flush=True)
    print(f"all: of {total[0]}, first quote {total[1]} -> {total[2]}, a quote {total[3]} -> {total[4]}")


def lookup_roles(names: list[str], scorer, k: int, which: str = "exact") -> None:  # noqa: ANN001
    from dataclasses import replace

    from bench_relevance import index_dir
    from bench_retrieval import LocalIndex

    from indexer import term_lines
    from localrag.answering.generate import extract
    from localrag.assistant import BEFORE_CHARS

    limits = (0, 1, 2, 99)
    shipped = extract.LOOKUP_MENTION_OTHER_WORDS
    extract.LOOKUP_MENTION_OTHER_WORDS = max(limits)   # each limit applied below
    rows = []   # per lookup: corpus, id, other words, (answered, ✔ units, holding) off, on
    for name in names:
        local = LocalIndex(index_dir(name), "onnx-int8")
        for q in questions(corpus(name), which):
            got = []
            for p in local.idx.search(q.question, k=k, judge=scorer):
                text, start, _ = local.idx.surrounding(p, chars=BEFORE_CHARS)
                got.append(replace(p, before=text[:start]))
            texts = [p.text for p in got]
            leads = [p.before for p in got]
            key = norm(q.key_phrase)
            choice = extract.choose_quotes(q.question, texts, local.idx.embedder.encode,
                                           answers=scorer.model.probabilities,
                                           titles=[p.title for p in got], leads=leads)
            eligible = extract.lookup_mentions(q.question, texts, choice.quotes, leads=leads)
            row = [name, q.id, term_lines.other_words(q.question, term_lines.exact_names(q.question))
                   if eligible is not None else None]
            for on in (False, True):
                roles = extract.answer_roles(choice.quotes, eligible=eligible if on else None)
                found, roles = extract.answer_neighbours(q.question, texts, choice.quotes, roles)
                role = {id(x): r for x, r in zip(found, roles)}
                ticked = [" ".join(x.span.text for x in unit) for unit in extract.excerpts(found, texts)
                          if any(role[id(x)] for x in unit)]
                hold = sum(key in norm(t) for t in ticked)
                row.append((hold > 0, len(ticked), hold))
            rows.append(row)
        local.idx.close()
        print(f"{name}: {sum(r[0] == name for r in rows)} {which} questions read", flush=True)
    extract.LOOKUP_MENTION_OTHER_WORDS = shipped

    def figures(some: list, limit: int) -> str:
        use = [r[4] if r[2] is not None and r[2] <= limit else r[3] for r in some]
        moved = [("+" if u[0] else "-") + r[1] for r, u in zip(some, use) if u[0] != r[3][0]]
        ticks, hold = sum(u[1] for u in use), sum(u[2] for u in use)
        return (f"answered {sum(u[0] for u in use)}, ✔ units holding the key phrase {hold}/{ticks} "
                f"({hold / max(ticks, 1):.3f})" + (f" ({' '.join(moved)})" if moved else ""))

    groups = {n: [r for r in rows if r[0] == n] for n in names}
    groups["all"] = rows
    for n, some in groups.items():
        print(f"\n{n}: {len(some)} {which} questions; off: {figures(some, -1)}")
        for limit in limits:
            applies = sum(1 for r in some if r[2] is not None and r[2] <= limit)
            print(f"  other words <= {limit} (applies to {applies}): {figures(some, limit)}")


def pin_cost(local, query: str) -> float:  # noqa: ANN001
    """Milliseconds of what the pin adds to a search: fetching the fused top DEPTH (the
    search fetches its top 20 anyway) and reading their term lines."""
    from indexer import search
    from indexer.term_lines import defining_passages

    v = local.idx.embedder.encode([query])[0]
    dense, lexical = search.scored_rankings(local.vectors, v, query, search.DEPTH)
    fused = search.fuse(dense, lexical, alpha=search.ALPHA)
    ids = [cid for cid, _ in fused[:search.DEPTH]]
    t0 = time.perf_counter()
    rows = local.idx.store.fetch_chunks(ids)
    defining_passages(query, {cid: rows[cid][3] for cid in ids if cid in rows})
    return 1000 * (time.perf_counter() - t0)


if __name__ == "__main__":
    main()
