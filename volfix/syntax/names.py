"""A light name resolver over `ast`: which local names mean which torch objects.

libcst's QualifiedNameProvider costs ~10x a parse (SPEC §8); volfix only needs to know what a
handful of names bound by imports refer to, so it reads the binding statements itself.

Module-level names are resolved by position: a use sees the last module-level binding before
its line (a notebook cell that rebinds `Variable` to Chainer's does not change earlier cells).
Inside functions a name is looked up in the function's own bindings, then the enclosing
functions', then the module's last binding (what a call sees at run time in a script).
Spelling a name for a fix (`torch.no_grad`) is stricter: the name must be bound to the module
itself on every path (`import torch.cuda as device` in one branch disqualifies `device`).
"""
from __future__ import annotations

import ast
import bisect
from typing import Dict, Iterable, Iterator, List, Optional, Set, Tuple

VARIABLE = "torch.autograd.Variable"
_VARIABLE_ALIASES = frozenset({VARIABLE, "torch.autograd.variable.Variable"})
_STAR_VARIABLE_MODULES = frozenset({"torch.autograd", "torch.autograd.variable"})
# A name bound by something other than an import (assignment, def, class, parameter).
LOCAL = "<local>"
# A name bound to a wrapper that forwards to torch's Variable (`Variable = lambda *a, **k: ...`).
WRAPPER = "<variable-wrapper>"
# Key of a method helper (`model.forward_emb(..., volatile=True)`), resolved across files by
# its name (`volfix.flow.project`).
METHOD_PREFIX = "<method>."

Bindings = Dict[str, str]


def iter_statements(body: Iterable[ast.AST]) -> Iterator[ast.stmt]:
    """Every statement of a scope, in source order, not entering nested defs/classes."""
    for stmt in body:
        if not isinstance(stmt, ast.stmt):
            continue
        yield stmt
        if isinstance(stmt, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)):
            continue
        for name in ("body", "orelse", "finalbody"):
            sub = getattr(stmt, name, None)
            if isinstance(sub, list):
                yield from iter_statements(sub)
        for handler in getattr(stmt, "handlers", None) or ():
            yield from iter_statements(handler.body)
        for case in getattr(stmt, "cases", None) or ():
            yield from iter_statements(case.body)


def target_names(target: ast.AST) -> Iterator[str]:
    if isinstance(target, ast.Name):
        yield target.id
    elif isinstance(target, (ast.Tuple, ast.List)):
        for elt in target.elts:
            yield from target_names(elt)
    elif isinstance(target, ast.Starred):
        yield from target_names(target.value)


def written_roots(stmt: ast.stmt) -> List[str]:
    """The names whose attributes or items an assignment writes (`x.volatile = True`: `x`;
    `out[i] = v`: `out`)."""
    targets = stmt.targets if isinstance(stmt, ast.Assign) else [stmt.target] \
        if isinstance(stmt, (ast.AugAssign, ast.AnnAssign)) else []
    out = []
    for target in targets:
        if isinstance(target, (ast.Attribute, ast.Subscript)):
            while isinstance(target, (ast.Attribute, ast.Subscript)):
                target = target.value
            if isinstance(target, ast.Name):
                out.append(target.id)
    return out


def assigned_names(stmt: ast.stmt) -> List[str]:
    """The names an assignment binds, and those whose attributes or items it writes."""
    targets = stmt.targets if isinstance(stmt, ast.Assign) else [stmt.target] \
        if isinstance(stmt, (ast.AugAssign, ast.AnnAssign)) else []
    return [name for t in targets for name in target_names(t)] + written_roots(stmt)


def import_bindings(node: ast.stmt) -> Iterator[Tuple[str, str]]:
    """(local name, qualified name) pairs an import statement binds. Relative imports keep
    their dots (`from .utils import to_var` -> '.utils.to_var'); `volfix.flow.project`
    resolves them against the importing file's package. A star import from anything but
    torch.autograd binds `*module` (resolved by the project index, if at all)."""
    if isinstance(node, ast.Import):
        for alias in node.names:
            if alias.asname:
                yield alias.asname, alias.name
            else:
                top = alias.name.split(".", 1)[0]
                yield top, top
    elif isinstance(node, ast.ImportFrom):
        module = "." * node.level + (node.module or "")
        for alias in node.names:
            if alias.name == "*":
                if node.level == 0 and node.module in _STAR_VARIABLE_MODULES:
                    yield "Variable", VARIABLE
                else:
                    yield f"*{module}", module
                continue
            qual = f"{module}.{alias.name}" if node.module else f"{module}{alias.name}"
            yield alias.asname or alias.name, qual


def statement_bindings(stmt: ast.stmt, lookup) -> Iterator[Tuple[str, str]]:
    """(name, qual) pairs one statement binds; `lookup(name)` resolves aliases on the right
    (`V = torch.autograd.Variable`)."""
    if isinstance(stmt, (ast.Import, ast.ImportFrom)):
        yield from import_bindings(stmt)
    elif isinstance(stmt, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)):
        yield stmt.name, LOCAL
    elif isinstance(stmt, ast.Assign):
        alias = qualified_name(stmt.value, lookup)
        for target in stmt.targets:
            for name in target_names(target):
                yield name, alias if (alias and isinstance(target, ast.Name)) else LOCAL
    elif isinstance(stmt, (ast.AnnAssign, ast.AugAssign)):
        for name in target_names(stmt.target):
            yield name, LOCAL
    elif isinstance(stmt, (ast.For, ast.AsyncFor)):
        for name in target_names(stmt.target):
            yield name, LOCAL
    elif isinstance(stmt, (ast.With, ast.AsyncWith)):
        for item in stmt.items:
            if item.optional_vars is not None:
                for name in target_names(item.optional_vars):
                    yield name, LOCAL


