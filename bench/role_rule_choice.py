"""Issue 17: which answer-role rule the judged answers would choose, leave-one-corpus-out.
Prints figures, asserts nothing.

    python bench/role_rule_choice.py

For the answers of postgres and debref recorded with the model-alone rule (bench/data/answers/
answers-<corpus>-model-v2.jsonl with the annotators' judged-answers-<corpus>-model-v2.jsonl;
the rule before extract.ANSWER_COMBINATION), each quote and fully supported model
sentence is scored again by the relevance model (its passage title and its text; a quoted
code line takes the score of the sentence beside it). A rule "logit >= floor and >= the
best quote's - gap" is simulated on the units the answers showed: the share of units it
would show as the answer that answer, and the questions it would answer. The rule that
maximises share x answered on one corpus is reported on the other.
"""

from __future__ import annotations

import json
import math
import os
import sys
from pathlib import Path

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE.parent))
os.environ.setdefault("HF_HUB_OFFLINE", "1")

DATA = HERE / "data" / "answers"
ROUND = "-model-v2"


def load(name: str, rm) -> dict[str, list[dict]]:  # noqa: ANN001
    from indexer.relevance_model import unit_text

    answers = [json.loads(x) for x in (DATA / f"answers-{name}{ROUND}.jsonl").read_text().splitlines() if x.strip()]
    judged = {d["qid"]: {u["unit"]: u for u in d["units"]} for d in
              (json.loads(x) for x in (DATA / f"judged-answers-{name}{ROUND}.jsonl").read_text().splitlines() if x.strip())}
    out = {}
    for a in answers:
        us = [dict(u, yes=judged[a["qid"]][u["unit"]]["answers"] == "yes",
                   full=judged[a["qid"]][u["unit"]]["supported"] == "full") for u in a["units"]]
        for u in us:
            scored = (u["origin"] == "quote" and u["kind"] != "code") or (
                u["origin"] == "model" and u.get("passage_title"))
            u["logit"] = float(rm.logits(a["question"], [unit_text(u["passage_title"], "", u["text"])])[0]) \
                if scored else None
        for i, u in enumerate(us):
            if u["origin"] == "quote" and u["kind"] == "code":
                near = [us[j] for j in (i + 1, i - 1) if 0 <= j < len(us) and us[j]["logit"] is not None
                        and us[j]["origin"] == "quote"]
                u["logit"] = near[0]["logit"] if near else -99.0
        out[a["qid"]] = us
    return out


def simulate(answers: dict[str, list[dict]], floor: float, gap: float) -> tuple[float, int, int]:
    lf = math.log(floor / (1 - floor)) if 0 < floor < 1 else -99.0
    shown = yes = answered = 0
    for us in answers.values():
        quotes = [u for u in us if u["origin"] == "quote"]
        if not quotes:
            continue
        best = max(u["logit"] for u in quotes)
        pick = [u for u in us if u["logit"] is not None and (u["origin"] == "quote" or u["label"] == "fully")
                and u["logit"] >= lf and u["logit"] >= best - gap]
        shown += len(pick)
        yes += sum(u["yes"] for u in pick)
        answered += any(u["yes"] and u["full"] for u in pick)
    return (yes / shown if shown else 0.0), answered, shown


def main() -> None:
    from indexer.relevance_model import RelevanceModel

    rm = RelevanceModel()
    data = {name: load(name, rm) for name in ("postgres", "debref")}
    grid = [(f, g) for f in (0.0, 0.2, 0.3, 0.4, 0.5, 0.6, 0.7, 0.8) for g in (0.0, 0.5, 1.0, 2.0, 99.0)]
    for tune, report in (("postgres", "debref"), ("debref", "postgres")):
        scores = {r: simulate(data[tune], *r) for r in grid}
        best = max(scores, key=lambda r: scores[r][0] * scores[r][1])
        s, a, n = simulate(data[report], *best)
        print(f"chosen on {tune}: floor {best[0]}, gap {best[1]} logits "
              f"({scores[best][0]:.2f} answer, {scores[best][1]} answered); on {report}: "
              f"{n} shown, {s:.2f} answer, {a}/{len(data[report])} answered")
    for name in data:
        s, a, n = simulate(data[name], 0.5, 99.0)
        print(f"the shipped rule (floor 0.5) on {name}: {n} shown, {s:.2f} answer, {a} answered")


if __name__ == "__main__":
    main()
