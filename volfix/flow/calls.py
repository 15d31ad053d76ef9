"""Calls of a function in one file, and what each passes for a parameter (SPEC §2.6)."""
from __future__ import annotations

import ast
from typing import Dict, List, Optional, Tuple

from ..syntax.index import ModuleIndex
from .grad_mode import literal_truth


def bound_positional(fn: ast.AST, method: bool) -> List[str]:
    """The positional parameters a call fills (a method's `self` is bound already)."""
    args = fn.args  # type: ignore[attr-defined]
    positional = [a.arg for a in args.posonlyargs + args.args]
    static = any(isinstance(d, ast.Name) and d.id == "staticmethod" for d in fn.decorator_list)  # type: ignore[attr-defined]
    return positional[1:] if method and not static else positional


def parameter_defaults(fn: ast.AST) -> Dict[str, ast.AST]:
    """parameter name -> its default expression."""
    args = fn.args  # type: ignore[attr-defined]
    positional = [a.arg for a in args.posonlyargs + args.args]
    defaults = dict(zip(positional[len(positional) - len(args.defaults):], args.defaults))
    defaults.update({a.arg: d for a, d in zip(args.kwonlyargs, args.kw_defaults) if d is not None})
    return defaults


def passed_argument(call: ast.Call, positional: List[str], param: str,
                    splat=None) -> Tuple[Optional[ast.AST], bool]:
    """What a call passes explicitly for `param`: (argument, True); (None, True) when it
    passes nothing (the default applies); (None, False) when `*args`/`**kwargs` may carry it.
    `splat` reads the entries of a `**value` that is not literal (None: unknown)."""
    for kw in call.keywords:
        if kw.arg == param:
            return kw.value, True
    if param in positional:
        index = positional.index(param)
        if any(isinstance(a, ast.Starred) for a in call.args[:index + 1]):
            return None, False
        if index < len(call.args):
            return call.args[index], True
    for kw in call.keywords:
        if kw.arg is None:
            entries = splat_entries(kw.value)
            if entries is None and splat is not None:
                entries = splat(kw.value)
            if entries is None:
                return None, False
            if param in entries:
                return entries[param], True
    return None, True


def splat_entries(value: ast.AST) -> Optional[Dict[str, ast.AST]]:
    """The entries of an inline `**dict(a=1)` / `**{"a": 1}` (None when not literal)."""
    if isinstance(value, ast.Dict):
        out = {}
        for k, v in zip(value.keys, value.values):
            if not (isinstance(k, ast.Constant) and isinstance(k.value, str)):
                return None
            out[k.value] = v
        return out
    if (isinstance(value, ast.Call) and isinstance(value.func, ast.Name) and value.func.id == "dict"
            and not value.args and all(k.arg is not None for k in value.keywords)):
        return {k.arg: k.value for k in value.keywords}
    return None


def flag_kind(arg: Optional[ast.AST], known: bool = True) -> str:
    """What a call passes as a volatile flag: 'unknown', 'none' (nothing or None), 'false',
    'true', or 'expr' (decided at run time)."""
    if not known:
        return "unknown"
    if arg is None or (isinstance(arg, ast.Constant) and arg.value is None):
        return "none"
    truth = literal_truth(arg)
    return "expr" if truth is None else ("true" if truth else "false")


# The key of `Links.called_elsewhere` for an attribute a method holding a region stores
# (`.feat`), read in another file (`project.callers_elsewhere`); a function's key is its name.
ELSEWHERE_ATTRIBUTE = "."
# Methods that frameworks call for you (`model(x)` runs `forward`) or that many classes
# define: a call by this name says nothing about which class it reaches.
FRAMEWORK_METHODS = frozenset({"forward", "__call__", "cuda", "cpu", "to", "eval", "train", "step",
                               "parameters", "state_dict", "load_state_dict", "zero_grad", "apply",
                               "get", "update", "run", "reset", "close", "save", "load", "items",
                               "keys", "values", "copy", "append", "extend", "clone", "view", "data"})


def call_sites(index: ModuleIndex, fn: ast.AST) -> Tuple[List[ast.Call], List[int]]:
    """Calls of `fn` in this file (a method by its name on any object, unless frameworks call
    it by that name; a function by its name; `__init__` of a module-level class by the class's
    name), and lines where the name is used otherwise (passed as a value)."""
    name = fn.name  # type: ignore[attr-defined]
    method = index.method_class(fn) is not None
    sites, other = [], []
    if method and name == "__init__":  # `Batch(data, fields, train=False)` runs `Batch.__init__`
        owner = index.method_class(fn)
        if isinstance(index.parents.get(owner), ast.Module):
            for node in index.names.get(owner.name, ()):
                parent = index.parents.get(node)
                if isinstance(node.ctx, ast.Load) and isinstance(parent, ast.Call) and parent.func is node:
                    sites.append(parent)
        return sites, other
    if method:
        if name in FRAMEWORK_METHODS or (name.startswith("__") and name.endswith("__")):
            return sites, other
        owner = index.method_class(fn)
        for node in index.attributes.get(name, ()):
            parent = index.parents.get(node)
            if isinstance(parent, ast.Call) and parent.func is node:
                if not _made_by_another_class(index, node.value, owner, name):
                    sites.append(parent)
            elif isinstance(node.ctx, ast.Load):
                other.append(node.lineno)
    else:
        for node in index.names.get(name, ()):
            if not isinstance(node.ctx, ast.Load):
                continue
            parent = index.parents.get(node)
            if isinstance(parent, ast.Call) and parent.func is node:
                sites.append(parent)
            else:
                other.append(node.lineno)
    return sites, other


