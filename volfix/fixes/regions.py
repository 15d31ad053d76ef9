"""Where a grad-mode region goes (SPEC §2.3-§2.7): from a taint result to `RegionPlan`s.

The region is the smallest run of consecutive statements, in the innermost block holding
them, that covers the source and every statement computing with the value. Statements in
that run that do not compute with it but bind a value used after the run (the training
step's `q_value` next to the target network's forward), or by a statement left out, are left
outside: the run is split around them. A training step (`loss.backward()`) never goes into a
`no_grad` region: when the source's own statement would pull a training loop in (a script's
volatile test batch above the loop that evaluates it every 50 steps), the uses alone place
the region, and the run is split around training statements. Runs in which nothing could
record a graph are dropped (no empty regions). A
run that is a whole function body, apart from statements that cannot touch autograd, becomes
a decorator.
"""
from __future__ import annotations

import ast
from bisect import bisect_right
from dataclasses import dataclass, field
from typing import Callable, Dict, List, Optional, Set, Tuple

from ..flow.bindings import NameBindings
from ..flow.defuse import Graph
from ..flow.taint import TaintResult
from ..flow.trains import TrainingCalls
from ..flow.values import calls_a_module, header_nodes, walk_expr
from ..syntax.big_files import is_opaque
from ..syntax.index import FUNCTIONS, ModuleIndex
from ..syntax.names import iter_statements, target_names
from ..findings import RegionPlan
from .harmless import StatementKinds



@dataclass
class Run:
    """Statements block[first..last] of one block."""

    owner: ast.AST
    field: str
    block: list
    first: int
    last: int

    @property
    def statements(self) -> list:
        return self.block[self.first:self.last + 1]

    def holds(self, node: ast.AST) -> bool:
        """`node` is one of the run's statements or lies inside one (only blanks, comments and
        `;` separate them, so the span from the first one's start to the last one's end)."""
        start, end = self.block[self.first], self.block[self.last]
        return (start.lineno, start.col_offset) <= (node.lineno, node.col_offset) and \
            (node.end_lineno, node.end_col_offset) <= (end.end_lineno, end.end_col_offset)  # type: ignore[attr-defined]

    def contains(self, inner: "Run") -> bool:
        """Is `inner`'s block nested inside one of this run's statements (or its part of the same block)?"""
        if self.block is inner.block:
            return self.first <= inner.first and inner.last <= self.last
        return self.holds(inner.block[inner.first])

    def touches(self, other: "Run") -> bool:
        """Same block and overlapping or adjacent, or one nested in the other."""
        if self.block is other.block:
            return self.first <= other.last + 1 and other.first <= self.last + 1
        return self.contains(other) or other.contains(self)


@dataclass
class Placement:
    runs: List[Run] = field(default_factory=list)
    form: str = "with"  # "with" | "decorator"
    # Untainted values the runs cover that are used after them: (name, bound at, used at).
    covers_used: Optional[Tuple[str, int, int]] = None
    decorator_reason: Optional[str] = None  # why a decorator (generator spanning `yield`)
    problem: Optional[str] = None  # no region can be placed: the reason


