"""Reading and parsing the next files overlaps embedding the batch before (updater._flush)."""

from __future__ import annotations

import dataclasses
import threading

from indexer import updater
from indexer.index import Index
from indexer_corpus import write_corpus

WAIT_S = 30   # only reached when the overlap is missing (then the test fails)


class FirstEncodeWaits:
    """The real embedder; its first encode returns only once a file has been parsed
    while it runs (or after WAIT_S, recording that none was)."""

    def __init__(self, inner):
        self.inner = inner
        self.started = threading.Event()
        self.parsed_meanwhile = threading.Event()
        self.overlapped: bool | None = None

    name = property(lambda self: self.inner.name)
    dim = property(lambda self: self.inner.dim)

    def encode(self, texts, **kw):
        if self.overlapped is None:
            self.started.set()
            self.overlapped = self.parsed_meanwhile.wait(WAIT_S)
        return self.inner.encode(texts, **kw)


def test_next_files_are_parsed_while_a_batch_is_embedded(tmp_path, embedder, index_options, monkeypatch):
    root = tmp_path / "docs"
    write_corpus(root, 20, paragraphs=3)        # 2 chunks a file: a batch of 16 is 8 files
    waiting = FirstEncodeWaits(embedder)
    parsed = []
    real_parse = updater.parse_bytes

    def parse(*args, **kwargs):
        if len(parsed) >= 8:                    # a file after the first batch: its embedding
            waiting.started.wait(WAIT_S)        # has been handed over (pipelined) or is done
            if waiting.overlapped is None:
                waiting.parsed_meanwhile.set()
        parsed.append(1)
        return real_parse(*args, **kwargs)

    monkeypatch.setattr(updater, "parse_bytes", parse)
    options = dataclasses.replace(index_options, batch_size=4)
    idx = Index(tmp_path / "index", options=options, embedder=waiting)
    try:
        idx.add_root(root)
        report = idx.update()
        assert waiting.overlapped is True
        assert report.added == 20 and idx.status().files_indexed == 20
        assert idx.search("Paragraph 2 of file 17", k=1)[0].path.endswith("note_0017.md")
    finally:
        idx.close()


def test_runs_do_not_collect_connections(tmp_path, embedder, index_options):
    """Each run's embedding thread opens its own SQLite connection (stored vectors are
    looked up there); it is closed when the thread ends, so a watcher that updates for days
    does not run out of file handles."""
    root = tmp_path / "docs"
    write_corpus(root, 2, paragraphs=2)
    idx = Index(tmp_path / "index", options=index_options, embedder=embedder)
    try:
        idx.add_root(root)
        idx.update()
        held = len(idx.store._all)
        note = root / "note_0000.md"
        for i in range(6):                     # six runs, each embedding a changed file
            note.write_text(f"# Note\n\nRevision {i} of the otter survey.\n")
            assert idx.update([str(note)]).updated == 1
        assert len(idx.store._all) == held
        assert "Revision 5" in idx.search("otter survey revision", k=1)[0].text
    finally:
        idx.close()
