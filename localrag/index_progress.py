"""The words of an index run's progress, one line, shared by the CLI and the app."""

from __future__ import annotations

import os
from typing import Any

from localrag.model_files import duration


def count(n: float) -> str:
    """`950`, `12.3k`, `4.56M`."""
    if n < 1000:
        return f"{n:.0f}"
    if n < 1_000_000:
        return f"{n / 1000:.1f}k"
    return f"{n / 1_000_000:.2f}M"


def index_progress_line(p: Any) -> str:
    """For an indexer.records.IndexProgress: files and word pieces done of the total, the
    rate, the time left (word pieces, smoothed: indexer/eta.py) and what is being
    embedded now. Without word-piece counts: files, chunks, files/s, time left."""
    total = f"/{p.files_total}" if p.files_total else ""
    parts = [f"{p.phase} {p.files_done}{total} files"]
    if not p.pieces_total:
        parts.append(f"{p.chunks_done} chunks")
        if p.elapsed_s > 0:
            parts.append(f"{p.files_per_s:.1f} files/s")
        if p.phase != "done" and p.files_total:
            parts.append(f"{duration(p.eta_s)} left")
        return " · ".join(parts)
    approx = "~" if p.files_done < p.files_total else ""
    parts.append(f"{count(p.pieces_done)}/{approx}{count(p.pieces_total)} word pieces")
    if p.pieces_per_s:
        parts.append(f"{count(p.pieces_per_s)} pieces/s")
    if p.phase != "done":
        eta = p.eta_s
        parts.append(f"{duration(eta)} left" if eta is not None else "estimating time left")
    if p.embedding_now and p.phase == "embedding":
        parts.append(f"now {_short_paths(p.embedding_now)}")
    return " · ".join(parts)


def _short_paths(text: str) -> str:
    """File names, not whole paths, in "N chunks of PATH and M more files"."""
    head, sep, rest = text.partition(" of ")
    if not sep:
        return text
    path, more_sep, more = rest.partition(" and ")
    return f"{head} of {os.path.basename(path)}" + (f" and {more}" if more_sep else "")
