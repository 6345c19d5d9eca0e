"""One-time export of a sentence-transformers model to ONNX (optionally int8), for the
onnxruntime backend of the Embedder. Needs torch and transformers; queries do not."""

from __future__ import annotations

import os
import tempfile
from pathlib import Path


def export_onnx(model_dir: str, dst: Path, *, quantize: bool) -> Path:
    """Write `dst` atomically: the transformer's last hidden state for (input_ids,
    attention_mask, token_type_ids); pooling and normalising happen in the Embedder.
    With `quantize`, weights are int8 per output channel (dynamic quantisation;
    activations stay float), the variant whose vectors stay closest to float32."""
    import torch
    from transformers import AutoModel

    from indexer.model_env import quiet_transformers

    quiet_transformers()
    dst = Path(dst)
    dst.parent.mkdir(parents=True, exist_ok=True)
    model = AutoModel.from_pretrained(model_dir, local_files_only=True, attn_implementation="eager").eval()

    class Hidden(torch.nn.Module):
        def __init__(self, inner: torch.nn.Module) -> None:
            super().__init__()
            self.inner = inner

        def forward(self, input_ids, attention_mask, token_type_ids):  # noqa: ANN001, ANN201
            return self.inner(input_ids=input_ids, attention_mask=attention_mask,
                              token_type_ids=token_type_ids).last_hidden_state

    ids = torch.ones(2, 16, dtype=torch.long)
    mask = torch.ones(2, 16, dtype=torch.long)
    mask[1, 9:] = 0    # padding in the example, so the traced graph handles it
    names = ["input_ids", "attention_mask", "token_type_ids"]
    with tempfile.TemporaryDirectory(dir=dst.parent) as tmp:
        plain = Path(tmp) / "model.onnx"
        import warnings

        with warnings.catch_warnings(), torch.no_grad():
            warnings.simplefilter("ignore")
            torch.onnx.export(Hidden(model), (ids, mask, torch.zeros_like(ids)), str(plain),
                              input_names=names, output_names=["last_hidden_state"],
                              dynamic_axes={n: {0: "batch", 1: "tokens"} for n in names + ["last_hidden_state"]},
                              opset_version=17, dynamo=False)
        result = plain
        if quantize:
            import logging

            from onnxruntime.quantization import QuantType, quantize_dynamic

            logging.getLogger().setLevel(logging.ERROR)   # "consider pre-processing" chatter
            result = Path(tmp) / "model.int8.onnx"
            quantize_dynamic(str(plain), str(result), weight_type=QuantType.QInt8, per_channel=True)
        part = dst.with_suffix(f".{os.getpid()}.part")
        os.replace(result, part)
        os.replace(part, dst)
    return dst
