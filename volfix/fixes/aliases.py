"""Aliases the unwrapping leaves, collapsed (SPEC §2.8; a part of `fixes.cleanup.leftovers`):
`style_v = style` after `style_v = Variable(style)` goes, and every read it reaches names
`style`, when that keeps the meaning (`_alias_web`).
"""
from __future__ import annotations

import ast
from typing import List, Optional, Set, Tuple

from .edits import TextEdit
from .expressions import Expressions
from ..flow.defuse import ENTRY, Graph, declared
from ..flow.grad_mode import inert_grad_with
from ..syntax.document import CELL_SEPARATOR
from ..syntax import names as nm
from ..syntax.index import ModuleIndex

_LOOPS = (ast.For, ast.AsyncFor, ast.While)


def aliases(index: ModuleIndex, expr: Expressions, created) -> List[TextEdit]:
    """`style_v = style` (or `input_var = input`, `b_x = x`) left by unwrapping
    `style_v = Variable(style)`: the binding goes and every read it reaches names `style`
    (`_alias_web` says when that keeps the meaning). Aliases of unrelated names collapse in the
    same pass. A module-level alias that the module never reads stays (other modules may
    import it) unless a loop binds it, and so does one alone in a notebook cell."""
    edits: List[TextEdit] = []
    touched: Set[str] = set()
    for stmt in list(index.parents):
        pairs = _alias_pairs(stmt) if isinstance(stmt, ast.Assign) and created(stmt) else None
        if not pairs or {name for pair in pairs for name in pair} & touched:
            continue  # the next pass sees the new text
        scope = index.function_of(stmt)
        renames = []
        for alias, original in pairs:
            mentions = _alias_web(index, scope, alias, original, stmt)
            if mentions is not None and any(_attribute_store(index, m) for m in mentions):
                # `v.volatile = True` (or any `v.attr = ...`) on the alias: `Variable(x)` made a
                # new object, so renaming it to `x` would set the attribute on `x` itself.
                break
            if mentions is None or (isinstance(scope, ast.Module) and not index.enclosing(stmt, _LOOPS)
                                    and not any(isinstance(m.ctx, ast.Load) for m in mentions)):
                break  # a module-level name nothing here reads may be imported (a loop's is not API)
            renames.append((original, mentions))
        if len(renames) < len(pairs):
            continue
        if _alone_in_cell(index.src.text, index.src.start(stmt), index.src.end(stmt)):
            continue  # a notebook cell would be left empty
        region = index.parents.get(stmt)
        if not (isinstance(region, ast.With) and region.body == [stmt] and (created(region) and all(
                "grad" in ast.unparse(item.context_expr) for item in region.items) or inert_grad_with(index, region))):
            region = None  # a region holding nothing but the alias goes with it (no `with ...: pass`)
        deletion = expr.delete_statement(region or stmt, whole_if=True)
        if deletion is None:
            continue
        edits.extend(deletion)
        for original, mentions in renames:
            edits.extend(TextEdit(index.src.start(m), index.src.end(m), original) for m in mentions)
        touched.update(name for pair in pairs for name in pair)  # aliases of other names do not interact
    return edits


def _alias_pairs(stmt: ast.Assign) -> Optional[List[Tuple[str, str]]]:
    """(alias, original) for `input_var = input`, and for each position of
    `input_var, target_var = input, target` (distinct names, no alias an original: not a swap)."""
    if len(stmt.targets) != 1:
        return None
    target, value = stmt.targets[0], stmt.value
    if isinstance(target, ast.Name) and isinstance(value, ast.Name):
        return [(target.id, value.id)] if target.id != value.id else None
    if not (isinstance(target, ast.Tuple) and isinstance(value, ast.Tuple) and len(target.elts) == len(value.elts)
            and all(isinstance(e, ast.Name) for e in target.elts + value.elts)):
        return None
    aliases = [e.id for e in target.elts]  # type: ignore[attr-defined]
    originals = [e.id for e in value.elts]  # type: ignore[attr-defined]
    if len(set(aliases)) != len(aliases) or len(set(originals)) != len(originals) or set(aliases) & set(originals):
        return None
    return list(zip(aliases, originals))


