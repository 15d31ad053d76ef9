"""VF112: `type(x) == Variable`, `isinstance(x, Variable)` and `Variable` as an annotation."""
import ast
import copy
import dataclasses
import re
from typing import List, Optional, Tuple

from ..files import prefilter
from ..model import Applicability
from ..fixes.edits import TextEdit
from ..flow.bindings import NameBindings
from ..flow.values import writes_in_place
from ..syntax import names as nm
from ..syntax.index import FUNCTIONS
from .base import MODULE, Rule, on


class VariableTypeComparison(Rule):
    """
    ## What it does
    Finds `type(x) == Variable`, `type(x) is Variable` (and the negations) and
    `isinstance(x, Variable)`.

    Also finds `Variable` used as a type annotation (`states: Variable = ...`, `def
    forward(self, h: Variable) -> Variable:`, `Optional[Variable]`, and as a string: `h:
    "Variable"`).

    ## Why is this bad?
    Since PyTorch 0.4 `Variable(...)` returns a plain `torch.Tensor`, so `type(x) == Variable`
    is always False: code such as `repackage_hidden` silently takes its other branch.
    `isinstance(x, Variable)` is still True for every tensor, but only through a legacy shim.

    ## Example
    ```python
    import torch
    from torch.autograd import Variable


    def repackage_hidden(h):
        if type(h) == Variable:
            return Variable(h.data)
        return tuple(repackage_hidden(v) for v in h)
    ```

    ## Use instead
    ```python
    import torch


    def repackage_hidden(h):
        if isinstance(h, torch.Tensor):
            return h.detach()
        return tuple(repackage_hidden(v) for v in h)
    ```

    ## Fix safety
    An annotation becomes `torch.Tensor`: safe (an annotation decides nothing at run time, and
    the import it kept can go).

    `isinstance(x, Variable)` -> `isinstance(x, torch.Tensor)` computes what the check computes
    today, but not what it computed in 0.3, where plain tensors failed it. So it is safe where
    no plain tensor can tell: the branch only detaches `x` (`if isinstance(x, Variable): x =
    x.data`; not `v.data[0] if isinstance(v, Variable) else v`, which indexes a plain tensor
    too), the next branch, which plain tensors took, does to them what this one does to
    `x.data` (`elif torch.is_tensor(obj): return obj.cpu().numpy()` after `return
    obj.data.cpu().numpy()`), an earlier test sends every plain tensor elsewhere (an `elif`
    after `torch.is_tensor(obj)`, an `if` after one testing for a tensor that returns), the
    value is computed from a Variable (`model_out = model(input_var)`: a Variable or a tuple
    in 0.3), the test is an `assert`, it is `and`-ed with a test plain tensors fail today
    too (`isinstance(v, Variable) and v.requires_grad`), a negated test's branch only raises (no
    plain tensor came there), or the tuple already names `torch.Tensor`. Elsewhere it is
    unsafe, with a note: `if isinstance(obj, Variable): return obj` now returns plain
    tensors too; `if not isinstance(x, Variable): x = Variable(x, requires_grad=rg)` now
    skips them. A branch that only raises (`elif isinstance(val, Variable): raise
    RuntimeError(...)` over an optimizer's state, which held plain tensors in 0.3) would stop
    every tensor after the rewrite: its fix drops the branch instead (unsafe: a program that
    ran on 0.3 never raised there, but one passing it a Variable did). A branch that calls
    the enclosing function again on `x.data` (a vendored 0.3 `nn.init` helper:
    `xavier_normal(tensor.data); return tensor`) would recurse forever, as `x.data` is a
    tensor too: the test becomes `isinstance(x, torch.Tensor) and x.requires_grad`, which a
    `.data` fails. Safe when the branch only returns that call (a tensor that needs no grad
    runs today what the call ran on its data), or makes it and returns `x` where every other
    `return` of the function hands back `x` (`return tensor.normal_(0, std)`); unsafe when the
    branch does more, the function may return something else (falling off its end: None),
    and for `type(x) == Variable`, which a `Parameter` failed in 0.3.

    `type(x) == Variable` told a 0.3 Variable from a plain tensor; no test can do that since
    0.4, when both became one type. The fix is safe only for the `repackage_hidden` idiom,
    where the branch taken for a Variable detaches it (`Variable(h.data)`, `h.detach()`,
    `h.data`), which leaves a plain tensor as it was. Anywhere else it is unsafe: plain
    tensors that took the other branch in 0.3 now take this one. A negated test guarding a
    wrapper (`if type(x) != Variable: x = Variable(to_gpu(x))`) is always true today, so every
    tensor is wrapped (moved, given `requires_grad`); after the fix tensors skip the branch:
    unsafe, and the note says so.

    While such an unsafe test stays (plain `volfix fix`), the fixes that unwrap a
    `Variable(...)` in the same function into the tested name (`x = Variable(x, ...)`) or a
    `return` are unsafe too: unwrapped, the value they make is no longer a Variable when it
    comes back to the test, and takes the other branch (a parameter made for another object,
    `latent.param(Variable(torch.ones(1), requires_grad=True))`, stays safe).
    """

    CODE = "VF112"
    MESSAGE = "`type(x) == Variable` is always False since PyTorch 0.4; use `isinstance(x, torch.Tensor)`"
    FIX = Applicability.SAFE
    NEGATED_MESSAGE = "`type(x) != Variable` is always True since PyTorch 0.4; use `not isinstance(x, torch.Tensor)`"
    FIX_TITLE = "Use `isinstance(x, torch.Tensor)`"
    NEEDS = prefilter.TORCH_VARIABLE
    NAMES = frozenset({"Variable"})
    # The fixes that unwrap a `Variable(...)` call, whose value a type test tells apart.
    UNWRAPPING = frozenset({"VF101", "VF102", "VF103", "VF110", "VF111"})

    def __init__(self) -> None:
        # (the test's scope, its line, its text, the name it tests or None)
        self.unsafe_tests: List[Tuple[ast.AST, int, str, Optional[str]]] = []

    @on(ast.Compare)
    def compare(self, node, ctx):
        if len(node.ops) != 1 or not isinstance(node.ops[0], (ast.Eq, ast.NotEq, ast.Is, ast.IsNot)):
            return
        left, right = node.left, node.comparators[0]
        for subject_call, other in ((left, right), (right, left)):
            if (isinstance(subject_call, ast.Call) and isinstance(subject_call.func, ast.Name)
                    and subject_call.func.id == "type" and len(subject_call.args) == 1
                    and not subject_call.keywords and ctx.index.is_variable(other)):
                negate = isinstance(node.ops[0], (ast.NotEq, ast.IsNot))
                subject = ctx.src.segment(subject_call.args[0])
                tensor, imports = ctx.spell("torch.Tensor", node)
                text = f"{'not ' if negate else ''}isinstance({subject}, {tensor})"
                parent = ctx.index.parents.get(node)
                if negate and isinstance(parent, (ast.BoolOp, ast.UnaryOp, ast.Compare, ast.BinOp)):
                    text = f"({text})"
                note = _unsafe_because(node, subject_call.args[0], negate, ctx)
                recursion = None if negate else _data_recursion(node, subject_call.args[0], ctx)
                if recursion is not None:  # a Parameter failed `type(x) == Variable` in 0.3: unsafe
                    text, note = f"{text} and {subject}.requires_grad", recursion[1] or _RECURSION_NOTE.format(
                        recursion[0]) + "; a `Parameter`, which failed `type(x) == Variable` in 0.3, now takes it"
                if note is not None:
                    scope = ctx.index.function_of(node) or ctx.index.tree
                    self.unsafe_tests.append((scope, node.lineno, ctx.src.segment(node),
                                              _name_of(subject_call.args[0])))
                message = self.NEGATED_MESSAGE if negate else None
                title = f"Use `{'not ' if negate else ''}isinstance(x, torch.Tensor)`"
                ctx.report(self.CODE, node, note=note, message=message, fix=ctx.edit_fix(
                    Applicability.UNSAFE if note else Applicability.SAFE, title,
                    [TextEdit(ctx.src.start(node), ctx.src.end(node), text)], imports))
                return

    @on(MODULE)
    def annotations(self, tree, ctx):
        """`Variable` read inside a type annotation (found from the names the module reads for
        it, `Variable` or an alias, so no walk of the tree)."""
        index = ctx.index
        spelled = {"Variable"} | {name for name in index.module_names.final  # `Variable as V`
                                  if any(nm.is_variable(q) for q in index.module_names.every(name))}
        nodes = [n for name in spelled for n in index.names.get(name, ()) if isinstance(n.ctx, ast.Load)]
        nodes += [a for a in index.attributes.get("Variable", ()) if isinstance(a.ctx, ast.Load)]
        for node in sorted(nodes, key=lambda n: (n.lineno, n.col_offset)):
            if _in_annotation(node, index) and index.is_variable(node):
                tensor, imports = ctx.spell("torch.Tensor", node)
                self._annotation(ctx, node, tensor, imports)
        legacy = {name for name in spelled if nm.is_variable(index.module_names.final.get(name, ""))}
        quoted = re.compile(r"""["'][^"'\n]*\b(?:""" + "|".join(sorted(legacy)) + r")\b") if legacy else None
        for node in _string_annotations(tree, index) if quoted and quoted.search(ctx.src.text) else ():
            names = _string_annotation(node, legacy, index)
            if names:  # `def step(h: "Variable")`: the name the string spells goes with the import
                tensor, imports = ctx.spell("torch.Tensor", node)
                literal = ctx.src.segment(node)
                spelled_names = r"\b(?:" + "|".join(sorted(names)) + r")\b"
                self._annotation(ctx, node, literal[0] + re.sub(spelled_names, tensor, literal[1:-1]) + literal[-1],
                                 imports)

    def _annotation(self, ctx, node: ast.AST, text: str, imports) -> None:
        """An annotation naming `Variable` (a name, or a string spelling it), written `text`."""
        edits = [TextEdit(ctx.src.start(node), ctx.src.end(node), text)]
        ctx.report(self.CODE, node, message=_ANNOTATION_MESSAGE,
                   fix=ctx.edit_fix(Applicability.SAFE, "Annotate with `torch.Tensor`", edits, imports))

    def after_planning(self, ctx) -> None:
        """A safe unwrap in the scope of a type test left for --unsafe-fixes becomes unsafe: the
        test would see a tensor where 0.3 saw a Variable (the two fixes go together): an unwrap
        on a line that binds the tested name (`x = Variable(x, ...)`) or returns (the value
        may come back to the test), or any unwrap when the test's subject is no plain name."""
        for scope, line, test, name in self.unsafe_tests:
            if isinstance(scope, ast.Module):
                start, end = 0, len(ctx.src.text)
            else:
                start, end = ctx.src.start(scope), ctx.src.end(scope)
            reaching = None if name is None else _reaching_spans(scope, name, ctx.src)
            for finding in ctx.findings:
                if finding.code in self.UNWRAPPING and finding.fix is not None \
                        and finding.fix.applicability is Applicability.SAFE and start <= finding.start < end \
                        and (reaching is None or any(a <= finding.start < b for a, b in reaching)):
                    finding.fix = dataclasses.replace(finding.fix, applicability=Applicability.UNSAFE)
                    finding.note = (f"unsafe fix: `{test}` (line {line}, an unsafe fix) tells Variables from "
                                    f"tensors; unwrapped, this value would take its other branch there")

    @on(ast.Call, callee=("isinstance", "issubclass"))
    def isinstance_check(self, call, ctx):
        if not (isinstance(call.func, ast.Name) and len(call.args) == 2):
            return
        classes = call.args[1]
        members = classes.elts if isinstance(classes, ast.Tuple) else [classes]
        hits = [m for m in members if ctx.index.is_variable(m)]
        if not hits:
            return
        src = ctx.src
        tensor, imports = ctx.spell("torch.Tensor", call)
        already = any(ctx.index.qual(m) == "torch.Tensor" for m in members)
        edits = []
        if isinstance(classes, ast.Tuple) and already:
            # Drop Variable from a tuple that already names torch.Tensor.
            keep = [src.segment(m) for m in members if m not in hits]
            text = keep[0] if len(keep) == 1 else "(" + ", ".join(keep) + ")"
            edits.append(TextEdit(src.start(classes), src.end(classes), text))
        elif len(hits) > 1:
            edits = [TextEdit(src.start(classes), src.end(classes),
                              "(" + ", ".join(dict.fromkeys(tensor if m in hits else src.segment(m)
                                                            for m in members)) + ")")]
        else:
            edits = [TextEdit(src.start(hits[0]), src.end(hits[0]), tensor)]
        message = "`isinstance(x, Variable)` is a legacy check; use `isinstance(x, torch.Tensor)`"
        recursion = None if already or call.func.id != "isinstance" else _data_recursion(call, call.args[0], ctx)
        if recursion is not None:
            note = recursion[1]
            edits.append(TextEdit(src.end(call), src.end(call), f" and {src.segment(call.args[0])}.requires_grad"))
        elif already or call.func.id != "isinstance":
            note = None  # `(Variable, torch.Tensor)` held for tensors in 0.3 too
        else:
            note = _isinstance_unsafe(call, ctx)
        if note == _GUARD:
            removal = _guard_removal(ctx.index.parents.get(call), ctx)
            ctx.report(self.CODE, call, message="`isinstance(x, Variable)` holds for every tensor since PyTorch 0.4",
                       note=(
                "unsafe fix: no test tells a Variable from a tensor since 0.4, and this guard, which only "
                "Variables reached in 0.3, now stops every tensor; the fix drops it (a program that ran on "
                "0.3 never raised there)"),
                       fix=None if removal is None else ctx.edit_fix(
                           Applicability.UNSAFE, "Drop the guard against Variables", removal, []))
            return
        if note is not None:
            scope = ctx.index.function_of(call) or ctx.index.tree
            self.unsafe_tests.append((scope, call.lineno, src.segment(call), _name_of(call.args[0])))
        ctx.report(self.CODE, call, message=message, note=note,
                   fix=ctx.edit_fix(Applicability.UNSAFE if note else Applicability.SAFE, self.FIX_TITLE,
                                    edits, imports))


