"""End to end over a real index: five of git's own manual pages (tests/data/git_docs,
GPL-2.0, see tests/data/README.md), the real embedding model, real SQLite + hnswlib, and
the real default model (SmolLM2-135M-Instruct through llama.cpp, as localrag runs it).

The answer itself is checked: it cites the file that answers, its quotes are the file's
own words at the line they cite, and nothing that is not a statement is labelled
supported. The noise checks here are written independently of localrag.answering.judge.noise (simple
surface tests), so they cannot pass just because the detector agrees with itself.
"""

from __future__ import annotations

import re
import shutil
from pathlib import Path

from indexer.parsers import parse_bytes
from localrag.answering.label.units import code_body

import pytest

from conftest_models import smollm2_model, smollm2_path  # noqa: F401  (pytest fixtures)
from localrag.answering.generate.instruct import InstructEngine
from localrag.answering.generate.selfrag import EngineConfig

DOCS = Path(__file__).parent / "data" / "git_docs"


@pytest.fixture(scope="module")
def git_index(tmp_path_factory, embedder):
    from indexer.index import Index
    from indexer.options import IndexOptions

    root = tmp_path_factory.mktemp("git-docs")
    for f in DOCS.glob("*.txt"):
        shutil.copyfile(f, root / f.name)
    idx = Index(tmp_path_factory.mktemp("index"), embedder=embedder,
                options=IndexOptions(extensions=[".txt"]))
    idx.add_root(root)
    idx.update()
    yield idx
    idx.close()


def _words(text: str) -> list[str]:
    return re.findall(r"[A-Za-z]{2,}", text)


def looks_like_a_statement(text: str) -> bool:
    """Surface test, independent of localrag.answering.judge.noise: at least four words, mostly letters,
    not a markup line ("term::", "----"), no token three times in a row."""
    t = text.strip()
    tokens = t.split()
    if len(_words(t)) < 4 or t.endswith("::") or re.fullmatch(r"[\W_]+", t):
        return False
    letters = sum(c.isalpha() for c in t)
    if letters < 0.6 * len(t.replace(" ", "")):
        return False
    return not any(tokens[i] == tokens[i + 1] == tokens[i + 2] for i in range(len(tokens) - 2))


QUESTIONS = [
    ("git stash pop hit merge conflicts - is my stash gone now?", "git-stash.txt"),
    ("How do I delete the untracked files in my working tree?", "git-clean.txt"),
]


@pytest.mark.parametrize("question, expected_file", QUESTIONS)
def test_the_answer_cites_the_right_file_and_labels_no_noise_supported(
        git_index, smollm2_model, embedder, question, expected_file):  # noqa: F811
    engine = InstructEngine.for_model(
        smollm2_model, config=EngineConfig(k=5, mode="always", max_tokens=80),
        embed=embedder.encode)
    events: list[str] = []
    inner = smollm2_model.generate

    def spy(*a, **kw):
        events.append("generate")
        return inner(*a, **kw)

    smollm2_model.generate = spy
    try:
        ans = engine.answer(question, retrieve=lambda q, k: git_index.search(q, k=k),
                            on_segment=lambda s: events.append(s.origin))
    finally:
        smollm2_model.generate = inner
    print("\n", question, [(s.label, s.origin, s.line, s.text[:70]) for s in ans.segments],
          ans.notes)
    supported = [s for s in ans.segments if s.label in ("fully", "partially")]
    assert supported, "no supported sentence"
    # it cites the file that answers
    assert any(Path(s.passage.path).name == expected_file for s in supported
               if s.label == "fully")
    # nothing that is not a statement is labelled supported
    for s in supported:
        assert looks_like_a_statement(s.text), s.text
    # quotes are the file's own words, starting on the line they cite
    for s in ans.segments:
        if s.origin != "quote":
            continue
        # the file as the index reads it: markup cleaned line by line, every line in place
        path = Path(s.passage.path)
        lines = parse_bytes(path.read_bytes(), ext=path.suffix, name=path.name).text.split("\n")
        from_line = " ".join(" ".join(lines[s.line - 1:]).split())
        words = code_body(s.text) if s.kind == "code" else s.text   # a block: its lines
        pos = from_line.find(" ".join(words.split()))
        assert 0 <= pos <= len(" ".join(lines[s.line - 1].split())), (s.line, s.text)
        if s.subject is not None:   # the term line it describes: verbatim, above the sentence
            assert " ".join(s.subject.split()) in " ".join(" ".join(lines[:s.line]).split()), s.subject
    # on_segment saw every unit of the answer, in order, and the quotes reached it before
    # the model started generating: quotes, one generate call, then the model's units
    quotes = [s for s in ans.segments if s.origin == "quote"]
    assert quotes, "no quote"
    assert [e for e in events if e != "generate"] == [s.origin for s in ans.segments]
    assert events.count("generate") == 1
    assert events[:len(quotes) + 1] == ["quote"] * len(quotes) + ["generate"]


def test_a_quote_comes_with_the_sentence_it_refers_back_to(git_index, embedder):
    """Over the real index with the real embedder: git-clean.txt's "Normally, only files
    unknown to Git are removed, but if the -x option is specified, ignored files are also
    removed." is quoted with the sentence after it, "This can, for example, be useful to
    remove all build products.", which means nothing alone; every such context sentence
    stands next to its quote, in file order, from the same passage."""
    from localrag.answering.generate.extract import select_quotes

    question = "What does git clean do with ignored files?"
    passages = git_index.search(question, k=5)
    texts = [p.text for p in passages]
    quotes = select_quotes(question, texts, embedder.encode)
    shown = [q.span.text for q in quotes]
    normally = next(i for i, t in enumerate(shown) if t.startswith("Normally, only files unknown"))
    assert shown[normally + 1] == "This can, for example, be useful to remove all build products."
    assert quotes[normally + 1].context == "after" and not quotes[normally].context
    for i, q in enumerate(quotes):
        if not q.context:
            continue
        j = i + 1 if q.context == "before" else i - 1
        chosen = quotes[j]
        assert not chosen.context and chosen.passage == q.passage
        first, second = (q, chosen) if q.context == "before" else (chosen, q)
        gap = texts[q.passage][first.span.end:second.span.start]
        assert gap.strip() == "" and gap.count("\n") <= 1
