"""Describe a GGUF model file without running it (for `localrag models`).

Reads only the GGUF metadata with the `gguf` package's reader (memory-mapped, no
weights are touched), so it is fast for multi-gigabyte files and safe on files that
llama.cpp would refuse.
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Iterable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Literal

from models.cpu_copy import MAX_SOURCE_BYTES, SLOW_ON_CPU
from models.errors import ModelFileError
from models.loader import check_model_file, default_model_path
from models.reflection import ALL_TOKENS

Kind = Literal["selfrag", "instruct", "unsupported"]


@dataclass
class ModelFileInfo:
    path: Path
    size_bytes: int
    architecture: str | None
    name: str | None
    context_length: int | None
    quantisation: str | None        # e.g. "Q4_K_M", "Q8_0", "F16"
    vocab_size: int | None
    kind: Kind
    missing_reflection_tokens: list[str] = field(default_factory=list)
    has_chat_template: bool = False

    @property
    def reason(self) -> str:
        """Why the kind is what it is, in words."""
        if self.kind == "selfrag":
            return "has the Self-RAG reflection vocabulary"
        if self.kind == "instruct":
            return "chat template, no reflection tokens"
        if self.missing_reflection_tokens and len(self.missing_reflection_tokens) < len(ALL_TOKENS):
            return "incomplete reflection vocabulary: missing " + ", ".join(
                self.missing_reflection_tokens)
        return "no reflection tokens and no chat template"

    def describe(self) -> str:
        """A few lines for people (`localrag models`)."""
        size = f"{self.size_bytes / 1e9:.2f} GB" if self.size_bytes >= 1e8 else \
            f"{self.size_bytes / 1e6:.1f} MB"
        return "\n".join([
            f"{self.path}",
            f"  name: {self.name or '?'}  architecture: {self.architecture or '?'}",
            f"  quantisation: {self.quantisation or '?'}  size: {size}  "
            f"context: {self.context_length or '?'}  vocabulary: {self.vocab_size or '?'}",
            f"  kind: {self.kind} ({self.reason})",
        ] + ([f"  on the CPU: runs from a Q8_0 copy made once in the cache folder "
              f"({self.quantisation} has no batched CPU kernels; setting cpu_model_copy)"]
             if self.quantisation in SLOW_ON_CPU.values()
             and self.size_bytes <= MAX_SOURCE_BYTES else []))


def _quantisation(reader, file_type: int | None) -> str | None:
    import gguf

    if file_type is not None:
        try:
            name = gguf.LlamaFileType(file_type).name
            return name.removeprefix("MOSTLY_").removeprefix("ALL_")
        except ValueError:
            pass
    # No or unknown file type: name the most common type of the weight matrices.
    types = Counter(t.tensor_type.name for t in reader.tensors if len(t.shape) >= 2)
    return types.most_common(1)[0][0] if types else None


def inspect_gguf(path: str | Path) -> ModelFileInfo:
    """Metadata of one GGUF file; ModelFileError when it is missing or unreadable."""
    p = check_model_file(path)
    from gguf import GGUFReader

    try:
        reader = GGUFReader(str(p))
    except Exception as exc:  # the reader raises ValueError, IndexError, struct errors
        raise ModelFileError(
            f"{p} is a damaged GGUF file ({type(exc).__name__}: {exc})",
            hint="download the model file again",
        ) from exc

    def value(key: str):
        f = reader.fields.get(key)
        if f is None:
            return None
        try:
            return f.contents()
        except Exception:
            return None

    arch = value("general.architecture")
    tokens = value("tokenizer.ggml.tokens")
    vocab = set(tokens) if isinstance(tokens, list) else set()
    missing = [t for t in ALL_TOKENS if t not in vocab]
    has_template = value("tokenizer.chat_template") is not None
    kind: Kind
    if not missing:
        kind = "selfrag"
    elif len(missing) == len(ALL_TOKENS) and has_template:
        kind = "instruct"
    else:
        kind = "unsupported"
    ctx = value(f"{arch}.context_length") if arch else None
    file_type = value("general.file_type")
    return ModelFileInfo(
        path=p,
        size_bytes=p.stat().st_size,
        architecture=arch,
        name=value("general.name"),
        context_length=int(ctx) if ctx is not None else None,
        quantisation=_quantisation(reader, int(file_type) if file_type is not None else None),
        vocab_size=len(tokens) if isinstance(tokens, list) else None,
        kind=kind,
        missing_reflection_tokens=missing,
        has_chat_template=has_template,
    )


def known_model_files(extra_dirs: Iterable[str | Path] = ()) -> list[Path]:
    """The default model (when its package is installed) and the *.gguf files directly
    inside each of `extra_dirs`, without duplicates, in that order."""
    found: list[Path] = []
    try:
        found.append(default_model_path().resolve())
    except ModelFileError:
        pass
    for d in extra_dirs:
        d = Path(d).expanduser()
        if d.is_dir():
            found.extend(sorted(p.resolve() for p in d.glob("*.gguf") if p.is_file()))
    seen: set[Path] = set()
    return [p for p in found if not (p in seen or seen.add(p))]
