"""How many dimensions a tensor has today (PyTorch >= 0.4), read from syntax: a range of
ranks, so that a chain of steps can end in a certain 0-dim value.

`p[targets[idx].data]` is 0-dim when `p` has one dimension: `p` is an element of
`enumerate(softmax(output.view(-1, ntokens)))` (2-dim, so its rows have one), or the sum of
such a row and `ptr_dist`, a `.sum(0).squeeze()` of a 2-dim value times a number. `flow.scalars`
asks this module when its own rules (losses, reductions) cannot tell.

A rank is a `(low, high)` range, a number or unknown (`flow.rank_lattice`). This module reads
names (their bindings where read, a loop's elements, unpacked items), indexing (an integer
drops a dimension, a slice keeps it, `None` adds one) and arithmetic (it broadcasts to the
larger rank); `flow.rank_calls` knows PyTorch's calls, `flow.rank_programs` what a program's
own calls and datasets tell. An index that is a 0-dim tensor is taken as an integer (a 0-dim
bool mask would add a dimension: no legacy code indexes so).
"""
from __future__ import annotations

import ast
from typing import Callable, Optional, Set, Tuple

from ..syntax import names as nm
from .bindings import Element, Unpacked
from .rank_calls import CallRanks
from .rank_lattice import CYCLE, INF, MAX_DEPTH, NUMBER, Rank, broadcast, exactly, join, join_all, shift
from .rank_programs import ProgramRanks
from .shapes import int_value, is_none, is_number, own_returns


