"""Noise: sentences that say nothing a person could check, whoever wrote them.

A small model answering from documentation copies what it sees: markup lines
("doctest::", "_sqlite3-howto-row-factory:", "----"), pieces of code, the file name over
and over ("enum.rst.txt: enum.rst.txt: ..."), the prompt ("Using only this note ..."),
and filler ("I hope this helps."). Lexical overlap with the passage makes such lines look
"supported", so the critic asks `noise_kind` first: a noise sentence is never labelled
supported, and the answer leaves it out. Passage sentences go through the same test
before they are quoted (localrag.answering.generate.extract).

Every function takes plain text and knows nothing of the engine, so it composes with any
unit splitter and any markup cleaning done before it.
"""

from __future__ import annotations

import re
import unicodedata
from collections.abc import Sequence

import regex

from localrag.answering.judge import lexical

NOISE_KINDS = ("markup", "code", "degenerate", "repeat", "echo", "filler", "fragment")
"""markup: a line of document syntax (directives, anchors, rules, definition terms);
code: a code fragment rather than prose; degenerate: one token or phrase over and over;
repeat: the same as an earlier sentence; echo: the question or the prompt given back;
filler: words that carry no content ("I hope this helps."); fragment: too short or cut
off to state anything."""

_WORD = regex.compile(r"\p{L}[\p{L}\p{M}'’-]*")   # a word of any script
# document syntax: rst directives/roles/anchors/fields, AsciiDoc blocks and attributes,
# Markdown fences and rules, table borders
_MARKUP_LINE = re.compile(
    r"""^(?:
        \.\.\s*[\w:-]*::.*            # .. note::, .. code-block:: python
      | \.\.\s+_[^:]+:.*              # .. _anchor:
      | _[\w.-]+:\s*$                 # _sqlite3-howto-row-factory:
      | :[\w -]+:(?:\s.*)?$           # :Date: ...  :maxdepth: 2
      | [\w.-]+::\s*$                 # doctest::  (a directive name left alone)
      | \[\[?[^\]]*\]\]?\s*$          # [verse]  [[anchor]]
      | [=\-~^`#*+_.:|<>]{3,}.*       # rules, table borders, fences, ---- underlines
      | \|.*\|\s*$                    # | table | row |
      | //.*                          # AsciiDoc comment
      | ifdef::.*|endif::.*|include::.*|image::.*
    )$""", re.X)
_DEFINITION_TERM = re.compile(r"^\S.*::\s*$")   # AsciiDoc "--force::" / rst "term::"
_CODE_CHARS = set("{}[]()<>;=$|&\\/*_`#@~^%")
_ECHO = re.compile(r"^(?:using only (?:this|these) notes?|answer the question|question\s*:|"
                   r"notes?\s*(?:\(|:)|answer\s*:?\s*$|passage\s*:|the (?:note|passage) "
                   r"(?:says|is titled)\b)", re.I)
_FILLER = re.compile(
    r"^(?:i hope (?:this|that) helps|let me know|feel free|happy to help|good luck|"
    r"(?:sure|certainly|of course|great question|ok(?:ay)?|yes|no)[.!,]?\s*$|"
    r"here (?:is|are) (?:the|a|an|some|my)\b[^.]*[:.]?\s*$|"
    r"(?:thank you|thanks)\b|i(?:'m| am) (?:sorry|not sure|an ai)\b|"
    r"as an ai\b|if you have any (?:other|more|further) questions)", re.I)
FILLER_WORDS = frozenset("""
hope helps help let know feel free happy glad sure certainly course great question
questions answer answers note notes passage information following given provided
mentioned above below context case user okay ok thanks thank please mention text
document documentation file says said explain explained you're you've it's that's
here's there's let's we're i'm done
""".split())


_CJK = regex.compile(r"[\p{Han}\p{Hiragana}\p{Katakana}ー]")
_CJK_OR_NOT = regex.compile(r"[\p{Han}\p{Hiragana}\p{Katakana}ー]|[^\p{Han}\p{Hiragana}\p{Katakana}ー]+")


def _words(text: str) -> list[str]:
    """Words of any script; Chinese and Japanese, written without spaces, count a word a
    character."""
    out = []
    for w in _WORD.findall(text):
        out.extend(_CJK_OR_NOT.findall(w.lower()) if _CJK.search(w) else [w.lower()])
    return out


