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
# Methods whose call on a name says the name holds a tensor (with `.data`).
_TENSOR_CALLS = ("size", "view", "view_as", "unsqueeze", "squeeze", "gather", "index_select", "masked_fill",
                 "log_softmax", "contiguous", "type_as", "expand_as", "log", "exp", "cuda", "dim", "numel")
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
            if values and all(isinstance(v, ast.AST) for v in values):
                return all(self.certain(v, at, depth + 1) for v in values)
            # A parameter, or an item unpacked from a model's output (`policy, value = model(x)`):
            # certain when its function also uses it as only a tensor is used.
            known = [v for v in values or () if isinstance(v, ast.AST)]
            return isinstance(expr, ast.Name) and all(self.certain(v, at, depth + 1) for v in known) \
                and self._used_as_tensor(expr.id, at)
        return False

    def _used_as_tensor(self, name: str, at: ast.AST) -> bool:
        """`name.data`, `name.size(0)`, `name.view(...)`, `name.log()` ... in the function holding
        `at`: what only a tensor (a Variable, in 0.3) answers."""
        scope = self.index.function_of(at)
        for node in [a for attr in ("data",) + _TENSOR_CALLS for a in self.index.attributes.get(attr, ())]:
            if isinstance(node.value, ast.Name) and node.value.id == name and node.value is not at \
                    and self.index.function_of(node) is scope and (
                        node.attr == "data" or _called(node, self.index)):
                return True
        return False

    def _torch_module(self, func: ast.AST, at: ast.AST) -> bool:
        """`func` is bound only to instances of torch's modules (`nn.CrossEntropyLoss()`)."""
        values = self.names.of(func, at) if isinstance(func, (ast.Name, ast.Attribute)) else None
        return bool(values) and all(
            isinstance(v, ast.Call) and (self.index.qual(v.func) or "").startswith("torch.nn.")
            and (self.index.qual(v.func) or "").rpartition(".")[2][:1].isupper() for v in values)


def _called(attribute: ast.Attribute, index) -> bool:
    parent = index.parents.get(attribute)
    return isinstance(parent, ast.Call) and parent.func is attribute
