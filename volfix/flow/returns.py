"""What a module's functions, classes' instances and methods return, for the files of the
project that call them (VF401 across files).

`returns_facts` computes it on the defining file (cached by its content in the project index);
`asked_returns` tells which of those facts a file's `x.data[0]` and `x[0]` reads may ask, so
that only those are linked. The reader finds them in `ModuleIndex.scalar_returns`, by the
qualified name its call spells (`flow.scalars.ScalarValues.every_return`).
"""
from __future__ import annotations

import ast
from typing import Dict, List, Set, Tuple

from .scalar_callees import (AUTOGRAD_FUNCTION, INSTANCE_CALL, INSTANCE_METHOD, ITEM, ITEM_1D, LIST, MAX_ITEMS,
                             ONE, TRAINS, VARIABLE, instance_call, own_def, trains_key)
from .rewraps import rewrap_facts, rewrap_keys
from .scalars import ScalarValues
from .shapes import is_zero, own_returns
from .trains import TrainingCalls, training_keys


def returns_shape(values: ScalarValues, fn: ast.AST) -> Tuple[str, ...]:
    """What every `return` of `fn` is (`ONE`, `LIST`, `VARIABLE`, `ITEM` + k), for the
    files that call it (`returns_facts`)."""
    out = []
    if values.def_returns(fn, "", set(), lambda v, inner: values.one_element(v, v, 1, set(inner))):
        out.append(ONE)
    elif isinstance(fn, ast.FunctionDef):
        for shape in (values.defaults_shape(fn), values.made_shape(fn)):  # `ssim(a, b)`, `SSIM()(a, b)`
            if shape is not None:
                out.append(shape)
    if values.def_returns(fn, "[] ", set(), lambda v, inner: values.elements(v, v, 1, inner)):
        out.append(LIST)
    if values.def_returns(fn, "", set(), lambda v, inner: values.variable(v, v, 1, inner)):
        out.append(VARIABLE)
    returns = [r.value for r in own_returns(fn)]
    if returns and all(isinstance(v, ast.Tuple) for v in returns):
        for k in range(min(MAX_ITEMS, *(len(v.elts) for v in returns))):  # type: ignore[union-attr]
            if values.def_returns(fn, f"[{k}] ", set(), lambda v, inner: values.item(v, (k,), v, 1, set(inner))):
                out.append(f"{ITEM}{k}")
            if values.def_returns(fn, f"[{k}] 1-d ", set(),
                                lambda v, inner: values.item(v, (k,), v, 1, set(inner), values.one_dim)):
                out.append(f"{ITEM_1D}{k}")
    return tuple(out)


def returns_facts(index) -> Dict[str, Tuple[str, ...]]:
    """What the module's functions, its classes' instance calls and their methods return, for
    the files that call them (the project index's per-file facts): `name`, `Cls()()`,
    `Cls().method` -> `ScalarValues.returns_shape`, those with a shape only. A name the module
    binds twice is left out, as `project_callee` leaves it."""
    values = ScalarValues(index)
    trainer = TrainingCalls(index)
    statements = [s for s in index.module_statements if isinstance(s, (ast.FunctionDef, ast.ClassDef))]
    counts: Dict[str, int] = {}
    for stmt in statements:
        counts[stmt.name] = counts.get(stmt.name, 0) + 1
    assigned = index.assigned_values(index.tree)
    out: Dict[str, Tuple[str, ...]] = {}
    for stmt in statements:
        if counts[stmt.name] != 1 or assigned.get(stmt.name):
            continue
        if isinstance(stmt, ast.FunctionDef):
            defs = [(stmt.name, stmt)]
        else:
            defs = [(stmt.name + INSTANCE_METHOD + f.name, f) for f in stmt.body
                    if isinstance(f, ast.FunctionDef) and own_def(stmt, f.name) is f and not f.decorator_list]
            call = instance_call(index, stmt)
            if call is not None:
                defs.append((stmt.name + INSTANCE_CALL, call))
        if isinstance(stmt, ast.ClassDef):
            for key in rewrap_facts(stmt, index):
                out[stmt.name + key] = ("yes",)
        for key, fn in defs:
            shape = returns_shape(values, fn)
            if shape:
                out[key] = shape
            trains = trainer.function_trains(fn, frozenset(), 1)
            if trains is not None and not key.endswith(INSTANCE_CALL):
                out[trains_key(key)] = (TRAINS, trains)
    return out


class _Asked(dict):
    """`ModuleIndex.scalar_returns` while `asked_returns` runs: every key holds every shape,
    so the queries go as far as any answer could take them, and each key asked is kept."""

    def __init__(self) -> None:
        super().__init__()
        self.asked: Set[str] = set()

    def __contains__(self, key) -> bool:
        self.asked.add(key)
        return True

    def get(self, key, default=None):
        self.asked.add(key)
        return _EVERY_SHAPE


class _EveryShape:
    def __contains__(self, shape) -> bool:
        return True

    def __iter__(self):
        return iter(())  # the parameters a fact names are not asked for: `ONE` holds already


_EVERY_SHAPE = _EveryShape()


def asked_returns(index, reads: bool = True, regions: bool = False) -> List[str]:
    """The keys of `ModuleIndex.scalar_returns` (functions, instance calls and methods of other
    files, by qualified name) VF401's questions about this module's `x.data[0]` and `x[0]`
    may read (`reads`: the module has such reads), VF501's about the classes it calls as
    `Fn(...)(...)`, and, for a module whose `volatile=` sources get regions (`regions`), whether
    the other files' functions and methods it calls train (`flow.trains.training_keys`): the
    project index links only those."""
    saved, index.scalar_returns = index.scalar_returns, _Asked()
    try:
        for call in made_callables(index):
            qual = index.qual(call.func.func)
            if qual is not None and not qual.startswith("torch."):
                index.scalar_returns.get(qual + AUTOGRAD_FUNCTION)
        if regions:
            instances = ScalarValues(index).instance_classes
            for calls in index.calls.values():
                for call in calls:
                    for key in training_keys(index, call, instances) + rewrap_keys(index, call, instances):
                        index.scalar_returns.get(key)
        if not reads:
            return sorted(index.scalar_returns.asked)
        values = ScalarValues(index)
        for node in index.by_type.get(ast.Subscript, ()):
            if not (isinstance(node.ctx, ast.Load) and is_zero(node.slice)):
                continue
            subject = node.value
            if isinstance(subject, ast.Attribute) and subject.attr == "data":
                subject = subject.value
            values.one_element(subject, node)
            values.variable(subject, node)
            if isinstance(subject, ast.Call):  # `crit(out, y)`: is `crit` made outside the project?
                values.known_callee(subject.func, node)
        return sorted(index.scalar_returns.asked)
    finally:
        index.scalar_returns = saved


def made_callables(index) -> List[ast.Call]:
    """The calls of a call's result, `Fn(settings)(inputs)`, whose first call is of a name or
    an attribute (a class of another module, maybe an autograd Function)."""
    return [outer for calls in index.calls.values() for outer in calls
            if isinstance(outer.func, ast.Call) and isinstance(outer.func.func, (ast.Name, ast.Attribute))]