def _attribute_store(index: ModuleIndex, name: ast.Name) -> bool:
    parent = index.parents.get(name)
    return isinstance(parent, ast.Attribute) and parent.value is name and not isinstance(parent.ctx, ast.Load)


def _alias_web(index: ModuleIndex, scope: ast.AST, alias: str, original: str, stmt: ast.Assign
               ) -> Optional[List[ast.Name]]:
    """The mentions of `alias` that the binding `stmt` reaches, when they may name `original`
    instead (None: they may not). This follows control flow, so the name may mean other
    things elsewhere: `inputs = Variable(images)` in the training loop and
    `inputs = Variable(images, volatile=True)` in the validation loop are two aliases, and
    `inputv = Variable(input)` ... `inputv = fake` keeps the name for the second value.

    Every read the binding reaches must be reached by no other binding (nor by the start of
    the scope), `original` must not be rebound between, and the alias must not be deleted.
    Conversions on the way (`bat = bat.cuda()`) become conversions of `original` when no
    read of `original` sees them. A read by a nested function or lambda (which runs later)
    needs the alias bound once, or last (no binding after it, the function defined after it in
    its block: temperature_scaling's `logits_var = logits` after the loop that bound it
    first, then `def eval():`), and `original` never rebound after it."""
    if isinstance(index.scope_of(stmt), ast.ClassDef) or {alias, original} & declared(scope):
        return None  # a class body, or a `global`/`nonlocal` name
    graph = Graph.of_scope(index, scope)
    start = None if graph is None else graph.step_of.get(id(stmt))
    if graph is None or start is None:
        return None
    steps = graph.steps
    around = set(map(id, index.enclosing(stmt, _LOOPS)))
    web, reading, frontier = {start}, set(), [start]
    while frontier:
        found, stops = graph.reached_reads(frontier, alias)
        reading.update(found)
        frontier = []
        for i in stops - web:
            step = steps[i]
            if alias in step.deletes:
                return None
            if alias in step.reads:  # `bat = bat.cuda()`, `x += 1`
                if not isinstance(step.node, (ast.Assign, ast.AugAssign)) or len(step.binds[alias]) > 1 \
                        or original in step.binds:
                    # Not a conversion: `x, x = x, x`; `x, y = f(x), g(y)` would become
                    # `y, y = f(y), g(y)`, where the second value wins.
                    return None
                if any(id(loop) not in around for loop in index.enclosing(step.node, _LOOPS)):
                    return None  # a rebinding in a loop of its own is loop state: keep the name
                web.add(i)
                frontier.append(i)
    others = [i for i, step in enumerate(steps) if alias in step.binds and i not in web] + [ENTRY]
    if reading & set(graph.reached_reads(others, alias)[0]):
        return None  # a read that another binding (or none) may reach
    if graph.rebound_before_read(sorted(web), alias, original, set()):
        return None
    immediate = {id(n) for step in steps for n in [*step.reads.get(alias, ()), *step.binds.get(alias, ())]}
    deferred = [n for n in index.names.get(alias, ()) if id(n) not in immediate and inside_scope(n, scope)
                and _resolves_to(index, n, scope, alias)]
    if any(not isinstance(n.ctx, ast.Load) or not _resolves_to(index, n, scope, original) for n in deferred):
        return None  # a nested function binds the alias, or has an `original` of its own
    conversions = web - {start}
    if deferred:
        bindings = [i for i, step in enumerate(steps) if alias in step.binds]
        last = bindings == [start] or not graph.binds_after(start, alias) and all(
            _defined_after(index, n, stmt) for n in deferred)  # `logits_var = logits`, then `def eval():`
        if conversions or not last or graph.binds_after(start, original):
            return None
    if conversions:
        if not isinstance(scope, ast.Module) and not _local_of(index, scope, original):
            return None  # rebinding a global inside a function would make it local
        read_here = {id(m) for step in steps for m in step.reads.get(original, ())}
        if any(id(n) not in read_here and isinstance(n.ctx, ast.Load) and inside_scope(n, scope)
               and _resolves_to(index, n, scope, original) for n in index.names.get(original, ())):
            return None  # a nested function reads `original`: it would see the conversion
        if graph.reached_reads(sorted(conversions), original)[0]:
            return None  # a read of `original` would see the conversion
    mentions = [n for i in reading for n in steps[i].reads[alias]]
    mentions += [n for i in conversions for n in steps[i].binds[alias] if isinstance(n, ast.Name)]
    mentions += deferred
    if any(index.comprehension_binds(n, original) for n in mentions):
        return None  # `[f(img_var) for img in imgs]` would read the comprehension's own `img`
    return sorted(mentions, key=lambda n: (n.lineno, n.col_offset))


