"""Issue 17: list items read with the sentence that introduces their list
(extract.list_lead_in, extract.READ_LEAD_INS). Prints figures, asserts nothing.

    python bench/list_lead_ins.py [--corpora mdnotes,flask,...] [--rule lead-ins|whole-comments|messages|c-parts]

`--rule whole-comments` compares the same way comments of code said whole without a full
stop quoted or not (source_code.QUOTE_WHOLE_COMMENTS, stop 50); the last figure then
counts quotes that are such comments. `--rule messages`: messages of code read or not
(source_code.READ_MESSAGES, stop 52); the last figure counts quotes that are messages.
`--rule c-parts`: the parts of C doc comments read since stop 53 or not
(source_code.READ_C_COMMENT_PARTS); the last figure counts quotes that are a Doxygen tag's
description or a comment after code.

For each natural question of each corpus: the shipped search's five passages on the bench
index (the rule on: the search's passage judge reads the units too), then the quotes as
the answer path chooses them (choose_quotes with the relevance model, answer_roles) twice
in one process, lead-ins read and not. Counted over the
questions whose five passages hold the key phrase: a quote holds it, the first quote
holds it, a quote shown as the answer (✔) holds it; and how many quotes are list items
read with a lead-in. The key phrase stands for the answering sentence, as in every search
figure; the judged answer rounds (scripts/record_answers_for_judging.py --no-lead-ins)
say whether the quotes answer.
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

CORPORA = "mdnotes,mdnotes2,mdnotes3,flask,postgres,debref,zsh,rpdf,pycode,pycode2,ccode"


def five_passages(local, question: str, scorer) -> tuple[list[str], list[str]]:  # noqa: ANN001
    """The texts and titles of the shipped search's five passages on a bench index."""
    ids = [p.chunk_id for p in local.idx.search(question, k=5, judge=scorer)]
    rows = local.idx.store.fetch_chunks(ids)
    return [rows[c][3] for c in ids if c in rows], [rows[c][2] for c in ids if c in rows]


def tally(c: list[int], quotes, key: str) -> bool:  # noqa: ANN001
    """Counts one question's quotes into `c` (questions, a quote holds the normalised key
    phrase, the first quote does, a ✔ quote does); whether a ✔ quote holds it."""
    from localrag.answering.generate import extract

    roles = extract.answer_roles(quotes)
    holds = [key in norm(x.span.text) for x in quotes]
    shown = any(h and r for h, r in zip(holds, roles))
    c[0] += 1
    c[1] += any(holds)
    c[2] += bool(holds) and holds[0]
    c[3] += shown
    return shown


def main() -> None:
    from bench_relevance import index_dir
    from bench_retrieval import LocalIndex
    from sentence_rerank import PassageScorer

    from localrag.answering.generate import extract

    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--corpora", default=CORPORA)
    ap.add_argument("--model-dir", default=str(HERE.parent / "indexer" / "data" / "relevance"))
    ap.add_argument("--rule", choices=("lead-ins", "whole-comments", "messages", "c-parts"), default="lead-ins")
    args = ap.parse_args()
    from localrag.answering.generate import source_code

    def switch(on: bool) -> None:
        if args.rule == "lead-ins":
            extract.READ_LEAD_INS = on
        elif args.rule == "messages":
            source_code.READ_MESSAGES = on
        elif args.rule == "c-parts":
            source_code.READ_C_COMMENT_PARTS = on
            source_code.block_comments.cache_clear()      # (both read the switch)
            source_code.trailing_comments.cache_clear()
        else:
            source_code.QUOTE_WHOLE_COMMENTS = on

    def counted(text: str, span) -> bool:  # noqa: ANN001
        if args.rule == "lead-ins":
            return extract.list_lead_in(text, span) is not None
        if args.rule == "messages":
            return source_code.message_at(text, span.start) is not None
        if args.rule == "c-parts":
            return (source_code.doxygen_field(text, span.start) is not None
                    or source_code.in_trailing_comment(text, span.start))
        return not extract._ENDS_STATEMENT.search(span.text) and source_code.said_whole(text, span.start, span.end)

    scorer = PassageScorer(args.model_dir)
    answers = scorer.model.probabilities
    variants = (("before", False), (args.rule, True))
    total = {v: [0, 0, 0, 0, 0] for v, _ in variants}
    took: dict[str, list[float]] = {v: [] for v, _ in variants}   # choose_quotes, alternating
    print("of the questions whose five passages hold the key phrase: a quote holds it / the first "
          "quote / a ✔ quote; quotes read with a lead-in")
    for name in args.corpora.split(","):
        local = LocalIndex(index_dir(name), "onnx-int8")
        counts = {v: [0, 0, 0, 0, 0] for v, _ in variants}
        changed = []
        for q in questions(corpus(name), "natural"):
            switch(True)         # the shipped search (its passage judge reads the units),
            texts, titles = five_passages(local, q.question, scorer)   # whichever ran last
            key = norm(q.key_phrase)
            if not any(key in norm(t) for t in texts):
                continue
            got = {}
            for v, on in (variants if len(took[variants[0][0]]) % 2 == 0 else variants[::-1]):
                switch(on)       # (which goes first alternates: the embedder may cache)
                t0 = time.perf_counter()
                choice = extract.choose_quotes(q.question, texts, local.idx.embedder.encode,
                                               answers=answers, titles=titles)
                took[v].append(time.perf_counter() - t0)
                quotes = choice.quotes
                got[v] = tally(counts[v], quotes, key)
                counts[v][4] += sum(counted(texts[x.passage], x.span) for x in quotes) if on else 0
            if got["before"] != got[args.rule]:
                changed.append(f"{q.id}{'+' if got[args.rule] else '-'}")
        switch(True)
        local.idx.close()
        print(f"{name}: " + "; ".join(f"{v} {c[1]}/{c[2]}/{c[3]} of {c[0]}" for v, c in counts.items())
              + f"; {counts[args.rule][4]} quotes with a {args.rule[:-1]}; ✔ changed: {' '.join(changed) or '-'}")
        for v in counts:
            total[v] = [a + b for a, b in zip(total[v], counts[v])]
    print("all: " + "; ".join(f"{v} {c[1]}/{c[2]}/{c[3]} of {c[0]}" for v, c in total.items()))
    print("quotes chosen (choose_quotes with the relevance model, the two variants alternating per "
          "question), median: " + "; ".join(f"{v} {1000 * statistics.median(t):.0f} ms" for v, t in took.items() if t))


if __name__ == "__main__":
    main()
