"""VF302: `loss.backward(retain_variables=True)`, a TypeError since PyTorch 0.4."""
import ast

from ..files import prefilter
from ..fixes.edits import TextEdit
from ..model import Applicability
from .base import Rule, on
from .tensor_values import TensorValues

KEYWORD = "retain_variables"


class RetainVariablesKeyword(Rule):
    """
    ## What it does
    Finds `retain_variables=` in calls of `backward`: `loss.backward(retain_variables=True)`
    and `torch.autograd.backward(roots, grads, retain_variables=True)`.

    ## Why is this bad?
    `retain_variables` is PyTorch 0.1's name of `retain_graph` (keep the graph for another
    backward pass). 0.2 and 0.3 still took it, with a deprecation warning; 0.4 removed it, and
    today the call raises `TypeError: Tensor.backward() got an unexpected keyword argument
    'retain_variables'`. Multi-loss scripts of the time (a style-transfer loss per layer, a GAN
    whose generator and critic share a graph) stop at their first step.

    ## Example
    ```python
    loss.backward(retain_variables=True)
    ```

    ## Use instead
    ```python
    loss.backward(retain_graph=True)
    ```

    ## Fix safety
    The keyword is renamed; 0.3 read both names as one flag, so the call does what it did.
    Safe on `torch.autograd.backward`, and on `x.backward(...)` when `x` certainly is a tensor
    (a loss, the result of a torch function or of a tensor's method, a name bound only to such
    values, or one its function also uses as only a tensor is used: `x.data`, `x.size(0)`) and
    the file defines no `backward` of its own taking `retain_variables`; unsafe
    otherwise: a project class (the style-transfer tutorial's `ContentLoss`) may define
    `backward(self, retain_variables=True)`, whose parameter keeps its name. A call that also
    passes `retain_graph=` (0.3 refused both) is reported without a fix.
    """

    CODE = "VF302"
    MESSAGE = "`retain_variables=` was removed in PyTorch 0.4 (a TypeError today); use `retain_graph=`"
    FIX = Applicability.SAFE
    FIX_TITLE = "Rename `retain_variables=` to `retain_graph=`"
    NEEDS = prefilter.RETAIN_VARIABLES
    NAMES = frozenset({KEYWORD})

    @on(ast.Call, callee="backward")
    def backward(self, call, ctx):
        keyword = next((k for k in call.keywords if k.arg == KEYWORD), None)
        if keyword is None:
            return
        func = call.func
        qual = ctx.index.qual(func)
        if isinstance(func, ast.Attribute):
            if qual is not None and not qual.startswith("torch."):
                return  # an imported module's `backward`, not a tensor's
            own = None if qual == "torch.autograd.backward" else ctx.own_function("backward", KEYWORD)
        elif qual == "torch.autograd.backward":
            own = None
        else:
            return  # a bare `backward(...)` that is not torch's: the user's own function
        src = ctx.src
        start = src.start(keyword)
        end = start + len(KEYWORD)
        if any(k.arg == "retain_graph" for k in call.keywords):
            ctx.report_span(self.CODE, start, end, note=(
                "no fix: the call also passes `retain_graph=` (0.3 refused both unless one was None); "
                "keep one of them, spelled `retain_graph=`"))
            return
        note = None
        if own is not None:
            row = own.lineno
            note = (f"unsafe fix: this file's own `{own.name}` (line {row}) takes `{KEYWORD}`; if the call is "
                    f"that function's, its parameter keeps the name and the renamed keyword does not reach it")
        elif qual is None and not TensorValues(ctx.index).certain(func.value, call):
            note = (f"unsafe fix: volfix cannot tell that `{src.segment(func.value)}` is a tensor; a project "
                    f"class's own `backward({KEYWORD}=...)` would not take `retain_graph=`")
        finding = ctx.report_span(self.CODE, start, end, note=note, fix=ctx.edit_fix(
            Applicability.UNSAFE if note else Applicability.SAFE, self.FIX_TITLE,
            [TextEdit(start, end, "retain_graph")]))
        finding.snippet = f"{KEYWORD}="
