"""VF105: a `volatile` parameter nothing reads, and the `volatile=` arguments passed to it."""
import ast
import builtins
from typing import List, Optional

from ..files import prefilter
from ..flow.calls import FRAMEWORK_METHODS, bound_positional, call_sites
from ..flow import grad_mode
from ..flow.grad_mode import literal_truth
from ..model import Applicability
from ..project.facts import REQUIRED_VOLATILE, VOLATILE_PARAM
from ..syntax import names as nm
from .base import Rule
from .vf104_flag_parameter import VolatileFlagParameter

# Modules whose functions take a `volatile=` of their own (Triton's `tl.load(..., volatile=True)`).
_OWN_VOLATILE = frozenset({"triton", "chainer"})


class DeadVolatileFlag(Rule):
    """
    ## What it does
    Finds a parameter named `volatile` that nothing in its function reads, and the
    `volatile=` arguments passed to it: what is left of a helper such as
    `to_tensor(ndarray, volatile=False)` once its `Variable(..., volatile=volatile)` is gone.
    Also finds `volatile=` passed to a function this file imports (a helper in another
    module of the project, also through `from util import *`), or to a method of an object
    made elsewhere (`model.forward_emb(x, volatile=True)`), when nothing else reports that
    call. A parameter the function only assigns (`volatile = True`) or hands back to itself
    (`[variable(y, volatile=volatile) for y in x]`) counts as unread. A parameter torch code
    still reads to choose what it does (`if volatile: return volatile_variable(x)`), with no
    other finding in its function, is reported too, with no fix: `check` does not pass while
    the flag decides something. Reads by today's API (`torch.set_grad_enabled(not
    volatile)`, `if volatile: with torch.no_grad(): ...`) and `volatile=volatile` handed to
    another call are not such reads.

    ## Why is this bad?
    PyTorch 0.4 removed `volatile`. Once the helper's `Variable` call no longer takes the
    flag (VF101-VF103 moved the decision to `torch.no_grad()` regions at the call sites),
    the parameter does nothing, yet every call still passes `volatile=True`, which reads as
    if it mattered.

    ## Example
    ```python
    import torch


    def to_tensor(ndarray, volatile=False):
        return torch.from_numpy(ndarray).float()


    with torch.no_grad():
        value = critic(to_tensor(state, volatile=True))
    ```

    ## Use instead
    ```python
    import torch


    def to_tensor(ndarray):
        return torch.from_numpy(ndarray).float()


    with torch.no_grad():
        value = critic(to_tensor(state))
    ```

    ## Fix safety
    Unsafe, and only offered when every use of the function is a call in this file that
    volfix can edit (no use other than a call, no call passing later arguments by position,
    not a method frameworks call by name such as `forward`): the fix removes the parameter,
    its argument from every call, and the function's own `volatile = True` assignments (a
    parameter only assigned is not read). A caller in another file that still passes it would
    raise a `TypeError`: while the project's other files hold a call of that name passing
    `volatile=` (`to_variable(x, cuda=cuda, volatile=volatile)`), there is no fix, and the
    diagnostic names those calls. Otherwise no fix, and the diagnostic names the uses. A literal
    `volatile=` passed to a function defined elsewhere is dropped with an unsafe fix (the
    function may use its flag for more than `Variable`), when the call is inside a
    `torch.no_grad()` region (or only makes a value every later read of which is in one) or
    passes False; `volatile=True` outside a region (the intent a region must restore) or a
    non-literal flag get no fix, and so does an argument of a project function that takes
    `volatile` without a default (`def wrap_with_variable(tensor, volatile, gpu)`: without the
    argument the call raises a TypeError; the note names the def). A name bound to a container
    or filled by key (`volatile = {}`, `volatile["goal_sample_prob"] = p`) passed as
    `volatile=volatile` is data, not a flag, and is not reported. Calls in the project's
    notebooks count as calls in other files.
    """

    CODE = "VF105"
    MESSAGE = "A `volatile` parameter does nothing since PyTorch 0.4 removed the flag; drop it and its arguments"
    FIX = Applicability.UNSAFE
    FIX_TITLE = "Drop the `volatile` parameter and its arguments"
    NEEDS = prefilter.TORCH_VOLATILE_KEYWORD
    NAMES = frozenset({"volatile"})

    def after_planning(self, ctx) -> None:
        if not ctx.tensor_file:
            return
        dead = {}
        for fn in ctx.index.functions:
            if "volatile" in _params(fn) and not _reads_volatile(fn, ctx.index):
                dead[id(fn)] = fn
                self.report_parameter(ctx, fn)
            elif "volatile" in _params(fn):
                self.report_live_parameter(ctx, fn)
        self.report_foreign_arguments(ctx, dead)

    def report_live_parameter(self, ctx, fn) -> None:
        """A `volatile` parameter that still decides something in torch code (`if volatile:
        return volatile_variable(x)`) with no other finding in its function: no fix can say
        what the branch should become, so the finding stays and names the reads and calls."""
        index = ctx.index
        start, end = ctx.src.start(fn), ctx.src.end(fn)
        if any(start <= f.start < end for f in ctx.findings if f.code != self.CODE):
            return  # a VF1xx finding of its own decides about the flag
        if not any(nm.is_torch(index.qual(n)) for n in ast.walk(fn) if isinstance(n, (ast.Name, ast.Attribute))):
            return  # not torch code (`declare(name, volatile=False)` writing C)
        reads = [n for n in ast.walk(fn) if isinstance(n, ast.Name) and n.id == "volatile"
                 and isinstance(n.ctx, ast.Load) and not _passed_to_itself(n, fn, index) and not _handed_on(n, index)
                 and not _chooses_grad_mode(n, index)]
        if not reads:
            return  # only today's grad-mode API reads it (`torch.set_grad_enabled(not volatile)`), or a callee
        sites, _ = call_sites(index, fn)
        passing = [c for c in sites if _passes(c, fn, ctx)]
        lines = ", ".join(sorted({f"line {n.lineno}" for n in reads}, key=lambda t: int(t.split()[1])))
        start, end = VolatileFlagParameter.param_span(ctx, fn, "volatile")
        ctx.report_span(
            self.CODE, start, end,
            message=f"Parameter `volatile` of `{fn.name}()` still decides what it does ({lines}), though PyTorch 0.4 "
                    f"removed the flag",
            note="no fix: volfix cannot tell what the code it chooses should become; decide it, then drop the "
                 "parameter" + (f" and the arguments of the calls passing it ({_lines(passing)})" if passing else
                                " and its arguments"))

    def report_parameter(self, ctx, fn) -> None:
        start, end = VolatileFlagParameter.param_span(ctx, fn, "volatile")
        finding = ctx.report_span(
            self.CODE, start, end,
            message=f"Parameter `volatile` of `{fn.name}()` does nothing since PyTorch 0.4 removed the flag; "
                    f"drop it and its arguments")
        sites, why = self.blocker(ctx, fn)
        edits = None if why is not None else VolatileFlagParameter.drop_parameter(ctx, fn, "volatile")
        if why is None and edits is None:
            why = "the signature cannot be edited safely"
        if why is None:
            stores, why = _dead_stores(ctx, fn)
            if why is None:
                edits += stores
        passing = [s for s in sites if _passes(s, fn, ctx)]
        if why is not None:
            where = f" (calls passing it: {_lines(passing)})" if passing else ""
            finding.note = f"no fix: {why}{where}"
            return
        for site in passing:
            node = _argument_node(site, fn, ctx)
            edits += ctx.expr.drop_argument(site, node)
        finding.fix = ctx.edit_fix(Applicability.UNSAFE, self.FIX_TITLE, edits)
        finding.note = ("unsafe fix: a caller in another file that passes `volatile=` would raise a TypeError"
                        + (f" (calls here: {_lines(passing)})" if passing else ""))

    @staticmethod
    def blocker(ctx, fn):
        """(this file's calls of `fn`, why its parameter cannot be dropped or None)."""
        index = ctx.index
        method = index.method_class(fn) is not None
        sites, other = call_sites(index, fn)
        if method and (fn.name in FRAMEWORK_METHODS or fn.name.startswith("__")):
            return sites, f"`{fn.name}()` is called by the framework, through calls volfix cannot list"
        if other:
            return sites, f"`{fn.name}` is also used other than by a call (line {other[0]})"
        args = fn.args
        positional = [a.arg for a in args.posonlyargs + args.args]
        if "volatile" in [a.arg for a in args.posonlyargs]:
            return sites, "the parameter is positional-only"
        if "volatile" in positional:
            position = bound_positional(fn, method).index("volatile")
            for site in sites:
                if any(isinstance(a, ast.Starred) for a in site.args) or len(site.args) > position + 1:
                    return sites, f"the call at line {site.lineno} passes arguments after it by position"
        for site in sites:
            if any(k.arg is None for k in site.keywords):
                return sites, f"the call at line {site.lineno} passes `**kwargs` that may hold it"
        passing = ctx.links.external_calls_of(VOLATILE_PARAM + fn.name) if ctx.links is not None else ()
        if passing:
            where = ", ".join(f"{c.path}:{c.line}" for c in passing[:3]) + (", ..." if len(passing) > 3 else "")
            return sites, (f"calls in other files pass it ({where}), which would raise a TypeError without it: "
                           "drop their arguments first")
        return sites, None

    def report_foreign_arguments(self, ctx, dead) -> None:
        """`volatile=` passed to a function this file does not define, on a call nothing
        else reports (a helper in another module whose flag was migrated there)."""
        index = ctx.index
        reported = {f.start for f in ctx.findings if f.code != self.CODE}
        own = {fn.name for fn in index.functions}
        for calls in index.calls.values():
            for call in calls:
                keyword = next((k for k in call.keywords if k.arg == "volatile"), None)
                if keyword is None or ctx.src.start(call) in reported or ctx.variable_call(call) is not None:
                    continue
                name = _callee_name(call.func)
                if name is None or name in own or name == "Variable":
                    continue  # this file's function: reported at its parameter when dead
                qual = index.qual(call.func)
                if qual is None and isinstance(call.func, ast.Name) and _from_star_import(index, name):
                    qual = name  # `from util import *` then `to_tensor(x, volatile=True)`
                if qual is None and isinstance(call.func, ast.Attribute) and _bound_receiver(index, call.func):
                    qual = name  # `model.forward_emb(x, volatile=True)`: a method of an object made elsewhere
                if qual is None or qual.partition(".")[0] in _OWN_VOLATILE | {"torch"}:
                    continue  # not imported (a local class, a builtin), or an API with its own flag
                message = (f"`volatile=` passed to `{name}()`, defined elsewhere: PyTorch 0.4 removed the flag, "
                           f"so it does nothing unless that function still reads it")
                truth = literal_truth(keyword.value)
                if truth is None and _holds_data(keyword.value, index):
                    continue  # `volatile=volatile` with `volatile = {}` filled with features: no flag
                if truth is None:
                    ctx.report(self.CODE, keyword, message=message,
                               note=f"no fix: the flag is not a literal; drop it with the `volatile` parameter of "
                                    f"`{name}()`")
                    continue
                if truth and not ctx.covered(call) and not grad_mode.reads_covered(ctx.index, call):
                    # What `volatile=True` asked for is no graph where the result is computed
                    # with, not a region around this call; and the function may still read it.
                    ctx.report(self.CODE, keyword, message=message,
                               note=f"no fix: `volatile=True` asked for no graph where the result is computed with, "
                                    f"and this call is in no `torch.no_grad()` region: make sure that code runs under "
                                    f"one; once `{name}()` no longer reads its `volatile` parameter, drop both")
                    continue
                needed = ctx.links.external_calls_of(REQUIRED_VOLATILE + name) if ctx.links is not None else ()
                if needed:
                    where = ", ".join(f"{d.path}:{d.line}" for d in needed[:3])
                    ctx.report(self.CODE, keyword, message=message,
                               note=f"no fix: `{name}()` ({where}) takes `volatile` without a default, so the call "
                                    f"would raise a TypeError without the argument: drop the parameter and its "
                                    f"arguments together")
                    continue
                edits = ctx.expr.drop_argument(call, keyword)
                ctx.report(self.CODE, keyword, message=message,
                           note=f"unsafe fix: if `{name}()` still uses its `volatile` parameter for more than "
                                f"`Variable(volatile=)`, dropping the argument changes what it does",
                           fix=ctx.edit_fix(Applicability.UNSAFE, "Drop the `volatile=` argument", edits))


