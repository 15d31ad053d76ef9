"""Which expressions are certainly one-element tensors (0-dim since PyTorch 0.4).

VF401 asks it of `x` in `x.data[0]` and `x[0]`: a loss, a full reduction, arithmetic of those
with numbers, an element of a list of them, a function's result when every `return` is one.
It reads one module's walk (`syntax.index`) and never imports torch. What a function, a class's
instance or a method of another file of the project returns comes from the project index
(`ModuleIndex.scalar_returns`, by the qualified name the call spells): `returns_facts` computes
it on the defining file, `asked_returns` tells which of them a file's reads may need.
"""
import ast
from typing import Callable, Dict, List, Optional, Set, Tuple

from ..syntax import names as nm

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
# Methods that return the same module (moved or converted): `nn.MSELoss().cuda()`.
MODULE_MOVES = frozenset({"cuda", "cpu", "to", "float", "double", "half", "train", "eval"})
MAX_DEPTH = 24
# What a call returns, as the project index hands it from file to file (`returns_facts`): every
# return is one element (`ONE`), a list or tuple of one-element values (`LIST`), a Variable in
# 0.3 (`VARIABLE`), a tuple whose item k is one element (`ITEM` + k).
ONE, LIST, VARIABLE, ITEM = "one", "list", "variable", "item:"
ITEM_1D = "item1d:"  # a tuple whose item k is a 1-dim tensor (`return data, target.view(-1)`)
MAX_ITEMS = 8  # items of a returned tuple looked at
# The keys of `ModuleIndex.scalar_returns` after a class's qualified name: a call of its
# instance (`Cls()()`: `forward` of an `nn.Module`, or `__call__`) and its method `m` (`Cls().m`).
INSTANCE_CALL, INSTANCE_METHOD = "()()", "()."
_MODULE_BASES = frozenset({"torch.nn.Module", "torch.nn.modules.module.Module"})


def is_zero(node: ast.AST) -> bool:
    return isinstance(node, ast.Constant) and type(node.value) is int and node.value == 0


class _Element:
    """A loop or comprehension target: one element of `iterable`; for a name inside a tuple
    target, `path` gives its place (`for i, (name, loss) in enumerate(d.items())`: (1, 1))."""

    __slots__ = ("iterable", "path")

    def __init__(self, iterable: ast.AST, path: Tuple[int, ...] = ()) -> None:
        self.iterable = iterable
        self.path = path


class _Unpacked:
    """A name bound by unpacking (`prec1, prec5 = accuracy(...)`): the item of `value` at
    `path`."""

    __slots__ = ("value", "path")

    def __init__(self, value: ast.AST, path: Tuple[int, ...]) -> None:
        self.value = value
        self.path = path


