"""The answer-role rule (which quotes are shown as the answer, ✔, and which as context, ›)
tried on judged answers: prints figures, asserts nothing.

    python bench/role_rule.py            # choose on zsh, report postgres and debref

A quote is shown as the answer when its probability of answering (extract.answer_probability,
recorded per unit as `score` by scripts/record_answers_for_judging.py) is at least a floor
and at least a ratio of the best quote's (extract.QUOTE_ANSWER_FLOOR, ANSWER_MODEL_RELATIVE).
Annotators judged every unit, context included (bench/data/answers/RUBRIC-answers.md), so
any rule's roles can be scored on the same units: the share of units shown as the answer
with ✔ that answer, and the questions answered by one (answers = yes and supported = full).
The model's own sentences keep the role they were shown with.

The rule is chosen on zsh (zsh-doc's manual: a corpus none of the models, the scorer or the
combination was fitted on, judged by three annotators), by share x questions answered, as
on vim before (ties: the higher floor, then the higher ratio). The best rule replaces the
shipped one only when it beats it in at least CONFIDENCE of bootstrap resamples of the
choice corpus's questions (24 questions move the objective by a question or two: a rule
chosen on that noise would be chosen on nothing). postgres and debref, the corpora the
answer targets are measured on, are only reported, with every quote shown as the answer
(floor 0, ratio 0) as the ceiling that a role rule can reach.

A round's probabilities are those of the combination it was recorded with: the rules are
meant for the rounds of the two-signal combination (fitted on vim). The ten-signal
combination and its rule (floor 0.125, 0.7 of the best, at most ANSWER_MAX) were chosen on
whole judged pools instead (bench/answer_combination.py --choose-rule); this bench does not
apply ANSWER_MAX, so its "shipped" row is that floor and ratio alone.
"""

from __future__ import annotations

import json
import sys
from pathlib import Path

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE.parent))
sys.path.insert(0, str(HERE))

from bench_answer_judged import majority  # noqa: E402

DATA = HERE / "data" / "answers"
CHOOSE_ON = ("zsh-subjects",)
REPORT_ON = ("postgres-subjects", "debref-subjects", "postgres-dt", "debref-dt")
FLOORS = (0.0, 0.05, 0.1, 0.15, 0.2, 0.25, 0.3)
RATIOS = (0.0, 0.5, 0.8, 1.0)
CONFIDENCE = 0.9
RESAMPLES = 2000


def load(name: str) -> tuple[list[dict], dict[str, dict]]:
    answers = [json.loads(x) for x in (DATA / f"answers-{name}.jsonl").read_text().splitlines() if x.strip()]
    judges = []
    for k in ("", "2", "3"):
        path = DATA / f"judged{k}-answers-{name}.jsonl"
        if path.exists():
            judges.append({d["qid"]: d for d in map(json.loads, path.read_text().splitlines()) if d})
    return answers, (majority(judges) if len(judges) > 1 else judges[0])


def figures(answers: list[dict], judged: dict[str, dict], floor: float | None,
            ratio: float | None) -> tuple[int, int, int, int]:
    """(shown ✔ answer units that answer, shown, questions answered, questions) with the
    quotes' roles given by (floor, ratio); None: the roles as recorded."""
    shown = yes = answered = total = 0
    for a in answers:
        verdict = {u["unit"]: u for u in judged.get(a["qid"], {}).get("units", [])}
        if not verdict:
            continue
        total += 1
        quotes = [u for u in a["units"] if u["origin"] == "quote" and u.get("score") is not None]
        best = max((u["score"] for u in quotes), default=0.0)
        ok = False
        for u in a["units"]:
            v = verdict.get(u["unit"], {})
            if floor is not None and u in quotes:
                as_answer = u["label"] == "fully" and u["score"] >= floor and u["score"] >= ratio * best
            else:
                as_answer = u["shown_as_answer"]
            if as_answer:
                shown += 1
                said = v.get("answers") == "yes"
                yes += said
                ok = ok or (said and v.get("supported") == "full")
        answered += ok
    return yes, shown, answered, total


