"""Is code already under a grad-disabled region? (SPEC §2.1: then a fix only unwraps.)

Recognised, in the spellings real code uses:
- `with torch.no_grad()`, `torch.autograd.no_grad()`, `torch.inference_mode()`,
  `torch.set_grad_enabled(False)`, and functions decorated with `@torch.no_grad()` (or bare);
- version-gated forms: `torch.no_grad() if new_torch else nullcontext()`, and a name bound to
  such an expression (`ctx = ...; with ctx:`);
- names bound to the grad-mode class itself, with a fallback for old torch, in this scope or
  an enclosing one: `no_grad = torch.no_grad if hasattr(torch, "no_grad") else
  contextlib.suppress`, the same as an `if`/`else` or `try`/`except` pair of assignments,
  `getattr(torch, "no_grad", contextlib.suppress)`; then `with no_grad():`;
- the project's own grad-mode functions (`GradShim`), called as `with f():`: a function
  whose every return on today's torch is `torch.no_grad()` (fastai's `def no_grad_context():
  return torch.no_grad() if IS_TORCH_04 else contextlib.suppress()`, fairseq's
  `maybe_no_grad(condition=True)`, which returns it when `hasattr(torch, 'no_grad') and
  condition`), or a `@contextmanager` generator that yields inside such a `with`. Those of
  the same file are read here; those of other files come from the project index
  (`ModuleIndex.grad_shims`, filled from the file's links).
A fallback (`contextlib.suppress`, `contextlib.nullcontext`) is what the code runs on a torch
without `no_grad`; on the torch the fixed code targets, the gated branch is the one that runs.
"""
from __future__ import annotations

import ast
from dataclasses import dataclass
from typing import Dict, List, Optional, Tuple

from ..syntax.index import FUNCTIONS, ModuleIndex
from ..syntax.names import LOCAL, function_params

NO_GRAD_QUALS = frozenset({"torch.no_grad", "torch.autograd.no_grad", "torch.autograd.grad_mode.no_grad",
                           "torch.inference_mode", "torch.autograd.inference_mode"})
SET_GRAD_QUALS = frozenset({"torch.set_grad_enabled", "torch.autograd.set_grad_enabled"})
# torch's own grad-mode context managers.
GRAD_CONTEXT_QUALS = NO_GRAD_QUALS | SET_GRAD_QUALS | {"torch.enable_grad", "torch.autograd.enable_grad"}


def inert_grad_with(index, node: ast.With) -> bool:
    """`with torch.no_grad():` or `with torch.set_grad_enabled(flag):` (torch's own, no `as`,
    arguments that compute nothing): with an empty body, it does nothing."""
    def plain(arg: ast.AST) -> bool:
        arg = arg.operand if isinstance(arg, ast.UnaryOp) and isinstance(arg.op, ast.Not) else arg
        return isinstance(arg, (ast.Name, ast.Constant))

    return all(item.optional_vars is None and isinstance(item.context_expr, ast.Call)
               and index.qual(item.context_expr.func) in GRAD_CONTEXT_QUALS and not item.context_expr.keywords
               and all(plain(a) for a in item.context_expr.args) for item in node.items)


# Context managers that do nothing: the fallback branch of a version gate.
NULL_CONTEXT_QUALS = frozenset({"contextlib.suppress", "contextlib.nullcontext", "contextlib.ExitStack"})
_MAX_DEPTH = 4


def literal_truth(node: Optional[ast.AST]) -> Optional[bool]:
    """True/False for literal flags (True, False, 1, 0), None otherwise."""
    if isinstance(node, ast.Constant) and isinstance(node.value, (bool, int)) and not isinstance(node.value, float):
        return bool(node.value)
    return None


def disables_grad(index: ModuleIndex, expr: ast.AST, any_grad_mode: bool = False, depth: int = 0) -> bool:
    """Does entering `expr` (a with-item or a decorator) turn recording off?"""
    return _kind(index, expr, any_grad_mode, depth, called=False) == "off"


