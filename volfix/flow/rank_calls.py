"""The ranks of PyTorch's (and NumPy's) calls for `flow.ranks`: methods of a tensor, `torch.*`
and `torch.nn.functional.*` functions, constructors by their sizes, `(values, indices)` pairs.
Each rule is PyTorch's documented shape: a reduction over one dimension drops it (without
`keepdim`), `view`/`reshape` has as many dimensions as it is given sizes, `torch.cat` keeps the
rank its tensors share.
"""
from __future__ import annotations

import ast
from typing import Optional

from .rank_lattice import MAX_DEPTH, NUMBER, Rank, broadcast, exactly, shift
from .bindings import Element
from .shapes import DATA_CONSTRUCTORS, DIM_REDUCTIONS, ELEMENTWISE, REDUCTIONS, SHAPE_KEEPING, SIZED_CONSTRUCTORS, \
    int_value, is_number, whole_reduction

# Methods and `torch.nn.functional` functions that keep the rank of the tensor they read.
_KEEPING = SHAPE_KEEPING | frozenset({
    "clamp", "clamp_", "masked_fill", "masked_fill_", "softmax", "log_softmax", "transpose", "t", "flip",
    "roll", "exp_", "log_", "sigmoid_", "tanh_", "relu_", "zero_", "fill_", "normal_", "uniform_", "abs_",
    "neg_", "sqrt_", "multinomial"})
_FUNCTIONAL_KEEPING = frozenset({
    "softmax", "log_softmax", "relu", "relu6", "elu", "selu", "gelu", "leaky_relu", "sigmoid", "tanh",
    "softplus", "dropout", "hardtanh", "normalize", "logsigmoid", "softsign"})
# `torch.<f>(x, ...)` keeping the rank of `x`.
_TORCH_KEEPING = ELEMENTWISE | frozenset({"clamp", "softmax", "log_softmax", "transpose", "t", "flip",
                                           "zeros_like", "ones_like", "rand_like", "randn_like",
                                           "empty_like", "from_numpy", "clone"})
_NUMPY_SIZED = frozenset({"zeros", "ones", "empty"})
_FIXED = {"mm": 2, "mv": 1, "bmm": 3, "ger": 2, "outer": 2, "nonzero": 2, "masked_select": 1, "arange": 1,
          "linspace": 1, "logspace": 1, "randperm": 1}
# (values, indices) pairs: `topk` and `sort` keep the rank, the others drop the dimension.
_PAIRS_KEEPING = frozenset({"topk", "sort"})
_PAIRS_DROPPING = frozenset({"max", "min", "median", "mode", "kthvalue"})
PAIRS = _PAIRS_KEEPING | _PAIRS_DROPPING  # methods that may give a (values, indices) pair


