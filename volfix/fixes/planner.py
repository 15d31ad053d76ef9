"""From volatile sources to fixes (SPEC §2): taint, follow, place, decide.

For every source the planner runs the taint engine in its scope, then:

- a value that reaches `.backward()` is data in a training step: only unwrapped;
- a raw value that leaves the scope is followed to where it is computed with: the callers of
  a helper that returns it (with the flag substituted by what each call passes), the methods
  of the class that read `self.attr`, a closure; those become sources of the same finding;
- the statements computing with the value get a region (`volfix.fixes.regions`); regions of
  several sources that touch are merged;
- the outcome (applicability, one short note, the planned edits) is recorded on the finding.

Findings sharing a region share a group and are fixed together.
"""
from __future__ import annotations

import ast
from dataclasses import dataclass, field
from typing import Dict, List, Optional, Set, Tuple

from ..flow import grad_mode
from .edits import TextEdit
from ..flow.calls import call_sites
from ..flow.decided import decided_flag
from ..flow.grad_mode import literal_truth
from ..flow.escapes import Follower
from ..flow.taint import TaintAnalysis, TaintResult
from ..model import Applicability
from ..syntax.index import COMPREHENSIONS, FUNCTIONS, SCOPES
from ..findings import W_INFO, W_NONE, W_UNSAFE, Flag, Outcome, Source
from .decisions import Decisions, flag_conflict
from .gates import absorb_gates, mentions_version
from .negation import negate
from .outcomes import Finalizer
from .partial import partly_volatile
from .regions import Placement, RegionPlacer, within

SAFE, UNSAFE = Applicability.SAFE, Applicability.UNSAFE
NOTE_MAY_REQUIRE_GRAD = "if the argument requires grad, gradients will now flow into it"
MAX_ROUNDS = 6



@dataclass
class Group:
    """Sources planned together in one scope (their regions touch)."""

    scope: ast.AST
    sources: List[Source]
    taint: Optional[TaintResult] = None
    placement: Optional[Placement] = None
    stmts: List[ast.stmt] = field(default_factory=list)
    gid: Optional[int] = None  # the fix group of its region, once decided
    plans: list = field(default_factory=list)  # its RegionPlans, one per run for a `with` form
    header: str = ""
    unit_rows: Optional[Tuple[int, int]] = None
    narrowed: Optional[str] = None  # why a flag's region kept inside its loop is unsafe

    @property
    def flag(self) -> Optional[Flag]:
        return self.sources[0].flag

    @property
    def deleted(self) -> Set[int]:
        """Ids of the statements the sources' fixes delete."""
        return {id(s.deleted) for s in self.sources if s.deleted is not None}


