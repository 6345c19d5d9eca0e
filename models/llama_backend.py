"""`LlamaModel`: the LanguageModel interface on llama.cpp (llama-cpp-python's low-level API).

Why the low-level API and not `llama_cpp.Llama`:
- the AMX workaround needs the model parameter `use_extra_bufts`, which `Llama` does not
  take (models/cpu.py);
- branching K candidates off one evaluated prefix needs sequence ids, KV-cache sequence
  copy and one batch for all candidates per step (SELFRAG.md section 8);
- log-probabilities are read from the raw logits of just the positions needed and
  log-softmaxed in numpy; `logits_all` (n_ctx x n_vocab floats) is never turned on.

KV cache layout: sequence 0 holds the last evaluated prefix and is kept between calls
(a common-prefix cache); branches live in sequences 1..K, copied from sequence 0 and
removed afterwards. The cache is "unified" (one pool of n_ctx cells shared by all
sequences), so a copied prefix costs no cells. Branches that would not fit in the pool
together are run in several groups, never crashing.
"""

from __future__ import annotations

import ctypes
import logging
import os
import threading
from collections.abc import Collection, Sequence
from dataclasses import dataclass, field
from pathlib import Path

import numpy as np

from models.base import Generation, LanguageModel, ModelKind, Step, StopRule
from models.cpu import use_extra_bufts as _default_extra_bufts
from models.errors import ModelError, ModelFileError, UnsupportedModelError
from models.reflection import ALL_TOKENS, ReflectionVocab

MAX_SEQUENCES = 256     # LLAMA_MAX_SEQ in llama.cpp
DEFAULT_SEQUENCES = 8   # prefix + 7 branches: K = 5 (the paper's default) fits
BATCH_TOKENS = 512      # tokens per llama_decode call when evaluating prompts

_backend_ready = False


def _llama():
    """Import llama_cpp lazily (it loads the native library) and init the backend once."""
    global _backend_ready
    import llama_cpp

    if not _backend_ready:
        llama_cpp.llama_backend_init()
        _backend_ready = True
    return llama_cpp


def _set_verbose(verbose: bool) -> None:
    # llama_cpp routes native logs through this logger; a TUI must not get stderr noise.
    logging.getLogger("llama-cpp-python").setLevel(logging.DEBUG if verbose else logging.CRITICAL)


def log_softmax_at(logits: np.ndarray, ids: Sequence[int]) -> tuple[np.ndarray, float]:
    """(log p(ids), log-sum-exp) of one row of raw logits; float64 for the sum."""
    row = logits.astype(np.float64, copy=False)
    m = float(row.max())
    lse = m + float(np.log(np.exp(row - m).sum()))
    return row[list(ids)] - lse if len(ids) else np.empty(0), lse


@dataclass
class _Branch:
    seq: int
    tokens: list[int]
    pos: int = 0                          # position of the next token to evaluate
    logits: np.ndarray | None = None      # raw logits predicting the next token
    steps: list[Step] = field(default_factory=list)
    finish: str | None = None


class _Batch:
    """An owned llama_batch with one sequence id per token."""

    def __init__(self, llama_cpp, capacity: int) -> None:
        self._lc = llama_cpp
        self.capacity = capacity
        self.batch = llama_cpp.llama_batch_init(capacity, 0, 1)
        self.n = 0

    def clear(self) -> None:
        self.n = 0

    def add(self, token: int, pos: int, seq: int, logits: bool) -> int:
        i = self.n
        b = self.batch
        b.token[i] = token
        b.pos[i] = pos
        b.n_seq_id[i] = 1
        b.seq_id[i][0] = seq
        b.logits[i] = 1 if logits else 0
        self.n += 1
        return i

    @property
    def full(self) -> bool:
        return self.n >= self.capacity

    def free(self) -> None:
        if self.batch is not None:
            self._lc.llama_batch_free(self.batch)
            self.batch = None


