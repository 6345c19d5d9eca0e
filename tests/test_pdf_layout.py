"""A typeset PDF's layout (indexer/parse_pdf.py): running headers and footers are not the
page's text, a word broken at a line's end is one word, and the PDF's outline gives the
sections that name the passages."""

from __future__ import annotations

from indexer_corpus import make_pdf

from indexer.parse_pdf import (code_apart, code_line, dehyphenated, footnotes_apart, parse_pdf,
                               sentences_across_pages, without_page_pointers, without_running_lines)
from indexer.parsers import parse_bytes

BOOK = [   # a manual as TeX sets it: the chapter's first page has its number at the foot
    ["1 Installing", "Unpack the sources into a folder of your own.", "The build needs a C compiler.", "1"],
    ["Chapter 1: Installing 2", "1.1 Building from source", "Run configure, then make. It is recom-",
     "mended to build outside the source tree."],
    ["Chapter 1: Installing 3", "A Debian-", "based system has the compilers as packages; every Debian-based",
     "system names them the same way."],
    ["Chapter 1: Installing 4", "1.2 Testing the build", "Run make check before installing."],
    ["2 Using it", "Start the program from a terminal.", "5"],
    ["Chapter 2: Using it 6", "Options are given on the command line.", "Each option has a long name."],
    ["Chapter 2: Using it 7", "The short names are single letters."],
    ["3 Reporting bugs", "Send a report with the version.", "8"],
    ["Chapter 3: Reporting bugs 9", "Say what you expected."],
    ["Chapter 3: Reporting bugs 10", "Attach the smallest input that shows it."],
    ["4 Licence", "The program is free software.", "11"],
    # the chapter's one page after its first: no neighbour has its header, its shape tells it
    ["Chapter 4: Licence 12", "You may share it under the same terms."],
]
OUTLINE = [(1, "1 Installing", 0), (2, "Building from source", 1), (2, "Testing the build", 3),
           (1, "2 Using it", 4), (2, "Options", 5), (1, "3 Reporting bugs", 7), (1, "4 Licence", 10)]


def test_running_headers_and_page_numbers_are_not_the_pages_text():
    doc = parse_pdf(make_pdf(BOOK))
    assert "Chapter" not in doc.text
    lines = doc.text.split("\n")
    assert not any(line.strip().isdigit() for line in lines)      # no page numbers left
    # the page's own first line is its first line now, not the header run into it
    assert "1.1 Building from source" in lines and "Start the program from a terminal." in lines
    assert "Unpack the sources into a folder of your own." in doc.text
    # a line that only looks like a header (once, not at every page's edge) stays
    pages = ["Results\nThe first result.", "Results\nThe second result.", "Method\nWe measured.",
             "Notes\nA note."]
    assert without_running_lines(pages)[2] == "Method\nWe measured."
    assert without_running_lines(pages)[0] == "The first result."
    # a front matter's footer numbers its pages in roman numerals
    body = ["We thank the reviewers.", "The work began in spring.", "Funding came late.", "It ends here."]
    front = [f"{text}\nERDC/CRREL SR-05-78 {r}" for text, r in zip(body, ("ii", "iii", "iv", "v"))]
    assert without_running_lines(front) == body
    # too short a document to tell: as it is; pages of one repeated line: that is the text
    assert without_running_lines(["Title\nA.", "Title\nB."]) == ["Title\nA.", "Title\nB."]
    assert without_running_lines(["Same line."] * 4) == ["Same line."] * 4


def test_table_of_contents_and_index_lines_that_point_to_a_page_are_dropped():
    pages = ["Table of Contents\n1 Installing . . . . . . . . . . . . 1\n1.1 Building from source............ 2\n"
             "Appendix B Options . . . . . . . . . xii",
             "Index\nR_alloc . . . . . . . . . . . . . . . 110\nR_free . . . . . . . . . 110, 112\nconfigure ...... 3-4",
             "Counting 1, 2, ... 10 is an ellipsis.\nSo is this . . .\nand this.... 4 apples\nx <- c(1, 2) ....."]
    assert without_page_pointers(pages) == ["Table of Contents", "Index", pages[2]]
    # a numbered entry that wraps: its first line goes with its pointer; not on a page of prose
    wrapped = ("Contents\n7.17 Why is it slow? . . . . . 56\n7.18 Why does the output from anova() depend on the\n"
               "order of factors in the model? . . . . . 57\n7.19 How do I fix it? . . . . . 58")
    assert without_page_pointers([wrapped]) == ["Contents"]
    prose = "2 Using it\nStart the program.\nSee the list below:\n1 Options . . . . . 4"
    assert without_page_pointers([prose]) == ["2 Using it\nStart the program.\nSee the list below:"]
    doc = parse_pdf(make_pdf([["Contents", "1 Installing . . . . . . . . . . 2", "2 Using it . . . . . . . . . . 3"],
                              ["1 Installing", "Unpack the sources."], ["2 Using it", "Start the program."]]))
    assert ". . ." not in doc.text and "Unpack the sources." in doc.text


