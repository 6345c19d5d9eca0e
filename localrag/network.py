"""The network rule, in one place.

localrag never opens a connection, except `localrag models pull` (and the same download
in the app's model picker), and only when the person starts it. To hold every library to
that (sentence-transformers and huggingface_hub would otherwise look things up on the
Hub), `stay_offline()` sets HF_HUB_OFFLINE=1 and TRANSFORMERS_OFFLINE=1 for this process
unless the person set them. The pull asks `offline_reason()` first: it refuses when the
person set HF_HUB_OFFLINE to a true value (huggingface_hub's reading: 1, ON, YES, TRUE),
or passed --offline; the value localrag set itself does not count (models/pull.py then
lifts huggingface_hub's switch for its own requests only). TRANSFORMERS_OFFLINE is about
transformers' own look-ups and does not stop a pull.
"""

from __future__ import annotations

import os

OFFLINE_VARIABLES = ("HF_HUB_OFFLINE", "TRANSFORMERS_OFFLINE")
_set_here: dict[str, str] = {}


def stay_offline() -> None:
    """Keep every library offline in this process (the person's own values stay)."""
    for name in OFFLINE_VARIABLES:
        if name not in os.environ:
            os.environ[name] = "1"
            _set_here[name] = "1"


def _true(value: str | None) -> bool:
    # huggingface_hub's reading of the variable (constants._is_true)
    return (value or "").strip().upper() in {"1", "ON", "YES", "TRUE"}


def offline_reason(*, flag: bool = False) -> str | None:
    """Why a download must not happen now, in words; None when it may."""
    if flag:
        return "--offline was given"
    name = "HF_HUB_OFFLINE"
    value = os.environ.get(name)
    if name in _set_here and value == _set_here[name]:
        return None                          # localrag's own safety setting
    if _true(value):
        return f"{name}={value} is set"
    return None
