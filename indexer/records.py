"""Plain records the indexer hands out: passages, progress, reports, status.

These are the indexer's public shapes; `localrag` and (through the Assistant) the TUI
read them, so changing a field is an API change.
"""

from __future__ import annotations

from dataclasses import asdict, dataclass, field
from typing import Any, Literal

FileState = Literal["indexed", "skipped", "error"]


@dataclass(frozen=True)
class Passage:
    """One retrieved chunk with its exact location, as search returns it."""

    chunk_id: int
    path: str                 # absolute path of the file
    title: str                # file name and heading path, e.g. "notes.md > Setup > Linux"
    text: str
    start_line: int | None    # 1-based, inclusive, the file's own lines; None for PDF and
    #                           units without a line (a slide, a sheet range: see the title)
    end_line: int | None
    page: int | None          # 1-based PDF page; None for text formats
    char_start: int           # offsets into the file's extracted text
    char_end: int
    score: float              # fused retrieval score (higher is better)
    before: str = field(default="", compare=False, repr=False)
    # the file's stored text right before the passage (Assistant: its neighbour chunks),
    # where the passage continues something it does not hold: a docstring whose def line
    # is in the chunk before it (extract.subject_of names a parameter's function from it).
    # Not part of `to_json`.

    def to_json(self) -> dict[str, Any]:
        """The documented `localrag search --json` object: exactly these seven keys."""
        return {
            "path": self.path,
            "title": self.title,
            "start_line": self.start_line,
            "end_line": self.end_line,
            "page": self.page,
            "score": self.score,
            "text": self.text,
        }

    @property
    def locator(self) -> str:
        """`path:line` for text formats, `path#page=N` for PDF."""
        if self.page is not None:
            return f"{self.path}#page={self.page}"
        if self.start_line is not None:
            return f"{self.path}:{self.start_line}"
        return self.path


@dataclass
class IndexProgress:
    """Sent (often) while an index run works; the UI collapses fast updates."""

    phase: Literal["scanning", "indexing", "embedding", "saving", "done"]
    files_done: int
    files_total: int
    chunks_done: int
    bytes_done: int
    elapsed_s: float
    current_path: str | None = None
    # word pieces (what embedding costs; indexer/eta.py): embedded so far, the estimated
    # total (0: not counted), the smoothed rate and the time left from it (None: estimating)
    pieces_done: int = 0
    pieces_total: int = 0
    pieces_per_s: float = 0.0
    pieces_eta_s: float | None = None
    embedding_now: str | None = None    # the files whose chunks are being embedded

    @property
    def files_per_s(self) -> float:
        return self.files_done / self.elapsed_s if self.elapsed_s > 0 else 0.0

    @property
    def eta_s(self) -> float | None:
        if self.pieces_total:
            return 0.0 if self.phase == "done" else self.pieces_eta_s
        rate = self.files_per_s
        if rate <= 0 or self.files_total <= self.files_done:
            return None if self.files_total > self.files_done else 0.0
        return (self.files_total - self.files_done) / rate


@dataclass
class FileProblem:
    path: str
    state: FileState          # "skipped" or "error"
    reason: str               # words a person can act on
    kind: str = "other"       # what sort of reason (indexer.reasons.KINDS), for grouping


@dataclass
class ProblemGroup:
    """The files not indexed for one kind of reason: how many, and the first by path."""

    state: FileState          # "skipped" or "error"
    kind: str                 # indexer.reasons.KINDS key, e.g. "unsupported_type"
    label: str                # e.g. "unsupported file types"
    count: int                # all files of this group
    files: list[FileProblem]  # the first ones by path (all of them when asked for)

    @property
    def more(self) -> int:
        """Files of the group not in `files`."""
        return self.count - len(self.files)

    def to_json(self) -> dict[str, Any]:
        return {"state": self.state, "kind": self.kind, "label": self.label,
                "count": self.count, "more": self.more,
                "files": [{"path": f.path, "reason": f.reason} for f in self.files]}


@dataclass
class IndexReport:
    """Summary of one index run."""

    added: int = 0
    updated: int = 0
    removed: int = 0
    moved: int = 0
    unchanged: int = 0
    skipped: int = 0
    errors: int = 0
    chunks_added: int = 0
    chunks_removed: int = 0
    chunks_embedded: int = 0   # of chunks_added: distinct texts the model encoded
    chunks_reused: int = 0     # of chunks_added: vectors reused (same text embedded before)
    elapsed_s: float = 0.0
    cancelled: bool = False
    problems: list[FileProblem] = field(default_factory=list)
    dry_run: bool = False
    would_index: list[str] = field(default_factory=list)   # only for dry runs
    parsers: dict[str, str] = field(default_factory=dict)  # dry runs: path -> its parser

    def to_json(self) -> dict[str, Any]:
        return asdict(self)


@dataclass
class RootInfo:
    path: str
    files: int
    chunks: int
    added_at: float
    missing: bool = False     # the folder is not there (deleted, or a drive not mounted)


@dataclass
class IndexStatus:
    roots: list[RootInfo]
    files_indexed: int
    files_skipped: int
    files_error: int
    chunks: int
    problems: list[ProblemGroup]    # files not indexed, by kind of reason: errors first
    db_bytes: int
    hnsw_bytes: int
    embedding_model: str
    embedding_engine: str = ""      # how its vectors were computed: onnx-int8, torch-bf16, ...

    @property
    def errors(self) -> list[FileProblem]:
        """The files in error that `problems` lists."""
        return [f for g in self.problems if g.state == "error" for f in g.files]

    def to_json(self) -> dict[str, Any]:
        """The documented `localrag status --json` object (README)."""
        return {
            "roots": [asdict(r) for r in self.roots],
            "files_indexed": self.files_indexed, "files_skipped": self.files_skipped,
            "files_error": self.files_error, "chunks": self.chunks,
            "db_bytes": self.db_bytes, "hnsw_bytes": self.hnsw_bytes,
            "embedding_model": self.embedding_model, "embedding_engine": self.embedding_engine,
            "problems": [g.to_json() for g in self.problems],
        }


@dataclass
class WatchEvent:
    """What the watcher did after a debounced batch of file-system changes."""

    paths: list[str]
    report: IndexReport
