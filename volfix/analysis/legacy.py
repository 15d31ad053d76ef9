"""Detection of legacy `volatile`-era code and planning of its fixes (SPEC §1, §2).

One pass over an `ast` tree finds the findings; regions are planned per scope with
`flow.ScopeFlow`; every fix is a list of `TextEdit`s on the analysed text.
"""
from __future__ import annotations

import ast
import collections
from dataclasses import dataclass, field
from typing import Dict, List, Optional, Set, Tuple

from ..model import Applicability
from . import imports as imp
from .edits import TextEdit
from .flow import SCOPE_NODES, Taint, iter_statements
from .text import SourceText

SAFE, UNSAFE = Applicability.SAFE, Applicability.UNSAFE
METHOD_PREFIX = imp.METHOD_PREFIX

NO_GRAD_QUALS = {"torch.no_grad", "torch.autograd.no_grad", "torch.autograd.grad_mode.no_grad",
                 "torch.inference_mode", "torch.autograd.inference_mode"}
SET_GRAD_QUALS = {"torch.set_grad_enabled", "torch.autograd.set_grad_enabled"}
GRAD_FUNCS = {"torch.autograd.grad"}
# Factories that accept `requires_grad=` (VF111 moves the flag there).
GRAD_FACTORIES = {f"torch.{n}" for n in (
    "zeros", "ones", "rand", "randn", "empty", "full", "arange", "eye", "linspace", "logspace",
    "tensor", "zeros_like", "ones_like", "rand_like", "randn_like", "empty_like", "full_like",
    "randint", "randperm", "normal")}
# Calls whose result is evidently a plain tensor that cannot require grad.
PLAIN_PRODUCERS = GRAD_FACTORIES | {f"torch.{n}" for n in (
    "from_numpy", "Tensor", "FloatTensor", "DoubleTensor", "HalfTensor", "LongTensor",
    "IntTensor", "ShortTensor", "ByteTensor", "CharTensor", "BoolTensor", "as_tensor",
    "cuda.FloatTensor", "cuda.LongTensor", "cuda.DoubleTensor", "cuda.ByteTensor",
    "cuda.IntTensor", "cuda.HalfTensor", "load")}
PLAIN_METHODS = {"cuda", "cpu", "float", "double", "long", "int", "byte", "half", "bool",
                 "view", "unsqueeze", "squeeze", "contiguous", "type", "to", "clone",
                 "expand", "permute", "transpose", "t", "resize_", "new", "new_zeros",
                 "new_ones", "new_empty", "new_full", "new_tensor", "zero_", "fill_",
                 "normal_", "uniform_", "copy_", "index_select", "narrow", "repeat", "reshape",
                 "pin_memory", "data"}
LOGGING_FUNCS = {"print", "log", "info", "debug", "warning", "warn", "write", "set_description",
                 "set_postfix", "add_scalar"}
SIMPLE_EXPRS = (ast.Name, ast.Attribute, ast.Call, ast.Subscript, ast.Constant, ast.List,
                ast.Tuple, ast.Dict, ast.Set, ast.ListComp, ast.DictComp, ast.SetComp,
                ast.GeneratorExp, ast.JoinedStr)


@dataclass
class Finding:
    code: str
    start: int
    end: int
    applicability: Optional[Applicability] = None
    note: Optional[str] = None
    edits: List[TextEdit] = field(default_factory=list)
    message: Optional[str] = None  # overrides the rule's MESSAGE (VF001/VF002)
    group: Optional[int] = None  # findings sharing a region are fixed together
    # What each region planned for this finding: (applicability, note, edits, group).
    parts: list = field(default_factory=list)
    call_site: bool = False  # a call of a helper defined in another file


@dataclass
class Source:
    """A place where volatility starts: a Variable(..., volatile=...) call or `x.volatile = True`."""

    finding: Finding
    node: ast.AST  # the Call, or the Assign statement
    stmt: ast.stmt
    scope: ast.AST
    kind: str  # "no_grad" (VF101, VF202) | "flag" (VF103)
    flag: Optional[ast.AST] = None  # VF103's expression
    seed_name: Optional[str] = None  # VF202: the name made volatile
    # The source's own edits (unwrap the call, drop the keyword, delete `x = x`), empty for a
    # helper's call site, and whether they delete the source statement.
    own_edits: List[TextEdit] = field(default_factory=list)
    deletes_statement: bool = False
    call_site: bool = False  # a helper's call site: the call itself computes


@dataclass
class Region:
    scope: ast.AST
    kind: str
    sources: List[Source]
    flag_text: Optional[str] = None
    block: Optional[tuple] = None  # (owner, field)
    first: int = 0
    last: int = 0
    paths: List[list] = field(default_factory=list)
    taint: Optional[Taint] = None


