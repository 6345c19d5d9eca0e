"""Build the real-document critic cases (issue 9): index a corpus, answer its questions
with the default model as users run it, record every candidate sentence.

    python scripts/make_critic_cases.py index    --corpus git    --work /tmp/trust
    python scripts/make_critic_cases.py generate --corpus git    --work /tmp/trust \
        --questions /work/wt/annot/git.jsonl
    python scripts/make_critic_cases.py cases    --work /tmp/trust --out /work/wt/annot

`index` copies the corpus's files into WORK/corpus/NAME (git: the AsciiDoc .txt manuals
of /usr/share/doc/git-doc; kernel: the files the questions point at plus a fixed sample
of the others under the listed folders of the kernel's documentation sources) and indexes
them with localrag (its default settings, .txt files only) into WORK/data-NAME.

`generate` asks every question through the Assistant (mode always, k=5, the default
model and settings) with the critic wrapped so that all five passages get a candidate
(the real relevance is recorded) and writes one JSON record per question to
WORK/raw-NAME.jsonl: the passages (text, file, lines, the critic's relevance, whether it
holds the key phrase), every candidate's sentences with the critic's label and score, and
the passage sentences the extractive scorer ranks highest plus one at random. It resumes:
questions already in the file are skipped.

`cases` turns the raw records into the unlabelled files for the annotators:
support_cases.jsonl (sentence cases), relevance_cases.jsonl (question/passage cases) and,
apart, support_cases_critic.jsonl (what the critic said, not for the annotators).
Split rule: the question's number odd = dev, even = test; a question's cases share it.
"""

from __future__ import annotations

import argparse
import json
import os
import random
import re
import shutil
import sys
import time
from pathlib import Path

REPO = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(REPO))
os.environ.setdefault("HF_HUB_OFFLINE", "1")

GIT_DOC = Path("/usr/share/doc/git-doc")
KERNEL_DOC = Path("/usr/share/doc/linux-doc-6.1/html/_sources")
KERNEL_FOLDERS = ("userspace-api admin-guide driver-api hwmon filesystems core-api process mm "
                  "x86 i2c input fb bpf dev-tools power usb security PCI block crypto locking "
                  "leds w1 misc-devices scheduler RCU trace").split()
KERNEL_SAMPLE = 150          # files besides the ones the questions point at


def norm_ws(text: str) -> str:
    return " ".join(text.split())


def split_of(qid: str) -> str:
    n = int(re.search(r"(\d+)$", qid).group(1))
    return "dev" if n % 2 else "test"


def load_questions(path: Path) -> list[dict]:
    return [json.loads(line) for line in path.read_text(encoding="utf-8").splitlines()
            if line.strip()]


# --- index ------------------------------------------------------------------------------

def corpus_files(corpus: str, questions: list[dict]) -> tuple[Path, list[str]]:
    if corpus == "git":
        return GIT_DOC, sorted(p.name for p in GIT_DOC.glob("*.txt"))
    wanted = {q["file"] for q in questions}
    others = sorted(str(p.relative_to(KERNEL_DOC)) for f in KERNEL_FOLDERS
                    for p in (KERNEL_DOC / f).rglob("*.txt"))
    others = [o for o in others if o not in wanted]
    random.Random(9).shuffle(others)
    return KERNEL_DOC, sorted(wanted | set(others[:KERNEL_SAMPLE]))


def cmd_index(args) -> None:
    from localrag.assistant import Assistant

    questions = load_questions(args.questions) if args.questions else []
    root, files = corpus_files(args.corpus, questions)
    dest = args.work / "corpus" / args.corpus
    for rel in files:
        target = dest / rel
        target.parent.mkdir(parents=True, exist_ok=True)
        if not target.exists():
            shutil.copyfile(root / rel, target)
    print(f"{len(files)} files in {dest}")
    with Assistant.open(args.work / f"data-{args.corpus}",
                        overrides={"extensions": [".txt"]}) as a:
        a.settings.extensions = [".txt"]
        a.save_settings()
        a.add_root(dest)
        t = time.time()
        report = a.update_index()
        print(report, f"{time.time() - t:.0f} s")


# --- generate -----------------------------------------------------------------------------

class AllPassagesCritic:
    """The real critic, except that every passage counts as relevant, so each of the K
    passages gets a candidate; the real relevance is kept in `last_relevance`."""

    def __init__(self, real) -> None:
        self.real = real
        self.name = real.name
        self.decides_after_search = real.decides_after_search
        self.last_relevance: list[float] = []

    def retrieve_probability(self, question, passages):
        return self.real.retrieve_probability(question, passages)

    def relevance(self, question, passages):
        self.last_relevance = self.real.relevance(question, passages)
        return [1.0] * len(passages)

    def prepare(self, sentences, passages):
        self.real.prepare(sentences, passages)

    def support(self, sentences, passage):
        return self.real.support(sentences, passage)


