"""BM25 over every query term, in memory: the lexical half of hybrid search.

SQLite's FTS5 ranks an OR of common words slowly (it scores each matching row through
a callback: about 180 ms at 100k chunks), and dropping the common words to make it
fast cost 23 points of recall. Here each term's postings are numpy arrays, so a query
costs a few vector operations per term, whatever the terms.

Like the HNSW file, this is a cache of what SQLite holds: saved atomically next to it
with the store generation it matches, repaired on open by diffing chunk ids (extra ones
are marked dead, missing ones are tokenized from the stored text), rebuilt when missing
or unreadable. Chunk ids are never reused, so a label present in both is right.

Terms: lower case, split like FTS5's unicode61 tokenizer (letters with their combining
marks, and digits; `_` and punctuation separate), each stemmed by its script's Snowball
stemmer (PyStemmer; English for the Latin script), Han and kana as pairs of characters; an
identifier with underscores (GFP_KERNEL) is also kept whole, and a camelCase name
(RefreshTokenGrant) also gives its words. Beside them, exact_terms: a
token holding more than letters and digits kept whole ("--not-a-term", "<<<", "g&") and an
underscore identifier joined ("pathdir"), in text and queries alike, so that a lookup typed
as written finds its definition (code's expressions give their names: "f(a=1)" is no term);
a chunk's length counts its word terms only, so these change no other score. Title and text
are indexed together. The term -> id map is indexer/vocabulary.py's: a search maps the
saved table instead of reading it whole.
"""

from __future__ import annotations

import json
import os
import re
import threading
import time
import unicodedata
from pathlib import Path
from typing import TYPE_CHECKING

import numpy as np
import regex

from indexer.vocabulary import Vocabulary

if TYPE_CHECKING:
    from indexer.store import Store

K1 = 1.2            # the usual BM25 constants
B = 0.75
FORMAT = 6          # bump when tokenization or the file layout changes (2: tail saved, postings in .npy;
#                     3: Tokenizer.exact_terms indexed; 4: exact terms split at code's glue,
#                     the vocabulary a sorted table a reader maps: indexer/vocabulary.py;
#                     5: a one-letter option's case kept, a word's combining marks kept,
#                     Han and kana as pairs of characters, a word stemmed by its script;
#                     6: a camelCase name's words as terms too)
LOADABLE = (1, 2, 3, 4, 5, 6)   # format 1 files have no tail arrays; before 3 no exact terms (a
#                           reader searches such a file as it is, a writer rebuilds it: open)
TAIL_SAVED = 2000   # a save folds a longer tail into the compacted arrays first

# regex's \w is Unicode's word class, which holds the combining marks: re's splits a word of
# Hindi, Tamil or Thai at each vowel sign ("हिन्दी" -> "ह", "न", "द"), terms that match any text
# of that script
_WORD = regex.compile(r"\w+")
STOPWORDS = frozenset(
    "a an and are as at be by for from has have how i in is it its of on or that the this to "
    "was were what when where which who why will with do does did can you your my me we our "
    "they them their there about into".split())
_PART = regex.compile(r"[^\W_]+")
_JOINERS = "\u200c\u200d"   # word characters to regex (inside Persian or Indic words)
# A name written in camelCase or PascalCase ("RefreshTokenGrant", "HTTPServer", "getUTF8String")
# also gives its words, as an identifier with underscores does: a question in words ("which
# grant refreshes a token") finds the class; the whole name stays a term of its own. A part
# of one letter is no term ("OAuth" -> "auth")
_CAMEL = re.compile(r"\b(?=[A-Za-z])[A-Za-z0-9]*(?:[a-z0-9][A-Z]|[A-Z][A-Z][a-z])[A-Za-z0-9]*\b")
_CAMEL_PART = re.compile(r"[A-Z]+(?=[A-Z][a-z])|[A-Z]?[a-z]+|[A-Z]+|[0-9]+")

