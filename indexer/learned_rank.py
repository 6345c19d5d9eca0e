"""The second stage of search: a small ranking model of localrag's own over signals the
first stage does not combine (scripts/fit_ranker.py fits it; weights in
indexer/data/ranker.json, with the data card in bench/data/relevance/DATA_CARD.md).

Per candidate passage, named features (FEATURES): its cosine with the question and how far
below the best candidate's it lies, BM25 over the best BM25 score, its rank on each side
and in the fusion, the share of the question's terms (weighted by idf) its title holds and
its text holds, the cosine of the question with the passage's best-matching window (the
80 words holding the most question terms: a long passage's one answering paragraph), and
how many distinct question terms that window holds. A listwise logistic model (softmax
over each question's candidates) weighs them; its logit orders the fused top candidates.
"""

from __future__ import annotations

import json
import math
import threading
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Callable, Sequence

import numpy as np

WEIGHTS_FILE = Path(__file__).resolve().parent / "data" / "ranker.json"

FEATURES = ("cos", "cos_gap", "bm25", "dense_rr", "lex_rr", "fused_rr", "title_cover",
            "text_cover", "window_cos", "window_terms")
WINDOW_WORDS = 80


@dataclass
class Candidate:
    chunk_id: int
    title: str
    text: str
    fused_rank: int                 # 0-based
    dense_rank: int | None = None
    lexical_rank: int | None = None
    cos: float | None = None
    bm25: float = 0.0


def candidates_for(ids: Sequence[int], rows: dict, dense: Sequence[tuple[int, float]],
                   lexical: Sequence[tuple[int, float]]) -> list[Candidate]:
    """The ranker's view of fused ids (best first) whose stored rows are at hand: the
    same in fitting (scripts/fit_ranker.py) and in search (search.rerank_learned)."""
    drank = {cid: i for i, (cid, _) in enumerate(dense)}
    lrank = {cid: i for i, (cid, _) in enumerate(lexical)}
    dcos, lsc = dict(dense), dict(lexical)
    return [Candidate(cid, rows[cid][2], rows[cid][3], i, drank.get(cid), lrank.get(cid),
                      dcos.get(cid), lsc.get(cid, 0.0)) for i, cid in enumerate(ids) if cid in rows]


def _cover(stems: set[str], idf: dict[str, float], tokens: Sequence[str]) -> float:
    total = sum(idf.values()) or 1.0
    have = set(tokens) & stems
    return sum(idf[s] for s in have) / total


def features(query: str, candidates: Sequence[Candidate], *, idf: dict[str, float],
             embed: Callable[[list[str]], np.ndarray], qvec: np.ndarray,
             vector_of: Callable[[list[int]], np.ndarray] | None = None) -> np.ndarray:
    """(n, len(FEATURES)) for the candidates of one query."""
    from indexer.passage_window import focus_window

    tok = _tok()
    if not candidates:
        return np.zeros((0, len(FEATURES)), dtype=np.float32)
    missing = [i for i, c in enumerate(candidates) if c.cos is None]
    cos = np.array([c.cos if c.cos is not None else 0.0 for c in candidates], dtype=np.float32)
    if missing and vector_of is not None:
        vecs = vector_of([candidates[i].chunk_id for i in missing])
        cos[missing] = vecs @ qvec
    stems = set(idf)
    windows = [focus_window(query, c.text, words=WINDOW_WORDS) for c in candidates]
    wvecs = embed(windows)
    wcos = wvecs @ qvec
    top_bm25 = max((c.bm25 for c in candidates), default=0.0) or 1.0
    n_terms = max(len(stems), 1)
    rows = []
    for i, c in enumerate(candidates):
        wt = set(tok(windows[i])) & stems
        rows.append([
            float(cos[i]), float(cos[i] - cos.max()), c.bm25 / top_bm25,
            0.0 if c.dense_rank is None else 1.0 / (1 + c.dense_rank),
            0.0 if c.lexical_rank is None else 1.0 / (1 + c.lexical_rank),
            1.0 / (1 + c.fused_rank),
            _cover(stems, idf, tok(c.title)), _cover(stems, idf, tok(c.text)),
            float(wcos[i]), len(wt) / n_terms,
        ])
    return np.asarray(rows, dtype=np.float32)


_TOK = None


def _tok():  # noqa: ANN202
    global _TOK
    if _TOK is None:
        from indexer.bm25 import Tokenizer

        _TOK = Tokenizer()
    return _TOK


class LearnedRanker:
    """Logits from the fitted weights (indexer/data/ranker.json)."""

    def __init__(self, path: Path | None = None) -> None:
        from indexer.errors import RerankerError

        self.path = path or WEIGHTS_FILE
        fix = "reinstall localrag, or set rerank = false in the settings"
        try:
            d = json.loads(self.path.read_text(encoding="utf-8"))
            features_of_file = tuple(d["features"])
            self.mean = np.array(d["mean"], dtype=np.float32)
            self.std = np.array(d["std"], dtype=np.float32)
            self.w = np.array(d["weights"], dtype=np.float32)
        except (OSError, ValueError, KeyError, TypeError) as exc:
            raise RerankerError(f"Cannot read the ranking model {self.path}: {exc}", hint=fix) from exc
        if features_of_file != FEATURES or not (len(self.mean) == len(self.std) == len(self.w) == len(FEATURES)):
            raise RerankerError(f"The ranking model {self.path} was fitted on other features", hint=fix)
        self.info: dict[str, Any] = d

    def logits(self, feats: np.ndarray) -> np.ndarray:
        if len(feats) == 0:
            return np.zeros(0, dtype=np.float32)
        return ((feats - self.mean) / self.std) @ self.w


_SHARED: LearnedRanker | None = None
_LOCK = threading.Lock()


def shared_ranker() -> LearnedRanker:
    global _SHARED
    with _LOCK:
        if _SHARED is None:
            _SHARED = LearnedRanker()
        return _SHARED


def sigmoid(x: float) -> float:
    return 1.0 / (1.0 + math.exp(-max(min(x, 50.0), -50.0)))