def _in_annotation(node: ast.AST, index) -> bool:
    """`x: Variable`, `def f(h: Variable) -> Variable:`, `Optional[Variable]`: `node` is (inside)
    a type annotation."""
    child, parent = node, index.parents.get(node)
    while parent is not None and not isinstance(parent, ast.stmt):
        if isinstance(parent, ast.arg):
            return parent.annotation is child
        child, parent = parent, index.parents.get(parent)
    if isinstance(parent, ast.AnnAssign):
        return parent.annotation is child
    if isinstance(parent, (ast.FunctionDef, ast.AsyncFunctionDef)):
        return parent.returns is child
    return False


def _string_annotations(tree: ast.Module, index) -> List[ast.Constant]:
    """The string annotations of the module: of parameters, returns and annotated assignments."""
    found = []
    for fn in index.functions:
        args = fn.args
        for arg in args.posonlyargs + args.args + args.kwonlyargs + [a for a in (args.vararg, args.kwarg) if a]:
            found.append(arg.annotation)
        found.append(fn.returns)
    found += [n.annotation for n in ast.walk(tree) if isinstance(n, ast.AnnAssign)]
    return sorted((n for n in found if isinstance(n, ast.Constant) and isinstance(n.value, str)),
                  key=lambda n: (n.lineno, n.col_offset))


