"""A lookup's answer quotes the definition it looks up, with its flag (issue 17, point 4).

zsh's "what does [[ -N file ]] test?" found the passage of "-N file:" first (search's pinned
definition) and quoted "In each of the above expressions, if file is of the form
‘/dev/fd/n’ ..." instead of its description, which was quoted, when it was, without its
flag: "true if file exists and its access time is not newer than its modification time"
says "file", the argument, and so read as naming its term line."""

from __future__ import annotations

import zlib
from collections.abc import Sequence

import numpy as np
import pytest

from localrag.answering.generate import extract
from localrag.answering.generate.extract import subject_of

ZSH_TESTS = """12 Conditional Expressions

-w file:

    true if file exists and is writable by current process.

-N file:

    true if file exists and its access time is not newer than its modification time.

In each of the above expressions, if file is of the form ‘/dev/fd/n’, where n is an integer, \
then the test applied to the open file whose descriptor number is n, even if the underlying \
system does not support the /dev/fd directory.

-t fd:

    true if file descriptor number fd is open and associated with a terminal device.

-D:

    controls default completion behavior for the arguments of commands not assigned any special behavior.

VALUE <name>:

    Request the data stored in value named <name>.

-R [ -c ] [ display-string ] [ string ... ]:

    If no strings are given but the -c option is used such a list is cleared.

-W --password:

    In some cases it is worth typing -W to avoid the extra connection attempt.
"""


def _span(text: str, opening: str) -> extract.Span:
    return next(s for s in extract.candidate_units(text) if s.text.startswith(opening))


@pytest.mark.parametrize("opening, subject", [
    ("true if file exists and its access", "-N file:"),
    ("true if file exists and is writable", "-w file:"),
    # a flag alone, or with an argument of two letters, is a name all the same
    ("true if file descriptor number fd", "-t fd:"),
    ("controls default completion behavior", "-D:"),
    # a placeholder is the keyword's argument: "value named <name>" does not name VALUE
    ("Request the data stored in value named", "VALUE <name>:"),
    # a flag in brackets is an optional part of the line, not its name
    ("If no strings are given", "-R [ -c ] [ display-string ] [ string ... ]:"),
])
def test_an_option_with_its_argument_is_named_by_its_flag_alone(opening, subject):
    found = subject_of(ZSH_TESTS, _span(ZSH_TESTS, opening))
    assert found is not None and found.text == subject


def test_a_sentence_that_writes_the_flag_names_it_itself(monkeypatch):
    assert subject_of(ZSH_TESTS, _span(ZSH_TESTS, "In some cases it is worth typing -W")) is None
    # before: the argument's word in the sentence counted as naming the line
    monkeypatch.setattr(extract, "READ_FLAG_NAMES", False)
    for opening in ("true if file exists and its access", "true if file descriptor number fd",
                    "controls default completion behavior", "Request the data stored in value named"):
        assert subject_of(ZSH_TESTS, _span(ZSH_TESTS, opening)) is None, opening


def _hash_embed(texts: Sequence[str]):  # noqa: ANN202
    """Bags of words hashed into 16 dimensions, the same in every process (crc32)."""
    out = np.zeros((len(texts), 16), dtype=np.float32)
    for i, t in enumerate(texts):
        for w in t.lower().split():
            out[i, zlib.crc32(w.encode()) % 16] += 1.0
    return out


def _model(question: str, texts: Sequence[str]) -> list[float]:
    """A relevance model that, as the real one did, ranks the paragraph about every
    expression above the description of -N."""
    return [0.6 if "In each of the above" in t else 0.05 for t in texts]


def _first(question: str) -> str:
    choice = extract.choose_quotes(question, [ZSH_TESTS], _hash_embed, answers=_model,
                                   titles=["Conditional Expressions"])
    return choice.quotes[0].span.text


