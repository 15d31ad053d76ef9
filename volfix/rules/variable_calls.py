"""One reading of a `Variable(...)` call, shared by the VF1xx rules.

`Variable(data, requires_grad=False, volatile=False)` took its flags by keyword or by position
(SEMANTICS.md fact 6), or from a `**dict(volatile=...)` splat (inline, or a local dict used
only there). A call through a project wrapper (`Variable = lambda *a, **k: ...`) keeps the call
and can only lose its keyword. A call of a name the file never binds is still read, so that it
can be reported with a note (SPEC §2.9).
"""
from __future__ import annotations

import ast
import builtins
from dataclasses import dataclass, field
from typing import Dict, List, Optional, Set

from ..findings import Flag
from ..fixes.edits import TextEdit
from ..flow.calls import splat_entries
from ..flow.grad_mode import literal_truth
from ..flow.values import likely_grad
from ..model import Applicability
from ..syntax import names as nm

VARIABLE_ARGUMENTS = ("data", "requires_grad", "volatile")  # 0.3's order (SEMANTICS.md fact 6)


@dataclass
class VariableCall:
    call: ast.Call
    data: Optional[ast.AST] = None
    requires_grad: Optional[ast.AST] = None
    volatile: Optional[ast.AST] = None
    analysable: bool = True  # every argument is known (no opaque *args/**kwargs)
    wrapper: Optional[str] = None  # "through the wrapper `Variable` (line 3)": keep the call
    unresolved: Optional[str] = None  # the callee's name, when the file never binds it
    # `Variable(...)` in a torch file that binds `Variable` nowhere and star-imports nothing: a
    # NameError when it runs, even in 0.3. Read and unwrapped as torch's, with an unsafe fix.
    unbound: bool = False
    # Edits that remove the `volatile` flag from the call (keyword, positional, splat entry).
    drop_volatile: List[TextEdit] = field(default_factory=list)
    # A local dict splatted into the call (`opts = dict(volatile=True)`): deleted with the flag.
    splat_stmt: Optional[ast.stmt] = None
    splat_deletion: List[TextEdit] = field(default_factory=list)

    @property
    def volatile_truth(self) -> Optional[bool]:
        return literal_truth(self.volatile)

    @property
    def requires_grad_truth(self) -> Optional[bool]:
        return literal_truth(self.requires_grad)


def classify(call: ast.Call, ctx) -> Optional[VariableCall]:
    """The call's flags, or None when it is not a call of torch's Variable."""
    index = ctx.index
    func = call.func
    out = VariableCall(call)
    if not index.is_variable(func):
        if isinstance(func, ast.Name):
            if not _named_wrapper(out, func.id, ctx):
                return None
        else:
            # `cuda.Variable(x, volatile=True)`: a wrapper in a sibling module, through its import
            linked = _linked_wrapper(ctx, call, None) if isinstance(func, ast.Attribute) else None
            if linked is None:
                return None
            out.wrapper = f"through the wrapper `{ast.unparse(func)}` ({linked.path}:{linked.line})"
    if out.wrapper is not None or out.unresolved is not None:
        kw = next((k for k in call.keywords if k.arg == "volatile"), None)
        if kw is None:
            return None
        out.volatile = kw.value
        out.drop_volatile = ctx.expr.drop_argument(call, kw)
        out.analysable = False
        return out
    _read_arguments(out, ctx)
    return out


