"""The torch-bf16 embedding engine (the default for a new index on a CPU with AMX) and the
automatic choice of engine, with the real model. bfloat16 runs on any x86-64 CPU (emulated
where the CPU lacks it: slower, the same numbers), so these tests run everywhere."""

from __future__ import annotations

import os
import subprocess
import sys
import textwrap

import numpy as np
import pytest

import indexer.embedder as embedder_module
from indexer.embedder import Embedder, auto_backend, bf16_matrix_units
from indexer.index import Index

TEXTS = ["How do I allocate memory in an interrupt handler?",
         "git rebase --onto moves a branch to a new base",
         "short",
         " ".join(["The watchdog timer resets the board when software hangs."] * 60)]   # past 512

XEON_FLAGS = ("processor\t: 0\nflags\t\t: fpu vme sse2 avx2 avx512f avx512_bf16 amx_bf16 amx_tile "
              "amx_int8\n")
EPYC_FLAGS = "processor\t: 0\nflags\t\t: fpu vme sse2 avx2 avx512f avx512_bf16\n"


@pytest.fixture(scope="module")
def float32_vectors():
    return Embedder(backend="torch").encode(TEXTS)


def test_bf16_matrix_units_are_read_from_the_cpu_flags():
    assert bf16_matrix_units(XEON_FLAGS)
    assert not bf16_matrix_units(EPYC_FLAGS)          # AVX-512 BF16 alone: not measured, not chosen
    assert not bf16_matrix_units("no flags line here\n")


def test_a_new_index_gets_bf16_only_where_the_cpu_has_amx(monkeypatch):
    monkeypatch.delenv("LOCALRAG_EMBED_BACKEND", raising=False)
    monkeypatch.setattr(embedder_module, "bf16_matrix_units", lambda cpuinfo=None: True)
    assert auto_backend() == "torch-bf16"
    assert Embedder().backend == "torch-bf16" and Embedder().automatic
    monkeypatch.setattr(embedder_module, "bf16_matrix_units", lambda cpuinfo=None: False)
    assert auto_backend() == "onnx-int8"
    monkeypatch.setenv("LOCALRAG_EMBED_BACKEND", "torch-bf16")      # the person's choice wins
    chosen = Embedder()
    assert chosen.backend == "torch-bf16" and not chosen.automatic
    assert not chosen.follow("onnx-int8") and chosen.backend == "torch-bf16"


def test_bf16_vectors_stay_at_float32s(float32_vectors, monkeypatch):
    monkeypatch.setattr(embedder_module, "SMALL_WORK", 0)       # every encode by torch bf16
    emb = Embedder(backend="torch-bf16")
    vecs = emb.encode(TEXTS, batch_size=2)                     # batches mix lengths: padding
    assert emb._bf16 is not None and emb.engine == "torch-bf16"
    # oneDNN's primitive cache is bounded (ONEDNN_CACHE): its default grew an index run by GBs
    assert os.environ.get("ONEDNN_PRIMITIVE_CACHE_CAPACITY")
    cos = np.sum(vecs * float32_vectors, axis=1)
    # bfloat16 keeps 8 bits of mantissa: measured cosine to float32 0.99993-0.99998 on 256
    # real kernel chunks (bench/bench_embed_speed.py --bf16), int8 0.989-0.999. 0.999 is
    # above anything int8 gives and far below bfloat16's measured spread
    assert np.all(cos > 0.999), cos
    assert np.allclose(np.linalg.norm(vecs, axis=1), 1, atol=1e-5)
    q = emb.encode(["memory allocation in interrupt context"])[0]
    assert int(np.argmax(vecs @ q)) == 0


def test_small_work_runs_the_float32_export_without_torch(float32_vectors):
    emb = Embedder(backend="torch-bf16")
    vecs = emb.encode(TEXTS)                   # about 600 word pieces: under SMALL_WORK
    assert emb._bf16 is None                   # the bfloat16 model was never loaded
    # the float32 export: the same graph and weights as torch (see test_embedder_onnx)
    assert np.all(np.sum(vecs * float32_vectors, axis=1) > 1 - 1e-4)


def _notes(root, n=3):
    root.mkdir()
    for i in range(n):
        (root / f"n{i}.md").write_text(f"# Note {i}\n\nThe heron number {i} fishes at dawn.\n")


