"""Documentation sites built by a generator: which of their files are the generator's own.

A folder of documentation as a package or a download installs it (the HTML of a Sphinx,
mdBook or rustdoc project) holds, beside the pages a person reads, what the generator wrote for the
site itself. Indexed, those files crowd out the pages: on Flask's documentation (Debian's
python-flask-doc) a third of the top-5 search results were Sphinx's copies of the pages'
sources (`_sources/*.rst.txt`), and the largest "documents" were its search index
(`searchindex.js`: 212 chunks of a machine-written word list) and the site's jQuery (202).
So the walker skips them, with a reason that says which pages stand for them:
- Sphinx (a folder whose `searchindex.js` starts with `Search.setIndex(`, or whose
  `objects.inv` is a Sphinx inventory): `searchindex.js`; the folder `_static` (the theme's
  scripts, styles and images); a copy `_sources/<page>.<suffix>.txt` whose rendered page
  `<page>.html` is there (a source without its page is still indexed: then it is all there
  is); the generated index and search pages (`genindex*.html`, `*modindex.html`,
  `search.html`).
- mdBook (a folder with `book.js` and `searcher.js`, or a `searchindex.js` that sets
  `window.search`): its search index, every script and style at the top of the book, the
  folders `css`, `fonts` and `FontAwesome`, and `print.html` (the whole book again on one
  page; its chapters are indexed one by one).
- rustdoc (a folder with a `search-index<version>.js` that sets `searchIndex`): that index,
  every script and style (each module's `sidebar-items.js` too), the folders `src` (the
  crates' source code as line-numbered pages), `implementors` and `static.files`, and the
  pages that list or set up the others (`settings.html`, `help.html`, a crate's `all.html`).
- MkDocs (`sitemap.xml` and a `search/search_index.json` of its own format): the `search`
  folder (every page's text again), scripts and styles, `sitemap.xml` and `404.html`.
- Javadoc (`element-list` or `package-list` with its list pages): scripts, styles and search
  files, `jquery/`, `resources/`, `legal/`, `index-files/`, every `class-use/` folder, and the
  list pages (`index-all.html`, `allclasses*.html`, `overview-tree.html`, `package-tree.html`,
  `help-doc.html` ...).
- Doxygen (`doxygen.css` with `dynsections.js` or its logo): scripts, styles, `search/`, the
  line-numbered source pages (`*_source.html`), member lists (`*-members.html`) and the
  index pages (`annotated.html`, `classes.html`, `files.html`, `functions*.html` ...).

A build is recognised by the files its generator always writes, read from the nearest
folder above a path up to the root being indexed, so the rule holds for a build anywhere in
a folder of notes and for a watcher's single-file event alike; nothing else is touched.
"""

from __future__ import annotations

import os
import re

SPHINX = "Sphinx"
MDBOOK = "mdBook"
RUSTDOC = "rustdoc"
MKDOCS = "MkDocs"
JAVADOC = "Javadoc"
DOXYGEN = "Doxygen"

_SPHINX_INDEX = b"Search.setIndex("
_SPHINX_INVENTORY = b"# Sphinx inventory"
_MDBOOK_INDEX = (b"Object.assign(window.search", b"window.search")
_RUSTDOC_INDEX = (b"var searchIndex", b"\"use strict\";\nvar searchIndex",
                  b"\"use strict\";\r\nvar searchIndex")
_RUSTDOC_INDEX_NAME = re.compile(r"search-index[\w.-]*\.js")
_RUSTDOC_FOLDERS = ("src", "implementors", "static.files", "type.impl", "trait.impl")
_SPHINX_PAGES = re.compile(r"(genindex(-[^/]*)?|[a-z]*-?modindex|search)\.html?", re.IGNORECASE)
_SITE_ASSETS = (".js", ".mjs", ".css", ".map", ".md5", ".zip")   # scripts, styles, search data
_MDBOOK_FOLDERS = ("css", "fonts", "FontAwesome")
_MKDOCS_INDEX = b'{"config"'
_JAVADOC_LISTS = ("index-all.html", "allclasses.html", "allclasses-index.html", "allclasses-frame.html",
                  "allclasses-noframe.html", "allpackages-index.html", "overview-tree.html",
                  "overview-frame.html", "help-doc.html", "search.html")
