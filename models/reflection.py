"""The Self-RAG reflection vocabulary, looked up in the loaded model (never hard-coded ids).

See ../shared/design/SELFRAG.md section 1. A model is a Self-RAG model exactly when every
one of these strings tokenizes (with special parsing) to a single id.
"""

from __future__ import annotations

from dataclasses import dataclass

from models.base import LanguageModel
from models.errors import UnsupportedModelError

RETRIEVE_NO = "[No Retrieval]"
RETRIEVE_YES = "[Retrieval]"
RETRIEVE_CONTINUE = "[Continue to Use Evidence]"
IRRELEVANT = "[Irrelevant]"
RELEVANT = "[Relevant]"
PARAGRAPH_OPEN = "<paragraph>"
PARAGRAPH_CLOSE = "</paragraph>"
UTILITY = tuple(f"[Utility:{k}]" for k in range(1, 6))
FULLY = "[Fully supported]"
PARTIALLY = "[Partially supported]"
NO_SUPPORT = "[No support / Contradictory]"

GROUPS: dict[str, tuple[str, ...]] = {
    "retrieve": (RETRIEVE_NO, RETRIEVE_YES, RETRIEVE_CONTINUE),
    "isrel": (IRRELEVANT, RELEVANT),
    "paragraph": (PARAGRAPH_OPEN, PARAGRAPH_CLOSE),
    "isuse": UTILITY,
    "issup": (FULLY, PARTIALLY, NO_SUPPORT),
}
ALL_TOKENS: tuple[str, ...] = tuple(t for group in GROUPS.values() for t in group)

LITERAL_STRINGS: tuple[str, ...] = (*ALL_TOKENS, "<pad>")
"""Strings that the Self-RAG conversions add as USER_DEFINED tokens. llama.cpp matches
those inside text even when special parsing is off, so user text containing one of them
(a passage with a literal `</paragraph>`) must be tokenized around it
(localrag.answering.generate.prompting.encode_text)."""

LLAMA2_ORDER: tuple[str, ...] = (
    RETRIEVE_NO, RETRIEVE_YES, RETRIEVE_CONTINUE, IRRELEVANT, RELEVANT, PARAGRAPH_OPEN,
    PARAGRAPH_CLOSE, *UTILITY, FULLY, PARTIALLY, NO_SUPPORT,
)
"""The reflection tokens in the order the released Llama 2 models add them after the
32,000 SentencePiece pieces (SELFRAG.md section 1: ids 32000..32014)."""

LLAMA2_TRAINED_CONTEXT = 2048
"""Sequence length the released Llama 2 Self-RAG models were fine-tuned with (SELFRAG.md
section 2; their GGUF files say 4,096)."""


@dataclass(frozen=True)
class ReflectionVocab:
    """Ids of the reflection tokens in one loaded model."""

    ids: dict[str, int]          # token string -> id

    def __getitem__(self, token: str) -> int:
        return self.ids[token]

    def group(self, name: str) -> list[int]:
        return [self.ids[t] for t in GROUPS[name]]

    @property
    def all_ids(self) -> list[int]:
        return [self.ids[t] for t in ALL_TOKENS]

    @property
    def utility_ids(self) -> list[int]:
        return [self.ids[t] for t in UTILITY]

    @property
    def issup_ids(self) -> list[int]:
        return self.group("issup")

    @property
    def trained_context(self) -> int | None:
        """2,048 when this is the released Llama 2 Self-RAG vocabulary (the reflection
        tokens at 32000..32014 in the table's order: the 7B and 13B generators, which were
        fine-tuned on 2,048-token sequences); None for any other layout (unknown)."""
        if all(self.ids.get(t) == 32000 + i for i, t in enumerate(LLAMA2_ORDER)):
            return LLAMA2_TRAINED_CONTEXT
        return None

    @classmethod
    def lookup(cls, model: LanguageModel) -> tuple["ReflectionVocab | None", list[str]]:
        """(vocabulary, missing strings); the vocabulary is None when any is missing."""
        ids: dict[str, int] = {}
        missing: list[str] = []
        for token in ALL_TOKENS:
            tid = model.token_id(token)
            if tid is None:
                missing.append(token)
            else:
                ids[token] = tid
        if missing:
            return None, missing
        return cls(ids), []

    @classmethod
    def require(cls, model: LanguageModel) -> "ReflectionVocab":
        vocab, missing = cls.lookup(model)
        if vocab is None:
            raise UnsupportedModelError(
                f"{model.name} is not a Self-RAG model: its vocabulary lacks "
                + ", ".join(missing),
                hint="use a Self-RAG GGUF (see the README) or let localrag use it as an "
                "ordinary instruct model",
            )
        return vocab
