"""How many dimensions a tensor has today (PyTorch >= 0.4), read from syntax: a range of
ranks, so that a chain of steps can end in a certain 0-dim value.

`p[targets[idx].data]` is 0-dim when `p` has one dimension: `p` is an element of
`enumerate(softmax(output.view(-1, ntokens)))` (2-dim, so its rows have one), or the sum of
such a row and `ptr_dist`, a `.sum(0).squeeze()` of a 2-dim value times a number. `flow.scalars`
asks this module when its own rules (losses, reductions) cannot tell.

A rank is a `(low, high)` range; `NUMBER` is a Python number (or another value that is no
tensor: an `argparse` option), which broadcasts as a 0-dim value; `CYCLE` is a value still
being computed (`c = c * beta + x`), which only rank-keeping steps pass on (a binding made of
it adds nothing to the name's other bindings); None is unknown. Every rule reads PyTorch's
documented shapes: a reduction over one dimension drops it (without `keepdim`), an integer
index drops one, a slice keeps it, `None` adds one, `view`/`reshape` has as many as it is
given sizes, arithmetic broadcasts to the larger rank. An index that is a 0-dim tensor is
taken as an integer (a 0-dim bool mask would add a dimension: no legacy code indexes so).
"""
from __future__ import annotations

import ast
from typing import Optional, Set, Tuple, Union

from ..syntax import names as nm
from .bindings import Element, Unpacked
from .calls import bound_positional, call_sites, parameter_defaults, passed_argument
from .shapes import DIM_REDUCTIONS, ELEMENTWISE, REDUCTIONS, SHAPE_KEEPING, int_value, is_none, is_number, \
    own_returns, whole_reduction

INF = 64  # more dimensions than any tensor has
NUMBER = "number"
CYCLE = "cycle"
Rank = Union[None, str, Tuple[int, int]]
UNKNOWN_TENSOR = (0, INF)

# Methods and `torch.nn.functional` functions that keep the rank of the tensor they read.
_KEEPING = SHAPE_KEEPING | frozenset({
    "clamp", "clamp_", "masked_fill", "masked_fill_", "softmax", "log_softmax", "transpose", "t", "flip",
    "roll", "exp_", "log_", "sigmoid_", "tanh_", "relu_", "zero_", "fill_", "normal_", "uniform_", "abs_",
    "neg_", "sqrt_"})
_FUNCTIONAL_KEEPING = frozenset({
    "softmax", "log_softmax", "relu", "relu6", "elu", "selu", "gelu", "leaky_relu", "sigmoid", "tanh",
    "softplus", "dropout", "hardtanh", "normalize", "logsigmoid", "softsign"})
# `torch.<f>(x, ...)` keeping the rank of `x`.
_TORCH_KEEPING = ELEMENTWISE | frozenset({"clamp", "softmax", "log_softmax", "transpose", "t", "flip",
                                           "zeros_like", "ones_like", "rand_like", "randn_like",
                                           "empty_like", "from_numpy", "clone"})
# `torch.<f>(*sizes)` and NumPy's `np.<f>(shape)`: as many dimensions as sizes.
_SIZED = frozenset({"zeros", "ones", "rand", "randn", "empty", "Tensor", "FloatTensor", "DoubleTensor",
                    "LongTensor", "IntTensor", "ByteTensor", "HalfTensor", "BoolTensor"})
_FROM_DATA = frozenset({"Tensor", "FloatTensor", "DoubleTensor", "LongTensor", "IntTensor", "ByteTensor",
                        "HalfTensor", "BoolTensor", "tensor"})
_NUMPY_SIZED = frozenset({"zeros", "ones", "empty"})
_FIXED = {"mm": 2, "mv": 1, "bmm": 3, "ger": 2, "outer": 2, "nonzero": 2, "masked_select": 1, "arange": 1,
          "linspace": 1, "logspace": 1, "randperm": 1}
