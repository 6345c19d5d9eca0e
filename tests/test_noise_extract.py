"""Noise detection (localrag.answering.judge.noise) and extractive quotes (localrag.answering.generate.extract): pure text
logic, with a deterministic bag-of-words embedding where one is needed (the real
embedding model is exercised by tests/test_critics.py and the end-to-end tests)."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest

from localrag.answering.judge import lexical
from localrag.answering.generate.extract import fit_window, line_at, select_quotes, sentence_spans
from localrag.answering.judge.noise import noise_kind


@pytest.mark.parametrize("sentence, kind", [
    # the failure kinds issue 9 lists, as SmolLM2 wrote them on real documentation
    ("enum.rst.txt: enum.rst.txt: enum.rst.txt: enum.rst.txt:", "degenerate"),
    ("doctest::", "markup"),
    ("_sqlite3-howto-row-factory:", "markup"),
    ("--keep-index::", "markup"),
    ("1.", "markup"),
    (".. note::", "markup"),
    ("----------", "markup"),
    ("git stash pop --index", "code"),
    ("echo 1 > /proc/sys/vm/drop_caches", "code"),
    ("int foo(void);", "code"),
    ("Using only this note, answer the question: how?", "echo"),
    ("The answer is:", "filler"),
    ("Here's how to do it:", "filler"),
    ("I hope this helps.", "filler"),
    ('"git bisect" details', "fragment"),
    ("Stash entries", "fragment"),
    # cut before its end (a model's sentence at its token limit; a list's lead-in)
    ("The integrity of all package files is", "fragment"),
    ("automatically by installing the keyring with the latest base-files package, or", "fragment"),
    ("Selects the schema, the table and", "fragment"),
])
def test_noise_kinds(sentence, kind):
    assert noise_kind(sentence) == kind


@pytest.mark.parametrize("sentence", [
    "Use git stash when you want to record the current state of the working directory.",
    "The `--index` option tries to reinstate the index as well.",
    "Values beyond 100 can be considered.",
    "Run git gc.",
    "Read the section on how to set up replication before you begin",   # no stop, a full clause
    "Make sure that the keyring package is installed and up to date.",
    # no stop, yet whole: a flag or file name ending in a letter, a closing preposition, code
    "To list hidden files as well, run ls -a",
    "To stage every change, including deletions, use git add -A",
    "Link the program statically against libfoo.a",
    "This is exactly what the --no-verify option is for",
    "Use whichever editor you are comfortable with",
    "In Rust you declare an immutable binding with let x = 5;",
])
def test_meaningful_sentences_are_not_noise(sentence):
    assert noise_kind(sentence) is None


def test_repeats_and_question_echoes_need_their_context():
    first = "The stash is kept when the merge conflicts."
    again = "The stash is kept when the merge has conflicts."
    assert noise_kind(again) is None
    assert noise_kind(again, earlier=[first]) == "repeat"
    q = "Is my stash gone after a conflict?"
    assert noise_kind("Is my stash gone after a conflict?", question=q) == "echo"


def test_copied_runs_tell_a_copy_from_a_recombination():
    passage = ("The global interpreter lock is held by the current thread. "
               "The import lock is global and protects imports.")
    copy = lexical.copy_coverage("The global interpreter lock is held by the current thread.",
                                 passage)
    assert copy.verbatim and copy.runs == 1
    rewrite = lexical.copy_coverage(
        "The global interpreter lock is the global import lock that is held by the "
        "current thread.", passage)
    assert rewrite.runs == 2 and rewrite.longest < 0.5


def test_sentence_spans_keep_offsets_and_lines():
    text = "First line of text.\nIt wraps here. Second\nsentence ends.\n\nNew paragraph."
    spans = sentence_spans(text)
    assert [s.text for s in spans] == ["First line of text.", "It wraps here.",
                                       "Second sentence ends.", "New paragraph."]
    for s in spans:
        assert " ".join(text[s.start:s.end].split()) == s.text
    assert [line_at(text, s.start, 10) for s in spans] == [10, 11, 11, 14]
    assert line_at(text, 0, None) is None


def test_a_numbered_title_standing_alone_is_no_sentence():
    """A typeset PDF's section heading, set apart by the parser (tests/test_pdf_layout.py),
    is never quoted, even as a question; a sentence that starts with a number is."""
    text = ("7.33 Why are powers of negative numbers wrong?\n\nUsers are sometimes surprised by "
            "the value returned.\n\n1.5 GB of disk space is needed.\n\n3 files are read first.\n\n"
            "B.1 Invoking R from the command line\n\nR accepts these options.\n"
            "7.34 Why? Wrapped into a paragraph, a line is read as its text.")
    assert [s.text for s in sentence_spans(text)] == [
        "Users are sometimes surprised by the value returned.", "1.5 GB of disk space is needed.",
        "3 files are read first.", "R accepts these options.", "7.34 Why?",
        "Wrapped into a paragraph, a line is read as its text."]


def test_an_faqs_numbered_question_is_no_sentence():
    """zsh's FAQ numbers its questions with a colon ("3.4: How do I ...?"): one was quoted
    with the first sentence of its answer as one ✔ unit and judged noise (zsh-045). A
    sentence after a number and a colon inside a paragraph is still one."""
    text = ("3.4: How do I turn off spelling correction/globbing for a single command?\n\nIn the "
            "first case, you presumably have setopt correctall in an initialisation file.\n\n"
            "3.8: Why do the cursor (arrow) keys not work? (And other terminal oddities.)\n\n"
            "The cursor keys send different codes depending on the terminal.\n\n"
            "Note 2: the keys are read as typed.")
    assert [s.text for s in sentence_spans(text)] == [
        "In the first case, you presumably have setopt correctall in an initialisation file.",
        "The cursor keys send different codes depending on the terminal.",
        "Note 2: the keys are read as typed."]


def test_sentence_offsets_match_the_regex_search_they_replace():
    """_sentences finds each sentence right after the last one without compiling a pattern
    per sentence; its spans are the ones the regex search (words joined by \\s+, from the
    last end) gives, through runs of spaces, tabs, non-breaking spaces and newlines."""
    import re

    from localrag.answering.generate.extract import _sentences, _words_at

    text = ("  Lead  in\tsentence one.\u00a0Then   two,\n  wrapped (e.g. here) and done.\n"
            "Three?  Four: a.b.c is fine!")
    spans = _sentences(text)
    pos, expected = 0, []
    for sentence in lexical.split_sentences(text):
        m = re.compile(r"\s+".join(re.escape(w) for w in sentence.split())).search(text, pos)
        expected.append((m.start(), m.end(), sentence))
        pos = m.end()
    assert [(s.start, s.end, s.text) for s in spans] == expected
    assert len(spans) == 4
    # words that are not next: None (the caller searches further on), never a wrong span
    assert _words_at("alpha beta gamma", 0, ["beta"]) is None
    assert _words_at("alpha beta", 0, ["alphabeta"]) is None
    assert _words_at("alpha beta", 0, ["alpha", "beta"]) == (0, 10)
    assert _words_at("alphabeta", 0, ["alpha", "beta"]) is None      # a space is required


def _bag_embed(texts):
    """Deterministic bag-of-words vectors: cosine = shared words."""
    vocab: dict[str, int] = {}
    rows = []
    for t in texts:
        v = np.zeros(256)
        for w in lexical.content_words(t):
            v[hash(w) % 256] += 1.0
        rows.append(v / (np.linalg.norm(v) or 1.0))
    return np.stack(rows)


def test_select_quotes_picks_the_answering_sentence_and_skips_noise():
    passages = [
        "DESCRIPTION\n-----------\nUse git stash when you want to record the "
        "current state of the working directory. The stash list shows entries.",
        "Runs a number of housekeeping tasks within the current repository.",
    ]
    quotes = select_quotes("How do I record the current state of my working directory?",
                           passages, _bag_embed, max_quotes=1)
    assert len(quotes) == 1 and quotes[0].passage == 0
    assert quotes[0].span.text.startswith("Use git stash when")    # not the rule line
    # an irrelevant passage is never quoted
    none = select_quotes("How do I record the current state?", passages, _bag_embed,
                         relevance=[0.1, 0.9], max_quotes=2)
    assert all(q.passage == 1 for q in none)


def test_fit_window_keeps_the_quote_and_its_neighbours_within_budget():
    text = " ".join(f"Sentence number {i} is here." for i in range(20))
    spans = sentence_spans(text)
    count = lambda t: len(t.split())  # noqa: E731
    fitted = fit_window(text, [spans[10]], 16, count)
    assert "number 10 " in fitted and count(fitted) <= 16
    assert fitted in text                       # a verbatim slice
    assert "number 11 " in fitted               # the next sentence before the one before


def test_a_quoted_sentence_brings_the_code_block_it_introduces():
    """git-init.txt's EXAMPLES as the index reads it (AsciiDoc cleaned: the listing's
    "----" lines blank, its lines kept as written): the sentence ending in ":" is quoted
    with its whole listing, callouts gone, at the listing's own offsets."""
    from indexer.parsers import parse_bytes
    from localrag.answering.generate.extract import code_after

    raw = ("EXAMPLES\n--------\n\nStart a new Git repository for an existing code base::\n+\n"
           "----------------\n$ cd /path/to/my/codebase\n$ git init      <1>\n"
           "$ git add .     <2>\n----------------\n+\n<1> Create a .git directory.\n"
           "<2> Add all existing files to the index.\n\nSee linkgit:git-add[1] for more.\n"
           "include::config/init.txt[]\n")
    text = parse_bytes(raw.encode(), ext=".txt", name="git-init.txt").text
    assert text.count("\n") == raw.count("\n")
    quotes = select_quotes("How do I start a git repository for an existing code base?",
                           [text], _bag_embed, max_quotes=1)
    assert quotes[0].span.text == "Start a new Git repository for an existing code base:"
    code = quotes[0].code
    assert code is not None
    assert code.text == "$ cd /path/to/my/codebase\n$ git init\n$ git add ."
    assert text[code.start:code.end].startswith("$ cd /path/to/my/codebase")
    assert line_at(text, code.start, 1) == 7            # the file's line of "$ cd ..."
    # a sentence ending in ":" before prose, a list or an option term brings nothing
    for other in ("The options are the following:\n\n- the first one;\n- the second one.\n",
                  "It works like this:\nyou run it, and it answers.\n",
                  "-b <branch-name>:\n--initial-branch=<branch-name>:\n"):
        span = sentence_spans(other)[0]
        assert code_after(other, span) is None, other
    # an indented literal block (reST "::"), blank line inside, dedented
    rst = ("To clear the bits for all pages:\n\n    > echo 1 > /proc/PID/clear_refs\n\n"
           "    > cat /proc/PID/smaps\n\nThat is all.\n")
    block = code_after(rst, sentence_spans(rst)[0])
    assert block is not None
    assert block.text == "> echo 1 > /proc/PID/clear_refs\n\n> cat /proc/PID/smaps"
    # a Markdown fenced block, whole: blank lines inside it kept, its fence lines not
    # quoted (node's writing-tests.md; cut at its first blank line it was "```js" and
    # "'use strict';" alone)
    md = ("A test that would require internal/freelist could start like this:\n\n```js\n"
          "'use strict';\n\n// Flags: --expose-internals\n\nrequire('../common');\n```\n\n"
          "In specific scenarios it may be useful.\n")
    block = code_after(md, sentence_spans(md)[0])
    assert block is not None
    assert block.text == "'use strict';\n\n// Flags: --expose-internals\n\nrequire('../common');"
    assert md[block.start:block.end] == block.text
    assert line_at(md, block.start, 1) == 4
    # a passage that ends inside a fence (its chunk was cut there): the lines it holds
    cut = "Run it like this:\n\n```sh\nmake\n\nmake install\n"
    assert code_after(cut, sentence_spans(cut)[0]).text == "make\n\nmake install"
    # a fence inside a list item is indented with the item; the block comes dedented
    item = "* Build it like this:\n\n    ```sh\n    make\n\n    make install\n    ```\n\n* Then run it.\n"
    lead = next(s for s in sentence_spans(item) if s.text.endswith("like this:"))
    assert code_after(item, lead).text == "make\n\nmake install"


