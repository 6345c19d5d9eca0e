"""The answer loop for ordinary instruct models: same answer shape as Self-RAG.

A model without reflection tokens cannot critique itself with them, so a critic
(localrag.answering.judge.critics) answers the three questions instead: retrieve?, is this passage
relevant?, is this sentence supported? The loop is Self-RAG's short-form one
(../shared/design/SELFRAG.md sections 3-4):

1. decide whether to retrieve (mode adaptive / always / never, the same threshold); an
   embedding critic decides from what a search finds, so it searches first;
2. score the K passages found for relevance: the score orders them, and none is dropped
   (no critic's relevance labels are trusted: critics.RELEVANCE_CHECKED);
3. decode one candidate answer per passage (the best `max_candidates`) in ONE `generate` call: the K chat
   prompts are built with the question *before* the passage, so system prompt, earlier
   turns and question form a shared token prefix that is evaluated once, and only
   "passage + closing instruction + assistant header" differs per branch (the split is
   the longest common token prefix of the K tokenized prompts, so it is exact whatever
   the chat template);
4. judge every sentence of every candidate against its passage, score each candidate
   with scoring.total_score and the same weights as Self-RAG (s_use is not judged for
   instruct models and counts 0), drop unsupported candidates in strict mode, and keep
   the best (earlier passage wins ties);
5. deliver the chosen answer sentence by sentence, each with its critic label and the
   passage as citation.
Without retrieval the model answers from its own knowledge; those sentences are labelled
"no_retrieval".
"""

from __future__ import annotations


import math
import re
import threading
import time
from collections.abc import Callable, Sequence
from dataclasses import dataclass, replace

from indexer.language import reads_query
from indexer.records import Passage
from indexer.relevance_model import LANGUAGES as RELEVANCE_LANGUAGES
from indexer.relevance_model import RelevanceModelMissing, unit_text
from indexer.relevance_model import shipped_probabilities as shipped_answer_model
from localrag.answering.label.answer import Answer, PassageJudgement, RetrievalDecision, Scores, Segment
from localrag.answering.judge.critics import Critic, Embed, SupportJudgement, choose_critic
from localrag.errors import AnswerCancelled, LocalragError
from localrag.answering.generate.extract import (ANSWER_FLOOR, PASSAGE_ANSWER_FLOOR, PASSAGES_CHECKED,
                                                 UNREAD_LEXICAL_WEIGHT, AnswerProbability, Quote, Span,
                                                 answer_neighbours, answer_roles, lookup_mentions,
                                                 choose_quotes, excerpts, fit_window, line_at)
from localrag.answering.judge import lexical, noise
from localrag.answering.judge.noise import near_repeat
from localrag.answering.judge.model_critic import chat_tokens
from localrag.answering.label.units import Unit, fenced, split_units
from localrag.answering.judge.scoring import closed_set_choice, mean_logprob, should_retrieve, total_score
from localrag.answering.generate.selfrag import EngineConfig
from models.base import Generation, LanguageModel

Retrieve = Callable[[str, int], list[Passage]]

SYSTEM_WITH_PASSAGE = ("You answer questions about the user's own notes. Use only the note "
                       "you are given. Answer in one or two short sentences.")
SYSTEM_PLAIN = "You are a helpful assistant. Answer in one or two short sentences."
MIN_PASSAGE_TOKENS = 32     # below this a passage is useless
MIN_GEN_TOKENS = 8


def passage_text(passage: Passage) -> str:
    """A passage as the critic and the prompt see it: title line, then the text."""
    return f"{passage.title}\n{passage.text}"


_HEADING = re.compile(r"(?m)^[ \t]{0,3}#{1,6}[ \t]+(.+?)[ \t#]*$")


def prompt_text(text: str) -> str:
    """A passage as the model reads it: Markdown headings become "Heading:" lines.

    With the `#` markers in the note, SmolLM2 tended to copy the note's structure from a
    heading on ("# Backups ...") instead of answering: on a two-section note, 6 of 16
    answers (4 questions x Q4_1 and the Q8_0 copy x 1 and 2 threads) were such copies;
    with "Heading:" lines, 0 of 16. Citations still point at the file's own text.
    """
    return _HEADING.sub(lambda m: f"{m.group(1)}:", text)


