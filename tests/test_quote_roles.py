"""Quotes shown as the answer, and quotes shown as context (issue 17, point 5): the best
quote (and near ties) is the answer with ✔; the others are context, marked `›`, in every
rendering, and saved chats keep the role."""

from __future__ import annotations

import pytest

from localrag.answering.generate.extract import ANSWER_RELATIVE, Quote, Span, answer_roles
from localrag.answering.label.answer import Answer, RetrievalDecision, Scores, Segment, answer_from_json
from localrag.answering.label.render import (CONTEXT_SYMBOL, LABEL_SYMBOL, answer_to_markdown,
                                             answer_to_text, segment_symbol)


def _q(score: float, start: int, context: str = "") -> Quote:
    return Quote(0, Span(start, start + 5, f"s{start}"), score, context=context)


def test_the_best_quote_and_near_ties_answer_the_rest_is_context():
    quotes = [_q(0.80, 0), _q(0.79, 10), _q(0.60, 20), _q(0.30, 30)]
    assert ANSWER_RELATIVE == 0.97
    assert answer_roles(quotes) == [True, True, False, False]   # 0.79 >= 0.97 x 0.80
    # a reading-context sentence shares its quote's role
    grouped = [_q(0.8, 0), _q(0.8, 5, "after"), _q(0.5, 20, "before"), _q(0.5, 25)]
    assert answer_roles(grouped) == [True, True, False, False]
    assert answer_roles([]) == []
    assert answer_roles([_q(0.01, 0)]) == [True]                 # the best always answers


def _answer() -> Answer:
    from indexer.records import Passage

    p = Passage(chunk_id=1, path="/docs/a.md", title="a.md", text="One. Two.", start_line=3,
                end_line=3, page=None, char_start=0, char_end=9, score=0.5)
    from localrag.answering.label.answer import PassageJudgement

    segs = [Segment(text="One.", label="fully", scores=Scores(total=0.8), citation=0, passage=p,
                    origin="quote", line=3, label_source="quote", role="answer"),
            Segment(text="Two.", label="fully", scores=Scores(total=0.4), citation=0, passage=p,
                    origin="quote", line=3, label_source="quote", role="context")]
    return Answer(question="q?", search_query="q?",
                  decision=RetrievalDecision(mode="always", retrieved=True, probability=None,
                                             threshold=0.2, reason="always"),
                  passages=[PassageJudgement(p, relevance=0.5, relevant=None)], segments=segs)


def test_context_quotes_never_show_the_answers_mark():
    a = _answer()
    assert segment_symbol(a.segments[0]) == LABEL_SYMBOL["fully"] == "✔"
    assert segment_symbol(a.segments[1]) == CONTEXT_SYMBOL == "›"
    text = answer_to_text(a)
    assert "✔ “One.”" in text and "› “Two.”" in text and "✔ “Two.”" not in text
    assert "context, quoted from the file line 3; not judged an answer" in text
    md = answer_to_markdown(a)
    assert "› “Two.”" in md and "✔ “Two.”" not in md
    js = a.to_json()["segments"]
    assert [s["role"] for s in js] == ["answer", "context"]
    again = answer_from_json(a.to_json())
    assert [s.role for s in again.segments] == ["answer", "context"]


# --- with the relevance model (issue 17: a ✔ answer must answer) -----------------------------

def test_with_the_relevance_model_only_what_it_finds_answering_is_the_answer():
    from dataclasses import replace

    from localrag.answering.generate.extract import ANSWER_MODEL_RELATIVE

    quotes = [replace(_q(0.80, 0), answers=0.90), replace(_q(0.79, 10), answers=0.65),
              replace(_q(0.95, 20), answers=0.30), replace(_q(0.6, 25, "after"), answers=0.30)]
    assert ANSWER_MODEL_RELATIVE * 0.90 <= 0.65
    # the scorer's best (0.95) is context: the model gives it 0.30, under the floor
    assert answer_roles(quotes, floor=0.5) == [True, True, False, False]
    # no quote the model finds answering: none is shown as the answer, not even the best
    none = [replace(_q(0.8, 0), answers=0.3), replace(_q(0.7, 10), answers=0.1)]
    assert answer_roles(none, floor=0.5) == [False, False]
    # by default the quotes' floor (QUOTE_ANSWER_FLOOR, 0.125, for the combined probability),
    # half the best quote's, and at most ANSWER_MAX (2) of them
    from localrag.answering.generate.extract import ANSWER_MAX, QUOTE_ANSWER_FLOOR

    assert (QUOTE_ANSWER_FLOOR, ANSWER_MODEL_RELATIVE, ANSWER_MAX) == (0.125, 0.5, 2)
    default = [replace(_q(0.8, 0), answers=0.30), replace(_q(0.7, 10), answers=0.16),
               replace(_q(0.6, 20), answers=0.14)]
    assert answer_roles(default) == [True, True, False]            # 0.14 < 0.5 x 0.30
    assert answer_roles([replace(_q(0.8, 0), answers=0.12)]) == [False]   # under the floor
    assert answer_roles([replace(_q(0.8, 0), answers=0.13)]) == [True]    # over it (0.125)
    # three that pass: the best two are the answer, the third is context
    three = [replace(_q(0.8, 0), answers=0.40), replace(_q(0.7, 10), answers=0.38),
             replace(_q(0.75, 15, "after"), answers=0.38), replace(_q(0.6, 20), answers=0.36)]
    assert answer_roles(three) == [True, True, True, False]      # the "after" shares its quote's


