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
from typing import Callable, Dict, List, Optional, Set, Union

from .edits import TextEdit, blank_lines_around, piled_blank_lines
from .gates import reads_version_only
from ..flow.booleans import truth_safe
from ..syntax.document import CELL_SEPARATOR
from ..syntax.index import ModuleIndex
from ..syntax.positions import SourceText
from .aliases import aliases, inside_scope
from .expressions import Expressions
from .emptied_branches import else_row as _else_row, empty_body, empty_else as _empty_else
from .list_copies import copy_unneeded, kept_copy
from .redundant_detach import redundant_detaches


def leftovers(original_tree: Optional[ast.Module], tree: ast.Module, text: str,
              before: Set[str], flag_only: Dict[str, Set[str]]) -> List[TextEdit]:
    """Edits collapsing the leftovers of `text` that `original_tree` did not have. `before`:
    `fingerprints(original_tree)`, and `flag_only`: `flag_locals(original_tree)`, each computed
    once per original by the caller (`engine.fixing.Original`), which previews many fixes and
    passes against it."""
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
            elif node.orelse and _only_pass(node.body) and _body_pass_key(node) not in before \
                    and all(created(s) and kept_copy(s) for s in node.orelse):
                found = empty_body(node, expr)
                if found is not None:
                    edits.extend(found)
                    taken.update(id(n) for n in node.body)
        if isinstance(node, ast.For) and created(node) and id(node) not in taken \
                and _only_pass(node.body) and not node.orelse:
            found = _empty_loop(node, index, expr)
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
            if iterable is not None and not index.binds_anywhere("list"):
                text = expr.src.segment(iterable)  # the copy stays where the list may be changed or kept
                edits.extend(expr.replace(node, text if isinstance(iterable, (ast.Name, ast.Attribute))
                                          and copy_unneeded(node, index) else f"list({text})"))
        elif isinstance(node, ast.IfExp) and created(node):
            same = _none_guard(node) or _same_either_way(node)
            if same is not None:
                edits.extend(expr.replace(node, expr.text_in_place_of(node, same)))
    if not edits:
        edits = redundant_detaches(index, expr, created, deleted)
    if not edits:
        edits = _dead_flag_locals(flag_only, index, expr, deleted)
    if not edits:
        edits = aliases(index, expr, created) or _identity_helpers(index, expr, created)
    return edits + piled_blank_lines(expr.src.text, edits)


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
            if any(isinstance(s, ast.Pass) for s in n.body):
                out.add(_body_pass_key(n))
    return out


_NAME_ID = re.compile(r"Name\(id='[^']*'")


def _if_key(node: ast.If) -> str:
    """An `if` statement's shape, whatever names it reads: renaming an alias away (`if x:`
    becomes `if y:`) does not make the author's `if` one that the fix created."""
    return "if:" + _NAME_ID.sub("Name(id=''", ast.dump(node))


def _else_pass_key(node: ast.If) -> str:
    return "else-pass:" + _NAME_ID.sub("Name(id=''", ast.dump(node.test))


def _body_pass_key(node: ast.If) -> str:
    return "body-pass:" + _NAME_ID.sub("Name(id=''", ast.dump(node.test))


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
    """`self.grid`; also an item by a name or a constant, `inputs[j]` (what `inputs[j] =
    Variable(inputs[j])` leaves: 0.3 stored a Variable there, so `inputs` was a list or a
    dict, whose item put back is no change)."""
    if isinstance(node, ast.Name):
        return node.id
    if isinstance(node, ast.Attribute):
        base = _dotted(node.value)
        return f"{base}.{node.attr}" if base is not None else None
    if isinstance(node, ast.Subscript) and isinstance(node.slice, (ast.Name, ast.Constant)):
        base = _dotted(node.value)
        return f"{base}[{ast.dump(node.slice)}]" if base is not None else None
    return None


