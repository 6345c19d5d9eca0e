"""Plain renderings of an Answer: terminal text (the CLI) and Markdown (export).

The TUI renders with Textual widgets but uses the same symbols and wording.
"""

from __future__ import annotations

from localrag.answer import LABEL_TEXT, Answer, RetrievalDecision, Segment

LABEL_SYMBOL: dict[str, str] = {
    "fully": "✔",          # fully supported
    "partially": "◐",      # partially supported
    "none": "✘",           # not supported / contradictory
    "unchecked": "?",      # the critic could not tell: not checked
    "no_retrieval": "○",   # from the model's own knowledge
}


def decision_line(answer: Answer) -> str:
    d = answer.decision
    prob = "" if d.probability is None else f" (p={d.probability:.2f}, threshold {d.threshold:.2f})"
    if not d.retrieved:
        return f"Did not retrieve{prob}: {d.reason}"
    relevant = sum(1 for j in answer.passages if j.relevant)
    dropped = sum(1 for j in answer.passages if j.dropped)
    if answer.passages and all(j.relevant is None for j in answer.passages):
        line = f"Retrieved{prob}: {len(answer.passages)} passages (relevance not checked)"
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


def source_line(n: int, answer: Answer) -> str:
    j = answer.passages[n]
    return f"[{n + 1}] {j.passage.locator}  {j.passage.title}  (relevance {j.relevance:.2f})"


def segment_label(seg: Segment) -> str:
    """The label words after a sentence: a quote says where it is quoted from."""
    if seg.origin == "quote":
        where = f" line {seg.line}" if seg.line is not None else ""
        return f"quoted from the file{where}"
    return LABEL_TEXT[seg.label]


def segment_body(seg: Segment) -> str:
    """The sentence as shown: quotes in quotation marks."""
    text = seg.text.strip()
    return f"“{text}”" if seg.origin == "quote" else text


def answer_to_text(answer: Answer) -> str:
    lines = [decision_line(answer), ""]
    for seg in answer.segments:
        cite = f" [{seg.citation + 1}]" if seg.citation is not None else ""
        lines.append(f"{LABEL_SYMBOL[seg.label]} {segment_body(seg)}{cite}  ({segment_label(seg)})")
    cited = sorted({s.citation for s in answer.segments if s.citation is not None})
    if cited:
        lines += ["", "Sources:"]
        lines += [source_line(n, answer) for n in cited]
    for note in answer.notes:
        lines.append(f"note: {note}")
    lines.append(f"labels by: {answer.critic}; model: {answer.model}")
    return "\n".join(lines)


def answer_to_markdown(answer: Answer) -> str:
    """A self-contained Markdown export: question, labelled sentences, linked sources."""
    out = [f"## {answer.question}", "", f"_{decision_line(answer)}_", ""]
    for seg in answer.segments:
        cite = f" [^{seg.citation + 1}]" if seg.citation is not None else ""
        out.append(f"- {LABEL_SYMBOL[seg.label]} {segment_body(seg)}{cite} "
                   f"*({segment_label(seg)})*")
    cited = sorted({s.citation for s in answer.segments if s.citation is not None})
    if cited:
        out.append("")
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
