"""localrag's relevance model: does this sentence (or passage window) answer the question?

Our own model (all-MiniLM-L6-v2's weights, trained by scripts/train_relevance.py on
annotators' labels of the training corpora; data card bench/data/relevance/DATA_CARD.md),
shipped as int8 ONNX in indexer/data/relevance/. relevance.json says its design: "bi" (the
shipped one: the question and the text embedded apart, their cosine scaled and shifted into
a logit) or "cross" (the pair read together, "[CLS] question [SEP] text [SEP]", into a
logit). Its probability is P(the annotator would say "answers").

Loads lazily, once per process (`shared_relevance_model`); one scoring call at a time, whose
texts run side by side, one per core (a text of 20-60 word pieces gains nothing from a
second thread inside onnxruntime: 3.6 ms a text with one or two; two at once on 2 cores,
1.7 ms a text). A missing or unreadable model (any of its three files) raises
RelevanceModelMissing, which callers turn into a note, never a traceback.
"""

from __future__ import annotations

import json
import threading
from collections import OrderedDict
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path
from typing import Any, Sequence

import numpy as np

MODEL_DIR = Path(__file__).resolve().parent / "data" / "relevance"
MODEL_FILE = "relevance.int8.onnx"
TOKENIZER_FILE = "tokenizer.json"
META_FILE = "relevance.json"
MAX_PIECES = 128          # question + text; a sentence with its title fits in about 60
LANGUAGES = ("en",)       # what the shipped model reads: all-MiniLM-L6-v2 (an English model)
                          # trained on English documentation; language.reads_query
TEXT_CACHE = 8192         # a bi-encoder's text vectors kept (384 floats each: about 13 MB)


class RelevanceModelMissing(RuntimeError):
    """The model's files are not where the package puts them (a broken install)."""


def unit_text(title: str, subject: str, sentence: str) -> str:
    """What the model reads of a quotable unit: its passage title, the term or signature
    line it describes (may be empty), then the sentence."""
    parts = [p.strip() for p in (title, subject, sentence) if p and p.strip()]
    return "\n".join(parts)