def test_a_lookup_quotes_the_description_under_the_name_it_looks_up_first(monkeypatch):
    assert _first("what does [[ -N file ]] test?").startswith("true if file exists and its access time")
    # a question in words that names the test is no lookup of it: the model's order stays
    assert _first("why does my backup script see [[ -N file ]] as true right after it reads "
                  "the file").startswith("In each of the above")
    monkeypatch.setattr(extract, "LOOKUP_DEFINITIONS_FIRST", False)
    assert _first("what does [[ -N file ]] test?").startswith("In each of the above")


def test_the_definitions_raised_are_those_of_the_longest_name():
    text = "-N:\n\n    Create a new keymap.\n\n" + ZSH_TESTS
    cands = extract.candidates_of("what does [[ -N file ]] test?", [text])
    said = extract.definitions_first("what does [[ -N file ]] test?", [text], cands, [0.1] * (len(cands) - 1) + [0.9])
    top = max(said)
    raised = [c.span.text for c, p in zip(cands, said) if p == top]
    assert any(t.startswith("true if file exists and its access") for t in raised)
    assert "Create a new keymap." not in raised


BROTLI = [
    # the passage on SetEnv: on the topic of the lookup's words, never writes its name
    "Setting variables\n\nSetEnv sets an environment variable for the request. If you omit the "
    "value argument, the variable is set to an empty string. Environment variables may be "
    "passed from the shell which invoked the httpd process.",
    # the passage that writes the name, its answer not the model's favourite
    "Special purpose variables\n\nSome of the modules read variables of their own. There is an "
    "environment variable no-brotli, set via SetEnv, which will disable brotli compression for "
    "a particular request.",
]


def _brotli_model(question: str, texts: Sequence[str]) -> list[float]:
    """The real model's order for "no-brotli environment variable": SetEnv's sentences first."""
    return [0.95 if "SetEnv sets" in t or "If you omit" in t else 0.01 if "no-brotli" in t else 0.05
            for t in texts]


def _first_of(question: str, passages: Sequence[str], model) -> str:  # noqa: ANN001
    choice = extract.choose_quotes(question, passages, _hash_embed, answers=model,
                                   titles=["env.html"] * len(passages))
    return choice.quotes[0].span.text


def test_a_lookup_quotes_a_passage_that_writes_its_exact_name_first(monkeypatch):
    """No term line defines "no-brotli": the first quote comes from the passage that writes
    the name (extract.LOOKUP_MENTIONS_FIRST); without the rule, SetEnv's sentence."""
    assert _first_of("no-brotli environment variable", BROTLI, _brotli_model).startswith(
        "There is an environment variable no-brotli")
    # a question in words is no lookup: the model's order stays
    assert _first_of("which environment variable turns brotli compression off for one request "
                     "when the module is loaded", BROTLI, _brotli_model).startswith("SetEnv sets")
    monkeypatch.setattr(extract, "LOOKUP_MENTIONS_FIRST", False)
    assert _first_of("no-brotli environment variable", BROTLI, _brotli_model).startswith("SetEnv sets")


def test_the_passages_that_write_the_name_keep_their_own_order():
    """The passage that writes the name keeps its own order: the answer may be a
    sentence that does not repeat the name ("Note that kernels compiled with profiling flags
    will be significantly larger and run slower.")."""
    text = ("GCOV\n\nAlso CONFIG_GCOV_PROFILE_ALL may not be supported on all architectures. Note "
            "that kernels compiled with profiling flags will be significantly larger and run slower.")
    other = "Tracing\n\nThe kernel runs with virtually no overhead when function tracing is disabled."
    q = "does CONFIG_GCOV_PROFILE_ALL make the kernel slower?"
    cands = extract.candidates_of(q, [text, other])
    said = [0.6 if "Note that" in c.span.text else 0.3 if "Also" in c.span.text else 0.8 for c in cands]
    out = extract.mentions_first(q, [text, other], cands, said)
    order = [cands[k].span.text[:10] for k in sorted(range(len(cands)), key=lambda k: -out[k])]
    # the first comes from the passage that writes the name; the rest interleave by scale
    assert order == ["Note that ", "The kernel", "Also CONFI"]
    # the candidates of the passage that writes the name keep their probabilities
    assert [p for p, c in zip(out, cands) if c.passage == 0] == [p for p, c in zip(said, cands) if c.passage == 0]


