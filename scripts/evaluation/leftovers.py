#!/usr/bin/env python3
"""Find the leftovers and poor rewrites a reviewer would reject in a migration (issue 13).

    python scripts/evaluation leftovers ORIGINAL FIXED        # two versions of one file (.py or .ipynb)

    from evaluation.leftovers import scan
    for item in scan(original_text, fixed_text): print(item.row, item.kind, item.text)

Only what the fix *created* is reported: a pattern the author already wrote is not a leftover.
Expression-level kinds are counted in both versions (by their normalised source) and only the
surplus of the fixed version is reported, on the rows the fix changed; region kinds look at the
grad-mode regions whose header row is new in the fixed version.

Kinds (`KINDS`):

* identity-comprehension  `[d for d in data]`, a comprehension that copies its iterable (left by
                          unwrapping `[Variable(d, volatile=True) for d in data]`);
* self-assignment         `x = x`, `a, b = a, b`;
* partial-tuple-unwrap    `inputs, targets = inputs, Variable(targets)`: a tuple assignment that
                          rebinds some of its names to themselves;
* redundant-conditional   `x if x is not None else None` (or `None if x is None else x`);
* identical-branches      an `if`/`else` whose two branches became the same code (left by
                          unwrapping `Variable(x)` in one branch and `Variable(x, volatile=True)`
                          in the other: the test no longer decides anything);
* alias                   `style_v = style`: a new plain-name alias (left by unwrapping
                          `style_v = Variable(style)`; the code should use `style`). Not when
                          the name merges values (another branch of an `if`/`try` around it,
                          or a binding before that `if`, gives it a value read after it; or a
                          loop after it reads the name and binds it again), nor
                          when it is converted later (`a = a.cuda()`) while the original is
                          still read after the conversion or is not a local of the function:
                          any migration keeps those;
* indent-unit             a new block indented with another unit than the file's and than the
                          step the author took into the block around it (a 4-space block in a
                          2-space file, spaces in a tab file);
* nested-region           a new region inside a region that was already there (or inside another
                          new one, or in a function already decorated), e.g. inside a hand-written
                          version-gated `with torch.no_grad():`;
* region-saves-checkpoint a new region swallowing checkpoint saving (`torch.save`, `save_checkpoint`);
* region-splits-progress  a new region holding a progress bar's creation without its `close()` or
                          the other way round (tqdm, trange);
* empty-region            a new region whose statements compute nothing: tensor creation, moves,
                          dtype and shape changes, renames (the consumers record graphs anyway);
* region-trains           a new region containing `.backward(`, an optimizer `step(` or
                          `autograd.grad(`: training code cannot run without recording;
* torch-name-not-module   a new region spelled through a name that is not bound to the torch
                          module (or to torch's own `no_grad`) on every path (`import torch.cuda
                          as device` ... `device.no_grad()`), or not bound at all;
* item-indexed            `loss.item()[0]`: `.item()` is a Python number, which nothing can
                          index (left by rewriting `loss.data[0][0]`, whose first `[0]` gave a row);
* grad-mode-for-tensor    `.volatile` reads about a specific tensor rewritten into the grad-mode
                          test `torch.is_grad_enabled()`: a `.grad.volatile` read, or several
                          different tensors of one function turned into the identical test.
"""
from __future__ import annotations

import ast
import collections
import io
import os
import re
import sys
import tokenize
from dataclasses import dataclass
from typing import Dict, Iterable, List, Optional, Sequence, Set, Tuple

from .common import (UnitText, callee_name, changed_rows, computes, dotted, is_grad_ctx,  # noqa: E402
                         line_map, parents_of, parse, read_unit, region_header, requires_grad_names)

