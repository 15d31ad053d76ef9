"""VF303: `probs.multinomial()` without a sample count, a TypeError since PyTorch 0.4."""
import ast

from ..files import prefilter
from ..fixes.edits import TextEdit
from ..model import Applicability
from .base import Rule, on
from .tensor_values import TensorValues

METHOD = "multinomial"


class MultinomialSampleCount(Rule):
    """
    ## What it does
    Finds `x.multinomial()` called without the number of samples, as in the REINFORCE and
    actor-critic loops of the time: `action = probs.multinomial()`.

    ## Why is this bad?
    PyTorch 0.3's `Variable.multinomial(num_samples=1, replacement=False)` drew one sample by
    default. 0.4 merged `Variable` into `Tensor`, whose method needs the count, and today the
    call raises `TypeError: multinomial() missing 1 required positional arguments:
    "num_samples"`. The policy never takes its first action.

    ## Example
    ```python
    import torch.nn.functional as F

    probs = F.softmax(policy(state), dim=1)
    action = probs.multinomial()
    ```

    ## Use instead
    ```python
    import torch.nn.functional as F

    probs = F.softmax(policy(state), dim=1)
    action = probs.multinomial(1)
    ```

    ## Fix safety
    The count 0.3 used, `1`, is passed first; the result has the shape it had in 0.3 (one
    sample per row). Safe when the object certainly is a tensor (`F.softmax(...)`, the result of
    a torch function or of a tensor's method, a name bound only to such values, or a parameter
    or unpacked model output its function also uses as only a tensor is used: `policy.log()`,
    `probs.size(0)`, `p.data`) in a file that
    imports torch and defines no `multinomial` of its own; unsafe otherwise (a project class,
    a sampler, may define `multinomial(self)` in another file). Not reported on an imported
    module's function (`np.random.multinomial`), nor on calls that pass `*args` or
    `**kwargs`.
    """

    CODE = "VF303"
    MESSAGE = "`multinomial()` needs `num_samples` since PyTorch 0.4 (0.3 drew one sample); use `multinomial(1)`"
    FIX = Applicability.SAFE
    FIX_TITLE = "Pass the one sample 0.3 drew: `multinomial(1)`"
    NEEDS = prefilter.MULTINOMIAL_SAMPLES
    NAMES = frozenset({METHOD})

    @on(ast.Call, callee=METHOD)
    def multinomial(self, call, ctx):
        func = call.func
        if not isinstance(func, ast.Attribute) or not ctx.tensor_file:
            return
        if call.args or any(k.arg in ("num_samples", None) for k in call.keywords):
            return
        if ctx.index.qual(func) is not None:
            return  # an imported module's function (`np.random.multinomial`, `torch.multinomial`)
        src = ctx.src
        open_paren = src.text.index("(", src.end(func))
        edit = TextEdit(open_paren + 1, open_paren + 1, "1, " if call.keywords else "1")
        own = ctx.own_function(METHOD)
        shown = src.segment(func.value)
        if own is not None:
            note = (f"unsafe fix: this file's own `{METHOD}` (line {own.lineno}) may be the one called; "
                    f"volfix cannot tell that `{shown}` is a tensor")
        elif not TensorValues(ctx.index).certain(func.value, call):
            note = (f"unsafe fix: volfix cannot tell that `{shown}` is a tensor; a project class's own "
                    f"`{METHOD}()` (a sampler's) would not take the count")
        else:
            note = None
        ctx.report_span(self.CODE, src.end(func) - len(METHOD), src.end(call), note=note, fix=ctx.edit_fix(
            Applicability.UNSAFE if note else Applicability.SAFE, self.FIX_TITLE, [edit]))