def _row(**changed: float) -> dict[str, float]:
    row = {"model": -2.0, "model_below_best": -1.0, "scorer": -1.0, "scorer_below_best": -0.5,
           "named": 0.5, "described": 1.0, "passage_best": 0.0, "terms": 0.5, "cos": 0.5, "rank": 1.0}
    return {**row, **changed}


def test_a_quotes_answer_probability_weighs_every_signal():
    """ANSWER_COMBINATION: the relevance model, the quote scorer and what the sentence's
    subject line and title name of the question each move it, so a sentence the model likes
    a little more but that names nothing asked about can rank below one that does."""
    from localrag.answering.generate.extract import ANSWER_COMBINATION, answer_probability

    assert set(ANSWER_COMBINATION) - {"bias"} == set(_row())
    base = answer_probability(_row())
    assert answer_probability(_row(model=0.0, model_below_best=0.0)) > base
    assert answer_probability(_row(scorer=1.0, scorer_below_best=0.0)) > base
    assert answer_probability(_row(terms=1.0)) > base
    assert answer_probability(_row(named=1.0)) > base
    assert answer_probability(_row(rank=4.0)) < base          # a later passage
    assert (answer_probability(_row(model=-1.5, terms=0.0, named=0.0))
            < answer_probability(_row(model=-2.0, terms=1.0, named=1.0)))
    assert 0.0 < answer_probability(_row(model=-30.0)) < answer_probability(_row(model=10.0)) < 1.0


def test_answer_probabilities_read_the_candidates_together():
    """The same sentence is less likely the answer beside a much better one: its gap to the
    question's best is a signal of its own."""
    from localrag.answering.generate.extract import (answer_probabilities, candidates_of,
                                                     score_candidates)

    q = "how many standby servers can connect at once?"
    text = ("max_wal_senders (integer)\n\n"
            "Specifies the maximum number of concurrent connections from standby servers.\n\n"
            "Replication slots are described in another section of this manual.")
    cands = candidates_of(q, [text])
    feats, probs = score_candidates(q, [text], cands, _fake_embed)
    alone = answer_probabilities(q, [text], ["wal"], cands, feats, probs, [0.3] * len(cands))
    beside = answer_probabilities(q, [text], ["wal"], cands, feats, probs,
                                  [0.3] + [0.99] * (len(cands) - 1))
    assert len(cands) >= 2 and beside[0] < alone[0]
    assert answer_probabilities(q, [text], None, [], [], [], []) == []
    # without titles the subject line alone names what a sentence is about
    untitled = answer_probabilities(q, [text], None, cands, feats, probs, [0.3] * len(cands))
    assert len(untitled) == len(cands) and all(0.0 < x < 1.0 for x in untitled)
    # a sentence of a passage whose best sentence is far below the best passage's
    other = "Unrelated passage. It talks about bread and ovens at length."
    cands2 = candidates_of(q, [text, other])
    feats2, probs2 = score_candidates(q, [text, other], cands2, _fake_embed)
    second = [k for k, c in enumerate(cands2) if c.passage == 1]
    flat = answer_probabilities(q, [text, other], None, cands2, feats2, probs2, [0.3] * len(cands2))
    lower = answer_probabilities(q, [text, other], None, cands2, feats2, probs2,
                                 [0.3 if c.passage == 1 else 0.9 for c in cands2])
    assert second and all(lower[k] < flat[k] for k in second)


def _fake_embed(texts):
    import zlib

    import numpy as np

    out = []
    for t in texts:
        rng = np.random.default_rng(zlib.crc32(t.encode()))
        out.append(rng.normal(size=16))
    return np.array(out, dtype=np.float32)