# Chinese and Japanese write no spaces between words: a run of Han, Hiragana or Katakana is
# indexed as its overlapping pairs of characters ("東京タワー" -> "東京", "京タ", "タワ", "ワー"),
# as Lucene's CJK analyzer does, so a query word matches inside a sentence; one character
# alone is its own term
_CJK = regex.compile(r"[\p{Han}\p{Hiragana}\p{Katakana}ー]+")


def _cjk_terms(word: str, stem) -> list[str]:  # noqa: ANN001 - Tokenizer.stem
    out: list[str] = []
    pos = 0
    for m in _CJK.finditer(word):
        out.extend(stem(p) for p in _PART.findall(word[pos:m.start()]))   # "333", "usb"
        run = m.group()
        out.extend([run] if len(run) == 1 else [run[i:i + 2] for i in range(len(run) - 1)])
        pos = m.end()
    out.extend(stem(p) for p in _PART.findall(word[pos:]))
    return out


def words(text: str) -> list[str]:
    """The words of `text` as BM25 splits them (case kept)."""
    return _WORD.findall(text)


# A word's script picks its Snowball stemmer; the Latin script cannot tell English from
# German or French, so it keeps English's (as before)
SCRIPT_STEMMERS = {"CYRILLIC": "russian", "GREEK": "greek", "ARABIC": "arabic",
                   "DEVANAGARI": "hindi", "TAMIL": "tamil", "ARMENIAN": "armenian"}


class Tokenizer:
    """Text -> stemmed terms. Stems are remembered (documents repeat their words)."""

    def __init__(self) -> None:
        try:
            import Stemmer

            self._stem = Stemmer.Stemmer("english").stemWord
            self._by_script = {script: Stemmer.Stemmer(name).stemWord
                               for script, name in SCRIPT_STEMMERS.items()}
        except ImportError:   # the dependency is declared; this only keeps search alive
            self._stem = _suffix_stem
            self._by_script = {}
        self._cache: dict[str, str] = {}

    def stem(self, word: str) -> str:
        got = self._cache.get(word)
        if got is None:
            if len(self._cache) > 500_000:
                self._cache.clear()
            stem = self._stem
            if not word.isascii() and self._by_script:
                script = unicodedata.name(word[0], "").split(" ", 1)[0]
                stem = self._by_script.get(script, stem)
            got = self._cache[word] = stem(word)
        return got

    def __call__(self, text: str) -> list[str]:
        out = []
        stem = self.stem
        cjk = _CJK.search(text) is not None      # one look per text: most have none
        for word in _WORD.findall(text.lower()):
            if not word.isascii() and not word.strip(_JOINERS):
                continue                          # a joiner alone: between emoji (👩‍💻)
            if cjk and _CJK.search(word):
                out.extend(_cjk_terms(word, stem))
            elif "_" in word:
                parts = _PART.findall(word)
                out.extend(stem(p) for p in parts)
                if len(parts) > 1:
                    out.append(word.strip("_"))
            else:
                out.append(stem(word))
        for name in _CAMEL.findall(text):
            out.extend(stem(p.lower()) for p in _CAMEL_PART.findall(name) if len(p) > 1)
        return out


_EDGE = "\"'`\u2018\u2019\u201c\u201d*|,.;:!?()"
_PLAIN = regex.compile(r"[^\W_]+")
MAX_EXACT_CHARS = 64
_PROSE_TOKEN = regex.compile(r"\w+['\u2019]\w*|(?:[a-z]\.)+[a-z]?")   # "doesn't", "debian's", "e.g"
# Code glues names into expressions ("f(a=1)", "x[i]", "2*k**2"): split there, the names
# stay. Without this, a code folder gave more exact terms than words, nearly all in one
# chunk each (bench/bench_vocabulary.py: 887k against 550k word terms; split, 479k).
_CODE_GLUE = re.compile(r"[()\[\]{}=,\"`*]+")
_HAS_ALNUM = regex.compile(r"[^\W_]")
# a one-letter option, whose case tells it from another ("-N file" is not "-n string",
# "ls -L" not "ls -l")
SHORT_FLAG = re.compile(r"-[A-Za-z]")
# numbers no one types back: data ("0.07483045", "4.6454886e+00"); "192.168.1.40",
# "3.11.7" and "10.0.19045" (more than one dot) stay
_DATA_NUMBER = re.compile(r"[-+]?\d*\.\d{5,}(?:e[-+]?\d+)?j?|[-+]?\d+(?:\.\d+)?e[-+]?\d+j?")