class CallRanks:
    """The calls' half of `Ranks` (it supplies `rank`, `index`)."""

    def _pair(self, call: ast.Call, at: ast.AST, depth: int) -> Rank:
        """The rank of each tensor of `x.topk(k)`, `x.max(1)`, `torch.sort(x)`: None when not such a pair."""
        func = call.func
        qual = self.index.qual(func)
        if qual is not None and qual.startswith("torch.") and qual.count(".") == 1 and call.args:
            method, receiver, rest = qual[len("torch."):], call.args[0], call.args[1:]
        elif qual is None and isinstance(func, ast.Attribute):
            method, receiver, rest = func.attr, func.value, call.args
        else:
            return None
        keywords = {k.arg for k in call.keywords}
        if None in keywords or any(isinstance(a, ast.Starred) for a in rest):
            return None
        if method in _PAIRS_KEEPING:
            return self.rank(receiver, at, depth + 1)
        if method in _PAIRS_DROPPING and (rest or "dim" in keywords):
            keep = _keepdim(call)
            return None if keep is None else shift(self.rank(receiver, at, depth + 1), 0 if keep else -1)
        return None

    def _library(self, qual: str, call: ast.Call, at: ast.AST, depth: int) -> Rank:
        module, _, name = qual.rpartition(".")
        args = call.args
        if module == "torch.nn.functional":
            return self.rank(args[0], at, depth + 1) if name in _FUNCTIONAL_KEEPING and args else None
        if module in ("numpy", "np"):
            if name in _NUMPY_SIZED and args:
                return self._sizes([args[0]], at, depth)
            return None
        if module != "torch":
            return None
        if name in DATA_CONSTRUCTORS and len(args) == 1 and isinstance(args[0], (ast.List, ast.Tuple)):
            return _nesting(args[0])  # `torch.Tensor([mu0])`
        if name == "tensor":
            return exactly(0) if len(args) == 1 and is_number(args[0]) else None
        if name in SIZED_CONSTRUCTORS:
            return self._sizes(args, at, depth)
        if name in _FIXED:
            return exactly(_FIXED[name])
        if not args:
            return None
        if name in _TORCH_KEEPING:
            return self.rank(args[0], at, depth + 1)
        if name in ("cat", "stack"):
            rank = self._common(args[0], at, depth)
            return shift(rank, 1) if name == "stack" else rank
        if name == "gather":
            index = args[2] if len(args) > 2 else _keyword(call, "index")
            return None if index is None else self._gather(args[0], index, at, depth)
        if name in REDUCTIONS or name in ("squeeze", "unsqueeze"):
            return self._method(name, args[0], _without_first(call), at, depth)
        return None

    def _common(self, sequence: ast.AST, at: ast.AST, depth: int) -> Rank:
        """The rank every tensor `torch.cat` joins has (they must agree: each known one narrows
        it): of a list display, a comprehension, or a name bound to such lists and grown by
        `.append` (`logits = []`, `logits.append(x.unsqueeze(1))`, `torch.cat(logits, 1)`)."""
        if isinstance(sequence, (ast.ListComp, ast.GeneratorExp)):
            rank = self.rank(sequence.elt, sequence.elt, depth + 1)
            return rank if isinstance(rank, tuple) else None
        if isinstance(sequence, ast.Name):
            elements = self._grown(sequence, at)
        elif isinstance(sequence, (ast.List, ast.Tuple)):
            elements = sequence.elts
        else:
            return None
        if elements is None:
            return None
        out: Rank = None
        for e in elements:
            rank = None if isinstance(e, ast.Starred) else self.rank(e, e, depth + 1)
            if isinstance(rank, tuple):
                out = rank if out is None else (max(out[0], rank[0]), min(out[1], rank[1]))
        return out if out is None or out[0] <= out[1] else None

    def _unit_dim(self, value: ast.AST, dim: Optional[int]) -> bool:
        """Dimension `dim` of `value` certainly has size 1: `x.sum(dim, keepdim=True)`,
        `torch.sum(x, dim, keepdim=True)`, `x.max(dim, keepdim=True)[0]`, `x.unsqueeze(dim)`."""
        pair = isinstance(value, ast.Subscript) and int_value(value.slice) in (0, 1)
        if pair:
            value = value.value  # type: ignore[attr-defined]
        if dim is None or not isinstance(value, ast.Call) or not isinstance(value.func, ast.Attribute):
            return False
        method, call = value.func.attr, value
        qual = self.index.qual(value.func)
        if qual is not None:
            if qual != "torch." + method:
                return False
            call = _without_first(value)  # `torch.sum(x, 1, keepdim=True)`
        if method == "unsqueeze":
            return not pair and _dim(call) == dim
        kind = _PAIRS_DROPPING if pair else DIM_REDUCTIONS
        return method in kind and _keepdim(call) is True and _dim(call) == dim

    def _has_unit_dim(self, value: ast.AST, at: ast.AST, depth: int) -> bool:
        """Some dimension of `value` certainly has size 1: `x.view(1, -1)` (a literal 1),
        `x.unsqueeze(d)`, a `gather` by such an index (it has the index's shape), `Variable`
        of such a value, a name every binding of which is one."""
        if depth > MAX_DEPTH:
            return False
        if isinstance(value, ast.Name):
            values = self.names.bindings(value.id, at)
            return bool(values) and all(isinstance(v, ast.AST) and self._has_unit_dim(v, v, depth + 1)
                                        for v in values)
        if not isinstance(value, ast.Call):
            return False
        if self.index.is_variable(value.func) and len(value.args) == 1:
            return self._has_unit_dim(value.args[0], at, depth + 1)
        qual = self.index.qual(value.func)
        if qual == "torch.gather" and len(value.args) > 2:
            return self._has_unit_dim(value.args[2], at, depth + 1)
        if not isinstance(value.func, ast.Attribute) or qual is not None:
            return False
        method = value.func.attr
        if method == "gather" and len(value.args) > 1:
            return self._has_unit_dim(value.args[1], at, depth + 1)
        if method in ("view", "reshape") and not value.keywords:
            return any(int_value(a) == 1 for a in value.args)
        return method == "unsqueeze"

    def _grown(self, name: ast.Name, at: ast.AST) -> Optional[list]:
        """The elements of the list `name` holds where `at` reads it: those of the displays it
        is bound to and those `.append`ed to it; None when a binding is no list display or the
        list changes some other way."""
        values = self.names.bindings(name.id, at)
        added = self.names.appended(name.id, at)
        if not values or added is None or not all(isinstance(v, (ast.List, ast.Tuple)) for v in values):
            return None
        return [e for v in values for e in v.elts] + added

    def _gather(self, source: ast.AST, index: ast.AST, at: ast.AST, depth: int) -> Rank:
        """`torch.gather(x, d, idx)` has the shape of `idx`, which has as many dimensions as `x`
        (a 0-dim and a 1-dim value go together)."""
        out = self.rank(index, at, depth + 1)
        source_rank = self.rank(source, at, depth + 1)
        if not isinstance(source_rank, tuple):
            return out if isinstance(out, tuple) else None
        low, high = source_rank
        allowed = (0, max(high, 1)) if low <= 1 else source_rank
        if not isinstance(out, tuple):
            return allowed
        out = (max(out[0], allowed[0]), min(out[1], allowed[1]))
        return out if out[0] <= out[1] else None

    def _sizes(self, args: list, at: ast.AST, depth: int) -> Rank:
        """`torch.zeros(2, 3)`, `torch.zeros((2, 3))`, `np.zeros((1, size))`, `torch.Tensor(n)`:
        two sizes or more are each one integer; one alone may be a shape (`x.view(shape)`)."""
        if len(args) == 1 and isinstance(args[0], (ast.Tuple, ast.List)):
            args = args[0].elts
        if any(isinstance(a, ast.Starred) for a in args) or not args:
            return None
        if len(args) == 1 and int_value(args[0]) is None and self.rank(args[0], at, depth + 1) != NUMBER \
                and not self._counted(args[0], at):
            return None
        return exactly(len(args))

    def _counted(self, arg: ast.AST, at: ast.AST) -> bool:
        """`torch.zeros(beam_size)` where the function also runs `range(beam_size)`, or passes
        the name as one of several sizes (`torch.LongTensor(self.seq_length, beam_size)`), with
        the same bindings of the name: an integer (a shape would raise there), so one size."""
        if not isinstance(arg, ast.Name):
            return False
        index = self.index
        scope = index.function_of(at)
        bound = self.names.bindings(arg.id, at)
        if not bound:
            return False
        counting = [c for c in index.calls.get("range", ()) if isinstance(c.func, ast.Name)]
        for name in SIZED_CONSTRUCTORS:  # `torch.LongTensor(self.seq_length, beam_size)`: two sizes
            counting += [c for c in index.calls.get(name, ()) if len(c.args) > 1
                         and (index.qual(c.func) or "").startswith("torch.")]
        return any(index.function_of(call) is scope
                   and any(isinstance(a, ast.Name) and a.id == arg.id for a in call.args)
                   and _same(self.names.bindings(arg.id, call), bound) for call in counting)

    def _method(self, method: str, receiver: ast.AST, call: ast.Call, at: ast.AST, depth: int) -> Rank:
        args = call.args
        if method in ("size", "item", "numel", "dim"):
            return NUMBER if is_number(call) else None
        if method in _FIXED:
            return exactly(_FIXED[method])
        if method in ("view_as", "expand_as", "reshape_as") and len(args) == 1:
            return self.rank(args[0], at, depth + 1)
        base = self.rank(receiver, at, depth + 1)
        if base != NUMBER and method in REDUCTIONS and whole_reduction(call, method) \
                and not self.values.numpy_dot(call, at):
            return exactly(0)  # `x.mean()` of a tensor of any rank, known or not
        if base == NUMBER or base is None and method not in ("view", "reshape", "expand", "repeat"):
            return None
        if method in ("view", "reshape", "expand", "repeat"):
            if call.keywords or not args:
                return None
            return self._sizes(args, at, depth) if method != "repeat" or isinstance(base, tuple) and \
                len(args) >= base[1] else None
        if method in _KEEPING:
            return base
        if method in ("add", "sub", "mul", "div", "add_", "sub_", "mul_", "div_") and len(args) == 1:
            return broadcast(base, self.rank(args[0], at, depth + 1)) if not method.endswith("_") else base
        if method == "gather" and isinstance(base, tuple):
            index = args[1] if len(args) > 1 else _keyword(call, "index")
            return None if index is None else self._gather(receiver, index, at, depth)
        if method == "unsqueeze":
            return shift(_inserting(base, _dim(call)), 1)
        if method == "squeeze":
            if not isinstance(base, tuple):
                return None
            if not args and not call.keywords:  # drops every dimension of size 1: at least one known
                return (0, base[1] - 1) if base[1] > 0 and self._has_unit_dim(receiver, at, depth) else (0, base[1])
            return shift(base, -1) if self._unit_dim(receiver, _dim(call)) else (max(base[0] - 1, 0), base[1])
        if method in REDUCTIONS:
            if method not in DIM_REDUCTIONS or len(args) > 1:
                return None
            keep = _keepdim(call)
            dims = len(args) + sum(k.arg == "dim" for k in call.keywords)
            if keep is None or dims != 1:
                return None
            return base if keep else shift(base, -1)
        return None


