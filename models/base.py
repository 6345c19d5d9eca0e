"""The small language-model interface the Self-RAG loop is written against.

One llama.cpp implementation (`models.llama_backend`) and deterministic scripted fakes
(`models.scripted`) implement it. Everything works on token ids: the reflection tokens
are looked up in the loaded vocabulary, never hard-coded and never read back from text.
"""

from __future__ import annotations

import enum
from abc import ABC, abstractmethod
from collections.abc import Callable, Collection, Sequence
from dataclasses import dataclass, field
from typing import Literal


class ModelKind(enum.Enum):
    SELFRAG = "selfrag"       # has the 16 reflection tokens
    INSTRUCT = "instruct"     # ordinary chat/instruct model (has a chat template)


@dataclass
class Step:
    """One generated token and what the model thought at that position."""

    token: int
    logprob: float                                  # log p(token), full-vocabulary softmax
    watched: dict[int, float] = field(default_factory=dict)
    """log p(id) at this position for every id the caller asked to watch."""
    replaced: int | None = None
    """The model's greedy token when the caller's `at_stop` rule wrote another one here
    (`token` is then the id written and `logprob` its log-probability); else None."""


@dataclass
class Generation:
    """A greedy continuation of one branch."""

    steps: list[Step]
    finish: Literal["eos", "stop", "length"]
    """eos: the model wrote EOS (kept as the last step); stop: a stop id (kept as the last
    step); length: max_tokens or the context ran out."""

    @property
    def tokens(self) -> list[int]:
        return [s.token for s in self.steps]


StopRule = Callable[["Step"], "int | None"]
"""Asked at a step whose greedy token is a stop id: None ends the branch there; a token id
is written in its place and the branch goes on (see `LanguageModel.generate`)."""


@dataclass
class ModelStats:
    """Counters for benchmarks: how much work the engine did."""

    prompt_tokens: int = 0      # tokens evaluated as prompt (prefixes and branches)
    generated_tokens: int = 0   # tokens sampled
    decode_calls: int = 0


class LanguageModel(ABC):
    """What the answer engine needs from a model."""

    kind: ModelKind
    n_ctx: int
    eos_id: int
    bos_id: int | None
    name: str

    def __init__(self) -> None:
        self.stats = ModelStats()

    @abstractmethod
    def tokenize(self, text: str, *, add_bos: bool = False, special: bool = True) -> list[int]:
        """Token ids of `text`; `special` lets added tokens like `[Retrieval]` match."""

    @abstractmethod
    def detokenize(self, ids: Sequence[int]) -> str:
        """Text of `ids` (added tokens come back literally or empty: do not parse it)."""

    def token_id(self, piece: str) -> int | None:
        """The id of `piece` if it is exactly one token of this vocabulary, else None."""
        ids = self.tokenize(piece, add_bos=False, special=True)
        return ids[0] if len(ids) == 1 else None

    @abstractmethod
    def next_logprobs(self, tokens: Sequence[int], ids: Sequence[int]) -> dict[int, float]:
        """log p(id | tokens) for each of `ids` at the next position (full log-softmax)."""

    @abstractmethod
    def generate(
        self,
        prefix: Sequence[int],
        branches: Sequence[Sequence[int]],
        *,
        max_tokens: int,
        stop_ids: Collection[int] = (),
        watch_ids: Sequence[int] = (),
        at_stop: StopRule | None = None,
    ) -> list[Generation]:
        """Greedy continuations of `prefix + branch` for every branch, in order.

        The prefix is evaluated once and shared; the branches are decoded together as
        sequences of one batch (not one after another). `stop_ids` end a branch (the stop
        token is kept as its last step); EOS always ends it. An empty `branches` list
        means one branch with nothing after the prefix.

        `at_stop`, when given, is asked at each step whose greedy token is a stop id
        (after `watched` is filled): None ends the branch there as usual; a token id is
        written instead (the step's `token` becomes it, `logprob` is its log-probability
        at that position, `replaced` the greedy token) and the branch goes on, in the
        same sequence, with everything before it still in context. Returning the greedy
        token itself just goes on.
        """

    def chat_prompt(self, messages: Sequence[dict[str, str]]) -> str:
        """The model's chat template applied to `messages`, ready for generation."""
        raise NotImplementedError(f"{type(self).__name__} has no chat template")

    def close(self) -> None:
        """Free native resources; the object is unusable afterwards."""
