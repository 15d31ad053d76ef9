"""Which expressions are certainly one-element tensors (0-dim since PyTorch 0.4).

VF401 asks it of `x` in `x.data[0]` and `x[0]`: a loss, a full reduction, arithmetic of those
with numbers, an element of a list of them, a function's result when every `return` is one.
It reads one module's walk (`syntax.index`) and never imports torch. What a function, a class's
instance or a method of another file of the project returns comes from the project index
(`ModuleIndex.scalar_returns`, by the qualified name the call spells): `flow.returns` computes
it on the defining file and tells which of them a file's reads may need. What a name holds
where it is read: `flow.bindings`; the shapes read from syntax alone: `flow.shapes`; the
callees a call may run: `flow.scalar_callees`.
"""
import ast
from typing import Callable, Optional, Set, Tuple

from ..syntax import names as nm
from .backward_terms import backward_term
from .bindings import Element, NameBindings, Unpacked, displayed_item
from .call_returns import CallReturns
from .scalar_dicts import MAX_DEPTH, DictValues
from .ranks import Ranks
from .scalar_callees import ITEM, ITEM_1D, LIST, VARIABLE, Callees
from .shapes import (DATA_CONSTRUCTORS, ELEMENTWISE, LOSS_FUNCTIONS, REDUCTIONS, SCALAR_ARITHMETIC, SHAPE_KEEPING,
                     SIZED_CONSTRUCTORS, empty_literal, first_dim_reduction, int_value, is_none, is_number, is_zero,
                     narrowed_number, own_item, reduced, self_moved, viewed_one_dim, whole_reduction)


# Builtins whose result holds the elements of their one argument (`sorted(d.items())`).
SAME_ELEMENTS = ("sorted", "list", "tuple", "reversed")