class LlamaModel(LanguageModel):
    """A GGUF model loaded by llama.cpp; owns the native model and context (call close())."""

    def __init__(
        self,
        path: str | Path,
        *,
        n_ctx: int = 4096,
        n_threads: int = 0,
        n_gpu_layers: int = 0,
        verbose: bool = False,
        use_extra_bufts: bool | None = None,
    ) -> None:
        super().__init__()
        lc = _llama()
        _set_verbose(verbose)
        self._lc = lc
        self.path = Path(path)           # the file llama.cpp runs
        self.source_path = self.path     # the file asked for (differs for a CPU copy)
        self._model = None
        self._ctx = None
        self._batch: _Batch | None = None
        self._seq0: list[int] = []               # tokens held by sequence 0
        self._seq0_logits: np.ndarray | None = None
        # Default: half the logical CPUs (physical cores with SMT), as llama_cpp.Llama
        # does. llama.cpp's threads spin-wait, so oversubscribing a busy machine can
        # slow decoding down a hundredfold (seen on 2 shared cores).
        self.n_threads = n_threads if n_threads > 0 else max(1, (os.cpu_count() or 2) // 2)
        self._lock = threading.RLock()   # one native context: one caller at a time

        params = lc.llama_model_default_params()
        params.n_gpu_layers = 0x7FFFFFFF if n_gpu_layers < 0 else n_gpu_layers
        self.extra_bufts = _default_extra_bufts(use_extra_bufts)
        params.use_extra_bufts = self.extra_bufts
        self._model = lc.llama_model_load_from_file(str(self.path).encode(), params)
        if not self._model:
            raise ModelFileError(
                f"llama.cpp could not load the model file {self.path}: it is truncated, "
                "corrupt, or uses an architecture this llama.cpp build does not know",
                hint="download the GGUF file again, or upgrade llama-cpp-python",
            )
        self._vocab = lc.llama_model_get_vocab(self._model)
        self.n_vocab = lc.llama_vocab_n_tokens(self._vocab)
        n_train = lc.llama_model_n_ctx_train(self._model)
        # Beyond the training context a model writes garbage: cap the window there.
        self.n_ctx = min(n_ctx, n_train) if n_ctx > 0 and n_train > 0 else (n_ctx or n_train)
        self.eos_id = lc.llama_vocab_eos(self._vocab)
        bos = lc.llama_vocab_bos(self._vocab)
        self.bos_id = bos if bos >= 0 else None
        self.name = self.metadata("general.name") or self.path.stem
        self._n_seq = 0
        try:
            self._make_context(DEFAULT_SEQUENCES)
            self.kind = self._detect_kind()
        except BaseException:
            self.close()
            raise

    # ----------------------------------------------------------------- native plumbing

    def _make_context(self, n_seq: int) -> None:
        lc = self._lc
        if self._ctx:
            lc.llama_free(self._ctx)
            self._ctx = None
        cp = lc.llama_context_default_params()
        cp.n_ctx = self.n_ctx
        cp.n_batch = BATCH_TOKENS
        cp.n_ubatch = BATCH_TOKENS
        cp.n_seq_max = n_seq
        cp.n_threads = self.n_threads
        cp.n_threads_batch = self.n_threads
        cp.kv_unified = True     # the branches share the prefix cells instead of copying
        cp.swa_full = True       # sliding-window models: keep positions for prefix reuse
        cp.no_perf = True
        self._ctx = lc.llama_init_from_model(self._model, cp)
        if not self._ctx:
            raise ModelError(
                f"llama.cpp could not create a context of {self.n_ctx} tokens for {self.path}",
                hint="lower the context size (n_ctx) or free memory",
            )
        self._n_seq = n_seq
        self._mem = lc.llama_get_memory(self._ctx)
        if self._batch is None:
            self._batch = _Batch(lc, BATCH_TOKENS)
        self._seq0, self._seq0_logits = [], None

    def _decode(self) -> None:
        assert self._batch is not None
        b = self._batch
        b.batch.n_tokens = b.n
        ret = self._lc.llama_decode(self._ctx, b.batch)
        self.stats.decode_calls += 1
        b.clear()
        if ret != 0:
            self._reset_cache()
            raise ModelError(
                f"llama.cpp failed to evaluate tokens with {self.name} (code {ret})",
                hint="lower the number of passages or their length, or raise n_ctx",
            )

    def _logits(self, i: int) -> np.ndarray:
        ptr = self._lc.llama_get_logits_ith(self._ctx, i)
        return np.ctypeslib.as_array(ptr, shape=(self.n_vocab,)).copy()

    def clear_cache(self) -> None:
        """Forget every evaluated token (the next call evaluates its prefix in full)."""
        with self._lock:
            self._reset_cache()

    def _reset_cache(self) -> None:
        self._lc.llama_memory_clear(self._mem, True)
        self._seq0, self._seq0_logits = [], None

    def metadata(self, key: str) -> str | None:
        """A GGUF metadata value as text (None when the key is absent)."""
        size = 1 << 12
        while True:
            buf = ctypes.create_string_buffer(size)
            n = self._lc.llama_model_meta_val_str(self._model, key.encode(), buf, size)
            if n < 0:
                return None
            if n < size:
                return buf.value.decode("utf-8", errors="replace")
            size = n + 1     # snprintf semantics: n is the full length

    def chat_template(self) -> str | None:
        raw = self._lc.llama_model_chat_template(self._model, None)
        return raw.decode("utf-8", errors="replace") if raw else None

    def _detect_kind(self) -> ModelKind:
        vocab, missing = ReflectionVocab.lookup(self)
        if vocab is not None:
            return ModelKind.SELFRAG
        if len(missing) < len(ALL_TOKENS):
            raise UnsupportedModelError(
                f"{self.path} has only part of the Self-RAG reflection vocabulary; "
                f"missing: {', '.join(missing)}",
                hint="use a complete Self-RAG GGUF conversion (see the README)",
            )
        if self.chat_template():
            return ModelKind.INSTRUCT
        raise UnsupportedModelError(
            f"{self.path} is neither a Self-RAG model (no reflection tokens) nor an "
            "instruct model (no chat template in its metadata)",
            hint="use a Self-RAG GGUF or an instruct/chat GGUF that carries "
            "tokenizer.chat_template",
        )

    # ------------------------------------------------------------------- tokenizer

    def tokenize(self, text: str, *, add_bos: bool = False, special: bool = True) -> list[int]:
        data = text.encode("utf-8")
        cap = len(data) + 8
        buf = (self._lc.llama_token * cap)()
        n = self._lc.llama_tokenize(self._vocab, data, len(data), buf, cap, add_bos, special)
        if n < 0:
            cap = -n
            buf = (self._lc.llama_token * cap)()
            n = self._lc.llama_tokenize(self._vocab, data, len(data), buf, cap, add_bos, special)
        return list(buf[:n])

    def detokenize(self, ids: Sequence[int]) -> str:
        if not ids:
            return ""
        arr = (self._lc.llama_token * len(ids))(*ids)
        cap = 16 * len(ids) + 16
        for _ in range(2):
            out = ctypes.create_string_buffer(cap)
            n = self._lc.llama_detokenize(self._vocab, arr, len(ids), out, cap, False, False)
            if n >= 0:
                return out.raw[:n].decode("utf-8", errors="replace")
            cap = -n
        raise ModelError(f"could not detokenize {len(ids)} tokens")

    def is_eog(self, token: int) -> bool:
        return bool(self._lc.llama_vocab_is_eog(self._vocab, token))

    def chat_prompt(self, messages: Sequence[dict[str, str]]) -> str:
        template = self.chat_template()
        if not template:
            raise NotImplementedError(f"{self.name} has no chat template")
        from llama_cpp.llama_chat_format import Jinja2ChatFormatter

        def piece(tid: int | None) -> str:
            return "" if tid is None or tid < 0 else self._lc.llama_vocab_get_text(
                self._vocab, tid).decode("utf-8", errors="replace")

        formatter = Jinja2ChatFormatter(template, eos_token=piece(self.eos_id),
                                        bos_token=piece(self.bos_id), add_generation_prompt=True)
        return formatter(messages=list(messages)).prompt

    # -------------------------------------------------------------------- evaluation

    def _eval_prefix(self, tokens: Sequence[int]) -> np.ndarray | None:
        """Make sequence 0 hold exactly `tokens`; return the logits after the last one.

        Only tokens beyond the common prefix with what sequence 0 already holds are
        evaluated (the last one again if the cache holds more than asked, to get its
        logits).
        """
        tokens = list(tokens)
        if not tokens:
            if self._seq0:
                self._lc.llama_memory_seq_rm(self._mem, 0, -1, -1)
            self._seq0, self._seq0_logits = [], None
            return None
        if len(tokens) > self.n_ctx:
            raise ValueError(f"{len(tokens)} tokens do not fit the context of {self.n_ctx}")
        if tokens == self._seq0 and self._seq0_logits is not None:
            return self._seq0_logits
        keep = 0
        for a, b in zip(self._seq0, tokens):
            if a != b:
                break
            keep += 1
        keep = min(keep, len(tokens) - 1)
        if not self._lc.llama_memory_seq_rm(self._mem, 0, keep, -1):
            self._reset_cache()      # e.g. recurrent memory: cannot cut, start afresh
            keep = 0
        self._seq0 = tokens[:keep]
        self._seq0_logits = None
        batch = self._batch
        assert batch is not None
        last_row = -1
        for pos in range(keep, len(tokens)):
            last_row = batch.add(tokens[pos], pos, 0, pos == len(tokens) - 1)
            self.stats.prompt_tokens += 1
            if batch.full and pos != len(tokens) - 1:
                self._decode()
        self._decode()
        self._seq0 = tokens
        self._seq0_logits = self._logits(last_row)
        return self._seq0_logits

    def next_logprobs(self, tokens: Sequence[int], ids: Sequence[int]) -> dict[int, float]:
        with self._lock:
            logits = self._eval_prefix(tokens)
        if logits is None:
            raise ValueError("next_logprobs needs at least one token")
        values, _ = log_softmax_at(logits, ids)
        return {int(i): float(v) for i, v in zip(ids, values)}

    def generate(
        self,
        prefix: Sequence[int],
        branches: Sequence[Sequence[int]],
        *,
        max_tokens: int,
        stop_ids: Collection[int] = (),
        watch_ids: Sequence[int] = (),
        at_stop: StopRule | None = None,
    ) -> list[Generation]:
        with self._lock:
            return self._generate(prefix, branches, max_tokens, stop_ids, watch_ids, at_stop)

    def _generate(
        self,
        prefix: Sequence[int],
        branches: Sequence[Sequence[int]],
        max_tokens: int,
        stop_ids: Collection[int],
        watch_ids: Sequence[int],
        at_stop: StopRule | None = None,
    ) -> list[Generation]:
        branch_list = [list(b) for b in branches] or [[]]
        prefix = list(prefix)
        if not prefix and any(not b for b in branch_list):
            raise ValueError("generate needs a prefix or a non-empty branch")
        results: list[Generation | None] = [None] * len(branch_list)
        room = self.n_ctx - len(prefix)
        # Branches that cannot even be evaluated get nothing: the caller trims passages.
        runnable = []
        for i, b in enumerate(branch_list):
            if len(b) > room:
                results[i] = Generation(steps=[], finish="length")
            else:
                runnable.append(i)
        if runnable and max_tokens <= 0:
            for i in runnable:
                results[i] = Generation(steps=[], finish="length")
            runnable = []
        if runnable:
            prefix_logits = self._eval_prefix(prefix)
            for group in self._plan_groups([branch_list[i] for i in runnable], room, max_tokens):
                idx = [runnable[j] for j in group]
                gens = self._generate_group(prefix, prefix_logits, [branch_list[i] for i in idx],
                                            max_tokens, set(stop_ids), list(watch_ids), at_stop)
                for i, g in zip(idx, gens):
                    results[i] = g
        return [g for g in results if g is not None]

    def _plan_groups(self, branches: list[list[int]], room: int, max_tokens: int) -> list[list[int]]:
        """Split branches into groups whose worst-case KV cells fit the free pool."""
        groups: list[list[int]] = []
        current: list[int] = []
        used = 0
        for j, b in enumerate(branches):
            need = len(b) + max(0, min(max_tokens, room - len(b)))
            if current and (used + need > room or len(current) + 1 >= MAX_SEQUENCES):
                groups.append(current)
                current, used = [], 0
            current.append(j)
            used += need
        if current:
            groups.append(current)
        return groups

    def _generate_group(
        self,
        prefix: list[int],
        prefix_logits: np.ndarray | None,
        branches: list[list[int]],
        max_tokens: int,
        stop_ids: set[int],
        watch_ids: list[int],
        at_stop: StopRule | None = None,
    ) -> list[Generation]:
        lc = self._lc
        if len(branches) + 1 > self._n_seq:
            # More sequences than the context was made for: remake it (drops the cache).
            self._make_context(min(MAX_SEQUENCES, max(len(branches) + 1, 2 * self._n_seq)))
            prefix_logits = self._eval_prefix(prefix)
        state = [_Branch(seq=k + 1, tokens=b, pos=len(prefix)) for k, b in enumerate(branches)]
        batch = self._batch
        assert batch is not None
        try:
            for br in state:
                lc.llama_memory_seq_rm(self._mem, br.seq, -1, -1)
                if prefix:
                    lc.llama_memory_seq_cp(self._mem, 0, br.seq, -1, -1)
            # Evaluate every branch's own tokens, all branches in the same batches.
            rows: dict[int, int] = {}
            for k, br in enumerate(state):
                if not br.tokens:
                    br.logits = prefix_logits
                    continue
                for t, tok in enumerate(br.tokens):
                    last = t == len(br.tokens) - 1
                    row = batch.add(tok, br.pos, br.seq, last)
                    br.pos += 1
                    self.stats.prompt_tokens += 1
                    if last:
                        rows[k] = row
                    if batch.full:
                        self._decode()
                        self._collect(state, rows)
            if batch.n:
                self._decode()
                self._collect(state, rows)
            # Decode all unfinished branches together, one batch per step.
            while True:
                rows = {}
                for k, br in enumerate(state):
                    if br.finish is not None:
                        continue
                    assert br.logits is not None
                    self._sample(br, max_tokens, stop_ids, watch_ids, at_stop)
                    if br.finish is None:
                        rows[k] = batch.add(br.steps[-1].token, br.pos, br.seq, True)
                        br.pos += 1
                if not rows:
                    break
                self._decode()
                self._collect(state, rows)
        finally:
            for br in state:
                lc.llama_memory_seq_rm(self._mem, br.seq, -1, -1)
            batch.clear()
        return [Generation(steps=br.steps, finish=br.finish or "length") for br in state]

    def _collect(self, state: list[_Branch], rows: dict[int, int]) -> None:
        for k, row in rows.items():
            state[k].logits = self._logits(row)
        rows.clear()

    def _sample(self, br: _Branch, max_tokens: int, stop_ids: set[int], watch_ids: list[int],
                at_stop: StopRule | None = None) -> None:
        """Greedy step: argmax of the raw logits (no repetition penalty, no sampling);
        at a stop id `at_stop` may write another token instead (LanguageModel.generate)."""
        logits = br.logits
        assert logits is not None
        token = int(np.argmax(logits))
        values, lse = log_softmax_at(logits, watch_ids)
        step = Step(token=token, logprob=float(logits[token]) - lse,
                    watched={int(i): float(v) for i, v in zip(watch_ids, values)})
        br.steps.append(step)
        br.logits = None
        self.stats.generated_tokens += 1
        if token == self.eos_id or self.is_eog(token):
            br.finish = "eos"
            return
        if token in stop_ids:
            instead = at_stop(step) if at_stop is not None else None
            if instead is None:
                br.finish = "stop"
                return
            if instead != token:
                step.token, step.replaced = int(instead), token
                step.logprob = float(logits[instead]) - lse
        if len(br.steps) >= max_tokens or br.pos >= self.n_ctx:
            br.finish = "length"     # the next token would have no KV position left

    # ---------------------------------------------------------------------- lifetime

    def close(self) -> None:
        lc = getattr(self, "_lc", None)
        if lc is None:
            return
        if self._batch is not None:
            self._batch.free()
            self._batch = None
        if self._ctx:
            lc.llama_free(self._ctx)
            self._ctx = None
        if self._model:
            lc.llama_model_free(self._model)
            self._model = None

    def __enter__(self) -> "LlamaModel":
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

    def __del__(self) -> None:
        try:
            self.close()
        except Exception:
            pass