def test_a_code_block_that_spaces_its_statements_is_quoted_whole():
    """CMake's Qt manual as the index reads it: its <pre> example puts a blank line between
    statements, and the quote's code was its first line alone, judged noise (cmake-019). A
    blank line between code lines no longer ends the block; prose, or the lead-in of the next
    example, still does, and a spaced block that reads as no code is cut at its first gap."""
    from localrag.answering.generate.extract import code_after

    text = ("Qt 4 and Qt 5 may be used together in the same CMake buildsystem:\n\n"
            "cmake_minimum_required(VERSION 3.8.0 FATAL_ERROR)\n\nproject(Qt4And5)\n\n"
            "set(CMAKE_AUTOMOC ON)\n\nfind_package(Qt5 COMPONENTS Widgets DBus REQUIRED)\n"
            "add_executable(publisher publisher.cpp)\n\nThe Qt 4 and 5 targets differ.\n")
    block = code_after(text, sentence_spans(text)[0])
    assert block is not None
    assert block.text == ("cmake_minimum_required(VERSION 3.8.0 FATAL_ERROR)\n\nproject(Qt4And5)\n\n"
                          "set(CMAKE_AUTOMOC ON)\n\nfind_package(Qt5 COMPONENTS Widgets DBus REQUIRED)\n"
                          "add_executable(publisher publisher.cpp)")
    assert text[block.start:block.end] == block.text
    two = ("GNU cp(1) and openSSH scp(1):\n\n# cd ./source; cp -a . /dest\n\nGNU tar(1):\n\n"
           "# tar -cf - . | (cd /dest; tar -xf -)\n")
    assert code_after(two, sentence_spans(two)[0]).text == "# cd ./source; cp -a . /dest"


