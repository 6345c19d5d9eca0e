"""Labelled (question, quoted unit) pairs from the judged answer rounds, for training and
measuring the relevance model on the kinds of text the answer path quotes (code comments,
docstrings, list items, manuals) beside the sampled sentences of the four training corpora.

    python scripts/make_unit_pairs.py      # -> bench/data/relevance/units-<corpus>.jsonl

Every recorded answer (bench/data/answers/answers-<corpus>-<round>.jsonl) with its
annotators' judgment (judged-answers-<corpus>-<round>.jsonl, RUBRIC-answers.md) gives, for
each quoted unit, a pair: the question and the unit as the relevance model reads it
(indexer.relevance_model.unit_text: the passage title, the unit's name, the sentence). The
name is what the answer shows in backticks before the sentence ("`mbedtls_md_list()
\\return` The last entry is 0."), its Doxygen tag read as words (extract.TAG_READING). The
label is the annotators' "answers": yes 2, partly 1, no 0 (the same scale as
RUBRIC-sentences.md, where 2 is "answers"). A unit judged in several rounds (labels are
carried by text between rounds) is one pair; the label of the round read last (rounds_of) wins. Only quotes:
the model's own sentences are not passage text.

These units are the ones an answer showed, i.e. the hard cases: the model already put them
in its top few, and the rows that do not answer are what a ✔ must not be given to.
"""

from __future__ import annotations

import json
import re
import sys
from pathlib import Path

REPO = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(REPO))
ANSWERS = REPO / "bench" / "data" / "answers"
OUT = REPO / "bench" / "data" / "relevance"
LABEL = {"yes": 2, "partly": 1, "no": 0}
_NAMED = re.compile(r"^`([^`\n]+)`\s+(.+)$", re.S)


def split_name(text: str) -> tuple[str, str]:
    """(name, sentence) of a unit's Markdown: the backticked name an answer puts first."""
    from localrag.answering.generate.extract import _TAG_WORDS

    m = _NAMED.match(text)
    if not m or not m.group(2)[:1].strip():
        return "", text
    name = m.group(1)
    for pattern, words in _TAG_WORDS:
        name = pattern.sub(words, name)
    return name, m.group(2)


def rounds_of(corpus: str) -> list[Path]:
    """The corpus's tagged rounds that have a judgment, in name order (git keeps no file
    times; a text's label is carried unchanged from round to round, so the order only
    matters where two rounds' annotators labelled the same text differently: the round
    read last wins)."""
    return sorted(p for p in ANSWERS.glob(f"answers-{corpus}-*.jsonl")
                  if (ANSWERS / p.name.replace("answers-", "judged-answers-", 1)).exists())


def unit_pairs(corpus: str) -> list[dict]:
    rows: dict[tuple[str, str], dict] = {}
    for path in rounds_of(corpus):
        judged = {}
        for line in (ANSWERS / path.name.replace("answers-", "judged-answers-", 1)).read_text(
                encoding="utf-8").splitlines():
            if line.strip():
                j = json.loads(line)
                judged[j["qid"]] = {u["unit"]: u for u in j["units"]}
        for line in path.read_text(encoding="utf-8").splitlines():
            if not line.strip():
                continue
            a = json.loads(line)
            labels = judged.get(a["qid"], {})
            for u in a["units"]:
                lab = labels.get(u["unit"], {}).get("answers")
                if u.get("origin") != "quote" or lab not in LABEL:
                    continue
                name, sentence = split_name(u["text"])
                key = (a["qid"], " ".join(u["text"].split()))
                rows[key] = {"qid": a["qid"], "question": a["question"],
                             "title": u.get("passage_title") or "", "subject": name,
                             "sentence": sentence, "label": LABEL[lab], "corpus": corpus,
                             "kind": u.get("kind", "sentence")}
    return list(rows.values())


def corpora() -> list[str]:
    names = {p.name.split("-")[1] for p in ANSWERS.glob("answers-*-*.jsonl")}
    return sorted(n for n in names if not n.endswith(".jsonl"))


def main() -> None:
    for corpus in corpora():
        rows = unit_pairs(corpus)
        if not rows:
            continue
        out = OUT / f"units-{corpus}.jsonl"
        out.write_text("".join(json.dumps(r, ensure_ascii=False) + "\n" for r in rows), encoding="utf-8")
        counts = [sum(r["label"] == k for r in rows) for k in (0, 1, 2)]
        print(f"{corpus}: {len(rows)} units, 0/1/2 = {counts[0]} / {counts[1]} / {counts[2]} -> {out.name}")


if __name__ == "__main__":
    main()