def _named_wrapper(out: VariableCall, name: str, ctx) -> bool:
    """`name(...)` is a project wrapper of `Variable` (here or in a linked file), or an unbound
    `Variable` given `volatile=` (a star import volfix cannot see through): notes which on `out`."""
    index, call = ctx.index, out.call
    binding = index.lookup_for(call)(name)
    wrappers = ctx.wrappers()
    raw = index.module_names.at(name, index.statement_of(call).lineno) if \
        isinstance(index.function_of(call), ast.Module) else index.module_names.final.get(name)
    linked = _linked_wrapper(ctx, call, name)
    if name in wrappers and raw == nm.LOCAL and not index.shadowed(name, index.scope_of(call)):
        out.wrapper = f"through the wrapper `{name}` (line {wrappers[name]})"
    elif linked is not None:
        out.wrapper = f"through the wrapper `{name}` ({linked.path}:{linked.line})"
    elif binding is None and name == "Variable" and ctx.torch_file and not index.module_names.star_modules \
            and not index.module_names.bound(name) and not index.binds_anywhere(name):
        out.unbound = True
    elif binding is None and not index.module_names.bound(name) and not hasattr(builtins, name) \
            and any(k.arg == "volatile" for k in call.keywords) and name == "Variable":
        out.unresolved = name
    else:
        return False
    return True


def _linked_wrapper(ctx, call: ast.Call, name: Optional[str]):
    """A wrapper of `Variable` defined in another file of the project, called here (by its
    qualified name; a bare `name` nothing binds here may be a star import's)."""
    links = ctx.links
    if links is None:
        return None
    qual = ctx.index.qual(call.func)
    # a bare name only when the file binds it nowhere (a star import's); its own `def wrap` is not the wrapper
    bare = qual is None and name is not None and not ctx.index.binds_anywhere(name)
    for linked_qual, sig in links.helpers:
        if sig.wrapper and (linked_qual == qual or (bare and linked_qual.rpartition(".")[2] == name)):
            return sig
    return None


def _read_arguments(out: VariableCall, ctx) -> None:
    call = out.call
    found: Dict[str, ast.AST] = {}
    drop: Dict[str, List[TextEdit]] = {}
    if any(isinstance(a, ast.Starred) for a in call.args) or len(call.args) > 3:
        out.analysable = False
    else:
        for name, arg in zip(VARIABLE_ARGUMENTS, call.args):
            found[name] = arg
            drop[name] = ctx.expr.drop_argument(call, arg)
    for kw in call.keywords:
        if kw.arg is None:
            splat = _splat(kw, ctx)
            if splat is None:
                out.analysable = False
                continue
            entries, edits, stmt = splat
            for name, value in entries.items():
                if name in found:
                    out.analysable = False
                found[name] = value
                if name == "volatile":
                    drop[name] = edits
                    out.splat_stmt = stmt
                    out.splat_deletion = [e for e in edits if stmt is not None and e.start >= ctx.src.start(stmt)
                                          and e.end <= ctx.src.line_after(stmt.end_lineno)]
            continue
        if kw.arg not in VARIABLE_ARGUMENTS or kw.arg in found:
            out.analysable = False
            continue
        found[kw.arg] = kw.value
        drop[kw.arg] = ctx.expr.drop_argument(call, kw)
    out.data = found.get("data")
    out.requires_grad = found.get("requires_grad")
    out.volatile = found.get("volatile")
    out.drop_volatile = drop.get("volatile", [])
    if out.data is None:
        out.analysable = False


def _splat(kw: ast.keyword, ctx):
    """`**dict(volatile=x)` / `**{"volatile": x}` / `**opts` (a local dict bound once and used
    only here): (entries, edits removing the `volatile` entry, the dict's statement)."""
    value = kw.value
    stmt = None
    if isinstance(value, ast.Name):
        bound = _single_dict(value, ctx)
        if bound is None:
            return None
        value, stmt = bound
    entries = splat_entries(value)
    if entries is None or any(name not in VARIABLE_ARGUMENTS for name in entries):
        return None
    if "volatile" not in entries:
        return entries, [], None
    if len(entries) > 1:
        return None  # keep it simple: the dict carries other flags too
    if stmt is None:
        return entries, ctx.expr.drop_argument(ctx.index.parents[kw], kw), None
    call = ctx.index.parents[kw]
    deletion = ctx.expr.delete_statement(stmt)
    if deletion is None:
        return None
    return entries, ctx.expr.drop_argument(call, kw) + deletion, stmt


