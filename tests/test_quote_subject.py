"""Quotes that keep their subject and sentences split where sentences end (issue 17,
point 4). The passages are cut from real documentation as the index reads it."""

from __future__ import annotations

from pathlib import Path

import pytest

from indexer.parsers import parse_bytes
from localrag.answering.generate.extract import candidate_units, sentence_spans, subject_of
from localrag.answering.judge.lexical import split_sentences

GIT_PUSH = ('ssh.\n\n--[no-]force-with-lease:\n--force-with-lease=<refname>:\n'
            '--force-with-lease=<refname>:<expect>:\n\tUsually, "git push" refuses to update a '
            'remote ref that is\n\tnot an ancestor of the local ref used to overwrite it.\n\n'
            'This option overrides this restriction.')
POSTGRES = ('The role and meaning of these parameters does not change.\n\n'
            'max_wal_senders ( integer )\n\nSpecifies the maximum number of concurrent '
            'connections from standby servers. The default is 10 .')
KERNEL = 'dirty_ratio\n\n\nContains, as a percentage of total available memory, the number of pages.'


def _span(text: str, start_words: str):
    return next(s for s in sentence_spans(text) if s.text.startswith(start_words))


@pytest.mark.parametrize("text, opening, subject", [
    (GIT_PUSH, "Usually,", "--[no-]force-with-lease:"),
    (POSTGRES, "Specifies the maximum", "max_wal_senders ( integer )"),
    (KERNEL, "Contains, as a percentage", "dirty_ratio"),
])
def test_a_description_brings_the_name_it_describes(text, opening, subject):
    span = _span(text, opening)
    found = subject_of(text, span)
    assert found is not None and found.text == subject
    assert text[found.start:found.end] == subject     # offsets point at the file's line


def test_a_later_sentence_of_a_description_brings_its_name_too():
    """"The default is 10." says nothing without the setting it is the default of: every
    sentence of the paragraph under a term line has that term as its subject."""
    span = _span(POSTGRES, "The default is 10")
    found = subject_of(POSTGRES, span)
    assert found is not None and found.text == "max_wal_senders ( integer )"
    wrapped = ("dirty_ratio\n\nContains, as a percentage of total\navailable memory, the "
               "number of pages. It is\nwritten back by the flusher threads.")
    found = subject_of(wrapped, _span(wrapped, "It is written back"))
    assert found is not None and found.text == "dirty_ratio"


def _page(name: str) -> str:
    page = Path(__file__).parent / "data" / "postgres_docs" / name
    return parse_bytes(page.read_bytes(), ext=".html", name=page.name).text


def test_an_html_definition_term_is_the_subject_of_its_description():
    """PostgreSQL's SQL pages describe each option in a definition list: "RESTART
    IDENTITY" in capitals names no identifier, and the sentence under it says "restart"
    itself, yet the option's name is what a person needs (judged answer postgres-020)."""
    text = _page("sql-truncate.html")
    assert "\n\nRESTART IDENTITY:\n\n" in text        # the parser ends a term with ":"
    span = _span(text, "Automatically restart sequences owned by columns")
    found = subject_of(text, span)
    assert found is not None and found.text == "RESTART IDENTITY:"
    assert not any(u.text.startswith("RESTART IDENTITY") for u in candidate_units(text))
    # a setting's term line too, for the paragraph's later sentences
    text = _page("runtime-config-replication.html")
    span = _span(text, "The default is 10")
    found = subject_of(text, span)
    assert found is not None and found.text.startswith("max_wal_senders")


def test_every_paragraph_of_an_html_description_has_its_term():
    """A description of several paragraphs (PostgreSQL's transform_null_equals has four):
    the parser indents them under the term, so a sentence of the third still brings the
    setting's name (judged answer postgres-019 quoted three sentences without it)."""
    text = _page("runtime-config-replication.html")
    assert "\n\nmax_wal_senders (integer):\n\n    Specifies the maximum number" in text
    span = _span(text, "When running a standby server, you must set this parameter")
    assert text[text.rfind("\n", 0, span.start) - 1:span.start] == "\n\n    "   # not its first
    found = subject_of(text, span)
    assert found is not None and found.text == "max_wal_senders (integer):"
    # a paragraph after the list, back at the left margin, has no term
    plain = "opt (integer):\n\n    Sets it.\n\n    More on it.\n\nThe next section says more."
    assert subject_of(plain, _span(plain, "More on it")).text == "opt (integer):"
    assert subject_of(plain, _span(plain, "The next section")) is None