class Planner:
    def __init__(self, ctx):
        self.ctx = ctx
        self.index = ctx.index
        self.src = ctx.src
        doc = ctx.doc
        part_of = None
        if doc.parts and doc.parts[0].number is not None:
            part_of = lambda row: getattr(doc.part_of_row(row), "number", None)  # noqa: E731
        self.placer = RegionPlacer(ctx.index, style=ctx.no_grad_style, part_of=part_of)
        self.follower = Follower(ctx, self)
        self.decisions = Decisions(self)
        self.groups: List[Group] = []
        self.holdings: List[Tuple[int, int]] = []  # (inner region's group, outer region's group)
        # Findings whose own source sits in the old-torch branch of a version gate: today's torch
        # runs the other branch, so what their followed callers need changes nothing that runs.
        self.gated: Set[int] = set()
        self.round_sources: List[Source] = []  # the sources `plan_round` plans
        self._callers: Dict[int, Group] = {}  # `entered_without_grad`: scope id -> its volatile sources' group

    # ------------------------------------------------------------------ driver
    def plan(self) -> None:
        pending = list(self.ctx.sources)
        self.gated = {id(s.finding) for s in pending if not s.call_site and self.version_gated(s.node)}
        for _ in range(MAX_ROUNDS):
            if not pending:
                break
            pending = self.plan_round(pending)
        self.finalize()
        # The follower points back here: without that cycle, the file's tree and index are
        # freed as soon as the analysis lets go of them, not by a later GC pass (11 ms for
        # a 4,000-line file's 37,000 objects).
        self.follower = None

    def plan_round(self, sources: List[Source]) -> List[Source]:
        later: List[Source] = []
        self.round_sources = sources
        by_scope: Dict[int, List[Source]] = {}
        for source in sources:
            if source.flag is not None and self.follower.is_helper_flag(source):
                later.extend(self.follower.helper(source))
                continue
            if isinstance(source.scope, ast.Lambda) and self.lambda_region(source):
                continue
            if isinstance(source.scope, (ast.Lambda, ast.ClassDef)):
                # Nothing here can restore the 0.3 meaning for what computes with the value (the
                # lambda's own call of a model, its callers): unwrapping changes it.
                kind = "unsafe fix" if source.flag is None else "no fix"
                self.unwrap_only(source, f"{kind}: a region cannot be placed inside a lambda or class body, so "
                                         "what computes with the value records a graph", W_UNSAFE,
                                 fixable=source.flag is None, applicability=UNSAFE)
                continue
            if self.ctx.covered(source.node):
                # Nothing records in there, so whether the argument requires grad cannot matter.
                self.outcome(source, SAFE, "already inside a grad-disabled region", source.own_edits, weight=W_INFO)
                continue
            if source.flag is not None and reads_grad_mode(self.index, source.flag.node):
                self.outcome(source, SAFE, "the flag reads `torch.is_grad_enabled()`, which PyTorch 0.4 added when "
                                           "it stopped reading `volatile=`: the flag never did anything, so only "
                                           "unwrapped", source.own_edits, weight=W_INFO)
                continue
            by_scope.setdefault(id(source.scope), []).append(source)
        for scoped in by_scope.values():
            groups = [self.analyse(Group(s.scope, [s])) for s in scoped]
            groups = self.merge(groups)
            for group in groups:
                earlier = self.enclosing(group)
                if earlier is not None:
                    # A source found in a later round (the caller of a helper that returns
                    # the value) whose region an earlier one already holds: no second region
                    # inside it. Fixed together with that region.
                    row = earlier.placement.runs[0].block[earlier.placement.runs[0].first].lineno
                    for s in group.sources:
                        self.outcome(s, SAFE if s.plain or not s.own_edits else UNSAFE,
                                     f"inside the region of line {row}", s.own_edits, weight=W_INFO,
                                     group=earlier.gid)
                    continue
                later.extend(self.decide(group, groups))
                if group.gid is not None:
                    self.note_holdings(group)
                    self.groups.append(group)
        return later

    def lambda_region(self, source: Source) -> bool:
        """`lambda t: model(Variable(t, volatile=True))`: a lambda's body is one expression, so
        its region is the whole lambda, decorated as a function would be:
        `torch.no_grad()(lambda t: model(t))`. Its result carries no graph, as in 0.3; what a
        caller computes from it is not followed (unsafe). Not for a flag (decided when the
        lambda is called, not when it is made), a lambda that trains, or one already run
        under a grad-mode region of its own, nor for a parameter's default (`unsafe_because`)."""
        fn = source.scope
        if source.flag is not None or not source.own_edits or source.unsafe_because or any(
                isinstance(n, (ast.Yield, ast.YieldFrom, ast.Await, ast.Lambda)) and n is not fn
                or isinstance(n, ast.Call) and self.placer.trainer.of_call(n) is not None
                for n in ast.walk(fn)):
            return False
        parent = self.index.parents.get(fn)
        if isinstance(parent, ast.Call) and fn in parent.args and grad_mode.disables_grad(self.index, parent.func):
            return False
        no_grad, imports = self.ctx.spell("torch.no_grad", source.node)
        start, end = self.src.start(fn), self.src.end(fn)
        key = f"lambda-region:{start}"
        edits = list(source.own_edits) + [TextEdit(start, start, f"{no_grad}()(", key=key),
                                          TextEdit(end, end, ")", key=key + ":end")]
        self.outcome(source, UNSAFE, "unsafe fix: the lambda runs under `no_grad()`; what its callers compute "
                                     "from its result is not followed, where 0.3 kept that volatile too",
                     edits, weight=W_UNSAFE, imports=imports)
        return True

    def note_holdings(self, group: Group) -> None:
        """Regions of earlier rounds that this later, larger one holds (the direct `var(x)`
        calls in a loop, then the `rvar(x)` calls around that loop): `finalize` drops their
        own header when this region is applied whenever they are."""
        if group.flag is not None or not group.placement:
            return
        for earlier in self.groups:
            if earlier.scope is group.scope and earlier.flag is None and earlier.placement \
                    and earlier.placement.form != "decorator" and all(
                        any(r.contains(inner) for r in group.placement.runs) for inner in earlier.placement.runs):
                self.holdings.append((earlier.gid, group.gid))

    def enclosing(self, group: Group) -> Optional[Group]:
        """A region of an earlier round, in the same scope, holding every run of `group`'s."""
        if group.placement is None or not group.placement.runs or group.flag is not None:
            return None
        for earlier in self.groups:
            if earlier.scope is not group.scope or earlier.flag is not None or not earlier.placement:
                continue
            if earlier.placement.form == "decorator" or all(
                    any(outer.contains(inner) for outer in earlier.placement.runs)
                    for inner in group.placement.runs):
                return earlier
        return None

    # ------------------------------------------------------------------ analysis
    def analyse(self, group: Group) -> Group:
        calls = [s.node for s in group.sources if s.seed is None and not isinstance(s.node, ast.stmt)]
        seeds: Dict[int, Dict[str, bool]] = {}
        entry: Dict[str, bool] = {}
        for s in group.sources:
            if s.seed is not None:
                if s.stmt is s.node and isinstance(s.node, ast.stmt) and s.node is not s.scope or s.call_site:
                    seeds.setdefault(id(s.stmt), {})[s.seed] = True
                else:
                    entry[s.seed] = True
        index = self.index
        group.taint = TaintAnalysis(group.scope, index, calls, seeds=seeds, entry=entry,
                                    grad_disabled=lambda st: grad_mode.covered(index, st),
                                    plain=self.ctx.is_plain,
                                    computing=[s.node for s in group.sources if s.computing],
                                    result_free=[s.node for s in group.sources if s.result_free],
                                    trains=lambda call: self.placer.trainer.of_call(call) is not None,
                                    wrappers=self.ctx.wrappers(),
                                    items={id(s.node): s.items for s in group.sources if s.items is not None}).run()
        deleted = group.deleted
        stmts = [u for u in group.taint.uses_outside() if id(u) not in deleted]
        group.stmts = stmts
        if stmts:
            anchors = stmts + [s.stmt for s in group.sources if id(s.stmt) not in deleted
                               and s.stmt is not s.scope and self.same_scope_stmt(s)]
            keep = {id(s) for s in stmts}
            group.placement = self.placer.place(group.scope, anchors, group.taint, deleted=deleted,
                                                flag=group.flag is not None, keep=keep)
            group.narrowed = None
            if group.placement.runs and not group.placement.problem and flag_bound_inside(group):
                self.narrow_to_flag_loop(group, anchors, keep)
        return group

    def narrow_to_flag_loop(self, group: Group, anchors: List[ast.stmt], keep: Set[int]) -> None:
        """A flag's region that grew around the loop binding its flag (`for mode in ['Train',
        'Dev']:` with `train_model = mode == 'Train'`, because `stats` the calls fill is read
        after the loop) goes inside that loop, one region per pass, when that placement holds:
        unsafe, since what the passes leave for after the loop no longer keeps a volatile pass's
        volatility there (0.3 did)."""
        read = _flag_names(group)
        loops = [node for run in group.placement.runs for stmt in run.statements for node in ast.walk(stmt)
                 if isinstance(node, (ast.For, ast.AsyncFor))
                 and any(isinstance(t, ast.Name) and t.id in read for t in ast.walk(node.target))]
        if len(loops) != 1:
            return
        loop = loops[0]
        inside = [a for a in anchors if a is not loop and within(a, loop)]
        after = sorted((a for a in anchors if id(a) in keep and not within(a, loop)), key=lambda a: a.lineno)
        if not inside or not after:
            return
        wide = group.placement
        group.placement = self.placer.place(group.scope, inside, group.taint, deleted=group.deleted, flag=True,
                                            keep={id(a) for a in inside if id(a) in keep})
        if not group.placement.runs or group.placement.problem or flag_bound_inside(group):
            group.placement = wide
            return
        over = f"`{loop.target.id}`" if isinstance(loop.target, ast.Name) else "its items"
        group.narrowed = (f"the region goes inside the loop over {over}, whose passes set the flag; what they "
                          f"compute is used after the loop (line {after[0].lineno}), outside any region: 0.3 kept "
                          f"what a volatile pass computed volatile there")

    def same_scope_stmt(self, source: Source) -> bool:
        return isinstance(source.stmt, ast.stmt) and self.index.function_of(source.stmt) is source.scope \
            or isinstance(source.scope, ast.Module)

    def merge(self, groups: List[Group]) -> List[Group]:
        """Merge groups whose regions touch until none do: each time the first touching pair
        in list order (the earlier group, then its first partner after it), the merged group
        going last. Done without rescanning: the groups before the scan position are known to
        touch none after them, so after a merge only the new group is tried against them (a
        long script's hundreds of groups made the plain rescan cubic)."""
        memo: Dict[Tuple[int, int], bool] = {}
        held: List[Group] = []  # keeps the ids of the memo's groups from being reused

        def touching(a: Group, b: Group) -> bool:
            key = (id(a), id(b))
            found = memo.get(key)
            if found is None:
                same = (a.flag is None) == (b.flag is None) and (a.flag is None or a.flag.text == b.flag.text)
                found = memo[key] = same and self.touch(a, b)
                held.extend((a, b))
            return found

        clean = 0  # groups[:clean] touch no group after them, but perhaps the last one when `fresh`
        fresh = False
        while True:
            pair = None
            if fresh:
                last = len(groups) - 1
                for k in range(min(clean, last)):
                    if touching(groups[k], groups[last]):
                        pair = (k, last)
                        break
            if pair is None:
                for k in range(clean, len(groups)):
                    a = groups[k]
                    for j in range(k + 1, len(groups)):
                        if touching(a, groups[j]):
                            pair = (k, j)
                            break
                    if pair is not None:
                        break
                    clean = k + 1
            if pair is None:
                return groups
            k, j = pair
            a, b = groups[k], groups[j]
            clean -= (k < clean) + (j < clean)
            merged = self.analyse(Group(a.scope, a.sources + b.sources))
            groups = [g for g in groups if g is not a and g is not b] + [merged]
            fresh = True

    def touch(self, a: Group, b: Group) -> bool:
        if not (a.placement and b.placement and a.placement.runs and b.placement.runs):
            return False
        return any(x.touches(y) or self.placer.harmless_gap(x, y, a.scope)
                   for x in a.placement.runs for y in b.placement.runs)

    # ------------------------------------------------------------------ decisions
    def decide(self, group: Group, all_groups: List[Group]) -> List[Source]:
        assert group.taint is not None
        sources = group.sources
        later = self.follower.follow_escapes(group)
        forced = None
        training = self.decisions.training(group)
        if training is not None and training.notes is not None:
            for s, note in zip(sources, training.notes):
                self.unwrap_only(s, note, W_UNSAFE, applicability=UNSAFE)
            return later
        if training is not None:
            group.placement, forced = training.placement, training.forced
        placement = group.placement
        if placement is None or not placement.runs:
            note, weight, applicability = self.follower.no_region_note(group)
            # "no fix: ...": the value needs a region nobody can place, so unwrapping alone
            # would let what computes with it record again.
            for s in sources:
                if weight >= W_NONE and (self.version_gated(s.node) or id(s.finding) in self.gated):
                    self.unwrap_only(s, "the old-torch branch of a version gate (today's torch runs the other "
                                        "branch): only unwrapped", W_INFO)
                    continue
                self.unwrap_only(s, note, weight, applicability=applicability, fixable=weight < W_NONE)
            return later
        problem = placement.problem or flag_bound_inside(group)
        if problem:
            for s in sources:
                self.outcome(s, None, f"no fix: {problem}", [], weight=W_NONE)
            return later
        partial = partly_volatile(self.index, group)
        if partial is not None and partial[1]:
            for s in sources:
                self.outcome(s, None, f"no fix: {partial[0]}", [], weight=W_NONE)
            return later
        if group.flag is not None:
            conflict = flag_conflict(group, all_groups)
            if conflict is not None:
                for s in sources:
                    self.outcome(s, None, f"no fix: the region overlaps the grad-mode region of line {conflict}",
                                 [], weight=W_NONE)
                return later
        header, imports = self.header(group, all_groups)
        unit_rows = self.unit_rows(group)
        plans = self.placer.plans(placement, group.scope, header, unit_rows)
        applicability, note, weight = self.decisions.safety(group, partial)
        if forced is not None and applicability is SAFE:
            applicability, note, weight = UNSAFE, forced, W_UNSAFE
        if group.narrowed is not None and applicability is SAFE:
            applicability, note, weight = UNSAFE, f"unsafe fix: {group.narrowed}", W_UNSAFE
        if placement.decorator_reason and applicability is SAFE and note is None:
            note, weight = f"decorator: {placement.decorator_reason}", W_INFO
        edits = [e for s in sources for e in s.own_edits]
        # A grad-disabling `with` (or version gate) inside a `no_grad` region changes nothing; inside
        # `set_grad_enabled(flag)` it still disables grad when the flag turns recording on.
        absorbed = absorb_gates(self.ctx, placement) if group.flag is None else []
        edits = self.ctx.expr.keep_blocks_alive(sources, edits) + absorbed
        gid = group.gid = self.ctx.next_group()
        group.plans, group.header, group.unit_rows = list(plans), header, unit_rows
        for s in sources:
            s.finding.outcomes.append(Outcome(applicability if not s.unsafe_because else UNSAFE,
                                              note if not s.unsafe_because else f"unsafe fix: {s.unsafe_because}",
                                              list(edits), list(plans), imports, gid,
                                              weight if not s.unsafe_because else W_UNSAFE))
        return later

    def version_gated(self, node: ast.AST) -> bool:
        """Inside the old-torch branch of a version gate (`if hasattr(torch, "no_grad"): ...
        else: Variable(x, volatile=True)`): the code already runs its own modern branch today,
        so unwrapping changes nothing that runs."""
        cur = self.index.parents.get(node)
        while cur is not None and not isinstance(cur, FUNCTIONS + (ast.Module,)):
            if isinstance(cur, (ast.If, ast.IfExp)) and mentions_version(self.index, cur.test):
                return True
            cur = self.index.parents.get(cur)
        return False

    def unit_rows(self, group: Group):
        part = self.ctx.doc.part_of_row(group.sources[0].stmt.lineno)
        if part is None or part.number is None:
            return None
        return part.first_row, part.last_row

    def header(self, group: Group, all_groups: List[Group]) -> Tuple[str, frozenset]:
        ctx = self.ctx
        node = group.sources[0].node
        if group.flag is None or self.decided_true(group):
            text, imports = ctx.spell("torch.no_grad", node)
            return f"{text}()", imports
        flag = group.flag
        # a local bound once to a false literal (`volatile = False`, then `volatile=volatile`; a
        # true one makes the source always volatile, `Follower.resolve_local_flag`)
        literal = flag.text == self.segment(flag.node) and literal_truth(flag.node) is not None
        nested = any(o.flag is None and o is not group and o.placement and o.placement.runs
                     and any(r.contains(mine) for r in o.placement.runs for mine in group.placement.runs)
                     for o in all_groups)
        if nested or self.entered_without_grad(group):
            no_grad, i1 = ctx.spell("torch.no_grad", node)
            null, i2 = ctx.spell("contextlib.nullcontext", node)
            return f"{no_grad}() if {flag.text} else {null}()", i1 | i2
        enabled, imports = ctx.spell("torch.set_grad_enabled", node)
        return f"{enabled}({'True' if literal else negate(flag, self.segment, self.index)})", imports

    def decided_true(self, group: Group) -> bool:
        """Every run of a flag's region lies where an enclosing `if` has tested the flag true
        (the `else:` of `if self.training:` for `volatile=not self.training`,
        `flow.decided`): `set_grad_enabled(self.training)` there is `torch.no_grad()`."""
        flag = group.flag
        if flag is None or flag.negated or flag.text != self.segment(flag.node) \
                or self.index.function_of(flag.node) is not group.scope or not group.placement:
            return False
        runs = group.placement.runs
        return bool(runs) and all((decided_flag(self.index, flag.node, run.block[run.first]) or (False,))[0]
                                  for run in runs)

    def entered_without_grad(self, group: Group) -> bool:
        """The function holding a flag's region is called inside the `no_grad` region of a
        `volatile=True` source of this file, with that source's value as an argument (`out =
        net(x)` where `x` was `Variable(img, volatile=True)`; `net(...)` runs `forward`). In 0.3
        what the function computed from that value stayed volatile whatever its own flag said;
        `set_grad_enabled(True)` there would record it again, so the flag's region keeps the
        caller's mode: `no_grad() if flag else nullcontext()`."""
        scope = group.scope
        if not isinstance(scope, FUNCTIONS):
            return False
        for site in call_sites(self.index, scope)[0] + self.follower.instance_calls(scope):
            caller = self.index.function_of(site)
            volatile = [s for s in self.round_sources if s.flag is None and s.seed is None and s.scope is caller]
            if not volatile:
                continue
            found = self._callers.get(id(caller))
            if found is None:
                found = self._callers[id(caller)] = self.analyse(Group(caller, volatile))
            names = {k for k in found.taint.tainted_keys if "." not in k} if found.taint else set()
            passed = [n for a in list(site.args) + [k.value for k in site.keywords] for n in ast.walk(a)]
            if found.placement and any(isinstance(n, ast.Name) and n.id in names for n in passed) and \
                    any(r.holds(site) for r in found.placement.runs):
                return True
        return False

    def segment(self, node: ast.AST) -> str:
        return self.src.segment(node)

    # ------------------------------------------------------------------ outcomes
    def unwrap_only(self, source: Source, note: Optional[str], weight: int, *, fixable: bool = True,
                    applicability: Optional[Applicability] = None) -> None:
        if not fixable or not source.own_edits and not source.call_site:
            self.outcome(source, None if not fixable else SAFE, note, [], weight=weight)
            return
        if source.call_site and not source.own_edits and applicability is UNSAFE \
                and self.ctx.helper_call(source.node) is not None:
            # a decision to leave the value volatile-free (0.3 trained there, or raised), not a
            # caller's region (`the calls passing a true volatile get the region`)
            self.unflag_call(source, note, weight)
            return
        if applicability is None:
            applicability = SAFE
        if not source.plain:
            applicability = UNSAFE
            if weight < W_UNSAFE:
                note, weight = f"unsafe fix: {NOTE_MAY_REQUIRE_GRAD}", W_UNSAFE
        if source.unsafe_because:
            applicability, note, weight = UNSAFE, f"unsafe fix: {source.unsafe_because}", W_UNSAFE
        # each is fixed on its own: a block all their unwraps empty keeps a `pass`
        deleted = {id(s.deleted) for s in self.ctx.sources if s.deleted is not None}
        self.outcome(source, applicability, note,
                     self.ctx.expr.keep_blocks_alive([source], source.own_edits, deleted), weight=weight)

    def unflag_call(self, source: Source, note: Optional[str], weight: int) -> None:
        """Unwrap a call of another file's helper (`to_var(images, volatile=True)`): it stops
        passing the flag, by dropping the argument when the helper's default is false (`def
        to_var(x, volatile=False)`), else by passing False. Then no call asks the helper for a
        volatile value, and its own file unwraps it (VF103) and drops the parameter (VF105);
        left as it was, the two files' findings each wait for the other. Unsafe: the helper
        may read its flag for more than `Variable(volatile=)`."""
        hc = self.ctx.helper_call(source.node)
        call, arg, param = source.node, hc.arg, hc.sig.param
        why = None
        if param is None or arg is None:
            why = f"{hc.name} ({hc.where}) makes the value volatile itself"
        elif hc.sig.negated:
            why = f"{hc.name} ({hc.where}) reads `{param}` negated, and may read it for more"
        if why is not None:
            if note and note.startswith("unsafe fix: "):
                note = "no fix: " + note[len("unsafe fix: "):]
            self.outcome(source, None, f"{note or 'no fix'}; {why}: fix it in its file",
                         [], weight=max(weight, W_NONE))
            return
        keyword = next((k for k in call.keywords if k.value is arg), None)
        last = keyword is None and call.args and call.args[-1] is arg and not call.keywords \
            and not any(isinstance(a, ast.Starred) for a in call.args)
        if dict(hc.sig.defaults).get(param) in ("false", "none") and (keyword is not None or last):
            edits = self.ctx.expr.drop_argument(call, keyword or arg)
        else:
            edits = [TextEdit(self.src.start(arg), self.src.end(arg), "False")]
        if not (note and note.startswith("unsafe fix: ")):
            note, weight = (f"unsafe fix: the call stops passing `{param}`; if {hc.name} ({hc.where}) reads "
                            f"it for more than `Variable(volatile=)`, what it does changes"), W_UNSAFE
        self.outcome(source, UNSAFE, note, edits, weight=weight)

    def outcome(self, source: Source, applicability: Optional[Applicability], note: Optional[str],
                edits: list, *, weight: int = W_INFO, regions=(), imports=frozenset(),
                group: Optional[int] = None) -> None:
        source.finding.outcomes.append(Outcome(applicability, note, list(edits), list(regions), imports,
                                               group, weight))

    def finalize(self) -> None:
        """Merge what every source said about each finding into its fix (`fixes.outcomes`)."""
        Finalizer(self.ctx.findings, self.groups, self.holdings, self.placer).run()