def _single_dict(name: ast.Name, ctx):
    index = ctx.index
    scope = index.function_of(name)
    stores, loads = [], 0
    for other in index.names.get(name.id, ()):
        if index.function_of(other) is not scope:
            continue
        if isinstance(other.ctx, ast.Store):
            stores.append(other)
        elif isinstance(other.ctx, ast.Load):
            loads += 1
    if len(stores) != 1 or loads != 1:
        return None
    stmt = index.parents.get(stores[0])
    if not (isinstance(stmt, ast.Assign) and len(stmt.targets) == 1 and stmt.targets[0] is stores[0]):
        return None
    return stmt.value, stmt


# ---------------------------------------------------------------------- unwrapping

GRAD_FACTORIES = frozenset({f"torch.{n}" for n in (
    "zeros", "ones", "rand", "randn", "empty", "full", "arange", "eye", "linspace", "logspace",
    "tensor", "zeros_like", "ones_like", "rand_like", "randn_like", "empty_like", "full_like",
    "randint", "randperm", "normal")})
NOTE_MAY_REQUIRE_GRAD = "if the argument requires grad, gradients will now flow into it"
NOTE_MUTATES = "`requires_grad_()` changes the tensor itself, so its other references start recording"


@dataclass
class Unwrap:
    """How a `Variable(...)` call goes away."""

    edits: List[TextEdit]
    deleted: Optional[ast.stmt] = None  # `x = Variable(x)`: the statement goes
    exact: bool = True  # today's (and 0.3's) semantics are kept
    note: Optional[str] = None  # why it is not exact
    keyword_only: bool = False  # a wrapper or opaque call: only the keyword went


def unwrap(vc: VariableCall, ctx, *, detach_data: bool = False, legacy_call: bool = False) -> Unwrap:
    """The call replaced by its argument (`Variable(h.data)` -> `h.detach()` with
    `detach_data`), or by the exact `requires_grad` form when it asks for gradients.
    `legacy_call`: the call spells `volatile=` (see `RuleContext.legacy_argument_plain`).
    An unbound `Variable` (a NameError today and in 0.3) is never an exact unwrap."""
    return _if_unbound(vc, _unwrap(vc, ctx, detach_data, legacy_call))


def _unwrap(vc: VariableCall, ctx, detach_data: bool, legacy_call: bool) -> Unwrap:
    if vc.wrapper is not None or vc.unresolved is not None or not vc.analysable:
        return Unwrap(list(vc.drop_volatile), keyword_only=True)
    rg = vc.requires_grad
    if rg is not None and literal_truth(rg) is not False:
        return _requires_grad_unwrap(vc, ctx)
    call, data = vc.call, vc.data
    if detach_data and isinstance(data, ast.Attribute) and data.attr == "data":
        if _detached(data.value):  # `Variable(logit.detach().data)`: detached already
            return Unwrap(ctx.expr.replace(call, ctx.expr.text_in_place_of(call, data.value)))
        return Unwrap(ctx.expr.replace(call, f"{ctx.expr.attr_base(data.value)}.detach()"))
    edits, deleted = ctx.expr.unwrap(call, data)
    exact = ctx.legacy_argument_plain(data) if legacy_call else ctx.legacy_semantics or ctx.is_plain(data)
    return Unwrap(edits + vc.splat_deletion, deleted, exact, None if exact else NOTE_MAY_REQUIRE_GRAD)


def false_flag_fix(vc: VariableCall, ctx, title: str):
    """(fix, its unsafe note or None) of a call whose `volatile` is false there (VF102's
    `volatile=False`, VF103's flag an enclosing `if` decided false): the call unwrapped, or
    only its keyword dropped; `Variable(h.data)` becomes `h.detach()`."""
    undo = unwrap(vc, ctx, detach_data=True, legacy_call=True)
    fix = ctx.edit_fix(Applicability.SAFE if undo.exact else Applicability.UNSAFE,
                       "Remove the `volatile` flag" if undo.keyword_only else title, undo.edits)
    return fix, f"unsafe fix: {undo.note}" if undo.note else None