KINDS = {
    "identity-comprehension": "a comprehension that copies its iterable (`[d for d in data]`)",
    "self-assignment": "an assignment of a name to itself (`x = x`)",
    "partial-tuple-unwrap": "a tuple assignment that rebinds some names to themselves",
    "redundant-conditional": "`x if x is not None else None`",
    "identical-branches": "an `if`/`else` whose branches are the same code",
    "alias": "a new plain-name alias (`style_v = style`)",
    "indent-unit": "a new block indented with another unit than the file's",
    "nested-region": "a new grad-mode region inside another region",
    "region-saves-checkpoint": "a new region containing checkpoint saving",
    "region-splits-progress": "a new region splitting a progress bar's create/close",
    "empty-region": "a new region whose statements compute nothing",
    "region-trains": "a new region containing a training step",
    "torch-name-not-module": "a new region spelled through a name that is not the torch module on every path",
    "grad-mode-for-tensor": "`.volatile` reads about specific tensors rewritten into `torch.is_grad_enabled()`",
    "item-indexed": "`.item()` indexed (`loss.item()[0]`): a Python number cannot be",
}

TRAINING_STEP = re.compile(r"optim|opt\b|^opt|optimizer", re.I)
SAVE_NAMES = re.compile(r"save_?(checkpoint|model|network|networks|ckpt|state)$", re.I)
PROGRESS = {"tqdm", "trange", "tqdm_notebook", "ProgressBar", "Bar"}


@dataclass(frozen=True)
class Leftover:
    kind: str
    row: int  # 1-based, in the fixed text (for a notebook: of the joined code cells)
    text: str  # the offending source line, stripped and shortened
    detail: str = ""
    cell: Optional[int] = None  # notebooks: the cell (1-based over all cells), `row` then inside it


# ---------------------------------------------------------------------------------------
# expression-level kinds


def _same(a: ast.AST, b: ast.AST) -> bool:
    """Same expression, whatever the context (a `Store` target and a `Load` value)."""
    return ast.unparse(a) == ast.unparse(b)


def _same_block(a: List[ast.stmt], b: List[ast.stmt]) -> bool:
    return len(a) == len(b) and all(_same(x, y) for x, y in zip(a, b))


def _is_item_call(node: ast.AST) -> bool:
    return (isinstance(node, ast.Call) and isinstance(node.func, ast.Attribute) and node.func.attr == "item"
            and not node.args and not node.keywords)


def _is_none(node: ast.AST) -> bool:
    return isinstance(node, ast.Constant) and node.value is None


def _expression_items(tree: ast.AST) -> List[Tuple[str, ast.AST, str]]:
    """(kind, node, normalised source) of every expression-level pattern in `tree`."""
    out = []
    par: Optional[Dict[ast.AST, ast.AST]] = None
    for node in ast.walk(tree):
        if isinstance(node, (ast.ListComp, ast.SetComp, ast.GeneratorExp)) and len(node.generators) == 1:
            gen = node.generators[0]
            if not gen.ifs and not gen.is_async and isinstance(gen.target, ast.Name) \
                    and isinstance(node.elt, ast.Name) and node.elt.id == gen.target.id:
                out.append(("identity-comprehension", node, ast.unparse(node)))
        elif isinstance(node, ast.If) and node.orelse and _same_block(node.body, node.orelse):
            out.append(("identical-branches", node, f"if {ast.unparse(node.test)}: ..."))
        elif isinstance(node, ast.IfExp) and _same(node.body, node.orelse):
            out.append(("identical-branches", node, ast.unparse(node)))
        elif isinstance(node, ast.IfExp) and isinstance(node.test, ast.Compare) and len(node.test.ops) == 1:
            op, left, right = node.test.ops[0], node.test.left, node.test.comparators[0]
            if _is_none(right) and ((isinstance(op, ast.IsNot) and _same(node.body, left) and _is_none(node.orelse))
                                    or (isinstance(op, ast.Is) and _is_none(node.body) and _same(node.orelse, left))):
                out.append(("redundant-conditional", node, ast.unparse(node)))
        elif isinstance(node, ast.Subscript) and _is_item_call(node.value):
            out.append(("item-indexed", node, ast.unparse(node)))
        elif isinstance(node, ast.Assign) and len(node.targets) == 1:
            target, value = node.targets[0], node.value
            if _same(target, value) or (isinstance(target, ast.Tuple) and isinstance(value, ast.Tuple)
                                        and len(target.elts) == len(value.elts)
                                        and all(_same(a, b) for a, b in zip(target.elts, value.elts))):
                out.append(("self-assignment", node, ast.unparse(node)))
            elif isinstance(target, ast.Tuple) and isinstance(value, ast.Tuple) and len(target.elts) == len(value.elts) \
                    and any(_same(a, b) for a, b in zip(target.elts, value.elts)):
                out.append(("partial-tuple-unwrap", node, ast.unparse(node)))
            elif isinstance(target, ast.Name) and isinstance(value, ast.Name) and target.id != value.id:
                if par is None:
                    par = parents_of(tree)
                if not _alias_carries_more(node, par):
                    out.append(("alias", node, ast.unparse(node)))
    return out


