"""The shapes of expressions, read from their syntax alone: reductions, element-wise methods,
losses, `x.view(-1)`, numbers, and the small predicates the one-element analysis
(`flow.scalars`) builds on. No name is looked up here.
"""
from __future__ import annotations

import ast
from typing import Optional

# Methods that reduce a tensor to one element when called without a dimension.
REDUCTIONS = frozenset({"sum", "mean", "prod", "max", "min", "median", "norm", "std", "var", "all",
                        "any", "dot", "trace", "det", "logdet", "nansum", "nanmean"})
# Reductions over one dimension that return a tensor (not values and indices): over the one
# dimension of a 1-dim value, one element (0-dim since PyTorch 0.4).
DIM_REDUCTIONS = frozenset({"sum", "mean", "prod", "norm", "std", "var", "nansum", "nanmean", "logsumexp"})
# In-place and plain arithmetic with a number: the shape of the tensor stays.
SCALAR_ARITHMETIC = frozenset({"mul", "mul_", "div", "div_", "add", "add_", "sub", "sub_"})
# Keyword arguments that keep a reduction over every element.
_WHOLE_KEYWORDS = {"norm": {"p"}, "std": {"unbiased"}, "var": {"unbiased"}}
# Methods that keep a tensor's shape (a 0-dim value stays 0-dim).
SHAPE_KEEPING = frozenset({"cpu", "cuda", "float", "double", "half", "long", "int", "detach", "clone",
                           "to", "contiguous", "abs", "neg", "sqrt", "exp", "log", "log1p", "expm1",
                           "sigmoid", "tanh", "relu", "floor", "ceil", "round", "sign", "type_as"})
# `torch.<f>(x)` of one tensor, element by element: `torch.abs(a - b)`, `torch.log(p)`.
ELEMENTWISE = frozenset({"abs", "neg", "sqrt", "exp", "log", "log1p", "expm1", "sigmoid", "tanh", "relu",
                         "floor", "ceil", "round", "sign"})
# `torch.nn.functional` losses (reduced to one element unless `reduction='none'`/`reduce=False`).
LOSS_FUNCTIONS = frozenset({
    "cross_entropy", "nll_loss", "mse_loss", "l1_loss", "smooth_l1_loss", "huber_loss", "kl_div",
    "binary_cross_entropy", "binary_cross_entropy_with_logits", "soft_margin_loss",
    "multilabel_soft_margin_loss", "multilabel_margin_loss", "multi_margin_loss", "margin_ranking_loss",
    "hinge_embedding_loss", "cosine_embedding_loss", "triplet_margin_loss", "poisson_nll_loss",
    "gaussian_nll_loss", "ctc_loss"})
# `torch.<f>(*sizes)` and NumPy's `np.<f>(shape)`: as many dimensions as sizes.
SIZED_CONSTRUCTORS = frozenset({"zeros", "ones", "rand", "randn", "empty", "Tensor", "FloatTensor",
                                "DoubleTensor", "LongTensor", "IntTensor", "ByteTensor", "HalfTensor",
                                "BoolTensor"})
# `torch.<f>(data)`: a tensor of the (nested) list's values.
DATA_CONSTRUCTORS = frozenset({"Tensor", "FloatTensor", "DoubleTensor", "LongTensor", "IntTensor", "ByteTensor",
                               "HalfTensor", "BoolTensor", "tensor"})
# Methods that return the same module (moved or converted): `nn.MSELoss().cuda()`.
MODULE_MOVES = frozenset({"cuda", "cpu", "to", "float", "double", "half", "train", "eval"})


def is_zero(node: ast.AST) -> bool:
    return isinstance(node, ast.Constant) and type(node.value) is int and node.value == 0


def own_returns(fn: ast.AST):
    """The `return` statements of `fn` itself (not of nested functions or classes)."""
    stack = list(fn.body)  # type: ignore[attr-defined]
    while stack:
        node = stack.pop()
        if isinstance(node, ast.Return):
            yield node
        if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef, ast.Lambda)):
            continue
        stack.extend(ast.iter_child_nodes(node))


# Calls that give a Python number.
_NUMBER_BUILTINS = frozenset({"len", "int", "float"})
_NUMBER_METHODS = frozenset({"item", "numel", "size", "dim"})


def is_number(node: ast.AST) -> bool:
    if isinstance(node, ast.UnaryOp):
        return is_number(node.operand)
    if isinstance(node, ast.Call):
        func = node.func
        if isinstance(func, ast.Name):
            return func.id in _NUMBER_BUILTINS
        if isinstance(func, ast.Attribute) and func.attr in _NUMBER_METHODS:
            return func.attr != "size" or (len(node.args) == 1 and not node.keywords)  # `x.size(0)`
        return False
    return isinstance(node, ast.Constant) and type(node.value) in (int, float)


def branches(values: list) -> list:
    """`A(...) if args.ppo else B(...)`: each branch is a value."""
    out = []
    for v in values:
        while isinstance(v, ast.IfExp):
            out.append(v.body)
            v = v.orelse
        out.append(v)
    return out


def is_none(node) -> bool:
    return isinstance(node, ast.Constant) and node.value is None


