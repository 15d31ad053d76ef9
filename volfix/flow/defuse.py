"""Statement-level control flow of one scope, with the names each step reads and binds.

Enough to answer "which reads of `x` does this assignment reach, and is `y` rebound on the
way?" (the question behind renaming an alias away), not a general data-flow framework: the
taint analysis in `taint.py` is linear on purpose. A step is a simple statement or the header
of a compound one (`if` test, loop head, `with` items, `except` clause). Nested functions,
lambdas, classes and generator expressions run later: their mentions are *deferred*, not
read at the step that defines them. A `finally` block or a `match` makes the graph refuse
(`Graph.build` returns None): the alias cleanup then keeps the alias.
"""
from __future__ import annotations

import ast
from typing import Dict, FrozenSet, List, Optional, Set, Tuple

from ..syntax.index import COMPREHENSIONS

ENTRY, EXIT = 0, 1
_DEFERRED = (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef, ast.Lambda, ast.GeneratorExp)
# Builtins that exhaust a generator handed to them first, before they return: its body runs
# at their call (`sum(criterion(o, y) for o in outputs)`), like a list comprehension's.
CONSUMING_BUILTINS = frozenset(("sum", "list", "tuple", "set", "frozenset", "dict", "any", "all", "min",
                                "max", "sorted"))


class Step:
    __slots__ = ("node", "reads", "binds", "deletes", "succ", "pred", "test")

    def __init__(self, node: Optional[ast.AST]):
        self.node = node
        self.reads: Dict[str, List[ast.Name]] = {}
        self.binds: Dict[str, List[ast.AST]] = {}  # stores and deletions, after the reads
        self.deletes: Set[str] = set()
        self.succ: List[int] = []
        self.pred: List[int] = []
        self.test: Optional[Tuple[str, bool]] = None  # `if flag:` / `if not flag:` on a local