class RegionPlacer:
    def __init__(self, index: ModuleIndex, *, style: str = "auto", part_of=None):
        self.index = index
        self.src = index.src
        self.style = style
        # row -> notebook cell: a region never spans two cells.
        self.part_of = part_of or (lambda row: None)
        self.trainer = TrainingCalls(index)
        # `rebound_later`: for the region statements `inside` last asked about, block id ->
        # position -> where the statements after it stop counting
        self._chains: Tuple[Optional[Set[int]], Dict[int, Dict[int, int]]] = (None, {})
        self._harmful: Dict[Tuple[int, int], List[int]] = {}  # `_harmful_before`
        # `reached_by`: scope id -> its flow graph, and the step of each read there (by node id)
        self._graphs: Dict[int, Tuple[Optional[Graph], Dict[int, int]]] = {}
        self.kinds = StatementKinds(index)
        self.names = NameBindings(index)  # `stored_away`

    # ------------------------------------------------------------------ structure
    def path(self, stmt: ast.stmt, scope: ast.AST) -> List[Tuple[ast.AST, str, int]]:
        """[(owner, field, index), ...] from the scope's body down to `stmt`."""
        out = []
        node = stmt
        while node is not scope:
            parent = self.index.parents[node]
            if isinstance(node, ast.stmt) and not self.is_elif(node, parent):
                found = self.index.slot_of(node)
                if found is not None:
                    owner, name, _, i = found
                    out.append((owner, name, i))
            node = parent
        out.reverse()
        return out

    def is_elif(self, node: ast.stmt, parent: ast.AST) -> bool:
        if not (isinstance(node, ast.If) and isinstance(parent, ast.If) and parent.orelse
                and parent.orelse[0] is node and len(parent.orelse) == 1):
            return False
        line = self.src.line(node.lineno)
        return line[self.src.char_col(node.lineno, node.col_offset):].startswith("elif")

    def common_run(self, stmts: List[ast.stmt], scope: ast.AST) -> Run:
        """The innermost block holding every statement, and the run they span in it."""
        paths = [self.path(s, scope) for s in stmts]
        level = 0
        while True:
            elems = [p[level] for p in paths]
            idxs = {e[2] for e in elems}
            if (len(idxs) == 1 and all(len(p) > level + 1 for p in paths)
                    and len({(id(p[level + 1][0]), p[level + 1][1]) for p in paths}) == 1):
                level += 1
                continue
            owner, name, _ = elems[0]
            return Run(owner, name, getattr(owner, name), min(idxs), max(idxs))

    def extend_to_lines(self, run: Run) -> Run:
        """Grow the run so that no statement outside it shares a line with one inside."""
        block, first, last = run.block, run.first, run.last
        while first > 0 and block[first - 1].end_lineno >= row_of(block[first]):
            first -= 1
        while last + 1 < len(block) and row_of(block[last + 1]) <= block[last].end_lineno:
            last += 1
        return Run(run.owner, run.field, block, first, last)

    # ------------------------------------------------------------------ placement
    def place(self, scope: ast.AST, stmts: List[ast.stmt], taint: TaintResult, *,
              deleted: Set[int], flag: bool, keep: Set[int]) -> Placement:
        """Runs covering `stmts` (the uses and the sources' statements) in `scope`.
        `deleted`: statements the fix deletes; `keep`: statements that must stay covered
        even if they record nothing (a runtime flag's region)."""
        runs: List[Run] = []
        covers = None
        training = None
        for cell in self.by_part(stmts):
            run = self.extend_to_lines(self.common_run(cell, scope))
            if not flag and self.training_near([run]) is not None:
                # The source's own statement would pull a training loop into the region (a
                # script's `test_x = Variable(..., volatile=True)` above the loop that
                # evaluates it every 50 steps): the uses alone decide where it goes.
                uses = [s for s in cell if id(s) in keep]
                if uses and len(uses) < len(cell):
                    run, cell = self.extend_to_lines(self.common_run(uses, scope)), uses
            run = self.trim(run, deleted, taint, keep)
            if run is None:
                continue
            found, covered = self.split(run, scope, taint, cell, avoid_training=not flag)
            if not flag and self.training_near(found) is not None:
                # A use inside the training loop (`if step % 50 == 0: cnn(test_x)`): each use
                # gets the largest statement around it that trains nothing (the eval block).
                apart = self.around_uses([s for s in cell if id(s) in keep], scope, deleted, taint, keep)
                if apart and self.training_near(apart) is None:
                    found = apart
            runs.extend(found)
            covers = covers or covered
            training = training or self.training_near(found)
        # A runtime flag's region around code that only creates tensors (a data API's batch)
        # would turn recording back on inside a caller's `no_grad` (SPEC §2.5): regions go
        # only where the value is computed with.
        runs = [r for r in runs if self.records(r, taint)]
        placement = Placement(runs=runs, covers_used=covers)
        if not runs:
            return placement
        if training is not None and not flag:
            what, line = training
            placement.problem = f"a `no_grad` region here would also cover the training step ({what} at line {line})"
            return placement
        self.choose_form(placement, scope, deleted, flag)
        if placement.form == "with" and not placement.problem:
            placement.runs = [self.into_if(r, scope) for r in placement.runs]
        return placement

    def into_if(self, run: Run, scope: ast.AST) -> Run:
        """A run that is one `if` without `else` on a value without autograd history (`if step
        % 50 == 0:`) becomes a run over its body: the region goes inside the test, as a reviewer
        writes it."""
        while len(run.statements) == 1:
            stmt = run.statements[0]
            if not (isinstance(stmt, ast.If) and not stmt.orelse and stmt.body
                    and self.kinds.free(stmt.test, scope)
                    and self.src.line(stmt.body[0].lineno).strip() and stmt.body[0].lineno > stmt.lineno):
                break
            run = self.extend_to_lines(Run(stmt, "body", stmt.body, 0, len(stmt.body) - 1))
        return run

    def around_uses(self, uses: List[ast.stmt], scope: ast.AST, deleted: Set[int], taint: TaintResult,
                    keep: Set[int]) -> List[Run]:
        """One run for each use: the use grown to the outermost statement around it, inside
        `scope`, that holds no training call; runs of one block with nothing that trains
        between them are merged."""
        tops: List[ast.stmt] = []
        for use in uses:
            node = use
            while True:
                parent = self.index.parents.get(node)
                while parent is not None and not isinstance(parent, ast.stmt) and parent is not scope:
                    parent = self.index.parents.get(parent)
                if parent is None or parent is scope or isinstance(parent, FUNCTIONS + (ast.ClassDef,)) \
                        or self.training_call([parent]) is not None:
                    break
                node = parent
            if not any(within(node, t) for t in tops):
                tops = [t for t in tops if not within(t, node)] + [node]
        runs: List[Run] = []
        for top in sorted(tops, key=lambda t: (t.lineno, t.col_offset)):
            slot = self.index.slot_of(top)
            if slot is None:
                return []
            owner, name, block, position = slot
            last = runs[-1] if runs else None
            if last is not None and last.block is block and self.training_call(block[last.last + 1:position]) is None:
                runs[-1] = Run(owner, name, block, last.first, position)
            else:
                runs.append(Run(owner, name, block, position, position))
        out = []
        for run in runs:
            run = self.trim(self.extend_to_lines(run), deleted, taint, keep)
            if run is not None:
                out.append(run)
        return out

    def by_part(self, stmts: List[ast.stmt]) -> List[List[ast.stmt]]:
        """The statements grouped by notebook cell (one group for a .py file)."""
        groups: Dict[object, List[ast.stmt]] = {}
        for stmt in stmts:
            groups.setdefault(self.part_of(stmt.lineno), []).append(stmt)
        return list(groups.values())

    def trim(self, run: Run, deleted: Set[int], taint: TaintResult, keep: Set[int]) -> Optional[Run]:
        block, first, last = run.block, run.first, run.last
        while first <= last and id(block[first]) in deleted:
            first += 1
        while last >= first and id(block[last]) in deleted:
            last -= 1
        if first > last:
            return None
        return Run(run.owner, run.field, block, first, last)

    def split(self, run: Run, scope: ast.AST, taint: TaintResult, stmts: List[ast.stmt],
              avoid_training: bool = False) -> Tuple[List[Run], Optional[Tuple[str, int, int]]]:
        """Split the run around statements that bind untainted values used after it (and,
        with `avoid_training`, around training steps: `loss.backward()`). Leaving one out can
        leave out the uses of another (`q_value = q_values.gather(...)` read `q_values`):
        repeated until nothing more is left out."""
        wanted = {id(s) for s in stmts}
        excluded: Dict[int, Tuple[str, int, int]] = {}
        spanned = {id(s) for top in run.statements for s in iter_statements([top])}
        while True:
            inside_ids = {id(s) for position, top in enumerate(run.statements) if position not in excluded
                          for s in iter_statements([top])}
            covers = None
            more: Dict[int, Tuple[str, int, int]] = {}
            for position, top in enumerate(run.statements):
                if position in excluded:
                    continue
                if not _holds_any(top, wanted):
                    if avoid_training and self.training_call([top]) is not None:
                        more[position] = ("<training step>", top.lineno, top.lineno)  # `loss.backward()`
                        continue
                    if not _holds_any(top, taint.defs) and not self.kinds.harmless(top, scope) \
                            and not self.trainer.makes_volatile([top]):
                        # Reads no volatile value and may record a graph or have effects a
                        # grad mode changes (a training call's neighbour, a user callback):
                        # in 0.3 it ran with grad on, so it stays outside (SPEC §2.3).
                        more[position] = ("<reads no volatile value>", top.lineno, top.lineno)
                        continue
                for stmt in iter_statements([top]):
                    if id(stmt) in taint.defs or id(stmt) in wanted or id(stmt) in taint.recording:
                        continue
                    used = self.used_after(stmt, scope, inside_ids, run, spanned)
                    if used is None and stmt is not top:
                        used = self.stored_away(stmt, scope)
                    if used is None:
                        continue
                    if stmt is top and not _holds_any(top, wanted):
                        more[position] = used
                    elif covers is None:
                        covers = used
            if not more:
                break
            excluded.update(more)
        cells = [self.part_of(s.lineno) for s in run.statements]
        if not excluded and len(set(cells)) == 1:
            return [run], covers
        runs: List[Run] = []
        current: List[int] = []
        for position in range(len(run.statements)):
            if position in excluded or (current and cells[position] != cells[current[-1]]):
                if current:
                    runs.append(self.sub_run(run, current, wanted))
                current = [] if position in excluded else [position]
                continue
            current.append(position)
        if current:
            runs.append(self.sub_run(run, current, wanted))
        return [r for r in runs if r is not None], covers

    def sub_run(self, run: Run, positions: List[int], wanted: Set[int]) -> Optional[Run]:
        holding = [p for p in positions if _holds_any(run.statements[p], wanted)]
        if not holding:
            return None
        return self.extend_to_lines(Run(run.owner, run.field, run.block,
                                        run.first + holding[0], run.first + holding[-1]))

    def harmless_gap(self, a: Run, b: Run, scope: ast.AST) -> bool:
        """Two runs of one block with only harmless statements between them (a move such as
        `x_fake_list = [x_real]`): one region may hold both."""
        if a.block is not b.block:
            return False
        if a.first > b.first:
            a, b = b, a
        if b.first <= a.last + 1:
            return True
        harmful = self._harmful_before(a.block, scope)
        return harmful[b.first] == harmful[a.last + 1]

    def _harmful_before(self, block: List[ast.stmt], scope: ast.AST) -> List[int]:
        """For each position of the block, how many statements before it are not `harmless`
        (counted once a block and scope: the planner asks about every pair of regions)."""
        key = (id(block), id(scope))
        found = self._harmful.get(key)
        if found is None:
            found = [0]
            for stmt in block:
                found.append(found[-1] + (not self.kinds.harmless(stmt, scope)))
            self._harmful[key] = found
        return found

    def used_after(self, stmt: ast.stmt, scope: ast.AST, inside: Set[int], run: Run,
                   spanned: Set[int] = frozenset()) -> Optional[Tuple[str, int, int]]:
        """(name, line, line of the use) when `stmt` binds a value that may carry autograd
        history and is read after the run, earlier in a loop around it, or by a statement
        of the run's span left out of it (`spanned` minus `inside`)."""
        if is_opaque(stmt):  # a chunk of a big file volfix did not read: keep regions off it
            return "<code volfix did not read>", stmt.lineno, stmt.end_lineno  # type: ignore[return-value]
        names = set()
        for target, value in _bindings(stmt, lambda name: not self.index.binds_anywhere(name)):
            if value is not None and self.kinds.value_free(value, scope):
                continue
            names.update(target_names(target))
        names -= self.rebound_later(stmt, names, inside)
        if not names:
            return None
        end = run.statements[-1]
        end_pos = (end.end_lineno, end.end_col_offset)
        loops = [l for l in self.index.enclosing(run.statements[0], (ast.For, ast.AsyncFor, ast.While))]
        for name in sorted(names):
            for node in self.index.names.get(name, ()):
                if not isinstance(node.ctx, ast.Load) or self.index.function_of(node) is not scope:
                    continue
                owner = self.index.statement_of(node)
                if id(owner) in inside or self.index.comprehension_binds(node, name):
                    continue
                after = (node.lineno, node.col_offset) > end_pos or id(owner) in spanned
                in_loop = any(within(node, loop) for loop in loops)
                if (after or in_loop) and self.reached_by(stmt, scope, name, node):
                    return name, stmt.lineno, node.lineno
        return None

    def stored_away(self, stmt: ast.stmt, scope: ast.AST) -> Optional[Tuple[str, int, int]]:
        """(target, line, line) when a statement nested in a run's statement keeps on `self` a
        value a module of `self` computes (`w = self.hyper(z)`, then `self.last_w = w`, in an
        `if` that also evaluates): in 0.3 it kept its graph, which code after the region may
        train (a top-level such statement is left out of the run instead)."""
        if not (isinstance(stmt, ast.Assign) and any(isinstance(t, ast.Attribute) and isinstance(t.value, ast.Name)
                                                     and t.value.id == "self" for t in stmt.targets)):
            return None
        values = [stmt.value]
        if isinstance(stmt.value, ast.Name):
            values = [v for v in self.names.bindings(stmt.value.id, stmt) if isinstance(v, ast.AST)]
        if not any(calls_a_module(self.index, self.names, v, stmt) is not None for v in values):
            return None
        stored = next(t for t in stmt.targets if isinstance(t, ast.Attribute))
        return self.src.segment(stored), stmt.lineno, stmt.lineno

    def reached_by(self, stmt: ast.stmt, scope: ast.AST, name: str, read: ast.Name) -> bool:
        """May the value `stmt` binds to `name` be the one `read` sees? Not when every path to
        the read binds `name` again (the other branch's own loop: `for i, images in ...` in
        each arm of an `if`). True when the flow graph cannot tell (no graph, deferred code)."""
        found = self._graphs.get(id(scope))
        if found is None:
            graph = Graph.of_scope(self.index, scope)
            steps = {} if graph is None else {id(n): i for i, step in enumerate(graph.steps)
                                               for nodes in step.reads.values() for n in nodes}
            found = self._graphs[id(scope)] = (graph, steps)
        graph, steps = found
        start = None if graph is None else graph.step_of.get(id(stmt))
        at = steps.get(id(read))
        return start is None or at is None or at in graph.reached_reads([start], name)[0]

    def rebound_later(self, stmt: ast.stmt, names: Set[str], inside: Set[int]) -> Set[str]:
        """The `names` a later statement of the same block, inside the region, assigns again
        (`txt, feat = load(path)` then `feat = Variable(feat, volatile=True)`): what `stmt`
        bound does not outlive the region. The later statements looked at end at the first
        one outside the region or holding a jump (`if c: break`: the earlier value may leave
        the block); where that is is remembered for the region's statements, and each
        name's plain assignments are found by position, so a long region is not read again
        for each of its statements."""
        slot = self.index.slot_of(stmt)
        if slot is None or not names:
            return set()
        block, position = slot[2], slot[3]
        end = self._chain_end(block, position, inside)
        assigned = self.index.block_assignments(block)
        out: Set[str] = set()
        for name in names:
            at = assigned.get(name)
            if at:
                j = bisect_right(at, position)
                if j < len(at) and at[j] < end:
                    out.add(name)
        return out

    def _chain_end(self, block: List[ast.stmt], position: int, inside: Set[int]) -> int:
        """The first position after `position` in `block` that is outside `inside` or is a
        statement other than a plain assignment holding a jump (or the block's length)."""
        if self._chains[0] is not inside:
            self._chains = (inside, {})
        ends = self._chains[1].setdefault(id(block), {})
        path = []
        k = position
        while True:
            known = ends.get(k)
            if known is not None:
                end = known
                break
            nxt = k + 1
            if nxt >= len(block):
                end = len(block)
                break
            later = block[nxt]
            if id(later) not in inside or (not isinstance(later, ast.Assign) and self.index.holds_jump(later)):
                end = nxt
                break
            path.append(k)
            k = nxt
        ends[k] = end
        for p in path:
            ends[p] = end
        return end

    def records(self, run: Run, taint: TaintResult) -> bool:
        return any(id(s) in taint.recording for top in run.statements for s in iter_statements([top]))

    # ------------------------------------------------------------------ form
    def choose_form(self, placement: Placement, scope: ast.AST, deleted: Set[int], flag: bool) -> None:
        is_function = isinstance(scope, FUNCTIONS)
        is_async = isinstance(scope, ast.AsyncFunctionDef)
        spans_yield = is_function and any(_has_yield(s) for r in placement.runs for s in r.statements)
        if flag:
            if spans_yield:
                placement.problem = "the region spans a `yield`, where a runtime flag cannot become a decorator"
            placement.form = "with"
            return
        if spans_yield:
            if is_async:
                placement.problem = "the region spans a `yield` in an async generator, which no grad-mode decorator covers"
                return
            placement.form = "decorator"
            placement.decorator_reason = "a `with` block across `yield` would leak grad mode into the caller"
            return
        if not is_function or is_async or self.style == "with":
            placement.form = "with"
            return
        if self.style == "decorator":
            placement.form = "decorator"
            return
        body = scope.body  # type: ignore[attr-defined]
        if len(placement.runs) == 1:
            run = placement.runs[0]
            if run.block is body and all(id(s) in deleted or self.kinds.inert(s)
                                         for s in body[:run.first] + body[run.last + 1:]):
                placement.form = "decorator"
                return
        placement.form = "with"

    # ------------------------------------------------------------------ plans
    def plans(self, placement: Placement, scope: ast.AST, header: str, unit_rows=None) -> List[RegionPlan]:
        if placement.form == "decorator":
            fn = scope
            row = fn.lineno  # type: ignore[attr-defined]
            return [RegionPlan("decorator", header, self.src.line_starts[row - 1], self.src.line_starts[row - 1],
                               self.src.indentation(row))]
        return [self.with_plan(run, header, unit_rows) for run in placement.runs]

    def with_plan(self, run: Run, header: str, unit_rows=None) -> RegionPlan:
        src = self.src
        first_stmt, last_stmt = run.block[run.first], run.block[run.last]
        row = row_of(first_stmt)
        unit = self.index.indent_unit(first_stmt, unit_rows)
        line = src.line(row)
        col = src.char_col(row, first_stmt.col_offset if row == first_stmt.lineno
                           else first_stmt.decorator_list[0].col_offset)  # type: ignore[attr-defined]
        before = line[:col]
        end = src.line_after(last_stmt.end_lineno)
        if before.strip():  # a one-line suite: `for x in xs: out = f(x)`
            colon = src.line_starts[row - 1] + len(before.rstrip())
            return RegionPlan("with", header, src.line_starts[row - 1] + col, src.line_end(last_stmt.end_lineno),
                              src.indentation(row), unit, suite=True, colon=colon)
        return RegionPlan("with", header, src.line_starts[row - 1], end, before, unit)

    def training_near(self, runs: List[Run]) -> Optional[Tuple[str, int]]:
        """A training call inside the runs (`loss.backward()`, `optimizer.step()`)."""
        return self.training_call([stmt for run in runs for stmt in run.statements])

    def training_call(self, stmts: List[ast.stmt]) -> Optional[Tuple[str, int]]:
        """A training call in the statements (`loss.backward()`, `optimizer.step()`, or a call
        of a function of this file that trains: `volfix.flow.trains`)."""
        return self.trainer.in_statements(stmts)


