"""The `Assistant` facade: the one object the CLI and the TUI talk to.

It owns the index (indexer), the language model (models), the answer engines and the
saved chats. Nothing outside `localrag` reaches past it. Heavy things (the embedding
model, llama.cpp) load lazily on first use, so opening an Assistant is cheap.

Threading: the TUI calls `ask` and `update_index` from worker threads. The model is used
by one answer at a time (`_model_lock`); the index does its own locking.
"""

from __future__ import annotations

import os
import threading
import time
from collections.abc import Callable, Sequence
from dataclasses import dataclass, replace
from pathlib import Path
from typing import TYPE_CHECKING, Any

from localrag.network import stay_offline

stay_offline()                     # never reach the network (models pull: localrag/network.py)
os.environ.setdefault("TOKENIZERS_PARALLELISM", "false")

from indexer.records import (FileProblem, IndexProgress, IndexReport, IndexStatus, Passage,
                             RootInfo, WatchEvent)
from localrag.answering.label.answer import Answer, RetrievalDecision, Segment
from localrag.chats import ChatStore, ChatSummary, Turn
from localrag.answering.retrieve import self_contained_query
from localrag.paths import Paths
from localrag.settings import Settings

if TYPE_CHECKING:
    from indexer.index import Index
    from indexer.options import IndexOptions
    from indexer.watcher import Watcher
    from localrag.model_files import ModelsOverview
    from models.base import LanguageModel
    from models.pull import PullProgress, PullResult

BEFORE_CHARS = 4000
"""How much of a passage's file before it an answer reads (Passage.before): a chunk's
length or more, so that the def line of a docstring the chunk before the passage opened is
in it. On the bench's code corpora (pycode, pycode2) 2,000 characters reached the def
line of every one of the 135 docstring fields whose chunk lacks it; a chunk of long
lines can run to about 2,400."""


@dataclass
class ModelDescription:
    path: str
    name: str
    kind: str            # "selfrag" or "instruct"
    critic: str          # who produces the support labels
    runs_from: str | None = None   # the CPU copy llama.cpp runs, when not `path` itself