def test_a_table_of_contents_term_is_left_as_it_is():
    text = _page("runtime-config-replication.html")
    assert "20.6.1. Sending Servers:" not in text


@pytest.mark.parametrize("text, opening", [
    (GIT_PUSH, "This option overrides"),       # a paragraph of its own, no term above it
    ("Setup\n\nInstall the package with pip first.", "Install"),   # a heading in words
    ("max_wal_senders ( integer )\n\nmax_wal_senders sets the limit.", "max_wal_senders sets"),
])
def test_no_subject_where_the_sentence_needs_none(text, opening):
    assert subject_of(text, _span(text, opening)) is None


def test_a_term_line_is_not_glued_to_its_description():
    texts = [s.text for s in sentence_spans(GIT_PUSH)]
    assert any(t.startswith('Usually, "git push" refuses') for t in texts)
    assert not any("<expect>: Usually" in t for t in texts)
    # a sentence that introduces a code block still ends its own unit, with its words
    intro = "Start a new repository for an existing code base:\n\n    $ git init\n"
    assert [s.text for s in sentence_spans(intro)] == ["Start a new repository for an existing code base:"]


@pytest.mark.parametrize("text, expected", [
    ("Use a tool (e.g. grep) to find it. Then stop.", ["Use a tool (e.g. grep) to find it.", "Then stop."]),
    ("Some flags, i.e. the ones set, are kept. Others go.",
     ["Some flags, i.e. the ones set, are kept.", "Others go."]),
    ("It is set, e.g., by the admin. Next.", ["It is set, e.g., by the admin.", "Next."]),
    ("See the manual (cf. RFC 1123) for more. Done.", ["See the manual (cf. RFC 1123) for more.", "Done."]),
    ("Compare A vs. B here. Done.", ["Compare A vs. B here.", "Done."]),
    ("Apples, pears etc. are fruit. Next one.", ["Apples, pears etc. are fruit.", "Next one."]),
    ("Apples, pears etc. The next one.", ["Apples, pears etc.", "The next one."]),
    # an ellipsis before a lower-case word leaves words out; before a capital it ends one
    ("Sleep for 0, 1, 2, 4, ... seconds and try again. Done.",
     ["Sleep for 0, 1, 2, 4, ... seconds and try again.", "Done."]),
    ("It stopped... Then it went on.", ["It stopped...", "Then it went on."]),
    ('Errors such as "GPG error: ... invalid: BADSIG ..." with APT. Next.',
     ['Errors such as "GPG error: ... invalid: BADSIG ..." with APT.', "Next."]),
])
def test_sentences_split_around_abbreviations(text, expected):
    assert split_sentences(text) == expected


def test_real_postgres_page_quotes_no_fragment_at_e_g():
    """An HTML reference page as the index reads it: no unit worth quoting ends in an
    abbreviation or starts in lower case (a fragment cut at "e.g." or "i.e.")."""
    page = Path(__file__).parent / "data" / "postgres_docs" / "runtime-config-replication.html"
    text = parse_bytes(page.read_bytes(), ext=".html", name=page.name).text
    units = candidate_units(text)
    assert len(units) > 50
    for u in units:
        assert not u.text.rstrip().endswith(("e.g.", "i.e.", "(e.g.", "(i.e.")), u.text


@pytest.mark.parametrize("text, opening", [
    # a lead-in of prose ending in ":" is no term (Debian Reference, Appendix A / Ch. 6)
    ("x.\n\nThis is because:\n\nThe SMTP port (25) connections from hosts serviced by the "
     "corporate network are blocked.", "The SMTP port"),
    ("x.\n\nFor example:\n\nThe file is read once at start.", "The file is read"),
    # an appendix's numbered heading is a heading, not a name
    ("x.\n\nA.2. Copyright history\n\nThe Debian Reference was initiated by Osamu Aoki in 2001.",
     "The Debian Reference"),
])
def test_no_subject_from_a_lead_in_or_an_appendix_heading(text, opening):
    assert subject_of(text, _span(text, opening)) is None