def _string_annotation(node: ast.Constant, legacy: set, index) -> set:
    """The names of `legacy` (Variable, or an alias of it) a string annotation (one of
    `_string_annotations`) spells as names:
    `h: "Variable"`, `-> 'Optional[Variable]'`. Only a plain one-line literal (no prefix, no
    escape, no nested quote of its kind) whose text parses as an expression."""
    literal = index.src.segment(node)
    if len(literal) < 2 or literal[0] not in "'\"" or literal[-1] != literal[0] or literal[1:-1] != node.value \
            or "\\" in literal or "\n" in literal:
        return set()
    try:
        parsed = ast.parse(node.value.strip(), mode="eval")
    except SyntaxError:
        return set()
    return {n.id for n in ast.walk(parsed) if isinstance(n, ast.Name) and n.id in legacy}


_ANNOTATION_MESSAGE = "`Variable` as a type annotation names a legacy alias since PyTorch 0.4; use `torch.Tensor`"


def _unsafe_because(node: ast.Compare, subject: ast.AST, negate: bool, ctx) -> Optional[str]:
    """Why `isinstance(x, torch.Tensor)` may not do what the 0.3 type test did (None: the
    `repackage_hidden` idiom, whose Variable branch only detaches `x`)."""
    if negate:
        return ("every tensor takes this branch today; after the fix tensors skip it, as only Variables "
                "did in 0.3")
    parent = ctx.index.parents.get(node)
    if isinstance(parent, ast.If) and parent.test is node and (
            _detaches(parent.body, ast.dump(subject)) or _tensors_never_come(parent, ast.dump(subject), ctx)
            or _tensor_branch_alike(parent, ast.dump(subject), ctx)):
        return None
    if isinstance(parent, ast.IfExp) and parent.test is node and _detaches([parent.body], ast.dump(subject)):
        return None  # `Variable(h.data) if type(h) == Variable else tuple(...)`
    return ("in 0.3 plain tensors took the other branch; `isinstance(x, torch.Tensor)` sends them "
            "into this one")