class ScalarValues:
    """Which expressions are certainly one-element tensors (0-dim since PyTorch 0.4)."""

    def __init__(self, index) -> None:
        self.index = index
        self._reach: dict = {}
        self._false: Set[str] = set()  # questions answered no (never by a cycle's assumption)

    def _guarded(self, key: str, seen: Set[str], on_cycle: bool, compute: Callable[[], bool]) -> bool:
        """Ask `compute()` once per `key` (a name's value where it is read, and the question):
        a question already being answered is a cycle (`loss = loss + ...`), decided by the
        other bindings (`on_cycle`: True) or not at all (False). A no is kept: assuming a
        cycle true only ever turns answers into yes, so a no stays a no."""
        if key in seen:
            return on_cycle
        if key in self._false:
            return False
        seen.add(key)
        result = compute()
        if not result:
            self._false.add(key)
        return result

    def one_element(self, expr: ast.AST, at: ast.AST, depth: int = 0, seen: Optional[Set[str]] = None) -> bool:
        if depth > MAX_DEPTH:
            return False
        seen = seen if seen is not None else set()
        if isinstance(expr, ast.Call):
            return self.call(expr, at, depth, seen)
        if isinstance(expr, ast.BinOp):
            sides = (expr.left, expr.right)
            numbers = [self.scalar(s, at, depth + 1, set(seen)) for s in sides]
            return not all(numbers) and all(number or self.one_element(s, at, depth + 1, seen)
                                            for s, number in zip(sides, numbers))
        if isinstance(expr, ast.UnaryOp):
            return self.one_element(expr.operand, at, depth + 1, seen)
        if isinstance(expr, ast.IfExp):  # `loss if total is None else total + loss`: a `None` never reaches `[0]`
            sides = [s for s in (expr.body, expr.orelse) if not _none(s)]
            return bool(sides) and all(self.one_element(s, at, depth + 1, seen) for s in sides)
        if isinstance(expr, ast.Attribute) and expr.attr == "data":  # `criterion(...).data`
            return self.one_element(expr.value, at, depth + 1, seen)
        if isinstance(expr, ast.Name):
            return self.name(expr.id, at, depth, seen)
        if isinstance(expr, ast.Subscript) and is_zero(expr.slice) or (
                isinstance(expr, ast.Subscript) and isinstance(expr.slice, ast.Constant)
                and type(expr.slice.value) is int):
            return not _empty_literal(expr.value) and self.elements(expr.value, at, depth + 1, seen)  # `f(x)[0]`
        return False

    def plain_tensor(self, expr: ast.AST, at: ast.AST, depth: int = 0, seen: Optional[Set[str]] = None) -> bool:
        """A tensor, not a Variable, in 0.3: read through `.data` (or arithmetic of such
        values and numbers, or a name bound only to them), so `[0]` gave a Python number."""
        if depth > MAX_DEPTH:
            return False
        seen = seen if seen is not None else set()
        if isinstance(expr, ast.Attribute):
            return expr.attr == "data"
        if isinstance(expr, ast.Call) and isinstance(expr.func, ast.Attribute):
            return expr.func.attr in SHAPE_KEEPING | REDUCTIONS and self.plain_tensor(
                expr.func.value, at, depth + 1, seen)
        if isinstance(expr, ast.BinOp):
            sides = (expr.left, expr.right)
            return (all(_number(s) or self.plain_tensor(s, at, depth + 1, seen) for s in sides)
                    and not all(_number(s) for s in sides))
        if isinstance(expr, ast.UnaryOp):
            return self.plain_tensor(expr.operand, at, depth + 1, seen)
        if isinstance(expr, ast.Name):
            if expr.id in seen:
                return True
            seen.add(expr.id)
            values = self.bindings(expr.id, at)
            return (bool(values) and all(isinstance(v, ast.AST) for v in values)
                    and all(_number(v) or _own_item(v, expr.id) or self.plain_tensor(v, v, depth + 1, seen)
                            for v in values)
                    and not all(_number(v) or _own_item(v, expr.id) for v in values))
        return False

    def variable(self, expr: ast.AST, at: ast.AST, depth: int = 0, seen: Optional[Set[str]] = None) -> bool:
        """A Variable in 0.3, certainly: the output of a loss (modules and `F` losses took
        and returned Variables), arithmetic with it, or a name bound only to such values
        and numbers."""
        if depth > MAX_DEPTH:
            return False
        seen = seen if seen is not None else set()
        if isinstance(expr, ast.BinOp):
            return self.variable(expr.left, at, depth + 1, seen) or self.variable(expr.right, at, depth + 1, seen)
        if isinstance(expr, ast.UnaryOp):
            return self.variable(expr.operand, at, depth + 1, seen)
        if isinstance(expr, ast.Call):
            func = expr.func
            qual = self.index.qual(func)
            if qual is not None and qual.startswith("torch.nn.functional."):
                return qual.rpartition(".")[2] in LOSS_FUNCTIONS
            if isinstance(func, ast.Attribute) and func.attr in SHAPE_KEEPING | REDUCTIONS | SCALAR_ARITHMETIC:
                return self.variable(func.value, at, depth + 1, seen)
            if self.loss_module(func, at, depth, set()):
                return True
            return self.every_return(func, at, "", seen, lambda v, inner: self.variable(v, v, depth + 1, inner),
                                     shape=VARIABLE)
        if isinstance(expr, ast.Name):
            values = self.bindings(expr.id, at)
            return self._guarded("var " + self.key(expr.id, at), seen, False, lambda: (
                bool(values) and all(isinstance(v, ast.AST) for v in values)
                and all(_number(v) or self.variable(v, v, depth + 1, seen) for v in values)
                and not all(_number(v) for v in values)))
        return False

    def call(self, call: ast.Call, at: ast.AST, depth: int, seen: Set[str]) -> bool:
        func = call.func
        qual = self.index.qual(func)
        if qual is not None and qual.startswith("torch.nn.functional."):
            return qual.rpartition(".")[2] in LOSS_FUNCTIONS and _reduced(call, max_positional=3)
        if qual is not None and qual.startswith("torch.") and qual.count(".") == 1:
            name = qual[len("torch."):]
            if name in REDUCTIONS:  # torch.sum(x), torch.dot(a, b)
                wanted = 2 if name == "dot" else 1
                return len(call.args) == wanted and all(k.arg == "dtype" for k in call.keywords)
            if name in ELEMENTWISE:  # torch.abs(a - b)
                return len(call.args) == 1 and not call.keywords and self.one_element(
                    call.args[0], at, depth + 1, seen)
            return False
        if self.index.is_variable(func):  # `Variable(torch.zeros(1))`
            return bool(call.args) and self.one_element(call.args[0], at, depth + 1, seen)
        if isinstance(func, ast.Attribute):
            if func.attr in REDUCTIONS:
                return _whole_reduction(call, func.attr) or (
                    _first_dim_reduction(call, func.attr) and self.one_dim(func.value, at, depth + 1, seen))
            if func.attr in SHAPE_KEEPING or func.attr == "numpy":
                return self.one_element(func.value, at, depth + 1, seen)
            if func.attr in SCALAR_ARITHMETIC and len(call.args) == 1 and not call.keywords \
                    and self.scalar(call.args[0], at, depth + 1, seen):
                return self.one_element(func.value, at, depth + 1, seen)  # `correct_k.mul_(100.0 / n)`
        if (isinstance(func, ast.Name) and func.id == "sum" and len(call.args) == 1 and not call.keywords
                and not self.bindings("sum", at)):  # the builtin: `0 + a + b ...`, 0-dim when each is
            return self.elements(call.args[0], at, depth + 1, seen)
        if self.loss_module(func, at, depth, seen):
            return True
        return self.project_function(func, at, depth, seen)

    def loss_module(self, func: ast.AST, at: ast.AST, depth: int, seen: Set[str]) -> bool:
        """`criterion(out, y)`: `criterion` (or `self.criterion`) is bound only to a loss
        module made without `reduction='none'`."""
        values = []
        if isinstance(func, ast.Name):
            values = self.bindings(func.id, at)
        elif isinstance(func, ast.Attribute) and isinstance(func.value, ast.Name) and func.value.id == "self":
            values = self.self_bindings(func.attr, at)
        elif isinstance(func, ast.Call):  # `nn.BCELoss()(out, y)`
            values = [func]
        values = [v for v in values if not (isinstance(v, ast.AST) and _moved_itself(v, func))]
        return bool(values) and all(isinstance(v, ast.AST) and self.is_loss_module(v) for v in values)

    def known_callee(self, func: ast.AST, at: ast.AST) -> bool:
        """`criterion` (or `self.criterion`) is bound only by assignments volfix reads, so
        what it is was decided by `loss_module` (a parameter or a loop target is unknown)."""
        if self.index.qual(func) is not None:
            return True  # `F.mse_loss`, an imported function: `call` knows it or it is no loss
        if isinstance(func, ast.Name):
            values = self.bindings(func.id, at)
        elif isinstance(func, ast.Attribute) and isinstance(func.value, ast.Name) and func.value.id == "self":
            values = self.self_bindings(func.attr, at)
        else:
            return False
        return bool(values) and all(isinstance(v, ast.AST) for v in values)

    def is_loss_module(self, value: ast.AST) -> bool:
        """`nn.CrossEntropyLoss()`, also moved: `nn.MSELoss(size_average=False).cuda()`."""
        while (isinstance(value, ast.Call) and isinstance(value.func, ast.Attribute)
               and value.func.attr in MODULE_MOVES and self.index.qual(value.func) is None):
            value = value.func.value
        if not isinstance(value, ast.Call):
            return False
        qual = self.index.qual(value.func)
        return (qual is not None and qual.startswith("torch.nn.") and qual.endswith("Loss")
                and _reduced(value, max_positional=2))

    def project_function(self, func: ast.AST, at: ast.AST, depth: int, seen: Set[str]) -> bool:
        """`loss_function(recon, x, mu, logvar)`: a function of this module (or a method of
        the class holding `at`, called on `self`) whose every `return` is one element."""
        return self.every_return(func, at, "", seen,
                                 lambda v, inner: self.one_element(v, v, depth + 1, set(inner)))

    def every_return(self, func: ast.AST, at: ast.AST, tag: str, seen: Set[str],
                     holds: Callable[[ast.AST, Set[str]], bool], shape: Optional[str] = ONE) -> bool:
        """Whether the function `func` calls (`project_callee`) has returns and `holds(value,
        seen)` for each, the function marked in `seen` (`tag` tells the questions apart): a
        recursive call is decided by the other returns, never by itself alone. Else whether
        every callee `other_callees` finds does (a def here) or returns `shape` (another file's)."""
        fn = self.project_callee(func, at)
        if fn is None:
            found = self.other_callees(func, at)
            external = self.index.scalar_returns
            return bool(found) and all(shape in external.get(c, ()) if isinstance(c, str)
                                       else self.def_returns(c, tag, seen, holds) for c in found)
        return self.def_returns(fn, tag, seen, holds)

    def def_returns(self, fn: ast.AST, tag: str, seen: Set[str], holds: Callable[[ast.AST, Set[str]], bool]) -> bool:
        key = f"def {tag}{id(fn)}"
        if key in seen:
            return False
        inner = seen | {key}
        returns = [node.value for node in _own_returns(fn)]
        return bool(returns) and all(v is not None and holds(v, inner) for v in returns)

    def project_callee(self, func: ast.AST, at: ast.AST) -> Optional[ast.AST]:
        """The `def` a call reaches: a function of this module, or a method of the class
        holding `at` called on `self`."""
        if isinstance(func, ast.Name):
            return self._module_function(func.id, at)
        if isinstance(func, ast.Attribute) and isinstance(func.value, ast.Name) and func.value.id == "self":
            return self._method(func.attr, at)
        return None

    def other_callees(self, func: ast.AST, at: ast.AST) -> list:
        """What a call of `func` may run besides `project_callee`'s def: a function of another
        file (`utils.loss_fn`), the call of an instance (`criterion(...)`, `self.crf(...)`:
        `forward` of an `nn.Module` subclass, or `__call__`) or its method (`agent.update(...)`)
        where every value the name is bound to is made by a class of this module (its def) or
        of another file; those as keys of `index.scalar_returns`. [] when any is unknown."""
        external = self.index.scalar_returns
        qual = self.index.qual(func)
        if qual is not None:
            return [qual] if not nm.is_torch(qual) and qual in external else []
        classes = self.instance_classes(func, at)
        method = None
        if classes is None and isinstance(func, ast.Attribute):
            classes, method = self.instance_classes(func.value, at), func.attr
        if not classes:
            return []
        out: list = []
        for cls in classes:
            if isinstance(cls, str):
                key = cls + (INSTANCE_CALL if method is None else INSTANCE_METHOD + method)
                if key not in external:
                    return []
                out.append(key)
                continue
            fn = _instance_call(self.index, cls) if method is None else _own_def(cls, method)
            if fn is None:
                return []
            out.append(fn)
        return out

    def instance_classes(self, expr: ast.AST, at: ast.AST) -> Optional[list]:
        """The classes `expr` is an instance of, when every value it is bound to makes one:
        a class of this module (its `ClassDef`) or the qualified name of another's (a
        `None` it is also bound to is never called). None when unknown."""
        if isinstance(expr, ast.Call):
            values = [expr]
        elif isinstance(expr, ast.Name):
            values = self.bindings(expr.id, at)
        elif isinstance(expr, ast.Attribute) and isinstance(expr.value, ast.Name) and expr.value.id == "self":
            values = self.self_bindings(expr.attr, at)
        else:
            return None
        values = [v for v in _branches(values)
                  if not _none(v) and not (isinstance(v, ast.AST) and _moved_itself(v, expr))]
        out: list = []
        for value in values:
            if not isinstance(value, ast.Call):
                return None
            qual = self.index.qual(value.func)
            if qual is not None and not nm.is_torch(qual):
                out.append(qual)
            elif isinstance(value.func, ast.Name) and qual is None:
                cls = self._module_class(value.func.id, value)
                if cls is None:
                    return None
                out.append(cls)
            else:
                return None
        return out or None

    def _module_class(self, name: str, at: ast.AST) -> Optional[ast.ClassDef]:
        """The one module-level `class name` when nothing else binds `name` where `at` reads it."""
        if self.index.function_of(at) is not self.index.tree and self.bindings(name, at):
            return None
        statements = self.index.module_statements
        found = [s for s in statements if isinstance(s, (ast.ClassDef, ast.FunctionDef)) and s.name == name]
        if len(found) != 1 or not isinstance(found[0], ast.ClassDef) \
                or self.index.assigned_values(self.index.tree).get(name):
            return None
        return found[0]

    def returns_shape(self, fn: ast.AST) -> Tuple[str, ...]:
        """What every `return` of `fn` is (`ONE`, `LIST`, `VARIABLE`, `ITEM` + k), for the
        files that call it (`returns_facts`)."""
        out = []
        if self.def_returns(fn, "", set(), lambda v, inner: self.one_element(v, v, 1, set(inner))):
            out.append(ONE)
        if self.def_returns(fn, "[] ", set(), lambda v, inner: self.elements(v, v, 1, inner)):
            out.append(LIST)
        if self.def_returns(fn, "", set(), lambda v, inner: self.variable(v, v, 1, inner)):
            out.append(VARIABLE)
        returns = [r.value for r in _own_returns(fn)]
        if returns and all(isinstance(v, ast.Tuple) for v in returns):
            for k in range(min(MAX_ITEMS, *(len(v.elts) for v in returns))):  # type: ignore[union-attr]
                if self.def_returns(fn, f"[{k}] ", set(), lambda v, inner: self.item(v, (k,), v, 1, set(inner))):
                    out.append(f"{ITEM}{k}")
                if self.def_returns(fn, f"[{k}] 1-d ", set(),
                                    lambda v, inner: self.item(v, (k,), v, 1, set(inner), self.one_dim)):
                    out.append(f"{ITEM_1D}{k}")
        return tuple(out)

    def scalar(self, node: ast.AST, at: ast.AST, depth: int, seen: Optional[Set[str]] = None) -> bool:
        """A Python number: `100.0 / batch_size` with `batch_size = target.size(0)`;
        `min(max(k, 0), 1)`; `x.data[0]` of a one-element `x` (the number VF401 turns into
        `.item()`); `self.k` when every method assigns it numbers (one of them a literal:
        `self.k = 0.` in `__init__`)."""
        if depth > MAX_DEPTH:
            return False
        seen = seen if seen is not None else set()
        if _number(node):
            return True
        if isinstance(node, ast.BinOp):
            return self.scalar(node.left, at, depth + 1, seen) and self.scalar(node.right, at, depth + 1, seen)
        if isinstance(node, ast.UnaryOp):
            return self.scalar(node.operand, at, depth + 1, seen)
        if isinstance(node, ast.Call) and isinstance(node.func, ast.Name) and node.func.id in ("min", "max", "abs", "round") \
                and not node.keywords and node.args and self._builtin(node.func, node.func.id, at):
            return all(self.scalar(a, at, depth + 1, seen) for a in node.args)
        if isinstance(node, ast.Subscript) and is_zero(node.slice) and isinstance(node.value, ast.Attribute) \
                and node.value.attr == "data":
            return self.one_element(node.value.value, at, depth + 1, seen)
        if isinstance(node, ast.Name):
            values = self.bindings(node.id, at)  # `k = min(k + step, 1)`: decided by its other bindings
            return self._guarded("num " + self.key(node.id, at), seen, True, lambda: bool(values) and all(
                isinstance(v, ast.AST) and self.scalar(v, v, depth + 1, seen) for v in values))
        if isinstance(node, ast.Attribute) and isinstance(node.value, ast.Name) and node.value.id == "self":
            key = f"num self.{node.attr} {id(self.index.method_class(self.index.function_of(at)))}"
            values = self.self_bindings(node.attr, at)
            return self._guarded(key, seen, True, lambda: (
                bool(values) and all(isinstance(v, ast.AST) and self.scalar(v, v, depth + 1, seen) for v in values)
                and any(_number(v) for v in values) and not self._class_binds(node.attr, at)))
        return False

    def _class_binds(self, attr: str, at: ast.AST) -> bool:
        """The class holding `at` binds `attr` in its body (`k = torch.zeros(1)`)."""
        cls = self.index.method_class(self.index.function_of(at))
        if cls is None:
            return True
        for s in cls.body:
            targets = s.targets if isinstance(s, ast.Assign) else [s.target] if isinstance(
                s, (ast.AnnAssign, ast.AugAssign)) else []
            if any(attr in nm.target_names(t) for t in targets):
                return True
        return False

    def _module_function(self, name: str, at: ast.AST) -> Optional[ast.AST]:
        """The one module-level `def name` when nothing else binds `name` where `at` reads it."""
        if self.index.function_of(at) is not self.index.tree and self.bindings(name, at):
            return None  # a local or a parameter shadows it
        statements = self.index.module_statements
        defs = [s for s in statements if isinstance(s, ast.FunctionDef) and s.name == name]
        if len(defs) != 1 or self.index.assigned_values(self.index.tree).get(name):
            return None
        imported = any(bound == name for s in statements if isinstance(s, (ast.Import, ast.ImportFrom))
                       for bound, _ in nm.import_bindings(s))
        return None if imported else defs[0]

    def _method(self, name: str, at: ast.AST) -> Optional[ast.AST]:
        cls = self.index.method_class(self.index.function_of(at))
        if cls is None:
            return None
        defs = [s for s in cls.body if isinstance(s, ast.FunctionDef) and s.name == name]
        return defs[0] if len(defs) == 1 else None

    def name(self, name: str, at: ast.AST, depth: int, seen: Set[str]) -> bool:
        # a name of this scope, not the caller's; `loss = loss + ...`: decided by its other bindings
        return self._guarded(self.key(name, at), seen, True, lambda: self._name(name, at, depth, seen))

    def _name(self, name: str, at: ast.AST, depth: int, seen: Set[str]) -> bool:
        values = [v for v in self.bindings(name, at) if not _none(v)]  # `total = None`: `[0]` of it raises
        if not values or any(v is None for v in values):
            return False
        for v in values:
            if isinstance(v, _Element):
                if _empty_literal(v.iterable) or not self.member(v.iterable, v.path, at, depth + 1, seen):
                    return False
            elif isinstance(v, _Unpacked):
                if _empty_literal(v.value) or not self.item(v.value, v.path, at, depth + 1, seen):
                    return False
            elif not (_number(v) or _own_item(v, name) or self.one_element(v, v, depth + 1, seen)):
                return False
        return not all(isinstance(v, ast.AST) and (_number(v) or _own_item(v, name)) for v in values)

    def elements(self, iterable: ast.AST, at: ast.AST, depth: int, seen: Set[str]) -> bool:
        """Every element of `iterable` is one element: `[torch.mean(l) for l in ls]`,
        `[loss_a, loss_b]`, or a name bound only to such lists (and `.append`ed to only with
        such values)."""
        if depth > MAX_DEPTH:
            return False
        if isinstance(iterable, (ast.ListComp, ast.GeneratorExp)):
            return self.one_element(iterable.elt, iterable.elt, depth + 1, seen)
        if isinstance(iterable, (ast.List, ast.Tuple)):
            return all(not isinstance(e, ast.Starred) and self.one_element(e, e, depth + 1, seen)
                       for e in iterable.elts)
        if isinstance(iterable, ast.Call):
            func = iterable.func
            if isinstance(func, ast.Attribute) and func.attr == "values" and not iterable.args \
                    and not iterable.keywords:
                return self.dict_values(func.value, at, depth + 1, seen)  # `sum(losses.values())`
            if self.one_dim(iterable, at, depth + 1, seen):
                return True  # `for t in target.view(-1)`: 0-dim elements
            return self.every_return(iterable.func, at, "[] ", seen,
                                     lambda v, inner: self.elements(v, v, depth + 1, inner), shape=LIST)
        if not isinstance(iterable, ast.Name):
            return False
        if self.one_dim(iterable, at, depth + 1, set(seen)):
            return True
        return self._guarded("[] " + self.key(iterable.id, at), seen, True,
                             lambda: self._list_elements(iterable.id, at, depth, seen))

    def _list_elements(self, name: str, at: ast.AST, depth: int, seen: Set[str]) -> bool:
        values = self.bindings(name, at)
        if not values or not all(isinstance(v, ast.AST) and self.elements(v, v, depth + 1, seen) for v in values):
            return False
        added = self._appended(name, at)
        return added is not None and all(self.one_element(a, a, depth + 1, seen) for a in added) and (
            bool(added) or any(getattr(v, "elts", True) for v in values))

    def item(self, value: ast.AST, path: Tuple[int, ...], at: ast.AST, depth: int, seen: Set[str],
             leaf: Optional[Callable] = None) -> bool:
        """The item of `value` at `path` is one element (or what `leaf(expr, at, depth, seen)`
        asks): `loss, n = compute(x)` with `return crit(out, y), len(y)`; a tuple literal,
        a function of the module returning such tuples, a name bound only to them, or a
        sequence whose every element qualifies."""
        leaf = leaf or self.one_element
        if depth > MAX_DEPTH:
            return False
        if not path:
            return leaf(value, at, depth, seen)
        if isinstance(value, (ast.Tuple, ast.List)) and not any(isinstance(e, ast.Starred) for e in value.elts) \
                and path[0] < len(value.elts) and self.item(value.elts[path[0]], path[1:], value, depth + 1,
                                                            set(seen), leaf):
            return True
        shape = None if len(path) != 1 else f"{ITEM}{path[0]}" if leaf == self.one_element else \
            f"{ITEM_1D}{path[0]}" if leaf == self.one_dim else None
        if isinstance(value, ast.Call) and self.every_return(  # a def here, or another file's (`shape`)
                value.func, at, f"{path} {leaf.__name__} ", set(seen),
                lambda v, inner: self.item(v, path, v, depth + 1, inner, leaf), shape=shape):
            return True
        if isinstance(value, ast.Name):
            values = self.bindings(value.id, at)
            if self._guarded(f"{path} {leaf.__name__} " + self.key(value.id, at), set(seen), True, lambda: bool(
                    values) and all(isinstance(v, ast.AST) and self.item(v, path, v, depth + 1, seen, leaf)
                                    for v in values)):
                return True
        # every element qualifies (`res = []` and `res.append(...)`)
        return (leaf == self.one_element and len(path) == 1 and not _empty_literal(value)
                and self.elements(value, at, depth + 1, seen))

    def member(self, iterable: ast.AST, path: Tuple[int, ...], at: ast.AST, depth: int, seen: Set[str]) -> bool:
        """The part at `path` of every element of `iterable` is one element: `path` () is
        the element itself; `d.items()` (1: a value of the dict), `enumerate(xs)` (1: an
        element of `xs`), `zip(a, b)` (k: an element of the k-th), a list of tuples."""
        if depth > MAX_DEPTH:
            return False
        if not path:
            return self.elements(iterable, at, depth, seen)
        if isinstance(iterable, ast.Call) and not iterable.keywords and not any(
                isinstance(a, ast.Starred) for a in iterable.args):
            func, args = iterable.func, iterable.args
            if isinstance(func, ast.Attribute) and func.attr == "items" and not args:
                return path == (1,) and self.dict_values(func.value, at, depth + 1, seen)
            if self._builtin(func, "enumerate", at) and len(args) == 1:
                return path[0] == 1 and self.member(args[0], path[1:], at, depth + 1, seen)
            if self._builtin(func, "zip", at):
                return path[0] < len(args) and self.member(args[path[0]], path[1:], at, depth + 1, seen)
            return False
        if isinstance(iterable, (ast.ListComp, ast.GeneratorExp)):
            return self.item(iterable.elt, path, iterable.elt, depth + 1, seen)
        if isinstance(iterable, (ast.List, ast.Tuple)):
            return bool(iterable.elts) and all(
                not isinstance(e, ast.Starred) and self.item(e, path, e, depth + 1, seen) for e in iterable.elts)
        return False

    def dict_values(self, expr: ast.AST, at: ast.AST, depth: int, seen: Set[str]) -> bool:
        """Every value of the dict `expr` is one element: a name bound only to dict
        displays of such values (`losses = {}`), to which only `losses[key] = value`
        stores such values (no `update`, `setdefault` or other writes)."""
        if not isinstance(expr, ast.Name) or depth > MAX_DEPTH:
            return False
        return self._guarded("{} " + self.key(expr.id, at), seen, True,
                             lambda: self._dict_values(expr.id, at, depth, seen))

    def _dict_values(self, name: str, at: ast.AST, depth: int, seen: Set[str]) -> bool:
        values = self.bindings(name, at)
        if not values or not all(isinstance(v, ast.Dict) and None not in v.keys for v in values):
            return False
        stored = []
        scope = self.index.function_of(at)
        for node in self.index.names.get(name, ()):
            if self.index.function_of(node) is not scope or not isinstance(node.ctx, ast.Load):
                continue
            parent = self.index.parents.get(node)
            if isinstance(parent, ast.Attribute) and parent.attr in ("update", "setdefault", "__setitem__"):
                return False
            if isinstance(parent, ast.Subscript) and parent.value is node and not isinstance(parent.ctx, ast.Load):
                holder = self.index.parents.get(parent)
                if not (isinstance(holder, ast.Assign) and parent in holder.targets):
                    return False
                stored.append(holder.value)
        return all(self.one_element(v, v, depth + 1, seen) for d in values for v in d.values) and all(
            self.one_element(v, v, depth + 1, seen) for v in stored)

    def one_dim(self, expr: ast.AST, at: ast.AST, depth: int, seen: Set[str]) -> bool:
        """Certainly a 1-dim tensor: `x.view(-1)` (also through `.float()`, `.cuda()`...),
        or a name bound only to such values (`correct = correct.view(-1)`; `data, targets =
        get_batch(...)` where every return's second item is one)."""
        if depth > MAX_DEPTH:
            return False
        if _one_dim(expr):
            return True
        while isinstance(expr, ast.Call) and isinstance(expr.func, ast.Attribute) and expr.func.attr in SHAPE_KEEPING:
            expr = expr.func.value
        if isinstance(expr, ast.Call) and self.index.is_variable(expr.func) and expr.args:  # `Variable(t.view(-1))`
            return self.one_dim(expr.args[0], at, depth + 1, seen)
        if isinstance(expr, ast.Name):
            values = self.bindings(expr.id, at)
            return self._guarded("1-d " + self.key(expr.id, at), seen, True, lambda: bool(values) and all(
                self.item(v.value, v.path, at, depth + 1, seen, self.one_dim) if isinstance(v, _Unpacked)
                else isinstance(v, ast.AST) and self.one_dim(v, v, depth + 1, seen) for v in values)
                and not all(_self_moved(v, expr.id) for v in values))
        return False

    def numpy_array(self, expr: ast.AST, at: ast.AST, depth: int = 0, seen: Optional[Set[str]] = None) -> bool:
        """A NumPy array: `loss.data.cpu().numpy()`, or a name bound only to one (also
        unpacked from a function of the module returning it)."""
        seen = seen if seen is not None else set()
        if depth > MAX_DEPTH:
            return False
        if isinstance(expr, ast.Call) and isinstance(expr.func, ast.Attribute):
            return expr.func.attr == "numpy" and not expr.args
        if not isinstance(expr, ast.Name):
            return False
        values = self.bindings(expr.id, at)
        return self._guarded("np " + self.key(expr.id, at), seen, True, lambda: bool(values) and all(
            self.item(v.value, v.path, at, depth + 1, seen, self.numpy_array) if isinstance(v, _Unpacked)
            else isinstance(v, ast.AST) and self.numpy_array(v, v, depth + 1, seen) for v in values))

    def _builtin(self, func: ast.AST, name: str, at: ast.AST) -> bool:
        return (isinstance(func, ast.Name) and func.id == name and not self.bindings(name, at)
                and not self.index.module_names.bound(name))

    def _appended(self, name: str, at: ast.AST) -> Optional[list]:
        """The values `name.append(v)` adds in the scope `at` reads `name` from; None when
        the list is changed some other way (`extend`, `insert`, an item assignment)."""
        index = self.index
        scope = index.function_of(at)
        out = []
        for node in index.names.get(name, ()):
            if index.function_of(node) is not scope or not isinstance(node.ctx, ast.Load):
                continue
            parent = index.parents.get(node)
            if isinstance(parent, ast.Attribute) and parent.attr in ("extend", "insert", "__setitem__"):
                return None
            if isinstance(parent, ast.Subscript) and not isinstance(parent.ctx, ast.Load):
                return None
            if isinstance(parent, ast.Attribute) and parent.attr == "append":
                call = index.parents.get(parent)
                if not (isinstance(call, ast.Call) and call.func is parent and len(call.args) == 1):
                    return None
                out.append(call.args[0])
        return out

    def bindings(self, name: str, at: ast.AST) -> list:
        """The values bound to `name` in the scope `at` reads it from (an `_Element` for a
        `for` or comprehension target, None for another binding that is not `name = value` /
        `name op= value`); [] when it is not bound there."""
        scope = self.index.function_of(at)
        out = self._bound_in(name, scope, self._reaching(name, scope, at)[1])
        if not out and scope is not self.index.tree:
            out = self._bound_in(name, self.index.tree)  # a module-level name read in a function
        return out

    def key(self, name: str, at: ast.AST) -> str:
        """What a name stands for where `at` reads it, for the recursion guards: its scope
        and the assignment that dominates the read (`x` before and after `x = x.sum()` are
        two values)."""
        scope = self.index.function_of(at)
        dominator = self._reaching(name, scope, at)[0]
        return f"{id(scope)} {name} {id(dominator) if dominator is not None else ''}"

    def _reaching(self, name: str, scope: ast.AST, at: ast.AST):
        memo = (name, id(at))  # not the statement: a comprehension in it binds its own names
        found = self._reach.get(memo)
        if found is None:
            found = self._reach[memo] = self._dominated(name, scope, at)
        return found

    def _dominated(self, name: str, scope: ast.AST, at: ast.AST):
        """Which bindings of `name` can reach `at`, when an assignment `name = ...` dominates
        it: one of the statements before `at` (or before a statement holding it) in the same
        block, `losses = [torch.mean(l) for l in losses]` after `losses = model(x)`. Only that
        assignment and the bindings after it, up to and around `at`, reach (a loop back to
        them passes the assignment again); the statement holding `at` binds after reading
        (`temp = temp.data[0]`). A loop's or a comprehension's target dominates its body
        (`[v.data[0] for v in losses]`: that `v`, not another loop's). (assignment, which
        bindings reach); (None, None) when nothing dominates: every binding of the scope counts."""
        index = self.index
        if name in index.declared:
            return None, None
        own = index.statement_of(at)
        child, parent = at, index.parents.get(at)
        while parent is not None and child is not own:
            if isinstance(parent, (ast.ListComp, ast.SetComp, ast.GeneratorExp, ast.DictComp)) and child in (
                    getattr(parent, "elt", None), getattr(parent, "key", None), getattr(parent, "value", None)):
                for generator in reversed(parent.generators):
                    if name in nm.target_names(generator.target):
                        return parent, (lambda node, target=generator.target: self._inside(node, target))
            child, parent = parent, index.parents.get(parent)
        stmt = own
        while True:
            slot = index.slot_of(stmt)
            if slot is None:
                return None, None
            owner, field, block, position = slot
            for first in range(position - 1, -1, -1):
                s = block[first]
                if isinstance(s, ast.Assign) and any(isinstance(t, ast.Name) and t.id == name for t in s.targets):
                    return s, (lambda node, first=first, block=block, last=position:
                               self._between(node, block, first, last, own))
            if isinstance(owner, (ast.For, ast.AsyncFor)) and field == "body" and name in nm.target_names(
                    owner.target):
                return owner, (lambda node, loop=owner, block=block, last=position: self._inside(
                    node, loop.target) or self._between(node, block, 0, last, own))
            if owner is scope or isinstance(owner, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef,
                                                    ast.Module)):
                return None, None
            stmt = owner if isinstance(owner, ast.stmt) else index.parents.get(owner)  # an `except` handler
            if not isinstance(stmt, ast.stmt):
                return None, None

    def _inside(self, node: ast.AST, holder: ast.AST) -> bool:
        while node is not None and node is not holder and not isinstance(node, ast.stmt):
            node = self.index.parents.get(node)
        return node is holder

    def _between(self, node: ast.AST, block: list, first: int, last: int, own: ast.stmt) -> bool:
        index = self.index
        stmt = index.statement_of(node)
        if stmt is own and isinstance(own, (ast.Assign, ast.AugAssign, ast.AnnAssign)):
            return False
        while True:
            slot = index.slot_of(stmt)
            if slot is None:
                return False
            owner, _field, holder, position = slot
            if holder is block:
                return first <= position <= last
            stmt = owner if isinstance(owner, ast.stmt) else index.parents.get(owner)
            if not isinstance(stmt, ast.stmt):
                return False

    def _bound_in(self, name: str, scope: ast.AST, reaching: Optional[Callable[[ast.AST], bool]] = None) -> list:
        index = self.index
        out = []
        for node in index.names.get(name, ()):
            if not isinstance(node.ctx, ast.Store) or index.function_of(node) is not scope:
                continue
            if reaching is not None and not reaching(node):
                continue
            parent = index.parents.get(node)
            if isinstance(parent, ast.Assign) and node in parent.targets:
                out.append(parent.value)
            elif isinstance(parent, ast.AugAssign) and isinstance(parent.op, (ast.Add, ast.Sub, ast.Mult, ast.Div)):
                out.append(parent.value)
            else:
                out.append(self._target(node))
        if isinstance(scope, (ast.FunctionDef, ast.AsyncFunctionDef)) and name in nm.function_params(scope) \
                and reaching is None:  # a parameter assigned before the read holds that value
            out.append(None)
        return out

    def _target(self, node: ast.Name):
        """A name in a loop target or unpacked: `_Element` / `_Unpacked` with its place in
        the (nested) tuple; None for anything else (`with ... as`, a starred target)."""
        index = self.index
        path: Tuple[int, ...] = ()
        child, parent = node, index.parents.get(node)
        while isinstance(parent, (ast.Tuple, ast.List)):
            if any(isinstance(e, ast.Starred) for e in parent.elts):
                return None
            path = (parent.elts.index(child),) + path
            child, parent = parent, index.parents.get(parent)
        if isinstance(parent, (ast.For, ast.comprehension)) and parent.target is child:
            return _Element(parent.iter, path)
        if path and isinstance(parent, ast.Assign) and child in parent.targets:
            return _Unpacked(parent.value, path)
        return None

    def self_bindings(self, attr: str, at: ast.AST) -> list:
        """Values assigned to `self.<attr>` in the methods of the class holding `at`."""
        index = self.index
        cls = index.method_class(index.function_of(at))
        if cls is None:
            return []
        out = []
        for node in index.attributes.get(attr, ()):
            if not (isinstance(node.ctx, ast.Store) and isinstance(node.value, ast.Name) and node.value.id == "self"):
                continue
            if index.method_class(index.function_of(node)) is not cls:
                continue
            parent = index.parents.get(node)
            out.append(parent.value if isinstance(parent, ast.Assign) and node in parent.targets else None)
        return out