def cmd_generate(args) -> None:
    from localrag.assistant import Assistant
    from localrag.answering.generate.extract import AnswerScorer, candidate_units
    from localrag.answering.generate.instruct import passage_text
    from localrag.answering.judge.noise import noise_kind
    import numpy as np

    questions = load_questions(args.questions)
    if args.limit:
        questions = questions[: args.limit]
    out = args.work / f"raw-{args.corpus}.jsonl"
    done = set()
    if out.exists():
        done = {json.loads(line)["id"] for line in out.read_text().splitlines() if line.strip()}
    corpus_root = (args.work / "corpus" / args.corpus).resolve()
    rng = random.Random(9)
    with Assistant.open(args.work / f"data-{args.corpus}",
                        overrides={"retrieval_mode": "always",
                                   "max_tokens": args.max_tokens or None}) as a, \
            out.open("a") as fh:
        engine = a._get_engine()
        # the loop as it was before issue 9: a candidate per passage, whole passages,
        # no quotes (these cases are what that loop produced)
        engine.max_candidates, engine.fit_tokens, engine.max_quotes = 5, 0, 0
        critic = AllPassagesCritic(engine.critic)
        engine.critic = critic
        embed = a.embedder.encode
        for q in questions:
            if q["id"] in done:
                continue
            a.new_chat()
            t = time.time()
            answer = a.ask(q["question"], save=False)
            elapsed = time.time() - t
            key = norm_ws(q["key_phrase"]).lower()
            passages = []
            for j, pj in enumerate(answer.passages):
                p = pj.passage
                rel_file = str(Path(p.path).resolve().relative_to(corpus_root))
                passages.append({
                    "n": j, "file": rel_file, "title": p.title, "text": p.text,
                    "start_line": p.start_line, "end_line": p.end_line,
                    "relevance": critic.last_relevance[j] if j < len(critic.last_relevance) else None,
                    "has_key": key in norm_ws(p.text).lower(),
                    "right_file": rel_file == q["file"],
                })
            candidates = []
            for c in engine.last_candidates:
                earlier: list[str] = []
                sents = []
                for s, jd in zip((u.plain for u in c.sentences), c.judgements):
                    sents.append({"text": s, "label": jd.label, "score": jd.score,
                                  "noise": noise_kind(s, question=q["question"], earlier=earlier)})
                    earlier.append(s)
                candidates.append({"passage": c.index, "text": c.text, "total": c.total,
                                   "sentences": sents})
            # passage sentences: the extractive scorer's best 3 and one at random
            units = [(j, u) for j, p in enumerate(passages)
                     for u in candidate_units(p["text"], question=q["question"])]
            picked = []
            if units:
                vecs = np.asarray(embed([q["question"], *[u.text for _, u in units]]))
                scores = AnswerScorer().scores(q["question"], [u.text for _, u in units],
                                               vecs[1:], vecs[0])
                order = sorted(range(len(units)), key=lambda k: -scores[k])
                chosen = order[:3]
                rest = order[3:]
                if rest:
                    chosen.append(rng.choice(rest))
                for rank, k in enumerate(chosen):
                    j, u = units[k]
                    picked.append({"passage": j, "text": u.text, "start": u.start, "end": u.end,
                                   "score": scores[k], "pick": "top" if rank < 3 else "random"})
            record = {"id": q["id"], "split": split_of(q["id"]), "question": q["question"],
                      "file": q["file"], "key_phrase": q["key_phrase"], "kind": q.get("kind"),
                      "elapsed_s": elapsed, "answer": answer.text,
                      "winner": answer.segments[0].citation if answer.segments else None,
                      "passages": passages, "candidates": candidates,
                      "passage_sentences": picked}
            fh.write(json.dumps(record) + "\n")
            fh.flush()
            print(f"{q['id']} {elapsed:5.1f}s top5={any(p['right_file'] for p in passages)} "
                  f"{answer.text[:90]!r}", flush=True)


# --- cases ----------------------------------------------------------------------------------

MAX_MODEL_SENTENCES = 12


