"""Leftovers the fixes create, collapsed to plain code (SPEC §2.8).

Unwrapping `Variable(...)` can leave code no reviewer would accept: `x = x`, `a, b = a, f(b)`
where `a = a` is a no-op, `[d for d in data]`, `image if image is not None else None`, and
aliases such as `style_v = style`. Only leftovers that the fixes created are touched (never
code the author wrote), and every change is an exact text edit.
"""
from __future__ import annotations

import ast
from typing import Callable, List, Optional, Set

from ..edits import TextEdit
from ..syntax.document import CELL_SEPARATOR
from ..syntax.index import ModuleIndex
from ..syntax.positions import SourceText
from .expressions import Expressions


def leftovers(original_tree: Optional[ast.Module], tree: ast.Module, text: str) -> List[TextEdit]:
    """Edits collapsing the leftovers of `text` that `original_tree` did not have."""
    before = _fingerprints(original_tree) if original_tree is not None else None
    if before is None:
        return []
    index = ModuleIndex(tree, SourceText(text))
    expr = Expressions(index)
    created: Callable[[ast.AST], bool] = lambda node: _fingerprint(node) not in before
    edits: List[TextEdit] = []
    taken: Set[int] = set()
    for node in index.parents:
        if isinstance(node, ast.Assign) and created(node) and id(node) not in taken:
            found = _self_assignment(node, expr)
            if found is not None:
                edits.extend(found)
                taken.add(id(node))
                continue
        if isinstance(node, ast.ListComp) and created(node):
            iterable = _identity_iterable(node)
            if iterable is not None:
                edits.extend(expr.replace(node, expr.src.segment(iterable)))
        elif isinstance(node, ast.IfExp) and created(node):
            same = _none_guard(node)
            if same is not None:
                edits.extend(expr.replace(node, expr.text_in_place_of(node, same)))
    if edits:
        return edits
    return _aliases(index, expr, created)


def _fingerprint(node: ast.AST) -> str:
    return ast.dump(node)


def _fingerprints(tree: ast.Module) -> Set[str]:
    return {_fingerprint(n) for n in ast.walk(tree) if isinstance(n, (ast.Assign, ast.ListComp, ast.IfExp))}


def _names(node: ast.AST) -> Optional[List[str]]:
    """`x` -> ['x'], `a, b` -> ['a', 'b'], `self.grid` -> ['self.grid'] (dotted names only)."""
    dotted = _dotted(node)
    if dotted is not None:
        return [dotted]
    if isinstance(node, (ast.Tuple, ast.List)) and all(isinstance(e, ast.Name) for e in node.elts):
        return [e.id for e in node.elts]
    return None


def _dotted(node: ast.AST) -> Optional[str]:
    if isinstance(node, ast.Name):
        return node.id
    if isinstance(node, ast.Attribute):
        base = _dotted(node.value)
        return f"{base}.{node.attr}" if base is not None else None
    return None


def _self_assignment(stmt: ast.Assign, expr: Expressions) -> Optional[List[TextEdit]]:
    """`x = x`, `self.grid = self.grid`, `a, b = a, b` (deleted); `a, b = a, f(b)` -> `b = f(b)`."""
    if len(stmt.targets) != 1:
        return None
    target, value = stmt.targets[0], stmt.value
    left, right = _names(target), _names(value)
    if left is not None and left == right:
        return expr.delete_statement(stmt)
    if not (isinstance(target, ast.Tuple) and isinstance(value, ast.Tuple)
            and len(target.elts) == len(value.elts) and not any(isinstance(e, ast.Starred) for e in target.elts)):
        return None
    keep = [(t, v) for t, v in zip(target.elts, value.elts)
            if not (isinstance(t, ast.Name) and isinstance(v, ast.Name) and t.id == v.id)]
    if len(keep) == len(target.elts) or not keep:
        return None
    src = expr.src
    lhs = ", ".join(src.segment(t) for t, _ in keep)
    rhs = ", ".join(src.segment(v) for _, v in keep)
    return [TextEdit(src.start(target), src.end(value), f"{lhs} = {rhs}")]


def _identity_iterable(node: ast.ListComp) -> Optional[ast.AST]:
    """`[d for d in data]` -> data (the copy of a batch's list that `Variable` made)."""
    if len(node.generators) != 1:
        return None
    gen = node.generators[0]
    if gen.ifs or gen.is_async or not isinstance(gen.target, ast.Name) or not isinstance(node.elt, ast.Name):
        return None
    if node.elt.id != gen.target.id or not isinstance(gen.iter, (ast.Name, ast.Attribute)):
        return None
    return gen.iter