@pytest.mark.parametrize("sentence", [
    'The "*" indicates no login.)',                       # the end of a parenthesis begun before
    "This is usually preferable, as potentially destructive operations (e.g.,",
    "TRUNCATE [ TABLE ] [ ONLY ] name [ * ] [, ...",      # a synopsis cut at "[, ..."
    # a passage (or a split) that starts inside a parenthesis: ")" in the first word
    "-DCMAKE_INSTALL_PREFIX=/usr) to have your build find and use the right files by default.",
    "--all), with the exception of --unpacked, which is compatible.",
])
def test_a_sentence_cut_inside_brackets_is_never_quoted(sentence):
    from localrag.answering.judge.noise import noise_kind

    assert noise_kind(sentence) == "fragment"
    text = "The first sentence is complete and long enough. " + sentence
    assert all(u.text != sentence for u in candidate_units(text))


@pytest.mark.parametrize("sentence", ['"a" "b"', '"The whole sentence is a quote."  '])
def test_a_sentence_all_in_quotes_is_judged_without_error(sentence):
    """is_unbalanced read the first word of what is left outside quotes: nothing here."""
    from localrag.answering.judge.noise import is_unbalanced, noise_kind

    assert is_unbalanced(sentence) is False
    assert noise_kind(sentence) in (None, "fragment", "filler", "markup")


@pytest.mark.parametrize("sentence", [
    "Use git log (see below) to check what changed.",
    'They cannot have an asterisk or an open bracket "[" anywhere.',   # quoted: not a bracket
    "1) Install the package before the first run.",
    "iv) the fourth way is to set the option in the file.",             # an enumerator
    "*c_CTRL-]* CTRL-] Trigger abbreviation, without inserting a character.",   # a key
])
def test_balanced_or_quoted_brackets_are_prose(sentence):
    from localrag.answering.judge.noise import noise_kind

    assert noise_kind(sentence) is None


def test_two_quotes_of_one_description_name_it_once():
    from localrag.answering.generate.extract import Candidate, pick_quotes

    spans = [_span(POSTGRES, "Specifies the maximum"), _span(POSTGRES, "The default is 10")]
    candidates = [Candidate(0, k / 1, s, s.text) for k, s in enumerate(spans)]
    quotes = pick_quotes("How many standby servers can connect?", [POSTGRES], candidates,
                         [0.9, 0.8])
    assert [q.span.text for q in quotes] == [s.text for s in spans]
    assert quotes[0].subject is not None and quotes[0].subject.text == "max_wal_senders ( integer )"
    assert quotes[1].subject is None


def test_a_question_heading_in_a_definition_list_is_no_term():
    """zsh's FAQ lists its questions as <dt>s: a question, not a name to describe."""
    html = ("<html><body><dl><dt>3.8: Why do the cursor (arrow) keys not work? (And other "
            "terminal oddities.)</dt><dd><p>The cursor keys send different codes depending "
            "on the terminal.</p></dd><dt>SET ( property = value [, ... ] )</dt><dd><p>This "
            "form changes one or more properties.</p></dd></dl></body></html>")
    text = parse_bytes(html.encode(), ext=".html", name="FAQ.html").text
    assert "oddities.):" not in text
    assert "SET ( property = value [, ... ] ):" in text      # a synopsis' "..." is no sentence end


@pytest.mark.parametrize("sentence", [
    "does a recursive directory search for files named 'bar' in the current directory.",
    "where collation is a possibly schema-qualified identifier.",
    "to change the prompt.",
])
def test_the_rest_of_a_sentence_cut_by_an_example_is_never_quoted(sentence):
    """A file's sentence that an example cut in two is no quote; a model may write a list
    item in lower case, so its sentences are not judged so (noise_kind)."""
    from localrag.answering.judge.noise import is_continuation, noise_kind

    text = f"For example, the pattern below:\n\n    ls **/bar\n\n{sentence}\n\nIt is the default."
    assert is_continuation(sentence)
    assert sentence not in [u.text for u in candidate_units(text)]
    assert noise_kind(sentence) is None


