"""The returns a call can reach, given the constants it passes and the defaults it keeps.

`pytorch_ssim.ssim(sr, hr)` (a module copied into many super-resolution repositories) keeps
`size_average=True` and hands it to `_ssim(..., size_average)`, whose `if size_average: return
ssim_map.mean()` is one element and whose `else: return ssim_map.mean(1).mean(1).mean(1)` is not:
with the default, only the first runs. `CallReturns` (a mixin of `ScalarValues`) binds a call's
constant arguments and kept defaults to the callee's parameters, drops the returns an `if` on
such a parameter (never rebound) keeps from running, and follows a returned call of another def
of the module with what it passes on. What another file defines comes as the project index's
fact `ONE_DEFAULTS` + the parameters that decide and their values (`size_average@3=True`: one
element when a call passes no value for them, by place or by name, or that one), computed on the
defining file (`defaults_shape`). An instance's method reads `self.size_average` as what the
`__init__` that made it was given (`SSIM(window_size=11)` keeps the default): `ONE_MADE` + the
constructor's parameters that decide (`made_shape`).
"""
from __future__ import annotations

import ast
from typing import Callable, Dict, List, Optional, Set, Tuple

from ..syntax import names as nm
from .bindings import Element, Unpacked
from .calls import bound_positional, call_sites, parameter_defaults, passed_argument
from .scalar_callees import INSTANCE_METHOD, ONE_DEFAULTS, ONE_MADE, own_def
from .shapes import moved_itself, own_returns

