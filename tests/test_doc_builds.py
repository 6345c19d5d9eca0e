"""A documentation site's generated files (indexer/doc_builds.py): Sphinx's search index,
theme assets, source copies and index pages, and those of mdBook, rustdoc, MkDocs, Javadoc
and Doxygen, are skipped with a reason that names the pages standing for them; the pages,
and anything not from a generator, are indexed."""

from __future__ import annotations

import os

import pytest

from indexer.doc_builds import MDBOOK, SPHINX, generator_of, rendered_page
from indexer.options import IndexOptions
from indexer.walk import scan

EXTS = [".txt", ".md", ".html", ".js", ".css"]


def sphinx_site(root):
    """A Sphinx HTML build as `sphinx-build -b html` writes it (the files that matter here)."""
    (root / "_static").mkdir(parents=True)
    (root / "_sources" / "library").mkdir(parents=True)
    (root / "library").mkdir()
    (root / "searchindex.js").write_text('Search.setIndex({"docnames": ["api", "library/os.path"], '
                                         '"terms": {"jsonifi": [0, 1]}})')
    (root / "objects.inv").write_bytes(b"# Sphinx inventory version 2\n# Project: Demo\n")
    (root / "_static" / "jquery.js").write_text("/*! jQuery v3.6.0 */\n(function(global) { return 1; })(this);\n")
    (root / "_static" / "basic.css").write_text("div.body { min-width: 360px; }\n")
    (root / "api.html").write_text("<h1>API</h1><dl><dt>demo.jsonify(*args)</dt>"
                                   "<dd>Serialize the arguments as JSON.</dd></dl>")
    (root / "library" / "os.path.html").write_text("<h1>os.path</h1><p>Path names.</p>")
    (root / "_sources" / "api.rst.txt").write_text("API\n===\n\n.. autofunction:: demo.jsonify\n")
    (root / "_sources" / "library" / "os.path.txt").write_text("os.path\n=======\n\nPath names.\n")
    (root / "_sources" / "draft.rst.txt").write_text("Draft\n=====\n\nA page that was not rendered.\n")
    for page in ("genindex.html", "genindex-J.html", "py-modindex.html", "search.html"):
        (root / page).write_text("<p>Index: jsonify() (in module demo)</p>")
    return root


def rel_kinds(result, root) -> dict[str, str]:
    return {os.path.relpath(p, root): s.kind for p, s in result.skips.items()}


def test_a_sphinx_sites_generated_files_are_skipped_and_its_pages_indexed(tmp_path):
    root = sphinx_site(tmp_path / "docs" / "html")
    (tmp_path / "docs" / "notes.md").write_text("My own notes beside the site.\n")
    result = scan([(str(tmp_path / "docs"), str(tmp_path / "docs"))], IndexOptions(extensions=EXTS))
    indexed = sorted(os.path.relpath(p, root) for p in result.candidates)
    assert indexed == ["../notes.md", "_sources/draft.rst.txt", "api.html", "library/os.path.html"]
    assert rel_kinds(result, root) == {
        "_static": "generated", "searchindex.js": "generated", "_sources/api.rst.txt": "generated",
        "_sources/library/os.path.txt": "generated", "genindex.html": "generated",
        "genindex-J.html": "generated", "py-modindex.html": "generated", "search.html": "generated",
        "objects.inv": "unsupported_type"}
    reasons = {os.path.relpath(p, root): s.reason for p, s in result.skips.items()}
    assert "copy of the source of api.html, which is indexed" in reasons["_sources/api.rst.txt"]
    assert "library/os.path.html" in reasons["_sources/library/os.path.txt"]   # an old build's copy
    assert "search index" in reasons["searchindex.js"]
    # with HTML not among the extensions indexed, the copies are what there is to read
    result = scan([(str(root), str(root))], IndexOptions(extensions=[".txt"]))
    assert sorted(os.path.relpath(p, root) for p in result.candidates) == [
        "_sources/api.rst.txt", "_sources/draft.rst.txt", "_sources/library/os.path.txt"]


def test_a_single_file_event_inside_a_site_follows_the_same_rule(tmp_path):
    """The watcher scans one path: the rule finds the site above it all the same."""
    root = sphinx_site(tmp_path / "html")
    options = IndexOptions(extensions=EXTS)
    for rel, kept in (("_sources/api.rst.txt", False), ("_static/jquery.js", False),
                      ("api.html", True), ("_sources/draft.rst.txt", True)):
        result = scan([(str(root), str(root / rel))], options)
        assert (str(root / rel) in result.candidates) is kept, rel
        if not kept:
            assert not result.candidates


