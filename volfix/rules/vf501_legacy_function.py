"""VF501: a legacy autograd Function (`forward` a method, called as `Fn()(x)`), an error since PyTorch 1.5."""
import ast
from typing import Dict, List, Optional, Set, Tuple

from ..files import prefilter
from ..fixes.edits import TextEdit
from ..model import Applicability
from ..syntax.index import FUNCTIONS
from .base import MODULE, Rule, on

_FUNCTION_BASES = frozenset({"torch.autograd.Function", "torch.autograd.function.Function"})
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
    The fix makes `forward` and `backward` static methods of a context `ctx` (what they
    stored on `self` they store on it, `self.saved_variables` is `ctx.saved_tensors`) and
    turns each call `Fn()(...)` of the file into `Fn.apply(...)`. It is offered when the class
    holds nothing else that `self` could reach: no `__init__` taking settings, no other
    method, no attribute read that `forward` does not store, `self` used only for its
    attributes, and every use of the class in its file is such a call. Safe when the class
    cannot be imported (a name starting with `_`, or a script's or notebook's class);
    otherwise unsafe: a module importing it still calls it the 0.3 way, and raises as before.
    A Function whose `__init__` takes settings (`RoIPoolFunction(7, 7, 1 / 16)`) is reported
    without a fix: its settings become arguments of `apply` after the inputs, with a `None`
    more returned by `backward` for each.
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

    def function_class(self, cls, ctx):
        if not any(ctx.index.qual(base) in _FUNCTION_BASES for base in cls.bases):
            return
        methods = {node.name: node for node in cls.body if isinstance(node, FUNCTIONS)}
        forward = methods.get("forward")
        if forward is None or _static(forward):
            return
        src = ctx.src
        start = src.text.index("forward", src.start(forward))
        edits, why_not = _conversion(cls, methods, ctx)
        note = fix = None
        if why_not is not None:
            note = f"no fix: {why_not}"
        else:
            importable = not cls.name.startswith("_") and not _script(ctx)
            if importable:
                note = (f"unsafe fix: a module importing `{cls.name}` still calls it the 0.3 way "
                        f"(`{cls.name}()(...)`), which raises as before; call `{cls.name}.apply(...)` there")
            fix = ctx.edit_fix(Applicability.UNSAFE if importable else Applicability.SAFE, self.FIX_TITLE, edits)
        ctx.report_span(self.CODE, start, start + len("forward"), note=note, fix=fix)


def _static(fn: ast.AST) -> bool:
    """A `@staticmethod` (today's form) or a `@classmethod` (`forward(cls, ctx, ...)`, which
    `apply` calls the same way): not a legacy method."""
    return any(isinstance(d, ast.Name) and d.id in ("staticmethod", "classmethod") for d in fn.decorator_list)


def _script(ctx) -> bool:
    """A notebook, or a script with a `__main__` guard: nothing imports its classes."""
    if ctx.index.notebook:
        return True
    for stmt in ctx.index.tree.body:
        if isinstance(stmt, ast.If) and "__main__" in ast.dump(stmt.test):
            return True
    return False


def _conversion(cls: ast.ClassDef, methods: Dict[str, ast.AST], ctx) -> Tuple[List[TextEdit], Optional[str]]:
    """The edits of the fix, or why there is none."""
    init = methods.get("__init__")
    if init is not None and not _trivial_init(init):
        return [], (f"`{cls.name}.__init__` takes the call's settings: pass them to `{cls.name}.apply(...)` "
                    f"after the inputs, add them to `forward`'s parameters and return one `None` more from "
                    f"`backward` for each")
    others = sorted(set(methods) - {"forward", "backward", "__init__"})
    if others:
        return [], f"`self` may reach the class's other methods ({', '.join(f'`{m}`' for m in others)}), which `ctx` does not"
    if "backward" not in methods or _static(methods["backward"]):
        return [], "`backward` is not a method of the same kind"
    if any(not isinstance(node, (ast.FunctionDef, ast.Expr, ast.Pass)) for node in cls.body):
        return [], f"`{cls.name}` holds class attributes `self` may read"
    src = ctx.src
    edits: List[TextEdit] = []
    stored: Set[str] = set()
    for name in ("forward", "backward"):
        fn = methods[name]
        if fn.decorator_list or not fn.args.args or fn.args.args[0].arg != "self":
            return [], f"`{name}` does not take `self` first, undecorated"
        self_uses = _self_uses(fn)
        if self_uses is None:
            return [], f"`{name}` uses `self` other than for its attributes"
        for node in self_uses:
            if isinstance(node.ctx, ast.Store):
                stored.add(node.attr)
        row = fn.lineno
        indent = src.line(row)[:len(src.line(row)) - len(src.line(row).lstrip())]
        def_start = src.start(fn)
        edits.append(TextEdit(def_start, def_start, f"@staticmethod{src.newline}{indent}"))
        first = fn.args.args[0]
        edits.append(TextEdit(src.start(first), src.end(first), "ctx"))
    for name in ("forward", "backward"):
        for node in _self_uses(methods[name]) or ():
            attr = node.attr
            if isinstance(node.ctx, ast.Load) and attr not in stored and attr not in _CTX_API and attr not in _RENAMED:
                return [], f"`self.{attr}` is neither stored by `forward` nor offered by `ctx`"
            edits.append(TextEdit(src.start(node.value), src.end(node.value), "ctx"))
            if attr in _RENAMED:
                end = src.end(node)
                edits.append(TextEdit(end - len(attr), end, _RENAMED[attr]))
    calls = _calls(cls, ctx)
    if calls is None:
        return [], f"`{cls.name}` is used other than called as `{cls.name}()(...)` in this file"
    for inner in calls:
        edits.append(TextEdit(src.end(inner.func), src.end(inner), ".apply"))
    return edits, None


def _trivial_init(init: ast.AST) -> bool:
    """`def __init__(self): super(Fn, self).__init__()` (or `pass`): no settings."""
    args = init.args
    if len(args.args) != 1 or args.vararg or args.kwarg or args.kwonlyargs:
        return False
    for stmt in init.body:
        if isinstance(stmt, ast.Pass) or (isinstance(stmt, ast.Expr) and isinstance(stmt.value, ast.Constant)):
            continue
        call = stmt.value if isinstance(stmt, ast.Expr) else None
        if not (isinstance(call, ast.Call) and isinstance(call.func, ast.Attribute) and call.func.attr == "__init__"):
            return False
    return True


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


def _calls(cls: ast.ClassDef, ctx) -> Optional[List[ast.Call]]:
    """The inner calls `Fn()` of every `Fn()(...)` in the file, or None when `Fn` is used
    otherwise (outside its own body: `super(Fn, self).__init__()`)."""
    parents = ctx.index.parents
    own = {id(node) for node in ast.walk(cls)}
    out: List[ast.Call] = []
    for node in ctx.index.names.get(cls.name, ()):
        if id(node) in own or not isinstance(node.ctx, ast.Load):
            continue
        inner = parents.get(node)
        outer = parents.get(inner)
        if not (isinstance(inner, ast.Call) and inner.func is node and not inner.args and not inner.keywords
                and isinstance(outer, ast.Call) and outer.func is inner):
            return None
        out.append(inner)
    return out