@pytest.mark.parametrize("query, names", [
    ("zsh strftime 2147483647", ["2147483647"]),
    ("what does [##16] do in arithmetic?", ["##16"]),
    ("httpd -DFOREGROUND", ["-DFOREGROUND"]),
    ("what does ProxyAddHeaders do", ["ProxyAddHeaders"]),          # letters that change case
    ("IPREFIX", ["IPREFIX"]),                                        # capitals
    ("when does cmake_language(DEFER) run the deferred call?", ["cmake_language", "DEFER"]),
    ("--enable-mods-shared=most", ["--enable-mods-shared"]),
    ("compctl -C", []),                       # a one-letter flag is an option of many commands
    ("setopt pathdirs", []),                  # plain words
    ("zsh exit code 42", []),                 # a number under three digits
])
def test_the_exact_names_of_a_lookup(query, names):
    from indexer.term_lines import exact_names

    assert exact_names(query) == names


REMOTEIP = ("RemoteIPInternalProxy Directive\n\nThe RemoteIPInternalProxy directive adds one or more "
            "addresses to trust as presenting a valid RemoteIPHeader value of the useragent IP. "
            "Unlike the RemoteIPTrustedProxy directive, any IP address presented in this header, "
            "including private intranet addresses, are trusted when passed from these proxies.\n\n"
            "RemoteIPTrustedProxy Directive\n\nThe RemoteIPTrustedProxy directive adds one or more "
            "addresses to trust as presenting a valid RemoteIPHeader value of the useragent IP.\n\n"
            "Logging\n\nThe useragent IP is logged by the %a format string.")


def _quote(text: str, opening: str, p: float) -> extract.Quote:
    span = next(s for s in extract.candidate_units(text) if s.text.startswith(opening))
    return extract.Quote(0, span, p, answers=p)


def _remoteip_quotes() -> list[extract.Quote]:
    """The real answer's order (round x62b, apacheexact-007): the near name's sentence first."""
    return [_quote(REMOTEIP, "The RemoteIPInternalProxy directive adds", 0.73),
            _quote(REMOTEIP, "The useragent IP is logged", 0.60),
            _quote(REMOTEIP, "The RemoteIPTrustedProxy directive adds", 0.55)]


def test_a_lookup_shows_the_quotes_that_write_its_name_as_the_answer(monkeypatch):
    """"RemoteIPTrustedProxy": the sentence on RemoteIPInternalProxy (a near name) and one that
    names neither are context; the one that writes the name is the answer
    (extract.LOOKUP_MENTIONS_ANSWER). Without the rule, the model's two best are the answer."""
    quotes = _remoteip_quotes()
    eligible = extract.lookup_mentions("RemoteIPTrustedProxy", [REMOTEIP], quotes)
    assert eligible == [False, False, True]
    assert extract.answer_roles(quotes, eligible=eligible) == [False, False, True]
    assert extract.answer_roles(quotes) == [True, True, False]
    # a question in words is no lookup: the rule does not apply
    assert extract.lookup_mentions("which directive makes httpd trust the client address a load "
                                   "balancer in front of it reports", [REMOTEIP], quotes) is None
    monkeypatch.setattr(extract, "LOOKUP_MENTIONS_ANSWER", False)
    assert extract.lookup_mentions("RemoteIPTrustedProxy", [REMOTEIP], quotes) is None


def test_the_best_quote_that_writes_the_name_sets_the_ratio():
    """The ratio of the best (ANSWER_MODEL_RELATIVE) is that of the quotes that may answer:
    "ModMimeUsePathInfo" was context at 0.14 under a sentence at 0.45 that does not write it."""
    text = ("Path info\n\nThe ModMimeUsePathInfo directive is used to combine the "
            "filename with the path_info URL component to apply mod_mime's directives to the "
            "request. If you have a request for /index.php/foo.shtml mod_mime will now treat the "
            "incoming request as /index.php/foo.shtml and directives like AddOutputFilter apply.")
    quotes = [_quote(text, "If you have a request", 0.45), _quote(text, "The ModMimeUsePathInfo", 0.14)]
    eligible = extract.lookup_mentions("what does ModMimeUsePathInfo do?", [text], quotes)
    assert extract.answer_roles(quotes, eligible=eligible) == [False, True]
    assert extract.answer_roles(quotes) == [True, False]