def test_files_of_the_same_names_outside_a_site_are_indexed(tmp_path):
    """Only a generator's signature makes a site: a project's own searchindex.js, a
    `_sources` or `_static` folder and a print.html are ordinary files elsewhere."""
    root = tmp_path / "project"
    (root / "_static").mkdir(parents=True)
    (root / "_sources").mkdir()
    (root / "searchindex.js").write_text("export const searchIndex = new Map();\n")
    (root / "_static" / "app.js").write_text("function toggle() { return 1; }\n")
    (root / "_sources" / "api.rst.txt").write_text("API\n===\n\nText.\n")
    (root / "api.html").write_text("<p>API</p>")
    (root / "print.html").write_text("<p>Printable</p>")
    (root / "search.html").write_text("<p>Search</p>")
    result = scan([(str(root), str(root))], IndexOptions(extensions=EXTS))
    assert not result.skips
    assert len(result.candidates) == 6
    assert generator_of(str(root)) is None


def test_an_mdbook_sites_generated_files_are_skipped(tmp_path):
    root = tmp_path / "book"
    (root / "css").mkdir(parents=True)
    (root / "FontAwesome" / "css").mkdir(parents=True)
    (root / "css" / "chrome.css").write_text(".sidebar { width: 300px; }\n")
    (root / "FontAwesome" / "css" / "font-awesome.css").write_text(".fa { display: inline; }\n")
    (root / "book.js").write_text("function playground_text(playground) { return 1; }\n")
    (root / "searcher.js").write_text("window.search = window.search || {};\n")
    (root / "searchindex.js").write_text('Object.assign(window.search, {"doc_urls": ["ch01.html#intro"]});')
    (root / "print.html").write_text("<h1>Intro</h1><p>Everything again.</p>")
    (root / "ch01.html").write_text("<h1>Intro</h1><p>Chapter one.</p>")
    assert generator_of(str(root)) == MDBOOK
    result = scan([(str(root), str(root))], IndexOptions(extensions=EXTS))
    assert [os.path.relpath(p, root) for p in result.candidates] == ["ch01.html"]
    assert rel_kinds(result, root) == {k: "generated" for k in (
        "css", "FontAwesome", "book.js", "searcher.js", "searchindex.js", "print.html")}


def test_rendered_page_of_a_source_copy(tmp_path):
    root = sphinx_site(tmp_path / "html")
    assert generator_of(str(root)) == SPHINX
    assert rendered_page(str(root), "api.rst.txt") == "api.html"
    assert rendered_page(str(root), "library/os.path.txt") == "library/os.path.html"
    assert rendered_page(str(root), "draft.rst.txt") is None
    (root / "guide").mkdir()
    (root / "guide" / "index.html").write_text("<p>dirhtml</p>")
    assert rendered_page(str(root), "guide.rst.txt") == "guide/index.html"


def test_indexing_a_site_keeps_only_its_pages_and_drops_copies_indexed_before(make_index, tmp_path):
    """Real index: the source copy of a page not yet rendered is indexed; once its page is
    there, the next update drops the copy (the walker changed its mind) and search finds
    the page alone."""
    root = sphinx_site(tmp_path / "html")
    idx = make_index(IndexOptions(extensions=EXTS))
    idx.add_root(root)
    report = idx.update()
    assert report.added == 3 and report.errors == 0      # api.html, os.path.html, the draft's copy
    hits = idx.search("A page that was not rendered", k=3)
    assert hits and hits[0].path.endswith("_sources/draft.rst.txt")
    (root / "draft.html").write_text("<h1>Draft</h1><p>A page that was not rendered, now rendered.</p>")
    idx.update()
    paths = {p.path for p in idx.search("A page that was not rendered", k=5)}
    assert str(root / "draft.html") in paths
    assert not any("_sources" in p for p in paths)
    assert idx.status().files_indexed == 3


