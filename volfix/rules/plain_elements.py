"""Plain tensors and their elements, for VF405, VF406, VF408 and VF411: 0.3's `torch.FloatTensor` & co.
(what `.data` gives, or a constructor makes), whose element was a Python number where today it
is a 0-dim tensor (a view of the tensor, hashed by identity)."""
import ast
import re
from typing import Optional

from ..flow.bindings import Element, Unpacked
from ..flow.calls import bound_positional, call_sites, passed_argument
from ..flow.rank_calls import PAIRS
from ..flow.scalar_callees import own_def
from ..flow.scalars import ScalarValues
from ..flow.shapes import own_returns
from ..model import Applicability
from ..syntax import names as nm

# Methods of a tensor whose result (or each item of it, `topv, topi = x.topk(1)`) is a tensor
# of the receiver's kind: a plain tensor's gives a plain tensor.
_TENSOR_STEPS = frozenset({
    "topk", "max", "min", "sort", "kthvalue", "mode", "median", "argmax", "argmin", "cpu", "cuda", "long",
    "int", "float", "double", "squeeze", "unsqueeze", "view", "view_as", "reshape", "t", "transpose", "contiguous",
    "clone", "exp", "log", "div", "mul", "add", "sub", "abs", "nonzero", "eq", "ne", "gt", "lt", "ge", "le",
    "multinomial", "type", "type_as", "index_select", "gather", "masked_select", "flip", "permute", "sum", "cumsum",
})
_TORCH_STEPS = frozenset({"torch." + m for m in _TENSOR_STEPS})
_CONSTRUCTORS = frozenset({"torch." + c for c in (
    "Tensor", "FloatTensor", "DoubleTensor", "LongTensor", "IntTensor", "ByteTensor", "from_numpy", "arange",
    "randperm", "cuda.LongTensor", "cuda.FloatTensor")})
# The names a file spells when it may hold a plain tensor (VF405, VF406).
ELEMENT_NAMES = frozenset({"data", "Tensor", "FloatTensor", "DoubleTensor", "LongTensor", "IntTensor", "ByteTensor",
                           "from_numpy", "arange", "randperm"})
_MAX_DEPTH = 8
_HOLDER = re.compile(r"(?:data|dataset|set|loader|corpus|reader|split)$")


