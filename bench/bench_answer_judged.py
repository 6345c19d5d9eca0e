"""Issue 17's answer figures from annotators' judgments: prints figures, asserts nothing.

    python scripts/record_answers_for_judging.py --corpora postgres,debref --limit 20
    # annotators: bench/data/answers/RUBRIC-answers.md -> judged-answers-<corpus>.jsonl
    # (more annotators of the same answers: judged2-answers-, judged3-answers-<corpus>.jsonl)
    python bench/bench_answer_judged.py

Per corpus (both left out of every fitting): of the units shown as the answer with ✔, the
share that answer the question (answers = yes); "fully" precision (of the units labelled
fully supported, shown as answer or context, the share judged supported = full); the
share of questions answered by a ✔ unit shown as the answer; and the same for the context
units, so that one can see what the answer/context split separates. Where other annotators
judged the same answers: their figures, their agreement with the first (Cohen's kappa of
"answers = yes"), and with three, the majority's figures. Last, the three figures summed
over each corpus's newest judged round.
"""

from __future__ import annotations

import json
from collections import Counter
from pathlib import Path

DATA = Path(__file__).resolve().parent / "data" / "answers"


def main() -> None:
    for ans_path in sorted(DATA.glob("answers-*.jsonl")):
        name = ans_path.stem[len("answers-"):]
        jud_path = DATA / f"judged-answers-{name}.jsonl"
        if not jud_path.exists():
            print(f"{name}: no judgments ({jud_path.name})")
            continue
        answers = [json.loads(x) for x in ans_path.read_text().splitlines() if x.strip()]
        judged = {d["qid"]: d for d in (json.loads(x) for x in jud_path.read_text().splitlines() if x.strip())}
        print_figures(name, answers, judged)
        if len(answers) > 15:   # the earlier rounds judged the first 15: the same questions
            print_figures(f"{name}, its first 15 questions", answers[:15], judged)
        others = []   # more annotators of the same answers, where there are: judged2-, judged3-
        for k in (2, 3):
            path = DATA / f"judged{k}-answers-{name}.jsonl"
            if path.exists():
                others.append({d["qid"]: d for d in (json.loads(x) for x in path.read_text().splitlines() if x.strip())})
                print_figures(f"{name}, annotator {k}", answers, others[-1])
                agreement(answers, judged, others[-1])
        if len(others) == 2:
            print_figures(f"{name}, majority of the three annotators", answers, majority([judged, *others]))
        elif others:    # two annotators: where they differ, the lower label (the rubric's rule)
            print_figures(f"{name}, both annotators (the lower label where they differ)", answers,
                          majority([judged, *others]))
    newest_rounds()


def newest_rounds() -> None:
    """The three figures summed over each corpus's newest judged round (answer_gaps.CORPORA,
    the first round of carry_judgments.EARLIER with answers and judgments), and the same of
    the exact lookups' rounds."""
    from answer_gaps import CORPORA

    newest_of([*CORPORA.split(",")], "newest judged rounds")
    # the exact lookups' answers (stop 62: recorded with --which exact), judged alike
    newest_of([f"{c}-exact" for c in CORPORA.split(",")], "the exact lookups' newest judged rounds")


def newest_of(names: list[str], title: str) -> None:
    """The three figures summed over the newest judged round of each of `names`."""
    from answer_gaps import newest_round

    total: Counter = Counter()
    tags = []
    for name in names:
        tag = newest_round(name)
        if tag is None:
            continue
        tags.append(f"{name} {tag}")
        answers = [json.loads(x) for x in (DATA / f"answers-{name}-{tag}.jsonl").read_text().splitlines() if x.strip()]
        judged = {d["qid"]: d for d in (json.loads(x) for x in
                                        (DATA / f"judged-answers-{name}-{tag}.jsonl").read_text().splitlines() if x.strip())}
        total.update(counts(answers, judged))
    if not tags:
        return
    c = total
    print(f"\n{title} ({', '.join(tags)}):")
    print(f"  units shown as the answer with ✔ that answer: {c['shown_yes']}/{c['shown']} "
          f"({c['shown_yes'] / max(c['shown'], 1):.3f})")
    print(f"  questions answered by a ✔ unit shown as the answer: {c['answered']}/{c['total']} "
          f"({c['answered'] / max(c['total'], 1):.3f})")
    print(f"  'fully' precision: {c['fully_ok']}/{c['fully']} ({c['fully_ok'] / max(c['fully'], 1):.3f})")


def majority(judges: list[dict[str, dict]]) -> dict[str, dict]:
    """Per unit, each label as most of the annotators gave it (for `answers`, ties go to the
    lower label, as the rubric says to when torn)."""
    order = {"answers": ["no", "partly", "yes"], "supported": ["no", "partial", "full"], "noise": ["yes", "no"]}
    out: dict[str, dict] = {}
    for qid, first in judges[0].items():
        units = []
        for u in first["units"]:
            labels = [next((x for x in j.get(qid, {}).get("units", []) if x["unit"] == u["unit"]), {}) for j in judges]
            merged = {"unit": u["unit"]}
            for key, scale in order.items():
                votes = [x.get(key) for x in labels if x.get(key) in scale]
                if not votes:
                    merged[key] = "-"
                    continue
                # the highest label at least half of the annotators gave or exceeded
                merged[key] = next(level for level in reversed(scale)
                                   if sum(scale.index(v) >= scale.index(level) for v in votes) * 2 > len(votes)
                                   or level == scale[0])
            units.append(merged)
        out[qid] = {"qid": qid, "units": units}
    return out


