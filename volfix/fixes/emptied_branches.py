"""The branches of an `if` that unwrapping emptied: what stays of the statement."""
from __future__ import annotations

import ast
from typing import List, Optional

from .edits import TextEdit
from .expressions import Expressions

_BARE = (ast.Name, ast.Attribute, ast.Call, ast.Subscript, ast.Constant)


def empty_else(stmt: ast.If, expr: Expressions) -> Optional[List[TextEdit]]:
    """`else: pass` left where the fix emptied the `else` branch (`else: x = Variable(x)`
    became `x = x`, then went): the `else` goes."""
    src = expr.src
    row = _else_line(stmt, src)
    if row is None or src.comments_between(src.line_starts[row - 1], src.line_end(stmt.end_lineno)):
        return None
    return [TextEdit(src.line_starts[row - 1], src.line_after(stmt.end_lineno), "")]


def empty_body(stmt: ast.If, expr: Expressions) -> Optional[List[TextEdit]]:
    """`if sep_sel: pass` / `else: sel_tgt = list(sel_tgt)`, left where the fix emptied the
    `if` branch and kept only a list's copy in the `else` (the caller checks that):
    `if not sep_sel: sel_tgt = list(sel_tgt)`. The test is tested once either way. Not for an
    `elif` chain in the `else`, a `pass` sharing a line, or a comment between the header and
    the `else` body."""
    src = expr.src
    row = _else_line(stmt, src)
    if row is None:
        return None
    first = stmt.body[0]
    if src.text[src.line_starts[first.lineno - 1]:src.start(first)].strip() or first.lineno == stmt.test.end_lineno \
            or src.comments_between(src.end(stmt.test), src.line_starts[stmt.orelse[0].lineno - 1]):
        return None
    test = src.segment(stmt.test)
    negated = f"not {test}" if isinstance(stmt.test, _BARE) else f"not ({test})"
    return [TextEdit(src.start(stmt.test), src.end(stmt.test), negated),
            TextEdit(src.line_starts[first.lineno - 1], src.line_after(row), "")]


def _else_line(stmt: ast.If, src) -> Optional[int]:
    """The row of the statement's `else:` when it stands on a line of its own, between the
    branches (not `else: x = 1`, not after the body's last statement on its line)."""
    row = else_row(src, stmt.body[-1].end_lineno, stmt.orelse[0].lineno)
    if row is None or row == stmt.body[-1].end_lineno or src.line(row).strip() != "else:" \
            or stmt.orelse[0].lineno == row:
        return None
    return row


def else_row(src, after_row: int, before_row: int) -> Optional[int]:
    """The row of the `else:` between the two branches."""
    for row in range(after_row + 1, before_row + 1):
        if src.line(row).strip().startswith("else"):
            return row
    if src.line(after_row).rstrip().endswith("else:"):
        return after_row
    return None
