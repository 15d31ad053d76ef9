"""VF403: `loss.backward(one)` with `one = torch.FloatTensor([1])`, for a loss that is 0-dim since PyTorch 0.4."""
import ast
from typing import Dict, List, Optional, Tuple

from ..files import prefilter
from ..fixes.edits import TextEdit
from ..flow.bindings import displayed_item
from ..flow.scalars import ScalarValues
from ..flow.shapes import int_value, is_number
from ..model import Applicability
from .base import Rule, on
from .loss_values import loss_callee, loss_named, made_by_loss_callee, unknown_factors

# Methods that move or copy a tensor and keep its shape: `one = one.cuda()`, `mone.to(device)`.
MOVES = frozenset({"cuda", "cpu", "to", "float", "double", "half", "detach", "clone", "contiguous", "neg",
                    "type_as"})
# Methods that scale by a number and keep the shape: `mone = one.mul(-1)`.
_SCALINGS = frozenset({"mul", "div", "mul_", "div_"})
# Legacy constructors of a one-element 1-dim tensor from a list (`torch.FloatTensor([1])`),
# with the dtype and device of the 0-dim tensor that replaces it.
_LIST_CONSTRUCTORS: Dict[str, Tuple[str, Optional[str]]] = {
    "torch.FloatTensor": ("float", None), "torch.Tensor": ("float", None), "torch.DoubleTensor": ("double", None),
    "torch.cuda.FloatTensor": ("float", "cuda"), "torch.cuda.DoubleTensor": ("double", "cuda"),
}
_MAX_DEPTH = 12


