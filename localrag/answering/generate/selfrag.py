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
  * A beam holds the prompt plus the segments chosen so far (with their reflection
    tokens, without their passages: SELFRAG.md section 5). Each step, every unfinished
    beam retrieves K passages and decodes one candidate per passage in ONE `generate`
    call sharing the beam's context, or (no passage found, no room left, or the answer
    began with `[No Retrieval]`) continues after `[No Retrieval]`.
  * Beam score, length-independent: the MEAN of the beam's segment scores (segments
    written with a passage; a segment without one has no critique and leaves the mean
    as it is). The paper's product of segment scores (mostly above 1) favours whichever
    beam goes on longest, so a finished short answer lost to any beam that continued;
    the mean compares finished and unfinished beams fairly. The best `beam_width` beams
    by mean survive each step (stable: on equal scores the earlier beam / passage wins).
    A short answer is the case where every candidate ends at EOS in the first step: the
    best score wins, except that closed-set answers (true/false, yes/no, A-E) pool the
    scores of candidates giving the same label (scoring.closed_set_choice).

Labels, sentence by sentence, each with its source (`Segment.label_source`):
  "own"        the IsSup token the model wrote right after this sentence;
  "critic"     no own token: the fallback critic (embedding + lexical overlap, when the
               engine has one) judged the sentence against its passage;
  "segment"    no own token and no critic: the IsSup token the model wrote for its
               segment (same passage): the nearest one before it, else the first after;
  "unjudged"   none of these (e.g. after `[Irrelevant]`, where training writes no IsSup
               token) and no critic: labelled "none", nothing says it is supported;
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
from dataclasses import dataclass, field
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
from localrag.answering.label.units import join_units, plain_text, split_units
from models.base import LanguageModel, Step, StopRule
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


@dataclass
class EngineConfig:
    mode: Literal["adaptive", "always", "never"] = "adaptive"
    threshold: float = 0.2
    k: int = 5
    weights: Weights = field(default_factory=Weights)
    strict: bool = False
    beam_width: int = 2
    max_segments: int = 6
    max_tokens: int = 200
    n_ctx: int = 4096
    space_after_special: bool = False
    """Tokenize passage text after `<paragraph>` with a leading space (llama.cpp's
    string-prompt behaviour) instead of without (what the model emits); SELFRAG.md
    'tokenization drift': kept switchable so both can be measured."""
    trained_ctx: int | None = None
    """Sequence length the model was fine-tuned with; everything evaluated before a
    generation (prompt, history, earlier segments, the passage) is kept within it, the
    generation itself may go past (up to n_ctx). None: from the model's vocabulary
    (2,048 for the released Llama 2 Self-RAG models, else n_ctx)."""

    @classmethod
    def from_settings(cls, s: Settings) -> "EngineConfig":
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
            max_tokens=s.max_tokens,
            n_ctx=s.n_ctx,
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
    score: float               # the beam's score: mean segment score (module docstring)
    finished: bool
    scored: int = 0            # segments in that mean (those written with a passage)
    kept: bool = False
    dropped: bool = False      # strict mode removed it