# ---------------------------------------------------------------------- helpers


def row_of(stmt: ast.stmt) -> int:
    decorators = getattr(stmt, "decorator_list", None) or []
    return min([stmt.lineno] + [d.lineno for d in decorators])


def _holds_any(top: ast.stmt, wanted: Set[int]) -> bool:
    if id(top) in wanted:
        return True
    if not isinstance(top, _HOLDING):
        return False  # a simple statement holds no other
    return any(id(s) in wanted for s in iter_statements([top]))


_HOLDING = (ast.For, ast.AsyncFor, ast.While, ast.If, ast.With, ast.AsyncWith, ast.Try) + tuple(
    getattr(ast, n) for n in ("TryStar", "Match") if hasattr(ast, n))


def within(node: ast.AST, outer: ast.AST) -> bool:
    return (outer.lineno, outer.col_offset) <= (node.lineno, node.col_offset) and \
        (node.end_lineno, node.end_col_offset) <= (outer.end_lineno, outer.end_col_offset)  # type: ignore[attr-defined]


def _has_yield(stmt: ast.stmt) -> bool:
    for inner in iter_statements([stmt]):
        if isinstance(inner, FUNCTIONS + (ast.ClassDef,)):
            continue
        for head in header_nodes(inner):
            for node in walk_expr(head):
                if isinstance(node, (ast.Yield, ast.YieldFrom)):
                    return True
    return False