def agreement(answers: list[dict], one: dict[str, dict], two: dict[str, dict]) -> None:
    """How often two annotators gave a unit the same `answers` label, and Cohen's kappa of
    "answers = yes" against the rest; and the questions both call answered."""
    same = n = 0
    both = {(True, True): 0, (True, False): 0, (False, True): 0, (False, False): 0}
    for a in answers:
        v1 = {u["unit"]: u for u in one.get(a["qid"], {}).get("units", [])}
        v2 = {u["unit"]: u for u in two.get(a["qid"], {}).get("units", [])}
        for u in a["units"]:
            if u["unit"] in v1 and u["unit"] in v2 and v1[u["unit"]]["answers"] != "-":
                x, y = v1[u["unit"]]["answers"], v2[u["unit"]]["answers"]
                n += 1
                same += x == y
                both[(x == "yes", y == "yes")] += 1
    if not n:
        return
    po = (both[(True, True)] + both[(False, False)]) / n
    p1 = (both[(True, True)] + both[(True, False)]) / n
    p2 = (both[(True, True)] + both[(False, True)]) / n
    pe = p1 * p2 + (1 - p1) * (1 - p2)
    kappa = (po - pe) / (1 - pe) if pe < 1 else float("nan")
    def answered(a: dict, judged: dict[str, dict]) -> bool:
        v = {u["unit"]: u for u in judged.get(a["qid"], {}).get("units", [])}
        return any(u["shown_as_answer"] and v.get(u["unit"], {}).get("answers") == "yes"
                   and v.get(u["unit"], {}).get("supported") == "full" for u in a["units"])

    pairs = [(answered(a, one), answered(a, two)) for a in answers if a["qid"] in one and a["qid"] in two]
    print(f"  annotators agree on a unit's `answers` label {same}/{n} ({same / n:.2f}); on yes vs "
          f"the rest: kappa {kappa:.2f} ({both[(True, True)]} both yes, "
          f"{both[(True, False)] + both[(False, True)]} one of them); questions answered by both "
          f"{sum(x and y for x, y in pairs)}, by one of them {sum(x != y for x, y in pairs)}, of {len(pairs)}")


def counts(answers: list[dict], judged: dict[str, dict]) -> Counter:
    """The tallies behind print_figures' lines (questions judged and answered, units shown as
    the answer and those that answer, context units, units labelled fully, their noise and
    name lines), for one round or summed over several."""
    c: Counter = Counter()
    for a in answers:
        j = judged.get(a["qid"])
        if j is None:
            continue
        c["total"] += 1
        verdict = {u["unit"]: u for u in j["units"]}
        ok = False
        for u in a["units"]:
            v = verdict.get(u["unit"])
            if v is None:
                continue
            if u["label"] == "fully":
                c["fully"] += 1
                c["fully_ok"] += v.get("supported") == "full"
                c["noise_fully"] += v.get("noise") == "yes"
                if is_name_line(u):
                    c["names"] += 1
                    c["names_ok"] += v.get("supported") == "full"
            if u["shown_as_answer"]:
                c["shown"] += 1
                yes = v.get("answers") == "yes"
                c["shown_yes"] += yes
                ok = ok or (yes and v.get("supported") == "full")
            elif u["role"] == "context":
                c["ctx"] += 1
                c["ctx_yes"] += v.get("answers") == "yes"
        c["answered"] += ok
    return c


def print_figures(name: str, answers: list[dict], judged: dict[str, dict]) -> None:
    c = counts(answers, judged)
    shown, shown_yes, fully, fully_ok = c["shown"], c["shown_yes"], c["fully"], c["fully_ok"]
    ctx, ctx_yes, noise_fully, names, names_ok = c["ctx"], c["ctx_yes"], c["noise_fully"], c["names"], c["names_ok"]
    answered, total = c["answered"], c["total"]
    seconds = [a["seconds"] for a in answers if a["qid"] in judged]
    seconds.sort()
    print(f"{name}: {total} questions judged (median answer {seconds[len(seconds) // 2]:.1f} s)")
    print(f"  units shown as the answer with ✔ that answer: {shown_yes}/{shown} "
          f"({shown_yes / max(shown, 1):.2f})")
    print(f"  context units (›) that answer: {ctx_yes}/{ctx} ({ctx_yes / max(ctx, 1):.2f})")
    print(f"  'fully' precision: {fully_ok}/{fully} ({fully_ok / max(fully, 1):.2f}); "
          f"noise labelled fully: {noise_fully}")
    print(f"  questions answered by a ✔ unit shown as the answer: {answered}/{total} "
          f"({answered / max(total, 1):.2f})")
    if names:
        print(f"  of them name lines (a quote's subject, as code): {names_ok}/{names} judged full; "
              f"'fully' precision of the other units {fully_ok - names_ok}/{fully - names} "
              f"({(fully_ok - names_ok) / max(fully - names, 1):.2f})")


def is_name_line(unit: dict) -> bool:
    """A quote's subject line shown as code (extract.subject_of): one line, ending in ":"
    or a signature's ")" (RUBRIC-answers.md, "name line")."""
    body = unit["text"].strip().strip("`").strip()
    return unit.get("origin") == "quote" and unit.get("kind") == "code" and "\n" not in body \
        and body.endswith((":", ")"))


if __name__ == "__main__":
    main()
