"""Loading GGUF files through real llama.cpp: model kinds, reflection-token ids, chat
templates, file inspection without running, clear errors for bad files, the AMX-safe
path for quantized models."""

from __future__ import annotations

import json
import os
import subprocess
import sys
import textwrap

import pytest

from conftest_models import REPO, THREADS, smollm2_model, smollm2_path, test_gguf_factory, tiny_gguf, tiny_model  # noqa: F401
from models import cpu
from models.base import ModelKind
from models.errors import ModelFileError, UnsupportedModelError
from models.inspect import inspect_gguf, known_model_files
from models.loader import default_model_path, load_model
from models.reflection import ALL_TOKENS, ReflectionVocab

SELFRAG_ORDER = [
    "[No Retrieval]", "[Retrieval]", "[Continue to Use Evidence]", "[Irrelevant]", "[Relevant]",
    "<paragraph>", "</paragraph>", "[Utility:1]", "[Utility:2]", "[Utility:3]", "[Utility:4]",
    "[Utility:5]", "[Fully supported]", "[Partially supported]", "[No support / Contradictory]",
    "<pad>",
]

pytestmark = pytest.mark.slow


def test_test_gguf_has_the_real_selfrag_ids(tiny_model):
    assert tiny_model.kind is ModelKind.SELFRAG
    vocab = ReflectionVocab.require(tiny_model)
    # Same ids as the released model (SELFRAG.md section 1), found by lookup.
    expected = {tok: 32000 + i for i, tok in enumerate(SELFRAG_ORDER)}
    assert vocab.ids == {t: expected[t] for t in ALL_TOKENS}
    assert tiny_model.token_id("<pad>") == 32015
    assert (tiny_model.bos_id, tiny_model.eos_id) == (1, 2)
    assert tiny_model.n_vocab == 32016


def test_reflection_tokens_match_inside_prompt_text(tiny_model):
    # USER_DEFINED tokens are single ids even inside text (SELFRAG.md section 1).
    ids = tiny_model.tokenize("[Retrieval]<paragraph>Paris</paragraph>", special=True)
    assert ids[0] == 32001 and ids[1] == 32005 and ids[-1] == 32006
    assert 1 not in ids     # no BOS unless asked for
    assert tiny_model.tokenize("Hi", add_bos=True)[0] == 1
    assert "[Relevant]" in tiny_model.detokenize([32004])


def test_default_model_is_an_instruct_model_with_a_chat_template(smollm2_model, smollm2_path):
    assert smollm2_path.name == "SmolLM2-135M-Instruct.Q4_1.gguf"
    assert smollm2_model.kind is ModelKind.INSTRUCT
    vocab, missing = ReflectionVocab.lookup(smollm2_model)
    assert vocab is None and missing == list(ALL_TOKENS)
    prompt = smollm2_model.chat_prompt([{"role": "user", "content": "Where is the Eiffel Tower?"}])
    assert "<|im_start|>user\nWhere is the Eiffel Tower?<|im_end|>" in prompt
    assert prompt.endswith("<|im_start|>assistant\n")
    ids = smollm2_model.tokenize(prompt)
    im_start = smollm2_model.token_id("<|im_start|>")
    assert im_start is not None and ids.count(im_start) == 3


def test_missing_file_names_the_file(tmp_path):
    path = tmp_path / "nowhere" / "model.gguf"
    with pytest.raises(ModelFileError) as err:
        load_model(path)
    assert str(path) in str(err.value) and err.value.hint


def test_not_a_gguf_file_is_refused_before_llama_cpp(tmp_path):
    path = tmp_path / "model.gguf"
    path.write_text("<html>404 Not Found</html>")
    with pytest.raises(ModelFileError, match="not a GGUF model file") as err:
        load_model(path)
    assert str(path) in str(err.value)
    with pytest.raises(ModelFileError, match="not a GGUF"):
        inspect_gguf(path)


def test_directory_is_refused(tmp_path):
    with pytest.raises(ModelFileError, match="not a file"):
        load_model(tmp_path)


@pytest.mark.parametrize("keep", [100_000, 8_000_000])
def test_truncated_gguf_gives_a_clear_error(tiny_gguf, tmp_path, keep):
    path = tmp_path / "truncated.gguf"
    path.write_bytes(tiny_gguf.read_bytes()[:keep])
    with pytest.raises(ModelFileError) as err:
        load_model(path, n_threads=THREADS)
    assert str(path) in str(err.value) and "again" in err.value.hint
    with pytest.raises(ModelFileError, match="damaged GGUF"):
        inspect_gguf(path)


def test_model_with_part_of_the_reflection_vocabulary_is_refused(test_gguf_factory):
    path = test_gguf_factory(reflection="partial")
    with pytest.raises(UnsupportedModelError) as err:
        load_model(path, n_threads=THREADS)
    message = str(err.value)
    assert str(path) in message
    for token in ("[Fully supported]", "[Partially supported]", "[No support / Contradictory]"):
        assert token in message
    assert "[Retrieval]" not in message


def test_model_without_reflection_tokens_or_chat_template_is_refused(test_gguf_factory):
    path = test_gguf_factory(reflection="none")
    with pytest.raises(UnsupportedModelError, match="neither a Self-RAG model"):
        load_model(path, n_threads=THREADS)


def test_inspect_test_gguf_without_running_it(tiny_gguf):
    info = inspect_gguf(tiny_gguf)
    assert info.kind == "selfrag" and info.missing_reflection_tokens == []
    assert info.architecture == "llama"
    assert info.vocab_size == 32016
    assert info.context_length == 4096
    assert info.quantisation == "F32"
    assert info.has_chat_template is False
    assert info.size_bytes == tiny_gguf.stat().st_size