def user_message(question: str, title: str, text: str) -> str:
    """Question first: everything up to the note's title is shared by the K prompts and
    evaluated once. The question is asked again after the note: on a note with Markdown
    headings, SmolLM2 without that repetition looped on the note's last section instead
    of answering; with it, it answered. The repeat costs about 20 prompt tokens per
    candidate."""
    return (f"Question: {question}\n\nNote ({title}):\n{text}\n\n"
            f"Using only this note, answer the question: {question}")


@dataclass
class _Candidate:
    index: int                        # into Answer.passages
    text: str
    sentences: list[Unit]
    judgements: list[SupportJudgement]
    rel: float
    sup: float
    seq_mean: float | None
    total: float
    dropped: bool = False


_ECHO = re.compile(r"^(using only this note|answer the question using only|question\s*:|"
                   r"note\s*\(|answer\s*:?$)", re.I)


def answer_units(text: str, question: str, *, complete: bool = True) -> list[Unit]:
    """The units (localrag.answering.label.units) of a generated answer worth showing and judging.

    Small instruct models echo the prompt ("Using only this note, answer ...") and copy
    bare Markdown headings from the note; shown as answer sentences those would be
    labelled "supported" by lexical overlap while saying nothing, so they are dropped.
    So are repeats of a sentence already given (a small model's loop) and, when the
    generation was cut at max_tokens (`complete=False`), an unfinished last sentence
    (unless it is the only one: half an answer, then, beats none).
    """
    q = " ".join(question.lower().split()).rstrip("?. ")
    out: list[Unit] = []
    seen: set[str] = set()
    for unit in split_units(text):
        s = unit.text.strip()
        if re.fullmatch(r"#+\s.*", s) or _ECHO.match(s):
            continue
        key = " ".join(unit.plain.lower().split())     # "5. Use X." repeats "4. Use X."
        if key.rstrip("?. ") == q or key in seen:
            continue
        seen.add(key)
        out.append(unit)
    if not complete and len(out) > 1 and not out[-1].finished:
        out.pop()
    return out



def answer_sentences(text: str, question: str, *, complete: bool = True) -> list[str]:
    """The texts of `answer_units`."""
    return [u.text for u in answer_units(text, question, complete=complete)]


def code_block_judgement(unit: Unit, judgement: SupportJudgement,
                         passage: str) -> SupportJudgement:
    """A whole code block is a unit a person reads, not a code fragment: the critic's
    noise rule ("code standing alone") does not apply to it. It is "fully" supported when
    every line of its code stands in the passage's text (whitespace aside; the title line
    "file > heading" does not count: a block echoing it is no command), else "unchecked":
    commands cannot be checked by word overlap, so the label abstains rather than show
    them as supported or hide them. A block none of whose code lines stands in the
    passage (comment lines aside) is "none": a command the file never gives is an
    invented one (SmolLM2 writes `git init -rLf my_project.git` next to a passage whose
    own commands the answer already quotes)."""
    if unit.kind != "code" or judgement.noise != "code":
        return judgement
    lines = [" ".join(line.split()) for line in unit.plain.splitlines() if line.strip()]
    body = passage.split("\n", 1)[1] if "\n" in passage else passage   # not the title line
    flat = " ".join(body.split())
    found = [line in flat for line in lines]
    if lines and all(found) and not _prose(lines):
        return SupportJudgement(1.0, 0.0, 0.0, "fully")
    code = [ok for line, ok in zip(lines, found) if not line.startswith(("#", "//", "/*"))]
    if code and not any(code):
        return SupportJudgement(0.0, 0.0, 1.0, "none")
    return SupportJudgement(0.0, 1.0, 0.0, "unchecked")


def _prose(lines: Sequence[str]) -> bool:
    """A fenced block that holds no code but the passage's sentences ("Perform a fresh
    configuration of the build tree. ...", "path:" over its description): SmolLM2 copies a
    passage's prose into a code block, which annotators judged noise (prose shown as code)
    in 8 of the 18 "fully" blocks of the judged answer rounds (stop 62). Abstain on it."""
    return not any(noise.is_code(line) for line in lines) and \
        any(line.rstrip().endswith((*lexical.STOPS, ":")) for line in lines)


