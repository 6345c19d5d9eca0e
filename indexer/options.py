"""Options of one index: what to parse and how to cut it into chunks."""

from __future__ import annotations

from dataclasses import dataclass, field

# Used when a caller builds IndexOptions without settings (tests, benchmarks).
BASIC_EXTENSIONS: tuple[str, ...] = (
    ".txt", ".md", ".markdown", ".rst", ".html", ".htm", ".pdf", ".docx",
    ".pptx", ".xlsx", ".odt", ".ods", ".odp", ".epub", ".rtf", ".ipynb", ".eml", ".mbox",
    ".py", ".js", ".ts", ".c", ".h", ".go", ".rs", ".java", ".sh", ".toml", ".yaml", ".json",
)


@dataclass
class IndexOptions:
    """How files are selected and chunked.

    extensions: parsed extensions (lower case, with the dot); any other file is recorded
    as "skipped: unsupported type".
    chunk_words: the most words in a chunk.
    ocr: read PDF pages without a text layer by OCR (the optional `[ocr]` extra).
    chunk_tokens: word pieces per chunk's embedding text (title included); 0 = the
    embedder's whole window (512 for MiniLM). Chunks never exceed the window.
    """

    extensions: list[str] = field(default_factory=lambda: list(BASIC_EXTENSIONS))
    max_file_bytes: int = 20 * 1024 * 1024
    include_hidden: bool = False
    ocr: bool = False
    chunk_words: int = 400
    chunk_tokens: int = 0
    embedding_model: str = ""   # folder of a sentence-transformers model; "" = the default package
    batch_size: int = 64        # chunks per encode batch (across files); 4 batches per commit

    def __post_init__(self) -> None:
        self.extensions = sorted({
            (e if e.startswith(".") else "." + e).lower() for e in self.extensions if e
        })
        if self.chunk_words < 20:
            self.chunk_words = 20
        if self.chunk_tokens < 0:
            self.chunk_tokens = 0
        if self.batch_size < 1:
            self.batch_size = 1
