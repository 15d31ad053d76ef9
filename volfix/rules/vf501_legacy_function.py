"""VF501: a legacy autograd Function (`forward` a method, called as `Fn()(x)`), an error since PyTorch 1.5."""
import ast
from typing import Dict, List, Optional, Set, Tuple

from ..files import prefilter
from ..fixes.edits import TextEdit
from ..flow.returns import made_callables
from ..flow.scalar_callees import AUTOGRAD_FUNCTION, CALLED_ELSEWHERE
from ..flow.shapes import own_returns
from ..model import Applicability
from ..syntax.index import FUNCTIONS
from ..syntax.positions import line_breaks
from .base import MODULE, Rule, on

_FUNCTION_BASES = frozenset({"torch.autograd.Function", "torch.autograd.function.Function",
                             "torch.autograd.function.InplaceFunction", "torch.autograd.InplaceFunction",
                             "torch.autograd._functions.utils.InplaceFunction"})
# What 0.3's `self` offered that today's `ctx` offers under the same name.
_CTX_API = frozenset({"save_for_backward", "saved_tensors", "needs_input_grad", "mark_dirty",
                      "mark_non_differentiable"})
_RENAMED = {"saved_variables": "saved_tensors"}  # 0.3's other name


class LegacyAutogradFunction(Rule):
    """
    ## What it does
    Finds subclasses of `torch.autograd.Function` whose `forward` is a method rather than a
    `@staticmethod`: the legacy Functions of PyTorch 0.3, called as `BinActive()(x)` or
    `RoIPoolFunction(7, 7, 1 / 16)(features, rois)`.

    ## Why is this bad?
    PyTorch 1.3 deprecated them and 1.5 removed them: today the first call raises
    `RuntimeError: Legacy autograd function with non-static forward method is deprecated.
    Please use new-style autograd function with static forward method.` Binarized networks,
    RoI pooling layers and custom CUDA kernels of the time stop at their first forward.

    ## Example
    ```python
    import torch


    class BinActive(torch.autograd.Function):
        def forward(self, input):
            self.save_for_backward(input)
            return input.sign()

        def backward(self, grad_output):
            input, = self.saved_tensors
            grad_input = grad_output.clone()
            grad_input[input.abs() > 1] = 0
            return grad_input


    def binarize(x):
        return BinActive()(x)
    ```

    ## Use instead
    ```python
    import torch


    class BinActive(torch.autograd.Function):
        @staticmethod
        def forward(ctx, input):
            ctx.save_for_backward(input)
            return input.sign()

        @staticmethod
        def backward(ctx, grad_output):
            input, = ctx.saved_tensors
            grad_input = grad_output.clone()
            grad_input[input.abs() > 1] = 0
            return grad_input


    def binarize(x):
        return BinActive.apply(x)
    ```

    ## Fix safety
    The fix makes `forward` and `backward` static methods of a context `ctx` (what they stored
    on `self` they store on it, `self.saved_variables` is `ctx.saved_tensors`) and turns each
    call `Fn()(...)` of the file into `Fn.apply(...)`. Settings an `__init__` stored on `self`
    (`RoIPoolFunction(7, 7, 1 / 16)(features, rois)`) become parameters of `forward` after the
    inputs, stored on `ctx` the same way, arguments of `apply` after the inputs
    (`RoIPoolFunction.apply(features, rois, 7, 7, 1 / 16)`), and `backward` returns a `None` for
    each; the `__init__` goes (a constant it stored for what `forward` stores again before
    anything reads it, `self.output = None`, is not carried over). The fix is offered when the
    class holds nothing else `self` could reach (no other method, no attribute read that
    `forward` or `__init__` does not store, `self` used only for its attributes), `__init__`
    only stores its parameters' values, `backward`'s returns show how many gradients they hold,
    and every use of the class in its file is such a call (no comment among its settings, which
    would be lost; a line break before them stays, now before the inputs).
    Safe when the class cannot be imported (a name starting with `_`, or a notebook's class);
    otherwise unsafe: a module importing it must call `Fn.apply(...)` too.

    Across a project's files (the detection repositories' layout: the Function in
    `functions/roi_pool.py`, its call in `modules/roi_pool.py`), the module calling
    `RoIPoolFunction(7, 7, 1 / 16)(features, rois)` gets a finding too, and its fix
    `RoIPoolFunction.apply(features, rois, 7, 7, 1 / 16)` (unsafe: it goes with the class's
    conversion); the class is converted when the project links such calls, unless another file
    uses it other than so (keeps an instance, `self.grl = GradReverse(lambd)`, to call later:
    no fix, and the note names that line). A public class its
    own module never calls, checked without its project, is reported without a fix: the
    conversion belongs with those calls. Otherwise it is reported without a fix, and the note
    says why. A subclass without a `backward` that its module never uses is not reported: it
    is an object with a `forward` method (SSD's `Detect`, run as `detector.forward(out,
    priors)`), which works today, and a `Detect(...)(x)` in another module is reported there.
    """

    CODE = "VF501"
    MESSAGE = ("legacy autograd Function (`forward` is not a `@staticmethod`): calling it raises since "
               "PyTorch 1.5; use static `forward(ctx, ...)`/`backward(ctx, ...)` and `Fn.apply(...)`")
    FIX = Applicability.SAFE
    FIX_TITLE = "Make `forward` and `backward` static methods of `ctx` and call `Fn.apply(...)`"
    NEEDS = prefilter.LEGACY_FUNCTION
    NAMES = frozenset({"Function"})

    @on(MODULE)
    def classes(self, module, ctx):
        for node in ast.walk(module):
            if isinstance(node, ast.ClassDef):
                self.function_class(node, ctx)
        if ctx.index.scalar_returns:
            for call in made_callables(ctx.index):
                self.other_module_call(call, ctx)

    def other_module_call(self, outer: ast.Call, ctx) -> None:
        """`Fn(settings)(inputs)` of an autograd Function another module of the project defines
        (the project index's fact, `function_fact`): `Fn.apply(inputs, settings)`."""
        inner = outer.func
        qual = ctx.index.qual(inner.func)
        fact = ctx.index.scalar_returns.get(qual + AUTOGRAD_FUNCTION) if qual is not None else None
        if not fact or fact[0] not in ("legacy", "static"):
            return
        src = ctx.src
        name = src.segment(inner.func)
        start, end = src.start(inner), src.end(inner)
        message = (f"`{name}` is an autograd Function of another module: calling an instance of it raises since "
                   f"PyTorch 1.5; call `{name}.apply(...)`")
        edits = None
        if fact[0] == "static":
            note = None if not (inner.args or inner.keywords) else (
                f"no fix: `{name}` is already static, and volfix cannot tell where its settings go in `apply`")
            if note is None:
                edits = [_apply(inner, src)]
        elif fact[1] != "fix":
            note = f"no fix: volfix cannot convert `{name}` in its module (VF501 there says why)"
        else:
            names = [d.partition("=")[0] for d in fact[2:]]
            defaults = {d.partition("=")[0]: d.partition("=")[2] for d in fact[2:] if "=" in d}
            given = settings_in_order(inner, names, defaults, src)
            if given is None or any(isinstance(a, ast.Starred) for a in outer.args) or outer.keywords:
                note = f"no fix: volfix cannot put this call's settings after its inputs in `{name}.apply(...)`"
            else:
                note = (f"unsafe fix: goes with the conversion of `{name}` in its module (VF501 there); `apply` "
                        f"of the class as it is raises too")
                moved = _settings_after_inputs(outer, inner, given, src)
                if moved is None:
                    note = f"no fix: a comment among the settings of `{name}(...)` would be lost"
                else:
                    edits = [_apply(inner, src), *moved]
        fix = None
        if edits is not None:
            fix = ctx.edit_fix(Applicability.UNSAFE if note else Applicability.SAFE, "Call `apply`", edits)
        ctx.report_span(self.CODE, start, end, message=message, note=note, fix=fix)

    def function_class(self, cls, ctx):
        if not any(ctx.index.qual(base) in _FUNCTION_BASES for base in cls.bases):
            return
        methods = {node.name: node for node in cls.body if isinstance(node, FUNCTIONS)}
        forward = methods.get("forward")
        if forward is None or _static(forward):
            return
        src = ctx.src
        start = src.text.index("forward", src.start(forward))
        uses = ctx.index.scalar_returns.get(CALLED_ELSEWHERE + cls.name)
        if "backward" not in methods and uses is None and _calls(cls, ctx) == []:
            return  # an object with a `forward` (SSD's `Detect`, run as `detector.forward(out, priors)`)
        edits, why_not = _conversion(cls, methods, ctx, callers_elsewhere=uses is not None)
        if why_not is None and uses is not None and uses[0] == "used":
            edits, why_not = [], (f"`{uses[1]}` (line {uses[2]}) uses `{cls.name}` other than called as "
                                  f"`{cls.name}(...)(...)`, which the conversion would break")
        note = fix = None
        if why_not is not None:
            note = f"no fix: {why_not}"
            if any(isinstance(n, FUNCTIONS) and n.name == "__init__" and len(n.args.args) > 1 for n in cls.body):
                note += (f"; by hand, pass `{cls.name}`'s settings to `{cls.name}.apply(...)` after the inputs, "
                         f"add them to `forward`'s parameters and return one `None` more from `backward` for each")
        else:
            importable = _importable(cls, ctx)
            if importable:
                note = (f"unsafe fix: a module importing `{cls.name}` must call `{cls.name}.apply(...)` too; "
                        f"volfix rewrites the calls of the modules in its run (VF501 there)")
            fix = ctx.edit_fix(Applicability.UNSAFE if importable else Applicability.SAFE, self.FIX_TITLE, edits)
        ctx.report_span(self.CODE, start, start + len("forward"), note=note, fix=fix)