def is_markup(sentence: str) -> bool:
    """A line of document syntax rather than prose."""
    s = sentence.strip()
    if not s:
        return True
    if _MARKUP_LINE.match(s) or (_DEFINITION_TERM.match(s) and len(_words(s)) <= 8):
        return True
    if re.search(r"\S::(?:\s|$)", s):
        return True                       # an AsciiDoc/rst term glued to its text
    letters = sum(ch.isalpha() or unicodedata.category(ch).startswith("M") for ch in s)
    return letters < 0.5 * len(s.replace(" ", ""))


_NON_LATIN = regex.compile(r"(?!\p{Latin})\p{L}")
# a prompt, a comment, an assignment or a call: code whatever its strings say
# (a man page's "passwd(1) によると ..." opens prose: a call is code only as the whole line)
_CODE_OPENING = re.compile(r"(?:\$|#|>>>|\.\.\.|//|--)\s|[\w.\[\]]+\s*[-+*/]?=(?!=)|[\w.]+\([^()]*\)\s*;?\s*$")
_CLOSED = regex.compile(rf"[{lexical.STOPS}][\"')\]」』）]*$")


# a line of a program's log or output: valgrind's "--28993--" and "==28993==" (a process id),
# the kernel's "[   12.345678]" (annotators judged quoted valgrind lines noise; stop 40,
# mdnotes2); not a changelog's "[1.5] Added support for ..."
_LOG_LINE = re.compile(r"(?:--|==)\d{2,}(?:--|==)(?:\s|$)|\[\s*\d+\.\d{3,}\]\s")


def is_code(sentence: str) -> bool:
    """A code fragment: symbols where prose has words, and few function words. The
    function words are English: a sentence mostly in another script that ends as a
    sentence does ("DHCP クライアントの設定は "/etc/systemd/network/dhcp.network" を作成する
    ことで設定できます。") is prose, whatever paths or "=" it holds."""
    s = sentence.strip()
    tokens = s.split()
    if not tokens:
        return False
    words = _words(s)
    foreign = sum(bool(_NON_LATIN.search(w)) for w in words)   # Chinese, Japanese: a word a character
    if words and 2 * foreign >= len(words) and _CLOSED.search(s) and not _CODE_OPENING.match(s):
        return False
    symbols = sum(ch in _CODE_CHARS for ch in s)
    function = sum(w in lexical.STOPWORDS for w in words)
    codey = sum(bool(re.search(r"[(){}\[\];=<>$]|^-{1,2}\w|\w\.\w+\(|::|->|\w_\w", t))
                for t in tokens)
    if re.match(r"^\s*(?:\$|#|>>>|\.\.\.)\s", sentence) and function <= 2:
        return True                       # a shell or interpreter prompt line
    if _LOG_LINE.match(s):
        return True                       # a program's output: "--28993-- You may be able ..."
    if _defines(s):
        return False                      # "-Drelocatable=true - Enable application bundle ..."
    if (function == 0 and len(tokens) <= 10 and not re.search(r"[.!?]$", s)
            and any(re.match(r"^-{1,2}\w|.*[/=<>]", t) for t in tokens)):
        return True                       # a bare command line: "git stash pop --index"
    if symbols >= 0.12 * len(s) and function < 0.2 * max(len(words), 1):
        return True
    return codey >= 0.5 * len(tokens) and function < 0.25 * max(len(words), 1)


# a term and what it does, as option lists and release notes write them: a name of one or
# two tokens, " - " or " – " (or ": "), then words; the list marker may stand before it
_DEFINITION = re.compile(r"^(?:[-*+\u2022]\s+)?(\S+(?:\s\S+)?)\s+[-\u2013\u2014]\s+(\S.*)$|"
                         r"^(?:[-*+\u2022]\s+)?(\S+):\s+(\S.*)$")


