"""VF110: `Variable(x)`, a no-op wrapper since 0.4."""
import ast
from typing import Optional

from ..files import prefilter
from ..flow.grad_mode import literal_truth
from ..model import Applicability
from .base import VARIABLE_CALL, Rule, on
from .variable_calls import VARIABLE_ARGUMENTS, unwrap


class NoOpVariableWrapper(Rule):
    """
    ## What it does
    Finds `Variable(x)` (and `Variable(x, requires_grad=False)`).

    ## Why is this bad?
    Since PyTorch 0.4 tensors and Variables are one class: the wrapper returns
    `x.detach()`, a new tensor object that silently cuts the autograd graph when `x` requires
    grad. `Variable(h.data)` was the 0.3 idiom for "a copy without history".

    ## Example
    ```python
    import torch
    from torch.autograd import Variable

    target = Variable(torch.LongTensor(labels))
    hidden = Variable(hidden.data)
    ```

    ## Use instead
    ```python
    import torch

    target = torch.LongTensor(labels)
    hidden = hidden.detach()
    ```

    ## Fix safety
    `Variable(h.data)` becomes `h.detach()` (safe). `Variable(x)` becomes `x`: safe when `x`
    is evidently a plain tensor (a factory call, `torch.from_numpy`, `.data`, a numpy
    conversion) or with `legacy-semantics = true` (genuine 0.3 code could only wrap plain
    tensors); otherwise unsafe, because when `x` requires grad, gradients would now flow
    into it. Arguments passed with `*`/`**` that volfix cannot read get no fix, except in a
    project's own wrapper that hands its parameters on (`Variable = lambda *args, **kwargs:
    autograd.Variable(*args, **kwargs).cuda()`, `def to_var(x, *args, **kwargs)`): that call
    is the project's API for `Variable`, not reported (it could never be fixed); the calls
    through the wrapper are reported and fixed where they pass `volatile=`. In a torch
    file that never binds `Variable` and star-imports nothing (each call raised a NameError,
    on 0.3 too), the calls are read as torch's and unwrapped with an unsafe fix and a note.
    `v = Variable(x)` followed by `v.volatile = ...` (0.3's volatile leaf) is unsafe too:
    unwrapped, the write would land on `x` itself; VF202's fix goes with it.
    """

    CODE = "VF110"
    MESSAGE = "`Variable(x)` is a no-op since PyTorch 0.4; use the tensor itself"
    FIX = Applicability.SAFE
    FIX_TITLE = "Remove the `Variable` wrapper"
    NEEDS = prefilter.TORCH_VARIABLE
    NAMES = frozenset({"Variable"})

    @on(VARIABLE_CALL)
    def call(self, call, ctx):
        vc = ctx.variable_call(call)
        if vc is None or vc.volatile is not None or vc.wrapper or vc.unresolved:
            return
        if vc.requires_grad is not None and literal_truth(vc.requires_grad) is not False:
            return  # VF111
        if not vc.analysable:
            if ctx.wrapper_forward(call):
                return  # the project's own `Variable` wrapper: its calls are reported where made
            ctx.report(self.CODE, call, note=_unanalysable(call))
            return
        undo = unwrap(vc, ctx, detach_data=True)
        applicability = Applicability.SAFE if undo.exact else Applicability.UNSAFE
        note = f"unsafe fix: {undo.note}" if undo.note else None
        written = _volatile_written(call, ctx)
        if written is not None and applicability is Applicability.SAFE:
            # `v = Variable(x); v.volatile = True` (0.3's volatile leaf): `Variable` made a new
            # object, so unwrapped, the write of line N lands on `x` itself until VF202's fix
            # (unsafe) removes it: the two go together.
            applicability = Applicability.UNSAFE
            note = f"unsafe fix: the `.volatile` write of line {written} would set the flag on the argument itself"
        ctx.report(self.CODE, call, note=note, fix=ctx.edit_fix(applicability, self.FIX_TITLE, undo.edits))


def _volatile_written(call: ast.Call, ctx) -> Optional[int]:
    """The line of a `name.volatile = ...` later in the scope, when the call's statement binds
    `name` (`v = Variable(x)`), else None."""
    stmt = ctx.index.parents.get(call)
    if not (isinstance(stmt, ast.Assign) and stmt.value is call and len(stmt.targets) == 1
            and isinstance(stmt.targets[0], ast.Name)):
        return None
    name, scope = stmt.targets[0].id, ctx.index.function_of(stmt)
    for node in ctx.index.names.get(name, ()):
        parent = ctx.index.parents.get(node)
        if (isinstance(parent, ast.Attribute) and parent.value is node and parent.attr == "volatile"
                and isinstance(parent.ctx, ast.Store) and node.lineno > stmt.lineno
                and ctx.index.function_of(node) is scope):
            return node.lineno
    return None


def _unanalysable(call: ast.Call) -> str:
    """Why a `Variable(...)` call's arguments cannot be read: a keyword `Variable` does not take
    (`require_grad=True`, a TypeError when it runs), one given twice, `*`/`**`, or no data."""
    wrong = [k.arg for k in call.keywords if k.arg is not None and k.arg not in VARIABLE_ARGUMENTS]
    if wrong:
        return f"no fix: `Variable` takes no argument `{wrong[0]}` (a TypeError when the call runs)"
    if any(isinstance(a, ast.Starred) for a in call.args) or any(k.arg is None for k in call.keywords):
        return "no fix: arguments passed with `*`/`**` cannot be analysed"
    return "no fix: volfix cannot tell which argument is the data"