def _static(fn: ast.AST) -> bool:
    """A `@staticmethod` (today's form) or a `@classmethod` (`forward(cls, ctx, ...)`, which
    `apply` calls the same way): not a legacy method."""
    return any(isinstance(d, ast.Name) and d.id in ("staticmethod", "classmethod") for d in fn.decorator_list)


def _importable(cls: ast.ClassDef, ctx) -> bool:
    """Whether another module may import the class: a public name of a module (a script with
    a `__main__` guard is one too: `from train import BinActive`), not of a notebook."""
    return not cls.name.startswith("_") and not ctx.index.notebook


def _conversion(cls: ast.ClassDef, methods: Dict[str, ast.AST], ctx, callers_elsewhere: bool = False
                ) -> Tuple[List[TextEdit], Optional[str]]:
    """The edits of the fix, or why there is none. `callers_elsewhere`: the project links the
    class's calls in other modules, which get their own fix."""
    init = methods.get("__init__")
    settings = _Settings(init, ctx) if init is not None and not _trivial_init(init) else None
    if settings is not None and settings.why_not:
        return [], settings.why_not
    others = sorted(set(methods) - {"forward", "backward", "__init__"})
    if others:
        listed = ", ".join(f"`{m}`" for m in others)
        return [], f"`self` may reach the class's other methods ({listed}), which `ctx` does not"
    if "backward" not in methods:
        return [], "it has no `backward`"
    if _static(methods["backward"]):
        return [], "`backward` is not a method of the same kind"
    if any(not isinstance(node, (ast.FunctionDef, ast.Expr, ast.Pass)) for node in cls.body):
        return [], f"`{cls.name}` holds class attributes `self` may read"
    src = ctx.src
    edits: List[TextEdit] = []
    stored: Set[str] = set(settings.stored) if settings is not None else set()
    uses: Dict[str, List[ast.Attribute]] = {}
    for name in ("forward", "backward"):
        fn = methods[name]
        if fn.decorator_list or not fn.args.args or fn.args.args[0].arg != "self":
            return [], f"`{name}` does not take `self` first, undecorated"
        found = _self_uses(fn)
        if found is None:
            return [], f"`{name}` uses `self` other than for its attributes"
        uses[name] = found
        stored.update(node.attr for node in found if isinstance(node.ctx, ast.Store))
        def_start = src.start(fn)
        edits.append(TextEdit(def_start, def_start, f"@staticmethod{src.newline}{src.indentation(fn.lineno)}"))
        first = fn.args.args[0]
        edits.append(TextEdit(src.start(first), src.end(first), "ctx"))
    for name in ("forward", "backward"):
        for node in uses[name]:
            attr = node.attr
            if isinstance(node.ctx, ast.Load) and attr not in stored and attr not in _CTX_API and attr not in _RENAMED:
                return [], f"`self.{attr}` is neither stored by `forward` nor offered by `ctx`"
            edits.append(TextEdit(src.start(node.value), src.end(node.value), "ctx"))
            if attr in _RENAMED:
                end = src.end(node)
                edits.append(TextEdit(end - len(attr), end, _RENAMED[attr]))
    if init is not None:  # never called any more: its lines go, with the blank lines after them
        row = init.end_lineno + 1
        while row <= len(src.line_starts) and not src.line(row).strip():
            row += 1
        first_row = min([init.lineno] + [d.lineno for d in init.decorator_list])
        start = src.line_starts[first_row - 1]
        # its comments stay, one line each where it stood (`def __init__(self, scale):  # per layer`)
        comments = src.comments_between(start, src.line_after(init.end_lineno))
        kept = "".join(f"{src.indentation(init.lineno)}{c}{src.newline}" for c in comments)
        edits.append(TextEdit(start, src.line_after(init.end_lineno if comments else row - 1), kept))
    calls = _calls(cls, ctx)
    if calls is None:
        return [], f"`{cls.name}` is used other than called as `{cls.name}(...)(...)` in this file"
    if not calls and _importable(cls, ctx) and not callers_elsewhere:
        return [], (f"this file never calls `{cls.name}`: the modules that import it call it, and each call "
                    f"must become `{cls.name}.apply(...)` with the class")
    if settings is None:
        if any(inner.args or inner.keywords for inner, _ in calls):
            return [], f"a call passes `{cls.name}` settings its `__init__` does not take"
        edits += [_apply(inner, src) for inner, _ in calls]
        return edits, None
    why_not = settings.convert(methods["forward"], methods["backward"], calls, edits)
    return ([], why_not) if why_not else (edits, None)