def narrowed_number(choice: ast.IfExp, side: ast.AST) -> bool:
    """`side` is a name the test of `choice` proves a number there: `x` in `torch.mean(x) if
    not isinstance(x, int) else x` (pix2pixHD's losses: a loss it did not compute is 0)."""
    test, positive = choice.test, side is choice.body
    if isinstance(test, ast.UnaryOp) and isinstance(test.op, ast.Not):
        test, positive = test.operand, not positive
    if not (positive and isinstance(side, ast.Name) and isinstance(test, ast.Call) and isinstance(test.func, ast.Name)
            and test.func.id == "isinstance" and len(test.args) == 2 and not test.keywords):
        return False
    subject, kinds = test.args
    kinds = kinds.elts if isinstance(kinds, ast.Tuple) else [kinds]
    return (isinstance(subject, ast.Name) and subject.id == side.id and bool(kinds)
            and all(isinstance(k, ast.Name) and k.id in ("int", "float") for k in kinds))


def empty_literal(node: ast.AST) -> bool:
    """`()`, `[]`: every element is one element, vacuously (a chunk's stand-in binding)."""
    return isinstance(node, (ast.List, ast.Tuple)) and not node.elts


def first_dim_reduction(call: ast.Call, method: str) -> bool:
    """`x.sum(0)`, `x.mean(dim=-1)`: a reduction over one dimension, without `keepdim`."""
    if method not in DIM_REDUCTIONS or len(call.args) + len(call.keywords) != 1:
        return False
    dim = call.args[0] if call.args else call.keywords[0].value if call.keywords[0].arg == "dim" else None
    return dim is not None and int_value(dim) in (0, -1)


def viewed_one_dim(expr: ast.AST) -> bool:
    """Certainly one dimension: `x.view(-1)`, `x.reshape(n)` (then `.float()`, `.cpu()`...)."""
    while isinstance(expr, ast.Call) and isinstance(expr.func, ast.Attribute) and expr.func.attr in SHAPE_KEEPING:
        expr = expr.func.value
    if not (isinstance(expr, ast.Call) and isinstance(expr.func, ast.Attribute)
            and expr.func.attr in ("view", "reshape") and len(expr.args) == 1 and not expr.keywords):
        return False
    arg = expr.args[0]
    return int_value(arg) is not None or is_number(arg)  # not a name: `x.view(shape)` takes a tuple too


def self_moved(value: ast.AST, name: str) -> bool:
    """`x = x.cuda()`: the value it was, moved (decided by the other bindings)."""
    while isinstance(value, ast.Call) and isinstance(value.func, ast.Attribute) and value.func.attr in SHAPE_KEEPING:
        value = value.func.value
    return isinstance(value, ast.Name) and value.id == name


def int_value(node: ast.AST) -> Optional[int]:
    if isinstance(node, ast.Constant) and type(node.value) is int:
        return node.value
    if isinstance(node, ast.UnaryOp) and isinstance(node.op, ast.USub):
        inner = int_value(node.operand)
        return None if inner is None else -inner
    return None


def moved_module(index, made: ast.Call) -> ast.AST:
    """`Net().cuda().eval()` for the `Net()` in it: the outermost of the module moves (each
    returns the module itself) applied to what `made` makes."""
    while True:
        attr = index.parents.get(made)
        call = index.parents.get(attr) if isinstance(attr, ast.Attribute) and attr.value is made else None
        if not (isinstance(call, ast.Call) and call.func is attr and attr.attr in MODULE_MOVES):
            return made
        made = call


def moved_itself(value: ast.AST, ref: ast.AST) -> bool:
    """`criterion = criterion.cuda()` (`self.crit = self.crit.to(device)`): the module it was,
    moved; what it is is decided by the other bindings."""
    moved = False
    while (isinstance(value, ast.Call) and isinstance(value.func, ast.Attribute)
           and value.func.attr in MODULE_MOVES):
        value, moved = value.func.value, True
    return moved and ast.dump(value) == ast.dump(ref)


def own_item(node: ast.AST, name: str) -> bool:
    """`total[0] / n`: arithmetic of numbers and `name[0]` or `name.data[0]` itself (the read
    this rule turns into `.item()`), which binds `name` to a Python number: `total = total[0] /
    len(data)` after the accumulating loop, `k = k.data[0]` after `k = k + lam * (...)`. A
    number, if `name` is one element (decided by its other bindings)."""
    if isinstance(node, ast.BinOp):
        sides = (node.left, node.right)
        return (all(is_number(s) or own_item(s, name) for s in sides)
                and any(own_item(s, name) for s in sides))
    if isinstance(node, ast.UnaryOp):
        return own_item(node.operand, name)
    if not (isinstance(node, ast.Subscript) and is_zero(node.slice)):
        return False
    value = node.value
    if isinstance(value, ast.Attribute) and value.attr == "data":
        value = value.value
    return isinstance(value, ast.Name) and value.id == name


def whole_reduction(call: ast.Call, method: str) -> bool:
    """`x.sum()`, `x.norm(2)`, `a.dot(b)`: a reduction over every element."""
    allowed = _WHOLE_KEYWORDS.get(method, set()) | {"dtype"}
    if any(k.arg not in allowed for k in call.keywords):
        return False
    if method == "dot":
        return len(call.args) == 1
    if method == "norm":
        return len(call.args) <= 1 and all(isinstance(a, ast.Constant) for a in call.args)
    return not call.args


def reduced(call: ast.Call, max_positional: int) -> bool:
    """A loss call or constructor without `reduction='none'` / `reduce=False` (or a
    positional argument that could be either)."""
    if len(call.args) > max_positional or any(isinstance(a, ast.Starred) for a in call.args):
        return False
    for keyword in call.keywords:
        value = keyword.value
        if keyword.arg is None:
            return False  # **kwargs
        if keyword.arg == "reduction" and not (isinstance(value, ast.Constant) and value.value in ("mean", "sum")):
            return False
        if keyword.arg == "reduce" and not (isinstance(value, ast.Constant) and value.value is True):
            return False
    return True
