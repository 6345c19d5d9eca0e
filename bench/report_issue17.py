"""Issue 17's figures in one run, each corpus left out: prints figures, asserts nothing.

    python bench/report_issue17.py [--collect]

1. search recall (bench/bench_relevance.py; with --collect the candidate lists are
   collected again, otherwise the cached ones are reused when present);
2. passages judged by their best sentence on the corpora left out: AUC and verdicts right at
   the verdict floor chosen on kernel and git (bench/passage_verdict_floor.py); the relevance
   model on the units the judged answers quoted, seven corpora left out of its training
   (bench/unit_relevance.py), and in the shipped answer combination on the judged pools of
   postgres, debref and zsh (bench/relevance_pools.py);
3. the annotators' judgments of the recorded answers, natural questions and exact lookups
   (bench/bench_answer_judged.py), and of the answering model's own sentences labelled
   "fully" (bench/model_sentence_labels.py);
4. the answer-role rule on the judged units (bench/role_rule.py);
5. search on zsh, the corpus nobody tuned on (bench/bench_retrieval.py --corpora zsh);
6. search recall judged by annotators, fused, each side and the learned ranker, and score
   fusion's alpha chosen on it each corpus left out (bench/judged_recall.py);
7. the search as shipped (the relevance model's second stage over the fused top 20):
   judged recall@5 against the fused order, its weight beta chosen each corpus left out,
   and the exact lookups by key phrase, zsh's, rust's and vim's too
   (bench/judged_recall.py --sentence-rerank);
8. the quotes of whole judged sentence pools (every quotable sentence of the shipped
   search's five passages, judged by two annotators): the answer combination fitted on the
   training corpora's pools, its role rule chosen there, and on each corpus left out how
   often the first quote answers, AUC, and what each role rule would show
   (bench/answer_combination.py --choose-rule; the shipped constants' figures beside);
9. search on the Debian Reference in English, Japanese, Chinese, German and French
   (bench/other_languages.py: the cosine weight for a query in another language chosen on
   Japanese, Chinese, German and French left out), and on the Markdown notes answered by
   list items (mdnotes; mdnotes2, held out): search and how often the quotes hold the key
   phrase;
10. a documentation site indexed whole (flask, held out: Sphinx HTML with its generated
   files): search with and without the generated-file rule (bench/doc_site.py);
11. typeset PDFs (rpdf, held out: the R manuals): search with and without reading the
   layout (bench/pdf_layout.py);
12. the first passages' feedback (search.FEEDBACK_DEPTH / FEEDBACK_WEIGHT) chosen on the
   ten held-out corpora, each left out (bench/query_feedback.py); search recall@5 on the
   source-code corpora, each held out when it was written (pycode..pycode4, ccode..ccode6,
   natural and exact: bench/other_languages.py); messages of code quoted or not
   (bench/list_lead_ins.py --rule messages), the parts of C doc comments read since stop
   53 or not (--rule c-parts) and how the relevance model reads their tags
   (bench/tag_reading.py); and where the questions of the newest judged
   answer rounds go unanswered (bench/answer_gaps.py);
13. speed against the main the issue was filed on (006a393): answer p50 and fresh-process
   `localrag search` p50 (default, i.e. with the second stage; without it; with the learned
   ranker), side by side in turns, and the second stage's cost per query in one warm
   process (bench/bench_speed_vs_main.py; --no-speed skips it).
Needs the bench indexes (bench/bench_retrieval.py --build-only, see bench/README.md).
"""

from __future__ import annotations

import argparse
import subprocess
import sys
import time
from pathlib import Path

HERE = Path(__file__).resolve().parent