# (values, indices) pairs: `topk` and `sort` keep the rank, the others drop the dimension.
_PAIRS_KEEPING = frozenset({"topk", "sort"})
_PAIRS_DROPPING = frozenset({"max", "min", "median", "mode", "kthvalue"})
MAX_DEPTH = 24
_LOADERS = frozenset({"torch.utils.data.DataLoader", "torch.utils.data.dataloader.DataLoader"})
# torchvision datasets whose target is a class number (collated into a 1-dim batch).
_LABELLED_DATASETS = frozenset(f"torchvision.datasets.{name}" for name in (
    "MNIST", "FashionMNIST", "KMNIST", "EMNIST", "CIFAR10", "CIFAR100", "SVHN", "STL10", "USPS",
    "ImageFolder"))


def _join(a: Rank, b: Rank) -> Rank:
    """What a name bound to `a` or `b` holds."""
    if a == CYCLE:
        return b
    if b == CYCLE:
        return a
    if a is None or b is None:
        return None
    if a == NUMBER or b == NUMBER:
        return NUMBER if a == b else None
    return (min(a[0], b[0]), max(a[1], b[1]))


def _broadcast(a: Rank, b: Rank) -> Rank:
    """`a + b`: the larger rank (a number adds none; a value still being computed adds what
    the other side has: `c = c * beta + x` is what `x` makes of the name's other bindings)."""
    if a is None or b is None:
        return None
    if a == NUMBER:
        return b
    if b == NUMBER or b == CYCLE:
        return a
    if a == CYCLE:
        return b
    return (max(a[0], b[0]), max(a[1], b[1]))


def _shift(rank: Rank, by: int) -> Rank:
    if not isinstance(rank, tuple):
        return None
    low, high = rank[0] + by, min(INF, rank[1] + by)
    if high < 0:
        return None
    return (max(low, 0), high)


def _exact(n: int) -> Tuple[int, int]:
    return (n, n)