class LegacyAnalysis:
    def __init__(self, text: str, tree: ast.Module, *, inherited: Optional[dict] = None,
                 legacy_semantics: bool = False, no_grad_style: str = "auto",
                 src: Optional[SourceText] = None, imported_helpers: Optional[dict] = None,
                 external_calls: Optional[dict] = None):
        # The masked text differs from `src` only where `async` became a same-length
        # placeholder: positions, lines, comments and strings are the same.
        self.src = src if src is not None and len(src.text) == len(text) else SourceText(text)
        self.tree = tree
        self.legacy_semantics = legacy_semantics
        self.style = no_grad_style
        # One walk builds the parent map and the indexes every rule looks things up in.
        self.parents: Dict[ast.AST, ast.AST] = {}
        self.interesting: List[ast.AST] = []
        self.calls: List[ast.Call] = []
        self.names: Dict[str, List[ast.Name]] = {}
        self.attributes: Dict[str, List[ast.Attribute]] = {}
        self.multiline_strings: List[ast.AST] = []
        parents = self.parents
        queue = collections.deque([tree])
        AST = ast.AST
        while queue:  # ast.walk's order, without its per-node generators and the ctx singletons
            node = queue.popleft()
            for name in node._fields:
                if name == "ctx":
                    continue
                value = getattr(node, name, None)
                if type(value) is list:
                    for item in value:
                        if isinstance(item, AST):
                            parents[item] = node
                            queue.append(item)
                elif isinstance(value, AST):
                    parents[value] = node
                    queue.append(value)
            kind = type(node)
            if kind is ast.Name:
                self.names.setdefault(node.id, []).append(node)
            elif kind is ast.Attribute:
                self.attributes.setdefault(node.attr, []).append(node)
                if node.attr == "volatile":
                    self.interesting.append(node)
            elif kind is ast.Call:
                self.calls.append(node)
                self.interesting.append(node)
            elif kind is ast.Compare or kind is ast.Dict:
                self.interesting.append(node)
            elif kind is ast.Subscript and isinstance(node.ctx, ast.Store):
                self.interesting.append(node)
            elif (kind is ast.Constant or kind is ast.JoinedStr) and node.end_lineno != node.lineno:
                self.multiline_strings.append(node)
        self._bindings: Dict[int, dict] = {}
        self.module_bindings = imp.scope_bindings(tree.body, inherited)
        self._bindings[id(tree)] = self.module_bindings
        self.findings: List[Finding] = []
        self.sources: List[Source] = []
        self.needs_imports: Set[str] = set()
        self._group = 0
        # VF103 sites whose flag is a parameter of their function: (finding, call, data, fn, param, edits)
        self.helpers: list = []
        # Helpers of other files called here (qualified name -> project.HelperSignature), and
        # calls in other files of this file's helpers (name -> [project.ExternalCall]).
        self.imported_helpers: dict = dict(imported_helpers or {})
        self.external_calls: Optional[dict] = external_calls
        self.exported: Dict[str, str] = {}  # module-level helper name -> its flag parameter
        self.helper_roots: list = []  # (finding, Variable call, fn, param, HelperSites)
        self._interior_rows: Optional[Set[int]] = None

    # ------------------------------------------------------------------ scopes
    def scope_of(self, node: ast.AST) -> ast.AST:
        cur = self.parents.get(node)
        while cur is not None and not isinstance(cur, SCOPE_NODES + (ast.Module,)):
            cur = self.parents.get(cur)
        return cur if cur is not None else self.tree

    def bindings(self, scope: ast.AST) -> dict:
        key = id(scope)
        if key not in self._bindings:
            outer = self.scope_of(scope)
            while isinstance(outer, ast.ClassDef):  # class bodies are not enclosing scopes
                outer = self.scope_of(outer)
            inherited = self.bindings(outer)
            if isinstance(scope, (ast.FunctionDef, ast.AsyncFunctionDef, ast.Lambda)):
                params = imp.function_params(scope)
                body = scope.body if isinstance(scope.body, list) else []
                self._bindings[key] = imp.scope_bindings(body, inherited, params)
            else:
                self._bindings[key] = imp.scope_bindings(scope.body, inherited)
        return self._bindings[key]

    def qual(self, expr: ast.AST) -> Optional[str]:
        return imp.qualified_name(expr, self.bindings(self.scope_of(expr)))

    def spell(self, qual: str, scope: Optional[ast.AST] = None) -> str:
        found = imp.spelling(self.bindings(scope) if scope is not None else self.module_bindings, qual)
        if found:
            return found
        module = qual.split(".", 1)[0]
        self.needs_imports.add(module)
        return qual

    def statement_of(self, node: ast.AST) -> ast.stmt:
        cur = node
        while not isinstance(cur, ast.stmt):
            cur = self.parents[cur]
        return cur

    # ------------------------------------------------------------------ detection
    def run(self) -> List[Finding]:
        torch_file = imp.imports_torch(self.module_bindings)
        wrappers = self.variable_wrappers()
        for node in self.interesting:
            if isinstance(node, ast.Call):
                qual = self.qual(node.func)
                if imp.is_variable(qual):
                    self.variable_call(node)
                elif qual is not None and qual in self.imported_helpers:
                    self.imported_helper_call(node, self.imported_helpers[qual])
                elif (self.imported_helpers and isinstance(node.func, ast.Attribute)
                      and METHOD_PREFIX + node.func.attr in self.imported_helpers):
                    self.imported_helper_call(node, self.imported_helpers[METHOD_PREFIX + node.func.attr])
                elif isinstance(node.func, ast.Name) and node.func.id in wrappers \
                        and self.bindings(self.scope_of(node)).get(node.func.id) in (imp.LOCAL, imp.WRAPPER):
                    line = wrappers[node.func.id]
                    where = f"line {line}" if line else "an earlier cell"
                    self.flag_keyword_call(node, f"through the wrapper `{node.func.id}` ({where})")
                else:
                    self.isinstance_check(node)
                    if torch_file:
                        self.dynamic_access(node)
            elif isinstance(node, ast.Compare):
                self.type_compare(node)
            elif torch_file and isinstance(node, ast.Attribute) and node.attr == "volatile":
                self.volatile_attribute(node)
            elif torch_file and isinstance(node, ast.Dict):
                for key in node.keys:
                    if isinstance(key, ast.Constant) and key.value == "volatile" and self.splatted(node):
                        self.add(Finding("VF203", self.src.start(key), self.src.end(key),
                                         note="no fix: a `volatile` key passed on as keyword arguments"))
            elif torch_file and isinstance(node, ast.Subscript) and isinstance(node.ctx, ast.Store):
                key = node.slice
                if (isinstance(key, ast.Constant) and key.value == "volatile"
                        and isinstance(node.value, ast.Name) and node.value.id in self.splatted_names()):
                    self.add(Finding("VF203", self.src.start(node), self.src.end(node),
                                     note="no fix: a `volatile` key passed on as keyword arguments"))
        self.resolve_helpers()
        self.plan_regions()
        self.flag_parameters()
        self.findings.sort(key=lambda f: (f.start, f.code))
        return self.findings

    def qual_is_variable(self, func: ast.AST) -> bool:
        return imp.is_variable(self.qual(func))

    def add(self, finding: Finding) -> Finding:
        self.findings.append(finding)
        return finding

    # -- Variable(...) calls ----------------------------------------------------
    def variable_call(self, call: ast.Call) -> None:
        start, end = self.src.start(call), self.src.end(call)
        args = self.call_arguments(call)
        if args is None:
            if any(k.arg == "volatile" for k in call.keywords):
                self.flag_keyword_call(call, None)
                return
            self.add(Finding("VF110", start, end,
                             note="no fix: arguments passed with `*`/`**` cannot be analysed"))
            return
        data, requires_grad, volatile = args
        vol = literal_truth(volatile)
        rg = literal_truth(requires_grad)
        if volatile is not None and vol is not False:
            if rg is True or (requires_grad is not None and rg is None):
                code = "VF101" if vol else "VF103"
                self.add(Finding(code, start, end,
                                 note="no fix: `volatile` together with `requires_grad` raises a ValueError"))
                return
            if vol is True:
                self.volatile_source(call, data, "VF101")
                return
            self.flag_source(call, data, volatile)
            return
        code = "VF102" if volatile is not None else ("VF111" if (requires_grad is not None and rg is not False) else "VF110")
        if code == "VF111":
            self.requires_grad_fix(call, data, requires_grad, rg)
        else:
            self.unwrap_fix(call, data, code)

    def variable_wrappers(self) -> Dict[str, int]:
        """Module-level names bound to a lambda or def that forwards `*args, **kwargs` to torch's
        Variable (`Variable = lambda *a, **k: autograd.Variable(*a, **k).cuda()`): name -> line."""
        out: Dict[str, int] = {name: 0 for name, qual in self.module_bindings.items() if qual == imp.WRAPPER}
        for stmt in iter_statements(self.tree.body):
            if isinstance(stmt, ast.Assign) and isinstance(stmt.value, ast.Lambda) and len(stmt.targets) == 1 \
                    and isinstance(stmt.targets[0], ast.Name) and self.forwards_to_variable(stmt.value):
                out[stmt.targets[0].id] = stmt.lineno
            elif isinstance(stmt, (ast.FunctionDef, ast.AsyncFunctionDef)) and self.forwards_to_variable(stmt):
                out[stmt.name] = stmt.lineno
        return out

    def forwards_to_variable(self, fn: ast.AST) -> bool:
        args = fn.args  # type: ignore[attr-defined]
        if args.vararg is None and args.kwarg is None:
            return False
        forwarded = {a.arg for a in (args.vararg, args.kwarg) if a is not None}
        body = [fn.body] if isinstance(fn, ast.Lambda) else fn.body  # type: ignore[attr-defined]
        for node in (n for b in body for n in ast.walk(b)):
            if isinstance(node, ast.Call) and self.qual_is_variable(node.func):
                spread = [a.value for a in node.args if isinstance(a, ast.Starred)] + \
                         [k.value for k in node.keywords if k.arg is None]
                if any(isinstance(v, ast.Name) and v.id in forwarded for v in spread):
                    return True
        return False

    def flag_keyword_call(self, call: ast.Call, via: Optional[str]) -> None:
        """A call whose data cannot be unwrapped (a wrapper, or `*args`) but whose `volatile=`
        keyword is explicit: the keyword is dropped and the region placed as usual."""
        start, end = self.src.start(call), self.src.end(call)
        kw = next((k for k in call.keywords if k.arg == "volatile"), None)
        if kw is None:
            return
        value = literal_truth(kw.value)
        edits = self.drop_keyword(call, kw)
        if value is False:
            self.add(Finding("VF102", start, end, SAFE, edits=edits, note=via))
            return
        code = "VF101" if value is True else "VF103"
        finding = self.add(Finding(code, start, end, note=via))
        if value is True:
            self.register_source(finding, call, "no_grad", edits)
        else:
            self.register_source(finding, call, "flag", edits, flag=kw.value)

    def drop_keyword(self, call: ast.Call, kw: ast.keyword) -> List[TextEdit]:
        items = sorted([a for a in call.args] + [k.value if k.arg is None else k for k in call.keywords],
                       key=lambda n: (n.lineno, n.col_offset))
        target = kw
        index = next(i for i, n in enumerate(items) if n is target)
        end = self.src.end(kw.value if isinstance(kw, ast.keyword) else kw)
        if index > 0:
            start = self.src.end(items[index - 1])
        elif index + 1 < len(items):
            start, end = self.src.start(kw), self.src.start(items[index + 1])
        else:
            start = self.src.start(kw)
        edits = [TextEdit(start, end, "")]
        comments = self.src.comments_between(start, end)
        if comments:
            row, _ = self.src.row_col(self.src.end(call))
            edits.append(TextEdit(self.src.line_end(row), self.src.line_end(row), "  " + "  ".join(comments)))
        return edits

    def call_arguments(self, call: ast.Call):
        """(data, requires_grad, volatile) nodes, or None when not analysable."""
        if any(isinstance(a, ast.Starred) for a in call.args) or any(k.arg is None for k in call.keywords):
            return None
        names = ["data", "requires_grad", "volatile"]
        found = dict(zip(names, call.args))
        if len(call.args) > 3:
            return None
        for kw in call.keywords:
            if kw.arg not in names or kw.arg in found:
                return None
            found[kw.arg] = kw.value
        if "data" not in found:
            return None
        return found["data"], found.get("requires_grad"), found.get("volatile")

    def data_text(self, call: ast.Call, data: ast.AST) -> str:
        """The argument's text, parenthesised where the call's context needs it."""
        text = self.src.segment(data)
        parent = self.parents.get(call)
        tight = (isinstance(parent, ast.Attribute) or (isinstance(parent, ast.Subscript) and parent.value is call)
                 or (isinstance(parent, ast.Call) and parent.func is call)
                 or isinstance(parent, (ast.BinOp, ast.UnaryOp, ast.Await)))
        if tight and not isinstance(data, SIMPLE_EXPRS):
            return f"({text})"
        if not isinstance(data, SIMPLE_EXPRS) and isinstance(parent, (ast.Compare, ast.BoolOp)):
            return f"({text})"
        if "\n" in text or "\r" in text:
            try:
                ast.parse(text.strip(), mode="eval")
            except SyntaxError:
                return f"({text})"
        return text

    def self_assignment(self, call: ast.Call, data: ast.AST) -> Optional[ast.stmt]:
        """`x = Variable(x, ...)`: after unwrapping, the statement would be `x = x`."""
        parent = self.parents.get(call)
        if (isinstance(parent, ast.Assign) and parent.value is call and len(parent.targets) == 1
                and isinstance(parent.targets[0], ast.Name) and isinstance(data, ast.Name)
                and parent.targets[0].id == data.id):
            return parent
        return None

    def unwrap_edits(self, call: ast.Call, data: ast.AST) -> Tuple[List[TextEdit], Optional[ast.stmt]]:
        """Edits that replace the call by its argument; deletes `x = Variable(x)` outright."""
        stmt = self.self_assignment(call, data)
        if stmt is not None:
            deletion = self.delete_statement(stmt)
            if deletion is not None:
                return deletion, stmt
        return self.call_edit(call, self.data_text(call, data)), None

    def call_edit(self, call: ast.Call, replacement: str) -> List[TextEdit]:
        """Replace the call, keeping comments that sat inside its removed parts."""
        start, end = self.src.start(call), self.src.end(call)
        edits = [TextEdit(start, end, replacement)]
        comments = [c for c in self.src.comments_between(start, end) if c not in replacement]
        if comments:
            row, _ = self.src.row_col(end)
            rest = self.src.text[end:self.src.line_end(row)]
            if not rest.strip() or rest.strip().startswith("#"):
                # Nothing but a comment follows the call: keep the comments in reading order.
                edits = [TextEdit(start, end, replacement + "  " + "  ".join(comments))]
            else:
                edits.append(TextEdit(self.src.line_end(row), self.src.line_end(row), "  " + "  ".join(comments)))
        return edits

    def is_plain(self, expr: ast.AST, depth: int = 0) -> bool:
        """Evidently a tensor that cannot require grad (so `Variable(x)` -> `x` is exact)."""
        if depth > 4:
            return False
        if isinstance(expr, ast.Attribute) and expr.attr == "data":
            return True
        if isinstance(expr, ast.Subscript):
            return self.is_plain(expr.value, depth + 1)
        if isinstance(expr, ast.Call):
            qual = self.qual(expr.func)
            if qual in PLAIN_PRODUCERS:
                return True
            if isinstance(expr.func, ast.Attribute) and expr.func.attr in PLAIN_METHODS:
                return self.is_plain(expr.func.value, depth + 1)
        if isinstance(expr, ast.Name):
            scope = self.scope_of(expr)
            values = [s.value for s in iter_statements(scope.body if isinstance(getattr(scope, "body", None), list) else [])
                      if isinstance(s, ast.Assign) and any(isinstance(t, ast.Name) and t.id == expr.id for t in s.targets)]
            return bool(values) and all(self.is_plain(v, depth + 1) for v in values)
        return False

    def unwrap_fix(self, call: ast.Call, data: ast.AST, code: str) -> None:
        start, end = self.src.start(call), self.src.end(call)
        if isinstance(data, ast.Attribute) and data.attr == "data":
            base = self.src.segment(data.value)
            if not isinstance(data.value, SIMPLE_EXPRS):
                base = f"({base})"
            self.add(Finding(code, start, end, SAFE, edits=self.call_edit(call, f"{base}.detach()")))
            return
        applicability = SAFE if (self.legacy_semantics or self.is_plain(data)) else UNSAFE
        note = None if applicability is SAFE else "unsafe fix: if the argument requires grad, gradients will now flow into it"
        self.add(Finding(code, start, end, applicability, note=note,
                         edits=self.unwrap_edits(call, data)[0]))

    def requires_grad_fix(self, call: ast.Call, data: ast.AST, flag: ast.AST, rg: Optional[bool]) -> None:
        start, end = self.src.start(call), self.src.end(call)
        if rg is None:
            self.requires_grad_flag_fix(call, data, flag)
            return
        if isinstance(data, ast.Attribute) and data.attr == "data":
            text = f"{self.attr_base(data.value)}.detach().requires_grad_()"
            self.add(Finding("VF111", start, end, SAFE, edits=self.call_edit(call, text)))
            return
        if (isinstance(data, ast.Call) and self.qual(data.func) in GRAD_FACTORIES
                and not any(k.arg == "requires_grad" for k in data.keywords)
                and not any(isinstance(a, ast.Starred) for a in data.args)
                and not any(k.arg is None for k in data.keywords)):
            inner = self.src.segment(data)
            close = inner.rindex(")")
            head = inner[:close].rstrip()
            sep = "" if head.endswith("(") else (" " if head.endswith(",") else ", ")
            text = f"{head}{sep}requires_grad=True{inner[len(head):]}"
            self.add(Finding("VF111", start, end, SAFE, edits=self.call_edit(call, text)))
            return
        fresh = isinstance(data, ast.Call)
        plain = self.is_plain(data)
        safe = (fresh and plain) or self.legacy_semantics
        note = None if safe else "unsafe fix: `requires_grad_()` changes the tensor itself, so its other references start recording"
        text = f"{self.attr_base(data)}.requires_grad_()"
        self.add(Finding("VF111", start, end, SAFE if safe else UNSAFE, note=note,
                         edits=self.call_edit(call, text)))

    def requires_grad_flag_fix(self, call: ast.Call, data: ast.AST, flag: ast.AST) -> None:
        """`Variable(x, requires_grad=flag)` is exactly `x.detach().requires_grad_(flag)`
        (SEMANTICS.md facts 13-14): a new leaf sharing x's storage. When the flag is a
        parameter of a wrapper (`to_var(x, requires_grad=False)`) whose every call in this
        file passes a false flag, the wrapper asks for no gradients: it becomes `x`."""
        start, end = self.src.start(call), self.src.end(call)
        fresh = isinstance(data, ast.Call) and self.is_plain(data)
        base = self.attr_base(data) if fresh else f"{self.attr_base(data)}.detach()"
        exact = f"{base}.requires_grad_({self.src.segment(flag)})"
        scope = self.scope_of(call)
        if isinstance(flag, ast.Name) and isinstance(scope, (ast.FunctionDef, ast.AsyncFunctionDef)) \
                and flag.id in imp.function_params(scope):
            sites, unresolved = self.call_sites(scope)
            values = []
            for site in sites:
                arg, known = self.argument_for(site, scope, flag.id)
                values.append(literal_truth(arg) if known else None)
                if not known:
                    unresolved.append(site.lineno)
            asking = [site.lineno for site, v in zip(sites, values) if v is not False]
            if sites and not asking and not unresolved:
                lines = ", ".join(str(n) for n in sorted({site.lineno for site in sites}))
                self.add(Finding("VF111", start, end, UNSAFE, edits=self.unwrap_edits(call, data)[0],
                                 note=f"unsafe fix: no call of `{scope.name}()` in this file asks for gradients "
                                      f"(line{'s' if len(sites) > 1 else ''} {lines}), so it becomes a plain "
                                      f"unwrap; a caller elsewhere passing `{flag.id}=True` would lose them"))
                return
            if asking:
                note = (f"exact: a new leaf sharing the tensor's storage, as before; the call"
                        f"{'s' if len(asking) > 1 else ''} at line{'s' if len(asking) > 1 else ''} "
                        f"{', '.join(map(str, asking))} may ask for gradients")
                self.add(Finding("VF111", start, end, SAFE, note=note, edits=self.call_edit(call, exact)))
                return
        self.add(Finding("VF111", start, end, SAFE,
                         note="exact: a new leaf sharing the tensor's storage, as `Variable` made",
                         edits=self.call_edit(call, exact)))

    def attr_base(self, expr: ast.AST) -> str:
        text = self.src.segment(expr)
        return text if isinstance(expr, (ast.Name, ast.Attribute, ast.Call, ast.Subscript)) else f"({text})"

    def volatile_source(self, call: ast.Call, data: ast.AST, code: str) -> None:
        finding = self.add(Finding(code, self.src.start(call), self.src.end(call)))
        edits, deleted = self.unwrap_edits(call, data)
        self.register_source(finding, call, "no_grad", edits, deleted=deleted)

    def flag_source(self, call: ast.Call, data: ast.AST, flag: ast.AST) -> None:
        finding = self.add(Finding("VF103", self.src.start(call), self.src.end(call)))
        edits, deleted = self.unwrap_edits(call, data)
        if isinstance(flag, ast.Constant) and flag.value is None:
            finding.note = "no fix: `volatile=None` raises a TypeError"
            return
        if isinstance(flag, ast.Attribute) and flag.attr == "volatile":
            finding.applicability = UNSAFE
            finding.note = "the flag copies another value's `volatile`: dropped, grad mode now propagates by itself"
            finding.edits = edits
            return
        scope = self.scope_of(call)
        if isinstance(scope, (ast.FunctionDef, ast.AsyncFunctionDef)):
            bare = flag.operand if isinstance(flag, ast.UnaryOp) and isinstance(flag.op, ast.Not) else flag
            names = {bare.id} if isinstance(bare, ast.Name) else set()
            params = set(imp.function_params(scope))
            if names & params:
                if bare is flag:
                    self.helpers.append((finding, call, data, scope, bare.id, edits))
                else:
                    finding.note = (f"no fix: the flag comes from `{bare.id}`, a parameter of "
                                    f"`{scope.name}()`, so its callers decide where grad mode goes")
                return
        self.register_source(finding, call, "flag", edits, flag=flag, deleted=deleted)

    def register_source(self, finding: Finding, node: ast.AST, kind: str, edits: List[TextEdit],
                        flag: Optional[ast.AST] = None, seed_name: Optional[str] = None,
                        deleted: Optional[ast.stmt] = None, call_site: bool = False) -> None:
        scope = self.scope_of(node)
        stmt = self.statement_of(node)
        if isinstance(scope, (ast.Lambda, ast.ClassDef)):
            finding.applicability = UNSAFE if kind == "no_grad" else None
            finding.note = "unwrapped only: a region cannot be placed inside a lambda or class body"
            finding.edits = edits if kind == "no_grad" else []
            return
        if self.covered(node, scope):
            finding.applicability = SAFE
            finding.edits = edits
            finding.note = "already inside a grad-disabled region"
            return
        self.sources.append(Source(finding, node, stmt, scope, kind, flag=flag, seed_name=seed_name,
                                   own_edits=edits, call_site=call_site,
                                   deletes_statement=deleted is not None or seed_name is not None))

    def covered(self, node: ast.AST, scope: ast.AST, any_grad_mode: bool = False) -> bool:
        """Lexically inside a grad-disabled region (or, with `any_grad_mode`, inside any
        grad-mode region: a runtime flag's call site that already has its region)."""
        cur = self.parents.get(node)
        while cur is not None and cur is not scope:
            if isinstance(cur, (ast.With, ast.AsyncWith)):
                if any(self.disables_grad(item.context_expr, any_grad_mode) for item in cur.items):
                    return True
            cur = self.parents.get(cur)
        if isinstance(scope, (ast.FunctionDef, ast.AsyncFunctionDef)):
            return any(self.disables_grad(d, any_grad_mode) for d in scope.decorator_list)
        return False

    def disables_grad(self, expr: ast.AST, any_grad_mode: bool = False) -> bool:
        if any_grad_mode and isinstance(expr, ast.IfExp):  # `no_grad() if flag else nullcontext()`
            return self.disables_grad(expr.body, any_grad_mode)
        target = expr.func if isinstance(expr, ast.Call) else expr
        qual = self.qual(target)
        if qual in NO_GRAD_QUALS:
            return True
        if qual in SET_GRAD_QUALS and isinstance(expr, ast.Call) and expr.args:
            return any_grad_mode or literal_truth(expr.args[0]) is False
        return False

    # -- VF112 ------------------------------------------------------------------
    def type_compare(self, node: ast.Compare) -> None:
        if len(node.ops) != 1 or not isinstance(node.ops[0], (ast.Eq, ast.NotEq, ast.Is, ast.IsNot)):
            return
        left, right = node.left, node.comparators[0]
        for subject_call, other in ((left, right), (right, left)):
            if (isinstance(subject_call, ast.Call) and isinstance(subject_call.func, ast.Name)
                    and subject_call.func.id == "type" and len(subject_call.args) == 1
                    and not subject_call.keywords and self.qual_is_variable(other)):
                negate = isinstance(node.ops[0], (ast.NotEq, ast.IsNot))
                subject = self.src.segment(subject_call.args[0])
                tensor = self.spell("torch.Tensor", self.scope_of(node))
                text = f"{'not ' if negate else ''}isinstance({subject}, {tensor})"
                parent = self.parents.get(node)
                if negate and isinstance(parent, (ast.BoolOp, ast.UnaryOp, ast.Compare, ast.BinOp)):
                    text = f"({text})"
                self.add(Finding("VF112", self.src.start(node), self.src.end(node), SAFE,
                                 edits=[TextEdit(self.src.start(node), self.src.end(node), text)]))
                return

    def isinstance_check(self, call: ast.Call) -> None:
        if not (isinstance(call.func, ast.Name) and call.func.id in ("isinstance", "issubclass")
                and len(call.args) == 2):
            return
        classes = call.args[1]
        members = classes.elts if isinstance(classes, ast.Tuple) else [classes]
        hits = [m for m in members if self.qual_is_variable(m)]
        if not hits:
            return
        tensor = self.spell("torch.Tensor", self.scope_of(call))
        already = any(self.qual(m) == "torch.Tensor" for m in members)
        edits = []
        if isinstance(classes, ast.Tuple) and already:
            # Drop Variable from a tuple that already names torch.Tensor.
            keep = [self.src.segment(m) for m in members if m not in hits]
            text = keep[0] if len(keep) == 1 else "(" + ", ".join(keep) + ")"
            edits.append(TextEdit(self.src.start(classes), self.src.end(classes), text))
        else:
            for i, m in enumerate(hits):
                edits.append(TextEdit(self.src.start(m), self.src.end(m), tensor if i == 0 else ""))
            if len(hits) > 1:
                edits = [TextEdit(self.src.start(classes), self.src.end(classes),
                                  "(" + ", ".join(dict.fromkeys(
                                      tensor if m in hits else self.src.segment(m) for m in members)) + ")")]
        self.add(Finding("VF112", self.src.start(call), self.src.end(call), SAFE, edits=edits,
                         message="`isinstance(x, Variable)` is a legacy check; use `isinstance(x, torch.Tensor)`"))

    # -- VF2xx ------------------------------------------------------------------
    def volatile_attribute(self, node: ast.Attribute) -> None:
        start, end = self.src.start(node), self.src.end(node)
        parent = self.parents.get(node)
        if isinstance(node.ctx, ast.Store):
            if isinstance(parent, ast.Assign) and len(parent.targets) == 1:
                self.volatile_write(node, parent)
            else:
                self.add(Finding("VF202", start, end, note="no fix: not a plain assignment"))
            return
        if isinstance(node.ctx, ast.Del):
            return
        if isinstance(parent, ast.keyword) and parent.arg == "volatile":
            call = self.parents.get(parent)
            if isinstance(call, ast.Call) and self.qual_is_variable(call.func):
                return  # reported and fixed with the call (VF103)
        self.volatile_read(node, parent)

    def volatile_read(self, node: ast.Attribute, parent: Optional[ast.AST]) -> None:
        scope = self.scope_of(node)
        grad_enabled = self.spell("torch.is_grad_enabled", scope)
        obj = self.src.segment(node.value)
        compared = self.compared_with_literal(node, parent)
        if compared is not None:
            # `x.volatile == False` / `is False` / `!= True`: "grad mode is on" (in a hook:
            # "the input records"); `== True`: "grad mode is off".
            on = not compared
            guard = self.guards_gradients(parent, obj)
            if guard:
                text = f"{self.attr_base(node.value)}.requires_grad"
                text = text if on else f"not {text}"
            else:
                text = f"{grad_enabled}()" if on else f"not {grad_enabled}()"
            if not on and isinstance(self.parents.get(parent), (ast.Attribute, ast.Subscript, ast.Call, ast.BinOp,
                                                                   ast.Compare, ast.UnaryOp, ast.BoolOp)):
                text = f"({text})"
            what = self.src.segment(parent)
            why = (f"`{what}` means \"{'this can have gradients' if on else 'this cannot have gradients'}\" here: "
                   f"it now reads `.requires_grad`" if guard else
                   f"`{what}` asked whether grad mode was {'on' if on else 'off'}: "
                   f"`torch.is_grad_enabled()` answers that today")
            self.add(Finding("VF201", self.src.start(node), self.src.end(node), UNSAFE, note=f"unsafe fix: {why}",
                             edits=[TextEdit(self.src.start(parent), self.src.end(parent), text)]))
            return
        if isinstance(parent, ast.UnaryOp) and isinstance(parent.op, ast.Not):
            target, guard = parent, self.guards_gradients(parent, obj)
            text = f"{self.attr_base(node.value)}.requires_grad" if guard else f"{grad_enabled}()"
            why = ("`not x.volatile` guards gradient code: it now means `x.requires_grad`" if guard else
                   "`not x.volatile` becomes `torch.is_grad_enabled()`: true outside `no_grad`, as 0.3 was outside volatile code")
        else:
            target, text = node, f"not {grad_enabled}()"
            if isinstance(parent, (ast.Attribute, ast.Subscript, ast.Call, ast.BinOp, ast.Compare,
                                   ast.UnaryOp, ast.BoolOp)):
                text = f"({text})"
            why = "`x.volatile` becomes `not torch.is_grad_enabled()`: true inside a `no_grad` region"
        self.add(Finding("VF201", self.src.start(node), self.src.end(node), UNSAFE, note=f"unsafe fix: {why}",
                         edits=[TextEdit(self.src.start(target), self.src.end(target), text)]))

    @staticmethod
    def compared_with_literal(node: ast.AST, parent: Optional[ast.AST]) -> Optional[bool]:
        """For `node == True/False` (also `is`, `!=`, `is not`, either side): what `node` being
        true means for the comparison (True: the comparison holds when `node` is true)."""
        if not (isinstance(parent, ast.Compare) and len(parent.ops) == 1):
            return None
        other = parent.comparators[0] if parent.left is node else parent.left
        if other is node or not (isinstance(other, ast.Constant) and isinstance(other.value, bool)):
            return None
        op = parent.ops[0]
        if isinstance(op, (ast.Eq, ast.Is)):
            return other.value
        if isinstance(op, (ast.NotEq, ast.IsNot)):
            return not other.value
        return None

    def guards_gradients(self, test: ast.AST, obj: str) -> bool:
        owner = self.parents.get(test)
        if not isinstance(owner, ast.If) or owner.test is not test:
            return False
        for node in ast.walk(ast.Module(body=owner.body, type_ignores=[])):
            if (isinstance(node, ast.Call) and isinstance(node.func, ast.Attribute)
                    and node.func.attr in ("register_hook", "backward", "retain_grad")):
                return True
        return False

    def volatile_write(self, node: ast.Attribute, stmt: ast.Assign) -> None:
        start, end = self.src.start(stmt), self.src.end(stmt)
        value = literal_truth(stmt.value)
        finding = self.add(Finding("VF202", start, end))
        deletion = self.delete_statement(stmt)
        if deletion is None:
            finding.note = "no fix: the statement shares its line with another one"
            return
        if value is False:
            finding.applicability, finding.edits = SAFE, deletion
            return
        if value is None:
            finding.note = "no fix: the assigned value is not a literal"
            return
        if not isinstance(node.value, ast.Name):
            finding.applicability, finding.edits = UNSAFE, deletion
            finding.note = f"unsafe fix: deleted, but `{self.src.segment(node.value)}` is not a local name whose uses could be followed"
            return
        self.register_source(finding, stmt, "no_grad", deletion, seed_name=node.value.id)

    def delete_statement(self, stmt: ast.stmt) -> Optional[List[TextEdit]]:
        src = self.src
        first, last = stmt.lineno, stmt.end_lineno
        before = src.line(first)[: src.char_col(first, stmt.col_offset)]
        after = src.line(last)[src.char_col(last, stmt.end_col_offset):]
        if before.strip() or (after.strip() and not after.strip().startswith("#")):
            return None
        # Every comment inside or after the statement survives it, in order.
        comment = "  ".join(src.comments_between(src.start(stmt), src.line_end(last)))
        siblings = self.siblings(stmt)
        if siblings is not None and len(siblings) == 1:
            keep = "pass" + (f"  {comment}" if comment else "")
            return [TextEdit(src.start(stmt), src.line_end(last), keep)]
        if comment:
            return [TextEdit(src.start(stmt), src.line_end(last), comment)]
        return [TextEdit(src.line_starts[first - 1], src.line_after(last), "")]

    def siblings(self, stmt: ast.stmt) -> Optional[list]:
        parent = self.parents.get(stmt)
        for name in ("body", "orelse", "finalbody"):
            block = getattr(parent, name, None)
            if isinstance(block, list) and any(s is stmt for s in block):
                return block
        return None

    def dynamic_access(self, call: ast.Call) -> None:
        func = call.func
        if isinstance(func, ast.Name) and func.id in ("getattr", "setattr", "hasattr") and len(call.args) >= 2:
            key = call.args[1]
            if isinstance(key, ast.Constant) and key.value == "volatile":
                self.add(Finding("VF203", self.src.start(call), self.src.end(call),
                                 note="no fix: the intent of a dynamic access cannot be read from the code"))
        elif isinstance(func, ast.Name) and func.id == "dict" and self.splatted(call):
            for kw in call.keywords:
                if kw.arg == "volatile":
                    self.add(Finding("VF203", self.src.start(call), self.src.end(call),
                                     note="no fix: a `volatile` key passed on as keyword arguments"))

    # -- helpers whose parameter is the volatile flag (SPEC §2.6) -------------------
    def resolve_helpers(self) -> None:
        """`get_batch(source, i, evaluation=False)` creating `Variable(..., volatile=evaluation)`:
        each call that passes a true flag becomes a volatile source in its caller (a runtime
        flag becomes a grad-mode region there); the helper itself is only unwrapped.

        Call sites are followed through functions that pass their own parameter on as the
        flag (`prepare(x, volatile)` calling `to_var(x, volatile=volatile)`), and into other
        files of the run (`external_calls`, from `volfix.project`): those get their regions
        in their own files."""
        for finding, call, data, fn, param, edits in self.helpers:
            found = HelperSites()
            self.follow_helper(finding, fn, param, found, visited=set())
            if call is not None:
                self.helper_roots.append((finding, call, fn, param, found))
            if not found.any():
                # Unwrapping would silence the warning that is the callers' only clue.
                finding.edits, finding.applicability = [], None
                where = "in this run" if self.external_calls is not None else "in this file"
                finding.note = (f"no fix: the flag comes from `{param}`, a parameter of `{fn.name}()`, and no call "
                                f"{where} passes a true flag: its callers elsewhere decide where grad mode goes")
                continue
            if call is None:  # a call site of a helper in another file, passing its caller's parameter
                finding.edits, finding.applicability = [], SAFE
                notes = [f"`{param}` is passed on as the flag: the call sites of `{fn.name}()` decide"]
            else:
                finding.edits = list(edits)
                data_plain = self.legacy_semantics or self.is_plain(data)
                finding.applicability = SAFE if data_plain else UNSAFE
                notes = [f"`{param}` only selected the volatile flag: the call sites decide"]
                if not data_plain:
                    notes.append("unsafe fix: if the argument requires grad, gradients will now flow into it")
            if found.through:
                notes.append("followed through " + ", ".join(f"`{n}()`" for n in dict.fromkeys(found.through)))
            if found.covered:
                lines = sorted(set(found.covered))
                notes.append("volatile call sites at line" + ("s " if len(lines) > 1 else " ")
                             + ", ".join(map(str, lines)) + " get the region")
            if found.already or found.already_elsewhere:
                where = [f"line {n}" for n in sorted(set(found.already))] + found.already_elsewhere
                notes.append("volatile call sites already under a grad-mode region: " + ", ".join(where))
            if found.elsewhere:
                finding.applicability = UNSAFE
                notes.append("unsafe fix: the volatile call sites in other files ("
                             + ", ".join(found.elsewhere) + ") get their regions there: fix them in the same run")
            if found.unresolved:
                finding.applicability = UNSAFE
                notes.append("unsafe fix: `" + fn.name + "` is also used where volfix cannot follow it ("
                             + ", ".join(dict.fromkeys(found.unresolved)) + ")")
            finding.note = "; ".join(notes)

    def flag_parameters(self) -> None:
        """VF104 (opt-in): a helper's parameter that only selected `volatile` is unused once
        the flag is gone. Its fix is the helpers' own fix plus dropping the parameter from the
        signature and the argument from every call in this file: offered only when every use
        of the helper is such a call here (none elsewhere in the run, none unresolved)."""
        groups: Dict[Tuple[int, str], list] = {}
        for finding, call, fn, param, found in self.helper_roots:
            groups.setdefault((id(fn), param), []).append((finding, call, fn, found))
        for (_, param), members in groups.items():
            fn = members[0][2]
            calls = {id(call) for _, call, _, _ in members}
            findings = [m[0] for m in members]
            if self.param_used_otherwise(fn, param, calls):
                continue  # the parameter still means something without the flag
            start, end = self.param_span(fn, param)
            finding = self.add(Finding("VF104", start, end,
                                       message=f"Parameter `{param}` of `{fn.name}()` only chose `volatile=`, which "
                                               f"PyTorch 0.4 removed: it is unused once the flag is gone"))
            why = self.flag_parameter_blocker(fn, param, members)
            if why is None and any(f.applicability is None or not f.edits for f in findings):
                why = "the flag's own fix is not available (see the VF103 finding)"
            if why is None:
                edits = self.drop_parameter(fn, param)
                sites, _ = self.call_sites(fn)
                for site in sites:
                    arg, known = self.argument_for(site, fn, param)
                    node = next((k for k in site.keywords if k.arg == param), None) or \
                        next((a for a in site.args if a is arg), None)
                    if node is not None:
                        edits += self.drop_keyword(site, node)
                if edits is None:
                    why = "the signature cannot be edited safely"
                else:
                    for f in findings:
                        edits += [e for e in f.edits if e not in edits]
                    finding.edits, finding.applicability = edits, UNSAFE
                    finding.note = ("unsafe fix: drops the parameter and its arguments; a caller outside this "
                                    "run that passes it would raise a TypeError")
                    continue
            finding.note = f"no fix: {why}"

    def param_used_otherwise(self, fn: ast.AST, param: str, calls: Set[int]) -> bool:
        """Is `param` read anywhere but as the `volatile=` of these Variable calls?"""
        for node in ast.walk(fn):
            if isinstance(node, ast.Name) and node.id == param and not isinstance(node.ctx, ast.Del):
                kw = self.parents.get(node)
                call = self.parents.get(kw) if isinstance(kw, ast.keyword) else None
                if not (isinstance(kw, ast.keyword) and kw.arg == "volatile" and id(call) in calls):
                    return True
        return False

    def flag_parameter_blocker(self, fn: ast.AST, param: str, members: list) -> Optional[str]:
        for _, _, _, found in members:
            if found.elsewhere or found.unresolved or found.through:
                return "the helper is also used where its arguments cannot be edited from this file"
        key = fn.name if isinstance(self.parents.get(fn), ast.Module) else METHOD_PREFIX + fn.name  # type: ignore[attr-defined]
        if (self.external_calls or {}).get(key):
            return "other files of the run call the helper"
        sites, other = self.call_sites(fn)
        if other:
            return "the helper is also used other than by a call"
        args = fn.args  # type: ignore[attr-defined]
        positional = [a.arg for a in args.posonlyargs + args.args]
        if param in positional:
            if param in [a.arg for a in args.posonlyargs] or len(positional) == 1:
                return "the parameter cannot be removed from the signature here"
            index = bound_positional(fn, isinstance(self.parents.get(fn), ast.ClassDef)).index(param)
            for site in sites:
                if len(site.args) > index + 1 or any(isinstance(a, ast.Starred) for a in site.args):
                    return f"the call at line {site.lineno} passes arguments after it by position"
        elif param not in [a.arg for a in args.kwonlyargs][1:]:
            return "the parameter cannot be removed from the signature here"
        return None

    def param_span(self, fn: ast.AST, param: str) -> Tuple[int, int]:
        args = fn.args  # type: ignore[attr-defined]
        for a in args.posonlyargs + args.args + args.kwonlyargs:
            if a.arg == param:
                return self.src.start(a), self.src.end(a)
        return self.src.start(fn), self.src.start(fn)

    def drop_parameter(self, fn: ast.AST, param: str) -> Optional[List[TextEdit]]:
        """Remove `, param=default` (or `param=default, `) from the signature."""
        args = fn.args  # type: ignore[attr-defined]
        positional = args.posonlyargs + args.args
        defaults = parameter_defaults(fn)
        items = positional if param in [a.arg for a in positional] else args.kwonlyargs
        index = next(i for i, a in enumerate(items) if a.arg == param)
        node = items[index]
        end = self.src.end(defaults.get(param, node))
        if index == 0:
            return None
        previous = items[index - 1]
        start = self.src.end(defaults.get(previous.arg, previous))
        if self.src.comments_between(start, end):
            return None
        return [TextEdit(start, end, "")]

    def follow_helper(self, finding: Finding, fn: ast.AST, param: str, found: "HelperSites",
                      visited: Set[int]) -> None:
        """Turn the call sites of `fn` passing `param` into sources (recursively through
        wrappers that pass on a parameter of their own)."""
        if id(fn) in visited or len(visited) > 8:
            return
        visited.add(id(fn))
        owner = self.parents.get(fn)
        key = None
        if isinstance(owner, ast.Module):
            key = fn.name  # type: ignore[attr-defined]
        elif isinstance(owner, ast.ClassDef) and isinstance(self.parents.get(owner), ast.Module):
            key = METHOD_PREFIX + fn.name  # type: ignore[attr-defined]
        if key is not None:
            self.exported[key] = param
            for ext in (self.external_calls or {}).get(key, ()):
                if ext.flag == "unknown":
                    found.unresolved.append(f"{ext.path}:{ext.line}")
                elif ext.flag in ("true", "expr"):
                    (found.already_elsewhere if ext.covered else found.elsewhere).append(f"{ext.path}:{ext.line}")
        sites, unresolved = self.call_sites(fn)
        found.unresolved.extend(f"line {n}" for n in unresolved)
        for site in sites:
            arg, known = self.argument_for(site, fn, param)
            if not known:
                found.unresolved.append(f"line {site.lineno}")
                continue
            self.helper_site(finding, site, arg, found, visited)

    def helper_site(self, finding: Finding, site: ast.Call, arg: Optional[ast.AST], found: "HelperSites",
                    visited: Set[int]) -> bool:
        """One call passing `arg` as a helper's flag: a source in its caller, a parameter
        passed on (followed), or nothing (false flag, already under no_grad)."""
        if flag_kind(arg) in ("false", "none"):
            return False
        value = literal_truth(arg)
        scope = self.scope_of(site)
        if self.covered(site, scope, any_grad_mode=value is None):
            found.already.append(site.lineno)
            return False
        if isinstance(scope, (ast.Lambda, ast.ClassDef)):
            found.unresolved.append(f"line {site.lineno}")
            return False
        if self.passes_own_parameter(arg, scope):
            found.through.append(scope.name)
            before = found.count()
            self.follow_helper(finding, scope, arg.id, found, visited)
            return found.count() > before
        self.sources.append(Source(finding, site, self.statement_of(site), scope,
                                   "no_grad" if value is True else "flag", flag=None if value is True else arg,
                                   call_site=True))
        found.covered.append(site.lineno)
        return True

    @staticmethod
    def passes_own_parameter(arg: Optional[ast.AST], scope: ast.AST) -> bool:
        """The flag is a parameter of the calling function: its callers decide (followed)."""
        return (isinstance(arg, ast.Name) and isinstance(scope, (ast.FunctionDef, ast.AsyncFunctionDef))
                and arg.id in imp.function_params(scope))

    def imported_helper_call(self, call: ast.Call, sig) -> None:
        """A call of a helper defined in another file of the run (`volfix.project`)."""
        where = f"{sig.path}:{sig.line}"
        name = sig.name[len(METHOD_PREFIX):] if sig.name.startswith(METHOD_PREFIX) else sig.name
        if sig.param is None:  # forwards *args/**kwargs to Variable
            self.flag_keyword_call(call, f"through the wrapper `{name}` ({where})")
            return
        arg, known = signature_argument(call, sig)
        if not known:
            return  # named as unresolved in the helper's own file
        if flag_kind(arg) in ("false", "none"):
            return
        value = literal_truth(arg)
        if self.covered(call, self.scope_of(call), any_grad_mode=value is None):
            return
        code = "VF101" if value is True else "VF103"
        shown = "True" if value is True else self.src.segment(arg)
        message = (f"`{name}()` ({where}) passes `{sig.param}` to `volatile=`, ignored since PyTorch 0.4: "
                   + ("use `torch.no_grad()` here" if value is True else
                      "use `torch.set_grad_enabled(not <flag>)` here"))
        finding = self.add(Finding(code, self.src.start(call), self.src.end(call), message=message,
                                   note=f"`{sig.param}={shown}` makes this call a volatile source",
                                   call_site=True))
        scope = self.scope_of(call)
        if self.passes_own_parameter(arg, scope):
            self.helpers.append((finding, None, None, scope, arg.id, []))  # type: ignore[union-attr]
            return
        self.register_source(finding, call, "no_grad" if value is True else "flag", [],
                             flag=None if value is True else arg, call_site=True)

    def call_sites(self, fn: ast.AST) -> Tuple[List[ast.Call], List[int]]:
        """Calls of `fn` in this file, and lines where its name is used otherwise."""
        name = fn.name  # type: ignore[attr-defined]
        method = isinstance(self.parents.get(fn), ast.ClassDef)
        sites, other = [], []
        candidates = self.attributes.get(name, []) if method else self.names.get(name, [])
        for node in candidates:
            if method and isinstance(node, ast.Attribute) and node.attr == name:
                parent = self.parents.get(node)
                if isinstance(parent, ast.Call) and parent.func is node:
                    sites.append(parent)
                elif isinstance(node.ctx, ast.Load):
                    other.append(node.lineno)
            elif not method and isinstance(node, ast.Name) and node.id == name and isinstance(node.ctx, ast.Load):
                parent = self.parents.get(node)
                if isinstance(parent, ast.Call) and parent.func is node:
                    sites.append(parent)
                else:
                    other.append(node.lineno)
        return sites, other

    def argument_for(self, call: ast.Call, fn: ast.AST, param: str) -> Tuple[Optional[ast.AST], bool]:
        """The expression passed for `param` (or its default); known=False for *args/**kwargs."""
        method = isinstance(self.parents.get(fn), ast.ClassDef)
        arg, known = passed_argument(call, bound_positional(fn, method), param)
        if arg is not None or not known:
            return arg, known
        default = parameter_defaults(fn).get(param)
        return default, default is not None

    def splatted_names(self) -> Set[str]:
        """Names passed on as `**name` somewhere in the file."""
        if not hasattr(self, "_splatted"):
            self._splatted = {kw.value.id for node in self.calls
                              for kw in node.keywords if kw.arg is None and isinstance(kw.value, ast.Name)}
        return self._splatted

    def splatted(self, node: ast.AST) -> bool:
        """Does this dict reach a call as `**kwargs` (directly, or through the name it is bound to)?"""
        parent = self.parents.get(node)
        if isinstance(parent, ast.keyword) and parent.arg is None:
            return True
        if isinstance(parent, ast.IfExp):
            parent = self.parents.get(parent)
        if isinstance(parent, ast.Assign):
            return any(isinstance(t, ast.Name) and t.id in self.splatted_names() for t in parent.targets)
        return False

    # ------------------------------------------------------------------ regions
    def plan_regions(self) -> None:
        from .regions import RegionPlanner

        RegionPlanner(self).plan()

    def interior_rows(self) -> Set[int]:
        """Rows that start inside a string literal (never re-indented). From the tree, which is
        cheaper than tokenizing; an implicitly concatenated string also marks the rows between
        its parts, which only spares continuation lines inside brackets from re-indenting."""
        if self._interior_rows is None:
            rows: Set[int] = set()
            for node in self.multiline_strings:
                rows.update(range(node.lineno + 1, node.end_lineno + 1))
            self._interior_rows = rows
        return self._interior_rows

    def next_group(self) -> int:
        self._group += 1
        return self._group


