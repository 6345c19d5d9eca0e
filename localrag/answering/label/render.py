"""Plain renderings of an Answer: terminal text (the CLI) and Markdown (export).

Both show the answer's units (localrag.answering.label.units: a prose sentence, a whole list item, a
whole code block), each with its symbol, citation and label. The TUI renders the same
units with Textual widgets and uses the same symbols and wording.
"""

from __future__ import annotations

import re

from localrag.answering.label.answer import (LABEL_SOURCE_TEXT, LABEL_TEXT, Answer, PassageJudgement,
                                             RetrievalDecision, Segment)
from localrag.answering.label.units import code_body, code_language, inline_code

LABEL_SYMBOL: dict[str, str] = {
    "fully": "✔",          # fully supported
    "partially": "◐",      # partially supported
    "none": "✘",           # not supported / contradictory
    "unchecked": "?",      # the critic could not tell: not checked
    "no_retrieval": "○",   # from the model's own knowledge
}


CONTEXT_SYMBOL = "›"
"""A unit shown as context: a quote (the file's own words) or a supported model sentence
on the question's topic that was not judged to answer it. Never the answer's ✔."""


def segment_symbol(seg: Segment) -> str:
    """The symbol a person sees before a unit: its label's, or the context mark."""
    return CONTEXT_SYMBOL if seg.role == "context" else LABEL_SYMBOL[seg.label]


def label_words(seg: Segment) -> str:
    """The label in words, with where it came from when known: "fully supported; own token"."""
    words = LABEL_TEXT[seg.label]
    if seg.label_source is not None:
        words += f"; {LABEL_SOURCE_TEXT.get(seg.label_source, seg.label_source)}"
    return words


def decision_line(answer: Answer) -> str:
    d = answer.decision
    prob = "" if d.probability is None else f" (p={d.probability:.2f}, threshold {d.threshold:.2f})"
    dropped = sum(1 for j in answer.passages if j.dropped)
    if not d.retrieved and dropped:
        return (f"Retrieved{prob}, but strict mode dropped every candidate ({dropped} "
                f"passages): answered without evidence")
    if not d.retrieved:
        return f"Did not retrieve{prob}: {d.reason}"
    relevant = sum(1 for j in answer.passages if j.relevant)
    dropped = sum(1 for j in answer.passages if j.dropped)
    if answer.passages and all(j.relevant is None for j in answer.passages):
        line = f"Retrieved{prob}: {len(answer.passages)} passages (relevance not checked)"
    elif any(j.verdict == "answers" for j in answer.passages):
        checked = sum(1 for j in answer.passages if j.relevant is not None)
        line = f"Retrieved{prob}: {relevant} of {checked} passages judged to hold the answer"
        if checked < len(answer.passages):
            line += f" ({len(answer.passages) - checked} not checked)"
    else:
        line = (f"Retrieved{prob}: {relevant} of {len(answer.passages)} passages judged relevant")
    if dropped:
        line += f"; strict mode dropped {dropped}"
    return line


def decision_preview(d: RetrievalDecision) -> str:
    """The decision alone, shown while the answer is still being written."""
    prob = "" if d.probability is None else f" (p={d.probability:.2f}, threshold {d.threshold:.2f})"
    if d.retrieved:
        return f"Retrieving{prob}: reading passages…"
    return f"Not retrieving{prob}: {d.reason}"


def relevance_words(j: PassageJudgement) -> str:
    """What a passage's score means: a relevance judgement only when the critic checks
    relevance; otherwise the score orders the passages and judges nothing."""
    if j.relevant is None:
        return f"score {j.relevance:.2f}, relevance not checked"
    if j.verdict == "answers":
        p = j.relevance if j.answer_probability is None else j.answer_probability
        return (f"answer probability {p:.2f}, "
                + ("judged to hold the answer" if j.relevant else "judged not to hold the answer"))
    return f"relevance {j.relevance:.2f}" + ("" if j.relevant else ", judged irrelevant")


def source_line(n: int, answer: Answer) -> str:
    j = answer.passages[n]
    return f"[{n + 1}] {j.passage.locator}  {j.passage.title}  ({relevance_words(j)})"


def segment_label(seg: Segment) -> str:
    """The label words after a sentence: a quote says where it is quoted from."""
    if seg.origin == "quote":
        where = f" line {seg.line}" if seg.line is not None else ""
        if seg.role == "context":
            return f"context, quoted from the file{where}; not judged an answer"
        return f"quoted from the file{where}"
    if seg.role == "context":
        return f"context: {label_words(seg)}; not judged an answer"
    return label_words(seg)


def segment_body(seg: Segment) -> str:
    """The unit's text as shown: quotes in quotation marks, after their subject (the term
    line the sentence describes) as inline code; a list item after its lead-in, inside the
    same quotation marks."""
    text = seg.text.strip()
    if seg.origin != "quote":
        return text
    if seg.lead:
        text = f"{seg.lead.strip()} {text}"
    return (f"{inline_code(seg.subject)} " if seg.subject else "") + f"“{text}”"


