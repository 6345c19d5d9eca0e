"""The hnswlib index: a cache of the embeddings stored in SQLite, labelled by chunk id.

It is saved atomically (temp file + rename) with a sidecar JSON holding the store
generation it matches. On open, a missing/corrupt file is rebuilt from the stored
embeddings; a stale one (generation differs) is repaired by diffing its labels against
the chunk ids: extra labels are marked deleted, missing ones added. Chunk ids are never
reused, so a label present in both always holds the right vector.

A process that answers one query opens it `mapped` (indexer/hnsw_file.py): the file's
vectors are scanned exactly in place (with the few the file lacks read from SQLite), and
the graph is loaded only if the process goes on to change or catch up with the index.

The BM25 postings (indexer/bm25.py) are the same kind of cache and follow the same
life: this class opens, mirrors, syncs and saves them alongside (`self.lexical`), so
every writer that keeps the HNSW file current keeps the lexical index current too.
"""

from __future__ import annotations

import json
import os
import threading
from pathlib import Path

import numpy as np

from indexer.bm25 import Bm25Index
from indexer.hnsw_file import MappedVectors
from indexer.store import Store

M = 16
EF_CONSTRUCTION = 200
EF_SEARCH = 100      # recall@10 ~0.99 on MiniLM vectors (PLATFORM.md), well under 1 ms
# A mapped file scanned with at most this many vectors read from SQLite beside it (added
# since the save): about 0.3 s of reads at 1M chunks (measured: bench/bench_scale.py)
MAPPED_MAX_ADDED = 20_000


