"""Print a file as localrag's index reads it (markup cleaned, HTML text extracted), with
every run of whitespace one space: what a question's key phrase must be found in.

    python bench/phrase_check.py FILE                 # the text
    python bench/phrase_check.py FILE "key phrase"    # exit 0 if found, 1 if not
"""

from __future__ import annotations

import sys
from pathlib import Path

REPO = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(REPO))

from indexer.parsers import parse_bytes  # noqa: E402


def readable(path: Path) -> str:
    doc = parse_bytes(path.read_bytes(), ext=path.suffix.lower(), name=path.name)
    return " ".join(doc.text.split())


if __name__ == "__main__":
    text = readable(Path(sys.argv[1]))
    if len(sys.argv) > 2:
        phrase = " ".join(sys.argv[2].split())
        found = phrase.lower() in text.lower()
        print("found" if found else "NOT FOUND")
        sys.exit(0 if found else 1)
    print(text)
