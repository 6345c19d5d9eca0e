"""`localrag models check-selfrag` (localrag/answering/check_selfrag.py) on the hand-weighted
test GGUF (scripts/make_test_gguf.py), written once the "▁" way and once without it.

Each file writes, after `[Relevant]`, "▁The" (the "▁" way: the training tokenizer's, and
llama.cpp's for a prompt string) or the plain piece "The", and the trained reflection token
at each position the check reads (`</paragraph>=[Relevant]`, `.=[Fully supported]`,
`[Fully supported]=[Utility:5]`). Like a real model meeting a tokenization it never saw,
it is thrown off by the pieces only the other convention produces: those pieces are the
markers of a context rule that makes it write `</s>` instead (the markers are computed
here from the real Llama 2 tokenizer on the shipped pairs, so the two conventions differ
in exactly the pieces that follow a special token).
"""

from __future__ import annotations

import json

import pytest

from conftest_models import THREADS, _make_test_gguf_module, test_gguf_factory  # noqa: F401
from localrag.answering.check_selfrag import check_selfrag, load_pairs
from localrag.answering.generate.prompting import encode_text, prompt_ids

RULES = [("</paragraph>", "[Relevant]"), (".", "[Fully supported]"),
         ("[Fully supported]", "[Utility:5]"), ("[Utility:5]", "</s>")]
CONFUSION = 40.0     # the context rule's weight: </s> beats the reflection tokens (logit ~60)


def markers(model, *, only: bool) -> tuple[str, ...]:
    """Vocabulary pieces that occur in the check's sequences for the shipped pairs only
    with (`only=True`) or only without the "▁" after a special token (prompts included:
    a piece of a question is in both)."""
    writer = _make_test_gguf_module()
    pieces = writer._read_llama2_vocab(writer.VOCAB_FILE)[0]
    ids = {True: set(), False: set()}
    for pair in load_pairs():
        for space in (True, False):
            ids[space] |= set(prompt_ids(model, pair.question)[0])
        for text in (f"{pair.title}\n{pair.text}", pair.answer):
            for space in (True, False):
                ids[space] |= set(encode_text(model, text, leading_space=space))
    return tuple(sorted(pieces[i] for i in ids[only] - ids[not only]))


@pytest.fixture(scope="module")
def files(tmp_path_factory, tiny_plain):
    writer = _make_test_gguf_module()
    folder = tmp_path_factory.mktemp("check")
    out = {}
    for space in (True, False):
        # a "▁"-trained file is thrown off by the pieces only the plain way produces
        confusing = markers(tiny_plain, only=not space)
        assert confusing
        out[space] = writer.write_test_gguf(
            folder / f"{'space' if space else 'plain'}.gguf",
            bias=[*RULES, ("[Relevant]", "▁The" if space else "The")],
            context=(confusing, "</s>", CONFUSION))
    return out


@pytest.fixture(scope="module")
def tiny_plain(tmp_path_factory):
    from models.loader import load_model

    path = _make_test_gguf_module().write_test_gguf(tmp_path_factory.mktemp("t") / "t.gguf")
    model = load_model(path, n_ctx=1024, n_threads=THREADS)
    yield model
    model.close()


def test_llama_cpp_puts_a_space_piece_after_special_tokens_in_prompt_text(tiny_plain):
    """What the training tokenizer did (legacy slow Llama tokenizer) and the engine's
    default now: "[Relevant]The" is `[Relevant]`, "▁The"."""
    m = tiny_plain
    assert m.tokenize("[Relevant]The", special=True) == [
        m.token_id("[Relevant]"), *m.tokenize("The", special=False)]
    assert m.tokenize("The", special=False) == m.tokenize(" The", special=False)[-1:]


@pytest.mark.parametrize("space", [True, False])
def test_check_finds_the_convention_the_file_was_written_with(files, space):
    from models.loader import load_model

    model = load_model(files[space], n_ctx=1024, n_threads=THREADS)
    try:
        report = check_selfrag(model)
    finally:
        model.close()
    matched, other = (report.space, report.plain) if space else (report.plain, report.space)
    assert report.pairs == 10 and len(matched.log_mass) == 30
    # the matched convention: every trained group near certain; the other loses mass
    assert matched.mean_log_mass > -0.01
    assert other.mean_log_mass < matched.mean_log_mass - 1.0
    # its own first text token after [Relevant], in the matched context: ▁The / The
    assert (matched.own_space, matched.own_plain) == ((10, 0) if space else (0, 10))
    assert report.prefers_space is space
    text = report.describe()
    assert f"space_after_special {'true' if space else 'false'}" in text
    assert "disagrees" not in report.reason


def test_cli_check_selfrag_prints_the_preferred_setting(files, tmp_path, capsys):
    from localrag.cli import main

    assert main(["--data-dir", str(tmp_path), "models", "check-selfrag", str(files[True]),
                 "--json"]) == 0
    data = json.loads(capsys.readouterr().out)
    assert data["space_after_special"] is True and data["pairs"] == 10
    assert main(["--data-dir", str(tmp_path), "models", "check-selfrag",
                 str(files[False])]) == 0
    assert "localrag settings --set space_after_special false" in capsys.readouterr().out


def test_cli_check_selfrag_refuses_a_model_without_reflection_tokens(test_gguf_factory,
                                                                      tmp_path, capsys):
    from localrag.cli import main

    path = test_gguf_factory(reflection="none")
    assert main(["--data-dir", str(tmp_path), "models", "check-selfrag", str(path)]) == 2
    err = capsys.readouterr().err
    assert "Self-RAG model" in err and "Traceback" not in err
