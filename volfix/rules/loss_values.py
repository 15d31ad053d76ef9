"""What makes a value a loss to VF401 and VF403 when volfix cannot size it: a name (`loss`,
`d_loss`, `state['loss']`), a callee (`criterion(...)`, `self.loss_fn(...)`), or arithmetic of
one-element values with names volfix cannot type (`self.gamma * d_loss_real`)."""
import ast
import re
from typing import Optional, Tuple

from ..flow.scalars import ScalarValues
from ..syntax import names as nm

# Words of a name that suggest a loss: `loss`, `total_loss`, `lossD`, `trainLoss`, `cost`.
LOSS_WORDS = frozenset({"loss", "losses", "cost"})
# Methods that give the same values, moved or copied: `loss.cpu().data[0]` reads the loss.
MOVES = frozenset({"cpu", "cuda", "detach", "clone", "float", "double", "contiguous", "to"})
# Words of a callee that suggest a loss function or module: `crit(...)`, `self.criterion(...)`, `loss_fn(...)`.
LOSS_CALLEE_WORDS = frozenset({"loss", "crit", "criterion", "cost"})
WORD = re.compile(r"[A-Z]?[a-z]+|[A-Z]+(?![a-z])|[0-9]+")


def unknown_factors(subject: ast.AST, at: ast.AST, scalars: ScalarValues) -> list:
    """`(self.gamma * d_loss_real - d_loss_fake)`: arithmetic of one-element values and
    numbers but for names or attributes volfix cannot type (`self.gamma = config.gamma`, a
    hyperparameter from another file; `d_loss_real`, named like a loss): those, when at least
    one operand is certainly one element or named like a loss. [] otherwise. A name bound
    once to such arithmetic where `at` reads it is read through (`candidate_logprob =
    beam_logprobs_sum[q] + local_logprob`, then `candidate_logprob.data[0]`)."""
    through = isinstance(subject, ast.Name)
    if through:
        bound = scalars.names.bindings(subject.id, at)
        subject = bound[0] if len(bound) == 1 else None
    if not isinstance(subject, ast.BinOp):
        return []
    leaves, pending = [], [subject]
    while pending:
        node = pending.pop()
        if isinstance(node, ast.BinOp):
            pending += [node.right, node.left]
        elif isinstance(node, ast.UnaryOp):
            pending.append(node.operand)
        else:
            leaves.append(node)
    unknown, one = [], False
    for leaf in leaves:
        if scalars.scalar(leaf, at, 0):
            continue
        if scalars.one_element(leaf, at):
            one = True
        elif isinstance(leaf, (ast.Name, ast.Attribute)):
            one = one or loss_named(leaf)
            unknown.append(leaf)
        elif full_index(leaf):
            unknown.append(leaf)  # `logits[0, 0]`: one element when `logits` has as many dimensions
        else:
            return []
    if through and not all(full_index(u) or bound_to_full_index(u, scalars.index) for u in unknown):
        return []  # read through a name: only full indexes volfix cannot size (a beam's `ys[q, c]`)
    return unknown if one else []


def bound_to_full_index(subject: ast.AST, index) -> Optional[ast.Subscript]:
    """`local_logprob = ys[q, c]`, then `local_logprob.data[0]` (self-critical's beam search):
    a local name every binding of which in its function is one full index, that index."""
    values = _local_values(subject, index)
    return values[0] if values and len(values) == 1 and full_index(values[0], index) else None  # type: ignore[return-value]


def _local_values(subject: ast.AST, index) -> Optional[list]:
    """The values a name that is not a parameter of its function is bound to, when its every
    binding there is a plain `name = value` (`index.plain_assignments`); else None."""
    if not isinstance(subject, ast.Name):
        return None
    scope = index.function_of(subject)
    if isinstance(scope, (ast.FunctionDef, ast.AsyncFunctionDef, ast.Lambda)) and \
            subject.id in nm.function_params(scope):
        return None
    return index.plain_assignments(subject.id, scope)


def full_index(expr: ast.AST, index=None) -> bool:
    """`t[i, j, k, l]`, `t[idx[0], idx[1] + k]`, `t[0, top_idx[0, i]]`: two or more integer-like
    indices (no slice, `None`, `...` or list). With the module's `index`, also chained,
    `t[0][3]`, `t[0][top_idx[0][i]]` (kinetics-i3d's demo), where `t` is a local name every
    plain binding of which is a call (`out_logit = model(x)`): a loop's batch, a parameter or
    an unpacked result may be a list, whose first index only picks a tensor."""
    return index_parts(expr, index) is not None


