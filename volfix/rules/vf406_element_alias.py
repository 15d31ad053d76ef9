"""VF406: `old_val = target[0][action]`, then `target[0][action] = reward`: a number kept in
0.3, a view of the tensor since 0.4."""
import ast
from typing import Optional, Tuple

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
    and reads the name afterwards (`error = abs(old_val - target[0][action])`). Also an element
    of `w.data` or `w.grad.data` kept in a list inside a loop that changes that tensor in place
    (`ws.append(w.data[0])` while `w.data -= lr * w.grad.data`; `grads.append(w.grad.data[0])`
    while `backward()` adds into the gradient).

    ## Why is this bad?
    In PyTorch 0.3 an element of a tensor was a Python number: `old_val` kept the value it had
    when it was read. Since 0.4 it is a 0-dim tensor that shares the tensor's memory, so the
    write changes it too. A prioritized replay's TD error `abs(old_val - target[0][action])`
    is then always 0, and every priority is wrong, with no error raised. A list of kept
    elements ends up holding the last value again and again: a training curve drawn from it is
    flat.

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
    row, a view in 0.3 too, and `.item()` raises. A gradient has its variable's shape.
    """

    CODE = "VF406"
    MESSAGE = "a tensor element is a view of the tensor since PyTorch 0.4, not a number: a later write changes it"
    FIX = Applicability.SAFE
    FIX_TITLE = "Keep the element's number (`.item()`)"
    NEEDS = prefilter.ELEMENT_ALIAS
    NAMES = ELEMENT_NAMES

    @on(ast.Call, callee="append")
    def kept(self, call, ctx):
        """`ws.append(w.data[0])` in a loop that then changes `w.data` in place (Kyubyong's
        exercises: `w.data -= 0.01 * w.grad.data`, `grads.append(w.grad.data[0])` while
        `backward()` adds into the gradient): every element kept is a view, so the list ends
        up holding the last value again and again."""
        found = _kept_element(call)
        if found is None:
            return
        element, owner, data = found
        write = _written_in_loop(call, data, ctx.index)
        if write is None:
            return
        facts = PlainElements(ctx.index)
        indices = 0
        node = element
        while isinstance(node, ast.Subscript):
            indices += len(node.slice.elts) if isinstance(node.slice, ast.Tuple) else 1
            node = node.value
        gradient = isinstance(data.value, ast.Attribute) and data.value.attr == "grad"
        rank = facts.ranks.exact(owner if gradient else data, call)  # a gradient has its variable's shape
        if rank is not None and rank < indices:
            return  # `[0]` of a 0-dim value: VF401's
        src = ctx.src
        shown, holder = src.segment(element), src.segment(call.func.value)
        applicability = Applicability.SAFE if rank == indices else Applicability.UNSAFE
        note = None if rank == indices else (
            f"unsafe fix: volfix cannot size `{src.segment(data)}`; if it has more dimensions than the "
            f"indices, `{shown}` is a row (a view in 0.3 too) and `.item()` raises")
        fix = ctx.edit_fix(applicability, self.FIX_TITLE,
                           ctx.expr.replace(element, f"{ctx.expr.attr_base(element)}.item()"))
        ctx.report(self.CODE, element, fix=fix, note=note,
                   message=f"`{shown}` kept in `{holder}` is a view of `{src.segment(data)}` since PyTorch 0.4, not a "
                           f"number: the in-place write at line {write.lineno} changes every element kept; use "
                           "`.item()`")

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


def _kept_element(call: ast.Call) -> Optional[Tuple[ast.Subscript, ast.Name, ast.Attribute]]:
    """`ws.append(w.data[0])`, `grads.append(w.grad.data[0])`: (the element, `w`, its `.data`)."""
    if not (isinstance(call.func, ast.Attribute) and call.func.attr == "append" and len(call.args) == 1
            and not call.keywords and isinstance(call.args[0], ast.Subscript)):
        return None
    element = call.args[0]
    data = element
    while isinstance(data, ast.Subscript):
        if not _integer_slice(data.slice):
            return None
        data = data.value
    owner = data.value if isinstance(data, ast.Attribute) and data.attr == "data" else None
    if isinstance(owner, ast.Attribute) and owner.attr == "grad":
        owner = owner.value
    return (element, owner, data) if isinstance(owner, ast.Name) else None


def _integer_slice(key: ast.AST) -> bool:
    items = key.elts if isinstance(key, ast.Tuple) else [key]
    return all(isinstance(k, ast.Name) or isinstance(k, ast.Constant) and type(k.value) is int for k in items)


def _written_in_loop(call: ast.Call, data: ast.Attribute, index) -> Optional[ast.stmt]:
    """The first statement of the innermost loop holding `call` that changes `data` (`w.data`,
    `w.grad.data`) in place, so that on the next pass every element kept before changes too:
    `w.data -= lr * w.grad.data`, `w.data.add_(...)`, `w.data[0] = ...`; for a gradient, also a
    `.backward(` (which adds into it) or `w.grad.data.zero_()`."""
    loop = index.parents.get(call)
    while loop is not None and not isinstance(loop, (ast.For, ast.While)):
        if isinstance(loop, (ast.FunctionDef, ast.AsyncFunctionDef, ast.Lambda, ast.ClassDef)):
            return None
        loop = index.parents.get(loop)
    if loop is None:
        return None
    text = ast.unparse(data)
    gradient = isinstance(data.value, ast.Attribute) and data.value.attr == "grad"
    found = []
    for node in ast.walk(loop):
        if isinstance(node, ast.AugAssign):
            target = node.target.value if isinstance(node.target, ast.Subscript) else node.target
            if ast.unparse(target) == text:
                found.append(node)
        elif isinstance(node, ast.Assign) and any(isinstance(t, ast.Subscript) and ast.unparse(t.value) == text
                                                  for t in node.targets):
            found.append(node)
        elif isinstance(node, ast.Call) and isinstance(node.func, ast.Attribute):
            attr = node.func.attr
            if attr.endswith("_") and not attr.endswith("__") and ast.unparse(node.func.value) == text \
                    or gradient and attr == "backward":
                found.append(index.statement_of(node))
    return min(found, key=lambda s: (s.lineno, s.col_offset)) if found else None


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