Env = Dict[str, object]  # a parameter's name -> the constant it holds for the call
MADE = "__init__."  # the keys of `Env` for the parameters of the `__init__` that made `self`
MAX_NESTED = 4  # returned calls followed, one into the other
_JOINS = ("torch.cat", "torch.concat", "torch.stack")


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
        if len(found) != 1:
            return False
        if not isinstance(found[0], str):  # the instance of a class of this module, called
            return self._instance_one(found[0], call, at, depth, seen)
        shapes = self.index.scalar_returns.get(found[0], ())
        if any(isinstance(shape, str) and shape.startswith(ONE_DEFAULTS) and _keeps(call, shape[len(ONE_DEFAULTS):])
               for shape in shapes):
            return True
        made = self._constructions(_receiver(call.func, found[0]), at)
        return bool(made) and any(
            isinstance(shape, str) and shape.startswith(ONE_MADE)
            and all(_keeps(m, shape[len(ONE_MADE):]) for m in made) for shape in shapes)

    def _instance_one(self, fn: ast.FunctionDef, call: ast.Call, at: ast.AST, depth: int, seen: Set[str]) -> bool:
        """`ssim_loss(sr, hr)` with `ssim_loss = SSIM()` of this module: its `forward` with
        what each construction gives `__init__` (`self.size_average` kept True)."""
        made = self._constructions(_receiver(call.func, fn), at)
        init = own_def(self.index.parents.get(fn), "__init__")
        called = self._bind(fn, call, {})
        if not made or init is None or called is None:
            return False
        for construction in made:
            given = self._bind(init, construction, {})
            if not given or not self.reachable_one(
                    fn, {**called, **{MADE + name: value for name, value in given.items()}}, depth, seen):
                return False
        return True

    def _constructions(self, func: ast.AST, at: ast.AST) -> list:
        """The calls that made the instance `func` names (`ssim_loss = pytorch_ssim.SSIM()`)."""
        values = [func] if isinstance(func, ast.Call) else self.names.of(func, at) or []
        values = [v for v in values if not (isinstance(v, ast.AST) and moved_itself(v, func))]  # `m = m.cuda()`
        return values if values and all(isinstance(v, ast.Call) for v in values) else []

    def defaults_shape(self, fn: ast.FunctionDef) -> Optional[str]:
        """`ONE_DEFAULTS` + `size_average@2=True,...` when `fn` returns one element on every path
        that can run while the parameters named keep their defaults (`_spelled`): those its
        `if`s decide on, found by leaving each out."""
        if fn.args.vararg is not None:
            return None
        needed = _needed(_defaults(fn), lambda env: self.reachable_one(fn, env, 1, set()))
        if needed is None:
            return None
        return ONE_DEFAULTS + _spelled(needed, bound_positional(fn, self.index.method_class(fn) is not None))

    def made_shape(self, fn: ast.FunctionDef) -> Optional[str]:
        """`ONE_MADE` + `size_average@1=True,...` when the method `fn` (`forward`) returns one
        element on every path that can run while the instance was made keeping the defaults
        of the `__init__` parameters named (those its `self.X` tests decide on)."""
        cls = self.index.method_class(fn)
        init = own_def(cls, "__init__") if cls is not None else None
        if init is None or init.args.vararg is not None:
            return None
        made = {MADE + name: value for name, value in _defaults(init).items()}
        needed = _needed(made, lambda env: self.reachable_one(fn, env, 1, set()))
        if needed is None:
            return None
        return ONE_MADE + _spelled({name[len(MADE):]: value for name, value in needed.items()},
                                   bound_positional(init, True))

    def one_by_defaults(self, value: ast.AST, at: ast.AST) -> Optional[Env]:
        """`sim` of `sim, cs = ssim(a, b, size_average=size_average, full=True)` inside `def
        msssim(a, b, size_average=True)` (pytorch-msssim): one element while the parameters of
        the def holding `at` keep their constant defaults, and not known without that. The
        parameters it rests on, with their defaults (`_needed`'s way; {}: none); None when it is
        not one element even so."""
        fn = self.index.function_of(at)
        if not isinstance(fn, ast.FunctionDef):
            return None
        env = _defaults(fn)
        if not env or not self._one_given(value, fn, env):
            return None
        return {} if self._one_given(value, fn, {}) else _needed(env, lambda e: self._one_given(value, fn, e))

    def _one_given(self, value: ast.AST, fn: ast.FunctionDef, env: Env) -> bool:
        """`value` (read in `fn`) is one element when `fn`'s parameters hold `env`: each of the
        name's bindings, an item of a returned tuple (`sim, cs = ssim(...)`) included."""
        if not isinstance(value, ast.Name):
            return self._one_under(value, fn, env, 0, set())
        bound = self.names.bindings(value.id, value)
        if not bound or any(not isinstance(b, (ast.AST, Unpacked)) or isinstance(b, ast.AST) and self.names.augmented(b)
                            for b in bound):
            return False
        for b in bound:
            if isinstance(b, Unpacked):
                callee = self.project_callee(b.value.func, b.value) if isinstance(b.value, ast.Call) \
                    and len(b.path) == 1 else None
                passed = None if callee is None else self._bind(callee, b.value, env)
                if not passed or not self.reachable_one(callee, passed, 0, set(), b.path[0]):
                    return False
            elif not self._one_under(b, fn, env, 0, set()):
                return False
        return True

    def keep_defaults(self, fn: ast.AST, needed: Env) -> Optional[bool]:
        """Whether the calls of the module-level `fn` keep the parameters `needed` names at those
        values (pass nothing for them, or the same constant): True when every call does, False
        when none does; None when some do, or the calls are not all known (the file is no
        program, or uses the name otherwise)."""
        if not isinstance(fn, ast.FunctionDef) or not isinstance(self.index.parents.get(fn), ast.Module) \
                or not self.ranks.in_program():
            return None
        sites, other = call_sites(self.index, fn)
        spelled = _spelled(needed, bound_positional(fn, False))
        kept = {_keeps(site, spelled) for site in sites}
        return None if other or len(kept) != 1 else kept.pop()

    def constant_call_item(self, call: ast.Call, position: int, at: ast.AST, depth: int, seen: Set[str]) -> bool:
        """`loss, x = calc(x, average=True)`: the item at `position` of every tuple a def of this
        module (or of the class holding `at`) returns, given the constants the call passes and
        the defaults it keeps, is one element."""
        fn = self.project_callee(call.func, at)
        if fn is None and isinstance(call.func, ast.Attribute):  # `model.calculate_loss(x, average=True)`
            found = self.other_callees(call.func, at)
            fn = found[0] if len(found) == 1 and isinstance(found[0], ast.FunctionDef) else None
        env = None if fn is None else self._bind(fn, call, {})
        return bool(env) and self.reachable_one(fn, env, depth, seen, position)

    def reachable_one(self, fn: ast.FunctionDef, env: Env, depth: int, seen: Set[str],
                      position: Optional[int] = None) -> bool:
        """Every return of `fn` that can run when its parameters hold `env` is one element
        (a returned call of another def followed with what it passes on); with `position`,
        every return is a tuple whose item there is."""
        key = f"env {id(fn)} {position} {sorted(env.items(), key=repr)!r}"
        if key in seen or sum(k.startswith("env ") for k in seen) > MAX_NESTED:
            return False
        inner = seen | {key}
        returns = [r.value for r in own_returns(fn) if self._reachable(r, fn, env)]
        if position is None:
            return bool(returns) and all(v is not None and self._one_under(v, fn, env, depth, inner) for v in returns)
        return bool(returns) and all(self._item_under(v, position, fn, env, depth, inner) for v in returns)

    def _item_under(self, value: Optional[ast.AST], position: int, fn: ast.FunctionDef, env: Env, depth: int,
                    seen: Set[str]) -> bool:
        """The item at `position` of `value`, returned by `fn`, is one element: a tuple's, or
        that of what a returned call of another def returns with what it passes on (`def
        ssim(a, b, full=False): return _ssim(a, b, full=full)`, whose `if full: return ret, cs`)."""
        if isinstance(value, ast.Tuple):
            return position < len(value.elts) and not any(isinstance(e, ast.Starred) for e in value.elts) \
                and self._one_under(value.elts[position], fn, env, depth, seen)
        if not isinstance(value, ast.Call):
            return False
        callee = self.project_callee(value.func, value)
        passed = None if callee is None else self._bind(callee, value, env)
        return bool(passed) and self.reachable_one(callee, passed, depth + 1, seen, position)

    def _one_under(self, value: ast.AST, fn: ast.FunctionDef, env: Env, depth: int, seen: Set[str],
                   hops: int = 0) -> bool:
        """`value` (returned by `fn`, or bound to a name it returns) is one element when the
        parameters hold `env`: `ret` of `if size_average: ret = ssim_map.mean()` / `else: ret =
        ...` is the first binding alone."""
        if self.one_element(value, value, depth + 1, set(seen)):
            return True
        if isinstance(value, ast.BinOp) and hops < MAX_NESTED:  # `torch.prod(mcs) * mssim[-1] ** w`
            sides = (value.left, value.right)
            numbers = [self.scalar(s, value, depth + 1, set(seen)) for s in sides]
            return not all(numbers) and all(
                number or self._one_under(s, fn, env, depth, seen, hops + 1) for s, number in zip(sides, numbers))
        if isinstance(value, ast.Subscript) and not isinstance(value.slice, (ast.Slice, ast.Tuple)):
            return self._joined_one(value.value, fn, env)
        if isinstance(value, ast.Name) and hops < MAX_NESTED:
            values = self._rebound(value, fn, env, self.names.bindings(value.id, value))
            if not values or any(not isinstance(v, ast.AST) or self.names.augmented(v) for v in values):
                return False  # a parameter, a loop's element, `ret += x`
            live = [v for v in values if self._reachable(v, fn, env)]
            return bool(live) and all(self._one_under(v, fn, env, depth, seen, hops + 1) for v in live)
        if not isinstance(value, ast.Call):
            return False
        callee = self.project_callee(value.func, value)
        passed = None if callee is None else self._bind(callee, value, env)
        return bool(passed) and self.reachable_one(callee, passed, depth + 1, seen)

    def _joined_one(self, joined: ast.AST, fn: ast.FunctionDef, env: Env) -> bool:
        """`mssim` of `mssim = torch.cat(mssim)` (or `torch.stack`), every value of the list
        one element when the parameters hold `env`: a 1-dim tensor of them, in 0.3 as today
        (once VF404 stacks them), whose element `mssim[levels - 1]` is one."""
        bound = self.names.bindings(joined.id, joined) if isinstance(joined, ast.Name) else []
        if not bound or not all(isinstance(b, ast.Call) and len(b.args) == 1 and not b.keywords
                                and self.index.qual(b.func) in _JOINS for b in bound):
            return False
        for b in bound:
            seq = b.args[0]
            members = self.names.list_literal_members(seq.id, seq) if isinstance(seq, ast.Name) else None
            if not members or not all(self._one_given(m, fn, env) for m in members):
                return False
        return True

    def _rebound(self, read: ast.Name, fn: ast.FunctionDef, env: Env, values: list) -> list:
        """The bindings of `values` (those reaching `read`, a parameter's last as None) that an
        assignment certainly run before `read` when the parameters hold `env` does not replace:
        `x` of `if average: x = torch.mean(x)` / `return x` is the mean alone when `average`
        is true. Certainly run: in a statement of `fn`'s body before the one holding `read`,
        inside nothing but `with` blocks and `if`s decided toward it (no loop, no `try`)."""
        certain = [v for v in values if isinstance(v, ast.AST) and self._runs_before(v, read, fn, env)]
        if not certain:
            return values
        last = max(certain, key=lambda v: (v.lineno, v.col_offset))
        start = self.index.statement_of(last)
        start = (start.lineno, start.col_offset)
        parameter = values and values[-1] is None and read.id in nm.function_params(fn)
        placed = []
        for v in (values[:-1] if parameter else values):
            # an unpacking (`hi, _ = layer(hi)`) or a loop target sits where its value is
            anchor = v.value if isinstance(v, Unpacked) else v.iterable if isinstance(v, Element) else v
            if not isinstance(anchor, ast.AST):
                return values  # another binding volfix cannot place (a `with ... as`, an import)
            stmt = self.index.statement_of(anchor)
            placed.append((v, (stmt.lineno, stmt.col_offset)))
        return [v for v, at in placed if at >= start]

    def _runs_before(self, value: ast.AST, read: ast.AST, fn: ast.FunctionDef, env: Env) -> bool:
        stmt = self.index.statement_of(value)
        if not isinstance(stmt, ast.Assign) or stmt.value is not value:
            return False
        parents = self.index.parents
        child, node = stmt, parents.get(stmt)
        while node is not fn:
            if isinstance(node, ast.If):
                truth = self._decide(node.test, env)
                if truth is None or any(c is child for c in node.body) != truth:
                    return False
            elif not isinstance(node, (ast.With, ast.AsyncWith)):
                return False
            child, node = node, parents.get(node)
        holder = self.index.statement_of(read)
        while parents.get(holder) is not fn:
            holder = parents.get(holder)
            if holder is None:
                return False
        body = fn.body
        return child in body and holder in body and body.index(child) < body.index(holder)

    def _bind(self, fn: ast.FunctionDef, call: ast.Call, env: Env) -> Optional[Env]:
        """The constants `call` gives `fn`'s parameters (`calls.passed_argument`): literal
        arguments, what the caller's own parameters (or its instance's, `self.size_average`)
        hold in `env` passed on, defaults kept; a parameter `*args` or `**kwargs` may fill is
        unknown."""
        positional = bound_positional(fn, self.index.method_class(fn) is not None)
        if fn.args.vararg is not None or len(call.args) > len(positional):
            return None
        defaults = _defaults(fn)
        out: Env = {}
        for name in positional + [a.arg for a in fn.args.kwonlyargs]:
            arg, known = passed_argument(call, positional, name)
            if arg is None and known and name in defaults:
                out[name] = defaults[name]
            elif arg is not None:
                found, constant = self._known(arg, env)
                if found:
                    out[name] = constant
        return out

    def _known(self, expr: ast.AST, env: Env) -> Tuple[bool, object]:
        """(True, the constant) when `expr` is a literal, a parameter holding one in `env`
        (never rebound), or `self.X` set once, to such a parameter of `__init__` (and never
        from outside the class in this module)."""
        if isinstance(expr, ast.Constant):
            return True, expr.value
        if isinstance(expr, ast.Name) and expr.id in env and self._fixed(expr.id, expr):
            return True, env[expr.id]
        if isinstance(expr, ast.Attribute) and isinstance(expr.value, ast.Name) and expr.value.id == "self":
            values = self.names.self_bindings(expr.attr, expr)
            if any(isinstance(n.ctx, ast.Store) and not (isinstance(n.value, ast.Name) and n.value.id == "self")
                   for n in self.index.attributes.get(expr.attr, ())):
                return False, None  # `ssim_loss.size_average = False` from outside
            if len(values) == 1 and isinstance(values[0], ast.Name) and self._fixed(values[0].id, values[0]):
                init = self.index.function_of(values[0])
                key = MADE + values[0].id
                if isinstance(init, ast.FunctionDef) and init.name == "__init__" and key in env:
                    return True, env[key]
        return False, None

    def _reachable(self, node: ast.AST, fn: ast.FunctionDef, env: Env) -> bool:
        """No `if` around `node` (a return, a value bound; inside `fn`) decides against it when
        the parameters hold `env`, and no statement before it in its block leaves `fn` first
        (`if size_average: return x.mean()` decided true, then `return x`)."""
        parents = self.index.parents
        child, node = node, parents.get(node)
        while node is not None:
            if isinstance(child, ast.stmt):
                if isinstance(node, ast.If):
                    truth = self._decide(node.test, env)
                    if truth is not None and any(c is child for c in node.body) != truth:
                        return False
                slot = self.index.slot_of(child)
                if slot is not None and any(self._leaves(before, env) for before in slot[2][:slot[3]]):
                    return False
            if node is fn:
                return True
            child, node = node, parents.get(node)
        return True

    def _leaves(self, stmt: ast.stmt, env: Env) -> bool:
        """`stmt` always returns (or raises) when the parameters hold `env`."""
        if isinstance(stmt, (ast.Return, ast.Raise)):
            return True
        if isinstance(stmt, ast.If):
            truth = self._decide(stmt.test, env)
            taken = [stmt.body] if truth is True else [stmt.orelse] if truth is False else [stmt.body, stmt.orelse]
            return all(branch and self._leaves(branch[-1], env) for branch in taken)
        return False

    def _decide(self, test: ast.AST, env: Env) -> Optional[bool]:
        """The truth of a test on values `_known` in `env`: `size_average`, `not full`, `x is
        None`, `reduction == 'mean'`, `mode in ('sum', 'mean')`, and `and`/`or` of such tests;
        None when not decided."""
        if isinstance(test, ast.UnaryOp) and isinstance(test.op, ast.Not):
            inner = self._decide(test.operand, env)
            return None if inner is None else not inner
        if isinstance(test, ast.BoolOp):
            parts = [self._decide(v, env) for v in test.values]
            settles = isinstance(test.op, ast.Or)  # True settles `or`, False settles `and`
            if settles in parts:
                return settles
            return None if None in parts else not settles
        if isinstance(test, ast.Compare) and len(test.ops) == 1:
            known, value = self._known(test.left, env)
            constants = _constants(test.comparators[0])
            if not known or constants is None:
                return None
            op = test.ops[0]
            if isinstance(op, (ast.In, ast.NotIn)):
                return (value in constants) == isinstance(op, ast.In) if isinstance(test.comparators[0], (
                    ast.Tuple, ast.List, ast.Set)) else None
            if len(constants) != 1 or not isinstance(op, (ast.Eq, ast.NotEq, ast.Is, ast.IsNot)):
                return None
            if isinstance(op, (ast.Is, ast.IsNot)) and not any(constants[0] is c for c in (None, True, False)):
                return None  # `is` of a string or a number: identity, not equality
            same = value is constants[0] if isinstance(op, (ast.Is, ast.IsNot)) else value == constants[0]
            return same == isinstance(op, (ast.Eq, ast.Is))
        if isinstance(test, (ast.Name, ast.Attribute)):
            known, value = self._known(test, env)
            return bool(value) if known else None
        return None

    def _fixed(self, name: str, at: ast.AST) -> bool:
        """`name` is a parameter of the function holding `at`, never rebound in it."""
        return self.names.bindings(name, at) == [None]


