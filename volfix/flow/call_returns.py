"""The returns a call can reach, given the constants it passes and the defaults it keeps.

`pytorch_ssim.ssim(sr, hr)` (a module copied into many super-resolution repositories) keeps
`size_average=True` and hands it to `_ssim(..., size_average)`, whose `if size_average: return
ssim_map.mean()` is one element and whose `else: return ssim_map.mean(1).mean(1).mean(1)` is not:
with the default, only the first runs. `CallReturns` (a mixin of `ScalarValues`) binds a call's
constant arguments and kept defaults to the callee's parameters, drops the returns an `if` on
such a parameter (never rebound) keeps from running, and follows a returned call of another def
of the module with what it passes on. What another file defines comes as the project index's
fact `ONE_DEFAULTS` + the parameters that decide (`size_average@3`: one element when a call passes
no value for them, by place or by name), computed on the defining file (`defaults_shape`).
"""
from __future__ import annotations

import ast
from typing import Dict, Optional, Set

from .calls import bound_positional, parameter_defaults
from .scalar_callees import ONE_DEFAULTS
from .shapes import own_returns

Env = Dict[str, object]  # a parameter's name -> the constant it holds for the call
MAX_NESTED = 4  # returned calls followed, one into the other


class CallReturns:
    """The constant arguments' half of `ScalarValues` (it supplies `index`, `names`,
    `one_element`, `project_callee`, `other_callees`)."""

    def constant_call_one(self, call: ast.Call, at: ast.AST, depth: int, seen: Set[str]) -> bool:
        """`ssim(a, b)`: every return the call can reach, given the constants it passes and
        the defaults it keeps, is one element (a def of this module or of the class holding
        `at`; another file's by its `ONE_DEFAULTS` fact)."""
        fn = self.project_callee(call.func, at)
        if fn is not None:
            env = self._bind(fn, call, {})
            return bool(env) and self.reachable_one(fn, env, depth, seen)
        if any(isinstance(a, ast.Starred) for a in call.args) or any(k.arg is None for k in call.keywords):
            return False
        found = self.other_callees(call.func, at)
        return len(found) == 1 and isinstance(found[0], str) and any(
            isinstance(shape, str) and shape.startswith(ONE_DEFAULTS) and _keeps(call, shape[len(ONE_DEFAULTS):])
            for shape in self.index.scalar_returns.get(found[0], ()))

    def defaults_shape(self, fn: ast.FunctionDef) -> Optional[str]:
        """`ONE_DEFAULTS` + `size_average@2,...` when `fn` returns one element on every path
        that can run while the parameters named keep their defaults (the number: a parameter's
        place among the positional arguments of a call, -1 for a keyword-only one): those its
        `if`s decide on, found by leaving each out."""
        if fn.args.vararg is not None:
            return None
        env = _defaults(fn)
        if not env or not self.reachable_one(fn, env, 1, set()):
            return None
        needed = {p: v for p, v in env.items()
                  if not self.reachable_one(fn, {q: w for q, w in env.items() if q != p}, 1, set())}
        if not needed or not self.reachable_one(fn, needed, 1, set()):
            needed = env
        positions = bound_positional(fn, _is_method(self.index, fn))
        return ONE_DEFAULTS + ",".join(f"{p}@{positions.index(p) if p in positions else -1}" for p in sorted(needed))

    def reachable_one(self, fn: ast.FunctionDef, env: Env, depth: int, seen: Set[str]) -> bool:
        """Every return of `fn` that can run when its parameters hold `env` is one element
        (a returned call of another def followed with what it passes on)."""
        key = f"env {id(fn)} {sorted(env.items(), key=repr)!r}"
        if key in seen or sum(k.startswith("env ") for k in seen) > MAX_NESTED:
            return False
        inner = seen | {key}
        returns = [r.value for r in own_returns(fn) if self._reachable(r, fn, env)]
        return bool(returns) and all(v is not None and self._one_under(v, fn, env, depth, inner) for v in returns)

    def _one_under(self, value: ast.AST, fn: ast.FunctionDef, env: Env, depth: int, seen: Set[str]) -> bool:
        if self.one_element(value, value, depth + 1, set(seen)):
            return True
        if not isinstance(value, ast.Call):
            return False
        callee = self.project_callee(value.func, value)
        passed = None if callee is None else self._bind(callee, value, env, fn)
        return bool(passed) and self.reachable_one(callee, passed, depth + 1, seen)

    def _bind(self, fn: ast.FunctionDef, call: ast.Call, env: Env, caller: Optional[ast.AST] = None) -> Optional[Env]:
        """The constants `call` gives `fn`'s parameters: literal arguments, the caller's own
        parameters of known value (`env`, never rebound) passed on, defaults kept."""
        if fn.args.vararg is not None or any(isinstance(a, ast.Starred) for a in call.args) \
                or any(k.arg is None for k in call.keywords):
            return None
        params = bound_positional(fn, _is_method(self.index, fn))
        if len(call.args) > len(params):
            return None
        given = dict(zip(params, call.args))
        given.update((k.arg, k.value) for k in call.keywords)
        out = {name: value for name, value in _defaults(fn).items() if name not in given}
        for name, value in given.items():
            if isinstance(value, ast.Constant):
                out[name] = value.value
            elif isinstance(value, ast.Name) and caller is not None and value.id in env \
                    and self._fixed(value.id, value):
                out[name] = env[value.id]
        return out

    def _reachable(self, ret: ast.Return, fn: ast.FunctionDef, env: Env) -> bool:
        """No `if` around `ret` (inside `fn`) decides against it when the parameters hold `env`."""
        parents = self.index.parents
        child, node = ret, parents.get(ret)
        while node is not None and node is not fn:
            if isinstance(node, ast.If):
                truth = self._decide(node.test, env)
                if truth is not None and any(c is child for c in node.body) != truth:
                    return False
            child, node = node, parents.get(node)
        return True

    def _decide(self, test: ast.AST, env: Env) -> Optional[bool]:
        """The truth of `size_average`, `not size_average`, `x is None`, `x is not None` for a
        parameter of known value never rebound; None when not decided."""
        if isinstance(test, ast.UnaryOp) and isinstance(test.op, ast.Not):
            inner = self._decide(test.operand, env)
            return None if inner is None else not inner
        if isinstance(test, ast.Name):
            return bool(env[test.id]) if test.id in env and self._fixed(test.id, test) else None
        if isinstance(test, ast.Compare) and len(test.ops) == 1 and isinstance(test.ops[0], (ast.Is, ast.IsNot)) \
                and isinstance(test.left, ast.Name) and isinstance(test.comparators[0], ast.Constant) \
                and test.comparators[0].value is None and test.left.id in env and self._fixed(test.left.id, test):
            return (env[test.left.id] is None) == isinstance(test.ops[0], ast.Is)
        return None

    def _fixed(self, name: str, at: ast.AST) -> bool:
        """`name` is a parameter of the function holding `at`, never rebound in it."""
        return self.names.bindings(name, at) == [None]


def _keeps(call: ast.Call, needed: str) -> bool:
    """`call` passes none of the parameters `needed` names (`size_average@2,...`)."""
    for part in needed.split(","):
        name, _, place = part.rpartition("@")
        if 0 <= int(place) < len(call.args) or any(k.arg == name for k in call.keywords):
            return False
    return True


def _defaults(fn: ast.FunctionDef) -> Env:
    """The constant defaults of `fn`'s parameters."""
    return {name: d.value for name, d in parameter_defaults(fn).items() if isinstance(d, ast.Constant)}


def _is_method(index, fn: ast.FunctionDef) -> bool:
    return isinstance(index.parents.get(fn), ast.ClassDef)