_GUARD = "guard"  # `_isinstance_unsafe`: a branch that only raises (no fix)


def _isinstance_unsafe(call: ast.Call, ctx) -> Optional[str]:
    """Why `isinstance(x, torch.Tensor)` may not do what the 0.3 `isinstance(x, Variable)` did
    (None: safe). In 0.3 plain tensors failed it. The same for a working program: an `assert`
    (a tensor failed it in 0.3, so none came), a branch that only detaches `x` (`x = x.data`:
    a plain tensor stays as it was), a test `and`-ed with one a plain tensor fails today too
    (`isinstance(v, Variable) and v.requires_grad`), a negated test whose branch only raises
    (`if not isinstance(x, Variable): raise ...`: no plain tensor came). `_GUARD`: a branch
    that only raises on the test itself (every tensor would raise after the rewrite: the
    optimizer-state check that stops at Variables)."""
    parents = ctx.index.parents
    subject = ast.dump(call.args[0])
    if _made_from_a_variable(call.args[0], call, ctx):
        return None
    node, parent = call, parents.get(call)
    negated = isinstance(parent, ast.UnaryOp) and isinstance(parent.op, ast.Not)
    if negated:
        node, parent = parent, parents.get(parent)
    while isinstance(parent, ast.BoolOp):
        if not negated and isinstance(parent.op, ast.And) \
                and any(_no_plain_tensor(v, subject) for v in parent.values if v is not node):
            return None
        node, parent = parent, parents.get(parent)
    if not negated and (isinstance(parent, ast.Assert) or _asserted(parent)):
        return None
    if isinstance(parent, (ast.If, ast.IfExp)) and parent.test is node:
        body = parent.body if isinstance(parent, ast.If) else [parent.body]
        raises = all(isinstance(s, ast.Raise) for s in body)
        if negated and raises:
            return None
        if not negated and (_detaches(body, subject) or _tensor_branch_alike(parent, subject, ctx)
                            or _tensors_never_come(parent, subject, ctx)):
            return None
        if not negated and raises and node is call:
            return _GUARD
    if negated:
        return ("every tensor takes this branch today; after the fix tensors skip it, as only Variables "
                "did in 0.3")
    return ("in 0.3 plain tensors failed `isinstance(x, Variable)`; `isinstance(x, torch.Tensor)` "
            "holds for them")


