"""What a runtime `volatile=` flag is where an enclosing `if` has already tested it.

PSMNet's `forward` reads `Variable(cost, volatile=not self.training)` inside `if
self.training:`: the flag is `False` there, and `True` in the `else:`. A reviewer writes no
`set_grad_enabled(self.training)` there: nothing (VF102's fix), or `torch.no_grad()`.
"""
from __future__ import annotations

import ast
from typing import Optional, Tuple

from ..syntax.index import ModuleIndex


def decided_flag(index: ModuleIndex, flag: ast.AST, node: ast.AST) -> Optional[Tuple[bool, ast.If, bool]]:
    """(its value, the `if`, whether `node` is in its body) when an enclosing `if` of the same
    function tests the flag itself:
    `if self.training:` ... `Variable(h, volatile=not self.training)` is `volatile=False`
    there, and `True` in its `else:`. The flag is a name or an attribute of one (`training`,
    `self.training`, `args.evaluate`), maybe negated; nothing in the `if` before `node` may
    assign it or call a `train`/`eval` method (which sets a model's `training`)."""
    core, negated = _without_not(flag)
    if not _plain_reference(core):
        return None
    shape = ast.dump(core)
    child = index.statement_of(node)
    while child is not None:
        parent = index.parents.get(child)
        if parent is None or isinstance(parent, (ast.FunctionDef, ast.AsyncFunctionDef, ast.Lambda, ast.ClassDef,
                                                 ast.Module)):
            return None
        if isinstance(parent, ast.If):
            test, test_negated = _without_not(parent.test)
            if ast.dump(test) == shape:  # the walk stops at the function's edge: the same scope
                if _changed_before(parent, core, node):
                    return None
                in_body = any(c is child for c in parent.body)
                core_value = in_body ^ test_negated  # the test holds in the body
                value = core_value ^ negated
                return value, parent, in_body
        child = parent
    return None


def _without_not(expr: ast.AST) -> Tuple[ast.AST, bool]:
    negated = False
    while isinstance(expr, ast.UnaryOp) and isinstance(expr.op, ast.Not):
        expr, negated = expr.operand, not negated
    return expr, negated


def _plain_reference(expr: ast.AST) -> bool:
    while isinstance(expr, ast.Attribute):
        expr = expr.value
    return isinstance(expr, ast.Name)


def _changed_before(branch: ast.If, core: ast.AST, node: ast.AST) -> bool:
    """Whether something in `branch` before `node` may change `core`: an assignment of it
    (or of its root name), a `global`/`nonlocal`, a call of a `train`/`eval` method."""
    root = core
    while isinstance(root, ast.Attribute):
        root = root.value
    shape = ast.dump(core)
    for n in ast.walk(branch):
        if getattr(n, "lineno", 0) > node.lineno or n is branch.test:
            continue
        if isinstance(n, (ast.Global, ast.Nonlocal)):
            return True
        if isinstance(n, (ast.Name, ast.Attribute)) and isinstance(n.ctx, (ast.Store, ast.Del)) \
                and (isinstance(n, ast.Name) and n.id == root.id  # type: ignore[attr-defined]
                     or ast.dump(n).replace("Store()", "Load()").replace("Del()", "Load()") == shape):
            return True
        if isinstance(n, ast.Call) and isinstance(n.func, ast.Attribute) and n.func.attr in ("train", "eval"):
            return True
    return False
