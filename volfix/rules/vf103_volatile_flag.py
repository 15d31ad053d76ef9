"""VF103: `Variable(x, volatile=<flag>)`, a flag known only at run time."""
import ast

from ..files import prefilter
from ..model import Applicability
from ..findings import Flag
from ..flow import grad_mode
from ..flow.decided import decided_flag
from ..flow.helper_calls import HELPER_CALL
from .base import VARIABLE_CALL, Rule, on
from .variable_calls import false_flag_fix, unbound_note, unresolved_note, unwrap
from .volatile_attributes import is_tensor_attribute


class VolatileFlagInVariableCall(Rule):
    """
    ## What it does
    Finds `Variable(x, volatile=flag)` where the flag is computed at run time.

    ## Why is this bad?
    The flag is ignored since PyTorch 0.4, so the "evaluation" branch records autograd
    graphs like the training one.

    ## Example
    ```python
    import torch
    from torch.autograd import Variable

    for phase in ["train", "val"]:
        for batch, target in loaders[phase]:
            x = Variable(batch, volatile=phase == "val")
            loss = criterion(model(x), target)
            if phase == "train":
                loss.backward()
    ```

    ## Use instead
    ```python
    import torch

    for phase in ["train", "val"]:
        for batch, target in loaders[phase]:
            with torch.set_grad_enabled(phase != "val"):
                loss = criterion(model(batch), target)
                if phase == "train":
                    loss.backward()
    ```

    ## Fix safety
    The region is chosen as for VF101 and runs under `torch.set_grad_enabled(not flag)`
    (`volatile=not train` becomes `set_grad_enabled(train)`, `volatile=phase == "val"` becomes
    `set_grad_enabled(phase != "val")`, `volatile=not self.training and not self.search` becomes
    `set_grad_enabled(self.training or self.search)`; a flag read from a local such as
    `not_training = not training` is followed to `training`; one bound to `True` makes the value
    always volatile, and the region is `torch.no_grad()`; such a local, read by nothing but
    `volatile=` arguments, goes with them). A flag computed from `torch.is_grad_enabled()`
    (`volatile = not torch.is_grad_enabled()`) is code written for 0.4, which added that function
    and stopped reading `volatile=`: the call is only unwrapped, with no
    `set_grad_enabled(torch.is_grad_enabled())` region. `set_grad_enabled` takes a bool
    and raises TypeError for anything else, where 0.3's `volatile=` took any integer: a flag
    left without its `not` that volfix cannot tell is a bool (a parameter without a `True` or
    `False` default, an `int` option, `self.search = 0`) is spelled `bool(train)`. Known
    bools: comparisons, `not`, `.training`, `isinstance(...)`, a parameter defaulting to `True`
    or `False`, a `store_true` option of the file's `argparse` parser, a name bound only to
    those. Training inside the region is
    expected: the flag is the train/eval switch, except after a branch that re-wraps the
    value plain (`if do_train and not train_feat: features = Variable(features.data,
    volatile=False)`: a frozen feature extractor whose classifier trains): on that path 0.3
    trained with grad on, which the region would turn off. Then there is no fix, and the
    note names the branch and the step (unsafe when the region covers no training step
    there). Inside an enclosing `no_grad` region grad
    mode is already off and `set_grad_enabled(True)` would turn recording back on, so there
    the call is only unwrapped. For the same reason a function (a module's `forward` called as
    `net(x)` too) that this file calls inside the `no_grad` region of a `volatile=True` value,
    passing that value, gets `torch.no_grad() if flag else contextlib.nullcontext()`: in 0.3
    what it computed from the caller's volatile value stayed volatile whatever its own flag
    said, and the caller's mode is kept. A bare `torch.set_grad_enabled(x)` statement is never emitted:
    it would change the mode for the rest of the thread.

    A flag that is a parameter of its function, where the function only creates the value
    and returns it (`get_batch(source, i, evaluation=False)`, `to_var(x, volatile=False)`, a
    method `as_tensor(self, ..., for_training)` defined by several classes; also after
    stacking it with `torch.cat` or with a function of the file that only builds data from
    its arguments, like matchbox's `MaskedBatch.fromlist`: no region around such a call,
    which records nothing), makes the
    function a helper: the flag goes away in the helper, and every call passing a true flag
    becomes a source in its caller, placed with the same rules there (a literal true flag
    gives a `no_grad` region, an expression a grad-mode region, a false one nothing). Calls
    are followed through functions that pass the flag on (by keyword, by position, through
    `**dict(...)`, `super()`), and into the other files of the project, which volfix reads
    even when they are not part of the run. The helper is unwrapped only when every call
    passing a true flag gets its region in this run; otherwise it is left as it is and the
    diagnostic names the calls. The signature is kept (VF104, off by default, drops it; a
    parameter named `volatile` left unread is VF105, on by default).
    A method that stores the value on its object (`def to_dev(self, volatile=False):
    self.data = {k: Variable(v, volatile=volatile) ...}`) hands it to its caller through the
    object: the region at `batch.to_dev(volatile=True)` covers what reads `batch` afterwards.
    When the function computes with the value itself, the region goes inside the function,
    under `set_grad_enabled(not flag)`; that is unsafe when a caller in the run calls it
    under `no_grad` (recording would be turned back on when the flag is false).

    A flag that is an attribute its class's constructor stored from a parameter
    (`self.train = train`; `yield Variable(src, volatile=not self.train)` in `__iter__`, or
    `return Variable(arr, volatile=not self.train)` in a method) is decided by each instance:
    where an instance made in this file with a literal flag is iterated (`for batch in
    Iterator(data, train=False)`) or has that method called, the loop or the call gets its
    region. Unsafe: instances made in other files are not followed, and an instance used any
    other way (passed on, stored) is named in the note. Without such a constructor the value
    leaves with a flag nobody can follow, and the finding stays: a model's own mode toggled
    by its callers (`volatile=self.volatile`, set by `set_volatile(True)` around inference)
    is such a flag. A flag that copies a tensor's `volatile` (`Variable(data,
    volatile=x.volatile)`) is dropped (unsafe): grad mode propagates by itself today.
    Inside an `if` that tests the flag itself (`if self.training:` ... `Variable(cost,
    volatile=not self.training)`) the flag is known: false there, so the keyword is dropped as
    VF102 drops `volatile=False`; true in the `else:`, so the region is `torch.no_grad()`, not a
    `set_grad_enabled(self.training)` the `if` has already decided. Not when something in the
    `if` before the call may change the flag (an assignment of it, a `train()`/`eval()` call).
    """

    CODE = "VF103"
    MESSAGE = "`volatile=<flag>` is ignored since PyTorch 0.4; use `torch.set_grad_enabled(not <flag>)`"
    FIX = Applicability.SAFE
    FIX_TITLE = "Unwrap the `Variable`"
    NEEDS = prefilter.TORCH_VARIABLE
    NAMES = frozenset({"Variable"})

    @on(VARIABLE_CALL)
    def call(self, call, ctx):
        vc = ctx.variable_call(call)
        if vc is None or vc.volatile is None or vc.volatile_truth is not None:
            return
        flag = vc.volatile
        if isinstance(flag, ast.Constant) and flag.value is None:
            ctx.report(self.CODE, call, note="no fix: `volatile=None` raises a TypeError")
            return
        unresolved = unresolved_note(vc) or unbound_note(vc)
        if unresolved and not (ctx.torch_file or ctx.index.module_names.star_modules):
            ctx.report(self.CODE, call, note=unresolved)
            return
        undo = unwrap(vc, ctx, legacy_call=True)
        if isinstance(flag, ast.Attribute) and flag.attr == "volatile" and is_tensor_attribute(flag, ctx):
            # (not `self.volatile` of a model that keeps a mode of its own: a flag like any other)
            ctx.report(self.CODE, call,
                       note="the flag copies another value's `volatile`: dropped, grad mode now propagates by itself",
                       fix=ctx.edit_fix(Applicability.UNSAFE, "Unwrap the `Variable`", undo.edits))
            return
        decided = decided_flag(ctx.index, flag, call)
        if decided is not None and decided[0] is False:  # `volatile=False` there: as VF102 fixes it
            fix, unsafe = false_flag_fix(vc, ctx, self.FIX_TITLE)
            branch = "" if decided[2] else "the `else:` of "
            because = (f"`{ctx.src.segment(flag)}` is false inside {branch}`if {ctx.src.segment(decided[1].test)}:` "
                       f"(line {decided[1].lineno}): dropped")
            ctx.report(self.CODE, call, note=unsafe or unresolved or because, fix=fix)
            return
        finding = ctx.report(self.CODE, call, note=unresolved or vc.wrapper)
        ctx.add_source(finding, call, flag=ctx.flag_of(flag), own_edits=undo.edits, deleted=undo.deleted,
                       data=None if undo.keyword_only else vc.data, unsafe_because=unresolved, legacy_call=True)

    @on(HELPER_CALL)
    def helper_call(self, call, ctx):
        """A helper of another file called with a runtime flag: a grad-mode source here (or,
        when the flag is this function's own parameter, this function is a helper too)."""
        hc = ctx.helper_call(call)
        if hc is None or hc.kind != "expr" or ctx.covered(call, any_grad_mode=True) \
                or grad_mode.reads_covered(ctx.index, call, any_grad_mode=True):
            return
        finding = ctx.report(self.CODE, call,
                             message=f"{hc.name} ({hc.where}) passes `{hc.sig.param}` to `volatile=`, ignored since "
                                     f"PyTorch 0.4: use `torch.set_grad_enabled(not <flag>)` here")
        finding.call_site = True
        text = ctx.src.segment(hc.arg)
        ctx.add_source(finding, call, flag=Flag(hc.arg, text, negated=hc.sig.negated), call_site=True,
                       computing=hc.sig.computes)