class ScalarValues(Callees, CallReturns, DictValues):
    """Which expressions are certainly one-element tensors (0-dim since PyTorch 0.4)."""

    def __init__(self, index) -> None:
        self.index = index
        self.names = NameBindings(index)
        self.ranks = Ranks(self)
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
        sides = _elementwise_sides(expr)
        if sides:  # `a * loss`, `(l == l)`: one element when each side is one or a number
            numbers = [self.scalar(s, at, depth + 1, set(seen)) for s in sides]
            return not all(numbers) and all(number or self.one_element(s, at, depth + 1, seen)
                                            for s, number in zip(sides, numbers))
        if isinstance(expr, ast.UnaryOp):
            return self.one_element(expr.operand, at, depth + 1, seen)
        if isinstance(expr, ast.IfExp):  # `loss if total is None else total + loss`: a `None` never reaches `[0]`
            sides = [s for s in (expr.body, expr.orelse) if not is_none(s)]
            numbers = [s for s in sides if narrowed_number(expr, s)]  # `torch.mean(x) if not isinstance(x, int) else x`
            # `Variable(torch.Tensor([1.0])) if size_average else num_ratings`: one element as well
            numbers += [s for s in sides if s not in numbers and self.single(s, at, depth + 1, set(seen))]
            return len(numbers) < len(sides) and all(
                s in numbers or self.one_element(s, at, depth + 1, seen) for s in sides)
        if isinstance(expr, ast.Attribute) and expr.attr == "data":  # `criterion(...).data`
            return self.one_element(expr.value, at, depth + 1, seen)
        if isinstance(expr, ast.Attribute) and isinstance(expr.value, ast.Name) and expr.value.id == "self":
            return self.attribute(expr.attr, at, depth, seen)
        if isinstance(expr, ast.Name):
            return self.name(expr.id, at, depth, seen)
        if isinstance(expr, ast.Subscript) and isinstance(expr.slice, ast.Constant) and type(expr.slice.value) is int \
                and not empty_literal(expr.value) and self.elements(expr.value, at, depth + 1, seen):  # `f(x)[0]`
            return True
        if isinstance(expr, ast.Subscript) and is_zero(expr.slice) and self.variable(expr.value, at, depth + 1) \
                and self.one_element(expr.value, at, depth + 1, seen):
            return True  # `loss[0]`: 0.3's one-element Variable of a one-element loss (`.data[0]` was a number)
        if isinstance(expr, ast.Subscript) and not isinstance(expr.slice, (ast.Slice, ast.Tuple)) \
                and not (isinstance(expr.slice, ast.Constant) and type(expr.slice.value) is int) \
                and self.dict_values(expr.value, at, depth + 1, seen):
            return True  # `self._losses[k]` of a dict holding losses
        if isinstance(expr, ast.Subscript) and isinstance(expr.slice, ast.Constant) \
                and isinstance(expr.slice.value, str) and self.keyed(expr.value, expr.slice.value, at, depth + 1, seen):
            return True  # `errs["policy_err"]` of `errs = self._errs(...)` returning `dict(policy_err=...)`
        if isinstance(expr, ast.Subscript):  # `p[targets[idx].data]` of a 1-dim `p`
            return self.ranks.exact(expr, at, depth + 1) == 0
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
        sides = _elementwise_sides(expr)
        if sides:
            return (all(is_number(s) or self.plain_tensor(s, at, depth + 1, seen) for s in sides)
                    and not all(is_number(s) for s in sides))
        if isinstance(expr, ast.UnaryOp):
            return self.plain_tensor(expr.operand, at, depth + 1, seen)
        if isinstance(expr, ast.Name):
            if expr.id in seen:
                return True
            seen.add(expr.id)
            values = self.names.bindings(expr.id, at)
            return (bool(values) and all(isinstance(v, ast.AST) for v in values)
                    and all(is_number(v) or own_item(v, expr.id) or self.plain_tensor(v, v, depth + 1, seen)
                            for v in values)
                    and not all(is_number(v) or own_item(v, expr.id) for v in values))
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
            values = self.names.bindings(expr.id, at)
            return self._guarded("var " + self.names.key(expr.id, at), seen, False, lambda: (
                bool(values) and all(isinstance(v, ast.AST) for v in values)
                and all(is_number(v) or self.variable(v, v, depth + 1, seen) for v in values)
                and not all(is_number(v) for v in values)))
        return False

    def call(self, call: ast.Call, at: ast.AST, depth: int, seen: Set[str]) -> bool:
        """A loss, a reduction, a function returning one; else a call `flow.ranks` finds 0-dim
        (`torch.std(torch.cat(samples), 0)` of 1-dim samples)."""
        return self._call(call, at, depth, seen) or self.ranks.exact(call, at, depth + 1) == 0

    def _call(self, call: ast.Call, at: ast.AST, depth: int, seen: Set[str]) -> bool:
        func = call.func
        qual = self.index.qual(func) or self._aliased(func, at)
        if qual is not None and qual.startswith("torch.nn.functional."):
            return qual.rpartition(".")[2] in LOSS_FUNCTIONS and reduced(call, max_positional=3)
        if qual is not None and qual.startswith("torch.") and qual.count(".") == 1:
            name = qual[len("torch."):]
            if name in REDUCTIONS:  # torch.sum(x), torch.dot(a, b)
                wanted = 2 if name == "dot" else 1
                return len(call.args) == wanted and all(k.arg == "dtype" for k in call.keywords)
            if name in ELEMENTWISE:  # torch.abs(a - b)
                return len(call.args) == 1 and not call.keywords and self.one_element(
                    call.args[0], at, depth + 1, seen)
            if name in SCALAR_ARITHMETIC and len(call.args) == 2 and not call.keywords:
                # `torch.div(indix, simCube.size(2))`: as `indix / n`, one element when one side
                # is and the other a number or one element too
                numbers = [self.scalar(a, at, depth + 1, set(seen)) for a in call.args]
                return not all(numbers) and all(number or self.one_element(a, at, depth + 1, seen)
                                                for a, number in zip(call.args, numbers))
            return False
        if self.index.is_variable(func):  # `Variable(torch.zeros(1))`
            return bool(call.args) and self.one_element(call.args[0], at, depth + 1, seen)
        if isinstance(func, ast.Attribute):
            if func.attr in REDUCTIONS:
                if self.numpy_dot(call, at):
                    return False
                return whole_reduction(call, func.attr) or (
                    first_dim_reduction(call, func.attr) and self.one_dim(func.value, at, depth + 1, seen))
            if func.attr in SHAPE_KEEPING or func.attr == "numpy":
                return self.one_element(func.value, at, depth + 1, seen)
            if func.attr in SCALAR_ARITHMETIC and len(call.args) == 1 and not call.keywords \
                    and self.scalar(call.args[0], at, depth + 1, seen):
                return self.one_element(func.value, at, depth + 1, seen)  # `correct_k.mul_(100.0 / n)`
        if self._builtin(func, "sum", at) and len(call.args) == 1 and not call.keywords:
            # the builtin: `0 + a + b ...`, 0-dim when each is
            return self.elements(call.args[0], at, depth + 1, seen)
        if self.loss_module(func, at, depth, seen):
            return True
        return self.project_function(func, at, depth, seen) or self.constant_call_one(call, at, depth, seen)

    def _aliased(self, func: ast.AST, at: ast.AST) -> Optional[str]:
        """The torch function a local name is bound to, once and only to it
        (`discrimination_loss = nn.functional.cross_entropy` in `main()`)."""
        if not isinstance(func, ast.Name):
            return None
        values = self.names.bindings(func.id, at)
        quals = {self.index.qual(v) if isinstance(v, (ast.Name, ast.Attribute)) else None for v in values}
        qual = quals.pop() if len(quals) == 1 else None
        return qual if qual is not None and qual.startswith("torch.") else None

    def scalar(self, node: ast.AST, at: ast.AST, depth: int, seen: Optional[Set[str]] = None) -> bool:
        """A Python number: `100.0 / batch_size` with `batch_size = target.size(0)`;
        `min(max(k, 0), 1)`; `x.data[0]` of a one-element `x` (the number VF401 turns into
        `.item()`); `self.k` when every method assigns it numbers (one of them a literal:
        `self.k = 0.` in `__init__`)."""
        if depth > MAX_DEPTH:
            return False
        seen = seen if seen is not None else set()
        if is_number(node):
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
        if isinstance(node, ast.Attribute) and self.options(node.value, at) or isinstance(node, ast.Subscript) \
                and isinstance(node.slice, ast.Constant) and isinstance(node.slice.value, str) \
                and self.options(node.value, at):
            return True  # `args.lr`, `args['critic_beta']`: an option, no tensor
        if isinstance(node, ast.Name):
            values = self.names.bindings(node.id, at)  # `k = min(k + step, 1)`: decided by its other bindings
            return self._guarded("num " + self.names.key(node.id, at), seen, True, lambda: bool(values) and all(
                isinstance(v, ast.AST) and self.scalar(v, v, depth + 1, seen) for v in values))
        if isinstance(node, ast.Attribute) and isinstance(node.value, ast.Name) and node.value.id == "self":
            key = f"num self.{node.attr} {id(self.index.method_class(self.index.function_of(at)))}"
            values = self.names.self_bindings(node.attr, at)
            return self._guarded(key, seen, True, lambda: (
                bool(values) and all(isinstance(v, ast.AST) and self.scalar(v, v, depth + 1, seen) for v in values)
                and any(is_number(v) for v in values) and not self._class_binds(node.attr, at)))
        return False

    def attribute(self, attr: str, at: ast.AST, depth: int, seen: Set[str]) -> bool:
        """`self.loss` read in a method: every value the class's methods assign it is one
        element (`self.loss = self.criterion(input, self.target)` in `forward`, or a term of the
        sum the method then calls `.backward()` on; a `None` it starts as is never read as a
        tensor), and the class body binds no `loss` of its own."""
        cls = self.index.method_class(self.index.function_of(at))
        if cls is None:
            return False
        values = [v for v in self.names.self_bindings(attr, at, unpacked=True) if not is_none(v)]
        return self._guarded(f"one self.{attr} {id(cls)}", seen, True, lambda: (
            bool(values) and all(self._one_unpacked(v, depth, seen) if isinstance(v, Unpacked) else
                                 isinstance(v, ast.AST) and (self.one_element(v, v, depth + 1, seen)
                                                             or backward_term(self.index, v, "self." + attr))
                                 for v in values)
            and not self._class_binds(attr, at)))

    def _one_unpacked(self, v: Unpacked, depth: int, seen: Set[str]) -> bool:
        """`actions, self.entropy = self.sample_trajectories()`: the item is one element."""
        return not empty_literal(v.value) and (self.item(v.value, v.path, v.value, depth + 1, seen)
                                               or self.ranks.item_rank(v.value, v.path, depth + 1) == (0, 0))

    def options(self, expr: ast.AST, at: ast.AST) -> bool:
        """`args` bound only to `parser.parse_args()` (or `vars()` of it): its options are
        numbers or strings, no tensors."""
        if not isinstance(expr, ast.Name):
            return False
        values = self.names.bindings(expr.id, at)
        return bool(values) and all(isinstance(v, ast.Call) and _parsed(v) for v in values)

    def _class_binds(self, attr: str, at: ast.AST) -> bool:
        """The class holding `at` (or one of its family, `NameBindings.class_family`) binds
        `attr` in its body (`k = torch.zeros(1)`)."""
        cls = self.index.method_class(self.index.function_of(at))
        if cls is None:
            return True
        for s in (s for c in self.names.class_family(cls) for s in c.body):
            targets = s.targets if isinstance(s, ast.Assign) else [s.target] if isinstance(
                s, (ast.AnnAssign, ast.AugAssign)) else []
            if any(attr in nm.target_names(t) for t in targets):
                return True
        return False

    def name(self, name: str, at: ast.AST, depth: int, seen: Set[str]) -> bool:
        # a name of this scope, not the caller's; `loss = loss + ...`: decided by its other bindings
        return self._guarded(self.names.key(name, at), seen, True, lambda: self._name(name, at, depth, seen))

    def _name(self, name: str, at: ast.AST, depth: int, seen: Set[str]) -> bool:
        """Every binding is one element (or a number, or the read itself turned into one), and
        one of them is a tensor that may be 0-dim. A 1-dim `torch.zeros(1)` counts among them:
        `.item()` reads its number as `.data[0]` did. `total += v` on such tensors keeps their
        shape (in place), whatever `v` is."""
        # `total = None`: `[0]` of it raises; `hits, n = 0, 0`: the number unpacked
        values = [displayed_item(v) for v in self.names.bindings(name, at) if not is_none(v)]
        if not values or any(v is None for v in values):
            return False
        plain = [v for v in values if not self.names.augmented(v)]
        if plain and all(isinstance(v, ast.AST) and not (is_number(v) or own_item(v, name)) for v in plain):
            values = plain  # every value a tensor: `+=` keeps its shape, whatever it adds
        tensor = False  # a value that may be 0-dim
        for v in values:
            if isinstance(v, Element):
                if empty_literal(v.iterable) or not self.member(v.iterable, v.path, at, depth + 1, seen):
                    return False
                tensor = True
            elif isinstance(v, Unpacked):
                if empty_literal(v.value) or not (self.item(v.value, v.path, at, depth + 1, seen)
                                                  or backward_term(self.index, v.value, name)
                                                  or self.ranks.item_rank(v.value, v.path, depth + 1) == (0, 0)):
                    return False
                tensor = True
            elif is_number(v) or own_item(v, name) or self.single(v, v, depth + 1, set(seen)) \
                    or self.scalar(v, v, depth + 1, set(seen)):  # `k = min(max(k, 0), 1)` after `k = k.data[0]`
                continue
            elif self.one_element(v, v, depth + 1, seen) or backward_term(self.index, v, name):
                tensor = True
            else:
                return False
        return tensor

    def accumulated_parameter(self, expr: ast.AST, at: ast.AST) -> bool:
        """`total_loss += loss.data` on a parameter `total_loss` (its callers pass the running
        total in): every other binding reaching `at` adds a one-element value, or is a number.
        One element when the caller passes a number or one element, as an accumulator starts."""
        if not isinstance(expr, ast.Name):
            return False
        scope = self.index.function_of(at)
        values = self.names.bindings(expr.id, at)
        if not isinstance(scope, (ast.FunctionDef, ast.AsyncFunctionDef)) or expr.id not in nm.function_params(scope) \
                or len(values) < 2 or values[-1] is not None:
            return False
        added = [v for v in values[:-1] if self.names.augmented(v)]
        return bool(added) and all(isinstance(v, ast.AST) and (is_number(v) or v in added) for v in values[:-1]) \
            and all(self.one_element(v, v, 1, set()) for v in added)

    def single(self, expr: ast.AST, at: ast.AST, depth: int, seen: Set[str]) -> bool:
        """A 1-dim tensor of one element under every PyTorch: `torch.zeros(1)`,
        `torch.Tensor([0.])`, or `Variable()`, `.cuda()` of one, or a name bound only to such."""
        if depth > MAX_DEPTH:
            return False
        if isinstance(expr, ast.Name):
            values = self.names.bindings(expr.id, at)
            return self._guarded("single " + self.names.key(expr.id, at), seen, True, lambda: bool(values) and all(
                isinstance(v, ast.AST) and self.single(v, v, depth + 1, seen) for v in values))
        if not isinstance(expr, ast.Call) or len(expr.args) != 1:
            return False
        func, arg = expr.func, expr.args[0]
        if isinstance(func, ast.Attribute) and func.attr in SHAPE_KEEPING or self.index.is_variable(func):
            return self.single(func.value if isinstance(func, ast.Attribute) else arg, at, depth + 1, seen)
        qual = self.index.qual(func)
        if qual is None or not qual.startswith("torch.") or qual.count(".") != 1 \
                or any(k.arg not in ("dtype", "device", "requires_grad") for k in expr.keywords):
            return False
        name = qual[len("torch."):]
        if name in SIZED_CONSTRUCTORS and int_value(arg) == 1:
            return True
        return name in DATA_CONSTRUCTORS and isinstance(arg, (ast.List, ast.Tuple)) and len(arg.elts) == 1 \
            and self.scalar(arg.elts[0], at, depth + 1, seen)

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
        if isinstance(iterable, ast.Subscript):  # `for k in idx[b, :]` of a 2-dim `idx`
            return self.one_dim(iterable, at, depth + 1, seen)
        if not isinstance(iterable, ast.Name):
            return False
        if self.one_dim(iterable, at, depth + 1, set(seen)):
            return True
        return self._guarded("[] " + self.names.key(iterable.id, at), seen, True,
                             lambda: self._list_elements(iterable.id, at, depth, seen))

    def _list_elements(self, name: str, at: ast.AST, depth: int, seen: Set[str]) -> bool:
        values = self.names.bindings(name, at)
        if not values or not all(isinstance(v, ast.AST) and self.elements(v, v, depth + 1, seen) for v in values):
            return False
        added = self.names.appended(name, at)
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
        if isinstance(value, ast.Call) and len(path) == 1 and leaf == self.one_element \
                and self.constant_call_item(value, path[0], at, depth, set(seen)):
            return True  # `loss, x = calc(x, average=True)` of `if average: loss = loss.mean()`
        if isinstance(value, ast.Call) and self.every_return(  # a def here, or another file's (`shape`)
                value.func, at, f"{path} {leaf.__name__} ", set(seen),
                lambda v, inner: self.item(v, path, v, depth + 1, inner, leaf), shape=shape):
            return True
        if isinstance(value, ast.Name):
            values = self.names.bindings(value.id, at)
            if self._guarded(f"{path} {leaf.__name__} " + self.names.key(value.id, at), set(seen), True, lambda: bool(
                    values) and all(isinstance(v, ast.AST) and self.item(v, path, v, depth + 1, seen, leaf)
                                    for v in values)):
                return True
        # every element qualifies (`res = []` and `res.append(...)`)
        return (leaf == self.one_element and len(path) == 1 and not empty_literal(value)
                and self.elements(value, at, depth + 1, seen))

    def member(self, iterable: ast.AST, path: Tuple[int, ...], at: ast.AST, depth: int, seen: Set[str]) -> bool:
        """The part at `path` of every element of `iterable` is one element: `path` () is
        the element itself; `d.items()` (1: a value of the dict), `enumerate(xs)` (1: an
        element of `xs`), `zip(a, b)` (k: an element of the k-th), a list of tuples; each
        through `sorted(...)`, `list(...)`, `tuple(...)`, `reversed(...)`."""
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
            if len(args) == 1 and any(self._builtin(func, name, at) for name in SAME_ELEMENTS):
                return self.member(args[0], path, at, depth + 1, seen)  # `sorted(d.items())`: the same elements
            return False
        if isinstance(iterable, (ast.ListComp, ast.GeneratorExp)):
            return self.item(iterable.elt, path, iterable.elt, depth + 1, seen)
        if isinstance(iterable, (ast.List, ast.Tuple)):
            return bool(iterable.elts) and all(
                not isinstance(e, ast.Starred) and self.item(e, path, e, depth + 1, seen) for e in iterable.elts)
        return False

    def one_dim(self, expr: ast.AST, at: ast.AST, depth: int, seen: Set[str]) -> bool:
        """Certainly a 1-dim tensor: `x.view(-1)` (also through `.float()`, `.cuda()`...),
        or a name bound only to such values (`correct = correct.view(-1)`; `data, targets =
        get_batch(...)` where every return's second item is one)."""
        if depth > MAX_DEPTH:
            return False
        if viewed_one_dim(expr):
            return True
        while isinstance(expr, ast.Call) and isinstance(expr.func, ast.Attribute) and expr.func.attr in SHAPE_KEEPING:
            expr = expr.func.value
        if isinstance(expr, ast.Call) and self.index.is_variable(expr.func) and expr.args:  # `Variable(t.view(-1))`
            return self.one_dim(expr.args[0], at, depth + 1, seen)
        if isinstance(expr, ast.Name):
            values = self.names.bindings(expr.id, at)
            if self._guarded("1-d " + self.names.key(expr.id, at), seen, True, lambda: bool(values) and all(
                    self.item(v.value, v.path, at, depth + 1, seen, self.one_dim) if isinstance(v, Unpacked)
                    else isinstance(v, ast.AST) and self.one_dim(v, v, depth + 1, seen) for v in values)
                    and not all(self_moved(v, expr.id) for v in values)):
                return True
        return isinstance(expr, (ast.Name, ast.Call, ast.Subscript)) and self.ranks.exact(expr, at, depth + 1) == 1

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
        values = self.names.bindings(expr.id, at)
        return self._guarded("np " + self.names.key(expr.id, at), seen, True, lambda: bool(values) and all(
            self.item(v.value, v.path, at, depth + 1, seen, self.numpy_array) if isinstance(v, Unpacked)
            else isinstance(v, ast.AST) and self.numpy_array(v, v, depth + 1, seen) for v in values))

    def numpy_dot(self, call: ast.Call, at: ast.AST) -> bool:
        """`R.dot(point)` with `point = np.zeros((3, 1))`: NumPy's product of arrays of any
        shape, not a tensor's dot of two vectors (torch's takes no array)."""
        func = call.func
        return isinstance(func, ast.Attribute) and func.attr == "dot" and any(
            self._numpy_made(e, at) for e in [func.value] + list(call.args))

    def _numpy_made(self, expr: ast.AST, at: ast.AST) -> bool:
        if isinstance(expr, ast.Call):
            return (self.index.qual(expr.func) or "").startswith("numpy.")
        values = self.names.bindings(expr.id, at) if isinstance(expr, ast.Name) else None
        return bool(values) and all(isinstance(v, ast.Call) and (self.index.qual(v.func) or "").startswith("numpy.")
                                    for v in values)

    def _builtin(self, func: ast.AST, name: str, at: ast.AST) -> bool:
        return (isinstance(func, ast.Name) and func.id == name and not self.names.bindings(name, at)
                and not self.index.module_names.bound(name))


def _parsed(call: ast.Call) -> bool:
    """`parser.parse_args()`, `vars(parser.parse_args())`."""
    if isinstance(call.func, ast.Name) and call.func.id == "vars" and len(call.args) == 1 and not call.keywords:
        return isinstance(call.args[0], ast.Call) and _parsed(call.args[0])
    return isinstance(call.func, ast.Attribute) and call.func.attr == "parse_args"


def _elementwise_sides(expr: ast.AST) -> Tuple[ast.AST, ...]:
    """The operands of an element-wise operation: arithmetic (`a * loss`), or one comparison
    (`(l == l)`, `s > 0`: a tensor of the operands' broadcast shape; a chain `a < b < c` is a
    Python `and` and `is`/`in` give a bool)."""
    if isinstance(expr, ast.BinOp):
        return expr.left, expr.right
    if isinstance(expr, ast.Compare) and len(expr.ops) == 1 \
            and not isinstance(expr.ops[0], (ast.Is, ast.IsNot, ast.In, ast.NotIn)):
        return expr.left, expr.comparators[0]
    return ()