class RelevanceModel:
    """Scores (question, text) pairs; `probabilities` in [0, 1], higher answers better."""

    def __init__(self, model_dir: Path | str | None = None, *, threads: int | None = None) -> None:
        """`threads`: texts run at once (default: the CPUs this process may use), each on
        one onnxruntime thread."""
        self.model_dir = Path(model_dir) if model_dir else MODEL_DIR
        self.file_name = MODEL_FILE
        self._threads = threads
        self._pool: ThreadPoolExecutor | None = None
        self._session: Any = None
        self._tok: Any = None
        self._inputs: set[str] = set()
        self._lock = threading.Lock()
        self.info: dict = {}
        self._memo_question: str | None = None
        self._memo: dict[str, float] = {}   # the last question's logits by text (see logits)
        self._vectors: OrderedDict[str, np.ndarray] = OrderedDict()   # a bi-encoder's, by text

    @property
    def available(self) -> bool:
        return all((self.model_dir / f).is_file() for f in (MODEL_FILE, TOKENIZER_FILE, META_FILE))

    def _load(self) -> None:
        if self._session is not None:
            return
        if not self.available:
            raise RelevanceModelMissing(
                f"The relevance model is missing from {self.model_dir} "
                f"(reinstall localrag: pip install --force-reinstall localrag)")
        try:
            self._session, self._tok, self.info = self._open()
        except RelevanceModelMissing:
            raise
        except Exception as e:  # a truncated, garbled or foreign file
            raise RelevanceModelMissing(f"The relevance model in {self.model_dir} cannot be read "
                                        f"({type(e).__name__}: {e}); reinstall localrag") from e
        self._inputs = {i.name for i in self._session.get_inputs()}

    def _open(self) -> tuple[Any, Any, dict]:
        import onnxruntime as ort
        from tokenizers import Tokenizer

        from indexer.model_env import usable_cpus

        info = json.loads((self.model_dir / META_FILE).read_text(encoding="utf-8"))
        arch = info.get("arch") if isinstance(info, dict) else None
        if arch not in ("bi", "cross") or (arch == "bi" and not {"scale", "shift"} <= set(info)):
            raise RelevanceModelMissing(f"The relevance model's {self.model_dir / META_FILE} does "
                                        f"not say what it is (arch {arch!r}); reinstall localrag")
        tok = Tokenizer.from_file(str(self.model_dir / TOKENIZER_FILE))
        tok.no_padding()
        tok.enable_truncation(max_length=int(info.get("max_pieces", MAX_PIECES)),
                              strategy="only_second" if arch == "cross" else "longest_first")
        options = ort.SessionOptions()
        options.intra_op_num_threads = 1          # texts run side by side instead (_run_all)
        options.inter_op_num_threads = 1
        options.add_session_config_entry("session.intra_op.allow_spinning", "0")
        options.log_severity_level = 3
        session = ort.InferenceSession(str(self.model_dir / MODEL_FILE), options,
                                       providers=["CPUExecutionProvider"])
        self._pool = _runner_pool(self._threads or usable_cpus())
        return session, tok, info

    def _run(self, enc: Any) -> np.ndarray:
        """The model's output for one encoding (tokenizers.Encoding): each text is run on
        its own (see logits), so there is no padding to build."""
        feeds = {"input_ids": np.array([enc.ids], dtype=np.int64),
                 "attention_mask": np.ones((1, len(enc.ids)), dtype=np.int64)}
        if "token_type_ids" in self._inputs:
            feeds["token_type_ids"] = np.array([enc.type_ids], dtype=np.int64)
        return np.asarray(self._session.run(None, feeds)[0], dtype=np.float32).reshape(-1)

    def _run_all(self, encodings: Sequence[Any]) -> list[np.ndarray]:
        """_run of each encoding, in order; side by side on the pool (onnxruntime runs one
        session from several threads; each run is still one text alone)."""
        if self._pool is None or len(encodings) < 2:
            return [self._run(e) for e in encodings]
        return list(self._pool.map(self._run, encodings))

    def logits(self, question: str, texts: Sequence[str]) -> np.ndarray:
        """One logit per text, in order (texts as unit_text makes them). Each text is run
        on its own: int8 activations are quantised per run, so in a batch a text's score
        would move with its neighbours' (by up to 1 logit, measured). The last question's
        logits are kept by text: search's second stage (localrag.answering.passage_judge)
        reads the sentences of 20 passages, and the answer path then asks again about the
        five it keeps; a bi-encoder's text vectors are kept across questions too
        (_text_vectors)."""
        if not texts:
            return np.zeros(0, dtype=np.float32)
        with self._lock:
            self._load()
            if question != self._memo_question:
                self._memo_question, self._memo = question, {}
            todo = list(dict.fromkeys(t for t in texts if t not in self._memo))
            try:
                if todo and self.info["arch"] == "cross":
                    got = [float(v[0]) for v in self._run_all([self._tok.encode(question, t) for t in todo])]
                elif todo:
                    q = self._run(self._tok.encode(question))
                    # one dot product a text: a matrix product's summation order would move
                    # a text's score with how many are scored beside it
                    cos = np.array([float(v @ q) for v in self._text_vectors(todo)])
                    got = list(float(self.info["scale"]) * (cos - float(self.info["shift"])))
            except Exception as e:  # a model file of another shape than its relevance.json says
                raise RelevanceModelMissing(f"The relevance model in {self.model_dir} cannot be "
                                            f"run ({type(e).__name__}: {e}); reinstall localrag") from e
            if todo:
                self._memo.update(zip(todo, (float(x) for x in got)))
            return np.array([self._memo[t] for t in texts], dtype=np.float32)

    def _text_vectors(self, texts: Sequence[str]) -> np.ndarray:
        """A bi-encoder's vectors of `texts` (one row each), kept for later questions (the
        last TEXT_CACHE texts): a passage read for one question costs nothing the next time
        search brings it back. Each text is run on its own, so a kept vector is the one a
        new run would give."""
        missing = [t for t in dict.fromkeys(texts) if t not in self._vectors]
        for t, v in zip(missing, self._run_all([self._tok.encode(t) for t in missing])):
            self._vectors[t] = v
        rows = []
        for t in texts:
            self._vectors.move_to_end(t)
            rows.append(self._vectors[t])
        while len(self._vectors) > TEXT_CACHE:
            self._vectors.popitem(last=False)
        return np.stack(rows)

    def probabilities(self, question: str, texts: Sequence[str]) -> np.ndarray:
        return 1.0 / (1.0 + np.exp(-np.clip(self.logits(question, texts), -50, 50)))


_SHARED: RelevanceModel | None = None
_SHARED_LOCK = threading.Lock()
_POOLS: dict[int, ThreadPoolExecutor] = {}
_POOLS_LOCK = threading.Lock()


def _runner_pool(workers: int) -> ThreadPoolExecutor | None:
    """One pool of `workers` threads per process, shared by every model of that width (a
    model is loaded per test, per bench variant): None for one."""
    if workers < 2:
        return None
    with _POOLS_LOCK:
        if workers not in _POOLS:
            _POOLS[workers] = ThreadPoolExecutor(workers, thread_name_prefix="relevance")
        return _POOLS[workers]


def shared_relevance_model() -> RelevanceModel:
    """One model per process (the file is read once)."""
    global _SHARED
    with _SHARED_LOCK:
        if _SHARED is None:
            _SHARED = RelevanceModel()
        return _SHARED


def shipped_probabilities():  # noqa: ANN201 - Callable[[str, Sequence[str]], np.ndarray] | None
    """The shipped model's `probabilities`, or None when its files are missing (a broken
    install: answers then fall back to the quote scorer's roles)."""
    model = shared_relevance_model()
    return model.probabilities if model.available else None


__all__ = ["shipped_probabilities", "RelevanceModel", "RelevanceModelMissing", "shared_relevance_model", "unit_text",
           "MODEL_DIR", "MODEL_FILE", "MAX_PIECES"]