def common_prefix_len(seqs: Sequence[Sequence[int]]) -> int:
    """Length of the longest common prefix, leaving at least one token in each branch."""
    if not seqs:
        return 0
    n = min(len(s) for s in seqs) - 1
    first = seqs[0]
    for i in range(max(n, 0)):
        if any(s[i] != first[i] for s in seqs[1:]):
            return i
    return max(n, 0)


class InstructEngine:
    """Answers with an ordinary instruct model, labels from a critic."""

    def __init__(self, model: LanguageModel, *, config: EngineConfig, critic: Critic,
                 embed: Embed | None = None, max_quotes: int = 4, max_candidates: int = 2,
                 fit_tokens: int = 160, quote_min_score: float = 0.0,
                 answers: AnswerProbability | None = None) -> None:
        self.model = model
        self.config = config
        self.critic = critic
        self.embed = embed
        """texts -> vectors for quote selection; None: no quotes (model sentences only)."""
        self.max_quotes = max_quotes
        """Passage sentences quoted verbatim at most (0: none)."""
        self.max_candidates = max_candidates
        """Candidates decoded at most: the passages holding quotes first, then the most
        relevant others."""
        self.fit_tokens = fit_tokens
        """Tokens of a passage the model reads at most, around its quotes (0: the whole
        passage, trimmed only to the context)."""
        self.quote_min_score = quote_min_score
        """Passage sentences scoring under this (extract.AnswerScorer) are not quoted."""
        self.answers = answers
        """The relevance model (extract.AnswerProbability): which quotes, and which of the
        model's sentences, are shown as the answer; None: the quote scorer's roles."""

        self.n_ctx = min(config.n_ctx, model.n_ctx)
        self.last_generate_calls = 0      # for tests and benchmarks
        self.last_candidates: list[_Candidate] = []   # every candidate of the last answer

    @classmethod
    def for_model(cls, model: LanguageModel, *, config: EngineConfig,
                  embed: Embed) -> "InstructEngine":
        """The engine with the critic measured best for this model (critics.choose_critic)."""
        critic = choose_critic(model, embed)
        return cls(model, config=config, critic=critic,
                   embed=getattr(critic, "embed_texts", embed), answers=shipped_answer_model())

    @property
    def critic_name(self) -> str:
        return self.critic.name

    def answer(
        self,
        question: str,
        *,
        retrieve: Retrieve,
        search_query: str | None = None,
        history: Sequence[tuple[str, str]] = (),
        index_empty: bool = False,
        on_segment: Callable[[Segment], None] | None = None,
        cancel: threading.Event | None = None,
        on_decision: Callable[[RetrievalDecision], None] | None = None,
    ) -> Answer:
        return _Run(self, question, retrieve=retrieve, search_query=search_query,
                    history=history, index_empty=index_empty, on_segment=on_segment,
                    cancel=cancel, on_decision=on_decision).execute()


_LANGUAGE_NAMES = {"en": "English", "de": "German", "fr": "French", "es": "Spanish"}


def _language_names(codes: Sequence[str]) -> str:
    return " and ".join(_LANGUAGE_NAMES.get(c, c) for c in codes)


