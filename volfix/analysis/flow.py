"""Taint analysis inside one scope (SPEC §2.2): which statements compute with a volatile value.

Flow-insensitive over names with a reachability approximation: a use is tainted when a
tainted definition of the name precedes it in the text, or both sit in the same loop
(loop-carried flow). Iterates to a fixpoint.
"""
from __future__ import annotations

import ast
from dataclasses import dataclass, field
from typing import Callable, Dict, Iterable, Iterator, List, Optional, Set

# Results that leave autograd: reading them is not computing with the tensor.
KILL_ATTRS = frozenset({"data", "shape", "volatile", "requires_grad", "is_cuda", "dtype", "device",
                        "grad_fn", "ndim", "is_leaf"})
KILL_METHODS = frozenset({"item", "tolist", "numpy", "size", "dim", "numel", "nelement",
                          "data_ptr", "get_device", "element_size", "type", "is_contiguous",
                          "register_hook", "detach"})
KILL_FUNCS = frozenset({"int", "float", "bool", "len", "str", "repr", "print", "isinstance",
                        "type", "id", "format", "hasattr", "getattr"})
MUTATORS = frozenset({"append", "extend", "insert", "add", "update", "appendleft", "put",
                      "setdefault"})
SCOPE_NODES = (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef, ast.Lambda)
LOOPS = (ast.For, ast.AsyncFor, ast.While)


def scope_body(scope: ast.AST) -> list:
    return scope.body if isinstance(scope.body, list) else []  # type: ignore[attr-defined]


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


def header_nodes(stmt: ast.stmt) -> List[ast.AST]:
    """The expressions a statement evaluates itself (not those of its nested statements)."""
    if isinstance(stmt, (ast.For, ast.AsyncFor)):
        return [stmt.target, stmt.iter]
    if isinstance(stmt, (ast.While, ast.If)):
        return [stmt.test]
    if isinstance(stmt, (ast.With, ast.AsyncWith)):
        return list(stmt.items)
    if isinstance(stmt, ast.Try) or (hasattr(ast, "TryStar") and isinstance(stmt, getattr(ast, "TryStar"))):
        return [h.type for h in stmt.handlers if h.type is not None]
    if isinstance(stmt, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)):
        return []
    return [stmt]


def walk_expr(node: ast.AST) -> Iterator[ast.AST]:
    """ast.walk restricted to one statement's own expressions (no nested statements/defs)."""
    stack = [node]
    while stack:
        cur = stack.pop()
        yield cur
        for child in ast.iter_child_nodes(cur):
            if not isinstance(child, ast.stmt):
                stack.append(child)


def target_names(target: ast.AST) -> Iterator[str]:
    if isinstance(target, ast.Name):
        yield target.id
    elif isinstance(target, (ast.Tuple, ast.List)):
        for elt in target.elts:
            yield from target_names(elt)
    elif isinstance(target, ast.Starred):
        yield from target_names(target.value)


def volatile_false_target(stmt: ast.stmt) -> Optional[str]:
    """`x.volatile = False` -> "x" (in 0.3 it un-volatiled x: the taint ends there)."""
    if (isinstance(stmt, ast.Assign) and len(stmt.targets) == 1
            and isinstance(stmt.targets[0], ast.Attribute) and stmt.targets[0].attr == "volatile"
            and isinstance(stmt.targets[0].value, ast.Name) and isinstance(stmt.value, ast.Constant)
            and stmt.value.value in (False, 0)):
        return stmt.targets[0].value.id
    return None


def describe(node: ast.AST) -> str:
    try:
        return ast.unparse(node)
    except Exception:  # pragma: no cover - unparse of exotic nodes
        return "?"


@dataclass
class Escape:
    what: str  # "`return`", "`yield`", "`self.priors`", ...
    line: int
    node: Optional[ast.AST] = None  # the attribute stored to
    followed: bool = False  # its consumers got their own regions (RegionPlanner)


@dataclass
class Taint:
    """Result of the analysis of one set of sources in one scope."""

    defs: Dict[str, List[ast.stmt]] = field(default_factory=dict)
    uses: List[ast.stmt] = field(default_factory=list)  # statements computing with taint
    escapes: List[Escape] = field(default_factory=list)


