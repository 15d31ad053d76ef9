"""VF402: `x.data.resize_(...)`, which no longer resizes `x`."""
import ast
from typing import Optional

from ..files import prefilter
from ..fixes.edits import TextEdit
from ..flow.bindings import NameBindings
from ..flow.shapes import SIZED_CONSTRUCTORS, DATA_CONSTRUCTORS
from ..model import Applicability
from .base import Rule, on

_RESIZES = frozenset({"resize_", "resize_as_"})
# Methods that make a new tensor without autograd history from one without it.
_PLAIN_MOVES = frozenset({"cuda", "cpu", "float", "double", "long", "int", "half", "byte", "contiguous"})


class DataResize(Rule):
    """
    ## What it does
    Finds `x.data.resize_(...)` and `x.data.resize_as_(...)`, as in the OCR and VQA
    scripts' `loadData(v, data)`: `v.data.resize_(data.size()).copy_(data)`.

    ## Why is this bad?
    In PyTorch 0.3 `x.data` was the Variable's own tensor: resizing it resized `x` (and so it
    did through 1.0). PyTorch 1.1 made it an error (`set_sizes_contiguous is not allowed on a
    Tensor created from .data or .detach()`, the message every crnn and faster-rcnn fork met),
    and today's PyTorch (2.13, measured: `tests/semantic/test_data_resize.py`) lets it pass
    silently: `x.data` is a new tensor sharing `x`'s storage, `resize_` changes that view's
    shape only, and `x` keeps its old one. A batch of another size is copied into the old
    shape (part of it, or over stale rows), and the model reads the wrong data.

    ## Example
    ```python
    def load_data(v, data):
        v.data.resize_(data.size()).copy_(data)
    ```

    ## Use instead
    ```python
    def load_data(v, data):
        v.resize_(data.size()).copy_(data)
    ```

    ## Fix safety
    `x.resize_(...)` resizes `x` itself, as `x.data.resize_(...)` did in 0.3, when `x` does not
    require grad. The fix is safe when every value `x` is bound to is made without autograd
    history (`Variable(t)` without `requires_grad`, `torch.FloatTensor(...)`, `torch.zeros(...)`,
    their `.cuda()`); otherwise it is unsafe: a tensor that requires grad cannot be resized
    (`RuntimeError: cannot resize variables that require grad`).
    """

    CODE = "VF402"
    MESSAGE = "`x.data.resize_()` no longer resizes `x` (an error since PyTorch 1.1, silent today); use `x.resize_()`"
    FIX = Applicability.SAFE
    FIX_TITLE = "Resize the tensor itself"
    NEEDS = prefilter.DATA_RESIZE
    NAMES = frozenset({"data"})

    @on(ast.Call, callee=tuple(_RESIZES))
    def resize(self, call, ctx):
        func = call.func
        if not (isinstance(func, ast.Attribute) and func.attr in _RESIZES
                and isinstance(func.value, ast.Attribute) and func.value.attr == "data"):
            return
        subject = func.value.value
        if not isinstance(subject, (ast.Name, ast.Attribute)):
            return
        src = ctx.src
        shown = src.segment(subject)
        plain = _without_history(subject, call, NameBindings(ctx.index), ctx.index)
        note = None if plain else (
            f"unsafe fix: volfix cannot tell that `{shown}` does not require grad; if it does, "
            f"`{shown}.{func.attr}(...)` raises (a tensor that requires grad cannot be resized)")
        edit = TextEdit(src.end(subject), src.end(func.value), "")  # drop `.data`
        ctx.report(self.CODE, func, note=note,
                   message=f"`{shown}.data.{func.attr}()` no longer resizes `{shown}` (an error since PyTorch 1.1, "
                           f"silent today); use `{shown}.{func.attr}()`",
                   fix=ctx.edit_fix(Applicability.UNSAFE if note else Applicability.SAFE,
                                    self.FIX_TITLE, [edit]))


def _without_history(subject: ast.AST, at: ast.AST, names: NameBindings, index) -> bool:
    """Every value `subject` (a name, or `self.x`) is bound to is made without autograd history."""
    values = names.of(subject, at)
    return bool(values) and all(isinstance(v, ast.AST) and _plain_value(v, index) for v in values)


def _plain_value(value: ast.AST, index) -> bool:
    """`Variable(t)`, `torch.FloatTensor(...)`, `torch.zeros(...)` (no `requires_grad`), or
    such a value `.cuda()`-ed."""
    while isinstance(value, ast.Call) and isinstance(value.func, ast.Attribute) and value.func.attr in _PLAIN_MOVES:
        value = value.func.value
    if not isinstance(value, ast.Call) or any(k.arg in ("requires_grad", None) for k in value.keywords):
        return False
    if index.is_variable(value.func):
        return len(value.args) == 1
    qual: Optional[str] = index.qual(value.func)
    if qual is None or not qual.startswith("torch.") or qual.count(".") != 1:
        return False
    name = qual[len("torch."):]
    return name in SIZED_CONSTRUCTORS or name in DATA_CONSTRUCTORS
