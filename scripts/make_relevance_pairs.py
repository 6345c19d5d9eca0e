"""Labelled (question, passage) and (question, sentence) pairs for the relevance model,
from the TRAINING corpora only (kernel, git): the corpora left out (postgres, debref)
never contribute a pair.

    python scripts/make_relevance_pairs.py            # -> bench/out/relevance/pairs.jsonl

Sources of labels:
- annotated questions (bench/data/retrieval/train-*.jsonl, heldout-*.jsonl, train2-*.jsonl: written by
  annotator sessions from the rubric, each with the file and the verbatim key phrase that
  answers it). Positive: the chunk of that file holding the key phrase, and the sentence
  holding it. Negatives: the chunks localrag's own hybrid search ranks highest that do not
  hold the key phrase (hard negatives; a chunk of the answering file next to the answer
  is left out, since it may answer too), two random chunks, and the other sentences of the
  answering chunk and of the best negative.
- relabelled hard negatives (bench/data/relevance/judged.jsonl, if present): an
  annotator's verdict on a hard negative overrides the rule above.
- exact lookups made from the index (a rare identifier of a chunk as the query; the
  chunks holding it are positive, the best-ranked others negative), so the model learns
  that an exact rare term matters.

Needs the indexes built by bench/bench_retrieval.py --build-only (bench/out/retrieval).
"""

from __future__ import annotations

import argparse
import json
import random
import re
import sys
from pathlib import Path

REPO = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(REPO))
sys.path.insert(0, str(REPO / "bench"))

from retrieval_data import DATA, OUT, Question, corpus, norm  # noqa: E402

OUT_DIR = REPO / "bench" / "out" / "relevance"   # derived, not committed: the labels are the question sets
TRAIN_CORPORA = ("kernel", "git")
HARD = 6          # hard negatives per question
RANDOM = 3        # easy negatives: a chunk of another file
SENT_NEG = 3      # negative sentences from the answering chunk
IDENT = re.compile(r"^(?=.*[a-z])(?=.*[_.\-/]|.*\d|.*[a-z][A-Z])[A-Za-z][\w.\-/]{3,40}[A-Za-z0-9]$")


def training_questions(name: str) -> list[Question]:
    out = []
    for f in (f"train-{name}.jsonl", f"heldout-{name}.jsonl", f"train2-{name}.jsonl"):
        if not (DATA / f).exists():
            continue
        for line in (DATA / f).read_text(encoding="utf-8").splitlines():
            if line.strip():
                d = json.loads(line)
                out.append(Question(d["id"], d["question"], d["file"], d["key_phrase"], d.get("kind", "")))
    return out


