"""The support label of the answering model's own sentences against the annotators' judgment:
prints figures, asserts nothing.

    python bench/model_sentence_labels.py

Every sentence the default instruct model (SmolLM2) wrote in a judged answer round
(bench/data/answers/: answers-<round>.jsonl with judged[,2,3]-answers-<round>.jsonl, the
majority of its annotators; each question and sentence once, the newest round's label
first) is labelled again by the embedding critic's rules (critics.SupportRules; the label
does not depend on the embeddings: noise, then the copied run and the key tokens), with
the whole-sentence rule (SupportRules.full_whole, critics.whole_statement) off and on.
For each: how many sentences get "fully" and how many of those the annotators judged
supported = full, on the 17 training corpora and on zsh, apache and cmake (left out of
every choice; the rule was chosen on the training corpora's figures). A code block the
model wrote (a unit opening with ```) is left out: the critic does not read it as a
sentence.
"""

from __future__ import annotations

import json
import sys
from collections import Counter
from pathlib import Path

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE.parent))
sys.path.insert(0, str(HERE))

from bench_answer_judged import majority  # noqa: E402

DATA = HERE / "data" / "answers"
LEFT_OUT = ("zsh", "apache", "cmake")


def load(path: Path) -> list[dict]:
    return [json.loads(x) for x in path.read_text(encoding="utf-8").splitlines() if x.strip()]


def judged_model_sentences() -> dict[tuple[str, str], tuple[str, str, bool]]:
    """(qid, text) -> (corpus, passage text, judged supported = full), the newest round's
    judgment where several rounds showed the same sentence."""
    from carry_judgments import EARLIER

    order = {r: i for i, r in enumerate(EARLIER)}
    rounds = []
    for path in DATA.glob("answers-*.jsonl"):
        name = path.stem[len("answers-"):]
        tag = name.rsplit("-", 1)[-1] if "-" in name else ""
        rounds.append((order.get(tag, len(order)), name))
    out: dict[tuple[str, str], tuple[str, str, bool]] = {}
    for _, name in sorted(rounds):
        judges = [{d["qid"]: d for d in load(p)} for p in
                  (DATA / f"judged{k}-answers-{name}.jsonl" for k in ("", "2", "3")) if p.exists()]
        if not judges:
            continue
        labels = majority(judges) if len(judges) > 1 else judges[0]
        corpus = name.split("-")[0]
        for a in load(DATA / f"answers-{name}.jsonl"):
            v = {u["unit"]: u for u in labels.get(a["qid"], {}).get("units", [])}
            for u in a["units"]:
                if (u.get("origin") != "model" or u["unit"] not in v or not u.get("passage_text")
                        or u["text"].lstrip().startswith("```") or v[u["unit"]].get("supported") in (None, "-")):
                    continue
                out.setdefault((a["qid"], u["text"]), (corpus, u["passage_text"],
                                                        v[u["unit"]]["supported"] == "full"))
    return out


def label(sentence: str, passage: str, whole: bool) -> str:
    from localrag.answering.judge import lexical
    from localrag.answering.judge.critics import SupportRules, whole_statement
    from localrag.answering.judge.noise import noise_kind

    if noise_kind(sentence) is not None:
        return "none"
    got = SupportRules().label(lexical.copy_coverage(sentence, passage), lexical.overlap(sentence, passage), 0.0)
    if got == "fully" and whole and not whole_statement(sentence, passage):
        return "unchecked"
    return got


def main() -> None:
    sentences = judged_model_sentences()
    tally: Counter = Counter()
    for (_, text), (corpus, passage, full) in sentences.items():
        group = "left out" if corpus in LEFT_OUT else "training"
        for whole in (False, True):
            if label(text, passage, whole) == "fully":
                tally[(group, whole, "n")] += 1
                tally[(group, whole, "ok")] += full
    print(f"{len(sentences)} judged sentences of the model (each once)")
    for group in ("training", "left out"):
        for whole in (False, True):
            n, ok = tally[(group, whole, "n")], tally[(group, whole, "ok")]
            print(f"  {group:9s} {'whole sentence' if whole else 'copy rule alone':16s}: labelled fully {n}, "
                  f"judged supported {ok} ({ok / max(n, 1):.3f})")


if __name__ == "__main__":
    main()
