"""Which calls train (SPEC §2.3): `loss.backward()`, `torch.autograd.grad(...)`, an
optimizer's `step()`, or a call of a function of this file that does, looked into
transitively (`train_epoch(model, loader, opt)` next to a validation loop). A region never
covers such a call.

Callees are found by name: a module-level function, or a method of a class of this file
(`self.train_step(...)`; `trainer.fit(...)` is looked up on every class that defines `fit`,
since a region must not cover any of them). Framework method names (`forward`, `step`, ...)
are not followed.

A call's literal arguments decide the callee's branches on them: `train(..., is_validate=True)`
does not train when its `loss.backward()` sits under `if not is_validate:`; so do they in the
callees that get such a parameter passed on by name (`run_one_epoch(loader, training=False)`
calling `self.make_step(data, training)`, whose `backward()` runs `if training:`).
"""
from __future__ import annotations

import ast
from typing import Dict, FrozenSet, List, Optional, Tuple

from ..syntax import names as nm
from ..syntax.index import FUNCTIONS, ModuleIndex
from .calls import FRAMEWORK_METHODS, argument_for
from .grad_mode import literal_truth
from .scalar_callees import INSTANCE_METHOD, TRAINS, trains_key
from .values import describe, header_nodes, walk_expr

MAX_DEPTH = 4
Training = Tuple[str, int]  # (what is shown: "`loss.backward()`", line of the call in the region)
Known = FrozenSet[Tuple[str, bool]]  # parameters a call fixes to a literal truth value