def test_select_quotes_takes_the_relevance_models_best_with_title_and_subject():
    from localrag.answering.generate.extract import select_quotes

    text = ("max_wal_senders (integer)\n\n"
            "Specifies the maximum number of concurrent connections from standby servers.\n\n"
            "The default is ten. Sentences about other things fill this passage here.\n\n"
            "Replication slots are described in another section of this manual.")
    seen: list[list[str]] = []

    def answers(question, texts):
        seen.append(list(texts))
        return [0.9 if "maximum number of concurrent" in t else 0.1 for t in texts]

    quotes = select_quotes("how many standby servers can connect at once?", [text], _fake_embed,
                           answers=answers, titles=["wal.html > Replication"])
    main = [q for q in quotes if not q.context]
    assert main[0].span.text.startswith("Specifies the maximum number of concurrent")
    # its probability is the model's 0.9 combined with the quote scorer's signals
    # (extract.answer_probabilities over every candidate the model read)
    from localrag.answering.generate.extract import (answer_probabilities, answer_text,
                                                     candidates_of, score_candidates)

    question = "how many standby servers can connect at once?"
    cands = candidates_of(question, [text])
    feats, probs = score_candidates(question, [text], cands, _fake_embed)
    model = answers(question, [answer_text(text, c.span, "wal.html > Replication") for c in cands])
    want = dict(zip((c.span.text for c in cands), answer_probabilities(
        question, [text], ["wal.html > Replication"], cands, feats, probs, model)))
    assert main[0].answers == pytest.approx(want[main[0].span.text])
    assert main[0].answers == max(want.values())
    assert all(q.answers is not None for q in quotes)
    # the model read the sentence under its passage title and its subject line
    read = next(t for t in seen[0] if "maximum number of concurrent" in t)
    assert read.split("\n")[:2] == ["wal.html > Replication", "max_wal_senders (integer)"]
    assert answer_roles(quotes, floor=0.5)[quotes.index(main[0])] is True


def test_quotes_that_follow_each_other_in_the_file_are_one_excerpt():
    """extract.excerpts: quotes with nothing but white space between them in one passage
    are one excerpt, in the file's order, where the first of them comes (best first);
    a sentence between them, another passage, or a code block after the first keeps them
    apart."""
    from localrag.answering.generate.extract import excerpts

    text = "Alpha one. Beta two.\n\nGamma three. Delta four."
    other = "Alpha one. Beta two."

    def q(p: int, words: str, score: float, **kw) -> Quote:
        src = (text, other)[p]
        start = src.index(words)
        return Quote(p, Span(start, start + len(words), words), score, **kw)

    beta, alpha, gamma = q(0, "Beta two.", 0.9), q(0, "Alpha one.", 0.5), q(0, "Gamma three.", 0.4)
    elsewhere, delta = q(1, "Beta two.", 0.8), q(0, "Delta four.", 0.3)
    groups = excerpts([beta, elsewhere, alpha, delta], [text, other])
    assert [[x.span.text for x in g] for g in groups] == [
        ["Alpha one.", "Beta two."], ["Beta two."], ["Delta four."]]     # Gamma lies between
    assert groups[1][0].passage == 1
    # across a paragraph break, still one excerpt; a code block after a quote ends it
    assert [len(g) for g in excerpts([beta, gamma], [text, other])] == [2]
    with_code = q(0, "Beta two.", 0.9, code=Span(22, 23, "x"))
    assert [len(g) for g in excerpts([with_code, gamma], [text, other])] == [1, 1]
    assert excerpts([], []) == []
    # a quote said without a sentence end (a comment of code) is an excerpt of its own
    code = "        # HTTP method is currently not enforced\n\n    Parameters sent without a value MUST be ignored."
    said = Quote(0, Span(code.index("HTTP"), code.index("enforced") + 8, "HTTP method is currently not enforced"), 0.9)
    rest = code.index("Parameters")
    after = Quote(0, Span(rest, len(code), code[rest:]), 0.5)
    assert [len(g) for g in excerpts([said, after], [code])] == [1, 1]


def test_the_app_shows_and_copies_a_quotes_name_with_it():
    """The TUI's unit line reads `✔ name “sentence”` (one symbol), and `c` copies the name
    line and the sentence as the file has them."""
    from tui.widgets.answer_view import SegmentLine

    seg = Segment(text="Specifies the maximum number of senders.", label="fully",
                  scores=Scores(total=0.8), citation=0, origin="quote", line=5,
                  label_source="quote", role="answer", subject="max_wal_senders ( integer )")
    line = SegmentLine(seg)
    assert line.plain.startswith("✔ max_wal_senders ( integer ) “Specifies the maximum")
    assert line.plain.count("✔") == 1
    assert line.copy_text == "max_wal_senders ( integer )\nSpecifies the maximum number of senders."
    plain = SegmentLine(Segment(text="Plain.", label="fully", scores=Scores(total=0.8), citation=0,
                                origin="quote", line=5, label_source="quote", role="answer"))
    assert plain.copy_text == "Plain."
