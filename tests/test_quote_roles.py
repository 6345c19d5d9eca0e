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

    quotes = [replace(_q(0.80, 0), answers=0.90), replace(_q(0.79, 10), answers=0.60),
              replace(_q(0.95, 20), answers=0.30), replace(_q(0.6, 25, "after"), answers=0.30)]
    assert ANSWER_MODEL_RELATIVE * 0.90 <= 0.60
    # the scorer's best (0.95) is context: the model gives it 0.30, under the floor
    assert answer_roles(quotes, floor=0.5) == [True, True, False, False]
    # no quote the model finds answering: none is shown as the answer, not even the best
    none = [replace(_q(0.8, 0), answers=0.3), replace(_q(0.7, 10), answers=0.1)]
    assert answer_roles(none, floor=0.5) == [False, False]
    # by default the quotes' floor (QUOTE_ANSWER_FLOOR, 0.2, for the combined probability)
    # and half the best quote's
    default = [replace(_q(0.8, 0), answers=0.30), replace(_q(0.7, 10), answers=0.25),
               replace(_q(0.6, 20), answers=0.14)]
    assert answer_roles(default) == [True, True, False]
    assert answer_roles([replace(_q(0.8, 0), answers=0.15)]) == [False]


def test_a_quotes_answer_probability_weighs_the_scorer_beside_the_model():
    """ANSWER_COMBINATION: each signal moves it, so a sentence the model likes a little
    more but the scorer finds far off can rank below one both find good."""
    from localrag.answering.generate.extract import QUOTE_ANSWER_FLOOR, answer_probability

    assert answer_probability(0.9, 0.5) > answer_probability(0.6, 0.5)
    assert answer_probability(0.6, 0.9) > answer_probability(0.6, 0.5)
    assert answer_probability(0.7, 0.05) < answer_probability(0.6, 0.8)
    # the floor sits where a sentence both find likely clears it and one neither does not
    assert answer_probability(0.9, 0.8) >= QUOTE_ANSWER_FLOOR > answer_probability(0.3, 0.2)
    assert 0.0 < answer_probability(0.0, 0.0) < answer_probability(1.0, 1.0) < 1.0


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
    # its probability is the model's 0.9 combined with the quote scorer's for it
    from localrag.answering.generate.extract import answer_probability

    by_scorer = {q.span.text: q.score for q in select_quotes(
        "how many standby servers can connect at once?", [text], _fake_embed, max_quotes=10, relative=0.0)}
    assert main[0].answers == pytest.approx(answer_probability(0.9, by_scorer[main[0].span.text]))
    assert all(q.answers is not None for q in quotes)
    # the model read the sentence under its passage title and its subject line
    read = next(t for t in seen[0] if "maximum number of concurrent" in t)
    assert read.split("\n")[:2] == ["wal.html > Replication", "max_wal_senders (integer)"]
    assert answer_roles(quotes, floor=0.5)[quotes.index(main[0])] is True