_SCOPES = (ast.FunctionDef, ast.AsyncFunctionDef, ast.Lambda, ast.ClassDef, ast.Module)


def _alias_carries_more(node: ast.Assign, par: Dict[ast.AST, ast.AST]) -> bool:
    """Is `a = b` code that any migration keeps, not a leftover? Either `a` merges values:
    another branch of an `if`/`try` around it binds `a` too, or `a` was bound before that
    `if` and is read after it (`gtruth = target.view(-1)` ... `if smooth: gtruth = tmp_`);
    or `a` is converted afterwards (`a = a.cuda()`) while `b` is still read after the
    conversion or is not a local of the function (renaming would rebind it)."""
    a, b = node.targets[0].id, node.value.id  # type: ignore[attr-defined]
    scope = par.get(node)
    chain = [node]
    while scope is not None and not isinstance(scope, _SCOPES):
        chain.append(scope)
        scope = par.get(scope)
    names = [n for n in _scope_walk(scope) if isinstance(n, ast.Name) and n.id in (a, b)]
    stores_a = [n for n in names if n.id == a and not isinstance(n.ctx, ast.Load) and n is not node.targets[0]]
    for child, owner in zip(chain, chain[1:]):
        if isinstance(owner, (ast.If, ast.Try)):
            branches = [owner.body, owner.orelse] + [h.body for h in getattr(owner, "handlers", [])]
            others = [s for branch in branches if child not in branch for s in branch]
            if any(_within(n, s) for n in stores_a for s in others):
                return True
            before = any(n.lineno < owner.lineno for n in stores_a)
            read_after = any(n.id == a and isinstance(n.ctx, ast.Load) and n.lineno > owner.end_lineno for n in names)
            if before and read_after:
                return True
    if _loop_carried(node, a, stores_a, names, par) or _kept_past_its_loop(node, a, b, names, par):
        return True
    conversions = [n for n in stores_a if n.lineno > node.lineno and isinstance(par.get(n), ast.Assign)
                   and any(isinstance(m, ast.Name) and m.id == a for m in ast.walk(par[n].value))]
    if conversions:
        first = min(n.lineno for n in conversions)
        params = set()
        if isinstance(scope, (ast.FunctionDef, ast.AsyncFunctionDef, ast.Lambda)):
            args = scope.args
            params = {x.arg for x in args.posonlyargs + args.args + args.kwonlyargs + [args.vararg, args.kwarg] if x}
        local = b in params or any(n.id == b and not isinstance(n.ctx, ast.Load) for n in names)
        if not isinstance(scope, ast.Module) and not local:
            return True
        if any(n.id == b and isinstance(n.ctx, ast.Load) and n.lineno > first for n in names):
            return True
    return False


