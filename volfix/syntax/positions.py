"""Positions in the analysed text: line offsets, `ast` positions -> character offsets, comments.

Lines follow Python's tokenizer (\\r\\n, \\r, \\n end a line; form feeds do not). `ast`
columns are UTF-8 byte offsets; volfix works in character offsets into the text.
"""
from __future__ import annotations

import ast
import bisect
import io
import re
import tokenize
from typing import List, Optional, Tuple

_NEWLINE = re.compile(r"\r\n|\r|\n")
_LINE = re.compile(r"[^\r\n]*(?:\r\n|\r|\n)|[^\r\n]+\Z")
_LONE_CR = re.compile(r"\r(?!\n)")


def physical_lines(text: str) -> List[str]:
    """The lines of `text` with their endings, as Python's tokenizer counts them (str.splitlines
    would also split at form feeds, \\x1c-\\x1e, \\x85 and the Unicode separators)."""
    return _LINE.findall(text)


def line_breaks(text: str) -> int:
    """How many lines end in `text` (CRLF, CR or LF)."""
    return text.count("\n") + text.count("\r") - text.count("\r\n")


def for_tokenize(text: str) -> str:
    """`text` for the `tokenize` module, whose readline splits at LF only: a lone CR, a line
    break for Python (SPEC: CR-only files), becomes LF. Same length, rows and columns."""
    return _LONE_CR.sub("\n", text) if "\r" in text else text


class SourceText:
    """The analysed text with the position arithmetic every rule and fix needs."""

    def __init__(self, text: str):
        self.text = text
        self.line_starts: List[int] = [0]
        for m in _NEWLINE.finditer(text):
            self.line_starts.append(m.end())
        self._tokens: Optional[list] = None
        self._comment_offsets: Optional[List[int]] = None

    # -- positions -------------------------------------------------------
    def line(self, row: int) -> str:
        """Line `row` (1-based) without its newline."""
        start = self.line_starts[row - 1]
        end = self.line_starts[row] if row < len(self.line_starts) else len(self.text)
        return self.text[start:end].rstrip("\r\n")

    def line_end(self, row: int) -> int:
        """Offset just before the newline of line `row`."""
        return self.line_starts[row - 1] + len(self.line(row))

    def line_after(self, row: int) -> int:
        """Offset of the start of the line after `row` (or the end of the text)."""
        return self.line_starts[row] if row < len(self.line_starts) else len(self.text)

    def char_col(self, row: int, byte_col: int) -> int:
        line = self.line(row)
        if line.isascii():
            return byte_col
        return len(line.encode("utf-8")[:byte_col].decode("utf-8", errors="replace"))

    def offset(self, row: int, byte_col: int) -> int:
        return self.line_starts[row - 1] + self.char_col(row, byte_col)

    def start(self, node: ast.AST) -> int:
        return self.offset(node.lineno, node.col_offset)  # type: ignore[attr-defined]

    def end(self, node: ast.AST) -> int:
        return self.offset(node.end_lineno, node.end_col_offset)  # type: ignore[attr-defined]

    def segment(self, node: ast.AST) -> str:
        return self.text[self.start(node):self.end(node)]

    def row_col(self, offset: int) -> Tuple[int, int]:
        """1-based row, 0-based character column of an offset."""
        row = bisect.bisect_right(self.line_starts, offset)
        return row, offset - self.line_starts[row - 1]

    @property
    def newline(self) -> str:
        m = _NEWLINE.search(self.text)
        return m.group(0) if m else "\n"

    def indentation(self, row: int) -> str:
        line = self.line(row)
        return line[: len(line) - len(line.lstrip(" \t\f"))]

    # -- tokens -----------------------------------------------------------
    def tokens(self) -> list:
        if self._tokens is None:
            try:
                self._tokens = list(tokenize.generate_tokens(io.StringIO(for_tokenize(self.text)).readline))
            except (tokenize.TokenError, IndentationError, SyntaxError):
                self._tokens = []
        return self._tokens

    def comments_between(self, start: int, end: int) -> List[str]:
        """The comments that start in [start, end), in order."""
        if "#" not in self.text[start:end]:
            return []
        if self._comment_offsets is None:
            self._comment_offsets = []
            self._comments: List[str] = []
            for tok in self.tokens():
                if tok.type == tokenize.COMMENT:
                    self._comment_offsets.append(self.line_starts[tok.start[0] - 1] + tok.start[1])
                    self._comments.append(tok.string)
        lo = bisect.bisect_left(self._comment_offsets, start)
        hi = bisect.bisect_left(self._comment_offsets, end)
        return self._comments[lo:hi]


def indent_step(outer: str, inner: str) -> Optional[str]:
    """What a nested block adds to its owner's indentation (`inner` minus `outer`)."""
    if inner.startswith(outer) and len(inner) > len(outer):
        return inner[len(outer):]
    return None
