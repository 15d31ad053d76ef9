"""Ground truth of the real-world evaluation: the volatile-era sites of one source file.

An independent scanner (it never imports volfix): `repos.scan_ground_truth` finds calls
of `torch.autograd.Variable` (resolved through the file's imports, wrappers forwarding
`*args/**kwargs` included) with a `volatile` flag, `.volatile` reads and writes and
`getattr/setattr/hasattr(x, "volatile")`. This module adds what issue 13 asks to be found too:

* **names that do not resolve**: `Variable(x, volatile=True)` where `Variable` comes from a star
  import of a project module (`from .torch_imports import *`) or is not bound at all, and
  `mod.Variable(...)` where `mod` is a project module (a wrapper defined elsewhere), in a file
  that does not use another framework's `Variable` (Chainer, TensorFlow, ...) nor defines its
  own; such calls are truth sites of kind `unresolved name`;
* **not sites**: `Tensor.volatile.__get__` and other reads of `.volatile` on the class itself
  (torch's own `overrides.py`): a descriptor, counted as a look-alike that must not be flagged;
  `self.volatile` inside a class that is not a tensor subclass (a data loader's own flag or
  property); a `.volatile` read inside a `volatile=` argument belongs to that constructor's site;
* **dynamic flags**: `{"volatile": flag}` and `dict(volatile=flag)` in files importing torch are
  VF203 sites (they reach a constructor as `**kwargs`);
* **helper call sites**: a call that hands `volatile=<flag>` to a project function
  (`get_batch(data, i, volatile=True)`, `V(x, volatile=True)`): code `helper`, with the flag
  (`true`, `false`, or `expr`); 0.3 made the value volatile unless the flag was false. With
  `flag_helpers(units)` (every file of the project), calls of functions whose parameter selects
  volatility under another name count too (`get_batch(source, i, evaluation=True)` where the
  helper does `Variable(..., volatile=evaluation)`; `volatile=not for_training`; a helper that
  passes the parameter on to another such helper), by keyword or by position, and calls that
  omit a flag whose default makes the value volatile.

`sites_of(unit, helpers)` returns them with rows of the unit's text (for a notebook, the joined
code cells of `eval_common.UnitText`).
"""
from __future__ import annotations

import ast
import os
import re
import sys
from dataclasses import dataclass, field
from typing import Dict, Iterable, List, Optional

from .common import UnitText, dotted, mask_async  # noqa: E402
from .repos import scan_ground_truth  # noqa: E402

VOLATILE_CODES = ("VF101", "VF102", "VF103", "VF201", "VF202", "VF203")
CTOR_CODES = ("VF101", "VF102", "VF103")
OTHER_FRAMEWORKS = {"chainer", "tensorflow", "theano", "mxnet", "dynet", "cupy", "tf", "keras"}


@dataclass
class Site:
    code: str  # VF101/VF102/VF103/VF201/VF202/VF203, or "helper"
    row: int
    col: int  # 1-based, characters
    snippet: str
    kind: str = ""  # keyword / positional / via wrapper `X` / unresolved name / Load / Store / getattr / `f(...)`
    flag: str = ""  # constructor and helper sites: true / false / expr
    pass_through: bool = False  # the flag is a parameter of the flag helper the site sits in

    @property
    def volatile(self) -> bool:
        """Is this a place where 0.3 made (or may have made) a value volatile, that a migration
        must cover? A flag that a helper only passes on is decided at the helper's call sites."""
        if self.pass_through:
            return False
        if self.code in ("VF101", "VF103"):
            return True
        if self.code == "helper":
            return self.flag != "false"
        return False


@dataclass
class FileSites:
    sites: List[Site] = field(default_factory=list)  # volatile-family sites (truth)
    helpers: List[Site] = field(default_factory=list)  # flags handed to project helpers
    lookalikes: List[Site] = field(default_factory=list)  # must not be flagged
    splat_rows: List[tuple] = field(default_factory=list)  # (row, col) of Variable(*a, **k) without volatile
    parse_error: Optional[str] = None


def _flag_of(call: ast.Call) -> str:
    for kw in call.keywords:
        if kw.arg == "volatile":
            v = kw.value
            if isinstance(v, ast.Constant) and v.value is True:
                return "true"
            if isinstance(v, ast.Constant) and v.value in (False, None):
                return "false"
            return "expr"
    if len(call.args) >= 3:
        v = call.args[2]
        if isinstance(v, ast.Constant):
            return "true" if v.value is True else "false"
        return "expr"
    return ""


