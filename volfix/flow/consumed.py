"""What a caller does with a region's output that tells the fix from 0.3, which kept everything
computed from a volatile value volatile (SEMANTICS.md fact 4): it trains on it, meets a value
that may require grad, or runs it through a module (`consumed`); and whether a function hands
back what it computed (`hands_back`), or is one a framework calls (`framework_method`)."""
from __future__ import annotations

import ast
from typing import Optional

from .bindings import NameBindings
from .calls import FRAMEWORK_METHODS
from .values import calls_a_module, likely_grad


def framework_method(fn: ast.AST, index) -> bool:
    """`forward`, `__call__`...: frameworks call it for you, its callers cannot be followed."""
    return index.method_class(fn) is not None and (
        fn.name in FRAMEWORK_METHODS or (fn.name.startswith("__") and fn.name.endswith("__")))  # type: ignore[attr-defined]


def hands_back(taint) -> bool:
    """The function `taint` follows returns (or yields) what it computed from the value."""
    return any(e.kind in ("return", "yield") for e in taint.escapes)


def consumed(index, taint, fn: ast.AST, names: NameBindings, backward_only: bool, what: str,
             trains: str) -> Optional[str]:
    """Why computing on in `fn` (where `taint` follows the region's output) tells the fix
    from 0.3, which kept everything computed from that output volatile (fact 4)."""
    if taint.training:
        stmt, step = taint.training[0]
        return f"unsafe fix: {trains} (`{step}` at line {stmt.lineno})"
    if backward_only:
        return None
    meets = [s for s in taint.uses_outside() if id(s) in taint.meeting
             and any(likely_grad(index, p, fn) for p in taint.partners.get(id(s), ()))]
    if meets:
        # a plain tensor now: combined with one that requires grad, it records
        return (f"unsafe fix: {what} meets a value that may require grad at line {meets[0].lineno}, "
                "where 0.3 kept it volatile")
    modules = [s for s in taint.uses_outside() if id(s) in taint.recording
               and calls_a_module(index, names, s, s) is not None]
    if modules:
        # `scores = classifier(h)`: the module's parameters require grad, so its output
        # records a graph
        return (f"unsafe fix: {what} goes through a module at line {modules[0].lineno}, which records "
                "a graph where 0.3 kept it volatile")
    return None
