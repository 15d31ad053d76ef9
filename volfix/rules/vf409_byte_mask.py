"""VF409: `logits[mask] = -inf` with `mask = torch.zeros(n).byte()`: 0.3's mask, an error today."""
import ast
from typing import Optional

from ..files import prefilter
from ..flow.bindings import NameBindings, Unpacked
from ..flow.scalars import ScalarValues
from ..model import Applicability
from ..syntax import names as nm
from .base import Rule, on

_MASK_METHODS = frozenset({"masked_fill", "masked_fill_", "masked_select", "masked_scatter", "masked_scatter_"})
_BYTE_TENSORS = frozenset({"torch.ByteTensor", "torch.cuda.ByteTensor"})
# Methods whose result is a uint8 tensor when their receiver is one.
_KEEPS = frozenset({"clone", "cuda", "cpu", "contiguous", "view", "view_as", "expand", "expand_as", "unsqueeze",
                    "squeeze", "t", "transpose", "permute", "reshape", "detach", "repeat", "index_select"})
_MAX_DEPTH = 16
_UINT8 = frozenset({"numpy.uint8", "torch.uint8"})
# NumPy and torch makers that take a `dtype=`; `torch.from_numpy` keeps the array's
_MAKERS = frozenset({f"{m}.{f}" for m in ("numpy", "torch") for f in ("array", "asarray", "zeros", "ones", "empty",
                                                                       "full", "tensor", "zeros_like", "ones_like")})
YES, MAYBE = "yes", "maybe"


class ByteMask(Rule):
    """
    ## What it does
    Finds a ByteTensor used as a mask where today's PyTorch takes bool masks only: an indexed
    write (`logits[mask] = -np.inf`, `scores[0, mask] = 0`), `masked_fill(_)`,
    `masked_select`, `masked_scatter(_)` and `index_put(_)`, when the mask is made by `.byte()`,
    `torch.ByteTensor(...)` or `.type(torch.ByteTensor)`, or by `torch.from_numpy` of a NumPy
    array made as `uint8` (`np.empty(n, dtype=np.uint8)`, `.astype(np.uint8)`; also an
    attribute of `self` bound to one, and the item of a tuple a method of the module returns:
    a replay memory's `sample()`), or with `dtype=torch.uint8` (also through `Variable(...)`,
    `.clone()`, `.cuda()`, `.view(...)` and the like, and a name bound to one).

    ## Why is this bad?
    PyTorch 0.3 had no bool tensors: a mask was a ByteTensor, and `.byte()` was how code made
    one. Since 1.2 masks are bool tensors; a uint8 mask was deprecated, and today a write or
    `masked_fill` through one raises (`masked_fill_ only supports boolean masks, but got mask
    with dtype unsigned char`). (Reading `x[mask]` still works, with a warning.) Comparisons
    (`x.eq(0)`, `x > 0`) give bool masks today, so only masks made as bytes break.

    ## Example
    ```python
    import numpy as np
    import torch

    mask = torch.zeros(4).byte()
    mask[2] = 1
    logits = torch.randn(4)
    logits[mask] = -np.inf
    ```

    ## Use instead
    ```python
    import numpy as np
    import torch

    mask = torch.zeros(4).byte()
    mask[2] = 1
    logits = torch.randn(4)
    logits[mask.bool()] = -np.inf
    ```

    ## Fix safety
    The mask becomes `mask.bool()` where it is used: the elements it selects are those the
    ByteTensor selected in 0.3, and the mask keeps its type for any arithmetic elsewhere
    (`1 - mask` raises on a bool tensor). Safe when every value the name can hold is made as
    bytes; unsafe when one of them is a parameter of the function (`def apply_mask(logits,
    mask): if mask is None: mask = torch.zeros(n).byte()`): `.bool()` of an integer index
    tensor passed there would turn it into a mask.
    """

    CODE = "VF409"
    MESSAGE = "a ByteTensor mask raises since PyTorch 1.2 made masks bool; use `mask.bool()`"
    FIX = Applicability.SAFE
    FIX_TITLE = "Use the mask as a bool tensor (`.bool()`)"
    NEEDS = prefilter.BYTE_MASK
    NAMES = frozenset({"byte", "ByteTensor", "uint8"})

    @on(ast.Subscript)
    def subscript(self, node, ctx):
        if not isinstance(node.ctx, ast.Store):
            return
        parts = node.slice.elts if isinstance(node.slice, ast.Tuple) else [node.slice]
        for part in parts:
            self._check(part, node, ctx)

    @on(ast.Call, callee=tuple(_MASK_METHODS) + ("index_put", "index_put_"))
    def call(self, node, ctx):
        func = node.func
        if not isinstance(func, ast.Attribute) or not node.args or isinstance(node.args[0], ast.Starred):
            return
        first = node.args[0]
        if func.attr in _MASK_METHODS:
            self._check(first, node, ctx)
        elif isinstance(first, ast.Tuple):  # `x.index_put_((mask,), value)`
            for part in first.elts:
                self._check(part, node, ctx)

    def _check(self, mask: ast.AST, at: ast.AST, ctx) -> None:
        if isinstance(mask, (ast.Slice, ast.Starred)):
            return
        found = _Bytes(ctx.index).made(mask, at)
        if found is None:
            return
        text = ctx.src.segment(mask)
        fix = ctx.edit_fix(Applicability.SAFE if found == YES else Applicability.UNSAFE, self.FIX_TITLE,
                           ctx.expr.replace(mask, f"{ctx.expr.attr_base(mask)}.bool()"))
        ctx.report(self.CODE, mask, fix=fix,
                   message=f"`{text}` is a ByteTensor mask, 0.3's kind: today a write or `masked_*` through it "
                           f"raises; use `{ctx.expr.attr_base(mask)}.bool()`",
                   note=None if found == YES else (
                       f"unsafe fix: `{text}` may also hold what the function's caller passes; `.bool()` of an "
                       "integer index tensor would make a mask of it"))


