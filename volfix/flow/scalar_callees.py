"""The callees VF401's one-element questions follow (`flow.scalars`, whose `ScalarValues` this
mixin serves): a loss module (`criterion(out, y)`), a function of this module or a method of the
class holding the read, the call of an instance (`forward` of an `nn.Module`, `__call__`) or its
method, and what another file of the project defines (`ModuleIndex.scalar_returns`, by qualified
name, or `*.name` when only a star import of the project binds the name).
"""
import ast
import builtins
from typing import Callable, Optional, Set

from ..syntax import names as nm
from .bindings import Element, Unpacked
from .calls import bound_positional, call_sites, passed_argument
from .shapes import MODULE_MOVES, branches, is_none, moved_itself, own_returns, reduced

# What a call returns, as the project index hands it from file to file (`returns_facts`): every
# return is one element (`ONE`), a list or tuple of one-element values (`LIST`), a Variable in
# 0.3 (`VARIABLE`), a tuple whose item k is one element (`ITEM` + k).
ONE, LIST, VARIABLE, ITEM = "one", "list", "variable", "item:"
ITEM_1D = "item1d:"  # a tuple whose item k is a 1-dim tensor (`return data, target.view(-1)`)
# One element when a call keeps the defaults of the parameters named after it (`flow.call_returns`).
ONE_DEFAULTS = "one-defaults:"
# A method (`forward`) one element when the instance was made keeping those defaults of `__init__`.
ONE_MADE = "one-made:"
# What the project index gives a key whose module is no file of the project (a library's, or
# one the tree lacks): volfix cannot read what it returns (`known_callee`).
OUTSIDE = "outside"
MAX_ITEMS = 8  # items of a returned tuple looked at
MAX_MEMBER_DEPTH = 3  # lists of lists of instances followed
# The keys of `ModuleIndex.scalar_returns` after a class's qualified name: a call of its
# instance (`Cls()()`: `forward` of an `nn.Module`, or `__call__`) and its method `m` (`Cls().m`).
INSTANCE_CALL, INSTANCE_METHOD = "()()", "()."
# The key after a class's qualified name that says it is an autograd Function and how VF501
# reads it (`rules.vf501_legacy_function.function_fact`): its callers in other files are
# rewritten with it (`Fn(settings)(inputs)` -> `Fn.apply(inputs, settings)`).
AUTOGRAD_FUNCTION = INSTANCE_METHOD + "#autograd-function"
# The key the project index sets, before a class name, in the file defining an autograd
# Function that other files of the run call: they get their own fix (VF501).
CALLED_ELSEWHERE = "#called-elsewhere."
# The module part of a name that only a star import of the project can bind (`from utils import *`
# and `Batching` bound by nothing else): `*.Batching`, looked up in the modules star-imported.
STAR_MODULE = "*"
# The key after a function's qualified name and `INSTANCE_METHOD` (`trainer.train_step().#trains`),
# or after a class's method (`model.Pix2Pix().optimize_parameters#trains`), that says it trains
# (`flow.trains`): a region in another file must not cover its call.
TRAINS = "#trains"


def trains_key(name: str) -> str:
    """The `TRAINS` key of a function (`train_step`, `trainer.train_step`) or of a class's method
    (`Pix2Pix().optimize_parameters`), in the defining file's facts and in its readers' asks."""
    return name + (TRAINS if INSTANCE_METHOD in name else INSTANCE_METHOD + TRAINS)


# The key of `ModuleIndex.scalar_returns` the project index sets for a module-level function of
# this file that no other file of the project names (so its calls here are all its calls).
UNSHARED = "#unshared."
_BUILTINS = frozenset(dir(builtins))
_MODULE_BASES = frozenset({"torch.nn.Module", "torch.nn.modules.module.Module"})