class ScalarBackwardGradient(Rule):
    """
    ## What it does
    Finds `x.backward(g)` where `x` is certainly one element (a loss, a full reduction: the
    values VF401 reads) and `g` a one-element tensor with one dimension: `torch.FloatTensor([1])`,
    `torch.ones(1)`, `torch.FloatTensor(1).fill_(1)`, also negated, scaled by a number, moved
    (`.cuda()`, `.to(device)`), wrapped in `Variable(...)`, or a name bound only to such
    values. That is the WGAN idiom: `one = torch.FloatTensor([1])`, `mone = one * -1`, then
    `D_real = netD(real).mean()` and `D_real.backward(mone)`.

    ## Why is this bad?
    In PyTorch 0.3 a one-element result had shape `(1,)`, so a gradient of shape `(1,)` matched
    it. Since 0.4 losses and full reductions are 0-dim, and `backward` refuses a gradient of
    another shape: `RuntimeError: Mismatch in shape: grad_output[0] has a shape of
    torch.Size([1]) and output[0] has a shape of torch.Size([])` (0.4 said `invalid gradient at
    index 0 - expected shape [] but got [1]`). Every WGAN and WGAN-GP port of the time stops at
    its first critic step.

    ## Example
    ```python
    import torch

    one = torch.FloatTensor([1])
    mone = one * -1


    def critic_step(netD, real):
        d_real = netD(real).mean()
        d_real.backward(mone)
    ```

    ## Use instead
    ```python
    import torch

    one = torch.tensor(1, dtype=torch.float)
    mone = one * -1


    def critic_step(netD, real):
        d_real = netD(real).mean()
        d_real.backward(mone)
    ```

    ## Fix safety
    The fix makes the gradient 0-dim where it is made, as the people who migrated such code
    did: `torch.FloatTensor([c])` becomes `torch.tensor(c, dtype=torch.float)`
    (`torch.DoubleTensor`: `torch.double`; `torch.cuda.FloatTensor`: also `device="cuda"`),
    `torch.ones(1)` becomes `torch.ones(())`, `torch.FloatTensor(1).fill_(c)` becomes
    `torch.tensor(c, dtype=torch.float)`. The values, dtype and device are the same; only the
    shape changes, which is what `backward` of a 0-dim value needs. The fix is safe when every
    read of the names the gradient is made through (`one`, `mone`) is a gradient given to a
    certainly one-element value's `backward`, or makes another such name (`mone = one * -1`,
    `one = one.cuda()`). When a name is read anywhere else (`torch.cat([x, one])`, a
    `backward` of a value whose shape volfix cannot tell), the fix is unsafe and the note names
    that read: a value with one dimension may need the old shape there.

    A one-element value times a name volfix cannot type (`gradient_penalty = ((g.norm(2, dim=1)
    - 1) ** 2).mean() * lmbda`, `lmbda` a parameter) gets an unsafe fix whose note names it: a
    tensor of shape (1,) there would keep the value's shape (1,), and the gradient's with it.

    A value named like a loss, or made by a callee named like one that volfix cannot see
    (`content_loss = criterion(out, y)` with `criterion` a parameter), gets an unsafe fix too,
    as VF401 reads its `.data[0]`: a criterion that returns shape (1,) keeps its gradient's shape.

    Any other `backward` of a value whose shape only the data tells (`errD_real = netD(x)`, a model
    volfix cannot read: WassersteinGAN's critic returned `output.mean(0).view(1)`, of shape
    `(1,)` still) is not reported.
    """

    CODE = "VF403"
    MESSAGE = ("a gradient of shape (1,) for a 0-dim value raises since PyTorch 0.4 (`Mismatch in shape`); "
               "make the gradient 0-dim")
    FIX = Applicability.SAFE
    FIX_TITLE = "Make the gradient 0-dim"
    NEEDS = prefilter.BACKWARD_GRADIENT
    NAMES = frozenset({"backward"})

    @on(ast.Call, callee=("backward",))
    def backward(self, call, ctx):
        scalars = None
        for root, gradient in _roots_and_gradients(call, ctx.index):
            scalars = scalars or ScalarValues(ctx.index)
            self.check(call, root, gradient, scalars, ctx)

    def check(self, call, root, gradient, scalars, ctx):
        doubt = _root_doubt(scalars, root, call, ctx)
        if doubt is None:
            return
        chain = _Chain(ctx.index, scalars)
        if not chain.follow(gradient, call, 0) or not chain.leaves:
            return
        src = ctx.src
        when, note = doubt
        shown_call = " ".join(src.segment(call).split())
        message = (f"`{src.segment(gradient)}` has shape (1,) and `{src.segment(root)}` is 0-dim since PyTorch "
                   f"0.4{when}: `{shown_call}` raises `Mismatch in shape`; make the gradient 0-dim")
        edits = [e for leaf in chain.leaves for e in [_zero_dim_edit(leaf, ctx)] if e is not None]
        if len(edits) < len(chain.leaves):
            ctx.report(self.CODE, call, message=message, note=(
                "no fix: volfix cannot spell `torch.tensor` with this file's imports"))
            return
        other = chain.other_read(_zero_dim) if note is None else None
        if other is not None:
            name, read = other
            shown_read = _line(src, ctx.index.statement_of(read))
            note = (f"unsafe fix: `{name}` is also read on line {read.lineno} (`{shown_read}`), where a value "
                    f"with one dimension may still be needed")
        ctx.report(self.CODE, call, message=message, note=note,
                   fix=ctx.edit_fix(Applicability.UNSAFE if note else Applicability.SAFE, self.FIX_TITLE, edits))


def _root_doubt(scalars: ScalarValues, root: ast.AST, at: ast.AST, ctx) -> Optional[Tuple[str, Optional[str]]]:
    """How sure volfix is that `root` is 0-dim: ("", None) when certain; else what the message
    adds (" when `lmbda` is a number") and the unsafe fix's note; None when it cannot tell."""
    if _zero_dim(scalars, root, at):
        return "", None
    shown = ctx.src.segment(root)
    unknown = _untyped_factors(scalars, root, at)
    if unknown:
        names = ", ".join(f"`{ctx.src.segment(u)}`" for u in dict.fromkeys(unknown))
        verb = "is a number" if len(unknown) == 1 else "are numbers"
        return f" when {names} {verb}", (
            f"unsafe fix: volfix cannot tell that {names} {verb}; with a tensor of shape (1,) there, `{shown}` "
            f"has that shape too and the gradient's shape was right")
    named = _named_like_a_loss(root, at, ctx, scalars)
    if named is not None:
        return " if it has one element", (
            f"unsafe fix: volfix cannot tell that `{shown}` has one element ({named}); with shape (1,), as a "
            f"criterion may return, the gradient's shape was right")
    return None


