"""A program's chunks are embedded by their prose (indexer/code_prose.py): the names of its
definitions, its comments and docstrings, the compound names its statements use, never
the statements themselves; data files and every other format are embedded as they are.
Real SQLite, hnswlib and the real embedding model for the index tests."""

from __future__ import annotations

import numpy as np

from indexer.chunker import chunk_document, chunk_embedding_text, embedding_text
from indexer.code_prose import prose_of_code
from indexer.index import Index
from indexer.parsers import parse_bytes

PROGRAM = '''"""Reminders for a lending library."""
import smtplib


def send_overdue_reminders(members, today):
    """Send a reminder e-mail to every member whose loan is overdue.

    A loan is overdue one day after its due date; members who opted out of e-mail
    get nothing.
    """
    for member in members:
        if member.opted_out:   # they asked us to stop writing
            continue
        late = [loan for loan in member.loans if loan.due < today]
        if late:
            smtplib.SMTP("localhost").sendmail("desk@library", member.address, render(late))
'''


def test_a_programs_prose_is_its_names_comments_and_docstrings_not_its_statements():
    prose = prose_of_code(PROGRAM)
    assert "Reminders for a lending library." in prose
    assert "def send_overdue_reminders" in prose
    assert "Send a reminder e-mail to every member whose loan is overdue." in prose
    assert "they asked us to stop writing" in prose          # a comment after code
    assert "opted out" in prose                              # member.opted_out, as words
    for statement in ("import smtplib", "for member in members", "sendmail(", "loan.due < today"):
        assert statement not in prose


def test_a_programs_messages_are_prose_too(monkeypatch):
    from indexer import code_prose

    code = ('def unparse(input_dict, full_document=True):\n'
            '    if full_document and len(input_dict) != 1:\n'
            '        raise ValueError("Document must have exactly one root.")\n'
            '    log.debug(\'Origin "%s" is not HTTPS, CORS not allowed.\', origin)\n'
            '    parser.add_argument("--width", help="When using --yaml-output, specify string wrap width")\n'
            '    pair = "%s=%s" % (key, value)  # "a comment\'s quotes are no message at all"\n')
    prose = prose_of_code(code)
    for message in ("Document must have exactly one root.", 'Origin "%s" is not HTTPS, CORS not allowed.',
                    "When using --yaml-output, specify string wrap width"):
        assert message in prose.split("\n")
    assert "%s=%s" not in prose and "--width" not in prose.split("\n")
    assert "a comment's quotes are no message at all" in prose   # read as the comment it is
    assert "quotes are no message" not in prose.replace("a comment's quotes are no message at all", "")
    monkeypatch.setattr(code_prose, "READ_MESSAGES", False)   # as stop 48 read it
    assert "Document must have exactly one root." not in prose_of_code(code)


def test_block_comments_and_line_comments_of_other_languages():
    c = ("/**\n * Parse one line of the config file.\n * Returns -1 when the key is unknown.\n */\n"
         "int parse_line(const char *line) {\n    // skip leading blanks before the key\n"
         "    while (*line == ' ') line++;\n    return lookup_key(line);\n}\n")
    prose = prose_of_code(c)
    assert "Parse one line of the config file." in prose and "Returns -1 when the key is unknown." in prose
    assert "skip leading blanks before the key" in prose
    assert "lookup key" in prose and "while" not in prose and "*" not in prose.split("\n")[0]
    # Python's floor division is no comment; a C comment after a statement is
    py = "pages = total_lines // lines_per_page if total_lines else first_page // 2\n" * 3
    assert "lines per page" in prose_of_code(py + "# how many pages the report needs, rounded down\n")
    assert "2" not in prose_of_code(py + "# how many pages the report needs, rounded down\n")
    assert "counts the open files" in prose_of_code("int n = 0; // counts the open files of the process\n" * 2)


def test_a_chunk_of_bare_code_is_embedded_as_it_is():
    assert prose_of_code("x = compute(a, b)\ny = x + 1\nreturn y\n") == ""


def test_a_chunk_that_opens_inside_a_docstring_reads_it_as_prose():
    # a docstring longer than a chunk: the chunk after the cut opens inside it, which only
    # the file (not the chunk's own text) can tell
    body = "\n".join(f"    Step {i} of the migration copies table number {i} into the archive." for i in range(40))
    text = f'def migrate(db):\n    """Move old rows to the archive.\n\n{body}\n    """\n    db.execute("VACUUM")\n'
    chunks = chunk_document(parse_bytes(text.encode(), ext=".py", name="migrate.py"), file_name="migrate.py",
                            chunk_words=60)
    assert len(chunks) >= 3
    inner = chunks[1]
    assert inner.text.lstrip().startswith("Step") and '"""' not in inner.text
    assert "copies table number" in inner.embed
    last = chunks[-1]
    assert 'db.execute("VACUUM")' in last.text
    assert "VACUUM" not in last.embed and "into the archive" in last.embed


