"""Incremental updates, moves without re-embedding, batching, hybrid search, the HNSW cache."""

from __future__ import annotations

import os
import time

import pytest

from indexer import updater
from indexer.index import Index
from indexer.search import fts_query
from indexer_corpus import write_corpus


class CountingEmbedder:
    """The real embedder, counting what it is asked to encode."""

    def __init__(self, inner):
        self.inner = inner
        self.calls = 0
        self.texts = 0

    name = property(lambda self: self.inner.name)
    dim = property(lambda self: self.inner.dim)

    def encode(self, texts, **kw):
        self.calls += 1
        self.texts += len(texts)
        return self.inner.encode(texts, **kw)


def chunk_ids(idx):
    return {r[0] for r in idx.store.conn.execute("SELECT id FROM chunks")}


def test_new_modified_deleted_moved(tmp_path, embedder, index_options):
    root = tmp_path / "docs"
    write_corpus(root, 6)
    counting = CountingEmbedder(embedder)
    idx = Index(tmp_path / "index", options=index_options, embedder=counting)
    try:
        idx.add_root(root)
        first = idx.update()
        assert first.added == 6 and first.chunks_added > 0
        assert counting.calls < 6          # embedded in batches across files, not per file
        embedded = counting.texts

        # unchanged: no reading, no parsing, no embedding
        def no_parse(*a, **k):
            raise AssertionError("unchanged files must not be parsed")

        original_parse = updater.parse_bytes
        updater.parse_bytes = no_parse
        try:
            again = idx.update()
        finally:
            updater.parse_bytes = original_parse
        assert again.unchanged == 6 and again.added == again.updated == 0
        assert counting.texts == embedded

        # modified (content changes) -> re-embedded; touched only -> not
        (root / "note_0001.md").write_text("# Changed\n\nNow it is about a pelican fishing.\n")
        t = time.time() + 5
        os.utime(root / "note_0002.md", (t, t))
        before = counting.texts
        report = idx.update()
        assert report.updated == 1 and report.unchanged == 5
        assert counting.texts - before == report.chunks_added
        assert idx.search("pelican fishing", k=1)[0].path == str(root / "note_0001.md")

        # moved / renamed: same content -> chunks reused, nothing embedded
        ids_before = chunk_ids(idx)
        (root / "sub").mkdir()
        os.rename(root / "note_0003.md", root / "sub" / "renamed.md")
        before = counting.texts
        report = idx.update()
        assert report.moved == 1 and report.added == 0 and report.removed == 0
        assert counting.texts == before
        assert chunk_ids(idx) == ids_before
        hit = idx.search("glacier number 3", k=1)[0]
        assert hit.path == str(root / "sub" / "renamed.md") and hit.title.startswith("renamed.md")

        # a copy reuses the stored embeddings too
        (root / "copy.md").write_bytes((root / "note_0004.md").read_bytes())
        before = counting.texts
        report = idx.update()
        assert report.added == 1 and counting.texts == before

        # deleted
        os.remove(root / "note_0005.md")
        report = idx.update()
        assert report.removed == 1
        assert all(p.path != str(root / "note_0005.md") for p in idx.search("lighthouse", k=10))
        # the HNSW labels always equal the chunk ids
        assert idx._vectors_index().labels() == chunk_ids(idx)
    finally:
        idx.close()


def test_update_only_given_paths(make_index, tmp_path):
    root = tmp_path / "docs"
    write_corpus(root, 3)
    idx = make_index()
    idx.add_root(root)
    idx.update()
    (root / "note_0000.md").write_text("Only this one changed: marmots whistle.\n")
    (root / "note_0001.md").write_text("This one changed too but is not named: ibis.\n")
    report = idx.update([root / "note_0000.md"])
    assert report.updated == 1 and report.unchanged == 0
    assert idx.search("marmots whistle", k=1)[0].path.endswith("note_0000.md")
    assert "ibis" not in " ".join(p.text for p in idx.search("ibis", k=5))
    with pytest.raises(Exception) as info:
        idx.update([tmp_path / "elsewhere"])
    assert "not inside any indexed folder" in str(info.value)


def test_hybrid_search_json_and_hostile_queries(make_index, tmp_path):
    root = tmp_path / "docs"
    root.mkdir()
    (root / "ids.md").write_text("# Codes\n\nThe error code XJ-4471 means the flux capacitor is cold.\n")
    (root / "prose.md").write_text("# Weather\n\nIt is sunny and warm at the beach today.\n")
    idx = make_index()
    idx.add_root(root)
    idx.update()
    # a rare identifier is found by BM25 even though embeddings blur it
    hit = idx.search("XJ-4471", k=1)[0]
    assert hit.path.endswith("ids.md")
    assert set(hit.to_json()) == {"path", "title", "start_line", "end_line", "page", "score", "text"}
    assert hit.start_line == 1 and hit.end_line == 3 and hit.score > 0
    # semantic match with no shared words comes from the dense side
    assert idx.search("hot summer day by the sea", k=1)[0].path.endswith("prose.md")
    for q in ['"unbalanced', "a AND OR NOT (", "title:foo*", "-minus -- ^caret", "NEAR(x y)", "'", "é ü 北京"]:
        idx.search(q, k=3)   # must not raise
    assert fts_query('say "hi" -now') == '"say" OR "hi" OR "now"'
    assert idx.search("   ") == []