@dataclass
class HelperSites:
    """What following a helper's call sites found (for its diagnostic)."""

    covered: List[int] = field(default_factory=list)  # lines of this file that got a source
    elsewhere: List[str] = field(default_factory=list)  # "path:line" in other files
    unresolved: List[str] = field(default_factory=list)  # "line N" / "path:line"
    through: List[str] = field(default_factory=list)  # functions passing the flag on
    already: List[int] = field(default_factory=list)  # true calls already under no_grad here
    already_elsewhere: List[str] = field(default_factory=list)  # ... and in other files

    def count(self) -> int:
        return len(self.covered) + len(self.elsewhere) + len(self.already) + len(self.already_elsewhere)

    def any(self) -> bool:
        return bool(self.count() or self.unresolved)


def bound_positional(fn: ast.AST, method: bool) -> List[str]:
    """The positional parameters a call fills (a method's `self` is bound already)."""
    args = fn.args  # type: ignore[attr-defined]
    positional = [a.arg for a in args.posonlyargs + args.args]
    static = any(isinstance(d, ast.Name) and d.id == "staticmethod" for d in fn.decorator_list)  # type: ignore[attr-defined]
    return positional[1:] if method and not static else positional


def parameter_defaults(fn: ast.AST) -> Dict[str, ast.AST]:
    """parameter name -> its default expression."""
    args = fn.args  # type: ignore[attr-defined]
    positional = [a.arg for a in args.posonlyargs + args.args]
    defaults = dict(zip(positional[len(positional) - len(args.defaults):], args.defaults))
    defaults.update({a.arg: d for a, d in zip(args.kwonlyargs, args.kw_defaults) if d is not None})
    return defaults


