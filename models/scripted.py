"""A deterministic scripted language model for fast unit tests of decoding logic.

`ScriptedModel` implements `LanguageModel` with a tiny word-level vocabulary that grows as
text is seen, plus `<unk>`, `<s>`, `</s>` and (by default) the 16 Self-RAG reflection
strings as single tokens, so `ReflectionVocab.lookup` works on it exactly as on the real
model. Its next-token distributions come from rules:

    "when the context ends with these pieces (and its text contains these strings),
     the next-token distribution is {piece: probability}"

Scripted probabilities are exact: a rule's pieces get exactly the probabilities given;
whatever mass is left over goes to `<unk>` (it stands for "the rest of the vocabulary");
every other token has probability 0. Greedy decoding picks the most probable *scripted*
piece (earlier entries win ties), never `<unk>`. With no matching rule the model writes
`</s>` with probability 1.

Tokenization mimics llama.cpp's SentencePiece path, including its known drift: every
text chunk (at the start and after each added token) gets a leading space when
`space_prefix` is on, so `<paragraph>The` becomes `<paragraph>`, ` The`. Pieces are
words with an optional leading space (`" Paris"` and `"Paris"` are different tokens),
punctuation marks, newlines and lone whitespace.

The usual way to script a Self-RAG answer is with the helpers `on_question`,
`on_passage`, `on_no_retrieval` (see their docstrings); `script` is the general form.
"""

from __future__ import annotations

import math
import re
from collections.abc import Collection, Mapping, Sequence
from dataclasses import dataclass

from models.base import Generation, LanguageModel, ModelKind, Step, StopRule
from models.errors import ModelError
from models.reflection import ALL_TOKENS, PARAGRAPH_CLOSE, RETRIEVE_NO

UNK, BOS, EOS = "<unk>", "<s>", "</s>"
_PIECE_RE = re.compile(r"\n|[ ]?\w+|[ ]?[^\w\s]|\s")

Dist = Mapping[str, float]


@dataclass
class Rule:
    dist: dict[int, float]          # token id -> probability (sum <= 1)
    suffix: tuple[int, ...]         # the context must end with these ids
    contains: tuple[str, ...] = ()  # ... and its text must contain each of these
    order: int = 0                  # later rules win ties of equal suffix length


@dataclass
class GenerateCall:
    """What one `generate` call was asked (for assertions in tests)."""

    prefix: list[int]
    branches: list[list[int]]
    max_tokens: int
    stop_ids: list[int]
    watch_ids: list[int]
    at_stop: StopRule | None = None