def _self_assignment(stmt: ast.Assign, expr: Expressions, deleted: Set[int]) -> Optional[List[TextEdit]]:
    """`x = x`, `self.grid = self.grid`, `inputs[j] = inputs[j]`, `a, b = a, b` (deleted, and
    added to `deleted`);
    `a, b = a, f(b)` -> `b = f(b)` (`self.z, self.y = self.z, self.y.cuda()` -> `self.y =
    self.y.cuda()`)."""
    if len(stmt.targets) != 1:
        return None
    target, value = stmt.targets[0], stmt.value
    left, right = _names(target), _names(value)
    # `x = x,` binds a 1-tuple (hardnet's `data_a = Variable(data_a, volatile=True),`): no no-op.
    unpacked = isinstance(target, (ast.Tuple, ast.List))
    if left is not None and left == right and unpacked == isinstance(value, (ast.Tuple, ast.List)):
        found = expr.delete_statement(stmt, gone=deleted)
        parent = expr.index.parents.get(stmt)
        if found is None and isinstance(parent, ast.If) and parent.body == [stmt] and not parent.orelse \
                and parent.lineno == stmt.lineno and truth_safe(expr.index, parent.test):
            # `if return_variable: z = z` on one line (HouseNavAgent's `get_zero_state`): the `if` goes
            found = _delete_lines(parent, expr.index, expr)
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


def flag_locals(tree: ast.Module) -> Dict[str, Set[str]]:
    """For each function path defined once in `tree`: the names its body reads only inside
    `volatile=` arguments (`_dead_flag_locals` deletes their assignments once the fixes leave
    them unread)."""
    found = {path: _flag_only_names(fns[0]) for path, fns in _defs_by_path(tree).items() if len(fns) == 1}
    return {path: names for path, names in found.items() if names}


def _dead_flag_locals(flag_only: Dict[str, Set[str]], index: ModuleIndex, expr: Expressions,
                      deleted: Set[int]) -> List[TextEdit]:
    """`volatile = not train` (or `= True`, `= not torch.is_grad_enabled()`), whose every read in
    the original was a `volatile=` argument the fixes removed or spelled out in a region's
    header (`flag_only`, by function path): the assignment is deleted. Only in functions (a
    module's names may be imported), only a value that does nothing but read (`_pure`), and only
    where nothing in the fixed function reads the name any more."""
    if not flag_only:
        return []
    edits: List[TextEdit] = []
    for path, fns in _defs_by_path(index.tree).items():
        names = flag_only.get(path)
        if len(fns) != 1 or not names:
            continue
        fn = fns[0]
        for name in sorted(names):
            stores = [n for n in ast.walk(fn) if isinstance(n, ast.Name) and n.id == name]
            if any(not isinstance(n.ctx, ast.Store) for n in stores) or not stores:
                continue
            stmts = [index.parents.get(n) for n in stores]
            if not all(isinstance(st, ast.Assign) and len(st.targets) == 1 and st.targets[0] is n
                       and index.function_of(st) is fn and _pure_value(st.value, index)
                       for st, n in zip(stmts, stores)):
                continue
            found = []
            for st in stmts:
                gone = expr.delete_statement(st, gone=deleted)
                if gone is None:
                    break
                deleted.add(id(st))
                found.extend(gone)
            else:
                edits.extend(found)
    return edits


def _defs_by_path(tree: ast.Module) -> dict:
    """Functions by their dotted path of enclosing class and function names."""
    out: dict = {}
    todo = [(tree, "")]
    while todo:
        node, prefix = todo.pop()
        for child in ast.iter_child_nodes(node):
            if isinstance(child, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)):
                path = f"{prefix}.{child.name}"
                if not isinstance(child, ast.ClassDef):
                    out.setdefault(path, []).append(child)
                todo.append((child, path))
            else:
                todo.append((child, prefix))
    return out


def _flag_only_names(fn: ast.AST) -> Set[str]:
    """The names a function binds by assignment and reads only inside `volatile=` arguments (none
    when it reads `locals()` or declares names `global`)."""
    reads: dict = {}
    flag_reads: Set[int] = set()
    for node in ast.walk(fn):
        if isinstance(node, (ast.Global, ast.Nonlocal)) or isinstance(node, ast.Name) and node.id in (
                "locals", "vars", "eval", "exec"):
            return set()
        if isinstance(node, ast.keyword) and node.arg == "volatile":
            flag_reads.update(id(n) for n in ast.walk(node.value) if isinstance(n, ast.Name))
        elif isinstance(node, ast.Name) and not isinstance(node.ctx, ast.Store):
            reads.setdefault(node.id, []).append(node)
    params = {a.arg for a in ast.walk(fn.args) if isinstance(a, ast.arg)} if hasattr(fn, "args") else set()
    return {name for name, nodes in reads.items()
            if name not in params and all(id(n) in flag_reads for n in nodes)}


