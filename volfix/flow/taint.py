"""Volatility as data flow inside one scope (SPEC §2.2, §2.4, §2.6): the one taint engine.

In 0.3 volatility rode on the data: anything computed from a volatile value was volatile. This
module follows the value forward through one function body (or module body, or the joined
cells of a notebook) by abstract interpretation over the statements:

- the state maps *keys* (a local name `x`, or an attribute path `self.priors`) to whether the
  value is *raw* (the volatile tensor itself, only moved: `y = x`, `x.cuda()`, `batch[0]`) or
  *computed* (the result of an operation on it);
- an assignment of an untainted value kills the key; `.data`, `.detach()`, `.item()`, `len()`,
  comparisons and `x.volatile = False` end the taint (as 0.3 volatility ended there);
- `if` branches join (a definition in one branch never reaches the other), loops iterate to a
  fixpoint (loop-carried flow), `try` handlers see the body's definitions;
- each statement is classified: does it *compute* with the value (not only move or inspect
  it), and could that computation *record* a graph today (the value meets something that may
  require grad: a module call, a parameter)? A region that records nothing is not needed;
- values that leave the scope are *escapes* (`return`, `yield`, an attribute of `self`, a
  global, a closure); a tainted value reaching `.backward()` / `torch.autograd.grad()` is a
  training use.

Cost is linear in the scope's size: a statement that mentions no tainted key is passed over
after one look at the names it holds, and only loops are visited more than once.
"""
from __future__ import annotations

import ast
from bisect import bisect_left
from dataclasses import dataclass, field
from heapq import heappop, heappush
from typing import Callable, Dict, Iterable, List, Optional, Set, Tuple

from ..syntax.index import ModuleIndex
from .taint_expressions import TaintExpressions
from .taint_facts import DATA_METHODS, ValueFacts
from .taint_items import Items, TupleItems
from .values import (LOOPS, MAX_LOOP_ROUNDS, Key, State, describe, header_nodes, is_try, join, key_of,
                     kill, number_total, under, volatile_false_target)


SKIP_BLOCK = 32  # statements: a longer block visits only what can matter (`long_block`)


@dataclass
class Escape:
    """A tainted value leaving the scope."""

    kind: str  # "return" | "yield" | "attribute" | "global" | "container" | "closure"
    what: str  # shown to the user: "`return`", "`self.priors`"
    stmt: ast.stmt
    raw: bool  # the volatile value itself (only moved), not a computed result
    node: Optional[ast.AST] = None  # the attribute stored to / the closure


@dataclass
class TaintResult:
    """What the analysis of one set of sources in one scope found."""

    uses: List[ast.stmt] = field(default_factory=list)  # statements computing with the value
    recording: Set[int] = field(default_factory=set)  # ids of uses that may record a graph
    defs: Set[int] = field(default_factory=set)  # ids of statements binding a tainted value
    tainted_keys: Set[Key] = field(default_factory=set)
    escapes: List[Escape] = field(default_factory=list)
    training: List[Tuple[ast.stmt, str]] = field(default_factory=list)  # (stmt, `loss.backward()`)
    # `output[:, k] = model(x)` into a volatile buffer: (stmt, the buffer's key)
    buffer_writes: List[Tuple[ast.stmt, str]] = field(default_factory=list)
    covered: Set[int] = field(default_factory=set)  # ids of uses already under a grad-disabled region
    # ids of uses where the value meets an untainted one that may need grad (`loss =
    # criterion(output, target)` with a volatile target): from there on 0.3 made the trained
    # value volatile too, and `backward()` raised (SEMANTICS.md fact 5)
    meeting: Set[int] = field(default_factory=set)
    # id of a meeting statement -> the untainted values it meets there
    partners: Dict[int, List[ast.AST]] = field(default_factory=dict)
    # (key, if): one branch of the `if` ends the key's taint (`feat = Variable(feat.data)`),
    # the other keeps it: after the `if` the key is tainted on some paths only
    partial_kills: List[Tuple[Key, ast.If]] = field(default_factory=list)
    # (key, if): one branch of the `if` makes the key volatile, the other path keeps the value
    # it had (`if kw > 1: input = Variable(buf, volatile=True)`): tainted on some paths only
    partial_gens: List[Tuple[Key, ast.If]] = field(default_factory=list)
    # (statement, receiver, `q_bot.observe`): the value handed to a method of an object of a
    # class volfix cannot see, called for its effect on the object (which may keep the value)
    handed: List[Tuple[ast.stmt, Key, str]] = field(default_factory=list)

    def uses_outside(self) -> List[ast.stmt]:
        return [s for s in self.uses if id(s) not in self.covered]


