"""localrag.answering.label.units: the units one label covers, and that every front end uses them.

Fast tests of the splitting rule (README "Units of an answer"), then both answer engines
against the scripted model, then the CLI text, the JSON and the Markdown export of one
answer with prose, a code block and a list.
"""

from __future__ import annotations

import json
import sys
from pathlib import Path

import pytest

sys.path.insert(0, str(Path(__file__).parent))

from localrag.answering.label.answer import answer_from_json  # noqa: E402
from localrag.answering.label.render import answer_to_markdown, answer_to_text  # noqa: E402
from localrag.answering.label.units import Unit, join_units, split_units  # noqa: E402

CODE_ANSWER = (
    "A dataclass instance is detected with a helper. For example:\n\n"
    "```python\n"
    "def is_dataclass_instance(obj):\n"
    "    return is_dataclass(obj) and not isinstance(obj, type)\n"
    "```\n\n"
    "It returns True for instances only.")


def kinds(text: str) -> list[tuple[str, str]]:
    return [(u.kind, u.text) for u in split_units(text)]


# --- the rule -------------------------------------------------------------------------------

def test_a_code_block_is_one_unit_with_its_lines_and_indentation():
    units = split_units(CODE_ANSWER)
    assert [u.kind for u in units] == ["sentence", "sentence", "code", "sentence"]
    code = units[2]
    assert code.text == ("```python\ndef is_dataclass_instance(obj):\n"
                         "    return is_dataclass(obj) and not isinstance(obj, type)\n```")
    assert code.plain == ("def is_dataclass_instance(obj):\n"
                          "    return is_dataclass(obj) and not isinstance(obj, type)")
    assert [u.starts_block for u in units] == [False, False, True, True]
    assert join_units(units) == CODE_ANSWER          # nothing lost, nothing reordered


def test_code_without_fences_is_still_one_unit():
    # reST literal block ("::"), reST code directive, indented block, AsciiDoc listing
    assert kinds("Run this::\n\n    git stash\n    git stash pop\n\nDone.") == [
        ("sentence", "Run this:"), ("code", "```\ngit stash\ngit stash pop\n```"),
        ("sentence", "Done.")]
    assert kinds(".. code-block:: python\n   :linenos:\n\n   for x in y:\n       print(x)\n") == [
        ("code", "```python\nfor x in y:\n    print(x)\n```")]
    assert kinds("Like so.\n\n    make test\n") == [
        ("sentence", "Like so."), ("code", "```\nmake test\n```")]
    assert kinds("Example:\n\n------------\n$ git add .\n$ git commit\n------------\n") == [
        ("sentence", "Example:"), ("code", "```\n$ git add .\n$ git commit\n```")]
    # ~~~ fences, and a fence inside the code longer than three backticks
    assert kinds("~~~sh\necho ```\n~~~") == [("code", "````sh\necho ```\n````")]


def test_markup_fragments_are_never_units():
    # what real use showed: "✘ .. [2]" and "✘ code::" as sentences of the answer
    text = ("Use a helper.\n\n.. [2]\n\n.. code:: python\n\n   print(1)\n\n"
            ".. note:: Indented text counts.\n\n::\n\nEnd. [3]\n\n---\n\n- \n")
    assert kinds(text) == [
        ("sentence", "Use a helper."),
        ("code", "```python\nprint(1)\n```"),
        ("sentence", "Indented text counts."),
        ("sentence", "End. [3]"),               # a letterless piece joins its sentence
    ]
    assert all(u.kind != "sentence" or any(c.isalpha() for c in u.text)
               for u in split_units(text))
    # a directive's indented body is prose, not code
    assert kinds(".. note::\n\n    Remember to commit.") == [("sentence", "Remember to commit.")]
    # a bare number is still an answer
    assert kinds("42.") == [("sentence", "42.")]


def test_a_list_item_is_one_unit_with_everything_under_it():
    text = ("Steps:\n\n1. Open the file. Check it.\n2. Stage it:\n   ```sh\n   git add f\n   ```\n"
            "3. Commit\n   with a message.\n   - sub point\n\n- loose item\n\n  second paragraph\n")
    units = split_units(text)
    assert [(u.kind, u.starts_block) for u in units] == [
        ("sentence", False), ("list_item", True), ("list_item", False), ("list_item", False),
        ("list_item", True)]
    assert units[1].text == "1. Open the file. Check it."      # not two sentences
    assert units[2].text == "2. Stage it:\n   ```sh\n   git add f\n   ```"
    assert units[3].text == "3. Commit\n   with a message.\n   - sub point"
    assert units[3].plain == "Commit with a message. - sub point"
    assert units[4].text == "- loose item\n\n  second paragraph"
    # "2024." at the start of a wrapped line is prose, not a list
    assert [u.kind for u in split_units("We moved in\n2024. It was hot.")] == ["sentence"] * 2


