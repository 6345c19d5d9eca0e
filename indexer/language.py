"""Which queries a model reads: the script of the query, and its language when it is
written in Latin letters that are not all ASCII.

localrag's embedding model (all-MiniLM-L6-v2) and its relevance model read English. A
model card names the languages a model was trained on (`language: en`); a query in another
language is searched mostly by its words (indexer.search.OTHER_LANGUAGE_ALPHA) and not
judged by a model that cannot read it.

- Another script: more than half the query's letters are not Latin while the model's
  languages are all written in Latin script (Japanese, Chinese, Russian, Hindi ...).
- Another Latin-script language: a query with a Latin letter outside ASCII ("Dateigröße",
  "défaut") is given to py3langid's language identifier (BSD-3-Clause; loading it takes
  about 0.65 s, once a process, so a plain-ASCII query never pays it); a guess of another
  language at probability LANGUAGE_CONFIDENCE or more is one the model does not read. So is
  a query in ASCII with two words of another language that English does not have
  (OTHER_LANGUAGE_WORDS: "wie mounte ich eine vfat partition"); any other ASCII query never
  loads the identifier.
"""

from __future__ import annotations

import threading
import unicodedata
from collections.abc import Sequence
from typing import Any

import regex

# The languages written in Latin script (ISO 639-1), as model cards name them.
LATIN_LANGUAGES = frozenset(
    "af ca cs cy da de en eo es et eu fi fr ga gl hr hu id is it la lb lt lv ms mt nb nl nn no "
    "pl pt ro sk sl sq sv sw tl tr vi".split())
# A guess counts at this probability: on the bench's 1,106 English questions py3langid
# gave another language at 0.5 or more to 3 and at 0.9 to none (bench/other_languages.py)
LANGUAGE_CONFIDENCE = 0.9

_LETTER = regex.compile(r"\p{L}")
_LATIN = regex.compile(r"\p{Latin}")
_ACCENTED_LATIN = regex.compile(r"(?=\p{Latin})[^\x00-\x7f]")
_identifier: Any = None
_identifier_lock = threading.Lock()


# Common words of German, French, Spanish, Italian, Portuguese and Dutch, without the most
# common English words ("die", "was", "man", "on", "as", "is"): two of them standing as words
# in an ASCII query ("wie mounte ich eine vfat partition") send it to the language guess too,
# which decides (a few are English or technical words as well: "comment", "non", "der"; an
# English question that holds two pays the identifier's load and is read as English). None
# of the bench's 1,136 English questions holds two (bench/other_languages.py). Only words
# alone count: not the "non" of "non-empty", the "com" of "example.com" or the "la" of "-la".
OTHER_LANGUAGE_WORDS = frozenset("""
    der das und ist nicht wie ich mit auf ein eine einen einem kann wird sich oder welche
    welcher warum wann mein meine meinen wenn dass zum zur bei nach gibt
    le la les une des du est pour avec dans sur je comment quel quelle quels quelles pourquoi
    que qui pas mon mes sont
    el los las una por para con como del het een niet hoe wat ik mijn voor gli della che non
    sono um uma com dos em""".split())
_ASCII_WORD = regex.compile(r"(?<![\w.\-/])[a-z]+(?![\w.\-/])")


def _other_words(query: str) -> bool:
    return len(set(_ASCII_WORD.findall(query.lower())) & OTHER_LANGUAGE_WORDS) >= 2


def guess_language(text: str) -> tuple[str, float] | None:
    """(ISO 639 code, probability) by py3langid, or None when it is not installed or
    fails (the query is then read as the model's language)."""
    global _identifier
    try:
        with _identifier_lock:
            if _identifier is None:
                _identifier = False          # a failed load is not tried again
                from py3langid.langid import MODEL_FILE, LanguageIdentifier

                _identifier = LanguageIdentifier.from_model_file(MODEL_FILE, norm_probs=True)
        if _identifier is False:
            return None
        code, prob = _identifier.classify(text)
        return str(code), float(prob)
    except Exception:   # noqa: BLE001 - a guess is a hint; any failure means "read it"
        return None


def reads_query(languages: Sequence[str], query: str) -> bool:
    """False when a model that reads only `languages` cannot read the query (module
    docstring). Unknown languages (empty: no model card, or "multilingual") read
    everything, and so does a model of any non-Latin-script language."""
    langs = {lang.lower().split("-")[0] for lang in languages}
    if not langs or not langs <= LATIN_LANGUAGES:
        return True
    query = unicodedata.normalize("NFC", query)    # "é" typed as "e" and a combining accent
    letters = len(_LETTER.findall(query))
    if letters and 2 * len(_LATIN.findall(query)) < letters:
        return False
    if not _ACCENTED_LATIN.search(query) and not _other_words(query):
        return True
    guess = guess_language(query)
    return guess is None or guess[1] < LANGUAGE_CONFIDENCE or guess[0] in langs


__all__ = ["LANGUAGE_CONFIDENCE", "LATIN_LANGUAGES", "guess_language", "reads_query"]
