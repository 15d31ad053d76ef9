"""VF410: `prev_k = best_scores_id / num_words` of an integer tensor: C's truncating division in
0.3, true division (floats) today."""
import ast
from typing import Optional

from ..files import prefilter
from ..flow.bindings import NameBindings, Unpacked
from ..flow.rank_calls import PAIRS
from ..model import Applicability
from .base import MODULE, Rule, on

# Methods and `torch.` functions whose result is an integer tensor that is never negative
# (indices, counts), and those whose result is an integer tensor of any sign.
_INDICES = frozenset({"argmax", "argmin", "nonzero", "multinomial", "randperm"})
_INTEGERS = frozenset({"long", "int", "short"})
_INTEGER_TENSORS = frozenset({"torch.LongTensor", "torch.IntTensor", "torch.cuda.LongTensor",
                              "torch.cuda.IntTensor"})
# Methods that keep their receiver's dtype (and sign).
_KEEPS = frozenset({"view", "view_as", "squeeze", "unsqueeze", "cuda", "cpu", "clone", "contiguous", "t",
                    "transpose", "expand", "expand_as", "reshape", "detach", "flatten", "permute"})
_MAX_DEPTH = 8
INDEX, INTEGER = "index", "integer"


class IntegerDivision(Rule):
    """
    ## What it does
    Finds `a / b` where `a` is an integer tensor and `b` an integer: the indices of `topk`,
    `max(dim)`, `sort`, `argmax`, `multinomial` or `nonzero` (`best_scores, best_scores_id =
    flat.topk(k, 0, True, True)`, then `prev_k = best_scores_id / num_words`, the beam search
    of OpenNMT's `Beam` class and its many copies), a tensor made by `.long()` or
    `torch.LongTensor(...)`, divided by an int literal, `len(...)`, `x.size(d)` or a name bound
    to one of those.

    ## Why is this bad?
    PyTorch 0.3 divided an integer tensor as C does: `best_scores_id / num_words` was the beam
    each index came from. Since PyTorch 1.7 `/` is true division and gives floats (1.5 warned,
    1.6 refused): the beam's back-pointers become fractions, and the first tensor indexed with
    them raises `IndexError: tensors used as indices must be long, int, byte or bool tensors`
    (or, through arithmetic, the word ids come out wrong).

    ## Example
    ```python
    import torch

    scores = torch.randn(3, 5)
    num_words = scores.size(1)
    best, best_id = scores.view(-1).topk(3, 0, True, True)
    prev_k = best_id / num_words
    ```

    ## Use instead
    ```python
    import torch

    scores = torch.randn(3, 5)
    num_words = scores.size(1)
    best, best_id = scores.view(-1).topk(3, 0, True, True)
    prev_k = best_id // num_words
    ```

    ## Fix safety
    Indices are never negative and sizes are positive, so there `a // b` (floor) is what 0.3's
    truncation gave: safe. For an integer tensor of any sign (`.long()`), the fix is
    `torch.div(a, b, rounding_mode="trunc")`, which truncates as 0.3 did: safe too.
    """

    CODE = "VF410"
    MESSAGE = "`/` of an integer tensor divides truly since PyTorch 1.7 (0.3 truncated); use `//`"
    FIX = Applicability.SAFE
    FIX_TITLE = "Divide as 0.3 did (`//`)"
    NEEDS = prefilter.INTEGER_DIVISION
    NAMES = frozenset({"topk", "max", "min", "sort", "argmax", "argmin", "long", "int", "LongTensor", "IntTensor",
                       "nonzero", "multinomial", "randperm", "median", "mode", "kthvalue"})

    @on(MODULE)
    def module(self, tree, ctx):
        kinds = None
        for node in ctx.index.divisions:  # (collected by the module's one walk)
            if not _may_be_integer(node.right):
                continue
            kinds = kinds or _Integers(ctx.index)
            kind = kinds.tensor(node.left, node)
            if kind is None or not kinds.number(node.right, node):
                continue
            src = ctx.src
            left, right = src.segment(node.left), src.segment(node.right)
            if kind == INDEX:
                text, imports = f"{_operand(node.left, left)} // {_operand(node.right, right)}", frozenset()
            else:
                div, imports = ctx.spell("torch.div", node)
                text = f'{div}({left}, {right}, rounding_mode="trunc")'
            ctx.report(self.CODE, node,
                       message=f"`{src.segment(node)}` divides an integer tensor: 0.3 truncated, since PyTorch 1.7 "
                               f"`/` gives floats; use `{text}`",
                       fix=ctx.edit_fix(Applicability.SAFE, self.FIX_TITLE,
                                        ctx.expr.replace(node, text), imports))


