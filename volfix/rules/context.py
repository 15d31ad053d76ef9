"""What a rule handler can ask and do: names, reports, fixes, volatile sources.

One `RuleContext` per analysed document. Handlers report `Finding`s with an optional fix plan
(expression edits) or register a `Source` whose region the planner places after every handler
ran (`volfix.fixes.regions`).
"""
from __future__ import annotations

import ast
from typing import Dict, List, Optional

from ..fixes.edits import TextEdit
from ..fixes.expressions import Expressions
from ..findings import Finding, Flag, Source
from ..findings import FixPlan
from ..model import Applicability
from ..syntax.document import Document
from ..syntax.index import ModuleIndex
from ..syntax import names as nm
from ..flow import grad_mode, helper_calls
from .variable_calls import VariableCall, classify
from .volatile_attributes import TORCH_PACKAGES

PLAIN_PRODUCERS = frozenset({f"torch.{n}" for n in (
    "zeros", "ones", "rand", "randn", "empty", "full", "arange", "eye", "linspace", "logspace",
    "tensor", "zeros_like", "ones_like", "rand_like", "randn_like", "empty_like", "full_like",
    "randint", "randperm", "normal", "from_numpy", "Tensor", "FloatTensor", "DoubleTensor",
    "HalfTensor", "LongTensor", "IntTensor", "ShortTensor", "ByteTensor", "CharTensor",
    "BoolTensor", "as_tensor", "cuda.FloatTensor", "cuda.LongTensor", "cuda.DoubleTensor",
    "cuda.ByteTensor", "cuda.IntTensor", "cuda.HalfTensor", "load", "stack", "cat")})
PLAIN_METHODS = frozenset({"cuda", "cpu", "float", "double", "long", "int", "byte", "half", "bool",
                           "view", "unsqueeze", "squeeze", "contiguous", "type", "to", "clone",
                           "expand", "permute", "transpose", "t", "resize_", "new", "new_zeros",
                           "new_ones", "new_empty", "new_full", "new_tensor", "zero_", "fill_",
                           "normal_", "uniform_", "copy_", "index_select", "narrow", "repeat",
                           "reshape", "pin_memory", "data"})