def test_a_word_broken_at_a_lines_end_is_one_word_and_a_compound_keeps_its_hyphen():
    doc = parse_pdf(make_pdf(BOOK))
    assert "It is recommended\nto build outside the source tree." in doc.text
    assert "A Debian-based\nsystem has the compilers" in doc.text   # the form it uses elsewhere
    assert dehyphenated(["a de-\nfault value", "a non-\nASCII name", "recom-\nmended."]) == [
        "a default\nvalue", "a non-ASCII\nname", "recommended."]
    assert dehyphenated(["x = 1 -\n2", "well-known and well-\nknown", "to cut-and-\npaste it"]) == [
        "x = 1 -\n2", "well-known and well-known", "to cut-and-paste\nit"]
    # both halves are words the document uses: a compound ("recom" and "mended" are not)
    assert dehyphenated(["a stack-\nbased one", "the stack grows", "it is based on", "recom-\nmended"]) == [
        "a stack-based\none", "the stack grows", "it is based on", "recommended"]
    # an identifier broken after an underscore, as texinfo breaks them, is one name again
    assert dehyphenated(["Set LD_\nLIBRARY_PATH first.", "normally R_\nLIBS_USER.", "_R_CHECK_TIMINGS_\nis set",
                         "__linux__\nmacOS:"]) == [
        "Set LD_LIBRARY_PATH\nfirst.", "normally R_LIBS_USER.", "_R_CHECK_TIMINGS_\nis set", "__linux__\nmacOS:"]


def test_the_outline_gives_each_passage_its_section_and_a_section_goes_on_over_the_page():
    doc = parse_bytes(make_pdf(BOOK, OUTLINE), ext=".pdf")
    def path_of(phrase):
        at = doc.text.index(phrase)
        block = next(b for b in doc.blocks if b.start <= at < b.end)
        return block.heading_path, block.page, block.kind

    assert path_of("Unpack the sources") == (("1 Installing",), 1, "text")
    assert path_of("1.1 Building from source") == (("1 Installing", "1.1 Building from source"), 2, "heading")
    assert path_of("Run configure") == (("1 Installing", "1.1 Building from source"), 2, "text")
    # page 3 has no heading of its own: the section of page 2 goes on
    assert path_of("A Debian-based") == (("1 Installing", "1.1 Building from source"), 3, "text")
    assert path_of("Run make check") == (("1 Installing", "1.2 Testing the build"), 4, "text")
    assert path_of("Start the program") == (("2 Using it",), 5, "text")
    # a bookmark whose title the page does not show names the page from its top
    assert path_of("Options are given") == (("2 Using it", "Options"), 6, "text")
    # a heading the page shows is a paragraph of its own, never the start of a sentence
    assert "\n\n1.1 Building from source\n\nRun configure, then make." in doc.text
    # without an outline: no sections, nothing else lost
    plain = parse_bytes(make_pdf(BOOK), ext=".pdf")
    assert all(b.heading_path == () for b in plain.blocks)
    assert "1.1 Building from source\nRun configure" in plain.text
    assert plain.text.split() == doc.text.split()


PAPER = [   # a sentence runs on over a page break, and a page has footnotes at its foot
    ["Chapter 1: Encodings 1", "Unless the file is entirely in ASCII, it is necessary to know",
     "how it was encoded. Windows may produce Unicode files (UCS-2LE or just possibly",
     "UTF-16LE1). Most files use an 8-bit encoding unless they come from a Chinese",
     "or Japanese locale.2 It is not possible to detect which 8-bit encoding a file",
     "uses with certainty, so you may have to ask the author for some",
     "1 the distinction is subtle, and the use of surrogate pairs",
     "is very rare.", "2 Which have a wide range of encodings in common use."],
    ["Chapter 1: Encodings 2", "clues about where it came from. The file utility reports a guess.",
     "Export is usually less contentious."],
    ["Chapter 1: Encodings 3", "Compare the file with a hex dump to be sure."],
]


def test_footnotes_are_paragraphs_of_their_own_and_their_marks_leave_the_words():
    doc = parse_pdf(make_pdf(PAPER))
    # the marks are not part of the words (an exact lookup types "UTF-16LE"), nor glued to
    # a sentence's full stop ("locale.2 It" would be no sentence end)
    assert "possibly\nUTF-16LE). Most" in doc.text and "Japanese locale. It is not" in doc.text
    # each note a paragraph of its own at its page's end, without its number
    assert "\n\nthe distinction is subtle, and the use of surrogate pairs\nis very rare.\n\n" in doc.text
    assert "\n\nWhich have a wide range of encodings in common use." in doc.text
    note = doc.text.index("the distinction is subtle")
    assert next(b for b in doc.blocks if b.start <= note < b.end).page == 1
    # a line that starts with a number but has no mark above it is the text's own
    bodies, notes = footnotes_apart(["We ran it twice.\nThe results follow.\n2 runs gave the same answer."])
    assert notes == [[]] and bodies == ["We ran it twice.\nThe results follow.\n2 runs gave the same answer."]
    # a mark that stands twice on the page ("log2" and the note's mark) is left as it is
    bodies, notes = footnotes_apart(["Use log2 here.\nThe scale is binary2 in effect.\n2 As the log says."])
    assert notes == [["As the log says."]] and "log2" in bodies[0] and "binary2" in bodies[0]
    # a section heading is no footnote (the outline names it, or its shape tells it), nor
    # the line after a formula, though "x2" and "b1" look like marks
    page = ("Use x2 and b1 as before.\nThe proof is short.\nThe convention M(n|n) =\n"
            "1 has been used in (9) and hereafter.\n2 Sectioning and equations\nSections are typeset as usual.")
    assert footnotes_apart([page]) == ([page], [[]])
    assert footnotes_apart([page], {0: [(1, "2 Sectioning and equations")]}) == ([page], [[]])