def _receiver(func: ast.AST, callee) -> ast.AST:
    """The instance a call is made on: `obj` of `obj.score(x)` (a method: its def, or another
    file's `Cls().score` key), `ssim_loss` of `ssim_loss(x, y)` (its `forward` or `__call__`)."""
    method = callee.name if isinstance(callee, ast.FunctionDef) and callee.name not in ("forward", "__call__") \
        else callee.rpartition(INSTANCE_METHOD)[2] if isinstance(callee, str) and INSTANCE_METHOD in callee else None
    return func.value if method is not None and isinstance(func, ast.Attribute) and func.attr == method else func


def _constants(node: ast.AST) -> Optional[tuple]:
    """The constants a comparison reads: `'mean'` (one), `('sum', 'mean')` (each); None when
    any is something else."""
    items = node.elts if isinstance(node, (ast.Tuple, ast.List, ast.Set)) else [node]
    if not all(isinstance(i, ast.Constant) for i in items):
        return None
    return tuple(i.value for i in items)


def _spelled(needed: Env, positions: List[str]) -> str:
    """`size_average@3=True,...`: each parameter, its place among a call's positional arguments
    (-1: keyword-only) and the constant it must hold (its default; left out when its spelling
    would not survive this format)."""
    parts = []
    for name in sorted(needed):
        value = repr(needed[name])
        kept = "" if any(c in value for c in ",@=") else "=" + value
        parts.append(f"{name}@{positions.index(name) if name in positions else -1}{kept}")
    return ",".join(parts)