class PlainElements:
    """What one module says about a key or a name: an element of a plain tensor."""

    def __init__(self, index) -> None:
        self.index = index
        self.scalars = scalars = ScalarValues(index)
        self.names, self.ranks = scalars.names, scalars.ranks

    def element(self, key: ast.AST, at: ast.AST, depth: int = 0) -> bool:
        """`key` is an element of a plain tensor (`plain`): integer indexing of one, an
        element of a loop over one, or a name bound only to those where `at` reads it."""
        if depth > _MAX_DEPTH:
            return False
        if isinstance(key, ast.Subscript):
            # (not `[0]` of a 0-dim value, which raises today: VF401's `.data[0][0]`)
            return _integer_index(key.slice) and self.plain(key.value, at, depth + 1) \
                and self.ranks.exact(key.value, at) != 0
        if isinstance(key, ast.Name):
            bound = self.names.bindings(key.id, at)
            return bool(bound) and all(self._element_binding(b, at, depth + 1) for b in bound)
        return False

    def _element_binding(self, bound, at: ast.AST, depth: int) -> bool:
        # the names a bound value reads are read where it stands: `token_id = token_id[0][0]`
        # reads the `topk` result, not itself
        if isinstance(bound, Element):
            return self._loop_item(bound.iterable, bound.path, bound.iterable, depth)
        return isinstance(bound, ast.AST) and self.element(bound, bound, depth)

    def _loop_item(self, iterable: ast.AST, path, at: ast.AST, depth: int) -> bool:
        """`for w in indices.data:` or `for i, w in enumerate(indices.data):`. (A row of a
        tensor with more dimensions was a tensor in 0.3 too, and found no key either.)"""
        if isinstance(iterable, ast.Call) and isinstance(iterable.func, ast.Name) and iterable.func.id == "enumerate" \
                and path == (1,) and len(iterable.args) == 1:
            return self.plain(iterable.args[0], at, depth + 1)
        return not path and self.plain(iterable, at, depth + 1)

    def plain(self, expr: ast.AST, at: ast.AST, depth: int = 0) -> bool:
        """`expr` is a tensor read from `.data` or made by a constructor (0.3's plain tensor,
    whose elements were numbers)."""
        if depth > _MAX_DEPTH:
            return False
        if isinstance(expr, ast.Attribute):
            return expr.attr == "data" and not _holder(expr.value)
        if isinstance(expr, ast.Subscript):
            return self.plain(expr.value, at, depth + 1)
        if isinstance(expr, ast.Call):
            func = expr.func
            qual = self.index.qual(func)
            if qual in _TORCH_STEPS and expr.args:  # `torch.multinomial(prob, 1)`: before the method form
                return self.plain(expr.args[0], at, depth + 1)
            if isinstance(func, ast.Attribute) and func.attr in _TENSOR_STEPS:
                return self.plain(func.value, at, depth + 1)
            if qual in _CONSTRUCTORS:  # `torch.LongTensor(ids)`: a tensor in 0.3 too
                return True
            return self._plain_call(expr, at, depth)
        if isinstance(expr, ast.Name):
            bound = self.names.bindings(expr.id, at)
            if all(b is None for b in bound):  # (a parameter's binding is no value)
                return self._plain_parameter(expr, depth)
            return all(self._plain_binding(b, at, depth + 1) for b in bound)
        return False

    def one_element(self, key: ast.AST, at: ast.AST, depth: int = 0) -> bool:
        """An `element` that certainly reads one element: its tensor's rank is known and equals
        the integers that index it (`t[j]` of a 1-dim `t`; each `w` of `for w in t` of a
        1-dim `t`), also through a parameter every call fills with tensors of that rank."""
        if depth > _MAX_DEPTH:
            return False
        if isinstance(key, ast.Subscript):
            count = len(key.slice.elts) if isinstance(key.slice, ast.Tuple) else 1
            return self._rank(key.value, at, depth + 1) == count
        if isinstance(key, ast.Name):
            bound = self.names.bindings(key.id, at)
            return bool(bound) and all(self._one_element_binding(b, at, depth + 1) for b in bound)
        return False

    def _one_element_binding(self, bound, at: ast.AST, depth: int) -> bool:
        if isinstance(bound, Element):
            iterable = bound.iterable
            if isinstance(iterable, ast.Call) and isinstance(iterable.func, ast.Name) \
                    and iterable.func.id == "enumerate" and bound.path == (1,) and len(iterable.args) == 1:
                iterable = iterable.args[0]
            elif bound.path:
                return False
            return self._rank(iterable, bound.iterable, depth) == 1
        return isinstance(bound, ast.AST) and self.one_element(bound, bound, depth)

    def _rank(self, expr: ast.AST, at: ast.AST, depth: int):
        """`ranks.exact`, and for a parameter (`_plain_parameter`'s), the rank every call passes."""
        rank = self.ranks.exact(expr, at)
        if rank is not None or not isinstance(expr, ast.Name) or depth > _MAX_DEPTH \
                or not all(b is None for b in self.names.bindings(expr.id, at)):
            return rank
        passed = self._passed(expr)
        ranks = {self._rank(arg, site, depth + 1) for arg, site in passed or ()}
        return ranks.pop() if len(ranks) == 1 else None

    def _passed(self, name: ast.Name):
        """(argument, call) of every call of the function whose parameter `name` is, when the
        function is used by calls only and never binds the name again; else None."""
        fn = self.index.function_of(name)
        if not isinstance(fn, (ast.FunctionDef, ast.AsyncFunctionDef)) or name.id not in nm.function_params(fn) \
                or any(isinstance(n, ast.Name) and n.id == name.id and not isinstance(n.ctx, ast.Load)
                       for n in ast.walk(fn)):
            return None
        sites, other = call_sites(self.index, fn)
        if not sites or other:
            return None
        positional = bound_positional(fn, self.index.method_class(fn) is not None)
        out = []
        for site in sites:
            arg, _ = passed_argument(site, positional, name.id)
            if arg is None:
                return None
            out.append((arg, site))
        return out

    def _plain_call(self, call: ast.Call, at: ast.AST, depth: int) -> bool:
        """A constructor under a name of the module (`longTensor = torch.cuda.LongTensor if
        use_cuda else torch.LongTensor`, then `longTensor([[a]])`), or a function or a method
        of an instance of the module's class every `return` of which gives a plain tensor (a
        DQN's `dqn.action(state)`, returning `...data.max(1)[1].view(1, 1)` or
        `longTensor([[random.randrange(2)]])`)."""
        func = call.func
        if isinstance(func, ast.Name):
            bound = self.names.bindings(func.id, at)
            if bound and all(isinstance(b, ast.AST) and not isinstance(b, Unpacked)
                             and self.index.qual(b) in _CONSTRUCTORS for b in bound):
                return True
            fn = self.index.module_def(func.id, call)
        elif isinstance(func, ast.Attribute):
            classes = self.scalars.instance_classes(func.value, at)
            defs = [own_def(c, func.attr) if isinstance(c, ast.ClassDef) else None for c in classes or ()]
            fn = defs[0] if defs and all(d is not None and d is defs[0] for d in defs) else None
        else:
            fn = None
        if not isinstance(fn, ast.FunctionDef) or fn.decorator_list:
            return False
        returns = [r.value for r in own_returns(fn)]
        return bool(returns) and all(r is not None and self.plain(r, r, depth + 1) for r in returns)

    def _plain_parameter(self, name: ast.Name, depth: int) -> bool:
        """A parameter of the function reading it, never bound there again, that every call
        of the function in this file fills with a plain tensor (`to_string(x)` after `x =
        torch.randperm(n)`), when the function is used by calls only."""
        passed = self._passed(name)
        return bool(passed) and all(self.plain(arg, site, depth + 1) for arg, site in passed)

    def number_read(self, element: ast.AST, at: ast.AST) -> Optional[bool]:
        """For a rule that would read `element` as 0.3's number (`element.item()`, VF408 and
        VF411): None when it is no element of a plain tensor, or one read by a single integer
        from a tensor of unknown rank (as likely a row, which 0.3 gave as a tensor too); True
        when it certainly reads one element (`one_element`: a safe fix); False when two
        integers or more read it from a tensor of unknown rank (an unsafe fix,
        `UNKNOWN_RANK_NOTE`)."""
        if not self.element(element, at):
            return None
        if self.one_element(element, at):
            return True
        bound = self.names.bindings(element.id, at) if isinstance(element, ast.Name) else ()
        return False if indices_of(element, bound) >= 2 else None

    def _plain_binding(self, bound, at: ast.AST, depth: int) -> bool:
        if isinstance(bound, Unpacked):
            # `topv, topi = x.data.topk(1)`: each item of a plain tensor's sort, max or topk
            return len(bound.path) == 1 and self._splits(bound.value) and self.plain(bound.value, bound.value, depth)
        return isinstance(bound, ast.AST) and self.plain(bound, bound, depth)

    @staticmethod
    def _splits(value: ast.AST) -> bool:
        func = value.func if isinstance(value, ast.Call) else None
        return isinstance(func, ast.Attribute) and func.attr in PAIRS