def test_an_automatic_embedder_keeps_the_engine_an_index_was_built_with(tmp_path, index_options,
                                                                        monkeypatch):
    _notes(tmp_path / "docs")
    first = Index(tmp_path / "index", options=index_options, embedder=Embedder(backend="onnx-int8"))
    first.add_root(tmp_path / "docs")
    first.update()
    ids = {r[0] for r in first.store.conn.execute("SELECT id FROM chunks")}
    first.close()
    # the same index opened on a machine whose default is now torch-bf16 (a CPU with AMX)
    monkeypatch.delenv("LOCALRAG_EMBED_BACKEND", raising=False)
    monkeypatch.setattr(embedder_module, "auto_backend", lambda: "torch-bf16")
    again = Index(tmp_path / "index", options=index_options, embedder=Embedder())
    assert again.embedder.engine == "onnx-int8"
    report = again.update()
    assert report.updated == 0 and {r[0] for r in again.store.conn.execute("SELECT id FROM chunks")} == ids
    again.close()
    # a new index on that machine is built with torch-bf16
    fresh = Index(tmp_path / "index2", options=index_options, embedder=Embedder())
    assert fresh.embedder.engine == "torch-bf16"
    fresh.close()


def test_a_bf16_index_is_searched_by_a_process_that_never_imports_torch(tmp_path, index_options,
                                                                        monkeypatch):
    monkeypatch.setattr(embedder_module, "SMALL_WORK", 0)      # the chunks by torch bf16
    root = tmp_path / "docs"
    _notes(root)
    (root / "pump.md").write_text("# Pumps\n\nThe bilge pump runs every hour.\n")
    idx = Index(tmp_path / "index", options=index_options, embedder=Embedder(backend="torch-bf16"))
    idx.add_root(root)
    idx.update()
    assert idx.embedder._bf16 is not None
    assert idx.status().embedding_engine == "torch-bf16"      # `localrag status` says so
    idx.close()
    code = textwrap.dedent(f"""
        import sys
        from indexer.index import Index
        from indexer.options import IndexOptions
        idx = Index({str(tmp_path / "index")!r}, options=IndexOptions(), one_shot=True)
        hits = idx.search("bilge pump schedule", k=1)
        print(hits[0].path.endswith("pump.md"), idx.embedder.engine, "torch" in sys.modules)
    """)
    env = {k: v for k, v in os.environ.items() if k != "LOCALRAG_EMBED_BACKEND"}   # automatic
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=300,
                         env=env, check=True).stdout.split()
    assert out == ["True", "torch-bf16", "False"]


def test_once_loaded_the_bf16_model_embeds_small_work_too(monkeypatch):
    emb = Embedder(backend="torch-bf16")
    emb._load_bf16()                       # as an index's first large batch loads it
    monkeypatch.setattr(emb, "_load_query_session", lambda: pytest.fail("float32 export used"))
    vecs = emb.encode(TEXTS[:2])
    assert vecs.shape == (2, 384) and np.allclose(np.linalg.norm(vecs, axis=1), 1, atol=1e-5)


def test_a_running_process_takes_the_engine_another_moved_the_index_to(tmp_path, index_options,
                                                                       monkeypatch):
    """A watcher (automatic embedder, open for hours) must not write its engine back over
    the one `LOCALRAG_EMBED_BACKEND=... localrag index` moved the index to: that would mark
    every file stale twice and lose the move."""
    _notes(tmp_path / "docs")
    monkeypatch.delenv("LOCALRAG_EMBED_BACKEND", raising=False)
    monkeypatch.setattr(embedder_module, "auto_backend", lambda: "onnx-int8")
    watcher_side = Index(tmp_path / "index", options=index_options, embedder=Embedder())
    watcher_side.add_root(tmp_path / "docs")
    watcher_side.update()
    assert watcher_side.engine() == "onnx-int8"
    watcher_side.search("heron", k=1)                   # its int8 session is loaded and used
    mover = Index(tmp_path / "index", options=index_options, embedder=Embedder(backend="torch-bf16"))
    assert mover.update().updated == 3                  # moved: every file embedded again
    moved = mover.store.get_meta("chunk_words")
    mover.close()
    report = watcher_side.update()                      # the watcher's next update
    assert report.updated == 0
    assert watcher_side.store.get_meta("chunk_words") == moved and watcher_side.engine() == "torch-bf16"
    assert watcher_side.embedder.engine == "torch-bf16"
    assert watcher_side.search("heron number 2", k=1)   # and it searches with the new engine
    watcher_side.close()
