"""Expression-level edits: exact text edits that keep every byte around them (ruff's model).

Unwrapping `Variable(x, ...)` to `x`, dropping a keyword, deleting a statement: each keeps the
comments that sat inside the removed text, and parenthesises an argument where its new
context would change its meaning.
"""
from __future__ import annotations

import ast
from typing import List, Optional, Set, Tuple

from ..flow.defuse import flag_test
from ..flow.grad_mode import inert_grad_with
from ..syntax.names import function_params
from ..syntax.index import ModuleIndex
from .edits import TextEdit, blank_lines_around

SIMPLE_EXPRS = (ast.Name, ast.Attribute, ast.Call, ast.Subscript, ast.Constant, ast.List,
                ast.Tuple, ast.Dict, ast.Set, ast.ListComp, ast.DictComp, ast.SetComp,
                ast.GeneratorExp, ast.JoinedStr)
_TIGHT_PARENTS = (ast.BinOp, ast.UnaryOp, ast.Await)


class Expressions:
    """Edit builders over one module's text."""

    def __init__(self, index: ModuleIndex):
        self.index = index
        self.src = index.src

    def text_in_place_of(self, node: ast.AST, expr: ast.AST) -> str:
        """`expr`'s text, parenthesised where it will stand in place of `node`."""
        src = self.src
        text = src.segment(expr)
        parent = self.index.parents.get(node)
        tight = (isinstance(parent, ast.Attribute) or (isinstance(parent, ast.Subscript) and parent.value is node)
                 or (isinstance(parent, ast.Call) and parent.func is node)
                 or isinstance(parent, _TIGHT_PARENTS))
        if tight and not isinstance(expr, SIMPLE_EXPRS):
            return f"({text})"
        if not isinstance(expr, SIMPLE_EXPRS) and isinstance(parent, (ast.Compare, ast.BoolOp)):
            return f"({text})"
        if "\n" in text or "\r" in text:
            try:
                ast.parse(text.strip(), mode="eval")
            except SyntaxError:
                return f"({text})"
        return text

    def attr_base(self, expr: ast.AST) -> str:
        """`expr` as the receiver of a method call."""
        text = self.src.segment(expr)
        return text if isinstance(expr, (ast.Name, ast.Attribute, ast.Call, ast.Subscript)) else f"({text})"

    def replace(self, node: ast.AST, replacement: str) -> List[TextEdit]:
        """Replace `node`, keeping the comments that sat inside the removed parts."""
        src = self.src
        start, end = src.start(node), src.end(node)
        edits = [TextEdit(start, end, replacement)]
        comments = [c for c in src.comments_between(start, end) if c not in replacement]
        if comments:
            row, _ = src.row_col(end)
            rest = src.text[end:src.line_end(row)]
            if not rest.strip():
                # Nothing follows: the comments end the line, in reading order.
                edits = [TextEdit(start, end, replacement + "  " + "  ".join(comments))]
            else:
                stmt = self.index.statement_of(node)
                if src.line(row).rstrip().endswith("\\") and not hasattr(stmt, "body"):
                    # `).type(torch.FloatTensor) + \`: a comment cannot follow a line
                    # continuation; it goes to the end of the statement (a simple one).
                    row = stmt.end_lineno
                if src.comments_between(src.line_starts[row - 1], src.line_end(row)):
                    # that line ends in a comment of its own: joined, the two would read as one;
                    # the moved ones go on their own line above the statement
                    first = stmt.lineno
                    at = src.line_starts[first - 1]
                    edits.append(TextEdit(at, at, src.indentation(first) + "  ".join(comments) + src.newline))
                else:
                    edits.append(TextEdit(src.line_end(row), src.line_end(row), "  " + "  ".join(comments)))
        return edits

    def self_assignment(self, call: ast.Call, data: ast.AST) -> Optional[ast.stmt]:
        """`x = Variable(x, ...)`: after unwrapping the statement would be `x = x`."""
        parent = self.index.parents.get(call)
        if (isinstance(parent, ast.Assign) and parent.value is call and len(parent.targets) == 1
                and isinstance(parent.targets[0], ast.Name) and isinstance(data, ast.Name)
                and parent.targets[0].id == data.id):
            return parent
        return None

    def unwrap(self, call: ast.Call, data: ast.AST) -> Tuple[List[TextEdit], Optional[ast.stmt]]:
        """Replace the call by its argument; `x = Variable(x)` is deleted outright."""
        stmt = self.self_assignment(call, data)
        if stmt is not None:
            deletion = self.delete_statement(stmt)
            if deletion is not None:
                return deletion, stmt
        return self.replace(call, self.text_in_place_of(call, data)), None

    def drop_argument(self, call: ast.Call, arg: ast.AST) -> List[TextEdit]:
        """Remove one argument (a keyword or a positional) with its separator."""
        src = self.src
        items = sorted([a for a in call.args] + list(call.keywords), key=lambda n: (n.lineno, n.col_offset))
        index = next(i for i, n in enumerate(items) if n is arg)
        end = src.end(arg)
        if index > 0:
            start = src.end(items[index - 1])
        elif index + 1 < len(items):
            start, end = src.start(arg), src.start(items[index + 1])
        else:
            start = src.start(arg)
        edits = [TextEdit(start, end, "")]
        comments = src.comments_between(start, end)
        if comments:
            row, _ = src.row_col(src.end(call))
            edits.append(TextEdit(src.line_end(row), src.line_end(row), "  " + "  ".join(comments)))
        return edits

    def delete_statement(self, stmt: ast.stmt, *, whole_if: bool = False,
                         gone: Optional[Set[int]] = None) -> Optional[List[TextEdit]]:
        """Delete a statement that has its lines to itself (None otherwise); a block it would
        leave empty gets `pass`, or with `whole_if`, an `if flag:` it would leave empty goes
        too (a cleanup's choice: a planner's deletion must stay within the statement). `gone`:
        the ids of siblings deleted by the same pass (the last of a block gets the `pass`).
        Comments inside or after it survive it, in order."""
        src = self.src
        first, last = stmt.lineno, stmt.end_lineno
        before = src.line(first)[: src.char_col(first, stmt.col_offset)]
        after = src.line(last)[src.char_col(last, stmt.end_col_offset):]
        rest = after.strip()
        if rest.startswith(";"):  # `self.scale = Variable(self.scale);` (LSTNet): the `;` ends nothing else
            rest = rest[1:].strip()
        if before.strip() or (rest and not rest.startswith("#")):
            return None
        comments = src.comments_between(src.start(stmt), src.line_end(last))
        siblings = self.index.siblings(stmt)
        parent = self.index.parents.get(stmt)
        if whole_if and siblings is not None and len(siblings) == 1 and isinstance(parent, ast.If) and not parent.orelse \
                and parent.body is siblings and flag_test(parent.test) is not None and src.segment(parent).startswith("if") \
                and self._plain_flag(parent.test) \
                and len(self.index.siblings(parent) or ()) > 1 \
                and len(src.comments_between(src.start(parent), src.line_end(parent.end_lineno))) <= 1:
            whole = self.delete_statement(parent, whole_if=True)  # `if flag:` around nothing but `pass` goes too
            if whole is not None:
                return whole
        if siblings is not None and len(siblings) == 1 and isinstance(parent, ast.With) and parent.body is siblings \
                and inert_grad_with(self.index, parent) \
                and len(self.index.siblings(parent) or ()) > 1 and not comments \
                and not src.comments_between(src.start(parent), src.line_end(parent.end_lineno)):
            # `with torch.no_grad(): inputs = Variable(inputs)` (cellnet's inference script): a
            # grad mode entered to run nothing does nothing; it goes with the statement.
            whole = self.delete_statement(parent)
            if whole is not None:
                return whole
        if siblings is not None and sum(s is stmt or id(s) not in (gone or ()) for s in siblings) == 1:
            return [TextEdit(src.start(stmt), src.line_end(last), _pass_with(comments, src, first))]
        if comments:  # one line each, where the statement stood (each stays a comment of its own)
            return [TextEdit(src.start(stmt), src.line_end(last),
                             (src.newline + src.indentation(first)).join(comments))]
        # Between blank lines, both runs would pile up into one (pycodestyle E303): the
        # blank lines above go too, as many as follow.
        above, below = blank_lines_around(src, first, last)
        if above and below and first - above > 1:
            return [TextEdit(src.line_starts[first - 1 - min(above, below)], src.line_after(last), "")]
        return [TextEdit(src.line_starts[first - 1], src.line_after(last), "")]

    def _plain_flag(self, test: ast.expr) -> bool:
        """`if flag:` / `if not flag:` on a value whose truth test cannot raise or compute: a
        parameter never rebound, or a name bound only to literals, comparisons and `not`. An
        `if x:` on a model's output evaluates a tensor (it raises for more than one element),
        so deleting it would change the program."""
        name = test.operand if isinstance(test, ast.UnaryOp) else test
        scope = self.index.function_of(name)
        values = self.index.plain_assignments(name.id, scope)  # type: ignore[attr-defined]
        if values is None:
            return False
        if not values:
            return getattr(scope, "args", None) is not None and name.id in function_params(scope)  # type: ignore[attr-defined]
        return all(isinstance(v, (ast.Constant, ast.Compare)) or isinstance(v, ast.UnaryOp) and isinstance(v.op, ast.Not)
                   for v in values)

    def keep_blocks_alive(self, sources, edits: list, deleted: Optional[Set[int]] = None) -> list:
        """`edits` where a block whose every statement an unwrap deletes keeps a `pass`: the
        edits of the source deleting its last statement (`Source.deleted`) give way to it.
        `deleted`: the ids of the statements the unwraps delete (the sources' own by default;
        all of the file's, for sources fixed each on its own: `else: images =
        Variable(images, volatile=True); ytrues = Variable(ytrues, volatile=True)`)."""
        if deleted is None:
            deleted = {id(s.deleted) for s in sources if s.deleted is not None}
        done: Set[int] = set()
        for owner in sources:
            last = owner.deleted
            home = self.index.siblings(last) if last is not None else None
            if home is None or home[-1] is not last or id(last) in done or not all(id(st) in deleted for st in home):
                continue
            done.add(id(last))
            start = self.src.line_starts[last.lineno - 1]
            mine = [e for e in owner.own_edits if e.start >= start]
            edits = [e for e in edits if e not in mine] + self.pass_instead(last)
        return edits

    def pass_instead(self, stmt: ast.stmt) -> List[TextEdit]:
        """Replace a statement by `pass` (its block would otherwise be empty)."""
        src = self.src
        comments = src.comments_between(src.start(stmt), src.line_end(stmt.end_lineno))
        return [TextEdit(src.start(stmt), src.line_end(stmt.end_lineno), _pass_with(comments, src, stmt.lineno))]


def _pass_with(comments: List[str], src, row: int) -> str:
    """`pass` in place of the statement at `row`, its comments kept one per line: the last after
    `pass`, the others above it (two joined on one line would be one comment)."""
    if not comments:
        return "pass"
    return (src.newline + src.indentation(row)).join(comments[:-1] + [f"pass  {comments[-1]}"])