class Ranks(CallRanks, ProgramRanks):
    """The ranks of one module's expressions, for `ScalarValues` (`values`)."""

    def __init__(self, values) -> None:
        self.values = values
        self.index = values.index
        self.names = values.names
        self._memo: dict = {}
        self._active: Set[str] = set()
        self._cycles = 0

    def exact(self, expr: ast.AST, at: ast.AST, depth: int = 0) -> Optional[int]:
        """The rank of the tensor `expr`, when it is certain."""
        rank = self.rank(expr, at, depth)
        return rank[0] if isinstance(rank, tuple) and rank[0] == rank[1] else None

    def rank(self, expr: ast.AST, at: ast.AST, depth: int = 0) -> Rank:
        if depth > MAX_DEPTH:
            return None
        if is_number(expr):
            return NUMBER
        if isinstance(expr, ast.Constant):
            return NUMBER if type(expr.value) in (int, float, bool) else None
        if isinstance(expr, ast.Name):
            return self._name(expr.id, at, depth)
        if isinstance(expr, ast.Attribute):
            if expr.attr == "data":
                return self.rank(expr.value, at, depth + 1)
            if self.values.scalar(expr, at, depth + 1):
                return NUMBER  # `args.lambdasm`, `self.k = 0.`
            return None
        if isinstance(expr, ast.BinOp):
            if isinstance(expr.op, ast.MatMult):
                return None
            return broadcast(self.rank(expr.left, at, depth + 1), self.rank(expr.right, at, depth + 1))
        if isinstance(expr, ast.UnaryOp):
            return self.rank(expr.operand, at, depth + 1)
        if isinstance(expr, ast.IfExp):
            return join_all(self.rank(side, at, depth + 1) for side in (expr.body, expr.orelse) if not is_none(side))
        if isinstance(expr, ast.Subscript):
            return self._subscript(expr, at, depth)
        if isinstance(expr, ast.Call):
            return self._call(expr, at, depth)
        return None

    # names

    def _name(self, name: str, at: ast.AST, depth: int) -> Rank:
        key = f"{self.names.key(name, at)} {id(self.index.statement_of(at))}"
        return self._guarded(key, lambda: self._bound(name, at, depth))

    def _guarded(self, key: str, compute: Callable[[], Rank]) -> Rank:
        """`compute()` once per `key` (a name where read, a def's returns): asked again while
        it runs, a cycle (`CYCLE`). Only an answer resting on no cycle is kept."""
        if key in self._active:
            self._cycles += 1
            return CYCLE
        if key in self._memo:
            return self._memo[key]
        self._active.add(key)
        cycles = self._cycles
        try:
            result = compute()
        finally:
            self._active.discard(key)
        if self._cycles == cycles:
            self._memo[key] = result
        return result

    def _bound(self, name: str, at: ast.AST, depth: int) -> Rank:
        values = [v for v in self.names.bindings(name, at) if not is_none(v)]
        assigned: Rank = CYCLE
        scope = self.index.function_of(at)
        if values and values[-1] is None and isinstance(scope, (ast.FunctionDef, ast.AsyncFunctionDef)) \
                and name in nm.function_params(scope):  # a parameter
            assigned = self._parameter(scope, name, depth)
            values = values[:-1]
        if not values and assigned == CYCLE or any(v is None for v in values) or assigned is None:
            return None
        augmented = []
        for v in values:
            if isinstance(v, Element):
                rank = self._element(v.iterable, v.path, v.iterable, depth + 1)
            elif isinstance(v, Unpacked):
                rank = self._item(v.value, v.path, v.value, depth + 1)
            elif self.names.augmented(v):
                augmented.append(v)
                continue
            else:
                rank = self.rank(v, v, depth + 1)
            assigned = join(assigned, rank)
            if assigned is None:
                return None
        for v in augmented:  # `T += dt` keeps a tensor's shape (in place); `total = 0; total += t` takes t's
            if assigned == NUMBER:
                assigned = join(assigned, self.rank(v, v, depth + 1))
            elif not isinstance(assigned, tuple):
                return None
        return None if assigned == CYCLE else assigned

    def _element(self, iterable: ast.AST, path: Tuple[int, ...], at: ast.AST, depth: int) -> Rank:
        """The part at `path` of an element of `iterable`."""
        if depth > MAX_DEPTH:
            return None
        if isinstance(iterable, ast.Call) and not iterable.keywords and not any(
                isinstance(a, ast.Starred) for a in iterable.args):
            func, args = iterable.func, iterable.args
            if self.values._builtin(func, "range", at) or self.values._builtin(func, "xrange", at):
                return NUMBER if not path else None  # `xrange`: Python 2 code
            if self.values._builtin(func, "enumerate", at) and len(args) == 1 and path:
                return NUMBER if path == (0,) else self._element(args[0], path[1:], at, depth + 1) \
                    if path[0] == 1 else None
            if self.values._builtin(func, "zip", at) and path:
                return self._element(args[path[0]], path[1:], at, depth + 1) if path[0] < len(args) else None
        if isinstance(iterable, (ast.ListComp, ast.GeneratorExp)):
            return self._item(iterable.elt, path, iterable.elt, depth + 1)
        if isinstance(iterable, (ast.List, ast.Tuple)):
            return join_all(None if isinstance(e, ast.Starred) else self._item(e, path, e, depth + 1)
                            for e in iterable.elts)
        if path:
            return exactly(1) if path == (1,) and self._labelled_loader(iterable, at) else None
        rank = self.rank(iterable, at, depth + 1)  # the rows of a tensor
        return shift(rank, -1) if isinstance(rank, tuple) and rank[0] >= 1 else None

    def item_rank(self, value: ast.AST, path: Tuple[int, ...], depth: int = 0) -> Rank:
        """The rank of the item at `path` of what `value` gives (`score, idx = row.max(0)`)."""
        return self._item(value, path, value, depth)

    def _item(self, value: ast.AST, path: Tuple[int, ...], at: ast.AST, depth: int) -> Rank:
        """The item of `value` at `path` (`values, indices = s.topk(k)`)."""
        if not path:
            return self.rank(value, at, depth)
        if isinstance(value, ast.Tuple) and not any(isinstance(e, ast.Starred) for e in value.elts):
            return self._item(value.elts[path[0]], path[1:], at, depth + 1) if path[0] < len(value.elts) else None
        if len(path) == 1 and isinstance(value, ast.Call):
            pair = self._pair(value, at, depth)
            if pair is not None:
                return pair if path[0] in (0, 1) else None
            func = value.func
            if isinstance(func, ast.Attribute) and func.attr == "size" and not value.args:
                return NUMBER  # `b, n = x.size()`
        if len(path) == 1 and self.values.item(value, path, at, depth + 1, set(), self.values.one_dim):
            return exactly(1)  # `data, targets = get_batch(...)` (here or in another file)
        return None

    def _subscript(self, expr: ast.Subscript, at: ast.AST, depth: int) -> Rank:
        value = expr.value
        pair = self._pair(value, at, depth) if isinstance(value, ast.Call) else None
        if pair is not None:
            return pair if int_value(expr.slice) in (0, 1, -1, -2) else None  # `x.max(1)[1]`
        if isinstance(value, ast.Call) and isinstance(value.func, ast.Attribute) and value.func.attr == "size" \
                and not value.args and not value.keywords and int_value(expr.slice) is not None:
            return NUMBER  # `levels = weights.size()[0]`
        base = self.rank(value, at, depth + 1)
        if not isinstance(base, tuple) and base != CYCLE:
            return None
        if base == (0, 0) and int_value(expr.slice) == 0:
            return NUMBER  # `loss.data[0]`: what 0.3 gave, and `.item()` (VF401's fix) gives
        parts = expr.slice.elts if isinstance(expr.slice, ast.Tuple) else [expr.slice]
        change = 0
        for part in parts:
            if isinstance(part, ast.Slice):
                continue
            if isinstance(part, ast.Constant) and part.value is None:
                change += 1
            elif isinstance(part, ast.Constant) and part.value is Ellipsis:
                continue
            else:
                index = self.rank(part, at, depth + 1)
                if index == NUMBER or index == (0, 0):  # an integer, or a 0-dim (integer) tensor
                    change -= 1
                else:
                    return None
        if base == CYCLE:
            return CYCLE if change == 0 else None
        if base[0] < -change and base[1] < INF:
            base = (-change, base[1])  # indexing that many dimensions needs them
        return shift(base, change)

    # calls

    def _call(self, call: ast.Call, at: ast.AST, depth: int) -> Rank:
        func = call.func
        if any(isinstance(a, ast.Starred) for a in call.args) or any(k.arg is None for k in call.keywords):
            return None
        qual = self.index.qual(func)
        if self.index.is_variable(func):  # `Variable(t, volatile=True)`
            return self.rank(call.args[0], at, depth + 1) if call.args else None
        if qual is not None:
            return self._library(qual, call, at, depth)
        if isinstance(func, ast.Attribute):
            return self._method(func.attr, func.value, call, at, depth)
        fn = self.values.project_callee(func, at)
        if fn is not None:
            return self._returns(fn, depth)
        return None

    def _returns(self, fn: ast.AST, depth: int) -> Rank:
        """What every `return` of a def of this module gives (`one_hot(idx, n)`)."""
        return self._guarded(f"def {id(fn)}", lambda: join_all(
            None if node.value is None else self.rank(node.value, node.value, depth + 1) for node in own_returns(fn)))
