"""VF101: `Variable(x, volatile=True)`."""
from .. import prefilter
from ..model import Applicability
from ..flow.helper_calls import HELPER_CALL
from .base import VARIABLE_CALL, Rule, on
from .variable_calls import unbound_note, unresolved_note, unwrap


class VolatileInVariableCall(Rule):
    """
    ## What it does
    Finds `Variable(x, volatile=True)` (as a keyword or as the third positional argument)
    where `Variable` is `torch.autograd.Variable`.

    ## Why is this bad?
    Since PyTorch 0.4 `volatile` only warns and does nothing: `Variable(x, volatile=True)`
    returns `x.detach()`, and everything computed from it records an autograd graph again.
    Inference code written for 0.3 silently uses the memory and time it was written to save.
    Deleting `volatile=True` by hand silences the warning and keeps the loss.

    ## Example
    ```python
    import torch
    from torch.autograd import Variable


    def evaluate(model, loader):
        preds = []
        for batch in loader:
            out = model(Variable(batch, volatile=True))
            preds.append(out.max(1)[1])
        return preds
    ```

    ## Use instead
    ```python
    import torch


    def evaluate(model, loader):
        preds = []
        for batch in loader:
            with torch.no_grad():
                out = model(batch)
                preds.append(out.max(1)[1])
        return preds
    ```

    ## Fix safety
    volfix unwraps the call and follows the value: the smallest run of statements that
    computes with it (through assignments, loops and containers; returning, copying or
    appending a value only moves it) goes under `torch.no_grad()`. A region that is a whole
    function body, apart from a docstring and statements that cannot touch autograd
    (constants, `model.eval()`, logging, `time.time()`, `AverageMeter()`, `return x`), becomes
    `@torch.no_grad()`: never on `async def`, always on generators whose region spans a
    `yield`. Statements that training after the region needs stay outside it (the region is
    split around them), and when no statement would record a graph (the value is only
    created, moved or read through `.data`) nothing is wrapped: the call is only unwrapped, and
    the value is followed to where it is computed (callers of a helper that returns it, the
    class's methods reading `self.attr`). A value computed in the region and returned carries
    no graph, as in 0.3: the fix stays safe unless a caller in the run trains on it. A plain
    `Variable(y)` re-wraps data (0.3 only accepted a tensor there), so the value stops at it: a
    helper's result re-wrapped as a loss target leaves the helper's call in the region. When the
    value itself reaches `.backward()` or `torch.autograd.grad()`, 0.3 raised there: what it
    computes before it meets a value that may need grad (a DQN's or DDPG's target networks)
    goes under `no_grad`, an unsafe fix; if nothing records before that meeting, it is data in
    a training step and the call is only unwrapped, and the diagnostic says so. Nothing is wrapped inside an
    existing `no_grad`/`inference_mode` region. A training step is never wrapped: the region
    goes where the value is computed with, around the step (a script's volatile test batch
    above the training loop gets each evaluation block inside it: at the top of an epoch,
    under `if step % 50 == 0:`, after the loop). Unwrapping is safe: in 0.3
    the argument of `Variable(...)` had to be a tensor, so no gradient can flow into it, unless
    the code evidently computes it with a module (`Variable(model(x), volatile=True)`, code
    already half-migrated: unsafe, or safe with `legacy-semantics = true`). The fix is also
    unsafe when the region cannot avoid covering a value used after it.

    ## References
    - [PyTorch 0.4.0 migration guide](https://pytorch.org/blog/pytorch-0_4_0-migration-guide/)
    - [`torch.no_grad`](https://pytorch.org/docs/stable/generated/torch.no_grad.html)
    """

    CODE = "VF101"
    MESSAGE = "`volatile=True` is ignored since PyTorch 0.4; use `torch.no_grad()`"
    FIX = Applicability.SAFE
    FIX_TITLE = "Unwrap the `Variable`"
    NEEDS = prefilter.TORCH_VARIABLE
    NAMES = frozenset({"Variable"})

    @on(VARIABLE_CALL)
    def call(self, call, ctx):
        vc = ctx.variable_call(call)
        if vc is None or vc.volatile_truth is not True:
            return
        if vc.requires_grad_truth is True:
            ctx.report(self.CODE, call, note="no fix: `volatile` together with `requires_grad` raises a ValueError")
            return
        unresolved = unresolved_note(vc) or unbound_note(vc)
        finding = ctx.report(self.CODE, call, note=unresolved or vc.wrapper)
        if unresolved and not (ctx.torch_file or ctx.index.module_names.star_modules):
            return
        undo = unwrap(vc, ctx, legacy_call=True)
        ctx.add_source(finding, call, own_edits=undo.edits, deleted=undo.deleted,
                       data=None if undo.keyword_only else vc.data, unsafe_because=unresolved, legacy_call=True)

    @on(HELPER_CALL)
    def helper_call(self, call, ctx):
        """`get_batch(val, i, evaluation=True)` where `get_batch` (another file) makes its
        value volatile when `evaluation` is true: the call is the source."""
        hc = ctx.helper_call(call)
        if hc is None or hc.kind != "true" or ctx.covered(call):
            return
        param = f"`{hc.sig.param}`" if hc.sig.param else "a volatile value"
        finding = ctx.report(self.CODE, call,
                             message=f"{hc.name} ({hc.where}) returns a value made with `volatile=True`, ignored "
                                     f"since PyTorch 0.4: use `torch.no_grad()` here" if hc.sig.param is None else
                                     f"{hc.name} ({hc.where}) passes {param} to `volatile=`, ignored since "
                                     f"PyTorch 0.4: use `torch.no_grad()` here")
        finding.call_site = True
        ctx.add_source(finding, call, call_site=True, computing=hc.sig.computes)
