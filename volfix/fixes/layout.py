"""Layout the fixes disturb, put back as pycodestyle expects (issue 22, issue 25 item 6).

Unwrapping `Variable(` shifts an argument's first line left by nine columns, and moving a
statement into a `with` block shifts all of it right: continuation lines that were aligned
with an opening bracket (`torch.cat([a,` / `b], 1)`) are left at their old column. And a
region that starts where a deleted statement stood can open with a blank line. Only logical
lines that the fixes changed are touched (a logical line whose text, indentation included,
occurs in the original is the author's), only rows the original had aligned with a bracket,
and only the whitespace at the start of lines.
"""
from __future__ import annotations

import io
import re
import tokenize
from typing import List, Optional, Tuple

from .edits import TextEdit
from ..syntax.positions import SourceText

_OPEN, _CLOSE = "([{", ")]}"
_LONE_CR = re.compile(r"\r(?!\n)")


def layout_edits(original: str, text: str, was_aligned: Optional[Tuple[set, set]] = None) -> List[TextEdit]:
    """Edits re-aligning the continuation lines of changed logical lines with their
    opening bracket, and deleting blank lines that open a block the fixes created.
    `was_aligned`: `aligned_rows(original)`, when the caller keeps it."""
    lines = _logical_lines(text)
    if lines is None:
        return []
    aligned_keys, elsewhere = was_aligned if was_aligned is not None else aligned_rows(original)
    src = SourceText(text)
    edits: List[TextEdit] = []
    for first, last, aligned in lines:
        segment = text[src.line_starts[first - 1]:src.line_after(last)]
        if segment in original:
            continue  # the author's line, as written
        moved = []
        votes = set()
        for row, column in aligned:
            line = src.line(row)
            indent = len(line) - len(line.lstrip(" \t"))
            if "\t" in line[:indent] or indent == column:
                continue  # aligned already
            was = _was_aligned(line, aligned_keys)
            hung = _was_aligned(line, elsewhere)
            if was and not hung:
                votes.add(True)
            elif hung and not was:
                votes.add(False)
            if was:
                moved.append((row, indent, column, hung))
        # A row whose text the original had both aligned and hanging follows the rows of its
        # logical line that tell (`config.BACKBONE_SHAPES,` of an unwrapped call, beside its
        # unique last row; `acc))` under an edited `print(...)` keeps its column)
        for row, indent, column, ambiguous in moved:
            if ambiguous and votes != {True}:
                continue
            start = src.line_starts[row - 1]
            edits.append(TextEdit(start, start + indent, " " * column))
    edits.extend(_blank_block_openers(original, text, src))
    return edits


def aligned_rows(original: str) -> Tuple[set, set]:
    """The stripped text of the original's continuation rows that sat at their bracket's
    visual indent (only such rows are aligned again: an author's hanging style stays), and of
    those inside a visual bracket that did not: a text in both (`acc))` aligned under one call
    and hanging under the next) is realigned only as the other rows of its line say."""
    lines = _logical_lines(original)
    if not lines:
        return set(), set()
    src = SourceText(original)
    out, elsewhere = set(), set()
    for _first, _last, aligned in lines:
        for row, column in aligned:
            line = src.line(row)
            (out if len(line) - len(line.lstrip(" \t")) == column else elsewhere).add(_key(line))
    return out, elsewhere


_CLOSERS = re.compile(r"[)\]}]")


def _key(line: str) -> str:
    """A row's text without what an unwrap removes from its end (`), volatile=True)`) and
    without closing brackets (`1024)).cuda(),` lost the `)` of `Variable(`)."""
    return _CLOSERS.sub("", line.split("#", 1)[0].strip()).rstrip(", ")


def _was_aligned(line: str, keys: set) -> bool:
    """The row continues one the original had aligned: its text (3 characters at least, so
    that `x)` in one place says nothing about `x)` in another, or a number of two digits, a
    shape's `20,`) starts that row's text."""
    key = _key(line)
    return (len(key) >= 3 or (len(key) == 2 and key.isdigit())) and any(k.startswith(key) for k in keys)


