"""The cross-encoder experiment's runtime (issue 17): scores (question, passage) pairs with
an int8 ONNX MiniLM-L6 cross-encoder made by scripts/train_reranker.py. Not part of the
product: trained here for an hour on 5,000 pairs it stayed at chance level (bench figures
in the README), so localrag ships the learned ranker (indexer/learned_rank.py) instead.
"""

from __future__ import annotations

import json
import threading
from dataclasses import dataclass
from pathlib import Path
from typing import Any

REPO = Path(__file__).resolve().parents[1]
MODEL_DIR = REPO / "bench" / "out" / "reranker" / "export-model"
MODEL_FILE = "reranker.int8.onnx"
TOKENIZER_FILE = "tokenizer.json"
META_FILE = "reranker.json"
WINDOW_WORDS = 64
MAX_PIECES = 128


@dataclass(frozen=True)
class RerankerInfo:
    version: str
    max_pieces: int
    window_words: int


class Reranker:
    """Scores (question, passage) pairs; higher is more relevant (a logit).

    Loads lazily; one scoring call at a time (onnxruntime already uses every core)."""

    def __init__(self, model_dir: Path | str | None = None, *, threads: int | None = None) -> None:
        self.model_dir = Path(model_dir) if model_dir else MODEL_DIR
        self._threads = threads
        self._session: Any = None
        self._tok: Any = None
        self._inputs: set[str] = set()
        self._lock = threading.Lock()
        self.info = self._read_info()

    def _read_info(self) -> RerankerInfo:
        meta = self.model_dir / META_FILE
        try:
            d = json.loads(meta.read_text(encoding="utf-8"))
        except FileNotFoundError:
            d = {}
        return RerankerInfo(version=str(d.get("version", "?")),
                            max_pieces=int(d.get("max_pieces", MAX_PIECES)),
                            window_words=int(d.get("window_words", WINDOW_WORDS)))

    @property
    def available(self) -> bool:
        return (self.model_dir / MODEL_FILE).is_file() and (self.model_dir / TOKENIZER_FILE).is_file()

    def _load(self) -> None:
        if self._session is not None:
            return
        path = self.model_dir / MODEL_FILE
        if not self.available:
            raise SystemExit(f"no cross-encoder at {path}: run scripts/train_reranker.py")
        import onnxruntime as ort
        from tokenizers import Tokenizer

        from indexer.model_env import usable_cpus

        tok = Tokenizer.from_file(str(self.model_dir / TOKENIZER_FILE))
        tok.no_padding()
        tok.enable_truncation(max_length=self.info.max_pieces, strategy="only_second")
        options = ort.SessionOptions()
        options.intra_op_num_threads = self._threads or usable_cpus()
        options.inter_op_num_threads = 1
        options.add_session_config_entry("session.intra_op.allow_spinning", "0")
        options.log_severity_level = 3
        session = ort.InferenceSession(str(path), options, providers=["CPUExecutionProvider"])
        self._tok = tok
        self._inputs = {i.name for i in session.get_inputs()}
        self._session = session

    def score(self, query: str, passages: list[tuple[str, str]], *, window: bool = True) -> "Any":
        """Logits for (title, text) passages against the question, in their order."""
        import numpy as np

        if not passages:
            return np.zeros(0, dtype=np.float32)
        with self._lock:
            self._load()
            from indexer.passage_window import focus_window, pair_text

            texts = [pair_text(title, focus_window(query, text, words=self.info.window_words)
                               if window else text) for title, text in passages]
            encs = self._tok.encode_batch([(query, t) for t in texts])
            width = max(len(e.ids) for e in encs)
            n = len(encs)
            ids = np.zeros((n, width), dtype=np.int64)
            mask = np.zeros((n, width), dtype=np.int64)
            types = np.zeros((n, width), dtype=np.int64)
            for i, e in enumerate(encs):
                ids[i, :len(e.ids)] = e.ids
                mask[i, :len(e.ids)] = 1
                types[i, :len(e.ids)] = e.type_ids
            feeds = {"input_ids": ids, "attention_mask": mask}
            if "token_type_ids" in self._inputs:
                feeds["token_type_ids"] = types
            logits = self._session.run(None, feeds)[0]
        return np.asarray(logits, dtype=np.float32).reshape(n)


_SHARED: Reranker | None = None
_SHARED_LOCK = threading.Lock()


def shared_reranker() -> Reranker:
    """One model per process (the file is read once)."""
    global _SHARED
    with _SHARED_LOCK:
        if _SHARED is None:
            _SHARED = Reranker()
        return _SHARED
