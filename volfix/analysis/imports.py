"""A light name resolver over `ast`: which local names mean which torch objects.

libcst's QualifiedNameProvider costs ~10x a parse (SPEC §8); volfix only needs to know
what a handful of names bound by imports refer to, so it reads the import statements itself.
"""
from __future__ import annotations

import ast
from typing import Dict, Iterable, Iterator, Optional

from .flow import iter_statements, target_names

VARIABLE = "torch.autograd.Variable"
_VARIABLE_ALIASES = {VARIABLE, "torch.autograd.variable.Variable"}
_STAR_VARIABLE_MODULES = {"torch.autograd", "torch.autograd.variable"}
# A name bound by something other than an import (assignment, def, class, parameter).
LOCAL = "<local>"
# A name bound (in an earlier notebook cell) to a wrapper that forwards to torch's Variable.
WRAPPER = "<variable-wrapper>"
# Key of a method helper (`model.forward_emb(..., volatile=True)`), resolved across files by
# its name when the run defines that method name once (`volfix.project`).
METHOD_PREFIX = "<method>."

Bindings = Dict[str, str]


def _import_bindings(node: ast.stmt) -> Iterator[tuple]:
    if isinstance(node, ast.Import):
        for alias in node.names:
            if alias.asname:
                yield alias.asname, alias.name
            else:
                top = alias.name.split(".", 1)[0]
                yield top, top
    elif isinstance(node, ast.ImportFrom) and node.level == 0 and node.module:
        for alias in node.names:
            if alias.name == "*":
                if node.module in _STAR_VARIABLE_MODULES:
                    yield "Variable", VARIABLE
                continue
            yield alias.asname or alias.name, f"{node.module}.{alias.name}"
    elif isinstance(node, ast.ImportFrom) and node.level > 0:
        # Relative: `from .utils import to_var` -> '.utils.to_var' (the project index,
        # `volfix.project`, resolves the dots against the importing file's package).
        module = "." * node.level + (f"{node.module}." if node.module else "")
        for alias in node.names:
            if alias.name != "*":
                yield alias.asname or alias.name, f"{module}{alias.name}"


def scope_bindings(body: Iterable[ast.stmt], inherited: Optional[Bindings] = None,
                   params: Iterable[str] = ()) -> Bindings:
    """Bindings in effect in one scope: imports, aliases (`V = torch.autograd.Variable`),
    and LOCAL for names bound any other way. The last binding in source order wins."""
    out: Bindings = dict(inherited or {})
    for name in params:
        out[name] = LOCAL
    for stmt in iter_statements(body):
        if isinstance(stmt, (ast.Import, ast.ImportFrom)):
            for name, qual in _import_bindings(stmt):
                out[name] = qual
        elif isinstance(stmt, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)):
            out[stmt.name] = LOCAL
        elif isinstance(stmt, ast.Assign):
            alias = qualified_name(stmt.value, out)
            for target in stmt.targets:
                for name in target_names(target):
                    out[name] = alias if (alias and isinstance(target, ast.Name)) else LOCAL
        elif isinstance(stmt, (ast.AnnAssign, ast.AugAssign)):
            for name in target_names(stmt.target):
                out[name] = LOCAL
        elif isinstance(stmt, (ast.For, ast.AsyncFor)):
            for name in target_names(stmt.target):
                out[name] = LOCAL
        elif isinstance(stmt, (ast.With, ast.AsyncWith)):
            for item in stmt.items:
                if item.optional_vars is not None:
                    for name in target_names(item.optional_vars):
                        out[name] = LOCAL
    return out


def function_params(fn: ast.AST) -> list:
    args = fn.args  # type: ignore[attr-defined]
    names = [a.arg for a in args.posonlyargs + args.args + args.kwonlyargs]
    if args.vararg:
        names.append(args.vararg.arg)
    if args.kwarg:
        names.append(args.kwarg.arg)
    return names


def qualified_name(expr: ast.AST, bindings: Bindings) -> Optional[str]:
    """`ag.Variable` -> 'torch.autograd.Variable' when `import torch.autograd as ag`."""
    if isinstance(expr, ast.Name):
        qual = bindings.get(expr.id)
        return None if (qual is None or qual.startswith("<")) else qual
    if isinstance(expr, ast.Attribute):
        base = qualified_name(expr.value, bindings)
        return f"{base}.{expr.attr}" if base else None
    return None


def is_variable(qual: Optional[str]) -> bool:
    return qual in _VARIABLE_ALIASES


def imports_torch(bindings: Bindings) -> bool:
    return any(q == "torch" or q.startswith("torch.") for q in bindings.values())


def spelling(bindings: Bindings, qual: str) -> Optional[str]:
    """How this file can say `qual` (e.g. 'torch.no_grad') with its own imports, or None."""
    for name, bound in sorted(bindings.items()):
        if bound == qual:
            return name
    module, _, attr = qual.rpartition(".")
    while module:
        for name, bound in sorted(bindings.items()):
            if bound == module:
                return f"{name}.{qual[len(module) + 1:]}"
        module, _, _ = module.rpartition(".")
    return None
