"""Typed messages that worker threads post back to the UI thread.

Workers never touch widgets: they post one of these (``post_message`` is thread-safe) and
the app or a screen updates its widgets on the UI thread.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from textual.message import Message

if TYPE_CHECKING:
    from indexer.records import FileProblem, IndexProgress, IndexReport, IndexStatus, WatchEvent
    from localrag.answering.label.answer import Answer, RetrievalDecision, Segment
    from localrag.assistant import ModelDescription
    from models.pull import PullProgress, PullResult


class ModelLoaded(Message):
    def __init__(self, description: "ModelDescription") -> None:
        super().__init__()
        self.description = description


class ModelFailed(Message):
    def __init__(self, error: BaseException) -> None:
        super().__init__()
        self.error = error


class SegmentReady(Message):
    """One more sentence of a running answer (turn `turn_id`)."""

    def __init__(self, turn_id: int, segment: "Segment") -> None:
        super().__init__()
        self.turn_id = turn_id
        self.segment = segment


class DecisionReady(Message):
    """The engine decided whether to retrieve (turn `turn_id`), before any text."""

    def __init__(self, turn_id: int, decision: "RetrievalDecision") -> None:
        super().__init__()
        self.turn_id = turn_id
        self.decision = decision


class AnswerDone(Message):
    def __init__(self, turn_id: int, answer: "Answer") -> None:
        super().__init__()
        self.turn_id = turn_id
        self.answer = answer


class AnswerStopped(Message):
    """The answer of `turn_id` ended without an Answer: cancelled or failed."""

    def __init__(self, turn_id: int, *, cancelled: bool, error: BaseException | None = None) -> None:
        super().__init__()
        self.turn_id = turn_id
        self.cancelled = cancelled
        self.error = error


class IndexProgressed(Message):
    """Latest progress of an index run (already collapsed to at most ~10 per second)."""

    def __init__(self, progress: "IndexProgress") -> None:
        super().__init__()
        self.progress = progress


class IndexFinished(Message):
    def __init__(self, report: "IndexReport | None", *, error: BaseException | None = None) -> None:
        super().__init__()
        self.report = report
        self.error = error


class IndexStatusChanged(Message):
    def __init__(self, status: "IndexStatus") -> None:
        super().__init__()
        self.status = status


class ProblemFilesLoaded(Message):
    """One more page of a group of files not indexed (for the index screen's tree)."""

    def __init__(self, state: str, kind: str, offset: int, files: list["FileProblem"]) -> None:
        super().__init__()
        self.state = state
        self.kind = kind
        self.offset = offset
        self.files = files


class FilesChanged(Message):
    """The folder watcher re-indexed some files."""

    def __init__(self, event: "WatchEvent") -> None:
        super().__init__()
        self.event = event


class ShowError(Message):
    """Any error to show in the one error place (a notification)."""

    def __init__(self, error: BaseException, *, context: str = "") -> None:
        super().__init__()
        self.error = error
        self.context = context


class CitationSelected(Message):
    """A citation was picked in an answer: open the source panel."""

    def __init__(self, answer: "Answer", index: int, *, line: int | None = None,
                 quote: str = "") -> None:
        super().__init__()
        self.answer = answer
        self.index = index
        self.line = line      # a quote's own file line: the panel opens there
        self.quote = quote    # the quote's text, highlighted inside its passage


class PullProgressed(Message):
    """Latest progress of the model download (at most ~10 per second)."""

    def __init__(self, progress: "PullProgress") -> None:
        super().__init__()
        self.progress = progress


class PullFinished(Message):
    """The model download `name` ended: a result, a cancel (the part is kept), or an error."""

    def __init__(self, name: str, result: "PullResult | None", *, cancelled: bool = False,
                 error: BaseException | None = None) -> None:
        super().__init__()
        self.name = name
        self.result = result
        self.cancelled = cancelled
        self.error = error