def _may_be_integer(node: ast.AST) -> bool:
    """What `_Integers.number` can take for an int, by its form alone (cheap, asked first)."""
    return isinstance(node, (ast.Name, ast.Call, ast.Subscript)) or (
        isinstance(node, ast.Constant) and type(node.value) is int)


def _operand(node: ast.AST, text: str) -> str:
    """`text` parenthesized where `//` would bind it otherwise (`a + b // c`)."""
    return f"({text})" if isinstance(node, (ast.BinOp, ast.BoolOp, ast.UnaryOp, ast.IfExp, ast.Lambda,
                                            ast.Compare)) else text


class _Integers:
    """Which expressions of one module are integer tensors, and which integers."""

    def __init__(self, index) -> None:
        self.index = index
        self.names = NameBindings(index)

    def tensor(self, expr: ast.AST, at: ast.AST, depth: int = 0) -> Optional[str]:
        """INDEX: an integer tensor that is never negative; INTEGER: one of any sign; None: not
        known to be an integer tensor."""
        if depth > _MAX_DEPTH:
            return None
        if isinstance(expr, ast.Subscript):  # `x.topk(k)[1]`, or a slice of an integer tensor
            if isinstance(expr.value, ast.Call) and _pair(expr.value) and _index_one(expr.slice):
                return INDEX
            return self.tensor(expr.value, at, depth + 1)
        if isinstance(expr, ast.Attribute) and expr.attr == "data":
            return self.tensor(expr.value, at, depth + 1)
        if isinstance(expr, ast.Call):
            func = expr.func
            qual = self.index.qual(func)
            if qual in _INTEGER_TENSORS:
                return INTEGER
            if qual is not None and qual.startswith("torch."):
                name = qual[len("torch."):]
                return INDEX if name in _INDICES else None
            if isinstance(func, ast.Attribute):
                if func.attr in _INDICES:
                    return INDEX
                if func.attr in _INTEGERS and not expr.args and not expr.keywords:
                    return INTEGER
                if func.attr in _KEEPS:
                    return self.tensor(func.value, at, depth + 1)
            return None
        if isinstance(expr, ast.Name):
            bound = self.names.bindings(expr.id, at)
            if not bound:
                return None
            kinds = []
            for value in bound:
                if isinstance(value, Unpacked):  # `best, best_id = flat.topk(k)`
                    kinds.append(INDEX if value.path == (1,) and isinstance(value.value, ast.Call)
                                 and _pair(value.value) else None)
                elif isinstance(value, ast.AST) and not self.names.augmented(value):
                    kinds.append(self.tensor(value, value, depth + 1))
                else:
                    kinds.append(None)
            if None in kinds:
                return None
            return INDEX if all(k == INDEX for k in kinds) else INTEGER
        return None

    def number(self, expr: ast.AST, at: ast.AST, depth: int = 0) -> bool:
        """A positive Python int: a literal, `len(...)`, `x.size(d)`, `x.size()[d]`, `x.shape[d]`,
        or a name bound only to those."""
        if depth > _MAX_DEPTH:
            return False
        if isinstance(expr, ast.Constant):
            return type(expr.value) is int and expr.value > 0
        if isinstance(expr, ast.Call):
            func = expr.func
            if isinstance(func, ast.Name) and func.id == "len" and self.index.qual(func) in (None, "len"):
                return True
            return isinstance(func, ast.Attribute) and func.attr == "size" and len(expr.args) == 1 \
                and not expr.keywords
        if isinstance(expr, ast.Subscript):
            value = expr.value
            return (isinstance(value, ast.Attribute) and value.attr == "shape") or (
                isinstance(value, ast.Call) and isinstance(value.func, ast.Attribute) and value.func.attr == "size"
                and not value.args)
        if isinstance(expr, ast.Name):
            bound = self.names.bindings(expr.id, at)
            return bool(bound) and all(isinstance(v, ast.AST) and not isinstance(v, Unpacked)
                                       and not self.names.augmented(v) and self.number(v, v, depth + 1)
                                       for v in bound)
        return False


def _pair(call: ast.Call) -> bool:
    """`x.topk(k)`, `x.max(1)`, `x.sort()`: a (values, indices) pair (with a dimension for
    `max`/`min`: `x.max()` is one value)."""
    func = call.func
    if not isinstance(func, ast.Attribute) or func.attr not in PAIRS:
        return False
    if func.attr in ("max", "min"):
        return bool(call.args) and not isinstance(call.args[0], ast.Starred) or any(
            k.arg == "dim" for k in call.keywords)
    return True


def _index_one(index: ast.AST) -> bool:
    return isinstance(index, ast.Constant) and index.value == 1