def test_a_sentence_that_runs_over_a_page_break_is_one_sentence_at_the_page_it_starts():
    doc = parse_pdf(make_pdf(PAPER))
    # page 1's last sentence ends on page 2: read whole, before page 1's footnotes
    assert "ask the author for some\nclues about where it came from.\n\nthe distinction" in doc.text
    at = doc.text.index("clues about where it came from.")
    assert next(b for b in doc.blocks if b.start <= at < b.end).page == 1      # cited where it starts
    rest = doc.text.index("The file utility reports a guess.")
    assert next(b for b in doc.blocks if b.start <= rest < b.end).page == 2
    assert doc.text.count("clues about where") == 1
    # an abbreviation is no sentence end; a list's label ("c.") is no sentence's rest
    assert sentences_across_pages(["It is cited as an article (with its", "vol. and no.), a chapter. Next."]) == [
        "It is cited as an article (with its\nvol. and no.), a chapter.", "Next."]
    # code, a full stop, an upper-case start or no sentence end near the top: as it was
    for pages in (["x <- read.table(file, header = TRUE,", "sep = \",\")"],
                  ["This page ends with a whole sentence.", "then the next page starts in lower case."],
                  ["The next page begins a new part of the", "Second Part. It is a heading."],
                  ["A long sentence that goes on and on over the", "page\nand\nthen\nends. here"],
                  ["Figure 2: the layout of the whole", "c. Second level numbered list"],
                  ["and so on for each of the\nTable 1.3: Long caption for the", "rows in it. And more."]):
        assert sentences_across_pages(pages) == pages


def test_a_code_example_is_a_paragraph_of_its_own_never_part_of_a_sentence():
    page = ["Chapter 5: Arrays 24", "A row stays a matrix with drop = FALSE. For example,",
            "rowmatrix <- mat[2, , drop = FALSE] # creates a row matrix",
            "colmatrix <- mat[, 2, drop = FALSE] # creates a column matrix",
            "The same holds for columns.", "> x <- c(1, 2)", "[1] FALSE", "> print(x,",
            "+ digits = 3)", "Prose goes on here. If x is complex, return fix (real (x))",
            "+ fix (imag (x)) * I."]
    doc = parse_pdf(make_pdf([page, ["Chapter 5: Arrays 25", "More text."], ["Chapter 5: Arrays 26", "End."]]))
    assert ("For example,\n\nrowmatrix <- mat[2, , drop = FALSE] # creates a row matrix\n"
            "colmatrix <- mat[, 2, drop = FALSE] # creates a column matrix\n\nThe same holds") in doc.text
    # the output and R's continuation lines go with it; a prose line that starts with "+" does not
    assert "\n\n> x <- c(1, 2)\n[1] FALSE\n> print(x,\n+ digits = 3)\n\nProse goes on here." in doc.text
    assert "return fix (real (x))\n+ fix (imag (x)) * I." in doc.text
    at = doc.text.index("rowmatrix")
    assert next(b for b in doc.blocks if b.start <= at < b.end).kind == "code"
    # prose that names code stays prose
    for line in ("scan() function for input. (see Section 7.2 [The scan() function], page 34.)",
                 "row <- mat[2, ], it is by default turned into a vector. In a similar way",
                 "interactive() to condition examples which need someone to interact with.)",
                 "the data frame using the $ form of assignment, and then detach();"):
        assert not code_line(line), line
    for line in ("UNPROTECT(1);", "#include <Rinternals.h>", "par(col=4, lty=2)", "}", "$ make check",
                 "x[i] <- 0 # Replace those elements by zeros.", "printf (\" X\");"):
        assert code_line(line), line
    assert code_apart(["Plain prose.\nNo code here."]) == ["Plain prose.\nNo code here."]


def test_a_pdf_manual_is_searched_by_its_sections_and_mended_words(make_index, tmp_path):
    """Real index: the passage found for a word the typesetting broke is titled by its
    section and cited at its page."""
    folder = tmp_path / "papers"
    folder.mkdir()
    (folder / "manual.pdf").write_bytes(make_pdf(BOOK, OUTLINE))
    idx = make_index()
    idx.add_root(folder)
    assert idx.update().added == 1
    hit = idx.search("recommended build outside source tree", k=1)[0]
    assert hit.title == "manual.pdf > 1 Installing > 1.1 Building from source"
    assert hit.page == 2 and "It is recommended" in hit.text and "Chapter 1" not in hit.text
