"""Which natural questions a rule can change: per corpus, the ids whose five passages' quote
candidates (each with the name shown above it) differ with the rule's switches on and off.
Prints ids for scripts/record_answers_for_judging.py --questions; asserts nothing.

    python bench/changed_questions.py --corpora ccode,ccode2 [--switches source_code.READ_C_DECLARATIONS_WHOLE,...]

The passages are the shipped search's (Index.search with the product's passage judge, which
reads the candidates too) on the bench index, with each setting of the switches. A question
listed is one whose answer may change; one not listed is answered alike both ways (the same
passages, the same candidates and names), so a side-by-side round needs only the listed ones.
The default switches are stop 55's C rules.
"""

from __future__ import annotations

import argparse
import os
import sys
from pathlib import Path

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE.parent))
sys.path.insert(0, str(HERE))
os.environ.setdefault("HF_HUB_OFFLINE", "1")

STOP55_C = "source_code.READ_C_DECLARATIONS_WHOLE,extract.READ_NUMBER_SIGN,noise.READ_ENUMERATORS"


def main() -> None:
    from bench_relevance import index_dir
    from bench_retrieval import LocalIndex
    from retrieval_data import corpus, questions
    from sentence_rerank import PassageScorer

    from localrag.answering.generate import extract, source_code
    from localrag.answering.judge import noise

    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--corpora", default="ccode,ccode2,ccode3,ccode4,ccode5,ccode6")
    ap.add_argument("--switches", default=STOP55_C, help="module.CONSTANT, comma-separated")
    ap.add_argument("--model-dir", default=str(HERE.parent / "indexer" / "data" / "relevance"))
    args = ap.parse_args()
    modules = {"extract": extract, "source_code": source_code, "noise": noise}
    switches = [s.split(".") for s in args.switches.split(",")]

    def setting(on: bool) -> None:
        for module, constant in switches:
            setattr(modules[module], constant, on)
        source_code.block_comments.cache_clear()

    judges = {on: PassageScorer(args.model_dir) for on in (False, True)}   # each keeps its readings
    for name in args.corpora.split(","):
        local = LocalIndex(index_dir(name), "onnx-int8")
        changed = []
        for q in questions(corpus(name), "natural"):
            seen = []
            for on in (False, True):
                setting(on)
                found = local.idx.search(q.question, k=5, judge=judges[on])
                seen.append([(c.span.text, getattr(extract.subject_of(found[c.passage].text, c.span), "text", None))
                             for c in extract.candidates_of(q.question, [p.text for p in found])])
            if seen[0] != seen[1]:
                changed.append(q.id)
        local.idx.close()
        print(f"{name}: {len(changed)} questions {','.join(changed)}")
    setting(True)


if __name__ == "__main__":
    main()