def _loop_carried(node: ast.Assign, a: str, stores_a, names, par) -> bool:
    """`forward_var = init_alphas` before a loop that reads `forward_var` and binds it again
    (`forward_var = torch.cat(alphas_t)`): the alias is the initial value of a variable the
    loop carries, which no migration renames away. So is `state = next_state` at the end of
    a loop body whose earlier statements read `state` (the next pass reads the alias)."""
    def reads_in(loop: ast.AST, before: float) -> bool:
        return any(n.id == a and isinstance(n.ctx, ast.Load) and _within(n, loop) and n.lineno < before
                   for n in names)

    loop = _enclosing_loop(node, par)
    if loop is not None and reads_in(loop, node.lineno):
        return True
    for store in stores_a:
        loop = _enclosing_loop(store, par) if store.lineno > node.lineno else None
        if loop is not None and loop.lineno > node.lineno and reads_in(loop, float("inf")):
            return True
    return False


def _kept_past_its_loop(node: ast.Assign, a: str, b: str, names, par) -> bool:
    """`tgt_img_var = img` in a loop over `img`, `tgt_img_var` read after the loop: the alias
    keeps one pass's value while the loop moves `b` on, which no migration renames away."""
    loop = _enclosing_loop(node, par)
    if loop is None:
        return False
    moves = any(n.id == b and not isinstance(n.ctx, ast.Load) and _within(n, loop) for n in names)
    return moves and any(n.id == a and isinstance(n.ctx, ast.Load) and n.lineno > loop.end_lineno for n in names)


def _enclosing_loop(node: ast.AST, par: Dict[ast.AST, ast.AST]) -> Optional[ast.AST]:
    """The innermost `for`/`while` around `node` within its function (None outside a loop)."""
    loop = par.get(node)
    while loop is not None and not isinstance(loop, (ast.For, ast.While) + _SCOPES):
        loop = par.get(loop)
    return loop if isinstance(loop, (ast.For, ast.While)) else None


def _scope_walk(scope: ast.AST):
    """The nodes of `scope` outside the functions and classes nested in it."""
    stack = list(ast.iter_child_nodes(scope))
    while stack:
        n = stack.pop()
        yield n
        if not isinstance(n, _SCOPES):
            stack.extend(ast.iter_child_nodes(n))


def _within(node: ast.AST, stmt: ast.AST) -> bool:
    return (stmt.lineno, stmt.col_offset) <= (node.lineno, node.col_offset) and \
        (node.end_lineno, node.end_col_offset) <= (stmt.end_lineno, stmt.end_col_offset)


def _new_expression_items(old_tree, new_tree, changed: Set[int]) -> List[Tuple[str, int, str]]:
    """The items of `new_tree` beyond those `old_tree` already had, on rows the fix changed."""
    def touched(node: ast.AST) -> bool:
        return any(r in changed for r in range(node.lineno, (node.end_lineno or node.lineno) + 1))

    before = collections.Counter((k, s) for k, _n, s in _expression_items(old_tree)) if old_tree else collections.Counter()
    after = sorted(_expression_items(new_tree), key=lambda it: (not touched(it[1]), it[1].lineno))
    out = []
    for kind, node, src in after:
        if before[(kind, src)] > 0:
            before[(kind, src)] -= 1
            continue
        if touched(node):
            out.append((kind, node.lineno, src))
    return out


# ---------------------------------------------------------------------------------------
# regions


def _regions(tree: ast.AST) -> List[ast.AST]:
    return [n for n in ast.walk(tree) if region_header(n, human=True)]


def _is_grad_expr(expr: ast.AST) -> bool:
    return is_grad_ctx(expr, human=True)


def _head_row(region: ast.AST) -> int:
    """Row of a region's header: the `with`, or the grad-mode decorator of a function."""
    if isinstance(region, (ast.FunctionDef, ast.AsyncFunctionDef)):
        rows = [d.lineno for d in region.decorator_list if _is_grad_expr(d)]
        return rows[0] if rows else region.lineno
    return region.lineno


def _body_nodes(region: ast.AST) -> Iterable[ast.AST]:
    """Every node the region's statements hold, without descending into nested defs/classes."""
    stack = list(region.body)
    while stack:
        node = stack.pop()
        yield node
        for child in ast.iter_child_nodes(node):
            if isinstance(child, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef, ast.Lambda)):
                continue
            stack.append(child)


