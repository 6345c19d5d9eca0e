"""Whole sentence pools judged by annotators (scripts/make_sentence_pools.py writes the pools;
bench/data/relevance/RUBRIC-pools.md is the annotators' brief).

    python bench/sentence_pools.py render --corpus zsh --first 0 --count 40 --out FILE
    python bench/sentence_pools.py check --corpus zsh --labels FILE
    python bench/sentence_pools.py stats [--corpora ...]

Labels live beside the pools: pools/labels-<corpus>-<annotator>-<batch>.jsonl, one line per question
`{"qid": ..., "labels": {"1": 0, "2": 1, ...}}` with every candidate's id (or a string of one
digit per candidate in id order). Several
annotators of one corpus are combined by their median (`labels_of`).
"""

from __future__ import annotations

import argparse
import json
import sys
from pathlib import Path

POOLS = Path(__file__).resolve().parent / "data" / "relevance" / "pools"
OPEN, CLOSE = "\u27e6", "\u27e7"


def load_pool(corpus: str, pools: Path = POOLS) -> list[dict]:
    path = pools / f"pool-{corpus}.jsonl"
    return [json.loads(x) for x in path.read_text(encoding="utf-8").splitlines() if x.strip()]


def marked_passage(text: str, cands: list[dict]) -> str:
    """The passage with each candidate sentence in it bracketed as ⟦n: sentence⟧."""
    out = text
    for c in sorted(cands, key=lambda c: -c["start"]):
        out = (out[:c["start"]] + f"{OPEN}{c['id']}: " + out[c["start"]:c["end"]] + CLOSE
               + out[c["end"]:])
    return out


def render(row: dict, only: list[int] | None = None) -> str:
    """A question for annotators; `only`: bracket just these candidates (the rest of the
    text is there for reading)."""
    if only is not None:
        row = {**row, "candidates": [c for c in row["candidates"] if c["id"] in set(only)]}
    lines = [f"=== QUESTION {row['qid']} ({len(row['candidates'])} marked sentences"
             + (f": numbers {', '.join(str(c['id']) for c in row['candidates'])}" if only is not None else "")
             + ")",
             f"Q: {row['question']}",
             f"hint: key phrase \"{row['key_phrase']}\" in {row['answer_file']}", ""]
    for p in row["passages"]:
        mine = [c for c in row["candidates"] if c["passage"] == p["rank"]]
        lines.append(f"--- passage {p['rank']}: {p['title']}")
        lines.append(marked_passage(p["text"], mine))
        lines.append("")
    return "\n".join(lines) + "\n"


def read_labels(path: Path) -> dict[str, str]:
    out = {}
    for n, line in enumerate(path.read_text(encoding="utf-8").splitlines(), 1):
        if not line.strip():
            continue
        d = json.loads(line)
        lab = d["labels"]
        if isinstance(lab, dict):   # {"1": 0, "2": 2, ...}: every id, in id order
            keys = sorted(lab, key=int)
            if [int(k) for k in keys] != list(range(1, len(keys) + 1)):
                raise SystemExit(f"{path}:{n}: {d['qid']}: the ids must run 1..n without a gap")
            lab = "".join(str(lab[k]) for k in keys)
        out[d["qid"]] = str(lab)
    return out


def check(pool: list[dict], labels: dict[str, str], *, complete: bool = False) -> list[str]:
    """Problems of a label file against its pool (empty: fine)."""
    by_q = {r["qid"]: r for r in pool}
    errs = []
    for qid, lab in labels.items():
        r = by_q.get(qid)
        if r is None:
            errs.append(f"{qid}: no such question in the pool")
        elif len(lab) != len(r["candidates"]):
            errs.append(f"{qid}: {len(lab)} labels for {len(r['candidates'])} marked sentences")
        elif set(lab) - set("012"):
            errs.append(f"{qid}: labels must be digits 0, 1, 2")
    if complete:
        errs += [f"{q}: not labelled" for q in by_q if q not in labels]
    return errs


def label_files(corpus: str, pools: Path = POOLS) -> list[Path]:
    return sorted(pools.glob(f"labels-{corpus}-*.jsonl"))


def annotators(corpus: str, pools: Path = POOLS) -> dict[str, dict[str, str]]:
    """Per annotator (labels-<corpus>-<annotator>[-<batch>].jsonl), their labels."""
    out: dict[str, dict[str, str]] = {}
    for f in label_files(corpus, pools):
        who = f.stem[len(f"labels-{corpus}-"):].split("-")[0]
        if not (who.isalpha() and who.isupper()):
            continue                     # another pool's files (labels-zsh-v2-A-1 for zsh)
        out.setdefault(who, {}).update(read_labels(f))
    return out


def _key(text: str) -> str:
    return " ".join(text.split())


def carry(old: str, new: str, pools: Path = POOLS) -> dict[str, dict[str, dict[int, int]]]:
    """The labels of pool `old` (or of several, comma-separated, the first one's label
    winning) carried to pool `new` (the same questions after a change of
    search or of the candidate rules): per annotator, per question, {candidate id: label}
    for each candidate of `new` whose sentence the same question's `old` pool held (the
    label says whether that sentence answers that question, wherever it was found)."""
    out: dict[str, dict[str, dict[int, int]]] = {}
    for source in reversed(old.split(",")):          # the first pool named wins
        old_rows = {r["qid"]: r for r in load_pool(source, pools)}
        for who, labels in annotators(source, pools).items():
            per_q = out.setdefault(who, {})
            for r in load_pool(new, pools):
                o = old_rows.get(r["qid"])
                if o is None or r["qid"] not in labels:
                    continue
                by_text = {_key(c["sentence"]): int(labels[r["qid"]][k]) for k, c in enumerate(o["candidates"])}
                per_q.setdefault(r["qid"], {}).update(
                    {c["id"]: by_text[_key(c["sentence"])] for c in r["candidates"]
                     if _key(c["sentence"]) in by_text})
    return out