class _Bytes:
    """Which expressions of one module are uint8 tensors, by how they are made."""

    def __init__(self, index) -> None:
        self.index = index
        self.names = NameBindings(index)
        self.scalars: Optional[ScalarValues] = None

    def made(self, expr: ast.AST, at: ast.AST, depth: int = 0) -> Optional[str]:
        """YES: made as bytes; MAYBE: as bytes, or a parameter's value; None: not known as bytes."""
        if depth > _MAX_DEPTH:
            return None
        if isinstance(expr, ast.Call):
            func = expr.func
            qual = self.index.qual(func)
            if qual in _BYTE_TENSORS:
                return YES
            if self.index.is_variable(func) and expr.args:  # `Variable(mask)` wraps the mask itself
                return self.made(expr.args[0], at, depth + 1)
            if qual == "torch.from_numpy" and len(expr.args) == 1:  # of a uint8 array: a ByteTensor
                return self.made(expr.args[0], at, depth + 1)
            if qual in _MAKERS and any(k.arg == "dtype" and self._uint8(k.value) for k in expr.keywords):
                return YES  # `np.array(flags, dtype=np.uint8)`, `torch.zeros(n, dtype=torch.uint8)`
            if isinstance(func, ast.Attribute):
                if func.attr == "byte" and not expr.args and not expr.keywords:
                    return YES
                if func.attr == "type" and len(expr.args) == 1 and self._byte_type(expr.args[0]):
                    return YES
                if func.attr in ("astype", "to", "type") and len(expr.args) == 1 and self._uint8(expr.args[0]):
                    return YES  # `done.astype(np.uint8)`, `mask.to(torch.uint8)`
                if func.attr in _KEEPS:
                    return self.made(func.value, at, depth + 1)
            return None
        if isinstance(expr, ast.Subscript):
            return self.made(expr.value, at, depth + 1)
        if isinstance(expr, ast.Attribute) and isinstance(expr.value, ast.Name) and expr.value.id == "self":
            bound = self.names.self_bindings(expr.attr, expr)  # `self.finals = np.empty(n, dtype=np.uint8)`
            found = {self.made(b, b, depth + 1) if isinstance(b, ast.AST) else None for b in bound}
            return YES if found == {YES} else None
        if isinstance(expr, ast.IfExp):  # `mask.cuda() if use_cuda else mask`
            both = (self.made(expr.body, at, depth + 1), self.made(expr.orelse, at, depth + 1))
            return YES if both == (YES, YES) else MAYBE if None not in both else None
        if isinstance(expr, ast.Name):
            bound = self.names.bindings(expr.id, at)
            if not bound:
                return None
            found = [self.made(b, b, depth + 1) if isinstance(b, ast.AST)
                     else self._returned(b, depth + 1) if isinstance(b, Unpacked) else None for b in bound]
            if all(f == YES for f in found):
                return YES
            if any(f is not None for f in found) and all(f is not None or (b is None and self._parameter(expr))
                                                         for f, b in zip(found, bound)):
                return MAYBE
            return None
        return None

    def _returned(self, bound: Unpacked, depth: int) -> Optional[str]:
        """`obs, acts, rews, next_obs, finals = self.memory.sample()` (a DQN's replay memory,
        whose `sample` returns `self.finals[indices]` of `np.empty(n, dtype=np.uint8)`): the
        item of what the call returns, as VF401 reads one (`ScalarValues.item`)."""
        if depth > _MAX_DEPTH:
            return None
        if self.scalars is None:
            self.scalars = ScalarValues(self.index)
        made = self.scalars.item(bound.value, bound.path, bound.value, 0, set(),
                                 lambda expr, at, _depth, _seen: self.made(expr, expr, depth + 1) == YES)
        return YES if made else None

    def _uint8(self, arg: ast.AST) -> bool:
        """`np.uint8`, `torch.uint8`, `'uint8'`."""
        if isinstance(arg, ast.Constant):
            return arg.value == "uint8"
        return self.index.qual(arg) in _UINT8

    def _byte_type(self, arg: ast.AST) -> bool:
        """`torch.ByteTensor` or `'torch.ByteTensor'` (also the cuda one)."""
        if isinstance(arg, ast.Constant) and isinstance(arg.value, str):
            return arg.value in _BYTE_TENSORS
        return self.index.qual(arg) in _BYTE_TENSORS

    def _parameter(self, name: ast.Name) -> bool:
        fn = self.index.function_of(name)
        if not isinstance(fn, (ast.FunctionDef, ast.AsyncFunctionDef)):
            return False
        return name.id in nm.function_params(fn)