def _if_unbound(vc: VariableCall, undo: Unwrap) -> Unwrap:
    if not vc.unbound:
        return undo
    return Unwrap(undo.edits, undo.deleted, False, unbound_note(vc), undo.keyword_only)


def requires_grad_unwrap(vc: VariableCall, ctx) -> Unwrap:
    """`Variable(x, requires_grad=True)`: the factory keyword, `x.requires_grad_()`, or the exact
    `x.detach().requires_grad_(flag)` (SEMANTICS.md facts 13-14: a new leaf sharing x's storage)."""
    return _if_unbound(vc, _requires_grad_unwrap(vc, ctx))


def _requires_grad_unwrap(vc: VariableCall, ctx) -> Unwrap:
    call, data, flag = vc.call, vc.data, vc.requires_grad
    expr = ctx.expr
    if literal_truth(flag) is None:
        return _requires_grad_flag(vc, ctx)
    if isinstance(data, ast.Attribute) and data.attr == "data":
        return Unwrap(expr.replace(call, f"{expr.attr_base(data.value)}.detach().requires_grad_()"))
    if (isinstance(data, ast.Call) and ctx.index.qual(data.func) in GRAD_FACTORIES
            and not any(k.arg == "requires_grad" for k in data.keywords)
            and not any(isinstance(a, ast.Starred) for a in data.args)
            and not any(k.arg is None for k in data.keywords)):
        inner = ctx.src.segment(data)
        close = inner.rindex(")")
        head = inner[:close].rstrip()
        sep = "" if head.endswith("(") else (" " if head.endswith(",") else ", ")
        return Unwrap(expr.replace(call, f"{head}{sep}requires_grad=True{inner[len(head):]}"))
    fresh = isinstance(data, ast.Call) and ctx.is_plain(data)
    if isinstance(data, ast.Name) and _read_again(data, call, ctx.index):
        # `x = Variable(images, requires_grad=True)`, then `images.add_(...)`: 0.3 made a new leaf,
        # and `images.requires_grad_()` would make `images` itself one (its in-place update raises)
        return Unwrap(expr.replace(call, f"{data.id}.detach().requires_grad_()"))
    if isinstance(data, ast.Name) and not fresh and likely_grad(ctx.index, data, ctx.index.function_of(call)):
        # `loss = Variable(loss, requires_grad=True)` of a computed loss: a new leaf; on the
        # graph's output itself `requires_grad_()` would keep the graph (a second backward raises)
        return Unwrap(expr.replace(call, f"{data.id}.detach().requires_grad_()"))
    exact = fresh or ctx.legacy_semantics
    return Unwrap(expr.replace(call, f"{expr.attr_base(data)}.requires_grad_()"), exact=exact,
                  note=None if exact else NOTE_MUTATES)


def _read_again(name: ast.Name, call: ast.Call, index) -> bool:
    """The tensor `name` holds is read again in its scope after the statement holding `call`
    (or anywhere in a loop holding it), other than as a new binding's value of that name."""
    stmt = index.statement_of(call)
    if isinstance(stmt, ast.Assign) and any(isinstance(t, ast.Name) and t.id == name.id for t in stmt.targets):
        return False  # `x = Variable(x, requires_grad=True)`: the name is the new leaf from here on
    scope = index.function_of(call)
    loops = []
    cur = index.parents.get(stmt)
    while cur is not None and cur is not scope:
        if isinstance(cur, (ast.For, ast.AsyncFor, ast.While)):
            loops.append(cur)
        cur = index.parents.get(cur)

    def inside(node, outer):
        return (outer.lineno, outer.col_offset) <= (node.lineno, node.col_offset) and \
            (node.end_lineno, node.end_col_offset) <= (outer.end_lineno, outer.end_col_offset)

    for other in index.names.get(name.id, ()):
        if other is name or not isinstance(other.ctx, ast.Load) or index.function_of(other) is not scope:
            continue
        if other.lineno > stmt.end_lineno or any(inside(other, loop) for loop in loops):
            return True
    return False