def passed_argument(call: ast.Call, positional: List[str], param: str) -> Tuple[Optional[ast.AST], bool]:
    """What a call passes explicitly for `param`: (argument, True); (None, True) when it
    passes nothing (the default applies); (None, False) when `*args`/`**kwargs` may carry it."""
    for kw in call.keywords:
        if kw.arg == param:
            return kw.value, True
    if param in positional:
        index = positional.index(param)
        if any(isinstance(a, ast.Starred) for a in call.args[:index + 1]):
            return None, False
        if index < len(call.args):
            return call.args[index], True
    if any(kw.arg is None for kw in call.keywords):
        return None, False
    return None, True


def signature_argument(call: ast.Call, sig) -> Tuple[Optional[ast.AST], bool]:
    """The expression a call passes for `sig.param` (a `project.HelperSignature`): the
    argument, a default as a constant, or known=False (`*args`/`**kwargs`, unknown default)."""
    arg, known = passed_argument(call, list(sig.positional), sig.param)
    if arg is not None or not known:
        return arg, known
    default = dict(sig.defaults).get(sig.param)
    if default in ("true", "false", "none"):
        return ast.Constant(value={"true": True, "false": False, "none": None}[default]), True
    return None, False


def flag_kind(arg: Optional[ast.AST], known: bool = True) -> str:
    """What a call passes as a volatile flag: 'unknown', 'none' (nothing or None), 'false',
    'true', or 'expr' (decided at run time)."""
    if not known:
        return "unknown"
    if arg is None or (isinstance(arg, ast.Constant) and arg.value is None):
        return "none"
    truth = literal_truth(arg)
    return "expr" if truth is None else ("true" if truth else "false")


def literal_truth(node: Optional[ast.AST]) -> Optional[bool]:
    """True/False for literal flags (True, False, 1, 0), None otherwise."""
    if isinstance(node, ast.Constant) and isinstance(node.value, (bool, int)) and not isinstance(node.value, float):
        return bool(node.value)
    return None
