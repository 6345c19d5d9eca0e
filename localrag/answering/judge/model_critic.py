"""The instruct model as its own critic: short questions read from next-token log-probs.

Each judgment is one chat-template prompt that ends where the assistant's answer begins;
the log-probs of the allowed first answer tokens are read at that one position
(`LanguageModel.next_logprobs` with a handful of ids: never the whole vocabulary) and
renormalised within the allowed answers, like Self-RAG's reflection-token groups. Several
spellings of each answer ("yes", "Yes", " yes", ...) are summed; an id that starts
answers of two groups is dropped.

Whether these judgments carry signal is a property of the model: measure it
(bench/critic_evaluation.py, tests/test_critics.py) before trusting it (critics.choose_critic).
"""

from __future__ import annotations

import math
from collections.abc import Sequence

from models.base import LanguageModel

from localrag.answering.judge.judgement import SupportJudgement, guard_label, label_from_cuts
from localrag.answering.judge.scoring import group_probs

YES = ("yes", "Yes", " yes", " Yes", "YES")
NO = ("no", "No", " no", " No", "NO")
FULLY = ("fully", "Fully", " fully", " Fully", "FULLY")
PARTIALLY = ("partially", "Partially", " partially", " Partially", "PARTIALLY")
NOT = ("no", "No", " no", " No", "not", "Not", "none", "None")

SYSTEM = "You are a careful assistant. Answer with a single word."
MAX_PASSAGE_TOKENS = 400      # judgments need the gist; keeps each call cheap


def chat_tokens(model: LanguageModel, messages: Sequence[dict[str, str]]) -> list[int]:
    """Token ids of the model's chat prompt for `messages`, ready for generation.

    BOS is added the way the model's vocabulary asks for it; a template that writes BOS
    itself must not end up with two."""
    ids = model.tokenize(model.chat_prompt(messages), add_bos=True, special=True)
    bos = model.bos_id
    if bos is not None and len(ids) >= 2 and ids[0] == bos and ids[1] == bos:
        ids = ids[1:]
    return ids


def first_token_ids(model: LanguageModel, groups: Sequence[Sequence[str]]) -> list[list[int]]:
    """For each group of spellings, the distinct first token ids; an id shared by two
    groups is dropped from both (it would count as either answer)."""
    firsts = []
    for group in groups:
        ids = []
        for spelling in group:
            toks = model.tokenize(spelling, add_bos=False, special=False)
            if toks and toks[0] not in ids:
                ids.append(toks[0])
        firsts.append(ids)
    shared = {i for a in range(len(firsts)) for b in range(a + 1, len(firsts))
              for i in set(firsts[a]) & set(firsts[b])}
    return [[i for i in ids if i not in shared] for ids in firsts]


class ModelCritic:
    """Retrieve / relevance / support judgments asked of the instruct model itself."""

    name = "model-judge"
    decides_after_search = False

    def __init__(self, model: LanguageModel, *, full_at: float = 0.85,
                 partial_at: float = 0.5) -> None:
        self.model = model
        self.full_at, self.partial_at = full_at, partial_at
        self._yes, self._no = first_token_ids(model, (YES, NO))
        self._full, self._partial, self._not = first_token_ids(model, (FULLY, PARTIALLY, NOT))

    # -- plumbing ---------------------------------------------------------------------------
    def _trim(self, text: str) -> str:
        ids = self.model.tokenize(text, add_bos=False, special=False)
        if len(ids) <= MAX_PASSAGE_TOKENS:
            return text
        return self.model.detokenize(ids[:MAX_PASSAGE_TOKENS]) + " ..."

    def _group_masses(self, user: str, groups: Sequence[Sequence[int]]) -> list[float]:
        tokens = chat_tokens(self.model, [{"role": "system", "content": SYSTEM},
                                          {"role": "user", "content": user}])
        all_ids = [i for g in groups for i in g]
        lps = self.model.next_logprobs(tokens, all_ids)
        # sum the spellings of each answer (probabilities, never log-probs), then
        # renormalise within the allowed answers
        masses = [math.fsum(math.exp(lps[i]) for i in g if lps.get(i, -math.inf) > -math.inf)
                  for g in groups]
        return group_probs({k: math.log(m) if m > 0 else -math.inf
                            for k, m in enumerate(masses)}, list(range(len(groups))))

    def _yes_probability(self, user: str) -> float:
        return self._group_masses(user, (self._yes, self._no))[0]

    # -- judgments --------------------------------------------------------------------------
    def retrieve_probability(self, question: str, passages: Sequence[str] = ()) -> float:
        return self._yes_probability(
            "Can this question only be answered by looking at the user's own notes and "
            "files (not general knowledge)? Answer yes or no.\n\n"
            f"Question: {question}")

    def relevance(self, question: str, passages: Sequence[str]) -> list[float]:
        return [self._yes_probability(
            f"Passage:\n{self._trim(p)}\n\nQuestion: {question}\n\n"
            "Does the passage contain the answer to the question? Answer yes or no.")
            for p in passages]

    def prepare(self, sentences: Sequence[str], passages: Sequence[str]) -> None:
        """Nothing to batch: each judgment is one prompt to the model."""

    def support(self, sentences: Sequence[str], passage: str) -> list[SupportJudgement]:
        out = []
        trimmed = self._trim(passage)
        for sentence in sentences:
            p_full, p_partial, p_none = self._group_masses(
                f"Passage:\n{trimmed}\n\nSentence: {sentence}\n\n"
                "Is the sentence supported by the passage? Answer fully, partially or no.",
                (self._full, self._partial, self._not))
            x = p_full + 0.5 * p_partial
            label = label_from_cuts(x, partial_at=self.partial_at, full_at=self.full_at)
            out.append(guard_label(SupportJudgement(p_full, p_partial, p_none, label),
                                   sentence, passage))
        return out
