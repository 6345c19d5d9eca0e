"""A fake Assistant for fast, deterministic TUI tests and snapshots.

It keeps the real facade's API and the real chat store (SQLite in the temporary data
directory); only the index and the model are replaced: a tiny in-memory word-overlap
index over .md/.txt files and a canned answer engine that streams its segments through
`on_segment` and honours `cancel` like the real engines.
"""

from __future__ import annotations

import threading
import time
from pathlib import Path
from typing import Any

from indexer.reasons import label
from indexer.records import (FileProblem, IndexProgress, IndexReport, IndexStatus, Passage,
                             ProblemGroup, RootInfo)
from localrag.answering.label.answer import Answer, PassageJudgement, RetrievalDecision, Scores, Segment
from localrag.assistant import Assistant, ModelDescription
from localrag.errors import AnswerCancelled
from localrag.paths import Paths
from localrag.settings import Settings
from models.errors import ModelFileError


def canned_passages(root: str = "/docs") -> list[Passage]:
    return [
        Passage(chunk_id=1, path=f"{root}/garden.md", title="garden.md > Tomatoes",
                text="Tomatoes need six hours of sun and deep watering twice a week.",
                start_line=12, end_line=14, page=None, char_start=300, char_end=362,
                score=0.91),
        Passage(chunk_id=2, path=f"{root}/manual.pdf", title="manual.pdf",
                text="Water the seedlings lightly every morning.", start_line=None,
                end_line=None, page=3, char_start=1200, char_end=1242, score=0.74),
        Passage(chunk_id=3, path=f"{root}/recipes.md", title="recipes.md > Soup",
                text="Roast the tomatoes before blending the soup.", start_line=40,
                end_line=41, page=None, char_start=900, char_end=944, score=0.33),
    ]


def canned_answer(question: str, passages: list[Passage] | None = None) -> Answer:
    """An answer with all four labels, two different citations and one irrelevant passage."""
    passages = passages if passages is not None else canned_passages()
    judged = [
        PassageJudgement(passages[0], relevance=0.93, relevant=True),
        PassageJudgement(passages[1], relevance=0.71, relevant=True),
        PassageJudgement(passages[2], relevance=0.12, relevant=False),
    ][:len(passages)]
    sentences = [
        ("Tomatoes need six hours of sun.", "fully", 0),
        ("Water them deeply twice a week.", "partially", 0),
        ("Seedlings want a little water each morning.", "partially", 1 if len(judged) > 1 else 0),
        ("They originally come from South America.", "no_retrieval", None),
        ("They grow best on the moon.", "none", 0),
    ]
    segments = [
        Segment(text=t, label=label, scores=Scores(rel=0.9, sup=0.8, use=0.7, seq=0.5, total=2.4),
                citation=c, passage=judged[c].passage if c is not None else None)
        for t, label, c in sentences
    ]
    return Answer(
        question=question, search_query=question,
        decision=RetrievalDecision(mode="adaptive", retrieved=True, probability=0.63,
                                   threshold=0.2, reason="p=0.63 > 0.20"),
        passages=judged, segments=segments, critic="selfrag", model="fake-selfrag",
        elapsed_s=1.5,
    )


MARKDOWN_ANSWER = (
    "Use `git stash` to put your changes aside. Run it in the repository:\n\n"
    "```sh\n"
    "git stash push -m \"wip\"\n"
    "git stash list\n"
    "    # indented: stash@{0}\n"
    "```\n\n"
    "1. **Save** the work with `git stash`.\n"
    "2. Bring it back with `git stash pop`.\n\n"
    "That is all.")
"""A Markdown answer with prose, a code block (an indented line in it) and a list."""


def canned_markdown_answer(question: str, passages: list[Passage] | None = None) -> Answer:
    """`MARKDOWN_ANSWER` split into units by localrag.answering.label.units, as the engines do."""
    from localrag.answering.label.units import split_units

    answer = canned_answer(question, passages)
    labels = ["fully", "partially", "fully", "none", "fully", "no_retrieval"]
    units = split_units(MARKDOWN_ANSWER)
    assert len(units) == len(labels), units
    answer.segments = [
        Segment(text=u.text, kind=u.kind, starts_block=u.starts_block, label=label,
                scores=Scores(rel=0.9, sup=0.8, use=0.7, seq=0.5, total=2.4),
                citation=None if label == "no_retrieval" else 0,
                passage=None if label == "no_retrieval" else answer.passages[0].passage)
        for u, label in zip(units, labels)]
    return answer


