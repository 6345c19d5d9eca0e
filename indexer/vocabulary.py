"""BM25's term -> id map, saved so that a search never reads it whole.

A folder of code has millions of distinct terms (the first 20k text files of a site-packages:
550k word terms and 479k exact ones, bench/bench_vocabulary.py); as a Python dict that is
about 170 bytes a term, and building it took 1.5 s for 3M terms. A writer (`localrag index`, `watch`) needs the dict to number new
terms. A reader (`localrag search`, the app's questions) looks up a query's few terms: it
maps the saved table (the terms' UTF-8 bytes, their offsets, the ids in term order) and
bisects it, reading a few pages.

The table is sorted at most every SORT_EVERY new terms: a save sorts only when that many
terms came since the last sort (the watcher saves after each change), and the terms
numbered since (ids >= `sorted_count`) are read into a small dict on load.
"""

from __future__ import annotations

from bisect import bisect_left
from pathlib import Path

import numpy as np

SORT_EVERY = 50_000    # unsorted terms a save leaves (read into a dict on load: ~10 ms)
KEYS = ("terms", "offsets", "order")


class _SortedView:
    """The table's terms in sorted order, by position (what bisect reads)."""

    def __init__(self, vocab: "Vocabulary") -> None:
        self._vocab = vocab

    def __len__(self) -> int:
        return self._vocab.sorted_count

    def __getitem__(self, i: int) -> str:
        return self._vocab.term(int(self._vocab._order[i]))


class Vocabulary:
    """Term -> id, ids numbered in order of first sight (they index the postings)."""

    def __init__(self) -> None:
        self._dict: dict[str, int] | None = {}            # a writer's, with its terms by id:
        self._list: list[str] = []
        self._terms = np.zeros(0, dtype=np.uint8)        # the saved table (mapped): each term
        #                                                   and "\n", in id order
        self._offsets = np.zeros(1, dtype=np.int64)
        self._order = np.zeros(0, dtype=np.int64)
        self._recent: dict[str, int] = {}                 # saved ids >= sorted_count
        self.sorted_count = 0
        self._n = 0

    @classmethod
    def from_terms(cls, terms: list[str]) -> "Vocabulary":
        """From the terms in id order (an index file of format 3 or older)."""
        vocab = cls()
        vocab._list = list(terms)
        vocab._dict = {t: i for i, t in enumerate(vocab._list)}
        vocab._n = len(terms)
        return vocab

    @classmethod
    def load(cls, folder: Path, token: str, sorted_count: int) -> "Vocabulary":
        """The table saved under `token`, mapped; raises if a part is missing or does not fit."""
        vocab = cls()
        vocab._dict = None
        vocab._terms, vocab._offsets, vocab._order = (
            np.load(folder / f"lexical.{token}.{key}.npy", mmap_mode="r") for key in KEYS)
        vocab._n = len(vocab._offsets) - 1
        if not (0 <= sorted_count <= vocab._n and len(vocab._order) == sorted_count):
            raise ValueError("vocabulary table does not match its count")
        vocab.sorted_count = sorted_count
        rest = vocab._terms[vocab._offsets[sorted_count]:].tobytes().decode("utf-8").split("\n")
        vocab._recent = {t: sorted_count + k for k, t in enumerate(rest[:vocab._n - sorted_count])}
        return vocab

    def __len__(self) -> int:
        return self._n

    def term(self, i: int) -> str:
        """The term of id `i` (a writer's list has them; otherwise the saved table)."""
        if self._dict is not None:
            return self._list[i]
        lo, hi = self._offsets[i], self._offsets[i + 1] - 1
        return self._terms[lo:hi].tobytes().decode("utf-8")

    def get(self, term: str) -> int | None:
        if self._dict is not None:
            return self._dict.get(term)
        got = self._recent.get(term)
        if got is not None:
            return got
        view = _SortedView(self)
        pos = bisect_left(view, term)
        if pos < self.sorted_count and view[pos] == term:
            return int(self._order[pos])
        return None

    def writable(self) -> dict[str, int]:
        """The dict a writer numbers new terms in (built from the table on first use)."""
        if self._dict is None:
            self._list = self._terms.tobytes().decode("utf-8").split("\n")[:self._n]
            self._dict = {t: i for i, t in enumerate(self._list)}
            self._recent = {}
        return self._dict

    def count_ids(self, terms: list[str]) -> dict[int, int]:
        """Each term's id (new terms numbered on) -> how often it occurs in `terms`."""
        d = self.writable()
        order = self._list
        counts: dict[int, int] = {}
        try:
            for t in terms:
                tid = d.get(t)
                if tid is None:
                    tid = d[t] = len(order)
                    order.append(t)
                counts[tid] = counts.get(tid, 0) + 1
        finally:                       # an interruption leaves the dict and list in step
            self._n = len(order)
        return counts

    def save(self, folder: Path, token: str) -> int:
        """Write the table under `token` (files lexical.<token>.{terms,offsets,order}.npy);
        returns the sorted count to record beside it."""
        terms = self._list
        held = len(self._offsets) - 1      # the terms the current table holds (ids < held)
        if self._dict is None or held == self._n:   # no new term since: the same table
            data, offsets, order = self._terms, self._offsets, self._order
            count = self.sorted_count
        else:                              # the new terms appended (a watcher's save: a few)
            encoded = [t.encode("utf-8") + b"\n" for t in terms[held:]]
            ends = np.cumsum([len(e) for e in encoded], dtype=np.int64) + self._offsets[-1]
            offsets = np.concatenate([np.asarray(self._offsets), ends])
            data = np.concatenate([np.asarray(self._terms),
                                   np.frombuffer(b"".join(encoded), dtype=np.uint8)])
            if len(terms) - self.sorted_count > SORT_EVERY:
                # UTF-8 sorts as code points do, so str order is the table's byte order
                order = np.array(sorted(range(len(terms)), key=terms.__getitem__), dtype=np.int64)
                count = len(terms)
            else:
                order, count = np.asarray(self._order), self.sorted_count
        arrays = (data, offsets, order)
        for key, array in zip(KEYS, arrays):
            part = folder / f"lexical.{token}.{key}.npy.tmp"
            with open(part, "wb") as fh:
                np.save(fh, np.ascontiguousarray(array))
            part.replace(folder / f"lexical.{token}.{key}.npy")
        if self._dict is not None:
            self._terms, self._offsets, self._order = arrays
            self.sorted_count = count
        return count
