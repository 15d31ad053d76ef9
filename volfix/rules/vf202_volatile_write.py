"""VF202: assigning `x.volatile = ...`."""
import ast
from typing import Optional

from ..files import prefilter
from ..flow.grad_mode import literal_truth
from ..model import Applicability
from ..syntax.index import FUNCTIONS
from .base import Rule, on
from .variable_calls import branch_flag
from .volatile_attributes import is_tensor_attribute


class VolatileAttributeWrite(Rule):
    """
    ## What it does
    Finds assignments `x.volatile = ...` in files that import torch or a package built on it
    (torchtext, allennlp, fastai, pyro, ...), and in a file importing none of them when
    another Python file of its project does (a trainer setting `src_seq.volatile = True` on a
    torchtext batch it only receives), as VF201 does for reads. An object's own `volatile` attribute is no
    tensor's flag and is not reported: `self.volatile = True` in a method of a class that is
    no tensor (a model's `set_eval()`), and `model.volatile` of `model = Speller()` when that
    class sets it so.

    ## Why is this bad?
    Since PyTorch 0.4 the assignment is a no-op (with a warning): `x.volatile = True` no longer
    stops the computation that follows from recording a graph.

    ## Example
    ```python
    import torch


    def predict(net, frames):
        x = frames.cuda()
        x.volatile = True
        out = net(x)
        return out.argmax(1)
    ```

    ## Use instead
    ```python
    import torch


    def predict(net, frames):
        x = frames.cuda()
        with torch.no_grad():
            out = net(x)
            return out.argmax(1)
    ```

    ## Fix safety
    `x.volatile = False` becomes `x = x.detach()` (safe). In 0.3 it made a volatile value a
    leaf that records nothing, so what was later computed from `x` trained nothing before it;
    deleted, `x` would keep its graph wherever its `volatile=True` is in a caller or left for
    `--unsafe-fixes`, and the gradient would also reach the modules that computed `x`. Over
    the elements of a loop (`for t in batch: t.volatile = False`) each element changed in
    place, which rebinding the loop variable does not do: the statement is deleted, unsafe
    (over `net.parameters()` safe: today a parameter is never volatile, as in 0.3 after the
    loop). `x.volatile = True` is deleted and the statements
    after it that compute with `x` go under `torch.no_grad()`, with the VF101 rules; also inside
    a loop or a branch. Written only when a test holds (`if not train: x.volatile = True`,
    also over a loop), the value is volatile as with `volatile=not train`: the region is
    `torch.set_grad_enabled(train)`, with the VF103 rules (in the `else:` of `if train:`, the
    same). `for v in batch: v.volatile = True`
    makes `batch`'s elements volatile, so `batch` is followed too (returned, it is its callers'
    to cover: with a flag, that is no fix). `for p in net.parameters(): p.volatile = True` made
    the module's parameters volatile, so every later forward of `net` was: deleting it is
    unsafe, and the note says so (so is any loop over what a call hands out, whose objects
    live elsewhere).
    """

    CODE = "VF202"
    MESSAGE = "assigning `.volatile` has no effect since PyTorch 0.4; use `torch.no_grad()`"
    FIX = Applicability.SAFE
    FIX_TITLE = "Delete the `.volatile` assignment"
    NEEDS = prefilter.VOLATILE_ATTRIBUTE
    NAMES = frozenset({"volatile"})

    @on(ast.Attribute, attr="volatile")
    def write(self, node, ctx):
        if not isinstance(node.ctx, ast.Store) or not ctx.tensor_file or not is_tensor_attribute(node, ctx):
            return
        stmt = ctx.index.parents.get(node)
        if not (isinstance(stmt, ast.Assign) and len(stmt.targets) == 1):
            ctx.report(self.CODE, stmt if isinstance(stmt, ast.stmt) else node, note="no fix: not a plain assignment")
            return
        deletion = ctx.expr.delete_statement(stmt)
        value = literal_truth(stmt.value)
        if deletion is None:
            ctx.report(self.CODE, stmt, note="no fix: the statement shares its line with another one")
        elif value is False:
            self.unvolatile(node, stmt, deletion, ctx)
        elif value is None:
            ctx.report(self.CODE, stmt, note="no fix: the assigned value is not a literal")
        elif not isinstance(node.value, ast.Name):
            ctx.report(self.CODE, stmt,
                       note=f"unsafe fix: `{ctx.src.segment(node.value)}` is not a local name whose uses could be followed",
                       fix=ctx.edit_fix(Applicability.UNSAFE, self.FIX_TITLE, deletion))
        elif _owned_elsewhere(node.value, stmt, ctx) is not None:
            ctx.report(self.CODE, stmt, note=_owned_elsewhere(node.value, stmt, ctx),
                       fix=ctx.edit_fix(Applicability.UNSAFE, self.FIX_TITLE, deletion))
        else:
            finding = ctx.report(self.CODE, stmt)
            ctx.add_source(finding, stmt, own_edits=deletion, deleted=stmt, seed=node.value.id,
                           flag=branch_flag(stmt, {node.value.id}, ctx))

    def unvolatile(self, node: ast.Attribute, stmt: ast.Assign, deletion, ctx) -> None:
        """`x.volatile = False`. In 0.3 it made a volatile value a leaf that records nothing
        (SEMANTICS.md fact 9; on anything else it was a no-op or raised), so the value's later
        uses did not record. Deleted, the value keeps whatever graph it has today: none where its
        `volatile=True` source became a region, the whole one where that source is in a caller,
        or left for `--unsafe-fixes`. `x = x.detach()` (the human migrations' spelling) is the
        0.3 meaning either way."""
        target = node.value
        loop = _loop_binding(target, stmt, ctx)
        if loop is not None:
            # `for t in tensors: t.volatile = False` changed each element in place; rebinding the
            # loop variable changes none (and `t.detach_()` raises on a view).
            if _over_parameters(loop):
                ctx.report(self.CODE, stmt, fix=ctx.edit_fix(Applicability.SAFE, self.FIX_TITLE, deletion))
            else:
                ctx.report(self.CODE, stmt,
                           note=f"unsafe fix: it made each element of `{ctx.src.segment(loop.iter)}` a leaf that "
                                "records nothing, in place; deleted, an element that records a graph today keeps it",
                           fix=ctx.edit_fix(Applicability.UNSAFE, self.FIX_TITLE, deletion))
        elif _rebindable(target):
            text = ctx.src.segment(target)
            ctx.report(self.CODE, stmt, fix=ctx.edit_fix(Applicability.SAFE, f"Replace with `{text} = {text}.detach()`",
                                                         ctx.expr.replace(stmt, f"{text} = {text}.detach()")))
        else:
            ctx.report(self.CODE, stmt,
                       note=f"unsafe fix: `{ctx.src.segment(target)}` cannot be rebound to its detached value, so "
                            "deleted, a value that records a graph today keeps it",
                       fix=ctx.edit_fix(Applicability.UNSAFE, self.FIX_TITLE, deletion))


