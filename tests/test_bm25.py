"""BM25 over every query term (indexer/bm25.py): scoring, and the cache's life next to
the HNSW file (saved, reloaded, repaired after another process wrote)."""

from __future__ import annotations

import math

from indexer.bm25 import B, K1, Bm25Index, Tokenizer
from indexer.search import selective_fts_query


def _index(tmp_path, docs: dict[int, str]) -> Bm25Index:
    bm = Bm25Index(tmp_path)
    bm.add_many(list(docs.items()))
    return bm


def test_scores_are_textbook_bm25(tmp_path):
    docs = {1: "apple banana", 2: "apple apple cherry date", 3: "eggplant"}
    bm = _index(tmp_path, docs)
    scores = dict(zip(bm.labels.tolist(), bm.scores("apple").tolist()))
    n, df, avgdl = 3, 2, (2 + 4 + 1) / 3
    idf = math.log(1 + (n - df + 0.5) / (df + 0.5))
    for cid, tf, dl in ((1, 1, 2), (2, 2, 4)):
        want = idf * tf * (K1 + 1) / (tf + K1 * (1 - B + B * dl / avgdl))
        # float32 arithmetic: relative error well under 1e-5
        assert abs(scores[cid] - want) < 1e-5 * want
    assert scores[3] == 0


def test_every_content_term_counts_even_common_ones(tmp_path):
    # "kernel" is in every chunk: the old FTS5 pruning dropped such a term; here the
    # chunk holding both query terms must win over chunks holding only the rare one
    docs = {i: f"kernel module number {i}" for i in range(1, 200)}
    docs[500] = "watchdog timer notes without the other word"
    docs[501] = "kernel watchdog timer"
    bm = _index(tmp_path, docs)
    top = bm.search("how does the kernel watchdog work", 3)
    assert top[0][0] == 501
    assert {cid for cid, _ in top[:2]} == {500, 501}
    # the query's function words are not terms; content words all are
    terms = {bm.vocab.term(i) for i in bm.query_terms("how does the kernel watchdog work")}
    assert terms == {"kernel", "watchdog"}       # "work" is in no chunk


def test_selective_fts_query_would_have_dropped_the_term(make_index, tmp_path):
    """The regression this replaces: at 5,000+ chunks the FTS5 query lost common terms."""
    idx = make_index()
    store = idx.store
    with store.transaction(bump=True) as conn:
        fid = store.upsert_file(conn, path="/x/a.txt", root="/x", mtime_ns=1, size=1, sha256="a",
                                state="indexed", reason=None, chunks=5200)
        import numpy as np

        rows = [(i, "a.txt", f"kernel entry {i}", 1, 1, None, 0, 10) for i in range(5200)]
        store.insert_chunks(conn, fid, rows, np.zeros((5200, 384), dtype=np.float32))
    assert '"kernel"' not in selective_fts_query(store, "kernel watchdog")
    bm = Bm25Index(tmp_path / "bm")
    bm.open(store, set(store.chunk_ids().tolist()), store.generation())
    assert len(bm.query_terms("kernel watchdog")) == 1          # only "kernel" is in the corpus
    assert bm.search("kernel watchdog", 5)                      # and it still ranks chunks


def test_tokens_are_stemmed_and_identifiers_kept_whole():
    tok = Tokenizer()
    assert tok("Allocating pages") == tok("allocate page")
    assert "gfp_kernel" in tok("use GFP_KERNEL here")
    assert {"gfp", "kernel"} <= set(tok("use GFP_KERNEL here"))


def test_a_camel_case_name_gives_its_words(tmp_path):
    """Code names things in camelCase: a question in words finds the class, and the name
    typed whole still finds it first (it stays a term of its own). A part of one letter is
    no term; a word in capitals or with one capital is one word."""
    tok = Tokenizer()
    assert tok("RefreshTokenGrant") == ["refreshtokengr", "refresh", "token", "grant"]
    assert set(tok("HTTPServer getUTF8String")) >= {"http", "server", "get", "utf", "string"}
    assert tok("OAuth") == ["oauth", "auth"]
    assert tok("Debian NASA my_camelCase") == ["debian", "nasa", "my", "camelcas", "my_camelcase"]
    bm = _index(tmp_path, {1: "class RefreshTokenGrant(GrantTypeBase):", 2: "a token of thanks",
                           3: "refresh the page", 4: "a grant of land", 5: "kernel notes"})
    assert bm.search("grant to refresh a token", 5)[0][0] == 1
    assert bm.search("RefreshTokenGrant", 5)[0][0] == 1


def test_deleted_chunks_never_come_back_and_compaction_keeps_scores(tmp_path):
    docs = {i: f"common words {i} " + ("zebra" if i % 3 == 0 else "lion") for i in range(1, 3000)}
    bm = _index(tmp_path, docs)
    before = dict(bm.search("zebra", 50))
    bm.delete([3, 6, 9])
    after = dict(bm.search("zebra", 2000))
    assert not {3, 6, 9} & set(after)
    bm._compact()
    assert dict(bm.search("zebra", 2000)) == after
    assert set(before) - {3, 6, 9} <= set(after)