def index_dir(name: str) -> Path:
    base = OUT / name
    cands = sorted(p for p in base.glob("data*") if (p / "build.json").exists())
    if not cands:
        raise SystemExit(f"no index for {name}: run bench/bench_retrieval.py --corpora {name} --build-only")
    return cands[0]


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--exact-per-corpus", type=int, default=80)
    ap.add_argument("--seed", type=int, default=17)
    ap.add_argument("--corpora", default=",".join(TRAIN_CORPORA))
    ap.add_argument("--out", default=str(OUT_DIR / "pairs.jsonl"))
    args = ap.parse_args()
    from bench_retrieval import LocalIndex

    from indexer import search
    from localrag.answering.generate.extract import sentence_spans

    rng = random.Random(args.seed)
    judged = {}
    jpath = REPO / "bench" / "data" / "relevance" / "judged.jsonl"
    if jpath.exists():
        for line in jpath.read_text().splitlines():
            if line.strip():
                d = json.loads(line)
                judged[(d["qid"], d["chunk_key"])] = d["label"]
    pairs = []
    for name in args.corpora.split(","):
        if name not in TRAIN_CORPORA:
            raise SystemExit(f"{name} is not a training corpus ({', '.join(TRAIN_CORPORA)})")
        local = LocalIndex(index_dir(name), "onnx-int8")
        rows = local.idx.store.conn.execute(
            "SELECT c.id, f.path, c.title, c.text FROM chunks c JOIN files f ON f.id = c.file_id ORDER BY c.id"
        ).fetchall()
        by_id = {r[0]: r for r in rows}
        ids = list(by_id)
        qs = training_questions(name)
        vecs = [local.idx.embedder.encode([q.question])[0] for q in qs]
        n_q = 0
        for q, v in zip(qs, vecs):
            key = norm(q.key_phrase)
            pos = [r for r in rows if local.rel(r[1]) == q.file and key in norm(r[3])]
            if not pos:
                continue   # the phrase straddles two chunks: no clean positive
            n_q += 1
            pos_ids = {r[0] for r in pos}
            dense, lexical = search.scored_rankings(local.vectors, v, q.question, 50)
            fused = [cid for cid, _ in search.fuse(dense, lexical)]
            chunk_key = lambda r: f"{local.rel(r[1])}#{r[0]}"  # noqa: E731
            for r in pos:
                pairs.append(dict(qid=q.id, corpus=name, kind="passage", query=q.question,
                                  title=r[2], text=r[3], label=1, source="key phrase"))
            negs = []
            for cid in fused:
                if cid in pos_ids:
                    continue
                r = by_id.get(cid)
                if r is None:
                    continue
                verdict = judged.get((q.id, chunk_key(r)))
                if verdict is None:
                    if key in norm(r[3]):
                        continue
                    if local.rel(r[1]) == q.file and any(abs(cid - p) <= 1 for p in pos_ids):
                        continue
                    verdict = 0
                negs.append((r, verdict))
                if len(negs) == HARD:
                    break
            for cid in rng.sample(ids, RANDOM):
                if cid not in pos_ids and local.rel(by_id[cid][1]) != q.file:
                    negs.append((by_id[cid], 0))
            for r, label in negs:
                pairs.append(dict(qid=q.id, corpus=name, kind="passage", query=q.question,
                                  title=r[2], text=r[3], label=int(label),
                                  source="judged" if (q.id, chunk_key(r)) in judged else "hard negative"))
            # sentences: the answering one, others of its chunk, the best negative's best
            r = pos[0]
            sents = sentence_spans(r[3])
            good = [s for s in sents if key in norm(s.text)]
            if good:
                pairs.append(dict(qid=q.id, corpus=name, kind="sentence", query=q.question,
                                  title=r[2], text=good[0].text, label=1, source="key phrase"))
                others = [s for s in sents if key not in norm(s.text) and len(s.text.split()) >= 4
                          and not set(norm(s.text).split()) >= set(key.split())]
                for s in rng.sample(others, min(SENT_NEG, len(others))):
                    pairs.append(dict(qid=q.id, corpus=name, kind="sentence", query=q.question,
                                      title=r[2], text=s.text, label=0, source="same chunk"))
            if negs:
                r0 = negs[0][0]
                ns = [s for s in sentence_spans(r0[3]) if len(s.text.split()) >= 4 and key not in norm(s.text)]
                for s in ns[:2]:
                    pairs.append(dict(qid=q.id, corpus=name, kind="sentence", query=q.question,
                                      title=r0[2], text=s.text, label=0, source="hard negative chunk"))
        # exact lookups: rare identifiers of the index as queries
        df: dict[str, set[int]] = {}
        for cid, _path, _title, text in rows:
            for w in set(re.findall(r"[A-Za-z][\w.\-/]{3,40}[A-Za-z0-9]", text)):
                if IDENT.match(w) and not re.fullmatch(r"[0-9a-f]{7,}", w):   # no bare hashes
                    df.setdefault(w, set()).add(cid)
        rare = sorted(w for w, s in df.items() if len(s) <= 2)
        rng.shuffle(rare)
        made = 0
        for w in rare:
            if made >= args.exact_per_corpus:
                break
            form = rng.choice(["{}", "{}", "what is {}", "{} meaning", "how do I use {}"])
            query = form.format(w)
            v = local.idx.embedder.encode([query])[0]
            dense, lexical = search.scored_rankings(local.vectors, v, query, 30)
            fused = [cid for cid, _ in search.fuse(dense, lexical)]
            holders = df[w]
            negs = [cid for cid in fused if cid not in holders][:4]
            if not negs:
                continue
            made += 1
            for cid in holders:
                pairs.append(dict(qid=f"{name}-ident-{made:03d}", corpus=name, kind="passage", query=query,
                                  title=by_id[cid][2], text=by_id[cid][3], label=1, source="exact term"))
            for cid in negs:
                pairs.append(dict(qid=f"{name}-ident-{made:03d}", corpus=name, kind="passage", query=query,
                                  title=by_id[cid][2], text=by_id[cid][3], label=0, source="exact term absent"))
        print(f"{name}: {n_q} questions with a clean positive of {len(qs)}, {made} exact lookups")
        local.idx.close()
    OUT_DIR.mkdir(parents=True, exist_ok=True)
    with open(args.out, "w", encoding="utf-8") as fh:
        for p in pairs:
            fh.write(json.dumps(p, ensure_ascii=False) + "\n")
    pos = sum(p["label"] for p in pairs)
    print(f"{len(pairs)} pairs ({pos} relevant, {len(pairs) - pos} not) -> {args.out}")


if __name__ == "__main__":
    main()
