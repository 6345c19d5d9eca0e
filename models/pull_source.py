"""What `localrag models pull` is asked to download: a catalogue name, a file in a Hugging
Face Hub repository (OWNER/REPO/FILE.gguf), or a direct https:// URL; checked before any
connection is made."""

from __future__ import annotations

import os
from dataclasses import dataclass
from urllib.parse import unquote, urlsplit

from models.catalogue import CATALOGUE, DEFAULT_NAME, CatalogueEntry, find_entry
from models.errors import ModelPullError

DEFAULT_ENDPOINT = "https://huggingface.co"
_LOOPBACK = {"127.0.0.1", "localhost", "::1"}


def default_endpoint() -> str:
    """The hub's address: $HF_ENDPOINT (read now, not at import) or huggingface.co."""
    return (os.environ.get("HF_ENDPOINT") or DEFAULT_ENDPOINT).rstrip("/")


@dataclass(frozen=True)
class PullSource:
    """One file to pull: a catalogue entry, a file in a hub repository, or a URL."""

    text: str                       # as the person gave it
    filename: str                   # the name it gets in the models folder
    repo: str | None = None         # hub repository "owner/name"
    path_in_repo: str | None = None
    url: str | None = None          # a direct URL instead of a hub file
    entry: CatalogueEntry | None = None

    def resolve_url(self, endpoint: str) -> str:
        if self.url is not None:
            return self.url
        from huggingface_hub import hf_hub_url

        assert self.repo is not None and self.path_in_repo is not None
        return hf_hub_url(self.repo, self.path_in_repo, endpoint=endpoint)

    @property
    def described(self) -> str:
        if self.entry is not None:
            return f"{self.entry.name} ({self.repo}/{self.path_in_repo})"
        return self.url or f"{self.repo}/{self.path_in_repo}"


def parse_source(text: str | None) -> PullSource:
    """A catalogue name (`selfrag-7b`, `selfrag-7b:q8_0`), `OWNER/REPO/FILE.gguf` on the
    Hugging Face Hub, or an https:// URL of a .gguf file. ModelPullError otherwise."""
    text = (text or DEFAULT_NAME).strip()
    names = ", ".join(e.name for e in CATALOGUE)
    if "://" in text:
        parts = urlsplit(text)
        if parts.scheme not in ("https", "http") or not parts.hostname:
            raise ModelPullError(f"Cannot download {text!r}: not an https:// address.",
                                 hint="give an https:// URL of a .gguf file")
        if parts.scheme == "http" and parts.hostname not in _LOOPBACK:
            raise ModelPullError(
                f"Refusing the unencrypted address {text}.",
                hint="use the https:// address of the file (plain http only for this machine)")
        filename = _checked_filename(unquote(parts.path.rsplit("/", 1)[-1]), text)
        return PullSource(text=text, filename=filename, url=text)
    if "/" in text:
        pieces = [p for p in text.split("/")]
        if len(pieces) < 3 or not all(pieces):
            raise ModelPullError(
                f"{text!r} names a repository but no file.",
                hint=f"give OWNER/REPO/FILE.gguf (the file list is on "
                f"{default_endpoint()}/{'/'.join(pieces[:2])}/tree/main), or a catalogue "
                f"name: {names}")
        path_in_repo = "/".join(pieces[2:])
        filename = _checked_filename(pieces[-1], text)
        return PullSource(text=text, filename=filename, repo="/".join(pieces[:2]),
                          path_in_repo=path_in_repo)
    entry = find_entry(text)
    if entry is None:
        raise ModelPullError(f"No model called {text!r} in the catalogue.",
                             hint=f"use one of {names}, OWNER/REPO/FILE.gguf on the "
                             "Hugging Face Hub, or an https:// URL (list: localrag models)")
    return PullSource(text=text, filename=entry.filename, repo=entry.repo,
                      path_in_repo=entry.filename, entry=entry)


def _checked_filename(name: str, text: str) -> str:
    if not name.lower().endswith(".gguf") or name.startswith(".") or "\\" in name:
        raise ModelPullError(
            f"{text} does not name a .gguf file.",
            hint="localrag runs GGUF files (llama.cpp format): pick a file ending in .gguf")
    return name