class Assistant:
    """Index, model, answers and chats behind one small API."""

    def __init__(self, *, paths: Paths, settings: Settings,
                 model: "LanguageModel | None" = None, embedder: Any = None) -> None:
        self.paths = paths.ensure()
        self.settings = settings
        self._model = model
        self._embedder = embedder
        self._index: Index | None = None
        self._watcher: Watcher | None = None
        self._engine: Any = None
        self._model_lock = threading.Lock()
        self._index_lock = threading.Lock()
        self._chats: ChatStore | None = None
        self.chat_id: int | None = None
        self._history: list[tuple[str, str]] = []
        self.one_shot = False     # Assistant.open(one_shot=True): a process of one query

    # -- construction ---------------------------------------------------------------------
    @classmethod
    def open(cls, data_dir: str | os.PathLike[str] | None = None, *,
             overrides: dict[str, Any] | None = None, model: "LanguageModel | None" = None,
             embedder: Any = None, one_shot: bool = False) -> "Assistant":
        """Open the data directory (`--data-dir`, `$LOCALRAG_HOME` or the platform default),
        read its settings file and apply `overrides` (not saved).

        one_shot: the process answers a query or two and exits (`localrag search`/`ask`):
        the vector index is scanned in place rather than loaded (indexer/hnsw_file.py)."""
        paths = Paths.resolve(data_dir)
        settings = Settings.load(paths.settings_file)
        for key, value in (overrides or {}).items():
            if value is not None:
                settings.set(key, value, source="the command line")
        assistant = cls(paths=paths, settings=settings, model=model, embedder=embedder)
        assistant.one_shot = one_shot
        return assistant

    def save_settings(self) -> None:
        self.settings.save(self.paths.settings_file)

    def update_settings(self, **changes: Any) -> None:
        """Change settings, save them, and drop what depends on them (model reloads lazily)."""
        model_keys = {"model_path", "n_gpu_layers", "n_threads", "n_ctx", "cpu_model_copy"}
        for key, value in changes.items():
            self.settings.set(key, value, source="the settings screen")
        self.save_settings()
        if model_keys & changes.keys():
            self.unload_model()
        self._engine = None
        index_keys = {"extensions", "max_file_mb", "include_hidden", "chunk_words", "chunk_tokens",
                      "ocr"}
        if index_keys & changes.keys() and self._index is not None:
            # the next update (or the watcher's) walks and chunks with the new options;
            # a new chunk size re-chunks every file (Index._check_chunking)
            self._index.options = self._index_options()

    # -- the index --------------------------------------------------------------------------
    @property
    def embedder(self) -> Any:
        if self._embedder is None:
            from indexer.embedder import Embedder

            self._embedder = Embedder(self.settings.embedding_model)
        return self._embedder

    @property
    def index(self) -> "Index":
        with self._index_lock:
            if self._index is None:
                from indexer.index import Index

                self._index = Index(self.paths.index_dir, options=self._index_options(),
                                    embedder=self.embedder, one_shot=self.one_shot)
            return self._index

    def _index_options(self) -> "IndexOptions":
        from indexer.options import IndexOptions

        s = self.settings
        return IndexOptions(
            extensions=[e.lower() if e.startswith(".") else "." + e.lower() for e in s.extensions],
            max_file_bytes=int(s.max_file_mb * 1024 * 1024),
            include_hidden=s.include_hidden,
            ocr=s.ocr,
            chunk_words=s.chunk_words,
            chunk_tokens=s.chunk_tokens,
            embedding_model=s.embedding_model,
        )

    def add_root(self, path: str | os.PathLike[str]) -> RootInfo:
        return self.index.add_root(path)

    def remove_root(self, path: str | os.PathLike[str]) -> int:
        return self.index.remove_root(path)

    def roots(self) -> list[RootInfo]:
        return self.index.roots()

    def update_index(self, paths: Sequence[str | os.PathLike[str]] | None = None, *,
                     progress: Callable[[IndexProgress], None] | None = None,
                     cancel: threading.Event | None = None,
                     dry_run: bool = False) -> IndexReport:
        return self.index.update(paths, progress=progress, cancel=cancel, dry_run=dry_run)

    def status(self, *, per_group: int | None = 10, kind: str | None = None) -> IndexStatus:
        """Counts, roots, and the files not indexed grouped by kind of reason, with the
        first `per_group` files of each group (None: all); `kind`: only that group."""
        return self.index.status(per_group=per_group, kind=kind)

    def problem_files(self, state: str, kind: str | None = None, *, offset: int = 0,
                      limit: int | None = 200) -> list[FileProblem]:
        """One page of the skipped (state "skipped") or failed ("error") files, by path."""
        return self.index.problem_files(state, kind, offset=offset, limit=limit)

    def search(self, query: str, *, k: int | None = None) -> list[Passage]:
        return self._search(query, k or self.settings.k)

    def _search(self, query: str, k: int) -> list[Passage]:
        """The index's search with the settings' second stage: the relevance model's
        passage judge (relevance_rerank), else the learned ranker (rerank)."""
        return self.index.search(query, k=k, rerank=self.settings.rerank,
                                 rerank_depth=self.settings.rerank_depth, judge=self._passage_judge())

    def _retrieve(self, query: str, k: int) -> list[Passage]:
        """_search for an answer: each passage with the file's stored text right before it
        (Passage.before, BEFORE_CHARS), where the answer looks up what the passage continues
        (the def line of a docstring the chunk before it opened)."""
        out = []
        for p in self._search(query, k):
            text, start, _ = self.index.surrounding(p, chars=BEFORE_CHARS)
            out.append(replace(p, before=text[:start]))
        return out

    def _passage_judge(self) -> Any:
        """localrag.answering.passage_judge.SentenceJudge over the shipped relevance model, or
        None (relevance_rerank off, or the model missing from a broken install: the fused
        order, and answers say the model is missing)."""
        if not self.settings.relevance_rerank:
            return None
        from indexer.relevance_model import LANGUAGES, shipped_probabilities
        from localrag.answering.passage_judge import SentenceJudge

        answers = shipped_probabilities()
        return SentenceJudge(answers, languages=LANGUAGES) if answers is not None else None

    def surrounding(self, passage: Passage, *, chars: int = 1500) -> tuple[str, int, int]:
        """Text around a cited passage and the passage's span inside it."""
        return self.index.surrounding(passage, chars=chars)

    def start_watching(self, on_event: Callable[[WatchEvent], None], *,
                       on_error: Callable[[Exception], None] | None = None,
                       debounce_s: float = 0.5) -> None:
        self.stop_watching()
        self._watcher = self.index.watch(on_event, on_error=on_error, debounce_s=debounce_s)

    def stop_watching(self) -> None:
        if self._watcher is not None:
            self._watcher.stop()
            self._watcher = None

    @property
    def watching(self) -> bool:
        return self._watcher is not None

    # -- the model --------------------------------------------------------------------------
    def model_path(self) -> Path:
        if self.settings.model_path:
            return Path(self.settings.model_path).expanduser()
        from models.loader import default_model_path

        return default_model_path()

    @property
    def model(self) -> "LanguageModel":
        if self._model is None:
            from models.loader import load_model

            s = self.settings
            self._model = load_model(
                self.model_path(), n_ctx=s.n_ctx, n_threads=s.n_threads,
                n_gpu_layers=s.n_gpu_layers,
                cpu_copy_dir=self.paths.model_cache_dir if s.cpu_model_copy else None)
        return self._model

    def load_model(self) -> ModelDescription:
        """Load the model (if needed) and its engine; returns what was loaded."""
        with self._model_lock:
            engine = self._get_engine()
            model = self.model
            source = getattr(model, "source_path", None) or getattr(model, "path", None)
            runs = getattr(model, "path", None)
            return ModelDescription(
                path=str(source or self.model_path()),
                name=model.name,
                kind=model.kind.value,
                critic=getattr(engine, "critic_name", "selfrag"),
                runs_from=str(runs) if runs is not None and runs != source else None,
            )

    def unload_model(self) -> None:
        with self._model_lock:
            if self._model is not None:
                self._model.close()
            self._model = None
            self._engine = None

    def _get_engine(self) -> Any:
        if self._engine is None:
            from models.base import ModelKind

            from localrag.answering.generate.selfrag import EngineConfig

            selfrag = self.model.kind is ModelKind.SELFRAG
            config = EngineConfig.from_settings(self.settings, selfrag=selfrag)
            if selfrag:
                from localrag.answering.judge.critics import EmbeddingCritic
                from localrag.answering.generate.selfrag import SelfRagEngine

                # labels sentences the model wrote no IsSup token for; the embedder
                # loads only when such a sentence is shown
                critic = EmbeddingCritic(lambda texts: self.embedder.encode(texts))
                self._engine = SelfRagEngine(self.model, config=config, critic=critic)
            else:
                from localrag.answering.generate.instruct import InstructEngine

                self._engine = InstructEngine.for_model(
                    self.model, config=config, embed=self.embedder.encode)
        return self._engine

    # -- model files: the catalogue, local files, downloads -------------------------------------
    def models_overview(self) -> "ModelsOverview":
        """The catalogue next to the model files here: installed, partial, in use, disk space."""
        from localrag.errors import USER_ERRORS
        from localrag.model_files import overview

        in_use = Path(self.settings.model_path).expanduser() if self.settings.model_path else None
        return overview(self.paths.models_dir, in_use, user_errors=USER_ERRORS)

    def pull_model(self, name: str | None = None, *,
                   progress: "Callable[[PullProgress], None] | None" = None,
                   cancel: threading.Event | None = None, offline: bool = False,
                   use: bool = False) -> "PullResult":
        """Download a model (a catalogue name, OWNER/REPO/FILE.gguf or an https:// URL) into
        the data directory's models/ folder, checked before it gets its name; with `use`,
        make it the model in use. The one method that opens a connection: it refuses when
        the person keeps localrag offline (HF_HUB_OFFLINE=1, or `offline`)."""
        from localrag.errors import OfflineError
        from localrag.network import offline_reason
        from models.pull import parse_source, pull

        source = parse_source(name)
        reason = offline_reason(flag=offline)
        if reason is not None:
            raise OfflineError(
                f"Not downloading {source.described}: localrag is offline ({reason}).",
                hint="this is the only command that uses the network; to allow it, run it "
                "without --offline and with HF_HUB_OFFLINE unset, e.g. "
                f"`env -u HF_HUB_OFFLINE localrag models pull {source.text}`")
        result = pull(source, self.paths.models_dir, progress=progress, cancel=cancel)
        if use:
            self.use_model(result.path)
        return result

    def use_model(self, path: str | os.PathLike[str]) -> None:
        """Make `path` the model in use (saved as model_path; reloads on next use)."""
        self.update_settings(model_path=str(path))

    # -- answering ----------------------------------------------------------------------------
    def ask(self, question: str, *, on_segment: Callable[[Segment], None] | None = None,
            cancel: threading.Event | None = None, save: bool = True,
            on_decision: Callable[[RetrievalDecision], None] | None = None) -> Answer:
        """Answer `question` in the current chat (earlier turns in view) and save the turn."""
        question = question.strip()
        if not question:
            from localrag.errors import LocalragError

            raise LocalragError("The question is empty.", hint="type a question")
        with self._model_lock:
            engine = self._get_engine()
            start = time.monotonic()
            index_empty = self.index.is_empty()
            query = self_contained_query(question, self._history)
            answer = engine.answer(
                question,
                retrieve=self._retrieve,
                search_query=query,
                history=list(self._history),
                index_empty=index_empty,
                on_segment=on_segment,
                cancel=cancel,
                on_decision=on_decision,
            )
            answer.elapsed_s = time.monotonic() - start
        self._history.append((question, answer.text))
        if save:
            chats = self.chats_store
            if self.chat_id is None:
                self.chat_id = chats.new_chat()
            chats.add_turn(self.chat_id, question, answer.text, answer.to_json())
        return answer

    # -- chats --------------------------------------------------------------------------------
    @property
    def chats_store(self) -> ChatStore:
        if self._chats is None:
            self._chats = ChatStore(self.paths.chats_db)
        return self._chats

    def new_chat(self) -> None:
        self.chat_id = None
        self._history = []

    def chats(self) -> list[ChatSummary]:
        return self.chats_store.chats()

    def open_chat(self, chat_id: int) -> list[Turn]:
        turns = self.chats_store.turns(chat_id)
        self.chat_id = chat_id
        self._history = [(t.question, t.answer_text) for t in turns]
        return turns

    # -- lifecycle ----------------------------------------------------------------------------
    def close(self) -> None:
        self.stop_watching()
        self.unload_model()
        if self._index is not None:
            self._index.close()
            self._index = None
        if self._chats is not None:
            self._chats.close()
            self._chats = None

    def __enter__(self) -> "Assistant":
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()
