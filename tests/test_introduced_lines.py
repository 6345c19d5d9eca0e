"""Stop 57, from Apache's manual (a corpus left out): a line that the line above it
introduces is no name. An example after "... to a single backend:" or a table's value after
"Module:" had been shown as the name of the paragraph under it ("`RequestReadTimeout
body=10,MinRate=1000` If the client sends data, ..." described the next example; directives'
sentences were named `mod_cache`). A synopsis keeps its name, and so do terms and headings."""

from __future__ import annotations

import pytest

from indexer.parsers import parse_bytes
from localrag.answering.generate import extract
from localrag.answering.generate.extract import sentence_spans, subject_of

EXAMPLES = ("Examples\n\nAllow for 5 seconds to complete the TLS handshake, 10 seconds to receive the "
            "request headers and 30 seconds for receiving the request body:\n\n"
            "RequestReadTimeout handshake=5 header=10 body=30\n\n"
            "Allow at least 10 seconds to receive the request body. If the client sends data, "
            "increase the timeout by 1 second for every 1000 bytes received.")
# apache2-doc's mod/mod_cache.html, as the index reads its directive table
TABLE = ("CacheIgnoreNoLastMod Directive\n\nDescription:\n\nIgnore the fact that a response has "
         "no Last Modified header.\n\nSyntax:\n\nCacheIgnoreNoLastMod On|Off\n\nDefault:\n\n"
         "CacheIgnoreNoLastMod Off\n\nStatus:\n\nExtension\n\nModule:\n\nmod_cache\n\n"
         "Ordinarily, documents without a last-modified date are not cached.")
# cmake-doc's command/add_test.html: a synopsis after its lead-in names what follows
SYNOPSIS = ("This command also supports a simpler, but less flexible, signature:\n\n"
            "add_test(<name> <command> [<arg>...])\n\n"
            "Add a test called <name> with the given command-line.")
TERM = ("The role and meaning of these parameters does not change:\n\n"
        "max_wal_senders ( integer ):\n\n    Specifies the maximum number of concurrent connections.")


def _span(text: str, opening: str):
    return next(s for s in sentence_spans(text) if s.text.startswith(opening))


@pytest.mark.parametrize("text, opening", [(EXAMPLES, "Allow at least"),
                                           (TABLE, "Ordinarily, documents")])
def test_a_line_introduced_by_the_line_above_names_nothing(text, opening, monkeypatch):
    span = _span(text, opening)
    assert subject_of(text, span) is None
    monkeypatch.setattr(extract, "READ_INTRODUCED_LINES", False)    # the rule before stop 57
    before = subject_of(text, span)
    assert before is not None and before.text in ("RequestReadTimeout handshake=5 header=10 body=30",
                                                  "mod_cache")


@pytest.mark.parametrize("text, opening, name", [
    (SYNOPSIS, "Add a test called", "add_test(<name> <command> [<arg>...])"),
    (TERM, "Specifies the maximum", "max_wal_senders ( integer ):"),
])
def test_a_synopsis_or_a_term_after_a_lead_in_still_names_its_description(text, opening, name):
    found = subject_of(text, _span(text, opening))
    assert found is not None and found.text == name


def test_a_permalink_sign_is_no_part_of_its_heading():
    """Apache's manual ends each heading with <a class="permalink">&para;</a>: the "¶" stood in
    every section's name and in the heading path of each chunk."""
    html = ("<html><body><div id=\"page-content\">\n"
            "<h2 id=\"alg\">How the server selects the proper name-based virtual host "
            "<a title=\"Permanent link\" href=\"#alg\" class=\"permalink\">&para;</a></h2>\n"
            + "<p>" + " ".join(f"Sentence {i} about choosing among virtual hosts by name." for i in range(8))
            + "</p>\n<h3 id=\"x\">Other <a href=\"#x\">§</a></h3>\n<p>See <a href=\"#alg\">the "
            "selection above</a> for the details of the algorithm used here.</p>\n</div></body></html>")
    doc = parse_bytes(html.encode(), ext=".html")
    assert "¶" not in doc.text and "§" not in doc.text
    assert "How the server selects the proper name-based virtual host" in doc.text
    assert "See the selection above for the details" in " ".join(doc.text.split())   # a link with words stays