def _roots_and_gradients(call: ast.Call, index) -> List[Tuple[ast.AST, ast.AST]]:
    """(root, gradient) of `root.backward(gradient)`, and each pair of
    `torch.autograd.backward([roots], [gradients])` (also 0.3's `grad_variables=`)."""
    func = call.func
    if index.qual(func) == "torch.autograd.backward":
        keywords = {k.arg: k.value for k in call.keywords}
        roots = call.args[0] if call.args else keywords.get("tensors", keywords.get("variables"))
        grads = call.args[1] if len(call.args) > 1 else keywords.get("grad_tensors", keywords.get("grad_variables"))
        if roots is None or grads is None or any(isinstance(a, ast.Starred) for a in call.args):
            return []
        if isinstance(roots, (ast.List, ast.Tuple)) and isinstance(grads, (ast.List, ast.Tuple)):
            if len(roots.elts) != len(grads.elts):
                return []
            return [(r, g) for r, g in zip(roots.elts, grads.elts)
                    if not isinstance(g, ast.Constant) and not isinstance(r, ast.Starred)]
        if isinstance(roots, (ast.List, ast.Tuple)) or isinstance(grads, (ast.List, ast.Tuple)):
            return []
        return [(roots, grads)]
    if not isinstance(func, ast.Attribute) or func.attr != "backward":
        return []
    gradient = _gradient_argument(call)
    return [] if gradient is None else [(func.value, gradient)]


def _gradient_argument(call: ast.Call) -> Optional[ast.AST]:
    if call.args:
        return call.args[0] if not isinstance(call.args[0], ast.Starred) else None
    for keyword in call.keywords:
        if keyword.arg == "gradient":
            return keyword.value
    return None


def _zero_dim(scalars: ScalarValues, root: ast.AST, at: ast.AST) -> bool:
    """`root` is certainly one element and no certain rank says it has a dimension (a 1-dim
    `torch.zeros(1)` counts as one element for VF401, whose `.item()` reads it either way)."""
    return scalars.one_element(root, at) and scalars.ranks.exact(root, at) in (None, 0)


def _untyped_factors(scalars: ScalarValues, root: ast.AST, at: ast.AST) -> Optional[List[ast.AST]]:
    """`gradient_penalty = ((grads.norm(2, dim=1) - 1) ** 2).mean() * lmbda` with `lmbda` a
    parameter: one element times names volfix cannot type (those names), also through a name
    bound only to such values or to certainly 0-dim ones; None when the root is anything else."""
    values = scalars.names.bindings(root.id, at) if isinstance(root, ast.Name) else [root]
    unknown: List[ast.AST] = []
    for value in values:
        if not isinstance(value, ast.AST):
            return None
        if value is not root and _zero_dim(scalars, value, value):
            continue
        factors = unknown_factors(value, value if value is not root else at, scalars)
        if not factors:
            return None
        unknown.extend(factors)
    return unknown or None


def _named_like_a_loss(root: ast.AST, at: ast.AST, ctx, scalars: ScalarValues) -> Optional[str]:
    """Why `root` is taken for a loss volfix cannot size, as VF401 takes `.data[0]` of it: named
    like one (`content_loss`), or bound only to calls of a callee named like one that volfix
    cannot see (`err = criterion(out, y)` with `criterion` a parameter); else None."""
    made = made_by_loss_callee(root, ctx, scalars, at)
    if made is not None:
        return f"it is `{made}`, not bound to a known loss or reduction"
    if loss_named(root) or (loss_callee(root) and not scalars.known_callee(root.func, at)):
        return "it is not bound to a known loss or reduction"
    return None


def _line(src, node: ast.AST) -> str:
    text = src.segment(node).strip().splitlines()[0]
    return text if len(text) <= 60 else text[:57] + "..."