ZSH_COMPCTL = ("From such a function the command line can be accessed with the -c and -l flags to the read "
               "builtin. For example,\n\n    function whoson { reply=(`users`); }\n    compctl -K whoson talk\n\n"
               "    completes only logged-on users after \u2018talk\u2019. Note that \u2018whoson\u2019 must return "
               "an array, so \u2018reply=`users`\u2019 would be incorrect.")
CMAKE_CMAKEDEFINE = ("Furthermore, input lines of the form\n\n#cmakedefine VAR ...\n\nwill be replaced with "
                     "either\n\n#define VAR ...\n\nor\n\n/* #undef VAR */\n\ndepending on whether VAR is set in "
                     "CMake to any value not considered a false constant by the if() command. The \"...\" content "
                     "on the line after the variable name, if any, is processed as above.")


@pytest.mark.parametrize("text, rest", [
    (ZSH_COMPCTL, "completes only logged-on users after \u2018talk\u2019."),
    (CMAKE_CMAKEDEFINE, "depending on whether VAR is set in CMake to any value not considered a false "
                        "constant by the if() command."),
])
def test_the_rest_of_a_sentence_after_its_code_example_is_never_quoted(text, rest):
    """A verb without its subject opening a paragraph under a code example that prose leading
    on (", ", "or") introduced is the rest of that prose's sentence: both were quoted and
    judged noise (zsh-026, cmake-037). The sentences around them stay quotable."""
    units = [u.text for u in candidate_units(text)]
    assert rest not in units
    assert any(u.startswith("Note that") or u.startswith("The \"...\" content") for u in units)


@pytest.mark.parametrize("text, sentence", [
    # a name in lower case opens a sentence of its own after an example
    ("It prefers French:\n\nAccept-Language: fr; q=1.0, en; q=0.5\n\nhttpd supports 'server driven' "
     "content negotiation.", "httpd supports 'server driven' content negotiation."),
    # a command of the example above is what the sentence is about
    ("Fetch first, then:\n\n$ git fetch\n$ git rebase origin/main\n\nrebase replays your commits on "
     "top of the branch.", "rebase replays your commits on top of the branch."),
    # a table's description cell under its code cell: the cell above leads on into nothing
    ("/etc/pam.d/program_name\n\nset up PAM configuration for the program; see pam(7)\n\n"
     "/etc/nsswitch.conf\n\nsets up NSS configuration with the entry for each service.",
     "sets up NSS configuration with the entry for each service."),
])
def test_a_sentence_after_code_that_is_its_own_stays_quotable(text, sentence):
    assert sentence in [u.text for u in candidate_units(text)]


@pytest.mark.parametrize("sentence", [
    "pg_dump is a utility for backing up a PostgreSQL database.",
    '"for x in foo1 foo2 ; do command ; done" loops by assigning items from the list.',
    "git rebase replays your commits on top of another branch.",
])
def test_a_sentence_opening_with_a_name_in_lower_case_is_no_fragment(sentence):
    from localrag.answering.judge.noise import is_continuation, noise_kind

    assert noise_kind(sentence) is None and not is_continuation(sentence)


def test_a_listing_line_is_never_a_subject():
    """git-init's EXAMPLES: the callouts' explanations follow the listing; its last command
    is no name they describe."""
    text = ("Start a new Git repository for an existing code base:\n\n"
            "$ cd /path/to/my/codebase\n$ git init      <1>\n$ git add .     <2>\n"
            "$ git commit    <3>\n\n\nCreate a /path/to/my/codebase/.git directory.\n")
    assert subject_of(text, _span(text, "Create a /path")) is None


def test_a_subject_is_named_again_after_another_description():
    """CASCADE, then RESTRICT, then CASCADE's second sentence: it gets its name back; and a
    second page's CASCADE is another option, named too."""
    from localrag.answering.generate.extract import Candidate, pick_quotes

    drop = ("CASCADE:\n\n    Automatically drop objects that depend on the table. This is the "
            "first one.\n\nRESTRICT:\n\n    Refuse to drop the table if any objects depend on it.")
    truncate = "CASCADE:\n\n    Automatically truncate all tables that have foreign-key references."
    spans = [(0, _span(drop, "Automatically drop")), (0, _span(drop, "Refuse to drop")),
             (0, _span(drop, "This is the first")), (1, _span(truncate, "Automatically truncate"))]
    candidates = [Candidate(p, 0.0, sp, sp.text) for p, sp in spans]
    quotes = pick_quotes("what does cascade do", [drop, truncate], candidates, [0.9, 0.8, 0.7, 0.6])
    assert [q.subject.text if q.subject else None for q in quotes] == \
        ["CASCADE:", "RESTRICT:", "CASCADE:", "CASCADE:"]


