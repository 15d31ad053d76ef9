"""A project's own grad-mode functions (`flow.grad_mode.GradShim`: fastai's `no_grad_context()`,
fairseq's `utils.maybe_no_grad()`) as the project index finds them per file, and the calls of
them a file makes in a `with`.
"""
from __future__ import annotations

import ast
from typing import Dict, List, Tuple

from ..flow.grad_mode import GradShim, shim_of
from .facts import Links
from .helpers import NameTable, document_of, helper_called, helper_of_qual


def file_shims(item) -> List[GradShim]:
    """Runs here or in a worker: the module-level functions of a file read as grad-mode
    context managers (`flow.grad_mode.shim_of`), with the torch names its star imports of
    project modules bind (`Links.star_bindings`)."""
    raw, star_bindings = item
    doc = document_of(raw)
    if doc is None:
        return []
    index = doc.index()
    if star_bindings:
        Links(star_bindings=star_bindings).bind_star_imports(index.module_names)
    return [shim for shim in (shim_of(index, stmt) for stmt in index.module_statements
                              if isinstance(stmt, ast.FunctionDef)) if shim is not None]


def shim_names(shims: Dict[str, List[GradShim]]) -> NameTable:
    """The project's grad-mode functions by name, then by file (as `helper_names`)."""
    out: NameTable = {}
    for order, (path, found) in enumerate(shims.items()):
        for shim in found:
            out.setdefault(shim.name, {}).setdefault(path, (order, shim))  # type: ignore[arg-type]
    return out


def shims_called(index, path: str, table: NameTable) -> List[Tuple[str, Tuple[str, GradShim]]]:
    """(name as `grad_mode.shim_called` looks it up, (defining file, function)) for every
    grad-mode function of another file entered in a `with` (or used as a decorator) here:
    `utils.maybe_no_grad()` by its qualified name, `no_grad_context()` of `from .core import *`
    by its bare name."""
    out = []
    for calls in index.calls.values():  # by every name: `from .core import no_grad_context as ngc`
        for call in calls:
            parent = index.parents.get(call)
            if not (isinstance(parent, ast.withitem) and parent.context_expr is call
                    or isinstance(parent, (ast.FunctionDef, ast.AsyncFunctionDef)) and call in parent.decorator_list):
                continue
            func = call.func
            qual = index.qual(func)
            target = helper_of_qual(table, qual, path) if qual is not None else None
            key = qual
            if target is None and qual is None and isinstance(func, ast.Name) \
                    and not index.binds_anywhere(func.id) and not index.module_names.bound(func.id):
                for module in index.module_names.star_modules:
                    target = helper_called(table, module, func.id, path)
                    if target is not None:
                        key = func.id
                        break
            if target is not None and target[0] != path and key is not None:
                out.append((key, target))
    return out