def test_headings_stand_alone_and_sentences_split_as_before():
    units = split_units("Setup\n=====\n\n## Linux ##\n\nDr. Okafor came. (It was late.) Then")
    assert [(u.kind, u.text) for u in units] == [
        ("sentence", "# Setup"), ("sentence", "## Linux"), ("sentence", "Dr. Okafor came."),
        ("sentence", "(It was late.)"), ("sentence", "Then")]
    assert units[2].plain == "Dr. Okafor came." and units[0].plain == "Setup"
    assert join_units(units) == "# Setup\n\n## Linux\n\nDr. Okafor came. (It was late.) Then"


def test_finished_units():
    assert Unit("code", "```sh\nls\n```").finished
    assert not split_units("```sh\nls -l\n")[0].finished           # cut-off code
    assert split_units("```sh\nls -l\n")[0].text == "```sh\nls -l"
    assert Unit("sentence", "It is done.").finished
    assert not Unit("sentence", "It is").finished
    assert Unit("list_item", "- a thing.").finished and not Unit("list_item", "- a").finished


# --- both engines deliver units -----------------------------------------------------------------

def test_instruct_engine_delivers_a_code_block_as_one_segment():
    from test_instruct_engine import (ASSISTANT, PASSAGES, StubCritic, config, retriever)

    from localrag.answering.generate.instruct import InstructEngine
    from models.scripted import EOS, ScriptedModel

    model = ScriptedModel(reflection=False, n_ctx=4096, name="scripted-instruct")
    model.script([{p: 0.9} for p in model.pieces(CODE_ANSWER)] + [{EOS: 1.0}],
                 after=ASSISTANT, contains="Okafor")

    class Recording(StubCritic):
        judged: list[str] = []

        def support(self, sentences, passage):
            self.judged += list(sentences)
            return super().support(sentences, passage)

    critic = Recording(support={("calendar.md", "helper"): "fully",
                                ("calendar.md", "isinstance"): "partially"})
    ans = InstructEngine(model, config=config(), critic=critic).answer(
        "How?", retrieve=retriever(PASSAGES[:1]))
    # every unit was judged; those the critic rejects ("none") are left out of the answer
    units = split_units(CODE_ANSWER)
    assert [u.kind for u in units] == ["sentence", "sentence", "code", "sentence"]
    assert all(s.text in [u.text for u in units] for s in ans.segments)   # no fragments
    code = [s for s in ans.segments if s.kind == "code"]
    assert len(code) == 1 and code[0].text == units[2].text
    assert code[0].label == "partially" and code[0].citation == 0
    # the critic judged the code itself, without the fences
    assert units[2].plain in critic.judged
    assert not any("```" in s for s in critic.judged)


def test_instruct_engine_drops_cut_off_code_at_max_tokens():
    from localrag.answering.generate.instruct import answer_sentences

    cut = "Use this:\n\n```python\ndef f():\n    ret"
    assert answer_sentences(cut, "How?", complete=False) == ["Use this:"]
    assert answer_sentences(cut + "urn 1\n```", "How?", complete=False) == [
        "Use this:", "```python\ndef f():\n    return 1\n```"]


def test_selfrag_engine_delivers_a_code_block_as_one_segment():
    from selfrag_helpers import FULL, RELEVANT, Retriever, engine, passage, question_model

    m = question_model()
    m.on_passage("helper", isrel=RELEVANT, text=CODE_ANSWER, issup=FULL)
    ans = engine(m).answer("How do I detect a dataclass instance?",
                           retrieve=Retriever([passage(1, "the helper text")]))
    assert [s.kind for s in ans.segments] == ["sentence", "sentence", "code", "sentence"]
    assert ans.segments[2].text.startswith("```python\ndef is_dataclass_instance(obj):\n    return")
    assert {s.label for s in ans.segments} == {"fully"}
    assert ans.text == CODE_ANSWER


# --- CLI, JSON and export agree ---------------------------------------------------------------

def test_cli_json_and_export_show_the_same_units():
    from tui_fakes import MARKDOWN_ANSWER, canned_markdown_answer

    answer = canned_markdown_answer("How do I stash?")
    units = split_units(MARKDOWN_ANSWER)
    data = json.loads(json.dumps(answer.to_json()))
    assert [(s["kind"], s["text"], s["starts_block"]) for s in data["segments"]] == [
        (u.kind, u.text, u.starts_block) for u in units]
    assert data["answer"] == MARKDOWN_ANSWER
    again = answer_from_json(data)                    # a saved chat keeps its units
    assert [(s.kind, s.text, s.starts_block) for s in again.segments] == [
        (u.kind, u.text, u.starts_block) for u in units]

    text = answer_to_text(answer)
    lines = text.splitlines()
    # one line per unit; the code keeps its lines and indentation, under one header
    assert "✔ code (sh) [1]  (fully supported):" in lines
    at = lines.index("✔ code (sh) [1]  (fully supported):")
    assert lines[at + 1:at + 4] == ['    git stash push -m "wip"', "    git stash list",
                                    "        # indented: stash@{0}"]
    assert "✘ 1. **Save** the work with `git stash`. [1]  (not supported)" in lines
    assert "○ That is all.  (from the model's own knowledge)" in lines
    assert sum(line[:1] != "" and line[0] in "✔◐✘○" for line in lines) == len(units)

    md = answer_to_markdown(answer)
    assert "✔ code [^1] *(fully supported)*\n\n```sh\ngit stash push" in md
    assert "1. ✘ **Save** the work with `git stash`. [^1] *(not supported)*\n" \
           "2. ✔ Bring it back" in md
    assert ("✔ Use `git stash` to put your changes aside. [^1] *(fully supported)*\\\n"
            "◐ Run it in the repository: [^1] *(partially supported)*") in md
    assert sum(md.count(s) for s in "✔◐✘○") == len(units)
    assert md.count("```") == 2


