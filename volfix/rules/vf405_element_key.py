"""VF405: `index2word[ni]` with `ni = topi[0][0]` of a tensor: a number in 0.3, a 0-dim tensor
since 0.4, which a dict hashes by identity."""
import ast
import re
from ..files import prefilter
from ..flow.bindings import Element, NameBindings, Unpacked
from ..flow.scalars import ScalarValues
from ..model import Applicability
from .base import Rule, on

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
# What makes a dict: a missing key raises (`dict`), or is made (`defaultdict`, `Counter`); in
# each a tensor key is another key than its number.
_DICTS = frozenset({"dict", "collections.OrderedDict", "collections.defaultdict", "collections.Counter"})
_MAX_DEPTH = 8
_HOLDER = re.compile(r"(?:data|dataset|set|loader|corpus|reader|split)$")


class ElementKey(Rule):
    """
    ## What it does
    Finds an element of a tensor read from `.data` or made by a constructor (`ni = topi[0][0]`
    after `decoder_output.data.topk(1)`, each `w` of `for w in indices.data:`, `labels[i]` of
    `labels = torch.LongTensor(ys)`) used as the key of a dict or set the file builds
    (`index2word[ni]`, `vocab.get(w)`, `w in counts`, `w in {EOS, PAD}`).

    ## Why is this bad?
    In PyTorch 0.3 an element of a tensor was a Python number, so it found its number's key.
    Since 0.4 it is a 0-dim tensor, and a tensor hashes by identity: `index2word[ni]` raises
    `KeyError` (a seq2seq decoder's greedy loop stops at its first word), `.get` returns
    `None`, and `in` says `False` (also for a set). The line runs on 0.3, and crashes or
    quietly does something else on a modern stack.

    ## Example
    ```python
    import torch

    index2word = {0: "SOS", 1: "EOS", 2: "cat"}
    topv, topi = decoder_output.data.topk(1)
    ni = topi[0][0]
    word = index2word[ni]
    ```

    ## Use instead
    ```python
    import torch

    index2word = {0: "SOS", 1: "EOS", 2: "cat"}
    topv, topi = decoder_output.data.topk(1)
    ni = topi[0][0]
    word = index2word[ni.item()]
    ```

    ## Fix safety
    The key becomes `key.item()`, the number 0.3 used: the lookup finds what it found on 0.3.
    The fix is safe. In 0.3 only a number found a key here (a tensor with dimensions, as a
    Variable, hashed by identity too), so wherever the legacy program's lookup succeeded the
    element was 0-dim, and `.item()` gives its number.
    """

    CODE = "VF405"
    MESSAGE = "a tensor element is a 0-dim tensor since PyTorch 0.4, not a number: as a dict key it finds nothing"
    FIX = Applicability.SAFE
    FIX_TITLE = "Key the dict by the element's number (`.item()`)"
    NEEDS = prefilter.ELEMENT_KEY
    NAMES = ELEMENT_NAMES

    @on(ast.Subscript)
    def subscript(self, node, ctx):
        self._check(node.value, node.slice, node, ctx)

    @on(ast.Call, callee=("get", "pop", "setdefault"))
    def call(self, node, ctx):
        if isinstance(node.func, ast.Attribute) and node.args and not isinstance(node.args[0], ast.Starred):
            self._check(node.func.value, node.args[0], node, ctx)

    @on(ast.Compare)
    def compare(self, node, ctx):
        if len(node.ops) == 1 and isinstance(node.ops[0], (ast.In, ast.NotIn)):
            container = node.comparators[0]
            if isinstance(container, (ast.Set, ast.Dict)):  # `w in {EOS, PAD}`
                if ctx.index.parents.get(container) is node and _Facts(ctx.index).element(node.left, node):
                    self._report(container, node.left, ctx)
                return
            self._check(container, node.left, node, ctx)

    def _check(self, container: ast.AST, key: ast.AST, at: ast.AST, ctx) -> None:
        if isinstance(key, (ast.Slice, ast.Tuple)):
            return
        facts = _Facts(ctx.index)
        if facts.dict(container, at) and facts.element(key, at):
            self._report(container, key, ctx)

    def _report(self, container: ast.AST, key: ast.AST, ctx) -> None:
        src = ctx.src
        fix = ctx.edit_fix(Applicability.SAFE, self.FIX_TITLE,
                           ctx.expr.replace(key, f"{ctx.expr.attr_base(key)}.item()"))
        ctx.report(self.CODE, key, fix=fix,
                   message=f"`{src.segment(key)}` is a tensor element, a 0-dim tensor since PyTorch 0.4, not a "
                           f"number: as a key of `{src.segment(container)}` it finds nothing; use "
                           f"`{ctx.expr.attr_base(key)}.item()`")