class RuleContext:
    def __init__(self, doc: Document, index: ModuleIndex, *, legacy_semantics: bool = False,
                 no_grad_style: str = "auto", links=None):
        self.doc = doc
        self.index = index
        self.src = index.src
        self.expr = Expressions(index)
        self.legacy_semantics = legacy_semantics
        self.no_grad_style = no_grad_style
        self.links = links  # volfix.flow.project.Links of this file, or None outside a run
        self.findings: List[Finding] = []
        # `x.data[0]` reads VF401 left, with the `ScalarValues` that read them (VF407)
        self.unreported_reads: Dict[int, object] = {}
        self.sources: List[Source] = []
        self.flag_sources: List[Source] = []  # VF103 whose flag may come from a parameter
        self.torch_file = index.imports_torch()
        # `.volatile` is a tensor's flag here: the file imports torch or a package built on it,
        # or (a test helper asserting `batch.text.volatile`) another file of its project does.
        self.tensor_file = self.torch_file or index.imports_any(TORCH_PACKAGES) \
            or bool(links is not None and links.torch_project)
        self._calls: Dict[int, Optional[VariableCall]] = {}
        self._group = 0
        self._wrappers: Optional[Dict[str, int]] = None
        self.helpers: list = []  # volfix.flow.follow.HelperRecord, filled by the planner

    # ------------------------------------------------------------------ reporting
    def report(self, code: str, node: ast.AST, *, note: Optional[str] = None,
               message: Optional[str] = None, fix: Optional[FixPlan] = None,
               end: Optional[ast.AST] = None) -> Finding:
        finding = Finding(code, self.src.start(node), self.src.end(end or node), message=message,
                          note=note, fix=fix)
        self.findings.append(finding)
        return finding

    def report_span(self, code: str, start: int, end: int, *, note: Optional[str] = None,
                    message: Optional[str] = None, fix: Optional[FixPlan] = None) -> Finding:
        finding = Finding(code, start, end, message=message, note=note, fix=fix)
        self.findings.append(finding)
        return finding

    def edit_fix(self, applicability: Applicability, title: str, edits: List[TextEdit],
                 imports=frozenset()) -> FixPlan:
        return FixPlan(applicability, title, list(edits), [], frozenset(imports))

    def add_source(self, finding: Finding, node: ast.AST, *, flag: Optional[Flag] = None,
                   own_edits: Optional[List[TextEdit]] = None, deleted: Optional[ast.stmt] = None,
                   seed: Optional[str] = None, call_site: bool = False,
                   data: Optional[ast.AST] = None, unsafe_because: Optional[str] = None,
                   computing: bool = False, legacy_call: bool = False) -> Source:
        """`legacy_call`: the call spells `volatile=`, so it is 0.3 code, whose argument was
        a tensor (`legacy_argument_plain`)."""
        stmt = node if isinstance(node, ast.stmt) else self.index.statement_of(node)
        source = Source(finding, node, stmt, self.index.function_of(node), flag, list(own_edits or []),
                        deleted, seed, call_site, data,
                        plain=data is None or (self.legacy_argument_plain(data) if legacy_call
                                               else self.legacy_semantics or self.is_plain(data)),
                        unsafe_because=unsafe_because, computing=computing)
        self.sources.append(source)
        return source

    def next_group(self) -> int:
        self._group += 1
        return self._group

    # ------------------------------------------------------------------ names
    def variable_call(self, call: ast.Call) -> Optional[VariableCall]:
        key = id(call)
        if key not in self._calls:
            self._calls[key] = classify(call, self)
        return self._calls[key]

    def helper_call(self, call: ast.Call):
        """The call's link to a helper of another file (`volfix.flow.helper_calls`), or None."""
        key = ("helper", id(call))
        if key not in self._calls:
            self._calls[key] = helper_calls.resolve(self, call)  # type: ignore[index]
        return self._calls[key]  # type: ignore[index]

    def spell(self, qual: str, node: ast.AST):
        """(text, modules to import) for `qual` where `node` is."""
        found = self.index.spell(qual, node)
        if found is not None:
            return found, frozenset()
        return qual, frozenset({qual.split(".", 1)[0]})

    def wrappers(self) -> Dict[str, int]:
        """Module-level names bound to a lambda or def that forwards `*args, **kwargs` to torch's
        Variable (`Variable = lambda *a, **k: autograd.Variable(*a, **k).cuda()`): name -> line."""
        if self._wrappers is None:
            out: Dict[str, int] = {}
            for stmt in self.index.module_statements:
                if isinstance(stmt, ast.Assign) and isinstance(stmt.value, ast.Lambda) and len(stmt.targets) == 1 \
                        and isinstance(stmt.targets[0], ast.Name) and self.forwards_to_variable(stmt.value):
                    out[stmt.targets[0].id] = stmt.lineno
                elif isinstance(stmt, (ast.FunctionDef, ast.AsyncFunctionDef)) and self.forwards_to_variable(stmt):
                    out[stmt.name] = stmt.lineno
                elif isinstance(stmt, ast.ClassDef) and self.subclasses_variable(stmt):
                    out[stmt.name] = stmt.lineno
            self._wrappers = out
        return self._wrappers

    def own_function(self, name: str, parameter: Optional[str] = None) -> Optional[ast.AST]:
        """The first function or method of this file called `name` (taking `parameter`, when
        given): a call of a method of that name may be the file's own rather than torch's."""
        for fn in self.index.functions:
            if getattr(fn, "name", None) != name:
                continue
            args = fn.args
            if parameter is None or any(a.arg == parameter for a in (*args.posonlyargs, *args.args, *args.kwonlyargs)):
                return fn
        return None

    def subclasses_variable(self, cls: ast.ClassDef) -> bool:
        """`class Variable(autograd.Variable):` whose `__init__` (if it has one) hands its
        `*args`/`**kwargs` on (`super().__init__(data, *args, **kwargs)`): calls to the class
        take `volatile=` as torch's Variable did."""
        if not any(self.index.is_variable(base) for base in cls.bases):
            return False
        init = next((s for s in cls.body if isinstance(s, ast.FunctionDef) and s.name == "__init__"), None)
        if init is None:
            return True
        forwarded = {a.arg for a in (init.args.vararg, init.args.kwarg) if a is not None}
        return any(isinstance(n, ast.Starred) and isinstance(n.value, ast.Name) and n.value.id in forwarded
                   or isinstance(n, ast.keyword) and n.arg is None and isinstance(n.value, ast.Name)
                   and n.value.id in forwarded for n in ast.walk(init))

    def wrapper_forward(self, call: ast.Call) -> bool:
        """`autograd.Variable(*args, **kwargs)` inside a module-level wrapper (`wrappers()`)
        that hands it nothing but the wrapper's own parameters: the project's API for
        `Variable`, whose calls are read (and fixed) where they are made."""
        fn = self.index.scope_of(call)
        if isinstance(fn, ast.Lambda):
            owner = self.index.parents.get(fn)
            if not (isinstance(owner, ast.Assign) and len(owner.targets) == 1 and isinstance(owner.targets[0], ast.Name)
                    and self.wrappers().get(owner.targets[0].id) == owner.lineno):
                return False
        elif not (isinstance(fn, (ast.FunctionDef, ast.AsyncFunctionDef)) and self.wrappers().get(fn.name) == fn.lineno):
            return False
        params = set(nm.function_params(fn))
        return (all(isinstance(a.value if isinstance(a, ast.Starred) else a, ast.Name)
                    and (a.value if isinstance(a, ast.Starred) else a).id in params for a in call.args)
                and all(k.arg is None and isinstance(k.value, ast.Name) and k.value.id in params
                        for k in call.keywords))

    def forwards_to_variable(self, fn: ast.AST) -> bool:
        args = fn.args  # type: ignore[attr-defined]
        if args.vararg is None and args.kwarg is None:
            return False
        forwarded = {a.arg for a in (args.vararg, args.kwarg) if a is not None}
        body = [fn.body] if isinstance(fn, ast.Lambda) else fn.body  # type: ignore[attr-defined]
        for node in (n for b in body for n in ast.walk(b)):
            if isinstance(node, ast.Call) and self.index.is_variable(node.func):
                spread = [a.value for a in node.args if isinstance(a, ast.Starred)] + \
                         [k.value for k in node.keywords if k.arg is None]
                if any(isinstance(v, ast.Name) and v.id in forwarded for v in spread):
                    return True
        return False

    # ------------------------------------------------------------------ facts
    def covered(self, node: ast.AST, any_grad_mode: bool = False) -> bool:
        """Lexically inside a grad-disabled region (with `any_grad_mode`: inside any grad-mode
        region, as a runtime flag's call site that already has its region)."""
        return grad_mode.covered(self.index, node, any_grad_mode)

    def is_plain(self, expr: ast.AST, depth: int = 0) -> bool:
        """Evidently a tensor that cannot require grad (so `Variable(x)` -> `x` is exact)."""
        if depth > 4:
            return False
        if isinstance(expr, ast.Attribute) and expr.attr == "data":
            return True
        if isinstance(expr, ast.Subscript):
            return self.is_plain(expr.value, depth + 1)
        if isinstance(expr, ast.Call):
            if self.index.qual(expr.func) in PLAIN_PRODUCERS:
                return True
            if isinstance(expr.func, ast.Attribute) and expr.func.attr in PLAIN_METHODS:
                return self.is_plain(expr.func.value, depth + 1)
        if isinstance(expr, ast.Name):
            values = self.index.assigned_values(self.index.function_of(expr)).get(expr.id)
            return bool(values) and all(self.is_plain(v, depth + 1) for v in values)
        return False

    def legacy_argument_plain(self, expr: ast.AST) -> bool:
        """The argument of a call that spells `volatile=`: in 0.3 it had to be a tensor
        (`Variable(variable)` raised, SEMANTICS.md fact 7), so it cannot require grad, unless
        the code evidently computes it with something that may (a module call: code already
        half-migrated to 0.4, where `Variable(model(x), volatile=True)` detaches)."""
        return self.legacy_semantics or self.is_plain(expr) or not self.evidently_computed(expr)

    def evidently_computed(self, expr: ast.AST, depth: int = 0) -> bool:
        """A call that is not a plain producer or a plain method (`model(x)`, `F.relu(h)`,
        `self.encoder(x).view(-1)`), or arithmetic on one."""
        if depth > 4:
            return False
        if isinstance(expr, ast.Call):
            func = expr.func
            if self.index.qual(func) in PLAIN_PRODUCERS:
                return False
            if isinstance(func, ast.Attribute) and func.attr in PLAIN_METHODS:
                return self.evidently_computed(func.value, depth + 1)
            return True
        if isinstance(expr, ast.Subscript):
            return self.evidently_computed(expr.value, depth + 1)
        if isinstance(expr, ast.BinOp):
            return self.evidently_computed(expr.left, depth + 1) or self.evidently_computed(expr.right, depth + 1)
        if isinstance(expr, ast.UnaryOp):
            return self.evidently_computed(expr.operand, depth + 1)
        return False

    def flag_of(self, expr: ast.AST) -> Flag:
        return Flag(expr, self.src.segment(expr))