def exact_terms(text: str, stem) -> list[str]:  # noqa: ANN001 - Tokenizer.stem
    """The terms a word tokenizer cannot see, for lookups typed as written: each whitespace
    token, lower-cased and stripped of the quotes, brackets, tag stars and bars and the
    punctuation around it, that holds more than letters and digits, kept whole ("--emulate",
    "not-a-term", "<<<", "g&", "<c-g>u", "192.168.1.40"), and an identifier with underscores
    also joined and stemmed as zsh accepts it ("path_dirs" -> "pathdir", what "pathdirs"
    stems to). A one-letter option keeps its case: "-N" and "-n" are two options. A token
    that glues names with code's brackets, "=", "," or "*" gives its pieces ("--color=auto"
    -> "--color"; "os.path.join(a," -> "os.path.join"), a token of punctuation alone stays
    whole ("[[", "<<<"). A plain word gives none (the word terms have it), nor do the tokens
    of prose, contractions and possessives ("doesn't", "debian's") and "e.g", nor data
    numbers ("0.07483045", "1e-05")."""
    out = []
    for raw in text.split():
        token = raw.strip(_EDGE)
        if token.isascii() and token.isalnum():  # a plain word (most tokens): none
            continue
        pieces = ([p.strip(_EDGE) for p in _CODE_GLUE.split(token)]
                  if _CODE_GLUE.search(token) and _HAS_ALNUM.search(token) else (token,))
        for piece in pieces:
            if SHORT_FLAG.fullmatch(piece):         # "-N" is not "-n": case kept
                out.append(piece)
                continue
            piece = piece.lower()
            if (len(piece) < 2 or len(piece) > MAX_EXACT_CHARS or _PLAIN.fullmatch(piece)
                    or _CJK.search(piece)                 # its pairs are word terms
                    or _PROSE_TOKEN.fullmatch(piece) or _DATA_NUMBER.fullmatch(piece)):
                continue
            if _WORD.fullmatch(piece):               # an identifier with "_": joined as well
                parts = _PART.findall(piece)
                if len(parts) > 1:
                    out.append(stem("".join(parts)))
                continue
            out.append(piece)
            bare = piece.lstrip("-")
            if bare != piece and "-" in bare:        # "--not-a-term" as written in prose too
                out.append(bare)
    return out


def _suffix_stem(word: str) -> str:
    for suffix in ("ations", "ation", "ings", "ing", "ies", "ed", "es", "s"):
        if word.endswith(suffix) and len(word) - len(suffix) >= 3:
            return word[: -len(suffix)] + ("y" if suffix == "ies" else "")
    return word


