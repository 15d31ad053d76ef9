"""VF111: `Variable(x, requires_grad=True)`."""
import ast

from ..files import prefilter
from ..flow.calls import argument_for, call_sites
from ..flow.grad_mode import literal_truth
from ..model import Applicability
from ..syntax import names as nm
from .base import VARIABLE_CALL, Rule, on
from .variable_calls import requires_grad_unwrap


class RequiresGradVariable(Rule):
    """
    ## What it does
    Finds `Variable(x, requires_grad=True)` (or `Variable(x, True)`).

    ## Why is this bad?
    The wrapper is deprecated: it returns `x.detach().requires_grad_()`, a new leaf sharing
    `x`'s storage. Modern code asks for gradients where the tensor is made.

    ## Example
    ```python
    import torch
    from torch.autograd import Variable

    w = Variable(torch.randn(3, 4), requires_grad=True)
    z = Variable(z0.data, requires_grad=True)
    ```

    ## Use instead
    ```python
    import torch

    w = torch.randn(3, 4, requires_grad=True)
    z = z0.detach().requires_grad_()
    ```

    ## Fix safety
    A factory call (`torch.randn`, `torch.zeros`, ...) gets `requires_grad=True` (safe).
    `Variable(h.data, requires_grad=True)` becomes `h.detach().requires_grad_()` (safe: the
    same new leaf). Another fresh tensor expression becomes `expr.requires_grad_()` (safe when
    evidently a plain tensor). For a name, `x.requires_grad_()` changes `x` itself, so other
    references to it start recording: unsafe unless `legacy-semantics = true`. A name the code
    reads again after the call, or in a loop holding it (`x = Variable(images,
    requires_grad=True)`, then `images.add_(eps * x.grad.sign())`), becomes
    `images.detach().requires_grad_()` (safe: the new leaf 0.3 made; `images.requires_grad_()`
    would make its in-place update raise). So does a name bound to a computed value (`loss =
    Variable(loss, requires_grad=True)` after `loss = net(x).pow(2).mean()`): `requires_grad_()`
    on the graph's output would keep the graph, and a second `backward()` would raise.
    A non-literal `requires_grad=flag` gets `x.detach().requires_grad_(flag)` (safe: exactly
    what `Variable` makes today, a new leaf sharing `x`'s storage, whatever the flag). When the
    flag is a parameter of a wrapper (`to_var(x, requires_grad=False)`) that no call in the
    file asks for gradients, the wrapper asks for none: it becomes `x` (unsafe: a caller in
    another file passing `requires_grad=True` would lose its gradients).
    """

    CODE = "VF111"
    MESSAGE = "`Variable(x, requires_grad=True)` is deprecated; use `requires_grad=True` at creation or `x.requires_grad_()`"
    FIX = Applicability.SAFE
    FIX_TITLE = "Ask for gradients without `Variable`"
    NEEDS = prefilter.TORCH_VARIABLE
    NAMES = frozenset({"Variable"})

    @on(VARIABLE_CALL)
    def call(self, call, ctx):
        vc = ctx.variable_call(call)
        if vc is None or vc.volatile is not None or vc.wrapper or vc.unresolved or not vc.analysable:
            return
        flag = vc.requires_grad
        if flag is None or literal_truth(flag) is False:
            return
        if literal_truth(flag) is None:
            unused = self.never_asked(call, flag, vc, ctx)
            if unused is not None:
                return
        undo = requires_grad_unwrap(vc, ctx)
        note = None
        if undo.note:
            note = f"unsafe fix: {undo.note}"
        elif literal_truth(flag) is None:
            note = "exact: a new leaf sharing the tensor's storage, as `Variable` made"
        ctx.report(self.CODE, call, note=note,
                   fix=ctx.edit_fix(Applicability.SAFE if undo.exact else Applicability.UNSAFE,
                                    self.FIX_TITLE, undo.edits))

    def never_asked(self, call, flag, vc, ctx):
        """A wrapper whose `requires_grad` parameter no call in this file sets: a plain unwrap."""
        scope = ctx.index.function_of(call)
        if not (isinstance(flag, ast.Name) and isinstance(scope, (ast.FunctionDef, ast.AsyncFunctionDef))
                and flag.id in nm.function_params(scope)):
            return None
        sites, unresolved = call_sites(ctx.index, scope)
        values = []
        for site in sites:
            arg, known = argument_for(ctx.index, site, scope, flag.id)
            values.append(literal_truth(arg) if known else None)
            if not known:
                unresolved.append(site.lineno)
        if not sites or unresolved or any(v is not False for v in values):
            return None
        edits, _ = ctx.expr.unwrap(call, vc.data)
        lines = sorted({site.lineno for site in sites})
        where = f"line{'s' if len(lines) > 1 else ''} {', '.join(map(str, lines))}"
        return ctx.report(self.CODE, call,
                          note=f"unsafe fix: no call of `{scope.name}()` here asks for gradients ({where}); "
                               f"a caller elsewhere passing `{flag.id}=True` would lose them",
                          fix=ctx.edit_fix(Applicability.UNSAFE, self.FIX_TITLE, edits))