def returns_facts(index) -> Dict[str, Tuple[str, ...]]:
    """What the module's functions, its classes' instance calls and their methods return, for
    the files that call them (the project index's per-file facts): `name`, `Cls()()`,
    `Cls().method` -> `ScalarValues.returns_shape`, those with a shape only. A name the module
    binds twice is left out, as `project_callee` leaves it."""
    values = ScalarValues(index)
    statements = [s for s in index.module_statements if isinstance(s, (ast.FunctionDef, ast.ClassDef))]
    counts: Dict[str, int] = {}
    for stmt in statements:
        counts[stmt.name] = counts.get(stmt.name, 0) + 1
    assigned = index.assigned_values(index.tree)
    out: Dict[str, Tuple[str, ...]] = {}
    for stmt in statements:
        if counts[stmt.name] != 1 or assigned.get(stmt.name):
            continue
        if isinstance(stmt, ast.FunctionDef):
            defs = [(stmt.name, stmt)]
        else:
            defs = [(stmt.name + INSTANCE_METHOD + f.name, f) for f in stmt.body
                    if isinstance(f, ast.FunctionDef) and _own_def(stmt, f.name) is f and not f.decorator_list]
            call = _instance_call(index, stmt)
            if call is not None:
                defs.append((stmt.name + INSTANCE_CALL, call))
        for key, fn in defs:
            shape = values.returns_shape(fn)
            if shape:
                out[key] = shape
    return out