_JAVADOC_PACKAGE_LISTS = ("package-tree.html", "package-use.html", "package-frame.html")
_JAVADOC_FOLDERS = ("jquery", "script-dir", "resources", "legal", "index-files")
_DOXYGEN_LISTS = re.compile(r"(annotated|classes|files|hierarchy|inherits|namespaces|graph_legend|pages|"
                            r"modules|(?:functions|globals|namespacemembers)(?:_\w+)?|dir_[0-9a-f]+)\.html")


# the files whose presence makes a site (generator_of): a change to one may change the
# verdict on every file of its folder
_SIGNATURES = frozenset({"searchindex.js", "objects.inv", "book.js", "searcher.js", "sitemap.xml",
                         "sitemap.xml.gz", "element-list", "package-list", "doxygen.css",
                         "dynsections.js", "doxygen.svg", "doxygen.png"})


def _starts_with(path: str, prefixes: tuple[bytes, ...]) -> bool:
    try:
        with open(path, "rb") as fh:
            head = fh.read(64).lstrip(b"\xef\xbb\xbf \t\r\n")
    except OSError:
        return False
    return head.startswith(prefixes)


def generator_of(folder: str, names: set[str] | None = None) -> str | None:
    """The generator (SPHINX, MDBOOK, RUSTDOC, MKDOCS, JAVADOC, DOXYGEN) when `folder` is
    the top of a site it built, else None. `names`: the folder's entries, when the caller listed them already; a file
    is opened only when its name is there."""
    if names is None:
        try:
            with os.scandir(folder) as it:
                names = {e.name for e in it}
        except OSError:
            return None

    def at(name: str) -> str:
        return os.path.join(folder, name)

    if "searchindex.js" in names:
        if _starts_with(at("searchindex.js"), (_SPHINX_INDEX,)):
            return SPHINX
        if _starts_with(at("searchindex.js"), _MDBOOK_INDEX):
            return MDBOOK
    if "objects.inv" in names and _starts_with(at("objects.inv"), (_SPHINX_INVENTORY,)):
        return SPHINX
    if "book.js" in names and "searcher.js" in names:
        return MDBOOK
    if any(_RUSTDOC_INDEX_NAME.fullmatch(n) and _starts_with(at(n), _RUSTDOC_INDEX) for n in names):
        return RUSTDOC   # "search-index<version>.js" beside the crates' folders
    if "search" in names and names & {"sitemap.xml", "sitemap.xml.gz"} and _starts_with(
            os.path.join(folder, "search", "search_index.json"), (_MKDOCS_INDEX,)):
        return MKDOCS
    if names & {"element-list", "package-list"} and names & {*_JAVADOC_LISTS, "index-files"}:
        return JAVADOC
    if "doxygen.css" in names and names & {"dynsections.js", "doxygen.svg", "doxygen.png"}:
        return DOXYGEN
    return None


