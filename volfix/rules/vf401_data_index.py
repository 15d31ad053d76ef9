"""VF401: `loss.data[0]` on values that are 0-dim tensors since PyTorch 0.4."""
import ast
import re
from typing import Optional, Set

from .. import prefilter
from ..edits import TextEdit
from ..model import Applicability
from ..syntax import names as nm
from .base import Rule, on

# Methods that reduce a tensor to one element when called without a dimension.
REDUCTIONS = frozenset({"sum", "mean", "prod", "max", "min", "median", "norm", "std", "var", "all",
                        "any", "dot", "trace", "det", "logdet", "nansum", "nanmean"})
# Keyword arguments that keep a reduction over every element.
_WHOLE_KEYWORDS = {"norm": {"p"}, "std": {"unbiased"}, "var": {"unbiased"}}
# Methods that keep a tensor's shape (a 0-dim value stays 0-dim).
SHAPE_KEEPING = frozenset({"cpu", "cuda", "float", "double", "half", "long", "int", "detach", "clone",
                           "to", "contiguous", "abs", "neg", "sqrt", "exp", "log"})
# `torch.nn.functional` losses (reduced to one element unless `reduction='none'`/`reduce=False`).
LOSS_FUNCTIONS = frozenset({
    "cross_entropy", "nll_loss", "mse_loss", "l1_loss", "smooth_l1_loss", "huber_loss", "kl_div",
    "binary_cross_entropy", "binary_cross_entropy_with_logits", "soft_margin_loss",
    "multilabel_soft_margin_loss", "multilabel_margin_loss", "multi_margin_loss", "margin_ranking_loss",
    "hinge_embedding_loss", "cosine_embedding_loss", "triplet_margin_loss", "poisson_nll_loss",
    "gaussian_nll_loss", "ctc_loss"})
# Words of a name that suggest a loss: `loss`, `total_loss`, `lossD`, `trainLoss`, `cost`.
LOSS_WORDS = frozenset({"loss", "losses", "cost"})
_WORD = re.compile(r"[A-Z]?[a-z]+|[A-Z]+(?![a-z])|[0-9]+")
MAX_DEPTH = 8


class ScalarDataIndex(Rule):
    """
    ## What it does
    Finds `x.data[0]` where `x` is a loss or a full reduction: the output of a loss module
    (`criterion(out, y)` with `criterion = nn.CrossEntropyLoss()`), `F.nll_loss(...)`,
    `x.sum()`, `x.mean()`, or a name bound to one (a safe fix); or a value only named like a
    loss (`loss`, `d_loss`, `self.loss`: an unsafe fix).

    ## Why is this bad?
    In PyTorch 0.3 a loss was a one-element tensor and `loss.data[0]` its Python number.
    Since 0.4 losses and reductions are 0-dim tensors: `loss.data[0]` raises
    `IndexError: invalid index of a 0-dim tensor`. Code that volfix otherwise reports clean
    crashes at its first logging line.

    ## Example
    ```python
    import torch
    import torch.nn as nn

    criterion = nn.CrossEntropyLoss()


    def step(model, x, y):
        loss = criterion(model(x), y)
        correct = model(x).max(1)[1].eq(y).sum()
        return loss.data[0], correct.data[0]
    ```

    ## Use instead
    ```python
    import torch
    import torch.nn as nn

    criterion = nn.CrossEntropyLoss()


    def step(model, x, y):
        loss = criterion(model(x), y)
        correct = model(x).max(1)[1].eq(y).sum()
        return loss.item(), correct.item()
    ```

    ## Fix safety
    Safe when the value is certainly one element: the output of a loss module or
    `torch.nn.functional` loss without `reduction='none'` / `reduce=False`, a reduction over
    every element (`.sum()`, `.mean()`, `torch.sum(x)`, ...), arithmetic of those, or a local
    name bound only to such values. `.item()` then returns the Python number `.data[0]`
    returned in 0.3. For another value named like a loss (`loss`, `d_loss`, `self.loss`),
    the fix is unsafe: if it held several elements, `.data[0]` meant its first one and
    `.item()` raises. Other `x.data[0]` (the first row of a batch) are not reported.
    """

    CODE = "VF401"
    MESSAGE = "`.data[0]` on a 0-dim tensor raises since PyTorch 0.4; use `.item()`"
    FIX = Applicability.SAFE
    FIX_TITLE = "Use `.item()`"
    NEEDS = prefilter.TORCH_DATA_INDEX
    NAMES = frozenset({"data"})

    @on(ast.Subscript)
    def subscript(self, node, ctx):
        attribute = node.value
        if not (isinstance(attribute, ast.Attribute) and attribute.attr == "data"
                and isinstance(node.ctx, ast.Load) and _is_zero(node.slice)):
            return
        subject = attribute.value
        scalars = ScalarValues(ctx.index)
        if scalars.one_element(subject, node):
            applicability, note = Applicability.SAFE, None
        elif _loss_named(subject):
            applicability = Applicability.UNSAFE
            note = (f"unsafe fix: volfix cannot tell that `{ctx.src.segment(subject)}` has one element (it is "
                    f"not bound to a known loss or reduction); if it has several, `.data[0]` meant the first "
                    f"and `.item()` raises")
        else:
            return
        text = ctx.src.text
        start = text.rindex(".", ctx.src.end(subject), ctx.src.end(attribute))  # `(a + b).data`: after `)`
        edit = TextEdit(start, ctx.src.end(node), ".item()")
        ctx.report(self.CODE, node, note=note, fix=ctx.edit_fix(applicability, self.FIX_TITLE, [edit]))