def _made_from_a_variable(subject: ast.AST, at: ast.AST, ctx) -> bool:
    """`model_out = model(input_var)` with `input_var = Variable(input)`: a name bound only to
    calls that are given a Variable (or make one). In 0.3 what is computed from a Variable is
    a Variable (or a tuple of them): no plain tensor reaches the test."""
    if not isinstance(subject, ast.Name):
        return False
    names = NameBindings(ctx.index)
    index = ctx.index

    def variable(node: ast.AST) -> bool:
        if isinstance(node, ast.Call) and index.is_variable(node.func):
            return True
        if isinstance(node, ast.Name):
            bound = names.bindings(node.id, node)
            return bool(bound) and all(isinstance(v, ast.Call) and index.is_variable(v.func) for v in bound)
        return False

    values = names.bindings(subject.id, at)
    return bool(values) and all(
        isinstance(v, ast.Call) and (variable(v) or any(variable(a) for a in v.args)) for v in values)


def _no_plain_tensor(test: ast.AST, subject: str) -> bool:
    """A test a plain tensor fails today as it failed `isinstance(x, Variable)` in 0.3:
    `x.requires_grad`, `x.grad is not None`, `x.grad_fn is not None`."""
    if isinstance(test, ast.Attribute):
        return test.attr == "requires_grad" and ast.dump(test.value) == subject
    if isinstance(test, ast.Compare) and len(test.ops) == 1 and isinstance(test.ops[0], ast.IsNot) \
            and isinstance(test.comparators[0], ast.Constant) and test.comparators[0].value is None:
        left = test.left
        return isinstance(left, ast.Attribute) and left.attr in ("grad", "grad_fn") and ast.dump(left.value) == subject
    return False


