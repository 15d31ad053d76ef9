"""VF301: `async=` keyword arguments (found before parsing, `volfix.syntax.async_keywords`)."""
from ..files import prefilter
from ..fixes.edits import TextEdit
from ..model import Applicability
from ..syntax.async_keywords import PLACEHOLDER
from .base import MODULE, Rule, on


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
    FIX_TITLE = "Rename `async=` to `non_blocking=`"
    NEEDS = prefilter.ASYNC_KEYWORD
    NAMES = frozenset({PLACEHOLDER})  # the masked keyword, as the parsed file spells it

    @on(MODULE)
    def keywords(self, module, ctx):
        src = ctx.src
        for site in ctx.doc.async_sites:
            start = src.line_starts[site.row - 1] + site.col
            safe = site.safe
            note = None if safe else (f"unsafe fix: `{site.callee or 'this call'}` is not a PyTorch method "
                                      "known to have renamed `async` to `non_blocking`")
            finding = ctx.report_span(self.CODE, start, start + 5, note=note, fix=ctx.edit_fix(
                Applicability.SAFE if safe else Applicability.UNSAFE, self.FIX_TITLE,
                [TextEdit(start, start + 5, "non_blocking")]))
            finding.snippet = "async="