class Graph:
    """The steps of one function body or module, `ENTRY` and `EXIT` included."""

    def __init__(self) -> None:
        self.steps: List[Step] = [Step(None), Step(None)]
        self.step_of: Dict[int, int] = {}  # id(statement) -> its (header) step
        self.flags: Set[str] = set()  # the locals whose `if name:` tests may be correlated
        self.consumers: FrozenSet[str] = frozenset()

    @classmethod
    def of_scope(cls, index, scope: ast.AST) -> Optional["Graph"]:
        """`build`, a generator handed to a `CONSUMING_BUILTINS` name that `index`'s module
        does not rebind running at the call."""
        return cls.build(scope, frozenset(n for n in CONSUMING_BUILTINS if not index.binds_anywhere(n)))

    @classmethod
    def build(cls, scope: ast.AST, consumers: FrozenSet[str] = frozenset()) -> Optional["Graph"]:
        """`consumers`: the `CONSUMING_BUILTINS` the module does not rebind (the caller knows
        the module): a generator expression handed to one runs at the call, not later."""
        graph = cls()
        graph.consumers = consumers
        body = scope.body if isinstance(scope, (ast.Module, ast.FunctionDef, ast.AsyncFunctionDef)) else None
        if body is None:
            return None
        entry = graph.steps[ENTRY]
        if not isinstance(scope, ast.Module):
            args = scope.args  # type: ignore[attr-defined]
            for a in args.posonlyargs + args.args + args.kwonlyargs + [args.vararg, args.kwarg]:
                if a is not None:
                    entry.binds.setdefault(a.arg, []).append(a)
        try:
            out = graph._block(body, [ENTRY], None)
        except _Refused:
            return None
        for i in out:
            graph._edge(i, EXIT)
        if not isinstance(scope, ast.Module):  # a module's names may change behind a call
            graph.flags = set().union(*(step.binds for step in graph.steps)) - declared(scope)
        return graph

    # ------------------------------------------------------------------ construction
    def _step(self, node: ast.AST, parts: List[ast.AST], preds: List[int]) -> int:
        i = len(self.steps)
        step = Step(node)
        self.steps.append(step)
        for part in parts:
            self._collect(part, step)
        for p in preds:
            self._edge(p, i)
        return i

    def _edge(self, a: int, b: int) -> None:
        self.steps[a].succ.append(b)
        self.steps[b].pred.append(a)

    def _collect(self, root: ast.AST, step: Step) -> None:
        """The names `root` reads and binds when its step runs (deferred code skipped, but its
        defaults, decorators and first iterable run now). A comprehension's own targets are
        its own (Python 3): neither they nor its reads of them are the scope's."""
        stack: List[Tuple[ast.AST, FrozenSet[str]]] = [(root, frozenset())]
        while stack:
            node, own = stack.pop()
            if isinstance(node, ast.Name):
                if node.id in own:
                    continue
                if isinstance(node.ctx, ast.Load):
                    step.reads.setdefault(node.id, []).append(node)
                else:
                    step.binds.setdefault(node.id, []).append(node)
                    if isinstance(node.ctx, ast.Del):
                        step.deletes.add(node.id)
                continue
            if isinstance(node, ast.Call) and isinstance(node.func, ast.Name) and node.func.id in self.consumers \
                    and node.args and isinstance(node.args[0], ast.GeneratorExp):
                stack.extend(self._comprehension(node.args[0], own))
                stack.extend((part, own) for part in node.args[1:] + [k.value for k in node.keywords] + [node.func])
                continue
            if isinstance(node, _DEFERRED):
                stack.extend((part, own) for part in _run_now(node))
                continue
            if isinstance(node, COMPREHENSIONS):
                stack.extend(self._comprehension(node, own))
                continue
            stack.extend((child, own) for child in ast.iter_child_nodes(node))

    def _comprehension(self, node: ast.AST, own: FrozenSet[str]) -> List[Tuple[ast.AST, FrozenSet[str]]]:
        """A comprehension's parts, each with the names that are its own there: its first
        iterable runs in the enclosing scope, the rest in the comprehension's."""
        generators = node.generators  # type: ignore[attr-defined]
        targets = {n.id for gen in generators for n in ast.walk(gen.target) if isinstance(n, ast.Name)}
        inner = own | targets
        parts: List[Tuple[ast.AST, FrozenSet[str]]] = [(generators[0].iter, own)]
        for i, gen in enumerate(generators):
            if i:
                parts.append((gen.iter, inner))
            parts.extend((cond, inner) for cond in gen.ifs)
        body = [node.key, node.value] if isinstance(node, ast.DictComp) else [node.elt]  # type: ignore[attr-defined]
        parts.extend((part, inner) for part in body)
        return parts

    def _block(self, body: List[ast.stmt], preds: List[int], loop: Optional[Tuple[int, List[int]]],
               handlers: Optional[List[int]] = None) -> List[int]:
        """Steps for `body` entered from `preds`; returns the steps falling out of it.
        `loop` is (continue target, break list); `handlers` collects every step of a `try`."""
        for stmt in body:
            preds = self._statement(stmt, preds, loop, handlers)
        return preds

    def _statement(self, stmt: ast.stmt, preds: List[int], loop, handlers) -> List[int]:
        kind = type(stmt)
        if kind is ast.If:
            test = self._header(stmt, [stmt.test], preds, handlers)
            self.steps[test].test = flag_test(stmt.test)  # the body starts at step test + 1
            return self._block(stmt.body, [test], loop, handlers) + self._block(stmt.orelse, [test], loop, handlers)
        if kind is ast.While:
            head = self._header(stmt, [stmt.test], preds, handlers)
            breaks: List[int] = []
            for i in self._block(stmt.body, [head], (head, breaks), handlers):
                self._edge(i, head)
            return self._block(stmt.orelse, [head], loop, handlers) + breaks
        if kind in (ast.For, ast.AsyncFor):
            iterate = self._step(stmt.iter, [stmt.iter], preds)
            self._track(iterate, handlers)
            following = self._header(stmt, [], [iterate], handlers)  # next(), or the end
            head = self._step(stmt.target, [stmt.target], [following])  # binds a round's target
            self._track(head, handlers)
            breaks = []
            for i in self._block(stmt.body, [head], (following, breaks), handlers):
                self._edge(i, following)
            return self._block(stmt.orelse, [following], loop, handlers) + breaks
        if kind in (ast.With, ast.AsyncWith):
            head = self._header(stmt, list(stmt.items), preds, handlers)
            return self._block(stmt.body, [head], loop, handlers)
        if kind is ast.Try or kind.__name__ == "TryStar":
            if stmt.finalbody:  # type: ignore[attr-defined]
                raise _Refused  # returns and raises run it too: not modelled
            inside: List[int] = list(preds)
            out = self._block(stmt.body, preds, loop, inside)  # type: ignore[attr-defined]
            if handlers is not None:
                handlers.extend(inside)  # what the clauses do not catch goes further out
            out = self._block(stmt.orelse, out, loop, handlers)  # type: ignore[attr-defined]
            for handler in stmt.handlers:  # type: ignore[attr-defined]
                parts = [handler.type] if handler.type is not None else []
                clause = self._header(handler, parts, inside, handlers)
                if handler.name:
                    self.steps[clause].binds.setdefault(handler.name, []).append(handler)
                out = out + self._block(handler.body, [clause], loop, handlers)
            return out
        if kind.__name__ == "Match":
            raise _Refused
        if kind in (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef):
            i = self._header(stmt, _run_now(stmt), preds, handlers)
            self.steps[i].binds.setdefault(stmt.name, []).append(stmt)  # type: ignore[attr-defined]
            return [i]
        i = self._header(stmt, [stmt], preds, handlers)
        if kind in (ast.Return, ast.Raise):
            self._edge(i, EXIT)
            return []
        if kind is ast.Continue and loop is not None:
            self._edge(i, loop[0])
            return []
        if kind is ast.Break and loop is not None:
            loop[1].append(i)
            return []
        return [i]

    def _header(self, stmt: ast.AST, parts: List[ast.AST], preds: List[int], handlers) -> int:
        i = self._step(stmt, parts, preds)
        self.step_of[id(stmt)] = i
        self._track(i, handlers)
        return i

    def _track(self, i: int, handlers: Optional[List[int]]) -> None:
        if handlers is not None:
            handlers.append(i)  # an exception after this step reaches the `except` clauses

    # ------------------------------------------------------------------ queries
    # The walks follow correlated branches: after `if flag:` took one way, a later `if flag:`
    # takes the same way, until a step mentions `flag` otherwise (`flags` are the names of the
    # scope's parameters and locals the graph may reason about).
    def _next(self, i: int, known: FrozenSet[Tuple[str, bool]]):
        step = self.steps[i]
        if step.test is None or step.test[0] not in self.flags:
            for j in step.succ:
                yield j, self._entering(j, known)
            return
        name, positive = step.test
        decided = next((value for n, value in known if n == name), None)
        for j in step.succ:
            taken = j == i + 1  # the body
            value = taken if positive else not taken
            if decided is not None and value != decided:
                continue
            after = known if decided is not None else known | {(name, value)}
            yield j, self._entering(j, after)

    def _entering(self, j: int, known: FrozenSet[Tuple[str, bool]]) -> FrozenSet[Tuple[str, bool]]:
        if not known:
            return known
        step = self.steps[j]
        same = step.test[0] if step.test is not None else None
        return frozenset(f for f in known if f[0] == same or (f[0] not in step.reads and f[0] not in step.binds))

    def _starts(self, starts: List[int]):
        empty: FrozenSet[Tuple[str, bool]] = frozenset()
        return [(j, known) for start in starts for j, known in self._next(start, empty)]

    def reached_reads(self, starts: List[int], name: str) -> Tuple[List[int], Set[int]]:
        """From the steps after `starts`, every step whose read of `name` some start reaches
        (the walk stops at steps that bind `name`, after their reads), and the binding steps
        where it stopped."""
        steps = self.steps
        seen: Set[Tuple[int, FrozenSet]] = set()
        reading: Set[int] = set()
        stops: Set[int] = set()
        work = self._starts(starts)
        while work:
            i, known = work.pop()
            if (i, known) in seen:
                continue
            seen.add((i, known))
            step = steps[i]
            if name in step.reads:
                reading.add(i)
            if name in step.binds:
                stops.add(i)
                continue
            work.extend(self._next(i, known))
        return sorted(reading), stops

    def reaching_bindings(self, step: int, name: str) -> Set[int]:
        """The steps binding `name` (or `ENTRY`) whose value may be the one read at `step`."""
        steps = self.steps
        seen: Set[int] = set()
        found: Set[int] = set()
        work = list(steps[step].pred)
        while work:
            i = work.pop()
            if i in seen:
                continue
            seen.add(i)
            if name in steps[i].binds or i == ENTRY:
                found.add(i)
                continue
            work.extend(steps[i].pred)
        return found

    def binds_after(self, start: int, name: str) -> bool:
        """Is `name` bound anywhere after step `start` (any path, any number of rounds)?"""
        seen: Set[int] = set()
        work = list(self.steps[start].succ)
        while work:
            i = work.pop()
            if i in seen:
                continue
            seen.add(i)
            if name in self.steps[i].binds:
                return True
            work.extend(self.steps[i].succ)
        return False

    def rebound_before_read(self, starts: List[int], name: str, other: str, stop_at: Set[int]) -> bool:
        """Is `other` bound on some path from a start to a read of `name` (paths end where
        `name` is bound again, or at a step in `stop_at`)?"""
        steps = self.steps
        seen: Set[Tuple[int, bool, FrozenSet]] = set()
        work = [(j, False, known) for j, known in self._starts(starts)]
        while work:
            i, crossed, known = work.pop()
            if (i, crossed, known) in seen:
                continue
            seen.add((i, crossed, known))
            step = steps[i]
            if crossed and name in step.reads:
                return True
            if name in step.binds or i in stop_at:
                continue
            crossed = crossed or other in step.binds
            work.extend((j, crossed, after) for j, after in self._next(i, known))
        return False