def _bindings(stmt: ast.stmt, builtin: Callable[[str], bool]):
    """(target, value) pairs `stmt` binds; a loop's target gets its iterable, taken apart where
    the builtin `enumerate`/`zip` say what each name holds (`builtin(name)`: the module does
    not rebind `name`)."""
    if isinstance(stmt, ast.Assign):
        for t in stmt.targets:
            yield t, stmt.value
    elif isinstance(stmt, (ast.AugAssign, ast.AnnAssign)) and stmt.value is not None:
        yield stmt.target, stmt.value
    elif isinstance(stmt, (ast.For, ast.AsyncFor)):
        yield from _iterated(stmt.target, stmt.iter, builtin)
    elif isinstance(stmt, (ast.With, ast.AsyncWith)):
        for item in stmt.items:
            if item.optional_vars is not None:
                yield item.optional_vars, item.context_expr


def _iterated(target: ast.AST, iterable: ast.AST, builtin: Callable[[str], bool]):
    """`for i, (x, y) in enumerate(zip(xs, ys))`: `i` counts (a number), `x` takes the items
    of `xs` and `y` those of `ys`."""
    call = iterable if isinstance(iterable, ast.Call) and isinstance(iterable.func, ast.Name) \
        and builtin(iterable.func.id) and not any(isinstance(a, ast.Starred) for a in iterable.args) else None
    parts = target.elts if isinstance(target, (ast.Tuple, ast.List)) else None
    if call is not None and parts is not None and not any(isinstance(p, ast.Starred) for p in parts):
        if call.func.id == "enumerate" and len(call.args) == 1 and len(parts) == 2:  # type: ignore[attr-defined]
            yield parts[0], ast.Constant(0)
            yield from _iterated(parts[1], call.args[0], builtin)
            return
        if call.func.id == "zip" and not call.keywords and len(call.args) == len(parts):  # type: ignore[attr-defined]
            for part, arg in zip(parts, call.args):
                yield from _iterated(part, arg, builtin)
            return
    yield target, iterable