def test_the_watcher_drops_a_source_copy_when_its_page_appears_and_takes_it_back_when_it_goes(
        make_index, tmp_path):
    """Real index and watcher: the watcher's event names the new page alone, yet the copy
    of its source indexed while the page was missing is dropped (it would otherwise stay
    until the next full `localrag index`), and indexed again once the page is deleted. A
    site that appears (its search index written last, as sphinx-build does) has its
    generated files dropped at once too."""
    from test_indexer_watch import paths_in_store, wait_until

    root = sphinx_site(tmp_path / "html")
    draft_copy = str(root / "_sources" / "draft.rst.txt")
    idx = make_index(IndexOptions(extensions=EXTS))
    idx.add_root(root)
    idx.update()
    assert paths_in_store(idx)[draft_copy] == "indexed"
    errors: list = []
    watcher = idx.watch(lambda e: None, on_error=errors.append, debounce_s=0.2)
    try:
        watcher.flush()
        (root / "draft.html").write_text("<h1>Draft</h1><p>A page that was not rendered, now rendered.</p>")
        watcher.flush()
        assert wait_until(lambda: paths_in_store(idx).get(draft_copy) == "skipped"
                          and paths_in_store(idx).get(str(root / "draft.html")) == "indexed")
        assert idx.store.conn.execute("SELECT reason_kind FROM files WHERE path = ?",
                                      (draft_copy,)).fetchone()[0] == "generated"
        os.remove(root / "draft.html")
        watcher.flush()
        assert wait_until(lambda: paths_in_store(idx).get(draft_copy) == "indexed"
                          and str(root / "draft.html") not in paths_in_store(idx))
        # a second site appears: plain files first, its signature last
        other = tmp_path / "html" / "other"
        (other / "_sources").mkdir(parents=True)
        (other / "_sources" / "intro.rst.txt").write_text("Intro\n=====\n\nThe wombat burrows.\n")
        (other / "intro.html").write_text("<h1>Intro</h1><p>The wombat burrows.</p>")
        watcher.flush()
        assert wait_until(lambda: paths_in_store(idx).get(str(other / "intro.html")) == "indexed")
        assert paths_in_store(idx).get(str(other / "_sources" / "intro.rst.txt")) == "indexed"
        (other / "searchindex.js").write_text('Search.setIndex({"docnames": ["intro"]})')
        watcher.flush()
        assert wait_until(lambda: paths_in_store(idx).get(str(other / "_sources" / "intro.rst.txt")) == "skipped")
        assert paths_in_store(idx)[str(other / "intro.html")] == "indexed"
        assert errors == []
    finally:
        watcher.stop()


def test_a_rustdoc_sites_generated_files_are_skipped_and_a_book_inside_it_keeps_its_own_rule(tmp_path):
    """rustdoc's API pages are indexed; its search index, scripts, line-numbered source pages
    and list pages are not. A book (mdBook) inside the same folder is a site of its own."""
    root = tmp_path / "html"
    for folder in ("std/fs", "src/std", "implementors/core", "book/css"):
        (root / folder).mkdir(parents=True)
    (root / "search-index1.63.0.js").write_text("var searchIndex = JSON.parse('{\"std\":{\"doc\":\"\"}}');\n")
    (root / "main1.63.0.js").write_text("function onEach(arr, func) { return 1; }\n")
    (root / "settings.html").write_text("<p>Settings: theme</p>")
    (root / "std" / "all.html").write_text("<h1>List of all items</h1><p>read_to_string</p>")
    (root / "std" / "fs" / "fn.read_to_string.html").write_text(
        "<h1>Function std::fs::read_to_string</h1><p>Read the entire contents of a file into a string.</p>")
    (root / "std" / "fs" / "sidebar-items.js").write_text('initSidebarItems({"fn":["read_to_string"]});')
    (root / "src" / "std" / "fs.rs.html").write_text("<pre>1 2 3</pre><pre>pub fn read_to_string() {}</pre>")
    (root / "implementors" / "core" / "marker.js").write_text("(function() {var implementors = {};})()")
    (root / "book" / "book.js").write_text("function playground_text(p) { return 1; }\n")
    (root / "book" / "searcher.js").write_text("window.search = window.search || {};\n")
    (root / "book" / "css" / "chrome.css").write_text(".sidebar { width: 300px; }\n")
    (root / "book" / "ch01.html").write_text("<h1>Getting started</h1><p>Install Rust.</p>")
    result = scan([(str(root), str(root))], IndexOptions(extensions=EXTS))
    assert sorted(os.path.relpath(p, root) for p in result.candidates) == [
        "book/ch01.html", "std/fs/fn.read_to_string.html"]
    assert rel_kinds(result, root) == {k: "generated" for k in (
        "search-index1.63.0.js", "main1.63.0.js", "settings.html", "std/all.html",
        "std/fs/sidebar-items.js", "src", "implementors", "book/book.js", "book/searcher.js",
        "book/css")}
    reasons = {os.path.relpath(p, root): s.reason for p, s in result.skips.items()}
    assert "source code" in reasons["src"] and "rustdoc" in reasons["search-index1.63.0.js"]


