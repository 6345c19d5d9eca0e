"""The Self-RAG answer loop: retrieval decision, critique-scored candidates, segment beam search.

Implements the paper's version described in ../shared/design/SELFRAG.md sections 2-5,
written only against `models.base.LanguageModel` (token ids in, greedy generations with
watched log-probs out), so the llama.cpp backend and the scripted test model both run it.

The loop as the model was trained (SELFRAG.md section 3; the training data writes one
answer as ONE sequence `[Retrieval]<paragraph>P1</paragraph>[Relevant] s1 [Fully
supported][Continue to Use Evidence] s2 [No Retrieval] s3 [Retrieval]<paragraph>P2...`):

  * `[Continue to Use Evidence]` and `[No Retrieval]` do not end anything: generation goes
    on in the same sequence, with the passage still in context (the model's own token is
    kept). Only a request for new evidence ends a segment: the model writing
    `[Retrieval]`, or, in adaptive mode, the threshold at any Retrieve-group position,
    with p([Retrieval]) normalised over the whole group (`retrieve_group_probability`).
    This is decided inside the generation (`generate(at_stop=...)`), so the K candidates
    stay one batch and nothing is evaluated twice. Where new evidence cannot or may not
    be fetched (mode never, empty index) a `[Retrieval]` the model writes is replaced by
    `[Continue to Use Evidence]` (a passage is in context and it is the likelier of the
    two) or `[No Retrieval]`, and the sequence goes on; in adaptive mode the same happens
    when the threshold says no.
  * A beam holds the whole sequence so far: the prompt, and for each segment its
    `[Retrieval]<paragraph>P</paragraph>` frame and what the model wrote after it, as
    training sequences do (every `[Relevant]` follows a `</paragraph>`). Passages stay
    whole while the trained length allows; past it earlier passages are trimmed, the
    frame always kept (`_fit`). Each step, every unfinished beam retrieves K passages
    and decodes one candidate per passage in ONE `generate` call sharing the beam's
    context, or (no passage found, no room left, or the answer began with `[No
    Retrieval]`) continues after `[No Retrieval]`. A generation cut at max_tokens (300:
    the reference long-form runs) is not an answer: the next step continues the same
    sequence and the two parts are read as one segment, so no sentence is cut in two;
    if the answer must end first, its unfinished last sentence is left out (a note
    says so). At the depth limit a beam still asking for evidence goes on once without
    it (`_finish`).
  * Beam score, length-independent and counting utility once: the MEAN over the
    beam's segments written with a passage of their per-segment terms ([exp(seq)] +
    w_rel s_rel + w_sup s_sup), plus w_use s_use once, from the final segment, when the
    beam is finished. Only the final segment carries a `[Utility:k]` token, so adding
    utility per segment scored every segment that stopped for evidence 0 there and an
    answer that asked for evidence lost to an equally good one-segment answer (and the
    paper's product of segment scores, mostly above 1, favours whichever beam goes on
    longest). Beams are compared with utility only when every beam compared is
    finished; while any is unfinished, utility is left out for all, so finishing early
    neither helps nor hurts. The best `beam_width` beams survive each step (stable: on
    equal scores the earlier beam / passage wins). A short answer is the case where
    every candidate ends at EOS in the first step: the best score wins, except that
    closed-set answers (true/false, yes/no, A-E) pool the scores of candidates giving
    the same label (scoring.closed_set_choice).

Labels, sentence by sentence, each with its source (`Segment.label_source`):
  "own"        the IsSup token the model wrote right after this sentence;
  "critic"     no own token: the fallback critic (embedding + lexical overlap, when the
               engine has one) judged the sentence against its passage;
  "segment"    no own token and no critic: the IsSup token the model wrote for its
               segment (same passage): the nearest one before it, else the first after;
  "unjudged"   none of these and no critic: labelled "none", nothing says it is
               supported;
  "irrelevant" written after a passage the model marked `[Irrelevant]` (training
               writes such sentences with no IsSup token, postprocess_data.py line 336):
               labelled "no_retrieval", no citation, no critic;
  "retrieval"  written without evidence (after `[No Retrieval]`, or no passage in
               context): labelled "no_retrieval", no citation.
Sentences after `[Continue to Use Evidence]` cite the passage still in context.

Streaming trade-off: a segment is delivered through `on_segment` only when its choice is
final, i.e. when every surviving beam shares it. With beam_width 1 (or when the beams
agree) that is as soon as it is generated; when beams disagree the stream waits, so what
was shown is never taken back. Fallback-critic labels are computed at delivery, so only
the sentences shown cost critic work.
"""

from __future__ import annotations

import threading
import time
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field, replace
from typing import Any, Literal, Protocol