def _pure_value(value: ast.AST, index: ModuleIndex) -> bool:
    """`_pure`, and also `torch.is_grad_enabled()`."""
    return _pure(value, lambda call: index.qual(call.func) == "torch.is_grad_enabled" and not call.args)


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


def _pure(test: ast.AST, allowed: Callable[[ast.Call], bool] = lambda call: False) -> bool:
    """A test whose evaluation does nothing but read: names, attributes, constants, compares,
    boolean operators and `hasattr`/`isinstance`/`callable`, or calls `allowed` accepts (dropping
    it changes nothing)."""
    for node in ast.walk(test):
        if isinstance(node, ast.Call):
            if not (isinstance(node.func, ast.Name) and node.func.id in ("hasattr", "isinstance", "callable")
                    or allowed(node)):
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


def _empty_if(stmt: ast.If, index: ModuleIndex, expr: Expressions) -> Optional[List[TextEdit]]:
    """`if flag: pass` left where the fix emptied the only branch (`if flag: x = Variable(x)`,
    or both branches of `if sep: t = Variable(t)` / `else: t = [Variable(u) for u in t]`): the
    `if` goes when testing its test can neither raise nor run code (`truth_safe`: a flag
    parameter defaulting to `False`, `x is None`; not `if x:` on a tensor, which raises for
    several elements), it is not an `elif`, it holds no comment, and its block keeps another
    statement."""
    if not truth_safe(index, stmt.test):
        return None
    return _delete_lines(stmt, index, expr)


def _delete_lines(stmt: ast.stmt, index: ModuleIndex, expr: Expressions) -> Optional[List[TextEdit]]:
    """The lines of an emptied compound statement, deleted: not when its block would be left
    empty, when it is an `elif`, shares a line with another statement, or holds a comment
    (left to the author)."""
    block = index.siblings(stmt)
    if block is None or len(block) < 2:
        return None
    src = expr.src
    start, end = src.start(stmt), src.end(stmt)
    first, after = src.line_starts[stmt.lineno - 1], src.line_after(stmt.end_lineno)
    if src.text[first:start].strip() or src.text[end:after].strip() or src.comments_between(start, end):
        return None
    return [TextEdit(first, after, "")]


def _empty_loop(stmt: ast.For, index: ModuleIndex, expr: Expressions) -> Optional[List[TextEdit]]:
    """`for j in range(len(inputs)): pass`, left where the fix emptied the loop (`inputs[j] =
    Variable(inputs[j])`): it goes when iterating runs no code (`range` of names, numbers and
    `len(...)` of names) and nothing after it reads the loop's name (the value it ends with;
    nothing else at all, in a loop), with the conditions of `_empty_if`."""
    call = stmt.iter
    if not (isinstance(stmt.target, ast.Name) and isinstance(call, ast.Call) and isinstance(call.func, ast.Name)
            and call.func.id in ("range", "xrange") and not call.keywords and not index.binds_anywhere(call.func.id)
            and all(isinstance(a, (ast.Name, ast.Constant)) or isinstance(a, ast.Call) and isinstance(a.func, ast.Name)
                    and a.func.id == "len" and len(a.args) == 1 and isinstance(a.args[0], (ast.Name, ast.Attribute))
                    for a in call.args)):
        return None
    scope = index.function_of(stmt) or index.tree
    name, looped = stmt.target.id, False
    parent = index.parents.get(stmt)
    while parent is not None and parent is not scope:
        looped = looped or isinstance(parent, (ast.For, ast.AsyncFor, ast.While))
        parent = index.parents.get(parent)
    if any(isinstance(n, ast.Name) and n.id == name and n is not stmt.target and isinstance(n.ctx, ast.Load)
           and (looped or n.lineno > stmt.end_lineno) and not _rebound_around(n, name, index, scope)
           for n in ast.walk(scope)):
        return None  # the value the loop leaves in its name is read
    block = index.siblings(stmt)
    if block is not None and len(block) == 1 \
            and not expr.src.comments_between(expr.src.start(stmt), expr.src.end(stmt)):
        # the only statement of its block (HashNet's `else: for j in range(10): pass`): a `pass`,
        # which the next pass takes with an `else:` (`_empty_else`) or an `if` (`_empty_if`)
        return [TextEdit(expr.src.start(stmt), expr.src.end(stmt), "pass")]
    return _delete_lines(stmt, index, expr)


