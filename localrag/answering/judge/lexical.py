"""Sentence splitting and word overlap: the lexical half of the embedding critic.

Embeddings say two sentences are about the same thing; they are poor at saying whether
the *facts* agree ("expires in 2025" and "expires 2027-08-19" embed close together).
Facts in personal notes are mostly numbers, dates, codes and names, so the support check
counts those "key tokens" separately: a sentence whose key tokens are missing from the
passage is not supported however similar it sounds.
"""

from __future__ import annotations

import re
from dataclasses import dataclass

import regex

# Abbreviations after which a full stop does not end a sentence.
_ABBREVIATIONS = {"dr", "mr", "mrs", "ms", "prof", "st", "e.g", "i.e", "eg", "ie", "etc", "vs",
                  "no", "fig", "figs", "approx", "ca", "jr", "sr", "mt", "cf", "viz", "resp",
                  "al", "vol", "eq", "incl", "esp", "nr", "inc", "ltd", "corp", "pp",
                  # German and French ("z.B.", "bzw.", "usw.", "p.ex.")
                  "z.b", "bzw", "usw", "vgl", "ggf", "evtl", "bspw", "inkl", "p.ex"}
# These also end sentences: they continue one only before a lower-case word.
_ENDING_ABBREVIATIONS = {"etc", "inc", "ltd", "corp", "al", "usw"}
# Characters that may stand before an abbreviation: "(e.g. this)", "[cf. RFC 1123]".
_OPENERS = "([{\"'‘“«"
# ... and that may close a sentence after its stop: 'He said "go."', "(See below.)"
_CLOSERS = "\"')]’”"
_QUOTE_CLOSERS = "\"'’”"      # ... of them, the quotes (READ_QUOTED_STOPS)
# Titles are capitalised but say nothing about which person is meant.
_TITLES = {"dr", "mr", "mrs", "ms", "prof", "sir", "madam"}
# What ends a sentence: besides ". ! ?", the danda (Hindi, Bengali, ...), "؟" (Arabic,
# Persian) and Chinese and Japanese stops, which take no space after them
SPACED_STOPS = ".!?।॥؟"
CJK_STOPS = "。！？"
STOPS = SPACED_STOPS + CJK_STOPS
_SENTENCE_END = re.compile(rf"(?<=[{SPACED_STOPS}])[\"')\]’”]*(\s+)"
                           rf"|(?<=[{CJK_STOPS}])(?![{CJK_STOPS}!?])[」』）\"')\]’”]*(\s*)")
# words of any script: regex's [^\W_] is a letter with its combining marks, or a digit (re's
# leaves Hindi's vowel signs out and ASCII left every Cyrillic or Greek word out)
_TOKEN = regex.compile(r"[^\W_][\w'’:/.\-]*[^\W_]|[^\W_]")
_HAS_DIGIT = re.compile(r"\d")
# a stop that is part of a literal, not of the sentence: a printf or strftime format ("%6.",
# "%.", "%G?") or a stop standing alone as a word ("the ? and * wildcard characters", "the
# list contains . (the current directory)"); unless a capital follows, it ends no sentence
_LITERAL_STOP = re.compile(r"(?:^|\s)(?:%[^\s%]{0,6}|[.?!])$")
READ_QUOTED_STOPS = True
"""Whether a stop inside quotes that the sentence goes on after in lower case ("unless the
pipeline is preceded by ‘!’ in which case the value is the logical inverse ...", 'He shouted
"Go!" and left') ends no sentence (stop 60: zsh-050's quote ended at "‘!’", judged a
fragment). False: such a stop ends its sentence, as before
(scripts/record_answers_for_judging.py --no-quoted-stops)."""

STOPWORDS = frozenset("""
a an the and or but if of to in on at by for with from as is are was were be been being
do does did done what when where which who whom whose why how can could should would will
shall may might must i you we me my our your yours it its it's they them their this that
these those he she him her his hers there here about also so then than not no yes any
some all much many more most tell please just only very too into onto over under up down
out off again once has have had having get got use used using one two own same such each
both few other nor s t don let lets
""".split())


BRACKET_REACH = 120
READ_BRACKETS = True
"""Whether a stop inside brackets that close later in the sentence ends no sentence
(_inside_brackets, stop 59); False: every stop is read as before
(scripts/record_answers_for_judging.py --no-brackets)."""


