"""Whether the copy a `Variable` list comprehension made can go with it.

`inpts = [Variable(inpt) for inpt in inpts]` unwrapped is `[inpt for inpt in inpts]`, which the
clean-up shortens to the iterable itself. But the comprehension built a new list: the
end-to-end negotiator's `_forward` then hands `inpts` to `_append_pad`, which appends a pad
sentence to it. With the copy gone, the append lands in the validation batch's own list, and
every later pass over that batch sees one sentence more. So the bare name replaces the copy
only where every read of the list reads it (`for x in xs`, `xs[i]`, `len(xs)`, `torch.cat(xs)`,
`f(*xs)`); anywhere else the copy stays, as `list(xs)`.
"""
from __future__ import annotations

import ast
from typing import Optional

from ..syntax.index import ModuleIndex
from .aliases import inside_scope

# builtins and torch functions that read a sequence without keeping or changing it
_READERS = frozenset({"len", "zip", "enumerate", "sorted", "reversed", "tuple", "list", "sum", "max", "min",
                      "any", "all", "map", "iter", "set"})
_TORCH_READERS = frozenset({"torch.cat", "torch.stack", "torch.concat"})


def copy_unneeded(comprehension: ast.ListComp, index: ModuleIndex) -> bool:
    """The list `comprehension` builds is only read: where it is used (an argument, a loop's
    iterable), or, bound to a name, at every read of that name in the function binding it
    (the nested ones too)."""
    parent = index.parents.get(comprehension)
    if _reads_only(comprehension, parent, index):
        return True
    name = _bound_name(comprehension, parent, index)
    if name is None:
        return False
    scope = index.function_of(comprehension)
    return all(_reads_only(n, index.parents.get(n), index) for n in index.names.get(name, ())
               if isinstance(n.ctx, ast.Load) and inside_scope(n, scope))


def _bound_name(comprehension: ast.ListComp, parent: ast.AST, index: ModuleIndex) -> Optional[str]:
    """`xs` of `xs = [...]`, or of `xs, ys = [...], [...]` (flownet2's batch and target)."""
    if isinstance(parent, ast.Assign) and parent.value is comprehension and len(parent.targets) == 1 \
            and isinstance(parent.targets[0], ast.Name):
        return parent.targets[0].id
    assign = index.parents.get(parent)
    if isinstance(parent, ast.Tuple) and isinstance(assign, ast.Assign) and assign.value is parent \
            and len(assign.targets) == 1 and isinstance(assign.targets[0], ast.Tuple) \
            and len(assign.targets[0].elts) == len(parent.elts):
        target = assign.targets[0].elts[parent.elts.index(comprehension)]
        return target.id if isinstance(target, ast.Name) else None
    return None


def _reads_only(node: ast.AST, parent: ast.AST, index: ModuleIndex) -> bool:
    if isinstance(parent, (ast.For, ast.AsyncFor, ast.comprehension)) and parent.iter is node:
        return True
    if isinstance(parent, ast.Subscript) and parent.value is node:
        return isinstance(parent.ctx, ast.Load)
    if isinstance(parent, ast.Starred) and isinstance(index.parents.get(parent), ast.Call):
        return True  # `f(*xs)`: the callee gets the items
    if isinstance(parent, ast.Call) and node in parent.args:
        func = parent.func
        if isinstance(func, ast.Name) and func.id in _READERS and not index.binds_anywhere(func.id):
            return True
        return index.qual(func) in _TORCH_READERS
    return False


def kept_copy(stmt: ast.stmt) -> bool:
    """`xs = list(xs)`: the copy the clean-up keeps (then alone in an `else` whose `if` branch
    the fix emptied, `fixes.emptied_branches.empty_body` turns the `if` around)."""
    value = stmt.value if isinstance(stmt, ast.Assign) and len(stmt.targets) == 1 else None
    return isinstance(value, ast.Call) and isinstance(value.func, ast.Name) and value.func.id == "list" \
        and len(value.args) == 1 and not value.keywords and isinstance(value.args[0], (ast.Name, ast.Attribute))
