"""A finding's fix from what every source said about it (`fixes.planner`'s last step).

Each source of a finding leaves an outcome (applicability, a note, edits, regions, a group).
Before they are merged, an inner region never fixed without its outer one joins it, and two
`with` regions of one block with the same header and nothing between them that could record
a graph become one; then findings sharing a region share a group and are fixed together.
"""
from __future__ import annotations

from typing import TYPE_CHECKING, Dict, List, Optional, Tuple

from ..findings import W_UNSAFE, FixPlan, worst
from ..model import Applicability
from .regions import Run

if TYPE_CHECKING:
    from .planner import Group

SAFE, UNSAFE = Applicability.SAFE, Applicability.UNSAFE


class Finalizer:
    def __init__(self, findings, groups, holdings: List[Tuple[int, int]], placer) -> None:
        self.findings = findings
        self.groups = groups  # the planner's `Group`s
        self.holdings = holdings  # (inner region's group, outer region's group)
        self.placer = placer

    def absorb_held(self) -> None:
        """An inner region whose findings are never fixed without the outer one (the outer's
        findings are at least as applicable) loses its header and joins the outer's group:
        one region, never one nested in the other. Otherwise both stay, so that safe fixes
        alone still get the inner region."""
        rank = {SAFE: 0, UNSAFE: 1}
        for inner, outer in self.holdings:
            mine = [f for f in self.findings if any(o.group == inner for o in f.outcomes)]
            theirs = [f for f in self.findings if any(o.group == outer for o in f.outcomes)]
            levels = [worst(*(o.applicability for o in f.outcomes)) for f in theirs]
            if not mine or not theirs or any(a is None for a in levels):
                continue
            needed = max(rank[a] for a in levels)
            if any(rank.get(worst(*(o.applicability for o in f.outcomes)), 2) < needed for f in mine):
                continue
            for f in mine:
                for o in f.outcomes:
                    if o.group == inner:
                        o.regions, o.group = [], outer

    def join_neighbours(self) -> None:
        """Two `with` regions of one block with the same header and nothing between them that
        could record a graph (sources found in different rounds: `data, targets =
        get_batch(..., evaluation=True)` and the hidden state's reads) become one region, when
        `volfix fix` applies both or neither (their findings are equally applicable)."""
        rank = {SAFE: 0, UNSAFE: 1, None: 2}

        def level(gid: int) -> Optional[int]:
            found = [f for f in self.findings if any(o.group == gid for o in f.outcomes)]
            levels = {rank[worst(*(o.applicability for o in f.outcomes))] for f in found}
            return levels.pop() if len(levels) == 1 else None

        groups = [g for g in self.groups if g.gid is not None and g.placement and g.placement.form == "with"
                  and len(g.plans) == len(g.placement.runs)]
        changed = True
        while changed:
            changed = False
            for a in groups:
                for b in groups:
                    if a is b or a.scope is not b.scope or a.header != b.header or a.gid == b.gid:
                        continue
                    pair = self._neighbours(a, b)
                    if pair is None or level(a.gid) is None or level(a.gid) != level(b.gid) or level(a.gid) == 2:
                        continue
                    i, j = pair
                    ra, rb = a.placement.runs[i], b.placement.runs[j]
                    run = Run(ra.owner, ra.field, ra.block, min(ra.first, rb.first), max(ra.last, rb.last))
                    merged = self.placer.with_plan(run, a.header, a.unit_rows)
                    old_a, old_b = a.plans[i], b.plans[j]
                    for f in self.findings:
                        for o in f.outcomes:
                            if o.group in (a.gid, b.gid):
                                o.regions = [merged if r is old_a or r is old_b else r for r in o.regions]
                                o.regions = [r for k, r in enumerate(o.regions) if r not in o.regions[:k]]
                                o.group = a.gid
                    a.placement.runs[i], a.plans[i] = run, merged
                    for k, (r, plan) in enumerate(zip(b.placement.runs, b.plans)):
                        if k != j:
                            a.placement.runs.append(r)
                            a.plans.append(plan)
                    groups.remove(b)
                    b.gid = a.gid
                    changed = True
                    break
                if changed:
                    break

    def _neighbours(self, a: "Group", b: "Group") -> Optional[Tuple[int, int]]:
        for i, ra in enumerate(a.placement.runs):
            for j, rb in enumerate(b.placement.runs):
                if ra.block is rb.block and not (ra.first <= rb.last and rb.first <= ra.last) \
                        and self.placer.harmless_gap(ra, rb, a.scope) and not self._suite(a.plans[i]) \
                        and not self._suite(b.plans[j]):
                    return i, j
        return None

    @staticmethod
    def _suite(plan) -> bool:
        return getattr(plan, "suite", False)

    def run(self) -> None:
        """Merge what every source said about each finding into its fix; findings whose
        regions are shared are fixed together (one group)."""
        self.absorb_held()
        self.join_neighbours()
        parent: Dict[int, int] = {}

        def find(g: int) -> int:
            while parent.get(g, g) != g:
                g = parent[g]
            return g

        for f in self.findings:
            groups = [o.group for o in f.outcomes if o.group is not None]
            for g in groups[1:]:
                parent[find(g)] = find(groups[0])
        for f in self.findings:
            if not f.outcomes:
                continue
            edits, regions, imports = [], [], frozenset()
            seen_edits, seen_regions = set(), set()
            for o in f.outcomes:
                for e in o.edits:
                    if e not in seen_edits:
                        seen_edits.add(e)
                        edits.append(e)
                for r in o.regions:
                    if r not in seen_regions:
                        seen_regions.add(r)
                        regions.append(r)
                imports |= o.imports
            ranks = [o.applicability for o in f.outcomes]
            applicability = worst(*ranks)
            fixed = applicability is not None and bool(edits or regions)
            # One reason, consistent with the outcome: a fix never says "no fix".
            noted = [o for o in f.outcomes if o.note and (o.applicability is not None) == fixed]
            best = max(noted, key=lambda o: o.weight) if noted else None
            if best is not None and (best.weight >= W_UNSAFE or not f.note):
                f.note = best.note
            f.fix = FixPlan(applicability, "", edits, regions, imports) if fixed else None
            groups = [o.group for o in f.outcomes if o.group is not None]
            f.group = find(groups[0]) if groups else None