@pytest.mark.parametrize("text, opening", [
    # the last line of an example block (PostgreSQL's runtime-config-client)
    ("For example:\n\ndynamic_library_path = 'C:\\tools\\postgresql;$libdir'\n\n"
     "The default value for this parameter is '$libdir'.", "The default value"),
    ("Then:\n\ntestdb=> \\set foo 'my_table'\ntestdb=> SELECT * FROM :foo;\n\n"
     "Note that this may be unsafe.", "Note that this"),
    # a line of prose ending in ":" that holds a sentence end (git-config)
    ("Specifies which bare repositories Git will work with. The currently supported values are:"
     "\n\nall: Git works with all bare repositories.", "all: Git works"),
])
def test_no_subject_from_a_code_line_or_a_lead_in_with_a_sentence_end(text, opening):
    assert subject_of(text, _span(text, opening)) is None


@pytest.mark.parametrize("html, term", [
    # zsh's manual (texinfo 6.8 HTML) ends every term with a "¶" link to itself
    ("<dl><dt id='x'><span><tt>zshaddhistory</tt><a href='#x' class='copiable-anchor'> &para;"
     "</a></span></dt><dd><p>Executed when a history line has been read interactively, but "
     "before it is executed.</p></dd></dl>", "zshaddhistory:"),
    # PostgreSQL 16's pages end every term with <a class="id_link">#</a>
    ('<dl class="variablelist"><dt id="GUC-X"><span class="term"><code class="varname">'
     'transform_null_equals</code> (<code class="type">boolean</code>)<a href="#GUC-X" '
     'class="id_link">#</a></span></dt><dd><p>When on, expressions of the form expr = NULL '
     'are treated as expr IS NULL.</p></dd></dl>', "transform_null_equals (boolean):"),
])
def test_a_term_reads_without_its_permalink(html, term):
    text = parse_bytes(f"<html><body>{html}</body></html>".encode(), ext=".html", name="x.html").text
    assert text.startswith(term + "\n\n    "), text
    span = sentence_spans(text)[0]
    assert subject_of(text, span).text == term


def test_a_chunks_first_term_is_not_the_subject_of_a_paragraph_after_its_siblings():
    """zsh's word-style description lists "specified:", "unspecified:", "shell:" at one
    depth and goes on in paragraphs at that depth; a chunk that starts at "specified:" has
    lost that line's indent. A later paragraph of word-style's description is not about
    "specified": no subject, rather than the wrong one. The first term's own description
    keeps it."""
    text = ("specified:\n\n        Similar to normal, but only the given characters are word "
            "characters.\n\n    shell:\n\n        Words are obtained by using the syntactic rules "
            "for generating command arguments.\n\n    The style skip-chars is mostly useful "
            "for transpose-words. If set, it gives a count of characters that are treated as "
            "space.")
    later = _span(text, "If set, it gives")
    assert subject_of(text, later) is None
    own = _span(text, "Similar to normal")
    found = subject_of(text, own)
    assert found is not None and found.text == "specified:"
    words = _span(text, "Words are obtained")   # (the sentence must not say "shell" itself)
    assert subject_of(text, words).text == "shell:"


ZSH_RECENT_DIRS = (
    "For example, changing from ~pws/yet/another to ~pws/some/other/dir does not cause ~pws to be "
    "pruned.\n\n    pattern:pattern:\n\n        Gives a zsh pattern for directories that should not "
    "be added to the recent list (if not already there). This element can be repeated to add "
    "different patterns.\n\nrecent-dirs-pushd:\n\n    If set to true, cdr will use pushd instead of cd.")
POSTGRES_PG_ISREADY = (
    "If the value begins with a slash, it is used as the directory for the Unix domain socket.\n\n"
    "-p port --port=port:\n\n    Specifies the TCP port or local Unix domain socket file extension "
    "on which the server is listening for connections.\n\n-U username --username=username:\n\n"
    "    User name to connect as.")