def _kind(index: ModuleIndex, expr: ast.AST, any_grad_mode: bool, depth: int, called: bool) -> Optional[str]:
    """"off" (turns recording off), "null" (a do-nothing fallback) or None (anything else).
    `called`: `expr` is the callee of a call (a class or factory), not a context manager."""
    if depth > _MAX_DEPTH:
        return None
    if isinstance(expr, ast.IfExp):  # version-gated: `torch.no_grad() if ok else nullcontext()`
        truth = _guard(index, expr.test, {})
        if truth is not None:  # a version test: today's torch takes one side
            return _kind(index, expr.body if truth else expr.orelse, any_grad_mode, depth + 1, called)
        kinds = {_kind(index, expr.body, any_grad_mode, depth + 1, called),
                 _kind(index, expr.orelse, any_grad_mode, depth + 1, called)}
        return "off" if "off" in kinds else ("null" if kinds == {"null"} else None)
    if isinstance(expr, ast.Name):
        values, scope = _bindings(index, expr)
        kinds = {_kind(index, v, any_grad_mode, depth + 1, called) for v in values}
        if isinstance(scope, ast.Module):  # imports too: `from torch import no_grad` / `except: no_grad = ...`
            kinds |= {_qual_kind(q, called) for q in index.module_names.every(expr.id)}
        if not kinds and scope is None:
            kinds = {_qual_kind(index.qual(expr), called)}
        if "off" in kinds and kinds <= {"off", "null"}:
            return "off"
        return "null" if kinds == {"null"} else None
    if isinstance(expr, ast.Call):
        if called:
            return None  # `make_ctx()()`: unknown
        func = expr.func
        if _is_getattr_of_torch(index, expr):
            return None
        qual = index.qual(func)
        if qual in SET_GRAD_QUALS:
            return "off" if expr.args and (any_grad_mode or literal_truth(expr.args[0]) is False) else None
        if qual == "builtins.getattr" or (isinstance(func, ast.Name) and func.id == "getattr"):
            return None
        if isinstance(func, ast.Call) and _is_getattr_of_torch(index, func):
            return "off"  # `getattr(torch, "no_grad", suppress)()`
        shim = shim_called(index, expr)
        if shim is not None:  # `with no_grad_context():`, the project's own
            return shim.kind_of_call(expr, any_grad_mode)
        return _kind(index, func, any_grad_mode, depth + 1, called=True)
    return _qual_kind(index.qual(expr), called)


def _qual_kind(qual: Optional[str], called: bool) -> Optional[str]:
    if qual in NO_GRAD_QUALS:
        return "off"
    if called and qual in NULL_CONTEXT_QUALS:
        return "null"
    return None


def _is_getattr_of_torch(index: ModuleIndex, call: ast.Call) -> bool:
    """`getattr(torch, "no_grad", fallback)` / `getattr(torch, "no_grad")`."""
    func = call.func
    if not (isinstance(func, ast.Name) and func.id == "getattr" and len(call.args) >= 2):
        return False
    name = call.args[1]
    return (isinstance(name, ast.Constant) and name.value in ("no_grad", "inference_mode")
            and index.qual(call.args[0]) in ("torch", "torch.autograd"))


def bound_values(index: ModuleIndex, name: ast.Name) -> List[ast.AST]:
    """The values assigned to `name` where it is read: plain `name = value` statements of its
    own scope, or, when that scope never binds it, of the nearest enclosing one that does.
    Empty when it is bound some other way (a parameter, a loop, an import): unknown."""
    return _bindings(index, name)[0]


def _bindings(index: ModuleIndex, name: ast.Name) -> Tuple[List[ast.AST], Optional[ast.AST]]:
    """(assigned values, the scope that binds `name`); the scope is None when no scope binds
    it by assignment (imports only, or unbound), and the values are empty when a binding
    is not a plain assignment."""
    scope = index.function_of(name)
    while True:
        out: List[ast.AST] = []
        bound_here = False
        for other in index.names.get(name.id, ()):
            if not isinstance(other.ctx, ast.Store) or index.function_of(other) is not scope:
                continue
            bound_here = True
            parent = index.parents.get(other)
            if isinstance(parent, ast.Assign) and other in parent.targets:
                out.append(parent.value)
            else:
                return [], scope
        if bound_here:
            return out, scope
        if isinstance(scope, FUNCTIONS) and name.id in function_params(scope):
            return [], scope
        if isinstance(scope, ast.Module):
            return [], (scope if index.module_names.every(name.id) else None)
        scope = index.function_of(scope)


def covered(index: ModuleIndex, node: ast.AST, any_grad_mode: bool = False) -> bool:
    """Lexically inside a grad-disabled region of its own function."""
    scope = index.function_of(node)
    cur = index.parents.get(node)
    while cur is not None and cur is not scope:
        if isinstance(cur, (ast.With, ast.AsyncWith)):
            if any(disables_grad(index, item.context_expr, any_grad_mode) for item in cur.items):
                return True
        cur = index.parents.get(cur)
    if isinstance(scope, FUNCTIONS):
        return any(disables_grad(index, d, any_grad_mode) for d in scope.decorator_list)
    return False