def _defines(sentence: str) -> bool:
    """A term followed by its description in words: "-Drelocatable=true - Enable application
    bundle relocation support", "--dry-run: Show what would be removed". The description
    must read as prose: at least three words of letters and no token of code."""
    m = _DEFINITION.match(sentence)
    if m is None:
        return False
    tail = m.group(2) or m.group(4)
    tokens = tail.split()
    return (sum(bool(re.fullmatch(r"[^\W\d_]{2,}[,.;:]?", t)) for t in tokens) >= 3
            and not any(re.search(r"[(){}\[\];=<>$/]|^-{1,2}\w|::|->|\w_\w", t) for t in tokens))


def is_degenerate(sentence: str) -> bool:
    """One token or short phrase over and over ("enum.rst.txt: enum.rst.txt: ...")."""
    tokens = [t.lower().strip(".,:;") for t in sentence.split()]
    tokens = [t for t in tokens if t]
    if len(tokens) < 4:
        return False
    if len(set(tokens)) <= 0.4 * len(tokens):
        return True
    # a phrase of 2-4 tokens repeated back to back three or more times
    for n in (2, 3, 4):
        for i in range(0, len(tokens) - 3 * n + 1):
            gram = tokens[i:i + n]
            if tokens[i + n:i + 2 * n] == gram and tokens[i + 2 * n:i + 3 * n] == gram:
                return True
    return False


def is_filler(sentence: str) -> bool:
    """Politeness, hedges and announcements with no content of their own."""
    s = sentence.strip()
    if _FILLER.match(s):
        return True
    if s.endswith(":") and (len(_words(s)) <= 14 or "following" in s.lower()):
        return True                       # an announcement: "Here's how to do it:"
    content = [w for w in lexical.content_words(s) if w not in FILLER_WORDS]
    return not content


def is_echo(sentence: str, question: str = "") -> bool:
    """The prompt or the question given back."""
    s = sentence.strip()
    if _ECHO.match(s):
        return True
    if question:
        a = " ".join(_words(s))
        b = " ".join(_words(question))
        if a and (a == b or (len(a) >= 0.8 * len(b) and a in b)):
            return True
    return False


_QUOTED = re.compile(r'"[^"]*"|`[^`]*`|“[^”]*”')


READ_ENUMERATORS = True
"""Whether is_unbalanced passes over the ")" of an enumerator opening a sentence ("0) If no
expansions took place (or, ...)"); False counts it, as before stop 55
(scripts/record_answers_for_judging.py --no-enumerators)."""
_ENUMERATOR = re.compile(r"^(?:[-+]?\d{1,3}|[a-z]|[ivx]{1,4})\)[ \t]+")


def is_unbalanced(sentence: str) -> bool:
    """Cut inside a bracket: a "(" or "[" it never closes (a sentence split at an "e.g." in
    parentheses, a synopsis cut at "[, ..."), or a closing one at its end that it never
    opened (the end of a parenthesis begun in the sentence before), or a ")" in its first
    word that the word never opened, after more than an enumerator
    ("-DCMAKE_INSTALL_PREFIX=/usr) to have your build find ...", "--all), with the
    exception of ...": a passage or a split that starts inside a parenthesis; "a) the
    first" and "iv) the fourth" are enumerators). Brackets inside quotes ("open bracket [", "\\(")
    do not count, nor does the ")" of an enumerator that opens the sentence ("0) If no
    expansions took place (or, if ... character)", readline's list of return values)."""
    t = _QUOTED.sub("", sentence.strip())
    if READ_ENUMERATORS:
        t = _ENUMERATOR.sub("", t, count=1)
    for opening, closing in (("(", ")"), ("[", "]")):
        if t.count(opening) > t.count(closing):
            return True
        if t.count(closing) > t.count(opening) and t.rstrip().endswith(closing):
            return True
        words = t.split(maxsplit=1)
        head = words[0] if words else ""         # all quoted: '"a" "b"' leaves a space
        cut = head.find(closing)
        if closing == ")" and cut > 3 and opening not in head[:cut]:
            return True          # ("]" alone is a key: vim's "*c_CTRL-]* CTRL-] Trigger ...")
    return False


_CONTINUATION = re.compile(
    r"(?:a|an|and|or|but|nor|the|to|of|in|on|at|for|with|by|from|as|is|are|was|were|be|been|"
    r"does|do|did|which|that|than|then|so|if|when|where|while|because|into|onto|it|its|this|"
    r"these|those|not|can|will|would|should|may|might|must)\s")


