"""Self-RAG prompt token ids, built piecewise from special ids and text.

See ../shared/design/SELFRAG.md section 2. Prompts are built as token ids, never as one
string re-tokenized: llama.cpp's SentencePiece path inserts a space piece after every
added token in prompt text (`<paragraph>The` -> `<paragraph>`, `▁The`) while the model
writes text right after reflection tokens with no space. `space_after_special` chooses
between the two so both can be measured on the real model; the default (False) matches
what the model itself emits.
"""

from __future__ import annotations

from collections.abc import Sequence

from models.base import LanguageModel

PROMPT_TEMPLATE = "### Instruction:\n{instruction}\n\n### Response:\n"
INPUT_SEPARATOR = "\n\n## Input:\n\n"
_SENTINEL = "\n"


def encode_text(model: LanguageModel, text: str, *, leading_space: bool) -> list[int]:
    """Token ids of plain `text` (added tokens inside it are not parsed).

    `leading_space=True` is the tokenizer's own behaviour (SentencePiece adds a space
    prefix to each text chunk). `leading_space=False` drops that space: the text is
    tokenized after a newline sentinel and the sentinel's ids are cut off, which works
    for any tokenizer where a leading newline tokenizes on its own.
    """
    if not text:
        return []
    plain = model.tokenize(text, add_bos=False, special=False)
    if leading_space:
        return plain
    sentinel = model.tokenize(_SENTINEL, add_bos=False, special=False)
    both = model.tokenize(_SENTINEL + text, add_bos=False, special=False)
    if sentinel and both[: len(sentinel)] == sentinel:
        return both[len(sentinel) :]
    return plain   # the sentinel merged with the text: fall back to the plain ids


def build_ids(
    model: LanguageModel,
    pieces: Sequence[str | int],
    *,
    bos: bool = False,
    space_after_special: bool = False,
) -> list[int]:
    """Concatenate special ids (int) and text (str) into prompt ids.

    Text at the very start gets the tokenizer's normal leading space (as in training,
    where the prompt begins the sequence); text right after a special id gets one only
    when `space_after_special`. Exactly one BOS when `bos`, and never from text.
    """
    ids: list[int] = []
    if bos and model.bos_id is not None:
        ids.append(model.bos_id)
    prev_special = False
    first = True
    for piece in pieces:
        if isinstance(piece, int):
            ids.append(piece)
            prev_special = True
        else:
            if first:
                lead = True
            elif prev_special:
                lead = space_after_special
            else:
                lead = False   # text following text joins without an extra space
            ids.extend(encode_text(model, piece, leading_space=lead))
            prev_special = False
        first = False
    return ids


def instruction_text(question: str, history: Sequence[tuple[str, str]] = ()) -> str:
    """The instruction: the question, with earlier turns as a task prefix.

    SELFRAG.md: task instructions are prefixed to the question with "\\n\\n## Input:\\n\\n".
    """
    if not history:
        return question
    turns = "\n".join(f"Q: {q.strip()}\nA: {a.strip()}" for q, a in history)
    task = (
        "Earlier in this conversation:\n" + turns
        + "\n\nAnswer the new question, using the conversation where it helps."
    )
    return task + INPUT_SEPARATOR + question


def prompt_ids(
    model: LanguageModel,
    question: str,
    *,
    history: Sequence[tuple[str, str]] = (),
    budget: int | None = None,
) -> tuple[list[int], int]:
    """BOS + P for `question`; (ids, number of history turns kept).

    The oldest turns are dropped first until the ids fit `budget` tokens; the question
    itself is always kept (it is trimmed by the caller if even that does not fit).
    """
    turns = list(history)
    while True:
        text = PROMPT_TEMPLATE.format(instruction=instruction_text(question, turns))
        ids = build_ids(model, [text], bos=True)
        if budget is None or len(ids) <= budget or not turns:
            return ids, len(turns)
        turns.pop(0)