class Callees:
    """The callees' half of `ScalarValues` (it supplies `index`, `names`, `one_element`)."""

    def loss_module(self, func: ast.AST, at: ast.AST, depth: int, seen: Set[str]) -> bool:
        """`criterion(out, y)`: `criterion` (or `self.criterion`) is bound only to a loss
        module made without `reduction='none'`; also `criterion.forward(out, y)`, as 0.3-era
        code often called it."""
        if isinstance(func, ast.Attribute) and func.attr == "forward":
            func = func.value
        values = [func] if isinstance(func, ast.Call) else self.names.of(func, at) or []  # `nn.BCELoss()(out, y)`
        if values == [None] and isinstance(func, ast.Name):
            values = self.program_arguments(func.id, at) or []  # `def train(model, loss, ...)` in a script
        values = [v for v in values if not (isinstance(v, ast.AST) and moved_itself(v, func))]
        return bool(values) and all(isinstance(v, ast.AST) and self.is_loss_module(v) for v in values)

    def program_arguments(self, name: str, at: ast.AST) -> Optional[list]:
        """What the parameter `name` (never rebound) of the module-level function holding `at`
        is bound to by every call of it in a program (`ProgramRanks.program_arguments`): the
        values each passes (a name by its bindings where the call reads it), or a default.
        None when any is unknown."""
        scope = self.index.function_of(at)
        arguments = self.ranks.program_arguments(scope, name, unshared=True) \
            if isinstance(scope, ast.FunctionDef) and name in nm.function_params(scope) else None
        if arguments is None:
            return None
        out: list = []
        for call, arg in arguments:
            values = [arg] if not isinstance(arg, ast.Name) else self.names.of(arg, call)
            if not values or any(not isinstance(v, ast.AST) for v in values):
                return None
            out.extend(values)
        return out

    def known_callee(self, func: ast.AST, at: ast.AST) -> bool:
        """`criterion` (or `self.criterion`) is bound only by assignments volfix reads, so
        what it is was decided by `loss_module` (a parameter or a loop target is unknown, and so
        is the result of a call volfix cannot follow: `loss_fn = make()` with `make` passed in,
        or a function or class of a module the project does not have: `crit = Criterion(...)`
        after `from engine import Criterion` with no `engine.py`, a library's loss)."""
        qual = self.index.qual(func)
        if qual is not None:  # `F.mse_loss`, a project function: `call` knows it or it is no loss
            return not self._outside(qual)
        values = self.names.of(func, at)
        return bool(values) and all(isinstance(v, ast.AST) and not self._opaque_call(v) and not self._parameter(v)
                                    for v in values)

    def _parameter(self, value: ast.AST) -> bool:
        """`self.criterion = criterion` in `__init__(self, model, criterion)`: what the
        constructor's callers pass, unknown here."""
        return self.index.own_parameter(value) is not None

    def _opaque_call(self, value: ast.AST) -> bool:
        """A call of a name that is neither imported nor a def or class of this module (a
        parameter, a local), or of a class imported from outside the project: what it returns
        (or its instance's call) is not read."""
        value = _unmoved(value, self.index)
        if not isinstance(value, ast.Call):
            return False
        if self.index.qual(value.func) is not None:
            return self.made_outside(value) is not None
        return isinstance(value.func, ast.Name) and self._module_def(value.func.id, value) is None \
            and self.star_name(value.func, value) is None

    def outside_callee(self, func: ast.AST, at: ast.AST) -> Optional[str]:
        """The qualified name, outside the project, of what `func` is or what made it
        (`engine.Criterion` for `crit` after `crit = Criterion(...)`), for the note."""
        qual = self.index.qual(func)
        if qual is not None:
            return qual if self._outside(qual) else None
        made = [self.made_outside(v) for v in self.names.of(func, at) or () if isinstance(v, ast.AST)]
        return next((m for m in made if m is not None), None)

    def made_outside(self, value: ast.AST) -> Optional[str]:
        """`engine.Criterion` for `Criterion(...)` (also moved, `.cuda()`) when the project
        index found its module in no file of the project."""
        value = _unmoved(value, self.index)
        qual = self.index.qual(value.func) if isinstance(value, ast.Call) else None
        return qual if qual is not None and self._outside(qual + INSTANCE_CALL) else None

    def _outside(self, key: str) -> bool:
        """The project index found `key`'s module in no file of the project."""
        return not nm.is_torch(key) and OUTSIDE in self.index.scalar_returns.get(key, ())

    def is_loss_module(self, value: ast.AST) -> bool:
        """`nn.CrossEntropyLoss()`, also moved: `nn.MSELoss(size_average=False).cuda()`."""
        value = _unmoved(value, self.index)
        if not isinstance(value, ast.Call):
            return False
        qual = self.index.qual(value.func)
        return (qual is not None and qual.startswith("torch.nn.") and qual.endswith("Loss")
                and reduced(value, max_positional=2))

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
        fn = self.project_callee(func, at) or self.bound_lambda(func, at)
        if fn is None:
            found = self.other_callees(func, at) or self.passed_functions(func, at)
            external = self.index.scalar_returns
            return bool(found) and all(shape in external.get(c, ()) if isinstance(c, str)
                                       else self.def_returns(c, tag, seen, holds) for c in found)
        return self.def_returns(fn, tag, seen, holds)

    def bound_lambda(self, func: ast.AST, at: ast.AST) -> Optional[ast.Lambda]:
        """The lambda a called name is bound to, once (`evaluation = lambda o, t: torch.mean(...)`);
        only names the module assigns a lambda are looked up (most calls are of others)."""
        if not isinstance(func, ast.Name) or func.id not in lambda_names(self.index):
            return None
        bound = self.names.of(func, at)
        return bound[0] if bound and len(bound) == 1 and isinstance(bound[0], ast.Lambda) else None

    def def_returns(self, fn: ast.AST, tag: str, seen: Set[str], holds: Callable[[ast.AST, Set[str]], bool]) -> bool:
        key = f"def {tag}{id(fn)}"
        if key in seen:
            return False
        inner = seen | {key}
        returns = [fn.body] if isinstance(fn, ast.Lambda) else [node.value for node in own_returns(fn)]
        return bool(returns) and all(v is not None and holds(v, inner) for v in returns)

    def project_callee(self, func: ast.AST, at: ast.AST) -> Optional[ast.AST]:
        """The `def` a call reaches: a function of this module, or a method of the class
        holding `at` called on `self`."""
        if isinstance(func, ast.Name):
            fn = self._module_def(func.id, at)
            return fn if isinstance(fn, ast.FunctionDef) else None
        if isinstance(func, ast.Attribute) and isinstance(func.value, ast.Name) and func.value.id == "self":
            cls = self.index.method_class(self.index.function_of(at))
            return None if cls is None else own_def(cls, func.attr)
        return None

    def other_callees(self, func: ast.AST, at: ast.AST) -> list:
        """What a call of `func` may run besides `project_callee`'s def: a function of another
        file (`utils.loss_fn`), the call of an instance (`criterion(...)`, `self.crf(...)`:
        `forward` of an `nn.Module` subclass, or `__call__`) or its method (`agent.update(...)`)
        where every value the name is bound to is made by a class of this module (its def) or
        of another file; those as keys of `index.scalar_returns`. [] when any is unknown."""
        external = self.index.scalar_returns
        qual = self.index.qual(func) or self.star_name(func, at)
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
            fn = instance_call(self.index, cls) if method is None else own_def(cls, method)
            if fn is None:
                return []
            out.append(fn)
        return out

    def instance_classes(self, expr: ast.AST, at: ast.AST, depth: int = 0) -> Optional[list]:
        """The classes `expr` is an instance of, when every value it is bound to makes one:
        a class of this module (its `ClassDef`) or the qualified name of another's (a
        `None` it is also bound to is never called); for a loop's target, every member of the
        list it walks (`for sl in style_losses`, filled by `style_losses.append(style_loss)`
        after `style_loss = StyleLoss(...)`). None when unknown."""
        values = [expr] if isinstance(expr, ast.Call) else self.names.of(expr, at)
        if values is None or depth > MAX_MEMBER_DEPTH:
            return None
        values = [v for v in branches(values)
                  if not is_none(v) and not (isinstance(v, ast.AST) and moved_itself(v, expr))]
        out: list = []
        for value in values:
            if isinstance(value, Element) and not value.path and isinstance(value.iterable, ast.Name):
                members = self.list_members(value.iterable, depth)
                classes = [self.instance_classes(m, m, depth + 1) for m in members or ()]
                if not members or any(c is None for c in classes):
                    return None
                out.extend(c for found in classes for c in found)
                continue
            if isinstance(value, ast.Name):  # `self.translator = translator` in `__init__`
                found = self._constructed_with(value, depth)
                if found is None:
                    return None
                out.extend(found)
                continue
            value = _unmoved(value, self.index)  # `Net().cuda()` is the `Net` it made
            if not isinstance(value, ast.Call):
                return None
            qual = self.index.qual(value.func)
            if qual is not None and not nm.is_torch(qual):
                out.append(qual)
            elif isinstance(value.func, ast.Name) and qual is None:
                cls = self._module_def(value.func.id, value)
                starred = self.star_name(value.func, value) if cls is None else None
                if not isinstance(cls, ast.ClassDef) and starred is None:
                    return None
                out.append(cls if starred is None else starred)
            else:
                return None
        return out or None

    def _constructed_with(self, param: ast.Name, depth: int) -> Optional[list]:
        """The classes of what every construction of a module-level class passes for a
        parameter of its `__init__` (never bound again there), where no other file constructs
        it: in a program, or a class no other file of the project names (`UNSHARED`):
        `Validator(Translator())` for `self.translator = translator` (artetxem/undreamt's
        validator scoring through `self.translator.score(...)`, built in `main_train()`)."""
        fn = self.index.own_parameter(param)
        cls = self.index.method_class(fn) if fn is not None else None
        if cls is None or getattr(fn, "name", None) != "__init__" \
                or not isinstance(self.index.parents.get(cls), ast.Module) \
                or not (self.ranks.in_program() or UNSHARED + cls.name in self.index.scalar_returns):
            return None
        sites, other = call_sites(self.index, fn)
        if not sites or other:
            return None
        positional = bound_positional(fn, method=True)
        out: list = []
        for call in sites:
            arg, known = passed_argument(call, positional, param.id)
            found = self.instance_classes(arg, call, depth + 1) if arg is not None and known else None
            if found is None:
                return None
            out.extend(found)
        return out

    def list_members(self, name: ast.Name, depth: int = 0) -> Optional[list]:
        """What the list `name` reads holds: the items of the list or tuple literals it is bound
        to and what `.append` adds to it, also the list a function of the module returns in a
        tuple (`model, style_losses, content_losses = get_style_model_and_losses(...)`, its
        `return model, style_losses, content_losses`); None when it is bound to anything else
        or changed some other way."""
        values = self.names.bindings(name.id, name)
        if not values or depth > MAX_MEMBER_DEPTH:
            return None
        out: list = []
        for value in values:
            if isinstance(value, (ast.List, ast.Tuple)) and not any(isinstance(e, ast.Starred) for e in value.elts):
                out.extend(value.elts)
            elif isinstance(value, Unpacked) and len(value.path) == 1 and isinstance(value.value, ast.Call):
                returned = self.returned_lists(value.value, value.path[0], depth)
                if returned is None:
                    return None
                out.extend(returned)
            else:
                return None
        added = self.names.appended(name.id, name)
        return None if added is None else out + added

    def returned_lists(self, call: ast.Call, item: int, depth: int) -> Optional[list]:
        """The members of the list at `item` of every tuple the def `call` reaches returns."""
        fn = self.project_callee(call.func, call)
        returns = [node.value for node in own_returns(fn)] if fn is not None else []
        out: list = []
        for value in returns:
            if not (isinstance(value, ast.Tuple) and item < len(value.elts) and isinstance(value.elts[item], ast.Name)) \
                    or any(isinstance(e, ast.Starred) for e in value.elts):
                return None
            members = self.list_members(value.elts[item], depth + 1)
            if members is None:
                return None
            out.extend(members)
        return out if returns else None

    def passed_functions(self, func: ast.AST, at: ast.AST) -> list:
        """`f(True)` where `f` is a parameter, never rebound, of the module-level function
        holding `at`: the defs that function's calls pass for it (each a def of the calling
        function or of the module, by name), when those calls are all its calls (a program,
        or no other file of the project names it: `UNSHARED`). [] when any is something else."""
        scope = self.index.function_of(at)
        if not isinstance(func, ast.Name) or not isinstance(scope, ast.FunctionDef) \
                or not isinstance(self.index.parents.get(scope), ast.Module) \
                or func.id not in nm.function_params(scope) or self.names.bindings(func.id, at) != [None]:
            return []
        key = UNSHARED + scope.name
        if not (self.ranks.in_program() or key in self.index.scalar_returns):
            return []
        out = []
        for call, arg in self.ranks.passed(scope, func.id) or ():
            fn = self.local_def(arg.id, call) if isinstance(arg, ast.Name) else None
            if fn is None:
                return []
            out.append(fn)
        return out

    def local_def(self, name: str, at: ast.AST) -> Optional[ast.FunctionDef]:
        """The one `def name` of the function holding `at` (or of the module) when nothing
        else binds `name` there."""
        scope = self.index.function_of(at)
        if scope is self.index.tree:
            fn = self._module_def(name, at)
            return fn if isinstance(fn, ast.FunctionDef) else None
        found = [f for f in self.index.functions if f.name == name and self.index.function_of(f) is scope]
        if len(found) != 1 or not isinstance(found[0], ast.FunctionDef) or self.names.bindings(name, at) \
                or name in nm.function_params(scope):
            return None
        return found[0]

    def star_name(self, func: ast.AST, at: ast.AST) -> Optional[str]:
        """`*.Batching` for a name nothing in this file binds (no builtin either) while the file
        star-imports modules other than torch's: one of those binds it, if any does."""
        if not isinstance(func, ast.Name) or func.id in _BUILTINS or self.names.bindings(func.id, at) \
                or self.index.lookup_for(func)(func.id) is not None or self.index.module_names.bound(func.id) \
                or not any(not nm.is_torch(m) for m in self.index.module_names.star_modules):
            return None  # bound here: in the function, one enclosing it (a closure), or the module
        return f"{STAR_MODULE}.{func.id}"

    def _module_def(self, name: str, at: ast.AST):
        """The one module-level `def name` or `class name` when nothing else binds `name`
        where `at` reads it (a local, a parameter, an assignment, an import)."""
        scope = self.index.function_of(at)
        if scope is not self.index.tree:
            local = self._local_def(name, scope)
            if local is not None:
                return local
        if scope is not self.index.tree and self.names.bindings(name, at):
            return None
        return self.index.module_level_def(name)

    def _local_def(self, name: str, scope: ast.AST):
        """`def compute_loss_accuracy(data, label): ...` nested in the function reading it (a
        closure of `main()`), when that one `def` is all that binds the name there."""
        defs = [n for n in ast.walk(scope) if isinstance(n, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef))
                and n.name == name and n is not scope and self.index.function_of(n) is scope]
        if len(defs) != 1 or not isinstance(defs[0], ast.FunctionDef) \
                or self.index.plain_assignments(name, scope) != []:
            return None
        return defs[0]