class _Settings:
    """What a legacy Function's `__init__` takes (`RoIPoolFunction(7, 7, 1 / 16)`): today they
    are arguments of `apply` after the inputs, parameters of `forward` stored on `ctx` as
    `__init__` stored them on `self`, and `backward` returns a `None` for each."""

    def __init__(self, init: ast.AST, ctx) -> None:
        self.ctx = ctx
        self.why_not: Optional[str] = None
        self.stored: List[str] = []
        self.assignments: List[ast.Assign] = []
        args = init.args
        self.params = args.args[1:]
        self.defaults: Dict[str, ast.AST] = dict(zip([a.arg for a in args.args][-len(args.defaults):],
                                                     args.defaults)) if args.defaults else {}
        if args.vararg or args.kwarg or args.kwonlyargs or args.posonlyargs \
                or any(a.annotation is not None for a in args.args):
            self.why_not = "its `__init__` takes other than plain parameters"
            return
        for stmt in init.body:
            if _base_init(stmt) or isinstance(stmt, ast.Pass) \
                    or (isinstance(stmt, ast.Expr) and isinstance(stmt.value, ast.Constant)):
                continue
            target = stmt.targets[0] if isinstance(stmt, ast.Assign) and len(stmt.targets) == 1 else None
            if not (isinstance(target, ast.Attribute) and isinstance(target.value, ast.Name)
                    and target.value.id == "self") \
                    or any(isinstance(n, ast.Name) and n.id == "self" for n in ast.walk(stmt.value)):
                self.why_not = (f"its `__init__` does more than store its settings on `self` "
                                f"(line {stmt.lineno})")
                return
            self.assignments.append(stmt)
            self.stored.append(target.attr)

    def convert(self, forward: ast.AST, backward: ast.AST, calls, edits: List[TextEdit]) -> Optional[str]:
        src = self.ctx.src
        names = [p.arg for p in self.params]
        inputs = forward.args
        if inputs.vararg or inputs.kwarg or inputs.kwonlyargs or inputs.defaults or len(inputs.args) < 2:
            return "`forward` takes other than plain inputs"
        used = {n.id for n in ast.walk(forward) if isinstance(n, ast.Name)} | {a.arg for a in inputs.args}
        clash = sorted(set(names) & used)
        if clash:
            return f"`forward` already uses the name of a setting (`{clash[0]}`)"
        # What `__init__` stored is computed at the top of `forward` now: a name its values read
        # (a module's `eps`) that `forward` binds would be read before `forward` binds it.
        read = {n.id for stmt in self.assignments for n in ast.walk(stmt.value) if isinstance(n, ast.Name)}
        bound = {n.id for n in ast.walk(forward) if isinstance(n, ast.Name) and isinstance(n.ctx, ast.Store)}
        shadowed = sorted((read - set(names)) & (bound | {a.arg for a in inputs.args}))
        if shadowed:
            return f"`forward` binds `{shadowed[0]}`, which `__init__` reads for a setting"
        # forward(ctx, inputs..., settings...), then what __init__ stored, stored on ctx.
        declared = self.described()
        if declared:
            edits.append(TextEdit(src.end(inputs.args[-1]), src.end(inputs.args[-1]), ", " + ", ".join(declared)))
        body = [stmt for stmt in forward.body
                if not (isinstance(stmt, ast.Expr) and isinstance(stmt.value, ast.Constant))] or forward.body
        first = body[0]
        indent = src.indentation(first.lineno)
        overwritten = _stored_first(forward)
        stores = "".join(f"ctx.{stmt.targets[0].attr} = {src.segment(stmt.value)}{src.newline}{indent}"
                         for stmt in self.assignments
                         if not (isinstance(stmt.value, ast.Constant) and stmt.targets[0].attr in overwritten))
        edits.append(TextEdit(src.start(first), src.start(first), stores))
        # backward returns one gradient more per setting: None.
        n_inputs = len(inputs.args) - 1
        returns = list(own_returns(backward))
        if not returns:
            return "`backward` returns no gradients"
        extra = ", None" * len(names)
        for ret in returns:
            value = ret.value
            if isinstance(value, ast.Tuple) and len(value.elts) == n_inputs:
                edits.append(TextEdit(src.end(value.elts[-1]), src.end(value.elts[-1]), extra))
            elif value is not None and not isinstance(value, ast.Tuple) and n_inputs == 1:
                edits.append(TextEdit(src.end(value), src.end(value), extra))
            else:
                return "volfix cannot tell how many gradients `backward` returns"
        # Fn(settings)(inputs) -> Fn.apply(inputs, settings)
        for inner, outer in calls:
            given = self._positional(inner)
            if given is None:
                return f"a call passes its settings other than by position or name (line {inner.lineno})"
            if any(isinstance(a, ast.Starred) for a in outer.args) or outer.keywords:
                return f"a call passes its inputs other than by position (line {outer.lineno})"
            moved = _settings_after_inputs(outer, inner, given, src)
            if moved is None:
                return f"a comment among a call's settings would be lost (line {inner.lineno})"
            edits += [_apply(inner, src), *moved]
        return None

    def _positional(self, call: ast.Call) -> Optional[List[str]]:
        """The call's settings in `__init__`'s order (a default where a later one is given)."""
        src = self.ctx.src
        defaults = {name: src.segment(value) for name, value in self.defaults.items()}
        return settings_in_order(call, [p.arg for p in self.params], defaults, src)

    def described(self) -> Tuple[str, ...]:
        """The settings as the project index keeps them for other files' calls: `name` or
        `name=default`."""
        src = self.ctx.src
        return tuple(f"{p.arg}={src.segment(self.defaults[p.arg])}" if p.arg in self.defaults else p.arg
                     for p in self.params)


