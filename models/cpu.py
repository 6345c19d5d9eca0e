"""CPU facts that change how llama.cpp must be driven.

Intel AMX: a native llama.cpp build repacks quantized weights into "extra buffer types"
for AMX, and evaluating more than one token of a quantized model then segfaults
(ggml-org/llama.cpp issue 20824; PLATFORM.md). Loading with the model parameter
`use_extra_bufts = False` avoids it. Laptops have no AMX and keep the faster repacked
path, so the flag is only turned off where the CPU reports `amx_int8`.
"""

from __future__ import annotations

import os
import sys
from functools import lru_cache

EXTRA_BUFTS_ENV = "LOCALRAG_LLAMA_EXTRA_BUFTS"
"""Override: "1" forces llama.cpp's extra buffer types on, "0" forces them off."""


@lru_cache(maxsize=1)
def cpu_flags() -> frozenset[str]:
    """The CPU feature flags of the first processor (Linux); empty elsewhere."""
    if not sys.platform.startswith("linux"):
        return frozenset()
    try:
        with open("/proc/cpuinfo", encoding="ascii", errors="replace") as f:
            for line in f:
                if line.startswith("flags"):
                    return frozenset(line.split(":", 1)[1].split())
    except OSError:
        pass
    return frozenset()


def has_amx_int8() -> bool:
    return "amx_int8" in cpu_flags()


def use_extra_bufts(override: bool | None = None) -> bool:
    """Whether to let llama.cpp use extra (repacked) buffer types for the weights.

    Order: an explicit `override`, then the LOCALRAG_LLAMA_EXTRA_BUFTS environment
    variable, then the safe default (off exactly when the CPU has AMX int8).
    """
    if override is not None:
        return override
    env = os.environ.get(EXTRA_BUFTS_ENV, "").strip().lower()
    if env in ("1", "true", "yes", "on"):
        return True
    if env in ("0", "false", "no", "off"):
        return False
    return not has_amx_int8()