def scope_bindings(body: Iterable[ast.stmt], inherited: Optional[Bindings] = None,
                   params: Iterable[str] = ()) -> Bindings:
    """Bindings in effect in one function scope: imports, aliases and LOCAL for names bound
    any other way. The last binding in source order wins."""
    out: Bindings = dict(inherited or {})
    for name in params:
        out[name] = LOCAL
    for stmt in iter_statements(body):
        for name, qual in statement_bindings(stmt, out.get):
            out[name] = qual
    return out


class ModuleNames:
    """The module-level bindings of a file, by position.

    Only names that can mean something to volfix are followed in detail: names bound by an
    import, aliases of those (`V = torch.autograd.Variable`), `Variable`, and module-level
    functions or lambdas that forward `*args`/`**kwargs` (possible wrappers of `Variable`).
    Every other module-level name is only known to be bound (`bound`): in a 100k-line script
    that keeps the cost to the few names that matter.
    """

    def __init__(self, statements: Iterable[ast.stmt], inherited: Optional[Bindings] = None):
        self._rows: Dict[str, List[int]] = {}
        self._quals: Dict[str, List[str]] = {}
        self._bound: Set[str] = set()
        for name, qual in (inherited or {}).items():
            self._add(name, 0, qual)
        statements = list(statements)
        interesting = {"Variable"} | set(inherited or ())
        for stmt in statements:
            if isinstance(stmt, (ast.Import, ast.ImportFrom)):
                interesting.update(name for name, _ in import_bindings(stmt))
            elif isinstance(stmt, (ast.FunctionDef, ast.AsyncFunctionDef)):
                if stmt.args.vararg is not None or stmt.args.kwarg is not None:
                    interesting.add(stmt.name)
            elif isinstance(stmt, ast.Assign):
                value = stmt.value
                root = value
                while isinstance(root, ast.Attribute):
                    root = root.value
                if isinstance(value, ast.Lambda) or (isinstance(root, ast.Name) and root.id in interesting):
                    for target in stmt.targets:
                        interesting.update(target_names(target))
        final: Bindings = dict(inherited or {})
        for stmt in statements:
            for name, qual in statement_bindings(stmt, final.get):
                self._bound.add(name)
                if name in interesting:
                    self._add(name, stmt.lineno, qual)
                    final[name] = qual
        self.final: Bindings = final
        self.star_modules: List[str] = [q for n, q in final.items() if n.startswith("*")]

    def _add(self, name: str, row: int, qual: str) -> None:
        self._rows.setdefault(name, []).append(row)
        self._quals.setdefault(name, []).append(qual)

    def at(self, name: str, row: int) -> Optional[str]:
        """The binding a module-level use on `row` sees (None: unbound there)."""
        rows = self._rows.get(name)
        if not rows:
            return None
        i = bisect.bisect_left(rows, row)
        return self._quals[name][i - 1] if i else None

    def every(self, name: str) -> List[str]:
        """Every binding of `name` in the module, whatever the path."""
        return list(self._quals.get(name, ()))

    def bound(self, name: str) -> bool:
        return name in self._quals or name in self._bound

    def bound_names(self) -> Set[str]:
        """Every name a statement of the module binds."""
        return set(self._quals) | self._bound

    def set(self, name: str, row: int, qual: str) -> None:
        """Record a binding found by other means (a wrapper, a project star import)."""
        rows = self._rows.setdefault(name, [])
        quals = self._quals.setdefault(name, [])
        i = bisect.bisect_right(rows, row)
        rows.insert(i, row)
        quals.insert(i, qual)
        if i == len(rows) - 1:
            self.final[name] = qual


def function_params(fn: ast.AST) -> List[str]:
    args = fn.args  # type: ignore[attr-defined]
    names = [a.arg for a in args.posonlyargs + args.args + args.kwonlyargs]
    if args.vararg:
        names.append(args.vararg.arg)
    if args.kwarg:
        names.append(args.kwarg.arg)
    return names


def qualified_name(expr: ast.AST, lookup) -> Optional[str]:
    """`ag.Variable` -> 'torch.autograd.Variable' when `lookup('ag') == 'torch.autograd'`."""
    if isinstance(expr, ast.Name):
        qual = lookup(expr.id)
        return None if (qual is None or qual.startswith("<")) else qual
    if isinstance(expr, ast.Attribute):
        base = qualified_name(expr.value, lookup)
        return f"{base}.{expr.attr}" if base else None
    return None


def is_variable(qual: Optional[str]) -> bool:
    return qual in _VARIABLE_ALIASES


def is_torch(qual: Optional[str]) -> bool:
    return qual is not None and (qual == "torch" or qual.startswith("torch."))