def uncarried(old: str, new: str, pools: Path = POOLS) -> dict[str, list[int]]:
    """Per question of `new`, the candidate ids no annotator of `old` labelled."""
    got = carry(old, new, pools)
    first = next(iter(got.values()), {})
    return {r["qid"]: [c["id"] for c in r["candidates"] if c["id"] not in first.get(r["qid"], {})]
            for r in load_pool(new, pools)}


def merge(old: str, new: str, pools: Path = POOLS) -> list[str]:
    """labels-<new>-<annotator>-1.jsonl from the labels carried from `old` and the new
    sentences' labels (new-<new>-<annotator>-<batch>.jsonl: {"qid", "labels": {id: label}}
    for the uncarried ids only). Returns the problems (empty: every file complete)."""
    errs = []
    for who, carried in carry(old, new, pools).items():
        fresh: dict[str, dict[int, int]] = {}
        for f in sorted(pools.glob(f"new-{new}-{who}-*.jsonl")):
            for line in f.read_text(encoding="utf-8").splitlines():
                if line.strip():
                    d = json.loads(line)
                    fresh.setdefault(d["qid"], {}).update({int(k): int(v) for k, v in d["labels"].items()})
        lines = []
        for r in load_pool(new, pools):
            got = {**carried.get(r["qid"], {}), **fresh.get(r["qid"], {})}
            missing = [c["id"] for c in r["candidates"] if c["id"] not in got]
            if missing:
                errs.append(f"{who} {r['qid']}: no label for {missing[:8]}")
                continue
            lines.append(json.dumps({"qid": r["qid"], "labels": "".join(
                str(got[c["id"]]) for c in r["candidates"])}) + "\n")
        (pools / f"labels-{new}-{who}-1.jsonl").write_text("".join(lines), encoding="utf-8")
    return errs


def labels_of(corpus: str, pools: Path = POOLS) -> dict[str, list[int]]:
    """Per question, per candidate (id order): the median label of its annotators (the lower
    middle one for an even count: when torn, the lower label, as the rubric asks)."""
    files = list(annotators(corpus, pools).values())
    out: dict[str, list[int]] = {}
    for qid in {q for f in files for q in f}:
        votes = [f[qid] for f in files if qid in f]
        n = len(votes[0])
        if any(len(v) != n for v in votes):
            raise SystemExit(f"{corpus} {qid}: annotators' label lengths differ")
        out[qid] = [sorted(int(v[k]) for v in votes)[(len(votes) - 1) // 2] for k in range(n)]
    return out


def main() -> None:
    ap = argparse.ArgumentParser()
    sub = ap.add_subparsers(dest="cmd", required=True)
    r = sub.add_parser("render")
    r.add_argument("--corpus", required=True)
    r.add_argument("--first", type=int, default=0)
    r.add_argument("--count", type=int, default=10**6)
    r.add_argument("--out", required=True)
    r.add_argument("--only-new-from", default="", help="bracket only the sentences pool FROM's "
                   "labels do not cover (see carry)")
    m = sub.add_parser("merge", help="carried + new labels -> labels-<to>-<annotator>-1.jsonl")
    m.add_argument("--from", dest="old", required=True)
    m.add_argument("--to", dest="new", required=True)
    c = sub.add_parser("check")
    c.add_argument("--corpus", required=True)
    c.add_argument("--labels", required=True)
    c.add_argument("--first", type=int, default=0)
    c.add_argument("--count", type=int, default=0, help="the batch's size: every question labelled")
    s = sub.add_parser("stats")
    s.add_argument("--corpora", default="kernel,git,rust,vim,postgres,debref,zsh")
    args = ap.parse_args()
    if args.cmd == "render":
        rows = load_pool(args.corpus)[args.first:args.first + args.count]
        if args.only_new_from:
            todo = uncarried(args.only_new_from, args.corpus)
            rows = [x for x in rows if todo.get(x["qid"])]
            text = "".join(render(x, todo[x["qid"]]) for x in rows)
            n = sum(len(todo[x["qid"]]) for x in rows)
        else:
            text = "".join(render(x) for x in rows)
            n = sum(len(x["candidates"]) for x in rows)
        Path(args.out).write_text(text, encoding="utf-8")
        print(f"{len(rows)} questions, {n} sentences -> {args.out}")
    elif args.cmd == "merge":
        errs = merge(args.old, args.new)
        print("\n".join(errs) if errs else f"ok: labels-{args.new}-*-1.jsonl complete")
        sys.exit(1 if errs else 0)
    elif args.cmd == "check":
        pool = load_pool(args.corpus)
        labels = read_labels(Path(args.labels))
        batch = pool[args.first:args.first + args.count] if args.count else pool
        errs = check(batch if args.count else pool, labels, complete=bool(args.count))
        print("\n".join(errs) if errs else f"ok: {len(labels)} questions")
        sys.exit(1 if errs else 0)
    else:
        for name in args.corpora.split(","):
            if not (POOLS / f"pool-{name}.jsonl").exists():
                continue
            pool = load_pool(name)
            lab = labels_of(name)
            n = sum(len(r["candidates"]) for r in pool)
            judged = [v for q, v in lab.items()]
            counts = [sum(x.count(k) for x in judged) for k in (0, 1, 2)]
            print(f"{name}: {len(pool)} questions, {n} sentences; judged {len(lab)} questions "
                  f"({len(annotators(name))} annotators): 0/1/2 = {counts[0]}/{counts[1]}/{counts[2]}")


if __name__ == "__main__":
    main()