class _Run:
    """The state of one answer."""

    def __init__(self, engine: InstructEngine, question: str, *, retrieve: Retrieve,
                 search_query: str | None, history: Sequence[tuple[str, str]],
                 index_empty: bool, on_segment: Callable[[Segment], None] | None,
                 cancel: threading.Event | None,
                 on_decision: Callable[[RetrievalDecision], None] | None = None) -> None:
        self.on_decision = on_decision
        self.e, self.cfg, self.model, self.critic = engine, engine.config, engine.model, engine.critic
        self._answering: dict[int, bool] = {}   # id(quote) -> shown as the answer (extract.answer_roles)
        self._passage_answers: list[float | None] = []   # per passage (set by _quotes)
        self._no_model = False                  # the relevance model failed to load this run
        self.question = question
        self.query = search_query or question
        self.history = list(history)
        self.retrieve_fn = retrieve
        self.index_empty = index_empty
        self.on_segment = on_segment
        self.cancel = cancel
        self.notes: list[str] = []
        self.judgements: list[PassageJudgement] = []
        # the relevance model cannot read the question (another language, indexer.language):
        # its judgment would be noise, so nothing is shown as the answer
        self._unread = engine.answers is not None and not reads_query(RELEVANCE_LANGUAGES, question)
        if self._unread:
            self._note(f"localrag's relevance model reads {_language_names(RELEVANCE_LANGUAGES)} only, "
                       "so it did not judge which of these sentences answers a question in another "
                       "language: they are shown as context (›)")

    def _check_cancel(self) -> None:
        if self.cancel is not None and self.cancel.is_set():
            raise AnswerCancelled("The answer was cancelled.")

    def _note(self, text: str) -> None:
        if text not in self.notes:
            self.notes.append(text)

    # --- the run ---------------------------------------------------------------------------
    def execute(self) -> Answer:
        t0 = time.monotonic()
        self._check_cancel()
        decision, passages = self._decide()
        if self.on_decision is not None:      # lets a UI show the decision before the text
            self.on_decision(decision)
        segments: list[Segment] = []
        if decision.retrieved and passages:
            segments = self._answer_with_passages(passages)
        if not segments:
            segments = self._answer_plain()
        return Answer(question=self.question, search_query=self.query, decision=decision,
                      passages=self.judgements, segments=segments, critic=self.critic.name,
                      model=self.model.name, notes=self.notes,
                      elapsed_s=time.monotonic() - t0)

    def _search(self) -> list[Passage]:
        self._check_cancel()
        return list(self.retrieve_fn(self.query, self.cfg.k))[: self.cfg.k]

    def _decide(self) -> tuple[RetrievalDecision, list[Passage]]:
        mode, threshold = self.cfg.mode, self.cfg.threshold
        if self.index_empty:
            self._note("the index is empty: answered without retrieval")
            return RetrievalDecision(mode, False, None, threshold, "index is empty"), []
        if mode == "never":
            return RetrievalDecision(mode, False, None, threshold, "mode: never"), []
        if mode == "always":
            passages = self._search()
            decision = RetrievalDecision(mode, True, None, threshold, "mode: always")
        elif self.critic.decides_after_search:
            passages = self._search()
            prob = self.critic.retrieve_probability(self.query, [passage_text(p) for p in passages])
            retrieved = should_retrieve(mode, prob, threshold)
            decision = RetrievalDecision(
                mode, retrieved, prob, threshold,
                f"p={prob:.2f} {'>' if retrieved else '<='} {threshold:.2f} "
                f"(best passage found, {self.critic.name})")
        else:
            prob = self.critic.retrieve_probability(self.query, [])
            retrieved = should_retrieve(mode, prob, threshold)
            why = getattr(self.critic, "retrieve_reason", None)
            why = (why(self.query) if why is not None else None) or self.critic.name
            decision = RetrievalDecision(
                mode, retrieved, prob, threshold,
                f"p={prob:.2f} {'>' if retrieved else '<='} {threshold:.2f} ({why})")
            passages = self._search() if retrieved else []
        if decision.retrieved and not passages:
            decision.retrieved = False
            decision.reason += "; no passage found"
            self._note("no passage matched the question: answered without retrieval")
        return decision, passages if decision.retrieved else []

    # --- prompts ---------------------------------------------------------------------------
    def _history_messages(self, keep: int) -> list[dict[str, str]]:
        msgs: list[dict[str, str]] = []
        for q, a in self.history[len(self.history) - keep:] if keep else []:
            msgs += [{"role": "user", "content": q}, {"role": "assistant", "content": a}]
        return msgs

    def _messages(self, system: str, user: str, keep: int) -> list[dict[str, str]]:
        return [{"role": "system", "content": system}, *self._history_messages(keep),
                {"role": "user", "content": user}]

    def _fit_history(self, system: str, user: str) -> int:
        """How many recent turns fit in half of what generation leaves of the context."""
        budget = max((self.e.n_ctx - self.cfg.max_tokens) // 2, 1)
        keep = len(self.history)
        while keep > 0 and len(chat_tokens(self.model, self._messages(system, user, keep))) > budget:
            keep -= 1
        if keep < len(self.history):
            self._note(f"{len(self.history) - keep} earlier turn(s) left out to fit the context")
        return keep

    def _trim(self, passage: Passage, budget: int, text: str | None = None) -> str:
        text = prompt_text(passage.text) if text is None else text
        ids = self.model.tokenize(text, add_bos=False, special=False)
        if len(ids) <= budget:
            return text
        if budget < self.e.fit_tokens or not self.e.fit_tokens:
            self._note(f"a passage from {passage.locator} was trimmed to fit the context")
        return self.model.detokenize(ids[: max(budget, 0)])

    # --- with passages -------------------------------------------------------------------
    def _answer_with_passages(self, passages: list[Passage]) -> list[Segment]:
        self._check_cancel()
        texts = [passage_text(p) for p in passages]
        rels = self.critic.relevance(self.query, texts)
        chosen = sorted(range(len(passages)), key=lambda i: -rels[i])
        # quotes may come from any passage found: the quote scorer weighs the search rank
        # and the question's terms itself, and a quote is the file's own words
        quotes = self._quotes(passages, list(range(len(passages))))
        self._judge_passages(passages, rels)
        shown = excerpts(quotes, [p.text for p in passages])
        segments = [seg for group in shown for seg in self._quote_segments(group)]   # streamed at once
        with_quotes = list(dict.fromkeys(q.passage for q in quotes))
        order = with_quotes + [i for i in chosen if i not in with_quotes]
        generated = self._generate(passages, order[: self.e.max_candidates], quotes)
        segments += generated
        if self.e.answers is not None and not self._no_model and not self._unread and segments and not any(
                s.role == "answer" for s in segments):
            self._note("localrag judged none of these sentences to answer the "
                       "question: they are shown as context (›); read them, or ask in other words")
        if not segments:
            self._note("not found in your files: nothing in the passages answers the "
                       "question and the model's sentences were not supported; the model "
                       "answered from its own knowledge")
        return segments

    def _quotes(self, passages: list[Passage], chosen: list[int]) -> list[Quote]:
        """The passage sentences that answer the question (localrag.answering.generate.extract);
        sets self._passage_answers (per passage of `passages`: the relevance model's best
        answer probability among its sentences, None where it read none)."""
        embed = self.e.embed
        self._passage_answers = [None for _ in passages]
        if embed is None or self.e.max_quotes <= 0:
            return []
        texts = [passages[i].text for i in chosen]
        if self._unread:      # quotes by the scorer and the question's terms, none an answer
            choice = choose_quotes(self.question, texts, embed, max_quotes=self.e.max_quotes,
                                   min_score=self.e.quote_min_score,
                                   lexical_weight=UNREAD_LEXICAL_WEIGHT,
                                   leads=[passages[i].before for i in chosen])
            found = [replace(q, passage=chosen[q.passage]) for q in choice.quotes]
            self._answering = {id(q): False for q in found}
            return found
        try:
            choice = choose_quotes(self.question, texts, embed, max_quotes=self.e.max_quotes,
                                   min_score=self.e.quote_min_score,
                                   answers=self._answers if self.e.answers is not None else None,
                                   titles=[passages[i].title for i in chosen],
                                   leads=[passages[i].before for i in chosen])
        except RelevanceModelMissing as e:     # a broken install: the scorer's roles
            self._note(f"{e}; quotes were chosen without it")
            self._no_model = True
            choice = choose_quotes(self.question, texts, embed, max_quotes=self.e.max_quotes,
                                   min_score=self.e.quote_min_score,
                                   leads=[passages[i].before for i in chosen])
        for i, p in zip(chosen, choice.passage_answers):
            self._passage_answers[i] = p
        found = [replace(q, passage=chosen[q.passage]) for q in choice.quotes]
        texts = [p.text for p in passages]
        roles = answer_roles(found, eligible=lookup_mentions(self.question, texts, found,
                                                             leads=[p.before for p in passages]))
        found, roles = answer_neighbours(self.question, texts, found, roles)
        self._answering = dict(zip((id(q) for q in found), roles))
        return found

    def _judge_passages(self, passages: list[Passage], rels: Sequence[float]) -> None:
        """One PassageJudgement per passage. Where PASSAGES_CHECKED (the relevance model's
        passage verdicts met TRUST_AUC on every corpus left out), a passage is judged
        to hold the answer when its best sentence's answer probability reaches
        PASSAGE_ANSWER_FLOOR (chosen for verdicts on judged passages); a passage without a
        sentence the model read is not checked. Otherwise, and without the model, nothing
        is judged (relevant None, "relevance not checked": no shipped critic's own relevance
        labels met TRUST_AUC either, critics.RELEVANCE_CHECKED) and the critic's score only
        orders the passages. No passage is dropped for its label."""
        for i, (p, rel) in enumerate(zip(passages, rels)):
            best = self._passage_answers[i]
            if best is None or self._no_model or self._unread or not PASSAGES_CHECKED:
                self.judgements.append(PassageJudgement(passage=p, relevance=rel, relevant=None))
            else:
                self.judgements.append(PassageJudgement(passage=p, relevance=rel,
                                                        relevant=best >= PASSAGE_ANSWER_FLOOR,
                                                        verdict="answers", answer_probability=best))

    def _answers(self, question: str, texts: Sequence[str]) -> Sequence[float]:
        return self.e.answers(question, texts)  # type: ignore[misc]

    def _model_roles(self, passage: Passage, units: Sequence[Unit]) -> list[str]:
        """Per model sentence: "answer" when the relevance model finds it answers the
        question (extract.ANSWER_FLOOR), else "context"; all "answer" without a model, all
        "context" when it cannot read the question."""
        if self._unread:
            return ["context"] * len(units)
        if self.e.answers is None or self._no_model or not units:
            return ["answer"] * len(units)
        try:
            probs = self.e.answers(self.question, [unit_text(passage.title, "", u.plain) for u in units])
        except RelevanceModelMissing as e:
            self._note(f"{e}; the model's sentences were not checked as answers")
            self._no_model = True
            return ["answer"] * len(units)
        return ["answer" if float(p) >= ANSWER_FLOOR else "context" for p in probs]

    def _quote_segments(self, excerpt: Sequence[Quote]) -> list[Segment]:
        """An excerpt (extract.excerpts: quotes that follow each other in the file) as
        answer units: its sentences as one unit, after their subject (the term line they
        describe), shown as the answer when any of its quotes is; then the code
        block its last sentence introduces (one unit, its lines as in the file, cited at the
        block's first line)."""
        self._check_cancel()
        first, last = excerpt[0], excerpt[-1]
        passage = self.judgements[first.passage].passage
        scores = Scores(rel=self.judgements[first.passage].relevance, sup=1.0,
                        total=max(q.score for q in excerpt))
        # the term line the excerpt's description is of: named with whichever of its quotes
        # came first in the answer (extract.pick_quotes names a description once)
        term = next((q.subject for q in excerpt if q.subject is not None), None)
        subject = term.text if term is not None else None
        intro = first.intro           # the sentence that introduces an item's list, "…"
        lead = None                   # where the file has more between them (other items)
        if intro is not None:
            gap = passage.text[intro.end:first.span.start]
            lead = intro.text + ("" if not gap.strip() else " …")
        text = " ".join(q.span.text for q in excerpt)
        pieces = [("sentence", text, first.span.start, subject is not None, subject)]
        if last.code is not None:
            pieces.append(("code", fenced(last.code.text.split("\n")), last.code.start, True, None))
        role = "answer" if any(self._answering.get(id(q), True) for q in excerpt) else "context"
        out = []
        for kind, text, start, starts_block, named in pieces:
            seg = Segment(text=text, kind=kind, starts_block=starts_block, label="fully",
                          scores=scores, citation=first.passage, passage=passage,
                          origin="quote", line=line_at(passage.text, start, passage.start_line),
                          label_source="quote", role=role, subject=named,
                          lead=lead if kind == "sentence" else None)
            out.append(seg)
            if self.on_segment is not None:
                self.on_segment(seg)
        return out

    def _generate(self, passages: list[Passage], order: list[int],
                  quotes: list[Quote]) -> list[Segment]:
        """One candidate per passage in `order`, each passage fitted around its quotes;
        the best candidate's sentences that the critic does not reject."""
        if not order:
            return []
        keep = self._fit_history(SYSTEM_WITH_PASSAGE, user_message(self.question, "", ""))
        overhead = len(chat_tokens(self.model, self._messages(
            SYSTEM_WITH_PASSAGE, user_message(self.question, "", ""), keep)))
        budget = self.e.n_ctx - self.cfg.max_tokens - overhead - 16   # 16: title, joins
        if budget < MIN_PASSAGE_TOKENS:
            budget = min(MIN_PASSAGE_TOKENS, self.e.n_ctx - overhead - MIN_GEN_TOKENS - 16)
        if budget < 1:
            self._note("the context is too small for a passage: answered without retrieval")
            return []
        shown = [self._fitted(passages[i], [q.span for q in quotes if q.passage == i], budget)
                 for i in order]
        prompts = [chat_tokens(self.model, self._messages(
            SYSTEM_WITH_PASSAGE, user_message(self.question, passages[i].title, text), keep))
            for i, text in zip(order, shown)]
        n = common_prefix_len(prompts)
        max_new = min(self.cfg.max_tokens, self.e.n_ctx - max(len(p) for p in prompts))
        if max_new < 1:
            self._note("the context is full: answered without retrieval")
            return []
        self._check_cancel()
        gens = self.model.generate(prompts[0][:n], [p[n:] for p in prompts], max_tokens=max_new)
        self.e.last_generate_calls += 1
        self._check_cancel()
        drafts = [self._text(g) for g in gens]
        sentence_lists = [answer_units(text, self.question, complete=g.finish != "length")
                          for (text, _), g in zip(drafts, gens)]
        # what the critic judges against: the text the model read, under its title
        judged = [f"{passages[i].title}\n{text}" for i, text in zip(order, shown)]
        # one embedding pass for every sentence of every candidate, not one per sentence
        self.critic.prepare([x.plain for xs in sentence_lists for x in xs], judged)
        candidates = [self._candidate(i, passage_for_critic, text, seq_mean, sentences)
                      for i, passage_for_critic, (text, seq_mean), sentences
                      in zip(order, judged, drafts, sentence_lists)]
        self.e.last_candidates = candidates
        live = [c for c in candidates if not c.dropped]
        if not live:
            self._note("strict mode dropped every candidate the critic found unsupported")
            return []
        best = live[0]
        for c in live[1:]:
            if c.total > best.total:        # strict '>': the earlier passage wins ties
                best = c
        choice = closed_set_choice([c.text for c in live], [c.total for c in live])
        if choice is not None:              # true/false, A-E: same answers pool their scores
            best = live[choice.best]
            self._note(choice.note(best.text))
        return self._deliver(best, [q.span.text for q in quotes] +
                             [q.code.text for q in quotes if q.code is not None])

    def _fitted(self, passage: Passage, anchors: list[Span], budget: int) -> str:
        """The passage as the model reads it: around its quotes, at most
        `fit_tokens` tokens (and never more than the context leaves)."""
        text = prompt_text(passage.text)
        limit = min(budget, self.e.fit_tokens) if self.e.fit_tokens else budget
        if anchors and text == passage.text:
            count = lambda t: len(self.model.tokenize(t, add_bos=False, special=False))  # noqa: E731
            fitted = fit_window(text, anchors, limit, count)
            if len(self.model.tokenize(fitted, add_bos=False, special=False)) <= budget:
                return fitted
        return self._trim(passage, limit, text)

    def _text(self, gen: Generation) -> tuple[str, float | None]:
        toks = gen.tokens
        if gen.finish in ("eos", "stop") and toks:
            toks = toks[:-1]          # EOS / stop token: scored, not shown
        return (self.model.detokenize(toks).strip(),
                mean_logprob([s.logprob for s in gen.steps]))

    def _candidate(self, index: int, text_for_critic: str, text: str, seq_mean: float | None,
                   sentences: list[Unit]) -> _Candidate:
        judgements = (self.critic.support([u.plain for u in sentences], text_for_critic)
                      if sentences else [])
        judgements = [code_block_judgement(u, j, text_for_critic)
                      for u, j in zip(sentences, judgements)]
        sup = (math.fsum(j.score for j in judgements) / len(judgements)) if judgements else 0.0
        rel = self.judgements[index].relevance
        total = total_score(rel=rel, sup=sup, use=None, seq_mean_logprob=seq_mean,
                            weights=self.cfg.weights)
        cand = _Candidate(index, text, sentences, judgements, rel, sup, seq_mean, total)
        # strict: a candidate with any unsupported sentence (or no text) is dropped
        if self.cfg.strict and (not judgements or any(j.label == "none" for j in judgements)):
            cand.dropped = True
            j = self.judgements[index]
            j.dropped = True
            j.drop_reason = f"strict mode: the critic ({self.critic.name}) found its answer unsupported"
        return cand

    def _deliver(self, best: _Candidate, quoted: Sequence[str] = ()) -> list[Segment]:
        """The chosen candidate's sentences, except those the critic rejects: noise and
        sentences labelled not supported are left out (the notes say how many), as are
        sentences that only repeat a quote."""
        passage = self.judgements[best.index].passage
        seq = None if best.seq_mean is None else math.exp(best.seq_mean)
        segments = []
        kept = [(unit, j) for unit, j in zip(best.sentences, best.judgements)
                if not (j.label == "none" or j.noise is not None or near_repeat(unit.plain, quoted))]
        left_out = len(best.sentences) - len(kept)
        roles = self._model_roles(passage, [u for u, _ in kept])
        for (unit, j), role in zip(kept, roles):
            self._check_cancel()
            seg = Segment(text=unit.text, kind=unit.kind, starts_block=unit.starts_block,
                          label=j.label,
                          scores=Scores(rel=best.rel, sup=j.score, use=None, seq=seq,
                                        total=best.total),
                          citation=best.index, passage=passage, label_source="critic",
                          role=role)
            segments.append(seg)
            if self.on_segment is not None:
                self.on_segment(seg)
        if left_out:
            self._note(f"{left_out} of the model's {len(best.sentences)} sentence(s) left out: "
                       f"not supported by the passage or not a statement ({self.critic.name})")
        return segments

    # --- without passages -------------------------------------------------------------------
    def _answer_plain(self) -> list[Segment]:
        self._check_cancel()
        keep = self._fit_history(SYSTEM_PLAIN, self.question)
        prompt = chat_tokens(self.model, self._messages(SYSTEM_PLAIN, self.question, keep))
        max_new = min(self.cfg.max_tokens, self.e.n_ctx - len(prompt))
        if max_new < MIN_GEN_TOKENS:
            raise LocalragError(
                f"The question is too long for the model's context ({len(prompt)} tokens "
                f"of {self.e.n_ctx}).",
                hint="ask a shorter question or raise n_ctx in the settings")
        gen = self.model.generate(prompt, [], max_tokens=max_new)[0]
        self.e.last_generate_calls += 1
        text, seq_mean = self._text(gen)
        seq = None if seq_mean is None else math.exp(seq_mean)
        total = total_score(rel=None, sup=None, use=None, seq_mean_logprob=seq_mean,
                            weights=self.cfg.weights)
        segments = []
        for unit in answer_units(text, self.question, complete=gen.finish != "length"):
            self._check_cancel()
            seg = Segment(text=unit.text, kind=unit.kind, starts_block=unit.starts_block,
                          label="no_retrieval",
                          scores=Scores(seq=seq, total=total), citation=None, passage=None,
                          label_source="retrieval")
            segments.append(seg)
            if self.on_segment is not None:
                self.on_segment(seg)
        return segments
