"""A volatile flag an instance got from its constructor (SPEC §2.6: flags stored by a
constructor and read later).

    class Iterator(object):
        def __init__(self, data, train=True):
            self.train = train
        def __iter__(self):
            for src in self.data:
                yield Variable(src, volatile=not self.train)

Each instance's flag is what its constructor call passed: where an instance made in this file
hands the value out (the loop over `Iterator(data, train=False)`, or the calls of a method
returning it), the value is computed with, and that is where its region goes. The follower
(`volfix.flow.follow`) turns those places into sources; this module finds them.
"""
from __future__ import annotations

import ast
from typing import List, Optional, Set, Tuple

from ..syntax import names as nm
from ..syntax.index import FUNCTIONS, ModuleIndex
from .calls import argument_for, call_sites


def constructor_flag(index: ModuleIndex, scope: ast.AST, flag: ast.AST) -> Optional[Tuple[str, bool, ast.AST]]:
    """(parameter, negated, `__init__`) for `volatile=not self.train` in a method of a plain
    module-level class whose `__init__` stores `self.train = train` from its own parameter,
    when nothing else in the file stores a `.train` attribute on an instance of it."""
    cls = index.method_class(scope) if isinstance(scope, FUNCTIONS) else None
    if cls is None or not scope.args.args:  # type: ignore[attr-defined]
        return None
    if any(not (isinstance(b, ast.Name) and b.id == "object") for b in cls.bases) or cls.keywords \
            or not isinstance(index.parents.get(cls), ast.Module):
        return None  # a base class may set the attribute too
    node, negated = flag, False
    if isinstance(node, ast.UnaryOp) and isinstance(node.op, ast.Not):
        node, negated = node.operand, True
    me = scope.args.args[0].arg  # type: ignore[attr-defined]
    if not (isinstance(node, ast.Attribute) and isinstance(node.value, ast.Name) and node.value.id == me):
        return None
    init = next((f for f in cls.body if isinstance(f, ast.FunctionDef) and f.name == "__init__"), None)
    if init is None or not init.args.args:
        return None
    stores = [a for a in index.attributes.get(node.attr, ()) if not isinstance(a.ctx, ast.Load)
              and not _own_attribute_of_another_class(index, a, cls)]
    if len(stores) != 1 or index.function_of(stores[0]) is not init:
        return None
    store = stores[0]
    stmt = index.statement_of(store)
    if not (isinstance(stmt, ast.Assign) and stmt.targets == [store] and isinstance(store.value, ast.Name)
            and store.value.id == init.args.args[0].arg and isinstance(stmt.value, ast.Name)
            and stmt.value.id in nm.function_params(init) and index.parents.get(stmt) is init
            and not _rebound(index, stmt.value.id, init)):
        return None
    if any(isinstance(n, ast.Call) and isinstance(n.func, ast.Name) and n.func.id in ("setattr", "delattr")
           for n in ast.walk(index.tree)):
        return None
    return stmt.value.id, negated, init


def _rebound(index: ModuleIndex, name: str, fn: ast.AST) -> bool:
    return any(isinstance(n.ctx, ast.Store) and index.function_of(n) is fn for n in index.names.get(name, ()))


def _own_attribute_of_another_class(index: ModuleIndex, store: ast.Attribute, cls: ast.ClassDef) -> bool:
    """`self.train = ...` in a method of another class of the file: that class's own
    attribute, not one of `cls`'s instances."""
    method = index.function_of(store)
    owner = index.method_class(method) if isinstance(method, FUNCTIONS) else None
    return owner is not None and owner is not cls and bool(method.args.args) \
        and isinstance(store.value, ast.Name) and store.value.id == method.args.args[0].arg


def instance_sites(index: ModuleIndex, fn: ast.AST, init: ast.AST,
                   param: str) -> Tuple[List[Tuple[ast.AST, Optional[ast.AST]]], List[str]]:
    """([(where an instance hands `fn`'s value out, what its constructor passed for `param`)],
    what cannot be followed). A place is the iterable of a `for` or a comprehension (for
    `__iter__`) or a call of the method. Not followed: a constructor call whose instance goes
    anywhere else, a subclass, the class passed as a value, a call of the method on some other
    object."""
    cls = index.method_class(fn)
    sites: List[Tuple[ast.AST, Optional[ast.AST]]] = []
    unresolved: List[str] = []
    if any(isinstance(n, ast.ClassDef) and any(isinstance(b, ast.Name) and b.id == cls.name for b in n.bases)
           for n in ast.walk(index.tree)):
        unresolved.append(f"a subclass of `{cls.name}`")
    ctors, _ = call_sites(index, init)
    found: Set[int] = set()
    for ctor in ctors:
        uses = instance_uses(index, ctor, fn)
        arg, known = argument_for(index, ctor, init, param)
        if uses is None or not known:
            unresolved.append(f"line {ctor.lineno}")
            continue
        found.update(id(site) for site in uses)
        sites.extend((site, arg) for site in uses)
    for name in index.names.get(cls.name, ()):
        parent = index.parents.get(name)
        if isinstance(name.ctx, ast.Load) and not (isinstance(parent, ast.Call) and parent.func is name):
            unresolved.append(f"line {name.lineno}")  # the class passed as a value
    if fn.name != "__iter__":  # type: ignore[attr-defined]
        for attr in index.attributes.get(fn.name, ()):  # type: ignore[attr-defined]
            call = index.parents.get(attr)
            if isinstance(call, ast.Call) and call.func is attr and id(call) not in found:
                unresolved.append(f"line {call.lineno}")  # another object's, or self.<method>()
    return sites, unresolved


def instance_uses(index: ModuleIndex, ctor: ast.Call, fn: ast.AST) -> Optional[List[ast.AST]]:
    """Where the instance `ctor` makes hands out `fn`'s value: directly (`for b in
    Loader(...)`, `Field(...).process(arr)`), or through a name bound once to the instance and
    used only that way. None when it goes anywhere else."""
    name = fn.name  # type: ignore[attr-defined]

    def handing_out(node: ast.AST) -> bool:
        parent = index.parents.get(node)
        if name == "__iter__":
            return isinstance(parent, (ast.For, ast.AsyncFor, ast.comprehension)) and parent.iter is node
        call = index.parents.get(parent)
        return isinstance(parent, ast.Attribute) and parent.attr == name and isinstance(call, ast.Call) \
            and call.func is parent

    def site(node: ast.AST) -> ast.AST:
        return node if name == "__iter__" else index.parents[index.parents[node]]

    if handing_out(ctor):
        return [site(ctor)]
    stmt = index.parents.get(ctor)
    if not (isinstance(stmt, ast.Assign) and len(stmt.targets) == 1 and isinstance(stmt.targets[0], ast.Name)):
        return None
    var = stmt.targets[0].id
    scope = index.function_of(stmt)
    seen = [n for n in index.names.get(var, ()) if index.function_of(n) is scope]
    stores = [n for n in seen if not isinstance(n.ctx, ast.Load)]
    reads = [n for n in seen if isinstance(n.ctx, ast.Load)]
    if len(stores) != 1 or any(not handing_out(n) or n.lineno < stmt.lineno for n in reads) \
            or any(isinstance(n, (ast.Global, ast.Nonlocal)) and var in n.names for n in ast.walk(scope)):
        return None
    return [site(n) for n in reads]
