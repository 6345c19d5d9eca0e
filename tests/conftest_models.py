"""Session fixtures for the real-llama.cpp model tests: the tiny Self-RAG test GGUF
(written by scripts/make_test_gguf.py into a temporary folder, once per session) and the
default SmolLM2 model. Import the fixtures by name in a test module:

    from conftest_models import tiny_gguf, tiny_model  # noqa: F401  (pytest fixtures)
"""

from __future__ import annotations

import importlib.util
from collections.abc import Iterator
from pathlib import Path

import pytest

REPO = Path(__file__).resolve().parent.parent
THREADS = 1   # the test machines have 2 shared cores; llama.cpp threads spin-wait


def _make_test_gguf_module():
    spec = importlib.util.spec_from_file_location("make_test_gguf", REPO / "scripts" / "make_test_gguf.py")
    assert spec and spec.loader
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


@pytest.fixture(scope="session")
def test_gguf_factory(tmp_path_factory):
    """build(dtype=..., reflection=...) -> Path; each variant is written once."""
    folder = tmp_path_factory.mktemp("gguf")
    writer = _make_test_gguf_module()
    built: dict[tuple[str, str], Path] = {}

    def build(*, dtype: str = "f32", reflection: str = "all") -> Path:
        key = (dtype, reflection)
        if key not in built:
            built[key] = writer.write_test_gguf(
                folder / f"selfrag-tiny-{dtype}-{reflection}.gguf", dtype=dtype, reflection=reflection)
        return built[key]

    return build


@pytest.fixture(scope="session")
def tiny_gguf(test_gguf_factory) -> Path:
    """Tiny random-weight llama GGUF with the Llama 2 vocabulary + 16 Self-RAG tokens (f32)."""
    return test_gguf_factory()


@pytest.fixture(scope="session")
def tiny_model(tiny_gguf) -> Iterator:
    from models.loader import load_model

    model = load_model(tiny_gguf, n_ctx=1024, n_threads=THREADS)
    yield model
    model.close()


@pytest.fixture(scope="session")
def smollm2_path() -> Path:
    from models.loader import default_model_path

    return default_model_path()


@pytest.fixture(scope="session")
def smollm2_model(smollm2_path, model_cache_dir) -> Iterator:
    """SmolLM2 as localrag runs it on the CPU: from its Q8_0 copy (models/cpu_copy.py)."""
    from models.loader import load_model

    model = load_model(smollm2_path, n_ctx=2048, n_threads=THREADS, cpu_copy_dir=model_cache_dir)
    yield model
    model.close()