def objective(answers: list[dict], judged: dict[str, dict], floor: float, ratio: float) -> float:
    y, s, q, t = figures(answers, judged, floor, ratio)
    return (y / max(s, 1)) * (q / max(t, 1))


def beats(answers: list[dict], judged: dict[str, dict], rule: tuple[float, float],
          shipped: tuple[float, float]) -> float:
    """The share of bootstrap resamples (questions drawn with replacement) in which `rule`
    has the higher objective than `shipped`."""
    import random

    rng = random.Random(17)
    wins = 0
    for _ in range(RESAMPLES):
        sample = [dict(a, qid=f"{a['qid']}#{k}") for k, a in
                  enumerate(rng.choice(answers) for _ in answers)]
        judged_s = {a["qid"]: judged[a["qid"].split("#")[0]] for a in sample}
        wins += objective(sample, judged_s, *rule) > objective(sample, judged_s, *shipped)
    return wins / RESAMPLES


def main() -> None:
    from localrag.answering.generate.extract import ANSWER_MODEL_RELATIVE, QUOTE_ANSWER_FLOOR

    sets = {name: load(name) for name in CHOOSE_ON + REPORT_ON
            if (DATA / f"answers-{name}.jsonl").exists()}
    for name, (answers, _) in sets.items():
        if not any(u.get("score") is not None for a in answers for u in a["units"]):
            raise SystemExit(f"answers-{name}.jsonl has no recorded scores: record it again")
    rows = []
    for floor in FLOORS:
        for ratio in RATIOS:
            y = s = q = t = 0
            for name in CHOOSE_ON:
                a, b, c, d = figures(*sets[name], floor, ratio)
                y, s, q, t = y + a, s + b, q + c, t + d
            rows.append((floor, ratio, y / max(s, 1), q / max(t, 1), y, s, q, t))
    best = max(rows, key=lambda r: (r[2] * r[3], r[0], r[1]))
    print(f"rules on {', '.join(CHOOSE_ON)} (floor, ratio: ✔ answer units that answer, questions answered):")
    for floor, ratio, share, ans, y, s, q, t in rows:
        mark = "   <- chosen (share x answered)" if (floor, ratio) == best[:2] else ""
        mark += "   (shipped)" if (floor, ratio) == (QUOTE_ANSWER_FLOOR, ANSWER_MODEL_RELATIVE) else ""
        print(f"  {floor:.2f} {ratio:.1f}: {y}/{s} ({share:.2f}), {q}/{t} ({ans:.2f}){mark}")
    shipped = (QUOTE_ANSWER_FLOOR, ANSWER_MODEL_RELATIVE)
    if len(CHOOSE_ON) == 1 and best[:2] != shipped:
        share = beats(*sets[CHOOSE_ON[0]], best[:2], shipped)
        verdict = "replaces the shipped rule" if share >= CONFIDENCE else "within noise: the shipped rule stays"
        print(f"  {best[0]} / {best[1]} beats the shipped {shipped[0]} / {shipped[1]} in {share:.2f} of "
              f"{RESAMPLES} resamples of the questions: {verdict}")
    for name in REPORT_ON:
        if name not in sets:
            continue
        print(f"{name} (never chosen on):")
        for label, (floor, ratio) in (("as recorded", (None, None)),
                                      (f"shipped {QUOTE_ANSWER_FLOOR} / {ANSWER_MODEL_RELATIVE}", shipped),
                                      (f"best on zsh {best[0]} / {best[1]}", best[:2]),
                                      ("every quote as the answer (the ceiling)", (0.0, 0.0))):
            y, s, q, t = figures(*sets[name], floor, ratio)
            print(f"  {label}: ✔ answer units that answer {y}/{s} ({y / max(s, 1):.2f}), "
                  f"questions answered {q}/{t} ({q / max(t, 1):.2f})")


if __name__ == "__main__":
    main()
