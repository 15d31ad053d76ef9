"""VF404: `torch.cat([a.mean(), b.mean()])`, which joins 0-dim values since PyTorch 0.4."""
import ast
from typing import List, Optional

from ..files import prefilter
from ..fixes.edits import TextEdit
from ..flow.scalars import ScalarValues
from ..model import Applicability
from .base import MODULE, Rule, on

_JOINS = ("torch.cat", "torch.concat")


class ScalarConcatenation(Rule):
    """
    ## What it does
    Finds `torch.cat(values)` where a value of the list is certainly a 0-dim tensor today: a
    full reduction (`x.mean()`, `x.sum()`, `torch.prod(x)`), a loss, an element of a 1-dim
    tensor, or a name bound to one (a list literal, or a list built by `append`), also through
    the defaults of the function's parameters.

    ## Why is this bad?
    PyTorch 0.3 had no 0-dim tensors: a reduction gave shape `(1,)`, and joining such values
    gave a 1-dim tensor of their numbers (a multi-scale SSIM's per-scale values, a ranker's
    per-round means). Since 0.4 they are 0-dim, and `torch.cat` raises `RuntimeError:
    zero-dimensional tensor (at position 0) cannot be concatenated`. The line crashes on a
    modern stack, and nothing else in the migration changes it.

    ## Example
    ```python
    import torch

    mssim = []
    for ssim_map in ssim_maps:
        mssim.append(ssim_map.mean())
    mssim = torch.cat(mssim)
    ```

    ## Use instead
    ```python
    import torch

    mssim = []
    for ssim_map in ssim_maps:
        mssim.append(ssim_map.mean())
    mssim = torch.stack(mssim)
    ```

    ## Fix safety
    When every value joined is certainly 0-dim (and the join is along the first dimension),
    `torch.stack` gives what 0.3's `torch.cat` gave: a 1-dim tensor of the values, with their
    graphs. In a list literal that also holds other values, each 0-dim value is joined as its
    shape-`(1,)` view instead (`a.mean().view(1)`), which is what 0.3 joined. Both are safe. A
    list built elsewhere whose other values volfix cannot size gets no fix.

    Values that are 0-dim only while a parameter of the function keeps its default
    (`def msssim(img1, img2, size_average=True)` handing `size_average` on to an `if
    size_average: ret = ssim_map.mean()`) are found too. In a program whose calls of the
    function all keep the default, the fix is safe; where a caller volfix does not see may pass
    another value (a library's function), it is unsafe: with `size_average=False` the values
    have dimensions, which `torch.cat` joined end to end and `torch.stack` puts side by side.
    When every call of the program passes another value, nothing is reported.
    """

    CODE = "VF404"
    MESSAGE = "`torch.cat` of 0-dim tensors raises since PyTorch 0.4; use `torch.stack`"
    FIX = Applicability.SAFE
    FIX_TITLE = "Join the 0-dim values as 0.3 did"
    NEEDS = prefilter.CONCATENATION
    NAMES = frozenset({"cat"})

    @on(MODULE)
    def renamed(self, tree, ctx):
        """`from torch import cat as join`: its calls are by another name."""
        index = ctx.index
        for name, qual in sorted(index.module_names.final.items()):
            if qual in _JOINS and name not in ("cat", "concat"):
                for call in index.calls.get(name, ()):
                    self.call(call, ctx)

    @on(ast.Call, callee=("cat", "concat"))
    def call(self, call, ctx):
        if ctx.index.qual(call.func) not in _JOINS or not call.args \
                or any(isinstance(a, ast.Starred) for a in call.args) or len(call.args) > 2:
            return
        dim = call.args[1] if len(call.args) == 2 else next((k.value for k in call.keywords if k.arg == "dim"), None)
        if dim is not None and not (isinstance(dim, ast.Constant) and dim.value in (0, -1)) \
                and not (isinstance(dim, ast.UnaryOp) and isinstance(dim.op, ast.USub)
                         and isinstance(dim.operand, ast.Constant) and dim.operand.value == 1):
            return  # along another dimension: 0.3 raised too
        if any(k.arg not in ("dim", "out") for k in call.keywords):
            return
        seq = call.args[0]
        scalars = ScalarValues(ctx.index)
        values = _joined(seq, call, scalars)
        if values is None:
            return
        # 0-dim by its rank, or by what VF401 knows of one-element values (`sim, cs = ssim(a, b,
        # full=True)` of a function whose `if full: return ret, cs` the call's constant decides)
        ranks = [0 if scalars.ranks.exact(v, v) == 0 or scalars.one_element(v, v) else None for v in values]
        # or 0-dim while parameters of the def keep their defaults (`def msssim(a, b,
        # size_average=True)` handing `size_average` on to `_ssim`'s `if size_average:`)
        needed: dict = {}
        for k, v in enumerate(values):
            given = None if ranks[k] == 0 else scalars.one_by_defaults(v, call)
            if given is not None and all(needed.get(p, d) == d for p, d in given.items()):
                ranks[k] = 0
                needed.update(given)
        if 0 not in ranks:
            return
        kept = scalars.keep_defaults(ctx.index.function_of(call), needed) if needed else True
        if kept is False:
            return  # every call of the function passes another value: the values have dimensions
        src = ctx.src
        fix = None
        safety = Applicability.SAFE if kept else Applicability.UNSAFE
        defaults = " and ".join(f"`{p}` keeps its default, `{d!r}`" for p, d in sorted(needed.items()))
        caveat = None if kept else f"the values are 0-dim while {defaults}; a call passing another value " \
                                   "joins values that have dimensions, which stacking shapes otherwise than 0.3"
        if all(r == 0 for r in ranks):
            func = call.func
            imports: frozenset = frozenset()
            if isinstance(func, ast.Attribute):  # `torch.cat` -> `torch.stack`, however torch is spelled
                edits = [TextEdit(src.end(func) - len(func.attr), src.end(func), "stack")]
            else:  # `from torch import cat`
                stack, imports = ctx.spell("torch.stack", call)
                edits = [TextEdit(src.start(func), src.end(func), stack)]
            fix = ctx.edit_fix(safety, "Stack the 0-dim values", edits, imports)
        elif isinstance(seq, (ast.List, ast.Tuple)):
            edits = [e for value, rank in zip(values, ranks) if rank == 0
                     for e in ctx.expr.replace(value, f"{ctx.expr.attr_base(value)}.view(1)")]
            fix = ctx.edit_fix(safety, "Join each 0-dim value as its (1,) view", edits)
        zero = values[ranks.index(0)]
        ctx.report(self.CODE, call, fix=fix,
                   note=caveat if fix is not None else
                   f"no fix: `{src.segment(zero)}` is 0-dim, and volfix cannot size the other values joined",
                   message=f"`torch.cat` of 0-dim tensors (`{src.segment(zero)}`) raises since PyTorch 0.4; "
                           f"{'use `torch.stack`' if all(r == 0 for r in ranks) else 'join them as `(1,)` views'}")


def _joined(seq: ast.AST, at: ast.AST, scalars: ScalarValues) -> Optional[List[ast.AST]]:
    """The values `torch.cat` joins: a list or tuple literal's elements, or the values a list
    bound only to list literals gets from them and from `append` (None: not known)."""
    if isinstance(seq, (ast.List, ast.Tuple)):
        return None if any(isinstance(e, ast.Starred) for e in seq.elts) or not seq.elts else list(seq.elts)
    return scalars.names.list_literal_members(seq.id, at) if isinstance(seq, ast.Name) else None
