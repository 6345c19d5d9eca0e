"""Answers of the corpora left out, for annotators to judge (issue 17's answer targets).

For each natural question of a corpus (bench/data/retrieval/<corpus>.jsonl; with --which exact
each exact lookup, exact-<corpus>.jsonl, into answers-<corpus>-exact-<tag>.jsonl) it asks
localrag as a person would (the default instruct model, mode always, each question in a
fresh chat) over the bench's index of that corpus, and writes every unit shown with its
mark, role, citation and the cited passage:

    python scripts/record_answers_for_judging.py --corpora postgres,debref [--rerank on] [--tag T]
    # -> bench/data/answers/answers-<corpus>[-rerank][-T].jsonl

Annotators then judge each unit (bench/data/answers/RUBRIC-answers.md) and
bench/bench_answer_judged.py prints the figures.
"""

from __future__ import annotations

import argparse
import json
import os
import sys
import time
from pathlib import Path

REPO = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(REPO))
sys.path.insert(0, str(REPO / "bench"))
os.environ.setdefault("HF_HUB_OFFLINE", "1")

from retrieval_data import corpus, questions  # noqa: E402

OUT_DIR = REPO / "bench" / "data" / "answers"
SWITCHES = {
    "--no-list-items": (("extract.QUOTE_LIST_ITEMS",), "list items without a sentence end never "
                        "quoted (extract.QUOTE_LIST_ITEMS off: the candidates before they were)"),
    "--no-c-comments": (("source_code.READ_C_COMMENTS",), "C-family comments read as plain text, "
                        "as before stop 48 (source_code.READ_C_COMMENTS off)"),
    "--no-lead-ins": (("extract.READ_LEAD_INS",), "list items read and shown without the sentence "
                      "that introduces their list (extract.READ_LEAD_INS off), as before stop 49"),
    "--no-gtk-doc": (("source_code.READ_GTKDOC",), "gtk-doc fields (\"@name: description\") read "
                     "as before stop 49 (source_code.READ_GTKDOC off)"),
    "--no-whole-comments": (("source_code.QUOTE_WHOLE_COMMENTS",), "comments of code said without a "
                            "full stop never quoted, as before stop 50 (source_code.QUOTE_WHOLE_COMMENTS off)"),
    "--no-c-mends": (("source_code.READ_C_COMMENTS_WHOLE", "source_code.SHOW_VALUES"), "C comments read "
                     "and named as at stop 50 (source_code.READ_C_COMMENTS_WHOLE and SHOW_VALUES off)"),
    "--no-trailing-comments": (("source_code.READ_TRAILING_COMMENTS",), "a C comment after the code on "
                               "its line never read, as in stop 51's first rounds "
                               "(source_code.READ_TRAILING_COMMENTS off)"),
    "--no-lower-entries": (("source_code.READ_ENTRIES_IN_LOWER_CASE",), "a docstring entry's description "
                           "opening in lower case with a function word (\":param length: the number of "
                           "items ...\") dropped as before stop 52 (source_code.READ_ENTRIES_IN_LOWER_CASE off)"),
    "--no-messages": (("source_code.READ_MESSAGES",), "messages of code (an error's, a warning's, a log "
                      "line's or a help text's words in a statement) never read, as before stop 52 "
                      "(source_code.READ_MESSAGES off)"),
    "--no-c-parts": (("source_code.READ_C_COMMENT_PARTS",), "the parts of C doc comments read since "
                     "stop 53 (a comment after a macro's value or an enum's last member, a Doxygen "
                     "@param/@return/\\retval description, an item of a list inside a comment) read "
                     "as at stop 52 (source_code.READ_C_COMMENT_PARTS off)"),
    "--no-c-declarations": (("source_code.READ_C_DECLARATIONS_WHOLE",), "a C declaration written over "
                            "several lines read as code on its last line only, as before stop 55 "
                            "(source_code.READ_C_DECLARATIONS_WHOLE off)"),
    "--no-number-sign": (("extract.READ_NUMBER_SIGN",), "a \"#\" before a word in a C comment (\"# free "
                         "blocks\") read as a shell prompt, as before stop 55 (extract.READ_NUMBER_SIGN off)"),
    "--no-back-references": (("extract.READ_BACK_REFERENCES",), "a sentence opening with a "
                             "back-reference (\"This adds ...\") read by the relevance model alone, as "
                             "before stop 55 (extract.READ_BACK_REFERENCES off)"),
    "--no-enumerators": (("noise.READ_ENUMERATORS",), "the \")\" of an enumerator opening a sentence "
                         "(\"0) If no expansions took place (or, ...)\") counted as a bracket never "
                         "opened, as before stop 55 (noise.READ_ENUMERATORS off)"),
    "--no-terms-above": (("extract.READ_TERMS_ABOVE_PASSAGE",), "a sentence whose description opened "
                         "above its passage left without the term line the file has before the "
                         "passage, as before stop 56 (extract.READ_TERMS_ABOVE_PASSAGE off)"),
    "--no-lookup-mention-roles": (("extract.LOOKUP_MENTIONS_ANSWER",), "a lookup's quotes shown as the "
                                  "answer whether or not they write its exact names, as before stop 63 "
                                  "(extract.LOOKUP_MENTIONS_ANSWER off)"),
    "--no-neighbours": (("extract.SHOW_NEIGHBOURS",), "a quote shown as the answer without the "
                        "sentences right before and after it in its paragraph, as before stop 56 "
                        "(extract.SHOW_NEIGHBOURS off)"),
    "--no-introduced-lines": (("extract.READ_INTRODUCED_LINES",), "a line that the line above it "
                              "introduces (an example after \"...:\", a table's value after "
                              "\"Module:\") naming the paragraph under it, as before stop 57 "
                              "(extract.READ_INTRODUCED_LINES off)"),
    "--no-rest-after-code": (("extract.REST_AFTER_CODE",), "a sentence opening in lower case after a "
                             "code example that cut it in two (\"completes only logged-on users ...\") "
                             "quotable, as before stop 59 (extract.REST_AFTER_CODE off)"),
    "--no-spaced-code": (("extract.READ_SPACED_CODE",), "a code block ending at its first blank line "
                         "even where code lines follow it, as before stop 59 (extract.READ_SPACED_CODE off)"),
    "--no-pointing-back": (("extract.READ_POINTING_BACK",), "a sentence that points back to its "
                           "term (\"If this is set ...\") left without its term line where it says the "
                           "term's words, as before stop 60 (extract.READ_POINTING_BACK off)"),
    "--no-excerpt-neighbours": (("extract.NEIGHBOURS_OF_EXCERPT",), "a ✔ quote whose neighbour is "
                                "quoted already gets no neighbour on that side, as before stop 60 "
                                "(extract.NEIGHBOURS_OF_EXCERPT off)"),
    "--no-quoted-stops": (("lexical.READ_QUOTED_STOPS",), "a stop inside quotes (\"preceded by ‘!’ in "
                          "which case\") ending its sentence, as before stop 60 (lexical.READ_QUOTED_STOPS off)"),
    "--no-trailing-lead-ins": (("extract.TRAILING_LEAD_INS",), "a sentence ending in \":\" (\"These cache "
                               "entries are:\") taken after a quote as its reading context or neighbour, "
                               "as before stop 60 (extract.TRAILING_LEAD_INS off)"),
    "--no-flag-names": (("extract.READ_FLAG_NAMES",), "a term line naming an option by its flag "
                        "(\"-N file:\") taken as named by a sentence that says its argument's word, as "
                        "before stop 61 (extract.READ_FLAG_NAMES off)"),
    "--no-lookup-definitions": (("extract.LOOKUP_DEFINITIONS_FIRST",), "a lookup's answer in the "
                                "combination's order, the definition it looks up not first, as before "
                                "stop 61 (extract.LOOKUP_DEFINITIONS_FIRST off)"),
    "--no-lookup-mentions": (("extract.LOOKUP_MENTIONS_FIRST",), "a lookup's first quote taken from "
                             "any passage, not first from one that writes the exact names it looks up, "
                             "as before stop 62 (extract.LOOKUP_MENTIONS_FIRST off)"),
    "--no-term-blocks": (("extract.READ_TERM_BLOCKS",), "an indented definition list under a lead-in "
                         "(\"%f:\" over \"a day of the month\") read as the lead-in's code block, as "
                         "before stop 60 (extract.READ_TERM_BLOCKS off)"),
    "--no-brackets": (("lexical.READ_BRACKETS",), "a stop inside brackets (\"set(... CACHE ...) call\") "
                      "ending a sentence, as before stop 59 (lexical.READ_BRACKETS off)"),
}
"""The rules a round can be recorded without: each flag, the constants it turns off, its help."""


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--corpora", default="postgres,debref")
    ap.add_argument("--rerank", default="off", choices=["on", "off"], help="the learned ranker (off: the default)")
    ap.add_argument("--which", default="natural", choices=["natural", "exact"],
                    help="the question class: natural questions (answers-<corpus>-<tag>.jsonl) or "
                    "the exact lookups (answers-<corpus>-exact-<tag>.jsonl)")
    ap.add_argument("--limit", type=int, default=0)
    ap.add_argument("--skip", type=int, default=0,
                    help="pass over the first N questions (zsh's 48 later ones: --skip 24)")
    ap.add_argument("--questions", default="", help="only these question ids (comma): the ones a "
                    "rule changes the candidates of, for a side-by-side")
    ap.add_argument("--threads", type=int, default=1)
    ap.add_argument("--force", action="store_true", help="record over an existing file")
    for flag, (_, helptext) in SWITCHES.items():
        ap.add_argument(flag, action="store_true", help=f"{helptext}, for a side-by-side")
    ap.add_argument("--tag", default="", help="a round's name: answers-<corpus>-<tag>.jsonl "
                    "(an earlier round's file and its judgements stay as they are)")
    ap.add_argument("--index-tag", default="", help="the bench index to answer from, "
                    "bench/out/retrieval/<corpus>/<tag> (default: the one the other benches use; "
                    "`before`: the index bench/pdf_layout.py or bench/doc_site.py built the way "
                    "localrag read the files before)")
    args = ap.parse_args()
    from bench_relevance import index_dir
    from retrieval_data import OUT

    from localrag.answering.label.render import LABEL_SYMBOL, segment_symbol
    from localrag.answering.label.units import inline_code
    from localrag.assistant import Assistant

    from localrag.answering.generate import extract, source_code

    # the rules before, for a side-by-side (set before any passage is read)
    from localrag.answering.judge import lexical, noise

    modules = {"extract": extract, "source_code": source_code, "noise": noise, "lexical": lexical}
    for flag, (names, _) in SWITCHES.items():
        for name in names:
            module, constant = name.split(".")
            setattr(modules[module], constant, not getattr(args, flag[2:].replace("-", "_")))
    OUT_DIR.mkdir(parents=True, exist_ok=True)
    for name in args.corpora.split(","):
        qs = questions(corpus(name), args.which)[args.skip:]
        if args.limit:
            qs = qs[:args.limit]
        if args.questions:
            qs = [q for q in qs if q.id in set(args.questions.split(","))]
        data_dir = OUT / name / args.index_tag if args.index_tag else index_dir(name)
        if not (data_dir / "build.json").exists():
            raise SystemExit(f"no index in {data_dir}")
        suffix = ("" if args.rerank == "off" else "-rerank") + (f"-{args.tag}" if args.tag else "")
        out = OUT_DIR / f"answers-{name}{'-exact' if args.which == 'exact' else ''}{suffix}.jsonl"
        if out.exists() and not args.force:
            raise SystemExit(f"{out} exists (an earlier round, perhaps judged): choose another "
                             f"--tag, or --force to record it again")
        overrides = {"retrieval_mode": "always", "rerank": args.rerank == "on",
                     "n_threads": args.threads}
        times = []
        with Assistant.open(data_dir, overrides=overrides) as a, open(out, "w", encoding="utf-8") as fh:
            docs = str(data_dir / "docs") + os.sep
            for q in qs:
                a.new_chat()
                t0 = time.perf_counter()
                ans = a.ask(q.question, save=False)
                times.append(time.perf_counter() - t0)
                units = []
                for i, seg in enumerate(ans.segments):
                    p = seg.passage
                    units.append(dict(
                        # a quote with its subject (the term line it describes) reads as shown:
                        # the line as inline code, then the sentence, one unit
                        # (a list item after the sentence that introduces its list)
                        unit=i + 1, text=((f"{inline_code(seg.subject)} " if seg.subject else "")
                                          + (f"{seg.lead} " if seg.lead else "") + seg.text),
                        kind=seg.kind, origin=seg.origin, role=seg.role,
                        mark=segment_symbol(seg), label=seg.label,
                        shown_as_answer=seg.role == "answer" and LABEL_SYMBOL[seg.label] == "✔",
                        file=p.path[len(docs):] if p is not None and p.path.startswith(docs) else None,
                        line=seg.line, passage_title=p.title if p else None,
                        # a quote's: the probability that it answers (extract.answer_probability),
                        # shared by its group (code block, reading context); a
                        # role rule can then be tried on judged units (bench/role_rule.py)
                        score=(round(float(seg.scores.total), 4) if seg.origin == "quote"
                               and seg.scores is not None else None),
                        passage_text=p.text if p else None))
                fh.write(json.dumps(dict(qid=q.id, question=q.question, answer_file=q.file,
                                         key_phrase=q.key_phrase, seconds=round(times[-1], 2),
                                         units=units), ensure_ascii=False) + "\n")
                fh.flush()
        times.sort()
        print(f"{name}: {len(qs)} answers -> {out}; median {times[len(times) // 2]:.1f} s")


if __name__ == "__main__":
    main()