@dataclass
class _Beam:
    node: TraceNode
    ctx: list[int]
    pieces: list[_Piece]
    pending: Literal["retrieve", "none"] | None   # None = finished
    text: str = ""


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
        if self.on_decision is not None:      # lets a UI show the decision before the text
            self.on_decision(decision)
        root = _Beam(
            node=self._node(None, passage=None, segment_score=0.0, score=0.0, finished=False,
                            kept=True),
            ctx=prompt, pieces=[],
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
            winner = self._closed_set_winner(pool) if step == 0 else None
            # the mean segment score: finished and unfinished beams compare fairly
            pool.sort(key=lambda b: -b.node.score)   # stable: earlier wins ties
            if winner is not None:
                pool.remove(winner)
                pool.insert(0, winner)
            beams = pool[: self.cfg.beam_width]
            for b in beams:
                b.node.kept = True
            self._deliver_common(beams)
        if any(b.pending is not None for b in beams):
            self._note(f"the answer stopped at the limit of {self.cfg.max_segments} segments")
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
    def _expand(self, beam: _Beam, decision: RetrievalDecision) -> list[_Beam]:
        if beam.pending == "retrieve":
            children = self._expand_with_evidence(beam, decision)
            if children is not None:
                return children
        return self._expand_without_evidence(beam)

    def _room(self, ctx: list[int], branch_len: int) -> int:
        return min(self.cfg.max_tokens, self.e.n_ctx - len(ctx) - branch_len)

    def _passage_budget(self, ctx: list[int]) -> int:
        """Tokens a passage may take after `ctx` (3 = [Retrieval] <paragraph> </paragraph>):
        it leaves max_tokens of generation room in n_ctx and keeps the evaluated prompt
        within the trained length; a passage is never cut below MIN_PASSAGE_TOKENS while
        a segment still fits (then the trained length is passed, with a note)."""
        room = self.e.n_ctx - len(ctx) - 3
        budget = min(room - self.cfg.max_tokens, self.e.prompt_limit - len(ctx) - 3)
        if budget < MIN_PASSAGE_TOKENS:
            budget = min(MIN_PASSAGE_TOKENS, room - MIN_GEN_TOKENS)
            if budget >= 1 and len(ctx) + 3 + budget > self.e.prompt_limit:
                self._note(f"the prompt passed the {self.e.prompt_limit} tokens the model "
                           "was trained on")
        return budget

    def _passage_ids(self, passage: Passage, budget: int) -> list[int]:
        ids = encode_text(self.model, f"{passage.title}\n{passage.text}",
                          leading_space=self.cfg.space_after_special)
        if len(ids) > budget:
            self._note(f"a passage from {passage.locator} was trimmed to fit the context")
            ids = ids[: max(budget, 0)]
        return ids

    def _stop_rule(self, *, has_passage: bool) -> StopRule:
        """What happens at a Retrieve-group token inside a generation (module docstring):
        stop to fetch new passages, or go on in the same sequence."""
        v = self.vocab
        yes, cont, no = v[RETRIEVE_YES], v[RETRIEVE_CONTINUE], v[RETRIEVE_NO]
        mode, threshold = self.cfg.mode, self.cfg.threshold

        def rule(step: Step) -> int | None:
            if self.can_retrieve:
                if mode == "adaptive":
                    r = retrieve_group_probability(step.watched, v)
                    fetch = r > threshold if r is not None else step.token == yes
                else:
                    fetch = step.token == yes
                if fetch:
                    return None
            if step.token != yes:
                return step.token            # the model's own [Continue...] / [No Retrieval]
            p_cont, p_no = group_probs(step.watched, [cont, no])
            return cont if has_passage and p_cont > p_no else no

        return rule

    def _expand_with_evidence(
        self, beam: _Beam, decision: RetrievalDecision
    ) -> list[_Beam] | None:
        """K children, one per passage, decoded in one `generate` call; None = no evidence."""
        v = self.vocab
        budget = self._passage_budget(beam.ctx)
        if budget < 1:
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
        branches = [
            [v[RETRIEVE_YES], v[PARAGRAPH_OPEN], *self._passage_ids(p, budget), v[PARAGRAPH_CLOSE]]
            for p in passages
        ]
        max_new = self._room(beam.ctx, max(len(b) for b in branches))
        if max_new < 1:
            return None
        self._check_cancel()
        gens = self.model.generate(beam.ctx, branches, max_tokens=max_new,
                                   stop_ids=self.e._stop_ids, watch_ids=self.e._watch_ids,
                                   at_stop=self._stop_rule(has_passage=True))
        children: list[_Beam] = []
        for passage, gen in zip(passages, gens):
            crit = read_generation(gen, v, weights=self.cfg.weights,
                                   eos_id=self.model.eos_id, with_passage=True)
            index = self._judge(passage, crit)
            # strict: any IsSup token saying [No support / Contradictory] drops the candidate
            drop = self.cfg.strict and NO_SUPPORT in crit.issup_tokens
            scored = beam.node.scored + 1
            node = self._node(beam.node, passage=index, segment_score=crit.total,
                              score=(beam.node.score * beam.node.scored + crit.total) / scored,
                              scored=scored, finished=crit.boundary != "retrieve", dropped=drop)
            if drop:
                j = self.judgements[index]
                if not any(c.passage == index and not c.dropped for c in self.trace):
                    j.dropped = True
                    j.drop_reason = "strict mode: the model marked its answer unsupported"
                continue
            scores = Scores(rel=crit.rel, sup=crit.sup, use=crit.use, seq=crit.seq,
                            total=crit.total)
            children.append(self._child(beam, node, crit, crit.context_ids,
                                        scores=scores, citation=index, passage=passage))
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
            beam.pending = None      # keep what this beam has; it ends here
            beam.node.finished = True
            return [beam]
        return children

    def _expand_without_evidence(self, beam: _Beam) -> list[_Beam]:
        """One child: `[No Retrieval]` then the model's own words (label no_retrieval).

        It leaves the beam's mean score as it is: with no critique to weigh, the segment
        neither raises nor lowers its beam (its Scores still record seq and use)."""
        no_ret = self.vocab[RETRIEVE_NO]
        max_new = self._room(beam.ctx, 1)
        if max_new < 1:
            beam.pending = None
            beam.node.finished = True
            self._note("the context is full: the answer stops here")
            return [beam]
        self._check_cancel()
        (gen,) = self.model.generate(beam.ctx, [[no_ret]], max_tokens=max_new,
                                     stop_ids=self.e._stop_ids, watch_ids=self.e._watch_ids,
                                     at_stop=self._stop_rule(has_passage=False))
        crit = read_generation(gen, self.vocab, weights=self.cfg.weights,
                               eos_id=self.model.eos_id, with_passage=False)
        info = total_score(rel=None, sup=None, use=crit.use, seq_mean_logprob=crit.seq_mean,
                           weights=self.cfg.weights)
        node = self._node(beam.node, passage=None, segment_score=info, score=beam.node.score,
                          scored=beam.node.scored, finished=crit.boundary != "retrieve")
        scores = Scores(use=crit.use, seq=crit.seq, total=info)
        return [self._child(beam, node, crit, [no_ret, *crit.context_ids],
                            scores=scores, citation=None, passage=None)]

    def _child(self, beam: _Beam, node: TraceNode, crit: Critique, ctx_ids: list[int], *,
               scores: Scores, citation: int | None, passage: Passage | None) -> _Beam:
        sentences, fallback = self._sentences(crit.spans, scores=scores, citation=citation,
                                              passage=passage)
        text = join_units(sentences)
        if crit.boundary == "length":
            self._note("a segment stopped at the max_tokens limit")
        pending = "retrieve" if crit.boundary == "retrieve" else None
        piece = _Piece(sentences, text, fallback)
        return _Beam(node=node, ctx=beam.ctx + ctx_ids, pieces=[*beam.pieces, piece],
                     pending=pending, text=f"{beam.text} {text}".strip())

    def _sentences(self, spans: list[Span], *, scores: Scores, citation: int | None,
                   passage: Passage | None) -> tuple[list[Segment], list[int]]:
        """The segment's sentences with their labels and label sources (module docstring),
        and the indices of those the fallback critic is to label at delivery."""
        out: list[Segment] = []
        fallback: list[int] = []
        tokens: list[tuple[int, str]] = []     # (sentence index, IsSup token) with evidence
        for span in spans:
            units = split_units(self.model.detokenize(span.text_ids).strip())
            evidence = passage is not None and span.kind != "no_retrieval"
            for j, u in enumerate(units):
                own = span.issup if j == len(units) - 1 else None
                if not evidence:
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


__all__ = ["EngineConfig", "Retrieve", "SelfRagEngine", "SupportCritic", "TraceNode"]
