"""volfix locations <-> LSP positions.

volfix rows and columns are 1-based and count code points; LSP lines are 0-based and
characters count code units of the encoding negotiated at `initialize` (UTF-16 unless the
client offers UTF-8 or UTF-32). A character outside the Basic Multilingual Plane (an emoji)
is one volfix column but two UTF-16 units, so every conversion goes through the line's text.
Lines end at `\\r\\n`, `\\r` or `\\n`, as both Python's tokenizer and LSP count them.

Pure Python: nothing here imports pygls.
"""
from __future__ import annotations

import re
from typing import List, Tuple

from ..model import Location

UTF8, UTF16, UTF32 = "utf-8", "utf-16", "utf-32"
BOM = "\ufeff"

_LINE = re.compile(r"[^\r\n]*(?:\r\n|\r|\n)|[^\r\n]+")
_ENDING = re.compile(r"(?:\r\n|\r|\n)\Z")


def split_lines(text: str) -> List[str]:
    """The lines of `text` with their endings."""
    return _LINE.findall(text)


def code_units(text: str, encoding: str) -> int:
    """Length of `text` in the code units of `encoding`."""
    if encoding == UTF32:
        return len(text)
    if encoding == UTF8:
        return len(text.encode("utf-8", "surrogatepass"))
    return len(text) + sum(1 for ch in text if ord(ch) > 0xFFFF)


class LineIndex:
    """One document's text, for converting volfix locations to LSP (line, character).

    volfix drops a leading byte-order mark before analysing, so its first row starts one
    code point later than the document's: `LineIndex` adds it back.
    """

    def __init__(self, text: str, encoding: str = UTF16):
        self.text = text
        self.encoding = encoding
        self.lines = [_ENDING.sub("", line) for line in split_lines(text)]
        self.bom = text.startswith(BOM)

    def position(self, location: Location) -> Tuple[int, int]:
        """The LSP (line, character) of a volfix location."""
        line = location.row - 1
        column = location.column - 1 + (1 if self.bom and line == 0 else 0)
        if line >= len(self.lines):
            # The end of the text (after a final newline): volfix's row after the last line.
            return len(self.lines), 0
        content = self.lines[line]
        return line, code_units(content[:column], self.encoding)

    def range(self, start: Location, end: Location) -> Tuple[Tuple[int, int], Tuple[int, int]]:
        return self.position(start), self.position(end)

    def line_start(self, line: int) -> Tuple[int, int]:
        """The position where 0-based `line` starts; for the line after the last one, the
        end of the text (the last line's end when the text has no final newline)."""
        if line < len(self.lines) or not self.lines or _ENDING.search(self.text):
            return min(line, len(self.lines)), 0
        last = len(self.lines) - 1
        return last, code_units(self.lines[last], self.encoding)


def changed_lines(old: str, new: str) -> Tuple[int, int, str]:
    """The smallest run of whole lines to replace to turn `old` into `new`.

    Returns (first line, end line (exclusive), replacement text) with lines of `old`:
    replacing whole lines keeps an edit off the middle of a `\\r\\n` pair or a surrogate pair
    and lets the client keep the cursor and folds outside the change.
    """
    old_lines, new_lines = split_lines(old), split_lines(new)
    head = 0
    while head < min(len(old_lines), len(new_lines)) and old_lines[head] == new_lines[head]:
        head += 1
    tail = 0
    while (tail < min(len(old_lines), len(new_lines)) - head
           and old_lines[-1 - tail] == new_lines[-1 - tail]):
        tail += 1
    return head, len(old_lines) - tail, "".join(new_lines[head:len(new_lines) - tail])