def test_a_definition_list_under_a_lead_in_is_no_code_block():
    """zsh's prompt escapes as the HTML reader writes them: a sentence ending in ":" over an
    indented definition list. Its first term, "%f:", was quoted alone as the sentence's code
    (zsh-034, judged noise); code ending in ":" with its body right under it, or code after
    the blank line, is still code."""
    from localrag.answering.generate.extract import code_after

    text = ("    Various zsh extensions provide numbers with no leading zero or space if the number "
            "is a single digit:\n\n    %f:\n\n        a day of the month\n\n    %K:\n\n"
            "        the hour of the day on the 24-hour clock\n")
    assert code_after(text, sentence_spans(text)[0]) is None
    python = "Define it like this:\n\n    def area(r):\n        return 3.14 * r * r\n"
    assert code_after(python, sentence_spans(python)[0]).text == "def area(r):\n    return 3.14 * r * r"
    spaced = "The class looks like this:\n\n    class Point:\n\n        x: int = 0\n"
    assert code_after(spaced, sentence_spans(spaced)[0]) is not None


def test_a_quote_comes_with_the_sentences_it_cannot_be_read_without():
    """git-bisect.txt's wording: "They make it stop ..." is chosen; the sentence it refers
    back to comes before it, and a following "Otherwise ..." after it, both from the same
    paragraph and in file order; the next paragraph's "This ..." does not."""
    from localrag.answering.generate.extract import reading_context, candidate_units

    text = ("Exit codes above 127 are special for the run script. They make it stop "
            "immediately the bisection process. Otherwise the bisection goes on.\n\n"
            "This paragraph is about something else entirely.")
    units = candidate_units(text)
    chosen = units[1]
    assert chosen.text.startswith("They make it stop")
    before, after = reading_context(text, units, chosen)
    assert before is not None and before.text.startswith("Exit codes above 127")
    assert after is not None and after.text == "Otherwise the bisection goes on."
    before, after = reading_context(text, units, units[2])
    assert before is not None and before.text.startswith("They make it stop")
    assert after is None                       # "This paragraph ..." is a new paragraph
    before, after = reading_context(text, units, units[0])
    assert before is None                      # it does not open with a back-reference
    assert after is not None and after.text.startswith("They make it stop")
    # a relative clause set as a sentence of its own (oauthlib's common.py) reads with the
    # sentence it completes; a question opening with "Which" refers back to nothing
    text = ("Tokens should not be guessable and entropy when generating the random characters "
            "is important. Which is why SystemRandom is used instead of the default random.choice "
            "method. Which length should a token have? Thirty characters are enough.")
    units = candidate_units(text)
    _, after = reading_context(text, units, units[0])
    assert after is not None and after.text.startswith("Which is why SystemRandom")
    before, _ = reading_context(text, units, units[1])
    assert before is not None and before.text.startswith("Tokens should not be guessable")
    before, after = reading_context(text, units, next(u for u in units if u.text.startswith("Which length")))
    assert before is None
    # select_quotes: the chosen one once, its context around it, marked as context
    quotes = select_quotes("Does bisect run stop when the script exits above 127?",
                           [text], _bag_embed, max_quotes=1)
    chosen = [q for q in quotes if not q.context]
    assert len(chosen) == 1
    texts = [q.span.text for q in quotes]
    assert texts == sorted(texts, key=text.index)            # file order around it
    assert len(set(texts)) == len(texts)
    for q in quotes:
        assert text[q.span.start:q.span.end].split() == q.span.text.split()
        assert q.context in ("", "before", "after")