def _cite(seg: Segment, fmt: str) -> str:
    return "" if seg.citation is None else fmt.format(seg.citation + 1)


def unit_lines(seg: Segment) -> list[str]:
    """One unit as terminal lines: symbol, text, citation, label; a code block as a
    header line and its code indented by four spaces, exactly as written."""
    label = f"({segment_label(seg)})"
    symbol = segment_symbol(seg)
    if seg.kind == "code":
        lang = code_language(seg.text)
        head = f"{symbol} code" + (f" ({lang})" if lang else "") + f"{_cite(seg, ' [{}]')}  {label}:"
        return [head, *("    " + line if line else "" for line in code_body(seg.text).split("\n"))]
    first, *rest = segment_body(seg).strip("\n").split("\n")
    lines = [f"{symbol} {first.strip()}", *(f"  {line}" if line else "" for line in rest)]
    if rest and _is_fence(rest[-1]):
        lines.append(f"  {_cite(seg, '[{}]  ')}{label}")
    else:
        lines[-1] += f"{_cite(seg, ' [{}]')}  {label}"
    return lines


def _is_fence(line: str) -> bool:
    return line.strip().startswith(("```", "~~~"))


def answer_to_text(answer: Answer) -> str:
    """The CLI's rendering: the decision, one line per unit (a code block keeps its
    lines, set off by blank lines), the cited sources, notes."""
    lines = [decision_line(answer), ""]
    prev: Segment | None = None
    for seg in answer.segments:
        if prev is not None and (seg.kind == "code" or prev.kind == "code"):
            lines.append("")
        lines += unit_lines(seg)
        prev = seg
    cited = sorted({s.citation for s in answer.segments if s.citation is not None})
    if cited:
        lines += ["", "Sources:"]
        lines += [source_line(n, answer) for n in cited]
    for note in answer.notes:
        lines.append(f"note: {note}")
    lines.append(f"labels by: {answer.critic}; model: {answer.model}")
    return "\n".join(lines)


def _markdown_unit(seg: Segment) -> str:
    """One unit as Markdown with its symbol, footnote citation and label in words."""
    symbol, cite = segment_symbol(seg), _cite(seg, " [^{}]")
    label = f"*({segment_label(seg)})*"
    text = seg.text.strip("\n")
    if seg.kind == "code":
        return f"{symbol} code{cite} {label}\n\n{text}"
    if seg.kind == "list_item":
        marker, _, rest = text.partition(" ")
        lines = f"{marker} {symbol} {rest.lstrip()}".split("\n")
        if len(lines) > 1 and _is_fence(lines[-1]):
            indent = " " * (len(marker) + 1)
            lines.append(f"{indent}{cite.strip()} {label}".rstrip())
        else:
            lines[-1] += f"{cite} {label}"
        return "\n".join(lines)
    heading = re.match(r"(#{1,6})\s+(.*)", text.strip())
    if heading:
        return f"{heading.group(1)} {symbol} {heading.group(2)}{cite} {label}"
    return f"{symbol} {segment_body(seg)}{cite} {label}"


def answer_to_markdown(answer: Answer) -> str:
    """A self-contained Markdown export: the question, the answer's units as Markdown
    (each with its symbol, footnote citation and label; the sentences of a paragraph on
    lines of their own, code blocks fenced, list items as a list), linked sources."""
    out = [f"## {answer.question}", "", f"_{decision_line(answer)}_", ""]
    body = ""
    prev: Segment | None = None
    for seg in answer.segments:
        if prev is not None:
            heading = prev.text.lstrip().startswith("#") or seg.text.lstrip().startswith("#")
            if seg.kind == prev.kind == "sentence" and not seg.starts_block and not heading:
                body += "\\\n"                     # a hard line break: same paragraph
            elif seg.kind == prev.kind == "list_item" and not seg.starts_block:
                body += "\n"
            else:
                body += "\n\n"
        body += _markdown_unit(seg)
        prev = seg
    if body:
        out += [body, ""]
    cited = sorted({s.citation for s in answer.segments if s.citation is not None})
    if cited:
        for n in cited:
            p = answer.passages[n].passage
            out.append(f"[^{n + 1}]: [{p.title}]({_file_uri(p.path, p.page)}) — `{p.locator}`")
    if answer.notes:
        out.append("")
        out += [f"> {note}" for note in answer.notes]
    out += ["", f"<sub>labels by {answer.critic}; model {answer.model}</sub>", ""]
    return "\n".join(out)


def _file_uri(path: str, page: int | None) -> str:
    from pathlib import Path

    uri = Path(path).as_uri()
    return f"{uri}#page={page}" if page is not None else uri
