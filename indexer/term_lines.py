"""The passage that defines what a lookup names: a reference manual's definition list
gives each option, flag or identifier a term line ("PATH_DIRS (-Q) <D>:", "-N file:",
"--stop-on-failure:"), and the description under it is the answer to a lookup of that
term. BM25 cannot tell that passage from the others that mention the term, and a long
option list is scored down by its length; search pins it (indexer/search.py).

A term line is a line of a passage ending in ":" whose term holds a name no word
tokenizer sees as a plain word (a flag, an identifier with "_" or other punctuation).
It matches a query that holds every token of one of its names ("-f, --force" has two),
compared as a person types them: case and "_" ignored ("setopt pathdirs" names
PATH_DIRS), except a one-letter flag's case ("-N" is not "-n"); a placeholder inside a name
stands for what is typed there ("$penv{<variable-name>}" names "$penv{PATH}"), one set
apart is an argument and no part of the name ("--target <tgt>")."""

from __future__ import annotations

import re

from indexer.bm25 import SHORT_FLAG, STOPWORDS

_TERM_LINE = re.compile(r"^[ \t]*(\S[^\n]{0,78}?):[ \t]*$", re.MULTILINE)
_ANNOTATION = re.compile(r"\([^)]*\)|<[^>]*>|\[[^\]]*\]")   # "(-Q)", "<D>", "[=<n>]"
# a placeholder inside a name stands for what a person types there: "$penv{<variable-name>}"
# names "$penv{PATH}", "CMAKE_<LANG>_FLAGS" names "CMAKE_CXX_FLAGS"
_GLUED_PLACEHOLDER = re.compile(r"(?<=[^\s(\[])<[^<>\s]+>|<[^<>\s]+>(?=[^\s,:)\]])")
_ANY = "\x00"
_LETTER = re.compile(r"[A-Za-z]")
_EDGE = "\"'`\u2018\u2019\u201c\u201d*|,.;:!?"
_PLAIN = re.compile(r"[A-Za-z]+")
MAX_DEFINING = 2
"""Pinned only where at most this many passages define the term: a flag that names an
option of many commands ("-v:") defines nothing in particular."""


def _norm(token: str) -> str:
    token = token.strip(_EDGE)
    if SHORT_FLAG.fullmatch(token):
        return token
    return token.lower().replace("_", "")


def _names(term: str) -> list[list[str]]:
    """The names a term line defines, each as its normalised tokens; only names with a
    token that is no plain word."""
    out = []
    for name in _ANNOTATION.sub(" ", _GLUED_PLACEHOLDER.sub(_ANY, term)).split(", "):
        raw = [t.strip(_EDGE) for t in name.split() if t.strip(_EDGE)]
        if not raw or all(_plain(t) for t in raw) or (len(raw) == 1 and SHORT_FLAG.fullmatch(raw[0])):
            continue
        if any(_ANY in t and not _LETTER.search(t) for t in raw):   # "<pathspec>...": anything
            continue
        tokens = [_norm(t) for t in raw]
        out.append(tokens)
        head = _VALUE.sub("", tokens[0])
        if (ARGUMENTS_OPTIONAL and (len(tokens) > 1 or head != tokens[0]) and not _plain(head)
                and not SHORT_FLAG.fullmatch(head) and _ANY not in head
                and all(_plain(t) or _ANY in t for t in tokens[1:])):
            out.append([head])          # its arguments left out, as a lookup types it
    return out


_VALUE = re.compile("=" + _ANY + "$")
ARGUMENTS_OPTIONAL = True
"""Whether a term line whose name is an option or operator followed by its arguments
("--output file:", "--format=<format>:", "<<< word:") also defines the option alone, as a
lookup types it ("git log --output", "what is <<< in zsh?"); a full match stays the longer.
Not a one-letter flag ("-u fd file:": "-u" is an option of many commands) and not a name
of plain words. False: only the whole name, as before stop 63."""


def _plain(token: str) -> bool:
    """A word prose holds as well: letters ("_files" is "files" to a reader), or a number
    under three digits (a list's "3:", "-9")."""
    bare = token.strip("_")
    number = bare.lstrip("-+")
    return bool(_PLAIN.fullmatch(bare)) or (number.isdigit() and len(number) < 3)


def match_length(query_tokens: set[str], text: str) -> int:
    """The most tokens of one name defined in `text` that the query holds all of (0: the
    text defines none of the query's names)."""
    best = 0
    for m in _TERM_LINE.finditer(text):
        for name in _names(m.group(1)):
            if len(name) > best and all(_holds(query_tokens, t) for t in name):
                best = len(name)
    return best