def _trains(call: ast.Call) -> bool:
    f = call.func
    if isinstance(f, ast.Attribute) and f.attr == "backward":
        return True
    if isinstance(f, ast.Attribute) and f.attr == "step":
        recv = dotted(f.value) or ""
        return bool(TRAINING_STEP.search(recv.split(".")[-1]))
    return (dotted(f) or "").endswith("autograd.grad")


def _saves(call: ast.Call, torch_names: Set[str]) -> bool:
    name = dotted(call.func) or ""
    parts = name.split(".")
    if len(parts) == 2 and parts[1] == "save" and parts[0] in torch_names:
        return True
    return bool(SAVE_NAMES.search(parts[-1])) if parts[-1] else False


def _computes(region: ast.AST, grad_names: frozenset) -> bool:
    """Does anything in the region run an operation autograd could record?"""
    return computes((n for n in _body_nodes(region) if isinstance(n, ast.stmt)), grad_names)


def _indent_unit(text: str) -> Optional[str]:
    """The most common indentation step of the file: '    ', '  ', '\\t', ... (None if flat)."""
    steps: collections.Counter = collections.Counter()
    stack = [""]
    try:
        for tok in tokenize.generate_tokens(io.StringIO(text).readline):
            if tok.type == tokenize.INDENT:
                prev = stack[-1]
                if tok.string.startswith(prev):
                    steps[tok.string[len(prev):]] += 1
                stack.append(tok.string)
            elif tok.type == tokenize.DEDENT and len(stack) > 1:
                stack.pop()
    except (tokenize.TokenError, IndentationError, SyntaxError):
        return None
    return steps.most_common(1)[0][0] if steps else None


def _leading(line: str) -> str:
    return line[:len(line) - len(line.lstrip(" \t"))]


def _scope_nodes(scope: ast.AST) -> Iterable[ast.AST]:
    """The nodes of one scope: its own statements, not the bodies of nested functions or classes
    (their names and, for a function scope, its arguments are bindings of the scope)."""
    stack = list(ast.iter_child_nodes(scope))
    while stack:
        node = stack.pop()
        yield node
        if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef, ast.Lambda)):
            continue
        stack.extend(ast.iter_child_nodes(node))


def _torch_bindings(scopes: Sequence[ast.AST]) -> Dict[str, List[str]]:
    """name -> what each binding of it in `scopes` (the module and the functions around a region)
    is: 'torch' (the module), 'torch.<fn>' (a function imported from torch), or 'other'."""
    out: Dict[str, List[str]] = collections.defaultdict(list)
    for scope in scopes:
        if isinstance(scope, (ast.FunctionDef, ast.AsyncFunctionDef)):
            for a in scope.args.posonlyargs + scope.args.args + scope.args.kwonlyargs:
                out[a.arg].append("other")
            for a in (scope.args.vararg, scope.args.kwarg):
                if a is not None:
                    out[a.arg].append("other")
        for node in _scope_nodes(scope):
            _bind(node, out)
    return out


def _bind(node: ast.AST, out: Dict[str, List[str]]) -> None:
    if isinstance(node, ast.Import):
        for a in node.names:
            if a.asname:
                out[a.asname].append("torch" if a.name == "torch" else "other")
            else:
                top = a.name.split(".")[0]
                out[top].append("torch" if top == "torch" else "other")
    elif isinstance(node, ast.ImportFrom):
        for a in node.names:
            local = a.asname or a.name
            mod = node.module or ""
            if node.level == 0 and (mod == "torch" or mod.startswith("torch.")) and a.name in GRAD_NAMES:
                out[local].append("torch." + a.name)
            elif a.name == "*":
                out["*"].append("star")  # names may come from here: see _region_spelling_ok
            else:
                out[local].append("other")
    elif isinstance(node, ast.Name) and isinstance(node.ctx, ast.Store):
        out[node.id].append("other")
    elif isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)):
        out[node.name].append("other")


