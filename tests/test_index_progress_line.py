"""The progress line the CLI and the app show (localrag/index_progress.py)."""

from __future__ import annotations

from indexer.records import IndexProgress
from localrag.index_progress import index_progress_line


def test_line_with_word_pieces():
    p = IndexProgress(phase="embedding", files_done=120, files_total=497, chunks_done=1500,
                      bytes_done=4_000_000, elapsed_s=300.0, pieces_done=1_234_000,
                      pieces_total=6_800_000, pieces_per_s=4410.0, pieces_eta_s=1262.0,
                      embedding_now="256 chunks of /docs/admin-guide/mm/index.rst and 11 more files")
    assert index_progress_line(p) == ("embedding 120/497 files · 1.23M/~6.80M word pieces · "
                                      "4.4k pieces/s · 21m02s left · now 256 chunks of "
                                      "index.rst and 11 more files")
    early = IndexProgress(phase="indexing", files_done=3, files_total=497, chunks_done=0,
                          bytes_done=1, elapsed_s=2.0, pieces_done=0, pieces_total=9000)
    assert index_progress_line(early) == "indexing 3/497 files · 0/~9.0k word pieces · estimating time left"


def test_line_without_word_pieces_is_the_old_one():
    p = IndexProgress(phase="embedding", files_done=10, files_total=40, chunks_done=120,
                      bytes_done=0, elapsed_s=5.0)
    assert index_progress_line(p) == "embedding 10/40 files · 120 chunks · 2.0 files/s · 15s left"
