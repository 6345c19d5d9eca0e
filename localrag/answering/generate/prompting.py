"""Self-RAG prompt token ids, built piecewise from special ids and text.

See ../shared/design/SELFRAG.md section 2. Prompts are built as token ids, never as one
string re-tokenized: llama.cpp's SentencePiece path inserts a space piece after every
added token in prompt text (`<paragraph>The` -> `<paragraph>`, `▁The`) while the model
writes text right after reflection tokens with no space. `space_after_special` chooses
between the two so both can be measured on the real model; the default (False) matches
what the model itself emits.

User text never becomes a control token: llama.cpp matches USER_DEFINED tokens (the
Self-RAG conversions' reflection tokens) inside text even with special parsing off
(tests/test_selfrag_literals.py shows it on the real vocabulary), so `encode_text` cuts
the text just before the last character of every reflection string it contains and
tokenizes the pieces apart: a literal `</paragraph>` in an indexed HTML file stays the
plain text `</paragraph` + `>`.

Follow-up questions use the dialogue format the model was trained on (TASK_INST["wow"]
of the reference's retrieval_lm/utils.py, joined to the input with "## Input:\n\n" as
in data_creation/generator/create_prompt_data.py): the earlier questions and answers and
the new question, one per line.
"""

from __future__ import annotations

from collections.abc import Sequence

from models.base import LanguageModel
from models.reflection import LITERAL_STRINGS

PROMPT_TEMPLATE = "### Instruction:\n{instruction}\n\n### Response:\n"
INPUT_SEPARATOR = "## Input:\n\n"
"""Joins a task instruction to its input, exactly as in training (no newline before it:
only the released short-form script adds one)."""
DIALOGUE_INSTRUCTION = ("Given a chat history separated by new lines, generates an "
                        "informative, knowledgeable and engaging response. ")
"""TASK_INST["wow"] (Wizard of Wikipedia), the training set's dialogue task, verbatim
(with its trailing space)."""
_SENTINEL = "\n"


def literal_pieces(text: str, literals: Sequence[str] = LITERAL_STRINGS) -> list[str]:
    """`text` cut so that no piece contains a whole string of `literals`: each occurrence
    is cut before its last character (the occurrence that ends first is cut first, so
    overlapping strings are handled too). "".join(pieces) == text. Strings of one
    character cannot be cut and are ignored (every reflection string is longer)."""
    pieces: list[str] = []
    rest = text
    cuttable = [s for s in literals if len(s) > 1]
    while True:
        ends = [i + len(s) for s in cuttable if (i := rest.find(s)) >= 0]
        if not ends:
            break
        cut = min(ends) - 1
        pieces.append(rest[:cut])
        rest = rest[cut:]
    pieces.append(rest)
    return [p for p in pieces if p]


def encode_text(model: LanguageModel, text: str, *, leading_space: bool) -> list[int]:
    """Token ids of plain `text`: reflection strings inside it stay text (module docstring).

    `leading_space=True` is the tokenizer's own behaviour (SentencePiece adds a space
    prefix to each text chunk). `leading_space=False` drops that space: the text is
    tokenized after a newline sentinel and the sentinel's ids are cut off, which works
    for any tokenizer where a leading newline tokenizes on its own.
    """
    pieces = literal_pieces(text)
    ids: list[int] = []
    for i, piece in enumerate(pieces):
        ids.extend(_encode_piece(model, piece, leading_space=leading_space and i == 0))
    return ids


def _encode_piece(model: LanguageModel, text: str, *, leading_space: bool) -> list[int]:
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


def _one_line(text: str) -> str:
    return " ".join(text.split())


def instruction_text(question: str, history: Sequence[tuple[str, str]] = ()) -> str:
    """The instruction: the question alone, or with earlier turns the trained dialogue
    format: DIALOGUE_INSTRUCTION + "## Input:\\n\\n" + the turns (question, answer, ...,
    new question) one per line, each flattened to one line so lines stay turns. Empty
    turns (e.g. a cancelled answer) are left out."""
    if not history:
        return question
    lines = [_one_line(t) for q, a in history for t in (q, a)] + [_one_line(question)]
    return DIALOGUE_INSTRUCTION + INPUT_SEPARATOR + "\n".join(t for t in lines if t)


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
