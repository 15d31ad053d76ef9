"""Evidence that a value VF401 cannot type is one element: a running total of one-element
terms (`accumulated_unknowns`), a parameter every caller in the file passes a loss
(`losses_passed`), a helper named for a scalar (`scalar_helper`), a member of a dict of losses
walked with `.items()` (`loss_dict_member`)."""
import ast
from typing import Optional, Tuple

from ..flow.bindings import Element, NameBindings
from ..flow.calls import bound_positional, call_sites, passed_argument
from ..flow.scalars import SAME_ELEMENTS, ScalarValues
from ..syntax import names as nm
from .loss_values import WORD, loss_named, unknown_factors


def accumulated_unknowns(subject: ast.AST, at: ast.AST, scalars: ScalarValues) -> list:
    """`total_loss[0]` after `total_loss = 0` and `total_loss += word_cnt * criterion(out, y).data`
    (PyTorch_GBW_LM: `word_cnt` comes out of a batch tuple): the names volfix cannot type in
    the terms, when every other binding is a number or one element and each term is arithmetic
    `unknown_factors` accepts. [] otherwise."""
    if not isinstance(subject, ast.Name):
        return []
    unknown: list = []
    for value in scalars.names.bindings(subject.id, at) or []:
        if not isinstance(value, ast.AST):
            return []
        if scalars.scalar(value, at, 0) or scalars.one_element(value, at):
            continue
        found = unknown_factors(value, at, scalars)
        if not found:
            return []
        unknown += found
    return unknown


def own_parameter(subject: ast.AST, at: ast.AST, ctx, names: NameBindings):
    """The function reading `subject` when it is a parameter of it never bound again there,
    or bound again only where that cannot reach the read (`err = err.data[0]` first thing in
    `def show(err)`)."""
    fn = ctx.index.own_parameter(subject, at)
    if fn is None and isinstance(subject, ast.Name):
        scope = ctx.index.function_of(at)
        if isinstance(scope, (ast.FunctionDef, ast.AsyncFunctionDef)) and subject.id in nm.function_params(scope) \
                and names.bindings(subject.id, at) == [None]:
            fn = scope
    return fn if isinstance(fn, (ast.FunctionDef, ast.AsyncFunctionDef)) else None


def scalar_helper(subject: ast.AST, at: ast.AST, ctx, names: NameBindings) -> Optional[str]:
    """`def unwrap_scalar_variable(var): ... return var.data[0]` (jihunchoi's helper, called from
    other files): a function named for a scalar reading its parameter's first element."""
    fn = own_parameter(subject, at, ctx, names)
    if fn is None or not any(word.lower() == "scalar" for word in WORD.findall(fn.name)):
        return None
    return fn.name


def losses_passed(subject: ast.AST, at: ast.AST, ctx, scalars: ScalarValues) -> Optional[Tuple[str, str, str]]:
    """(function, the arguments, what they are) when `subject` is a parameter of the function reading it,
    not rebound where that reaches the read, and every call of that function in this file passes a value named
    like a loss, or certainly one element, for it (`def _get_data(self, d): return
    d.data[0]`, called as `self._get_data(g_loss)`, `self._get_data(d_adv_loss)`; `unwrap(x.sum())`)."""
    fn = own_parameter(subject, at, ctx, scalars.names)
    if fn is None:
        return None  # not a parameter, or one the function binds where it reaches the read
    sites, other = call_sites(ctx.index, fn)
    if not sites or other:
        return None
    positional = bound_positional(fn, method=ctx.index.method_class(fn) is not None)
    args, losses = [], True
    for site in sites:
        arg, known = passed_argument(site, positional, subject.id)
        if arg is None or not known:
            return None
        named = loss_named(arg)
        if not named and not scalars.one_element(arg, site):
            return None
        losses = losses and named
        args.append(ctx.src.segment(arg))
    return (fn.name, ", ".join(f"`{a}`" for a in list(dict.fromkeys(args))[:3]),
            "a loss" if losses else "a loss or one element")


def loss_dict_member(subject: ast.AST, at: ast.AST, ctx, scalars: ScalarValues) -> Optional[Tuple[str, str]]:
    """(the dict, what it holds) when `subject` is a name bound only as a value of a dict walked
    with `.items()` or `.values()` (also through `sorted(...)`), every value of which is one
    element or named like a loss, one at least so (Sundrops' `for key, var in
    self._event_summaries.items()`, each stored from `self._losses[k]`, a dict written
    elsewhere too); else None."""
    if not isinstance(subject, ast.Name):
        return None
    bindings = scalars.names.bindings(subject.id, at)
    dicts = []
    for binding in bindings:
        if not isinstance(binding, Element):
            return None
        iterable = binding.iterable
        while isinstance(iterable, ast.Call) and len(iterable.args) == 1 and not iterable.keywords \
                and any(scalars._builtin(iterable.func, name, at) for name in SAME_ELEMENTS):
            iterable = iterable.args[0]
        if not (isinstance(iterable, ast.Call) and isinstance(iterable.func, ast.Attribute) and not iterable.args
                and (iterable.func.attr, binding.path) in (("items", (1,)), ("values", ()))):
            return None
        dicts.append(iterable.func.value)
    texts = {ctx.src.segment(d) for d in dicts}
    if len(texts) != 1:
        return None
    stored = scalars.stored_values(dicts[0], at)
    if not stored:
        return None
    named = [v for v in stored if loss_named(v)]
    if not named or not all(v in named or scalars.one_element(v, v) for v in stored):
        return None
    return texts.pop(), ", ".join(f"`{ctx.src.segment(v)}`" for v in named[:2]) + (" ..." if len(named) > 2 else "")