GRAD_NAMES = ("no_grad", "set_grad_enabled", "inference_mode")


def _region_spelling_ok(expr: ast.AST, bindings: Dict[str, List[str]]) -> Tuple[bool, str]:
    """Is the region's manager reached through torch itself? A name bound by nothing but a star
    import (`from utils import *` providing `torch`) cannot be judged and passes."""
    if isinstance(expr, ast.IfExp):
        for part in (expr.body, expr.orelse):
            if _is_grad_expr(part):
                return _region_spelling_ok(part, bindings)
        return True, ""
    if not any(n in GRAD_NAMES for n in _called_names(expr)):
        return True, ""  # a project's own shim (`torch_no_grad()`): not torch's spelling to judge
    if "*" in bindings:
        bindings = {k: v for k, v in bindings.items()}
        for name in _names_called(expr):
            bindings.setdefault(name, ["torch"] if isinstance(getattr(expr, "func", expr), ast.Attribute)
                                else ["torch.no_grad"])
    func = expr.func if isinstance(expr, ast.Call) else expr
    if isinstance(func, ast.Attribute) and isinstance(func.value, ast.Name):
        root = func.value.id
        kinds = bindings.get(root, [])
        if not kinds:
            return False, f"`{root}` is not bound in the file"
        if any(k != "torch" for k in kinds):
            return False, f"`{root}` is not the torch module on every path"
        return True, ""
    if isinstance(func, ast.Name):
        kinds = bindings.get(func.id, [])
        if not kinds:
            return False, f"`{func.id}` is not bound in the file"
        if any(not k.startswith("torch.") for k in kinds):
            return False, f"`{func.id}` is not torch's own on every path"
    return True, ""


def _called_names(expr: ast.AST) -> List[str]:
    func = expr.func if isinstance(expr, ast.Call) else expr
    return [func.attr] if isinstance(func, ast.Attribute) else [func.id] if isinstance(func, ast.Name) else []


def _names_called(expr: ast.AST) -> List[str]:
    func = expr.func if isinstance(expr, ast.Call) else expr
    if isinstance(func, ast.Attribute) and isinstance(func.value, ast.Name):
        return [func.value.id]
    return [func.id] if isinstance(func, ast.Name) else []


def _progress_statements(fn_body: Sequence[ast.stmt]) -> Dict[str, Dict[str, List[ast.stmt]]]:
    """bar name -> {'create': [stmts], 'close': [stmts]} within one function body."""
    bars: Dict[str, Dict[str, List[ast.stmt]]] = {}
    stack = list(fn_body)
    while stack:
        st = stack.pop()
        if isinstance(st, ast.Assign) and isinstance(st.value, ast.Call) and callee_name(st.value) in PROGRESS:
            for t in st.targets:
                if isinstance(t, ast.Name):
                    bars.setdefault(t.id, {"create": [], "close": []})["create"].append(st)
        if isinstance(st, ast.Expr) and isinstance(st.value, ast.Call) and isinstance(st.value.func, ast.Attribute) \
                and st.value.func.attr == "close" and isinstance(st.value.func.value, ast.Name):
            bars.setdefault(st.value.func.value.id, {"create": [], "close": []})["close"].append(st)
        for child in ast.iter_child_nodes(st):
            if isinstance(child, ast.stmt) and not isinstance(child, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)):
                stack.append(child)
    return {k: v for k, v in bars.items() if v["create"]}


def _inside(st: ast.AST, region: ast.AST) -> bool:
    first = region.body[0].lineno
    last = max(s.end_lineno or s.lineno for s in region.body)
    return first <= st.lineno <= last