def _files(root, files: dict[str, str]) -> None:
    for rel, text in files.items():
        path = root / rel
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(text)


SITES = {
    "MkDocs": ({
        "sitemap.xml": "<urlset></urlset>",
        "search/search_index.json": '{"config": {"lang": ["en"]}, "docs": [{"text": "Install it."}]}',
        "assets/javascripts/lunr/tinyseg.js": "function TinySegmenter() { return 1; }",
        "404.html": "<h1>404 - Not found</h1>",
        "index.html": "<h1>Install</h1><p>Install it with pip.</p>",
        "reference.html": "<h1>Reference</h1><p>The options.</p>",
    }, ["index.html", "reference.html"], ["404.html", "assets/javascripts/lunr/tinyseg.js", "search", "sitemap.xml"]),
    "Javadoc": ({
        "element-list": "org.demo",
        "index-all.html": "<p>A B C: read(File) - Method in class Reader</p>",
        "allclasses-index.html": "<p>All classes: Reader</p>",
        "member-search-index.js": 'memberSearchIndex = [{"p":"org.demo","c":"Reader","l":"read()"}]',
        "jquery/jquery-3.5.1.js": "(function(global) { return 1; })(this);",
        "constant-values.html": "<h1>Constant Field Values</h1><p>BUFFER_SIZE 4096</p>",
        "org/demo/Reader.html": "<h1>Class Reader</h1><p>Reads the whole file into a string.</p>",
        "org/demo/package-tree.html": "<p>Class Hierarchy: java.lang.Object, Reader</p>",
        "org/demo/class-use/Reader.html": "<p>Uses of Class org.demo.Reader: No usage</p>",
    }, ["constant-values.html", "org/demo/Reader.html"],
        ["allclasses-index.html", "index-all.html", "jquery", "member-search-index.js",
         "org/demo/class-use", "org/demo/package-tree.html"]),
    "Doxygen": ({
        "doxygen.css": "body { margin: 0; }",
        "dynsections.js": "function toggleVisibility(linkObj) { return 1; }",
        "search/search.js": "function SearchBox(name) { return 1; }",
        "annotated.html": "<p>Here are the classes: Reader</p>",
        "classReader.html": "<h1>Reader Class Reference</h1><p>Reads the whole file into a string.</p>",
        "classReader-members.html": "<p>This is the complete list of members for Reader</p>",
        "reader_8h_source.html": "<pre>1 class Reader {};</pre>",
        "functions_func.html": "<p>read() : Reader</p>",
    }, ["classReader.html"],
        ["annotated.html", "classReader-members.html", "doxygen.css", "dynsections.js",
         "functions_func.html", "reader_8h_source.html", "search"]),
}


@pytest.mark.parametrize("generator", sorted(SITES))
def test_mkdocs_javadoc_and_doxygen_sites_keep_their_pages_only(tmp_path, generator):
    files, kept, skipped = SITES[generator]
    root = tmp_path / "site"
    _files(root, files)
    assert generator_of(str(root)) == generator
    result = scan([(str(root), str(root))], IndexOptions(extensions=EXTS + [".json", ".xml", ""]))
    assert sorted(os.path.relpath(p, root) for p in result.candidates) == kept
    assert {k: v for k, v in rel_kinds(result, root).items() if v == "generated"} == {
        k: "generated" for k in skipped}
    # the same files without the generator's signature are a folder like any other
    plain = tmp_path / "plain"
    _files(plain, {k: v for k, v in files.items()
                   if k not in ("sitemap.xml", "element-list", "doxygen.css")})
    assert generator_of(str(plain)) is None
    assert not any(s.kind == "generated"
                   for s in scan([(str(plain), str(plain))], IndexOptions(extensions=EXTS)).skips.values())
