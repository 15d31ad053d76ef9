"""Is code already under a grad-disabled region? (SPEC §2.1: then a fix only unwraps.)

Recognised: `with torch.no_grad()`, `torch.inference_mode()`, `torch.set_grad_enabled(False)`,
their version-gated forms (`torch.no_grad() if new_torch else nullcontext()`, or a name bound
to such an expression: `ctx = ...; with ctx:`), and functions decorated with `@torch.no_grad()`.
"""
from __future__ import annotations

import ast
from typing import Optional

from ..syntax.index import FUNCTIONS, ModuleIndex

NO_GRAD_QUALS = frozenset({"torch.no_grad", "torch.autograd.no_grad", "torch.autograd.grad_mode.no_grad",
                           "torch.inference_mode", "torch.autograd.inference_mode"})
SET_GRAD_QUALS = frozenset({"torch.set_grad_enabled", "torch.autograd.set_grad_enabled"})


def literal_truth(node: Optional[ast.AST]) -> Optional[bool]:
    """True/False for literal flags (True, False, 1, 0), None otherwise."""
    if isinstance(node, ast.Constant) and isinstance(node.value, (bool, int)) and not isinstance(node.value, float):
        return bool(node.value)
    return None


def disables_grad(index: ModuleIndex, expr: ast.AST, any_grad_mode: bool = False, depth: int = 0) -> bool:
    """Does entering `expr` (a with-item or a decorator) turn recording off?"""
    if depth > 3:
        return False
    if isinstance(expr, ast.IfExp):  # version-gated: `torch.no_grad() if ok else nullcontext()`
        return disables_grad(index, expr.body, any_grad_mode, depth + 1) or \
            disables_grad(index, expr.orelse, any_grad_mode, depth + 1)
    if isinstance(expr, ast.Name):
        values = bound_values(index, expr)
        return bool(values) and all(disables_grad(index, v, any_grad_mode, depth + 1) for v in values)
    target = expr.func if isinstance(expr, ast.Call) else expr
    qual = index.qual(target)
    if qual in NO_GRAD_QUALS:
        return True
    if qual in SET_GRAD_QUALS and isinstance(expr, ast.Call) and expr.args:
        return any_grad_mode or literal_truth(expr.args[0]) is False
    return False


def bound_values(index: ModuleIndex, name: ast.Name) -> list:
    """The values assigned to `name` in its scope (plain `name = value` statements)."""
    scope = index.function_of(name)
    out = []
    for other in index.names.get(name.id, ()):
        if isinstance(other.ctx, ast.Store) and index.function_of(other) is scope:
            parent = index.parents.get(other)
            if isinstance(parent, ast.Assign) and other in parent.targets:
                out.append(parent.value)
            else:
                return []  # bound some other way: unknown
    return out


def covered(index: ModuleIndex, node: ast.AST, any_grad_mode: bool = False) -> bool:
    """Lexically inside a grad-disabled region of its own function."""
    scope = index.function_of(node)
    cur = index.parents.get(node)
    while cur is not None and cur is not scope:
        if isinstance(cur, (ast.With, ast.AsyncWith)):
            if any(disables_grad(index, item.context_expr, any_grad_mode) for item in cur.items):
                return True
        cur = index.parents.get(cur)
    if isinstance(scope, FUNCTIONS):
        return any(disables_grad(index, d, any_grad_mode) for d in scope.decorator_list)
    return False
