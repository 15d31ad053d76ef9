"""VF203: `getattr(x, "volatile")` and `volatile` keys passed on as `**kwargs`."""
import ast

from ..files import prefilter
from .base import Rule, on

_NOTE_KWARGS = "no fix: a `volatile` key passed on as keyword arguments"


class DynamicVolatileAccess(Rule):
    """
    ## What it does
    Finds `getattr(x, "volatile")`, `setattr(x, "volatile", ...)`, `hasattr(x, "volatile")`
    and `"volatile"` keys in dictionaries (`{"volatile": True}`, `dict(volatile=True)`)
    that are passed on as `**kwargs`, in files that import torch. A literal dict used once as
    `Variable(x, **opts)` is read by VF101/VF103 instead.

    ## Why is this bad?
    These reach the removed flag dynamically: they read False, write nothing, or pass a
    keyword that only warns.

    ## Example
    ```python
    import torch
    from torch.autograd import Variable


    def prepare(batch, evaluating):
        kwargs = {"volatile": True} if evaluating else {}
        return Variable(batch, **kwargs)
    ```

    ## Use instead
    ```python
    import torch


    def prepare(batch):
        return batch
    ```

    ## Fix safety
    No fix is offered: the intent cannot be read from the code. The diagnostic points at
    the access for a manual migration (here: the callers passing `evaluating=True` run under
    `torch.no_grad()`).
    """

    CODE = "VF203"
    MESSAGE = "dynamic access to `volatile`, which has no effect since PyTorch 0.4"
    NEEDS = prefilter.TORCH_VOLATILE
    NAMES = frozenset({"volatile"})
    STRINGS = frozenset({"volatile"})

    @on(ast.Call, callee=("getattr", "setattr", "hasattr"))
    def dynamic(self, call, ctx):
        if not ctx.torch_file or not isinstance(call.func, ast.Name) or len(call.args) < 2:
            return
        key = call.args[1]
        if isinstance(key, ast.Constant) and key.value == "volatile":
            ctx.report(self.CODE, call, note="no fix: the intent of a dynamic access cannot be read from the code")

    @on(ast.Call, callee="dict")
    def dict_call(self, call, ctx):
        if ctx.torch_file and isinstance(call.func, ast.Name) and self.splatted(call, ctx) \
                and any(kw.arg == "volatile" for kw in call.keywords):
            ctx.report(self.CODE, call, note=_NOTE_KWARGS)

    @on(ast.Dict)
    def dict_literal(self, node, ctx):
        if not ctx.torch_file:
            return
        for key in node.keys:
            if isinstance(key, ast.Constant) and key.value == "volatile" and self.splatted(node, ctx):
                ctx.report(self.CODE, key, note=_NOTE_KWARGS)

    @on(ast.Subscript)
    def item_store(self, node, ctx):
        key = node.slice
        if (ctx.torch_file and isinstance(node.ctx, ast.Store) and isinstance(key, ast.Constant)
                and key.value == "volatile" and isinstance(node.value, ast.Name)
                and self.splat_calls(node.value.id, ctx)):
            ctx.report(self.CODE, node, note=_NOTE_KWARGS)

    def splatted(self, node, ctx) -> bool:
        """Does this dict reach a call as `**kwargs` that volfix cannot read as a `Variable`
        call (directly, or through the name it is bound to)?"""
        parent = ctx.index.parents.get(node)
        if isinstance(parent, ast.keyword) and parent.arg is None:
            return not self.read_by_variable_call(ctx.index.parents.get(parent), ctx)
        if isinstance(parent, ast.IfExp):
            parent = ctx.index.parents.get(parent)
        if isinstance(parent, ast.Assign):
            return any(isinstance(t, ast.Name) and any(not self.read_by_variable_call(c, ctx)
                                                        for c in self.splat_calls(t.id, ctx))
                       for t in parent.targets)
        return False

    @staticmethod
    def splat_calls(name: str, ctx) -> list:
        out = []
        for node in ctx.index.names.get(name, ()):
            kw = ctx.index.parents.get(node)
            if isinstance(kw, ast.keyword) and kw.arg is None and isinstance(node.ctx, ast.Load):
                out.append(ctx.index.parents.get(kw))
        return out

    @staticmethod
    def read_by_variable_call(call, ctx) -> bool:
        vc = ctx.variable_call(call) if isinstance(call, ast.Call) else None
        return vc is not None and vc.analysable