def _detached(node: ast.AST) -> bool:
    """`x.detach()`: a value without history already (mean-teacher's `Variable(ema_logit.
    detach().data, requires_grad=False)` is `ema_logit.detach()`, not `.detach().detach()`)."""
    return isinstance(node, ast.Call) and isinstance(node.func, ast.Attribute) and node.func.attr == "detach" \
        and not node.args and not node.keywords


def _requires_grad_flag(vc: VariableCall, ctx) -> Unwrap:
    call, data, flag = vc.call, vc.data, vc.requires_grad
    expr = ctx.expr
    fresh = isinstance(data, ast.Call) and ctx.is_plain(data)
    base = expr.attr_base(data) if fresh else f"{expr.attr_base(data)}.detach()"
    return Unwrap(expr.replace(call, f"{base}.requires_grad_({ctx.src.segment(flag)})"))


def unresolved_note(vc: VariableCall) -> Optional[str]:
    if vc.unresolved is None:
        return None
    return f"`{vc.unresolved}` does not resolve to `torch.autograd.Variable` in this file"


def default_note(call: ast.Call, index) -> Optional[str]:
    """`def step(x, h=Variable(zeros, volatile=True))`: the value is made once, when the `def`
    runs, and reaches the body only on the calls that leave `h` out; in 0.3 those computed
    without a graph. No region can cover just them, so the unwrap alone is unsafe."""
    child, node = call, index.parents.get(call)
    while node is not None and not isinstance(node, (ast.stmt, ast.arguments)):
        child, node = node, index.parents.get(node)
    if not isinstance(node, ast.arguments):
        return None
    pairs = list(zip(node.args[len(node.args) - len(node.defaults):] if node.defaults else [], node.defaults))
    pairs += [(a, d) for a, d in zip(node.kwonlyargs, node.kw_defaults) if d is not None]
    names = [a.arg for a, d in pairs if d is child]
    param = f"`{names[0]}`" if names else "a parameter"
    return (f"the default of {param}: in 0.3 every call that leaves it out computed without a graph, "
            f"and no region can cover only those calls")


def branch_flag(stmt: ast.stmt, names: Set[str], ctx) -> Optional[Flag]:
    """`if not train: x.volatile = True` (also over a loop, `for v in batch: v.volatile = True`),
    `if training: images = Variable(images)` / `else: images = Variable(images, volatile=True)`:
    after the `if`, `names` hold a volatile value exactly when the test holds (or fails, for an
    `else:`), as with `volatile=not train`: its flag. None when the statement runs
    unconditionally (or under a test that is a constant), or nothing after the `if` reads
    `names` (inside the branch the test holds: a plain `no_grad` region)."""
    index = ctx.index
    names = set(names)
    child, node = stmt, index.parents.get(stmt)
    while isinstance(node, (ast.For, ast.AsyncFor, ast.With, ast.AsyncWith)) and any(c is child for c in node.body):
        if isinstance(node, (ast.For, ast.AsyncFor)) and isinstance(node.iter, ast.Name):
            names.add(node.iter.id)  # `for v in batch: v.volatile = True`: `batch` holds it
        child, node = node, index.parents.get(node)
    scope = index.function_of(stmt)
    if not isinstance(node, ast.If) or literal_truth(node.test) is not None or index.function_of(node) is not scope:
        return None
    if not any(isinstance(n.ctx, ast.Load) and n.lineno > node.end_lineno and index.function_of(n) is scope
               for name in names for n in index.names.get(name, ())):
        return None
    text = ctx.flag_of(node.test).text
    # `else:` of the test: volatile when it fails
    return Flag(node.test, text, negated=any(c is child for c in node.orelse), branch=node.test)


def unbound_note(vc: VariableCall) -> Optional[str]:
    if not vc.unbound:
        return None
    return ("`Variable` is never imported in this file (this call raised a NameError): "
            "unwrapped as `torch.autograd.Variable`")