def test_a_quote_opening_with_a_bare_condition_comes_with_what_it_refers_to():
    """zsh's word-style description as the index reads it: "If set, it gives a count of
    characters ..." says what "it" is only in the sentence before it (the skip-chars
    style); a condition with a noun of its own ("When Git updates the working directory,
    it ...") needs nothing before it."""
    from localrag.answering.generate.extract import reading_context, candidate_units

    text = ("    The style skip-chars is mostly useful for transpose-words and similar functions. "
            "If set, it gives a count of characters starting at the cursor position which will "
            "not be considered part of the word and are treated as space, regardless of what "
            "they actually are.")
    units = candidate_units(text)
    chosen = next(u for u in units if u.text.startswith("If set, it gives"))
    before, _ = reading_context(text, units, chosen)
    assert before is not None and before.text.startswith("The style skip-chars is mostly useful")
    _, after = reading_context(text, units, before)
    assert after is not None and after.text.startswith("If set, it gives")
    text = ("Sparse checkout reads this file. When Git updates the working directory, it updates "
            "the skip-worktree bits in the index based on this file.")
    units = candidate_units(text)
    before, _ = reading_context(text, units, next(u for u in units if u.text.startswith("When Git")))
    assert before is None


def test_reading_context_skips_noise_and_code_blocks():
    from localrag.answering.generate.extract import reading_context, candidate_units

    text = ("Run the command like this:\n\n    $ make -j4 all\n\nThis builds everything.")
    units = candidate_units(text)
    intro = next(u for u in units if u.text.startswith("Run the command"))
    _, after = reading_context(text, units, intro)
    assert after is None       # its code block follows it, not the next sentence
    for between in ("\n----\n", "\n\n", "\n+\n"):
        text = f"Set the flag.{between}This enables the cache."
        units = candidate_units(text)
        last = next(u for u in units if u.text.startswith("This enables"))
        before, _ = reading_context(text, units, last)
        assert before is None, between   # a rule, a blank line, a "+": another block
    text = "Set the flag.\nThis enables the cache."
    units = candidate_units(text)
    before, _ = reading_context(text, units, units[1])
    assert before is not None and before.text == "Set the flag."   # a wrapped paragraph