def _variable_binding(tree: ast.AST, name: str) -> str:
    """How the file binds `name` (`Variable`, or the module part of `cuda.Variable`): 'foreign'
    (another framework, or the file's own class/function), 'subclass' (the file's own subclass
    of torch's Variable), 'project' (imported from a project module, or a star import), or
    'unbound'."""
    root = name.split(".")[0]
    how = "unbound"
    for node in ast.walk(tree):
        if isinstance(node, ast.Import):
            for a in node.names:
                if a.name.split(".")[0] in OTHER_FRAMEWORKS and (a.asname or a.name.split(".")[0]) in (root, "chainer"):
                    return "foreign"
                if (a.asname or a.name.split(".")[0]) == root:
                    how = "project"
        elif isinstance(node, ast.ImportFrom):
            top = (node.module or "").split(".")[0]
            if node.level == 0 and top in OTHER_FRAMEWORKS:
                return "foreign"
            if any(a.name == "*" or (a.asname or a.name) == root for a in node.names):
                how = "project"
        elif isinstance(node, ast.ClassDef) and node.name == root and any(
                (dotted(b) or "").endswith("Variable") for b in node.bases):
            return "subclass"  # class Variable(autograd.Variable): still torch's constructor
        elif isinstance(node, (ast.ClassDef, ast.FunctionDef)) and node.name == root:
            return "foreign"
    return how


@dataclass(frozen=True)
class FlagHelper:
    """A project function whose parameter selects volatility."""

    name: str
    param: str
    index: int  # position of the parameter at a call (`self` of a method not counted)
    negated: bool  # volatile=not param
    default: Optional[bool]  # the parameter's literal default, if any

    def volatile_for(self, value: Optional[bool]) -> Optional[bool]:
        if value is None:
            return None
        return (not value) if self.negated else value


COMMON_NAMES = {"forward", "__init__", "__call__", "main", "run", "step", "update", "train", "test"}


def _flag_use(value: ast.AST, params: Dict[str, int]) -> Optional[tuple]:
    """`volatile=<value>`: (param, negated) when it is a parameter or `not` a parameter."""
    if isinstance(value, ast.Name) and value.id in params:
        return value.id, False
    if isinstance(value, ast.UnaryOp) and isinstance(value.op, ast.Not) and isinstance(value.operand, ast.Name) \
            and value.operand.id in params:
        return value.operand.id, True
    return None


def flag_helpers(units: Iterable[UnitText]) -> Dict[str, FlagHelper]:
    """Functions of the project whose parameter selects volatility, by simple name (names defined
    twice with different flags, and very common method names, are left out)."""
    pending = list(units)
    defs: list = []
    found: Dict[str, FlagHelper] = {}
    ambiguous = set()
    changed = True
    while changed:  # a helper passing its parameter on to another helper is a helper too
        changed = False
        # only files that mention `volatile` or a helper found so far can define one: parse those
        wanted = re.compile(r"volatile" + "".join(r"|\b" + re.escape(n) + r"\b" for n in found))
        for unit in [u for u in pending if wanted.search(u.text)]:
            pending.remove(unit)
            if sites_of_parse_ok(unit):
                tree = ast.parse(mask_async(unit.text))
                defs += [n for n in ast.walk(tree) if isinstance(n, (ast.FunctionDef, ast.AsyncFunctionDef))]
        for fn in defs:
            if fn.name in found or fn.name in ambiguous or fn.name in COMMON_NAMES:
                continue
            args = fn.args.posonlyargs + fn.args.args
            skip = 1 if args and args[0].arg in ("self", "cls") else 0
            params = {a.arg: i - skip for i, a in enumerate(args)}
            defaults = dict(zip([a.arg for a in args][len(args) - len(fn.args.defaults):], fn.args.defaults))
            defaults.update({a.arg: d for a, d in zip(fn.args.kwonlyargs, fn.args.kw_defaults) if d is not None})
            params.update({a.arg: -1 for a in fn.args.kwonlyargs})
            for call in (n for n in ast.walk(fn) if isinstance(n, ast.Call)):
                use = _flag_passed(call, params, found)
                if use:
                    d = defaults.get(use[0])
                    default = d.value if isinstance(d, ast.Constant) and isinstance(d.value, bool) else None
                    helper = FlagHelper(fn.name, use[0], params[use[0]], use[1], default)
                    if fn.name in found and found[fn.name] != helper:
                        ambiguous.add(fn.name)
                        del found[fn.name]
                    else:
                        found[fn.name] = helper
                        changed = True
                    break
    return found


