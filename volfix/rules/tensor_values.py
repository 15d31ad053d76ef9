"""Whether an expression certainly holds a tensor: what VF302 and VF303 ask of the object whose
`backward(retain_variables=...)` or `multinomial()` they rewrite, since a project class may
define a method of that name in another file (`ContentLoss.backward(self, retain_variables=True)`
in `losses.py`, a sampler's `multinomial(self)`), which no rule of this file can see."""
from __future__ import annotations

import ast
from ..flow.bindings import NameBindings

# Methods that give a tensor. Their result is taken for one whatever they are called on: what
# VF302 and VF303 ask about is a value then given `.backward(...)` or `.multinomial()`, which a
# NumPy array or a number does not have; a project object is another matter (a name bound to
# its constructor, or a parameter), and is not certain.
TENSOR_METHODS = frozenset({
    "exp", "log", "div", "mul", "add", "sub", "pow", "sqrt", "abs", "neg", "clamp", "sigmoid", "tanh", "softmax",
    "log_softmax", "squeeze", "unsqueeze", "view", "view_as", "reshape", "expand", "expand_as", "t", "transpose",
    "permute", "contiguous", "cuda", "cpu", "float", "double", "half", "long", "int", "detach", "clone", "sum",
    "mean", "max", "min", "prod", "norm", "index_select", "gather", "masked_select", "narrow", "select", "mm",
    "bmm", "matmul", "type", "type_as", "to", "div_", "mul_", "add_", "exp_", "clamp_", "pow_",
})
# torch's namespaces whose calls make something else: modules, distributions, optimizers, data.
_NOT_TENSORS = ("torch.nn.", "torch.distributions.", "torch.optim.", "torch.utils.", "torch.autograd.Function",
                "torch.multiprocessing.", "torch.cuda.Stream", "torch.device")
_MAX_DEPTH = 8


class TensorValues:
    """`certain(expr, at)`: the expression holds a tensor wherever `at` reads it."""

    def __init__(self, index) -> None:
        self.index = index
        self.names = NameBindings(index)

    def certain(self, expr: ast.AST, at: ast.AST, depth: int = 0) -> bool:
        if depth > _MAX_DEPTH:
            return False
        if isinstance(expr, ast.BinOp):
            return self.certain(expr.left, at, depth + 1) or self.certain(expr.right, at, depth + 1)
        if isinstance(expr, ast.UnaryOp) and isinstance(expr.op, ast.USub):
            return self.certain(expr.operand, at, depth + 1)
        if isinstance(expr, ast.Attribute) and expr.attr == "data":
            return True  # a Variable's tensor; or `nn.Parameter.data`
        if isinstance(expr, ast.Call):
            qual = self.index.qual(expr.func)
            if qual is not None and (qual.startswith("torch.nn.functional.")
                                     or qual.startswith("torch.") and not qual.startswith(_NOT_TENSORS)):
                return True
            func = expr.func
            if isinstance(func, ast.Attribute) and func.attr in TENSOR_METHODS:
                return True
            return self._torch_module(func, at)  # `criterion(out, y)` with `criterion = nn.MSELoss()`
        if isinstance(expr, (ast.Name, ast.Attribute)):
            values = self.names.of(expr, at)
            return bool(values) and all(isinstance(v, ast.AST) and self.certain(v, at, depth + 1) for v in values)
        return False

    def _torch_module(self, func: ast.AST, at: ast.AST) -> bool:
        """`func` is bound only to instances of torch's modules (`nn.CrossEntropyLoss()`)."""
        values = self.names.of(func, at) if isinstance(func, (ast.Name, ast.Attribute)) else None
        return bool(values) and all(
            isinstance(v, ast.Call) and (self.index.qual(v.func) or "").startswith("torch.nn.")
            and (self.index.qual(v.func) or "").rpartition(".")[2][:1].isupper() for v in values)
