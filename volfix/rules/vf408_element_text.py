"""VF408: `str(tensor[-1])` of a plain tensor: a number's text in 0.3 (`3`), a tensor's since 0.4
(`tensor(3)`)."""
import ast

from ..files import prefilter
from ..model import Applicability
from .base import Rule, on
from .plain_elements import ELEMENT_NAMES, PlainElements, report_number_read


class ElementText(Rule):
    """
    ## What it does
    Finds `str()` of an element of a tensor read from `.data` or made by a constructor (each
    `t[j]` of `x = torch.randperm(n)`, passed to a function that writes a data file line by
    line; `str(topi[0][0])` after `topv, topi = output.data.topk(1)`), also through a
    parameter every call of its function in the file fills with such a tensor.

    ## Why is this bad?
    In PyTorch 0.3 an element of a tensor was a Python number, and `str()` gave its digits.
    Since 0.4 it is a 0-dim tensor, and `str()` gives `tensor(3)`: a data file written so
    holds `tensor(3)` where it held `3`, and the `int(tok)` that reads it back raises
    `ValueError`. (`'{}'.format(t[j])` and f-strings still give the number: a 0-dim tensor
    formats as its number.)

    ## Example
    ```python
    import torch


    def to_string(tensor):
        return " ".join(str(tensor[j]) for j in range(len(tensor))) + "\\n"


    line = to_string(torch.randperm(10))
    ```

    ## Use instead
    ```python
    import torch


    def to_string(tensor):
        return " ".join(str(tensor[j].item()) for j in range(len(tensor))) + "\\n"


    line = to_string(torch.randperm(10))
    ```

    ## Fix safety
    The argument becomes `element.item()`, the number 0.3 gave, so the text is 0.3's. The fix
    is safe where volfix knows the tensor's rank (a constructor's, `randperm`'s, `arange`'s,
    also through a parameter every call fills so) and it matches the integers indexing it;
    otherwise unsafe: on a row of a tensor with more dimensions (whose text 0.3 also wrote as
    a tensor's), `.item()` raises.
    """

    CODE = "VF408"
    MESSAGE = "a tensor element is a 0-dim tensor since PyTorch 0.4, not a number: `str()` of it gives `tensor(...)`"
    FIX = Applicability.SAFE
    FIX_TITLE = "Take the element's number (`.item()`)"
    NEEDS = prefilter.ELEMENT_TEXT
    NAMES = ELEMENT_NAMES

    @on(ast.Call, callee="str")
    def call(self, node, ctx):
        if not (isinstance(node.func, ast.Name) and node.func.id == "str" and len(node.args) == 1
                and not node.keywords and not isinstance(node.args[0], ast.Starred)):
            return
        if ctx.index.module_names.bound("str"):
            return  # the module binds its own `str`
        element = node.args[0]
        certain = PlainElements(ctx.index).number_read(element, node)
        if certain is None:
            return
        report_number_read(ctx, self.CODE, self.FIX_TITLE, element, certain, "`str()` of it gives `tensor(...)`")