class Ranks:
    """The ranks of one module's expressions, for `ScalarValues` (`values`)."""

    def __init__(self, values) -> None:
        self.values = values
        self.index = values.index
        self.names = values.names
        self._memo: dict = {}
        self._active: Set[str] = set()
        self._cycles = 0

    def exact(self, expr: ast.AST, at: ast.AST, depth: int = 0) -> Optional[int]:
        """The rank of the tensor `expr`, when it is certain."""
        rank = self.rank(expr, at, depth)
        return rank[0] if isinstance(rank, tuple) and rank[0] == rank[1] else None

    def rank(self, expr: ast.AST, at: ast.AST, depth: int = 0) -> Rank:
        if depth > MAX_DEPTH:
            return None
        if is_number(expr):
            return NUMBER
        if isinstance(expr, ast.Constant):
            return NUMBER if type(expr.value) in (int, float, bool) else None
        if isinstance(expr, ast.Name):
            return self._name(expr.id, at, depth)
        if isinstance(expr, ast.Attribute):
            if expr.attr == "data":
                return self.rank(expr.value, at, depth + 1)
            if self._options(expr.value, at) or self.values.scalar(expr, at, depth + 1):
                return NUMBER  # `args.lambdasm`, `self.k = 0.`
            return None
        if isinstance(expr, ast.BinOp):
            if isinstance(expr.op, ast.MatMult):
                return None
            return _broadcast(self.rank(expr.left, at, depth + 1), self.rank(expr.right, at, depth + 1))
        if isinstance(expr, ast.UnaryOp):
            return self.rank(expr.operand, at, depth + 1)
        if isinstance(expr, ast.IfExp):
            sides = [s for s in (expr.body, expr.orelse) if not is_none(s)]
            out: Rank = CYCLE
            for side in sides:
                out = _join(out, self.rank(side, at, depth + 1))
            return None if out == CYCLE else out
        if isinstance(expr, ast.Subscript):
            return self._subscript(expr, at, depth)
        if isinstance(expr, ast.Call):
            return self._call(expr, at, depth)
        return None

    # names

    def _name(self, name: str, at: ast.AST, depth: int) -> Rank:
        key = f"{self.names.key(name, at)} {id(self.index.statement_of(at))}"
        if key in self._active:
            self._cycles += 1
            return CYCLE
        if key in self._memo:
            return self._memo[key]
        self._active.add(key)
        cycles = self._cycles
        try:
            result = self._bound(name, at, depth)
        finally:
            self._active.discard(key)
        if self._cycles == cycles:  # an answer resting on no assumption is kept
            self._memo[key] = result
        return result

    def _bound(self, name: str, at: ast.AST, depth: int) -> Rank:
        values = [v for v in self.names.bindings(name, at) if not is_none(v)]
        assigned: Rank = CYCLE
        scope = self.index.function_of(at)
        if values and values[-1] is None and name in nm.function_params(scope):  # a parameter
            assigned = self._parameter(scope, name, depth)
            values = values[:-1]
        if not values and assigned == CYCLE or any(v is None for v in values) or assigned is None:
            return None
        augmented = []
        for v in values:
            if isinstance(v, Element):
                rank = self._element(v.iterable, v.path, v.iterable, depth + 1)
            elif isinstance(v, Unpacked):
                rank = self._item(v.value, v.path, v.value, depth + 1)
            elif isinstance(self.index.parents.get(v), ast.AugAssign):
                augmented.append(v)
                continue
            else:
                rank = self.rank(v, v, depth + 1)
            assigned = _join(assigned, rank)
            if assigned is None:
                return None
        for v in augmented:  # `T += dt` keeps a tensor's shape (in place); `total = 0; total += t` takes t's
            if assigned == NUMBER:
                assigned = _join(assigned, self.rank(v, v, depth + 1))
            elif not isinstance(assigned, tuple):
                return None
        return None if assigned == CYCLE else assigned

    def _parameter(self, fn: ast.AST, name: str, depth: int) -> Rank:
        """What the calls of `fn` in this file pass for `name` (its default where they pass
        nothing; a None passed or defaulted never reaches a tensor operation: `if x is None`).
        Only in a program (a notebook, or a script run as `__main__`), for a module-level function
        called by its name alone, so that no other file's call can pass something else."""
        if not self._program() or not isinstance(self.index.parents.get(fn), ast.Module):
            return None
        sites = self._sites(fn)
        if not sites:
            return None
        positional, defaults = bound_positional(fn, method=False), parameter_defaults(fn)
        out: Rank = CYCLE
        for call in sites:
            arg, known = passed_argument(call, positional, name)
            if not known:
                return None
            if arg is None and name not in defaults:
                return None
            arg = defaults[name] if arg is None else arg
            if not is_none(arg):
                out = _join(out, self.rank(arg, call, depth + 1))
        return out

    def _sites(self, fn: ast.AST) -> Optional[list]:
        """The calls of the module-level `fn` by its name; None when its name is used otherwise
        (passed as a value), or bound otherwise. A name that top-level defs bind again (a
        notebook's cells redefining `f`) calls the def before it, read only at the top level."""
        name = fn.name  # type: ignore[attr-defined]
        if self.values._module_def(name, fn) is fn:
            sites, other = call_sites(self.index, fn)
            return None if other else sites
        statements = self.index.module_statements
        position = {id(s): k for k, s in enumerate(statements)}
        index = self.index
        defs = [s for s in statements if isinstance(s, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef))
                and s.name == name or isinstance(s, (ast.Import, ast.ImportFrom))
                and any(bound == name for bound, _ in nm.import_bindings(s))]
        defs += [index.statement_of(n) for n in index.names.get(name, ())
                 if not isinstance(n.ctx, ast.Load) and index.function_of(n) is index.tree]
        if not all(isinstance(d, ast.FunctionDef) and isinstance(index.parents.get(d), ast.Module) for d in defs):
            return None
        defs.sort(key=lambda d: position[id(d)])
        sites = []
        for node in index.names.get(name, ()):
            if not isinstance(node.ctx, ast.Load):
                continue
            own = index.statement_of(node)
            if id(own) not in position:
                return None  # inside a def or a class: which def it calls is not read
            before = [d for d in defs if position[id(d)] < position[id(own)]]
            if before and before[-1] is fn:
                parent = index.parents.get(node)
                if not (isinstance(parent, ast.Call) and parent.func is node):
                    return None
                sites.append(parent)
        return sites

    def _program(self) -> bool:
        if self.index.notebook:
            return True
        return any(isinstance(s, ast.If) and isinstance(s.test, ast.Compare) and ast.unparse(s.test).replace(
            "'", '"') in ('__name__ == "__main__"', '"__main__" == __name__') for s in self.index.module_statements)

    def _options(self, expr: ast.AST, at: ast.AST) -> bool:
        """`args` bound only to `parser.parse_args()`: its attributes are options, no tensors."""
        if not isinstance(expr, ast.Name):
            return False
        values = self.names.bindings(expr.id, at)
        return bool(values) and all(
            isinstance(v, ast.Call) and isinstance(v.func, ast.Attribute) and v.func.attr == "parse_args"
            for v in values)

    # iteration and unpacking

    def _element(self, iterable: ast.AST, path: Tuple[int, ...], at: ast.AST, depth: int) -> Rank:
        """The part at `path` of an element of `iterable`."""
        if depth > MAX_DEPTH:
            return None
        if isinstance(iterable, ast.Call) and not iterable.keywords and not any(
                isinstance(a, ast.Starred) for a in iterable.args):
            func, args = iterable.func, iterable.args
            if self.values._builtin(func, "range", at) or self.values._builtin(func, "xrange", at):
                return NUMBER if not path else None  # `xrange`: Python 2 code
            if self.values._builtin(func, "enumerate", at) and len(args) == 1 and path:
                return NUMBER if path == (0,) else self._element(args[0], path[1:], at, depth + 1) \
                    if path[0] == 1 else None
            if self.values._builtin(func, "zip", at) and path:
                return self._element(args[path[0]], path[1:], at, depth + 1) if path[0] < len(args) else None
        if isinstance(iterable, (ast.ListComp, ast.GeneratorExp)):
            return self._item(iterable.elt, path, iterable.elt, depth + 1)
        if isinstance(iterable, (ast.List, ast.Tuple)):
            out: Rank = CYCLE
            for e in iterable.elts:
                out = None if isinstance(e, ast.Starred) else _join(out, self._item(e, path, e, depth + 1))
            return None if out == CYCLE else out
        if path:
            return _exact(1) if path == (1,) and self._labelled_loader(iterable, at) else None
        rank = self.rank(iterable, at, depth + 1)  # the rows of a tensor
        return _shift(rank, -1) if isinstance(rank, tuple) and rank[0] >= 1 else None

    def _labelled_loader(self, loader: ast.AST, at: ast.AST) -> bool:
        """A `DataLoader` (default collation) of a torchvision dataset whose targets are class
        numbers (`dset.MNIST(...)` without `target_transform`): its label batches are 1-dim."""
        call = self._made_by(loader, at, _LOADERS)
        if call is None or not call.args:
            return False
        dataset = self._made_by(call.args[0], call, _LABELLED_DATASETS)
        return dataset is not None and len(dataset.args) <= 2  # not a positional `target_transform`

    def _made_by(self, expr: ast.AST, at: ast.AST, quals: frozenset) -> Optional[ast.Call]:
        """The call of one of `quals` that `expr` is (or the one value of the name `expr`),
        when it keeps the default collation, batching and targets."""
        values = [expr] if isinstance(expr, ast.Call) else self.names.of(expr, at)
        if not values or len(values) != 1 or not isinstance(values[0], ast.Call):
            return None
        call = values[0]
        if self.index.qual(call.func) not in quals or any(isinstance(a, ast.Starred) for a in call.args):
            return None
        for k in call.keywords:
            if k.arg is None or k.arg in ("collate_fn", "target_transform") and not is_none(k.value):
                return None
            if k.arg == "batch_size" and is_none(k.value):
                return None  # unbatched: each label a number
        return call

    def _item(self, value: ast.AST, path: Tuple[int, ...], at: ast.AST, depth: int) -> Rank:
        """The item of `value` at `path` (`values, indices = s.topk(k)`)."""
        if not path:
            return self.rank(value, at, depth)
        if isinstance(value, ast.Tuple) and not any(isinstance(e, ast.Starred) for e in value.elts):
            return self._item(value.elts[path[0]], path[1:], at, depth + 1) if path[0] < len(value.elts) else None
        if len(path) == 1 and isinstance(value, ast.Call):
            pair = self._pair(value, at, depth)
            if pair is not None:
                return pair if path[0] in (0, 1) else None
            func = value.func
            if isinstance(func, ast.Attribute) and func.attr == "size" and not value.args:
                return NUMBER  # `b, n = x.size()`
        if len(path) == 1 and self.values.item(value, path, at, depth + 1, set(), self.values.one_dim):
            return _exact(1)  # `data, targets = get_batch(...)` (here or in another file)
        return None

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
            if _keepdim(call) is None:
                return None
            return _shift(self.rank(receiver, at, depth + 1), 0 if _keepdim(call) else -1)
        return None

    # indexing

    def _subscript(self, expr: ast.Subscript, at: ast.AST, depth: int) -> Rank:
        value = expr.value
        if isinstance(value, ast.Call) and self._pair(value, at, depth) is not None:
            k = int_value(expr.slice)
            return self._pair(value, at, depth) if k in (0, 1, -1, -2) else None  # `x.max(1)[1]`
        base = self.rank(value, at, depth + 1)
        if not isinstance(base, tuple) and base != CYCLE:
            return None
        parts = expr.slice.elts if isinstance(expr.slice, ast.Tuple) else [expr.slice]
        change = 0
        for part in parts:
            if isinstance(part, ast.Slice):
                continue
            if isinstance(part, ast.Constant) and part.value is None:
                change += 1
            elif isinstance(part, ast.Constant) and part.value is Ellipsis:
                continue
            else:
                index = self.rank(part, at, depth + 1)
                if index == NUMBER or index == (0, 0):  # an integer, or a 0-dim (integer) tensor
                    change -= 1
                else:
                    return None
        if base == CYCLE:
            return CYCLE if change == 0 else None
        if base[0] < -change and base[1] < INF:
            base = (-change, base[1])  # indexing that many dimensions needs them
        return _shift(base, change)

    # calls

    def _call(self, call: ast.Call, at: ast.AST, depth: int) -> Rank:
        func = call.func
        if any(isinstance(a, ast.Starred) for a in call.args) or any(k.arg is None for k in call.keywords):
            return None
        qual = self.index.qual(func)
        if self.index.is_variable(func):  # `Variable(t, volatile=True)`
            return self.rank(call.args[0], at, depth + 1) if call.args else None
        if qual is not None:
            return self._library(qual, call, at, depth)
        if isinstance(func, ast.Attribute):
            return self._method(func.attr, func.value, call, at, depth)
        fn = self.values.project_callee(func, at)
        if fn is not None:
            return self._returns(fn, depth)
        return None

    def _returns(self, fn: ast.AST, depth: int) -> Rank:
        """What every `return` of a def of this module gives (`one_hot(idx, n)`)."""
        key = f"def {id(fn)}"
        if key in self._active:
            self._cycles += 1
            return CYCLE
        if key in self._memo:
            return self._memo[key]
        self._active.add(key)
        cycles = self._cycles
        out: Rank = CYCLE
        try:
            for node in own_returns(fn):
                out = None if node.value is None else _join(out, self.rank(node.value, node.value, depth + 1))
                if out is None:
                    break
        finally:
            self._active.discard(key)
        out = None if out == CYCLE else out
        if self._cycles == cycles:
            self._memo[key] = out
        return out

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
        if name in _FROM_DATA and len(args) == 1 and isinstance(args[0], (ast.List, ast.Tuple)):
            return _nesting(args[0])  # `torch.Tensor([mu0])`
        if name == "tensor":
            return _exact(0) if len(args) == 1 and is_number(args[0]) else None
        if name in _SIZED:
            return self._sizes(args, at, depth)
        if name in _FIXED:
            return _exact(_FIXED[name])
        if not args:
            return None
        if name in _TORCH_KEEPING:
            return self.rank(args[0], at, depth + 1)
        if name in ("cat", "stack"):
            rank = self._common(args[0], at, depth)
            return _shift(rank, 1) if name == "stack" else rank
        if name in REDUCTIONS or name in ("squeeze", "unsqueeze"):
            return self._method(name, args[0], _without_first(call), at, depth)
        return None

    def _common(self, sequence: ast.AST, at: ast.AST, depth: int) -> Rank:
        """The rank every tensor `torch.cat` joins has (they must agree: the first known decides)."""
        if isinstance(sequence, (ast.ListComp, ast.GeneratorExp)):
            rank = self.rank(sequence.elt, sequence.elt, depth + 1)
            return rank if isinstance(rank, tuple) else None
        if not isinstance(sequence, (ast.List, ast.Tuple)):
            return None
        out: Rank = None
        for e in sequence.elts:
            rank = None if isinstance(e, ast.Starred) else self.rank(e, e, depth + 1)
            if isinstance(rank, tuple):
                out = rank if out is None else (max(out[0], rank[0]), min(out[1], rank[1]))
        return out if out is None or out[0] <= out[1] else None

    def _sizes(self, args: list, at: ast.AST, depth: int) -> Rank:
        """`torch.zeros(2, 3)`, `torch.zeros((2, 3))`, `np.zeros((1, size))`, `torch.Tensor(n)`:
        two sizes or more are each one integer; one alone may be a shape (`x.view(shape)`)."""
        if len(args) == 1 and isinstance(args[0], (ast.Tuple, ast.List)):
            args = args[0].elts
        if any(isinstance(a, ast.Starred) for a in args) or not args:
            return None
        if len(args) == 1 and int_value(args[0]) is None and self.rank(args[0], at, depth + 1) != NUMBER:
            return None
        return _exact(len(args))

    def _method(self, method: str, receiver: ast.AST, call: ast.Call, at: ast.AST, depth: int) -> Rank:
        args = call.args
        if method in ("size", "item", "numel", "dim"):
            return NUMBER if is_number(call) else None
        if method in _FIXED:
            return _exact(_FIXED[method])
        if method in ("view_as", "expand_as", "reshape_as") and len(args) == 1:
            return self.rank(args[0], at, depth + 1)
        base = self.rank(receiver, at, depth + 1)
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
            return _broadcast(base, self.rank(args[0], at, depth + 1)) if not method.endswith("_") else base
        if method == "unsqueeze":
            return _shift(base, 1)
        if method == "squeeze":
            if not isinstance(base, tuple):
                return None
            return (0, base[1]) if not args and not call.keywords else (max(base[0] - 1, 0), base[1])
        if method in REDUCTIONS:
            if whole_reduction(call, method):
                return _exact(0)
            if method not in DIM_REDUCTIONS or len(args) > 1:
                return None
            keep = _keepdim(call)
            dims = len(args) + sum(k.arg == "dim" for k in call.keywords)
            if keep is None or dims != 1:
                return None
            return base if keep else _shift(base, -1)
        return None


def _keepdim(call: ast.Call) -> Optional[bool]:
    """`keepdim=True` given (True), not given (False), or a value volfix cannot read (None)."""
    for k in call.keywords:
        if k.arg == "keepdim":
            return k.value.value if isinstance(k.value, ast.Constant) and type(k.value.value) is bool else None
    return False


def _without_first(call: ast.Call) -> ast.Call:
    """`torch.sum(x, 0)` read as `x.sum(0)`."""
    out = ast.Call(func=call.func, args=call.args[1:], keywords=call.keywords)
    return ast.copy_location(out, call)


def _nesting(data: ast.AST) -> Rank:
    """The rank of a nested list of numbers (`[[1, 2], [3, 4]]`: 2)."""
    if not isinstance(data, (ast.List, ast.Tuple)):
        return _exact(0)
    if not data.elts:
        return _exact(1)
    inner = {_nesting(e) for e in data.elts}
    if len(inner) != 1 or None in inner:
        return None
    return _shift(inner.pop(), 1)