class _Refused(Exception):
    pass


def declared(scope: ast.AST) -> Set[str]:
    """The names a `global` or `nonlocal` statement anywhere in `scope` declares."""
    return {name for n in ast.walk(scope) if isinstance(n, (ast.Global, ast.Nonlocal)) for name in n.names}


def flag_test(test: ast.expr) -> Optional[Tuple[str, bool]]:
    if isinstance(test, ast.Name):
        return test.id, True
    if isinstance(test, ast.UnaryOp) and isinstance(test.op, ast.Not) and isinstance(test.operand, ast.Name):
        return test.operand.id, False
    return None


def _run_now(node: ast.AST) -> List[ast.AST]:
    """What a deferred construct evaluates where it stands."""
    if isinstance(node, ast.GeneratorExp):
        return [node.generators[0].iter]
    if isinstance(node, ast.ClassDef):
        return node.decorator_list + node.bases + [k.value for k in node.keywords]
    args = node.args  # type: ignore[attr-defined]
    now: List[ast.AST] = list(args.defaults) + [d for d in args.kw_defaults if d is not None]
    if not isinstance(node, ast.Lambda):
        now += node.decorator_list  # type: ignore[attr-defined]
        now += [a.annotation for a in args.posonlyargs + args.args + args.kwonlyargs if a.annotation is not None]
        if node.returns is not None:  # type: ignore[attr-defined]
            now.append(node.returns)  # type: ignore[attr-defined]
    return now