def _is_zero(node: ast.AST) -> bool:
    return isinstance(node, ast.Constant) and type(node.value) is int and node.value == 0


def _loss_named(expr: ast.AST) -> bool:
    name = expr.id if isinstance(expr, ast.Name) else expr.attr if isinstance(expr, ast.Attribute) else None
    return name is not None and any(word.lower() in LOSS_WORDS for word in _WORD.findall(name))


class ScalarValues:
    """Which expressions are certainly one-element tensors (0-dim since PyTorch 0.4)."""

    def __init__(self, index) -> None:
        self.index = index

    def one_element(self, expr: ast.AST, at: ast.AST, depth: int = 0, seen: Optional[Set[str]] = None) -> bool:
        if depth > MAX_DEPTH:
            return False
        seen = seen if seen is not None else set()
        if isinstance(expr, ast.Call):
            return self.call(expr, at, depth, seen)
        if isinstance(expr, ast.BinOp):
            sides = (expr.left, expr.right)
            if not all(_number(s) or self.one_element(s, at, depth + 1, seen) for s in sides):
                return False
            return not all(_number(s) for s in sides)
        if isinstance(expr, ast.UnaryOp):
            return self.one_element(expr.operand, at, depth + 1, seen)
        if isinstance(expr, ast.Name):
            return self.name(expr.id, at, depth, seen)
        return False

    def call(self, call: ast.Call, at: ast.AST, depth: int, seen: Set[str]) -> bool:
        func = call.func
        qual = self.index.qual(func)
        if qual is not None and qual.startswith("torch.nn.functional."):
            return qual.rpartition(".")[2] in LOSS_FUNCTIONS and _reduced(call, max_positional=3)
        if qual is not None and qual.startswith("torch.") and qual.count(".") == 1:
            name = qual[len("torch."):]
            if name in REDUCTIONS:  # torch.sum(x), torch.dot(a, b)
                wanted = 2 if name == "dot" else 1
                return len(call.args) == wanted and all(k.arg == "dtype" for k in call.keywords)
            return False
        if isinstance(func, ast.Attribute):
            if func.attr in REDUCTIONS:
                return _whole_reduction(call, func.attr)
            if func.attr in SHAPE_KEEPING:
                return self.one_element(func.value, at, depth + 1, seen)
        return self.loss_module(func, at, depth, seen)

    def loss_module(self, func: ast.AST, at: ast.AST, depth: int, seen: Set[str]) -> bool:
        """`criterion(out, y)`: `criterion` (or `self.criterion`) is bound only to a loss
        module made without `reduction='none'`."""
        values = []
        if isinstance(func, ast.Name):
            values = self.bindings(func.id, at)
        elif isinstance(func, ast.Attribute) and isinstance(func.value, ast.Name) and func.value.id == "self":
            values = self.self_bindings(func.attr, at)
        return bool(values) and all(v is not None and self.is_loss_module(v) for v in values)

    def is_loss_module(self, value: ast.AST) -> bool:
        if not isinstance(value, ast.Call):
            return False
        qual = self.index.qual(value.func)
        return (qual is not None and qual.startswith("torch.nn.") and qual.endswith("Loss")
                and _reduced(value, max_positional=2))

    def name(self, name: str, at: ast.AST, depth: int, seen: Set[str]) -> bool:
        if name in seen:
            return True  # `loss = loss + ...`: decided by its other bindings
        seen.add(name)
        values = self.bindings(name, at)
        if not values or any(v is None for v in values):
            return False
        if not all(_number(v) or self.one_element(v, v, depth + 1, seen) for v in values):
            return False
        return not all(_number(v) for v in values)

    def bindings(self, name: str, at: ast.AST) -> list:
        """The values bound to `name` in the scope `at` reads it from (None for a binding
        that is not `name = value` / `name op= value`); [] when it is not bound there."""
        scope = self.index.function_of(at)
        out = self._bound_in(name, scope)
        if not out and scope is not self.index.tree:
            out = self._bound_in(name, self.index.tree)  # a module-level name read in a function
        return out

    def _bound_in(self, name: str, scope: ast.AST) -> list:
        index = self.index
        out = []
        for node in index.names.get(name, ()):
            if not isinstance(node.ctx, ast.Store) or index.function_of(node) is not scope:
                continue
            parent = index.parents.get(node)
            if isinstance(parent, ast.Assign) and node in parent.targets:
                out.append(parent.value)
            elif isinstance(parent, ast.AugAssign) and isinstance(parent.op, (ast.Add, ast.Sub, ast.Mult, ast.Div)):
                out.append(parent.value)
            else:
                out.append(None)  # a loop target, a tuple, `with ... as`: unknown
        if isinstance(scope, (ast.FunctionDef, ast.AsyncFunctionDef)) and name in nm.function_params(scope):
            out.append(None)
        return out

    def self_bindings(self, attr: str, at: ast.AST) -> list:
        """Values assigned to `self.<attr>` in the methods of the class holding `at`."""
        index = self.index
        cls = index.method_class(index.function_of(at))
        if cls is None:
            return []
        out = []
        for node in index.attributes.get(attr, ()):
            if not (isinstance(node.ctx, ast.Store) and isinstance(node.value, ast.Name) and node.value.id == "self"):
                continue
            if index.method_class(index.function_of(node)) is not cls:
                continue
            parent = index.parents.get(node)
            out.append(parent.value if isinstance(parent, ast.Assign) and node in parent.targets else None)
        return out


