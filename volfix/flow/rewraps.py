"""Calls that may rebuild a volatile value from its data, hidden from the taint walk.

In 0.3 `Variable(x.data)` made a fresh Variable that was not volatile, whatever `x` was
(SEMANTICS.md fact 10): a module whose `forward` does so (an image-captioning encoder:
`features = Variable(self.resnet(images).data)`, then `self.linear(features)`) trains its
later layers on a volatile input. The taint walk sees such a call as one that computes with
the value and keeps it volatile; where that reading says 0.3 raised at a `backward()`, legacy
code that ran is more likely to have gone through such a call. `hidden_rewraps` names the
calls of the statements a region would cover that may do so: a module of this file whose
`forward` reads `.data`, or an object whose code volfix cannot read (a parameter, another
file's class)."""
from __future__ import annotations

import ast
from typing import Callable, List, Optional

_RUNS = ("forward", "__call__")
# The keys of `ModuleIndex.scalar_returns` after a class's qualified name that say its `forward`
# rebuilds a value from `.data` (`_rebuilds`) or sets `.volatile = False` (`unvolatiles`): the
# project index links them from the class's file (`flow.returns.returns_facts`) for the files
# that call its instances (`rewrap_keys`).
REBUILDS = "().#rebuilds-from-data"
UNVOLATILES = "().#unvolatiles"


def hidden_rewraps(index, stmts: List[ast.stmt], certain: bool = False,
                   rebuilds: Optional[Callable[[ast.ClassDef, object], bool]] = None) -> List[ast.Call]:
    """The calls of an object (`encoder(images)`, `self.encoder(images)`) in `stmts` whose
    code may rebuild its result from `.data`, in order; with `certain`, only those of a module
    of this file whose `forward` does (`Variable(features.data)`; or whatever `rebuilds` says
    of the class: `unvolatiles`)."""
    judge = rebuilds or _rebuilds
    from .scalars import ScalarValues  # the rank and binding analyses import this module's package

    values = None
    out: List[ast.Call] = []
    for stmt in stmts:
        for node in ast.walk(stmt):
            if not isinstance(node, ast.Call) or not node.args or not _object(node.func) \
                    or index.qual(node.func) is not None or index.module_def(_name(node.func), node) is not None:
                continue
            values = values or ScalarValues(index)
            classes = values.instance_classes(node.func, node)
            if certain:
                key = UNVOLATILES if judge is unvolatiles else REBUILDS
                if classes and all(judge(c, index) if isinstance(c, ast.ClassDef)
                                   else isinstance(c, str) and bool(index.scalar_returns.get(c + key))
                                   for c in classes):
                    out.append(node)
            elif classes is None or any(not isinstance(c, ast.ClassDef) or _reads_data(c) for c in classes):
                out.append(node)
    return out


def rewrap_keys(index, call: ast.Call, instances) -> List[str]:
    """The keys `hidden_rewraps` reads for `call` when it calls an instance of another file's
    class (`encoder(images)`, `Encoder` imported; `instances`: `ScalarValues.instance_classes`),
    for `flow.returns.asked_returns`."""
    if not call.args or not _object(call.func) or index.qual(call.func) is not None \
            or isinstance(call.func, ast.Name) and not any(
                not isinstance(n.ctx, ast.Load) for n in index.names.get(call.func.id, ())) \
            or index.module_def(_name(call.func), call) is not None:
        return []  # (a name nothing assigns, such as `print`; an import, a def: no instance)
    return [c + key for c in instances(call.func, call) or () if isinstance(c, str) for key in (REBUILDS, UNVOLATILES)]


def rewrap_facts(cls: ast.ClassDef, index) -> List[str]:
    """The keys (after the class's name) of what its `forward` does to a value it is given, for
    `flow.returns.returns_facts`."""
    return [key for key, judge in ((REBUILDS, _rebuilds), (UNVOLATILES, unvolatiles)) if judge(cls, index)]


def _object(func: ast.AST) -> bool:
    """`encoder` or `self.encoder`: a name or an attribute of `self`, not a method of a value."""
    return isinstance(func, ast.Name) or (isinstance(func, ast.Attribute) and isinstance(func.value, ast.Name)
                                          and func.value.id == "self")


def _name(func: ast.AST) -> str:
    return func.id if isinstance(func, ast.Name) else ""


def _reads_data(cls: ast.ClassDef) -> bool:
    """The class's `forward` (or `__call__`) reads `.data` of something."""
    return any(isinstance(n, ast.Attribute) and n.attr == "data" for n in _run_nodes(cls))


def _rebuilds(cls: ast.ClassDef, index) -> bool:
    """The class's `forward` (or `__call__`) makes a Variable of something's `.data`."""
    return any(isinstance(n, ast.Call) and index.is_variable(n.func) and n.args
               and isinstance(n.args[0], ast.Attribute) and n.args[0].attr == "data" for n in _run_nodes(cls))


def unvolatiles(cls: ast.ClassDef, index) -> bool:
    """The class's `forward` (or `__call__`) makes a value plain again: `x.volatile = False`
    (Guided-Denoise's `orig_outputs[i].volatile = False`, under `if train:`)."""
    return any(isinstance(n, ast.Assign) and any(isinstance(t, ast.Attribute) and t.attr == "volatile"
                                                 for t in n.targets)
               and isinstance(n.value, ast.Constant) and n.value.value is False for n in _run_nodes(cls))


def _run_nodes(cls: ast.ClassDef):
    """Every node of the class's `forward` and `__call__`."""
    for s in cls.body:
        if isinstance(s, (ast.FunctionDef, ast.AsyncFunctionDef)) and s.name in _RUNS:
            yield from ast.walk(s)