from indexer.records import Passage
from localrag.answering.label.answer import (
    Answer,
    PassageJudgement,
    RetrievalDecision,
    Scores,
    Segment,
)
from localrag.answering.judge.critique import Critique, Span, read_generation, retrieve_group_probability
from localrag.errors import AnswerCancelled, LocalragError
from localrag.answering.generate.prompting import encode_text, prompt_ids
from localrag.answering.judge.scoring import (
    Weights,
    closed_set_choice,
    group_probs,
    label_from_issup,
    retrieve_probability,
    should_retrieve,
    total_score,
)
from localrag.settings import Settings
from localrag.answering.label.units import join_units, plain_text, split_units, unit_finished
from models.base import Generation, LanguageModel, Step, StopRule
from models.reflection import (
    PARAGRAPH_CLOSE,
    PARAGRAPH_OPEN,
    NO_SUPPORT,
    RETRIEVE_CONTINUE,
    RETRIEVE_NO,
    RETRIEVE_YES,
    ReflectionVocab,
)

Retrieve = Callable[[str, int], list[Passage]]


class SupportCritic(Protocol):
    """The part of a fallback critic (localrag.answering.judge.critics) this engine uses."""

    name: str

    def support(self, sentences: Sequence[str], passage: str) -> list[Any]:
        """One judgement (with a `.label`) per sentence against `passage`."""
        ...

MIN_PASSAGE_TOKENS = 32   # below this a passage is useless; generation room shrinks first
MIN_GEN_TOKENS = 8        # below this a step cannot write a segment: the beam ends
INSTRUCT_MAX_TOKENS = 200 # an instruct model's whole answer (settings max_tokens = 0)
FRAME_FLOOR_TOKENS = 16   # an earlier passage is cut to this (its title and first words)
                          # before the new passage is cut; below it only the frame stays
SEGMENT_TOKENS = 300      # tokens per segment: the reference long-form runs (README of
                          # AkariAsai/self-rag, run_long_form_static.py --max_new_tokens 300)


@dataclass
class EngineConfig:
    mode: Literal["adaptive", "always", "never"] = "adaptive"
    threshold: float = 0.2
    k: int = 5
    weights: Weights = field(default_factory=Weights)
    strict: bool = False
    beam_width: int = 2
    max_segments: int = 6
    max_tokens: int = SEGMENT_TOKENS
    """Most tokens generated in one step; a segment cut there goes on in the same
    sequence at the next step (module docstring)."""
    n_ctx: int = 4096
    space_after_special: bool = True
    """Tokenize passage text after `<paragraph>` with a leading "▁" piece. Training
    tokenized each example as one string with the slow Llama tokenizer (legacy mode,
    retrieval_lm/script_finetune_7b.sh --use_slow_tokenizer), which starts every text
    chunk after an added token with "▁", as llama.cpp does for a prompt string; so the
    model read `<paragraph>`, `▁Title` and writes `[Relevant]`, `▁word`. False builds
    the ids without it (SELFRAG.md 'tokenization drift'); `localrag models
    check-selfrag FILE` measures which way a model file prefers."""
    trained_ctx: int | None = None
    """Sequence length the model was fine-tuned with; everything evaluated before a
    generation (prompt, history, earlier segments, the passage) is kept within it, the
    generation itself may go past (up to n_ctx). None: from the model's vocabulary
    (2,048 for the released Llama 2 Self-RAG models, else n_ctx)."""

    @classmethod
    def from_settings(cls, s: Settings, *, selfrag: bool = True) -> "EngineConfig":
        """The engine's settings; `selfrag=False` for the instruct engine, whose
        max_tokens (0 in the settings: the default) caps a whole answer."""
        return cls(
            mode=s.retrieval_mode,
            threshold=s.threshold,
            k=s.k,
            weights=Weights(
                w_rel=s.w_rel, w_sup=s.w_sup, w_use=s.w_use, use_seq=s.use_seq_score
            ),
            strict=s.strict,
            beam_width=s.beam_width,
            max_segments=s.max_segments,
            max_tokens=s.max_tokens or (SEGMENT_TOKENS if selfrag else INSTRUCT_MAX_TOKENS),
            n_ctx=s.n_ctx,
            space_after_special=s.space_after_special,
        )


@dataclass
class _Piece:
    """One chosen segment (before sentence splitting), shared by a beam and its children."""

    sentences: list[Segment]
    text: str
    fallback: list[int] = field(default_factory=list)
    """Indices of sentences without their own IsSup token: the fallback critic (if any)
    labels them when the piece is delivered."""


@dataclass
class TraceNode:
    """One beam in the search, for tests and benchmarks (`SelfRagEngine.last_trace`)."""

    id: int
    parent: int | None
    depth: int
    passage: int | None        # index into Answer.passages; None without evidence
    segment_score: float       # this segment's critique score (SELFRAG.md section 4)
    score: float               # the beam's score (module docstring): base, + w_use*use when finished
    finished: bool
    scored: int = 0            # segments in the mean `base` (those written with a passage)
    base: float = 0.0          # mean of the scored segments' terms: [exp(seq)] + w_rel s_rel + w_sup s_sup
    use: float | None = None   # s_use of the final segment (finished beams only)
    kept: bool = False
    dropped: bool = False      # strict mode removed it


