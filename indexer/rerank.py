"""The relevance model: a MiniLM-L6 cross-encoder trained by this project
(scripts/train_reranker.py, data card beside the model), run as int8 ONNX.

It reads a question and a passage together and scores how well the passage answers the
question. Search uses it as its second stage (the fused top candidates reordered), the
answer engines use it to choose which sentences to quote and as the relevance critic.

Long passages are cut to a window around the part that best matches the question
(`focus_window`), the same way in training and at run time, so that 20-30 candidates
score well under a second on two cores.
"""

from __future__ import annotations

import json
import re
import threading
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from indexer.errors import RerankerError as _IndexError

MODEL_DIR = Path(__file__).resolve().parent / "data" / "reranker"
MODEL_FILE = "reranker.int8.onnx"
TOKENIZER_FILE = "tokenizer.json"
META_FILE = "reranker.json"

WINDOW_WORDS = 80      # words of a passage the model reads (about 110 word pieces)
MAX_PIECES = 160       # question + title + window, special tokens included

_WORD = re.compile(r"\S+")


@dataclass(frozen=True)
class RerankerInfo:
    version: str
    max_pieces: int
    window_words: int


_TOK = None


def _tokenizer():  # noqa: ANN202 - indexer.bm25.Tokenizer
    global _TOK
    if _TOK is None:
        from indexer.bm25 import Tokenizer

        _TOK = Tokenizer()
    return _TOK


def focus_window(query: str, text: str, *, words: int = WINDOW_WORDS) -> str:
    """The `words`-word stretch of `text` holding the most distinct query terms (BM25's
    stems; the earliest such stretch on ties). Short texts come back whole."""
    spans = [(m.start(), m.end()) for m in _WORD.finditer(text)]
    if len(spans) <= words:
        return text
    tok = _tokenizer()
    wanted = set(tok(query))
    if not wanted:
        return text[:spans[words - 1][1]]
    hits = [set(tok(text[a:b])) & wanted for a, b in spans]
    best, best_at = -1, 0
    counts: dict[str, int] = {}
    for i, h in enumerate(hits):
        for s in h:
            counts[s] = counts.get(s, 0) + 1
        if i >= words:
            for s in hits[i - words]:
                counts[s] -= 1
                if counts[s] == 0:
                    del counts[s]
        if i >= words - 1:
            score = len(counts)
            if score > best:
                best, best_at = score, i - words + 1
    # start a little before the first match, so the window keeps its lead-in
    start = best_at
    for j in range(best_at, best_at + words):
        if hits[j]:
            start = max(0, min(j - words // 6, len(spans) - words))
            break
    return text[spans[start][0]:spans[start + words - 1][1]]


def pair_text(title: str, text: str) -> str:
    """What the model reads of a passage: its title line, then the text."""
    return f"{title}\n{text}" if title else text


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
        except (OSError, ValueError) as exc:
            raise _IndexError(f"Cannot read the relevance model's settings {meta}: {exc}",
                              hint="reinstall localrag; the file ships with it") from exc
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
            raise _IndexError(f"The relevance model is missing: {path}",
                              hint="reinstall localrag, or set rerank = false in the settings")
        import onnxruntime as ort
        from tokenizers import Tokenizer

        from indexer.embedder import _usable_cpus

        try:
            tok = Tokenizer.from_file(str(self.model_dir / TOKENIZER_FILE))
            tok.no_padding()
            tok.enable_truncation(max_length=self.info.max_pieces, strategy="only_second")
            options = ort.SessionOptions()
            options.intra_op_num_threads = self._threads or _usable_cpus()
            options.inter_op_num_threads = 1
            options.add_session_config_entry("session.intra_op.allow_spinning", "0")
            options.log_severity_level = 3
            session = ort.InferenceSession(str(path), options, providers=["CPUExecutionProvider"])
        except Exception as exc:  # a damaged file: say which, never a traceback
            raise _IndexError(f"Cannot load the relevance model {path}: {exc}",
                              hint="reinstall localrag, or set rerank = false in the settings") from exc
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