def settings_in_order(call: ast.Call, names: List[str], defaults: Dict[str, str], src) -> Optional[List[str]]:
    """`Fn(a, c=x)`'s settings as positional arguments of `apply`, in `__init__`'s order, a
    default where a later one is given; None when they cannot be put so."""
    if any(isinstance(a, ast.Starred) for a in call.args) or any(k.arg is None for k in call.keywords) \
            or len(call.args) > len(names):
        return None
    values: Dict[str, str] = {n: src.segment(a) for n, a in zip(names, call.args)}
    for keyword in call.keywords:
        if keyword.arg not in names or keyword.arg in values:
            return None
        values[keyword.arg] = src.segment(keyword.value)
    last = max((names.index(n) for n in values), default=-1)
    out = []
    for name in names[:last + 1]:
        if name in values:
            out.append(values[name])
        elif name in defaults:
            out.append(defaults[name])
        else:
            return None
    return out


def _stored_first(forward: ast.AST) -> Set[str]:
    """What `forward` stores on `self` in a statement of its own body before anything reads it
    and before any `return`: `__init__`'s constant for it (`self.shape = None`) is never read,
    so it is not carried over to `ctx`."""
    stored: Set[str] = set()
    read: Set[str] = set()
    for stmt in forward.body:
        nodes = list(ast.walk(stmt))
        if any(isinstance(n, ast.Return) for n in nodes):
            break
        read |= {n.attr for n in nodes if isinstance(n, ast.Attribute) and isinstance(n.value, ast.Name)
                 and n.value.id == "self" and (isinstance(n.ctx, ast.Load) or any(
                     isinstance(a, ast.AugAssign) and a.target is n for a in nodes))}
        if isinstance(stmt, (ast.Assign, ast.AnnAssign)):
            targets = stmt.targets if isinstance(stmt, ast.Assign) else [stmt.target]
            stored |= {t.attr for t in targets if isinstance(t, ast.Attribute) and isinstance(t.value, ast.Name)
                       and t.value.id == "self" and t.attr not in read}
    return stored