def _keepdim(call: ast.Call) -> Optional[bool]:
    """`keepdim=True` given (True), not given (False), or a value volfix cannot read (None)."""
    for k in call.keywords:
        if k.arg == "keepdim":
            return k.value.value if isinstance(k.value, ast.Constant) and type(k.value.value) is bool else None
    return False


def _keyword(call: ast.Call, name: str) -> Optional[ast.AST]:
    return next((k.value for k in call.keywords if k.arg == name), None)


def _dim(call: ast.Call) -> Optional[int]:
    """The literal dimension a method call takes first (`x.squeeze(1)`, `x.sum(dim=1)`)."""
    dim = call.args[0] if call.args else _keyword(call, "dim")
    return None if dim is None else int_value(dim)


def _inserting(rank: Rank, dim: Optional[int]) -> Rank:
    """The rank `x` has when `x.unsqueeze(dim)` runs: a new dimension at `dim` needs `dim`
    dimensions before it (`-dim - 1` when counted from the end)."""
    if dim is None or not isinstance(rank, tuple):
        return rank
    need = dim if dim >= 0 else -dim - 1
    return (max(rank[0], need), rank[1]) if need <= rank[1] else None


def _without_first(call: ast.Call) -> ast.Call:
    """`torch.sum(x, 0)` read as `x.sum(0)`."""
    out = ast.Call(func=call.func, args=call.args[1:], keywords=call.keywords)
    return ast.copy_location(out, call)


def _nesting(data: ast.AST) -> Rank:
    """The rank of a nested list of numbers (`[[1, 2], [3, 4]]`: 2)."""
    if not isinstance(data, (ast.List, ast.Tuple)):
        return exactly(0)
    if not data.elts:
        return exactly(1)
    inner = {_nesting(e) for e in data.elts}
    if len(inner) != 1 or None in inner:
        return None
    return shift(inner.pop(), 1)


def _same(one: list, other: list) -> bool:
    """The same bindings (by identity; a parameter's None, an `Element`'s loop)."""
    return len(one) == len(other) and all(
        a is b or a is None and b is None or isinstance(a, Element) and isinstance(b, Element)
        and a.iterable is b.iterable and a.path == b.path for a, b in zip(one, other))