def test_a_chunk_that_opens_inside_a_block_comment_reads_it_as_prose():
    # zlib.h documents each function in a /* */ block longer than a chunk: the chunks cut
    # from its middle are all comment (embedded as the compound names alone, they lost it)
    body = "\n".join(f"    If flush is set to Z_MODE_{i}, pending output number {i} is written to the buffer."
                     for i in range(40))
    text = f"ZEXTERN int ZEXPORT deflate(z_streamp strm, int flush);\n/*\n{body}\n*/\n\nZEXTERN int inflate(z_streamp strm);\n"
    chunks = chunk_document(parse_bytes(text.encode(), ext=".h", name="zlib.h"), file_name="zlib.h", chunk_words=60)
    assert len(chunks) >= 3
    inner = chunks[1]
    assert "/*" not in inner.text and "pending output number" in inner.embed
    assert "ZEXTERN" not in chunks[-1].embed


def test_only_programs_are_embedded_by_their_prose():
    data = b'{"name": "localrag", "description": "an offline assistant for your own files"}\n'
    notes = b"# Notes\n\nThe offline assistant reads my files and answers my questions.\n"
    program = PROGRAM.encode()
    for raw, ext, prose in ((data, ".json", False), (notes, ".md", False), (program, ".py", True),
                            (program, ".rs", True)):
        chunks = chunk_document(parse_bytes(raw, ext=ext, name="f" + ext), file_name="f" + ext, chunk_words=400)
        assert bool(chunks[0].embed) is prose, ext
        assert chunk_embedding_text(chunks[0]) == embedding_text(chunks[0].title, chunks[0].embed or chunks[0].text)


def _cosine(a, b) -> float:
    return float(np.dot(a, b) / (np.linalg.norm(a) * np.linalg.norm(b)))


def test_the_index_stores_a_programs_prose_vector(tmp_path, embedder, index_options):
    root = tmp_path / "docs"
    root.mkdir()
    (root / "library.py").write_text(PROGRAM)
    idx = Index(tmp_path / "index", options=index_options, embedder=embedder)
    try:
        idx.add_root(root)
        idx.update()
        rows = idx.store.conn.execute("SELECT title, text, embedding FROM chunks").fetchall()
        title, text, blob = rows[0]
        stored = np.frombuffer(blob, dtype=np.float32)
        prose, raw = embedder.encode([embedding_text(title, prose_of_code(text)), embedding_text(title, text)])
        # the same text encoded in another batch moves by a cosine of about 0.005 (int8
        # activations are scaled per batch; test_embed_reuse), far less than prose and
        # code differ
        assert _cosine(stored, prose) > 0.98
        assert _cosine(stored, raw) < _cosine(stored, prose) - 0.05
        hit = idx.search("which members get an e-mail when their book is late?", k=1)[0]
        assert hit.path == str(root / "library.py")
    finally:
        idx.close()


def test_an_index_of_the_version_before_reads_only_its_programs_again(tmp_path, embedder, index_options):
    root = tmp_path / "docs"
    root.mkdir()
    (root / "library.py").write_text(PROGRAM)
    (root / "notes.md").write_text("# Notes\n\nThe library opens at nine on weekdays.\n")
    idx = Index(tmp_path / "index", options=index_options, embedder=embedder)
    try:
        idx.add_root(root)
        idx.update()
        signature = idx.store.get_meta("chunk_words")
    finally:
        idx.close()
    assert "|v11|" in signature

    def reopen_as(version: str):
        idx = Index(tmp_path / "index", options=index_options, embedder=embedder)
        with idx.store.transaction() as conn:
            idx.store.set_meta(conn, "chunk_words", signature.replace("|v11|", version))
        idx.close()
        return Index(tmp_path / "index", options=index_options, embedder=embedder)

    # before messages were prose (v10), or before prose embedding (v9): the program alone
    # is read again
    for version in ("|v10|", "|v9|"):
        idx = reopen_as(version)
        try:
            report = idx.update()
            assert (report.updated, report.unchanged) == (1, 1), version
            assert idx.update().unchanged == 2
        finally:
            idx.close()
    idx = reopen_as("|v8|")         # a version that changed every format: every file
    try:
        report = idx.update()
        assert (report.updated, report.unchanged) == (2, 0)
    finally:
        idx.close()