def _holds(query_tokens: set[str], token: str) -> bool:
    if _ANY not in token:
        return token in query_tokens
    pattern = re.compile(".+".join(re.escape(part) for part in token.split(_ANY)))
    return any(pattern.fullmatch(q) for q in query_tokens)


def query_tokens(query: str) -> set[str]:
    return {_norm(t) for t in query.split() if t.strip(_EDGE)}


_CAMEL = re.compile(r"[a-z][A-Z]")
_CAPITALS = re.compile(r"[A-Z]{4,}")
_CODE_GLUE = re.compile(r"[()\[\]{}=,\"`*]+")


def exact_names(query: str) -> list[str]:
    """The tokens of a lookup that name one thing as typed, which prose does not write by
    chance: at least three characters, no plain word or short number (_plain) unless its
    letters change case inside it ("ProxyAddHeaders") or it is capitals ("IPREFIX"), no
    lone one-letter flag ("-C" is an option of many commands): "2147483647", "##16" (of
    "[##16]"), "no-brotli", "-DFOREGROUND", "listmaster@zsh.org", "UNIQUE_ID"."""
    out = []
    for raw in query.split():
        # code's brackets, "=", "," glue names: "cmake_language(DEFER)" names both,
        # "--enable-mods-shared=most" the option (the value is a plain word)
        for token in (p.strip(_EDGE) for p in _CODE_GLUE.split(raw.strip(_EDGE))):
            if (len(token) < 3 or token.lower() in STOPWORDS or SHORT_FLAG.fullmatch(token)
                    or (_plain(token) and not _CAMEL.search(token) and not _CAPITALS.fullmatch(token))
                    or token in out):
                continue
            out.append(token)
    return out


def mention_count(names: list[str], text: str, *, case: bool = False) -> int:
    """How many of `names` (exact_names) `text` writes as a token of its own, case ignored
    ("no-brotli," in "variable no-brotli, set via SetEnv"); with `case`, a name in capitals
    only as written ("FIRST" is a keyword, "the first row" is not)."""
    return sum(1 for name in names
               if re.search(rf"(?<![\w-]){re.escape(name)}(?![\w-])", text,
                            0 if case and _CAPITALS.fullmatch(name) else re.IGNORECASE))


def other_words(query: str, names: list[str]) -> int:
    """How many content words of `query` (as is_lookup counts them) hold none of `names`
    (exact_names): "ioctl" of "I2C_RDWR ioctl"; "samehost" and "samenet" of "samehost
    samenet pg_hba"."""
    words = [t.strip(_EDGE + "()[]") for t in query.split()]
    return sum(1 for w in words if any(ch.isalnum() for ch in w) and w.lower() not in STOPWORDS
               and not any(n.lower() in w.lower() for n in names))


LOOKUP_WORDS = 4
"""A query of at most this many content words is a lookup ("setopt pathdirs", "zsh exit
code 126"); a longer one is a question that may name a term but asks something else of it
("mod_cache how long cached if no expires header"), and a list's one-line definition of
the term is no answer to it. 4 told the exact lookups from the natural questions best on
15 training corpora of the bench (bench/defined_terms.py --choose-lookup-words: 74 of 973
misread, against 90 at 3 and 87 at 5; on zsh, apache and cmake, left out, 9 of 242, the
fewest there too)."""


def is_lookup(query: str, *, most: int = LOOKUP_WORDS) -> bool:
    """At most `most` content words: whitespace tokens with a letter or digit that are
    no function words ("what", "does", "the")."""
    words = [t.strip(_EDGE + "()[]") for t in query.split()]
    return sum(1 for w in words if any(ch.isalnum() for ch in w) and w.lower() not in STOPWORDS) <= most


def defining_passages(query: str, texts: dict[int, str], *, most: int = MAX_DEFINING) -> list[int]:
    """The ids of the passages (`texts`: id -> text, in search order) that define the
    query's longest named term, in that order; none where more than `most` do, or where
    the query is no lookup (is_lookup)."""
    if not is_lookup(query):
        return []
    tokens = query_tokens(query)
    lengths = {cid: match_length(tokens, text) for cid, text in texts.items()}
    best = max(lengths.values(), default=0)
    if best == 0:
        return []
    found = [cid for cid, n in lengths.items() if n == best]
    return found if len(found) <= most else []