class _Facts:
    """What one module says about a container (a dict it builds) and a key (an element of a
    tensor read from `.data`)."""

    def __init__(self, index) -> None:
        self.index = index
        self.names = NameBindings(index)
        self.ranks = ScalarValues(index).ranks

    def dict(self, container: ast.AST, at: ast.AST) -> bool:
        if isinstance(container, ast.Attribute) and not (isinstance(container.value, ast.Name)
                                                          and container.value.id == "self"):
            values = self._assigned(container.attr)  # `output_lang.index2word`: any object's
        else:
            values = self.names.of(container, at)
        return bool(values) and all(isinstance(v, ast.AST) and self._makes_dict(v) for v in values)

    def _assigned(self, attr: str) -> list:
        """The values assigned to `<anything>.attr` in the module (None for an unpacked one)."""
        out = []
        for node in self.index.attributes.get(attr, ()):
            if isinstance(node.ctx, ast.Store):
                parent = self.index.parents.get(node)
                out.append(parent.value if isinstance(parent, ast.Assign) and node in parent.targets else None)
        return out

    def _makes_dict(self, value: ast.AST) -> bool:
        """A dict, or a set (`w in {EOS, PAD}` hashes too)."""
        if isinstance(value, (ast.Dict, ast.DictComp, ast.Set, ast.SetComp)):
            return True
        return isinstance(value, ast.Call) and (
            isinstance(value.func, ast.Name) and value.func.id in ("dict", "set", "frozenset")
            and self.index.qual(value.func) in (None, value.func.id) or self.index.qual(value.func) in _DICTS)

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
        if isinstance(bound, Element):
            return self._loop_item(bound.iterable, bound.path, at, depth)
        return isinstance(bound, ast.AST) and self.element(bound, at, depth)

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
            if isinstance(func, ast.Attribute) and func.attr in _TENSOR_STEPS:
                return self.plain(func.value, at, depth + 1)
            qual = self.index.qual(func)
            if qual in _TORCH_STEPS and expr.args:
                return self.plain(expr.args[0], at, depth + 1)
            return qual in _CONSTRUCTORS  # `torch.LongTensor(ids)`: a tensor in 0.3 too
        if isinstance(expr, ast.Name):
            bound = self.names.bindings(expr.id, at)
            return bool(bound) and all(self._plain_binding(b, at, depth + 1) for b in bound)
        return False

    def _plain_binding(self, bound, at: ast.AST, depth: int) -> bool:
        if isinstance(bound, Unpacked):
            # `topv, topi = x.data.topk(1)`: each item of a plain tensor's sort, max or topk
            return len(bound.path) == 1 and self._splits(bound.value) and self.plain(bound.value, at, depth)
        return isinstance(bound, ast.AST) and self.plain(bound, at, depth)

    @staticmethod
    def _splits(value: ast.AST) -> bool:
        func = value.func if isinstance(value, ast.Call) else None
        name = func.attr if isinstance(func, ast.Attribute) else None
        return name in ("topk", "max", "min", "sort", "kthvalue", "mode", "median")


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