def test_a_listing_of_commands_with_comments_is_never_a_sentence():
    """git-stash.txt's "Testing partial commits" listing, as the index reads it: its
    "$ git add --patch foo   # add just first part to the index" lines glued into one long
    "sentence" with words enough to pass for prose, and could be quoted as one. Prompt
    lines now end sentences; the listing comes only as the code block its intro brings."""
    from indexer.parsers import parse_bytes
    from localrag.answering.generate.extract import candidate_units, code_after

    path = Path(__file__).parent / "data" / "git_docs" / "git-stash.txt"
    text = parse_bytes(path.read_bytes(), ext=".txt", name=path.name).text
    start = text.index("Testing partial commits")
    part = text[start:text.index("Saving unrelated changes", start)]
    units = candidate_units(part)
    assert not any("$ git" in u.text or "# add just" in u.text for u in units)
    intro = next(u for u in units if u.text.startswith("You can use git stash push --keep-index"))
    code = code_after(part, intro)
    assert code is not None and code.text.split("\n")[1].startswith("$ git add --patch foo")


def test_a_unit_without_a_sentence_end_is_never_quoted():
    """Annotators found quotes ending "... unless $HOME itself is on a" (the chunk ended
    mid-sentence), and table cells, captions and list entries quoted as statements
    ("Number of days before a password is going to expire during which the user should be
    warned", "flexible network intrusion detection system (Snort)"), all labelled "fully
    supported". A unit is a candidate only when it ends a sentence (or introduces code)."""
    from localrag.answering.generate.extract import candidate_units

    cut = "The daemon refuses to work on network mounts. It still works unless $HOME itself is on a"
    assert [u.text for u in candidate_units(cut)] == ["The daemon refuses to work on network mounts."]
    whole = "The daemon refuses to work on network mounts. The default is to fall back to a width of 80."
    assert [u.text for u in candidate_units(whole)][-1] == "The default is to fall back to a width of 80."

    cells = ("Number of days before a password is going to expire during which the user should be warned\n\n"
             "flexible network intrusion detection system (Snort)\n\n"
             "The chage command changes the number of days between password changes.")
    assert [u.text for u in candidate_units(cells)] == [
        "The chage command changes the number of days between password changes."]


