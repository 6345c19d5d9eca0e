"""RTF (WordPad, TextEdit): text through striprtf (BSD), paragraph by paragraph."""

from __future__ import annotations

from indexer.documents import DocBuilder, ParsedDoc, short
from indexer.reading import FileSkip


def parse_rtf(data: bytes) -> ParsedDoc:
    if not data.lstrip()[:5] == b"{\\rtf":
        raise FileSkip("error", "cannot read RTF: not an RTF document (it must start with "
                       "\"{\\rtf\"); if it is another kind of file, rename it with that kind's extension",
                       "damaged")
    try:
        from striprtf.striprtf import rtf_to_text

        text = rtf_to_text(data.decode("cp1252", "replace"), errors="replace")
    except Exception as exc:
        raise FileSkip("error", f"cannot read RTF: the document is damaged ({short(exc)}); "
                       "re-save it from your word processor", "damaged") from None
    text = text.replace("\r\n", "\n").replace("\r", "\n").replace("\x00", "")
    # the text's lines are the document's paragraphs, not the RTF file's lines: cited by
    # heading-less paragraphs and opened with the system's RTF program
    out = DocBuilder()
    for para in text.split("\n"):   # striprtf ends each paragraph (\\par) with a newline
        out.add(para)
    return out.doc()