def _none_guard(node: ast.IfExp) -> Optional[ast.AST]:
    """`x if x is not None else None` and `None if x is None else x` -> x."""
    test = node.test
    if not (isinstance(test, ast.Compare) and len(test.ops) == 1 and isinstance(test.comparators[0], ast.Constant)
            and test.comparators[0].value is None):
        return None
    subject = ast.dump(test.left)
    if isinstance(test.ops[0], ast.IsNot) and _is_none(node.orelse) and ast.dump(node.body) == subject:
        return node.body
    if isinstance(test.ops[0], ast.Is) and _is_none(node.body) and ast.dump(node.orelse) == subject:
        return node.orelse
    return None


def _is_none(node: ast.AST) -> bool:
    return isinstance(node, ast.Constant) and node.value is None


def _aliases(index: ModuleIndex, expr: Expressions, created) -> List[TextEdit]:
    """`style_v = style` (or `input_var = input`, `b_x = x`) left by unwrapping
    `style_v = Variable(style)`: the uses of `style_v` read `style`, and the alias goes. Only
    when both names have one meaning where it matters: the alias is bound once in its scope,
    never read before that binding (in a loop: read from the previous round), not read by a
    nested function, and `style` is never rebound after it. In a loop body the binding runs
    every round, before every read of the alias, so the reads see the same value. A
    module-level alias that the module never reads stays (other modules may import it)."""
    edits: List[TextEdit] = []
    for stmt in list(index.parents):
        if not (isinstance(stmt, ast.Assign) and created(stmt) and len(stmt.targets) == 1
                and isinstance(stmt.targets[0], ast.Name) and isinstance(stmt.value, ast.Name)):
            continue
        alias, original = stmt.targets[0].id, stmt.value.id
        if alias == original:
            continue
        scope = index.function_of(stmt)
        uses = _alias_uses(index, scope, alias, original, stmt)
        if uses is None or (isinstance(scope, ast.Module) and not uses):
            continue  # a module-level name nothing here reads may be imported elsewhere
        if _alone_in_cell(index.src.text, index.src.start(stmt), index.src.end(stmt)):
            continue  # a notebook cell would be left empty
        deletion = expr.delete_statement(stmt)
        if deletion is None:
            continue
        edits.extend(deletion)
        edits.extend(TextEdit(index.src.start(u), index.src.end(u), original) for u in uses)
        return edits  # one alias a pass: the next pass sees the new text
    return edits


def _alias_uses(index: ModuleIndex, scope: ast.AST, alias: str, original: str, stmt: ast.Assign
                ) -> Optional[List[ast.Name]]:
    after = (stmt.end_lineno, stmt.end_col_offset)
    uses = []
    for node in index.names.get(alias, ()):
        owner = index.function_of(node)
        if owner is not scope:
            if _inside(owner, scope):
                return None  # read by a nested function: keep it simple
            continue
        if node is stmt.targets[0]:
            continue
        if not isinstance(node.ctx, ast.Load):
            return None  # rebound or deleted
        if (node.lineno, node.col_offset) < after:
            return None
        uses.append(node)
    for node in index.names.get(original, ()):
        owner = index.function_of(node)
        if (owner is scope or _inside(owner, scope)) and not isinstance(node.ctx, ast.Load) \
                and (node.lineno, node.col_offset) > after:
            return None  # `style` rebound after the alias
    for node in ast.walk(scope):
        if isinstance(node, (ast.Global, ast.Nonlocal)) and (alias in node.names or original in node.names):
            return None
    return uses


def _alone_in_cell(text: str, start: int, end: int) -> bool:
    """Is [start, end) the only code of its notebook cell (a joined notebook's text)?"""
    if CELL_SEPARATOR not in text:
        return False
    begin = text.rfind(CELL_SEPARATOR, 0, start)
    begin = 0 if begin < 0 else begin + len(CELL_SEPARATOR)
    stop = text.find(CELL_SEPARATOR, end)
    stop = len(text) if stop < 0 else stop
    rest = text[begin:start] + text[end:stop]
    return all(not line.strip() or line.lstrip().startswith("#") for line in rest.splitlines())


def _inside(node: ast.AST, scope: ast.AST) -> bool:
    if isinstance(scope, ast.Module):
        return True
    if isinstance(node, ast.Module):
        return False
    return (scope.lineno, scope.col_offset) < (node.lineno, node.col_offset) and \
        (node.end_lineno, node.end_col_offset) <= (scope.end_lineno, scope.end_col_offset)  # type: ignore[attr-defined]