def index_parts(expr: ast.AST, index=None) -> Optional[Tuple[ast.AST, int]]:
    """(the indexed value, how many integer-like indices) of a full index (`full_index`)."""
    if not isinstance(expr, ast.Subscript):
        return None
    if isinstance(expr.slice, ast.Tuple):
        elts = expr.slice.elts
        return (expr.value, len(elts)) if len(elts) >= 2 and all(_index_like(e) for e in elts) else None
    count, node = 0, expr
    while isinstance(node, ast.Subscript) and not isinstance(node.slice, ast.Tuple) and _index_like(node.slice):
        count, node = count + 1, node.value
    if count < 2 or index is None:
        return None
    values = _local_values(node, index)
    return (node, count) if values and all(isinstance(v, ast.Call) for v in values) else None


def _index_like(node: ast.AST) -> bool:
    if isinstance(node, ast.Constant):
        return type(node.value) is int
    if isinstance(node, (ast.Name, ast.Attribute)):
        return True
    if isinstance(node, ast.Subscript):  # `idx[1]`: an entry of a `nonzero()` row, as a name would be
        # (`top_idx[0, i]` of a sort's 2-dim indices too)
        parts = node.slice.elts if isinstance(node.slice, ast.Tuple) else [node.slice]
        # (`top_idx[0][i]` chained too)
        return (isinstance(node.value, (ast.Name, ast.Attribute)) or isinstance(node.value, ast.Subscript)
                and _index_like(node.value)) and bool(parts) and all(map(_index_like, parts))
    if isinstance(node, ast.BinOp):
        return _index_like(node.left) and _index_like(node.right)
    if isinstance(node, ast.UnaryOp):
        return _index_like(node.operand)
    return False


def loss_named(expr: ast.AST) -> bool:
    """`loss`, `d_loss`, `self.loss`; also an entry of a collection named like losses
    (`losses[loss_name]`, `self.losses[k]`) or under a key named like one (`state['loss']`),
    and one of those moved or copied (`loss.cpu()`, `loss.detach()`)."""
    if isinstance(expr, ast.Call) and isinstance(expr.func, ast.Attribute) and expr.func.attr in MOVES \
            and not any(isinstance(a, ast.Starred) for a in expr.args):
        return loss_named(expr.func.value)
    if isinstance(expr, ast.Subscript):
        key = expr.slice
        if isinstance(key, (ast.Slice, ast.Tuple)):
            return False
        return (isinstance(key, ast.Constant) and isinstance(key.value, str) and loss_words(key.value)
                or loss_named(expr.value))
    name = expr.id if isinstance(expr, ast.Name) else expr.attr if isinstance(expr, ast.Attribute) else None
    return name is not None and loss_words(name)


def loss_words(name: str, words: frozenset = LOSS_WORDS) -> bool:
    return any(word.lower() in words for word in WORD.findall(name))


def loss_callee(expr: ast.AST) -> bool:
    """`crit(out, y)`, `self.loss_fn(out, y)`, `criterion(...)` with `criterion` a parameter."""
    if not isinstance(expr, ast.Call):
        return False
    func = expr.func
    name = func.id if isinstance(func, ast.Name) else func.attr if isinstance(func, ast.Attribute) else None
    return name is not None and loss_words(name, LOSS_CALLEE_WORDS)


def made_by_loss_callee(subject: ast.AST, ctx, scalars: ScalarValues, at: ast.AST) -> Optional[str]:
    """`err` where every binding of it in its function is a call of a callee named like a loss
    that volfix cannot see (`err = self.criterion(output, target)`, with `self.criterion` a
    constructor's argument): that call's text, else None."""
    if not isinstance(subject, ast.Name):
        return None
    fn = ctx.index.function_of(at)
    values = ctx.index.plain_assignments(subject.id, fn) if fn is not None else None
    if not values or not all(loss_callee(v) and not scalars.known_callee(v.func, v) for v in values):
        return None
    return ctx.src.segment(values[0].func) + "(...)"
