"""Following a volatile value out of its scope (SPEC §2.6).

A raw volatile value that leaves its scope was computed with elsewhere, and that is where the
region belongs:

- **helpers**: a function whose `volatile=` flag is one of its parameters (`get_batch(source,
  i, evaluation=False)`, `as_tensor(self, ..., for_training)`), or that hard-codes
  `volatile=True`, and returns the value: every call passing a true flag becomes a source in
  its caller (the flag substituted by what the call passes); calls that pass the flag on from
  their own parameter are followed to their callers; calls in other files come from the
  project index (`volfix.flow.project`) and get their regions in their own files;
- **attributes**: `self.priors = Variable(...)` is read by the class's other methods;
- **closures**: a nested function reads the value.

This module follows the helpers; `volfix.flow.escapes` the attributes and closures, and says
why a group gets no region.

A value *computed* in a region that leaves through `return` carries no graph, as in 0.3: the
fix stays safe unless a caller in this file trains on it.
"""
from __future__ import annotations

import ast
from dataclasses import dataclass, field
from typing import Dict, List, Optional, Set

from ..findings import W_INFO, W_NONE, W_UNSAFE, Flag, Source
from ..model import Applicability
from ..syntax import names as nm
from ..files.prefilter import helper_hint
from ..project.facts import VOLATILE_PARAM
from ..syntax.index import FUNCTIONS
from .calls import argument_for, call_sites, flag_kind, mapper_calls
from .grad_mode import literal_truth
from .instances import constructor_flag, instance_sites
from .taint import TaintAnalysis
from .taint_items import Items, reaches_only
from .values import key_of, returns_autograd_free


@dataclass
class CallerReport:
    """What following a helper's calls found, for its diagnostic."""

    covered: List[int] = field(default_factory=list)  # lines of this file that got a region
    elsewhere: List[str] = field(default_factory=list)  # "path:line": regions in other files of the run
    outside: List[str] = field(default_factory=list)  # "path:line": true calls in files outside the run
    unresolved: List[str] = field(default_factory=list)  # uses that cannot be followed
    through: List[str] = field(default_factory=list)  # functions passing the flag on
    already: List[str] = field(default_factory=list)  # true calls already under a grad-mode region
    true_calls: int = 0

    def any_call(self) -> bool:
        return bool(self.true_calls or self.unresolved)


@dataclass(frozen=True)
class HelperFlag:
    """When a helper returns a volatile value: always, or when parameter `param` is true
    (`negated`: when it is false, `volatile=not for_training`)."""

    param: Optional[str]  # None: always
    negated: bool = False
    # The flag is an attribute the constructor stored from its parameter `param` (`self.train =
    # train` in `__init__`): the instances decide, and `init` is that `__init__`.
    init: Optional[ast.AST] = None


@dataclass
class HelperRecord:
    """A helper whose flag went to its callers (read by VF104)."""

    source: object  # the Source of the `Variable(..., volatile=<param>)` call
    fn: ast.AST
    flag: HelperFlag
    report: CallerReport
    through: bool = False  # passes its own parameter on to a helper
    local: bool = False  # the region went inside the function (no known caller passes a true flag)


# A fix that waits for other files' regions (`report.elsewhere`): unsafe for the file alone,
# which is what `check` of one file and the first pass of a run see. One `volfix fix` run
# writes those regions and then applies it (`volfix.run.runner`'s settle pass), so a run that
# fixes or previews every file of the project, and `check` of it, count it as that run will
# (`settled_note`).
AWAITING = "get their regions from their own files"
_AWAITING_END = ": `volfix fix` applies this once they have them"


def awaiting_note(who: str, sites: List[str]) -> str:
    return f"unsafe fix: the {who} in other files ({', '.join(sites[:3])}) {AWAITING}{_AWAITING_END}"


def is_awaiting(note: Optional[str]) -> bool:
    return bool(note) and AWAITING in note and note.endswith(_AWAITING_END)  # type: ignore[operator]


def settled_note(note: str) -> str:
    """The note of an awaiting fix that one `volfix fix` run of these files applies."""
    return note[len("unsafe fix: "):-len(_AWAITING_END)] + ", which one `volfix fix` run writes first"


