"""What a statement can do to autograd, for placing regions (`fixes.regions`).

A region may cover statements that cannot record a graph or change a grad-dependent result:
`inert` ones (docstrings, constants, `model.eval()`, logging, `AverageMeter()` set-up), which
never keep a function from becoming a decorator, and `harmless` ones (assignments of values
without autograd history, of a `torch.nn` module made but not run, `pass`/`break`, asserts
calling nothing that may record, `if`s of such statements and `for i in range(n)` loops of
them), which never split a region in two.
"""
from __future__ import annotations

import ast
from typing import Callable, Dict, List, Optional, Tuple

from ..flow.calls import parameter_defaults
from ..flow.values import (FRESH_TENSORS, KILL_METHODS, MOVE_METHODS, PURE_CALLS, autograd_free, free_callee,
                           is_constant, returns_autograd_free)
from ..syntax import names as nm
from ..syntax.index import ModuleIndex
from ..syntax.names import function_params, iter_statements

LOGGING_FUNCS = frozenset({"print", "log", "info", "debug", "warning", "warn", "write", "set_description",
                           "set_postfix", "add_scalar", "update", "flush", "tic", "toc"})
BOOKKEEPING_SUFFIXES = ("Meter", "Timer", "Counter", "Logger", "Tracker")


class StatementKinds:
    """The questions the region placer asks of statements and values, remembered per
    statement (a long script's regions ask about the same ones)."""

    def __init__(self, index: ModuleIndex) -> None:
        self.index = index
        self._harmless: Dict[Tuple[int, int], bool] = {}
        self._augmented: Dict[int, Dict[str, List[ast.AST]]] = {}
        self._free_functions: Dict[int, bool] = {}

    def callee_free(self, call: ast.Call) -> bool:
        """A call of a function of this module whose every return is without autograd history
        (`one_hot(idx, n)` returning `torch.from_numpy(a)`, moved to the GPU)."""
        func = call.func
        if not isinstance(func, ast.Name) or self.index.shadowed(func.id, self.index.scope_of(call)):
            return False
        fn = next((s for s in reversed(self.index.module_statements)
                   if isinstance(s, ast.FunctionDef) and s.name == func.id), None)
        if fn is None or fn.decorator_list:
            return False
        found = self._free_functions.get(id(fn))
        if found is None:
            found = self._free_functions[id(fn)] = self.makes_data_only(fn) and returns_autograd_free(fn)
        return found

    def makes_data_only(self, fn: ast.FunctionDef) -> bool:
        """Every call in `fn` only makes or moves data (numpy, a fresh tensor, `.cuda()`,
        builtins): calling it records no graph and trains nothing, whatever it returns (a
        function returning `loss.item()` after `loss.backward()` is no such function)."""
        for node in ast.walk(fn):
            if not isinstance(node, ast.Call):
                continue
            func = node.func
            qual = self.index.qual(func) or ""
            if qual.startswith(("numpy.", "math.")) or qual == "torch.cuda.is_available" \
                    or (qual.startswith("torch.") and qual[len("torch."):] in FRESH_TENSORS) \
                    or nm.is_variable(qual):
                continue
            if isinstance(func, ast.Name) and func.id in PURE_CALLS and self.index.lookup_for(func)(func.id) is None:
                continue
            if isinstance(func, ast.Attribute) and func.attr in MOVE_METHODS | KILL_METHODS:
                continue
            return False
        return True

    def free(self, value: ast.AST, scope: ast.AST) -> bool:
        """`autograd_free` with the scope's assignments and this module's functions."""
        return autograd_free(value, self.only_assigned(scope), callee_free=self.callee_free)

    def value_free(self, value: ast.AST, scope: ast.AST) -> bool:
        """The value carries no autograd history whatever grad mode computed it: `free`, and
        calls of this module's functions whose every return is free though they compute
        (`recover_nbest_label(tag_seq, ...)` returning lists of labels)."""
        return autograd_free(value, self.only_assigned(scope), callee_free=self.returns_free)

    def returns_free(self, call: ast.Call) -> bool:
        return free_callee(self.index, call)

    def only_assigned(self, scope: ast.AST) -> Callable[[str], Optional[list]]:
        """name -> the values the scope assigns it, when plain `name = value` statements and
        `name += value` are its only bindings there (no loop target, parameter or tuple
        target); `+=` adds its value (the name builds on itself)."""
        assigned = self.index.assigned_values(scope)
        augmented = self._augmented.get(id(scope))
        if augmented is None:
            augmented = self._augmented[id(scope)] = {}
            body = scope.body if isinstance(getattr(scope, "body", None), list) else []
            for stmt in iter_statements(body):
                if isinstance(stmt, ast.AugAssign) and isinstance(stmt.target, ast.Name) \
                        and self.index.function_of(stmt) is scope:
                    augmented.setdefault(stmt.target.id, []).append(stmt.value)

        params = getattr(scope, "args", None)
        literal_defaults = {} if params is None else {
            name: [value] for name, value in parameter_defaults(scope).items()
            if isinstance(value, ast.Constant) and not isinstance(value.value, bytes)}

        def values_of(name: str) -> Optional[list]:
            values = assigned.get(name, []) + augmented.get(name, [])
            stores = sum(1 for n in self.index.names.get(name, ()) if not isinstance(n.ctx, ast.Load)
                         and self.index.function_of(n) is scope)
            if params is not None and name in function_params(scope):
                # `batch_size=10`: a parameter with a literal default, never bound again here,
                # holds what its callers pass in its place
                return literal_defaults.get(name) if not stores else None
            if not values or stores != len(values):
                return None
            return values

        return values_of

    def inert(self, stmt: ast.stmt) -> bool:
        """Statements that cannot touch autograd: docstrings, constants, model.eval(), logging."""
        if isinstance(stmt, (ast.Pass, ast.Global, ast.Nonlocal)):
            return True
        if isinstance(stmt, ast.Expr):
            value = stmt.value
            if isinstance(value, ast.Constant):
                return True
            if isinstance(value, ast.Call):
                func = value.func
                if isinstance(func, ast.Attribute) and func.attr in ("eval", "train"):
                    return all(isinstance(a, ast.Constant) for a in value.args)
                name = func.attr if isinstance(func, ast.Attribute) else getattr(func, "id", "")
                return name in LOGGING_FUNCS
        if isinstance(stmt, (ast.Assign, ast.AnnAssign)):
            return stmt.value is not None and (is_constant(stmt.value) or self.bookkeeping(stmt.value))
        if isinstance(stmt, ast.Return):
            return stmt.value is None or is_constant(stmt.value) or only_names(stmt.value)
        return False

    def harmless(self, stmt: ast.stmt, scope: ast.AST) -> bool:
        """A statement that cannot record a graph or change a grad-dependent result, so a region
        may cover it: `inert` ones, assignments of values without autograd history
        (`n += x.size(0)`, `name = prefix + "_x"`), moves (`a = b`), `pass`/`break`/`continue`,
        `assert` statements calling nothing that may record, and `if` statements on such values (and
        `for` loops over `range(...)` of them) holding only such statements. Remembered: the
        planner asks about the same statements for every region of a long script."""
        key = (id(stmt), id(scope))
        found = self._harmless.get(key)
        if found is None:
            found = self._harmless[key] = self._is_harmless(stmt, scope)
        return found

    def _is_harmless(self, stmt: ast.stmt, scope: ast.AST) -> bool:
        if self.inert(stmt) or isinstance(stmt, (ast.Break, ast.Continue, ast.Delete)):
            return True
        if isinstance(stmt, (ast.Assign, ast.AugAssign, ast.AnnAssign)):
            value = stmt.value
            return value is not None and (self.free(value, scope) or only_names(value)
                                          or self.module_made(value, scope))
        if isinstance(stmt, ast.Expr):
            return self.free(stmt.value, scope) or self.list_growth(stmt.value, scope) \
                or self.meter_call(stmt.value, scope)
        if isinstance(stmt, ast.Assert):  # a truth test, kept nowhere: only its calls could record
            return all(not isinstance(n, ast.Call) or self.free(n, scope) for n in ast.walk(stmt))
        if isinstance(stmt, ast.If):
            return self.free(stmt.test, scope) and all(
                self.harmless(s, scope) for s in stmt.body + stmt.orelse)
        if isinstance(stmt, ast.For):
            # `for i in range(len(targets)): feats[idx + i] = np.array(out[i].data.cpu().numpy())`
            return self.counted(stmt.iter, scope) and isinstance(stmt.target, ast.Name) and all(
                self.harmless(s, scope) for s in stmt.body + stmt.orelse)
        return False

    def counted(self, iterable: ast.AST, scope: ast.AST) -> bool:
        """`range(...)` (Python 2's `xrange`; also under `enumerate`, `reversed`) of values without
        autograd history: iterating it records nothing."""
        if not (isinstance(iterable, ast.Call) and isinstance(iterable.func, ast.Name) and not iterable.keywords
                and len(iterable.args) >= 1 and self.index.lookup_for(iterable.func)(iterable.func.id) is None):
            return False
        if iterable.func.id in ("enumerate", "reversed") and len(iterable.args) == 1:
            return self.counted(iterable.args[0], scope)
        return iterable.func.id in ("range", "xrange") and all(self.free(a, scope) for a in iterable.args)

    def module_made(self, value: ast.AST, scope: ast.AST) -> bool:
        """`interpo = nn.Upsample(size=(o_h, o_w), mode='bilinear')`: a `torch.nn` module made,
        not run. Its parameters are leaves that require grad in any grad mode, and making it
        records nothing; only calls in its arguments could (each must be `free`)."""
        if not isinstance(value, ast.Call):
            return False
        qual = self.index.qual(value.func) or ""
        if not qual.startswith("torch.nn.") or qual.startswith("torch.nn.functional."):
            return False
        if not qual.rsplit(".", 1)[1][:1].isupper():
            return False
        arguments = list(value.args) + [k.value for k in value.keywords]
        return all(self.free(n, scope) for a in arguments for n in ast.walk(a) if isinstance(n, ast.Call))

    def list_growth(self, value: ast.AST, scope: ast.AST) -> bool:
        """`accs.append(acc)` on a Python list the scope builds (every binding of `accs` a list
        display or comprehension), of a value only moved: a list's methods record nothing."""
        if not (isinstance(value, ast.Call) and isinstance(value.func, ast.Attribute)
                and value.func.attr in ("append", "extend", "insert") and isinstance(value.func.value, ast.Name)
                and not value.keywords and all(only_names(a) for a in value.args)):
            return False
        made = self.only_assigned(scope)(value.func.value.id)
        return bool(made) and all(isinstance(v, (ast.List, ast.ListComp)) for v in made)

    def meter_call(self, value: ast.AST, scope: ast.AST) -> bool:
        """`skip_ratios.set_len(len(skips))` on a name the scope binds only to a bookkeeping
        object (`skip_ratios = ListAverageMeter()`), given values without autograd history."""
        if not (isinstance(value, ast.Call) and isinstance(value.func, ast.Attribute)
                and isinstance(value.func.value, ast.Name)):
            return False
        made = self.only_assigned(scope)(value.func.value.id)
        return bool(made) and all(self.bookkeeping(v) for v in made) and all(
            self.free(a, scope) for a in list(value.args) + [k.value for k in value.keywords])

    def bookkeeping(self, value: ast.AST) -> bool:
        """`time.time()`, `AverageMeter()`: set-up that no grad mode can change."""
        if not isinstance(value, ast.Call):
            return False
        qual = self.index.qual(value.func) or ""
        if qual.split(".", 1)[0] in ("time", "datetime"):
            return True
        name = value.func.id if isinstance(value.func, ast.Name) else ""
        return (not value.args and not value.keywords and name.endswith(BOOKKEEPING_SUFFIXES))


def only_names(node: ast.AST) -> bool:
    """`x`, `self.acc`, `(a, b.c)`: a value that is returned, not computed."""
    if isinstance(node, (ast.Name, ast.Constant)):
        return True
    if isinstance(node, ast.Attribute):
        return only_names(node.value)
    if isinstance(node, (ast.Tuple, ast.List)):
        return all(only_names(e) for e in node.elts)
    return False
