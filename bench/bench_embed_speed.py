"""Embedding throughput side by side, in word pieces per second: prints figures, asserts nothing.

    python bench/bench_embed_speed.py [--chunks 256] [--rounds 3] [--fused] [--static] [--bf16]

Real chunk texts (the kernel docs slice of bench/retrieval_data.py, chunked as the index
chunks them) are encoded by each variant in turn, round after round (the machine is
shared and noisy: variants are interleaved and the best round of each is printed):

  main         the layout before issue 19: one batch at a time on every core
  streams      indexer.embedder.thread_layout's default (one thread per batch, a batch
               per core, up to 4)
  fused        (--fused) onnxruntime.transformers' BERT fusion (Attention, SkipLayerNorm,
               BiasGelu) before the same int8 quantisation, with the default layout;
               numerics change, so its cosine to main is printed too
  static       (--static) static int8 quantisation (QDQ, weights per channel, activations
               uint8 with ranges calibrated on 128 other kernel chunks) with the default
               layout: activations need no per-batch scale, so a text's vector no longer
               depends on its batch; its cosine to float32 is printed beside main's.
               Measured (2-core EPYC, 256 chunks, 3 rounds): x0.84 of main's speed
               (onnxruntime runs the QDQ graph slower than dynamic int8), cosine to
               float32 mean 0.937 (min 0.876) against main's 0.994: not used
  bf16         (--bf16) the torch-bf16 engine (indexer.embedder: the default of a new index
               where the CPU has AMX), the default layout; every encode by torch (its
               small-work shortcut, the float32 export, is turned off here); its cosine
               to float32 is printed beside main's. Measured (2-core Xeon with AMX, 256
               chunks, 3 rounds): x2.42 of main's speed (x2.05-2.22 in later runs), cosine
               to float32 mean 0.99995 (min 0.99993) against main's 0.994 (min 0.989)

Vectors of `streams` equal main's (the same batches, only run at once).
"""

from __future__ import annotations

import argparse
import os
import statistics
import sys
import tempfile
import time
from pathlib import Path

os.environ.setdefault("HF_HUB_OFFLINE", "1")
sys.path.insert(0, str(Path(__file__).resolve().parents[1]))


def real_chunks(embedder, n: int) -> list[str]:
    from bench.retrieval_data import corpus
    from indexer.chunker import chunk_document, embedding_text, sizer_for
    from indexer.parsers import parse_bytes

    sizer = sizer_for(embedder, 0)
    texts: list[str] = []
    for f in corpus("kernel", every=8).files:
        doc = parse_bytes(f.read_bytes(), ext=".txt", name=f.name)
        texts += [embedding_text(c.title, c.text)
                  for c in chunk_document(doc, file_name=f.name, chunk_words=200, sizer=sizer)]
        if len(texts) >= n:
            break
    return texts[:n]


def cpu_session(path: Path, threads: int):
    """An onnxruntime session laid out as the Embedder lays out one stream."""
    import onnxruntime as ort

    options = ort.SessionOptions()
    options.intra_op_num_threads = threads
    options.inter_op_num_threads = 1
    options.add_session_config_entry("session.intra_op.allow_spinning", "0")
    options.log_severity_level = 3
    return ort.InferenceSession(str(path), options, providers=["CPUExecutionProvider"])


def fused_session(embedder, threads: int):
    """The fused, int8-quantised export, written once into a temporary folder."""
    import onnx
    import onnxruntime as ort
    from onnxruntime.quantization import QuantType, quantize_dynamic
    from onnxruntime.transformers import optimizer

    from indexer.embedder import Embedder

    plain = Embedder(backend="onnx")
    plain._load_onnx()
    tmp = Path(tempfile.mkdtemp(prefix="fused_"))
    model = optimizer.optimize_model(str(plain.onnx_path()), model_type="bert", num_heads=12,
                                     hidden_size=embedder.dim, opt_level=1, use_gpu=False)
    model.save_model_to_file(str(tmp / "fused.onnx"))
    quantize_dynamic(str(tmp / "fused.onnx"), str(tmp / "fused.int8.onnx"), weight_type=QuantType.QInt8,
                     per_channel=True, extra_options={"DefaultTensorType": onnx.TensorProto.FLOAT})
    return cpu_session(tmp / "fused.int8.onnx", threads)