_CONTAINERS = (ast.Dict, ast.List, ast.Set, ast.DictComp, ast.ListComp, ast.SetComp)


def _holds_data(value: ast.AST, index) -> bool:
    """A name its function binds to a container (`volatile = {}`, `dict(...)`) or fills by key
    (`volatile["goal_sample_prob"] = p`): lil-lab/ciff's replay items pass features so."""
    if not isinstance(value, ast.Name):
        return False
    scope = index.function_of(value)
    for node in index.names.get(value.id, ()):
        if index.function_of(node) is not scope:
            continue
        parent = index.parents.get(node)
        if isinstance(parent, ast.Subscript) and parent.value is node and isinstance(parent.ctx, ast.Store):
            return True
    values = index.plain_assignments(value.id, scope) or []
    return any(isinstance(v, _CONTAINERS) or isinstance(v, ast.Call) and isinstance(v.func, ast.Name)
               and v.func.id in ("dict", "list", "set", "OrderedDict", "defaultdict") for v in values)


def _bound_receiver(index, func: ast.Attribute) -> bool:
    """The object of `obj.method(...)` (its leftmost name) is a name the file binds, such as a
    parameter or `self`: not a module nothing imports (`shelve.open(...)` without `import shelve`)."""
    root = func.value
    while isinstance(root, (ast.Attribute, ast.Subscript, ast.Call)):
        root = root.func if isinstance(root, ast.Call) else root.value
    return isinstance(root, ast.Name) and index.binds_anywhere(root.id)


