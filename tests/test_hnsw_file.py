"""The saved hnswlib file read in place (indexer/hnsw_file.py), and the one-shot search
that scans it instead of loading the graph (Index(one_shot=True), `localrag search`)."""

from __future__ import annotations

import numpy as np
import pytest

from indexer.hnsw_file import MappedVectors
from indexer.index import Index


def saved_hnsw(tmp_path, n=3000, dim=384, deleted_every=7):
    import hnswlib

    rng = np.random.default_rng(5)
    x = rng.normal(size=(n, dim)).astype(np.float32)
    labels = np.arange(n, dtype=np.int64) * 3 + 11          # labels are not row numbers
    index = hnswlib.Index(space="cosine", dim=dim)
    index.init_index(max_elements=n + 500, M=16, ef_construction=100)
    index.add_items(x, labels)
    gone = labels[::deleted_every]
    for label in gone:
        index.mark_deleted(int(label))
    path = tmp_path / "vectors.hnsw"
    index.save_index(str(path))
    return path, index, x, labels, set(int(g) for g in gone)


def test_mapped_file_holds_the_saved_vectors_labels_and_delete_marks(tmp_path):
    path, index, x, labels, gone = saved_hnsw(tmp_path)
    view = MappedVectors.open(path, 384)
    assert view is not None
    assert len(view) == len(labels) - len(gone)
    assert set(view.labels().tolist()) == set(labels.tolist()) - gone
    some = [int(labels[i]) for i in (1, 2, 500, 2999)]
    assert np.array_equal(view.vectors_of(some), np.asarray(index.get_items(some), dtype=np.float32))
    with pytest.raises(KeyError):
        view.vectors_of([int(labels[0])])                  # deleted: not a live vector


def test_mapped_scan_is_the_exact_neighbours(tmp_path, monkeypatch):
    import indexer.hnsw_file as hnsw_file

    monkeypatch.setattr(hnsw_file, "_BLOCK_ROWS", 700)   # best of several blocks merged
    path, _index, x, labels, gone = saved_hnsw(tmp_path)
    view = MappedVectors.open(path, 384)
    unit = x / np.linalg.norm(x, axis=1, keepdims=True)
    live = np.array([int(label) not in gone for label in labels])
    for seed in range(5):
        q = np.random.default_rng(seed).normal(size=384).astype(np.float32)
        sims = unit @ (q / np.linalg.norm(q))
        sims[~live] = -np.inf
        want = [int(labels[i]) for i in np.argsort(-sims)[:10]]
        got = view.knn(q, 10)
        assert [label for label, _ in got] == want
        # cosines as float32 dot products: BLAS and numpy sum in other orders, ~1e-7 apart
        assert np.allclose([s for _, s in got], np.sort(sims)[::-1][:10], atol=1e-5)
    assert view.knn(np.zeros(384, dtype=np.float32), 5) == []


def test_files_of_another_shape_are_not_mapped(tmp_path):
    path, *_ = saved_hnsw(tmp_path, n=200)
    assert MappedVectors.open(path, 128) is None                     # another dimension
    short = tmp_path / "short.hnsw"
    short.write_bytes(path.read_bytes()[:-5000])                     # truncated
    assert MappedVectors.open(short, 384) is None
    junk = tmp_path / "junk.hnsw"
    junk.write_bytes(b"not an index" * 20)
    assert MappedVectors.open(junk, 384) is None
    assert MappedVectors.open(tmp_path / "missing.hnsw", 384) is None
    empty = tmp_path / "empty.hnsw"
    empty.write_bytes(b"")
    assert MappedVectors.open(empty, 384) is None


NOTES = {
    "boat.md": "# Boats\n\nThe sailing boat keeps its mast folded in the winter shed by the lake.\n",
    "bread.md": "# Bread\n\nSourdough bread needs the starter fed twelve hours before baking.\n",
    "bike.md": "# Bike\n\nThe bicycle chain is oiled every two hundred kilometres with dry lube.\n",
    "tax.md": "# Taxes\n\nThe tax return is filed in April; keep receipts for seven years.\n",
    "plants.md": "# Plants\n\nWater the fern twice a week and keep it out of direct sun.\n",
}


@pytest.fixture
def built(tmp_path, make_index):
    docs = tmp_path / "docs"
    docs.mkdir()
    for name, text in NOTES.items():
        (docs / name).write_text(text)
    idx = make_index()
    idx.add_root(docs)
    idx.update()
    idx.close()
    return tmp_path / "index", docs


def one_shot(index_dir, embedder, index_options):
    return Index(index_dir, options=index_options, embedder=embedder, one_shot=True)


def test_one_shot_search_scans_the_saved_file_and_finds_what_loading_finds(built, embedder, index_options):
    index_dir, _docs = built
    normal = Index(index_dir, options=index_options, embedder=embedder)
    quick = one_shot(index_dir, embedder, index_options)
    try:
        for query in ("when do I oil my bike chain", "how long to keep receipts", "sourdough starter"):
            a = [(p.path, p.start_line) for p in normal.search(query, k=3)]
            b = [(p.path, p.start_line) for p in quick.search(query, k=3)]
            assert a == b
        assert quick._vectors_index()._mapped is not None      # scanned, never loaded
        assert quick._vectors_index()._index is None
        assert normal._vectors_index()._mapped is None
    finally:
        normal.close()
        quick.close()