_COMPREHENSIONS = (ast.ListComp, ast.SetComp, ast.DictComp, ast.GeneratorExp)


def _rebound_around(read: ast.Name, name: str, index: ModuleIndex, scope: ast.AST) -> bool:
    """`read` reads a binding of its own: a comprehension's variable (`[x[j] for j in ...]`), or
    the target of another loop whose body holds it (HashNet's three `for j in range(10):`)."""
    child, node = read, index.parents.get(read)
    while node is not None and node is not scope:
        if isinstance(node, _COMPREHENSIONS) and any(
                isinstance(t, ast.Name) and t.id == name for g in node.generators for t in ast.walk(g.target)):
            return True
        if isinstance(node, (ast.For, ast.AsyncFor)) and child in node.body and any(
                isinstance(t, ast.Name) and t.id == name for t in ast.walk(node.target)):
            return True
        child, node = node, index.parents.get(node)
    return False


def _is_none(node: ast.AST) -> bool:
    return isinstance(node, ast.Constant) and node.value is None


def _identity_helpers(index: ModuleIndex, expr: Expressions, created) -> List[TextEdit]:
    """`def var(a): return Variable(a)` became `def var(a): return a`: its calls `var(t)`
    become `t` and the function goes, when every use is such a call in this file and no
    other file is likely to import it (a notebook, a script with a `__main__` guard, a test
    module, a private name, or a def inside a function, whose calls are all in that function: OpenNMT's
    `def var(a): return Variable(a, volatile=True)` in `translate_batch`); a module's public
    function stays, since an importer would lose it."""
    tree = index.tree
    importable = not (CELL_SEPARATOR in expr.src.text or _has_main_guard(tree) or _test_module(tree))
    local = [f for f in index.functions if isinstance(f, ast.FunctionDef)
             and isinstance(index.parents.get(f), (ast.FunctionDef, ast.AsyncFunctionDef))]
    for fn in list(index.module_statements) + local:
        param = _identity_of(fn)
        outer = index.parents.get(fn)
        nested = not isinstance(outer, ast.Module)
        if param is None or not created(fn.body[-1]) or (importable and not nested and not fn.name.startswith("_")):
            continue
        calls = []
        for node in index.names.get(fn.name, ()):
            if nested and not inside_scope(node, outer):
                continue  # another scope's name (`def var(a)` inside a method is that method's)
            call = index.parents.get(node)
            if not (isinstance(node.ctx, ast.Load) and isinstance(call, ast.Call) and call.func is node
                    and len(call.args) == 1 and not call.keywords and not isinstance(call.args[0], ast.Starred)):
                calls = None
                break
            calls.append(call)
        if nested:  # the def binds the name once in its function, and nothing there binds it again
            binders = [n for n in ast.walk(outer) if n is not fn and (
                isinstance(n, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)) and n.name == fn.name
                or isinstance(n, ast.arg) and n.arg == fn.name
                or isinstance(n, ast.Name) and n.id == fn.name and not isinstance(n.ctx, ast.Load))]
            if binders or fn.name in {n for s in ast.walk(outer) if isinstance(s, (ast.Global, ast.Nonlocal))
                                      for n in s.names}:
                continue
        if not calls or not nested and sum(
                isinstance(s, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef, ast.Assign))
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


def _test_module(tree: ast.Module) -> bool:
    """A pytest or unittest module (it imports one of them and defines `test_*` functions or a
    `TestCase`): the runner collects it, no module imports it (pytorch-attention's
    `def Volatile(x): return Variable(x, volatile=True)` in `test/test_attention.py`)."""
    imported = {alias.name.split(".")[0] for s in tree.body if isinstance(s, (ast.Import, ast.ImportFrom))
                for alias in (s.names if isinstance(s, ast.Import) else [ast.alias(s.module or "")])}
    if not imported & {"pytest", "unittest"}:
        return False
    return any(isinstance(s, ast.FunctionDef) and s.name.startswith("test") or isinstance(s, ast.ClassDef)
               and s.name.startswith("Test") for s in tree.body)


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