def _from_star_import(index, name: str) -> bool:
    """`name` is bound nowhere in the file, which star-imports a module of its own (not
    torch's, Triton's or Chainer's): the name comes from there."""
    if index.binds_anywhere(name) or index.module_names.bound(name) or hasattr(builtins, name):
        return False
    return any(module.lstrip(".").partition(".")[0] not in _OWN_VOLATILE | {"torch"}
               for module in index.module_names.star_modules)


def _params(fn) -> List[str]:
    args = fn.args
    return [a.arg for a in args.posonlyargs + args.args + args.kwonlyargs]


def _reads_volatile(fn, index) -> bool:
    """`volatile` is read in the body (or may be, through `locals()` / `vars()`). Assigning it
    is no read: `if phase == 'validation': volatile = True` once chose `Variable(data, volatile)`;
    nor is handing it back to the function itself (`[variable(y, volatile=volatile) for y in x]`)."""
    for node in ast.walk(fn):
        if isinstance(node, ast.Name) and node.id in ("locals", "vars"):
            return True
        if isinstance(node, ast.Name) and node.id == "volatile" and not isinstance(node.ctx, ast.Store) \
                and not _passed_to_itself(node, fn, index):
            return True
    return False


def _handed_on(name: ast.Name, index) -> bool:
    """The read is `volatile=volatile` given to another call (whose own parameter, or whose
    caller check, reports it), or an argument of today's torch API (`torch.set_grad_enabled(not volatile)`)."""
    node, parent = name, index.parents.get(name)
    while isinstance(parent, (ast.UnaryOp, ast.BoolOp)):
        node, parent = parent, index.parents.get(parent)
    if isinstance(parent, ast.keyword) and parent.arg == "volatile" and parent.value is node:
        return True
    if isinstance(parent, ast.keyword):
        parent = index.parents.get(parent)
    return isinstance(parent, ast.Call) and node is not parent.func and nm.is_torch(index.qual(parent.func))


