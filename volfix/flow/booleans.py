"""Is an expression certainly a `bool`? `torch.set_grad_enabled(mode)` takes nothing else.

PyTorch 2.x raises `TypeError: set_grad_enabled(): argument 'enabled' (position 1) must be
bool, not int` for `1`, `None` or a tensor, where 0.3's `volatile=` took any integer. So
`volatile=not train` may become `set_grad_enabled(train)` only when `train` is a bool; else
the fix spells `set_grad_enabled(bool(train))`.

Known bools: `True`/`False`; comparisons; `not x`; `and`/`or` of known bools; `isinstance`,
`issubclass`, `hasattr`, `callable`, `bool` and `torch.is_grad_enabled()` calls; the
attributes `.training`, `.requires_grad`, `.is_cuda`; a parameter whose default is `True` or
`False` (a flag by convention); `args.x` when the file's every `add_argument` of `x` is a
`store_true`/`store_false` switch; and a name, of the function or of the module, that every
assignment binds to a known bool and nothing else binds.
"""
from __future__ import annotations

import ast
from typing import List, Optional

from ..syntax.index import ModuleIndex
from ..syntax.names import function_params
from .calls import parameter_defaults

_BOOL_CALLS = frozenset({"isinstance", "issubclass", "hasattr", "callable", "bool"})
_BOOL_METHODS = frozenset({"is_grad_enabled", "is_available", "is_tensor"})
_BOOL_ATTRIBUTES = frozenset({"training", "requires_grad", "is_cuda", "is_leaf"})
_DEPTH = 4


def known_bool(index: Optional[ModuleIndex], node: ast.AST, depth: int = 0, compares: bool = True) -> bool:
    """`compares=False`: a comparison counts only when it is an identity test (`x is None`):
    `a == b` of tensors is a tensor, whose truth raises for several elements."""
    if isinstance(node, ast.Constant):
        return type(node.value) is bool
    if isinstance(node, ast.Compare):
        return compares or all(isinstance(op, (ast.Is, ast.IsNot)) for op in node.ops)
    if isinstance(node, ast.UnaryOp):
        return isinstance(node.op, ast.Not) and (compares or known_bool(index, node.operand, depth, compares))
    if isinstance(node, ast.BoolOp):
        return all(known_bool(index, v, depth, compares) for v in node.values)
    if isinstance(node, ast.Call):
        func = node.func
        if isinstance(func, ast.Name):
            return func.id in _BOOL_CALLS
        return isinstance(func, ast.Attribute) and func.attr in _BOOL_METHODS
    if isinstance(node, ast.Attribute):
        if node.attr in _BOOL_ATTRIBUTES:
            return True
        options = isinstance(node.value, ast.Name) and node.value.id not in ("self", "cls")
        return options and index is not None and _switch(index, node.attr)
    if isinstance(node, ast.Name) and index is not None and depth < _DEPTH:
        return _bool_name(index, node, depth, compares)
    return False


def truth_safe(index: Optional[ModuleIndex], test: ast.AST) -> bool:
    """Testing `test` for truth can neither raise nor run the author's code: dropping an
    `if test: pass` changes nothing (`if x:` on a tensor raises for several elements)."""
    return known_bool(index, test, compares=False)


def _bool_name(index: ModuleIndex, node: ast.Name, depth: int, compares: bool) -> bool:
    if node not in index.parents:
        return False  # not of this file (a call site's argument read elsewhere)
    scope = index.function_of(node)
    name = node.id
    values: List[ast.AST] = []
    if isinstance(scope, (ast.FunctionDef, ast.AsyncFunctionDef, ast.Lambda)):
        default = parameter_defaults(scope).get(name)
        if default is not None:
            if not known_bool(index, default, depth + 1, compares):
                return False
            values.append(default)
        elif name in function_params(scope):
            return False
    body = scope.body if isinstance(getattr(scope, "body", None), list) else []
    for stmt in body:
        for sub in ast.walk(stmt):
            bound = _binding_value(sub, name)
            if bound is False:
                return False
            if bound is not None:
                values.append(bound)
    return bool(values) and all(known_bool(index, v, depth + 1, compares) for v in values)


def _binding_value(node: ast.AST, name: str):
    """The value `node` binds `name` to; None when it does not bind it; False when it binds
    it some other way (a loop, a tuple, an import, `+=`, `global`)."""
    if isinstance(node, ast.Assign):
        hits = [t for t in node.targets if _binds(t, name)]
        if not hits:
            return None
        return node.value if all(isinstance(t, ast.Name) for t in hits) else False
    if isinstance(node, (ast.AnnAssign, ast.AugAssign)):
        if not _binds(node.target, name):
            return None
        return node.value if isinstance(node, ast.AnnAssign) and node.value is not None else False
    if isinstance(node, (ast.For, ast.AsyncFor, ast.comprehension)):
        return False if _binds(node.target, name) else None
    if isinstance(node, ast.withitem):
        return False if node.optional_vars is not None and _binds(node.optional_vars, name) else None
    if isinstance(node, (ast.Import, ast.ImportFrom)):
        return False if any((a.asname or a.name.split(".")[0]) == name for a in node.names) else None
    if isinstance(node, (ast.Global, ast.Nonlocal)):
        return False if name in node.names else None
    if isinstance(node, ast.NamedExpr):
        return node.value if node.target.id == name else None
    if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)):
        return False if node.name == name else None
    return None


def _binds(target: ast.AST, name: str) -> bool:
    return any(isinstance(n, ast.Name) and n.id == name and isinstance(n.ctx, ast.Store) for n in ast.walk(target))


def _switch(index: ModuleIndex, attr: str) -> bool:
    """The file declares the option `attr` (`--attr`, `--a-t-t-r` or `dest='attr'`) only as a
    `store_true`/`store_false` switch: `args.attr` is a bool."""
    found = False
    for call in index.calls.get("add_argument", ()):
        dest = next((k.value.value for k in call.keywords if k.arg == "dest" and isinstance(k.value, ast.Constant)),
                    None)
        flags = [a.value for a in call.args if isinstance(a, ast.Constant) and isinstance(a.value, str)]
        names = {dest} if dest is not None else {f.lstrip("-").replace("-", "_") for f in flags if f.startswith("--")}
        if attr not in names:
            continue
        action = next((k.value for k in call.keywords if k.arg == "action"), None)
        if not (isinstance(action, ast.Constant) and action.value in ("store_true", "store_false")):
            return False
        found = True
    return found
