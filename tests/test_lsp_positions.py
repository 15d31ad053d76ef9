"""volfix locations -> LSP positions in each encoding, and whole-line replacement edits."""
from __future__ import annotations

import pytest

from volfix.lsp.positions import UTF8, UTF16, UTF32, LineIndex, changed_lines
from volfix.model import Location

TEXT = "a = '😀é'; Variable(x)\r\nb\rc\n"


@pytest.mark.parametrize("encoding, character", [(UTF16, 11), (UTF32, 10), (UTF8, 14)])
def test_columns_count_the_encodings_code_units(encoding, character):
    index = LineIndex(TEXT, encoding)
    # `Variable` is code point 10 (0-based): after an emoji (2 UTF-16 units, 4 UTF-8 bytes)
    # and an é (1 unit, 2 bytes).
    assert TEXT.index("Variable") == 10
    assert index.position(Location(1, 11)) == (0, character)


def test_rows_follow_crlf_cr_and_lf_and_the_end_of_the_text():
    index = LineIndex(TEXT)
    assert index.position(Location(2, 2)) == (1, 1)
    assert index.position(Location(3, 1)) == (2, 0)
    assert index.position(Location(4, 1)) == (3, 0)  # after the final newline
    assert index.line_start(3) == (3, 0)
    assert LineIndex("x = 1\ny").line_start(2) == (1, 1)  # no final newline: the last line's end


def test_a_byte_order_mark_shifts_the_first_line_only():
    index = LineIndex("\ufeffx = Variable(y)\nz\n")
    assert index.position(Location(1, 5)) == (0, 5)
    assert index.position(Location(2, 1)) == (1, 0)


@pytest.mark.parametrize("old, new, expected", [
    ("a\nb\nc\n", "a\nB\nc\n", (1, 2, "B\n")),
    ("a\r\nb\r\n", "a\r\nb\r\nc\r\n", (2, 2, "c\r\n")),
    ("a\nb", "a\nb\n", (1, 2, "b\n")),
    ("same\n", "same\n", (1, 1, "")),
    ("x\n", "import torch\nx\n", (0, 0, "import torch\n")),
])
def test_changed_lines_is_the_smallest_run_of_whole_lines(old, new, expected):
    assert changed_lines(old, new) == expected
    first, end, text = expected
    lines = old.splitlines(keepends=True)
    assert "".join(lines[:first]) + text + "".join(lines[end:]) == new
