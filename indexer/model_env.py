"""Process settings the Embedder and the one-time ONNX export (indexer/onnx_export.py)
both need: how many CPUs this process may use, and a quiet transformers library.
Kept here so that neither of those modules imports the other."""

from __future__ import annotations

import os


def usable_cpus() -> int:
    """CPUs this process may run on (its affinity mask, e.g. under taskset or a container)."""
    try:
        return max(1, len(os.sched_getaffinity(0)))
    except (AttributeError, OSError):
        return max(1, os.cpu_count() or 1)


def quiet_transformers() -> None:
    """No progress bars or load chatter: they would write into the terminal app."""
    os.environ.setdefault("HF_HUB_DISABLE_PROGRESS_BARS", "1")
    try:
        from transformers.utils import logging as hf_logging

        hf_logging.disable_progress_bar()
        hf_logging.set_verbosity_error()
    except Exception:  # older/newer transformers without these helpers: only cosmetic
        pass
