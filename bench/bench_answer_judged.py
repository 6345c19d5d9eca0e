"""Issue 17's answer figures from annotators' judgments: prints figures, asserts nothing.

    python scripts/record_answers_for_judging.py --corpora postgres,debref --limit 15
    # annotators: bench/data/answers/RUBRIC-answers.md -> judged-answers-<corpus>.jsonl
    python bench/bench_answer_judged.py

Per corpus (both left out of every fitting): of the units shown as the answer with ✔, the
share that answer the question (answers = yes); "fully" precision (of the units labelled
fully supported, shown as answer or context, the share judged supported = full); the
share of questions answered by a ✔ unit shown as the answer; and the same for the context
units, so that one can see what the answer/context split separates.
"""

from __future__ import annotations

import json
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
        shown = shown_yes = fully = fully_ok = ctx = ctx_yes = noise_fully = 0
        answered = total = 0
        seconds = []
        for a in answers:
            j = judged.get(a["qid"])
            if j is None:
                continue
            total += 1
            seconds.append(a["seconds"])
            verdict = {u["unit"]: u for u in j["units"]}
            ok = False
            for u in a["units"]:
                v = verdict.get(u["unit"])
                if v is None:
                    continue
                if u["label"] == "fully":
                    fully += 1
                    fully_ok += v.get("supported") == "full"
                    noise_fully += v.get("noise") == "yes"
                if u["shown_as_answer"]:
                    shown += 1
                    yes = v.get("answers") == "yes"
                    shown_yes += yes
                    ok = ok or (yes and v.get("supported") == "full")
                elif u["role"] == "context":
                    ctx += 1
                    ctx_yes += v.get("answers") == "yes"
            answered += ok
        seconds.sort()
        print(f"{name}: {total} questions judged (median answer {seconds[len(seconds) // 2]:.1f} s)")
        print(f"  units shown as the answer with ✔ that answer: {shown_yes}/{shown} "
              f"({shown_yes / max(shown, 1):.2f})")
        print(f"  context units (›) that answer: {ctx_yes}/{ctx} ({ctx_yes / max(ctx, 1):.2f})")
        print(f"  'fully' precision: {fully_ok}/{fully} ({fully_ok / max(fully, 1):.2f}); "
              f"noise labelled fully: {noise_fully}")
        print(f"  questions answered by a ✔ unit shown as the answer: {answered}/{total} "
              f"({answered / max(total, 1):.2f})")


if __name__ == "__main__":
    main()