def _reaching_spans(scope: ast.AST, name: str, src) -> List[Tuple[int, int]]:
    """The spans of the statements in `scope` whose value may come back to a test of `name`:
    a `return`, or an assignment to `name` (`x = Variable(x, ...)`, `x, y = ...`)."""
    out = []
    for node in ast.walk(scope):
        if isinstance(node, ast.Return) or (isinstance(node, (ast.Assign, ast.AugAssign, ast.AnnAssign)) and any(
                isinstance(t, ast.Name) and t.id == name
                for target in (node.targets if isinstance(node, ast.Assign) else [node.target])
                for t in ast.walk(target))):
            out.append((src.start(node), src.end(node)))
    return out


def _name_of(subject: ast.AST) -> Optional[str]:
    return subject.id if isinstance(subject, ast.Name) else None


def _guard_removal(branch, ctx) -> Optional[List[TextEdit]]:
    """The lines of an `elif isinstance(x, Variable): raise ...` branch (the chain goes on
    with what follows it), or of such an `if` with no `else` among other statements; None
    when a comment stands in them or the `if` is alone in its block."""
    if not isinstance(branch, ast.If):
        return None
    src, index = ctx.src, ctx.index
    parent = index.parents.get(branch)
    elif_ = isinstance(parent, ast.If) and parent.orelse == [branch] \
        and src.line(branch.lineno).lstrip().startswith("elif")
    if not elif_ and (branch.orelse or len(index.siblings(branch) or ()) < 2):
        return None
    start, end = src.line_starts[branch.lineno - 1], src.line_after(branch.body[-1].end_lineno)
    if src.comments_between(start, end):
        return None
    if not elif_:  # a statement of its own: the deletion that keeps blank lines from piling up
        return ctx.expr.delete_statement(branch)
    return [TextEdit(start, end, "")]


def _asserted(node) -> bool:
    """`self.assertTrue(isinstance(v, Variable))`: a unittest assertion."""
    return isinstance(node, ast.Call) and isinstance(node.func, ast.Attribute) \
        and node.func.attr in ("assertTrue", "assert_")


