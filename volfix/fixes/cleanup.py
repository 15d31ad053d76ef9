"""Leftovers the fixes create, collapsed to plain code (SPEC §2.8).

Unwrapping `Variable(...)` can leave code no reviewer would accept: `x = x`, `a, b = a, f(b)`
where `a = a` is a no-op, `[d for d in data]`, `image if image is not None else None`,
aliases such as `style_v = style`, and a script's `def var(a): return a` (its calls become
their argument). Only leftovers that the fixes created are touched (never
code the author wrote), and every change is an exact text edit.
"""
from __future__ import annotations

import ast
import re
from typing import Callable, List, Optional, Set, Tuple, Union

from .edits import TextEdit, blank_lines_around, piled_blank_lines
from .gates import reads_version_only
from ..flow.booleans import truth_safe
from ..flow.defuse import ENTRY, Graph, declared
from ..flow.grad_mode import NO_GRAD_QUALS, SET_GRAD_QUALS
from ..syntax.document import CELL_SEPARATOR
from ..syntax import names as nm
from ..syntax.index import ModuleIndex
from ..syntax.positions import SourceText
from .expressions import Expressions

# torch's own grad-mode context managers.
_GRAD_CONTEXTS = NO_GRAD_QUALS | SET_GRAD_QUALS | {"torch.enable_grad", "torch.autograd.enable_grad"}


def leftovers(original_tree: Optional[ast.Module], tree: ast.Module, text: str,
              before: Set[str]) -> List[TextEdit]:
    """Edits collapsing the leftovers of `text` that `original_tree` did not have. `before`:
    `fingerprints(original_tree)`, computed once per original by the caller
    (`engine.fixing.Original`), which previews many fixes and passes against it."""
    if original_tree is None:
        return []
    index = ModuleIndex(tree, SourceText(text))
    expr = Expressions(index)
    created: Callable[[ast.AST], bool] = lambda node: _fingerprint(node) not in before
    edits: List[TextEdit] = []
    taken: Set[int] = set()
    deleted: Set[int] = set()  # statements this pass deletes: the last of a block leaves `pass`
    for node in index.parents:
        if isinstance(node, ast.Assign) and created(node) and id(node) not in taken:
            found = _self_assignment(node, expr, deleted)
            if found is not None:
                edits.extend(found)
                taken.add(id(node))
                continue
        if isinstance(node, ast.If) and _if_key(node) not in before and id(node) not in taken:
            # Keep the branch the fix did not touch. A fixed branch that became a copy of the
            # other is not "created" either (the same statement exists): keep the body then.
            changed = [any(created(s) for s in branch) for branch in (node.body, node.orelse)]
            found = _identical_branches(node, expr, keep_else=changed[0] and not changed[1])
            if found is not None:
                edits.extend(found)
                taken.update(id(n) for n in ast.walk(node))
                continue
            if _only_pass(node.orelse) and _else_pass_key(node) not in before:
                found = _empty_else(node, expr)
                if found is not None:
                    edits.extend(found)
                    taken.update(id(n) for n in node.orelse)
            elif not node.orelse and _only_pass(node.body):
                found = _empty_if(node, index, expr)
                if found is not None:
                    edits.extend(found)
                    taken.update(id(n) for n in ast.walk(node))
        if id(node) in taken:
            continue
        if isinstance(node, ast.Call) and isinstance(node.func, ast.Name) and node.func.id in ("tuple", "list") \
                and len(node.args) == 1 and not node.keywords and isinstance(node.args[0], ast.GeneratorExp) \
                and created(node.args[0]) and not index.binds_anywhere(node.func.id):
            iterable = _identity_iterable(node.args[0])  # `tuple(d for d in data)` -> `tuple(data)`
            if iterable is not None:
                edits.extend(expr.replace(node, f"{node.func.id}({expr.src.segment(iterable)})"))
                taken.add(id(node.args[0]))
        elif isinstance(node, ast.GeneratorExp) and id(node) not in taken and created(node) \
                and _unpacked(node, index):
            iterable = _identity_iterable(node)  # `a, b = (t for t in (a, b))` -> `a, b = (a, b)`
            if isinstance(iterable, (ast.Tuple, ast.List)) \
                    and not any(isinstance(e, ast.Starred) for e in iterable.elts):
                edits.extend(expr.replace(node, expr.src.segment(iterable)))
        if isinstance(node, ast.ListComp) and created(node):
            iterable = _identity_iterable(node)
            if iterable is not None:
                text = expr.src.segment(iterable)
                edits.extend(expr.replace(node, text if isinstance(iterable, (ast.Name, ast.Attribute))
                                          else f"list({text})"))
        elif isinstance(node, ast.IfExp) and created(node):
            same = _none_guard(node) or _same_either_way(node)
            if same is not None:
                edits.extend(expr.replace(node, expr.text_in_place_of(node, same)))
    if not edits:
        edits = _aliases(index, expr, created) or _identity_helpers(index, expr, created)
    return edits + piled_blank_lines(expr.src.text, edits)


