"""Issue 17, an experiment (stop 47), not kept: the kind of answer a question asks for,
against the shape of a sentence. A "where" question is answered by a sentence with a path
in it, a "how do I" by one with a command, an option or a name, a "why" by a cause, "how
many" by a number, a question about a default by a sentence that says "default".
`python bench/answer_combination.py ... --shapes` adds these as features of the
combination; fitted on the training pools, the first quote answered 0.350 / 0.675 / 0.417
of the questions (PostgreSQL / Debian Reference / zsh) against 0.400 / 0.675 / 0.431
without them, AUC 0.868 / 0.947 / 0.901 against 0.868 / 0.945 / 0.901."""

from __future__ import annotations

import re

_Q_WHERE = re.compile(r"\bwhere\b|\bwhich (?:file|directory|folder|path)\b|\bwhat (?:file|directory|folder|path)\b"
                      r"|\blocation\b|\bstored?\b|\bkept\b", re.I)
_Q_HOW = re.compile(r"^\s*how (?:do|can|should|would) (?:i|you|we)\b|\bhow to\b|\bway to\b|\bis there (?:a|an|any) "
                    r"(?:way|option|setting|knob|command|flag|switch)\b|\bwhat (?:command|option|setting|flag)\b", re.I)
_Q_WHY = re.compile(r"\bwhy\b|\bwhat(?:'s| is) the (?:point|reason|purpose)\b|\bhow come\b", re.I)
_Q_AMOUNT = re.compile(r"\bhow (?:many|much|long|big|large|often|fast)\b|\b(?:maximum|minimum|max|min|limit|size|"
                       r"length|number of|timeout)\b", re.I)
_Q_DEFAULT = re.compile(r"\bdefaults?\b|\bout of the box\b|\bby itself\b|\bif i (?:don't|do not)\b", re.I)
_Q_YESNO = re.compile(r"^\s*(?:is|are|does|do|can|could|will|would|should|must|has|have|did)\b", re.I)
_S_PATH = re.compile(r"(?:^|[\s\"'`(])(?:~?/[\w.-]+/[\w./-]*|[\w-]+\.(?:conf|cfg|ini|toml|ya?ml|json|txt|rc|d)\b|"
                     r"\$[A-Z_]{3,}\b|%[A-Z_]+%)")
_S_COMMAND = re.compile(r"(?:^|\s)--?[A-Za-z][\w-]*|`[^`]+`|\b[a-z]+_[a-z_]+\b|\b[a-z]+[A-Z]\w*\b|\w\(\)|"
                        r"^\s*(?i:use|run|set|add|call|pass|type|enable|disable|specify|install|create|edit|put)\b")
_S_CAUSE = re.compile(r"\b(?:because|since|so that|in order to|to avoid|to prevent|otherwise|reason|"
                      r"due to|as a result|this (?:is|means)|which means|ensures?|prevents?)\b", re.I)
_S_NUMBER = re.compile(r"\b\d+(?:\.\d+)?\b|\b(?:one|two|three|four|five|ten|hundred|thousand)\b", re.I)
_S_DEFAULT = re.compile(r"\bdefaults?\b|\bby default\b", re.I)
_S_POLAR = re.compile(r"\b(?:not|never|no|cannot|can't|only|always|must|unless|will|does)\b", re.I)
SHAPE_FEATURES = ("where_path", "how_command", "why_cause", "amount_number", "default_default",
                  "yesno_polar", "s_path", "s_command", "s_cause", "s_number", "s_default")


def shape_features(question: str, sentence: str, subject: str) -> list[float]:
    """The question's kind against the sentence's shape: a "where" question and a path in
    the sentence, a "how do I" and a command, option or name, a "why" and a cause, an
    amount and a number, "default" and "default", a yes/no question and a polar statement;
    and the sentence's shapes alone (each 0/1)."""
    s = f"{subject} {sentence}"
    sp, sc, sw, sn, sd, so = (bool(r.search(s)) for r in (_S_PATH, _S_COMMAND, _S_CAUSE, _S_NUMBER,
                                                          _S_DEFAULT, _S_POLAR))
    q = question
    return [float(x) for x in (bool(_Q_WHERE.search(q)) and sp, bool(_Q_HOW.search(q)) and sc,
                               bool(_Q_WHY.search(q)) and sw, bool(_Q_AMOUNT.search(q)) and sn,
                               bool(_Q_DEFAULT.search(q)) and sd, bool(_Q_YESNO.search(q)) and so,
                               sp, sc, sw, sn, sd)]