class _Asked(dict):
    """`ModuleIndex.scalar_returns` while `asked_returns` runs: every key holds every shape,
    so the queries go as far as any answer could take them, and each key asked is kept."""

    def __init__(self) -> None:
        super().__init__()
        self.asked: Set[str] = set()

    def __contains__(self, key) -> bool:
        self.asked.add(key)
        return True

    def get(self, key, default=None):
        self.asked.add(key)
        return _EVERY_SHAPE


class _EveryShape:
    def __contains__(self, shape) -> bool:
        return True


_EVERY_SHAPE = _EveryShape()


def asked_returns(index) -> List[str]:
    """The keys of `ModuleIndex.scalar_returns` (functions, instance calls and methods of other
    files, by qualified name) VF401's questions about this module's `x.data[0]` and `x[0]`
    may read: the project index links only those."""
    saved, index.scalar_returns = index.scalar_returns, _Asked()
    try:
        values = ScalarValues(index)
        for node in index.by_type.get(ast.Subscript, ()):
            if not (isinstance(node.ctx, ast.Load) and is_zero(node.slice)):
                continue
            subject = node.value
            if isinstance(subject, ast.Attribute) and subject.attr == "data":
                subject = subject.value
            values.one_element(subject, node)
            values.variable(subject, node)
        return sorted(index.scalar_returns.asked)
    finally:
        index.scalar_returns = saved


