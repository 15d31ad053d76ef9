"""VF201: reading `x.volatile`."""
import ast
from typing import Optional

from ..files import prefilter
from ..fixes.edits import TextEdit
from ..flow.bindings import NameBindings
from ..model import Applicability
from .base import Rule, on
from .volatile_attributes import is_tensor_attribute

_WRAP_PARENTS = (ast.Attribute, ast.Subscript, ast.Call, ast.BinOp, ast.Compare, ast.UnaryOp, ast.BoolOp)
_GRADIENT_CALLS = frozenset({"register_hook", "backward", "retain_grad"})


class VolatileAttributeRead(Rule):
    """
    ## What it does
    Finds reads of `x.volatile` in files that import torch or a package built on it, where `x`
    is a tensor (not a class: `Tensor.volatile.__get__` in a table of descriptors is not a flag;
    not an object keeping a `volatile` of its own: `self.volatile` in a method of a class that
    is no tensor, or `model.volatile` of an instance of such a class that sets it).

    The packages are torchtext, torchvision, torchaudio, allennlp, fastai, pyro, ignite,
    OpenNMT's `onmt` and the like (a test helper asserting `batch.text.volatile` may import
    torchtext alone). A file that imports none of them counts when another Python file of its
    project does (torchtext's own `test/common/torchtext_test_case.py` imports only `unittest`
    and `json`; the tests calling it import torch). In a project without torch, `volatile` is
    not a tensor's flag (C declarations, a parser's node attribute). A called `x.volatile()` is
    a method of the project's (0.3's flag was a property, never called) and is not reported.

    ## Why is this bad?
    Since PyTorch 0.4 `x.volatile` is always False (and warns): branches on it silently
    take the "training" side.

    ## Example
    ```python
    import torch


    def forward(self, x):
        out = self.body(x)
        if not out.volatile:
            out.register_hook(self.save_grad)
        return out
    ```

    ## Use instead
    ```python
    import torch


    def forward(self, x):
        out = self.body(x)
        if out.requires_grad:
            out.register_hook(self.save_grad)
        return out
    ```

    ## Fix safety
    Unsafe, chosen by what the read asked. Of a value the code computed or holds
    (`out.volatile`, `p.grad.volatile`, a tensor printed in a tutorial), it asked whether that
    tensor records: `x.volatile` becomes `not x.requires_grad` (and `not x.volatile`,
    `x.volatile == False`, `x.requires_grad`). Of an input the function received
    (`input[0].volatile` in a forward hook, `if x.volatile:` in `forward`), it asked whether
    this pass was an inference pass: it becomes `not torch.is_grad_enabled()` (and
    `torch.is_grad_enabled()` for the negations), which restores the 0.3 intent inside a
    migrated region. `volatile=x.volatile` passed on to a constructor is dropped with it (VF103).
    Code that branches on the value behaves differently under the two rewrites, so a reviewer
    should look. A name whose every binding that reaches the read is a `Variable(...)` with a
    literal flag, or none (`z = Variable(t)` ... `print(z.volatile)`), and whose `.volatile`
    nothing sets, read what it was made with: the read becomes that literal (`False`,
    `True`), a safe fix (`not z.requires_grad` would say True for a plain tensor that 0.3
    called not volatile). One guard is safe: `if not out.volatile:` whose body only calls
    `out.register_hook(...)`. PyTorch 0.3's `register_hook` raised both on a volatile
    Variable and on one that did not require grad, so every run that passed the guard had
    `out.requires_grad`, which is what `register_hook` needs today.
    """

    CODE = "VF201"
    MESSAGE = "`.volatile` is always False since PyTorch 0.4; use `torch.is_grad_enabled()` or `.requires_grad`"
    FIX = Applicability.SAFE  # the `register_hook` guard; every other read is unsafe
    FIX_TITLE = "Replace the `.volatile` read"
    NEEDS = prefilter.VOLATILE_ATTRIBUTE
    NAMES = frozenset({"volatile"})

    @on(ast.Attribute, attr="volatile")
    def read(self, node, ctx):
        if not isinstance(node.ctx, ast.Load) or not ctx.tensor_file or not is_tensor_attribute(node, ctx):
            return
        parent = ctx.index.parents.get(node)
        if isinstance(parent, ast.Call) and parent.func is node:
            return  # `episodes.volatile()`: a method of the project's (0.3's flag was a bool property)
        if isinstance(parent, ast.keyword) and parent.arg == "volatile":
            call = ctx.index.parents.get(parent)
            if isinstance(call, ast.Call) and ctx.variable_call(call) is not None:
                return  # reported and fixed with the call (VF103)
        obj = node.value
        grad_mode = self.asks_grad_mode(node, ctx)
        holds = self.compared_with_literal(node, parent)
        negated = isinstance(parent, ast.UnaryOp) and isinstance(parent.op, ast.Not)
        if holds is not None:
            target, volatile_means = parent, holds  # `x.volatile == False`: holds when not volatile
        elif negated:
            target, volatile_means = parent, False
        else:
            target, volatile_means = node, True
        made = _made_with_flag(obj, node, ctx)
        if made is not None:
            # `z = Variable(t)` ... `z.volatile`: 0.3 answered with the flag `z` was made with
            imports, text = frozenset(), str(made == volatile_means)
            ctx.report(self.CODE, node, note=f"`{obj.id}` is made with `volatile={made}`, which 0.3's read returned",
                       fix=ctx.edit_fix(Applicability.SAFE, self.FIX_TITLE,
                                        [TextEdit(ctx.src.start(target), ctx.src.end(target), text)], imports))
            return
        if grad_mode:
            call, imports = ctx.spell("torch.is_grad_enabled", node)
            text = f"not {call}()" if volatile_means else f"{call}()"
            why = (f"`{ctx.src.segment(obj)}` is an input here: the read asked whether this pass records, "
                   f"which `torch.is_grad_enabled()` answers today")
        else:
            imports = frozenset()
            base = ctx.expr.attr_base(obj)
            text = f"not {base}.requires_grad" if volatile_means else f"{base}.requires_grad"
            why = (f"the read asked whether `{ctx.src.segment(obj)}` records a graph, "
                   f"which `.requires_grad` answers today")
        if text.startswith("not ") and isinstance(ctx.index.parents.get(target), _WRAP_PARENTS):
            text = f"({text})"
        safe = not grad_mode and not volatile_means and _only_hooks_itself(target, obj, ctx)
        ctx.report(self.CODE, node, note=None if safe else f"unsafe fix: {why}",
                   fix=ctx.edit_fix(Applicability.SAFE if safe else Applicability.UNSAFE, self.FIX_TITLE,
                                    [TextEdit(ctx.src.start(target), ctx.src.end(target), text)], imports))

    @staticmethod
    def compared_with_literal(node, parent):
        """For `node == True/False` (also `is`, `!=`, `is not`, either side): whether the
        comparison holds when `node` is true."""
        if not (isinstance(parent, ast.Compare) and len(parent.ops) == 1):
            return None
        other = parent.comparators[0] if parent.left is node else parent.left
        if other is node or not (isinstance(other, ast.Constant) and isinstance(other.value, bool)):
            return None
        op = parent.ops[0]
        if isinstance(op, (ast.Eq, ast.Is)):
            return other.value
        if isinstance(op, (ast.NotEq, ast.IsNot)):
            return not other.value
        return None

    @staticmethod
    def asks_grad_mode(node, ctx) -> bool:
        """Is the object an input of the enclosing function (a parameter, or an item of one),
        not guarding gradient code? Then the read asked about the pass, not the tensor."""
        if _guards_gradients(node, ctx):
            return False
        obj = node.value
        while isinstance(obj, ast.Subscript):
            obj = obj.value
        if not isinstance(obj, ast.Name):
            return False
        scope = ctx.index.function_of(node)
        if not isinstance(scope, (ast.FunctionDef, ast.AsyncFunctionDef, ast.Lambda)):
            return False
        args = scope.args
        params = [a.arg for a in args.posonlyargs + args.args + args.kwonlyargs]
        if args.vararg:
            params.append(args.vararg.arg)
        if ctx.index.method_class(scope) is not None and params:
            params = params[1:]  # `self.volatile` is not an input
        if obj.id not in params:
            return False
        # A parameter reassigned before the read is the function's own value by then.
        return not any(isinstance(n.ctx, ast.Store) and ctx.index.function_of(n) is scope
                       and (n.lineno, n.col_offset) < (node.lineno, node.col_offset)
                       for n in ctx.index.names.get(obj.id, ()))