class FakeAssistant(Assistant):
    """The real facade with an in-memory index and a canned engine."""

    def __init__(self, data_dir: Path, *, segment_delay: float = 0.0,
                 model_delay: float = 0.0, settings: Settings | None = None) -> None:
        super().__init__(paths=Paths(Path(data_dir).resolve()),
                         settings=settings or Settings.load(Path(data_dir) / "settings.toml"))
        self.segment_delay = segment_delay
        self.model_delay = model_delay
        self._roots: dict[str, float] = {}
        self._files: dict[str, list[Passage]] = {}
        self._problems: list[FileProblem] = []
        self.asked: list[str] = []
        self.answers: list[Answer] = []
        self.loaded: ModelDescription | None = None
        self.watch_callbacks: list[Any] = []
        self.started = threading.Event()      # set when an answer starts streaming
        self.gate: threading.Semaphore | None = None   # when set, one release per segment
        self.progress_calls = 0
        self.index_gate: threading.Semaphore | None = None   # when set, one release per file
        self.make_answer = canned_answer      # question, passages -> the Answer to stream

    # -- index ------------------------------------------------------------------------------
    def add_root(self, path: Any) -> RootInfo:
        self._roots[str(Path(path).resolve())] = 1_700_000_000.0
        return self._root_info(str(Path(path).resolve()))

    def remove_root(self, path: Any) -> int:
        path = str(path)
        self._roots.pop(path, None)
        gone = [f for f in self._files if f.startswith(path + "/")]
        for f in gone:
            del self._files[f]
        return len(gone)

    def _root_info(self, root: str) -> RootInfo:
        files = [f for f in self._files if f.startswith(root + "/")]
        return RootInfo(path=root, files=len(files),
                        chunks=sum(len(self._files[f]) for f in files),
                        added_at=self._roots[root])

    def roots(self) -> list[RootInfo]:
        return [self._root_info(r) for r in sorted(self._roots)]

    def update_index(self, paths: Any = None, *, progress: Any = None,
                     cancel: threading.Event | None = None, dry_run: bool = False) -> IndexReport:
        files = sorted(f for r in self._roots for f in Path(r).rglob("*") if f.is_file())
        report = IndexReport()
        start = time.monotonic()
        chunks = 0
        for i, f in enumerate(files):
            if self.index_gate is not None:
                while not self.index_gate.acquire(timeout=0.05):
                    if cancel is not None and cancel.is_set():
                        break
            if cancel is not None and cancel.is_set():
                report.cancelled = True
                break
            if f.suffix not in (".md", ".txt"):
                report.skipped += 1
                self._problems.append(FileProblem(str(f), "skipped", "unsupported file type",
                                                  "unsupported_type"))
                continue
            try:
                text = f.read_text(encoding="utf-8")
            except (OSError, UnicodeDecodeError) as exc:
                report.errors += 1
                self._problems.append(FileProblem(str(f), "error", f"cannot read: {exc}",
                                                  "unreadable"))
                continue
            paragraphs = [p for p in text.split("\n\n") if p.strip()]
            passages = []
            line = 1
            offset = 0
            for p in paragraphs:
                at = text.index(p, offset)
                line = text.count("\n", 0, at) + 1
                passages.append(Passage(chunk_id=len(passages) + 1 + 1000 * i, path=str(f),
                                        title=f.name, text=p, start_line=line,
                                        end_line=line + p.count("\n"), page=None,
                                        char_start=at, char_end=at + len(p), score=0.0))
                offset = at + len(p)
            report.added += 1
            chunks += len(passages)
            self._files[str(f)] = passages
            if progress is not None:
                self.progress_calls += 1
                progress(IndexProgress(phase="indexing", files_done=i + 1,
                                       files_total=len(files), chunks_done=chunks,
                                       bytes_done=0, elapsed_s=time.monotonic() - start,
                                       current_path=str(f)))
        report.chunks_added = chunks
        report.elapsed_s = time.monotonic() - start
        if progress is not None:
            progress(IndexProgress(phase="done", files_done=len(files), files_total=len(files),
                                   chunks_done=chunks, bytes_done=0,
                                   elapsed_s=report.elapsed_s))
        return report

    def status(self, *, per_group: int | None = 10, kind: str | None = None) -> IndexStatus:
        groups: dict[tuple[str, str], list[FileProblem]] = {}
        for p in sorted(self._problems, key=lambda p: p.path):
            groups.setdefault((p.state, p.kind), []).append(p)
        problems = [ProblemGroup(state, k, label(k), len(files), files[:per_group])
                    for (state, k), files in sorted(groups.items(), key=lambda g: g[0][0] != "error")
                    if kind is None or k == kind]
        return IndexStatus(roots=self.roots(), files_indexed=len(self._files),
                           files_skipped=sum(p.state == "skipped" for p in self._problems),
                           files_error=sum(p.state == "error" for p in self._problems),
                           chunks=sum(len(v) for v in self._files.values()), problems=problems,
                           db_bytes=4096, hnsw_bytes=0, embedding_model="fake")

    def problem_files(self, state: str, kind: str | None = None, *, offset: int = 0,
                      limit: int | None = 200) -> list[FileProblem]:
        files = sorted((p for p in self._problems if p.state == state and kind in (None, p.kind)),
                       key=lambda p: p.path)
        return files[offset:None if limit is None else offset + limit]

    def search(self, query: str, *, k: int | None = None) -> list[Passage]:
        words = {w.lower().strip("?.,") for w in query.split()}
        scored = []
        for passages in self._files.values():
            for p in passages:
                overlap = len(words & {w.lower().strip("?.,") for w in p.text.split()})
                if overlap:
                    scored.append((overlap, p))
        scored.sort(key=lambda t: -t[0])
        return [p for _, p in scored[: k or self.settings.k]]

    def surrounding(self, passage: Passage, *, chars: int = 1500) -> tuple[str, int, int]:
        try:
            text = Path(passage.path).read_text(encoding="utf-8")
        except OSError:
            before = "…the text before the passage.\n"
            text = before + passage.text + "\nThe text after the passage…"
            return text, len(before), len(before) + len(passage.text)
        return text, passage.char_start, passage.char_end

    def start_watching(self, on_event: Any, *, on_error: Any = None,
                       debounce_s: float = 0.5) -> None:
        self.watch_callbacks = [on_event, on_error]

    def stop_watching(self) -> None:
        self.watch_callbacks = []

    # -- model -------------------------------------------------------------------------------
    def load_model(self) -> ModelDescription:
        if self.model_delay:
            time.sleep(self.model_delay)
        path = self.settings.model_path
        if path:
            data = Path(path).read_bytes()[:4] if Path(path).exists() else b""
            if data != b"GGUF":
                raise ModelFileError(f"{path} is not a GGUF model file.",
                                     hint="pick a .gguf file in the settings (f4)")
        self.loaded = ModelDescription(path=path or "fake.gguf", name="fake-selfrag",
                                       kind="selfrag", critic="selfrag")
        return self.loaded

    def unload_model(self) -> None:
        self.loaded = None

    def ask(self, question: str, *, on_segment: Any = None,
            cancel: threading.Event | None = None, save: bool = True,
            on_decision: Any = None) -> Answer:
        self.asked.append(question)
        found = self.search(question, k=3)
        found += canned_passages()[len(found):]        # always three passages
        answer = self.make_answer(question, found)
        if on_decision is not None:
            on_decision(answer.decision)
        self.started.set()
        for seg in answer.segments:
            if self.gate is not None:
                self.gate.acquire()
            if self.segment_delay and cancel is not None:
                cancel.wait(self.segment_delay)
            if cancel is not None and cancel.is_set():
                raise AnswerCancelled("The answer was cancelled.")
            if on_segment is not None:
                on_segment(seg)
        self.answers.append(answer)
        if save:
            chats = self.chats_store
            if self.chat_id is None:
                self.chat_id = chats.new_chat()
            chats.add_turn(self.chat_id, question, answer.text, answer.to_json())
        return answer
