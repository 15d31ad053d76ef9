"""The decision steps of `Planner.decide` (SPEC §2, steps 4 and 10): what a training step the
value reaches means for its group (0.3 raised there: unwrap only, or a region that ends before
the value meets a trained one), and how safe a placed region is.

Each step answers with the note a reviewer reads; the planner records the outcomes.
"""
from __future__ import annotations

import ast
from dataclasses import dataclass
from typing import List, Optional, Tuple

from ..findings import W_UNSAFE
from ..flow.rewraps import hidden_rewraps, unvolatiles
from ..flow.bindings import NameBindings
from ..flow.values import calls_a_module, derived_names, reads_any
from ..model import Applicability
from ..syntax.index import FUNCTIONS
from .handed import handed_on
from .nested_steps import nested_unrelated
from .regions import Placement

SAFE, UNSAFE = Applicability.SAFE, Applicability.UNSAFE


@dataclass
class Training:
    """What the training steps the value reaches decide for its group: either each source is
    only unwrapped (`notes`, one per source), or the region is `placement`, unsafe for `forced`."""

    notes: Optional[List[str]] = None
    placement: Optional[Placement] = None
    forced: Optional[str] = None


class Decisions:
    def __init__(self, planner):
        self.planner = planner
        self.ctx = planner.ctx
        self.index = planner.index
        self.placer = planner.placer
        self._names: Optional[NameBindings] = None  # `_module_output`'s, one per file (it memoises)

    @property
    def follower(self):
        return self.planner.follower  # let go of by the planner once it is done

    def training(self, group) -> Optional[Training]:
        """None when no training step the value reaches changes the region."""
        taint = group.taint
        sources = group.sources
        if group.flag is None and taint.training:
            stmt, what = taint.training[0]
            early = self.before_meeting(group)
            if early is None:
                plain = hidden_rewraps(self.index, taint.uses, certain=True, rebuilds=unvolatiles)
                if plain:
                    # the module's forward made a value plain again on the way (`.volatile = False`,
                    # maybe under a test): whether 0.3 raised there depends on what it un-volatiled
                    call = self.ctx.src.segment(plain[0].func)
                    return Training([f"unsafe fix: the value reaches `{what}` (line {stmt.lineno}) through "
                                     f"`{call}()` (line {plain[0].lineno}), whose `forward` sets `.volatile = False` "
                                     "on a value it computed: 0.3 trained there if that value is what reaches the "
                                     "step, and raised otherwise; unwrapped, the step trains on it"] * len(sources))
                rebuilt = hidden_rewraps(self.index, taint.uses, certain=True)
                if rebuilt:
                    # a module rebuilds the value from `.data` on the way (fact 10): 0.3 trained
                    # on what it returns, as the unwrapped program does
                    return Training([self._rebuilt(what, stmt, rebuilt[0], "0.3 trained on that result, as the "
                                                   "unwrapped code does, and ran what comes before the rebuild without "
                                                   "a graph; unwrapped, that part records one")] * len(sources))
                # 0.3 raised there (SEMANTICS.md fact 5): the legacy program never trained on
                # this value. Unwrapped, it does: a change a reviewer must accept (SPEC §2.10).
                return Training([f"unsafe fix: the value reaches `{what}` (line {stmt.lineno}), where 0.3 raised; "
                                 "unwrapped, the step trains on it"] * len(sources))
            covered = [s for run in early.runs for s in run.statements]
            rebuilt = hidden_rewraps(self.index, covered, certain=True)
            if rebuilt:
                # a module of the file rebuilds the value from `.data` on the way (0.3 trained on
                # what it returns): a region around its call would stop that training
                return Training([self._rebuilt(what, stmt, rebuilt[0], "0.3 trained on that result and ran what "
                                               "comes before the rebuild without a graph; unwrapped, that part records "
                                               "one (no region can cover it from here)")] * len(sources))
            # 0.3 raised at that backward (fact 5): what the author meant is the computation
            # before the value meets the trained one, without a graph (a target network's pass)
            return Training(placement=early,
                            forced=(f"unsafe fix: 0.3 raised at `{what}` (line {stmt.lineno}) on this value; the "
                                    "region keeps its graph out of training") + self._unless_rewrapped(covered))
        if group.flag is not None and taint.training:
            skipped = self.trains_without_source(group)
            if skipped is not None:
                # under the flag's region the step raises whenever the flag is true; in 0.3 it
                # raised only when the value it trains on came from the source, which runs only
                # under an `if` the step is not in (seqmod's scheduled sampling, then `backward()`)
                stmt, what = skipped
                return Training([f"unsafe fix: the value reaches `{what}` (line {stmt.lineno}) only when line "
                                 f"{s.stmt.lineno} runs; a region under the flag would stop that step from "
                                 "training also when it does not" for s in sources])
        if group.flag is None:
            trained = self.follower.caller_trains(group, backward_only=True)
            if trained is not None:
                # the result was volatile in 0.3, so the caller's step raised there (fact 5); a
                # region would make it raise today too, where unwrapped it trains
                return Training([f"{trained}, where 0.3 raised; unwrapped, the step trains on it"] * len(sources))
        return None

    def _rebuilt(self, what: str, stmt: ast.stmt, call: ast.Call, then: str) -> str:
        """The note of a value that reaches `what` through `call()` of a module whose `forward`
        rebuilds its result from `.data` (fact 10)."""
        return (f"unsafe fix: the value reaches `{what}` (line {stmt.lineno}) through "
                f"`{self.ctx.src.segment(call.func)}()` (line {call.lineno}), whose `forward` rebuilds its "
                f"result from `.data`: {then}")

    def trains_without_source(self, group) -> Optional[Tuple[ast.stmt, str]]:
        """A training step the taint reaches (`taint.training`) that is outside an `if` holding
        one of the group's sources: on the paths where that `if` does not run its branch, 0.3
        trained there. Not the `if` whose test is the flag (`if training: ... else: x =
        Variable(x, volatile=True)`): its other path is the flag's other value."""
        kinds = (ast.If, ast.Try, ast.While)
        for stmt, what in group.taint.training:
            around_step = {id(node) for node in self.index.enclosing(stmt, kinds)}
            for source in group.sources:
                branch = source.flag.branch if source.flag is not None else None
                if any(id(node) not in around_step and not (isinstance(node, ast.If) and node.test is branch)
                       for node in self.index.enclosing(source.stmt, kinds)):
                    return stmt, what
        return None

    def before_meeting(self, group) -> Optional[Placement]:
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

    def meets_and_leaves(self, group) -> Optional[str]:
        """The region covers a statement where the value meets one that may require grad
        (`loss = scores.sum() + paugment_total`, `scores` a module's output), and a value leaves
        the function (`return None, loss`): in 0.3 what the meeting made was volatile, so no
        caller could train on it. A caller elsewhere that does (self-attentive-parser's
        `parse_batch`, trained in `main.py`) says volfix took for volatile what was not (a
        callee's Python number): the region would stop that training."""
        taint = group.taint
        leaving = [e for e in taint.escapes if e.kind in ("return", "yield", "attribute", "global")]
        if not leaving or not isinstance(group.scope, FUNCTIONS):
            return None
        for stmt in taint.uses:
            if id(stmt) not in taint.meeting or not any(run.holds(stmt) for run in group.placement.runs):
                continue
            partners = [p for p in taint.partners.get(id(stmt), ()) if self._module_output(p)]
            if partners:
                return (f"unsafe fix: the region covers line {stmt.lineno}, where the value meets "
                        f"`{self.ctx.src.segment(partners[0])}`, which may require grad, and `{group.scope.name}()` "
                        f"hands a value on ({leaving[0].what}, line {leaving[0].stmt.lineno}): 0.3 made that "
                        "volatile, so a caller that trains on it (volfix cannot see them all) would have raised")
        return None

    def cell_result(self, group) -> Optional[ast.Expr]:
        """A notebook cell's last statement, an expression whose value Jupyter shows (`net(start)`),
        that a region's `with` block would hold (then the cell shows nothing)."""
        doc, index = self.ctx.doc, self.index
        if not index.notebook or not group.placement.runs or group.placement.form == "decorator":
            return None
        body = index.tree.body
        for run in group.placement.runs:
            last = run.block[run.last]
            if run.block is not body or not isinstance(last, ast.Expr) or isinstance(last.value, ast.Constant):
                continue
            value = last.value
            if isinstance(value, ast.Call) and isinstance(value.func, ast.Name) \
                    and value.func.id in ("print", "display"):
                continue  # returns None: nothing to show
            part = doc.part_of_row(last.end_lineno)
            following = body[body.index(last) + 1:] if last in body else []
            if part is not None and not (following and following[0].lineno <= part.last_row):
                return last
        return None

    def _module_output(self, partner: ast.AST) -> bool:
        """A value a module of the program computes, so it requires grad: a call of one
        (`self.f_label(x).sum()`), or a name or `self` attribute bound to one (`scores =
        self.f_label(x)`, `self.loc = self.head(x)`)."""
        names = self._names = self._names or NameBindings(self.index)
        if calls_a_module(self.index, names, partner, partner) is not None:
            return True
        if isinstance(partner, ast.Attribute):  # `self.loc`, stored as `self.loc = self.head(x)`
            bound = names.of(partner, partner) or []
            if any(isinstance(v, ast.AST) and calls_a_module(self.index, names, v, v) is not None for v in bound):
                return True
        return any(isinstance(v, ast.AST) and calls_a_module(self.index, names, v, v) is not None
                   for n in ast.walk(partner) if isinstance(n, ast.Name) and isinstance(n.ctx, ast.Load)
                   for v in names.bindings(n.id, n))

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

    def safety(self, group, partial: Optional[Tuple[str, bool]]) -> Tuple[Applicability, Optional[str], int]:
        """The region's applicability and the one reason a reviewer should know."""
        placement = group.placement
        if placement.covers_used is not None:
            name, bound, used = placement.covers_used
            if used == bound:  # `regions.stored_away`
                return UNSAFE, (f"unsafe fix: the region also covers `{name}` (line {bound}), a value "
                                f"kept where code after the region may read it"), W_UNSAFE
            return UNSAFE, (f"unsafe fix: the region also covers `{name}` (line {bound}), "
                            f"which is used after it (line {used})"), W_UNSAFE
        wanted = {id(s) for s in group.stmts} | {id(s.stmt) for s in group.sources}
        unrelated = nested_unrelated(self.placer, placement.runs, group.scope, group.taint, wanted)
        if unrelated is not None:
            stmt, handed = unrelated
            caller = self.follower.a_caller_trains(group.scope) if handed == "return" else None
            if handed == "train" or caller is not None:
                step = "a training step later in this function" if caller is None else \
                    f"the result, on which the call of line {caller} trains"
                return UNSAFE, (f"unsafe fix: the region also covers `{_first_line(self.ctx.src.segment(stmt))}` "
                                f"(line {stmt.lineno}), which reads no volatile value and may record a graph that "
                                f"reaches {step}; 0.3 recorded it"), W_UNSAFE
        kept = self.kept_from_partial_callee(group)
        if kept is not None:
            return UNSAFE, kept, W_UNSAFE
        escape = self.follower.open_escape(group)
        if escape is not None:
            return UNSAFE, escape, W_UNSAFE
        trains = self.follower.caller_trains(group) or self.follower.lazy_return(group)
        if trains is not None:
            return UNSAFE, trains, W_UNSAFE
        met = self.meets_and_leaves(group) or self.follower.called_elsewhere(group)
        if met is not None:
            return UNSAFE, met, W_UNSAFE
        shown = self.cell_result(group)
        if shown is not None:
            return UNSAFE, (f"unsafe fix: the region ends with `{self.ctx.src.segment(shown.value)}` "
                            f"(line {shown.lineno}), the last line of its cell, whose value the notebook shows; "
                            "inside a `with` block it is no longer shown"), W_UNSAFE
        if partial is not None:  # `partly_volatile`, asked once by `decide`
            return UNSAFE, "unsafe fix: " + partial[0], W_UNSAFE
        writes = [(stmt, key) for stmt, key in group.taint.buffer_writes
                  if any(run.holds(stmt) for run in placement.runs)] if placement.runs else []
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


    def kept_from_partial_callee(self, group) -> Optional[str]:
        """The region passes a volatile value to a function of this file that may return
        without computing from it (`select_layer(layer, dual_net, zs[i])`, whose `zsi` only one
        branch reads), and what the region computes is kept on an attribute (`self.dual_net =
        dual_net`): in 0.3 such a result was no volatile value and recorded its graph, which
        whoever reads the attribute may train on (convex_adversarial's `DualNetBounds`)."""
        stored = [e for e in group.taint.escapes if e.kind == "attribute" and not e.raw]
        if not stored or not group.placement or not group.placement.runs:
            return None
        tainted = group.taint.tainted_keys
        defs = {s.name: s for s in self.index.module_statements if isinstance(s, FUNCTIONS)}
        for run in group.placement.runs:
            for top in run.statements:
                for call in (n for n in ast.walk(top) if isinstance(n, ast.Call)):
                    fn = defs.get(call.func.id) if isinstance(call.func, ast.Name) else None
                    if fn is None:
                        continue
                    params = [a.arg for a in fn.args.posonlyargs + fn.args.args]
                    for position, arg in enumerate(call.args[:len(params)]):
                        if isinstance(arg, ast.Starred) or not any(
                                isinstance(n, ast.Name) and n.id in tainted for n in ast.walk(arg)):
                            continue
                        if not _reaches_every_return(fn, params[position]):
                            kept = stored[0]
                            where = f"`{self.ctx.src.segment(kept.node)}`" if kept.node is not None else kept.what
                            return (f"unsafe fix: `{fn.name}()` (line {call.lineno}) may return a value it does not "
                                    f"compute from `{self.ctx.src.segment(arg)}` (its `{params[position]}`), which 0.3 "
                                    f"did not make volatile; the region keeps what it computes in {where} "
                                    f"(line {kept.stmt.lineno}), where a reader may train on it")
        return None


def _reaches_every_return(fn: ast.AST, param: str) -> bool:
    """Every `return` of `fn` returns something read from `param` (through the names the body
    binds from it, in any order); a def that returns nothing does not."""
    reached = derived_names((n for n in ast.walk(fn) if isinstance(n, ast.stmt)), {param})
    returns = [n for n in ast.walk(fn) if isinstance(n, ast.Return)]
    return bool(returns) and all(r.value is not None and reads_any(r.value, reached) for r in returns)


def flag_conflict(group, all_groups) -> Optional[int]:
    """The row of another group's region that a flag's region overlaps: a `no_grad` one, or a
    flag's region decided before it (two grad modes cannot both hold there)."""
    for other in all_groups:
        if other is group or not other.placement or not other.placement.runs:
            continue
        if any(r.contains(o) for r in group.placement.runs for o in other.placement.runs):
            if other.flag is None or all_groups.index(other) < all_groups.index(group):
                return other.sources[0].stmt.lineno
    return None


def _first_line(text: str) -> str:
    first = text.strip().splitlines()[0] if text.strip() else text
    return first if first == text.strip() else first.rstrip() + " ..."