class DocBuilds:
    """The generated-file rule for one root's walk (each folder's nearest site cached)."""

    def __init__(self, root: str, extensions: list[str] | tuple[str, ...] = (".html",)) -> None:
        self.root = os.path.normpath(root)
        self.pages_indexed = ".html" in extensions   # else a source copy is all there is
        self._site: dict[str, tuple[str, str] | None] = {}   # by folder: its nearest site
        self._names: dict[str, set[str]] = {}                # folders the walk listed

    def listed(self, folder: str, names: set[str]) -> None:
        """The walk listed `folder`: its entries, so that finding a site needs no second listing."""
        self._names[os.path.normpath(folder)] = names

    def forget(self, folder: str) -> None:
        """The walk is done with `folder`'s entries (a later question lists it again)."""
        self._names.pop(os.path.normpath(folder), None)

    def _site_of(self, path: str) -> tuple[str, str] | None:
        """(site folder, generator) of the nearest site above `path`, within the root."""
        return self._site_of_folder(os.path.dirname(os.path.normpath(path)))

    def _site_of_folder(self, folder: str) -> tuple[str, str] | None:
        if folder in self._site:
            return self._site[folder]
        site = None
        if folder == self.root or folder.startswith(self.root.rstrip(os.sep) + os.sep):
            generator = generator_of(folder, self._names.pop(folder, None))
            if generator:
                site = (folder, generator)
            elif folder != self.root:
                site = self._site_of_folder(os.path.dirname(folder))
        self._site[folder] = site
        return site

    def affected(self, path: str) -> list[str]:
        """Other paths whose verdict a change of `path` (made, changed or deleted) may
        change, for an update of `path` alone (a watcher's event): a generator's signature
        file gives its whole folder (the site appears or goes); a Sphinx page gives the
        `_sources` copies rendered as it (dropped when the page appears, indexed again when
        it goes). Decided by name and by what is there now, so a deleted path works too."""
        path = os.path.normpath(path)
        folder, name = os.path.split(path)
        if name in _SIGNATURES or _RUSTDOC_INDEX_NAME.fullmatch(name):
            return [folder]
        if name == "search_index.json" and os.path.basename(folder) == "search":
            return [os.path.dirname(folder)]                      # MkDocs's search data
        if not name.lower().endswith((".html", ".htm")):
            return []
        site = self._site_of(path)
        if site is None or site[1] != SPHINX:
            return []
        rel = os.path.relpath(path, site[0]).replace(os.sep, "/")
        stems = [rel.rsplit(".", 1)[0]]
        if stems[0].endswith("/index"):
            stems.append(stems[0][: -len("/index")])                # the dirhtml builder's page
        out = []
        for stem in stems:
            where, _, base = stem.rpartition("/")
            sources = os.path.join(site[0], "_sources", *([where] if where else []))
            try:
                names = os.listdir(sources)
            except OSError:
                continue
            out += [os.path.join(sources, n) for n in sorted(names) if n.endswith(".txt")
                    and (n == f"{base}.txt" or (n.startswith(f"{base}.") and "." not in n[len(base) + 1:-4]))]
        return out

    def reason(self, path: str, *, is_dir: bool) -> str | None:
        """Why `path` is the generator's own file (a reason for a person), else None."""
        site = self._site_of(path)
        if site is None:
            return None
        folder, generator = site
        rel = os.path.relpath(path, folder).replace(os.sep, "/")
        parts = rel.split("/")
        if generator == SPHINX:
            return _sphinx_reason(folder, rel, parts, is_dir, self.pages_indexed)
        if generator == RUSTDOC:
            return _rustdoc_reason(rel, parts, is_dir)
        if generator in (MKDOCS, JAVADOC, DOXYGEN):
            return _site_reason(generator, rel, parts, is_dir)
        return _mdbook_reason(rel, parts, is_dir)


def _sphinx_reason(folder: str, rel: str, parts: list[str], is_dir: bool, pages_indexed: bool) -> str | None:
    if is_dir:
        if rel == "_static":
            return ("the Sphinx site's scripts, styles and images (its pages are indexed; "
                    "generated by the documentation build)")
        return None
    if rel == "searchindex.js":
        return "Sphinx's search index: a machine-written word list of the pages beside it, which are indexed"
    if len(parts) == 1 and _SPHINX_PAGES.fullmatch(parts[0]):
        return "a page Sphinx generates to list or search the others (links only); the pages are indexed"
    if parts[0] == "_sources" and len(parts) > 1 and pages_indexed:
        page = rendered_page(folder, "/".join(parts[1:]))
        if page:
            return (f"Sphinx's copy of the source of {page}, which is indexed (the page has its "
                    "cross references resolved and the API entries the source only names)")
    return None


