"""The quote scorer on held-out questions (localrag.answering.generate.extract).

tests/data/quotes_test_top5.json.gz holds the TEST half of bench/data/retrieval (72
questions on git's manuals and the kernel documentation, GPL-2.0 texts) with the five
passages localrag's search returned for each (written from the index the weights were
fitted next to; scripts/fit_quote_scorer.py fits on the training questions and the dev
half only). The test runs select_quotes exactly as the instruct engine does, with the
real embedder, and checks the share of questions whose quotes hold the key phrase from
the right file: the figure extract.MEASURED_TEST records.
"""

from __future__ import annotations

import gzip
import inspect
import json
from pathlib import Path

import pytest

from localrag.answering.generate import extract
from localrag.answering.generate.instruct import InstructEngine

FIXTURE = Path(__file__).parent / "data" / "quotes_test_top5.json.gz"


def norm(text: str) -> str:
    return " ".join(text.split()).lower()


def test_the_engine_quotes_as_the_measurement_does():
    engine_default = inspect.signature(InstructEngine.__init__).parameters["max_quotes"].default
    select_default = inspect.signature(extract.select_quotes).parameters["max_quotes"].default
    assert engine_default == select_default == extract.MEASURED_TEST["max_quotes"]


@pytest.mark.slow
def test_quotes_hold_the_answer_on_the_held_out_questions(embedder):
    rows = json.loads(gzip.decompress(FIXTURE.read_bytes()))
    assert len(rows) == 72 and all(int(r["id"].split("-")[1]) % 2 == 0 for r in rows)
    in_top5 = hits = 0
    hits_by_corpus = {"git": 0, "kernel": 0}
    for r in rows:
        key = norm(r["key_phrase"])
        texts = [p["text"] for p in r["passages"]]
        right = {i for i, p in enumerate(r["passages"])
                 if p["path"] == r["file"] and key in norm(p["text"])}
        if not right:
            continue
        in_top5 += 1
        quotes = extract.select_quotes(r["question"], texts, embedder.encode)
        assert 1 <= len(quotes) <= extract.MEASURED_TEST["max_quotes"]
        for q in quotes:           # a quote is the passage's own words at its offsets
            assert texts[q.passage][q.span.start:q.span.end].split() == q.span.text.split()
        if any(q.passage in right and key in norm(q.span.text) for q in quotes):
            hits += 1
            hits_by_corpus[r["corpus"]] += 1
    assert in_top5 == extract.MEASURED_TEST["in_top5"]
    # Recorded on this machine: MEASURED_TEST["hits"]. The embedder runs int8 kernels
    # whose rounding differs between CPUs (VNNI or not), which can swap two close
    # candidates; allow two questions either way, nothing more.
    assert abs(hits - extract.MEASURED_TEST["hits"]) <= 2, (hits, hits_by_corpus)