def test_a_description_under_the_term_line_of_the_name_may_answer():
    """"pg_receivewal --synchronous": the description under "--synchronous:" does not write
    the names but says what the option is; a sentence that writes "pg_receivewal" only
    does not outrank it."""
    text = ("--synchronous:\n\n    Flush the WAL data to disk immediately after it has been received. "
            "This option should be specified if the replication client of pg_receivewal is "
            "configured on the server as a synchronous standby.\n\n--no-loop:\n\n    Do not loop "
            "on connection errors. Instead, exit right away with an error.")
    quotes = [_quote(text, "This option should be specified", 0.66),
              _quote(text, "Flush the WAL data", 0.65),
              _quote(text, "Do not loop", 0.64)]
    assert extract.lookup_mentions("pg_receivewal --synchronous", [text], quotes) == [True, True, False]


def test_a_name_in_capitals_is_matched_as_written():
    """"FETCH FIRST ... WITH TIES": "before the first row" does not write the keyword FIRST."""
    from indexer.term_lines import mention_count

    names = ["FETCH", "FIRST", "TIES"]
    assert mention_count(names, "If FETCH runs off the end, the cursor is before the first row.", case=True) == 1
    assert mention_count(names, "If FETCH runs off the end, the cursor is before the first row.") == 2


@pytest.mark.parametrize("query, others, applies", [
    ("RemoteIPTrustedProxy", 0, True),
    ("I2C_RDWR ioctl", 1, True),
    ("flask run --extra-files", 2, True),
    # a lookup that asks something of its own, the name only placing it
    ("RewriteMap rnd: map type", 3, False),
])
def test_a_lookup_with_more_than_its_names_keeps_its_roles(query, others, applies):
    from indexer.term_lines import exact_names, other_words

    assert other_words(query, exact_names(query)) == others
    text = f"{exact_names(query)[0]}\n\nThe {exact_names(query)[0]} entry is here. Another sentence is there."
    quotes = [_quote(text, "Another sentence", 0.5), _quote(text, "The ", 0.4)]
    assert (extract.lookup_mentions(query, [text], quotes) is not None) == applies


def test_the_answer_engine_shows_the_quote_that_writes_the_name_as_the_answer(monkeypatch):
    """The instruct engine (scripted model, scripted relevance model in the real model's order
    for "RemoteIPTrustedProxy"): the sentence on the near name is context, the one that
    writes the name the answer; without the rule, the other way round."""
    import sys
    from pathlib import Path

    sys.path.insert(0, str(Path(__file__).parent))
    from test_instruct_engine import StubCritic, _hash_embed, config, passage, retriever, scripted

    from localrag.answering.generate.instruct import InstructEngine

    doc = passage(0, "mod_remoteip.html", REMOTEIP)

    def answers(question, texts):  # noqa: ANN001, ANN202
        return [0.9 if "The RemoteIPInternalProxy directive adds" in t else
                0.6 if "The RemoteIPTrustedProxy directive adds" in t else 0.01 for t in texts]

    def shown() -> list[str]:
        critic = StubCritic(relevance={"mod_remoteip.html": 0.9})
        ans = InstructEngine(scripted(), config=config(), critic=critic, embed=_hash_embed,
                             answers=answers).answer("RemoteIPTrustedProxy", retrieve=retriever([doc]))
        return [s.text for s in ans.segments if s.origin == "quote" and s.role == "answer"]

    assert any(t.startswith("The RemoteIPTrustedProxy directive adds") for t in shown())
    assert not any("RemoteIPInternalProxy directive adds" in t for t in shown())
    monkeypatch.setattr(extract, "LOOKUP_MENTIONS_ANSWER", False)
    assert any("The RemoteIPInternalProxy directive adds" in t for t in shown())