def _chooses_grad_mode(name: ast.Name, index) -> bool:
    """The read is the test of an `if` that enters a grad-mode region in a branch (`if volatile:
    with torch.no_grad(): ...`): the author's own flag for today's API."""
    node, parent = name, index.parents.get(name)
    while parent is not None and not isinstance(parent, ast.stmt):
        node, parent = parent, index.parents.get(parent)
    return isinstance(parent, ast.If) and parent.test is node and any(
        isinstance(s, ast.With) and any(grad_mode.disables_grad(index, item.context_expr) for item in s.items)
        for s in parent.body + parent.orelse)


def _passed_to_itself(name: ast.Name, fn, index) -> bool:
    """`volatile=volatile` in a call of `fn` by its own name (`variable(y, volatile=volatile)`,
    `self.to_var(y, volatile=volatile)` in a method)."""
    keyword = index.parents.get(name)
    call = index.parents.get(keyword)
    if not (isinstance(keyword, ast.keyword) and keyword.arg == "volatile" and isinstance(call, ast.Call)):
        return False
    func = call.func
    if index.method_class(fn) is not None:
        return isinstance(func, ast.Attribute) and func.attr == fn.name and isinstance(func.value, ast.Name) \
            and func.value.id == "self"
    return isinstance(func, ast.Name) and func.id == fn.name and not index.shadowed(fn.name, index.scope_of(call))


