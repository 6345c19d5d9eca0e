"""Issue 17 experiment: a "model soup" of relevance models. Writes a model, prints nothing
but where it went.

    python bench/relevance_soup.py OUT_DIR CKPT,CKPT,...

Averages the weights of fine-tuned relevance models (the torch checkpoints that
scripts/train_relevance.py leaves in its --ckpt folder, model.pt; all bi-encoders from the
same MiniLM start) into one model of the same size and cost, and exports it as the shipped
one is (int8 ONNX with its relevance.json, scale and shift averaged too). Measure it with
bench/relevance_pools.py --models indexer/data/relevance,OUT_DIR and
bench/passage_verdict_floor.py --model-dir OUT_DIR. Stop 58 averaged the shipped model with
the two fold models of README's "Fitted where the model reads as on a new corpus": not kept.
"""

from __future__ import annotations

import json
import os
import sys
from pathlib import Path

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE.parent))
sys.path.insert(0, str(HERE.parent / "scripts"))
os.environ.setdefault("HF_HUB_OFFLINE", "1")


def main() -> None:
    if len(sys.argv) != 3:
        raise SystemExit(__doc__)
    import torch

    import train_relevance
    from indexer.embedder import default_embedding_model_dir
    from indexer.relevance_model import MODEL_DIR

    out, ckpts = Path(sys.argv[1]), [Path(p) for p in sys.argv[2].split(",")]
    states = [torch.load(c, map_location="cpu") for c in ckpts]
    mean = {k: sum(sd[k].float() for sd in states) / len(states) if states[0][k].is_floating_point()
            else states[0][k] for k in states[0]}
    base = Path(default_embedding_model_dir())
    model = train_relevance.build("bi", base)
    model.load_state_dict(mean)
    info = json.loads((MODEL_DIR / "relevance.json").read_text())
    info["soup"] = [str(c) for c in ckpts]
    for name, p in model.named_parameters():
        if name in ("scale", "shift"):
            info[name] = float(p)
    work = HERE / "out" / "soup-export"
    work.mkdir(parents=True, exist_ok=True)
    train_relevance.export(model, "bi", base, out, info, work)
    print(f"wrote {out}")


if __name__ == "__main__":
    main()