def test_a_numbered_section_heading_is_never_a_quotes_subject():
    """"1.3.7. Auto-start features of MC" was quoted as code before a sentence below it, as
    if it were the option the sentence describes."""
    from localrag.answering.generate.extract import candidate_units, subject_of

    text = "1.3.7. Auto-start features of the shell\n\nIt starts when you log in."
    (unit,) = candidate_units(text)
    assert subject_of(text, unit) is None
    term = "max_wal_senders (integer)\n\nSpecifies the maximum number of concurrent connections."
    (unit,) = candidate_units(term)
    assert subject_of(term, unit).text == "max_wal_senders (integer)"


def test_a_documentations_note_is_quotable_but_the_prompts_note_is_not():
    """git-http-push(1)'s NOTE paragraph holds the answer to "why does http-push not work
    with my old libcurl?": an admonition's label opens content in a passage, while a model
    that writes "Note (...):" gives the prompt back."""
    from localrag.answering.generate.extract import candidate_units

    text = ("DESCRIPTION\n\nSends missing objects to remote repository, and updates the\n"
            "remote branch.\n\nNOTE: This command is temporarily disabled if your libcurl\n"
            "is older than 7.16, as the combination has been reported\n"
            "not to work and sometimes corrupts repository.\n")
    units = [u.text for u in candidate_units(text, question="http-push libcurl too old")]
    assert units[1].startswith("NOTE: This command is temporarily disabled")
    assert text[text.index("NOTE"):].startswith(units[1][:20])
    assert noise_kind("Note (git-http-push.txt): the command pushes objects.") == "echo"


@pytest.mark.parametrize("sentence, code", [
    ("-Drelocatable=true - Enable application bundle relocation support", False),
    ("--dry-run: Show what would be removed from the index", False),
    ("make install : create and install zstd cli, library and man pages", False),
    ("git stash pop --index", True),                 # a command line, as before
    ("ls -l - foo", True),                           # no description in words
    ("--color=auto - x=1 y=2 z=3", True),            # the description is code too
    ("--28993-- You may be able to write your own handler.", True),    # valgrind's log
    ("[   12.345678] usb 1-1: new high-speed USB device number 2", True),   # the kernel's
    ("[1.5] Added support for reading compressed archives from standard input.", False),
])
def test_a_term_with_its_description_or_a_log_line(sentence, code):
    from localrag.answering.judge.noise import is_code

    assert is_code(sentence) is code


def test_a_sentence_ending_in_i_e_or_e_g_is_quoted_with_its_example_or_not_at_all():
    """"... without the prefix i.e." introduces the example after it, as ":" does: quoted
    alone it is a fragment (judged noise by three annotators on flask's answers, stop 41)."""
    from localrag.answering.generate.extract import candidate_units, code_after

    text = ("Variables can be loaded with a prefix.\n\n    Each is read with a key equal to "
            "the variable's name without the prefix i.e.\n\n    $ export APP_SECRET_KEY=abc\n\n"
            "A paragraph that ends before its example, e.g.\n\nThe settings are read once at start-up.")
    units = {u.text: u for u in candidate_units(text)}
    lead = next(u for t, u in units.items() if t.endswith("without the prefix i.e."))
    assert code_after(text, lead).text == "$ export APP_SECRET_KEY=abc"
    assert not any(t.endswith("its example, e.g.") for t in units)
    assert "The settings are read once at start-up." in units and "Variables can be loaded with a prefix." in units