def _own_def(cls: ast.ClassDef, name: str) -> Optional[ast.FunctionDef]:
    defs = [s for s in cls.body if isinstance(s, (ast.FunctionDef, ast.AsyncFunctionDef)) and s.name == name]
    return defs[0] if len(defs) == 1 and isinstance(defs[0], ast.FunctionDef) else None


def _instance_call(index, cls: ast.ClassDef) -> Optional[ast.FunctionDef]:
    """What calling an instance of `cls` runs: its own `__call__`, or the `forward` of a
    direct subclass of `nn.Module` (whose `__call__` runs it)."""
    call = _own_def(cls, "__call__")
    if call is not None or any(isinstance(s, ast.FunctionDef) and s.name == "__call__" for s in cls.body):
        return call
    if any(index.qual(base) in _MODULE_BASES for base in cls.bases):
        return _own_def(cls, "forward")
    return None


def _own_returns(fn: ast.AST):
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


def _number(node: ast.AST) -> bool:
    if isinstance(node, ast.UnaryOp):
        return _number(node.operand)
    if isinstance(node, ast.Call):
        func = node.func
        if isinstance(func, ast.Name):
            return func.id in _NUMBER_BUILTINS
        if isinstance(func, ast.Attribute) and func.attr in _NUMBER_METHODS:
            return func.attr != "size" or (len(node.args) == 1 and not node.keywords)  # `x.size(0)`
        return False
    return isinstance(node, ast.Constant) and type(node.value) in (int, float)


