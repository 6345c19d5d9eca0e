"""Reading a passage of source code as a person reads it, for the quotes of an answer.

A person points localrag at their code as well as at their notes. In a code file the prose
is in docstrings and comments, and the names are on `def` and `class` lines. Read as plain
text (stop 44, pycode: python3-oauthlib's package, answers judged by annotators), a
docstring was quoted with its three opening quote marks before "Create PKCE code_verifier
...", a `def` line glued to the docstring under it ("def is_pkce_required(self, client_id,
request): ... Determine if ...") instead of naming it, a comment that runs over several "#"
lines was cut at each line ("# are sorted by their value." alone), and a statement of code
was read as a sentence because a string in it ends with a full stop ("raise
NotImplementedError('Subclasses must implement this method.')"). These rules read such
lines the way a reader does; each is limited to the shapes code has, so prose is read as
before (tests/test_code_quotes.py lists prose that looks alike).
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from functools import lru_cache

from localrag.answering.label.units import indent_width

DEF_LINE = re.compile(r"^[ \t]*(?:async[ \t]+)?(?:def|class)[ \t]+[A-Za-z_]\w*[ \t]*[(:]")
"""A Python definition's first line: "def is_pkce_required(self, client_id, request):",
"class TokenEndpoint(BaseEndpoint):". It names what the docstring under it describes: no
part of any sentence, the name of the sentences of its docstring (extract.subject_of)."""

MAX_SIGNATURE_LINES = 8   # a signature wrapped over more lines than this is not followed
MAX_CODE_LINE = 300       # a longer line is read as text (and the patterns below stay linear)

_DOCSTRING_OPEN = re.compile(r"^(?:[rRuUbBfF]{0,2})(?:\"\"\"|''')[ \t]*")
_DOCSTRING_CLOSE = re.compile(r"[ \t]*(?:\"\"\"|''')$")

_COMMENT = re.compile(r"^([ \t]*)#(?=[ \t]|$)")
"""A "#" comment line of a script or a program (one "#", then a space or the line's end)."""

_CODE_MARK = r"[(\[=<>!._\"']"
_CONTROL_HEAD = (rf"(?:(?:el)?if[ \t]+[^:]*{_CODE_MARK}[^:]*|(?:el)?if[ \t]+(?:not[ \t]+)?[A-Za-z_][\w.]*"
                 r"|else|try|finally|except(?:[ \t]+(?:[A-Z(]|[a-z_]\w*\.)[\w.]*[^:]*|[ \t]+[a-z_][\w.]*[ \t]+as[ \t]+\w+)?)[ \t]*:")
"""A control statement's head ("elif is_issuer:", "if request.code_verifier is None:", "else:")."""
_STATEMENT = re.compile(
    r"^[ \t]*(?:"
    rf"{_CONTROL_HEAD}|"
    r"[)\]}]+.*|[A-Za-z_][\w.]*(?:[ \t]*=[ \t]*[A-Za-z_][\w.]*)?[(\[{]|"
    rf"for[ \t]+[\w, ()]+[ \t]+in[ \t]+[^:]*{_CODE_MARK}[^:]*:|"
    rf"while[ \t]+[^:]*{_CODE_MARK}[^:]*:|"
    r"with[ \t]+[^:]*\([^:]*\)(?:[ \t]+as[ \t]+\w+)?[ \t]*:|"
    r"(?:raise|return|yield|assert)[ \t]+(?:not[ \t]+)?"
    r"(?:[A-Za-z_][\w.]*(?:[(\[].*|[ \t]+(?:is|in|==|!=|and|or)\b.*)?|"
    r"[rRbBuUfF]{0,2}['\"\d\[{(].*)|"
    r"[A-Za-z_][\w.]*(?:\[[^\]]*\])?[ \t]*(?:[-+*/|&]?=)[ \t]*[^\s=].*(?<![.!?]))"
    r"[ \t]*(?:#.*)?$")
"""A line of program code (Python's shapes): a control statement ending in ":" ("elif
is_issuer:", "if request.code_verifier is None:", "for k, v in params:"), a raise, return,
yield or assert of a name, call or literal ("raise errors.InvalidGrantError(request=request)"),
a call or bracket opening at the line's end ("warnings.warn("), a line opening with a closing
bracket (") -> Dict[str, Any]:"), or an assignment ("request.client_id = request.client_id
or ..."). A sentence never reads
across such a line. Prose shapes stay prose: "if you set it, ..." has no ":" at its end,
"for each file in the folder:" and "with Node.js. Some key elements of this include:" no
code after "in" or call before the ":", "return the value." no name followed by "(" or the
line's end, "x = 1 is the default." a sentence's end."""

_CALL_WITH_STRING = re.compile(r"^(?:(?:raise|return|yield|assert|await)[ \t]+)?[A-Za-z_][\w.]*\([ \t]*"
                               r"[rRbBuUfF]{0,2}['\"]")
"""A statement that is a call with a string as its first argument: "raise
NotImplementedError('Subclasses must implement this method.')", "log.debug('Client
authentication failed, %r.', request)". The string's full stop is no sentence end."""


FIELD = re.compile(r"^([ \t]*)(:(?:param|parameter|arg|argument|key|keyword|raises?|except|exception|var|ivar|"
                   r"cvar|returns?|yields?)(?:[ \t]+[^:`]+)?:)[ \t]+(?=\S)")
"""A docstring's reStructuredText field with its description on the line ("        :param
include_client_id: `True` to send the `client_id` in the", "   :returns: A dict of ..."): the
field (group 2) names what the description says, the description is prose that may run on
over the lines under it. Read as a line of markup, it lost the description's first line
("body of the upstream request." was quoted alone) and whole descriptions ("REQUIRED. The
authorization code received from the authorization server.")."""


def field_at(text: str, start: int) -> tuple[int, int] | None:
    """(start, end) of the field (FIELD) that opens the line where the sentence at `start`
    begins, right before it: the sentence's name."""
    line_start = text.rfind("\n", 0, start) + 1
    m = FIELD.match(text[line_start:start + 1])
    if m is None or line_start + m.end() != start:
        return None
    return line_start + m.start(2), line_start + m.end(2)


def opens_entry(text: str, start: int) -> bool:
    """Whether the sentence at `start` opens the description of a docstring's entry: right
    after a ":param name:" field on its line (field_at), or first on its line right under a
    numpydoc term ("length : int" over "the number of items ..."). Such a description often
    starts in lower case with a function word ("an iterable to iterate over.", "the number
    of items to iterate over."): it is no rest of a sentence cut in two."""
    if field_at(text, start) is not None:
        return True
    line_start = text.rfind("\n", 0, start) + 1
    if text[line_start:start].strip() or line_start == 0:
        return False
    above_start = text.rfind("\n", 0, line_start - 1) + 1
    above = text[above_start:line_start - 1]
    return bool(TYPED_TERM.match(above)) and indent_width(above) < start - line_start


def is_comment_line(lines: list[str], n: int) -> bool:
    """`lines[n]` is a "#" comment of code, not a Markdown heading: indented (a heading
    stands at the margin), or one of a run of "#" lines at one indentation with no blank
    line between (a heading has its text under it, not another heading)."""
    m = _COMMENT.match(lines[n])
    if not m:
        return False
    indent = m.group(1).expandtabs(4)
    if len(indent) >= 4:
        return True
    for k in (n - 1, n + 1):
        if 0 <= k < len(lines):
            other = _COMMENT.match(lines[k])
            if other and other.group(1).expandtabs(4) == indent:
                return True
    # a comment right above a line of code ("# Look for the argcomplete marker ..." over
    # "    with open(...) as f:"; a passage may start at the comment, its indentation cut)
    return n + 1 < len(lines) and (is_statement_line(lines[n + 1]) or bool(DEF_LINE.match(lines[n + 1])))


_SHELL_TOKEN = re.compile(r"^-{1,2}\w|^[/~.$]|[=|<>;{}]")
_LITERALS = re.compile(r"^[ \t]*(?:[rRbBuUfF]{0,2}([\"'])(?:(?!\1).)*\1[ \t]*)+[,)]*[ \t]*$")
_LITERAL = re.compile(r"([rRbBuUfF]{0,2})([\"'])((?:(?!\2).)*)\2")


def _prose(body: str) -> bool:
    """Words a person reads: at least three, as many as the other tokens, and few tokens
    of a command line ("cd /some/location/ chown -R foo:bar ." after a root prompt)."""
    tokens = body.split()
    words = [t for t in tokens if re.fullmatch(r"[A-Za-z][a-z'’]*[,;:.!?]?", t)]
    shell = sum(bool(_SHELL_TOKEN.search(t)) for t in tokens)
    return len(words) >= 3 and 2 * len(words) >= len(tokens) and 4 * shell <= len(words)


def _blank(line: str, spans: list[tuple[int, int]]) -> str:
    chars = list(line)
    for a, b in spans:
        chars[a:b] = " " * (b - a)
    return "".join(chars)


def comment_runs(block: str) -> list[tuple[int, str]]:
    """`block` cut into (offset, text) pieces: each run of comment lines of code
    (is_comment_line) whose words are prose (_prose: "# Ensure client is authorized use of
    this grant type", not "# chown -R foo:bar ." after a root prompt) apart from the lines
    around it, with its "#" marks turned into spaces of the same length, so that a comment
    running over several lines reads as the sentence it is, a quote of it shows its words
    without the marks, and no sentence runs from a comment into the code beside it. Lines
    that are only string literals (an error message split over lines: "The specified key is
    an asymmetric key or x509 certificate and" / " should not be used as an HMAC secret.")
    are read as their words, without the quote marks, and a docstring's field (FIELD)
    starts a piece, its ":param name:" blanked: the description after it is the sentence.
    Offsets are unchanged."""
    lines = block.split("\n")
    comment = [is_comment_line(lines, n) for n in range(len(lines))]
    prose = [False] * len(lines)
    n = 0
    while n < len(lines):
        if not comment[n]:
            n += 1
            continue
        k = n
        while k < len(lines) and comment[k]:
            k += 1
        if _prose(" ".join(_COMMENT.sub("", x, count=1) for x in lines[n:k])):
            prose[n:k] = [True] * (k - n)
        n = k
    out: list[tuple[int, str]] = []
    pos, start, kind = 0, 0, None
    pieces: list[str] = []
    for n, line in enumerate(lines):
        width = len(line)
        field = FIELD.match(line)
        if field:                        # ":param name:" read as the description's name
            line = _blank(line, [field.span(2)])
        if prose[n]:
            m = _COMMENT.match(line)
            line = line[:m.end() - 1] + " " + line[m.end():]
        elif len(line) <= MAX_CODE_LINE and _LITERALS.match(line) and _prose(" ".join(x.group(3) for x in _LITERAL.finditer(line))):
            marks = [(x.start(), x.start(3)) for x in _LITERAL.finditer(line)] + \
                    [(x.end(3), x.end()) for x in _LITERAL.finditer(line)]
            tail = re.search(r"[,)]*[ \t]*$", line)
            line = _blank(line, marks + [(tail.start(), tail.end())])
        if kind is not None and (prose[n] != kind or field) and pieces:
            out.append((start, "\n".join(pieces)))
            start, pieces = pos, []
        pieces.append(line)
        kind = prose[n]
        pos += width + 1
    if pieces:
        out.append((start, "\n".join(pieces)))
    return out


def definition_lines(lines: list[str], n: int) -> int:
    """How many lines the definition opening at `lines[n]` takes (its signature may wrap
    over several lines, ending at the line that ends in ":"), or 0 when `lines[n]` opens
    none."""
    if not DEF_LINE.match(lines[n]):
        return 0
    for k in range(n, min(len(lines), n + MAX_SIGNATURE_LINES)):
        if lines[k].split("#", 1)[0].rstrip().endswith(":"):
            return k - n + 1
        if k > n and not lines[k].strip():
            break
    return 1


_ASSIGNED = re.compile(r"^[ \t]*[A-Za-z_][\w.]*(?:\[[^\]]*\])?([ \t]*)[-+*/|&]?=[ \t]*(.*)$")
"""An assignment's value (group 2), and the space before its "=" (group 1): code writes
"x = value" or a shell's "VAR=value", one token; "DynamicUser= documentation in" is prose."""
_PLAIN_WORDS = re.compile(r"(?:^|\s)[A-Za-z]+,?\s+[A-Za-z]+,?\s+[A-Za-z]+(?=\s|$)")


def is_statement_line(line: str) -> bool:
    """A line of program code that no sentence reads across (_STATEMENT), or a call of
    code with a string in it (_CALL_WITH_STRING) standing on its own line."""
    s = line.strip()
    if not s or len(s) > MAX_CODE_LINE or re.search(r"[.!?]\s+[A-Z]", s):
        return False                     # a sentence ends inside it: a wrapped line of prose
    m = _ASSIGNED.match(line)
    value = _LITERAL.sub("''", m.group(2)) if m else ""
    if m and (_PLAIN_WORDS.search(value) or (not m.group(1) and " " in value.strip())):
        return False                     # "DynamicUser= documentation in", "After=nss-user-lookup
        #                                  .target, but do not pull it in via a Wants=": prose
    return bool(_STATEMENT.match(line)) or bool(_CALL_WITH_STRING.match(s) and s.endswith((")", "(", ",")))


def is_code_statement(sentence: str) -> bool:
    """A "sentence" that is a statement of code whose string ends with a full stop
    (_CALL_WITH_STRING), ending where the call or its string does: never quoted. Prose that
    opens with a call ("url_for("download_file", name=name) generates download URLs.") is
    a sentence."""
    s = sentence.strip()
    if _STRING_ALONE.fullmatch(s):
        return True                      # "'allowed by over %s seconds.'", a piece of a string
    return bool(_CALL_WITH_STRING.match(s)) and s.endswith((")", "(", ",", "'", '"'))


_STRING_ALONE = re.compile(r"[rRbBuUfF]{0,2}(['\"])[^'\"]*\1[,)]*")


def unread_comment(text: str, start: int) -> bool:
    """The sentence at `start` opens with the "#" of a comment of code that is not prose
    (comment_runs left its marks: "# at_hash MAY NOT be used when:" over "# - id_token
    (Implicit)"): a note among code, never quoted. A script's one comment line above a
    shell command ("# Retry the upload three times because ...") is no comment of code
    (is_comment_line) and stays a sentence."""
    if text[start:start + 1] != "#":
        return False
    line_start = text.rfind("\n", 0, start) + 1
    block_end = text.find("\n\n", start)
    lines = text[line_start:block_end if block_end >= 0 else len(text)].split("\n")
    before = text[text.rfind("\n", 0, max(line_start - 1, 0)) + 1:line_start - 1] if line_start else ""
    local = ([before] if line_start else []) + lines
    return is_comment_line(local, 1 if line_start else 0)


def signature_tail(line: str) -> bool:
    """The last line of a wrapped signature whose `def` line is not there ("headers=None):"
    at a passage's start): parameters, no name."""
    s = line.strip()
    return bool(re.search(r"\)(?:[ \t]*->[^:]*)?:$", s)) and s.count("(") < s.count(")")


def docstring_opening(line: str) -> int:
    """The length of the docstring quotes (with a string prefix) that open `line` (3 for
    the quotes before "Args:"), 0 when none do."""
    m = _DOCSTRING_OPEN.match(line)
    return m.end() if m else 0


def docstring_marks(sentence: str) -> tuple[int, int]:
    """(characters to drop at the start, at the end) of a sentence that opens or closes a
    docstring: its '\"\"\"' (with a string prefix) are the code's quotes, not its words."""
    m = _DOCSTRING_OPEN.match(sentence)
    lead = m.end() if m and m.end() < len(sentence) else 0
    tail = _DOCSTRING_CLOSE.search(sentence[lead:])
    trail = len(tail.group(0)) if tail and tail.start() > 0 else 0
    return lead, trail


def signature_start(text: str, line_start: int) -> int | None:
    """The start of the `def` line whose wrapped signature the line at `line_start` ends
    ("    headers=None):" under "def create_introspect_response(self, uri, ...,"), or None."""
    pos = line_start
    for _ in range(MAX_SIGNATURE_LINES - 1):
        if pos == 0:
            return None
        prev = text.rfind("\n", 0, pos - 1) + 1
        line = text[prev:pos - 1]
        if not line.strip() or line.rstrip().endswith(":"):
            return None
        if DEF_LINE.match(line):
            return prev
        pos = prev
    return None


_NAME = r"\*{0,2}[A-Za-z_][\w.]*\*{0,2}"
TYPED_TERM = re.compile(rf"^[ \t]*{_NAME}(?:[ \t]*,[ \t]*{_NAME})*[ \t]+:[ \t]*[^\s:(](?:[^:(\n]|\([^)\n]*\)){{0,60}}$")
"""A numpydoc entry's term: "x : array_like", "axis : int, optional", "*args : tuple",
"help : bool (default: True)" (a colon inside brackets is the type's): the name of a
parameter (or a returned value, an attribute) and its type, its description indented under
it."""
BARE_TERM = re.compile(r"^[ \t]*(?:\*\*[A-Za-z_][\w.\-]*\*\*|[A-Za-z_]\w*[_.\-][\w.\-]*|[a-z]+)[ \t]*$")
"""A definition list's term in reStructuredText that is one name: in lower case ("scope"),
with "_", "." or "-" in it ("authorization_endpoint"), or set in bold ("**state**"); its
definition indented under it. A capitalised word alone on a line is prose that wraps
with a hanging indent ("Easier" over "  integration of additional information ...")."""
_UNDERLINE = re.compile(r"^[ \t]*([-=~^\"'`#*+])\1{2,}[ \t]*$")


def docstring_term(line: str, next_line: str, above: str) -> bool:
    """The line is the term of a definition its next line is indented under, in the shapes
    docstrings write one: numpydoc's "num : int" (TYPED_TERM), or a name alone (BARE_TERM)
    that opens its paragraph (`above`, the line before it, is blank, a section's underline
    or the end of a sentence: the last word of a wrapped sentence stays in its sentence).
    Read as text, the term was glued onto the first sentence of its description ("x :
    array_like The data to be resampled.", "authorization_endpoint URL of the authorization
    server's ..."; stop 47): it is the name those sentences describe (extract.subject_of)."""
    if len(line) > MAX_CODE_LINE or not next_line.strip() or indent_width(next_line) <= indent_width(line):
        return False
    if TYPED_TERM.match(line):
        return True
    opens = not above.strip() or bool(_UNDERLINE.match(above)) or bool(re.search(r"[.:!?][\"')\]*[ \t]*$", above))
    return opens and bool(BARE_TERM.match(line))


def term_name(line: str) -> str:
    """A docstring term as a name is shown: "**state**" without its bold marks."""
    s = line.strip()
    return s[2:-2] if len(s) > 4 and s.startswith("**") and s.endswith("**") else s


TRIPLE = re.compile(r"\"\"\"|\'\'\'")


def docstring_owner(lead: str) -> str | None:
    """The name of the function or class whose docstring is still open at the end of
    `lead` (the text right before a passage that starts inside that docstring): the last
    triple quote of `lead` opens a line ('    \"\"\"Prepare an access token request.'),
    does not close on it, and the line right above it is the definition or the end of its
    wrapped signature."""
    quotes = list(TRIPLE.finditer(lead))
    if not quotes:
        return None
    q = quotes[-1]
    line_start = lead.rfind("\n", 0, q.start()) + 1
    if not re.fullmatch(r"[ \t]*[rRuUbB]{0,2}", lead[line_start:q.start()]):
        return None                      # a string inside a line of code
    end = lead.find("\n", q.end())
    if TRIPLE.search(lead[q.end():end if end >= 0 else len(lead)]):
        return None                      # a one-line docstring, closed
    if line_start == 0:
        return None
    above_start = lead.rfind("\n", 0, line_start - 1) + 1
    above = lead[above_start:line_start - 1]
    if not (DEF_LINE.match(above) or signature_tail(above)):
        return None                      # a closing quote: the line above is the docstring's
    return definition_above(lead, line_start)


_DEF_NAME = re.compile(r"^[ \t]*(?:async[ \t]+)?(def|class)[ \t]+([A-Za-z_]\w*)")


def definition_above(text: str, line_start: int) -> str | None:
    """The name of the function or class whose docstring holds the line at `line_start`,
    written as a reader refers to it ("create_code_verifier()", "Client"), when its `def`
    or `class` line is in `text`: the nearest line above indented less than this one, when
    that line is the definition or ends its wrapped signature (the docstring's own lines,
    its opening '    \"\"\"Create PKCE ...' included, are indented deeper). A field of a
    docstring (":param length:", ":returns:") names a part of that definition, which a
    quote of it must name too: ":param scope:" alone does not say of which function."""
    end = text.find("\n", line_start)
    depth = indent_width(text[line_start:end if end >= 0 else len(text)])
    pos = line_start
    while pos > 0 and depth > 0:
        prev = text.rfind("\n", 0, pos - 1) + 1
        line = text[prev:pos - 1]
        if line.strip() and indent_width(line) < depth:
            opens = prev if DEF_LINE.match(line) else (signature_start(text, prev)
                                                         if signature_tail(line) else None)
            if opens is None:
                return None
            m = _DEF_NAME.match(text[opens:])
            return None if m is None else m.group(2) + ("()" if m.group(1) == "def" else "")
        pos = prev
    return None


def opens_comment_midway(text: str, start: int) -> bool:
    """The sentence at `start` opens a comment line of code in lower case ("# regardless of
    the number of cores ..." under "make -j4  # With this flag, Ninja will limit ..."): the
    rest of a comment that began on a line above, a fragment."""
    line_start = text.rfind("\n", 0, start) + 1
    return text[start:start + 1].islower() and bool(re.fullmatch(r"[ \t]*#[ \t]*", text[line_start:start]))


_CONTROL = re.compile(rf"^[ \t]*{_CONTROL_HEAD}[ \t]*(?:#.*)?$")
_DIRECTIVE = re.compile(r"^\.\.[ \t]+[\w-]+::")


def names_nothing(line: str) -> bool:
    """A line above a sentence that is never its name: a control statement of code ("if
    program_name == 'yq':", "else:") or a reStructuredText directive in a docstring (".. note::")."""
    if len(line) > MAX_CODE_LINE:
        return False
    indented = line[:1] in (" ", "\t")   # inside a function; a manual's grammar term ("if
    #                                     list then list [ elif list ... ] fi:") is at the margin
    return bool((indented and _CONTROL.match(line)) or _DIRECTIVE.match(line.strip()))


READ_C_COMMENTS = True
"""Whether C-family comments are read as C (block_comments, c_subject); False reads them
as plain text, as before stop 48 (scripts/record_answers_for_judging.py --no-c-comments,
set before any passage is read: block_comments keeps what it read)."""
READ_C_COMMENTS_WHOLE = True
"""Whether C-family comments are read whole and named right (stop 51): a comment the
passage's end cuts before its "*/" (_cut_before_close), a one-line "/** ... */" over its
declaration (c_subject), a later sentence of a gtk-doc field's description (gtkdoc_field
`within`), a "#symbol" line inside a comment (extract._inside), the comment's gtk-doc symbol
line as its subject where the passage holds no declaration (extract.subject_of), and a
declaration with its own comment right above it never taken as the next comment's subject.
False reads them as at stop 50 (scripts/record_answers_for_judging.py --no-c-mends, set
before any passage is read)."""

_C_BLOCK_LINE = re.compile(r"^[ \t]*(?:/\*+!?|\*+/)[ \t]*$|^[ \t]*/\*", re.M)
_C_CLOSE_EOL = re.compile(r"\*+/[ \t]*$", re.M)
_C_MARK = re.compile(r"/\*+!?|\*+/")
_C_GUTTER = re.compile(r"^[ \t]*(\*)(?=[ \t]|$)")
_DOXYGEN = re.compile(r"[\\@](?:brief|details|note|warning|attention|deprecated|since|file|returns?|retval|"
                      r"sa|see|pre|post|throws?|exception|tparam|param(?:\[[a-z, ]+\])?|[cpabe]|ref)(?=[ \t]|$)")
READ_TRAILING_COMMENTS = True
"""Whether a comment after the code on its line is read (trailing_comments): "ZSTD_c_checksumFlag=201,
/* A 32-bits checksum of content is written at end of frame (default:0) */", "float priority;
/* as given from the stylesheet, not computed */", Doxygen's "/*!< recommended size for output
buffer. ... */"; its sentences named by that line's declaration (c_subject), a member of one
plain word ("height") even where its comment says the word (extract.subject_of). Before (stop
51's first rounds) the line was cut as code, the comment with it. False reads them so
(scripts/record_answers_for_judging.py --no-trailing-comments)."""
READ_C_COMMENT_PARTS = True
"""Whether the parts of C doc comments stop 53 reads are read (found on ccode..ccode5's
unanswered questions): a comment after a macro's value or after an enum's last member
("#define PT_GNU_STACK 0x6474e551 /* Indicates stack executability */", "XML_BUFFER_ALLOC_BOUNDED
/* limit the upper size of the buffer */"), whose "/*" was read as code and ran the comment
above into the line (_AFTER_VALUE); a Doxygen block tag's description ("@return positive or
negative timezone offset, in minutes from UTC", "\\retval MBEDTLS_ERR_MD_ALLOC_FAILED on
memory-allocation failure", "@param commit a previously loaded commit."), a statement of its
own named after its function and tag (doxygen_field: "`git_commit_time_offset() @return`"),
where it had run into the next tag's words or, without a full stop, gone unquoted; an item of
a list inside a comment (" *    - or better use the xmlSetExternalEntityLoader() function
to", extract.whole_list_item). False reads them as at stop 52
(scripts/record_answers_for_judging.py --no-c-parts, set before any passage is read)."""
READ_C_DECLARATIONS_WHOLE = True
"""Whether a C declaration or call written over several lines is code on each of its lines:
its first line ("int http_parser_parse_url(const char *buf, size_t buflen,", libxml2's
"xmlSearchNsByHref\t(xmlDocPtr doc,": white space before the bracket only after a name no
word of prose is, with "_" or a capital inside) opens a bracket it does not close and ends
in "," or "(" (_C_OPENS_CALL), and the lines after it are code until the brackets close (at
most MAX_CALL_LINES); c_subject names a comment beside it after it. Before stop 55 only the
last line (ending in ";") was: the comment above ("/* Parse a URL; return nonzero on failure */") ran into the
first line and was read as one fragment, never quoted (ccode6-009). False reads them as
before (scripts/record_answers_for_judging.py --no-c-declarations, set before any passage is
read)."""
_C_OPENS_CALL = re.compile(r"[ \t]*(?:[A-Za-z_]\w*[ \t*]+)*\**(?:[A-Za-z_]\w*|(?:\w*_\w*|[a-z]+[A-Z]\w*)[ \t]+)"
                           r"\((?:(?:[^()\n]|\([^()\n]*\)?)*[,(])?[ \t]*")
MAX_CALL_LINES = 12
"""The most lines after a declaration's first that are read as its own (_C_OPENS_CALL): the
longest prototypes of the C corpora's headers run over 8 (zlib's, libxml2's); a bracket
never closed (a "(" in a line the pattern mistook) stops there."""
_AFTER_VALUE = re.compile(r"[ \t]*#[ \t]*define[ \t]+\w+(?:\([^)\n]*\))?(?:[ \t]+[^\n]*)?|"
                          r"[ \t]*[A-Za-z_]\w*(?:[ \t]*=[ \t]*[^,\s]+)?[ \t]*")
"""What may stand before a comment after the code on its line besides a statement's end
(_opens_comment): a macro's definition ("#define PT_GNU_STACK\t0x6474e551\t"), an enum's last
member, without the comma the others have ("XML_BUFFER_ALLOC_BOUNDED\t")."""
_LAST_MEMBER = re.compile(r"[ \t]*[A-Za-z_]\w*(?:[ \t]*=[ \t]*[^,\s]+)?[ \t]*")
_DOXYGEN_FIELD = re.compile(r"[ \t]*(?:/\*+!?|\*)?[ \t]*([\\@](?:param(?:\[[a-z, ]+\])?[ \t]+[A-Za-z_]\w*|"
                            r"returns?|retval[ \t]+[^\s]+|result))(?:[ \t]+:)?(?=[ \t]|$)")
"""A Doxygen block tag opening a comment line, with the name it takes: "@param commit",
"\\param[out] olen", "@return", "\\returns", "\\retval MBEDTLS_ERR_MD_BAD_INPUT_DATA"; zstd's
colon after it ("@return : the compressed size ...") is no part of the description."""


_DOXYGEN_BLOCK = re.compile(r"[ \t]*(?:/\*+!?|\*)?[ \t]*[\\@](?:brief|details|note|warning|attention|deprecated|"
                            r"since|returns?|retval|result|sa|see|pre|post|throws?|exception|t?param|"
                            r"par|todo|bug|remarks?|invariant|example|code|endcode)(?=[ \t\[{]|$)")
"""Any Doxygen block tag opening a comment line: it ends the description above it ("@returns
::BROTLI_TRUE if value is accepted" over "@warning invalid values might be accepted ..." read
as one sentence, ccode-022, stop 53)."""


def doxygen_field(text: str, start: int, *, within: bool = False) -> tuple[int, int, str] | None:
    """(start, end, label) of the Doxygen block tag (_DOXYGEN_FIELD) opening the comment line
    where the sentence at `start` begins, right before it, or whose name the sentence begins
    with ("@param commit a previously loaded commit." is read "commit a previously ...":
    extract.sentence_spans cuts the name); the label as written, white space collapsed
    ("@param commit", "\\return"). `within`: also the tag whose description the sentence
    goes on, a later sentence of it on the tag's line or under it (_doxygen_field_above:
    "@param path the path to look in. This can be a path to a file" names both sentences
    "@param path"). None outside a comment, or when READ_C_COMMENT_PARTS is off."""
    if not READ_C_COMMENT_PARTS or not ("@" in text or "\\" in text):
        return None
    line_start = text.rfind("\n", 0, start) + 1
    m = _DOXYGEN_FIELD.match(text, line_start)
    blanked, _, comment = block_comments(text)
    if m is None and within and text.count("\n", 0, start) in comment:
        return _doxygen_field_above(text, line_start, comment)
    if m is None or start < m.start(1):
        return None
    if text.count("\n", 0, start) not in comment:
        return None
    if start > m.end() and blanked[m.end():start].strip(" \t#") and not within:
        return None                      # a later sentence on the tag's line is of its
        #                                  description all the same (`within`); a "\\c" before
        #                                  the words is blanked ("\\return \\c 0"), a reference's
        #                                  "#" is no word ("\\return #MBEDTLS_ERR_...")
    return m.start(1), m.end(), " ".join(m.group(1).split())


def _doxygen_field_above(text: str, line_start: int, comment: frozenset[int]) -> tuple[int, int, str] | None:
    """The Doxygen tag whose description goes on to the comment line at `line_start`: up
    through the description's lines (no empty gutter line, no other tag, no comment's
    opening between, at most MAX_FIELD_LINES)."""
    pos = line_start
    n = text.count("\n", 0, line_start)
    if _DOXYGEN_BLOCK.match(text, line_start):
        return None                      # a tag of its own (a "\\note")
    for k in range(n - 1, max(n - 1 - MAX_FIELD_LINES, -1), -1):
        pos = text.rfind("\n", 0, pos - 1) + 1
        line = text[pos:text.find("\n", pos)]
        if k not in comment or not line.strip(" \t*") or "/*" in line:
            return None
        m = _DOXYGEN_FIELD.match(line)
        if m is not None:
            return pos + m.start(1), pos + m.end(), " ".join(m.group(1).split())
        if _DOXYGEN_BLOCK.match(line):
            return None
    return None


def doxygen_lines(text: str) -> frozenset[int]:
    """The numbers of the comment lines that a Doxygen block tag opens (_DOXYGEN_BLOCK): each
    starts a sentence of its own (the "@param" lines under one another had read as one)."""
    if not READ_C_COMMENT_PARTS or not ("@" in text or "\\" in text):
        return frozenset()
    comment = block_comments(text)[2]
    return frozenset(n for n, line in enumerate(text.split("\n"))
                     if n in comment and _DOXYGEN_BLOCK.match(line))


_C_TRAILING_LINE = re.compile(r"^(?:[^\n]*[;,{}][ \t]*|[ \t]*#[ \t]*define[ \t][^\n]*)/\*[^\n]*\*/[ \t]*$", re.M)
"""A line of code with a comment after it, closed on the line ("float priority; /* ... */",
"#define EM_386 3 /* Intel 80386 */"): C, with no comment line of its own."""
_TRAILING_OPEN = re.compile(r"/\*+!?<?[ \t]*")


@lru_cache(maxsize=64)
def trailing_comments(text: str) -> dict[int, int]:
    """Per line of code (block_comments) with a comment opened after its code: where in the
    line the comment's words begin (after "/*", "/**<", "/*!<")."""
    if not (READ_TRAILING_COMMENTS and READ_C_COMMENTS) or "/*" not in text:
        return {}
    code = block_comments(text)[1]
    out: dict[int, int] = {}
    for n, line in enumerate(text.split("\n")):
        if n in code and "/*" in line:
            at = next((m.start() for m in re.finditer(r"/\*", line)
                       if line[:m.start()].strip() and _opens_comment(line, m.start())), None)
            if at is not None:
                out[n] = _TRAILING_OPEN.match(line, at).end()
    return out


def in_trailing_comment(text: str, start: int) -> bool:
    """Whether the sentence at `start` opens a comment after the code on its line
    (trailing_comments): it begins there, no fragment."""
    n = text.count("\n", 0, start)
    col = trailing_comments(text).get(n)
    return col is not None and start == text.rfind("\n", 0, start) + 1 + col


_DOXYGEN_LINK = re.compile(r'[\\@]ref[ \t]+[\w:.()]+[ \t]+"([^"\n]*)"|[\\@]ingroup[ \t]+\w+')
"""Doxygen's link with its own words, "\\ref libusb_transfer::length "length"", read as its
words ("length"; the name and the words were both read: "... populate the
libusb_transfer::length "length" field", judged noise), and a comment's group,
"\\ingroup libusb_asyncio", read as nothing (ccode4, stop 51)."""
_C_CODE = re.compile(r"^[ \t]*(?:#[ \t]*[a-z]+\b.*|[}{].*|.*[;{][ \t]*|"
                     r"[A-Za-z_]\w*(?:[ \t]*=[ \t]*[^,\s]+)?,[ \t]*)$")
"""A line of C-family code outside its comments: a preprocessor directive ("#\tdefine
LZMA_CHECK_ID_MAX 15", "#include"), a line opening with a brace ("} lzma_mt;") or ending in
";" or "{" ("uint64_t memlimit_stop;"), an enum's member ("BROTLI_PARAM_NDIRECT = 8,"). A
line of prose may end in "," ("... specific to the GCC family of compilers,"): only a
member's one name (and value) before it makes it code."""


@lru_cache(maxsize=64)       # a passage's sentences and each of their subjects read it
def block_comments(text: str) -> tuple[str, frozenset[int], frozenset[int]]:
    """`text` with the marks of its C-family block comments ("/*", "/**", "*/", the "*"
    gutter that opens each line inside one, a Doxygen "\\brief", "@param" or "@c") turned
    into spaces of the same length, so that a comment reads as the sentences it holds (its
    lines had been cut at each gutter, read as list items: "* breaking the ABI."); the
    numbers of the lines outside the comments that are code (_C_CODE: what is left of the
    line without its comments), which no sentence reads across; and of the lines in a
    comment, whose words are prose ("return LZMA_MEMLIMIT_ERROR." ends a sentence there, no
    Python statement). A passage may open inside a comment (a header's long documentation
    block cut by the chunker, or a window of it): a "*/" that ends a line before any "/*"
    opens one says so. Only text with a "*/" at a line's end, and a comment's mark at a
    line's start or two lines of gutter, is read so: a glob in prose
    ("/usr/share/doc/*/examples", "/opt/*/man") or "a comment begins with /* and ..." is no
    comment."""
    if not READ_C_COMMENTS or "*" not in text:   # every passage comes here: most have no "*"
        return text, frozenset(), frozenset()
    close = _C_CLOSE_EOL.search(text)
    if close is None:                    # a window inside one long comment: its gutters
        inside = _all_gutter(text) or _gtkdoc_window(text)   # alone say so
        if not inside and not (READ_C_COMMENTS_WHOLE and _cut_before_close(text)):
            return text, frozenset(), frozenset()
    elif not (_C_BLOCK_LINE.search(text) or len(_C_GUTTER_LINES.findall(text)) >= 2
              or (READ_TRAILING_COMMENTS and _C_TRAILING_LINE.search(text))):
        return text, frozenset(), frozenset()
    else:
        opener = next((m for m in re.finditer(r"/\*", text)
                       if _opens_comment(text[text.rfind("\n", 0, m.start()) + 1:m.end()], m.start()
                                         - text.rfind("\n", 0, m.start()) - 1)), None)
        inside = opener is None or close.start() < opener.start()
    chars = list(text)
    code: set[int] = set()
    comment: set[int] = set()
    pos = 0
    depth, left = 0, 0                # a declaration's brackets still open, its lines left
    for n, line in enumerate(text.split("\n")):
        was_inside = inside
        if inside:
            gutter = _C_GUTTER.match(line)
            if gutter:
                chars[pos + gutter.start(1)] = " "
        k, rest = 0, []               # rest: the line's code, outside its comments
        opened = False                # a comment opens on this line ("/** ... */" alone)
        for m in _C_MARK.finditer(line):
            if m.start() < k:
                continue
            mark = m.group(0)
            if not inside and mark.startswith("/") and _opens_comment(line, m.start()):
                rest.append(line[k:m.start()])
                inside = opened = True
                if READ_TRAILING_COMMENTS and line[m.end():m.end() + 1] == "<" and mark != "/*":
                    chars[pos + m.end()] = " "   # Doxygen's "/**<", "/*!<": the member before
            elif inside and mark.endswith("/"):
                inside = False
            else:
                continue
            chars[pos + m.start():pos + m.end()] = " " * (m.end() - m.start())
            k = m.end()
        if not inside:
            rest.append(line[k:])
        if was_inside or inside or (opened and READ_C_COMMENTS_WHOLE):
            comment.add(n)
            for m in _DOXYGEN.finditer(line):
                chars[pos + m.start():pos + m.end()] = " " * (m.end() - m.start())
            for m in (_DOXYGEN_LINK.finditer(line) if READ_C_COMMENTS_WHOLE else ()):
                shown = m.span(1) if m.group(1) is not None else (m.end(), m.end())
                for a, b in ((m.start(), shown[0]), (shown[1], m.end())):
                    chars[pos + a:pos + b] = " " * (b - a)
        code_part = "".join(rest)
        if code_part.strip() and (_C_CODE.match(code_part) or (
                READ_C_COMMENT_PARTS and opened and _LAST_MEMBER.fullmatch(code_part))):
            code.add(n)
        if READ_C_DECLARATIONS_WHOLE and code_part.strip():
            if depth > 0 and left > 0 and not was_inside:
                code.add(n)               # a line of the declaration opened above
                depth += code_part.count("(") - code_part.count(")")
                left -= 1
            elif _C_OPENS_CALL.fullmatch(code_part) and not was_inside:
                code.add(n)
                depth, left = code_part.count("(") - code_part.count(")"), MAX_CALL_LINES
            else:
                depth = 0
        pos += len(line) + 1
    return "".join(chars), frozenset(code), frozenset(comment - code)


_C_GUTTER_LINES = re.compile(r"^[ \t]*\*(?:[ \t]|$)", re.M)
_C_OPENS_LINE = re.compile(r"^[ \t]*/\*", re.M)


def _cut_before_close(text: str) -> bool:
    """Whether `text` ends inside a comment it opens: a line opens with "/*" and at least
    two lines of its "*" gutter follow (the chunker cut a header's long comment before its
    "*/": GnuTLS's gtk-doc block of gnutls_certificate_status_t, whose "@GNUTLS_CERT_REVOKED:
    ... In X.509 this will be\n *   set only if CRLs are checked." was read as a list of
    items "* set only if CRLs are checked."). Only asked when no line of `text` ends a
    comment."""
    openers = list(_C_OPENS_LINE.finditer(text))
    return bool(openers) and len(_C_GUTTER_LINES.findall(text, openers[-1].end())) >= 2


_C_EMPTY_GUTTER = re.compile(r"^[ \t]*\*[ \t]*$", re.M)


def is_c_code(line: str) -> bool:
    """Whether `line` (without comment marks) is a line of C-family code (_C_CODE): a
    directive, a declaration, a statement, an enum's member."""
    return bool(_C_CODE.match(line))


def _all_gutter(text: str) -> bool:
    """Whether `text` lies inside one C comment, none of its ends in it: every line with
    words opens with the "*" gutter, and at least three lines are the gutter alone (a
    Markdown list has no empty items; FreeType's comments run over many chunks)."""
    if len(_C_EMPTY_GUTTER.findall(text)) < 3:
        return False
    lines = [x for x in text.split("\n") if x.strip()]
    return sum(bool(_C_GUTTER.match(x)) for x in lines) >= len(lines) - 1


READ_GTKDOC = True
"""Whether gtk-doc fields ("@name: description") are read as fields (GTKDOC_TAG,
gtkdoc_field, _gtkdoc_window); False reads them as before stop 49
(scripts/record_answers_for_judging.py --no-gtk-doc, set before any passage is read)."""
GTKDOC_TAG = re.compile(r"[ \t]*(?:/\*+|\*)?[ \t]*@([A-Za-z_]\w*):(?=[ \t]|$)")
"""A gtk-doc (and FreeType docmaker) field at a comment line's start: "@session: is a
#gnutls_session_t type.", " * @GNUTLS_CIPHER_AES_256_CBC: AES in CBC mode with 256-bit
keys.", FreeType's "@description:". The description after it is prose; the tag names what
it describes (GTKDOC_LABELS aside)."""
GTKDOC_LABELS = frozenset("""description input output inout return returns note notes also since values
fields order example examples abstract title section chapter keywords layout struct enum function
macro type except deprecated stability""".split())
"""Tags that label a part of an entry (FreeType's "@description:", "@input:", "@return:";
gtk-doc's "@Since:"), not a parameter or member: they name nothing a sentence describes."""
_GTKDOC_LINE = re.compile(r"^[ \t]*\*[ \t]+@[A-Za-z_]\w*:", re.M)


def _gtkdoc_window(text: str) -> bool:
    """Whether `text` lies inside one gtk-doc comment, none of its ends in it: two or more
    lines are "* @name:" fields, and every other line with words but one opens with the
    "*" gutter (GnuTLS's enums: a window of their members' lines has no "*/" and no empty
    gutter line)."""
    if not READ_GTKDOC or len(_GTKDOC_LINE.findall(text)) < 2:
        return False
    lines = [x for x in text.split("\n") if x.strip()]
    return sum(bool(_C_GUTTER.match(x)) for x in lines) >= len(lines) - 1


_OWN_FIELD = re.compile(r"[ \t]*(?:/\*+|\*)?[ \t]*@\w+:")   # "@cryptoAppDefaultPwdCallback:the ..."
MAX_FIELD_LINES = 12
"""How far up from a sentence gtkdoc_field(within=True) looks for the field whose description
the sentence goes on: a gtk-doc description runs a few lines (GnuTLS's longest in the bench
headers: 7)."""


def gtkdoc_field(text: str, start: int, *, within: bool = False) -> tuple[int, int, str] | None:
    """(start, end, name) of the gtk-doc field (GTKDOC_TAG) that opens the line where the
    sentence at `start` begins, right before it; the name None for a label (GTKDOC_LABELS).
    Only inside a C-family comment (block_comments). `within`: also the field whose
    description the sentence goes on, a later sentence of it ("@GNUTLS_CERT_REVOKED:
    Certificate is revoked by its authority.  In X.509 this will be\n *   set only if CRLs
    are checked.": the second sentence is of GNUTLS_CERT_REVOKED too), up through the
    description's lines (no empty gutter line, no comment's opening between)."""
    if not READ_GTKDOC:
        return None
    line_start = text.rfind("\n", 0, start) + 1
    m = GTKDOC_TAG.match(text, line_start)
    comment = block_comments(text)[2]
    n = text.count("\n", 0, start)
    within = within and READ_C_COMMENTS_WHOLE
    if (within and n in comment and not (m is not None and "@" in text[line_start:m.end()])
            and not _OWN_FIELD.match(text, line_start)):
        pos = line_start
        for k in range(n - 1, max(n - 1 - MAX_FIELD_LINES, -1), -1):
            pos = text.rfind("\n", 0, pos - 1) + 1
            line = text[pos:text.find("\n", pos)]
            if k not in comment or not line.strip(" \t*") or "/*" in line:
                return None
            m = GTKDOC_TAG.match(text, pos)
            if m is not None and "@" in line[:m.end() - pos]:
                line_start = pos
                break
        else:
            return None
    elif m is None or (text[m.end():start].strip() and not within) or "@" not in text[line_start:start]:
        return None
    if n not in comment:
        return None
    name = m.group(1)
    return m.start(1) - 1, m.end(1) + 1, (None if name.lower() in GTKDOC_LABELS else name)


_GTKDOC_SYMBOL = re.compile(r"[ \t]*(?:/\*\*+)?[ \t]*\*?[ \t]*([A-Za-z_]\w*(?:::\w+)?)[ \t]*:[ \t]*$")


def gtkdoc_symbol(text: str, line_start: int) -> str | None:
    """The symbol a gtk-doc comment documents, named on its first line (" * gnutls_record_send:",
    "/** xmlSecKeysMngrCreate:"), looked up from the comment line at `line_start` up to the
    comment's start; None without one in the passage."""
    comment = block_comments(text)[2]
    n = text.count("\n", 0, line_start)
    lines = text.split("\n")
    while n >= 0 and n in comment:
        m = _GTKDOC_SYMBOL.fullmatch(lines[n])
        if m and not GTKDOC_TAG.match(lines[n]):
            return m.group(1)
        if "/*" in lines[n]:
            return None
        n -= 1
    return None


def _opens_comment(line: str, at: int) -> bool:
    """Whether the "/*" at `at` of `line` opens a comment: at the line's start, or after a
    statement, a declaration or an #include ("int n; /* count */", "RED, /* red */");
    not in a string, nor in prose ("the comment begins with /* and extends to ...")."""
    before = line[:at]
    return before.count('"') % 2 == 0 and (not before.strip() or bool(re.search(r"[;{}),>][ \t]*$", before))
                                           or (READ_C_COMMENT_PARTS and _AFTER_VALUE.fullmatch(before) is not None))


_C_WORDS = frozenset("""extern static const volatile unsigned signed int long short char void float
double struct union enum typedef inline register auto bool define""".split())
MAX_DECLARATION_LINES = 6


def _trails(line: str) -> bool:
    """Whether a comment opens after the code of `line` and goes on under it."""
    return line.rfind("/*") > line.rfind("*/")


def c_subject(text: str, at: int) -> tuple[int, int, str] | None:
    """The declaration a C-family comment holding offset `at` describes (block_comments),
    as (start, end, name): the one right under the comment (Doxygen and GNU write it there:
    "`lzma_easy_encoder()`", "`argp_program_version`"), else the one right above it (zlib
    writes a function's prototype, then its comment: "`deflateInit2()`"). A comment's
    sentence said what a function does without saying which ("Add 16 to windowBits to
    write a simple gzip header ..."); annotators judged such quotes only partly answering
    (stop 48, ccode). A comment that trails its member and goes on under it ("ZSTD_c_chainLog=103,
    /* Size of ...") is that member's; a declaration with its own comment right above it is
    not the comment's under it (the passage cut the one it describes). None outside a
    comment or without a declaration beside it."""
    blanked, code, comment = block_comments(text)
    n = text.count("\n", 0, at)
    lines = text.split("\n")
    col = trailing_comments(text).get(n)
    if col is not None and at >= text.rfind("\n", 0, at) + 1 + col:
        name = _declared_name(lines[n])  # "float priority;  /* as given from ..."
        if name is None or len(name.rstrip("()")) < 3:
            return None
        start = sum(len(x) + 1 for x in lines[:n])
        return start + len(lines[n]) - len(lines[n].lstrip()), start + len(lines[n]), name
    if n not in comment:
        return None
    first, last = n, n
    while first - 1 in comment:
        first -= 1
    while last + 1 in comment:
        last += 1
    found = None
    if READ_C_COMMENTS_WHOLE and first > 0 and first - 1 in code and _trails(lines[first - 1]):
        found = (first - 1, first - 1)   # "ZSTD_c_chainLog=103,   /* Size of ...": that member's
    if found is None and last + 1 < len(lines) and lines[last + 1].strip() and last + 1 not in comment:
        k = last + 1                     # under it: up to the line that ends the declaration
        while k < min(len(lines), last + 1 + MAX_DECLARATION_LINES) and k not in code and lines[k].strip():
            k += 1
        if k in code and not (READ_C_COMMENTS_WHOLE and k == last + 1 and "/*" in lines[k]
                              and not _C_OPENS_LINE.match(lines[first])):
            found = (last + 1, k)        # (the rest of a comment the passage opens inside,
            #                              over a member with a comment of its own on its line,
            #                              "ZSTD_c_searchLog=104, /* ...", is no comment of it)
    if found is None and first > 0 and first - 1 in code:
        k = first - 1                    # above it: up from the line that ends it
        while k - 1 >= 0 and k - 1 not in code and k - 1 not in comment and lines[k - 1].strip() \
                and first - k < MAX_DECLARATION_LINES:
            k -= 1
        depth = lines[k].count(")") - lines[k].count("(")
        while READ_C_DECLARATIONS_WHOLE and depth > 0 and k - 1 >= 0 and k - 1 not in comment \
                and first - k < MAX_DECLARATION_LINES:
            k -= 1                       # up to the line that opens its brackets ("ZEXTERN int
            depth += lines[k].count(")") - lines[k].count("(")   # ZEXPORT deflateInit2 OF((...,")
        if not (k - 1 >= 0 and k - 1 in comment) or not READ_C_COMMENTS_WHOLE:
            found = (k, first - 1)       # (a declaration with its own comment right above it,
            #                              "/** Produce output ... */ BROTLI_OPERATION_FLUSH = 1,",
            #                              is that comment's: this one describes the next, which
            #                              the passage cut off)
    if found is None:
        return None
    name = _declared_name(" ".join(lines[found[0]:found[1] + 1]))
    if name is None or len(name.rstrip("()")) < 3:
        return None                      # "SEXP s, t;" in a manual's listing names nothing
    start = sum(len(x) + 1 for x in lines[:found[0]])
    start += len(lines[found[0]]) - len(lines[found[0]].lstrip())
    end = sum(len(x) + 1 for x in lines[:found[1]]) + len(lines[found[1]])
    return start, end, name


SHOW_VALUES = True
"""Whether a constant's subject shows its value (defined_value: "`#define XMLSEC_BASE64_LINESIZE
64` The default maximum base64 encoded line size."); False shows its name alone, as before
stop 51 (scripts/record_answers_for_judging.py --no-values)."""
MAX_VALUE_CHARS = 40
_DEFINE = re.compile(r"[ \t]*#[ \t]*define[ \t]+([A-Za-z_]\w*)[ \t]+(.+?)[ \t]*(?:/\*.*\*/|//.*)?[ \t]*")
_C_COMMENT_TEXT = re.compile(r"/\*.*?(?:\*/|$)|//.*")   # on one line; one a line's end cuts too
_LITERAL_VALUE = re.compile(r"(?<!\w)(?:0[xX][0-9a-fA-F]+|\d+(?:\.\d+)?)|[\"']")
"""A value worth its line: a number ("11", "0xFD2FB528", "UINT32_C(0x10)", "(1u << 3)") or a
string; another name ("ZSTD_c_experimentalParam14", an alias) says nothing more."""
_MEMBER = re.compile(r"[ \t]*([A-Za-z_]\w*)[ \t]*=[ \t]*(.+?)[ \t]*,?[ \t]*(?:/\*.*\*/|//.*)?[ \t]*")


def defined_value(declaration: str) -> str | None:
    """A constant's definition as a subject shows it, its value with its name: a macro's
    one-line "#define NAME VALUE" ("#define BROTLI_DEFAULT_QUALITY 11", "#define
    ZSTD_MAGICNUMBER 0xFD2FB528"), an enum member's "NAME = VALUE" ("BROTLI_MODE_TEXT = 1",
    "ZSTD_c_chainLog=103"), the value a number or a string (_LITERAL_VALUE), as written (white
    space collapsed: the quote's name line is the file's).
    A comment says what the constant is ("Default value for ::BROTLI_PARAM_QUALITY
    parameter."), the line under it what it is worth: asked "brotli default quality level",
    annotators judged the quote with the name alone only partly answering (ccode-018,
    ccode3-021). None for anything else: a function-like macro ("#define MAX(a, b) ..."), a
    value continued on the next line or longer than MAX_VALUE_CHARS, unbalanced
    parentheses."""
    if not SHOW_VALUES or "\n" in declaration.strip():
        return None
    declaration = _C_COMMENT_TEXT.sub(" ", declaration)
    m = _DEFINE.fullmatch(declaration) or _MEMBER.fullmatch(declaration)
    if m is None:
        return None
    value = " ".join(m.group(2).split())
    if (len(value) > MAX_VALUE_CHARS or value.endswith("\\") or value.count("(") != value.count(")")
            or "{" in value or ";" in value or not _LITERAL_VALUE.search(value)):
        return None
    return " ".join(declaration[:m.end(2)].split())   # as written, white space collapsed


def _declared_name(declaration: str) -> str | None:
    """What a C declaration declares: a function's name with "()" ("extern
    LZMA_API(lzma_ret) lzma_easy_encoder(uint32_t preset, ...)", zlib's "ZEXTERN int ZEXPORT
    deflateInit2 OF((z_streamp strm, ...));"), a macro's, a variable's, a field's or an enum
    member's name."""
    d = declaration.split("//")[0]
    if READ_C_COMMENTS_WHOLE:            # a trailing comment's words are no declaration's
        d = _C_COMMENT_TEXT.sub(" ", d)   # ("... frame header _whenever known_ (default:1)")
    m = re.match(r"^\s*#\s*(\w+)\s+([A-Za-z_]\w*)", d)
    if m or d.lstrip().startswith("#"):  # a macro's name; "#ifndef X", "#include" name nothing
        return m.group(2) if m and m.group(1) == "define" else None
    pointer = re.search(r"\(\s*(?:[A-Z][A-Z0-9_]*\s+)?\*\s*([A-Za-z_]\w*)\s*\)\s*\(", d)
    if pointer and "(" not in re.sub(r"\b[A-Z][A-Z0-9_]*\s*\([^()]*\)", " ", d[:pointer.start()]):
        return pointer.group(1)          # a function pointer's name; not a parameter's, "int
        #                                  mbedtls_pk_sign(..., int (*f_rng)(void *, ...), ...)"
        #                                  declares mbedtls_pk_sign (ccode6-030, stop 53)
    d = re.sub(r"\b[A-Z][A-Z0-9_]*\s*\(\s*\(.*", " (", d)   # zlib's OF((...)): a prototype
    d = re.sub(r"\b[A-Z][A-Z0-9_]*\s*\([^()]*\)", " ", d)       # LZMA_API(lzma_ret)
    m = re.search(r"([A-Za-z_]\w*)\s*\(", d)
    if m and m.group(1) not in _C_WORDS:
        if re.fullmatch(r"[A-Z][A-Z0-9_]*", m.group(1)):
            return None                  # a wrapper macro around the declaration, libpng's
            #                              "PNG_EXPORT(1, png_uint_32, png_sig_cmp, (...))":
            #                              its name is no function's (ccode2, stop 48)
        return m.group(1) + "()"
    head = re.split(r"[=\[;{,]", d)[0]
    names = [w for w in re.findall(r"[A-Za-z_]\w*", head) if w not in _C_WORDS]
    plain = [w for w in names if not re.fullmatch(r"[A-Z][A-Z0-9_]*", w)]
    if plain:
        return plain[-1]
    return names[-1] if len(names) == 1 else None



QUOTE_WHOLE_COMMENTS = True
"""Whether a comment of code said whole without a full stop is quotable (said_whole); False
gives the candidates as before stop 50 (scripts/record_answers_for_judging.py
--no-whole-comments)."""
_NOTE_TO_SELF = re.compile(r"(?:TODO|FIXME|XXX|HACK)\b")
_ENTRY = re.compile(r"^[ \t]*(?:#+|\*)?[ \t]*(?:[\w.*/]+|\"[^\"]+\"|'[^']+')(?:[ \t]*\([^)]*\))?"
                    r"[ \t]*(?::|--?)[ \t]+\S")
"""A line of a Google-style section ("    _dict: (optional) Specifies the class", "TypeError
-- When f is invalid type") or of a list of values ('# "id_token" - don't return the access
token'): an entry named by its first word."""
_LIST_LINE = re.compile(r"^[ \t]*(?:[-*+\u2022]|\d+[.)]|-#)[ \t]")
_C_END_LINE = re.compile(r"^[ \t]*(?:\*[ \t]*|\*+/.*|/\*.*)$")
_DOC_MARK = re.compile(r"^[ \t]*[rRuUbBfF]{0,2}(\"\"\"|\'\'\')|(\"\"\"|\'\'\')[ \t]*$", re.M)
_ANY_FIELD = re.compile(r"[ \t]*:\w+(?:[ \t]+[^:`]+)?:(?:[ \t]|$)")   # ":type exclude: iterable"
_CLOSE_REST = re.compile(r"^[ \t]*(?:\*+/|\"\"\"|\'\'\')?[ \t]*$")


def in_docstring(text: str, start: int) -> bool:
    """Whether `start` lies in a docstring of `text`: the nearest triple quotes before it
    open one (at a line's start, or alone on a line under a `def`/`class` line), or, the
    passage opening inside one, the nearest after it close one (at a line's end)."""
    before, after = None, None
    for m in _DOC_MARK.finditer(text):
        line_start = text.rfind("\n", 0, m.start()) + 1
        line_end = text.find("\n", m.end())
        line = text[line_start:len(text) if line_end < 0 else line_end]
        if re.fullmatch(r"[ \t]*[rRuUbBfF]{0,2}(?:\"\"\"|\'\'\')[ \t]*", line):
            above = text[:line_start].rstrip().rsplit("\n", 1)[-1]
            opens = bool(DEF_LINE.match(above)) or above.rstrip().endswith(":")
        else:
            opens = m.group(1) is not None
        if m.start() < start:
            before = opens
        elif after is None:
            after = opens
            break
    return bool(before) if before is not None else after is False


_MARKS = re.compile(r"^[ \t]*(?:#+|/\*+!?<?|\*+/?|[rRuUbBfF]{0,2}(?:\"\"\"|\'\'\'))?")


def _title_case(sentence: str) -> bool:
    """A heading of code ("XSLT Debug Tracing Tracing Types", "Extra Functions"): every
    word of letters capitalised."""
    words = re.findall(r"[^\W\d_]+", sentence)
    return bool(words) and all(w[0].isupper() for w in words)


def _begins(text: str, start: int, lines: list[str], first: int) -> bool:
    """Whether the sentence at `start` begins what its comment says: it follows a finished
    sentence, or its line opens the comment (the line above has no words of it, ends a
    sentence or is code); on the passage's first line only a capital says so."""
    if in_trailing_comment(text, start):
        return True                      # "float priority;  /* as given from the stylesheet ..."
    opening = text[text.rfind("\n", 0, start) + 1:start]
    if _MARKS.sub("", opening).strip():
        return bool(re.search(r"[.!?:][\W_]{0,3}[ \t]+$", opening))   # "... is set. If it ..."
    if first == 0:
        return text[start:start + 1].isupper()
    above = lines[first - 1]
    opened = above[above.rfind("/*"):] if "/*" in above else ""
    if opened and "*/" not in opened and re.search(r"\w", opened):
        return False                     # "xmlDocPtr localRVT; /* list of ... freed when" goes on
    words = _MARKS.sub("", above).strip()
    if not words or re.search(r"[.!?:][\W_]{0,3}$", words) or re.search(r"\*+/[ \t]*$", above):
        return True
    if _COMMENT.match(lines[first]):
        return not _COMMENT.match(above)              # code above a "#" comment
    if first in block_comments(text)[2]:
        return (first - 1) not in block_comments(text)[2]
    return bool(DEF_LINE.match(above)) or above.rstrip().endswith(":")


def said_whole(text: str, start: int, end: int) -> bool:
    """Whether the sentence text[start:end] is a comment of code, or a docstring's
    paragraph, said whole without a full stop: code is commented so ("# Don't put the
    payload content inside the encoded token when detached", "/* the raw key ID of the
    responder */", a docstring's ":param exclude: List of strings representing options to
    be omitted from autocompletion", "File completer class, optionally takes a list of
    allowed extensions"), and such a comment is the statement, as a list item of notes is.

    The comment must be seen to end right after it: nothing but its close ("*/", '\"\"\"')
    after it on its line, and the next line blank, a comment's empty line or close, a
    field (":type exclude:", "@flags:") or code, with no list or deeper lines under it
    ("This method is used by" over "* AccessTokenEndpoint" introduces them). Kinds: a
    "#" comment of code (is_comment_line), a C-family comment (block_comments), a
    docstring (in_docstring). Not: code, prose of fewer than three words (_prose), a note
    to self ("TODO: ..."), a heading ("END OF OPTIONS", "XSLT Debug Tracing Types"), an
    item of a list in the comment ("- Selected match finder (encoder only)"), two or more
    entries of a section run together ("f: Path to the file ... _dict: (optional)
    Specifies the class ...", toml's "Args:", judged noise in pycode3), the rest of a
    comment opened after code on the line above ("xmlDocPtr localRVT; /* list of local
    tree fragments; will be freed when"), a sentence on the passage's last line (the
    chunker may have cut it)."""
    if not QUOTE_WHOLE_COMMENTS:
        return False
    sentence = text[start:end]
    line_start = text.rfind("\n", 0, start) + 1
    if (not _prose(sentence) or _NOTE_TO_SELF.match(sentence) or not re.search(r"[a-z]", sentence)
            or not re.search(r"[\w)`'\"]$", sentence) or _title_case(sentence)
            or any(is_statement_line(x) for x in sentence.split("\n"))):
        return False
    if _LIST_LINE.match(re.sub(r"^[ \t]*(?:#+|\*)?", "", text[line_start:end])):
        return False                     # an item of a list in a comment: read with its list
    if sum(bool(_ENTRY.match(x)) for x in text[line_start:end].split("\n")) >= 2:
        return False                     # "f: Path to the file" over "_dict: (optional) ...":
        #                                  a section's entries (Args:, Raises:) run together
    line_end = text.find("\n", end)
    if line_end < 0 or not _CLOSE_REST.match(text[end:line_end]):
        return False
    lines = text.split("\n")
    first, last = text.count("\n", 0, start), text.count("\n", 0, end)
    if not _begins(text, start, lines, first):
        return False
    after = lines[last + 1]
    below = next((x for x in lines[last + 1:last + 3] if x.strip()), "")
    if is_comment_line(lines, first) and is_comment_line(lines, last):
        if _COMMENT.match(after) and _COMMENT.sub("", after, count=1).strip():
            return False                 # the comment goes on
        nxt = next((x for x in lines[last + 1:last + 3] if _COMMENT.sub("", x, count=1).strip()), "")
        return not _LIST_LINE.match(_COMMENT.sub("", nxt, count=1))
    opening = text[line_start:start]
    if (first == last and (re.fullmatch(r"[ \t]*/\*+!?<?[ \t]*", opening) or in_trailing_comment(text, start))
            and re.match(r"[ \t]*\*+/[ \t]*$", text[end:line_end])):
        return True                      # "/* the raw key ID of the responder */" on its own
        #                                  line, or after its member's code ("float priority;
        #                                  /* as given from the stylesheet, not computed */")
    comment = block_comments(text)[2]
    if first in comment and last in comment:
        if "*/" in text[line_start:start]:
            return False                 # a comment after code on its line
        if "*/" in text[end:line_end] or (last + 1) not in comment:
            return True
        if not (not after.strip() or _C_END_LINE.match(after) or GTKDOC_TAG.match(after)):
            return False
        bare = re.sub(r"^[ \t]*\*", "", next((x for x in lines[last + 1:last + 3]
                                               if re.sub(r"^[ \t]*\*+/?", "", x).strip()), ""))
        return not _LIST_LINE.match(bare)
    if not in_docstring(text, start):
        return False
    if re.search(r"\"\"\"|\'\'\'", text[end:line_end]):
        return True
    if not (not after.strip() or _DOC_MARK.match(after) or _ANY_FIELD.match(after)):
        return False
    deeper = below.strip() and indent_width(below) > indent_width(lines[first]) + 1
    return not (_LIST_LINE.match(below) or (deeper and not _ANY_FIELD.match(below)))


READ_ENTRIES_IN_LOWER_CASE = True
"""A docstring entry's description that opens in lower case with a function word (":param
length: the number of items to iterate over.") is quotable (opens_entry): before stop 52 it
was dropped as the rest of a sentence an example cut in two (noise.is_continuation)."""


READ_MESSAGES = True
"""Read the messages of code (messages_of): the words of an error, a warning, a log line or
a command-line help text written as a string in a statement ("raise ValueError('Document
must have exactly one root.')", "log.debug('Origin \"%s\" is not HTTPS, CORS not allowed.',
origin)", "help=\"...\"") are quotable, named by the statement and the condition it stands
under. Off, such a statement is code and no sentence (stop 51)."""


@dataclass(frozen=True)
class Message:
    """A message of code: its words text[start:end] (from the first piece's first character
    inside its quotes to the last piece's last), `words` that stretch with the quote marks
    and the white space between its pieces blanked (offsets unchanged), and what names it:
    text[subject_start:subject_end], read as `subject` ("if full_document and
    len(input_dict) != 1: raise ValueError")."""

    start: int
    end: int
    words: str
    subject_start: int
    subject_end: int
    subject: str


_PIECE_GAP = re.compile(r"[ \t]*(?:\+[ \t]*|\\[ \t]*)?(?:\n[ \t]*(?:\+[ \t]*)?)?")
"""What stands between two pieces of one string (implicit concatenation over at most one
line break, a "+" or a "\\" continuation): "'... differ from '\n    'allowed by ...'"."""
_OPENERS = ("(", "[", "{", ",", "=", "+", "\\")
_HEAD_TRIM = re.compile(r"[\s(\[{,=+\\]+$")
MAX_HEAD_CHARS = 80           # a longer head is named by its call alone
MAX_STATEMENT_LINES = 4       # a statement wrapped over more lines is not followed up
_STATEMENT_HEAD = re.compile(r"^[ \t]*(?:(?:raise|return|yield|assert|await|elif|if|while)\b|"
                             r"[A-Za-z_][\w.]*(?:\[[^\]]*\])?[ \t]*(?:[-+*/|&]?=(?!=)|\())")
"""The first line of a statement a message stands in: a raise, return, ... or a condition,
an assignment ("msg = ...", "self.error = ..."), a call ("warnings.warn(")."""
_CALL_NAME = re.compile(r"^(?:(?:raise|return|yield|assert|await)[ \t]+)?[A-Za-z_][\w.]*")


def _strings_of(line: str) -> list[re.Match]:
    """The one-line string literals of a line of code before any "#" comment."""
    out = []
    pos = 0
    for m in _LITERAL.finditer(line):
        if "#" in line[pos:m.start()] or TRIPLE.match(line, m.start(2)):
            break
        out.append(m)
        pos = m.end()
    return out


def _without_comment(line: str) -> str:
    """A line of Python code without its "#" comment (a "#" inside a string is no comment)."""
    strings = _strings_of(line)
    at = line.find("#", strings[-1].end() if strings else 0)
    return line if at < 0 else line[:at]


def _code_line(line: str) -> bool:
    s = line.strip()
    return bool(s) and not s.startswith("#")


def messages_of(text: str) -> tuple[Message, ...]:
    """The messages of code in `text`: a string (or strings joined as one: implicit
    concatenation over lines) in a statement of Python code whose words are prose (_prose:
    "Document must have exactly one root.", not "%s=%s" or "--width"), outside docstrings
    and comments; a string alone on its line counts when the line above opens the call or
    assignment it belongs to ("raise ValueError(" over it), not under a def line (a
    docstring). Its name (Message.subject): the head of its statement (the statement's
    first line up to the string, or its call alone when that is long: "raise ValueError",
    "log.debug", "parser.add_argument('--width', help", "_TEXT_WARNING") after the condition
    it stands under (the nearest line above with less indentation, when that is an if,
    elif, while, for, with or except head or a def line)."""
    if not READ_MESSAGES or ("'" not in text and '"' not in text):
        return ()
    return _messages(text)


def _in_strings(lines: list[str]) -> list[bool]:
    """Per line: whether it is (part of) a triple-quoted string, a docstring: no code. A
    passage that opens inside one (its first triple quote closes it: text before the quotes,
    or quotes alone under a line that opens nothing) is read so from its first line."""
    inside, opened = [False] * len(lines), False
    first = next((n for n, line in enumerate(lines) if TRIPLE.search(line)), None)
    if first is not None and len(TRIPLE.findall(lines[first])) % 2:
        line = lines[first].strip()
        above = next((x for x in reversed(lines[:first]) if x.strip()), None)
        assigned = re.search(r"[=(,]\s*[rRuUbBfF]{0,2}(?:\"\"\"|''')", lines[first])
        if (not _DOCSTRING_OPEN.match(line) and not assigned) or (
                _DOCSTRING_OPEN.fullmatch(line) and above is not None
                and not _without_comment(above).rstrip().endswith(":")):
            opened = True
    for n, line in enumerate(lines):
        marks = len(TRIPLE.findall(line))
        inside[n] = opened or marks > 0
        if marks % 2:
            opened = not opened
    return inside


def _string_runs(lines: list[str], inside: list[bool]) -> list[list[tuple[int, re.Match]]]:
    """The strings of the lines of code, each as the (line, match) pieces that are one
    string: pieces joined by implicit concatenation (_PIECE_GAP) are one run."""
    pieces = [(n, m) for n, line in enumerate(lines)
              if not inside[n] and len(line) <= MAX_CODE_LINE and _code_line(line) for m in _strings_of(line)]
    runs: list[list[tuple[int, re.Match]]] = []
    for n1, b in pieces:
        if runs:
            n0, a = runs[-1][-1]
            gap = (lines[n0][a.end():] + "\n" + lines[n1][:b.start()]) if n1 == n0 + 1 else \
                lines[n0][a.end():b.start()] if n1 == n0 else None
            if gap is not None and _PIECE_GAP.fullmatch(gap):
                runs[-1].append((n1, b))
                continue
        runs.append([(n1, b)])
    return runs


def _statement_line(lines: list[str], first_line: int, first: re.Match) -> int | None:
    """The first line of the statement the string at `first` stands in, or None when the
    passage shows none (a string alone on its line under no opened call, or under a def
    line: a docstring)."""
    head_line = first_line
    if not lines[first_line][:first.start()].strip():   # a string alone on its line
        above = first_line - 1
        while above >= 0 and not lines[above].strip():
            above -= 1
        if above < 0 or not _without_comment(lines[above]).rstrip().endswith(_OPENERS) \
                or DEF_LINE.match(lines[above]):
            return None
        head_line = above
    for _ in range(MAX_STATEMENT_LINES):   # a wrapped statement: its first line
        if head_line == 0 or not _without_comment(lines[head_line - 1]).rstrip().endswith(_OPENERS[:4]):
            break
        head_line -= 1
    return head_line


def _condition(lines: list[str], inside: list[bool], head_line: int) -> tuple[int, str] | None:
    """(line, text) of what the statement at `head_line` stands under: the nearest line of
    code above with less indentation, when that is an if, elif, while, for, with or except
    head (the line, comment aside) or a def line (its whole signature); None otherwise
    ("else:", "try:", the module's top level, or the passage's first line when its
    indentation was cut by the chunker: what it stands under is not known)."""
    depth = indent_width(lines[head_line])
    for up in range(head_line - 1, -1, -1):
        line = lines[up]
        if not _code_line(line) or inside[up] or indent_width(line) >= depth:
            continue
        if up == 0 and not indent_width(line) and not DEF_LINE.match(line):
            return None
        rows = definition_lines(lines, up)
        if rows:
            return up, " ".join(" ".join(lines[up:up + rows]).split())
        if _CONTROL.match(line) and not re.match(r"[ \t]*(?:else|try|finally)[ \t]*:", line):
            return up, " ".join(_without_comment(line).split())
        return None
    return None


def _head(stmt: str, cut: int) -> str:
    """The name of a statement up to its message (its first line, to column `cut`): "raise
    ValueError", "msg", 'parser.add_argument("--width", help'; its call alone when that is
    long or its arguments before the message are no string ("raise ParseException(s, l") or
    hold a message of their own ('debug("Resetting completions because", greedy_actions[0]');
    "" when it is no statement of Python (a shell's "DATA_FILE=$(zenity ...")."""
    head = _HEAD_TRIM.sub("", " ".join(stmt[:cut].split()))
    opened = head.rfind("(")
    if len(head) > MAX_HEAD_CHARS or (opened > 0 and head.count("(") > head.count(")") and (
            not _LITERAL.search(head, opened)
            or any(_prose(x.group(3)) for x in _LITERAL.finditer(head, opened)))):
        call = _CALL_NAME.match(stmt.strip())
        head = call.group(0) if call else ""
    return "" if head.startswith(("'", '"')) or "$" in head or "`" in head else head


def _cut_inside(lines: list[str], head_line: int, last_line: int, last: re.Match) -> bool:
    """Whether the passage ends inside the statement (a bracket still open after its last
    string, nothing after it): the chunker may have cut the string ("Shell completion is not
    supported for Bash" and no more)."""
    if any(x.strip() for x in lines[last_line + 1:]) or lines[last_line][last.end():].strip(" \t,+\\"):
        return False
    code = _LITERAL.sub("", "\n".join(lines[head_line:last_line] + [lines[last_line][:last.end()]]))
    return sum(code.count(c) for c in "([{") > sum(code.count(c) for c in ")]}")


@lru_cache(maxsize=64)       # a passage's sentences and each of their subjects read it
def _messages(text: str) -> tuple[Message, ...]:
    _, code, comment = block_comments(text)
    if code or comment:
        return ()                        # C-family code (its strings: not yet read)
    lines = text.split("\n")
    starts, pos = [], 0
    for line in lines:
        starts.append(pos)
        pos += len(line) + 1
    inside = _in_strings(lines)
    out: list[Message] = []
    for run in _string_runs(lines, inside):
        (first_line, first), (last_line, last) = run[0], run[-1]
        said = "".join(m.group(3) for _, m in run)
        if not _prose(said) or "{{" in said or re.search(r"[<>]\w+[^<>]*>|[*&][ \t]*[),]|\([ \t]*\*", said):
            continue                     # not words a person reads ("%s=%s", a template, a
            #                              C signature: "int (*)(SSL *, unsigned char **, ...)")
        before = lines[first_line][:first.start()].rstrip()
        if before and before[-1] not in "(=,[{+":
            continue                     # words in quotes inside a line of prose
        head_line = _statement_line(lines, first_line, first)
        if head_line is None or not _STATEMENT_HEAD.match(lines[head_line]) or \
                _cut_inside(lines, head_line, last_line, last):
            continue
        stmt = lines[head_line]
        cut = first.start() if head_line == first_line else len(stmt)
        if head_line == first_line and any(_prose(x.group(3)) for x in _strings_of(stmt[:cut])):
            continue                     # the rest of a message an argument cuts in two
            #                              ('debug("Resetting completions because", x, "must ...")')
        head = _head(stmt, cut)
        if not head:
            continue
        under = _condition(lines, inside, head_line)
        subject_start = starts[under[0]] + indent_width(lines[under[0]]) if under else \
            starts[head_line] + indent_width(stmt)
        start, end = starts[first_line] + first.start(3), starts[last_line] + last.end(3)
        words = list(text[start:end])
        for (n0, a), (n1, b) in zip(run, run[1:]):   # blank what joins the pieces
            for at in range(starts[n0] + a.end(3), starts[n1] + b.start(3)):
                if words[at - start] != "\n":
                    words[at - start] = " "
        out.append(Message(start, end, "".join(words), subject_start,
                           starts[head_line] + len(stmt[:cut].rstrip()),
                           f"{under[1]} {head}" if under else head))
    return tuple(out)


def message_at(text: str, start: int) -> Message | None:
    """The message of code (messages_of) whose words hold offset `start`, if any."""
    if not READ_MESSAGES:
        return None
    return next((m for m in messages_of(text) if m.start <= start < m.end), None)