@dataclass
class _Part:
    """A run of the beam's token sequence: fixed ids (prompt, generated text), or a
    passage frame `[Retrieval]<paragraph>` + the passage ids (first `cap`) + `</paragraph>`."""

    ids: list[int]
    frame: bool = False
    cap: int = 0

    def tokens(self, v: ReflectionVocab) -> list[int]:
        if not self.frame:
            return self.ids
        return [v[RETRIEVE_YES], v[PARAGRAPH_OPEN], *self.ids[: self.cap], v[PARAGRAPH_CLOSE]]


@dataclass
class _Open:
    """A segment cut by max_tokens: the next step continues the same sequence."""

    steps: list[Step]
    with_passage: bool
    start: str | None
    citation: int | None
    passage: Passage | None
    scored: bool               # its terms are the beam's last entry of `terms`


@dataclass
class _Beam:
    node: TraceNode
    parts: list[_Part]
    pieces: list[_Piece]
    pending: Literal["retrieve", "none", "continue"] | None   # None = finished
    text: str = ""
    terms: list[float] = field(default_factory=list)
    use: float | None = None
    open: _Open | None = None
    stop_watched: dict[int, float] = field(default_factory=dict)
    """The watched log-probs at the `[Retrieval]` the beam stopped at."""
    in_context: tuple[int, Passage] | None = None
    """The passage the model is writing from (citation, passage): what a `[Continue to
    Use Evidence]` refers to; None after an irrelevant one or none."""


class SelfRagEngine:
    """Answers a question with a Self-RAG model (see the module docstring)."""

    def __init__(self, model: LanguageModel, *, config: EngineConfig,
                 critic: SupportCritic | None = None) -> None:
        self.model = model
        self.config = config
        self.critic = critic
        self.vocab = ReflectionVocab.require(model)
        self.n_ctx = min(config.n_ctx, model.n_ctx)
        trained = config.trained_ctx or self.vocab.trained_context
        self.prompt_limit = min(self.n_ctx, trained) if trained else self.n_ctx
        """Most tokens evaluated before a generation (EngineConfig.trained_ctx)."""
        self.last_trace: list[TraceNode] = []
        v = self.vocab
        self._stop_ids = [v[RETRIEVE_YES], v[RETRIEVE_CONTINUE], v[RETRIEVE_NO]]
        self._watch_ids = v.all_ids

    # --- public -------------------------------------------------------------------------
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
        run = _Run(self, question, retrieve=retrieve, search_query=search_query,
                   history=history, index_empty=index_empty, on_segment=on_segment,
                   cancel=cancel, on_decision=on_decision)
        answer = run.execute()
        self.last_trace = run.trace
        return answer