_LOOPS = (ast.For, ast.AsyncFor, ast.While)


def _fingerprint(node: ast.AST) -> str:
    if isinstance(node, ast.With):  # its header: a body the fixes changed leaves the author's `with` the author's
        return "with " + " ".join(ast.dump(item) for item in node.items)
    return ast.dump(node)


def fingerprints(tree: ast.Module) -> Set[str]:
    """What `leftovers` compares a fixed tree with: the shapes of the original's statements."""
    out = set()
    for n in ast.walk(tree):
        if isinstance(n, (ast.stmt, ast.ListComp, ast.GeneratorExp, ast.IfExp)):
            out.add(_fingerprint(n))
        if isinstance(n, ast.If):
            out.add(_if_key(n))
            # an `else` holding a `pass` the author wrote (an `if` on the same test): never emptied by a fix
            if any(isinstance(s, ast.Pass) for s in n.orelse):
                out.add(_else_pass_key(n))
    return out


_NAME_ID = re.compile(r"Name\(id='[^']*'")


def _if_key(node: ast.If) -> str:
    """An `if` statement's shape, whatever names it reads: renaming an alias away (`if x:`
    becomes `if y:`) does not make the author's `if` one that the fix created."""
    return "if:" + _NAME_ID.sub("Name(id=''", ast.dump(node))


def _else_pass_key(node: ast.If) -> str:
    return "else-pass:" + _NAME_ID.sub("Name(id=''", ast.dump(node.test))


def _only_pass(block: List[ast.stmt]) -> bool:
    return bool(block) and all(isinstance(s, ast.Pass) for s in block)


def _names(node: ast.AST) -> Optional[List[str]]:
    """`x` -> ['x'], `a, b` -> ['a', 'b'], `self.grid` -> ['self.grid'], `self.z, self.y` ->
    ['self.z', 'self.y'] (dotted names only)."""
    dotted = _dotted(node)
    if dotted is not None:
        return [dotted]
    if isinstance(node, (ast.Tuple, ast.List)):
        names = [_dotted(e) for e in node.elts]
        return names if all(n is not None for n in names) else None  # type: ignore[return-value]
    return None


def _dotted(node: ast.AST) -> Optional[str]:
    if isinstance(node, ast.Name):
        return node.id
    if isinstance(node, ast.Attribute):
        base = _dotted(node.value)
        return f"{base}.{node.attr}" if base is not None else None
    return None


def _self_assignment(stmt: ast.Assign, expr: Expressions, deleted: Set[int]) -> Optional[List[TextEdit]]:
    """`x = x`, `self.grid = self.grid`, `a, b = a, b` (deleted, and added to `deleted`);
    `a, b = a, f(b)` -> `b = f(b)` (`self.z, self.y = self.z, self.y.cuda()` -> `self.y =
    self.y.cuda()`)."""
    if len(stmt.targets) != 1:
        return None
    target, value = stmt.targets[0], stmt.value
    left, right = _names(target), _names(value)
    if left is not None and left == right:
        found = expr.delete_statement(stmt, gone=deleted)
        if found is not None:
            deleted.add(id(stmt))
        return found
    if not (isinstance(target, ast.Tuple) and isinstance(value, ast.Tuple)
            and len(target.elts) == len(value.elts) and not any(isinstance(e, ast.Starred) for e in target.elts)):
        return None
    keep = [(t, v) for t, v in zip(target.elts, value.elts) if _dotted(t) is None or _dotted(t) != _dotted(v)]
    if len(keep) == len(target.elts) or not keep:
        return None
    src = expr.src
    lhs = ", ".join(src.segment(t) for t, _ in keep)
    rhs = ", ".join(src.segment(v) for _, v in keep)
    return [TextEdit(src.start(target), src.end(value), f"{lhs} = {rhs}")]


