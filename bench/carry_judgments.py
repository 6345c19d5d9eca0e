"""A round of recorded answers judged by carrying the annotators' labels over from earlier
rounds of the same questions (bench/data/answers/), unit by unit, where the unit's text is
the same (and its cited file and passage); the units no earlier round showed are judged anew (three annotators, the same
rubric) and given as a file of their own. Writes judged-answers-<corpus>-<round>.jsonl, the
majority labels, for bench/bench_answer_judged.py.

    python bench/carry_judgments.py --round pool --new bench/data/answers/new-units-pool-{A,B,C}.jsonl
    python bench/carry_judgments.py --round srank --list-new bench/data/answers/new-units-srank.jsonl
                                         # the units no earlier round judged, for annotators
    python bench/carry_judgments.py --round ltr --new bench/data/answers/new-units-ltr-{A,B,C}.jsonl \
        --list-new bench/data/answers/new-units-ltr2.jsonl   # what neither they nor a round judged

A unit's labels depend on the question, its text and its passage only (RUBRIC-answers.md),
not on the rest of the answer, so a carried label is the label its annotators gave. Each
earlier round's majority (three annotators; one or two where a round had fewer) is taken,
the newest round first (EARLIER).
"""

from __future__ import annotations

import argparse
import json
from itertools import zip_longest
from pathlib import Path

from bench_answer_judged import majority

DATA = Path(__file__).resolve().parent / "data" / "answers"
EARLIER = ("p63b", "x63b", "p63a", "x63a", "p62a", "x62b", "x62a", "p61b", "p61a", "p60d", "p60c", "p60a", "p59b", "p59a", "p58a", "p57g", "p57f", "p57m", "p57o", "p56n", "p56r", "p55r", "p54r", "p54r0", "c53c", "c53", "p53c", "p53c0", "c52d", "c52c", "c52b", "c52", "p52m2", "p52m", "p52m0", "c51c", "c51b", "c51", "p51t", "p51t0", "p51h2", "p51h", "p51h0", "c50d", "c50c", "c50b", "c50", "p50h2", "p50h", "p50h0", "c49", "c49h", "c49h0", "s49", "s49h", "s49h0", "c48h2", "c48h", "c48h0", "c48b", "c48", "s48b", "s48", "s47d", "s47c", "s47", "s46", "s45", "exc13", "held5", "held4", "held3", "exc12", "items11", "held5", "exc11", "items10", "held3", "exc10", "items9", "held2", "exc9", "items8", "held", "items7", "exc8", "items6", "exc7", "items5", "exc6", "items4", "items3", "exc5", "items2", "items", "noitems", "exc4", "exc3", "exc2", "exc", "ltr", "srank", "pool", "head", "dt", "subjects", "final", "model-v2", "relevance-v1", "scorer-roles", "before")

SIDE_ROUNDS = ("q55c", "q55c0")
"""Rounds of a few questions recorded for a side-by-side (the questions a rule changes the
candidates of, record_answers_for_judging.py --questions): their labels carry to later
rounds as every earlier round's do, but none is a corpus's newest round (EARLIER)."""


def load(path: Path) -> list[dict]:
    return [json.loads(x) for x in path.read_text(encoding="utf-8").splitlines() if x.strip()]


def unit_key(qid: str, unit: dict) -> tuple[str, str, str, str]:
    """A unit as its labels depend on it: the question, its text and the passage it cites."""
    return (qid, unit["text"].strip(), str(unit.get("file")), str(unit.get("passage_title")))


def round_labels(corpus: str, rnd: str) -> dict[tuple[str, str, str, str], dict]:
    """unit_key -> the round's majority labels of that unit."""
    answers = DATA / f"answers-{corpus}-{rnd}.jsonl"
    judges = [{d["qid"]: d for d in load(p)} for p in
              (DATA / f"judged{k}-answers-{corpus}-{rnd}.jsonl" for k in ("", "2", "3")) if p.exists()]
    if not answers.exists() or not judges:
        return {}
    merged = majority(judges) if len(judges) > 1 else judges[0]
    out = {}
    for a in load(answers):
        v = {u["unit"]: u for u in merged.get(a["qid"], {}).get("units", [])}
        for u in a["units"]:
            if u["unit"] in v:
                out.setdefault(unit_key(a["qid"], u), v[u["unit"]])
    return out


def earlier_labels(corpus: str, this_round: str = "") -> dict[tuple[str, str, str, str], dict]:
    """The labels of every earlier round, newest first; the round being judged
    (`this_round`, comma-separated names) is left out: its judged file, if one was written
    before its answers were recorded again, numbers other units."""
    labels: dict[tuple[str, str, str, str], dict] = {}
    skip = set(this_round.split(",")) if this_round else set()
    for rnd in (r for r in (*EARLIER, *SIDE_ROUNDS) if r not in skip):
        for key, v in round_labels(corpus, rnd).items():
            labels.setdefault(key, v)
    return labels