def _apply(inner: ast.Call, src) -> TextEdit:
    """`Fn(...)` of `Fn(...)(inputs)` becomes `Fn.apply`."""
    return TextEdit(src.end(inner.func), src.end(inner), ".apply")


def _settings_after_inputs(outer: ast.Call, inner: ast.Call, given: List[str], src) -> Optional[List[TextEdit]]:
    """The edits that pass `given` after the inputs of `Fn(...)(inputs)`; None when a comment
    among the settings would be lost."""
    if not given:
        return []
    opened = src.text.index("(", src.end(inner.func)) + 1
    first = min(src.start(a) for a in [*inner.args, *inner.keywords])
    if src.comments_between(first, src.end(inner)):
        return None
    moved = ", ".join(given)
    if not outer.args:
        at = src.text.index("(", src.end(inner)) + 1
        return [TextEdit(at, at, moved)]
    at = src.end(outer.args[-1])
    edits = [TextEdit(at, at, ", " + moved)]
    # `Fn(\n    h, w)(x, rois)` -> `Fn.apply(\n    x, rois, h, w)`: the line break before the
    # settings (and a comment there) moves with them instead of joining the call into one line
    paren = src.text.index("(", src.end(inner))
    lead = src.text[opened:first]
    if line_breaks(lead) and not line_breaks(src.text[paren + 1:src.end(outer)]) or src.comments_between(opened, first):
        if lead.lstrip(" \t").startswith(("\r", "\n")):
            lead = lead.lstrip(" \t")  # no trailing blanks left after `apply(`
        edits.append(TextEdit(paren + 1, paren + 1, lead))
    return edits