def _branches(values: list) -> list:
    """`A(...) if args.ppo else B(...)`: each branch is a value."""
    out = []
    for v in values:
        while isinstance(v, ast.IfExp):
            out.append(v.body)
            v = v.orelse
        out.append(v)
    return out


def _none(node) -> bool:
    return isinstance(node, ast.Constant) and node.value is None


def _empty_literal(node: ast.AST) -> bool:
    """`()`, `[]`: every element is one element, vacuously (a chunk's stand-in binding)."""
    return isinstance(node, (ast.List, ast.Tuple)) and not node.elts


def _first_dim_reduction(call: ast.Call, method: str) -> bool:
    """`x.sum(0)`, `x.mean(dim=-1)`: a reduction over one dimension, without `keepdim`."""
    if method not in DIM_REDUCTIONS or len(call.args) + len(call.keywords) != 1:
        return False
    dim = call.args[0] if call.args else call.keywords[0].value if call.keywords[0].arg == "dim" else None
    return dim is not None and _int_value(dim) in (0, -1)


def _one_dim(expr: ast.AST) -> bool:
    """Certainly one dimension: `x.view(-1)`, `x.reshape(n)` (then `.float()`, `.cpu()`...)."""
    while isinstance(expr, ast.Call) and isinstance(expr.func, ast.Attribute) and expr.func.attr in SHAPE_KEEPING:
        expr = expr.func.value
    if not (isinstance(expr, ast.Call) and isinstance(expr.func, ast.Attribute)
            and expr.func.attr in ("view", "reshape") and len(expr.args) == 1 and not expr.keywords):
        return False
    arg = expr.args[0]
    return _int_value(arg) is not None or _number(arg)  # not a name: `x.view(shape)` takes a tuple too