def _dead_stores(ctx, fn):
    """(edits deleting every `volatile = <literal>` in `fn`, why they cannot be deleted or None):
    the assignments of a parameter nothing reads go with it."""
    edits: list = []
    for node in ast.walk(fn):
        if not (isinstance(node, ast.Name) and node.id == "volatile" and isinstance(node.ctx, ast.Store)):
            continue
        stmt = ctx.index.parents.get(node)
        if not (isinstance(stmt, ast.Assign) and stmt.targets == [node] and all(
                isinstance(n, (ast.Constant, ast.Name, ast.Load, ast.Compare, ast.BoolOp, ast.UnaryOp, ast.cmpop,
                               ast.boolop, ast.unaryop)) for n in ast.walk(stmt.value))):
            return [], f"line {node.lineno} assigns it other than `volatile = <literal>`"
        deletion = ctx.expr.delete_statement(stmt)
        if deletion is None:
            return [], f"the assignment at line {node.lineno} shares its line"
        edits += deletion
    return edits, None


def _passes(site: ast.Call, fn, ctx) -> bool:
    return _argument_node(site, fn, ctx) is not None


def _argument_node(site: ast.Call, fn, ctx) -> Optional[ast.AST]:
    keyword = next((k for k in site.keywords if k.arg == "volatile"), None)
    if keyword is not None:
        return keyword
    positional = bound_positional(fn, ctx.index.method_class(fn) is not None)
    if "volatile" in positional and positional.index("volatile") < len(site.args):
        return site.args[positional.index("volatile")]
    return None


def _callee_name(func: ast.AST) -> Optional[str]:
    if isinstance(func, ast.Name):
        return func.id
    if isinstance(func, ast.Attribute):
        return func.attr
    return None


def _lines(calls: List[ast.Call]) -> str:
    return ", ".join(f"line {c.lineno}" for c in calls)

