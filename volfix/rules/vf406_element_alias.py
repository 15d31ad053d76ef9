"""VF406: `old_val = target[0][action]`, then `target[0][action] = reward`: a number kept in
0.3, a view of the tensor since 0.4."""
import ast
from typing import Optional

from ..files import prefilter
from ..model import Applicability
from .base import Rule, on
from .plain_elements import ELEMENT_NAMES, PlainElements


class ElementAlias(Rule):
    """
    ## What it does
    Finds a name bound to an element of a tensor read from `.data` or made by a constructor
    (`old_val = target[0][action]` after `target = model(state).data`), when the function then
    writes into that tensor (`target[0][action] = reward + gamma * next_q`, `target.add_(x)`)
    and reads the name afterwards (`error = abs(old_val - target[0][action])`).

    ## Why is this bad?
    In PyTorch 0.3 an element of a tensor was a Python number: `old_val` kept the value it had
    when it was read. Since 0.4 it is a 0-dim tensor that shares the tensor's memory, so the
    write changes it too. A prioritized replay's TD error `abs(old_val - target[0][action])`
    is then always 0, and every priority is wrong, with no error raised.

    ## Example
    ```python
    import torch

    target = model(state).data
    old_val = target[0][action]
    target[0][action] = reward + 0.99 * torch.max(target_val)
    error = abs(old_val - target[0][action])
    ```

    ## Use instead
    ```python
    import torch

    target = model(state).data
    old_val = target[0][action].item()
    target[0][action] = reward + 0.99 * torch.max(target_val)
    error = abs(old_val - target[0][action])
    ```

    ## Fix safety
    `.item()` is the number 0.3 gave, so the name keeps the old value as it did. When volfix
    knows the element is 0-dim the fix is safe. When it cannot size the tensor (a model's
    output), the fix is unsafe: had the tensor more dimensions than the indices, the read was a
    row, a view in 0.3 too, and `.item()` raises.
    """

    CODE = "VF406"
    MESSAGE = "a tensor element is a view of the tensor since PyTorch 0.4, not a number: a later write changes it"
    FIX = Applicability.SAFE
    FIX_TITLE = "Keep the element's number (`.item()`)"
    NEEDS = prefilter.ELEMENT_ALIAS
    NAMES = ELEMENT_NAMES

    @on(ast.Subscript)
    def subscript(self, element, ctx):
        node = ctx.index.parents.get(element)  # `old_val = target[0][action]`
        if not isinstance(node, ast.Assign) or node.value is not element or len(node.targets) != 1 \
                or not isinstance(node.targets[0], ast.Name):
            return
        name, element = node.targets[0].id, node.value
        base = _root(element)
        facts = PlainElements(ctx.index)
        if base is None or not facts.element(element, node):
            return
        write = _later_write(base.id, node, ctx.index)
        if write is None or not _read_after(name, node, write, ctx.index, facts):
            return
        src = ctx.src
        rank = facts.ranks.exact(element, node)
        applicability = Applicability.SAFE if rank == 0 else Applicability.UNSAFE
        note = None if rank == 0 else (
            f"unsafe fix: volfix cannot size `{base.id}`; if it has more dimensions than "
            f"the indices, `{name}` is a row (a view in 0.3 too) and `.item()` raises")
        fix = ctx.edit_fix(applicability, self.FIX_TITLE,
                           ctx.expr.replace(element, f"{ctx.expr.attr_base(element)}.item()"))
        ctx.report(self.CODE, element, fix=fix, note=note,
                   message=f"`{name} = {src.segment(element)}` is a view of `{base.id}` since PyTorch 0.4, not a "
                           f"number: the write at line {write.lineno} changes it; use `.item()`")


def _root(expr: ast.AST) -> Optional[ast.Name]:
    while isinstance(expr, ast.Subscript):
        expr = expr.value
    return expr if isinstance(expr, ast.Name) else None


def _later_write(base: str, stmt: ast.stmt, index) -> Optional[ast.stmt]:
    """The first statement after `stmt`, in its function, that writes into the tensor `base`
    in place: `base[...] = v`, `base[...] += v`, `base.add_(v)`."""
    scope = index.function_of(stmt)
    found = []
    for node in index.names.get(base, ()):
        if index.function_of(node) is not scope or node.lineno <= stmt.end_lineno:
            continue
        parent = index.parents.get(node)
        written = parent
        while isinstance(written, ast.Subscript):
            holder = index.parents.get(written)
            if isinstance(written.ctx, ast.Store) or isinstance(holder, ast.AugAssign) and holder.target is written:
                found.append(index.statement_of(written))
                break
            if not isinstance(holder, ast.Subscript):
                break
            written = holder
        if isinstance(parent, ast.Attribute) and parent.attr.endswith("_") and not parent.attr.endswith("__") \
                and isinstance(index.parents.get(parent), ast.Call):
            found.append(index.statement_of(parent))
    return min(found, key=lambda s: (s.lineno, s.col_offset)) if found else None


def _read_after(name: str, bound: ast.stmt, write: ast.stmt, index, facts: PlainElements) -> bool:
    """`name` is read after `write` while it still holds the element bound at `bound`."""
    scope = index.function_of(bound)
    for node in index.names.get(name, ()):
        if isinstance(node.ctx, ast.Load) and index.function_of(node) is scope and node.lineno > write.end_lineno:
            values = facts.names.bindings(name, node)
            if len(values) == 1 and values[0] is bound.value:
                return True
    return False
