"""Unit tests of the app's pure helpers: path completion, editor command, saved answers."""

from __future__ import annotations

import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).parent))

from indexer.records import IndexProgress  # noqa: E402
from tui.history import answer_from_json  # noqa: E402
from tui.screens.source import highlighted, open_command  # noqa: E402
from tui.widgets.index_view import progress_summary  # noqa: E402
from tui.widgets.path_input import complete_path  # noqa: E402
from tui_fakes import canned_answer, canned_passages  # noqa: E402


def test_complete_path_suggests_folders_keeping_what_was_typed(tmp_path, monkeypatch):
    (tmp_path / "Documents").mkdir()
    (tmp_path / "Downloads").mkdir()
    (tmp_path / "Dog.txt").write_text("x")
    (tmp_path / ".hidden").mkdir()
    assert complete_path(str(tmp_path / "Doc")) == str(tmp_path / "Documents") + "/"
    assert complete_path(str(tmp_path / "Dow")) == str(tmp_path / "Downloads") + "/"
    assert complete_path(str(tmp_path / "Dog")) is None          # files are not folders
    assert complete_path(str(tmp_path / "Dog"), directories_only=False) == str(tmp_path / "Dog.txt")
    assert complete_path(str(tmp_path) + "/") == str(tmp_path / "Documents") + "/"
    assert complete_path(str(tmp_path / ".h")) == str(tmp_path / ".hidden") + "/"
    assert complete_path(str(tmp_path / "zzz")) is None
    monkeypatch.setenv("HOME", str(tmp_path))
    assert complete_path("~/Doc") == "~/Documents/"


def test_open_command_uses_editor_at_line_and_opener_for_pdf():
    text, pdf = canned_passages()[0], canned_passages()[1]
    assert open_command(text, environ={"EDITOR": "nvim -p"}) == (
        ["nvim", "-p", "+12", "/docs/garden.md"], True)
    cmd, in_terminal = open_command(pdf, environ={"EDITOR": "vim"})
    assert not in_terminal and cmd[-1] in ("/docs/manual.pdf", "file:///docs/manual.pdf#page=3")
    cmd, in_terminal = open_command(text, environ={})
    assert not in_terminal and cmd[-1] == "/docs/garden.md"


def test_saved_answer_json_rebuilds_the_same_answer():
    answer = canned_answer("q?")
    again = answer_from_json(answer.to_json())
    assert [(s.text, s.label, s.citation) for s in again.segments] == [
        (s.text, s.label, s.citation) for s in answer.segments]
    assert again.decision == answer.decision
    assert [j.passage.locator for j in again.passages] == [j.passage.locator for j in answer.passages]
    assert again.to_json()["sources"] == answer.to_json()["sources"]


def test_highlight_and_progress_line():
    body = highlighted("abc def ghi", 4, 7)
    assert [(s.start, s.end) for s in body.spans] == [(4, 7)]
    assert highlighted("abc", 5, 9).spans == []
    line = progress_summary(IndexProgress(phase="embedding", files_done=10, files_total=40,
                                          chunks_done=120, bytes_done=0, elapsed_s=5.0))
    assert line == "embedding 10/40 files · 120 chunks · 2.0 files/s · 15s left"


def test_sentence_line_says_where_its_label_came_from():
    from localrag.answering.label.render import answer_to_markdown, answer_to_text
    from tui.widgets.answer_view import segment_text

    answer = canned_answer("q?")
    seg = answer.segments[0]
    assert "·" not in segment_text(seg).plain        # source unknown (older saves): nothing
    seg.label_source = "critic"
    assert segment_text(seg).plain.endswith("fully supported · fallback critic")
    answer.segments[3].label_source = "retrieval"
    assert segment_text(answer.segments[3]).plain.endswith("own knowledge · no retrieval")
    again = answer_from_json(answer.to_json())
    assert [s.label_source for s in again.segments] == [s.label_source for s in answer.segments]
    assert again.segments[1].label_source is None
    assert "(fully supported; fallback critic)" in answer_to_text(answer)
    assert "*(fully supported; fallback critic)*" in answer_to_markdown(answer)


def test_watch_line_without_changes_and_home_paths(monkeypatch):
    from indexer.records import IndexReport, WatchEvent
    from tui.widgets.answer_view import display_path
    from tui.widgets.index_view import watch_summary

    assert watch_summary(WatchEvent(paths=["/n/notes"], report=IndexReport())) == (
        "Checked notes: no indexed file changed")
    assert watch_summary(WatchEvent(paths=["/n/a.md"], report=IndexReport(added=1))) == (
        "Re-indexed 1 file(s) after changes to a.md")
    monkeypatch.setenv("HOME", "/home/me")
    assert display_path("/home/me/notes/a.md") == "~/notes/a.md"
    assert display_path("/home/meg/a.md") == "/home/meg/a.md"
    assert display_path("/srv/a.md") == "/srv/a.md"


def test_rows_before_counts_wrapped_rows():
    from tui.screens.source import rows_before

    text = "aaaa\nbbbbbbbbbb\nc"
    assert rows_before(text, text.index("c"), 5) == 3      # "bbbbbbbbbb" takes two rows
    assert rows_before(text, text.index("c"), 80) == 2
    assert rows_before(text, 0, 5) == 0
    assert rows_before("x" * 12, 11, 5) == 2               # inside a wrapped line


def test_open_command_for_slides_sheets_and_messages():
    """A passage cited by a unit without a line (a slide, a sheet range) opens with the
    system's program even when $EDITOR is set; a message in an mbox opens at its line."""
    import dataclasses

    base = canned_passages()[0]
    slide = dataclasses.replace(base, path="/docs/deck.pptx", title="deck.pptx > Slide 3: Roadmap",
                                start_line=None, end_line=None, page=None)
    cmd, in_terminal = open_command(slide, environ={"EDITOR": "vim"})
    assert not in_terminal and cmd[-1] == "/docs/deck.pptx" and "vim" not in cmd
    mail = dataclasses.replace(base, path="/docs/inbox.mbox", start_line=120, end_line=120, page=None)
    assert open_command(mail, environ={"EDITOR": "vim"}) == (["vim", "+120", "/docs/inbox.mbox"], True)