class VectorIndex:
    """hnswlib cosine index. Every hnswlib call holds `_lock`: add_items must never run
    alongside knn_query."""

    def __init__(self, folder: Path, dim: int) -> None:
        self.folder = Path(folder)
        self.bin_path = self.folder / "vectors.hnsw"
        self.meta_path = self.folder / "vectors.json"
        self.dim = dim
        self.generation = -1          # store generation this in-memory index matches
        self._lock = threading.RLock()
        self._index = None
        self._live: set[int] = set()
        self._mapped: MappedVectors | None = None   # the saved file scanned in place
        self.lexical = Bm25Index(self.folder)
        self._store: Store | None = None

    # --- lifecycle ------------------------------------------------------------------
    def _new(self, capacity: int):  # noqa: ANN202 - hnswlib.Index
        import hnswlib

        index = hnswlib.Index(space="cosine", dim=self.dim)
        index.init_index(max_elements=max(1024, capacity), M=M, ef_construction=EF_CONSTRUCTION)
        index.set_ef(EF_SEARCH)
        return index

    def open(self, store: Store, *, mapped: bool = False, upgrade: bool = False) -> str:
        """Load from disk and bring in line with the store. Returns what it did.

        mapped: for a process that answers a query or two and stops. Map the saved file
        and scan its vectors exactly instead of loading the graph ("mapped"), when it lacks
        few of the stored vectors; anything that changes the index loads the graph first.
        upgrade: a writer's open, which rebuilds a BM25 file of an earlier format
        (Bm25Index.open; lexical_outcome "rebuilt": save)."""
        with self._lock:
            if self._mapped is not None:   # opened again: the map gives way
                self._mapped.close()
                self._mapped = None
            self._store = store
            generation = store.generation()
            ids = set(store.chunk_ids().tolist())
            self.lexical_outcome = self.lexical.open(store, ids, generation, upgrade=upgrade)
            if mapped and self._open_mapped(store, ids):
                self.generation = generation
                return "mapped"
            loaded = self._load(len(ids))
            if loaded is None:
                self._rebuild(store, generation, ids)
                return "rebuilt"
            index, saved_generation = loaded
            self._index = index
            labels = set(int(x) for x in index.get_ids_list())   # includes deleted ones
            if saved_generation == generation and ids <= labels:
                # Saved at this very generation: labels missing from the store are the
                # ones it had marked deleted, so the live set is exactly `ids`.
                self._live = ids
                self.generation = generation
                return "loaded"
            self._live = labels & ids
            self._repair(store, ids, labels)
            self.generation = generation
            if self._deleted_fraction() > 0.5:
                self._rebuild(store, generation, ids)
                return "rebuilt"
            return "repaired"

    def _open_mapped(self, store: Store, ids: set[int]) -> bool:
        """Map the saved file for scanning, brought in line with the store: rows whose
        chunk is gone are left out, and the vectors the file lacks (at most
        MAPPED_MAX_ADDED, e.g. added since the watcher last saved) are read from SQLite."""
        try:
            if int(json.loads(self.meta_path.read_text())["dim"]) != self.dim:
                return False
        except (OSError, ValueError, KeyError, TypeError):
            return False
        view = MappedVectors.open(self.bin_path, self.dim)
        if view is None:
            return False
        wanted = np.fromiter(ids, dtype=np.int64, count=len(ids))
        added = np.setdiff1d(wanted, view.labels(), assume_unique=True)
        if len(added) > MAPPED_MAX_ADDED:
            view.close()
            return False
        view.keep_only(wanted)
        for part_ids, vecs in store.embeddings(added.tolist()):
            view.add(part_ids, vecs)
        if len(view) != len(ids):   # a chunk went while its vector was read: load instead
            view.close()
            return False
        self._mapped, self._live = view, ids
        return True

    def _loaded(self) -> None:
        """A mapped file gives way to the graph, loaded and in line with the store now:
        for a process that goes on to change the index or catch up with another's."""
        if self._mapped is not None:
            self.open(self._store)   # closes the map

    def _load(self, expected: int):  # noqa: ANN202
        try:
            meta = json.loads(self.meta_path.read_text())
            if int(meta["dim"]) != self.dim or not self.bin_path.exists():
                return None
            import hnswlib

            index = hnswlib.Index(space="cosine", dim=self.dim)
            index.load_index(str(self.bin_path), max_elements=max(1024, int(expected * 1.3) + 1))
            index.set_ef(EF_SEARCH)
            return index, int(meta["generation"])
        except Exception:   # missing, truncated, corrupt, other dimension: rebuild
            return None

    def _rebuild(self, store: Store, generation: int, ids: set[int]) -> None:
        self._index = self._new(int(len(ids) * 1.3) + 1)
        self._live = set()
        for part_ids, vecs in store.embeddings():
            self._add(part_ids, vecs)
        self.generation = generation

    def _repair(self, store: Store, ids: set[int], present: set[int]) -> None:
        """Make the live labels equal `ids`: delete extras, add the missing vectors."""
        for label in present - ids:
            try:
                self._index.mark_deleted(label)
            except RuntimeError:
                pass   # already deleted in the saved file
            self._live.discard(label)
        missing = sorted(ids - present)
        for part_ids, vecs in store.embeddings(missing):
            self._add(part_ids, vecs)

    def _deleted_fraction(self) -> float:
        total = self._index.element_count
        return 1.0 - len(self._live) / total if total else 0.0

    # --- changes --------------------------------------------------------------------
    def _add(self, ids: np.ndarray, vecs: np.ndarray) -> None:
        if len(ids) == 0:
            return
        needed = self._index.element_count + len(ids)
        if needed > self._index.get_max_elements():
            self._index.resize_index(max(needed, int(self._index.get_max_elements() * 1.5)))
        self._index.add_items(np.ascontiguousarray(vecs, dtype=np.float32),
                              np.asarray(ids, dtype=np.int64))
        self._live.update(int(i) for i in ids)

    def apply(self, *, added_ids: list[int], added_vecs: np.ndarray | None,
              deleted_ids: list[int], generation: int) -> None:
        """Mirror one committed store transaction."""
        with self._lock:
            if self._mapped is not None:
                self._loaded()   # opened at the store as it is now, this transaction in it
                if self.generation >= generation:
                    return
            if self._store is not None:
                self.lexical.apply(self._store, added_ids=list(added_ids), deleted_ids=list(deleted_ids),
                                   generation=generation)
            for label in deleted_ids:
                if label in self._live:
                    self._index.mark_deleted(label)
                    self._live.discard(label)
            if added_ids and added_vecs is not None:
                self._add(np.asarray(added_ids), added_vecs)
            self.generation = generation

    def sync(self, store: Store) -> None:
        """Catch up with changes another process committed (cheap when nothing changed)."""
        with self._lock:
            generation = store.generation()
            if generation == self.generation:
                return
            if self._mapped is not None:
                self._loaded()   # the graph, in line with the store now
                return
            ids = set(store.chunk_ids().tolist())
            self.lexical.sync(store, ids, generation)
            self._repair(store, ids, set(self._live))
            self.generation = generation

    def save(self) -> None:
        """Atomic save: a kill -9 leaves the old file or the new one, never half of one."""
        with self._lock:
            if self._index is None:
                return
            if self._deleted_fraction() > 0.5 and self._live:
                self._compact()
            self.folder.mkdir(parents=True, exist_ok=True)
            tmp = self.bin_path.with_suffix(".hnsw.tmp")
            self._index.save_index(str(tmp))
            os.replace(tmp, self.bin_path)
            meta_tmp = self.meta_path.with_suffix(".json.tmp")
            meta_tmp.write_text(json.dumps({"generation": self.generation, "dim": self.dim,
                                            "count": len(self._live)}))
            os.replace(meta_tmp, self.meta_path)
            self.lexical.save()

    def _compact(self) -> None:
        """Many deletes leave dead slots; copy the live vectors into a fresh index."""
        live = sorted(self._live)
        vecs = self._index.get_items(live, return_type="numpy")
        self._index = self._new(int(len(live) * 1.3) + 1)
        self._live = set()
        self._add(np.asarray(live), np.asarray(vecs, dtype=np.float32))

    # --- queries --------------------------------------------------------------------
    def __len__(self) -> int:
        return len(self._live)

    def labels(self) -> set[int]:
        with self._lock:
            return set(self._live)

    def vectors_of(self, ids: list[int]) -> np.ndarray:
        """The stored (normalised) vectors of these chunk ids, in order."""
        with self._lock:
            if self._mapped is not None:
                return self._mapped.vectors_of(list(ids))
            return np.asarray(self._index.get_items(list(ids)), dtype=np.float32)

    def knn(self, vector: np.ndarray, k: int) -> list[tuple[int, float]]:
        with self._lock:
            if self._mapped is not None:
                return self._mapped.knn(vector, min(k, len(self._live)))
            if self._index is None or not self._live:
                return []
            k = min(k, len(self._live))
            while k > 0:
                try:
                    labels, dists = self._index.knn_query(vector.reshape(1, -1), k=k)
                    return [(int(l), float(1.0 - d)) for l, d in zip(labels[0], dists[0])]
                except RuntimeError:   # fewer reachable live items than k
                    k //= 2
            return []