def _flag_passed(call: ast.Call, params: Dict[str, int], found: Dict[str, FlagHelper]) -> Optional[tuple]:
    """(param, negated) when `call` turns one of `params` into a volatile flag: `volatile=param`
    (or `not param`), or the flag argument of a known helper, by keyword or by position."""
    for kw in call.keywords:
        if kw.arg == "volatile":
            use = _flag_use(kw.value, params)
            if use:
                return use
    inner = found.get(_last_name(call.func))
    if inner is None:
        return None
    value = next((kw.value for kw in call.keywords if kw.arg == inner.param), None)
    if value is None and 0 <= inner.index < len(call.args):
        value = call.args[inner.index]
    use = _flag_use(value, params) if value is not None else None
    return (use[0], use[1] != inner.negated) if use else None


def _last_name(func: ast.AST) -> str:
    return func.id if isinstance(func, ast.Name) else func.attr if isinstance(func, ast.Attribute) else ""


# A module-level import of torch (or of a torch package) in a file of the tree.
_IMPORTS_TORCH = re.compile(r"^[ \t]*(?:import|from)[ \t]+torch", re.M)


def torch_tree(units: List[UnitText]) -> bool:
    """Whether some file of a tree imports torch: its `.volatile` reads are tensors' flags,
    also in a file that imports nothing of torch itself (`scan_ground_truth`)."""
    return any(_IMPORTS_TORCH.search(unit.text) for unit in units)


def sites_of_parse_ok(unit: UnitText) -> bool:
    try:
        ast.parse(mask_async(unit.text))
        return True
    except (SyntaxError, ValueError):
        return False


def _helper_call_sites(tree: ast.AST, helpers: Dict[str, FlagHelper], text: str, seen: set) -> List[Site]:
    out = []
    lines = text.splitlines()
    for call in (n for n in ast.walk(tree) if isinstance(n, ast.Call)):
        helper = helpers.get(_last_name(call.func))
        if helper is None or (call.lineno, call.col_offset) in seen:
            continue
        value = next((kw.value for kw in call.keywords if kw.arg == helper.param), None)
        if value is None and 0 <= helper.index < len(call.args) and not any(
                isinstance(a, ast.Starred) for a in call.args[:helper.index + 1]):
            value = call.args[helper.index]
        if value is None:  # an omitted flag matters only when its default makes the value volatile
            if helper.volatile_for(helper.default) is not True or any(kw.arg is None for kw in call.keywords):
                continue
            literal: Optional[bool] = helper.default
        else:
            literal = value.value if isinstance(value, ast.Constant) and isinstance(value.value, bool) else None
        vol = helper.volatile_for(literal)
        flag = "expr" if vol is None else ("true" if vol else "false")
        line = lines[call.lineno - 1] if call.lineno <= len(lines) else ""
        col = len(line.encode("utf-8")[:call.col_offset].decode("utf-8", "replace")) + 1
        snippet = ((ast.get_source_segment(text, call) or "").splitlines() or [""])[0][:100]
        out.append(Site("helper", call.lineno, col, snippet, f"`{helper.name}(..., {helper.param}=...)`", flag))
    return out


