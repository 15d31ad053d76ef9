"""Is code already under a grad-disabled region? (SPEC §2.1: then a fix only unwraps.)

Recognised, in the spellings real code uses:
- `with torch.no_grad()`, `torch.autograd.no_grad()`, `torch.inference_mode()`,
  `torch.set_grad_enabled(False)`, and functions decorated with `@torch.no_grad()` (or bare);
- version-gated forms: `torch.no_grad() if new_torch else nullcontext()`, and a name bound to
  such an expression (`ctx = ...; with ctx:`);
- names bound to the grad-mode class itself, with a fallback for old torch, in this scope or
  an enclosing one: `no_grad = torch.no_grad if hasattr(torch, "no_grad") else
  contextlib.suppress`, the same as an `if`/`else` or `try`/`except` pair of assignments,
  `getattr(torch, "no_grad", contextlib.suppress)`; then `with no_grad():`.
A fallback (`contextlib.suppress`, `contextlib.nullcontext`) is what the code runs on a torch
without `no_grad`; on the torch the fixed code targets, the gated branch is the one that runs.
"""
from __future__ import annotations

import ast
from typing import List, Optional, Tuple

from ..syntax.index import FUNCTIONS, ModuleIndex
from ..syntax.names import function_params

NO_GRAD_QUALS = frozenset({"torch.no_grad", "torch.autograd.no_grad", "torch.autograd.grad_mode.no_grad",
                           "torch.inference_mode", "torch.autograd.inference_mode"})
SET_GRAD_QUALS = frozenset({"torch.set_grad_enabled", "torch.autograd.set_grad_enabled"})
# Context managers that do nothing: the fallback branch of a version gate.
NULL_CONTEXT_QUALS = frozenset({"contextlib.suppress", "contextlib.nullcontext", "contextlib.ExitStack"})
_MAX_DEPTH = 4


def literal_truth(node: Optional[ast.AST]) -> Optional[bool]:
    """True/False for literal flags (True, False, 1, 0), None otherwise."""
    if isinstance(node, ast.Constant) and isinstance(node.value, (bool, int)) and not isinstance(node.value, float):
        return bool(node.value)
    return None


def disables_grad(index: ModuleIndex, expr: ast.AST, any_grad_mode: bool = False, depth: int = 0) -> bool:
    """Does entering `expr` (a with-item or a decorator) turn recording off?"""
    return _kind(index, expr, any_grad_mode, depth, called=False) == "off"


def _kind(index: ModuleIndex, expr: ast.AST, any_grad_mode: bool, depth: int, called: bool) -> Optional[str]:
    """"off" (turns recording off), "null" (a do-nothing fallback) or None (anything else).
    `called`: `expr` is the callee of a call (a class or factory), not a context manager."""
    if depth > _MAX_DEPTH:
        return None
    if isinstance(expr, ast.IfExp):  # version-gated: `torch.no_grad() if ok else nullcontext()`
        kinds = {_kind(index, expr.body, any_grad_mode, depth + 1, called),
                 _kind(index, expr.orelse, any_grad_mode, depth + 1, called)}
        return "off" if "off" in kinds else ("null" if kinds == {"null"} else None)
    if isinstance(expr, ast.Name):
        values, scope = _bindings(index, expr)
        kinds = {_kind(index, v, any_grad_mode, depth + 1, called) for v in values}
        if isinstance(scope, ast.Module):  # imports too: `from torch import no_grad` / `except: no_grad = ...`
            kinds |= {_qual_kind(q, called) for q in index.module_names.every(expr.id)}
        if not kinds and scope is None:
            kinds = {_qual_kind(index.qual(expr), called)}
        if "off" in kinds and kinds <= {"off", "null"}:
            return "off"
        return "null" if kinds == {"null"} else None
    if isinstance(expr, ast.Call):
        if called:
            return None  # `make_ctx()()`: unknown
        func = expr.func
        if _is_getattr_of_torch(index, expr):
            return None
        qual = index.qual(func)
        if qual in SET_GRAD_QUALS:
            return "off" if expr.args and (any_grad_mode or literal_truth(expr.args[0]) is False) else None
        if qual == "builtins.getattr" or (isinstance(func, ast.Name) and func.id == "getattr"):
            return None
        if isinstance(func, ast.Call) and _is_getattr_of_torch(index, func):
            return "off"  # `getattr(torch, "no_grad", suppress)()`
        return _kind(index, func, any_grad_mode, depth + 1, called=True)
    return _qual_kind(index.qual(expr), called)


def _qual_kind(qual: Optional[str], called: bool) -> Optional[str]:
    if qual in NO_GRAD_QUALS:
        return "off"
    if called and qual in NULL_CONTEXT_QUALS:
        return "null"
    return None


def _is_getattr_of_torch(index: ModuleIndex, call: ast.Call) -> bool:
    """`getattr(torch, "no_grad", fallback)` / `getattr(torch, "no_grad")`."""
    func = call.func
    if not (isinstance(func, ast.Name) and func.id == "getattr" and len(call.args) >= 2):
        return False
    name = call.args[1]
    return (isinstance(name, ast.Constant) and name.value in ("no_grad", "inference_mode")
            and index.qual(call.args[0]) in ("torch", "torch.autograd"))


def bound_values(index: ModuleIndex, name: ast.Name) -> List[ast.AST]:
    """The values assigned to `name` where it is read: plain `name = value` statements of its
    own scope, or, when that scope never binds it, of the nearest enclosing one that does.
    Empty when it is bound some other way (a parameter, a loop, an import): unknown."""
    return _bindings(index, name)[0]


def _bindings(index: ModuleIndex, name: ast.Name) -> Tuple[List[ast.AST], Optional[ast.AST]]:
    """(assigned values, the scope that binds `name`); the scope is None when no scope binds
    it by assignment (imports only, or unbound), and the values are empty when a binding
    is not a plain assignment."""
    scope = index.function_of(name)
    while True:
        out: List[ast.AST] = []
        bound_here = False
        for other in index.names.get(name.id, ()):
            if not isinstance(other.ctx, ast.Store) or index.function_of(other) is not scope:
                continue
            bound_here = True
            parent = index.parents.get(other)
            if isinstance(parent, ast.Assign) and other in parent.targets:
                out.append(parent.value)
            else:
                return [], scope
        if bound_here:
            return out, scope
        if isinstance(scope, FUNCTIONS) and name.id in function_params(scope):
            return [], scope
        if isinstance(scope, ast.Module):
            return [], (scope if index.module_names.every(name.id) else None)
        scope = index.function_of(scope)


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