def _unpacked(node: ast.GeneratorExp, index: ModuleIndex) -> bool:
    """Is the generator the whole value of an assignment to several targets (`a, b = (...)`)?"""
    parent = index.parents.get(node)
    return isinstance(parent, ast.Assign) and parent.value is node and len(parent.targets) == 1 \
        and isinstance(parent.targets[0], (ast.Tuple, ast.List))


def _identity_iterable(node: Union[ast.ListComp, ast.GeneratorExp]) -> Optional[ast.AST]:
    """`[d for d in data]` -> data (the copy of a batch's list that `Variable` made); any other
    iterable keeps being copied: `[e for e in ex[:5]]` -> `list(ex[:5])`. Also the iterable
    of a generator `(d for d in data)` its caller may drop (`tuple(...)`, an unpacking)."""
    if len(node.generators) != 1:
        return None
    gen = node.generators[0]
    if gen.ifs or gen.is_async or not isinstance(gen.target, ast.Name) or not isinstance(node.elt, ast.Name):
        return None
    if node.elt.id != gen.target.id or any(isinstance(n, ast.Name) and n.id == node.elt.id for n in ast.walk(gen.iter)):
        return None
    return gen.iter


def _none_guard(node: ast.IfExp) -> Optional[ast.AST]:
    """`x if x is not None else None` and `None if x is None else x` -> x."""
    test = node.test
    if not (isinstance(test, ast.Compare) and len(test.ops) == 1 and isinstance(test.comparators[0], ast.Constant)
            and test.comparators[0].value is None):
        return None
    subject = ast.dump(test.left)
    if isinstance(test.ops[0], ast.IsNot) and _is_none(node.orelse) and ast.dump(node.body) == subject:
        return node.body
    if isinstance(test.ops[0], ast.Is) and _is_none(node.body) and ast.dump(node.orelse) == subject:
        return node.orelse
    return None


def _same_either_way(node: ast.IfExp) -> Optional[ast.AST]:
    """`e if e is None else e` (left by unwrapping `Variable(e)` in one branch) -> e."""
    if ast.dump(node.body) == ast.dump(node.orelse) and _pure(node.test):
        return node.body
    return None


def _pure(test: ast.AST) -> bool:
    """A test whose evaluation does nothing but read: names, attributes, constants, compares,
    boolean operators and `hasattr`/`isinstance`/`callable` (dropping it changes nothing)."""
    for node in ast.walk(test):
        if isinstance(node, ast.Call):
            if not (isinstance(node.func, ast.Name) and node.func.id in ("hasattr", "isinstance", "callable")):
                return False
        elif isinstance(node, (ast.Await, ast.Yield, ast.YieldFrom, ast.NamedExpr, ast.Lambda, ast.Subscript,
                               ast.comprehension)):
            return False
    return True


def _identical_branches(stmt: ast.If, expr: Expressions, keep_else: bool) -> Optional[List[TextEdit]]:
    """`if hasattr(torch, 'no_grad'): return Variable(x)` / `else: return Variable(x, volatile=True)`
    unwraps to two identical branches: the `if` becomes one branch, dedented: the one the fix
    did not touch (`keep_else`: the `else` branch), else the body. The comment of the `if`
    line moves above it; a comment in the dropped branch keeps the `if` (volfix never drops a
    comment), and so does a kept branch of `pass` alone (the emptied `else` goes instead)."""
    if not stmt.orelse or isinstance(stmt.orelse[0], ast.If) \
            or not (_pure(stmt.test) or reads_version_only(expr.index, stmt.test)):
        return None
    if [ast.dump(s) for s in stmt.body] != [ast.dump(s) for s in stmt.orelse]:
        return None
    kept = stmt.orelse if keep_else else stmt.body
    if _only_pass(kept):
        return None
    src = expr.src
    else_row = _else_row(src, stmt.body[-1].end_lineno, stmt.orelse[0].lineno)
    if else_row is None:
        return None
    header = src.comments_between(src.start(stmt), src.line_end(stmt.lineno))
    if keep_else:
        dropped = (src.line_end(stmt.lineno), src.line_end(else_row))
        owner_row = else_row
    else:
        dropped = (src.line_starts[else_row - 1], src.line_end(stmt.end_lineno))
        owner_row = stmt.lineno
    if src.comments_between(*dropped):
        return None  # the dropped branch has comments: they stay, and so does the `if`
    head = src.indentation(stmt.lineno)
    first, last = kept[0], kept[-1]
    if first.lineno == owner_row:  # `if c: x = 1` / `else: x = 1` on one line
        if last.end_lineno != owner_row or header:
            return None
        return [TextEdit(src.start(stmt), src.end(stmt), src.text[src.start(first):src.end(last)])]
    inner = src.indentation(first.lineno)
    if not inner.startswith(head) or inner == head:
        return None
    interior = expr.index.interior_rows()
    lines = [f"{head}{comment}{src.newline}" for comment in header]  # `if flag:  # why` keeps its note
    # the kept body runs to the `else:` line: its trailing comments (one a deleted statement
    # left, `x = Variable(x,  # note`) are the body's
    end_row = last.end_lineno if keep_else else else_row - 1
    for row in range(owner_row + 1, end_row + 1):
        line = src.text[src.line_starts[row - 1]:src.line_after(row)]
        if row not in interior and line.startswith(inner):
            line = head + line[len(inner):]
        elif row not in interior and line.strip() and not line.lstrip().startswith("#"):
            return None  # a continuation line left of the block: leave it to the author
        lines.append(line)
    return [TextEdit(src.line_starts[stmt.lineno - 1], src.line_after(stmt.end_lineno), "".join(lines))]