def test_saved_reloaded_and_repaired_like_the_hnsw_file(make_index, tmp_path):
    root = tmp_path / "docs"
    root.mkdir()
    (root / "a.md").write_text("# Pumps\n\nThe bilge pump runs every hour.\n")
    writer = make_index()
    writer.add_root(root)
    writer.update()
    assert writer.search("bilge", k=1)[0].path.endswith("a.md")
    lexical_file = writer.index_dir / "lexical.npz"
    assert lexical_file.exists()
    # a second process (a fresh Index on the same folder) loads the saved postings...
    reader = make_index(index_dir=writer.index_dir)
    assert reader.search("bilge", k=1)[0].path.endswith("a.md")
    assert reader._vectors_index().lexical_outcome == "loaded"
    # ...and sees what the writer adds afterwards (repaired from SQLite by generation)
    (root / "b.md").write_text("# Sails\n\nThe mizzen sail was mended in May.\n")
    writer.update()
    hits = reader.search("mizzen", k=1)
    assert hits and hits[0].path.endswith("b.md")
    (root / "a.md").unlink()
    writer.update()
    assert all(not p.path.endswith("a.md") for p in reader.search("bilge pump", k=5))
    # a damaged cache file is rebuilt from the store
    lexical_file.write_bytes(b"not a numpy file")
    third = make_index(index_dir=writer.index_dir)
    assert third.search("mizzen", k=1)[0].path.endswith("b.md")
    assert third._vectors_index().lexical_outcome == "rebuilt"


def test_a_small_tail_is_saved_as_it_is_and_loads_with_the_same_scores(tmp_path, monkeypatch):
    """A save after a few changed files (the watcher's) must not rewrite every posting:
    compacting costs ~4 s at 200k chunks (bench/bench_scale.py). The tail is saved."""
    import numpy as np

    import indexer.bm25 as bm25

    docs = {i: f"note {i} about the harbour crane and cargo number {i % 7}" for i in range(50)}
    bm = _index(tmp_path, docs)
    bm._compact()
    bm.save()
    bm.add_many([(100, "a new note about the lighthouse keeper"), (101, "cargo of the crane")])
    bm.delete([3])
    assert len(bm._tail) == 2
    compactions = []
    real = bm25.Bm25Index._compact
    monkeypatch.setattr(bm25.Bm25Index, "_compact", lambda self: (compactions.append(1), real(self)))
    bm.save()
    assert compactions == []
    again = Bm25Index(tmp_path)
    assert again._load() and len(again._tail) == 2
    # the postings are mapped, not read whole (2.7 s for 721 MB at 1M chunks)
    assert isinstance(again._rows, np.memmap) and isinstance(again._tf, np.memmap)
    for query in ("lighthouse keeper", "cargo crane", "note 3 harbour"):
        assert np.allclose(again.scores(query), bm.scores(query))
        assert again.search(query, 5) == bm.search(query, 5)
    again.delete([5])                      # a mapped index still changes and compacts
    again._compact()
    assert again.search("note 5 harbour", 50) and 5 not in {c for c, _ in again.search("note 5", 50)}


def test_a_word_keeps_its_combining_marks(tmp_path):
    """Hindi, Tamil: a vowel sign is part of its word. re's \\w split "नोट्स" into "न", "ट",
    "स", terms that every text of the script shares, so a note without the word matched."""
    from indexer.bm25 import Tokenizer

    from indexer.bm25 import words

    assert words("हिन्दी में नोट्स, நான் தமிழ்") == ["हिन्दी", "में", "नोट्स", "நான்", "தமிழ்"]
    assert len(Tokenizer()("हिन्दी में नोट्स, நான் தமிழ்")) == 5   # stemmed, five words still
    assert Tokenizer()("👩\u200d💻 coder") == ["coder"]      # a joiner between emoji is no word
    bm = _index(tmp_path, {1: "हिन्दी में नोट्स लिखना", 2: "नमस्ते दोस्त, सब ठीक है", 3: "kernel notes"})
    assert [cid for cid, _ in bm.search("नोट्स", 3)] == [1]


def test_chinese_and_japanese_words_are_found_inside_a_sentence(tmp_path):
    """No spaces between words: a run of Han or kana is indexed as its pairs of characters,
    so a word of the query matches inside a sentence (before, the whole run was one term
    and only the whole sentence typed back found it)."""
    bm = _index(tmp_path, {1: "東京タワーは333メートルです。", 2: "我的备用钥匙在姐姐家。",
                           3: "大阪城は公園の中にあります。", 4: "kernel notes"})
    assert bm.search("東京タワー", 4)[0][0] == 1
    assert bm.search("备用钥匙", 4)[0][0] == 2
    assert [cid for cid, _ in bm.search("公園", 4)] == [3]


def test_a_word_is_stemmed_by_its_script(tmp_path):
    """Russian and Greek inflect: "сестра" (sister) finds "у моей сестры" (at my sister's);
    English stemmed as before."""
    from indexer.bm25 import Tokenizer

    tok = Tokenizer()
    assert tok("сестра сестры сестрой") == ["сестр"] * 3
    assert tok("λέβητες λέβητας") == ["λεβητ"] * 2
    assert tok("running runs") == ["run", "run"]
    bm = _index(tmp_path, {1: "Запасной ключ лежит у моей сестры.", 2: "Запасной ключ лежит у моего брата.",
                           3: "kernel notes"})
    assert [cid for cid, _ in bm.search("сестра", 3)] == [1]