def _logical_lines(text: str) -> Optional[List[Tuple[int, int, List[Tuple[int, int]]]]]:
    """(first row, last row, [(row, column)]) per multi-line logical line: the rows that
    start inside a bracket opened in visual style (something follows it on its line), with
    the column of that bracket's content. Rows starting inside a string are left out."""
    try:
        # tokenize splits lines on \n only: a lone \r (a CR-only file) becomes \n, one character
        # for one, so rows and columns stay those of the text
        tokens = list(tokenize.generate_tokens(io.StringIO(_LONE_CR.sub("\n", text)).readline))
    except (tokenize.TokenError, IndentationError, SyntaxError):
        return None
    out = []
    stack: List[Optional[int]] = []  # per open bracket: the column its content aligns to, or None
    first_row: Optional[int] = None
    aligned: List[Tuple[int, int]] = []
    row_seen = 0
    for i, tok in enumerate(tokens):
        kind, string, (srow, _scol), (erow, _ecol) = tok.type, tok.string, tok.start, tok.end
        if kind in (tokenize.COMMENT, tokenize.NL, tokenize.INDENT, tokenize.DEDENT, tokenize.ENCODING):
            continue
        if kind in (tokenize.NEWLINE, tokenize.ENDMARKER):
            if first_row is not None and srow > first_row and aligned:
                out.append((first_row, srow, aligned))
            first_row, aligned, stack = None, [], []
            continue
        if first_row is None:
            first_row = srow
        if srow > row_seen and srow > first_row and stack and stack[-1] is not None \
                and _starts_line(tokens, i):
            aligned.append((srow, stack[-1]))
        row_seen = max(row_seen, erow)
        if kind == tokenize.OP and string in _OPEN:
            nxt = _next_significant(tokens, i)
            visual = nxt is not None and nxt.start[0] == srow
            stack.append(nxt.start[1] if visual else None)
        elif kind == tokenize.OP and string in _CLOSE and stack:
            stack.pop()
    return out


def _starts_line(tokens, i: int) -> bool:
    """The token is the first one on its row."""
    row = tokens[i].start[0]
    j = i - 1
    while j >= 0 and tokens[j].type in (tokenize.NL, tokenize.COMMENT, tokenize.INDENT, tokenize.DEDENT):
        if tokens[j].type == tokenize.COMMENT and tokens[j].start[0] == row:
            return False
        j -= 1
    return j < 0 or tokens[j].end[0] < row


def _next_significant(tokens, i: int):
    for tok in tokens[i + 1:]:
        if tok.type not in (tokenize.NL, tokenize.COMMENT):
            return tok
    return None


def _blank_block_openers(original: str, text: str, src: SourceText) -> List[TextEdit]:
    """`with torch.no_grad():` followed by blank lines, where the original had no such
    header-blank-body window: the blank lines go."""
    edits = []
    rows = len(src.line_starts)
    for row in range(1, rows):
        header = src.line(row)
        stripped = header.strip()
        if not (stripped.startswith(("with ", "async with ")) and stripped.endswith(":") and "grad" in stripped):
            continue  # a region's header (`no_grad`, `set_grad_enabled`), not the author's `with open(x)`
        blank = row + 1
        while blank <= rows and src.line_after(blank - 1) < len(text) and not src.line(blank).strip():
            blank += 1
        if blank == row + 1 or blank > rows or src.line_after(blank - 1) >= len(text):
            continue
        body = src.line(blank)
        indent = len(header) - len(header.lstrip())
        if len(body) - len(body.lstrip()) <= indent:
            continue  # not the block's body
        window = text[src.line_starts[row - 1]:src.line_after(blank)]
        if window in original or text[src.line_starts[row - 1]:src.line_starts[blank - 1]] in original:
            continue  # the author's header and blank lines (`with open(x) as f:` whose body became `pass`)
        edits.append(TextEdit(src.line_starts[row], src.line_starts[blank - 1], ""))
    return edits