def reads_covered(index: ModuleIndex, call: ast.AST, any_grad_mode: bool = False) -> bool:
    """A call that only makes a value (`images = make_variable(images, volatile=True)`) whose
    every later read in its function lies inside a grad-disabled region: the region the call
    asked for is there, below the call (a region never needs to hold a call that only makes
    data). At least one read; a name bound again before a read ends the value there."""
    stmt = index.statement_of(call)
    if not (isinstance(stmt, ast.Assign) and stmt.value is call and len(stmt.targets) == 1
            and isinstance(stmt.targets[0], ast.Name)):
        return False
    name = stmt.targets[0].id
    scope = index.function_of(call)
    if isinstance(scope, ast.Module):
        return False  # a script's later reads may be anywhere
    mine = [n for n in index.names.get(name, ()) if index.function_of(n) is scope]
    reads = [n for n in mine if n.lineno > stmt.end_lineno]
    if not reads or any(not isinstance(n.ctx, ast.Load) for n in reads):
        return False
    cur = index.parents.get(stmt)
    while cur is not None and cur is not scope:  # a loop's next round reads the value above the call
        if isinstance(cur, (ast.For, ast.AsyncFor, ast.While)):
            rebinds = isinstance(cur, (ast.For, ast.AsyncFor)) and any(
                isinstance(t, ast.Name) and t.id == name for t in ast.walk(cur.target))
            if not rebinds and any(cur.lineno <= n.lineno < stmt.lineno for n in mine):
                return False
        cur = index.parents.get(cur)
    return all(covered(index, n, any_grad_mode) for n in reads)


# ---------------------------------------------------------------------- the project's own


@dataclass(frozen=True)
class GradShim:
    """A function of the project whose call is a grad-disabling context manager on today's
    torch: always, or (`param`) when that parameter is true and a do-nothing context
    otherwise (`maybe_no_grad(condition=True)`)."""

    name: str
    param: Optional[str] = None
    positional: Tuple[str, ...] = ()
    default: Optional[bool] = None  # the parameter's literal default (None: none, or not a literal)

    def kind_of_call(self, call: ast.Call, any_grad_mode: bool = False) -> Optional[str]:
        """"off", "null" or None for `with <call>:`, from what it passes for `param`."""
        if self.param is None:
            return "off"
        arg, known = _passed(call, self.positional, self.param)
        if not known:
            return None
        truth = self.default if arg is None else literal_truth(arg)
        if truth is None:  # decided at run time: a grad-mode region, as `set_grad_enabled(flag)`
            return "off" if any_grad_mode and arg is not None else None
        return "off" if truth else "null"

    def to_json(self) -> list:
        return [self.name, self.param, list(self.positional), self.default]

    @staticmethod
    def from_json(raw) -> "GradShim":
        name, param, positional, default = raw
        if not isinstance(name, str) or not (param is None or isinstance(param, str)) \
                or not (default is None or isinstance(default, bool)):
            raise TypeError("not a grad-mode function")
        return GradShim(name, param, tuple(str(p) for p in positional), default)


def _passed(call: ast.Call, positional: Tuple[str, ...], param: str) -> Tuple[Optional[ast.AST], bool]:
    """(argument, True); (None, True): nothing passed; (None, False): `*args`/`**kwargs` may."""
    for kw in call.keywords:
        if kw.arg == param:
            return kw.value, True
    if param in positional:
        at = positional.index(param)
        if any(isinstance(a, ast.Starred) for a in call.args[:at + 1]):
            return None, False
        if at < len(call.args):
            return call.args[at], True
    if any(kw.arg is None for kw in call.keywords):
        return None, False
    return None, True


def shim_called(index: ModuleIndex, call: ast.Call) -> Optional[GradShim]:
    """The project grad-mode function `call` calls: a function of this module, or one of
    another file the project index linked (`index.grad_shims`, by the qualified name the call
    spells, or by its bare name for a star import)."""
    func = call.func
    external: Dict[str, GradShim] = index.grad_shims  # type: ignore[assignment]
    if isinstance(func, ast.Name):
        fn = _module_function(index, func.id)
        if fn is not None:
            return None if index.shadowed(func.id, index.scope_of(call)) else local_shim(index, fn)
        if not external:
            return None
        qual = index.qual(func)
        if qual is not None:
            return external.get(qual)
        if not index.binds_anywhere(func.id) and not index.module_names.bound(func.id):
            return external.get(func.id)  # `from .core import *`
        return None
    if external and isinstance(func, ast.Attribute):
        qual = index.qual(func)
        return external.get(qual) if qual is not None else None
    return None


