"""The relevance model's training data from the judged answer rounds (stop 54): the units the
answers quoted, read as the answer path reads them, labelled by the annotators; the shipped
model is the one `python scripts/train_relevance.py` trains from them, and the corpora kept
for measuring it never enter its training."""

from __future__ import annotations

import importlib.util
import json
import sys
from pathlib import Path

import pytest

REPO = Path(__file__).resolve().parents[1]
DATA = REPO / "bench" / "data" / "relevance"


def _script(name: str):  # noqa: ANN202
    spec = importlib.util.spec_from_file_location(name, REPO / "scripts" / f"{name}.py")
    mod = importlib.util.module_from_spec(spec)
    sys.modules[name] = mod
    spec.loader.exec_module(mod)
    return mod


def test_a_units_name_is_read_as_the_answer_path_reads_it():
    """The backticked name an answer puts first is the unit's subject line; a Doxygen tag in
    it is read as words (extract.TAG_READING), a unit without a name is its sentence alone,
    and inline code inside the sentence is no name."""
    pairs = _script("make_unit_pairs")
    assert pairs.split_name("`mbedtls_md_list() \\return` The last entry is 0.") == (
        "mbedtls_md_list() returns", "The last entry is 0.")
    assert pairs.split_name("`git_commit_parent() @param commit` a previously loaded commit.") == (
        "git_commit_parent() parameter commit", "a previously loaded commit.")
    assert pairs.split_name("`listen_addresses (string):` Specifies the TCP/IP address(es).") == (
        "listen_addresses (string):", "Specifies the TCP/IP address(es).")
    assert pairs.split_name("The `verify` argument to `decode` does nothing.") == (
        "", "The `verify` argument to `decode` does nothing.")


def test_the_training_units_are_the_ones_the_judged_rounds_give():
    """Each training corpus's units file is what make_unit_pairs makes of the committed
    answers and judgments: the shipped model's data can be made again from the labels (a
    later round may add units, never change one: labels are carried by text)."""
    pairs = _script("make_unit_pairs")
    train = _script("train_relevance")
    for corpus in train.TRAINING_UNITS:
        committed = [json.loads(x) for x in (DATA / f"units-{corpus}.jsonl").read_text(encoding="utf-8").splitlines()]
        made = {(r["qid"], r["subject"], r["sentence"]): r for r in pairs.unit_pairs(corpus)}
        assert all(made.get((r["qid"], r["subject"], r["sentence"])) == r for r in committed), corpus
        assert {r["label"] for r in committed} == {0, 1, 2}


def test_the_shipped_model_is_the_one_the_script_trains_and_never_saw_the_corpora_left_out():
    train = _script("train_relevance")
    info = json.loads((REPO / "indexer" / "data" / "relevance" / "relevance.json").read_text())
    assert info["units"] == sorted(train.TRAINING_UNITS)
    assert set(info["training_corpora"]) == {"kernel", "git", "rust", *train.TRAINING_UNITS}
    left_out = set(train.MEASURED) | set(train.UNITS_HELD_OUT)
    assert not left_out & set(info["training_corpora"])
    units = train.load_units(train.TRAINING_UNITS)
    assert len(units) + 5400 == info["pairs"]
    assert not left_out & {r["corpus"] for r in units}


@pytest.mark.parametrize("corpus", ["zsh", "apache", "cmake"])
def test_training_refuses_a_corpus_kept_for_measuring(corpus, monkeypatch):
    train = _script("train_relevance")
    monkeypatch.setattr(sys, "argv", ["train_relevance.py", "--units", corpus, "--out-dir", "/nonexistent"])
    with pytest.raises(SystemExit, match="never train on them"):
        train.main()