class ScriptedModel(LanguageModel):
    """Deterministic fake `LanguageModel` driven by scripted next-token distributions."""

    def __init__(
        self,
        *,
        reflection: bool = True,
        space_prefix: bool = True,
        n_ctx: int = 4096,
        name: str = "scripted",
    ) -> None:
        super().__init__()
        self.kind = ModelKind.SELFRAG if reflection else ModelKind.INSTRUCT
        self.n_ctx = n_ctx
        self.name = name
        self.space_prefix = space_prefix
        self._pieces: list[str] = []
        self._ids: dict[str, int] = {}
        for piece in (UNK, BOS, EOS):
            self._add(piece)
        self.unk_id, self.bos_id, self.eos_id = 0, 1, 2
        self._control = {BOS, EOS, UNK}
        self._added: tuple[str, ...] = ALL_TOKENS + ("<pad>",) if reflection else ()
        for piece in self._added:
            self._add(piece)
        self._special_re = re.compile(
            "|".join(re.escape(s) for s in sorted(self._added, key=len, reverse=True))
        ) if self._added else None
        self._control_re = re.compile(
            "|".join(re.escape(s) for s in sorted((*self._added, BOS, EOS), key=len, reverse=True))
        )
        self.rules: list[Rule] = []
        self.calls: list[GenerateCall] = []
        self.logprob_calls: list[tuple[list[int], list[int]]] = []

    # --- vocabulary ---------------------------------------------------------------------
    def _add(self, piece: str) -> int:
        if piece not in self._ids:
            self._ids[piece] = len(self._pieces)
            self._pieces.append(piece)
        return self._ids[piece]

    def piece_id(self, piece: str) -> int:
        """The id of one piece (added to the vocabulary if new)."""
        return self._add(piece)

    def piece(self, token: int) -> str:
        return self._pieces[token]

    @property
    def n_vocab(self) -> int:
        return len(self._pieces)

    def pieces(self, text: str, *, space_prefix: bool = False) -> list[str]:
        """`text` cut into pieces, with no special-token matching."""
        if space_prefix:
            text = " " + text
        return _PIECE_RE.findall(text)

    def tokenize(self, text: str, *, add_bos: bool = False, special: bool = True) -> list[int]:
        ids = [self.bos_id] if add_bos else []
        pattern = self._control_re if special else self._special_re
        chunks: list[tuple[bool, str]] = []
        pos = 0
        if pattern is not None:
            for m in pattern.finditer(text):
                if m.start() > pos:
                    chunks.append((False, text[pos : m.start()]))
                chunks.append((True, m.group()))
                pos = m.end()
        if pos < len(text):
            chunks.append((False, text[pos:]))
        for is_special, chunk in chunks:
            if is_special:
                ids.append(self._ids[chunk])
            else:
                # llama.cpp's SentencePiece path: a space before every text chunk
                ids.extend(self._add(p) for p in self.pieces(chunk, space_prefix=self.space_prefix))
        return ids

    def detokenize(self, ids: Sequence[int]) -> str:
        # added tokens come back literally (USER_DEFINED), control tokens as ""
        return "".join("" if self._pieces[i] in self._control else self._pieces[i] for i in ids)

    # --- scripting ----------------------------------------------------------------------
    def _ids_of(self, pieces: Sequence[str | int]) -> tuple[int, ...]:
        return tuple(p if isinstance(p, int) else self._add(p) for p in pieces)

    def rule(
        self,
        dist: Dist,
        *,
        after: Sequence[str | int] = (),
        contains: str | Sequence[str] = (),
    ) -> None:
        """Next-token distribution `dist` where the context ends with the pieces `after`
        and its text contains every string of `contains`. The longest matching suffix
        wins; among equals, the rule added last."""
        total = math.fsum(dist.values())
        if total > 1.0 + 1e-9 or any(p < 0 for p in dist.values()):
            raise ValueError(f"scripted probabilities must be >= 0 and sum to <= 1: {dict(dist)}")
        if isinstance(contains, str):
            contains = (contains,)
        self.rules.append(
            Rule(
                dist={self._add(k): float(v) for k, v in dist.items()},
                suffix=self._ids_of(after),
                contains=tuple(contains),
                order=len(self.rules),
            )
        )

    def script(
        self,
        steps: Sequence[Dist],
        *,
        after: Sequence[str | int],
        contains: str | Sequence[str] = (),
    ) -> list[str]:
        """A run of distributions: step i applies where the context ends with `after`
        followed by the greedy choices of steps 0..i-1. Returns those greedy pieces."""
        anchor = list(after)
        chosen: list[str] = []
        for dist in steps:
            self.rule(dist, after=anchor, contains=contains)
            best = _argmax(dist)
            anchor.append(best)
            chosen.append(best)
        return chosen

    def words(self, text: str, *, p: float = 1.0) -> list[Dist]:
        """One step per piece of `text` (each with probability `p`), for `script`/`end`."""
        return [{piece: p} for piece in self.pieces(text)]

    # The three helpers below script a whole Self-RAG answer.

    def on_question(self, dist: Dist) -> None:
        """The retrieval decision: the distribution at the first position after the
        prompt `### Instruction:...### Response:\\n`, e.g. {"[Retrieval]": 0.25,
        "[No Retrieval]": 0.75}."""
        self.rule(dist, after=self.pieces("Response:\n", space_prefix=True))

    def on_passage(
        self,
        contains: str | Sequence[str],
        *,
        isrel: Dist,
        text: str,
        issup: Dist | None = None,
        end: Sequence[Dist] = ({"[Utility:5]": 1.0}, {EOS: 1.0}),
        word_p: float = 1.0,
    ) -> list[str]:
        """One candidate continuation after `...<paragraph>{passage}</paragraph>` where
        the context contains `contains` (e.g. a phrase of the passage): the IsRel
        distribution, the words of `text` (each with probability `word_p`), the IsSup
        distribution (if given), then the `end` distributions (default: Utility:5 then
        EOS; use e.g. [{"[Retrieval]": 0.8, "[No Retrieval]": 0.2}] to ask for new
        evidence and end the segment, or [{"[Continue to Use Evidence]": 1.0},
        *m.words("More."), ...] to go on with the same passage)."""
        steps: list[Dist] = [isrel]
        steps += [{p: word_p} for p in self.pieces(text)]
        if issup is not None:
            steps.append(issup)
        steps += list(end)
        return self.script(steps, after=[PARAGRAPH_CLOSE], contains=contains)

    def on_no_retrieval(
        self,
        text: str,
        *,
        end: Sequence[Dist] = ({"[Utility:5]": 1.0}, {EOS: 1.0}),
        word_p: float = 1.0,
        contains: str | Sequence[str] = (),
    ) -> list[str]:
        """The continuation after `[No Retrieval]`: the words of `text`, then `end`."""
        steps: list[Dist] = [{p: word_p} for p in self.pieces(text)]
        steps += list(end)
        return self.script(steps, after=[RETRIEVE_NO], contains=contains)

    # --- LanguageModel ------------------------------------------------------------------
    def _probs(self, context: Sequence[int]) -> dict[int, float]:
        best: Rule | None = None
        text: str | None = None
        for rule in self.rules:
            n = len(rule.suffix)
            if n > len(context) or tuple(context[len(context) - n :]) != rule.suffix:
                continue
            if rule.contains:
                if text is None:
                    text = self.detokenize(context)
                if not all(c in text for c in rule.contains):
                    continue
            if best is None or (n, rule.order) > (len(best.suffix), best.order):
                best = rule
        if best is None:
            return {self.eos_id: 1.0}
        probs = dict(best.dist)
        rest = 1.0 - math.fsum(probs.values())
        if rest > 1e-12:
            probs[self.unk_id] = probs.get(self.unk_id, 0.0) + rest
        return probs

    @staticmethod
    def _lp(probs: Mapping[int, float], token: int) -> float:
        p = probs.get(token, 0.0)
        return math.log(p) if p > 0 else -math.inf

    def _check_fits(self, n: int) -> None:
        if n > self.n_ctx:
            raise ModelError(
                f"{self.name}: prompt of {n} tokens exceeds the context of {self.n_ctx}",
                hint="the caller must trim its prompt",
            )

    def next_logprobs(self, tokens: Sequence[int], ids: Sequence[int]) -> dict[int, float]:
        self._check_fits(len(tokens))
        self.logprob_calls.append((list(tokens), list(ids)))
        self.stats.prompt_tokens += len(tokens)
        self.stats.decode_calls += 1
        probs = self._probs(tokens)
        return {i: self._lp(probs, i) for i in ids}

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
        branch_list = [list(b) for b in branches] or [[]]
        self.calls.append(
            GenerateCall(list(prefix), branch_list, max_tokens, list(stop_ids), list(watch_ids),
                         at_stop)
        )
        self.stats.prompt_tokens += len(prefix) + sum(len(b) for b in branch_list)
        out: list[Generation] = []
        for branch in branch_list:
            context = list(prefix) + branch
            self._check_fits(len(context))
            steps: list[Step] = []
            finish = "length"
            while len(steps) < max_tokens and len(context) < self.n_ctx:
                probs = self._probs(context)
                scripted = [t for t in probs if t != self.unk_id] or [self.eos_id]
                token = max(scripted, key=lambda t: probs.get(t, 0.0))  # first wins ties
                step = Step(
                    token=token,
                    logprob=self._lp(probs, token),
                    watched={i: self._lp(probs, i) for i in watch_ids},
                )
                steps.append(step)
                self.stats.generated_tokens += 1
                if token == self.eos_id:
                    context.append(token)
                    finish = "eos"
                    break
                if token in stop_ids:
                    instead = at_stop(step) if at_stop is not None else None
                    if instead is None:
                        context.append(token)
                        finish = "stop"
                        break
                    if instead != token:
                        step.token, step.replaced = instead, token
                        step.logprob = self._lp(probs, instead)
                        token = instead
                context.append(token)
            out.append(Generation(steps=steps, finish=finish))  # type: ignore[arg-type]
        self.stats.decode_calls += 1
        return out

    def chat_prompt(self, messages: Sequence[dict[str, str]]) -> str:
        if self.kind is not ModelKind.INSTRUCT:
            return super().chat_prompt(messages)
        parts = [f"<|{m['role']}|>\n{m['content']}\n" for m in messages]
        return "".join(parts) + "<|assistant|>\n"


def _argmax(dist: Dist) -> str:
    best, best_p = None, -1.0
    for piece, p in dist.items():
        if p > best_p:
            best, best_p = piece, p
    if best is None:
        raise ValueError("a scripted step needs at least one piece")
    return best


__all__ = ["ScriptedModel", "GenerateCall", "Rule", "UNK", "BOS", "EOS"]