def test_instruct_answer_drops_a_looping_list():
    """Real SmolLM2 output on the git docs: numbered items repeating one text."""
    from localrag.answering.generate.instruct import answer_sentences

    looped = ("1. Use git init to create a repository.\n"
              "2. Use the git clone command to clone the repository.\n"
              "3. Use the git clone command to clone the repository.\n"
              "4. Use the git clone command to clone the repository.\n")
    assert answer_sentences(looped, "How?") == [
        "1. Use git init to create a repository.",
        "2. Use the git clone command to clone the repository."]


def test_a_whole_code_block_is_judged_by_its_lines_not_dropped_as_a_code_fragment():
    from localrag.answering.generate.instruct import code_block_judgement
    from localrag.answering.judge.critics import SupportJudgement

    passage = "notes.md > Stash\nTo stash your work:\n\n    git stash push -m wip\n    git stash pop\n"
    noise = SupportJudgement(0.0, 0.0, 1.0, "none", noise="code")
    block = split_units("```\ngit stash push -m wip\ngit stash pop\n```")[0]
    assert block.kind == "code"
    assert code_block_judgement(block, noise, passage).label == "fully"
    # some lines the passage's, one not: commands cannot be checked by overlap: abstain
    mixed = split_units("```\ngit stash push -m wip\ngit stash apply --index\n```")[0]
    judged = code_block_judgement(mixed, noise, passage)
    assert judged.label == "unchecked" and judged.noise is None
    # no code line of the block is in the passage: an invented command, not supported
    invented = split_units("```\n# stash it all\ngit stash --everything\n```")[0]
    assert code_block_judgement(invented, noise, passage).label == "none"
    # a block that only echoes the passage's title line is no command
    title = split_units("```\nnotes.md > Stash\n```")[0]
    assert code_block_judgement(title, noise, passage).label == "none"
    # the passage's prose copied into a fence (SmolLM2 does it) is no command: abstain
    prose = split_units("```\nTo stash your work:\n```")[0]
    assert prose.kind == "code" and code_block_judgement(prose, noise, passage).label == "unchecked"
    # a bare command line inside prose is still a code fragment: noise stays noise
    line = split_units("git stash pop")[0]
    assert line.kind == "sentence" and code_block_judgement(line, noise, passage) is noise


def test_a_passage_score_reads_as_relevance_only_when_relevance_is_checked():
    """An unchecked score orders the passages; it must not read as a relevance figure next
    to "relevance not checked" (the sources list showed "rel 1.00  relevance not checked")."""
    from indexer.records import Passage
    from localrag.answering.label.answer import PassageJudgement
    from localrag.answering.label.render import relevance_words
    from tui.widgets.answer_view import source_text

    p = Passage(1, "/notes/a.md", "a.md", "Text.", 1, 1, None, 0, 5, 0.5)
    assert relevance_words(PassageJudgement(p, 0.87, None)) == "score 0.87, relevance not checked"
    assert relevance_words(PassageJudgement(p, 0.87, True)) == "relevance 0.87"
    assert relevance_words(PassageJudgement(p, 0.12, False)) == "relevance 0.12, judged irrelevant"
    # the relevance model's verdict says what it judged: whether the passage holds the answer
    assert (relevance_words(PassageJudgement(p, 0.61, True, verdict="answers"))
            == "answer probability 0.61, judged to hold the answer")
    assert (relevance_words(PassageJudgement(p, 0.04, False, verdict="answers"))
            == "answer probability 0.04, judged not to hold the answer")

    class _Answer:
        passages = [PassageJudgement(p, 1.0, None)]

    shown = source_text(_Answer(), 0).plain
    assert "score 1.00, relevance not checked" in shown and " rel " not in shown


@pytest.mark.parametrize("text, shown", [
    ("max_wal_senders ( integer )", "`max_wal_senders ( integer )`"),
    ("--[no-]force-with-lease:", "`--[no-]force-with-lease:`"),
    ("use `git log`:", "``use `git log`:``"),            # a longer run around the one inside
    ("`HOME`", "`` `HOME` ``"),                            # a space where it starts with one
    ("two\n  lines", "`two lines`"),                       # always one line
])
def test_inline_code_holds_any_term_line(text, shown):
    from localrag.answering.label.units import inline_code

    assert inline_code(text) == shown