ZSH_HIGHLIGHT = (
    "    Colour is also known as color.\n\nbg=colour:\n\n    The background colour should be set to "
    "colour. This works similarly to the foreground colour.\n\nbold:\n\n    The characters are "
    "shown in a bold font.")


@pytest.mark.parametrize("text, opening, subject", [
    (ZSH_RECENT_DIRS, "Gives a zsh pattern", "pattern:pattern:"),
    (POSTGRES_PG_ISREADY, "Specifies the TCP port", "-p port --port=port:"),
    (ZSH_HIGHLIGHT, "The background colour should", "bg=colour:"),
])
def test_a_term_written_as_a_form_is_named_only_by_the_form(text, opening, subject):
    """A term line of plain words joined by ":" or "=" (zsh's "pattern:pattern", psql's
    "--port=port") is a form to type: a sentence that says "pattern" or "port" does not
    say which setting it describes, so the quote keeps the form as its name."""
    found = subject_of(text, _span(text, opening))
    assert found is not None and found.text == subject


def test_a_sentence_that_writes_the_form_names_it_itself():
    text = "Styles.\n\npattern:pattern:\n\n    Use pattern:pattern to skip directories such as /tmp."
    assert subject_of(text, _span(text, "Use pattern:pattern")) is None


SPHINX_ENTRY = b"""<html><body><section><h1>Reading data</h1>
<dl class="py class"><dt class="sig sig-object py" id="demo.Reader">
<em class="property">class </em><span class="sig-prename descclassname">demo.</span><span class="sig-name descname">Reader</span></dt>
<dd><p>Reads records.</p>
<dl class="py method"><dt class="sig sig-object py" id="demo.Reader.load">
<span class="sig-name descname">load</span><span class="sig-paren">(</span><em class="sig-param">strict=False</em>, <em class="sig-param">limit=None</em><span class="sig-paren">)</span><a class="headerlink" href="#demo.Reader.load">\xc2\xb6</a></dt>
<dd><p>Load the records from the open file.</p>
<dl class="field-list simple"><dt class="field-odd">Parameters<span class="colon">:</span></dt>
<dd class="field-odd"><ul class="simple">
<li><p><strong>strict</strong> (<em>bool</em>) \xe2\x80\x93 Stop at the first malformed record instead of skipping it.</p></li>
<li><p><strong>limit</strong> (<em>int</em>) \xe2\x80\x93 Read at most this many records.</p></li>
</ul></dd>
<dt class="field-even">Return type<span class="colon">:</span></dt><dd class="field-even"><p>list</p></dd>
</dl>
<div class="versionchanged"><p><span class="versionmodified changed">Changed in version 2.0: </span>Malformed records are logged.</p></div>
</dd></dl></dd></dl></section></body></html>"""


def test_a_parameter_of_an_api_entry_brings_the_entrys_signature_not_its_field_label():
    """Sphinx (and numpydoc, Google-style docstrings) list an entry's parameters under a
    field label, "Parameters:", that the parser indents under the signature. The label names
    nothing: a parameter's line describes its function, so the signature is its subject
    (flask's `get_json` quoted as "`Parameters:` silent (bool) - Silence ...", stop 41)."""
    text = parse_bytes(SPHINX_ENTRY, ext=".html", name="api.html").text
    assert "Parameters:" in text
    signature = next(line.strip() for line in text.splitlines() if line.strip().startswith("load("))
    for opening in ("strict (bool)", "limit (int)", "Load the records", "Changed in version 2.0"):
        span = _span(text, opening)
        found = subject_of(text, span)
        assert found is not None and found.text == signature, (opening, found)
    # a label standing right above a paragraph at the left margin gives no subject either
    plain = "Returns:\n\nThe number of records read."
    assert subject_of(plain, _span(plain, "The number of records")) is None


