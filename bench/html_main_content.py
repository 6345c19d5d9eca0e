"""What HTML main-content extraction keeps, on real manuals installed on this machine.

For each set of pages: words of the whole page (every text node, what localrag read before
issue 20), words of the main content (trafilatura matched back to the page's elements),
the time per page, and how many pages still hold the set's navigation phrases.

    python bench/html_main_content.py
"""

from __future__ import annotations

import glob
import sys
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from indexer.parse_html import parse_html  # noqa: E402

SETS = {   # name: (glob, phrases that are navigation, not content)
    "git (asciidoc)": ("/usr/share/doc/git/html/git-*.html", ["Last updated"]),
    "libffi (texinfo)": ("/usr/share/doc/libffi8/html/*.html", ["Up: "]),
    "linux-doc PCI (Sphinx)": ("/usr/share/doc/linux-doc-6.1/html/PCI/*.html",
                               ["Kernel Maintainer Handbook", "Code of conduct"]),
    "postgresql (DocBook)": ("/usr/share/doc/postgresql-doc-15/html/sql-*.html",
                             ["Prev", "Next", "Home", "Submit correction"]),
}


def main() -> None:
    for name, (pattern, phrases) in SETS.items():
        pages = sorted(glob.glob(pattern))[:40]
        if not pages:
            print(f"{name}: not installed")
            continue
        whole = main_words = with_nav_before = with_nav_after = 0
        seconds = 0.0
        for page in pages:
            html = Path(page).read_text(encoding="utf-8", errors="replace")
            before = parse_html(html, main_content=False).text
            t = time.perf_counter()
            after = parse_html(html).text
            seconds += time.perf_counter() - t
            whole += len(before.split())
            main_words += len(after.split())
            with_nav_before += any(p in before for p in phrases)
            with_nav_after += any(p in after for p in phrases)
        n = len(pages)
        print(f"{name}: {n} pages, {whole / n:.0f} -> {main_words / n:.0f} words a page "
              f"({main_words / whole:.0%} kept), navigation phrases on {with_nav_before} -> "
              f"{with_nav_after} pages, {seconds / n * 1000:.0f} ms a page")


if __name__ == "__main__":
    main()
