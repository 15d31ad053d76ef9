"""VF102: `Variable(x, volatile=False)`."""
from ..files import prefilter
from ..model import Applicability
from .base import VARIABLE_CALL, Rule, on
from .variable_calls import false_flag_fix


class VolatileFalseInVariableCall(Rule):
    """
    ## What it does
    Finds `Variable(x, volatile=False)`.

    ## Why is this bad?
    `volatile=False` never did anything and the flag was removed in PyTorch 0.4; the
    `Variable` wrapper around it is a no-op too (see VF110).

    ## Example
    ```python
    import torch
    from torch.autograd import Variable

    inputs = Variable(torch.from_numpy(batch), volatile=False)
    ```

    ## Use instead
    ```python
    import torch

    inputs = torch.from_numpy(batch)
    ```

    ## Fix safety
    The flag is always dropped, and so is the wrapper: the call spells `volatile=`, so it is
    0.3 code, whose argument had to be a tensor (SEMANTICS.md fact 7): safe, unless the code
    evidently computes the argument with a module (`Variable(encoder(x), volatile=False)`,
    already half-migrated: unsafe, or safe with `legacy-semantics = true`). With
    `requires_grad=True` as well, the wrapper becomes what VF111 makes of it.
    """

    CODE = "VF102"
    MESSAGE = "`volatile=False` has no effect since PyTorch 0.4; drop it"
    FIX = Applicability.SAFE
    FIX_TITLE = "Remove the `Variable` wrapper"
    NEEDS = prefilter.TORCH_VARIABLE
    NAMES = frozenset({"Variable"})

    @on(VARIABLE_CALL)
    def call(self, call, ctx):
        vc = ctx.variable_call(call)
        if vc is None or vc.volatile_truth is not False:
            return
        if vc.unresolved is not None:
            return
        fix, unsafe = false_flag_fix(vc, ctx, self.FIX_TITLE)
        ctx.report(self.CODE, call, note=unsafe or vc.wrapper, fix=fix)