class _Chain:
    """How a gradient is made: the constructors of one-element 1-dim tensors it starts from
    (`leaves`), the names it passes through on the way (`one`, `mone`) and the values bound to
    them that it follows (`values`, to tell a read of this `one` from another function's)."""

    def __init__(self, index, scalars: ScalarValues) -> None:
        self.index = index
        self.scalars = scalars
        self.leaves: List[ast.Call] = []
        self.names: Dict[str, None] = {}
        self.values: Dict[int, None] = {}  # ids of the values bound to the names
        self._keys: Dict[str, None] = {}

    def follow(self, expr: ast.AST, at: ast.AST, depth: int) -> bool:
        """Is `expr` certainly a one-element 1-dim tensor made by a constructor volfix can
        rewrite (every way it may be made)?"""
        if depth > _MAX_DEPTH:
            return False
        if isinstance(expr, ast.Name):
            names = self.scalars.names
            key = names.key(expr.id, at)  # `one = one.cuda()` reads the `one` bound before it
            if key in self._keys:
                return True  # a loop's `one = one.cuda()`: decided by the other bindings
            values = [displayed_item(v) for v in names.bindings(expr.id, at)]
            if not values:
                return False
            self._keys[key] = None
            self.names[expr.id] = None
            self.values.update((id(v), None) for v in values)
            return all(isinstance(v, ast.AST) and self.follow(v, v, depth + 1) for v in values)
        if isinstance(expr, ast.UnaryOp) and isinstance(expr.op, (ast.USub, ast.UAdd)):
            return self.follow(expr.operand, at, depth + 1)
        if isinstance(expr, ast.BinOp) and isinstance(expr.op, (ast.Mult, ast.Div)):
            if self._number(expr.right, at):
                return self.follow(expr.left, at, depth + 1)
            if isinstance(expr.op, ast.Mult) and self._number(expr.left, at):
                return self.follow(expr.right, at, depth + 1)
            return False
        if not isinstance(expr, ast.Call):
            return False
        func = expr.func
        if self.index.is_variable(func):
            return len(expr.args) == 1 and not expr.keywords and self.follow(expr.args[0], at, depth + 1)
        if isinstance(func, ast.Attribute) and func.attr in MOVES:
            return self.follow(func.value, at, depth + 1)
        if isinstance(func, ast.Attribute) and func.attr in _SCALINGS:
            return len(expr.args) == 1 and not expr.keywords and self._number(expr.args[0], at) \
                and self.follow(func.value, at, depth + 1)
        if _constructor(expr, self.index) is None:
            return False
        self.leaves.append(expr)
        return True

    def _number(self, expr: ast.AST, at: ast.AST) -> bool:
        return is_number(expr) or self.scalars.scalar(expr, at, 0)

    def other_read(self, zero_dim) -> Optional[Tuple[str, ast.Name]]:
        """The first read of a value the gradient is made through, or of a name made from one
        (`mone = one * -1`), that is neither a gradient given to the `backward` of a certainly
        0-dim value nor a step making such a name. A read of a name bound to none of these
        values (another function's `one`) does not count."""
        index, names = self.index, self.scalars.names
        values = dict(self.values)
        pending = list(self.names)
        for name in pending:  # grows: the names made from these are read the same way
            for node in index.names.get(name, ()):
                if not isinstance(node.ctx, ast.Load) or not any(
                        id(displayed_item(v)) in values for v in names.bindings(name, node)):
                    continue
                top = _derived_top(node, index)
                parent = index.parents.get(top)
                call = index.parents.get(parent) if isinstance(parent, (ast.List, ast.Tuple, ast.keyword)) else parent
                if isinstance(call, ast.Call) and any(
                        gradient is top and zero_dim(self.scalars, root, call)
                        for root, gradient in _roots_and_gradients(call, index)):
                    continue
                made = _made_names(top, parent, index)
                if made is None:
                    return name, node
                values[id(top)] = None
                pending.extend(m for m in made if m not in pending)
        return None


def _made_names(top: ast.AST, parent: Optional[ast.AST], index) -> Optional[List[str]]:
    """The names `top` is assigned to: `mone = one * -1`, `one = one.cuda()`, `one, mone =
    one.cuda(), mone.cuda()`; None when it is not assigned to names."""
    if isinstance(parent, (ast.Tuple, ast.List)) and top in parent.elts:
        assign = index.parents.get(parent)
        if isinstance(assign, ast.Assign) and assign.value is parent and len(assign.targets) == 1 \
                and isinstance(assign.targets[0], (ast.Tuple, ast.List)) \
                and len(assign.targets[0].elts) == len(parent.elts):
            target = assign.targets[0].elts[parent.elts.index(top)]
            return [target.id] if isinstance(target, ast.Name) else None
        return None
    if isinstance(parent, ast.Assign) and parent.value is top and all(isinstance(t, ast.Name) for t in parent.targets):
        return [t.id for t in parent.targets]
    return None