def _module_function(index: ModuleIndex, name: str) -> Optional[ast.FunctionDef]:
    """The module-level `def name` the module's last binding of `name` is (None: there is
    none, or it is bound otherwise too)."""
    found = None
    for stmt in index.module_statements:
        if isinstance(stmt, ast.FunctionDef) and stmt.name == name:
            found = stmt
        elif found is not None and any(isinstance(n, ast.Name) and n.id == name and isinstance(n.ctx, ast.Store)
                                       for n in ast.walk(stmt)):
            return None
    if found is not None and any(q != LOCAL for q in index.module_names.every(name)):
        return None  # also imported under that name
    return found


def local_shim(index: ModuleIndex, fn: ast.FunctionDef) -> Optional[GradShim]:
    """`fn` read as a grad-mode function (cached on the index), or None."""
    cache = index._grad_shim_cache
    if id(fn) not in cache:
        cache[id(fn)] = None  # a recursive definition reads as no shim
        cache[id(fn)] = shim_of(index, fn)
    return cache[id(fn)]


def shim_of(index: ModuleIndex, fn: ast.AST) -> Optional[GradShim]:
    """A module-level function read as a grad-mode function: a plain function whose every
    return that today's torch reaches is a grad-disabling context (a version test such as
    `hasattr(torch, 'no_grad')` or `IS_TORCH_04` reads as true), or a `@contextmanager`
    generator whose every yield sits in a grad-disabling `with`. When that holds only while
    one parameter is true, and the other branch returns a do-nothing context, the function
    is that parameter's `GradShim`."""
    if not isinstance(fn, ast.FunctionDef) or not isinstance(index.parents.get(fn), ast.Module):
        return None
    decorators = [index.qual(d) for d in fn.decorator_list]
    generator = decorators == ["contextlib.contextmanager"]
    if decorators and not generator:
        return None
    if not generator and any(isinstance(n, (ast.Yield, ast.YieldFrom)) for n in _own_nodes(fn)):
        return None
    if _exits_kinds(index, fn, {}, generator) == {"off"}:
        return GradShim(fn.name)
    args = fn.args
    positional = tuple(a.arg for a in args.posonlyargs + args.args)
    defaults = dict(zip(positional[len(positional) - len(args.defaults):], args.defaults))
    defaults.update({a.arg: d for a, d in zip(args.kwonlyargs, args.kw_defaults) if d is not None})
    for param in positional + tuple(a.arg for a in args.kwonlyargs):
        if _exits_kinds(index, fn, {param: True}, generator) == {"off"} \
                and _exits_kinds(index, fn, {param: False}, generator) == {"null"}:
            default = literal_truth(defaults.get(param))
            return GradShim(fn.name, param, positional, default)
    return None


def _exits_kinds(index: ModuleIndex, fn: ast.FunctionDef, env: Dict[str, bool], generator: bool) -> set:
    """The kinds ("off", "null", None) of what `fn` returns (or, a generator, of its yields)
    on the paths today's torch takes with the parameters `env` gives; {None} when a path
    cannot be read."""
    out: List[Optional[str]] = []
    ends = _walk_exits(index, fn.body, env, generator, False, out)
    if ends is None:
        return {None}
    if not ends and not generator:
        out.append(None)  # falls off the end: returns None
    return set(out) if out else {None}