def _empty_else(stmt: ast.If, expr: Expressions) -> Optional[List[TextEdit]]:
    """`else: pass` left where the fix emptied the `else` branch (`else: x = Variable(x)`
    became `x = x`, then went): the `else` goes."""
    src = expr.src
    last = stmt.body[-1]
    else_row = _else_row(src, last.end_lineno, stmt.orelse[0].lineno)
    if else_row is None or else_row == last.end_lineno or src.line(else_row).strip() != "else:":
        return None
    if stmt.orelse[0].lineno == else_row or src.comments_between(src.line_starts[else_row - 1],
                                                                 src.line_end(stmt.end_lineno)):
        return None
    return [TextEdit(src.line_starts[else_row - 1], src.line_after(stmt.end_lineno), "")]


def _empty_if(stmt: ast.If, index: ModuleIndex, expr: Expressions) -> Optional[List[TextEdit]]:
    """`if flag: pass` left where the fix emptied the only branch (`if flag: x = Variable(x)`,
    or both branches of `if sep: t = Variable(t)` / `else: t = [Variable(u) for u in t]`): the
    `if` goes when testing its test can neither raise nor run code (`truth_safe`: a flag
    parameter defaulting to `False`, `x is None`; not `if x:` on a tensor, which raises for
    several elements), it is not an `elif`, it holds no comment, and its block keeps another
    statement."""
    if not truth_safe(index, stmt.test):
        return None
    block = index.siblings(stmt)
    if block is None or len(block) < 2:
        return None
    src = expr.src
    start, end = src.start(stmt), src.end(stmt)
    first, after = src.line_starts[stmt.lineno - 1], src.line_after(stmt.end_lineno)
    if src.text[first:start].strip() or src.text[end:after].strip() or src.comments_between(start, end):
        return None  # an `elif`, a statement sharing its line, or a comment: left to the author
    return [TextEdit(first, after, "")]


def _else_row(src, after_row: int, before_row: int) -> Optional[int]:
    """The row of the `else:` between the two branches."""
    for row in range(after_row + 1, before_row + 1):
        if src.line(row).strip().startswith("else"):
            return row
    if src.line(after_row).rstrip().endswith("else:"):
        return after_row
    return None


def _is_none(node: ast.AST) -> bool:
    return isinstance(node, ast.Constant) and node.value is None


def _identity_helpers(index: ModuleIndex, expr: Expressions, created) -> List[TextEdit]:
    """`def var(a): return Variable(a)` became `def var(a): return a`: its calls `var(t)`
    become `t` and the function goes, when every use is such a call in this file and no
    other file is likely to import it (a notebook, a script with a `__main__` guard, or a
    private name); a module's public function stays, since an importer would lose it."""
    tree = index.tree
    importable = not (CELL_SEPARATOR in expr.src.text or _has_main_guard(tree))
    for fn in index.module_statements:
        param = _identity_of(fn)
        if param is None or not created(fn.body[-1]) or (importable and not fn.name.startswith("_")):
            continue
        calls = []
        for node in index.names.get(fn.name, ()):
            call = index.parents.get(node)
            if not (isinstance(node.ctx, ast.Load) and isinstance(call, ast.Call) and call.func is node
                    and len(call.args) == 1 and not call.keywords and not isinstance(call.args[0], ast.Starred)):
                calls = None
                break
            calls.append(call)
        if not calls or sum(isinstance(s, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef, ast.Assign))
                            and fn.name in _bound_names(s) for s in index.module_statements) != 1:
            continue
        edits = _delete_definition(expr.src, fn)
        for call in calls:
            edits.extend(expr.replace(call, expr.text_in_place_of(call, call.args[0])))
        return edits
    return []