class TrainingCalls:
    def __init__(self, index: ModuleIndex):
        self.index = index
        self._functions: Optional[Dict[str, List[ast.AST]]] = None
        self._methods: Optional[Dict[str, List[ast.AST]]] = None
        self._memo: Dict[Tuple[int, Known], Optional[str]] = {}
        self._by_statement: Dict[int, Optional[Training]] = {}  # id -> its first training call
        self._volatile_makers: Dict[int, bool] = {}  # id -> `makes_volatile([stmt])`
        self._elsewhere: Optional[bool] = None  # the project index told of other files' training
        self._instances = None  # `ScalarValues.instance_classes`, for `elsewhere`

    # ------------------------------------------------------------------ statements
    def in_statements(self, stmts) -> Optional[Training]:
        """The first training call in the statements (nested defs and classes are skipped).
        Remembered per statement: the regions of a long script ask it of the same statements
        for every source."""
        memo = self._by_statement
        for stmt in stmts:
            key = id(stmt)
            if key not in memo:
                memo[key] = self._first_training(stmt)
            if memo[key] is not None:
                return memo[key]
        return None

    def _first_training(self, stmt) -> Optional[Training]:
        for call in _calls([stmt], frozenset()):
            found = self.of_call(call)
            if found is not None:
                return found, call.lineno
        return None

    def of_call(self, call: ast.Call, depth: int = 0) -> Optional[str]:
        """What makes this call train, shown to the user, or None."""
        direct = self.direct(call)
        if direct is not None:
            return direct
        if depth >= MAX_DEPTH:
            return None
        for fn in self.callees(call):
            inner = self.function_trains(fn, self.known(call, fn), depth + 1)
            if inner is not None:
                return f"`{fn.name}()`, which calls {inner}"  # type: ignore[attr-defined]
        return self.elsewhere(call)

    def elsewhere(self, call: ast.Call) -> Optional[str]:
        """A function or a method of another file of the project that trains (the project
        index's fact, `flow.returns.returns_facts`): `train_step(G, opt, z)` imported from
        `trainer`, `model.optimize_parameters(z)` of an imported class's instance."""
        facts = self.index.scalar_returns
        if self._elsewhere is None:
            self._elsewhere = any(key.endswith(TRAINS) for key in facts)
        if not self._elsewhere:
            return None
        if self._instances is None:
            from .scalars import ScalarValues  # the one-element values' engine, only when facts need it
            self._instances = ScalarValues(self.index).instance_classes
        for key in training_keys(self.index, call, self._instances):
            found = facts.get(key)
            if found and found[0] == TRAINS:
                return f"`{describe(call.func)}()`, which calls {found[1]} in `{key.partition(INSTANCE_METHOD)[0]}`"
        return None

    def direct(self, call: ast.Call) -> Optional[str]:
        func = call.func
        if isinstance(func, ast.Attribute) and func.attr == "backward":
            return f"`{describe(func)}()`"
        if self.index.qual(func) == "torch.autograd.grad":
            return f"`{describe(func)}()`"
        if isinstance(func, ast.Attribute) and func.attr == "step" and not call.args and not call.keywords:
            return f"`{describe(func)}()`"
        return None

    def function_trains(self, fn: ast.AST, known: Known, depth: int) -> Optional[str]:
        key = (id(fn), known)
        if key in self._memo:
            return self._memo[key]
        self._memo[key] = None  # recursion: not (yet) known to train
        found = None
        forwarded = _unbound(fn, known)
        for call in _calls(fn.body, known):  # type: ignore[attr-defined]
            what = self.direct(call)
            if what is None and depth < MAX_DEPTH:
                for callee in self.callees(call):
                    if self.function_trains(callee, self.known(call, callee, forwarded), depth + 1) is not None:
                        what = f"`{callee.name}()`"  # type: ignore[attr-defined]
                        break
            if what is not None:
                found = f"{what} (line {call.lineno})"
                break
        self._memo[key] = found
        return found

    def known(self, call: ast.Call, fn: ast.AST, forwarded: Optional[Dict[str, bool]] = None) -> Known:
        """The callee's parameters this call sets to a literal truth value (or its default),
        or to a parameter of the caller that its own call fixed (`forwarded`: `run_one_epoch(
        loader, training=False)` calling `self.make_step(data, training)`)."""
        out = []
        args = fn.args  # type: ignore[attr-defined]
        for param in [a.arg for a in args.posonlyargs + args.args + args.kwonlyargs]:
            value, ok = argument_for(self.index, call, fn, param, named_dicts=True)
            if ok and forwarded and isinstance(value, ast.Name) and value.id in forwarded:
                out.append((param, forwarded[value.id]))
                continue
            truth = literal_truth(value) if ok and value is not None else None
            if truth is None and ok and isinstance(value, ast.Constant) and value.value is None:
                truth = False
            if truth is not None:
                out.append((param, truth))
        return frozenset(out)

    def makes_volatile(self, stmts) -> bool:
        """Does a call in the statements reach a function of this file that makes its values
        volatile itself (`volatile=True` in its body: `create_labels()` wrapping each label)?
        In 0.3 its result was volatile, so a region may hold the call. Remembered per
        statement, as `in_statements`."""
        memo = self._volatile_makers
        for stmt in stmts:
            key = id(stmt)
            if key not in memo:
                memo[key] = self._makes_volatile([stmt])
            if memo[key]:
                return True
        return False

    def _makes_volatile(self, stmts) -> bool:
        for call in _calls(stmts, frozenset()):
            for fn in self.callees(call):
                for inner in _calls(fn.body, frozenset()):  # type: ignore[attr-defined]
                    if any(k.arg == "volatile" and literal_truth(k.value) for k in inner.keywords):
                        return True
        return False

    # ------------------------------------------------------------------ callees
    def callees(self, call: ast.Call) -> List[ast.AST]:
        func = call.func
        if isinstance(func, ast.Name):
            if self.index.qual(func) not in (None, func.id):
                return []  # imported: not defined here
            return self.functions().get(func.id, [])
        if isinstance(func, ast.Attribute) and func.attr not in FRAMEWORK_METHODS \
                and not (func.attr.startswith("__") and func.attr.endswith("__")):
            methods = self.methods().get(func.attr, [])
            if isinstance(func.value, ast.Name) and func.value.id == "self":
                owner = self._class_of(call)
                own = [m for m in methods if self.index.method_class(m) is owner]
                return own or methods
            return methods
        return []

    def _class_of(self, node: ast.AST) -> Optional[ast.ClassDef]:
        fn = self.index.function_of(node)
        return self.index.method_class(fn) if isinstance(fn, FUNCTIONS) else None

    def functions(self) -> Dict[str, List[ast.AST]]:
        if self._functions is None:
            self._functions = {}
            for stmt in self.index.tree.body:
                for fn in _defs(stmt):
                    self._functions.setdefault(fn.name, []).append(fn)
        return self._functions

    def methods(self) -> Dict[str, List[ast.AST]]:
        """Method name -> the defs of that name in class bodies (`_defs` of each statement), the
        classes in `ast.walk` order (breadth first), each class's defs in source order. Read
        from the index's defs (in source order): a walk of the whole tree cost as much as
        building the index, once per analysis."""
        if self._methods is None:
            self._methods = {}
            parents = self.index.parents
            by_class: Dict[int, Tuple[int, int, List[ast.AST]]] = {}  # id -> (depth, first seen, defs)
            for fn in self.index.functions:
                owner = _method_owner(fn, parents)
                if owner is None:
                    continue
                found = by_class.get(id(owner))
                if found is None:
                    depth, node = 0, owner
                    while node in parents:
                        depth, node = depth + 1, parents[node]
                    found = by_class[id(owner)] = (depth, len(by_class), [])
                found[2].append(fn)
            # Breadth first: by depth, then in source order (for a tree, the order of a level).
            for _, _, defs in sorted(by_class.values(), key=lambda c: c[:2]):
                for fn in defs:
                    self._methods.setdefault(fn.name, []).append(fn)  # type: ignore[attr-defined]
        return self._methods


def _unbound(fn: ast.AST, known: Known) -> Dict[str, bool]:
    """The `known` parameters `fn` never assigns again: what it passes on by name."""
    stored = {n.id for n in ast.walk(fn) if isinstance(n, ast.Name) and not isinstance(n.ctx, ast.Load)}
    return {name: truth for name, truth in known if name not in stored}