class ScopeFlow:
    """Taint propagation in one scope (function body or module)."""

    def __init__(self, scope: ast.AST, parents: Dict[ast.AST, ast.AST]):
        self.scope = scope
        self.parents = parents
        self.statements = list(iter_statements(scope_body(scope)))
        self.order = {id(s): i for i, s in enumerate(self.statements)}
        self._loops: Dict[int, List[ast.AST]] = {}
        self._defs: Optional[Dict[str, List[ast.stmt]]] = None
        self._nodes: Dict[int, List[ast.AST]] = {}
        self._binds: Dict[int, list] = {}
        self._kills: Dict[str, Set[int]] = {}

    # -- structure --------------------------------------------------------
    def loops_of(self, stmt: ast.stmt) -> List[ast.AST]:
        key = id(stmt)
        if key not in self._loops:
            loops, node = [], self.parents.get(stmt)
            while node is not None and node is not self.scope:
                if isinstance(node, LOOPS):
                    loops.append(node)
                node = self.parents.get(node)
            self._loops[key] = loops
        return self._loops[key]

    # -- taint ------------------------------------------------------------
    def analyse(self, is_source: Callable[[ast.AST], bool],
                seed: Optional[Dict[str, List[ast.stmt]]] = None) -> Taint:
        taint = Taint(defs={k: list(v) for k, v in (seed or {}).items()})
        changed = True
        rounds = 0
        while changed and rounds < 50:
            changed = False
            rounds += 1
            for stmt in self.statements:
                for names, value in self._bindings(stmt):
                    if value is not None and self.result_tainted(value, stmt, taint, is_source):
                        for name in names:
                            sites = taint.defs.setdefault(name, [])
                            if stmt not in sites:
                                sites.append(stmt)
                                changed = True
                for receiver in self._mutated_receivers(stmt, taint, is_source):
                    sites = taint.defs.setdefault(receiver, [])
                    if stmt not in sites:
                        sites.append(stmt)
                        changed = True
        for stmt in self.statements:
            if self.computes_with_taint(stmt, taint, is_source):
                taint.uses.append(stmt)
            self._collect_escapes(stmt, taint, is_source)
        return taint

    def _bindings(self, stmt: ast.stmt) -> list:
        key = id(stmt)
        found = self._binds.get(key)
        if found is None:
            found = list(self._compute_bindings(stmt))
            self._binds[key] = found
        return found

    def _compute_bindings(self, stmt: ast.stmt):
        if isinstance(stmt, ast.Assign):
            names = [n for t in stmt.targets for n in target_names(t)]
            subs = [t.value.id for t in stmt.targets
                    if isinstance(t, ast.Subscript) and isinstance(t.value, ast.Name)]
            yield names + subs, stmt.value
        elif isinstance(stmt, ast.AugAssign):
            target = stmt.target
            if isinstance(target, ast.Subscript) and isinstance(target.value, ast.Name):
                yield [target.value.id], stmt.value
            else:
                yield list(target_names(target)), stmt.value
        elif isinstance(stmt, ast.AnnAssign) and stmt.value is not None:
            yield list(target_names(stmt.target)), stmt.value
        elif isinstance(stmt, (ast.For, ast.AsyncFor)):
            yield list(target_names(stmt.target)), stmt.iter
        elif isinstance(stmt, (ast.With, ast.AsyncWith)):
            for item in stmt.items:
                if item.optional_vars is not None:
                    yield list(target_names(item.optional_vars)), item.context_expr
        for node in self._own_nodes(stmt) if not isinstance(stmt, SCOPE_NODES) else ():
            if isinstance(node, ast.NamedExpr):
                yield [node.target.id], node.value

    def _mutated_receivers(self, stmt, taint, is_source) -> Iterator[str]:
        for node in self._own_nodes(stmt):
            if (isinstance(node, ast.Call) and isinstance(node.func, ast.Attribute)
                    and node.func.attr in MUTATORS and isinstance(node.func.value, ast.Name)
                    and any(self.result_tainted(a, stmt, taint, is_source) for a in node.args)):
                yield node.func.value.id

    def _own_nodes(self, stmt: ast.stmt) -> List[ast.AST]:
        """The statement's own expression nodes, computed once per statement."""
        key = id(stmt)
        nodes = self._nodes.get(key)
        if nodes is None:
            nodes = [n for head in header_nodes(stmt) for n in walk_expr(head)]
            self._nodes[key] = nodes
        return nodes

    def name_tainted(self, name: str, at: ast.stmt, taint: Taint) -> bool:
        """Is `name` tainted when `at` runs? The nearest definition before `at` decides
        (a plain reassignment or `name.volatile = False` ends the taint); conditional
        definitions are only "may" definitions, so the scan goes on past them; with no
        definite one, a tainted definition later in an enclosing loop reaches (loop-carried)."""
        tainted = taint.defs.get(name)
        if not tainted:
            return False
        tainted_ids = {id(d) for d in tainted}
        here = self.order.get(id(at), -1)
        known = {id(d) for d in self.definitions(name)}
        candidates = self.definitions(name) + [d for d in tainted if id(d) not in known]
        candidates.sort(key=lambda d: self.order.get(id(d), -1))
        for d in reversed(candidates):
            pos = self.order.get(id(d), -1)
            if pos >= here or self.exclusive(d, at):
                continue
            if id(d) in tainted_ids:
                return True
            if id(d) in self._kills.get(name, ()) and self.unconditional(d, at):
                return False
        at_loops = {id(l) for l in self.loops_of(at)}
        return any(self.order.get(id(d), -1) >= here and any(id(l) in at_loops for l in self.loops_of(d))
                   for d in tainted)

    def definitions(self, name: str) -> List[ast.stmt]:
        if self._defs is None:
            self._defs, self._kills = {}, {}
            for stmt in self.statements:
                for names, _value in self._bindings(stmt):
                    killing = not isinstance(stmt, ast.AugAssign)
                    for n in names:
                        self._defs.setdefault(n, []).append(stmt)
                        if killing and not self._is_subscript_target(stmt, n):
                            self._kills.setdefault(n, set()).add(id(stmt))
                for node in self._own_nodes(stmt):
                    if (isinstance(node, ast.Call) and isinstance(node.func, ast.Attribute)
                            and node.func.attr in MUTATORS and isinstance(node.func.value, ast.Name)):
                        self._defs.setdefault(node.func.value.id, []).append(stmt)
                unvolatiled = volatile_false_target(stmt)
                if unvolatiled:
                    self._defs.setdefault(unvolatiled, []).append(stmt)
                    self._kills.setdefault(unvolatiled, set()).add(id(stmt))
            for defs in self._defs.values():
                defs.sort(key=lambda d: self.order[id(d)])
        return self._defs.get(name, [])

    @staticmethod
    def _is_subscript_target(stmt: ast.stmt, name: str) -> bool:
        targets = stmt.targets if isinstance(stmt, ast.Assign) else []
        return any(isinstance(t, ast.Subscript) and isinstance(t.value, ast.Name) and t.value.id == name
                   for t in targets)

    def _branch_path(self, stmt: ast.stmt) -> Dict[int, str]:
        """For each enclosing `if`: which branch (`body`/`orelse`) holds `stmt`."""
        out: Dict[int, str] = {}
        node = stmt
        while node is not None and node is not self.scope:
            parent = self.parents.get(node)
            if isinstance(parent, ast.If):
                if any(x is node for x in parent.body):
                    out[id(parent)] = "body"
                elif any(x is node for x in parent.orelse):
                    out[id(parent)] = "orelse"
            node = parent
        return out

    def exclusive(self, d: ast.stmt, at: ast.stmt) -> bool:
        """`d` and `at` sit in different branches of the same `if`: one never reaches the other
        (within one pass; loops are handled by the loop-carried check)."""
        a, b = self._branch_path(d), self._branch_path(at)
        return any(b.get(k, v) != v for k, v in a.items())

    def unconditional(self, d: ast.stmt, at: ast.stmt) -> bool:
        """Does `d` surely run before `at` whenever `at` runs (same block as one of at's ancestors)?"""
        home = self.parents.get(d)
        node = at
        while node is not None and node is not self.scope:
            parent = self.parents.get(node)
            if parent is home:
                for name in ("body", "orelse", "finalbody"):
                    block = getattr(parent, name, None)
                    if isinstance(block, list) and any(x is d for x in block) and any(x is node for x in block):
                        return True
                return False
            node = parent
        return False

    def result_tainted(self, expr: ast.AST, at: ast.stmt, taint: Taint, is_source) -> bool:
        """Does the value of `expr` carry volatility (a tensor computed from a tainted value)?"""
        if is_source(expr):
            return True
        if isinstance(expr, ast.Name):
            return isinstance(expr.ctx, ast.Load) and self.name_tainted(expr.id, at, taint)
        if isinstance(expr, ast.Attribute):
            if expr.attr in KILL_ATTRS:
                return False
            return self.result_tainted(expr.value, at, taint, is_source)
        if isinstance(expr, ast.Call):
            func = expr.func
            if isinstance(func, ast.Attribute) and func.attr in KILL_METHODS:
                return False
            if isinstance(func, ast.Name) and func.id in KILL_FUNCS:
                return False
        if isinstance(expr, (ast.Lambda, ast.Constant)):
            return False
        return any(self.result_tainted(c, at, taint, is_source) for c in ast.iter_child_nodes(expr)
                   if not isinstance(c, (ast.stmt, ast.expr_context)))

    def computes_with_taint(self, stmt: ast.stmt, taint: Taint, is_source) -> bool:
        for node in self._own_nodes(stmt):
            if is_source(node):
                if isinstance(node, ast.Attribute) and self._inspection(node):
                    continue  # a volatile attribute only moved (`return (loc, self.priors)`)
                return True
            if (isinstance(node, ast.Name) and isinstance(node.ctx, ast.Load)
                    and self.name_tainted(node.id, stmt, taint) and not self._inspection(node)):
                return True
        return False

    def _inspection(self, node: ast.AST) -> bool:
        """A read that does not compute with the tensor: `x.data`, `x.size()`, `len(x)`, ...
        or only moves it (`return x`, `y = x`, `out.append(x)`): no operation is recorded there."""
        parent = self.parents.get(node)
        holder = parent
        while isinstance(holder, (ast.Tuple, ast.List, ast.Starred)):
            holder = self.parents.get(holder)
        if isinstance(holder, (ast.Return, ast.Yield, ast.YieldFrom, ast.Assign, ast.AnnAssign)) \
                and getattr(holder, "value", None) is not None \
                and (holder.value is node or holder.value is parent or holder.value is self._tuple_root(node)):
            return True
        if isinstance(holder, ast.Call) and isinstance(holder.func, ast.Attribute) \
                and holder.func.attr in MUTATORS and any(a is node or a is parent for a in holder.args):
            return True
        if isinstance(parent, ast.Attribute) and parent.value is node:
            if parent.attr in KILL_ATTRS:
                return True
            grand = self.parents.get(parent)
            if parent.attr in KILL_METHODS and isinstance(grand, ast.Call) and grand.func is parent:
                return True
            return False
        if isinstance(parent, ast.Call) and node in parent.args:
            return isinstance(parent.func, ast.Name) and parent.func.id in KILL_FUNCS
        if isinstance(parent, ast.Compare) and all(isinstance(op, (ast.Is, ast.IsNot)) for op in parent.ops):
            return True  # `out is None`: identity, not arithmetic
        return False

    def _tuple_root(self, node: ast.AST) -> ast.AST:
        cur = node
        while isinstance(self.parents.get(cur), (ast.Tuple, ast.List, ast.Starred)):
            cur = self.parents[cur]
        return cur

    def _collect_escapes(self, stmt: ast.stmt, taint: Taint, is_source) -> None:
        def tainted(e):
            return e is not None and self.result_tainted(e, stmt, taint, is_source)

        if isinstance(stmt, ast.Return) and tainted(stmt.value):
            taint.escapes.append(Escape("`return`", stmt.lineno))
        if isinstance(stmt, (ast.Assign, ast.AugAssign, ast.AnnAssign)):
            targets = stmt.targets if isinstance(stmt, ast.Assign) else [stmt.target]
            if tainted(stmt.value):
                for t in targets:
                    for sub in ast.walk(t):
                        if isinstance(sub, ast.Attribute) and isinstance(sub.ctx, ast.Store):
                            taint.escapes.append(Escape(f"`{describe(sub)}`", stmt.lineno, sub))
                        elif (isinstance(sub, ast.Subscript) and isinstance(sub.ctx, ast.Store)
                              and not isinstance(sub.value, ast.Name)):
                            taint.escapes.append(Escape(f"`{describe(sub.value)}[...]`", stmt.lineno))
        for node in self._own_nodes(stmt):
            if isinstance(node, (ast.Yield, ast.YieldFrom)) and tainted(node.value):
                taint.escapes.append(Escape("`yield`", stmt.lineno))
            elif (isinstance(node, ast.Call) and isinstance(node.func, ast.Attribute)
                  and node.func.attr in MUTATORS and not isinstance(node.func.value, ast.Name)
                  and any(tainted(a) for a in node.args)):
                taint.escapes.append(Escape(f"`{describe(node.func.value)}`", stmt.lineno))
        if isinstance(stmt, (ast.Global, ast.Nonlocal)):
            for name in stmt.names:
                if name in taint.defs:
                    taint.escapes.append(Escape(f"the global `{name}`", stmt.lineno))

    def bound_names(self, stmt: ast.stmt) -> Set[str]:
        names: Set[str] = set()
        for ns, _ in self._bindings(stmt):
            names.update(ns)
        return names

    def reads_name(self, stmt: ast.stmt, names: Set[str]) -> Optional[str]:
        for node in self._own_nodes(stmt):
            if isinstance(node, ast.Name) and isinstance(node.ctx, ast.Load) and node.id in names:
                return node.id
        return None