def _identity_of(fn: ast.stmt) -> Optional[str]:
    """The parameter `fn` returns unchanged (`def var(a): return a`), else None."""
    if not isinstance(fn, ast.FunctionDef) or fn.decorator_list:
        return None
    args = fn.args
    if args.posonlyargs or args.vararg or args.kwarg or args.kwonlyargs or args.defaults or len(args.args) != 1:
        return None
    body = fn.body
    if len(body) == 2 and isinstance(body[0], ast.Expr) and isinstance(body[0].value, ast.Constant) \
            and isinstance(body[0].value.value, str):
        body = body[1:]
    ret = body[0] if len(body) == 1 else None
    if isinstance(ret, ast.Return) and isinstance(ret.value, ast.Name) and ret.value.id == args.args[0].arg:
        return ret.value.id
    return None


def _bound_names(stmt: ast.stmt) -> List[str]:
    if isinstance(stmt, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)):
        return [stmt.name]
    return [t.id for t in getattr(stmt, "targets", ()) if isinstance(t, ast.Name)]


def _has_main_guard(tree: ast.Module) -> bool:
    return any(isinstance(s, ast.If) and isinstance(s.test, ast.Compare) and isinstance(s.test.left, ast.Name)
               and s.test.left.id == "__name__" for s in tree.body)


def _delete_definition(src: SourceText, fn: ast.stmt) -> List[TextEdit]:
    """The definition's lines, and as many blank lines above it as follow it (no pile-up).
    Its comments stay, one line each where it stood (`return Variable(a)  # keep on the GPU`)."""
    first, last = fn.lineno, fn.end_lineno
    above, below = blank_lines_around(src, first, last)
    start = src.line_starts[first - 1 - min(above, below)]
    comments = src.comments_between(src.line_starts[first - 1], src.line_after(last))
    if comments:
        indent = src.indentation(first)
        kept = "".join(f"{indent}{c}{src.newline}" for c in comments)
        return [TextEdit(src.line_starts[first - 1], src.line_after(last), kept)]
    return [TextEdit(start, src.line_after(last), "")]


def _aliases(index: ModuleIndex, expr: Expressions, created) -> List[TextEdit]:
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
                "grad" in ast.unparse(item.context_expr) for item in region.items) or _torch_grad_with(index, region))):
            region = None  # a region holding nothing but the alias goes with it (no `with ...: pass`)
        deletion = expr.delete_statement(region or stmt, whole_if=True)
        if deletion is None:
            continue
        edits.extend(deletion)
        for original, mentions in renames:
            edits.extend(TextEdit(index.src.start(m), index.src.end(m), original) for m in mentions)
        touched.update(name for pair in pairs for name in pair)  # aliases of other names do not interact
    return edits


def _torch_grad_with(index: ModuleIndex, node: ast.With) -> bool:
    """An author's `with torch.no_grad():` or `with torch.set_grad_enabled(flag):` (torch's own,
    no `as`, arguments that compute nothing): with an empty body, it does nothing."""
    def plain(arg: ast.AST) -> bool:
        arg = arg.operand if isinstance(arg, ast.UnaryOp) and isinstance(arg.op, ast.Not) else arg
        return isinstance(arg, (ast.Name, ast.Constant))

    return all(item.optional_vars is None and isinstance(item.context_expr, ast.Call)
               and index.qual(item.context_expr.func) in _GRAD_CONTEXTS and not item.context_expr.keywords
               and all(plain(a) for a in item.context_expr.args) for item in node.items)


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
    deferred = [n for n in index.names.get(alias, ()) if id(n) not in immediate and _inside(n, scope)
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
        if any(id(n) not in read_here and isinstance(n.ctx, ast.Load) and _inside(n, scope)
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


def _inside(node: ast.AST, scope: ast.AST) -> bool:
    if isinstance(scope, ast.Module):
        return True
    if isinstance(node, ast.Module):
        return False
    return (scope.lineno, scope.col_offset) < (node.lineno, node.col_offset) and \
        (node.end_lineno, node.end_col_offset) <= (scope.end_lineno, scope.end_col_offset)  # type: ignore[attr-defined]