def run(title: str, argv: list[str]) -> None:
    print(f"\n{'=' * 8} {title}: {' '.join(argv)}", flush=True)
    t0 = time.perf_counter()
    done = subprocess.run([sys.executable, *argv], cwd=HERE.parent)
    print(f"{'=' * 8} ({time.perf_counter() - t0:.0f} s, exit {done.returncode})", flush=True)


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--collect", action="store_true", help="collect the search candidates again")
    ap.add_argument("--no-speed", action="store_true", help="skip the speed comparison with main 006a393")
    args = ap.parse_args()
    run("search, leave-one-corpus-out", ["bench/bench_relevance.py"] + ([] if args.collect else ["--reuse"]))
    run("passage verdicts, corpora left out", ["bench/passage_verdict_floor.py"])
    run("the relevance model on the units the judged answers quoted (stop 54; seven corpora left out)",
        ["bench/unit_relevance.py"])
    run("the relevance model in the shipped answer combination, judged pools left out (stop 54)",
        ["bench/relevance_pools.py", "--models", "indexer/data/relevance"])
    run("judged answers", ["bench/bench_answer_judged.py"])
    run("the answering model's own sentences labelled fully, judged (stop 62)", ["bench/model_sentence_labels.py"])
    run("answer-role rule on the judged units", ["bench/role_rule.py"])
    run("search on zsh (never tuned on)", ["bench/bench_retrieval.py", "--corpora", "zsh", "--reuse",
                                          "--no-speed", "--no-latency"])
    run("search recall judged by annotators", ["bench/judged_recall.py", "--corpora",
                                               "kernel,git,postgres,debref,zsh",
                                               "--alphas", "0.3,0.4,0.6,0.7", "--rerank"])
    run("search as shipped: the relevance model's second stage, judged", [
        "bench/judged_recall.py", "--sentence-rerank", "indexer/data/relevance", "--betas", "0.25,0.5,1,2"])
    run("exact lookups with the second stage (key phrase)", [
        "bench/judged_recall.py", "--sentence-rerank", "indexer/data/relevance", "--betas", "0.25,0.5,1,2",
        "--corpora", "kernel,git,postgres,debref,zsh,rust,vim", "--which", "exact"])
    run("quotes of the judged sentence pools (search as shipped), the answer combination", [
        "bench/answer_combination.py", "--model-dir", "indexer/data/relevance", "--corpora",
        "postgres-v3,debref-v3,zsh-v3", "--fit-on", "kernel,git,rust,vim", "--choose-rule"])
    run("search in other languages (the Debian Reference translated; Japanese chooses)", [
        "bench/other_languages.py", "--alphas", "0.5,0.3,0.2,0.1,0", "--quotes"])
    run("notes answered by list items: search and quotes (mdnotes; mdnotes2 held out)", [
        "bench/other_languages.py", "--corpora", "mdnotes,mdnotes2", "--quotes"])
    run("a documentation site indexed whole (flask, held out): its generated files skipped or not", [
        "bench/doc_site.py"])
    run("typeset PDFs (rpdf, held out): their layout read or not", ["bench/pdf_layout.py"])
    run("the first passages' feedback, chosen on the ten held-out corpora each left out", [
        "bench/query_feedback.py"])
    code = "pycode,pycode2,pycode3,pycode4,ccode,ccode2,ccode3,ccode4,ccode5,ccode6"
    for which in ("natural", "exact"):
        run(f"source code, held out corpus by corpus: search recall@5, {which}", [
            "bench/other_languages.py", "--corpora", code, "--which", which])
    run("messages of code quoted or not (stop 52; pycode4 held out)", [
        "bench/list_lead_ins.py", "--rule", "messages", "--corpora", "pycode,pycode2,pycode3,pycode4"])
    run("parts of C doc comments read or not (stop 53; ccode6 held out)", [
        "bench/list_lead_ins.py", "--rule", "c-parts", "--corpora", "ccode,ccode2,ccode3,ccode4,ccode5,ccode6"])
    run("how the relevance model reads a Doxygen tag (stop 53)", ["bench/tag_reading.py"])
    run("back-references read after the sentence they refer to, or alone (stop 55; chosen on the "
        "training pools, the pools left out reported)", ["bench/back_references.py"])
    if not args.no_speed:
        run("back-references: search and quotes, both ways side by side", [
            "bench/back_references.py", "--speed", "postgres,zsh"])
    run("a description cut by its passage named from the file's text before it, or not (stop 56; "
        "kernel and git training pools, postgres, debref, zsh left out)", ["bench/terms_above.py"])
    run("a ✔ quote with its paragraph's neighbours, or alone (stop 56; chosen on the training pools, "
        "the pools left out reported)", ["bench/neighbours.py"])
    if not args.no_speed:
        run("stop 56's rules: quote choice, roles and neighbours, both ways side by side", [
            "bench/neighbours.py", "--speed", "postgres,zsh"])
    run("two manuals left out at stop 57 (apache, cmake) and zsh: search recall@5, natural and exact", [
        "bench/other_languages.py", "--corpora", "zsh,apache,cmake", "--which", "natural"])
    run("the same, exact lookups", ["bench/other_languages.py", "--corpora", "zsh,apache,cmake", "--which", "exact"])
    run("the same, judged by annotators (stop 57)", ["bench/judged_recall.py", "--corpora", "zsh,apache,cmake",
                                                   "--sentence-rerank", "indexer/data/relevance", "--betas", "0.5"])
    run("the relevance model on zsh's quoted units (stop 57: the one corpus of units left out)",
        ["bench/unit_relevance.py", "--corpora", "zsh"])
    run("where the unanswered questions go (the newest judged rounds)", ["bench/answer_gaps.py"])
    if not args.no_speed:
        run("speed against main 006a393", ["bench/bench_speed_vs_main.py", "--main-ref", "006a393"])


if __name__ == "__main__":
    main()