def function_facts(index) -> Dict[str, Tuple[str, ...]]:
    """`Cls` + `AUTOGRAD_FUNCTION` -> `function_fact` for the module's top-level classes that are
    autograd Functions: what the project index hands the modules calling them."""
    out: Dict[str, Tuple[str, ...]] = {}
    for stmt in index.module_statements:
        if isinstance(stmt, ast.ClassDef):
            fact = function_fact(index, stmt)
            if fact:
                out[stmt.name + AUTOGRAD_FUNCTION] = fact
    return out


def function_fact(index, cls: ast.ClassDef) -> Tuple[str, ...]:
    """What the project index keeps of a module's class for the modules calling it
    (`flow.returns.returns_facts`): () for no autograd Function; ("static",); ("legacy",
    "fix", settings...) when VF501 converts it (each setting `name` or `name=default`), else
    ("legacy", "nofix")."""
    if not any(index.qual(base) in _FUNCTION_BASES for base in cls.bases):
        return ()
    methods = {node.name: node for node in cls.body if isinstance(node, FUNCTIONS)}
    forward = methods.get("forward")
    if forward is None:
        return ()
    if _static(forward):
        return ("static",)
    view = _View(index)
    _, why_not = _conversion(cls, methods, view, callers_elsewhere=True)
    if why_not is not None:
        return ("legacy", "nofix")
    init = methods.get("__init__")
    settings = _Settings(init, view) if init is not None and not _trivial_init(init) else None
    return ("legacy", "fix") + (settings.described() if settings is not None else ())