def _walk_exits(index, body, env, generator: bool, under_off: bool, out: list) -> Optional[bool]:
    """Collect the kinds of a block's exits into `out`; whether the block always ends in a
    return (None: a statement this reading does not follow)."""
    for stmt in body:
        if isinstance(stmt, ast.Return):
            if generator:
                return None
            out.extend(_return_kinds(index, stmt.value, env))
            return True
        if isinstance(stmt, ast.If):
            truth = _guard(index, stmt.test, env)
            branches = [stmt.body] if truth is True else [stmt.orelse] if truth is False else [stmt.body, stmt.orelse]
            ends = [_walk_exits(index, b, env, generator, under_off, out) for b in branches]
            if None in ends:
                return None
            if all(ends):
                return True
            continue
        if generator and isinstance(stmt, ast.Expr) and isinstance(stmt.value, ast.Yield):
            out.append("off" if under_off else "null")
            continue
        if generator and isinstance(stmt, (ast.With, ast.Try)):
            off = under_off or (isinstance(stmt, ast.With) and any(
                disables_grad(index, item.context_expr) for item in stmt.items))
            inner = _walk_exits(index, stmt.body, env, generator, off, out)
            if inner is None or (isinstance(stmt, ast.Try) and any(
                    _yields_or_returns(s) for s in stmt.handlers + stmt.orelse + stmt.finalbody)):
                return None
            if inner:
                return True
            continue
        if _yields_or_returns(stmt):
            return None
    return False


def _return_kinds(index: ModuleIndex, value: Optional[ast.AST], env: Dict[str, bool]) -> List[Optional[str]]:
    """The kinds a returned value can have with the parameters `env` gives: both sides of
    `torch.no_grad() if condition else ExitStack()` while `condition` is unknown."""
    if value is None:
        return [None]
    if isinstance(value, ast.IfExp):
        truth = _guard(index, value.test, env)
        if truth is None:
            return _return_kinds(index, value.body, env) + _return_kinds(index, value.orelse, env)
        return _return_kinds(index, value.body if truth else value.orelse, env)
    return [_kind(index, value, False, 1, called=False)]


def _own_nodes(node: ast.AST):
    """The nodes of `node`'s body, not those of functions, lambdas or classes inside it."""
    stack = list(ast.iter_child_nodes(node))
    while stack:
        cur = stack.pop()
        yield cur
        if not isinstance(cur, (ast.FunctionDef, ast.AsyncFunctionDef, ast.Lambda, ast.ClassDef)):
            stack.extend(ast.iter_child_nodes(cur))


def _yields_or_returns(stmt: ast.AST) -> bool:
    return isinstance(stmt, ast.Return) or any(isinstance(n, (ast.Return, ast.Yield, ast.YieldFrom))
                                               for n in _own_nodes(stmt))


def _guard(index: ModuleIndex, test: ast.AST, env: Dict[str, bool], depth: int = 0) -> Optional[bool]:
    """The truth of an `if` test on today's torch, with the parameters `env` gives (None:
    unknown). Version tests read as true: `hasattr(torch, 'no_grad')`, `torch.__version__
    >= '0.4'`, a name bound to one (`IS_TORCH_04`)."""
    if depth > _MAX_DEPTH:
        return None
    if isinstance(test, ast.Constant):
        return bool(test.value)
    if isinstance(test, ast.UnaryOp) and isinstance(test.op, ast.Not):
        inner = _guard(index, test.operand, env, depth + 1)
        return None if inner is None else not inner
    if isinstance(test, ast.BoolOp):
        values = [_guard(index, v, env, depth + 1) for v in test.values]
        decisive = isinstance(test.op, ast.Or)  # `or`: one true decides; `and`: one false
        if decisive in values:
            return decisive
        return None if None in values else not decisive
    if isinstance(test, ast.Name):
        if test.id in env:
            return env[test.id]
        values = bound_values(index, test)
        if len(values) == 1 and index.function_of(test) is not index.function_of(values[0]):
            return _guard(index, values[0], env, depth + 1)  # `IS_TORCH_04 = LooseVersion(...) >= ...`
        return None
    if isinstance(test, ast.Call) and isinstance(test.func, ast.Name) and test.func.id == "hasattr" \
            and len(test.args) == 2 and index.qual(test.args[0]) in ("torch", "torch.autograd") \
            and isinstance(test.args[1], ast.Constant) and test.args[1].value in ("no_grad", "set_grad_enabled",
                                                                                    "inference_mode"):
        return True
    if isinstance(test, ast.Compare) and len(test.ops) == 1:
        left, right = _mentions_torch_version(test.left), _mentions_torch_version(test.comparators[0])
        op = test.ops[0]
        if left != right and isinstance(op, (ast.Gt, ast.GtE, ast.Lt, ast.LtE)):
            newer = isinstance(op, (ast.Gt, ast.GtE)) == left  # `version >= x` or `x <= version`
            return newer
    return None


def _mentions_torch_version(expr: ast.AST) -> bool:
    return any(isinstance(n, ast.Attribute) and n.attr == "__version__" for n in ast.walk(expr))