def _inside_brackets(line: str, start: int, end: int) -> bool:
    """Whether the stop at `end` stands inside a bracket that the sentence begun at `start`
    opened and that closes later on the line, within BRACKET_REACH characters, where the
    sentence goes on in lower case after it: CMake's "If a set(... CACHE ...) call in the -C
    file does not use FORCE" was cut after "set(..." and quoted from "CACHE ...) call"
    (cmake-008, judged noise). Not in a synopsis (brackets, braces and bars: a stop there is
    an ellipsis of code), nor where the bracket ends the sentence ("(It is fast. Really.)"
    stays cut, as a bracket never closed or closed far on: is_unbalanced keeps its pieces
    from being quoted)."""
    piece = line[start:end]
    depth = piece.count("(") - piece.count(")")
    if not READ_BRACKETS or depth <= 0 or _SYNOPSIS.search(piece):
        return False
    rest = line[end:end + BRACKET_REACH]
    for i, ch in enumerate(rest):
        if ch == "(":
            depth += 1
        elif ch == ")":
            depth -= 1
            if depth == 0:
                return bool(_GOES_ON.match(rest, i + 1))
    return False


_SYNOPSIS = re.compile(r"[|{}\[\]]")   # a command's synopsis ("| ALL [ PRIVILEGES ] ( column_name [, ...] )")
_GOES_ON = re.compile(r",?\s+[a-z]")    # the sentence goes on after the bracket: ") call in the -C file"


def split_sentences(text: str) -> list[str]:
    """Sentences of `text` (newline-separated lines are separate units too)."""
    out: list[str] = []
    # Blank lines and list/heading lines start a new unit; a single line break inside a
    # paragraph (wrapped text) does not end a sentence.
    # An RFC's list item opens with "o" and two spaces ("   o  The entity-body is single-part.").
    for line in re.split(r"\n\s*\n|\n(?=\s*(?:[-*•#]|\d+[.)]\s|o[ \t]{2,}\S))", text):
        line = " ".join(line.split())
        line = line.strip()
        if not line:
            continue
        start = 0
        for m in _SENTENCE_END.finditer(line):
            end = m.start(1) if m.group(1) is not None else m.start(2)   # closing quotes stay
            closed = line[start:end].rstrip(_CLOSERS)
            before = closed.rstrip(STOPS + _CLOSERS)
            last_word = before.rsplit(None, 1)[-1].lower().lstrip(_OPENERS) if before.split() else ""
            if closed.endswith("...") and line[m.end():m.end() + 1].islower():
                continue                       # "Sleep for 1, 2, 4, ... seconds": an ellipsis
                #                                before a lower-case word leaves words out
            elif last_word == "no" and not line[m.end():m.end() + 1].isdigit():
                pass                           # "No. It is..." ends; "No. 5" does not
            elif last_word in _ENDING_ABBREVIATIONS and line[m.end():m.end() + 1].isupper():
                pass                           # "... and so on, etc. The next one"
            elif last_word in _ABBREVIATIONS or re.fullmatch(r"[a-z]", last_word or "x!"):
                continue                       # "Dr. Okafor", "e.g. this", initials
            elif _LITERAL_STOP.search(closed) and not line[m.end():m.end() + 1].isupper():
                continue                       # "%6. outputs microseconds", "the ? and *"
            elif _inside_brackets(line, start, end):
                continue                       # "If a set(... CACHE ...) call in the -C file"
            elif (m.group(1) is not None and READ_QUOTED_STOPS
                  and any(ch in _QUOTE_CLOSERS for ch in line[m.start():m.start(1)])
                  and line[m.end():m.end() + 1].islower()):
                continue                       # 'He shouted "Go!" and left': a stop inside
                #                                quotes that the sentence goes on after
            piece = line[start:end].strip()
            if piece:
                out.append(piece)
            start = m.end()
        tail = line[start:].strip()
        if tail:
            out.append(tail)
    return out


def _norm(word: str) -> str:
    w = word.lower().strip(".:-/'’")
    # crude stemming so "expires"/"expire", "planted"/"plant" meet; numbers stay exact
    if not _HAS_DIGIT.search(w) and len(w) > 4:
        for suffix in ("ing", "ed", "es", "s"):
            if w.endswith(suffix) and len(w) - len(suffix) >= 4:
                w = w[: -len(suffix)]
                break
    return w


