"""Each distinct chunk text is embedded once: within a run, and across runs through the
text_key stored with every chunk (real SQLite, hnswlib and the real embedding model)."""

from __future__ import annotations

import numpy as np

from indexer.chunker import embedding_text
from indexer.index import Index
from indexer.store import Store

SECTIONS = {
    "Otters": "Sea otters float on their backs and crack shellfish on a flat stone. " * 9,
    "Glaciers": "A glacier grinds the valley floor and leaves moraines behind it. " * 9,
    "Lanterns": "Paper lanterns rise over the river at the autumn festival. " * 9,
}


def write(path, sections) -> None:
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text("".join(f"# {h}\n\n{t}\n\n" for h, t in sections.items()))


def stored_vectors(idx) -> dict[str, np.ndarray]:
    return {embedding_text(t, x): np.frombuffer(e, dtype=np.float32) for t, x, e in
            idx.store.conn.execute("SELECT title, text, embedding FROM chunks")}


class Counting:
    """The real embedder, counting the texts it encodes."""

    def __init__(self, inner):
        self.inner = inner
        self.texts: list[str] = []

    name = property(lambda self: self.inner.name)
    dim = property(lambda self: self.inner.dim)
    engine = property(lambda self: self.inner.engine)
    window = property(lambda self: self.inner.window)

    def count_tokens(self, texts):
        return self.inner.count_tokens(texts)

    def encode(self, texts, **kw):
        self.texts += texts
        return self.inner.encode(texts, **kw)


def test_edited_file_embeds_only_its_changed_chunks(tmp_path, embedder, index_options):
    root = tmp_path / "docs"
    write(root / "notes.md", SECTIONS)
    counting = Counting(embedder)
    idx = Index(tmp_path / "index", options=index_options, embedder=counting)
    try:
        idx.add_root(root)
        first = idx.update()
        assert first.chunks_added >= 3 and first.chunks_reused == 0
        assert first.chunks_embedded == len(counting.texts) == first.chunks_added

        before = stored_vectors(idx)
        edited = dict(SECTIONS, Glaciers="A glacier calves icebergs into the fjord each spring. " * 9)
        write(root / "notes.md", edited)
        counting.texts.clear()
        report = idx.update()
        assert report.updated == 1
        assert counting.texts and all("icebergs" in t for t in counting.texts)
        assert report.chunks_embedded == len(counting.texts)
        assert report.chunks_reused == report.chunks_added - len(counting.texts) >= 2
        assert idx.search("icebergs calving into a fjord", k=1)[0].path == str(root / "notes.md")
        # the unchanged chunks carry their first-run vectors, bit for bit (encoding again
        # would not give that: dynamic int8 quantisation scales activations per batch, so
        # a text's vector moves by a cosine of about 0.005 with the batch it is in)
        after = stored_vectors(idx)
        kept = [t for t in before if t in after]
        assert len(kept) == report.chunks_reused
        assert all(np.array_equal(before[t], after[t]) for t in kept)
    finally:
        idx.close()


def test_same_text_in_one_run_is_embedded_once(tmp_path, embedder, index_options):
    # two files of one name in two folders (different contents, so not a whole-file
    # copy) share two of three sections: those are embedded once
    root = tmp_path / "docs"
    write(root / "a" / "README.md", SECTIONS)
    write(root / "b" / "README.md", dict(SECTIONS, Otters="River otters slide down muddy banks. " * 6))
    counting = Counting(embedder)
    idx = Index(tmp_path / "index", options=index_options, embedder=counting)
    try:
        idx.add_root(root)
        report = idx.update()
        assert report.added == 2
        assert len(counting.texts) == len(set(counting.texts)) == report.chunks_embedded
        assert report.chunks_reused >= 2
        assert report.chunks_embedded + report.chunks_reused == report.chunks_added
        assert len(idx.search("paper lanterns over the river", k=10)) >= 2
    finally:
        idx.close()


def test_old_index_gets_the_key_column(tmp_path):
    """An index from before text keys (schema 2) opens; its rows have no key (not reused)."""
    import sqlite3

    import sqlite_utils

    from indexer.store import _migration_1, _migration_2

    db_path = tmp_path / "index.db"
    conn = sqlite3.connect(db_path, isolation_level=None)
    db = sqlite_utils.Database(conn)
    _migration_1(db)
    _migration_2(db)
    conn.execute("PRAGMA user_version=2")
    conn.execute("INSERT INTO files(path, root, mtime_ns, size, state, chunks) VALUES ('/d/a', '/d', 1, 1, 'indexed', 1)")
    conn.execute("INSERT INTO chunks(file_id, ord, title, text, char_start, char_end, embedding) "
                 "VALUES (1, 0, 't', 'x', 0, 1, ?)", (np.ones(4, np.float32).tobytes(),))
    conn.close()
    store = Store(db_path)
    try:
        assert store.conn.execute("SELECT text_key FROM chunks").fetchall() == [(None,)]
        assert store.vectors_by_key([b"\0" * 16]) == {}
    finally:
        store.close()