class _Run:
    """The state of one answer (kept apart so the engine object stays reusable)."""

    def __init__(
        self,
        engine: SelfRagEngine,
        question: str,
        *,
        retrieve: Retrieve,
        search_query: str | None,
        history: Sequence[tuple[str, str]],
        index_empty: bool,
        on_segment: Callable[[Segment], None] | None,
        cancel: threading.Event | None,
        on_decision: Callable[[RetrievalDecision], None] | None = None,
    ) -> None:
        self.e = engine
        self.on_decision = on_decision
        self.cfg = engine.config
        self.model = engine.model
        self.vocab = engine.vocab
        self.question = question
        self.query = search_query or question
        self.history = history
        self.retrieve_fn = retrieve
        self.can_retrieve = not index_empty and self.cfg.mode != "never"
        self.index_empty = index_empty
        self.on_segment = on_segment
        self.cancel = cancel
        self.notes: list[str] = []
        self.judgements: list[PassageJudgement] = []
        self._by_chunk: dict[int, int] = {}
        self.trace: list[TraceNode] = []
        self.delivered = 0

    # --- helpers ------------------------------------------------------------------------
    def _check_cancel(self) -> None:
        if self.cancel is not None and self.cancel.is_set():
            raise AnswerCancelled("The answer was cancelled.")

    def _note(self, text: str) -> None:
        if text not in self.notes:
            self.notes.append(text)

    def _node(self, parent: TraceNode | None, **kw) -> TraceNode:
        node = TraceNode(id=len(self.trace), parent=None if parent is None else parent.id,
                         depth=0 if parent is None else parent.depth + 1, **kw)
        self.trace.append(node)
        return node

    # --- the run ------------------------------------------------------------------------
    def execute(self) -> Answer:
        t0 = time.monotonic()
        self._check_cancel()
        n_ctx, max_tokens = self.e.n_ctx, self.cfg.max_tokens
        # History goes first: the prompt with history may take at most half of what the
        # generation leaves and half of the trained length; the passage gets the rest.
        budget = max(min((n_ctx - max_tokens) // 2, self.e.prompt_limit // 2), 1)
        prompt, kept = prompt_ids(self.model, self.question, history=self.history, budget=budget)
        if kept < len(self.history):
            self._note(f"{len(self.history) - kept} earlier turn(s) left out to fit the context"
                       + (f" ({self.e.prompt_limit} tokens, the length the model was trained on)"
                          if self.e.prompt_limit < n_ctx else ""))
        if len(prompt) + MIN_GEN_TOKENS + 4 > n_ctx:
            raise LocalragError(
                f"The question is too long for the model's context ({len(prompt)} tokens "
                f"of {n_ctx}).",
                hint="ask a shorter question or raise n_ctx in the settings",
            )
        decision = self._decide(prompt)
        root = _Beam(
            node=self._node(None, passage=None, segment_score=0.0, score=0.0, finished=False,
                            kept=True),
            parts=[_Part(prompt)], pieces=[],
            pending="retrieve" if decision.retrieved else "none",
        )
        beams = [root]
        for step in range(self.cfg.max_segments):
            if all(b.pending is None for b in beams):
                break
            pool: list[_Beam] = []
            for beam in beams:
                if beam.pending is None:
                    pool.append(beam)
                else:
                    pool.extend(self._expand(beam, decision))
            if step == 0 and self.on_decision is not None:
                # final now: no passage found / strict mode may have flipped `retrieved`
                self.on_decision(decision)
            beams = self._keep(pool, closed_set=step == 0)
            self._deliver_common(beams)
        if any(b.pending is not None for b in beams):
            self._note(f"the answer reached the limit of {self.cfg.max_segments} segments: "
                       "its last part was written without new evidence")
            pool = []
            for beam in beams:
                pool.extend([beam] if beam.pending is None else self._finish(beam))
            beams = self._keep(pool, closed_set=False)
        for beam in beams:
            if beam.open is not None:
                self._close_open(beam)
        best = beams[0]
        self._deliver(best.pieces)
        segments = [s for piece in best.pieces for s in piece.sentences]
        if any(s.label_source == "critic" for s in segments) and self.e.critic is not None:
            self._note(f"sentences without an IsSup token of their own were labelled by the "
                       f"fallback critic ({self.e.critic.name})")
        return Answer(
            question=self.question,
            search_query=self.query,
            decision=decision,
            passages=self.judgements,
            segments=segments,
            critic="selfrag",
            model=self.model.name,
            notes=self.notes,
            elapsed_s=time.monotonic() - t0,
        )

    def _keep(self, pool: list[_Beam], *, closed_set: bool) -> list[_Beam]:
        """The best `beam_width` beams of `pool` (module docstring: utility counts only
        when every beam compared is finished); stable, earlier beams win ties."""
        winner = self._closed_set_winner(pool) if closed_set else None
        all_done = all(b.pending is None for b in pool)
        pool.sort(key=lambda b: -(b.node.score if all_done else b.node.base))
        if winner is not None:
            pool.remove(winner)
            pool.insert(0, winner)
        kept = pool[: self.cfg.beam_width]
        for b in kept:
            b.node.kept = True
        return kept

    def _decide(self, prompt: list[int]) -> RetrievalDecision:
        mode, threshold = self.cfg.mode, self.cfg.threshold
        if self.index_empty:
            self._note("the index is empty: answered without retrieval")
            return RetrievalDecision(mode, False, None, threshold, "index is empty")
        if mode != "adaptive":
            return RetrievalDecision(mode, mode == "always", None, threshold, f"mode: {mode}")
        self._check_cancel()
        yes, no = self.vocab[RETRIEVE_YES], self.vocab[RETRIEVE_NO]
        lps = self.model.next_logprobs(prompt, [yes, no])
        p_yes, p_no = group_probs(lps, [yes, no])
        prob = retrieve_probability(p_yes, p_no)
        retrieved = should_retrieve(mode, prob, threshold)
        sign = ">" if retrieved else "<="
        return RetrievalDecision(mode, retrieved, prob, threshold,
                                 f"p={prob:.2f} {sign} {threshold:.2f}")

    def _closed_set_winner(self, pool: list["_Beam"]) -> "_Beam | None":
        """A short answer whose candidates are closed-set labels (true/false, A-E):
        candidates giving the same label pool their scores (SELFRAG.md section 4)."""
        if len(pool) < 2 or any(b.pending is not None or b.node.passage is None for b in pool):
            return None
        choice = closed_set_choice([b.text for b in pool], [b.node.score for b in pool])
        if choice is None:
            return None
        self._note(choice.note(pool[choice.best].text))
        return pool[choice.best]

    # --- expansion ----------------------------------------------------------------------
    def _ctx(self, parts: list[_Part]) -> list[int]:
        v = self.vocab
        return [t for part in parts for t in part.tokens(v)]

    def _expand(self, beam: _Beam, decision: RetrievalDecision) -> list[_Beam]:
        if beam.pending == "continue":
            return [self._continue_open(beam, fetch=True)]
        if beam.pending == "retrieve":
            children = self._expand_with_evidence(beam, decision)
            if children is not None:
                return children
        return [self._without_evidence(beam, self.vocab[RETRIEVE_NO], fetch=True)]

    def _finish(self, beam: _Beam) -> list[_Beam]:
        """At the depth limit a beam still waiting goes on without new evidence: a cut
        segment continues; a `[Retrieval]` becomes what the stop rule writes where no
        passage may be fetched (the likelier of `[Continue to Use Evidence]`, when a
        usable passage is in context, and `[No Retrieval]`). Nothing is fetched in it."""
        if beam.pending == "continue":
            return [self._continue_open(beam, fetch=False)]
        v = self.vocab
        token = v[RETRIEVE_NO]
        if beam.pending == "retrieve" and beam.in_context is not None:
            p_cont, p_no = group_probs(beam.stop_watched, [v[RETRIEVE_CONTINUE], v[RETRIEVE_NO]])
            if p_cont > p_no:
                token = v[RETRIEVE_CONTINUE]
        return [self._without_evidence(beam, token, fetch=False)]

    def _room(self, ctx_len: int, branch_len: int) -> int:
        return min(self.cfg.max_tokens, self.e.n_ctx - ctx_len - branch_len)

    def _fit(self, parts: list[_Part], want: int, *, notes: bool = True
             ) -> tuple[list[_Part], int] | None:
        """The beam's parts with their earlier passages trimmed where needed, and the
        tokens the new passage may take (None: not even a short segment fits).

        Everything evaluated before the generation stays within the trained length and
        leaves max_tokens of room in n_ctx. Earlier passages stay whole while that
        allows (training sequences hold every passage); otherwise they are cut, oldest
        first, to FRAME_FLOOR_TOKENS, then the new passage to MIN_PASSAGE_TOKENS, then the
        earlier ones to their bare `[Retrieval]<paragraph></paragraph>` frame, which
        always stays so that every `[Relevant]` follows a `</paragraph>` as in training.
        Past that the trained length is passed (with a note) while a segment still fits."""
        limit = min(self.e.n_ctx - self.cfg.max_tokens, self.e.prompt_limit)
        frames = [i for i, p in enumerate(parts) if p.frame]
        caps = {i: min(parts[i].cap, len(parts[i].ids)) for i in frames}
        fixed = sum(len(p.ids) for p in parts if not p.frame) + 3 * (len(frames) + 1)
        avail = limit - fixed
        new = want
        need = new + sum(caps.values())

        def cut(i: int, floor: int) -> None:
            nonlocal need
            c = max(0, min(caps[i] - floor, need - avail))
            caps[i] -= c
            need -= c

        for i in frames:
            cut(i, min(FRAME_FLOOR_TOKENS, caps[i]))
        if need > avail:
            c = min(new - min(MIN_PASSAGE_TOKENS, new), need - avail)
            new -= c
            need -= c
        for i in frames:
            cut(i, 0)
        used = fixed + sum(caps.values())
        if need > avail:
            new = min(new, self.e.n_ctx - used - MIN_GEN_TOKENS)
            if new < 1:
                return None
            if notes and used + new > self.e.prompt_limit:
                self._note(f"the prompt passed the {self.e.prompt_limit} tokens the model "
                           "was trained on")
        if notes and any(caps[i] < parts[i].cap for i in frames):
            self._note("earlier passages were trimmed to keep the answer's sequence within "
                       f"{limit} tokens")
        trimmed = [replace(p, cap=caps[i]) if p.frame else p for i, p in enumerate(parts)]
        return trimmed, new

    def _passage_ids(self, passage: Passage) -> list[int]:
        return encode_text(self.model, f"{passage.title}\n{passage.text}",
                           leading_space=self.cfg.space_after_special)

    def _stop_rule(self, *, has_passage: bool, fetch: bool = True) -> StopRule:
        """What happens at a Retrieve-group token inside a generation (module docstring):
        stop to fetch new passages, or go on in the same sequence (always, when `fetch`
        is off)."""
        v = self.vocab
        yes, cont, no = v[RETRIEVE_YES], v[RETRIEVE_CONTINUE], v[RETRIEVE_NO]
        mode, threshold = self.cfg.mode, self.cfg.threshold

        def rule(step: Step) -> int | None:
            if self.can_retrieve and fetch:
                if mode == "adaptive":
                    r = retrieve_group_probability(step.watched, v)
                    go = r > threshold if r is not None else step.token == yes
                else:
                    go = step.token == yes
                if go:
                    return None
            if step.token != yes:
                return step.token            # the model's own [Continue...] / [No Retrieval]
            p_cont, p_no = group_probs(step.watched, [cont, no])
            return cont if has_passage and p_cont > p_no else no

        return rule

    def _generate(self, ctx: list[int], branches: list[list[int]], max_new: int, *,
                  has_passage: bool, fetch: bool) -> list[Generation]:
        self._check_cancel()
        return self.model.generate(ctx, branches, max_tokens=max_new,
                                   stop_ids=self.e._stop_ids, watch_ids=self.e._watch_ids,
                                   at_stop=self._stop_rule(has_passage=has_passage, fetch=fetch))

    def _expand_with_evidence(
        self, beam: _Beam, decision: RetrievalDecision
    ) -> list[_Beam] | None:
        """K children, one per passage, decoded in one `generate` call; None = no evidence."""
        v = self.vocab
        if self._fit(beam.parts, 1, notes=False) is None:
            self._note("the context is full: the rest was written without new evidence")
            return None
        query = self.query if not beam.text else f"{self.query} {beam.text}"
        self._check_cancel()
        passages = list(self.retrieve_fn(query, self.cfg.k))[: self.cfg.k]
        if not passages:
            if beam.node.parent is None:
                decision.retrieved = False
                decision.reason += "; no passage found"
                self._note("no passage matched the question: answered without retrieval")
            return None
        if beam.node.parent is not None and not decision.retrieved:
            self._note("the model asked for evidence later in the answer: the sentences "
                       "written after that cite what it found")
        full = [self._passage_ids(p) for p in passages]
        fit = self._fit(beam.parts, max(len(ids) for ids in full))
        if fit is None:
            self._note("the context is full: the rest was written without new evidence")
            return None
        parts, cap = fit
        for p, ids in zip(passages, full):
            if len(ids) > cap:
                self._note(f"a passage from {p.locator} was trimmed to fit the context")
        frames = [_Part(ids, frame=True, cap=cap) for ids in full]
        branches = [f.tokens(v) for f in frames]
        ctx = self._ctx(parts)
        max_new = self._room(len(ctx), max(len(b) for b in branches))
        if max_new < 1:
            return None
        gens = self._generate(ctx, branches, max_new, has_passage=True, fetch=True)
        children: list[_Beam] = []
        for passage, frame, gen in zip(passages, frames, gens):
            crit = read_generation(gen, v, weights=self.cfg.weights,
                                   eos_id=self.model.eos_id, with_passage=True)
            index = self._judge(passage, crit)
            # strict: any IsSup token saying [No support / Contradictory] drops the candidate
            if self.cfg.strict and NO_SUPPORT in crit.issup_tokens:
                self._node(beam.node, passage=index, segment_score=crit.total,
                           score=beam.node.base, base=beam.node.base, scored=beam.node.scored,
                           finished=crit.boundary == "eos", dropped=True)
                j = self.judgements[index]
                if not any(c.passage == index and not c.dropped for c in self.trace):
                    j.dropped = True
                    j.drop_reason = "strict mode: the model marked its answer unsupported"
                continue
            children.append(self._child(
                beam, [*parts, frame, _Part(_context_ids(gen))], gen, crit,
                citation=index, passage=passage, with_passage=True, start=None,
                scored="new"))
        if not children:
            n = len(passages)
            if beam.node.parent is None:
                decision.retrieved = False
                decision.reason += (f"; strict mode dropped all {n} candidates (the model "
                                    "marked them unsupported): answered without evidence")
                self._note(f"strict mode dropped all {n} candidates the model marked "
                           "unsupported: this answer uses no evidence")
                return None          # answer the question without evidence instead
            self._note(f"strict mode dropped all {n} candidates for the next segment (the "
                       "model marked them unsupported): the answer ends there")
            self._end(beam)          # keep what this beam has; it ends here
            return [beam]
        return children

    def _end(self, beam: _Beam) -> None:
        beam.pending = None
        if beam.open is not None:
            self._close_open(beam)
        beam.node.finished = True
        beam.node.score = beam.node.base + self.cfg.weights.w_use * (beam.use or 0.0)

    def _without_evidence(self, beam: _Beam, token: int, *, fetch: bool) -> _Beam:
        """One child: `token` (`[No Retrieval]`, or at the depth limit possibly `[Continue
        to Use Evidence]`) then the model's own words. Sentences after `[No Retrieval]`
        are labelled no_retrieval; after `[Continue to Use Evidence]` they cite the
        passage in context. Such a segment has no IsRel term: it leaves the beam's mean
        as it is (its utility still counts when it ends the answer)."""
        v = self.vocab
        ctx = self._ctx(beam.parts)
        max_new = self._room(len(ctx), 1)
        if max_new < 1:
            self._note("the context is full: the answer stops here")
            self._end(beam)
            return beam
        cont = token == v[RETRIEVE_CONTINUE]
        (gen,) = self._generate(ctx, [[token]], max_new,
                                has_passage=beam.in_context is not None, fetch=fetch)
        crit = read_generation(gen, v, weights=self.cfg.weights, eos_id=self.model.eos_id,
                               with_passage=False, start="continue" if cont else None)
        citation, passage = beam.in_context if beam.in_context is not None else (None, None)
        return self._child(beam, [*beam.parts, _Part([token, *_context_ids(gen)])], gen, crit,
                           citation=citation, passage=passage, with_passage=False,
                           start="continue" if cont else None, scored=None)

    def _continue_open(self, beam: _Beam, *, fetch: bool) -> _Beam:
        """A segment cut at max_tokens goes on in the same sequence (nothing is inserted);
        the two parts are read as one generation, so no sentence is split between them."""
        o = beam.open
        assert o is not None
        ctx = self._ctx(beam.parts)
        max_new = self._room(len(ctx), 0)
        if max_new < 1:
            self._note("the context is full: the answer stops here")
            self._end(beam)
            return beam
        (gen,) = self._generate(ctx, [], max_new, has_passage=beam.in_context is not None,
                                fetch=fetch)
        whole = Generation(steps=[*o.steps, *gen.steps], finish=gen.finish)
        crit = read_generation(whole, self.vocab, weights=self.cfg.weights,
                               eos_id=self.model.eos_id, with_passage=o.with_passage,
                               start=o.start)  # type: ignore[arg-type]
        return self._child(beam, [*beam.parts, _Part(_context_ids(gen))], whole, crit,
                           citation=o.citation, passage=o.passage, with_passage=o.with_passage,
                           start=o.start, scored="same" if o.scored else None, reopened=True)

    def _child(self, beam: _Beam, parts: list[_Part], gen: Generation, crit: Critique, *,
               citation: int | None, passage: Passage | None, with_passage: bool,
               start: str | None, scored: Literal["new", "same"] | None,
               reopened: bool = False) -> _Beam:
        """The beam after one more generation. `scored`: "new" adds the segment's terms
        to the beam's mean, "same" replaces the last entry (a cut segment continued),
        None leaves the mean as it is. A generation cut at max_tokens stays open (no
        piece yet): the next step continues it."""
        w = self.cfg.weights
        terms = list(beam.terms)
        if scored is not None:
            term = total_score(rel=crit.rel, sup=crit.sup, use=None,
                               seq_mean_logprob=crit.seq_mean, weights=w)
            if scored == "same" and terms:
                terms[-1] = term
            else:
                terms.append(term)
        pending: Literal["retrieve", "continue"] | None = (
            "retrieve" if crit.boundary == "retrieve"
            else "continue" if crit.boundary == "length" else None)
        base = sum(terms) / len(terms) if terms else 0.0
        use = crit.use if pending is None else None
        score = base + w.w_use * (use or 0.0) if pending is None else base
        node = self._node(beam.node, passage=citation if with_passage else None,
                          segment_score=crit.total, score=score, base=base, use=use,
                          scored=len(terms), finished=pending is None)
        irrelevant = with_passage and crit.relevant is False
        if with_passage:
            in_context = None if irrelevant else (citation, passage)
        else:
            in_context = beam.in_context
        child = _Beam(node=node, parts=parts, pieces=list(beam.pieces), pending=pending,
                      text=beam.text, terms=terms, use=use, in_context=in_context)
        if crit.boundary == "retrieve":
            child.stop_watched = gen.steps[-1].watched
        if crit.boundary == "length":
            if not reopened:
                self._note("a segment reached the max_tokens limit: it was continued in "
                           "the same sequence")
            child.open = _Open(steps=list(gen.steps), with_passage=with_passage, start=start,
                               citation=citation, passage=passage, scored=scored is not None)
            return child
        self._add_piece(child, crit, citation=citation, passage=passage,
                        irrelevant=irrelevant, cut=False)
        return child

    def _close_open(self, beam: _Beam) -> None:
        """The answer ends with a segment still cut at max_tokens: its complete sentences
        are kept, the unfinished last one is left out (never half a sentence)."""
        o = beam.open
        assert o is not None
        beam.open = None
        crit = read_generation(Generation(steps=o.steps, finish="length"), self.vocab,
                               weights=self.cfg.weights, eos_id=self.model.eos_id,
                               with_passage=o.with_passage, start=o.start)  # type: ignore[arg-type]
        self._add_piece(beam, crit, citation=o.citation, passage=o.passage,
                        irrelevant=o.with_passage and crit.relevant is False, cut=True)

    def _add_piece(self, beam: _Beam, crit: Critique, *, citation: int | None,
                   passage: Passage | None, irrelevant: bool, cut: bool) -> None:
        scores = Scores(rel=crit.rel, sup=crit.sup, use=crit.use, seq=crit.seq, total=crit.total)
        sentences, fallback = self._sentences(crit.spans, scores=scores, citation=citation,
                                              passage=passage, irrelevant=irrelevant)
        if cut and sentences and not unit_finished(sentences[-1].kind, sentences[-1].text):
            sentences.pop()
            fallback = [i for i in fallback if i < len(sentences)]
            self._note("the answer was cut at the max_tokens limit: its unfinished last "
                       "sentence was left out")
        text = join_units(sentences)
        beam.pieces = [*beam.pieces, _Piece(sentences, text, fallback)]
        beam.text = f"{beam.text} {text}".strip()

    def _sentences(self, spans: list[Span], *, scores: Scores, citation: int | None,
                   passage: Passage | None, irrelevant: bool = False
                   ) -> tuple[list[Segment], list[int]]:
        """The segment's sentences with their labels and label sources (module docstring),
        and the indices of those the fallback critic is to label at delivery."""
        out: list[Segment] = []
        fallback: list[int] = []
        tokens: list[tuple[int, str]] = []     # (sentence index, IsSup token) with evidence
        for span in spans:
            units = split_units(self.model.detokenize(span.text_ids).strip())
            evidence = passage is not None and span.kind != "no_retrieval" and not irrelevant
            for j, u in enumerate(units):
                own = span.issup if j == len(units) - 1 else None
                if irrelevant and span.kind != "no_retrieval":
                    # after [Irrelevant] training writes no support claim: no usable evidence
                    label, source, cite, p = "no_retrieval", "irrelevant", None, None
                elif not evidence:
                    label, source, cite, p = "no_retrieval", "retrieval", None, None
                elif own is not None:
                    label, source, cite, p = label_from_issup(own), "own", citation, passage
                else:
                    label, source, cite, p = "none", "unjudged", citation, passage
                    fallback.append(len(out))
                out.append(Segment(text=u.text, label=label, scores=scores, citation=cite,
                                   passage=p, label_source=source, kind=u.kind,
                                   starts_block=u.starts_block))
            if evidence and span.issup is not None:
                tokens.append((len(out) - 1, span.issup))
        for i in fallback:                  # until a critic judges: the segment's token
            before = [tok for k, tok in tokens if k < i]
            after = [tok for k, tok in tokens if k > i]
            token = before[-1] if before else (after[0] if after else None)
            if token is not None:
                out[i].label, out[i].label_source = label_from_issup(token), "segment"
        return out, fallback

    def _judge(self, passage: Passage, crit: Critique) -> int:
        """Index of `passage` in Answer.passages (first judgement of a chunk is kept)."""
        if passage.chunk_id in self._by_chunk:
            return self._by_chunk[passage.chunk_id]
        rel = crit.rel if crit.rel is not None else 0.0
        relevant = bool(crit.relevant) if crit.relevant is not None else rel > 0.5
        self.judgements.append(PassageJudgement(passage=passage, relevance=rel, relevant=relevant))
        self._by_chunk[passage.chunk_id] = len(self.judgements) - 1
        return len(self.judgements) - 1

    # --- streaming ----------------------------------------------------------------------
    def _deliver_common(self, beams: list[_Beam]) -> None:
        """Deliver the segments every surviving beam shares: their choice is final."""
        common: list[_Piece] = []
        for pieces in zip(*(b.pieces for b in beams)):
            if any(p is not pieces[0] for p in pieces):
                break
            common.append(pieces[0])
        self._deliver(common)

    def _deliver(self, pieces: list[_Piece]) -> None:
        while self.delivered < len(pieces):
            piece = pieces[self.delivered]
            self.delivered += 1
            self._label_by_critic(piece)
            if self.on_segment is not None:
                for segment in piece.sentences:
                    self.on_segment(segment)

    def _label_by_critic(self, piece: _Piece) -> None:
        """Sentences without their own IsSup token, judged by the fallback critic."""
        critic = self.e.critic
        todo = [piece.sentences[i] for i in piece.fallback]
        if critic is None or not todo or todo[0].passage is None:
            return
        p = todo[0].passage
        self._check_cancel()
        texts = [plain_text(s.kind, s.text) for s in todo]    # code without its fences
        for seg, judgement in zip(todo, critic.support(texts, f"{p.title}\n{p.text}")):
            seg.label, seg.label_source = judgement.label, "critic"


def _context_ids(gen: Generation) -> list[int]:
    """The generated ids that stay in the sequence: all but a final stop token."""
    tokens = gen.tokens
    return tokens[:-1] if gen.finish == "stop" and tokens else tokens


__all__ = ["EngineConfig", "Retrieve", "SelfRagEngine", "SupportCritic", "TraceNode"]