def _number(node: ast.AST) -> bool:
    if isinstance(node, ast.UnaryOp):
        return _number(node.operand)
    return isinstance(node, ast.Constant) and type(node.value) in (int, float)


def _whole_reduction(call: ast.Call, method: str) -> bool:
    """`x.sum()`, `x.norm(2)`, `a.dot(b)`: a reduction over every element."""
    allowed = _WHOLE_KEYWORDS.get(method, set()) | {"dtype"}
    if any(k.arg not in allowed for k in call.keywords):
        return False
    if method == "dot":
        return len(call.args) == 1
    if method == "norm":
        return len(call.args) <= 1 and all(isinstance(a, ast.Constant) for a in call.args)
    return not call.args


def _reduced(call: ast.Call, max_positional: int) -> bool:
    """A loss call or constructor without `reduction='none'` / `reduce=False` (or a
    positional argument that could be either)."""
    if len(call.args) > max_positional or any(isinstance(a, ast.Starred) for a in call.args):
        return False
    for keyword in call.keywords:
        value = keyword.value
        if keyword.arg is None:
            return False  # **kwargs
        if keyword.arg == "reduction" and not (isinstance(value, ast.Constant) and value.value in ("mean", "sum")):
            return False
        if keyword.arg == "reduce" and not (isinstance(value, ast.Constant) and value.value is True):
            return False
    return True
