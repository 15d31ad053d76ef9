"""`x = x.detach()` right after the `with torch.no_grad():` block that computed `x`: what a fix of
`x.volatile = False` (VF202) leaves when another fix's region ends just above it (a DQN's
target values: `with torch.no_grad(): target_q, _ = torch.max(target_net(next_obs), 1)`, then
`target_q = target_q.detach()`). What a no_grad block computes has no graph, so the copy
changes nothing, and a reviewer deletes it."""
from __future__ import annotations

import ast
from typing import Callable, List, Optional, Set

from ..syntax import names as nm
from ..syntax.index import FUNCTIONS, ModuleIndex
from .edits import TextEdit
from .expressions import Expressions


def redundant_detaches(index: ModuleIndex, expr: Expressions, created: Callable[[ast.AST], bool],
                       deleted: Set[int]) -> List[TextEdit]:
    edits: List[TextEdit] = []
    for attribute in index.attributes.get("detach", ()):  # (the module's `.detach` reads, from its one walk)
        node = index.parents.get(index.parents.get(attribute))
        name = _detached_name(node) if isinstance(node, ast.Assign) else None
        if name is None or not created(node):
            continue
        block = index.siblings(node)
        position = block.index(node) if block else 0
        if position == 0:
            continue
        region = block[position - 1]
        if not (isinstance(region, ast.With) and created(region) and _no_grad(region, index)
                and _computed_only_inside(name, region, node, index)):
            continue
        found = expr.delete_statement(node, gone=deleted)
        if found is not None:
            deleted.add(id(node))
            edits.extend(found)
    return edits


def _detached_name(stmt: ast.Assign) -> Optional[str]:
    """`x` of `x = x.detach()`."""
    if len(stmt.targets) != 1 or not isinstance(stmt.targets[0], ast.Name):
        return None
    value = stmt.value
    if isinstance(value, ast.Call) and not value.args and not value.keywords \
            and isinstance(value.func, ast.Attribute) and value.func.attr == "detach" \
            and isinstance(value.func.value, ast.Name) and value.func.value.id == stmt.targets[0].id:
        return stmt.targets[0].id
    return None


def _no_grad(stmt: ast.With, index: ModuleIndex) -> bool:
    return len(stmt.items) == 1 and isinstance(stmt.items[0].context_expr, ast.Call) \
        and index.qual(stmt.items[0].context_expr.func) == "torch.no_grad"


def _computed_only_inside(name: str, region: ast.With, at: ast.stmt, index: ModuleIndex) -> bool:
    """Every binding of `name` in the function that can reach `at` is inside `region` (one in a
    later statement of its block, with no loop around them, cannot: taochenshh/dqn-pytorch's
    `target_q = target_q.view(-1, 1)` after the copy), and each computes a new value
    (a call, an operator or an index: not `x = self.weight`, a parameter that keeps
    `requires_grad` under `no_grad`); the name is no parameter of the function."""
    scope = index.function_of(at)
    if isinstance(scope, FUNCTIONS) and name in nm.function_params(scope):
        return False
    inside = {id(n) for n in ast.walk(region)}
    later = _after_without_loop(at, scope, index)
    found = False
    for node in index.names.get(name, ()):
        if isinstance(node.ctx, ast.Load) or index.function_of(node) is not scope or node is at.targets[0] \
                or id(node) in later:
            continue
        if id(node) not in inside:
            return False
        parent = index.parents.get(node)
        while isinstance(parent, (ast.Tuple, ast.List)):
            parent = index.parents.get(parent)
        if not (isinstance(parent, ast.Assign)
                and isinstance(parent.value, (ast.Call, ast.BinOp, ast.Subscript, ast.UnaryOp))):
            return False
        found = True
    return found


def _after_without_loop(at: ast.stmt, scope: ast.AST, index: ModuleIndex) -> Set[int]:
    """The nodes of the statements after `at` in its block, when no loop of the function holds
    `at` (none of them runs before it); else none."""
    node = index.parents.get(at)
    while node is not None and node is not scope:
        if isinstance(node, (ast.For, ast.AsyncFor, ast.While)):
            return set()
        node = index.parents.get(node)
    block = index.siblings(at) or []
    position = next((k for k, s in enumerate(block) if s is at), len(block))
    return {id(n) for stmt in block[position + 1:] for n in ast.walk(stmt)}