def made_here(index: ModuleIndex, receiver: Optional[ast.AST]) -> Optional[ast.ClassDef]:
    """The module-level class (the one of its name) whose constructor call `receiver` is:
    `Memory1` for `Memory1()` in `Memory1().sample(x)`."""
    if not (isinstance(receiver, ast.Call) and isinstance(receiver.func, ast.Name)):
        return None
    classes = [s for s in index.tree.body if isinstance(s, ast.ClassDef) and s.name == receiver.func.id]
    return classes[0] if len(classes) == 1 else None


def _made_by_another_class(index: ModuleIndex, receiver: ast.AST, owner: Optional[ast.AST], name: str) -> bool:
    """`Memory1().sample(x)` for `Memory0.sample`: the receiver is made right there by another
    module-level class that defines the method itself, so the call runs that one."""
    cls = made_here(index, receiver)
    return cls is not None and cls is not owner and any(
        isinstance(s, (ast.FunctionDef, ast.AsyncFunctionDef)) and s.name == name for s in cls.body)


def mapper_calls(index: ModuleIndex, fn: ast.AST) -> List[ast.Call]:
    """Calls that hand the module-level function `fn` to a function of this file which calls it
    and returns what it returns (`map_over(x, VV_)` with `def map_over(x, f): return [f(o) for
    o in x] if is_listy(x) else f(x)`): their result is `fn`'s."""
    if not isinstance(index.parents.get(fn), ast.Module):
        return []
    name = fn.name  # type: ignore[attr-defined]
    out = []
    for node in index.names.get(name, ()):
        call = index.parents.get(node)
        if not (isinstance(node.ctx, ast.Load) and isinstance(call, ast.Call) and node in call.args
                and isinstance(call.func, ast.Name)):
            continue
        mapper = next((f for f in index.functions if getattr(f, "name", None) == call.func.id
                       and isinstance(index.parents.get(f), ast.Module)), None)
        if mapper is None or index.shadowed(call.func.id, index.scope_of(call)):
            continue
        params = [a.arg for a in mapper.args.posonlyargs + mapper.args.args]  # type: ignore[attr-defined]
        position = call.args.index(node)
        if position < len(params) and _returns_calls_of(mapper, params[position]):
            out.append(call)
    return out


def _returns_calls_of(fn: ast.AST, param: str) -> bool:
    """Every `return` of `fn` returns calls of its parameter `param` (directly, in a
    comprehension, or in either branch of a conditional expression), and `param` is used only
    so."""
    returns = [n for n in ast.walk(fn) if isinstance(n, ast.Return)]
    if not returns:
        return False
    for ret in returns:
        value = ret.value
        branches = [value.body, value.orelse] if isinstance(value, ast.IfExp) else [value]
        for b in branches:
            if isinstance(b, (ast.ListComp, ast.GeneratorExp)):
                b = b.elt
            if not (isinstance(b, ast.Call) and isinstance(b.func, ast.Name) and b.func.id == param):
                return False
    uses = [n for n in ast.walk(fn) if isinstance(n, ast.Name) and n.id == param]
    return all(isinstance(getattr(u, "ctx", None), ast.Load) for u in uses)


def argument_for(index: ModuleIndex, call: ast.Call, fn: ast.AST, param: str,
                 named_dicts: bool = False) -> Tuple[Optional[ast.AST], bool]:
    """The expression passed for `param` (or its default); known=False for *args/**kwargs.
    `named_dicts`: a `**kwargs` whose name is bound once to a literal dict and only ever
    splatted is read too (`eval_kwargs = dict(train=False)` ... `run(x, **eval_kwargs)`)."""
    method = index.method_class(fn) is not None
    splat = (lambda value: named_dict_entries(index, value)) if named_dicts else None
    arg, known = passed_argument(call, bound_positional(fn, method), param, splat)
    if arg is not None or not known:
        return arg, known
    default = parameter_defaults(fn).get(param)
    return default, default is not None


def named_dict_entries(index: ModuleIndex, value: ast.AST) -> Optional[Dict[str, ast.AST]]:
    """The entries of `**name` when `name` is bound exactly once in the file, to a literal
    dict (`dict(train=False)`, `{"train": False}`), before the call in the same scope, and
    every other mention of it is a `**name` of a call: nothing can change the dict."""
    if not isinstance(value, ast.Name):
        return None
    stores, bound = [], None
    for node in index.names.get(value.id, ()):
        parent = index.parents.get(node)
        if isinstance(node.ctx, ast.Load):
            if not (isinstance(parent, ast.keyword) and parent.arg is None and parent.value is node):
                return None
            continue
        stores.append(node)
        if isinstance(parent, ast.Assign) and parent.targets == [node]:
            bound = parent
    if len(stores) != 1 or bound is None or index.function_of(bound) is not index.function_of(value) \
            or bound.lineno >= value.lineno:
        return None
    return splat_entries(bound.value)