def _self_moved(value: ast.AST, name: str) -> bool:
    """`x = x.cuda()`: the value it was, moved (decided by the other bindings)."""
    while isinstance(value, ast.Call) and isinstance(value.func, ast.Attribute) and value.func.attr in SHAPE_KEEPING:
        value = value.func.value
    return isinstance(value, ast.Name) and value.id == name


def _int_value(node: ast.AST) -> Optional[int]:
    if isinstance(node, ast.Constant) and type(node.value) is int:
        return node.value
    if isinstance(node, ast.UnaryOp) and isinstance(node.op, ast.USub):
        inner = _int_value(node.operand)
        return None if inner is None else -inner
    return None


def _moved_itself(value: ast.AST, ref: ast.AST) -> bool:
    """`criterion = criterion.cuda()` (`self.crit = self.crit.to(device)`): the module it was,
    moved; what it is is decided by the other bindings."""
    moved = False
    while (isinstance(value, ast.Call) and isinstance(value.func, ast.Attribute)
           and value.func.attr in MODULE_MOVES):
        value, moved = value.func.value, True
    return moved and ast.dump(value) == ast.dump(ref)


def _own_item(node: ast.AST, name: str) -> bool:
    """`total[0] / n`: arithmetic of numbers and `name[0]` itself (the read this rule turns
    into `.item()`), which binds `name` to a Python number: `total = total[0] / len(data)`
    after the accumulating loop. A number, if `name` is one element (decided by its other
    bindings)."""
    if isinstance(node, ast.BinOp):
        sides = (node.left, node.right)
        return (all(_number(s) or _own_item(s, name) for s in sides)
                and any(_own_item(s, name) for s in sides))
    if isinstance(node, ast.UnaryOp):
        return _own_item(node.operand, name)
    return (isinstance(node, ast.Subscript) and is_zero(node.slice)
            and isinstance(node.value, ast.Name) and node.value.id == name)


def _whole_reduction(call: ast.Call, method: str) -> bool:
    """`x.sum()`, `x.norm(2)`, `a.dot(b)`: a reduction over every element."""
    allowed = _WHOLE_KEYWORDS.get(method, set()) | {"dtype"}
    if any(k.arg not in allowed for k in call.keywords):
        return False
    if method == "dot":
        return len(call.args) == 1
    if method == "norm":
        return len(call.args) <= 1 and all(isinstance(a, ast.Constant) for a in call.args)
    return not call.args


def _reduced(call: ast.Call, max_positional: int) -> bool:
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