def _derived_top(node: ast.AST, index) -> ast.AST:
    """The largest expression around `node` made from it by steps that keep a one-element
    1-dim value one (`-one`, `one * 2`, `one.cuda()`, `Variable(one)`)."""
    child, parent = node, index.parents.get(node)
    while True:
        if isinstance(parent, ast.UnaryOp) and isinstance(parent.op, (ast.USub, ast.UAdd)):
            pass
        elif isinstance(parent, ast.BinOp) and isinstance(parent.op, (ast.Mult, ast.Div)) and (
                is_number(parent.right if child is parent.left else parent.left)):
            pass
        elif isinstance(parent, ast.Attribute) and parent.value is child and parent.attr in MOVES | _SCALINGS \
                and isinstance(index.parents.get(parent), ast.Call) and index.parents[parent].func is parent:
            parent = index.parents[parent]
        elif isinstance(parent, ast.Call) and index.is_variable(parent.func) and parent.args == [child] \
                and not parent.keywords:
            pass
        else:
            return child
        child, parent = parent, index.parents.get(parent)


def _constructor(call: ast.Call, index) -> Optional[str]:
    """The kind of one-element 1-dim constructor `call` is: 'list' (`torch.FloatTensor([1])`),
    'tensor' (`torch.tensor([1.])`), 'ones' (`torch.ones(1)`), 'fill' (`torch.FloatTensor(1).fill_(1)`)."""
    func = call.func
    if isinstance(func, ast.Attribute) and func.attr == "fill_" and len(call.args) == 1 and not call.keywords \
            and is_number(call.args[0]):
        inner = func.value
        if isinstance(inner, ast.Call) and len(inner.args) == 1 and not inner.keywords \
                and index.qual(inner.func) in _LIST_CONSTRUCTORS and int_value(inner.args[0]) == 1:
            return "fill"
        return None
    qual = index.qual(func)
    if qual is None or len(call.args) != 1:
        return None
    arg = call.args[0]
    one_number = isinstance(arg, (ast.List, ast.Tuple)) and len(arg.elts) == 1 and is_number(arg.elts[0])
    if qual in _LIST_CONSTRUCTORS:
        return "list" if one_number and not call.keywords else None
    if any(k.arg not in ("dtype", "device", "requires_grad") for k in call.keywords):
        return None
    if qual == "torch.tensor":
        return "tensor" if one_number else None
    if qual == "torch.ones" and (int_value(arg) == 1 or isinstance(arg, (ast.List, ast.Tuple))
                                 and len(arg.elts) == 1 and int_value(arg.elts[0]) == 1):
        return "ones"
    return None


def _zero_dim_edit(leaf: ast.Call, ctx) -> Optional[TextEdit]:
    """The edit making `leaf` 0-dim, keyed so that the findings sharing it share one edit."""
    src, index = ctx.src, ctx.index
    kind = _constructor(leaf, index)
    key = f"VF403 {src.start(leaf)}"
    if kind == "tensor":  # `torch.tensor([1.])` -> `torch.tensor(1.)`
        arg = leaf.args[0]
        return TextEdit(src.start(arg), src.end(arg), src.segment(arg.elts[0]), key)
    if kind == "ones":  # `torch.ones(1)` -> `torch.ones(())`
        arg = leaf.args[0]
        return TextEdit(src.start(arg), src.end(arg), "()", key)
    made = leaf.func.value if kind == "fill" else leaf
    value = leaf.args[0] if kind == "fill" else leaf.args[0].elts[0]
    dtype, device = _LIST_CONSTRUCTORS[index.qual(made.func)]
    tensor, spelled_dtype = index.spell("torch.tensor", leaf), index.spell(f"torch.{dtype}", leaf)
    if tensor is None or spelled_dtype is None:
        return None
    extra = f', device="{device}"' if device else ""
    return TextEdit(src.start(leaf), src.end(leaf),
                    f"{tensor}({src.segment(value)}, dtype={spelled_dtype}{extra})", key)