def test_one_shot_reader_catches_up_with_a_later_write(built, embedder, index_options, make_index):
    index_dir, docs = built
    quick = one_shot(index_dir, embedder, index_options)
    try:
        assert "boat.md" in quick.search("sailing boat mast", k=1)[0].path
        assert quick._vectors_index()._mapped is not None
        (docs / "kayak.md").write_text("# Kayak\n\nThe kayak paddle is feathered at sixty degrees.\n")
        writer = make_index()
        writer.update()
        writer.close()
        hits = quick.search("kayak paddle feather angle", k=1)
        assert hits and hits[0].path.endswith("kayak.md")
        assert quick._vectors_index()._mapped is None           # loaded to catch up
    finally:
        quick.close()


def test_one_shot_on_a_stale_file_scans_it_with_the_changes_since(built, embedder, index_options,
                                                                  make_index):
    index_dir, docs = built
    (docs / "tent.md").write_text("# Tent\n\nThe tent pegs go in at forty-five degrees in sand.\n")
    (docs / "bread.md").unlink()
    writer = make_index()
    writer.update(save_caches=False)        # SQLite has both changes; the HNSW file neither
    writer.close()
    quick = one_shot(index_dir, embedder, index_options)
    normal = Index(index_dir, options=index_options, embedder=embedder)
    try:
        hits = quick.search("angle for tent pegs in sand", k=1)
        assert hits and hits[0].path.endswith("tent.md")            # added since the save
        vectors = quick._vectors_index()
        assert vectors._mapped is not None and len(vectors._mapped.extra_labels) == 1
        for query in ("sourdough starter feeding", "water the fern", "bike chain oil"):
            got = [(p.path, p.start_line) for p in quick.search(query, k=4)]
            assert not any(path.endswith("bread.md") for path, _ in got)   # deleted since
            assert got == [(p.path, p.start_line) for p in normal.search(query, k=4)]
        assert len(vectors) == len(normal._vectors_index())
    finally:
        quick.close()
        normal.close()


def test_one_shot_loads_the_graph_when_much_changed_since_the_save(built, embedder, index_options,
                                                                  make_index, monkeypatch):
    import indexer.vectors as vectors_module

    index_dir, docs = built
    (docs / "tent.md").write_text("# Tent\n\nThe tent pegs go in at forty-five degrees in sand.\n")
    writer = make_index()
    writer.update(save_caches=False)
    writer.close()
    monkeypatch.setattr(vectors_module, "MAPPED_MAX_ADDED", 0)
    quick = one_shot(index_dir, embedder, index_options)
    try:
        hits = quick.search("angle for tent pegs in sand", k=1)
        assert hits and hits[0].path.endswith("tent.md")
        assert quick._vectors_index()._mapped is None                # loaded and repaired
    finally:
        quick.close()


def test_a_one_shot_index_that_goes_on_to_write_keeps_every_change(built, embedder, index_options):
    index_dir, docs = built
    idx = one_shot(index_dir, embedder, index_options)
    try:
        assert idx.search("sailing boat mast", k=1)[0].path.endswith("boat.md")
        assert idx._vectors_index()._mapped is not None
        (docs / "kayak.md").write_text("# Kayak\n\nThe kayak paddle is feathered at sixty degrees.\n")
        idx.update()                            # this process now writes: the graph takes over
        assert idx._vectors_index()._mapped is None
        assert idx.search("kayak paddle feather angle", k=1)[0].path.endswith("kayak.md")
        assert len(idx._vectors_index()) == idx.store.counts()["chunks"]
    finally:
        idx.close()
    again = Index(index_dir, options=index_options, embedder=embedder)
    try:
        assert again._vectors_index().open(again.store) == "loaded"  # saved in line with SQLite
        assert again.search("kayak paddle feather angle", k=1)[0].path.endswith("kayak.md")
    finally:
        again.close()


def test_cli_search_answers_without_loading_the_graph(tmp_path, monkeypatch, capsys):
    from indexer.vectors import VectorIndex
    from localrag.cli import main

    docs = tmp_path / "docs"
    docs.mkdir()
    for name, text in NOTES.items():
        (docs / name).write_text(text)
    home = tmp_path / "home"
    assert main(["--data-dir", str(home), "index", str(docs)]) == 0
    capsys.readouterr()

    def no_load(self, expected):
        raise AssertionError("the one-shot search loaded the HNSW graph")

    monkeypatch.setattr(VectorIndex, "_load", no_load)
    assert main(["--data-dir", str(home), "search", "when do I oil my bike chain"]) == 0
    first = capsys.readouterr().out.splitlines()[0]
    assert first.startswith("[1]") and "bike.md" in first