def passage_sentences(records: list[dict]) -> None:
    """Re-pick each record's passage sentences with the current quote code (the unit
    splitter and noise filter may have changed since the record was generated): the
    scorer's best 3 and one at random."""
    import numpy as np

    from indexer.embedder import Embedder
    from localrag.answering.generate.extract import AnswerScorer, candidate_units

    embed = Embedder().encode
    rng = random.Random(9)
    for r in records:
        q = r["question"]
        units = [(j, u) for j, p in enumerate(r["passages"])
                 for u in candidate_units(p["text"], question=q)]
        picked = []
        if units:
            vecs = np.asarray(embed([q, *[u.text for _, u in units]]))
            scores = AnswerScorer().scores(q, [u.text for _, u in units], vecs[1:], vecs[0])
            order = sorted(range(len(units)), key=lambda k: -scores[k])
            chosen = order[:3] + ([rng.choice(order[3:])] if order[3:] else [])
            for rank, k in enumerate(chosen):
                j, u = units[k]
                picked.append({"passage": j, "text": u.text, "start": u.start, "end": u.end,
                               "score": scores[k], "pick": "top" if rank < 3 else "random"})
        r["passage_sentences"] = picked


def cmd_cases(args) -> None:
    records = []
    for path in sorted(args.work.glob("raw-*.jsonl")):
        records += [json.loads(line) for line in path.read_text().splitlines() if line.strip()]
    passage_sentences(records)
    sup, meta, rel = [], [], []
    for r in records:
        ps = r["passages"]
        for p in ps:
            rel.append({"id": f"{r['id']}-p{p['n'] + 1}", "split": r["split"],
                        "question": r["question"], "passage_title": p["title"],
                        "passage_text": p["text"], "passage_file": p["file"],
                        "passage_lines": [p["start_line"], p["end_line"]],
                        "hint_has_key_phrase": p["has_key"]})
        # model sentences: one from each candidate first (its first sentence), then the
        # rest in order, distinct texts only, at most MAX_MODEL_SENTENCES per question
        seen: set[str] = set()
        order = []
        for depth in range(8):
            for ci, c in enumerate(r["candidates"]):
                if depth < len(c["sentences"]):
                    order.append((ci, depth))
        n = 0
        for ci, si in order:
            c = r["candidates"][ci]
            s = c["sentences"][si]
            key = " ".join(s["text"].lower().split())
            if key in seen or n >= MAX_MODEL_SENTENCES:
                continue
            seen.add(key)
            n += 1
            p = ps[c["passage"]]
            cid = f"{r['id']}-m{n}"
            sup.append({"id": cid, "split": r["split"], "question": r["question"],
                        "passage_title": p["title"], "passage_text": p["text"],
                        "sentence": s["text"], "source": "model",
                        "previous_sentences": [x["text"] for x in c["sentences"][:si]],
                        "passage_file": p["file"], "passage_lines": [p["start_line"], p["end_line"]]})
            meta.append({"id": cid, "critic_label": s["label"], "critic_score": s["score"],
                         "noise_hint": s["noise"], "candidate": ci, "sentence_index": si})
        for k, x in enumerate(r["passage_sentences"], start=1):
            p = ps[x["passage"]]
            cid = f"{r['id']}-q{k}"
            sup.append({"id": cid, "split": r["split"], "question": r["question"],
                        "passage_title": p["title"], "passage_text": p["text"],
                        "sentence": x["text"], "source": "passage",
                        "previous_sentences": [],
                        "passage_file": p["file"], "passage_lines": [p["start_line"], p["end_line"]]})
            meta.append({"id": cid, "critic_label": "quote", "critic_score": x["score"],
                         "noise_hint": None, "pick": x["pick"], "offsets": [x["start"], x["end"]]})
    args.out.mkdir(parents=True, exist_ok=True)
    for name, rows in (("support_cases.jsonl", sup), ("support_cases_critic.jsonl", meta),
                       ("relevance_cases.jsonl", rel)):
        (args.out / name).write_text("".join(json.dumps(x) + "\n" for x in rows), encoding="utf-8")
    print(f"{len(records)} questions: {len(sup)} sentence cases "
          f"({sum(c['source'] == 'model' for c in sup)} model, "
          f"{sum(c['source'] == 'passage' for c in sup)} passage), {len(rel)} relevance cases")


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("command", choices=("index", "generate", "cases"))
    ap.add_argument("--corpus", choices=("git", "kernel"), default="git")
    ap.add_argument("--work", type=Path, default=Path("/tmp/trust"))
    ap.add_argument("--questions", type=Path)
    ap.add_argument("--out", type=Path, default=Path("/work/wt/annot"))
    ap.add_argument("--limit", type=int, default=0, help="first N questions only")
    ap.add_argument("--max-tokens", type=int, default=0, help="override max_tokens")
    args = ap.parse_args()
    {"index": cmd_index, "generate": cmd_generate, "cases": cmd_cases}[args.command](args)
    return 0


if __name__ == "__main__":
    sys.exit(main())
