"""BM25's vocabulary (indexer/vocabulary.py): a writer numbers terms in a dict, a reader
looks a query's terms up in the saved table, mapped and bisected, without reading the
vocabulary whole (millions of terms in a folder of code: 1.5 s and 500 MB as a dict)."""

from __future__ import annotations

import json

import pytest

from indexer import vocabulary
from indexer.bm25 import FORMAT, Bm25Index
from indexer.vocabulary import Vocabulary

# ASCII, accents, a script whose vowel signs are not letters, an emoji, symbols and flags:
# the table's byte order has to agree with str order for all of them
TERMS = ["watchdog", "--color", "<<<", "straße", "നാടകത്തിൽ", "zz", "a", "ä", "\U0001f600",
         "os.path.join", "192.168.1.40", "Z", "[[", "~", "token-0150-zq"]


def _saved(tmp_path, terms, token="t1", *, sort_every=None, monkeypatch=None):  # noqa: ANN001, ANN202
    if sort_every is not None:
        monkeypatch.setattr(vocabulary, "SORT_EVERY", sort_every)
    vocab = Vocabulary()
    ids = vocab.count_ids(terms)
    count = vocab.save(tmp_path, token)
    return vocab, ids, count


@pytest.mark.parametrize("sort_every", [0, 1000])   # all sorted / all in the unsorted rest
def test_a_reader_finds_every_term_in_the_saved_table(tmp_path, monkeypatch, sort_every):
    _, ids, count = _saved(tmp_path, TERMS, sort_every=sort_every, monkeypatch=monkeypatch)
    assert count == (len(TERMS) if sort_every == 0 else 0)
    reader = Vocabulary.load(tmp_path, "t1", count)
    assert [reader.get(t) for t in TERMS] == list(range(len(TERMS)))
    assert [reader.term(i) for i in range(len(TERMS))] == TERMS
    for missing in ["watchdogs", "", "-color", "നാടകം", "zzz", "\U0001f601", "0"]:
        assert reader.get(missing) is None, missing
    assert reader._dict is None            # looked up in place: no dict was built


def test_terms_added_after_the_last_sort_are_found(tmp_path, monkeypatch):
    monkeypatch.setattr(vocabulary, "SORT_EVERY", 3)
    writer = Vocabulary()
    writer.count_ids(TERMS[:8])
    assert writer.save(tmp_path, "t1") == 8            # more than 3 new: sorted
    writer = Vocabulary.load(tmp_path, "t1", 8)
    counts = writer.count_ids(["zz", "new-term", "watchdog", "new-term"])   # a writer numbers on
    assert counts == {5: 1, 8: 2, 0: 1}
    assert writer.save(tmp_path, "t2") == 8            # one new term: left unsorted
    reader = Vocabulary.load(tmp_path, "t2", 8)
    assert reader.get("new-term") == 8 and reader.get("straße") == 3 and reader.get("zz") == 5
    writer.count_ids(TERMS[8:])
    assert writer.save(tmp_path, "t3") == len(TERMS) + 1   # 7 more: sorted again
    reader = Vocabulary.load(tmp_path, "t3", len(TERMS) + 1)
    assert reader.get("new-term") == 8 and reader.get("token-0150-zq") == len(TERMS)
    assert reader._recent == {}


def test_a_table_that_does_not_fit_its_count_is_refused(tmp_path):
    _saved(tmp_path, TERMS)
    with pytest.raises(ValueError):
        Vocabulary.load(tmp_path, "t1", len(TERMS) + 5)


def test_a_search_maps_the_table_and_a_writer_builds_its_dict_once(tmp_path, monkeypatch):
    """Through Bm25Index: saved, loaded by a reader (no dict), searched; a writer adds to it,
    saves, and the new chunk's rare term is found by the next reader."""
    monkeypatch.setattr(vocabulary, "SORT_EVERY", 0)
    bm = Bm25Index(tmp_path)
    bm.add_many([(i, f"note {i} about the kernel watchdog timer") for i in range(50)]
                + [(99, "my invoice token-0150-zq is paid")])
    bm.generation = 1
    bm.save()
    assert json.loads((tmp_path / "lexical.json").read_text())["format"] == FORMAT
    reader = Bm25Index(tmp_path)
    assert reader._load()
    assert reader.search("token-0150-zq", 3)[0][0] == 99
    assert reader.vocab._dict is None
    reader.add_many([(100, "a second invoice token-0151-zq")])   # now a writer
    assert reader.vocab._dict is not None
    reader.generation = 2
    reader.save()
    again = Bm25Index(tmp_path)
    assert again._load()
    assert again.search("token-0151-zq", 3)[0][0] == 100
    assert again.search("token-0150-zq", 3)[0][0] == 99


def test_an_index_saved_by_format_3_is_read_with_its_terms_whole(tmp_path):
    """Format 3 kept the terms in the .npz: a reader still searches it."""
    import numpy as np

    bm = Bm25Index(tmp_path)
    bm.add_many([(1, "kernel watchdog timer"), (2, "invoice token-0150-zq")])
    bm.generation = 1
    bm.save()
    with np.load(tmp_path / "lexical.npz") as z:
        arrays = {k: z[k] for k in z.files if k != "sorted_terms"}
    arrays["vocab"] = np.frombuffer("\n".join(bm.vocab.term(i) for i in range(len(bm.vocab))).encode(),
                                    dtype=np.uint8)
    np.savez(tmp_path / "lexical.npz", **arrays)
    meta = json.loads((tmp_path / "lexical.json").read_text())
    (tmp_path / "lexical.json").write_text(json.dumps({**meta, "format": 3}))
    old = Bm25Index(tmp_path)
    assert old._load() and old.loaded_format == 3
    assert old.search("token-0150-zq", 1)[0][0] == 2
    assert old.search("watchdog", 1)[0][0] == 1
