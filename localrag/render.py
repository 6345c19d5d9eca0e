"""Plain renderings of an Answer: terminal text (the CLI) and Markdown (export).

The TUI renders with Textual widgets but uses the same symbols and wording.
"""

from __future__ import annotations

from localrag.answer import LABEL_SOURCE_TEXT, LABEL_TEXT, Answer, RetrievalDecision, Segment

LABEL_SYMBOL: dict[str, str] = {
    "fully": "✔",          # fully supported
    "partially": "◐",      # partially supported
    "none": "✘",           # not supported / contradictory
    "no_retrieval": "○",   # from the model's own knowledge
}


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


def answer_to_text(answer: Answer) -> str:
    lines = [decision_line(answer), ""]
    for seg in answer.segments:
        cite = f" [{seg.citation + 1}]" if seg.citation is not None else ""
        lines.append(f"{LABEL_SYMBOL[seg.label]} {seg.text.strip()}{cite}  ({label_words(seg)})")
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
        out.append(f"- {LABEL_SYMBOL[seg.label]} {seg.text.strip()}{cite} "
                   f"*({label_words(seg)})*")
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