def test_surrounding_text(make_index, tmp_path):
    root = tmp_path / "docs"
    root.mkdir()
    paras = [f"Paragraph {i} talks about topic{i} in several plain words here." for i in range(30)]
    (root / "long.md").write_text("# Long\n\n" + "\n\n".join(paras) + "\n")
    idx = make_index()
    idx.add_root(root)
    idx.update()
    hit = idx.search("topic15", k=1)[0]
    text, start, end = idx.surrounding(hit, chars=200)
    assert text[start:end] == hit.text
    assert len(text) > len(hit.text) and start > 0
    source = (root / "long.md").read_text()
    assert text in source


def test_remove_root(make_index, tmp_path):
    a, b = tmp_path / "a", tmp_path / "b"
    write_corpus(a, 2)
    (b).mkdir()
    (b / "zebra.md").write_text("Zebras have stripes.\n")
    idx = make_index()
    idx.add_root(a)
    idx.add_root(b)
    idx.update()
    assert idx.remove_root(a) == 2
    assert [r.path for r in idx.roots()] == [str(b)]
    assert idx._vectors_index().labels() == chunk_ids(idx)
    assert all(p.path.startswith(str(b)) for p in idx.search("volcano", k=5))
    with pytest.raises(Exception, match="not an indexed folder"):
        idx.remove_root(a)
    with pytest.raises(Exception, match="No such file or folder"):
        idx.add_root(tmp_path / "missing")


def test_hnsw_cache_rebuilt_when_missing_corrupt_or_stale(make_index, tmp_path, embedder, index_options):
    root = tmp_path / "docs"
    write_corpus(root, 4)
    idx = make_index()
    idx.add_root(root)
    idx.update()
    ids = chunk_ids(idx)
    idx.close()
    hnsw = tmp_path / "index" / "vectors.hnsw"

    hnsw.write_bytes(b"garbage")                               # corrupt
    idx2 = make_index()
    assert idx2._vectors_index().labels() == ids
    assert idx2.search("telescope", k=1)
    idx2.close()

    # stale: SQLite moved on (a chunk deleted behind the cache's back)
    import sqlite3

    conn = sqlite3.connect(tmp_path / "index" / "index.db")
    victim = max(ids)
    conn.execute("DELETE FROM chunks WHERE id=?", (victim,))
    conn.execute("UPDATE meta SET value = CAST(value AS INTEGER) + 1 WHERE key='generation'")
    conn.commit()
    conn.close()
    idx3 = make_index()
    assert idx3._vectors_index().labels() == ids - {victim}
    idx3.close()

    hnsw.unlink()                                              # missing
    idx4 = make_index()
    assert idx4._vectors_index().labels() == ids - {victim}


def test_progress_and_cancel(make_index, tmp_path, index_options):
    import dataclasses
    import threading

    root = tmp_path / "docs"
    # 30 files of 2 chunks: batches of 16 chunks; a batch is committed while the next one
    # is embedded (updater._flush), so the first commit comes at the second batch
    write_corpus(root, 30, paragraphs=3)
    idx = make_index(options=dataclasses.replace(index_options, batch_size=4))   # commits every 16 chunks
    idx.add_root(root)
    cancel = threading.Event()
    seen = []

    def progress(p):
        seen.append(p)
        if p.chunks_done >= 16:
            cancel.set()

    report = idx.update(progress=progress, cancel=cancel)
    assert report.cancelled
    assert {"scanning", "indexing", "embedding", "done"} <= {p.phase for p in seen}
    assert max(p.bytes_done for p in seen) > 0 and seen[-1].elapsed_s > 0
    indexed = idx.status().files_indexed
    assert 0 < indexed < 30
    report = idx.update()                                     # picks up the rest
    assert report.added == 30 - indexed and idx.status().files_indexed == 30


def test_a_new_chunk_size_rechunks_every_file(tmp_path, embedder, index_options):
    import dataclasses

    root = tmp_path / "docs"
    root.mkdir()
    sentences = " ".join(f"Sentence number {i} talks about topic {i % 7} in some detail." for i in range(120))
    (root / "long.md").write_text(f"# Long\n\n{sentences}\n")
    (root / "short.txt").write_text("A short note about the greenhouse.\n")
    idx = Index(tmp_path / "index", options=index_options, embedder=embedder)   # 60 words
    try:
        idx.add_root(root)
        idx.update()
        small = idx.store.conn.execute("SELECT COUNT(*) FROM chunks").fetchone()[0]
        assert idx.update().unchanged == 2          # same options: nothing to do
    finally:
        idx.close()

    bigger = dataclasses.replace(index_options, chunk_words=300)
    idx = Index(tmp_path / "index", options=bigger, embedder=embedder)
    try:
        report = idx.update()
        assert report.updated == 2 and report.unchanged == 0
        large = idx.store.conn.execute("SELECT COUNT(*) FROM chunks").fetchone()[0]
        assert large < small
        assert idx.update().unchanged == 2           # and only once
        assert idx.search("topic 3 in some detail", k=1)[0].path.endswith("long.md")
    finally:
        idx.close()


def test_assistant_applies_a_new_chunk_size_without_a_restart(tmp_path, embedder):
    from localrag.assistant import Assistant
    from localrag.paths import Paths
    from localrag.settings import Settings

    root = tmp_path / "docs"
    root.mkdir()
    text = " ".join(f"Line {i} of the notebook mentions item {i % 5} twice, item {i % 5}." for i in range(100))
    (root / "notebook.md").write_text(f"# Notebook\n\n{text}\n")
    settings = Settings(chunk_words=60)
    with Assistant(paths=Paths.resolve(tmp_path / "data"), settings=settings, embedder=embedder) as a:
        a.add_root(root)
        a.update_index()
        before = a.status().chunks
        a.update_settings(chunk_words=400)
        assert a.update_index().updated == 1
        assert a.status().chunks < before
