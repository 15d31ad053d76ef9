"""A value the code later calls `.backward()` on, with no gradient, as a term of a sum: one
element, whatever made it.

In 0.3, as today, `backward()` without a gradient raised unless the Variable held one element
(`torch.autograd._make_grads`: "grad can be implicitly created only for scalar outputs"; a
Variable that does not require grad raised too); the legacy code ran, so it held one. The terms of element-wise arithmetic
(`+`, `-`, `*`, `/`, `**`, a unary sign) broadcast to the result's shape, which has at least as
many elements as each of them (and none, when one of them has none): each term held one element
too. So `dist_entropy`, bound by `values, log_probs, dist_entropy, _ = self.model.evaluate(...)`
from a model volfix cannot read, is one element when the same block goes on, without a jump, to
`(value_loss * c + action_loss - dist_entropy * coef).backward()` (or binds that sum to a name
first and calls `loss.backward()`): the RL trainers' `update()` returns it, and `.data[0]` of
it raises today. `x += y` between the binding and the `backward()` keeps `x`'s shape (in place):
`errG_total, logs = generator_loss(...)`, `errG_total += kl_loss`, `errG_total.backward()`.
"""
import ast
from typing import Optional

_ELEMENTWISE = (ast.Add, ast.Sub, ast.Mult, ast.Div, ast.Pow)
_JUMPS = (ast.Return, ast.Break, ast.Continue, ast.Raise)
_SCOPES = (ast.FunctionDef, ast.AsyncFunctionDef, ast.Lambda, ast.ClassDef)
MAX_AHEAD = 40  # statements of the block looked at after the binding


def backward_term(index, bound: ast.AST, name: str) -> bool:
    """Whether `name` (a local name, or `self.loss_G_GAN`), bound by the plain assignment
    holding `bound` (its value), is a term of the sum a later statement of the same block calls
    `.backward()` on, every statement between running through (no `return`, `break`,
    `continue` or `raise` among them) and none binding `name` again."""
    stmt = bound
    while stmt is not None and not isinstance(stmt, ast.stmt):
        stmt = index.parents.get(stmt)
    if not (isinstance(stmt, ast.Assign) and name in {_key(n) for t in stmt.targets for n in ast.walk(t)}):
        return False  # not this name's assignment (a parameter filled by a call elsewhere)
    slot = index.slot_of(stmt)
    if slot is None:
        return False
    sums = {}  # `loss = a + b - c * w` before `loss.backward()`: the sum a name holds
    ahead = MAX_AHEAD
    while True:
        owner, block, position = slot[0], slot[2], slot[3]
        for later in block[position + 1:position + 1 + ahead]:
            ahead -= 1
            target = _backward_of(later)
            if target is not None:
                target = sums.get(_key(target), target)
                if name in _terms(target):
                    return True
            augments = isinstance(later, ast.AugAssign) and _key(later.target) == name  # `x += y` keeps x's shape
            if _jumps(later) or (name in _bound_keys(later) and not augments) \
                    or _calls_a_method_storing(index, later, name):
                return False
            if isinstance(later, ast.Assign) and len(later.targets) == 1 and _key(later.targets[0]):
                sums[_key(later.targets[0])] = later.value
            else:
                for key in _bound_keys(later):
                    sums.pop(key, None)
        # A branch of an `if` runs on into the statements after it (`if use_gpu: nll = f(x.cuda())
        # else: nll = f(x)`, then `nll.backward()`), when the `if` itself neither jumps nor
        # binds the name again after the binding.
        if not isinstance(owner, ast.If) or ahead <= 0:
            return False
        slot = index.slot_of(owner)
        if slot is None:
            return False


def _key(node: ast.AST) -> Optional[str]:
    """`loss` for a name, `self.loss_G` for an attribute of `self`; None otherwise."""
    if isinstance(node, ast.Name):
        return node.id
    if isinstance(node, ast.Attribute) and isinstance(node.value, ast.Name) and node.value.id == "self":
        return "self." + node.attr
    return None


def _calls_a_method_storing(index, stmt: ast.stmt, key: str) -> bool:
    """`self.reset()` between `self.loss_a = ...` and the `backward()`, where `reset` (a method
    of the class) stores `self.loss_a` again: the sum may hold that value instead."""
    if not key.startswith("self."):
        return False
    cls = index.method_class(index.function_of(stmt))
    if cls is None:
        return True
    methods = {d.name: d for d in cls.body if isinstance(d, (ast.FunctionDef, ast.AsyncFunctionDef))}
    for node in _walk_own(stmt):
        called = _key(node.func) if isinstance(node, ast.Call) else None
        method = methods.get(called[len("self."):]) if called and called.startswith("self.") else None
        if method is not None and any(key in _bound_keys(s) for s in method.body):
            return True
    return False


def _backward_of(stmt: ast.stmt) -> Optional[ast.AST]:
    """`E` of the statement `E.backward()` (keywords but `gradient` allowed: `retain_graph`)."""
    if not isinstance(stmt, ast.Expr) or not isinstance(stmt.value, ast.Call):
        return None
    call = stmt.value
    func = call.func
    if not (isinstance(func, ast.Attribute) and func.attr == "backward") or call.args:
        return None
    if any(k.arg in (None, "gradient", "grad_variables", "grad_tensors") for k in call.keywords):
        return None
    return func.value


def _terms(expr: ast.AST) -> set:
    """The names that are terms of element-wise arithmetic `expr` (`expr` itself included)."""
    out, pending = set(), [expr]
    while pending:
        node = pending.pop()
        if isinstance(node, ast.BinOp) and isinstance(node.op, _ELEMENTWISE):
            pending += [node.left, node.right]
        elif isinstance(node, ast.UnaryOp) and isinstance(node.op, (ast.USub, ast.UAdd)):
            pending.append(node.operand)
        elif _key(node):
            out.add(_key(node))
    return out


def _walk_own(stmt: ast.stmt):
    """The nodes of `stmt`, not those of a def, lambda or class inside it."""
    if isinstance(stmt, _SCOPES):
        yield stmt
        return
    pending = [stmt]
    while pending:
        node = pending.pop()
        yield node
        pending += [child for child in ast.iter_child_nodes(node) if not isinstance(child, _SCOPES)]


def _jumps(stmt: ast.stmt) -> bool:
    return any(isinstance(node, _JUMPS) for node in _walk_own(stmt))


def _bound_keys(stmt: ast.stmt) -> set:
    """The names and `self` attributes `stmt` binds (or deletes)."""
    keys = set()
    for node in _walk_own(stmt):
        if isinstance(node, (ast.Name, ast.Attribute)) and isinstance(node.ctx, (ast.Store, ast.Del)) and _key(node):
            keys.add(_key(node))
        elif isinstance(node, (ast.Global, ast.Nonlocal)):
            keys.update(node.names)
        elif isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)):
            keys.add(node.name)
    return keys