def _data_recursion(test: ast.AST, subject: ast.AST, ctx) -> Optional[Tuple[str, Optional[str]]]:
    """(function name, note) when the branch a Variable took calls the enclosing function again
    on `x.data` (a vendored 0.3 `nn.init` helper: `if isinstance(tensor, Variable):
    xavier_normal(tensor.data); return tensor`). `isinstance(x, torch.Tensor)` alone holds for
    `x.data` too, so the call would recurse forever; `and x.requires_grad` stops it after one
    step, as 0.3's plain tensor did (a `.data` never requires grad). The note is None (safe)
    when the branch is only that call and `return x`: a tensor that needs no grad then takes
    the direct path, which does in place what the branch did to its data."""
    parent = ctx.index.parents.get(test)
    fn = ctx.index.function_of(test)
    if not isinstance(parent, ast.If) or parent.test is not test or not isinstance(fn, FUNCTIONS):
        return None
    data = ast.dump(ast.Attribute(value=subject, attr="data", ctx=ast.Load()))
    recursive = [n for stmt in parent.body for n in ast.walk(stmt) if isinstance(n, ast.Call)
                 and (isinstance(n.func, ast.Name) and n.func.id == fn.name
                      or isinstance(n.func, ast.Attribute) and n.func.attr == fn.name
                      and isinstance(n.func.value, ast.Name) and n.func.value.id in ("self", "cls"))
                 and n.args and ast.dump(n.args[0]) == data]
    if not recursive:
        return None
    body, whole = parent.body, ast.dump(subject)
    # `return f(x.data)`: the call is what a tensor that needs no grad runs today, on a tensor
    # of the same storage. `f(x.data); return x`: also when every other `return` of the
    # function hands back `x` itself (`return tensor.normal_(0, std)`, an in-place method)
    only = len(body) == 1 and isinstance(body[0], ast.Return) and body[0].value in recursive or (
        len(body) == 2 and isinstance(body[0], ast.Expr) and body[0].value in recursive
        and isinstance(body[1], ast.Return) and body[1].value is not None and ast.dump(body[1].value) == whole
        and isinstance(fn.body[-1], ast.Return)  # it cannot fall off its end (a None)
        and all(_returns_itself(r.value, whole) for r in ast.walk(fn)
                if isinstance(r, ast.Return) and r not in body))
    return fn.name, None if only else _RECURSION_NOTE.format(fn.name) + (
        ", and a tensor that needs no grad now takes the other branch")


def _returns_itself(value: Optional[ast.AST], subject: str) -> bool:
    """`x`, or an in-place method of `x` (`x.normal_(0, std)`), which returns `x`."""
    if value is not None and ast.dump(value) == subject:
        return True
    return isinstance(value, ast.Call) and isinstance(value.func, ast.Attribute) \
        and writes_in_place(value.func.attr) and ast.dump(value.func.value) == subject


_RECURSION_NOTE = ("unsafe fix: the branch calls `{}()` again on its `.data`, a tensor too: the test gets "
                   "`and x.requires_grad` so that it stops there")


def _tensors_never_come(node: ast.AST, subject: str, ctx) -> bool:
    """An earlier test sends every plain tensor elsewhere, so neither the 0.3 test nor the new
    one sees one: the `if` is an `elif` of a tensor test (pyro's `_eq`: `elif isinstance(x,
    (np.ndarray, torch.Tensor)): ...` before `elif isinstance(x, Variable)`), or follows an
    `if` testing for a tensor whose body ends in `return` or `raise` (simple-faster-rcnn's
    `scalar()`)."""
    if not isinstance(node, ast.If):
        return False
    index = ctx.index
    owner = index.parents.get(node)
    while isinstance(owner, ast.If) and owner.orelse == [node]:  # up the `elif` chain
        if _tensor_test(owner.test, subject, ctx):
            return True
        node, owner = owner, index.parents.get(owner)
    for block in _blocks_of(owner):
        if any(s is node for s in block):
            for stmt in block[:[i for i, s in enumerate(block) if s is node][0]]:
                if isinstance(stmt, ast.If) and _tensor_test(stmt.test, subject, ctx) and stmt.body \
                        and isinstance(stmt.body[-1], (ast.Return, ast.Raise)):
                    return True
    return False


def _blocks_of(owner: ast.AST) -> List[list]:
    return [getattr(owner, f) for f in ("body", "orelse", "finalbody") if isinstance(getattr(owner, f, None), list)]


