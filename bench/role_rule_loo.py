"""Issue 17: the answer-role rule (extract.QUOTE_ANSWER_FLOOR, ANSWER_MODEL_RELATIVE,
ANSWER_MAX) chosen each corpus left out on the newest judged answer round of every corpus.
Prints figures, asserts nothing.

    python bench/role_rule_loo.py [--corpora postgres,debref,...]

A recorded answer keeps each quote's probability of answering (`score`, the answer
combination's, shared by an excerpt's units) and the order the units were shown in (best
first); annotators judged every unit, context included. So any rule (floor, ratio of the
best, at most N) can be scored on the same units: a quote unit is shown as the answer when
its probability is at least the floor and the ratio of the answer's best, among the first
N that pass; a code block keeps the role of the sentence it follows, the model's own
sentences the role they were shown with. For each corpus left out, the rule is chosen on
the other corpora's questions pooled, by the objective the shipped rule was chosen by (the
share of ✔ units shown as the answer that answer, counted up to 0.6, plus the share of
questions answered by one, counted up to 0.75: issue 17's two targets), and reported on
the corpus left out beside the shipped rule. The shipped rule's row reproduces the
recorded roles (a check of this reading of the records).
"""

from __future__ import annotations

import argparse
import itertools
import sys
from pathlib import Path

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE.parent))
sys.path.insert(0, str(HERE))

from answer_gaps import newest_round  # noqa: E402
from carry_judgments import load  # noqa: E402

DATA = HERE / "data" / "answers"
CORPORA = "postgres,debref,zsh,mdnotes,mdnotes2,mdnotes3,flask,rpdf,pycode,pycode2,pycode3,pycode4,ccode,ccode2,ccode3,ccode4,ccode5,ccode6"
FLOORS = (0.05, 0.075, 0.1, 0.125, 0.15, 0.2, 0.25, 0.3)
RATIOS = (0.3, 0.4, 0.5, 0.6, 0.7, 0.8)
MAXES = (1, 2, 3, 4)
SHARE_TARGET, ANSWERED_TARGET = 0.6, 0.75


def roles(units: list[dict], rule: tuple[float, float, int]) -> list[bool]:
    """Per unit: shown as the answer under `rule` (floor, ratio, at most N quote units)."""
    floor, ratio, most = rule
    quotes = [u for u in units if u.get("origin") == "quote" and u.get("score") is not None]
    best = max((u["score"] for u in quotes), default=0.0)
    out, shown, last = [], 0, False
    for u in units:
        if u.get("origin") != "quote" or u.get("score") is None:
            out.append(u.get("role") == "answer")
            continue
        if u.get("kind") == "code" and out:
            out.append(last)                 # a code block: its sentence's role
            continue
        ok = u["score"] >= floor and u["score"] >= ratio * best and shown < most
        shown += ok
        last = ok
        out.append(ok)
    return out


def figures(rows: list[tuple[dict, dict]], rule: tuple[float, float, int] | None
            ) -> tuple[int, int, int, int]:
    """(✔ answer units that answer, ✔ answer units, questions answered, questions); `rule`
    None: the roles as recorded."""
    good = shown = answered = 0
    for a, labels in rows:
        said = roles(a["units"], rule) if rule is not None else [u.get("role") == "answer" for u in a["units"]]
        hit = False
        for u, is_answer in zip(a["units"], said):
            if not is_answer or u.get("mark") != "✔":
                continue
            lab = labels.get(u["unit"], {})
            shown += 1
            yes = lab.get("answers") == "yes" and lab.get("supported") == "full"
            good += yes
            hit |= yes
        answered += hit
    return good, shown, answered, len(rows)


def objective(f: tuple[int, int, int, int]) -> float:
    good, shown, answered, n = f
    share = good / shown if shown else 0.0
    return min(share / SHARE_TARGET, 1.0) + min(answered / n / ANSWERED_TARGET, 1.0) if n else 0.0


def fmt(f: tuple[int, int, int, int]) -> str:
    good, shown, answered, n = f
    return f"✔ {good}/{shown} ({good / shown if shown else 0:.2f}), answered {answered}/{n} ({answered / n:.2f})"


def main() -> None:
    from localrag.answering.generate import extract

    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--corpora", default=CORPORA)
    args = ap.parse_args()
    shipped = (extract.QUOTE_ANSWER_FLOOR, extract.ANSWER_MODEL_RELATIVE, extract.ANSWER_MAX)
    data: dict[str, list[tuple[dict, dict]]] = {}
    for name in args.corpora.split(","):
        tag = newest_round(name)
        if tag is None:
            continue
        judged = {d["qid"]: {u["unit"]: u for u in d["units"]}
                  for d in load(DATA / f"judged-answers-{name}-{tag}.jsonl")}
        data[name] = [(a, judged[a["qid"]]) for a in load(DATA / f"answers-{name}-{tag}.jsonl")
                      if a["qid"] in judged]
        print(f"{name} ({tag}): recorded {fmt(figures(data[name], None))}; "
              f"shipped rule {fmt(figures(data[name], shipped))}")
    grid = list(itertools.product(FLOORS, RATIOS, MAXES))
    totals = {"shipped": [0, 0, 0, 0], "chosen": [0, 0, 0, 0]}
    print(f"\nchosen on the other corpora (objective: share up to {SHARE_TARGET} + answered up to "
          f"{ANSWERED_TARGET}); shipped {shipped}")
    for name in data:
        rest = [r for other, rows in data.items() if other != name for r in rows]
        rule = max(grid, key=lambda g: (objective(figures(rest, g)), g[0], g[1], -g[2]))
        s, c = figures(data[name], shipped), figures(data[name], rule)
        print(f"  {name}: rule {rule}: {fmt(c)}  | shipped {fmt(s)}")
        totals["shipped"] = [a + b for a, b in zip(totals["shipped"], s)]
        totals["chosen"] = [a + b for a, b in zip(totals["chosen"], c)]
    for k, v in totals.items():
        print(f"all corpora left out, {k}: {fmt(tuple(v))}; objective {objective(tuple(v)):.3f}")
    everything = [r for rows in data.values() for r in rows]
    rule = max(grid, key=lambda g: (objective(figures(everything, g)), g[0], g[1], -g[2]))
    print(f"chosen on every corpus: {rule}: {fmt(figures(everything, rule))}")


if __name__ == "__main__":
    main()
