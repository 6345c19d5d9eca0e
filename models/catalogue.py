"""The models `localrag models pull NAME` knows by name (a small built-in catalogue).

Each entry is one file of a public GGUF conversion on the Hugging Face Hub (the sources
of ../shared/design/SELFRAG.md section 7 and the README). Sizes are approximate and used
only before the download starts (listing, disk-space warning); the pull itself checks
the file against the size the source announces.
"""

from __future__ import annotations

from dataclasses import dataclass

GB = 1_000_000_000


@dataclass(frozen=True)
class CatalogueEntry:
    family: str           # "selfrag-7b"
    variant: str          # "q4_k_m": the quantisation, lower case
    repo: str             # Hugging Face repository, "owner/name"
    filename: str         # file inside the repository
    approx_bytes: int     # about this large (the source's exact size is checked on pull)
    kind: str             # what `localrag models FILE` must find: "selfrag" or "instruct"
    purpose: str          # what it is good for, in a few words
    architecture: str = "llama"     # general.architecture in the GGUF file

    @property
    def name(self) -> str:
        """The full name, e.g. `selfrag-7b:q4_k_m`."""
        return f"{self.family}:{self.variant}"

    @property
    def is_default(self) -> bool:
        return DEFAULT_VARIANT.get(self.family) == self.variant


CATALOGUE: tuple[CatalogueEntry, ...] = (
    CatalogueEntry(
        family="selfrag-7b", variant="q4_k_m",
        repo="m4r1/selfrag_llama2_7b-GGUF", filename="selfrag_llama2_7b.q4_k_m.gguf",
        approx_bytes=int(4.08 * GB), kind="selfrag",
        purpose="Self-RAG with its reflection tokens; the default: smallest good quality, "
        "about 6.6 GB of RAM"),
    CatalogueEntry(
        family="selfrag-7b", variant="q5_k_m",
        repo="QuantFactory/selfrag_llama2_7b-GGUF", filename="selfrag_llama2_7b.Q5_K_M.gguf",
        approx_bytes=int(4.78 * GB), kind="selfrag",
        purpose="Self-RAG, closer to the original weights than q4_k_m; about 7.3 GB of RAM"),
    CatalogueEntry(
        family="selfrag-7b", variant="q8_0",
        repo="QuantFactory/selfrag_llama2_7b-GGUF", filename="selfrag_llama2_7b.Q8_0.gguf",
        approx_bytes=int(7.16 * GB), kind="selfrag",
        purpose="Self-RAG nearest the original (reflection scores closest to fp16); "
        "about 9.7 GB of RAM"),
)

DEFAULT_VARIANT: dict[str, str] = {"selfrag-7b": "q4_k_m"}
DEFAULT_NAME = "selfrag-7b"
"""What `localrag models pull` with no NAME downloads."""


def find_entry(name: str) -> CatalogueEntry | None:
    """The entry called `name` (`family` alone means its default variant; any case)."""
    family, _, variant = name.strip().lower().partition(":")
    variant = variant or DEFAULT_VARIANT.get(family, "")
    for entry in CATALOGUE:
        if entry.family == family and entry.variant == variant:
            return entry
    return None


def entry_for_file(filename: str) -> CatalogueEntry | None:
    """The entry whose file is called `filename` (to mark local files as catalogue models)."""
    for entry in CATALOGUE:
        if entry.filename == filename:
            return entry
    return None


def format_size(n: int | None) -> str:
    """Bytes for people: `4.08 GB`, `17.4 MB`, `3.0 kB`."""
    if n is None:
        return "an unknown size"
    if n >= 1e9:
        return f"{n / 1e9:.2f} GB"
    if n >= 1e6:
        return f"{n / 1e6:.1f} MB"
    return f"{n / 1e3:.1f} kB"