def _tensor_test(test: ast.AST, subject: str, ctx) -> bool:
    """`torch.is_tensor(x)`, or `isinstance(x, T)` with T (or one of a tuple) torch's tensor class."""
    if not (isinstance(test, ast.Call) and test.args and ast.dump(test.args[0]) == subject):
        return False
    qual = ctx.index.qual(test.func)
    if qual == "torch.is_tensor" and len(test.args) == 1:
        return True
    if not (isinstance(test.func, ast.Name) and test.func.id == "isinstance" and len(test.args) == 2):
        return False
    kinds = test.args[1].elts if isinstance(test.args[1], ast.Tuple) else [test.args[1]]
    return any(ctx.index.qual(k) in _TENSOR_CLASSES for k in kinds)


_TENSOR_CLASSES = frozenset({"torch.Tensor", "torch._TensorBase", "torch.tensor._TensorBase"})


def _tensor_branch_alike(node: ast.AST, subject: str, ctx) -> bool:
    """`if isinstance(obj, Variable): return obj.data.cpu().numpy()` followed by `elif
    torch.is_tensor(obj): return obj.cpu().numpy()` (CSAIL's `as_numpy`): the next branch,
    which plain tensors took in 0.3, does for them what the Variable branch does to `.data`,
    so a plain tensor taking the first branch today gets the same."""
    if not isinstance(node, ast.If) or len(node.orelse) != 1 or not isinstance(node.orelse[0], ast.If):
        return False
    other = node.orelse[0]
    if not _tensor_test(other.test, subject, ctx):
        return False
    plain = [_without_data(stmt, subject) for stmt in node.body]
    return [ast.dump(stmt) for stmt in plain] == [ast.dump(stmt) for stmt in other.body]


def _without_data(stmt: ast.AST, subject: str) -> ast.AST:
    """`stmt` with every `<subject>.data` read as `<subject>`."""
    class Strip(ast.NodeTransformer):
        def visit_Attribute(self, node):
            self.generic_visit(node)
            if node.attr == "data" and ast.dump(node.value) == subject:
                return node.value
            return node

    return Strip().visit(copy.deepcopy(stmt))


def _detaches(body, subject: str) -> bool:
    """The branch only detaches the subject: its value (an expression's, a `return`'s or an
    assignment's) is `h.data`, `h.detach()` or a wrapper of one (`Variable(h.data)`), which
    leaves a plain tensor as it was. Not `v.data[0]`: that indexes a plain tensor too
    (seqmod's `[v.data[0] if isinstance(v, Variable) else v for v in variables]`)."""
    values = []
    for stmt in body:
        if isinstance(stmt, ast.AST) and not isinstance(stmt, ast.stmt):
            values.append(stmt)  # an `IfExp`'s body
        elif isinstance(stmt, (ast.Return, ast.Expr, ast.Assign)) and stmt.value is not None:
            values.append(stmt.value)
        else:
            return False
    return bool(values) and all(_detached(v, subject) for v in values)


def _detached(value: ast.AST, subject: str) -> bool:
    if isinstance(value, ast.Tuple) and value.elts:  # `return x.data, y.data` after testing both
        return all(_detached(e, subject) or isinstance(e, ast.Attribute) and e.attr == "data"
                   and isinstance(e.value, ast.Name) for e in value.elts)
    if isinstance(value, ast.Attribute) and value.attr == "data" and ast.dump(value.value) == subject:
        return True
    if not isinstance(value, ast.Call):
        return False
    if isinstance(value.func, ast.Attribute) and value.func.attr == "detach" and not value.args \
            and ast.dump(value.func.value) == subject:
        return True
    # a wrapper of one (`Variable(h.data)`), not any function of it: `fanin_init(tensor.data)`
    # does its own work, which a plain tensor taking the branch now gets too (rlkit)
    func = value.func
    name = func.id if isinstance(func, ast.Name) else func.attr if isinstance(func, ast.Attribute) else ""
    return (name.endswith("Variable") or name == "Parameter") and len(value.args) == 1 \
        and _detached(value.args[0], subject)