def new_labels(paths: list[Path]) -> list[dict[tuple[str, str, str, str], dict]]:
    """Per annotator, the labels of the units listed for them, by unit_key. A labels file
    `new-units-<batch>-<annotator>.jsonl` names units by (qid, unit number) of the list it
    was judged from, `new-units-<batch>.jsonl` (list_new): the numbers are turned into the
    units' text there, so an answer recorded again keeps only the labels of units whose text
    is the same (a renumbered or new unit is left without labels, to be judged)."""
    judges: dict[str, dict[tuple[str, str, str, str], dict]] = {}
    for path in paths:
        batch, annotator = path.stem.rsplit("-", 1)
        listed = path.with_name(f"{batch}.jsonl")
        if not listed.exists():
            raise SystemExit(f"{path}: its list of units {listed} is missing (the labels name units by number)")
        keys = {(q["qid"], u["unit"]): unit_key(q["qid"], u) for q in load(listed)
                for u in q.get("units", [q])}          # the pool round listed one unit a line
        mine = judges.setdefault(annotator, {})
        for d in load(path):
            mine[keys[(d["qid"], d["unit"])]] = d
    return list(judges.values())


def list_new(rnd: str, corpora: list[str], out: Path, judged: list[Path] = ()) -> None:
    """One line per question that has units no earlier round judged: the question, its
    key phrase and only those units (with their cited passage), as RUBRIC-answers.md reads.
    `rnd` may name several rounds ("before,held": two versions compared, judged blind in
    one list): a unit shown by both is listed once, the rounds' units taking turns and
    numbered anew, with no word of the round they come from."""
    lines, count = [], 0
    done = new_labels(list(judged))
    for corpus in corpora:
        labels = earlier_labels(corpus, rnd)
        rounds = [load(DATA / f"answers-{corpus}-{r}.jsonl") for r in rnd.split(",")]
        for answers in zip(*rounds):
            a = answers[0]
            assert all(b["qid"] == a["qid"] for b in answers), "the rounds' questions differ"
            seen, new = set(), []
            for u in (u for column in zip_longest(*(b["units"] for b in answers)) for u in column if u):
                key = unit_key(a["qid"], u)
                if key in labels or key in seen or (done and all(key in j for j in done)):
                    continue
                seen.add(key)
                new.append({**{k: v for k, v in u.items() if k not in ("unit", "shown_as_answer")},
                            "unit": len(new) + 1} if len(answers) > 1 else u)
            if new:
                count += len(new)
                lines.append(json.dumps({**{k: a[k] for k in ("qid", "question", "key_phrase")},
                                         "units": new}, ensure_ascii=False))
    out.write_text("".join(x + "\n" for x in lines), encoding="utf-8")
    print(f"{count} new units of {len(lines)} questions -> {out}")


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--round", required=True)
    ap.add_argument("--corpora", default="postgres,debref,zsh")
    ap.add_argument("--new", nargs="*", default=[], help="annotators' labels of the new units, "
                    "new-units-<batch>-<annotator>.jsonl ({qid, unit, supported, answers, noise} a line, "
                    "the unit numbered as in new-units-<batch>.jsonl); with --list-new: the units they "
                    "already judged are not listed again")
    ap.add_argument("--list-new", default="", help="write the units no earlier round judged "
                    "(with their question and cited passage) to this file, for annotators, and stop")
    args = ap.parse_args()
    if args.list_new:
        list_new(args.round, args.corpora.split(","), Path(args.list_new), [Path(p) for p in args.new])
        return
    new_judges = new_labels([Path(p) for p in args.new])
    for corpus in args.corpora.split(","):
        labels = earlier_labels(corpus, args.round)
        out, carried, fresh, missing = [], 0, 0, 0
        for a in load(DATA / f"answers-{corpus}-{args.round}.jsonl"):
            units = []
            for u in a["units"]:
                v = labels.get(unit_key(a["qid"], u))
                if v is not None:
                    carried += 1
                elif new_judges and all(unit_key(a["qid"], u) in j for j in new_judges):
                    one = [{a["qid"]: {"units": [{**j[unit_key(a["qid"], u)], "unit": u["unit"]}]}}
                           for j in new_judges]
                    v = majority(one)[a["qid"]]["units"][0]
                    fresh += 1
                else:
                    missing += 1
                    continue
                units.append({"unit": u["unit"], "supported": v["supported"],
                              "answers": v["answers"], "noise": v["noise"]})
            by = {x["unit"]: x for x in units}
            answered = any(u["shown_as_answer"] and by.get(u["unit"], {}).get("answers") == "yes"
                           and by.get(u["unit"], {}).get("supported") == "full" for u in a["units"])
            out.append({"qid": a["qid"], "units": units, "answered": "yes" if answered else "no",
                        "note": "labels carried from earlier rounds; new units: majority of the new annotators"})
        path = DATA / f"judged-answers-{corpus}-{args.round}.jsonl"
        path.write_text("".join(json.dumps(x, ensure_ascii=False) + "\n" for x in out), encoding="utf-8")
        print(f"{corpus}: {carried} units carried, {fresh} judged anew, {missing} without labels -> {path.name}")


if __name__ == "__main__":
    main()