def sites_of(unit: UnitText, helpers: Optional[Dict[str, FlagHelper]] = None, torch_project: bool = False
             ) -> FileSites:
    text = mask_async(unit.text)
    gt = scan_ground_truth(unit.text, torch_project)
    out = FileSites(parse_error=gt.parse_error)
    if gt.parse_error:
        return out
    tree = ast.parse(text)
    calls = {(n.lineno, n.col_offset): n for n in ast.walk(tree) if isinstance(n, ast.Call)}
    lines = unit.text.splitlines()

    def node_at(s) -> Optional[ast.Call]:
        line = lines[s.row - 1] if 0 < s.row <= len(lines) else ""
        col = len(line[:s.col - 1].encode("utf-8"))  # ast columns are byte offsets
        return calls.get((s.row, col))

    descriptors = _descriptor_rows(tree)
    own = _own_attribute(tree)
    in_flags = _reads_in_flags(tree)
    for s in gt.sites:
        if s.code not in VOLATILE_CODES:
            continue
        if s.code in ("VF201", "VF202") and s.row in descriptors:
            out.lookalikes.append(Site("descriptor", s.row, s.col, s.snippet, "the class attribute, not a tensor's"))
            continue
        key = (s.row, len((lines[s.row - 1] if 0 < s.row <= len(lines) else "")[:s.col - 1].encode("utf-8")))
        if s.code in ("VF201", "VF202") and key in own:
            out.lookalikes.append(Site("own attribute", s.row, s.col, s.snippet, "`self.volatile` of a class, not a tensor"))
            continue
        if s.code == "VF201" and key in in_flags:
            continue  # `volatile=x.volatile`: part of that constructor's site
        call = node_at(s) if s.code in CTOR_CODES else None
        out.sites.append(Site(s.code, s.row, s.col, s.snippet, s.kind, _flag_of(call) if call is not None else ""))
    for s in gt.lookalikes:
        if s.code == "dict" and gt.imports_torch:  # `{"volatile": flag}` / `dict(volatile=flag)` for **kwargs
            out.sites.append(Site("VF203", s.row, s.col, s.snippet, s.kind))
            continue
        name = s.kind[len("non-torch `"):-1] if s.kind.startswith("non-torch `") else ""
        if s.code != "lookalike" or not (name == "Variable" or name.count(".") == 1 and name.endswith(".Variable")):
            out.lookalikes.append(Site(s.code, s.row, s.col, s.snippet, s.kind))
            continue
        binding = _variable_binding(tree, name)
        call = node_at(s)
        if binding == "foreign" or call is None:
            out.lookalikes.append(Site(s.code, s.row, s.col, s.snippet, s.kind))
            continue
        flag = _flag_of(call)
        code = {"true": "VF101", "false": "VF102"}.get(flag, "VF103")
        out.sites.append(Site(code, s.row, s.col, s.snippet, f"unresolved name ({binding})", flag))
    seen = set()
    for s in gt.helper_calls:
        call = node_at(s)
        if call is not None:
            seen.add((call.lineno, call.col_offset))
        out.helpers.append(Site("helper", s.row, s.col, s.snippet, s.kind, _flag_of(call) if call is not None else "expr"))
    if helpers:
        out.helpers += _helper_call_sites(tree, helpers, text, seen)
        _mark_pass_through(tree, out.sites + out.helpers, helpers, node_at)
    out.splat_rows = [(s.row, s.col) for s in gt.splat_calls]
    return out


def _own_attribute(tree: ast.AST) -> set:
    """(row, byte col) of `self.volatile` (read or written) inside a class that is not a tensor
    (it does not subclass `Variable`/`Tensor`): the object's own flag, not autograd's."""
    out = set()
    for cls in (n for n in ast.walk(tree) if isinstance(n, ast.ClassDef)):
        if any((dotted(b) or "").split(".")[-1] in ("Variable", "Tensor") for b in cls.bases):
            continue
        out |= {(n.lineno, n.col_offset) for n in ast.walk(cls) if isinstance(n, ast.Attribute)
                and n.attr == "volatile" and isinstance(n.value, ast.Name) and n.value.id == "self"}
    return out


def _reads_in_flags(tree: ast.AST) -> set:
    """(row, byte col) of `.volatile` reads inside a `volatile=` argument (`volatile=x.volatile`)."""
    out = set()
    for call in (n for n in ast.walk(tree) if isinstance(n, ast.Call)):
        for kw in call.keywords:
            if kw.arg == "volatile":
                out |= {(n.lineno, n.col_offset) for n in ast.walk(kw.value)
                        if isinstance(n, ast.Attribute) and n.attr == "volatile"}
    return out


CLASS_RECEIVERS = {"Tensor", "torch.Tensor", "Variable", "torch.autograd.Variable", "_TensorBase"}


def _descriptor_rows(tree: ast.AST) -> set:
    """Rows of `.volatile` reached on the class itself (`Tensor.volatile.__get__` in torch's own
    overrides table): the descriptor, not a tensor's flag, so nothing legacy."""
    rows = set()
    for node in ast.walk(tree):
        if isinstance(node, ast.Attribute) and node.attr == "volatile" and dotted(node.value) in CLASS_RECEIVERS:
            rows.add(node.lineno)
    return rows


def _mark_pass_through(tree: ast.AST, sites: List[Site], helpers: Dict[str, FlagHelper], node_at) -> None:
    """Flag the sites whose flag expression reads the parameter of the flag helper they sit in
    (`Variable(x, volatile=not for_training)` inside `as_tensor(..., for_training)`, or
    `field.as_tensor(..., for_training=for_training)`): they only pass the caller's choice on."""
    owner = {}
    for fn in ast.walk(tree):
        if isinstance(fn, (ast.FunctionDef, ast.AsyncFunctionDef)) and fn.name in helpers:
            for node in ast.walk(fn):
                if isinstance(node, ast.Call):
                    owner[(node.lineno, node.col_offset)] = helpers[fn.name].param
    for site in sites:
        if site.flag != "expr":
            continue
        call = node_at(site)
        param = owner.get((call.lineno, call.col_offset)) if call is not None else None
        if param and any(isinstance(n, ast.Name) and n.id == param
                         for arg in list(call.args) + [k.value for k in call.keywords] for n in ast.walk(arg)):
            site.pass_through = True
