"""VF112: `type(x) == Variable` and `isinstance(x, Variable)`."""
import ast

from .. import prefilter
from ..model import Applicability
from ..edits import TextEdit
from .base import Rule, on


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
    import torch
    from torch.autograd import Variable


    def repackage_hidden(h):
        if type(h) == Variable:
            return Variable(h.data)
        return tuple(repackage_hidden(v) for v in h)
    ```

    ## Use instead
    ```python
    import torch


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
    FIX_TITLE = "Use `isinstance(x, torch.Tensor)`"
    NEEDS = prefilter.TORCH_VARIABLE
    NAMES = frozenset({"Variable"})

    @on(ast.Compare)
    def compare(self, node, ctx):
        if len(node.ops) != 1 or not isinstance(node.ops[0], (ast.Eq, ast.NotEq, ast.Is, ast.IsNot)):
            return
        left, right = node.left, node.comparators[0]
        for subject_call, other in ((left, right), (right, left)):
            if (isinstance(subject_call, ast.Call) and isinstance(subject_call.func, ast.Name)
                    and subject_call.func.id == "type" and len(subject_call.args) == 1
                    and not subject_call.keywords and ctx.index.is_variable(other)):
                negate = isinstance(node.ops[0], (ast.NotEq, ast.IsNot))
                subject = ctx.src.segment(subject_call.args[0])
                tensor, imports = ctx.spell("torch.Tensor", node)
                text = f"{'not ' if negate else ''}isinstance({subject}, {tensor})"
                parent = ctx.index.parents.get(node)
                if negate and isinstance(parent, (ast.BoolOp, ast.UnaryOp, ast.Compare, ast.BinOp)):
                    text = f"({text})"
                ctx.report(self.CODE, node, fix=ctx.edit_fix(
                    Applicability.SAFE, self.FIX_TITLE,
                    [TextEdit(ctx.src.start(node), ctx.src.end(node), text)], imports))
                return

    @on(ast.Call, callee=("isinstance", "issubclass"))
    def isinstance_check(self, call, ctx):
        if not (isinstance(call.func, ast.Name) and len(call.args) == 2):
            return
        classes = call.args[1]
        members = classes.elts if isinstance(classes, ast.Tuple) else [classes]
        hits = [m for m in members if ctx.index.is_variable(m)]
        if not hits:
            return
        src = ctx.src
        tensor, imports = ctx.spell("torch.Tensor", call)
        already = any(ctx.index.qual(m) == "torch.Tensor" for m in members)
        edits = []
        if isinstance(classes, ast.Tuple) and already:
            # Drop Variable from a tuple that already names torch.Tensor.
            keep = [src.segment(m) for m in members if m not in hits]
            text = keep[0] if len(keep) == 1 else "(" + ", ".join(keep) + ")"
            edits.append(TextEdit(src.start(classes), src.end(classes), text))
        elif len(hits) > 1:
            edits = [TextEdit(src.start(classes), src.end(classes),
                              "(" + ", ".join(dict.fromkeys(tensor if m in hits else src.segment(m)
                                                            for m in members)) + ")")]
        else:
            edits = [TextEdit(src.start(hits[0]), src.end(hits[0]), tensor)]
        ctx.report(self.CODE, call,
                   message="`isinstance(x, Variable)` is a legacy check; use `isinstance(x, torch.Tensor)`",
                   fix=ctx.edit_fix(Applicability.SAFE, self.FIX_TITLE, edits, imports))
