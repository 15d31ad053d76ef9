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
from ..flow.booleans import known_bool
from ..flow.calls import call_sites
from ..flow.escapes import Follower
from ..flow.rewraps import hidden_rewraps
from ..flow.taint import TaintAnalysis, TaintResult
from ..model import Applicability
from ..syntax.index import FUNCTIONS
from ..findings import W_INFO, W_NONE, W_UNSAFE, Flag, Outcome, Source
from .gates import absorb_gates, mentions_version
from .handed import handed_on
from .outcomes import Finalizer
from .partial import partly_volatile
from .regions import Placement, RegionPlacer, Run

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
                        any(run_contains(r, inner) for r in group.placement.runs) for inner in earlier.placement.runs):
                self.holdings.append((earlier.gid, group.gid))

    def enclosing(self, group: Group) -> Optional[Group]:
        """A region of an earlier round, in the same scope, holding every run of `group`'s."""
        if group.placement is None or not group.placement.runs or group.flag is not None:
            return None
        for earlier in self.groups:
            if earlier.scope is not group.scope or earlier.flag is not None or not earlier.placement:
                continue
            if earlier.placement.form == "decorator" or all(
                    any(run_contains(outer, inner) for outer in earlier.placement.runs)
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
        return group

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

    def trains_without_source(self, group: Group) -> Optional[Tuple[ast.stmt, str]]:
        """A training step the taint reaches (`taint.training`) that is outside an `if` holding
        one of the group's sources: on the paths where that `if` does not run its branch, 0.3
        trained there. Not the `if` whose test is the flag (`if training: ... else: x =
        Variable(x, volatile=True)`): its other path is the flag's other value."""
        kinds = (ast.If, ast.Try, ast.While)
        for stmt, what in group.taint.training:  # type: ignore[union-attr]
            around_step = {id(node) for node in self.index.enclosing(stmt, kinds)}
            for source in group.sources:
                branch = source.flag.branch if source.flag is not None else None
                if any(id(node) not in around_step and not (isinstance(node, ast.If) and node.test is branch)
                       for node in self.index.enclosing(source.stmt, kinds)):
                    return stmt, what
        return None

    def touch(self, a: Group, b: Group) -> bool:
        if not (a.placement and b.placement and a.placement.runs and b.placement.runs):
            return False
        return any(runs_touch(x, y) or self.placer.harmless_gap(x, y, a.scope)
                   for x in a.placement.runs for y in b.placement.runs)

    # ------------------------------------------------------------------ decisions
    def decide(self, group: Group, all_groups: List[Group]) -> List[Source]:
        taint = group.taint
        assert taint is not None
        sources = group.sources
        later = self.follower.follow_escapes(group)
        forced = None
        if group.flag is None and taint.training:
            stmt, what = taint.training[0]
            early = self.before_meeting(group)
            if early is None:
                # 0.3 raised there (SEMANTICS.md fact 5): the legacy program never trained on
                # this value. Unwrapped, it does: a change a reviewer must accept (SPEC §2.10).
                for s in sources:
                    self.unwrap_only(s, f"unsafe fix: the value reaches `{what}` (line {stmt.lineno}), where 0.3 "
                                        "raised; unwrapped, the step trains on it", W_UNSAFE,
                                     applicability=UNSAFE)
                return later
            covered = [s for run in early.runs for s in run.statements]
            rebuilt = hidden_rewraps(self.index, covered, certain=True)
            if rebuilt:
                # a module of the file rebuilds the value from `.data` on the way (0.3 trained on
                # what it returns): a region around its call would stop that training
                call = self.ctx.src.segment(rebuilt[0].func)
                for s in sources:
                    self.unwrap_only(s, f"unsafe fix: the value reaches `{what}` (line {stmt.lineno}) through "
                                        f"`{call}()` (line {rebuilt[0].lineno}), whose `forward` rebuilds its "
                                        "result from `.data`: 0.3 trained on that result and ran what comes "
                                        "before the rebuild without a graph; unwrapped, that part records one "
                                        "(no region can cover it from here)", W_UNSAFE, applicability=UNSAFE)
                return later
            # 0.3 raised at that backward (fact 5): what the author meant is the computation
            # before the value meets the trained one, without a graph (a target network's pass)
            group.placement = early
            forced = (f"unsafe fix: 0.3 raised at `{what}` (line {stmt.lineno}) on this value; the region "
                      "keeps its graph out of training") + self._unless_rewrapped(covered)
        if group.flag is not None and taint.training:
            skipped = self.trains_without_source(group)
            if skipped is not None:
                # under the flag's region the step raises whenever the flag is true; in 0.3 it
                # raised only when the value it trains on came from the source, which runs only
                # under an `if` the step is not in (seqmod's scheduled sampling, then `backward()`)
                stmt, what = skipped
                for s in sources:
                    self.unwrap_only(s, f"unsafe fix: the value reaches `{what}` (line {stmt.lineno}) only when "
                                        f"line {s.stmt.lineno} runs; a region under the flag would stop that step "
                                        "from training also when it does not", W_UNSAFE, applicability=UNSAFE)
                return later
        trained = self.follower.caller_trains(group, backward_only=True) if group.flag is None and forced is None \
            else None
        if trained is not None:
            # the result was volatile in 0.3, so the caller's step raised there (fact 5); a
            # region would make it raise today too, where unwrapped it trains
            for s in sources:
                self.unwrap_only(s, f"{trained}, where 0.3 raised; unwrapped, the step trains on it", W_UNSAFE,
                                 applicability=UNSAFE)
            return later
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
        if placement.problem:
            for s in sources:
                self.outcome(s, None, f"no fix: {placement.problem}", [], weight=W_NONE)
            return later
        partial = partly_volatile(self.index, group)
        if partial is not None and partial[1]:
            for s in sources:
                self.outcome(s, None, f"no fix: {partial[0]}", [], weight=W_NONE)
            return later
        if group.flag is not None:
            conflict = self.flag_conflict(group, all_groups)
            if conflict is not None:
                for s in sources:
                    self.outcome(s, None, f"no fix: the region overlaps the grad-mode region of line {conflict}",
                                 [], weight=W_NONE)
                return later
        header, imports = self.header(group, all_groups)
        unit_rows = self.unit_rows(group)
        plans = self.placer.plans(placement, group.scope, header, unit_rows)
        applicability, note, weight = self.safety(group, partial)
        if forced is not None and applicability is SAFE:
            applicability, note, weight = UNSAFE, forced, W_UNSAFE
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

    def before_meeting(self, group: Group) -> Optional[Placement]:
        """The region for the uses of a value that reaches `backward()`, up to the first
        statement where it meets a value that may need grad: a DQN's volatile next state runs
        the target networks, then meets the critic's output in the loss. None if nothing
        records before that meeting, or the region would cover a training step."""
        taint = group.taint
        meetings = [s.lineno for s in taint.uses if id(s) in taint.meeting]
        if not meetings:
            return None
        first = min(meetings)
        early = [u for u in group.stmts if u.end_lineno < first and id(u) in taint.recording]
        if not early:
            return None
        placement = self.placer.place(group.scope, early, taint, deleted=group.deleted, flag=False,
                                      keep={id(s) for s in early})
        if placement.problem or not placement.runs or self.placer.training_near(placement.runs) is not None:
            return None
        return placement

    def _unless_rewrapped(self, covered: List[ast.stmt]) -> str:
        """The region's calls that may rebuild the value from `.data` (`flow.rewraps`): then 0.3
        trained through them, and the region stops their layers from training."""
        calls = hidden_rewraps(self.index, covered)
        if not calls:
            return ""
        call = calls[0]
        return (f", unless `{self.ctx.src.segment(call.func)}()` (line {call.lineno}) rebuilt its result from "
                f"`.data` (`Variable(x.data)`), which is how 0.3 would have run the step: then layers of it "
                f"trained in 0.3 and no longer do")

    def unit_rows(self, group: Group):
        part = self.ctx.doc.part_of_row(group.sources[0].stmt.lineno)
        if part is None or part.number is None:
            return None
        return part.first_row, part.last_row

    def safety(self, group: Group, partial: Optional[Tuple[str, bool]]) -> Tuple[Applicability, Optional[str], int]:
        """The region's applicability and the one reason a reviewer should know."""
        placement = group.placement
        if placement.covers_used is not None:
            name, bound, used = placement.covers_used
            if used == bound:  # `regions.stored_away`
                return UNSAFE, (f"unsafe fix: the region also covers `{name}` (line {bound}), a value "
                                f"kept where code after the region may read it"), W_UNSAFE
            return UNSAFE, (f"unsafe fix: the region also covers `{name}` (line {bound}), "
                            f"which is used after it (line {used})"), W_UNSAFE
        escape = self.follower.open_escape(group)
        if escape is not None:
            return UNSAFE, escape, W_UNSAFE
        trains = self.follower.caller_trains(group) or self.follower.lazy_return(group)
        if trains is not None:
            return UNSAFE, trains, W_UNSAFE
        if partial is not None:  # `partly_volatile`, asked once by `decide`
            return UNSAFE, "unsafe fix: " + partial[0], W_UNSAFE
        writes = [(stmt, key) for stmt, key in group.taint.buffer_writes  # type: ignore[union-attr]
                  if any(run_contains_stmt(run, stmt) for run in placement.runs)] if placement.runs else []
        if writes:
            stmt, key = writes[0]
            return UNSAFE, (f"unsafe fix: the region also stops what is written into `{key}` (line "
                            f"{stmt.lineno}) from recording; 0.3 recorded it and dropped the graph at the "
                            "write, so only the graphs of those calls differ"), W_UNSAFE
        handed = handed_on(self.index, group)
        if handed is not None:
            return UNSAFE, handed, W_UNSAFE
        if group.flag is not None and isinstance(group.scope, FUNCTIONS):
            under = self.follower.called_under_no_grad(group.scope)
            if under is not None:
                return UNSAFE, (f"unsafe fix: `{group.scope.name}()` is called under `no_grad` (line {under}), "
                                "where a false flag would turn recording back on"), W_UNSAFE
        return SAFE, None, 0

    def flag_conflict(self, group: Group, all_groups: List[Group]) -> Optional[int]:
        for other in all_groups:
            if other is group or not other.placement or not other.placement.runs:
                continue
            if any(run_contains(r, o) for r in group.placement.runs for o in other.placement.runs):
                if other.flag is None or all_groups.index(other) < all_groups.index(group):
                    return other.sources[0].stmt.lineno
        return None

    def header(self, group: Group, all_groups: List[Group]) -> Tuple[str, frozenset]:
        ctx = self.ctx
        node = group.sources[0].node
        if group.flag is None:
            text, imports = ctx.spell("torch.no_grad", node)
            return f"{text}()", imports
        flag = group.flag
        nested = any(o.flag is None and o is not group and o.placement and o.placement.runs
                     and any(run_contains(r, mine) for r in o.placement.runs for mine in group.placement.runs)
                     for o in all_groups)
        if nested or self.entered_without_grad(group):
            no_grad, i1 = ctx.spell("torch.no_grad", node)
            null, i2 = ctx.spell("contextlib.nullcontext", node)
            return f"{no_grad}() if {flag.text} else {null}()", i1 | i2
        enabled, imports = ctx.spell("torch.set_grad_enabled", node)
        return f"{enabled}({negate(flag, self.segment, self.index)})", imports

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

    def outcome(self, source: Source, applicability: Optional[Applicability], note: Optional[str],
                edits: list, *, weight: int = W_INFO, regions=(), imports=frozenset(),
                group: Optional[int] = None) -> None:
        source.finding.outcomes.append(Outcome(applicability, note, list(edits), list(regions), imports,
                                               group, weight))

    def finalize(self) -> None:
        """Merge what every source said about each finding into its fix (`fixes.outcomes`)."""
        Finalizer(self.ctx.findings, self.groups, self.holdings, self.placer).run()


# ---------------------------------------------------------------------- helpers


def runs_touch(a: Run, b: Run) -> bool:
    """Same block and overlapping or adjacent, or one nested in the other."""
    if a.block is b.block:
        return a.first <= b.last + 1 and b.first <= a.last + 1
    return run_contains(a, b) or run_contains(b, a)


def run_contains_stmt(run: Run, stmt: ast.stmt) -> bool:
    """Is `stmt` one of the run's statements or inside one of them? The run's statements are
    consecutive: a statement of another block lies in one of them exactly when it lies between
    the first one's start and the last one's end (only blanks, comments and `;` separate them)."""
    start, end = run.block[run.first], run.block[run.last]
    return (start.lineno, start.col_offset) <= (stmt.lineno, stmt.col_offset) and \
        (stmt.end_lineno, stmt.end_col_offset) <= (end.end_lineno, end.end_col_offset)  # type: ignore[attr-defined]


def run_contains(outer: Run, inner: Run) -> bool:
    """Is `inner`'s block nested inside one of `outer`'s statements?"""
    if outer.block is inner.block:
        return outer.first <= inner.first and inner.last <= outer.last
    return run_contains_stmt(outer, inner.block[inner.first])


def _within(node: ast.AST, outer: ast.AST) -> bool:
    return (outer.lineno, outer.col_offset) <= (node.lineno, node.col_offset) and \
        (node.end_lineno, node.end_col_offset) <= (outer.end_lineno, outer.end_col_offset)  # type: ignore[attr-defined]


_NEGATED = {ast.Eq: "!=", ast.NotEq: "==", ast.In: "not in", ast.NotIn: "in", ast.Is: "is not",
            ast.IsNot: "is", ast.Lt: ">=", ast.GtE: "<", ast.Gt: "<=", ast.LtE: ">"}


def negate(flag: Flag, segment, index=None) -> str:
    """`not <flag>`, simplified: `not not x` -> `x`, `not (a == b)` -> `a != b`, `not (not a and
    not b)` -> `a or b`. A flag that is already a negation of a parameter at a call site
    (`Flag.negated`) is spelled as given. `set_grad_enabled` takes a bool and nothing else, so
    a simplified flag that is not certainly one (`known_bool`) is spelled `bool(x)`."""
    node = flag.node
    if flag.negated:
        return flag.text if known_bool(index, node) else f"bool({flag.text})"
    if flag.text != segment(node):  # substituted at a call site: spelled as text
        return f"not ({flag.text})" if " " in flag.text.strip() else f"not {flag.text}"
    if isinstance(node, ast.UnaryOp) and isinstance(node.op, ast.Not):
        inner = node.operand
        if isinstance(inner, ast.UnaryOp) and isinstance(inner.op, ast.Not):
            return f"not {segment(inner.operand)}"
        if not known_bool(index, inner):
            return f"bool({segment(inner)})"
    simplified = _negated_operand(node, segment)  # `not x` -> `x`, `a == b` -> `a != b`
    if simplified is not None:
        return simplified
    if isinstance(node, ast.BoolOp):
        parts = [_negated_operand(v, segment) for v in node.values]
        if all(p is not None for p in parts):
            joined = (" or " if isinstance(node.op, ast.And) else " and ").join(parts)  # type: ignore[arg-type]
            plain = all(isinstance(v, ast.Compare) or known_bool(index, v.operand) for v in node.values)  # type: ignore[attr-defined]
            return joined if plain else f"bool({joined})"
    if isinstance(node, (ast.BoolOp, ast.IfExp, ast.Lambda, ast.NamedExpr, ast.Compare)):
        return f"not ({flag.text})"
    return f"not {flag.text}"


def _negated_operand(node: ast.AST, segment) -> Optional[str]:
    """`not x` -> `x`, `a is None` -> `a is not None` (a flag's negation, and each operand of
    De Morgan's rewrite); None for anything else."""
    if isinstance(node, ast.UnaryOp) and isinstance(node.op, ast.Not):
        inner = node.operand
        text = segment(inner)
        return f"({text})" if isinstance(inner, (ast.BoolOp, ast.IfExp, ast.Lambda, ast.NamedExpr)) else text
    if isinstance(node, ast.Compare) and len(node.ops) == 1 and type(node.ops[0]) in _NEGATED:
        return f"{segment(node.left)} {_NEGATED[type(node.ops[0])]} {segment(node.comparators[0])}"
    return None