def _keeps(call: ast.Call, needed: str) -> bool:
    """`call` gives each parameter `needed` names (`size_average@2=True,...`) the value that
    decides: it passes none (the default is kept), or that constant (`size_average=True`,
    as pytorch_ssim's README spells the call); and nothing unpacked that could hold one
    (`SSIM(**options)`)."""
    if any(isinstance(a, ast.Starred) for a in call.args) or any(k.arg is None for k in call.keywords):
        return False
    for part in needed.split(","):
        name, _, rest = part.rpartition("@")
        place, equals, value = rest.partition("=")
        given = [call.args[int(place)]] if 0 <= int(place) < len(call.args) else []
        given += [k.value for k in call.keywords if k.arg == name]
        if given and not (equals and len(given) == 1 and isinstance(given[0], ast.Constant)
                          and repr(given[0].value) == value):
            return False
    return True


def _needed(env: Env, holds: Callable[[Env], bool]) -> Optional[Env]:
    """The part of `env` that `holds` rests on (each parameter left out in turn), or None when
    it does not hold with all of it."""
    if not env or not holds(env):
        return None
    needed = {p: v for p, v in env.items() if not holds({q: w for q, w in env.items() if q != p})}
    return needed if needed and holds(needed) else env


def _defaults(fn: ast.FunctionDef) -> Env:
    """The constant defaults of `fn`'s parameters."""
    return {name: d.value for name, d in parameter_defaults(fn).items() if isinstance(d, ast.Constant)}