def is_continuation(sentence: str) -> bool:
    """A file's sentence that is the rest of one an example cut in two: it starts with a
    function word in lower case ("does a recursive directory search for files named 'bar'",
    "where collation is a possibly schema-qualified identifier."). Of the candidate units of
    40 pages of each bench corpus, 0.6% (debref) to 2.8% (zsh) start so, and nearly all are
    such halves; a name in lower case ("pg_dump", "git") is no function word, and a unit
    opening with a quote ('"for x in ..." loops') does not count. For quotes only: a model
    writes list items in lower case ("to stage a file, run git add file.")."""
    return bool(_CONTINUATION.match(sentence.strip()))


_CUT_END = re.compile(r"(?:,|(?:^|\s)(?:a|an|the|of|and|or|but|nor|than|whose|its|their|your|our|"
                      r"my|is|are))\s*$")
"""The end of a sentence cut before its end: a comma, or (after a space, in lower case) a word
that no English sentence ends on: an article, "of", a conjunction, a possessive, "is" /
"are". Not a preposition ("what the option is for"), not "be" / "that", not a ";" (code ends
so), not a single letter after "-" or "." ("ls -a", "libfoo.a")."""


# "1.2. " or "11.2.1. " opening a heading (not "1.5 GB of disk space ...", "2.6.32 kernels
# ..." or a list's "2. Install ...")
_SECTION_NUMBER = re.compile(r"\d+(?:\.\d+)+\.\s")
_HEADING_PATH = re.compile(r"\s>\s(?:.*\s)?\d+(?:\.\d+)*\.?\s*$")   # "... > 1.2.4."


def is_fragment(sentence: str) -> bool:
    """Too short to state anything (fewer than three words, or no word of four letters),
    a title rather than a sentence (also a numbered heading: "11.2.1. XML データー", "1.2.
    Unix-like filesystem > 1.2.4."), cut inside a bracket (is_unbalanced), or cut before its
    end: no closing stop, and it ends in a comma, a semicolon or a word that needs more
    after it (_CUT_END: "The integrity of all package files is", a model's sentence cut at
    its token limit; "... with the latest base-files package, or", a list item it copied).
    A file's quote always ends in a stop or ":" (candidate_units), so this reads the
    model's own sentences."""
    words = _words(sentence)
    if len(words) < 3 or not any(len(w) >= 3 or _CJK.match(w) for w in words):
        return True
    if is_unbalanced(sentence):
        return True
    closed = _CLOSED.search(sentence.strip())
    if not closed and _CUT_END.search(sentence.strip()):
        return True
    if _SECTION_NUMBER.match(sentence.strip()) and (not closed or _HEADING_PATH.search(sentence)):
        return True     # a numbered heading, or a path of them, in any language
    # a title rather than a sentence: a few words without a closing stop
    return len(words) <= 4 and not closed


def _key(sentence: str) -> list[str]:
    return _words(sentence)


def near_repeat(sentence: str, earlier: Sequence[str], *, at: float = 0.8) -> bool:
    """The same words as an earlier sentence (Jaccard similarity of word sets >= `at`)."""
    a = set(_key(sentence))
    if not a:
        return False
    for other in earlier:
        b = set(_key(other))
        if b and len(a & b) / len(a | b) >= at:
            return True
    return False


def noise_kind(sentence: str, *, question: str = "",
               earlier: Sequence[str] = ()) -> str | None:
    """The kind of noise `sentence` is (one of NOISE_KINDS), or None for a meaningful
    sentence. `earlier`: the sentences before it in the same answer (for repeats)."""
    if is_degenerate(sentence):
        return "degenerate"
    if is_markup(sentence):
        return "markup"
    if is_echo(sentence, question):
        return "echo"
    if is_code(sentence):
        return "code"
    if is_filler(sentence):
        return "filler"
    if is_fragment(sentence):
        return "fragment"
    if earlier and near_repeat(sentence, earlier):
        return "repeat"
    return None


__all__ = ["NOISE_KINDS", "noise_kind", "is_markup", "is_code", "is_degenerate", "is_filler",
           "is_echo", "is_fragment", "is_unbalanced", "is_continuation", "near_repeat"]
