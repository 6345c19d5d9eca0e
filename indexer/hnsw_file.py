"""An hnswlib index file read in place: the vectors and labels of its level-0 block,
memory-mapped, for one exact scan without loading the graph.

Loading a saved hnswlib index copies the whole file into fresh memory and rebuilds its
upper levels element by element: at 1,000,000 chunks that is about 3 s, held under the
GIL, before the first query (bench/bench_scale.py). A process that answers one query
(`localrag search`, `localrag ask`) needs none of the graph: one pass of dot products over
the mapped vectors reads the same bytes once and gives the exact neighbours, which HNSW
only approximates.

The layout is hnswlib 0.8's `saveIndex` (hnswalg.h): a 96-byte header, then
`cur_element_count` elements of `size_data_per_element` bytes, each holding its level-0
link list (a 4-byte header whose third byte carries the delete mark, then `maxM0` links),
its float32 vector at `offsetData` and its 8-byte label at `label_offset`. Any file that
does not fit that layout exactly (another version, another dimension, a truncated file)
opens as None and the caller loads it the usual way.
"""

from __future__ import annotations

import mmap
import struct
from pathlib import Path

import numpy as np

# offsetLevel0, max_elements, cur_element_count, size_data_per_element, label_offset,
# offsetData (size_t); maxlevel (int); enterpoint_node (uint); maxM, maxM0, M (size_t);
# mult (double); ef_construction (size_t)
_HEADER = struct.Struct("<6Q i I 3Q d Q")
_DELETE_MARK = 0x01
_BLOCK_ROWS = 65_536      # rows scored per matrix product: ~100 MB of vectors at 384 dims


class MappedVectors:
    """The live vectors of a saved hnswlib cosine index, mapped read-only."""

    def __init__(self, mm: mmap.mmap, *, count: int, stride: int, data_at: int, label_at: int,
                 dim: int) -> None:
        self._mm = mm
        base = _HEADER.size
        self.vectors = np.ndarray((count, dim), dtype=np.float32, buffer=mm, offset=base + data_at,
                                  strides=(stride, 4))
        self.row_labels = np.ndarray((count,), dtype=np.int64, buffer=mm, offset=base + label_at,
                                     strides=(stride,)).copy()
        flags = np.ndarray((count,), dtype=np.uint8, buffer=mm, offset=base + 2, strides=(stride,))
        self.live_rows = (flags & _DELETE_MARK) == 0
        self._row_of: dict[int, int] | None = None
        # vectors the file lacks (added since it was saved), scanned beside it
        self.extra_labels = np.zeros(0, dtype=np.int64)
        self.extra_vectors = np.zeros((0, dim), dtype=np.float32)

    @classmethod
    def open(cls, path: Path, dim: int) -> MappedVectors | None:
        """The file mapped, or None when it is not an hnswlib 0.8 file of `dim` dimensions."""
        try:
            with open(path, "rb") as f:
                size = f.seek(0, 2)
                if size < _HEADER.size:
                    return None
                mm = mmap.mmap(f.fileno(), 0, access=mmap.ACCESS_READ)
        except (OSError, ValueError):
            return None
        (offset0, _max, count, stride, label_at, data_at, _maxlevel, _enter, _maxm, maxm0, _m,
         _mult, _efc) = _HEADER.unpack_from(mm, 0)
        links = 4 + 4 * maxm0
        if (offset0 != 0 or data_at != links or label_at != data_at + 4 * dim
                or stride != label_at + 8 or count == 0
                or _HEADER.size + count * stride > size):
            mm.close()
            return None
        return cls(mm, count=count, stride=stride, data_at=data_at, label_at=label_at, dim=dim)

    def __len__(self) -> int:
        return int(self.live_rows.sum()) + len(self.extra_labels)

    def labels(self) -> np.ndarray:
        return np.concatenate([self.row_labels[self.live_rows], self.extra_labels])

    def keep_only(self, labels: np.ndarray) -> None:
        """Leave out every row whose label is not in `labels` (deleted since the save)."""
        self.live_rows &= np.isin(self.row_labels, labels)
        self._row_of = None

    def add(self, labels: np.ndarray, vectors: np.ndarray) -> None:
        """Vectors the file does not hold, normalised as hnswlib's cosine space stores them."""
        v = np.asarray(vectors, dtype=np.float32)
        v = v / np.maximum(np.linalg.norm(v, axis=1, keepdims=True), 1e-12)
        self.extra_labels = np.concatenate([self.extra_labels, np.asarray(labels, dtype=np.int64)])
        self.extra_vectors = np.concatenate([self.extra_vectors, v])
        self._row_of = None

    def knn(self, vector: np.ndarray, k: int) -> list[tuple[int, float]]:
        """The k live vectors of highest cosine to `vector`: (label, cosine), best first."""
        q = np.asarray(vector, dtype=np.float32).reshape(-1)
        norm = float(np.linalg.norm(q))
        if norm == 0.0 or k <= 0:
            return []
        q = q / norm
        best_rows: list[np.ndarray] = []
        best_sims: list[np.ndarray] = []
        for start in range(0, len(self.row_labels), _BLOCK_ROWS):
            sims = self.vectors[start:start + _BLOCK_ROWS] @ q
            sims[~self.live_rows[start:start + _BLOCK_ROWS]] = -np.inf
            take = min(k, len(sims))
            top = np.argpartition(-sims, take - 1)[:take]
            best_rows.append(top + start)
            best_sims.append(sims[top])
        labels = [self.row_labels[np.concatenate(best_rows)]]
        sims = [np.concatenate(best_sims)]
        if len(self.extra_labels):
            labels.append(self.extra_labels)
            sims.append(self.extra_vectors @ q)
        labels, sims = np.concatenate(labels), np.concatenate(sims)
        keep = np.isfinite(sims)
        labels, sims = labels[keep], sims[keep]
        order = np.lexsort((labels, -sims))[:k]    # ties: the lower label first
        return [(int(label), float(sim)) for label, sim in zip(labels[order], sims[order])]

    def vectors_of(self, ids: list[int]) -> np.ndarray:
        """The stored vectors of these labels, in order (KeyError for one not there)."""
        if self._row_of is None:
            live = np.flatnonzero(self.live_rows)
            self._row_of = dict(zip(self.row_labels[live].tolist(), live.tolist()))
            n = len(self.row_labels)   # extra vectors: row n + their position
            self._row_of.update(zip(self.extra_labels.tolist(), range(n, n + len(self.extra_labels))))
        n = len(self.row_labels)
        out = np.zeros((len(ids), self.vectors.shape[1]), dtype=np.float32)
        for j, label in enumerate(ids):
            row = self._row_of[int(label)]
            out[j] = self.vectors[row] if row < n else self.extra_vectors[row - n]
        return out

    def close(self) -> None:
        # numpy views keep the buffer exported; drop them before closing the map
        self.vectors = None   # type: ignore[assignment]
        try:
            self._mm.close()
        except BufferError:
            pass   # a caller still holds a view: the map closes when that goes