def reads_grad_mode(index, flag: ast.AST) -> bool:
    """A flag computed from `torch.is_grad_enabled()` (`volatile = not torch.is_grad_enabled()`):
    code written for 0.4 or later, where `volatile=` was already ignored, and where the region
    it asks for (`set_grad_enabled(torch.is_grad_enabled())`) would change nothing."""
    return any(isinstance(n, ast.Call) and index.qual(n.func) == "torch.is_grad_enabled" for n in ast.walk(flag))


def flag_bound_inside(group: Group) -> Optional[str]:
    """A flag's region whose `set_grad_enabled(...)` would read a name the region itself binds
    (`mode == 'Train'` for a caller's `train_model = mode == 'Train'`, around the loop `for mode
    in ...`): at the region's start the name is unbound, or still holds the last iteration's."""
    if group.flag is None or group.placement is None:
        return None
    flag, read = group.flag, _flag_names(group)
    for run in group.placement.runs:
        for stmt in run.statements:
            for node in _binding_nodes(stmt):
                if isinstance(node, ast.Name) and node.id in read and isinstance(node.ctx, (ast.Store, ast.Del)):
                    return (f"the region's flag `{flag.text.strip()}` reads `{node.id}`, which the region itself binds "
                            f"(line {node.lineno}): where the region starts it does not hold that value yet")
    return None


def _flag_names(group: Group) -> Set[str]:
    """The names the flag's expression reads (none when it does not parse)."""
    try:
        return {n.id for n in ast.walk(ast.parse(group.flag.text.strip(), mode="eval")) if isinstance(n, ast.Name)}
    except SyntaxError:
        return set()


def _binding_nodes(stmt: ast.AST):
    """The nodes of `stmt`, not those of the functions, lambdas, classes and comprehensions in it
    (their names are their own)."""
    todo = [stmt]
    while todo:
        node = todo.pop()
        yield node
        for child in ast.iter_child_nodes(node):
            if not isinstance(child, SCOPES + COMPREHENSIONS):
                todo.append(child)