def _made_with_flag(obj: ast.AST, read: ast.Attribute, ctx) -> Optional[bool]:
    """The `volatile` flag every binding of the name `obj` that reaches the read gave it, when
    each is a `Variable(...)` with a literal flag (or none: False) and nothing sets
    `<name>.volatile` in the scope: what 0.3's read returned (a Variable kept the flag it was
    made with). None otherwise (a parameter, a computed value, a runtime flag)."""
    if not isinstance(obj, ast.Name):
        return None
    scope = ctx.index.function_of(read)
    if any(isinstance(a.ctx, ast.Store) and isinstance(a.value, ast.Name) and a.value.id == obj.id
           and ctx.index.function_of(a) is scope for a in ctx.index.attributes.get("volatile", ())):
        return None
    values = NameBindings(ctx.index).bindings(obj.id, read)
    flags = set()
    for value in values:
        vc = ctx.variable_call(value) if isinstance(value, ast.Call) else None
        if vc is None or vc.wrapper is not None or not vc.analysable \
                or vc.volatile is not None and vc.volatile_truth is None:
            return None
        flags.add(bool(vc.volatile_truth))
    return flags.pop() if len(flags) == 1 else None


def _only_hooks_itself(test, obj, ctx) -> bool:
    """`if not out.volatile: out.register_hook(h)`, nothing else: 0.3's `register_hook` raised
    on a volatile Variable and on one that did not require grad (variable.py), so every run
    that passed this guard had `out.requires_grad`, and today's `register_hook` needs exactly
    that. `if out.requires_grad:` is the same guard."""
    parent = ctx.index.parents.get(test)
    if not isinstance(parent, ast.If) or parent.test is not test or parent.orelse:
        return False
    name = ctx.src.segment(obj)
    return all(isinstance(stmt, ast.Expr) and isinstance(stmt.value, ast.Call)
               and isinstance(stmt.value.func, ast.Attribute) and stmt.value.func.attr == "register_hook"
               and ctx.src.segment(stmt.value.func.value) == name for stmt in parent.body)


def _guards_gradients(node, ctx) -> bool:
    """The read is the test of an `if` whose body registers hooks or calls backward."""
    cur, test = ctx.index.parents.get(node), node
    while isinstance(cur, (ast.UnaryOp, ast.Compare, ast.BoolOp)):
        test, cur = cur, ctx.index.parents.get(cur)
    if not isinstance(cur, ast.If) or cur.test is not test:
        return False
    for stmt in cur.body:
        for sub in ast.walk(stmt):
            if isinstance(sub, ast.Call) and isinstance(sub.func, ast.Attribute) and sub.func.attr in _GRADIENT_CALLS:
                return True
    return False