def _resolves_to(index: ModuleIndex, node: ast.Name, scope: ast.AST, name: str) -> bool:
    """Does `name`, spelled where `node` stands, mean `scope`'s `name` (no function or class
    between binds a `name` of its own)?"""
    own = inner = index.scope_of(node)
    while inner is not scope and not isinstance(inner, ast.Module):
        # a class body's names are seen by that body only, not by its methods
        if (inner is own or not isinstance(inner, ast.ClassDef)) and _binds_locally(index, inner, name):
            return False
        inner = index.scope_of(inner)
    return True


def _binds_locally(index: ModuleIndex, owner: ast.AST, name: str) -> bool:
    if not isinstance(owner, ast.ClassDef) and name in nm.function_params(owner):
        return True
    return any(not isinstance(n.ctx, ast.Load) and index.scope_of(n) is owner for n in index.names.get(name, ()))


def _defined_after(index: ModuleIndex, node: ast.AST, stmt: ast.stmt) -> bool:
    """The statement of `stmt`'s block that holds `node` (a nested function's read) comes
    after `stmt`: every path to it ran `stmt` first."""
    slot = index.slot_of(stmt)
    if slot is None:
        return False
    holder = node
    while holder is not None and index.parents.get(holder) is not slot[0]:
        holder = index.parents.get(holder)
    later = index.slot_of(holder) if isinstance(holder, ast.stmt) else None
    return later is not None and later[2] is slot[2] and later[3] > slot[3]


def _local_of(index: ModuleIndex, scope: ast.AST, name: str) -> bool:
    if name in nm.function_params(scope):
        return True
    return any(not isinstance(n.ctx, ast.Load) and index.function_of(n) is scope for n in index.names.get(name, ()))


def _alone_in_cell(text: str, start: int, end: int) -> bool:
    """Is [start, end) the only code of its notebook cell (a joined notebook's text)?"""
    if CELL_SEPARATOR not in text:
        return False
    begin = text.rfind(CELL_SEPARATOR, 0, start)
    begin = 0 if begin < 0 else begin + len(CELL_SEPARATOR)
    stop = text.find(CELL_SEPARATOR, end)
    stop = len(text) if stop < 0 else stop
    rest = text[begin:start] + text[end:stop]
    return all(not line.strip() or line.lstrip().startswith("#") for line in rest.splitlines())


def inside_scope(node: ast.AST, scope: ast.AST) -> bool:
    """`node` lies in `scope`'s text (anything lies in the module)."""
    if isinstance(scope, ast.Module):
        return True
    if isinstance(node, ast.Module):
        return False
    return (scope.lineno, scope.col_offset) < (node.lineno, node.col_offset) and \
        (node.end_lineno, node.end_col_offset) <= (scope.end_lineno, scope.end_col_offset)  # type: ignore[attr-defined]