class TaintAnalysis(TaintExpressions, ValueFacts, TupleItems):
    """Forward taint over the statements of `scope` from the `sources` (expression nodes) and
    `seeds` (keys tainted right after a statement: `x.volatile = True`, or at the start of the
    scope: a closure's captured name, an attribute read in another method)."""

    def __init__(self, scope: ast.AST, index: ModuleIndex, sources: Iterable[ast.AST] = (),
                 seeds: Optional[Dict[int, Dict[Key, bool]]] = None,
                 entry: Optional[Dict[Key, bool]] = None,
                 grad_disabled: Optional[Callable[[ast.stmt], bool]] = None,
                 raw_sources: bool = True, plain: Optional[Callable[[ast.AST], bool]] = None,
                 computing: Iterable[ast.AST] = (), wrappers: Iterable[str] = (),
                 result_free: Iterable[ast.AST] = (),
                 trains: Optional[Callable[[ast.Call], bool]] = None,
                 items: Optional[Dict[int, Items]] = None):
        self.scope = scope
        self.index = index
        self.wrappers = frozenset(wrappers)  # the project's own `Variable` wrappers (a lambda, a def)
        self.sources = {id(s) for s in sources}
        # Sources that compute themselves (a helper's call whose body records): the call records.
        self.computing = {id(s) for s in computing}
        # Sources whose result has no autograd history (a helper returning Python numbers):
        # the call records, and the taint ends with it.
        self.result_free = {id(s) for s in result_free}
        # Sources returning a tuple (of this size) that holds the value only at these positions
        # (`return Variable(states), next_states`): unpacked, only those names are tainted.
        self.items = items or {}
        self._item_names: Dict[str, Items] = {}  # `batch = mem.sample(n)`, bound once
        # Does a call train (a function of the file whose body calls backward(), transitively)?
        # A volatile argument to it reaches backward() as surely as `loss.backward()` does.
        self.trains = trains or (lambda call: False)
        self.raw_sources = raw_sources
        self.seeds = seeds or {}
        self.entry = dict(entry or {})
        # Every key that is the prefix of a dotted key some state held (`self` for `self.h`):
        # only those can have children to kill, or be mentioned through a child.
        self._prefixes: Set[str] = set()
        # The root name of every key any state held, in the order they came (`block`'s skips):
        # every tainted key, and every prefix that can have children, is rooted in one.
        self._roots: Set[str] = set()
        self._roots_in_order: List[str] = []
        self._hot_positions: Dict[int, List[int]] = {}
        for key in self.entry:
            self._note(key)
        self.grad_disabled = grad_disabled or (lambda stmt: False)
        self.plain = plain or (lambda node: False)
        self.result = TaintResult()
        self._uses: Dict[int, ast.stmt] = {}
        self._hot: Set[int] = set()  # statements holding a source or a seed (with ancestors)
        for node_id, node in self._source_nodes(sources):
            self._mark_hot(node)
        if self.seeds:  # a seed inside a loop or a branch: the statements holding it are visited too
            for node in ast.walk(scope):
                if id(node) in self.seeds:
                    self._mark_hot(node)
        for stmt_id in self.seeds:
            self._hot.add(stmt_id)
        self._stmt: Optional[ast.stmt] = None
        self._values = None  # a `ScalarValues` of the module, once `_keeps_argument` needs one
        self._computes = False
        self._records = False
        self._meets = False

    def _note(self, key: Key) -> None:
        name = key.partition(".")[0]
        if name not in self._roots:
            self._roots.add(name)
            self._roots_in_order.append(name)
        while "." in key:
            key = key.rpartition(".")[0]
            self._prefixes.add(key)

    def kill(self, state: State, key: Key) -> None:
        """`values.kill`, scanning for the key's children only when some state may hold one
        (a module-level script of 30,000 lines taints 30,000 names)."""
        if key in self._prefixes:
            kill(state, key)
        else:
            state.pop(key, None)

    def _source_nodes(self, sources):
        for s in sources:
            yield id(s), s

    def _mark_hot(self, node: ast.AST) -> None:
        cur = node
        parents = self.index.parents
        while cur is not None and cur is not self.scope:
            if isinstance(cur, ast.stmt):
                self._hot.add(id(cur))
            cur = parents.get(cur)

    # ------------------------------------------------------------------ driver
    def run(self) -> TaintResult:
        body = self.scope.body if isinstance(self.scope.body, list) else []  # type: ignore[attr-defined]
        state: State = dict(self.entry)
        self.block(body, state)
        res = self.result
        res.uses = sorted(self._uses.values(), key=lambda s: (s.lineno, s.col_offset))
        return res

    def block(self, stmts: List[ast.stmt], state: State) -> State:
        if len(stmts) >= SKIP_BLOCK:
            return self.long_block(stmts, state)
        for stmt in stmts:
            state = self.statement(stmt, state)
        return state

    def long_block(self, stmts: List[ast.stmt], state: State) -> State:
        """`block` for a long block (a module-level script): only the statements that can
        change something are visited, in order: those holding a source or a seed, and those
        mentioning (themselves or in a statement nested in them) the root name of a key some
        state held. `statement` passes over the others without a change: a loop, `if` or
        `try` whose statements mention nothing tainted changes nothing either. Each source
        of a long script is then followed in time linear in the statements it reaches, not in
        the script."""
        where = self.index.block_mentions(stmts)
        fixed = self._hot_positions.get(id(stmts))
        if fixed is None:
            fixed = sorted({where.position[h] for h in self._hot if h in where.position})
            self._hot_positions[id(stmts)] = fixed
        names = where.names
        queue: List[Tuple[int, str]] = []

        module = self.scope is self.index.tree

        def watch(name: str, start: int) -> None:
            at = names.get(name)
            if at:
                j = bisect_left(at, start)
                if j < len(at):
                    heappush(queue, (at[j], name))
            if module:  # the calls of the module's functions that read the name as a global
                for reader in self.index.global_readers(name):
                    if reader != name:
                        watch(reader, start)

        seen = len(self._roots_in_order)
        for name in self._roots_in_order:
            watch(name, 0)
        k = 0  # next of `fixed`
        i = 0  # next position that may be visited
        count = len(stmts)
        while i < count:
            while k < len(fixed) and fixed[k] < i:
                k += 1
            nxt = fixed[k] if k < len(fixed) else count
            if queue and queue[0][0] < nxt:
                nxt = queue[0][0]
            if nxt >= count:
                break
            state = self.statement(stmts[nxt], state)
            i = nxt + 1
            while queue and queue[0][0] < i:
                _, name = heappop(queue)
                watch(name, i)
            if len(self._roots_in_order) > seen:
                for name in self._roots_in_order[seen:]:
                    watch(name, i)
                seen = len(self._roots_in_order)
        return state

    def _mentions_any(self, stmt: ast.stmt, state: State) -> bool:
        """Does the statement's own code read any tainted key's root name (`volfix.syntax.index`
        recorded, for every name, the statements that mention it)?"""
        prefixes = self._prefixes
        mentioned = self.index.names_mentioned(id(stmt))
        if any(name in state or name in prefixes for name in mentioned):
            return True
        # `rank_all = eval()`, `eval` reading the module's volatile `ques_input`
        if self.scope is not self.index.tree:
            return False
        defs = self.index.module_functions
        return any(any(read in state for read in self.index.global_reads(defs[name]))
                   for name in mentioned if name in defs)

    def statement(self, stmt: ast.stmt, state: State) -> State:
        sid = id(stmt)
        if not state and sid not in self._hot:
            return state  # before any source: nothing to follow here
        if isinstance(stmt, LOOPS):
            return self.loop(stmt, state)
        if isinstance(stmt, ast.If):
            self.expressions(stmt, [stmt.test], state)
            body, orelse = self.block(stmt.body, dict(state)), self.block(stmt.orelse, dict(state))
            for key in state:
                if (key in body) != (key in orelse) and (key, stmt) not in self.result.partial_kills:
                    self.result.partial_kills.append((key, stmt))
            for key in body.keys() ^ orelse.keys():
                if key not in state and (key, stmt) not in self.result.partial_gens \
                        and self._bound_elsewhere(key, stmt, key in body):
                    self.result.partial_gens.append((key, stmt))
            return join(body, orelse)
        # `block` owns the state it is given (branches and loops pass copies), so statements
        # update it in place: a copy each statement is quadratic in a long script.
        if isinstance(stmt, (ast.With, ast.AsyncWith)):
            self.begin(stmt)
            for item in stmt.items:
                tainted, raw = self.eval(item.context_expr, state)
                if item.optional_vars is not None:
                    self.bind(item.optional_vars, tainted, raw, state, stmt)
            self.end(stmt)
            return self.block(stmt.body, state)
        if is_try(stmt):
            after_body = self.block(stmt.body, dict(state))
            seen = join(state, after_body)
            outs = [self.block(stmt.orelse, dict(after_body))]
            for handler in stmt.handlers:
                outs.append(self.block(handler.body, dict(seen)))
            merged = outs[0]
            for other in outs[1:]:
                merged = join(merged, other)
            return self.block(stmt.finalbody, merged) if stmt.finalbody else merged
        if hasattr(ast, "Match") and isinstance(stmt, getattr(ast, "Match")):
            self.expressions(stmt, [stmt.subject], state)
            merged = dict(state)
            for case in stmt.cases:
                merged = join(merged, self.block(case.body, dict(state)))
            return merged
        if isinstance(stmt, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)):
            self.nested_scope(stmt, state)
            self.kill(state, stmt.name)
            return state
        if sid not in self._hot and not self._mentions_any(stmt, state):
            return state  # mentions nothing tainted: no effect
        self.simple(stmt, state)
        return state

    def _bound_elsewhere(self, key: Key, branch: ast.If, in_body: bool) -> bool:
        """The name the `if` makes volatile on one branch holds a value on the other path too:
        a parameter, a binding before the `if`, or one in the other branch (`if kw > 1: input =
        Variable(buf, volatile=True)`, `input` being the function's argument)."""
        if "." in key:
            return False
        args = getattr(self.scope, "args", None)
        if args is not None and key in {a.arg for a in args.posonlyargs + args.args + args.kwonlyargs}:
            return True
        other = branch.orelse if in_body else branch.body
        if other and isinstance(other[-1], (ast.Return, ast.Raise, ast.Continue, ast.Break)):
            return False  # the other path never gets past the `if`
        ends = [(s.lineno, s.end_lineno) for s in other]
        for node in self.index.names.get(key, ()):
            if isinstance(node.ctx, ast.Load) or self.index.function_of(node) is not self.scope:
                continue
            if any(a <= node.lineno <= b for a, b in ends) or self._earlier_on_path(node, branch):
                return True
        return False

    def _earlier_on_path(self, node: ast.AST, branch: ast.If) -> bool:
        """`node` binds in a statement that runs before `branch` on its path: in a block that
        holds the `if` (or one of its enclosing statements), earlier in that block; not in the
        other branch of an enclosing `if` (`if a: y = f() elif b: y = g()`)."""
        parents = self.index.parents
        holders = {}  # id of a block's owner -> (field list, position of the path's statement)
        child, cur = branch, parents.get(branch)
        while cur is not None and cur is not self.scope.body and child is not self.scope:
            for name in ("body", "orelse", "finalbody", "handlers"):
                block = getattr(cur, name, None)
                if isinstance(block, list) and any(s is child for s in block):
                    holders[id(block)] = next(i for i, s in enumerate(block) if s is child)
            child, cur = cur, parents.get(cur)
        stmt = self.index.statement_of(node)
        owner = parents.get(stmt)
        for name in ("body", "orelse", "finalbody", "handlers"):
            block = getattr(owner, name, None)
            if isinstance(block, list) and id(block) in holders:
                position = next((i for i, s in enumerate(block) if s is stmt), None)
                return position is not None and position < holders[id(block)]
        return False

    def loop(self, stmt: ast.AST, state: State) -> State:
        entry = dict(state)
        for _ in range(MAX_LOOP_ROUNDS):
            current = dict(entry)
            if isinstance(stmt, (ast.For, ast.AsyncFor)):
                self.begin(stmt)
                tainted, raw = self.eval(stmt.iter, current)
                self.bind(stmt.target, tainted, raw, current, stmt)
                self.end(stmt)
            else:
                self.expressions(stmt, [stmt.test], current)  # type: ignore[attr-defined]
            out = self.block(stmt.body, current)  # type: ignore[attr-defined]
            merged = join(entry, out)
            if merged == entry:
                break
            entry = merged
        if isinstance(stmt, (ast.For, ast.AsyncFor)) and not stmt.orelse:
            # A `for` over a program's data runs at least once: what its body binds anew on
            # every pass (`for t in train: x = Variable(t)`) is what the statements after it
            # read, not a value from before the loop or from the previous pass of an enclosing
            # loop (the last epoch's volatile test batch)
            return {key: value for key, value in entry.items() if key in out}
        return self.block(stmt.orelse, dict(entry))  # type: ignore[attr-defined]

    def expressions(self, stmt: ast.stmt, nodes: List[ast.AST], state: State) -> None:
        if not state and id(stmt) not in self._hot:
            return
        self.begin(stmt)
        for node in nodes:
            self.eval(node, state)
        self.end(stmt)

    # ------------------------------------------------------------------ statements
    def begin(self, stmt: ast.stmt) -> None:
        self._stmt, self._computes, self._records, self._meets = stmt, False, False, False

    def end(self, stmt: ast.stmt) -> None:
        if self._computes:
            self._uses[id(stmt)] = stmt
            if self._records:
                self.result.recording.add(id(stmt))
            if self._meets:
                self.result.meeting.add(id(stmt))
            if self.grad_disabled(stmt):
                self.result.covered.add(id(stmt))
        self._stmt = None

    def simple(self, stmt: ast.stmt, state: State) -> None:
        self.begin(stmt)
        unvolatiled = volatile_false_target(stmt)
        if unvolatiled is not None:
            self.kill(state, unvolatiled)  # 0.3: `x.volatile = False` made x plain data again
        elif isinstance(stmt, ast.Assign):
            items = self._items(stmt.value, state)
            tainted, raw = self.eval(stmt.value, state)
            for target in stmt.targets:
                if items is not None and isinstance(target, (ast.Tuple, ast.List)) and len(target.elts) == items[0] \
                        and not any(isinstance(e, ast.Starred) for e in target.elts):
                    for i, elt in enumerate(target.elts):
                        self.bind(elt, tainted and i in items[1], raw, state, stmt)
                else:
                    if not tainted and self._sliced_write(target, state):
                        # `output[:, k] = model(x)` into a volatile buffer: 0.3 kept the buffer
                        # volatile (the write recorded nothing); unwrapped, the buffer now
                        # records the write, as `+=` would
                        self._computes = True
                        if self.may_need_grad(stmt.value):
                            self._records = self._meets = True
                            self._partner(stmt.value)
                            if self._calls_a_module(stmt.value):
                                self.result.buffer_writes.append((stmt, key_of(target.value)))  # type: ignore
                    self.bind(target, tainted, raw, state, stmt)
                    if items is not None and isinstance(target, ast.Name) and self._bound_once(target.id):
                        self._item_names[target.id] = items
        elif isinstance(stmt, ast.AugAssign):
            tainted, raw = self.eval(stmt.value, state)
            old = self._read_target(stmt.target, state)
            if tainted or old:
                self._computes = True
                other = stmt.target if tainted else stmt.value
                if not (tainted and old) and self.may_need_grad(other) and not (
                        tainted and number_total(self.index, self.scope, stmt)):
                    self._records = self._meets = True
                    self._partner(other)
                self.bind_weak(stmt.target, state, stmt, raw=False)
        elif isinstance(stmt, ast.AnnAssign):
            if stmt.value is not None:
                tainted, raw = self.eval(stmt.value, state)
                self.bind(stmt.target, tainted, raw, state, stmt)
        elif isinstance(stmt, ast.Return):
            if stmt.value is not None:
                tainted, raw = self.eval(stmt.value, state, moved=True)
                if not tainted and isinstance(stmt.value, ast.Name):
                    # `example.tokens = Variable(...)`, then `return example`: the object
                    # returned carries the value to the caller
                    carried = under(state, stmt.value.id)
                    tainted, raw = bool(carried), any(state[k] for k in carried)
                if tainted:
                    self.escape("return", "`return`", stmt, raw)
        elif isinstance(stmt, ast.Delete):
            for target in stmt.targets:
                key = key_of(target)
                if key:
                    self.kill(state, key)
        elif isinstance(stmt, (ast.Global, ast.Nonlocal)):
            for name in stmt.names:
                if name in state:
                    self.escape("global", f"the global `{name}`", stmt, state[name])
        elif isinstance(stmt, ast.Expr):
            self.eval(stmt.value, state, moved=True)
        else:
            for node in header_nodes(stmt):
                self.eval(node, state)
        seeded = self.seeds.get(id(stmt))
        if seeded:
            for key, raw in seeded.items():
                for marked in (key, self._iterated(stmt, key)):
                    if marked is not None:
                        self._note(marked)
                        state[marked] = raw
                        self.result.tainted_keys.add(marked)
                self.result.defs.add(id(stmt))
        self.end(stmt)

    def _iterated(self, stmt: ast.stmt, key: Key) -> Optional[Key]:
        """`batch` of `for v in batch: v.volatile = True`: the list whose element the loop's
        target is (the element is the list's own object, so the list now holds a volatile one)."""
        node = self.index.parents.get(stmt)
        while node is not None and node is not self.scope:
            if isinstance(node, (ast.For, ast.AsyncFor)) and isinstance(node.target, ast.Name) \
                    and node.target.id == key:
                return key_of(node.iter)
            node = self.index.parents.get(node)
        return None

    def _calls_a_module(self, value: ast.AST) -> bool:
        """A call in `value` that may run a module (`model(x)`; not `torch.cat`, `x.cuda()`, a
        loop's number): under a region its output has no graph, where 0.3 built one."""
        return any(isinstance(node, ast.Call) and not self._pure_callee(node.func)
                   and not (isinstance(node.func, ast.Attribute) and node.func.attr in DATA_METHODS)
                   for node in ast.walk(value))

    def _sliced_write(self, target: ast.AST, state: State) -> bool:
        """`x[:, k] = ...` into a tainted `x`: a slice among several indices says a tensor (not a
        list's item, a list's slice or a dict's key, where the value stored keeps its own graph)."""
        if not isinstance(target, ast.Subscript) or not self._read_target(target, state):
            return False
        index = target.slice
        return isinstance(index, ast.Tuple) and any(
            isinstance(p, ast.Slice) or isinstance(p, ast.Constant) and p.value is Ellipsis for p in index.elts)

    def _read_target(self, target: ast.AST, state: State) -> bool:
        key = key_of(target.value if isinstance(target, ast.Subscript) else target)
        return key is not None and key in state

    def bind(self, target: ast.AST, tainted: bool, raw: bool, state: State, stmt: ast.stmt) -> None:
        if isinstance(target, (ast.Tuple, ast.List)):
            for elt in target.elts:
                self.bind(elt, tainted, raw, state, stmt)
            return
        if isinstance(target, ast.Starred):
            self.bind(target.value, tainted, raw, state, stmt)
            return
        if isinstance(target, ast.Subscript):
            self.eval(target.slice, state)
            if tainted:
                self.bind_weak(target, state, stmt, raw)
            return
        key = key_of(target)
        if key is None:
            if isinstance(target, ast.Attribute):
                self.eval(target.value, state)
                if tainted:
                    self.escape("attribute", f"`{describe(target)}`", stmt, raw, target)
            return
        if "volatile" == key.rpartition(".")[2]:
            return  # `x.volatile = ...`: handled as a seed or a kill by the caller
        if tainted:
            self.kill(state, key)
            self._note(key)
            state[key] = raw
            self.result.tainted_keys.add(key)
            self.result.defs.add(id(stmt))
            if isinstance(target, ast.Attribute):
                self.escape("attribute", f"`{key}`", stmt, raw, target)
        else:
            self.kill(state, key)

    def bind_weak(self, target: ast.AST, state: State, stmt: ast.stmt, raw: bool) -> None:
        """`x[i] = v`, `x += v`, `x.append(v)`: x now (also) holds the value."""
        holder = target.value if isinstance(target, ast.Subscript) else target
        key = key_of(holder)
        if key is None:
            self.escape("container", f"`{describe(holder)}`", stmt, raw)
            return
        self._note(key)
        state[key] = state.get(key, raw) and raw
        self.result.tainted_keys.add(key)
        self.result.defs.add(id(stmt))
        if isinstance(holder, ast.Attribute):
            self.escape("attribute", f"`{key}`", stmt, raw, holder)

    def escape(self, kind: str, what: str, stmt: ast.stmt, raw: bool, node: Optional[ast.AST] = None) -> None:
        for e in self.result.escapes:
            if e.kind == kind and e.what == what and e.stmt is stmt:
                e.raw = e.raw and raw
                return
        self.result.escapes.append(Escape(kind, what, stmt, raw, node))

    def nested_scope(self, stmt: ast.AST, state: State) -> None:
        """A def or class reading a tainted name: the value escapes into a closure."""
        if not state or isinstance(stmt, ast.ClassDef):
            return
        for name in self.index.loaded_names(stmt):  # the first name read that is tainted
            if name in state:
                self.escape("closure", f"the closure `{stmt.name}`", stmt, state[name], stmt)  # type: ignore[attr-defined]
                return
