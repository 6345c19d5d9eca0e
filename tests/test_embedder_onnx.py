"""The onnxruntime embedding backends against sentence-transformers itself (real model)."""

from __future__ import annotations

import os
import subprocess
import sys
import textwrap

import numpy as np
import pytest

from indexer.embedder import Embedder

TEXTS = ["How do I allocate memory in an interrupt handler?",
         "git rebase --onto moves a branch to a new base",
         "short",
         " ".join(["The watchdog timer resets the board when software hangs."] * 60)]   # past 512


@pytest.fixture(scope="module")
def torch_vectors():
    return Embedder(backend="torch").encode(TEXTS)


def test_onnx_float32_matches_torch(torch_vectors):
    vecs = Embedder(backend="onnx").encode(TEXTS, batch_size=2)   # batches mix lengths: padding
    # Same graph and weights in float32; kernels differ in summation order only, so unit
    # vectors agree to float32 rounding accumulated over 6 layers (observed ~1e-6).
    assert np.all(np.sum(vecs * torch_vectors, axis=1) > 1 - 1e-4)
    assert np.allclose(np.linalg.norm(vecs, axis=1), 1, atol=1e-5)


def test_onnx_int8_stays_close_to_torch(torch_vectors, embedder):
    assert embedder.engine == "onnx-int8"            # what localrag uses by default
    vecs = embedder.encode(TEXTS)
    cos = np.sum(vecs * torch_vectors, axis=1)
    # int8 per-channel weights: measured cosine to float32 0.98-0.999 on real chunks
    # (bench/bench_retrieval.py measures the recall cost); 0.95 catches a broken export
    assert np.all(cos > 0.95), cos
    # retrieval order is kept on a clear case
    q = embedder.encode(["memory allocation in interrupt context"])[0]
    assert int(np.argmax(vecs @ q)) == 0


def test_a_query_process_never_imports_torch(make_index, tmp_path):
    root = tmp_path / "docs"
    root.mkdir()
    (root / "pump.md").write_text("# Pumps\n\nThe bilge pump runs every hour.\n")
    idx = make_index()
    idx.add_root(root)
    idx.update()
    code = textwrap.dedent(f"""
        import sys
        from indexer.index import Index
        from indexer.options import IndexOptions
        idx = Index({str(idx.index_dir)!r}, options=IndexOptions())
        hits = idx.search("bilge pump schedule", k=1)
        print(hits[0].path.endswith("pump.md"), "torch" in sys.modules, "sentence_transformers" in sys.modules)
    """)
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=300,
                         env=dict(os.environ), check=True).stdout.split()
    assert out == ["True", "False", "False"]


def test_a_changed_engine_reindexes_and_keeps_old_chunks_meanwhile(make_index, tmp_path, index_options):
    from indexer.index import Index

    root = tmp_path / "docs"
    root.mkdir()
    for i in range(3):
        (root / f"n{i}.md").write_text(f"# Note {i}\n\nThe heron number {i} fishes at dawn.\n")
    first = Index(tmp_path / "index", options=index_options, embedder=Embedder(backend="onnx"))
    first.add_root(root)
    first.update()
    old_ids = {r[0] for r in first.store.conn.execute("SELECT id FROM chunks")}
    first.close()
    second = Index(tmp_path / "index", options=index_options, embedder=Embedder(backend="onnx-int8"))
    second._check_chunking()                 # what update() does first: files marked stale
    assert {r[0] for r in second.store.conn.execute("SELECT id FROM chunks")} == old_ids
    assert second.search("heron", k=1)       # still searchable before the re-index
    report = second.update()
    assert report.updated == 3
    new_ids = {r[0] for r in second.store.conn.execute("SELECT id FROM chunks")}
    assert new_ids and not new_ids & old_ids
    second.close()


def test_batches_run_at_once_give_the_vectors_of_one_at_a_time(embedder):
    """thread_layout's streams change how batches are scheduled, not the vectors."""
    from indexer.embedder import thread_layout
    from indexer.model_env import usable_cpus

    words = "the kernel maps each page of memory to a frame and the scheduler picks a task".split()
    texts = [" ".join(words[: 3 + i % 14]) * (1 + i % 9) for i in range(120)]   # many batches
    one = Embedder(streams=1)
    two = Embedder(streams=2)
    assert one.streams == 1 and two.streams == min(2, usable_cpus())
    a = one.encode(texts, batch_size=4)
    b = two.encode(texts, batch_size=4)
    # measured: bit-identical on 2 cores (the int8 matrix products are exact integer
    # sums; the float operators do not split their sums by thread); 1e-5 leaves room
    # for another CPU's kernels, far below the ~5e-3 an int8 batch change moves a vector
    assert np.abs(a - b).max() < 1e-5
    assert thread_layout(16, 1) == (1, 16) and thread_layout(16, 4) == (4, 4)
    assert thread_layout(1, 4) == (1, 1)
