"""Chunks sized in the embedder's own word pieces (real MiniLM tokenizer, no model run)."""

from __future__ import annotations

import re

import pytest

from indexer.chunker import Sizer, chunk_document, embedding_text, sizer_for
from indexer.embedder import Embedder
from indexer.parsers import parse_bytes


@pytest.fixture(scope="module")
def tokenizer_embedder():
    return Embedder(backend="onnx")   # only its tokenizer is used here: nothing is loaded


def _full_count(emb: Embedder, text: str) -> int:
    """Word pieces the model reads for `text`, [CLS] and [SEP] included (no shortcut)."""
    return len(emb.tokenizer().encode(text, add_special_tokens=True).ids)


def _words_covered(doc, chunks) -> bool:  # noqa: ANN001
    """Every word of every block lies inside some chunk."""
    covered = bytearray(len(doc.text))
    for c in chunks:
        covered[c.char_start:c.char_end] = b"\x01" * (c.char_end - c.char_start)
    return all(covered[b.start + m.start()] for b in doc.blocks
               for m in re.finditer(r"\S+", doc.text[b.start:b.end]))


def test_counts_add_up_over_whitespace(tokenizer_embedder):
    emb = tokenizer_embedder
    parts = ["kmem_cache_alloc(GFP_KERNEL);", "naïve", "über-long-identifier_with_parts", "北京", "x" * 300]
    joined = " \n ".join(parts)
    assert emb.count_tokens([joined]) == [sum(emb.count_tokens(parts))]
    assert emb.count_tokens([joined])[0] == _full_count(emb, joined) - 2


def test_no_chunk_exceeds_the_window_and_no_text_is_lost(tokenizer_embedder):
    emb = tokenizer_embedder
    sizer = sizer_for(emb)
    assert sizer.window == 512          # MiniLM's position embeddings
    code = "\n".join(f"    ret = regmap_update_bits(map, REG_{i:04X}, MASK_{i}, val << {i % 7});" for i in range(120))
    minified = "var a=" + ",".join(f"f{i}(x{i})" for i in range(2000)) + ";"   # one huge line
    text = ("Deep heading path\n=================\n\nIntro. " + " ".join(f"word{i}" for i in range(2500))
            + "\n\nSub\n---\n\n.. code-block:: c\n\n" + code + "\n\n" + minified + "\n")
    doc = parse_bytes(text.encode(), ext=".rst")
    chunks = chunk_document(doc, file_name="driver.rst", chunk_words=10_000, sizer=sizer)
    assert len(chunks) > 10
    for c in chunks:
        assert _full_count(emb, embedding_text(c.title, c.text)) <= sizer.window, c.title
    assert _words_covered(doc, chunks)
    # most chunks use most of the window (they are not cut needlessly small)
    full = [_full_count(emb, embedding_text(c.title, c.text)) for c in chunks]
    assert sorted(full)[len(full) // 2] > 0.8 * sizer.window


def test_a_smaller_target_and_the_word_cap_both_hold(tokenizer_embedder):
    emb = tokenizer_embedder
    text = "# Notes\n\n" + " ".join(f"Sentence number {i} is here." for i in range(300)) + "\n"
    doc = parse_bytes(text.encode(), ext=".md")
    small = chunk_document(doc, file_name="n.md", chunk_words=10_000, sizer=sizer_for(emb, 64))
    assert all(_full_count(emb, embedding_text(c.title, c.text)) <= 66 for c in small)
    capped = chunk_document(doc, file_name="n.md", chunk_words=40, sizer=sizer_for(emb))
    assert all(len(c.text.split()) <= 40 for c in capped)
    assert _words_covered(doc, small) and _words_covered(doc, capped)


def test_a_long_heading_path_still_leaves_room_for_text(tokenizer_embedder):
    emb = tokenizer_embedder
    heads = "".join(f"{'#' * (i + 1)} A rather long heading number {i} about configuration\n\n"
                    for i in range(6))
    text = heads + " ".join(f"w{i}" for i in range(1500)) + "\n"
    doc = parse_bytes(text.encode(), ext=".md")
    sizer = Sizer(count=emb.count_tokens, window=emb.window)
    chunks = chunk_document(doc, file_name="deep.md", chunk_words=10_000, sizer=sizer)
    for c in chunks:
        assert _full_count(emb, embedding_text(c.title, c.text)) <= emb.window
    assert any("…" in c.title for c in chunks)        # the path was shortened for embedding
    assert _words_covered(doc, chunks)


def test_word_piece_counts_survive_the_cache_bound(monkeypatch):
    """Indexing a corpus with more distinct words than the count cache holds: the bound's
    clear used to fall between finding the missing words and summing, and the next text
    with an already-cached word raised KeyError (the file was reported in error)."""
    from indexer.embedder import Embedder

    emb = Embedder()
    monkeypatch.setattr(Embedder, "WORD_PIECE_CACHE_MAX", 3)
    first = emb.count_tokens(["alpha beta gamma delta"])          # 4 words: past the bound
    again = emb.count_tokens(["alpha unseenword", "beta"])          # cached + new words
    fresh = Embedder().count_tokens(["alpha unseenword", "beta"])
    assert again == fresh and first == Embedder().count_tokens(["alpha beta gamma delta"])
