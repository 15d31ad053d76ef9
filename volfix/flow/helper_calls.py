"""Calls of helpers defined in other files of the project (`volfix.project.index`).

A call passing a true flag is a volatile source where it is (VF101 there); a runtime flag is a
grad-mode source (VF103); a call passing its own function's parameter on makes that function
a helper in turn (followed to its callers by the planner).
"""
from __future__ import annotations

import ast
import builtins
from dataclasses import dataclass
from typing import Optional

from ..syntax import names as nm
from .calls import flag_kind, passed_argument

HELPER_CALL = "helper-call"


@dataclass
class HelperCall:
    call: ast.Call
    sig: object  # volfix.project.index.HelperSignature
    name: str  # the helper's name as shown: `get_batch()`
    where: str  # "data.py:5"
    arg: Optional[ast.AST]  # what the call passes for the flag (None: a literal true)
    kind: str  # "true" | "expr"


def callee_names(links, module_names=None) -> list:
    """Callee names (last identifiers) under which this file may call a linked helper,
    import aliases included (`from data import get_batch as gb`)."""
    out = set()
    quals = set()
    for qual, sig in links.helpers:
        short = sig.name[len(nm.METHOD_PREFIX):] if sig.name.startswith(nm.METHOD_PREFIX) else sig.name
        out.add(short)
        out.add(qual.rpartition(".")[2])
        quals.add(qual)
    if module_names is not None:
        for name in module_names.final:
            if any(q in quals for q in module_names.every(name)):
                out.add(name)
    return sorted(out)


def resolve(ctx, call: ast.Call) -> Optional[HelperCall]:
    links = ctx.links
    if links is None or not links.helpers:
        return None
    helpers = links.helper_map()
    qual = ctx.index.qual(call.func)
    sig = helpers.get(qual) if qual is not None else None
    if sig is None and isinstance(call.func, ast.Attribute):
        sig = helpers.get(nm.METHOD_PREFIX + call.func.attr)
    if sig is None and isinstance(call.func, ast.Name):
        sig = next((s for q, s in links.helpers if q.rpartition(".")[2] == call.func.id
                    and not ctx.index.module_names.bound(call.func.id)), None)
    if sig is None:  # `iterator(instances, for_training=False)`: an instance's `__call__`
        called = helpers.get(nm.METHOD_PREFIX + "__call__")
        if called is not None and instance_call(ctx.index, call, {called.param}, helpers):
            sig = called
    if sig is None or sig.wrapper:
        return None
    if sig.param is None:
        arg, known = None, True
        kind = "true"
    else:
        arg, known = passed_argument(call, list(sig.positional), sig.param)
        if arg is None and known:
            default = dict(sig.defaults).get(sig.param)
            kind = {"true": "true", "false": "false", "none": "none"}.get(default, "unknown")
        else:
            kind = flag_kind(arg, known)
        if sig.negated:
            kind = {"true": "false", "false": "true", "none": "true"}.get(kind, kind)
    if kind not in ("true", "expr"):
        return None
    name = sig.name[len(nm.METHOD_PREFIX):] if sig.name.startswith(nm.METHOD_PREFIX) else sig.name
    if kind == "expr" and sig.negated and arg is not None:
        pass  # the planner negates: Flag.negated
    return HelperCall(call, sig, f"`{name}()`", f"{sig.path}:{sig.line}", arg, kind)


def instance_call(index, call: ast.Call, params: set, methods) -> bool:
    """`iterator(instances, for_training=False)`: a call of a name or attribute that is no
    function, class or import of the file, nor a method helper of the project (`methods`:
    their keys), passing a `__call__` helper's flag (`params`) by keyword: the call of an
    instance, which runs its class's `__call__`. An attribute must be one the file stores
    (`self._iterator = iterator`): `trainer._batch_loss(batch, for_training=False)` calls a
    method."""
    func = call.func
    if isinstance(func, ast.Name):
        name = func.id
        if index.module_names.bound(name) or hasattr(builtins, name):
            return False
    elif isinstance(func, ast.Attribute) and not nm.is_torch(index.qual(func)):
        name = func.attr
        if nm.METHOD_PREFIX + name in methods or not any(
                isinstance(a.ctx, ast.Store) for a in index.attributes.get(name, ())):
            return False  # `trainer._batch_loss(...)`: a method; `self._iterator` is stored here, an instance
    else:
        return False
    if any(getattr(n, "name", None) == name for n in index.functions) or \
            any(isinstance(n, ast.ClassDef) and n.name == name for n in index.by_type.get(ast.ClassDef, ())):
        return False
    return any(k.arg in params for k in call.keywords if k.arg is not None)