class HelperFollower:
    """Helpers' flags followed to their callers; `flow.escapes.Follower` adds the escapes."""

    def __init__(self, ctx, planner):
        self.ctx = ctx
        self.planner = planner
        self.index = ctx.index
        self.src = ctx.src
        self._followed_attributes: Set[int] = set()
        self._helper_done: Set[int] = set()
        self._source_taints: Dict[int, object] = {}  # `source_taint`, per source

    # ------------------------------------------------------------------ flags
    def resolve_flag(self, source) -> Optional[HelperFlag]:
        """The source's flag as a parameter of its function (through a local bound once:
        `not_training = not training`), or None when it is not one."""
        scope = source.scope
        if source.flag is None or not isinstance(scope, FUNCTIONS):
            return None
        node = self.local_value(source.flag.node, scope)
        negated = source.flag.negated  # `Flag.negated`: volatile when the expression is false
        if isinstance(node, ast.UnaryOp) and isinstance(node.op, ast.Not):
            node, negated = self.local_value(node.operand, scope), not negated
        if isinstance(node, ast.Name) and node.id in nm.function_params(scope) and not self.reassigned(node.id, scope):
            return HelperFlag(node.id, negated)
        return None

    def local_value(self, node: ast.AST, scope: ast.AST) -> ast.AST:
        """A local bound exactly once in `scope` stands for its value."""
        if not isinstance(node, ast.Name) or node.id in nm.function_params(scope):
            return node
        stores = [n for n in self.index.names.get(node.id, ())
                  if isinstance(n.ctx, ast.Store) and self.index.function_of(n) is scope]
        if len(stores) != 1:
            return node
        stmt = self.index.parents.get(stores[0])
        if isinstance(stmt, ast.Assign) and len(stmt.targets) == 1 and stmt.targets[0] is stores[0]:
            return stmt.value
        return node

    def reassigned(self, name: str, scope: ast.AST) -> bool:
        return any(isinstance(n.ctx, ast.Store) and self.index.function_of(n) is scope
                   for n in self.index.names.get(name, ()))

    def is_helper_flag(self, source) -> bool:
        """A runtime flag that is a parameter of its function whose callers decide: the
        function only creates and returns the value, or its calls passing a true flag are all
        known (then their regions cover what the function computes, as a human would write
        `with torch.no_grad():` around the evaluation calls). Otherwise the region goes inside
        the function, on the flag."""
        if id(source) in self._helper_done:
            return False
        flag = self.resolve_flag(source)
        if flag is None:
            flag = self.constructor_flag(source)
            if flag is not None:
                taint = self.source_taint(source)
                # Only a value the method hands out raw (created, then yielded or returned) is
                # followed to the instances; one it computes with gets its region right there.
                if not any(id(s) in taint.recording for s in taint.uses_outside()) and any(
                        e.raw and e.kind in ("return", "yield") for e in taint.escapes):
                    return True
            self.resolve_local_flag(source)
            return False
        taint = self.source_taint(source)
        source.computing = any(id(s) in taint.recording for s in taint.uses_outside())
        if source.computing:
            report = CallerReport()
            self.follow_callers(source, source.scope, flag, report, visited=set(), dry=True)
            if not report.true_calls or report.unresolved or report.outside:
                # Known to the project index all the same: callers in other files may turn up.
                self.ctx.helpers.append(HelperRecord(source, source.scope, flag, report, local=True))
                self.resolve_local_flag(source)
                return False
        return True

    def source_taint(self, source):
        """The taint of the source alone in its scope: from the call, or after the statement
        that sets `x.volatile = True` (`if not train: x.volatile = True`). Once per source (a
        helper's is asked again at each of its call sites, `kept_on_receiver`)."""
        found = self._source_taints.get(id(source))
        if found is None:
            if source.seed is not None:
                analysis = TaintAnalysis(source.scope, self.index, [], seeds={id(source.stmt): {source.seed: True}},
                                         plain=self.ctx.is_plain, wrappers=self.ctx.wrappers())
            else:
                analysis = TaintAnalysis(source.scope, self.index, [source.node], plain=self.ctx.is_plain,
                                         wrappers=self.ctx.wrappers())
            found = self._source_taints[id(source)] = analysis.run()
        return found

    def resolve_local_flag(self, source) -> None:
        """`volatile=not_training` with `not_training = not training`: the region spells
        `set_grad_enabled(training)`."""
        if source.flag is None or not isinstance(source.scope, FUNCTIONS):
            return
        value = self.local_value(source.flag.node, source.scope)
        if value is not source.flag.node:
            if literal_truth(value) is (not source.flag.negated):  # `volatile = True`: always volatile
                source.flag = None
                return
            source.flag.node = value
            source.flag.text = self.src.segment(value)

    # ------------------------------------------------------------------ helpers
    def helper(self, source) -> list:
        """A helper's flag: follow its callers; the helper itself is only unwrapped."""
        self._helper_done.add(id(source))
        flag = self.resolve_flag(source)
        fn = source.scope
        report = CallerReport()
        if flag is None:
            flag = self.constructor_flag(source)
            out = self.follow_instances(source, fn, flag, report)
            self.instances_outcome(source, fn, flag, report)
            return out
        out = self.follow_callers(source, fn, flag, report, visited=set())
        self.helper_outcome(source, fn, flag, report)
        self.ctx.helpers.append(HelperRecord(source, fn, flag, report))
        return out

    def constructor_flag(self, source) -> Optional[HelperFlag]:
        """`volatile=not self.train`, with `self.train = train` stored by the constructor
        (`volfix.flow.instances`): the instances decide."""
        if source.flag is None:
            return None
        found = constructor_flag(self.index, source.scope, source.flag.node)
        return None if found is None else HelperFlag(*found)

    def follow_instances(self, source, fn: ast.AST, flag: HelperFlag, report: CallerReport) -> list:
        """Where the instances made in this file hand the value out (a loop over one, a call of
        the method), with what each constructor call passed: sources there."""
        sites, unresolved = instance_sites(self.index, fn, flag.init, flag.param)
        report.unresolved.extend(unresolved)
        out: list = []
        for site, arg in sites:
            out.extend(self.caller_site(source, site, arg, HelperFlag(flag.param, flag.negated), report,
                                        visited=set()))
        return out

    def instances_outcome(self, source, fn: ast.AST, flag: HelperFlag, report: CallerReport) -> None:
        """Unwrapped, unsafe: the instances made here get their regions, but the class can be
        imported and constructed in other files, which volfix does not follow."""
        cls = self.index.method_class(fn).name  # type: ignore[union-attr]
        truth = "false" if flag.negated else "true"
        lines = sorted(set(report.covered))
        where = (f"; the instances made with a {truth} `{flag.param}` get theirs "
                 f"(line{'s' if len(lines) > 1 else ''} {', '.join(map(str, lines))})") if lines else ""
        also = ", ".join(dict.fromkeys(report.unresolved))
        also = f", or used where volfix cannot follow them ({also})," if also else ""
        self.planner.unwrap_only(source, f"unsafe fix: instances of `{cls}` made in other files{also} get no "
                                         f"region{where}", W_UNSAFE, applicability=_unsafe())

    def follow_callers(self, source, fn: ast.AST, flag: HelperFlag, report: CallerReport,
                       visited: Set[int], dry: bool = False,
                       items: Optional[Items] = None) -> list:
        if id(fn) in visited or len(visited) > 8:
            return []
        visited.add(id(fn))
        out = []
        self.external_callers(fn, flag, report)
        sites, other = call_sites(self.index, fn)
        if flag.param is None:  # `map_over(x, VV_)`: a call that returns what `VV_` returns
            mapped = mapper_calls(self.index, fn)
            sites += mapped
            other = [n for n in other if n not in {c.lineno for c in mapped}]
        report.unresolved.extend(f"line {n}" for n in other)
        for site in sites:
            if flag.param is None:
                arg, known = ast.Constant(value=True), True
            else:
                arg, known = argument_for(self.index, site, fn, flag.param, named_dicts=True)
            if not known:
                report.unresolved.append(f"line {site.lineno}")
                continue
            out.extend(self.caller_site(source, site, arg, flag, report, visited, dry, fn, items))
        return out

    def caller_site(self, source, site: ast.Call, arg: Optional[ast.AST], flag: HelperFlag,
                    report: CallerReport, visited: Set[int], dry: bool = False, fn: Optional[ast.AST] = None,
                    items: Optional[Items] = None) -> list:
        """One call passing `arg` for the helper's flag: a source in its caller, a parameter
        passed on (followed), or nothing (false flag, already under a grad-mode region)."""
        kind = flag_kind(arg)
        if flag.negated:
            kind = {"true": "false", "false": "true", "none": "true"}.get(kind, kind)
        if kind in ("false", "none"):
            return []
        report.true_calls += 1
        scope = self.index.function_of(site)
        if self.ctx.covered(site, any_grad_mode=kind == "expr"):
            report.already.append(f"line {site.lineno}")
            return []
        if isinstance(self.index.scope_of(site), (ast.Lambda, ast.ClassDef)):
            report.unresolved.append(f"line {site.lineno}")
            return []
        if kind == "expr":
            inner = self.local_value(arg, scope) if isinstance(scope, FUNCTIONS) else arg
            negated = flag.negated
            if isinstance(inner, ast.UnaryOp) and isinstance(inner.op, ast.Not):
                inner, negated = inner.operand, not negated
            if isinstance(inner, ast.Name) and isinstance(scope, FUNCTIONS) \
                    and inner.id in nm.function_params(scope) and not self.reassigned(inner.id, scope):
                report.through.append(scope.name)  # type: ignore[attr-defined]
                through = HelperFlag(inner.id, negated)
                if not dry:
                    self.ctx.helpers.append(HelperRecord(source, scope, through, report, through=True))
                return self.follow_callers(source, scope, through, report, visited, dry)
        new_flag = None
        if kind == "expr":
            text = self.src.segment(arg)
            new_flag = Flag(arg, f"{text}", negated=False) if not flag.negated else Flag(arg, text, negated=True)
        report.covered.append(site.lineno)
        free = fn is not None and returns_autograd_free(fn)
        if items is not None and not reaches_only(self.index, site, fn):
            items = None  # another def of that name may answer this call: its items may differ
        kept = self.kept_on_receiver(source, fn, site)
        return [Source(source.finding, site, self.index.statement_of(site), scope, new_flag, call_site=True,
                       computing=source.computing or free, result_free=free, items=items, seed=kept)]

    def kept_on_receiver(self, source, fn: Optional[ast.AST], site: ast.Call) -> Optional[str]:
        """`batch.to_dev(volatile=True)` of a method that stores the value on its object
        (`self.data = {k: Variable(v, volatile=volatile) ...}`) and returns none of it: the
        caller's object holds the value from that statement on (its key), not the call's result."""
        if fn is None or self.index.method_class(fn) is None or not isinstance(site.func, ast.Attribute):
            return None
        receiver = key_of(site.func.value)
        if receiver is None:
            return None
        escapes = self.source_taint(source).escapes
        if any(e.kind in ("return", "yield") for e in escapes):
            return None
        stored = sorted({e.what.strip("`") for e in escapes if e.kind == "attribute" and e.what.startswith("`self.")})
        if receiver == "self":  # `self._reset_hidden(training)`: the attribute it sets, not all of `self`
            return stored[0] if len(stored) == 1 else None
        return receiver if stored else None

    def external_callers(self, fn: ast.AST, flag: HelperFlag, report: CallerReport) -> None:
        links = self.ctx.links
        if links is None:
            return
        key = self.export_key(fn)
        if key is None:
            return
        # A notebook's call passing `volatile=` (`variable(img, volatile=True)` in a cell): the
        # index links no notebook as a caller, so its region is nobody's.
        for ext in links.external_calls_of(VOLATILE_PARAM + fn.name):  # type: ignore[attr-defined]
            if ":cell " in ext.path:
                report.unresolved.append(f"{ext.path}:{ext.line}")
        for ext in links.external_calls_of(key):
            kind = ext.flag
            if flag.negated:
                kind = {"true": "false", "false": "true", "none": "true"}.get(kind, kind)
            if kind == "unknown":
                report.unresolved.append(f"{ext.path}:{ext.line}")
            elif kind in ("true", "expr"):
                report.true_calls += 1
                where = f"{ext.path}:{ext.line}"
                if ext.covered:
                    report.already.append(where)
                elif ext.in_run:
                    report.elsewhere.append(where)
                else:
                    report.outside.append(where)

    def export_key(self, fn: ast.AST) -> Optional[str]:
        owner = self.index.parents.get(fn)
        if isinstance(owner, ast.Module):
            return fn.name  # type: ignore[attr-defined]
        if isinstance(owner, ast.ClassDef) and isinstance(self.index.parents.get(owner), ast.Module):
            return nm.METHOD_PREFIX + fn.name  # type: ignore[attr-defined]
        return None

    def helper_outcome(self, source, fn: ast.AST, flag: HelperFlag, report: CallerReport) -> None:
        planner = self.planner
        name = f"`{fn.name}()`"  # type: ignore[attr-defined]
        param = f"`{flag.param}`" if flag.param else "the flag"
        # The value that made the result volatile: `volatile=not for_training` -> a false one.
        truth = "false" if flag.negated else "true"
        flagged = f"a {truth} {param}" if flag.param else "a true flag"
        if report.outside:
            where = ", ".join(report.outside[:3])
            planner.outcome(source, None, f"no fix: {name} is called with {flagged} outside this run ({where}): "
                                          "fix those files in the same run", [], weight=W_NONE)
            return
        if not report.any_call():
            if self.index.notebook:
                # A notebook is imported by no one: its own calls are all there are.
                planner.unwrap_only(source, f"no call in the notebook passes {flagged}", W_INFO)
                return
            # The index looks for the callers of the helpers of the files `HELPER_HINT` names
            # only (`volatile=<name>`): `if is_training: ... else: Variable(x, volatile=True)`
            # spells none, so a link of this file for other reasons says nothing of its callers.
            if self.ctx.links is None or not self.ctx.links.project_wide \
                    or not helper_hint(self.index.src.text.encode("utf-8", "surrogateescape")):
                where = "in this run" if self.ctx.links is not None else "in this file"
                planner.outcome(source, None, f"no fix: {param} is a parameter of {name} and no call {where} "
                                              f"passes {flagged}: its callers decide", [], weight=W_NONE)
                return
            planner.unwrap_only(source, f"no call in the project passes {flagged}", W_INFO)
            return
        regions = [f"line {n}" for n in sorted(set(report.covered))] + list(dict.fromkeys(report.elsewhere))
        where = f"; the calls passing {flagged} get their regions ({', '.join(regions[:4])})" if regions else ""
        if report.unresolved:
            planner.unwrap_only(source, f"unsafe fix: {name} is also used where volfix cannot follow it "
                                        f"({', '.join(dict.fromkeys(report.unresolved))}){where}", W_UNSAFE,
                                applicability=_unsafe())
            return
        if report.elsewhere:
            planner.unwrap_only(source, awaiting_note("calls", report.elsewhere), W_UNSAFE, applicability=_unsafe())
            return
        if report.covered:
            lines = sorted(set(report.covered))
            note = f"the calls passing {flagged} get the region (line{'s' if len(lines) > 1 else ''} " \
                   f"{', '.join(map(str, lines))})"
        elif report.already:
            note = f"every call passing {flagged} already runs under a grad-mode region"
        else:
            # The flag went on through a parameter whose callers were not found: nothing shows
            # where the value is computed with, so "no region needed" cannot be claimed.
            through = ", ".join(f"`{n}()`" for n in dict.fromkeys(report.through)) or name
            planner.outcome(source, None, f"no fix: {param} is passed on through {through}, whose calls volfix "
                                          "cannot find: their callers decide", [], weight=W_NONE)
            return
        planner.unwrap_only(source, note, W_INFO)


def _unsafe():
    return Applicability.UNSAFE