class _View:
    """What `_conversion` reads of a rule context, made from a module's index."""

    def __init__(self, index) -> None:
        self.index = index
        self.src = index.src


def _base_init(stmt: ast.stmt) -> bool:
    call = stmt.value if isinstance(stmt, ast.Expr) else None
    return isinstance(call, ast.Call) and isinstance(call.func, ast.Attribute) and call.func.attr == "__init__"


def _trivial_init(init: ast.AST) -> bool:
    """`def __init__(self): super(Fn, self).__init__()` (or `pass`): no settings."""
    args = init.args
    if len(args.args) != 1 or args.vararg or args.kwarg or args.kwonlyargs:
        return False
    return all(isinstance(stmt, ast.Pass) or _base_init(stmt)
               or (isinstance(stmt, ast.Expr) and isinstance(stmt.value, ast.Constant)) for stmt in init.body)


def _self_uses(fn: ast.AST) -> Optional[List[ast.Attribute]]:
    """The `self.attr` nodes of `fn`, or None when `self` is used bare or inside a nested scope."""
    uses: List[ast.Attribute] = []
    for node in ast.walk(fn):
        if node is not fn and isinstance(node, (*FUNCTIONS, ast.Lambda, ast.ClassDef)) \
                and any(isinstance(n, ast.Name) and n.id == "self" for n in ast.walk(node)):
            return None
        if isinstance(node, ast.Attribute) and isinstance(node.value, ast.Name) and node.value.id == "self":
            uses.append(node)
    owned = {id(use.value) for use in uses}
    if any(isinstance(n, ast.Name) and n.id == "self" and id(n) not in owned for n in ast.walk(fn)):
        return None
    return uses


def _calls(cls: ast.ClassDef, ctx) -> Optional[List[Tuple[ast.Call, ast.Call]]]:
    """(`Fn(...)`, `Fn(...)(...)`) for every such call in the file, or None when `Fn` is used
    otherwise (outside its own body: `super(Fn, self).__init__()`)."""
    parents = ctx.index.parents
    own = {id(node) for node in ast.walk(cls)}
    out: List[Tuple[ast.Call, ast.Call]] = []
    for node in ctx.index.names.get(cls.name, ()):
        if id(node) in own or not isinstance(node.ctx, ast.Load):
            continue
        inner = parents.get(node)
        outer = parents.get(inner)
        if not (isinstance(inner, ast.Call) and inner.func is node
                and isinstance(outer, ast.Call) and outer.func is inner):
            return None
        out.append((inner, outer))
    return out