def _calls(stmts, known: Known):
    """The calls the statements make themselves, in order, skipping nested defs and classes
    and the branches of `if` statements that `known` parameters decide against."""
    values = dict(known)
    for stmt in stmts:
        if not isinstance(stmt, ast.stmt) or isinstance(stmt, FUNCTIONS + (ast.ClassDef,)):
            continue
        for head in header_nodes(stmt):
            for node in walk_expr(head):
                if isinstance(node, ast.Call):
                    yield node
        if isinstance(stmt, ast.If):
            truth = _decided(stmt.test, values)
            if truth is not False:
                yield from _calls(stmt.body, known)
            if truth is not True:
                yield from _calls(stmt.orelse, known)
            continue
        for name in ("body", "orelse", "finalbody"):
            sub = getattr(stmt, name, None)
            if isinstance(sub, list):
                yield from _calls(sub, known)
        for handler in getattr(stmt, "handlers", None) or ():
            yield from _calls(handler.body, known)
        for case in getattr(stmt, "cases", None) or ():
            yield from _calls(case.body, known)


def _decided(test: ast.AST, values: Dict[str, bool]) -> Optional[bool]:
    """The truth of `flag`, `not flag`, `flag is True` ... when `values` fixes `flag`."""
    if isinstance(test, ast.Name):
        return values.get(test.id)
    if isinstance(test, ast.UnaryOp) and isinstance(test.op, ast.Not):
        inner = _decided(test.operand, values)
        return None if inner is None else not inner
    if isinstance(test, ast.BoolOp):  # `if not is_validate and args.fp16:`
        parts = [_decided(v, values) for v in test.values]
        stop = isinstance(test.op, ast.Or)  # a true part decides `or`, a false one `and`
        if stop in parts:
            return stop
        return (not stop) if all(p is not None for p in parts) else None
    if isinstance(test, ast.Compare) and len(test.ops) == 1 and isinstance(test.left, ast.Name) \
            and isinstance(test.ops[0], (ast.Is, ast.Eq, ast.IsNot, ast.NotEq)):
        value = values.get(test.left.id)
        other = literal_truth(test.comparators[0])
        if value is None or other is None:
            return None
        same = value == other
        return same if isinstance(test.ops[0], (ast.Is, ast.Eq)) else not same
    return None


def _method_owner(fn: ast.AST, parents: Dict[ast.AST, ast.AST]) -> Optional[ast.ClassDef]:
    """The class whose body holds `fn` as `_defs` of one of its statements finds it (through
    the branches of `if` and `try`, not its handlers), or None."""
    node, parent = fn, parents.get(fn)
    while isinstance(parent, (ast.If, ast.Try)):
        if not any(node is s for s in parent.body + parent.orelse + getattr(parent, "finalbody", [])):
            return None
        node, parent = parent, parents.get(parent)
    if isinstance(parent, ast.ClassDef) and any(node is s for s in parent.body):
        return parent
    return None


def _defs(stmt: ast.stmt):
    """Function definitions at this level, including both branches of `if`/`try` (version gates)."""
    if isinstance(stmt, FUNCTIONS):
        yield stmt
    elif isinstance(stmt, (ast.If, ast.Try)):
        for inner in stmt.body + stmt.orelse + getattr(stmt, "finalbody", []):
            yield from _defs(inner)


# Modules whose functions never train a project's model: not asked about (`training_keys`).
_LIBRARIES = frozenset({"numpy", "os", "sys", "math", "random", "time", "json", "pickle", "re", "copy", "shutil",
                        "glob", "argparse", "logging", "collections", "itertools", "functools", "scipy",
                        "sklearn", "matplotlib", "PIL", "cv2", "pandas", "h5py", "tqdm", "visdom",
                        "tensorboardX", "six", "io", "csv", "subprocess", "datetime", "string", "operator"})


def training_keys(index, call: ast.Call, instances) -> List[str]:
    """The keys of `ModuleIndex.scalar_returns` that say whether `call` runs a function or a
    method of another file of the project that trains (`flow.returns.returns_facts`): `f(...)`
    of an imported `f`, `obj.m(...)` where `obj` is an instance of an imported class
    (`instances`: `ScalarValues.instance_classes`); each by `scalar_callees.trains_key`."""
    func = call.func
    if not isinstance(func, (ast.Name, ast.Attribute)):
        return []
    qual = index.qual(func)
    if qual is not None:
        if "." in qual and not nm.is_torch(qual) and qual.partition(".")[0] not in _LIBRARIES:
            return [trains_key(qual)]
        return []
    if not isinstance(func, ast.Attribute) or func.attr in FRAMEWORK_METHODS or func.attr.startswith("__"):
        return []
    classes = instances(func.value, call)
    return [trains_key(f"{cls}{INSTANCE_METHOD}{func.attr}") for cls in classes or ()
            if isinstance(cls, str) and not nm.is_torch(cls) and cls.partition(".")[0] not in _LIBRARIES]