def _mdbook_reason(rel: str, parts: list[str], is_dir: bool) -> str | None:
    if is_dir:
        if rel in _MDBOOK_FOLDERS:
            return "the mdBook site's styles and fonts (its chapters are indexed)"
        return None
    if len(parts) != 1:
        return None
    name = parts[0]
    if name in ("searchindex.js", "searchindex.json"):
        return "mdBook's search index: a machine-written word list of the chapters, which are indexed"
    if name == "print.html":
        return "mdBook's whole book on one page: the same text as its chapters, which are indexed one by one"
    if name.lower().endswith(_SITE_ASSETS):
        return "a script or style of the mdBook site (its chapters are indexed)"
    return None


def _rustdoc_reason(rel: str, parts: list[str], is_dir: bool) -> str | None:
    if is_dir:
        if rel == "src":
            return ("rustdoc's pages of the crates' source code (line-numbered copies of the "
                    "code the API pages document; the API pages are indexed)")
        if rel in _RUSTDOC_FOLDERS:
            return "rustdoc's scripts and styles (the API pages are indexed)"
        return None
    name = parts[-1]
    if _RUSTDOC_INDEX_NAME.fullmatch(name):
        return "rustdoc's search index: a machine-written list of every item, whose pages are indexed"
    if name.lower().endswith(_SITE_ASSETS):
        return "a script or style of the rustdoc site (the API pages are indexed)"
    if (name in ("settings.html", "help.html") and len(parts) == 1) or (name == "all.html" and len(parts) == 2):
        return "a page rustdoc generates to list or set up the others; the API pages are indexed"
    return None


def _site_reason(generator: str, rel: str, parts: list[str], is_dir: bool) -> str | None:
    """MkDocs, Javadoc and Doxygen: their scripts and styles anywhere in the site, their
    search data, and the pages that only list the others."""
    name = parts[-1]
    if is_dir:
        if generator == MKDOCS and rel == "search":
            return "MkDocs's search index: every page's text again, in one file (the pages are indexed)"
        if (generator == JAVADOC and (rel in _JAVADOC_FOLDERS or name == "class-use")) or (
                generator == DOXYGEN and rel == "search"):
            return (f"{generator}'s generated scripts, search data or cross-reference pages "
                    "(the documentation pages are indexed)")
        return None
    if name.lower().endswith(_SITE_ASSETS):
        return f"a script, style or search file of the {generator} site (its pages are indexed)"
    lists = {
        MKDOCS: len(parts) == 1 and name in ("sitemap.xml", "sitemap.xml.gz", "404.html"),
        JAVADOC: (len(parts) == 1 and name in _JAVADOC_LISTS) or name in _JAVADOC_PACKAGE_LISTS,
        DOXYGEN: name.endswith(("_source.html", "-members.html"))
        or (len(parts) == 1 and bool(_DOXYGEN_LISTS.fullmatch(name))),
    }
    if lists[generator]:
        return (f"a page {generator} generates to list or index the others (or a source file's "
                "line-numbered copy); the documentation pages are indexed")
    return None


def rendered_page(folder: str, source: str) -> str | None:
    """The page Sphinx rendered from `_sources/<source>`, relative to the site, when it is
    there: "api.rst.txt" (or an old build's "api.txt") -> "api.html", or "api/index.html"
    of the dirhtml builder."""
    stem = source[:-4] if source.endswith(".txt") else source
    stems = [stem]                       # "os.path.txt" of an old build: "os.path.html"
    base, dot, suffix = stem.rpartition(".")
    if dot and base and "/" not in suffix:
        stems.append(base)               # "api.rst.txt": "api.html"
    for s in stems:
        for page in (f"{s}.html", f"{s}/index.html"):
            if os.path.isfile(os.path.join(folder, page)):
                return page
    return None