def _region_items(old_text: str, new_text: str, old_tree, new_tree, changed: Set[int]) -> List[Tuple[str, int, str]]:
    out = []
    par = parents_of(new_tree)
    module_bindings = _torch_bindings([new_tree])
    torch_names = {name for name, kinds in module_bindings.items() if kinds and all(k == "torch" for k in kinds)}
    unit = _indent_unit(old_text)
    grad_names = requires_grad_names(new_tree)
    new_lines = new_text.splitlines()
    volatile_rewrites = _grad_mode_rewrites(old_text, new_text, old_tree, new_tree, changed)
    out.extend(volatile_rewrites)
    for region in _regions(new_tree):
        head = _head_row(region)
        if head not in changed:
            continue
        scopes, q = [new_tree], par.get(region)  # the module and the functions around the region
        while q is not None:
            if isinstance(q, (ast.FunctionDef, ast.AsyncFunctionDef)):
                scopes.append(q)
            q = par.get(q)
        bindings = _torch_bindings(scopes)
        # ancestors that are regions (old or new): a nested region
        p = par.get(region)
        while p is not None:
            if region_header(p, human=True):
                out.append(("nested-region", head, f"inside the region at row {_head_row(p)}"))
                break
            p = par.get(p)
        if isinstance(region, (ast.With, ast.AsyncWith)):
            for item in region.items:
                if _is_grad_expr(item.context_expr):
                    ok, why = _region_spelling_ok(item.context_expr, bindings)
                    if not ok:
                        out.append(("torch-name-not-module", head, why))
            if unit is not None and region.body:
                body_prefix = _leading(new_lines[region.body[0].lineno - 1])
                head_prefix = _leading(new_lines[region.lineno - 1])
                owner = par.get(region)  # the step the author took into the region's block
                local = None
                if owner is not None and not isinstance(owner, ast.Module) and getattr(owner, "lineno", 0) < region.lineno:
                    owner_prefix = _leading(new_lines[owner.lineno - 1])
                    if head_prefix.startswith(owner_prefix) and head_prefix != owner_prefix:
                        local = head_prefix[len(owner_prefix):]
                if body_prefix != head_prefix + unit and body_prefix != head_prefix + (local or unit):
                    out.append(("indent-unit", region.body[0].lineno,
                                f"body indented by {body_prefix[len(head_prefix):]!r}, the file uses {unit!r}"))
        else:
            for d in region.decorator_list:
                if _is_grad_expr(d):
                    ok, why = _region_spelling_ok(d, bindings)
                    if not ok:
                        out.append(("torch-name-not-module", head, why))
        calls = [n for n in _body_nodes(region) if isinstance(n, ast.Call)]
        trains = [c for c in calls if _trains(c)]
        if trains:
            out.append(("region-trains", head, f"contains `{ast.unparse(trains[0].func)}(` at row {trains[0].lineno}"))
        saves = [c for c in calls if _saves(c, torch_names)]
        if saves:
            out.append(("region-saves-checkpoint", head, f"contains `{ast.unparse(saves[0].func)}(` at row {saves[0].lineno}"))
        if not _computes(region, grad_names):
            out.append(("empty-region", head, "its statements only create, move or rename tensors"))
        fn = region if isinstance(region, (ast.FunctionDef, ast.AsyncFunctionDef)) else None
        if fn is None:
            q = par.get(region)
            while q is not None and not isinstance(q, (ast.FunctionDef, ast.AsyncFunctionDef, ast.Module)):
                q = par.get(q)
            fn = q
        if fn is not None and isinstance(region, (ast.With, ast.AsyncWith)):
            for bar, uses in _progress_statements(fn.body).items():
                created = any(_inside(s, region) for s in uses["create"])
                closed = any(_inside(s, region) for s in uses["close"])
                if uses["close"] and created != closed:
                    out.append(("region-splits-progress", head, f"`{bar}` is {'created' if created else 'closed'} "
                                                             f"inside the region and {'closed' if created else 'created'} outside"))
    return out