def _unmoved(value: ast.AST, index) -> ast.AST:
    """`make()` for `make().cuda()`: what a move of a module (not torch's function) was called on."""
    while isinstance(value, ast.Call) and isinstance(value.func, ast.Attribute) \
            and value.func.attr in MODULE_MOVES and index.qual(value.func) is None:
        value = value.func.value
    return value


def own_def(cls: ast.ClassDef, name: str) -> Optional[ast.FunctionDef]:
    defs = [s for s in cls.body if isinstance(s, (ast.FunctionDef, ast.AsyncFunctionDef)) and s.name == name]
    return defs[0] if len(defs) == 1 and isinstance(defs[0], ast.FunctionDef) else None


def instance_call(index, cls: ast.ClassDef) -> Optional[ast.FunctionDef]:
    """What calling an instance of `cls` runs: its own `__call__`, or the `forward` of a
    direct subclass of `nn.Module` (whose `__call__` runs it)."""
    call = own_def(cls, "__call__")
    if call is not None or any(isinstance(s, ast.FunctionDef) and s.name == "__call__" for s in cls.body):
        return call
    if any(index.qual(base) in _MODULE_BASES for base in cls.bases):
        return own_def(cls, "forward")
    return None


def lambda_names(index) -> frozenset:
    """The names the module assigns a lambda to (`flatten = lambda l: ...`), once per index."""
    found = getattr(index, "_lambda_names", None)
    if found is None:
        found = frozenset(name for name, nodes in index.names.items() if any(
            isinstance(n.ctx, ast.Store) and isinstance(index.parents.get(n), ast.Assign)
            and isinstance(index.parents[n].value, ast.Lambda) for n in nodes))
        index._lambda_names = found
    return found
