"""A folder of real Markdown notes full of bullet lists, for measuring quotes of list items
(items that end without a full stop: "- ABI: Application Binary Interface", "- admin
password is in the blue notebook"). Built deterministically from the Markdown files Debian
packages install under /usr/share/doc (READMEs, NEWS, glossaries, contributor guides),
gunzipped and copied as they are; nothing but this script and its questions
(bench/data/retrieval/mdnotes.jsonl, mdnotes2.jsonl) is committed. The Python and SQLite
documentation are never used.

    python bench/markdown_notes.py [FOLDER]               # default bench/out/mdnotes/ (git-ignored)
    python bench/markdown_notes.py --set mdnotes2 [FOLDER] # default bench/out/mdnotes2/
    python bench/markdown_notes.py --set mdnotes3 [FOLDER] # default bench/out/mdnotes3/

Two sets with no file in common: `mdnotes` (37 files: the list-item rules of stop 37 were
written while reading its answers) and `mdnotes2` (stop 40: Node.js's contributor guides
and eight more READMEs, held out: measured once the rules were chosen on mdnotes), and
`mdnotes3` (stop 49: TeX Live's LaTeX package READMEs and ten small projects' READMEs,
held out for list items read with their lead-ins, chosen on mdnotes and mdnotes2).

Licenses: each file's package's /usr/share/doc/<pkg>/copyright (MIT, Apache-2.0, GPL-2+,
LGPL-2.1+, BSD-style).
"""

from __future__ import annotations

import gzip
import re
import shutil
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
DEFAULT = ROOT / "bench" / "out" / "mdnotes"
DOC = Path("/usr/share/doc")
# package/file under /usr/share/doc (".gz" read gunzipped); bullet-heavy Markdown of
# several kinds: release notes, a glossary, guides, references of variables and rules
FILES = (
    "openssl/NEWS.md.gz", "man-db/NEWS.md.gz", "polkitd/NEWS.md.gz", "libpipeline1/NEWS.md.gz",
    "nodejs/README.md", "nodejs/onboarding.md", "nodejs/BUILDING.md", "nodejs/glossary.md",
    "nodejs/GOVERNANCE.md", "nodejs/SECURITY.md", "nodejs/CONTRIBUTING.md",
    "zstd/CONTRIBUTING.md.gz", "zstd/TESTING.md", "zstd/README.md.gz",
    "systemd/CODING_STYLE.md.gz", "systemd/ENVIRONMENT.md.gz", "systemd/UIDS-GIDS.md.gz",
    "systemd/DISTRO_PORTING.md",
    "libcrypt-dev/TODO.md.gz", "libgnutls30/README.md.gz", "man-db/README.md.gz",
    "openssl/README.md.gz", "openssl/README-ENGINES.md.gz", "libjpeg-dev/README.md.gz",
    "librsvg2-2/README.md.gz", "iso-codes/README.md.gz", "debian-reference-en/README.md.gz",
    "at-spi2-core/README.md.gz", "postgresql-common/README.md.gz", "apt/README.md.gz",
    "libgdk-pixbuf-2.0-0/README.md", "libglib2.0-0/README.md", "libidn2-0/README.md.gz",
    "tcl8.6/README.md.gz", "libxml2/README.md", "libcbor0.8/README.md", "libtasn1-6/README.md",
)
# the held-out set: guides, policies and READMEs that mdnotes does not hold ("**" globs a
# folder); nodejs's changelogs and API reference are left out (generated release notes,
# API pages), as is every file of FILES
FILES2 = (
    "nodejs/contributing/**/*.md", "libxmlsec1/README.md", "libcommons-cli-java/README.md.gz",
    "libpango-1.0-0/README.md", "psmisc/README.md", "libjs-mathjax/README.md",
    "systemd/HACKING.md.gz", "libjsoncpp25/README.md", "shared-mime-info/README.md",
)
# the second held-out set (stop 49): the LaTeX packages' READMEs TeX Live's documentation
# installs, and ten small projects' READMEs; nothing of FILES or FILES2, no translation
FILES3 = (
    "texlive-doc/**/*.md", "texlive-doc/**/*.md.gz", "git/README.md", "procps/bugs.md",
    "pkgconf-bin/README.md.gz", "t1utils/README.md", "libffi8/README.md.gz",
    "libpoppler126/README.md.gz", "libjs-highlight.js/README.md.gz", "libjs-underscore/README.md",
    "tk8.6/README.md", "fonts-dejavu-core/README.md",
)
TRANSLATED = re.compile(r"(?i)[-_.](?:chinese|zh|cn|ru|ja|de|fr|es|it|ko|pt)(?:[-_.]|$)|中文")
SETS = {"mdnotes": FILES, "mdnotes2": FILES2, "mdnotes3": FILES3}


def folder_of(name: str) -> Path:
    return ROOT / "bench" / "out" / name


def sources(files: tuple[str, ...]) -> list[str]:
    """The set's files relative to /usr/share/doc, globs expanded (sorted)."""
    out = []
    for rel in files:
        if "*" in rel:
            out.extend(sorted(str(p.relative_to(DOC)) for p in DOC.glob(rel) if p.is_file()
                              and not TRANSLATED.search(p.name.split(".md")[0])))
        else:
            out.append(rel)
    return out


def build(folder: Path = DEFAULT, files: tuple[str, ...] = FILES) -> list[Path]:
    """Writes each available file as FOLDER/<package>/<path without .gz>; returns them."""
    out = []
    for rel in sources(files):
        src = DOC / rel
        if not src.is_file():
            print(f"skipped (not installed): {src}", file=sys.stderr)
            continue
        pkg, name = rel.split("/", 1)
        dest = folder / pkg / name.removesuffix(".gz")
        dest.parent.mkdir(parents=True, exist_ok=True)
        if src.suffix == ".gz":
            with gzip.open(src, "rb") as fh, open(dest, "wb") as w:
                shutil.copyfileobj(fh, w)
        else:
            shutil.copyfile(src, dest)
        out.append(dest)
    return out


if __name__ == "__main__":
    import argparse

    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--set", default="mdnotes", choices=sorted(SETS))
    ap.add_argument("folder", nargs="?")
    args = ap.parse_args()
    target = Path(args.folder) if args.folder else folder_of(args.set)
    files = build(target, SETS[args.set])
    print(f"{len(files)} files -> {target}")