class Bm25Index:
    """Postings by term: a compacted part (CSC-like arrays) plus recent additions."""

    def __init__(self, folder: Path) -> None:
        self.folder = Path(folder)
        self.path = self.folder / "lexical.npz"
        self.meta_path = self.folder / "lexical.json"
        self.tokenize = Tokenizer()
        self.generation = -1
        self.loaded_format = FORMAT
        self._lock = threading.RLock()
        self._clear()

    def _clear(self) -> None:
        self.vocab = Vocabulary()
        self.labels = np.zeros(0, dtype=np.int64)     # chunk id of each slot
        self.doclen = np.zeros(0, dtype=np.float32)
        self.alive = np.zeros(0, dtype=bool)
        self._slot: dict[int, int] = {}               # chunk id -> slot (live ones)
        self._indptr = np.zeros(1, dtype=np.int64)    # compacted postings, by term id
        self._rows = np.zeros(0, dtype=np.int32)
        self._tf = np.zeros(0, dtype=np.float32)
        self._tail: list[tuple[int, np.ndarray, np.ndarray]] = []   # (slot, term ids, tfs)
        self._tail_index: dict[int, tuple[np.ndarray, np.ndarray]] | None = None
        self._total_len = 0.0

    # --- building -------------------------------------------------------------------
    def _term_ids(self, terms: list[str]) -> tuple[np.ndarray, np.ndarray]:
        counts = self.vocab.count_ids(terms)
        tids = np.fromiter(counts.keys(), dtype=np.int64, count=len(counts))
        tfs = np.fromiter(counts.values(), dtype=np.float32, count=len(counts))
        return tids, tfs

    def add_many(self, rows: list[tuple[int, str]]) -> None:
        """(chunk id, title + text) pairs; vectorised bookkeeping for big batches."""
        with self._lock:
            rows = [(cid, text) for cid, text in rows if cid not in self._slot]
            if not rows:
                return
            base = len(self.labels)
            lens = np.zeros(len(rows), dtype=np.float32)
            new_tail = []
            for i, (cid, text) in enumerate(rows):
                terms = self.tokenize(text)
                tids, tfs = self._term_ids(terms + exact_terms(text, self.tokenize.stem))
                lens[i] = len(terms)     # the length BM25 normalises by: the words alone
                new_tail.append((base + i, tids, tfs))
                self._slot[cid] = base + i
            self.labels = np.concatenate([self.labels, np.array([c for c, _ in rows], dtype=np.int64)])
            self.doclen = np.concatenate([self.doclen, lens])
            self.alive = np.concatenate([self.alive, np.ones(len(rows), dtype=bool)])
            self._total_len += float(lens.sum())
            self._tail.extend(new_tail)
            self._tail_index = None
            if len(self._tail) > max(2000, len(self.labels) // 4):
                self._compact()

    def delete(self, chunk_ids) -> None:  # noqa: ANN001
        with self._lock:
            dead = [self._slot.pop(int(c)) for c in chunk_ids if int(c) in self._slot]
            if not dead:
                return
            dead_arr = np.array(dead, dtype=np.int64)
            self.alive[dead_arr] = False
            self._total_len -= float(self.doclen[dead_arr].sum())

    def _compact(self) -> None:
        """Fold recent additions into the compacted arrays; drop dead slots' postings."""
        n_terms = len(self.vocab)
        parts_t = [np.repeat(np.arange(len(self._indptr) - 1, dtype=np.int64), np.diff(self._indptr))]
        parts_r = [self._rows.astype(np.int64)]
        parts_f = [self._tf]
        for slot, tids, tfs in self._tail:
            parts_t.append(tids)
            parts_r.append(np.full(len(tids), slot, dtype=np.int64))
            parts_f.append(tfs)
        terms = np.concatenate(parts_t)
        rows = np.concatenate(parts_r)
        tf = np.concatenate(parts_f)
        keep = self.alive[rows] if len(rows) else np.zeros(0, bool)
        terms, rows, tf = terms[keep], rows[keep], tf[keep]
        order = np.lexsort((rows, terms))
        terms, rows, tf = terms[order], rows[order], tf[order]
        self._indptr = np.zeros(n_terms + 1, dtype=np.int64)
        np.cumsum(np.bincount(terms, minlength=n_terms), out=self._indptr[1:])
        self._rows = rows.astype(np.int32)
        self._tf = tf.astype(np.float32)
        self._tail = []
        self._tail_index = None

    # --- lifecycle (mirrors indexer/vectors.py) -------------------------------------
    def open(self, store: "Store", ids: set[int], generation: int, *, upgrade: bool = False) -> str:
        """Load the saved file and bring it in line with the store. `upgrade` (a writer):
        a file of an earlier FORMAT is rebuilt from the store (the caller saves it), so
        its chunks get the terms tokenization gained since; a reader searches it as it
        is (an older file lacks some terms of a query: those match nothing)."""
        with self._lock:
            if not self._load() or (upgrade and self.loaded_format < FORMAT):
                self._clear()
                self._fill(store, None)
                self.generation = generation
                return "rebuilt"
            saved = self.generation
            live = set(self._slot)
            if saved == generation and live == ids:
                return "loaded"
            self.delete(live - ids)
            self._fill(store, sorted(ids - live))
            self.generation = generation
            return "repaired"

    def _fill(self, store: "Store", ids: list[int] | None) -> None:
        for rows in chunk_texts(store, ids):
            self.add_many(rows)

    def apply(self, store: "Store", *, added_ids: list[int], deleted_ids: list[int],
              generation: int) -> None:
        with self._lock:
            self.delete(deleted_ids)
            if added_ids:
                self._fill(store, list(added_ids))
            self.generation = generation

    def sync(self, store: "Store", ids: set[int], generation: int) -> None:
        with self._lock:
            if generation == self.generation:
                return
            live = set(self._slot)
            self.delete(live - ids)
            self._fill(store, sorted(ids - live))
            self.generation = generation

    def save(self) -> None:
        with self._lock:
            if len(self._slot) < 0.5 * len(self.labels) and len(self.labels):
                self._rebuild_slots()
            # Compacting rewrites every posting (4 s at 200k chunks): a save after a few
            # changed files (the watcher's) keeps them as a tail, saved as it is
            if len(self._tail) > TAIL_SAVED:
                self._compact()
            self.folder.mkdir(parents=True, exist_ok=True)
            tmp = self.path.with_suffix(".tmp.npz")
            tail_slots = np.array([slot for slot, _, _ in self._tail], dtype=np.int64)
            tail_ptr = np.zeros(len(self._tail) + 1, dtype=np.int64)
            np.cumsum([len(t) for _, t, _ in self._tail], out=tail_ptr[1:])
            tail_tids = (np.concatenate([t for _, t, _ in self._tail]) if self._tail
                         else np.zeros(0, dtype=np.int64))
            tail_tfs = (np.concatenate([f for _, _, f in self._tail]) if self._tail
                        else np.zeros(0, dtype=np.float32))
            # the postings (hundreds of MB at 1M chunks) go to .npy files a reader maps
            # (np.load mmap_mode) instead of reading them whole; named by a token the
            # .npz records, so a crash between the writes leaves the old set in use
            token = f"{self.generation}-{os.getpid()}-{time.monotonic_ns()}"
            for key, array in (("indptr", self._indptr), ("rows", self._rows), ("tf", self._tf)):
                part = self.folder / f"lexical.{token}.{key}.npy.tmp"
                with open(part, "wb") as fh:
                    np.save(fh, np.ascontiguousarray(array))
                os.replace(part, self.folder / f"lexical.{token}.{key}.npy")
            sorted_count = self.vocab.save(self.folder, token)
            np.savez(tmp, labels=self.labels, doclen=self.doclen, alive=self.alive,
                     postings=np.frombuffer(token.encode(), dtype=np.uint8),
                     sorted_terms=np.array(sorted_count, dtype=np.int64),
                     tail_slots=tail_slots, tail_ptr=tail_ptr, tail_tids=tail_tids, tail_tfs=tail_tfs)
            os.replace(tmp, self.path)
            for old in self.folder.glob("lexical.*.npy"):
                if not old.name.startswith(f"lexical.{token}."):
                    old.unlink(missing_ok=True)   # a reader's map of it stays valid
            meta_tmp = self.meta_path.with_suffix(".json.tmp")
            meta_tmp.write_text(json.dumps({"generation": self.generation, "format": FORMAT,
                                            "count": len(self._slot)}))
            os.replace(meta_tmp, self.meta_path)

    def _rebuild_slots(self) -> None:
        """Many deletions: renumber the live slots densely (drops dead ones)."""
        self._compact()
        live = np.nonzero(self.alive)[0]
        new_of = np.full(len(self.labels), -1, dtype=np.int64)
        new_of[live] = np.arange(len(live))
        self._rows = new_of[self._rows].astype(np.int32)
        self.labels = self.labels[live]
        self.doclen = self.doclen[live]
        self.alive = np.ones(len(live), dtype=bool)
        self._slot = {int(c): i for i, c in enumerate(self.labels)}

    def _load(self) -> bool:
        try:
            meta = json.loads(self.meta_path.read_text())
            if int(meta.get("format", 0)) not in LOADABLE:
                return False
            self.loaded_format = int(meta["format"])
            with np.load(self.path) as z:
                labels, doclen, alive = z["labels"], z["doclen"], z["alive"]
                if "postings" in z.files:    # mapped, copy-on-write: delete() may mark slots
                    token = z["postings"].tobytes().decode()
                    indptr, rows, tf = (np.load(self.folder / f"lexical.{token}.{key}.npy", mmap_mode="c")
                                        for key in ("indptr", "rows", "tf"))
                else:                        # format 1
                    indptr, rows, tf = z["indptr"], z["rows"], z["tf"]
                if "vocab" in z.files:       # format 3 and before: the terms, read whole
                    vocab_bytes = z["vocab"].tobytes().decode("utf-8")
                    vocab = Vocabulary.from_terms(vocab_bytes.split("\n") if vocab_bytes else [])
                else:                        # a table searched in place
                    vocab = Vocabulary.load(self.folder, token, int(z["sorted_terms"]))
                tail = ([z[k] for k in ("tail_slots", "tail_ptr", "tail_tids", "tail_tfs")]
                        if "tail_slots" in z.files else None)
        except Exception:   # missing, truncated, another format: rebuild from the store
            return False
        self._clear()
        self.vocab = vocab
        self.labels, self.doclen, self.alive = labels, doclen, alive
        self._indptr, self._rows, self._tf = indptr, rows, tf
        if tail is not None:
            slots, ptr, tids, tfs = tail
            self._tail = [(int(slot), tids[ptr[i]:ptr[i + 1]], tfs[ptr[i]:ptr[i + 1]])
                          for i, slot in enumerate(slots.tolist())]
        live = np.nonzero(alive)[0]
        self._slot = dict(zip(labels[live].tolist(), live.tolist()))
        self._total_len = float(doclen[live].sum())
        self.generation = int(meta["generation"])
        return True

    # --- queries --------------------------------------------------------------------
    def __len__(self) -> int:
        return len(self._slot)

    def _tail_postings(self) -> dict[int, tuple[np.ndarray, np.ndarray]]:
        if self._tail_index is None:
            index: dict[int, tuple[list[int], list[float]]] = {}
            for slot, tids, tfs in self._tail:
                for t, f in zip(tids.tolist(), tfs.tolist()):
                    entry = index.setdefault(t, ([], []))
                    entry[0].append(slot)
                    entry[1].append(f)
            self._tail_index = {t: (np.array(r, dtype=np.int64), np.array(f, dtype=np.float32))
                                for t, (r, f) in index.items()}
        return self._tail_index

    def query_terms(self, query: str) -> list[int]:
        """Term ids of every content word of the query (function words such as "how",
        "the", "do" are left out unless the query has nothing else: in a small index
        BM25's idf cannot tell them from content, and in a big one they weigh nothing)."""
        words = _WORD.findall(query.lower())
        content = " ".join(w for w in words if w not in STOPWORDS) or " ".join(words)
        terms = self.tokenize(content) + exact_terms(query, self.tokenize.stem)
        ids = (self.vocab.get(t) for t in dict.fromkeys(terms))
        return [tid for tid in ids if tid is not None]

    def term_idf(self, query: str) -> dict[str, float]:
        """BM25's idf of each content term of the query, by its stem (terms the index
        lacks are left out)."""
        with self._lock:
            n = max(len(self._slot), 1)
            words = _WORD.findall(query.lower())
            content = " ".join(w for w in words if w not in STOPWORDS) or " ".join(words)
            inv = {tid: t for t in dict.fromkeys(self.tokenize(content))
                   if (tid := self.vocab.get(t)) is not None}
            tail = self._tail_postings() if self._tail else {}
            out = {}
            for tid, stem in inv.items():
                df = 0
                if tid + 1 < len(self._indptr):
                    df += int(self._indptr[tid + 1] - self._indptr[tid])
                if tid in tail:
                    df += len(tail[tid][0])
                out[stem] = float(np.log(1.0 + (n - df + 0.5) / (df + 0.5)))
            return out

    def scores(self, query: str) -> np.ndarray:
        """BM25 of every slot for `query` (dead slots score 0), all query terms."""
        with self._lock:
            n = len(self._slot)
            out = np.zeros(len(self.labels), dtype=np.float32)
            if n == 0:
                return out
            avgdl = max(self._total_len / n, 1.0)
            norm = K1 * (1 - B + B * self.doclen / avgdl)
            tail = self._tail_postings() if self._tail else {}
            alive = self.alive
            for tid in self.query_terms(query):
                parts = []
                if tid + 1 < len(self._indptr):
                    lo, hi = self._indptr[tid], self._indptr[tid + 1]
                    if hi > lo:
                        parts.append((self._rows[lo:hi], self._tf[lo:hi]))
                if tid in tail:
                    parts.append(tail[tid])
                if not parts:
                    continue
                rows = np.concatenate([r for r, _ in parts]) if len(parts) > 1 else parts[0][0]
                tf = np.concatenate([f for _, f in parts]) if len(parts) > 1 else parts[0][1]
                live = alive[rows]
                df = float(np.count_nonzero(live))   # documents holding the term, now
                if df == 0:
                    continue
                rows, tf = rows[live], tf[live]
                idf = np.float32(np.log(1.0 + (n - df + 0.5) / (df + 0.5)))
                out[rows] += idf * tf * (K1 + 1) / (tf + norm[rows])
            out[~self.alive] = 0.0
            return out

    def search(self, query: str, k: int) -> list[tuple[int, float]]:
        """Top `k` (chunk id, BM25 score), best first; only chunks sharing a term."""
        scores = self.scores(query)
        hits = np.nonzero(scores > 0)[0]
        if len(hits) == 0:
            return []
        if len(hits) > k:
            hits = hits[np.argpartition(-scores[hits], k - 1)[:k]]
        hits = hits[np.lexsort((self.labels[hits], -scores[hits]))]
        return [(int(self.labels[h]), float(scores[h])) for h in hits]


def chunk_texts(store: "Store", ids: list[int] | None, *, page: int = 2000):
    """(chunk id, "title\ntext") lists from the store: all chunks, or these ids."""
    conn = store.conn
    if ids is None:
        last = 0
        while True:
            rows = conn.execute("SELECT id, title || char(10) || text FROM chunks WHERE id > ? "
                                "ORDER BY id LIMIT ?", (last, page)).fetchall()
            if not rows:
                return
            last = rows[-1][0]
            yield rows
    else:
        for i in range(0, len(ids), 500):
            part = [int(x) for x in ids[i:i + 500]]
            marks = ",".join("?" * len(part))
            rows = conn.execute(f"SELECT id, title || char(10) || text FROM chunks WHERE id IN ({marks})",
                                part).fetchall()
            if rows:
                yield rows