def test_a_module_functions_signature_is_a_term_for_every_paragraph_of_its_description():
    """Sphinx writes "demo.json." and "dumps" as two spans of one name: read with a space
    between them, "json. dumps" looked like a sentence end, the signature was no term, and
    a later paragraph of its description lost the name (flask.json.jsonify, stop 41)."""
    html = (b'<dl class="py function"><dt class="sig sig-object py" id="demo.json.dumps">'
            b'<span class="sig-prename descclassname"><span class="pre">demo.json.</span></span>'
            b'<span class="sig-name descname"><span class="pre">dumps</span></span>'
            b'<span class="sig-paren">(</span><em class="sig-param">obj</em><span class="sig-paren">)</span>'
            b'<a class="headerlink" href="#demo.json.dumps">\xc2\xb6</a></dt>'
            b'<dd><p>Serialize the object as a string.</p>'
            b'<p>In debug mode the output is indented to make it easier to read.</p></dd></dl>')
    text = parse_bytes(html, ext=".html", name="api.html").text
    assert "demo.json.dumps(obj):" in text
    found = subject_of(text, _span(text, "In debug mode the output"))
    assert found is not None and found.text == "demo.json.dumps(obj):"


POSTGRES_DROP_INDEX = ("Parameters\n\nIF EXISTS:\n\n    Do not throw an error if the index does not exist. "
                       "A notice is issued in this case.\n\ncolumn_number:\n\n    The ordinal number refers "
                       "to the ordinal (left-to-right) position of the index column.")
CMAKE_CONFIGURE_FILE = ("@ONLY:\n\n    Restrict variable replacement to references of the form @VAR@. This is "
                        "useful for configuring scripts that use ${VAR} syntax.\n\nNEWLINE_STYLE <style>:\n\n"
                        "    Specify the newline style for the output file.")
CMAKE_CUSTOM_COMMAND = ("Options:\n\nAPPEND:\n\n    Append the COMMAND and DEPENDS option values to the custom "
                        "command for the first output specified.")


@pytest.mark.parametrize("text, opening, subject", [
    (POSTGRES_DROP_INDEX, "Do not throw an error", "IF EXISTS:"),
    (POSTGRES_DROP_INDEX, "A notice is issued", "IF EXISTS:"),
    (CMAKE_CONFIGURE_FILE, "Restrict variable replacement", "@ONLY:"),
    (CMAKE_CUSTOM_COMMAND, "Append the COMMAND", "APPEND:"),
])
def test_a_term_in_capitals_names_its_description_whatever_its_words(text, opening, subject):
    """A term written in capitals is a keyword or an option ("IF EXISTS", "@ONLY", "APPEND"),
    a name even where its words are function words ("if", "only") or the sentence uses them
    in lower case ("if the index does not exist", "Append the ... values"): read as prose, the
    description was quoted without the option it describes (cmake-037, judged "partly")."""
    found = subject_of(text, _span(text, opening))
    assert found is not None and found.text == subject
    assert text[found.start:found.end] == subject


def test_a_sentence_that_writes_the_capitals_term_names_it_itself():
    text = "Parameters\n\nIF EXISTS:\n\n    With IF EXISTS, dropping a missing index is no error."
    assert subject_of(text, _span(text, "With IF EXISTS")) is None


ZSH_STYLES = ("regular:\n\n    This style is used by the _expand_alias completer and bindable command. If it is "
              "set to 'always', regular aliases will be expanded even if not in command position.\n\n"
              "rehash:\n\n    If this is set when completing external commands, the internal list (hash) of "
              "commands will be updated for each search by issuing the rehash command. There is a speed "
              "penalty for this.\n\n-W --password:\n\n    This option is never essential, since dropdb "
              "will automatically prompt for a password.")


@pytest.mark.parametrize("opening, subject", [
    ("If this is set when completing", "rehash:"),
    ("If it is set to 'always'", "regular:"),
    ("This option is never essential", "-W --password:"),
])
def test_a_sentence_that_points_back_to_its_term_is_named_after_it_whatever_its_words(opening, subject):
    """"If this is set ..., the internal list of commands will be updated ... by issuing the
    rehash command." says "rehash", but the rehash *command*: which setting "this" is, only
    the term line says (zsh-069, quoted without `rehash:` and judged "partly")."""
    found = subject_of(ZSH_STYLES, _span(ZSH_STYLES, opening))
    assert found is not None and found.text == subject


def test_a_sentence_that_names_its_term_without_pointing_back_stays_unnamed():
    text = "rehash:\n\n    Setting rehash makes completion update the list of commands for each search."
    assert subject_of(text, _span(text, "Setting rehash")) is None
