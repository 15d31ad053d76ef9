"""VF2xx: the `.volatile` attribute."""
from ..model import Applicability
from .base import Rule


class VolatileAttributeRead(Rule):
    """
    ## What it does
    Finds reads of `x.volatile` in files that import torch.

    ## Why is this bad?
    Since PyTorch 0.4 `x.volatile` is always False (and warns): branches on it silently
    take the "training" side.

    ## Example
    ```python
    if not output.volatile:
        output.register_hook(save_grad)
    ```

    ## Use instead
    ```python
    if output.requires_grad:
        output.register_hook(save_grad)
    ```

    ## Fix safety
    Unsafe, chosen by context: `not x.volatile` (or `x.volatile == False`) guarding
    `register_hook`/`backward` means "can this have gradients" and becomes `x.requires_grad`;
    elsewhere, as in a forward hook's `input[0].volatile == False`, it asked whether grad mode
    was on and becomes `torch.is_grad_enabled()`; `volatile=x.volatile` passed on
    to a constructor is dropped (grad mode now propagates by itself); elsewhere the read
    becomes `not torch.is_grad_enabled()`, which restores the 0.3 intent inside a migrated
    region. Code that branches on the value behaves differently under the two rewrites, so a
    reviewer must choose.
    """

    CODE = "VF201"
    MESSAGE = "`.volatile` is always False since PyTorch 0.4; use `torch.is_grad_enabled()` or `.requires_grad`"
    FIX = Applicability.UNSAFE


class VolatileAttributeWrite(Rule):
    """
    ## What it does
    Finds assignments `x.volatile = ...` in files that import torch.

    ## Why is this bad?
    Since PyTorch 0.4 the assignment is a no-op (with a warning): `x.volatile = True` no longer
    stops the computation that follows from recording a graph.

    ## Example
    ```python
    x = Variable(frames)
    x.volatile = True
    out = net(x)
    ```

    ## Use instead
    ```python
    x = frames
    with torch.no_grad():
        out = net(x)
    ```

    ## Fix safety
    `x.volatile = False` is deleted (safe: it had no effect on 0.4+, and values computed under
    `no_grad` are already plain tensors). `x.volatile = True` is deleted and the statements
    after it that compute with `x` go under `torch.no_grad()`, with the VF101 rules.
    """

    CODE = "VF202"
    MESSAGE = "assigning `.volatile` has no effect since PyTorch 0.4; use `torch.no_grad()`"
    FIX = Applicability.SAFE


class DynamicVolatileAccess(Rule):
    """
    ## What it does
    Finds `getattr(x, "volatile")`, `setattr(x, "volatile", ...)`, `hasattr(x, "volatile")`
    and `"volatile"` keys in dictionaries (`{"volatile": True}`, `dict(volatile=True)`)
    that are passed on as `**kwargs`, in files that import torch.

    ## Why is this bad?
    These reach the removed flag dynamically: they read False, write nothing, or pass a
    keyword that only warns.

    ## Example
    ```python
    kwargs = {"volatile": True} if evaluating else {}
    x = Variable(batch, **kwargs)
    ```

    ## Use instead
    ```python
    with torch.set_grad_enabled(not evaluating):
        x = batch
        ...
    ```

    ## Fix safety
    No fix is offered: the intent cannot be read from the code. The diagnostic points at
    the access for a manual migration.
    """

    CODE = "VF203"
    MESSAGE = "dynamic access to `volatile`, which has no effect since PyTorch 0.4"


class AsyncKeywordArgument(Rule):
    """
    ## What it does
    Finds `async=` keyword arguments, as in `x.cuda(async=True)`, `x.to(device, async=True)`
    or `x.copy_(y, async=True)`.

    ## Why is this bad?
    `async` is a reserved keyword since Python 3.7: the whole file is a syntax error, so
    it cannot even be imported. PyTorch renamed the argument to `non_blocking` in 0.4.

    ## Example
    ```python
    target = target.cuda(async=True)
    ```

    ## Use instead
    ```python
    target = target.cuda(non_blocking=True)
    ```

    ## Fix safety
    The keyword is renamed by a token-level pass before parsing, so the file's other fixes
    apply too. Never turned into a positional argument: the first positional of
    `Tensor.cuda` is the device. Safe on the PyTorch methods that took `async`
    (`cuda`, `to`, `type`, `copy_`, `pin_memory`); unsafe on other calls, whose library may
    have chosen another name. A parameter named `async` in a `def` or `lambda` cannot be
    renamed without changing an API: that file is reported as VF001.
    """

    CODE = "VF301"
    MESSAGE = "`async=` is a syntax error since Python 3.7; use `non_blocking=`"
    FIX = Applicability.SAFE