def _owned_elsewhere(target: ast.Name, stmt: ast.stmt, ctx):
    """The unsafe note when `target` is the element of a loop over what a call hands out (`for p
    in net.parameters(): p.volatile = True`): the objects belong to something else (a module,
    whose every later forward was volatile in 0.3), which no name here follows; else None."""
    node = ctx.index.parents.get(stmt)
    while node is not None and not isinstance(node, FUNCTIONS + (ast.Module,)):
        if isinstance(node, (ast.For, ast.AsyncFor)) and isinstance(node.target, ast.Name) \
                and node.target.id == target.id and isinstance(node.iter, ast.Call):
            func = node.iter.func
            if isinstance(func, ast.Attribute) and func.attr in ("parameters", "named_parameters"):
                owner = ctx.src.segment(func.value)
                return (f"unsafe fix: the loop makes the parameters of `{owner}` volatile, so in 0.3 every later "
                        f"forward of `{owner}` was volatile and could not train; run those under `torch.no_grad()`")
            return (f"unsafe fix: `{target.id}` is each element of `{ctx.src.segment(node.iter)}`, objects kept "
                    "elsewhere whose later uses volfix cannot follow")
        node = ctx.index.parents.get(node)
    return None


def _loop_binding(target: ast.AST, stmt: ast.stmt, ctx) -> Optional[ast.For]:
    """The enclosing `for` of the same function whose target binds the name `target`, or None."""
    if not isinstance(target, ast.Name):
        return None
    node = ctx.index.parents.get(stmt)
    while node is not None and not isinstance(node, FUNCTIONS + (ast.Module,)):
        if isinstance(node, (ast.For, ast.AsyncFor)) and any(
                isinstance(n, ast.Name) and n.id == target.id for n in ast.walk(node.target)):
            return node
        node = ctx.index.parents.get(node)
    return None


def _over_parameters(loop: ast.For) -> bool:
    func = loop.iter.func if isinstance(loop.iter, ast.Call) else None
    return isinstance(func, ast.Attribute) and func.attr in ("parameters", "named_parameters")


def _rebindable(expr: ast.AST) -> bool:
    """A name, or attributes and subscripts of one, whose index computes nothing that could
    differ when read twice (`orig_outputs[i]`, `self.hidden[0]`)."""
    if isinstance(expr, ast.Name):
        return True
    if isinstance(expr, ast.Attribute):
        return _rebindable(expr.value)
    if isinstance(expr, ast.Subscript):
        return _rebindable(expr.value) and all(
            isinstance(n, (ast.Name, ast.Constant, ast.Attribute, ast.Tuple, ast.Slice, ast.BinOp, ast.UnaryOp,
                           ast.Load, ast.operator, ast.unaryop))
            for n in ast.walk(expr.slice))
    return False