def report_number_read(ctx, code: str, title: str, element: ast.AST, certain: bool, refused: str) -> None:
    """VF408's and VF411's finding: `element` (a `number_read` that is not None), where 0.3
    gave a number and today a 0-dim tensor is `refused` (what the code does with it fails),
    becomes `element.item()`: safe when `certain`, else unsafe with `UNKNOWN_RANK_NOTE`."""
    text, number = ctx.src.segment(element), f"{ctx.expr.attr_base(element)}.item()"
    ctx.report(code, element,
               message=f"`{text}` is a tensor element, a 0-dim tensor since PyTorch 0.4, not a number: {refused}; "
                       f"use `{number}`",
               note=None if certain else UNKNOWN_RANK_NOTE.format(text),
               fix=ctx.edit_fix(Applicability.SAFE if certain else Applicability.UNSAFE, title,
                                ctx.expr.replace(element, number)))


# The note of a `number_read` that is False.
UNKNOWN_RANK_NOTE = ("unsafe fix: volfix cannot tell the tensor's rank: if `{}` is a row of a tensor with more "
                     "dimensions, `.item()` raises")


def indices_of(element: ast.AST, bound=()) -> int:
    """How many integers index the element's tensor: `d[0, i, j, 0]` 4, `topi[0][0]` 2; for a
    name, the fewest of the values `bound` to it (`score = detections[0, i, j, 0]`)."""
    if isinstance(element, ast.Name):
        counts = [indices_of(b) if isinstance(b, ast.AST) else 0 for b in bound]
        return min(counts) if counts else 0
    count = 0
    while isinstance(element, ast.Subscript):
        count += len(element.slice.elts) if isinstance(element.slice, ast.Tuple) else 1
        element = element.value
    return count


def _holder(receiver: ast.AST) -> bool:
    """`self.data`, `dataset.data`, `train_loader.data`: the `data` attribute of an object
    that holds a dataset, not a Variable's tensor."""
    name = receiver.id if isinstance(receiver, ast.Name) else receiver.attr if isinstance(receiver, ast.Attribute) \
        else None
    return name is not None and (name == "self" or _HOLDER.search(name.lower()) is not None)


def _integer_index(index: ast.AST) -> bool:
    """An index that reads an element: names, integers, arithmetic on them (no slice, no `None`,
    no tensor a name could hold: a name is taken as an integer, as 0.3's code indexed)."""
    if isinstance(index, ast.Tuple):
        return bool(index.elts) and all(_integer_index(e) for e in index.elts)
    if isinstance(index, ast.Constant):
        return type(index.value) is int
    if isinstance(index, ast.UnaryOp) and isinstance(index.op, ast.USub):
        return _integer_index(index.operand)
    if isinstance(index, ast.BinOp) and isinstance(index.op, (ast.Add, ast.Sub, ast.Mult, ast.FloorDiv, ast.Mod)):
        return _integer_index(index.left) and _integer_index(index.right)
    return isinstance(index, (ast.Name, ast.Attribute))