def static_session(embedder, threads: int, calibration: list[str]):
    """The float32 export quantised statically, calibrated on `calibration` texts."""
    import numpy as np
    import onnxruntime as ort
    from onnxruntime.quantization import (CalibrationDataReader, CalibrationMethod, QuantFormat,
                                          QuantType, quantize_static)

    from indexer.embedder import Embedder

    plain = Embedder(backend="onnx")
    plain._load_onnx()
    tok = embedder.tokenizer()

    class Reader(CalibrationDataReader):
        def __init__(self) -> None:
            self.feeds = []
            for text in calibration:
                ids = tok.encode(text).ids[:embedder.window]
                x = np.array([ids], dtype=np.int64)
                self.feeds.append({"input_ids": x, "attention_mask": np.ones_like(x),
                                   "token_type_ids": np.zeros_like(x)})
            self.feeds = iter(self.feeds)

        def get_next(self):  # noqa: ANN201
            return next(self.feeds, None)

    tmp = Path(tempfile.mkdtemp(prefix="static_"))
    quantize_static(str(plain.onnx_path()), str(tmp / "static.int8.onnx"), Reader(),
                    quant_format=QuantFormat.QDQ, per_channel=True, weight_type=QuantType.QInt8,
                    activation_type=QuantType.QUInt8, calibrate_method=CalibrationMethod.MinMax,
                    op_types_to_quantize=["MatMul", "Gemm"])
    return cpu_session(tmp / "static.int8.onnx", threads)


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--chunks", type=int, default=256)
    ap.add_argument("--rounds", type=int, default=3)
    ap.add_argument("--fused", action="store_true")
    ap.add_argument("--static", action="store_true")
    ap.add_argument("--bf16", action="store_true")
    args = ap.parse_args()

    import numpy as np

    from indexer.embedder import Embedder
    from indexer.model_env import usable_cpus

    variants = {"main": Embedder(backend="onnx-int8", streams=1),
                "streams": Embedder(backend="onnx-int8")}
    texts = real_chunks(variants["main"], args.chunks + (128 if args.static else 0))
    texts, calibration = texts[:args.chunks], texts[args.chunks:]
    pieces = sum(len(e.ids) for e in variants["main"].tokenizer().encode_batch(texts)) + 2 * len(texts)
    print(f"{len(texts)} kernel chunks, {pieces} word pieces, {usable_cpus()} cores; layouts: "
          + ", ".join(f"{n} {e.streams}x{e.threads_per_stream}" for n, e in variants.items()), flush=True)
    if args.fused:
        fused = Embedder(backend="onnx-int8")
        fused._load_onnx()
        fused._session = fused_session(fused, fused.threads_per_stream)
        variants["fused"] = fused
    if args.static:
        static = Embedder(backend="onnx-int8")
        static._load_onnx()
        static._session = static_session(static, static.threads_per_stream, calibration)
        variants["static"] = static
    if args.bf16:
        import indexer.embedder as embedder_module

        embedder_module.SMALL_WORK = 0       # every encode by torch, as an index's batches are
        variants["bf16"] = Embedder(backend="torch-bf16")
    vectors = {}
    for name, emb in variants.items():       # warm up (and load) outside the timing
        vectors[name] = emb.encode(texts[:64])
    times: dict[str, list[float]] = {n: [] for n in variants}
    for r in range(args.rounds):
        for name, emb in variants.items():
            t = time.perf_counter()
            vectors[name] = emb.encode(texts, batch_size=64)
            times[name].append(time.perf_counter() - t)
        print(f"round {r + 1}: " + ", ".join(f"{n} {pieces / times[n][-1]:.0f}" for n in variants),
              flush=True)
    base = min(times["main"])
    exact = Embedder(backend="onnx").encode(texts) if args.static or args.bf16 else None
    for name in variants:
        cos = (vectors[name] * vectors["main"]).sum(axis=1)
        line = (f"{name:8s} best {pieces / min(times[name]):6.0f} wp/s  median "
                f"{pieces / statistics.median(times[name]):6.0f} wp/s  x{base / min(times[name]):.2f} "
                f"vs main (best rounds)  cosine to main: mean {float(np.mean(cos)):.5f} "
                f"min {float(np.min(cos)):.5f}")
        if exact is not None:
            c32 = (vectors[name] * exact).sum(axis=1)
            line += f"; to float32: mean {float(np.mean(c32)):.5f} min {float(np.min(c32)):.5f}"
        print(line)


if __name__ == "__main__":
    main()
