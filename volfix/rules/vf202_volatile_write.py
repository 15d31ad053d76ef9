"""VF202: assigning `x.volatile = ...`."""
import ast

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
    `x.volatile = False` is deleted (safe: it had no effect on 0.4+, and values computed under
    `no_grad` are already plain tensors). `x.volatile = True` is deleted and the statements
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
            source = _volatile_binding(node.value, stmt, ctx)
            if source is not None:
                # In 0.3 this made the value plain again (SEMANTICS.md fact 9): deleted while the
                # `volatile=` that made it volatile stays, the value would be volatile to its end.
                ctx.report(self.CODE, stmt, note=f"unsafe fix: it undoes the `volatile=` of line {source}, whose "
                                                 "fix must come with it",
                           fix=ctx.edit_fix(Applicability.UNSAFE, self.FIX_TITLE, deletion))
            else:
                ctx.report(self.CODE, stmt, fix=ctx.edit_fix(Applicability.SAFE, self.FIX_TITLE, deletion))
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


def _volatile_binding(target: ast.AST, stmt: ast.stmt, ctx):
    """The line of an earlier statement of the same scope that binds `target` (a name) from a
    call passing `volatile=` (`target = model(Variable(x, volatile=True))`), or None."""
    if not isinstance(target, ast.Name):
        return None
    scope = ctx.index.function_of(stmt)
    for name in ctx.index.names.get(target.id, ()):
        if not isinstance(name.ctx, ast.Store) or ctx.index.function_of(name) is not scope \
                or name.lineno >= stmt.lineno:
            continue
        binding = ctx.index.statement_of(name)
        for node in ast.walk(binding):
            if isinstance(node, ast.Call) and any(k.arg == "volatile" and literal_truth(k.value) is not False
                                                  for k in node.keywords):
                return binding.lineno
    return None
