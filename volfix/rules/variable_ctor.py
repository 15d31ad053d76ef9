"""VF1xx: the `torch.autograd.Variable` constructor and type checks against it."""
from ..model import Applicability
from .base import Rule


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
    for batch in loader:
        out = model(Variable(batch, volatile=True))
        preds.append(out.max(1)[1])
    ```

    ## Use instead
    ```python
    for batch in loader:
        with torch.no_grad():
            out = model(batch)
            preds.append(out.max(1)[1])
    ```

    ## Fix safety
    volfix unwraps the call and puts the smallest run of statements that computes with the
    volatile value (followed through assignments, loops and containers; returning, copying or
    appending a value moves it without computing) under `torch.no_grad()`. A region that is a
    whole function body, apart from a docstring and statements that cannot touch autograd
    (constants, `model.eval()`, logging, `time.time()`, `AverageMeter()`, `return x`), becomes
    `@torch.no_grad()` — never on `async def`, always on generators whose region spans a
    `yield`. When nothing computes with the value (`p = Variable(a, volatile=True)` used only
    through `p.data`), the call is only unwrapped. Calls through a project wrapper
    (`Variable = lambda *a, **k: autograd.Variable(*a, **k).cuda()`) or with `*args` keep the
    call and lose the `volatile=` keyword. Nothing is wrapped inside an existing
    `no_grad`/`inference_mode` region. The fix is safe when the region holds only that data
    flow. It is unsafe when the region would also cover statements whose results are used
    after it, or when the volatile value escapes (returned, yielded, stored on an attribute):
    the diagnostic names the escape. When the region would contain `.backward()`,
    `torch.autograd.grad()` or an optimizer `step()`, nothing is wrapped: the value is data
    in a training step, the call is only unwrapped, and the diagnostic says so.

    ## References
    - [PyTorch 0.4.0 migration guide](https://pytorch.org/blog/pytorch-0_4_0-migration-guide/)
    - [`torch.no_grad`](https://pytorch.org/docs/stable/generated/torch.no_grad.html)
    """

    CODE = "VF101"
    MESSAGE = "`volatile=True` is ignored since PyTorch 0.4; use `torch.no_grad()`"
    FIX = Applicability.SAFE


class VolatileFalseInVariableCall(Rule):
    """
    ## What it does
    Finds `Variable(x, volatile=False)`.

    ## Why is this bad?
    `volatile=False` never did anything and the flag was removed in PyTorch 0.4; the
    `Variable` wrapper around it is a no-op too (see VF110).

    ## Example
    ```python
    inputs = Variable(torch.from_numpy(batch), volatile=False)
    ```

    ## Use instead
    ```python
    inputs = torch.from_numpy(batch)
    ```

    ## Fix safety
    The flag is always dropped; the wrapper follows VF110: removing it is safe when the
    argument is evidently a plain tensor (a factory, `torch.from_numpy`, `.data`, ...) or
    with `legacy-semantics = true`, unsafe otherwise.
    """

    CODE = "VF102"
    MESSAGE = "`volatile=False` has no effect since PyTorch 0.4; drop it"
    FIX = Applicability.SAFE


class VolatileFlagInVariableCall(Rule):
    """
    ## What it does
    Finds `Variable(x, volatile=flag)` where the flag is computed at run time.

    ## Why is this bad?
    The flag is ignored since PyTorch 0.4, so the "evaluation" branch records autograd
    graphs like the training one.

    ## Example
    ```python
    def run(model, batch, evaluating):
        x = Variable(batch, volatile=evaluating)
        return model(x).argmax(1)
    ```

    ## Use instead
    ```python
    def run(model, batch, evaluating):
        with torch.set_grad_enabled(not evaluating):
            x = batch
            return model(x).argmax(1)
    ```

    ## Fix safety
    The region is chosen as for VF101 and runs under `torch.set_grad_enabled(not flag)`
    (`volatile=not train` becomes `set_grad_enabled(train)`). Inside an enclosing
    `no_grad` region grad mode is already off, and `set_grad_enabled(True)` would turn
    recording back on, so there the call is only unwrapped (safe). At module level the fix is
    safe. Inside a function it is unsafe: a caller may run the function under `no_grad`, which
    `set_grad_enabled(True)` would override when the flag is false. Training inside the region is expected (the flag
    is the train/eval switch). A bare `torch.set_grad_enabled(x)` statement is never emitted:
    it would change the mode for the rest of the thread.

    A flag that is a parameter of its function (`get_batch(source, i, evaluation=False)`,
    `to_var(x, volatile=False)`, a method `forward_emb(self, ..., volatile=False)`) makes the
    function a helper: the helper is unwrapped, and every call becomes a source in its caller,
    placed with the same rules there (a literal true flag gives a `no_grad` region, an
    expression a grad-mode region, a false one nothing). Calls are followed through functions
    that pass their own parameter on as the flag, and into the other files of the run: a
    module imported by an absolute import from a directory holding both files (sibling
    scripts, a package run from its root) or by a relative import, and a method by its name
    when one class of the run defines it. A call in another file is reported there (VF101 for
    a true flag, VF103 for an expression) and gets its region there; the helper's own fix is
    then unsafe, because it must be applied in the same run. The signature is kept (VF104,
    off by default, drops it). Uses volfix cannot follow (the function passed as a value,
    `*args`) make the fix unsafe and are named; with no call passing a true flag in the run no
    fix is offered, because unwrapping would silence the warning that is the callers' only
    clue.
    """

    CODE = "VF103"
    MESSAGE = "`volatile=<flag>` is ignored since PyTorch 0.4; use `torch.set_grad_enabled(not <flag>)`"
    FIX = Applicability.SAFE


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
    target = Variable(torch.LongTensor(labels))
    hidden = Variable(hidden.data)
    ```

    ## Use instead
    ```python
    target = torch.LongTensor(labels)
    hidden = hidden.detach()
    ```

    ## Fix safety
    `Variable(h.data)` becomes `h.detach()` (safe). `Variable(x)` becomes `x`: safe when `x`
    is evidently a plain tensor (a factory call, `torch.from_numpy`, `.data`, a numpy
    conversion) or with `legacy-semantics = true` (genuine 0.3 code could only wrap plain
    tensors); otherwise unsafe, because when `x` requires grad, gradients would now flow
    into it.
    """

    CODE = "VF110"
    MESSAGE = "`Variable(x)` is a no-op since PyTorch 0.4; use the tensor itself"
    FIX = Applicability.SAFE


class RequiresGradVariable(Rule):
    """
    ## What it does
    Finds `Variable(x, requires_grad=True)` (or `Variable(x, True)`).

    ## Why is this bad?
    The wrapper is deprecated: it returns `x.detach().requires_grad_()`, a new leaf sharing
    `x`'s storage. Modern code asks for gradients where the tensor is made.

    ## Example
    ```python
    w = Variable(torch.randn(3, 4), requires_grad=True)
    z = Variable(z0, requires_grad=True)
    ```

    ## Use instead
    ```python
    w = torch.randn(3, 4, requires_grad=True)
    z = z0.requires_grad_()
    ```

    ## Fix safety
    A factory call (`torch.randn`, `torch.zeros`, ...) gets `requires_grad=True` (safe).
    `Variable(h.data, requires_grad=True)` becomes `h.detach().requires_grad_()` (safe: the
    same new leaf). Another fresh tensor expression becomes `expr.requires_grad_()` (safe when
    evidently a plain tensor). For a name, `x.requires_grad_()` changes `x` itself, so other
    references to it start recording: unsafe unless `legacy-semantics = true`.
    A non-literal `requires_grad=flag` gets `x.detach().requires_grad_(flag)` (safe: exactly
    what `Variable` makes today, a new leaf sharing `x`'s storage, whatever the flag). When the
    flag is a parameter of a wrapper (`to_var(x, requires_grad=False)`) that no call in the
    file asks for gradients, the wrapper asks for none: it becomes `x` (unsafe: a caller in
    another file passing `requires_grad=True` would lose its gradients).
    """

    CODE = "VF111"
    MESSAGE = "`Variable(x, requires_grad=True)` is deprecated; use `requires_grad=True` at creation or `x.requires_grad_()`"
    FIX = Applicability.SAFE


class VariableTypeComparison(Rule):
    """
    ## What it does
    Finds `type(x) == Variable`, `type(x) is Variable` (and the negations) and
    `isinstance(x, Variable)`.

    ## Why is this bad?
    Since PyTorch 0.4 `Variable(...)` returns a plain `torch.Tensor`, so `type(x) == Variable`
    is always False: code such as `repackage_hidden` silently takes its other branch.
    `isinstance(x, Variable)` is still True for every tensor, but only through a legacy shim.

    ## Example
    ```python
    def repackage_hidden(h):
        if type(h) == Variable:
            return Variable(h.data)
        return tuple(repackage_hidden(v) for v in h)
    ```

    ## Use instead
    ```python
    def repackage_hidden(h):
        if isinstance(h, torch.Tensor):
            return h.detach()
        return tuple(repackage_hidden(v) for v in h)
    ```

    ## Fix safety
    Safe: `isinstance(x, torch.Tensor)` is what the 0.3 check meant, and what
    `isinstance(x, Variable)` computes today.
    """

    CODE = "VF112"
    MESSAGE = "`type(x) == Variable` is always False since PyTorch 0.4; use `isinstance(x, torch.Tensor)`"
    FIX = Applicability.SAFE


class VolatileFlagParameter(Rule):
    """
    ## What it does
    Finds a helper's parameter that only selected `volatile`:
    `get_batch(source, i, evaluation=False)` creating `Variable(..., volatile=evaluation)`.
    Off by default: select it (`--extend-select VF104`) to drop such parameters.

    ## Why is this bad?
    Once VF103 moved the decision to the call sites (a `torch.no_grad()` region where a
    call passes a true flag), the parameter does nothing: every call still passes
    `evaluation=True`, which reads as if it mattered.

    ## Example
    ```python
    def get_batch(source, i, evaluation=False):
        return Variable(source[i:i + 35], volatile=evaluation)

    data = get_batch(val_data, i, evaluation=True)
    ```

    ## Use instead
    ```python
    def get_batch(source, i):
        return source[i:i + 35]

    with torch.no_grad():
        data = get_batch(val_data, i)
    ```

    ## Fix safety
    Unsafe, and only offered when every use of the helper is a call in the same file that
    volfix can edit (no call in another file of the run, no call passing later arguments by
    position, no use other than a call): the fix applies the helper's VF103 fix, removes the
    parameter from the signature and its argument from every call. Callers outside the run
    that still pass it would raise a `TypeError`, which is why volfix keeps signatures unless
    this rule is selected.

    ## References
    - [PyTorch 0.4.0 migration guide](https://pytorch.org/blog/pytorch-0_4_0-migration-guide/)
    """

    CODE = "VF104"
    MESSAGE = "A parameter that only selected `volatile` is unused once the flag is gone"
    FIX = Applicability.UNSAFE
    DEFAULT_ENABLED = False