def test_inspect_default_model(smollm2_path):
    info = inspect_gguf(smollm2_path)
    assert info.kind == "instruct" and info.has_chat_template
    assert info.architecture == "llama"
    assert info.quantisation == "Q4_1"
    assert info.vocab_size == 49152
    assert info.context_length == 8192
    assert len(info.missing_reflection_tokens) == len(ALL_TOKENS)
    text = info.describe()
    assert str(smollm2_path.resolve()) in text and "Q4_1" in text and "kind: instruct" in text
    assert "on the CPU: runs from a Q8_0 copy" in text
    import dataclasses

    big = dataclasses.replace(info, size_bytes=4_000_000_000)     # a 7B Q4_1: runs as it is
    assert "Q8_0 copy" not in big.describe()


def test_inspect_partial_and_quantized_test_models(test_gguf_factory):
    partial = inspect_gguf(test_gguf_factory(reflection="partial"))
    assert partial.kind == "unsupported"
    assert partial.missing_reflection_tokens == [
        "[Fully supported]", "[Partially supported]", "[No support / Contradictory]"]
    assert "incomplete" in partial.reason
    assert inspect_gguf(test_gguf_factory(dtype="q8_0")).quantisation == "Q8_0"


def test_known_model_files(tmp_path, tiny_gguf):
    (tmp_path / "a.gguf").write_bytes(tiny_gguf.read_bytes()[:64])
    (tmp_path / "notes.txt").write_text("x")
    files = known_model_files([tmp_path, tmp_path / "missing"])
    assert files[0] == default_model_path().resolve()
    assert files[1:] == [(tmp_path / "a.gguf").resolve()]
    assert known_model_files([tmp_path, tmp_path]) == files


def test_extra_buffer_types_are_off_exactly_on_amx_cpus(monkeypatch, tiny_model):
    monkeypatch.delenv(cpu.EXTRA_BUFTS_ENV, raising=False)
    assert cpu.use_extra_bufts() is (not cpu.has_amx_int8())
    assert tiny_model.extra_bufts is (not cpu.has_amx_int8())
    assert cpu.use_extra_bufts(True) is True and cpu.use_extra_bufts(False) is False
    monkeypatch.setenv(cpu.EXTRA_BUFTS_ENV, "0")
    assert cpu.use_extra_bufts() is False
    monkeypatch.setenv(cpu.EXTRA_BUFTS_ENV, "1")
    assert cpu.use_extra_bufts() is True
    assert cpu.use_extra_bufts(False) is False      # the keyword wins over the variable


# A quantized model evaluating several tokens per batch is what crashed on AMX CPUs
# (PLATFORM.md): a segfault, no Python error. Run it in a child process so a crash
# fails this test instead of killing pytest.
_QUANTIZED_RUN = textwrap.dedent("""
    import json, sys
    from models.loader import load_model
    model = load_model(sys.argv[1], n_ctx=512, n_threads=1)
    prompt = model.tokenize("The quick brown fox jumps over the lazy dog. " * 4, add_bos=True)
    branches = [model.tokenize(" One two three"), model.tokenize(" Four five"), []]
    gens = model.generate(prompt, branches, max_tokens=6)
    print(json.dumps({"extra_bufts": model.extra_bufts, "prompt": model.stats.prompt_tokens,
                      "decodes": model.stats.decode_calls, "steps": [len(g.steps) for g in gens],
                      "prompt_len": len(prompt)}))
    model.close()
""")


@pytest.mark.parametrize("which", ["smollm2_q4_1", "test_q8_0"])
def test_quantized_model_batches_without_crashing(which, smollm2_path, test_gguf_factory):
    path = smollm2_path if which == "smollm2_q4_1" else test_gguf_factory(dtype="q8_0")
    env = {**os.environ, "PYTHONPATH": str(REPO)}
    env.pop(cpu.EXTRA_BUFTS_ENV, None)
    proc = subprocess.run([sys.executable, "-c", _QUANTIZED_RUN, str(path)], cwd=REPO, env=env,
                          capture_output=True, text=True, timeout=300)
    assert proc.returncode == 0, f"exit {proc.returncode} (negative: killed by a signal)\n{proc.stderr[-2000:]}"
    report = json.loads(proc.stdout.strip().splitlines()[-1])
    assert report["extra_bufts"] is (not cpu.has_amx_int8())
    # The whole prompt went through in one batch, then all branches per step.
    assert report["prompt"] >= report["prompt_len"] > 20
    assert all(1 <= n <= 6 for n in report["steps"])


def test_extra_buffer_type_setting_reaches_llama_cpp(test_gguf_factory, capsys):
    # llama.cpp's load log names the repacking buffer type (CPU_REPACK, or AMX on AMX
    # CPUs) only when extra buffer types are allowed: proof the model parameter is set.
    from models.llama_backend import LlamaModel

    path = test_gguf_factory(dtype="q8_0")
    logs = {}
    for allowed in (True, False):
        capsys.readouterr()
        LlamaModel(path, n_ctx=256, n_threads=THREADS, verbose=True, use_extra_bufts=allowed).close()
        logs[allowed] = capsys.readouterr().err
    LlamaModel(path, n_ctx=256, n_threads=THREADS).close()    # back to quiet logging
    assert "CPU_REPACK" in logs[True] or "AMX" in logs[True]
    assert "load_tensors" in logs[False]
    assert "CPU_REPACK" not in logs[False] and "AMX" not in logs[False]