def _volatile_receivers(tree: ast.AST) -> Dict[int, List[Tuple[str, Optional[ast.AST]]]]:
    """row -> [(receiver source, enclosing function)] of every `.volatile` read."""
    par = parents_of(tree)
    out: Dict[int, List[Tuple[str, Optional[ast.AST]]]] = collections.defaultdict(list)
    for node in ast.walk(tree):
        if isinstance(node, ast.Attribute) and node.attr == "volatile" and isinstance(node.ctx, ast.Load):
            fn = par.get(node)
            while fn is not None and not isinstance(fn, (ast.FunctionDef, ast.AsyncFunctionDef)):
                fn = par.get(fn)
            out[node.lineno].append((ast.unparse(node.value), fn))
    return out


def _grad_mode_rewrites(old_text, new_text, old_tree, new_tree, changed) -> List[Tuple[str, int, str]]:
    if old_tree is None:
        return []
    receivers = _volatile_receivers(old_tree)
    if not receivers:
        return []
    back = {}  # new row -> old row
    for o, n in line_map(old_text, new_text).items():
        back.setdefault(n, o)
    rewritten = []  # (new row, receiver, function)
    for node in ast.walk(new_tree):
        if isinstance(node, ast.Call) and callee_name(node) == "is_grad_enabled" and node.lineno in changed:
            old_row = back.get(node.lineno)
            for recv, fn in receivers.get(old_row, []):
                rewritten.append((node.lineno, recv, fn))
    by_fn = collections.defaultdict(set)
    for _row, recv, fn in rewritten:
        by_fn[id(fn)].add(recv)
    out = []
    for row, recv, fn in rewritten:
        if recv.endswith(".grad") or recv == "grad":
            out.append(("grad-mode-for-tensor", row, f"`{recv}.volatile` asked about a gradient tensor"))
        elif fn is not None and len(by_fn[id(fn)]) > 1:
            out.append(("grad-mode-for-tensor", row, f"`{recv}.volatile` and {len(by_fn[id(fn)]) - 1} other tensor(s) "
                                                      "of the function became the same grad-mode test"))
    return out


# ---------------------------------------------------------------------------------------
# entry points


def scan(original: str, fixed: str) -> List[Leftover]:
    """Leftovers the fix created in `fixed` (Python text) compared with `original`."""
    new_tree = parse(fixed)
    if new_tree is None or original == fixed:
        return []
    old_tree = parse(original)
    changed = changed_rows(original, fixed)
    lines = fixed.splitlines()
    items = _new_expression_items(old_tree, new_tree, changed) + _region_items(original, fixed, old_tree, new_tree, changed)
    out = []
    seen = set()
    for kind, row, detail in sorted(items, key=lambda it: (it[1], it[0])):
        if (kind, row) in seen:
            continue
        seen.add((kind, row))
        text = lines[row - 1].strip()[:120] if 0 < row <= len(lines) else ""
        out.append(Leftover(kind, row, text, "" if detail == text else detail))
    return out


def scan_units(original: UnitText, fixed: UnitText) -> List[Leftover]:
    """As `scan`, for two versions of a file read with `eval_common.read_unit` (notebooks: rows
    are mapped back into their cells)."""
    found = scan(original.text, fixed.text)
    if fixed.cells is None:
        return found
    out = []
    for item in found:
        cell, row = fixed.where(item.row)
        out.append(Leftover(item.kind, row, item.text, item.detail, cell))
    return out


def main(argv: Optional[List[str]] = None) -> int:
    import argparse

    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("original")
    ap.add_argument("fixed")
    args = ap.parse_args(argv)
    old, new = read_unit(args.original), read_unit(args.fixed)
    if old is None or new is None:
        print("cannot read one of the files", file=sys.stderr)
        return 2
    items = scan_units(old, new)
    for it in items:
        where = f"cell {it.cell}:{it.row}" if it.cell else str(it.row)
        print(f"{args.fixed}:{where}: {it.kind}: {it.text}" + (f"  ({it.detail})" if it.detail else ""))
    return 1 if items else 0


if __name__ == "__main__":
    sys.exit(main())