def tokens(text: str) -> list[str]:
    return [m.group(0) for m in _TOKEN.finditer(text)]


def content_words(text: str) -> list[str]:
    """Normalised words that carry meaning (stopwords and one-letter words dropped)."""
    return [_norm(t) for t in tokens(text)
            if t.lower() not in STOPWORDS and (len(t) > 1 or t.isdigit())]


def key_tokens(sentence: str) -> list[str]:
    """Numbers, dates, codes and names in `sentence` (normalised).

    A name is a capitalised word that is not a stopword. The first word of a sentence is
    capitalised anyway; it still counts ("Jonas owns the fix"), and an ordinary first word
    ("Bake ...") almost always occurs in a passage that supports the sentence. Codes are words with digits or inner
    hyphens ("birch-canoe-42", "02:00", "2027-08-19").
    """
    out: list[str] = []
    for i, t in enumerate(tokens(sentence)):
        if _HAS_DIGIT.search(t) or ("-" in t.strip("-") and len(t) > 3):
            out.append(_norm(t))
            # "2027-08-19" also counts its parts, so "2027" alone can match it
        elif (t[:1].isupper() and t.lower() not in STOPWORDS and t.lower() not in _TITLES
              and len(t) > 1):
            out.append(_norm(t))
    return out


def _vocabulary(text: str) -> set[str]:
    words = {_norm(t) for t in tokens(text)}
    # split codes into parts too: a passage with "2027-08-19" contains "2027"
    for t in tokens(text):
        words.update(_norm(p) for p in re.split(r"[-/:]", t) if p)
    return words


@dataclass(frozen=True)
class Overlap:
    """How much of a sentence's wording the passage contains."""

    word_frac: float          # content words of the sentence found in the passage
    key_frac: float | None    # key tokens found (None: the sentence has none)
    missing_keys: tuple[str, ...]

    @property
    def strong(self) -> bool:
        """A strong lexical match: every key token present and most content words.

        This is the guard behind "fully supported" (see critics.guard_label)."""
        return (self.key_frac is None or self.key_frac >= 1.0) and self.word_frac >= 0.6


def overlap(sentence: str, passage: str) -> Overlap:
    vocab = _vocabulary(passage)
    words = content_words(sentence)
    word_frac = sum(w in vocab for w in words) / len(words) if words else 0.0
    keys = key_tokens(sentence)
    if not keys:
        return Overlap(word_frac, None, ())
    missing = tuple(k for k in keys if k not in vocab)
    return Overlap(word_frac, 1.0 - len(missing) / len(keys), missing)


_PLAIN = regex.compile(r"[^\W_]+")


def plain_words(text: str) -> list[str]:
    """Lower-case words and numbers, markup and punctuation dropped ("`git stash`" and
    "git stash" read the same)."""
    return _PLAIN.findall(text.lower())


@dataclass(frozen=True)
class Copy:
    """How much of a sentence is copied word for word from a passage."""

    longest: float     # share of the sentence's words in its longest copied run
    covered: float     # share covered by copied runs of at least `min_run` words
    runs: int          # how many such runs the cover needs

    @property
    def verbatim(self) -> bool:
        return self.longest >= 0.999


def copy_coverage(sentence: str, passage: str, *, min_run: int = 3) -> Copy:
    """Tile the sentence greedily with the longest runs of words that occur, in order, in
    the passage. A sentence copied from one passage sentence is one run; words of the
    passage recombined into a new claim need several runs, joined where the claim is new."""
    s, p = plain_words(sentence), plain_words(passage)
    if not s:
        return Copy(0.0, 0.0, 0)
    where: dict[str, list[int]] = {}
    for j, w in enumerate(p):
        where.setdefault(w, []).append(j)

    def run_at(i: int) -> int:
        best = 0
        for j in where.get(s[i], ()):
            k = 0
            while i + k < len(s) and j + k < len(p) and s[i + k] == p[j + k]:
                k += 1
            best = max(best, k)
        return best

    i = covered = runs = longest = 0
    while i < len(s):
        k = run_at(i)
        longest = max(longest, k)
        if k >= min(min_run, len(s)):
            covered += k
            runs += 1
            i += k
        else:
            i += 1
    return Copy(longest / len(s), covered / len(s), runs)
