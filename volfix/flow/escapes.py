"""Following a raw volatile value that leaves its scope by other ways than a helper's return
(SPEC §2.6): hard-coded helpers' callers, attributes read by the class's other methods
(`self.priors = Variable(...)`), closures; and why a group gets no region (the value only
leaves, a caller trains on it, every call is already under `no_grad`).
"""
from __future__ import annotations

import ast
import builtins
from typing import Dict, List, Optional, Set, Tuple

from ..findings import W_INFO, W_NONE, W_UNSAFE, Source
from ..model import Applicability
from ..syntax import names as nm
from ..syntax.index import FUNCTIONS
from .calls import ELSEWHERE_ATTRIBUTE as ATTRIBUTE, FRAMEWORK_METHODS, argument_for, call_sites, flag_kind
from .defuse import ENTRY, Graph
from .follow import CallerReport, HelperFlag, HelperFollower, HelperRecord, awaiting_note
from .scalars import ScalarValues
from .shapes import moved_module
from .taint import TaintAnalysis
from .taint_items import returned_items
from .bindings import NameBindings
from .consumed import consumed, framework_method, hands_back
from .values import key_of


# Returned containers: the caller may take the item that is not volatile.
_DISPLAYS = (ast.Dict, ast.List, ast.Tuple, ast.Set)
MAX_HANDED = 4  # functions a result is followed through when each only hands it back (`_callers_consume`)


class Follower(HelperFollower):
    """The planner's follower: helpers' flags (`HelperFollower`) and the other escapes."""

    def __init__(self, ctx, planner):
        super().__init__(ctx, planner)
        self._calls_memo: Dict[int, list] = {}  # `_calls_of`, per function

    # ------------------------------------------------------------------ escapes
    def follow_escapes(self, group) -> list:
        """Raw values leaving the group's scope: hard-coded helpers' callers, attribute
        readers, closures. Marks the escapes it follows."""
        out: list = []
        taint = group.taint
        no_grad = group.flag is None
        records = any(id(s) in taint.recording for s in taint.uses_outside())
        handed = ("return", "yield")
        raw_out = any(e.raw and e.kind in handed for e in taint.escapes)
        returned_to: Optional[CallerReport] = None
        for escape in taint.escapes:
            # A value computed without recording (`v = v / 2`, no region placed) and handed back
            # is as volatile as the value itself was in 0.3: its callers are followed too (when
            # the function hands back no raw value, whose following decides the callers' regions).
            computed = escape.kind in handed and not records and not raw_out
            if not (escape.raw or computed) or escape.stmt is None:
                continue
            # A generator's yield goes to its callers as a return does: `for i, x in batches(n):`
            # iterates it, so the region around that loop runs its body (PytorchWaveNetVocoder's
            # `decode_generator`).
            if escape.kind in handed and no_grad and isinstance(group.scope, FUNCTIONS) \
                    and not framework_method(group.scope, self.index) and not records:
                called = escape.kind == "return" and call_sites(self.index, group.scope)[0]
                partly = self.plain_return(group) if called else None
                if partly is not None:
                    escape.partly = partly  # type: ignore[attr-defined]
                    continue  # the callers' region would also cover the calls that get plain data
                # One report per group: its other `return`s hand the value to the same calls.
                report = returned_to
                if report is None:
                    report = returned_to = CallerReport()
                    items = returned_items(group.scope, taint, [s.node for s in group.sources]) \
                        if escape.kind == "return" else None
                    for s in group.sources:
                        if id(group.scope) in self._helper_done:
                            break
                        out.extend(self.follow_callers(s, group.scope, HelperFlag(None), report, visited=set(),
                                                       items=items))
                        break
                    self._helper_done.add(id(group.scope))
                    self.ctx.helpers.append(HelperRecord(group.sources[0], group.scope, HelperFlag(None), report))
                escape.followed = report  # type: ignore[attr-defined]
            elif escape.kind == "attribute" and no_grad:
                found = self.follow_attribute(group, escape)
                if found is not None:
                    out.extend(found)
                    escape.followed = True  # type: ignore[attr-defined]
            elif escape.kind == "closure" and no_grad and isinstance(escape.node, FUNCTIONS):
                names = {n.id for n in ast.walk(escape.node) if isinstance(n, ast.Name)}
                keys = [k for k in taint.tainted_keys if k in names]
                if keys:
                    for k in keys:
                        out.append(Source(group.sources[0].finding, escape.node, escape.node, escape.node,
                                          None, seed=k))
                    escape.followed = True  # type: ignore[attr-defined]
        return out

    def follow_attribute(self, group, escape) -> Optional[list]:
        """`self.priors` stored in one method, read in the class's other methods: each read
        becomes a source there (not followed when the class assigns it elsewhere too, unless
        that assignment is volatile as well: `if gpu: self.z = Variable(z.cuda(), volatile=True)`
        `else: self.z = Variable(z, volatile=True)`)."""
        scope = group.scope
        node = escape.node
        cls = self.index.method_class(scope)
        if cls is None or not isinstance(node, ast.Attribute) or not isinstance(node.value, ast.Name) \
                or not scope.args.args or node.value.id != scope.args.args[0].arg:  # type: ignore[attr-defined]
            return None
        reads, stores = [], []
        for other, method in self._own_attribute(cls, node):
            if isinstance(other.ctx, ast.Store):
                if not self._stores_volatile(self.index.statement_of(other), other) \
                        and not self._overwritten(other, method, escape.stmt, node.attr) \
                        and not self._carried(other, method):
                    stores.append((other, method))
            else:
                reads.append((other, method))
        if stores or not reads:
            escape.detail = (reads, stores)  # type: ignore[attr-defined]
            return None
        out = []
        for other, method in reads:
            if id(other) in self._followed_attributes or method is scope or self.ctx.covered(other):
                continue
            self._followed_attributes.add(id(other))
            out.append(Source(group.sources[0].finding, other, self.index.statement_of(other), method, None,
                              call_site=True))
        return out

    def _own_attribute(self, cls: ast.ClassDef, node: ast.Attribute):
        """(each other `self.<attr>` of `node`'s attribute, its method) in the methods of `cls`
        (`self` being a method's first parameter, whatever its name)."""
        for other in self.index.attributes.get(node.attr, []):
            method = self.index.function_of(other)
            if other is not node and isinstance(method, FUNCTIONS) and self.index.method_class(method) is cls \
                    and method.args.args and isinstance(other.value, ast.Name) \
                    and other.value.id == method.args.args[0].arg:  # type: ignore[attr-defined]
                yield other, method

    def _stores_volatile(self, stmt: ast.stmt, target: ast.AST) -> bool:
        """`self.z = Variable(..., volatile=True)` (or `self.z, self.y = Variable(..., volatile=True),
        ...`): the attribute is stored volatile here too."""
        if not isinstance(stmt, ast.Assign) or len(stmt.targets) != 1:
            return False
        value = _value_for(stmt.targets[0], stmt.value, target)
        if not isinstance(value, ast.Call):
            return False
        call = self.ctx.variable_call(value)
        return call is not None and call.volatile_truth is True

    def _carried(self, store: ast.Attribute, method: ast.AST) -> bool:
        """`out, self.hidden = self.cell(x, self.hidden)`: the store's value is computed from the
        attribute's own value (read earlier in the same method, not through `.data`), so in 0.3
        it stayed volatile once it was (fact 4): an RNN's hidden state carried from step to
        step. Such a store keeps the attribute volatile; its statement is one of the reads."""
        stmt = self.index.statement_of(store)
        key = f"{store.value.id}.{store.attr}"  # type: ignore[attr-defined]
        taint = TaintAnalysis(method, self.index, entry={key: True}, plain=self.ctx.is_plain,
                              wrappers=self.ctx.wrappers()).run()
        return id(stmt) in taint.defs

    def _overwritten(self, store: ast.Attribute, method: ast.AST, volatile_stmt: ast.stmt, attr: str) -> bool:
        """`self.z = torch.zeros(n)` ... `self.z = Variable(self.z, volatile=True)` in the same
        method: the plain store comes first and the volatile one always follows it (not in a
        loop, and an `if` has a volatile store in its other branch too), so the other methods
        only see the volatile value."""
        if method is not self.index.function_of(volatile_stmt) or store.lineno >= volatile_stmt.lineno:
            return False
        cur: ast.AST = volatile_stmt
        while True:
            parent = self.index.parents.get(cur)
            if parent is None or parent is method:
                return parent is method
            if isinstance(parent, (ast.For, ast.AsyncFor, ast.While, ast.ExceptHandler)) or (
                    isinstance(parent, ast.Try) and cur not in parent.body):
                return False
            if isinstance(parent, ast.If):
                other = parent.orelse if cur in parent.body else parent.body
                if not any(isinstance(s, ast.Assign) and len(s.targets) == 1
                           and any(self._stores_volatile(s, t) for t in _attribute_targets(s.targets[0], attr))
                           for branch in other for s in ast.walk(branch)):
                    return False
            cur = parent

    def plain_return(self, group) -> Optional[int]:
        """A line where the helper may return the volatile value's name holding something else:
        `if inputs is None: inputs = Variable(..., volatile=True)` ... `return inputs` hands the
        caller's own `inputs` back on the other path (seq2seq's `_validate_args`), and a region
        at the callers would cover training too. None when the name holds the value on every
        path (a list filled with volatile values counts as holding them)."""
        fn, taint = group.scope, group.taint
        escaping = {id(e.stmt) for e in taint.escapes if e.kind == "return"}
        returns = [n for n in ast.walk(fn) if isinstance(n, ast.Return) and id(n) in escaping]
        graph = Graph.build(fn)
        if graph is None:
            return None
        keys = set(taint.tainted_keys)
        for r in returns:
            step = graph.step_of.get(id(r))
            if step is None:
                continue
            names = {n.id for n in ast.walk(r.value) if isinstance(n, ast.Name) and n.id in keys}
            for name in names:
                for b in graph.reaching_bindings(step, name):
                    node = graph.steps[b].node
                    if b == ENTRY or (isinstance(node, ast.Assign) and id(node) not in taint.defs
                                      and not isinstance(node.value, _FILLABLE)):
                        return r.lineno  # a parameter or a plain value (not a list filled later)
        return None

    def open_escape(self, group) -> Optional[str]:
        """The unsafe note for raw escapes nobody follows."""
        for escape in group.taint.escapes:
            partly = getattr(escape, "partly", None)
            if partly is not None:
                return (f"unsafe fix: `{group.scope.name}()` returns the value volatile only on some paths (not "
                        f"at line {partly}), so its callers get no region")
            if not escape.raw or getattr(escape, "followed", None):
                continue
            if escape.kind in ("return", "yield") and group.flag is not None:
                # A flag that is not the helper's parameter (`volatile=not self.train`) rides
                # out with the value: no caller can be given its region, so nothing here may
                # claim that no region is needed.
                flag = group.flag.text
                return (f"unsafe fix: the value leaves through {escape.what} (line {escape.stmt.lineno}) volatile "
                        f"when `{flag}` is true, and volfix cannot follow it to where it is computed with")
            detail = getattr(escape, "detail", None)
            if detail and detail[1] and detail[0]:
                reads, stores = detail
                lines = ", ".join(str(n) for n in sorted({o.lineno for o, _ in reads}))
                return (f"unsafe fix: volatility escapes through {escape.what}, whose reads (line {lines}) are not "
                        f"covered: it is also assigned at line {stores[0][0].lineno}")
            return f"unsafe fix: volatility escapes through {escape.what} (line {escape.stmt.lineno}) and its consumers are not covered"
        return None

    def caller_trains(self, group, backward_only: bool = False) -> Optional[str]:
        """A value computed in the region and returned carries no graph (as in 0.3): unsafe
        only when a caller in this file trains on it (`backward_only`: only that, not a caller
        whose result meets a value that may require grad). Not backward_only, the same holds
        for a value the region keeps where other functions read it (`stored_readers`)."""
        scope = group.scope
        returned = [e for e in group.taint.escapes if e.kind in ("return", "yield") and not e.raw]
        if not isinstance(scope, FUNCTIONS):
            return None
        names = NameBindings(self.index)  # `calls_a_module`, for every caller
        if returned and not (backward_only and any(isinstance(getattr(e.stmt, "value", None), _DISPLAYS)
                                                   for e in returned)):
            # (`return {"a": a, "b": b}`: what the caller trains on may be another item)
            found = self._callers_consume(scope, group, names, backward_only, f"the result of `{scope.name}()`",
                                          {id(scope)})
            if found is not None:
                return found
        if backward_only:
            return None
        if returned and self.index.method_class(scope) is not None:
            other = call_sites(self.index, scope)[1]  # `self.run_full` read, not called
            if other:
                # `self.run = self.run_full_monger if mem else self.run_full`, then `embedder.run(model,
                # ...)` in another file: the callers, and what they compute with the result, are unseen
                return (f"unsafe fix: `{scope.name}()` is also used as a value (line {other[0]}), so volfix "
                        "cannot see what its callers compute with the result, which 0.3 kept volatile")
        for key, stmt, reader, read in self.stored_readers(group):
            # a read on an instance follows from the read itself: its name is bound before it
            taint = self._region_output(reader, entry={key: False}) if read is None else \
                self._region_output(reader, sources=[read])
            by = f"`{reader.name}()`" if isinstance(reader, FUNCTIONS) else "the module's code"  # type: ignore[attr-defined]
            if read is not None:
                by = f"{by} as `{self.ctx.src.segment(read)}` (line {read.lineno})"
            found = self._consumed(taint, reader, names, False,
                                   f"the value kept in `{key}` (line {stmt.lineno}), read by {by},",
                                   f"{by} trains on the value kept in `{key}` (line {stmt.lineno})")
            if found is not None:
                return found
        return None

    def called_elsewhere(self, group) -> Optional[str]:
        """The region's output returned by a function (or handed back by the functions of this
        file calling it) that another file of the project calls (`Links.called_elsewhere`):
        what that caller computes with it volfix does not see, and 0.3 kept it volatile."""
        called = dict(self.ctx.links.called_elsewhere) if self.ctx.links is not None else {}
        if not called or not isinstance(group.scope, FUNCTIONS):
            return None
        kept = self.kept_for_elsewhere(group, called)
        if kept is not None:
            return kept
        if not any(e.kind in ("return", "yield") and not e.raw for e in group.taint.escapes):
            return None
        chain, seen = [group.scope], {id(group.scope)}
        for fn in chain:
            site = called.get(fn.name) if self.export_key(fn) is not None else None  # type: ignore[attr-defined]
            if site is not None:
                via = "" if fn is group.scope else f", handed back by `{fn.name}()`,"  # type: ignore[attr-defined]
                return (f"unsafe fix: the result of `{group.scope.name}()`{via} goes to a caller in another file "
                        f"({site}) that volfix does not follow; 0.3 kept what it computes with the result volatile")
            if len(chain) > MAX_HANDED:
                break
            for _, caller, taint in self._calls_of(fn):
                if isinstance(caller, FUNCTIONS) and id(caller) not in seen and hands_back(taint):
                    seen.add(id(caller))
                    chain.append(caller)
        return None

    def kept_for_elsewhere(self, group, called: dict) -> Optional[str]:
        """The region's output kept on `self.feat` by a method of a class, where another file of
        the project reads the attribute and computes with it (`Links.called_elsewhere`'s
        `.feat`): 0.3 kept that computation volatile, which the region does not reach."""
        cls = self.index.method_class(group.scope)
        owner = group.scope.args.args[0].arg if cls is not None and group.scope.args.args else None
        for escape in group.taint.escapes:
            node = escape.node
            if escape.raw or escape.kind != "attribute" or owner is None or not isinstance(node, ast.Attribute) \
                    or not isinstance(node.value, ast.Name) or node.value.id != owner:
                continue
            site = called.get(ATTRIBUTE + node.attr)
            if site is not None and escape.stmt is not None:
                return (f"unsafe fix: the region's output is kept in `{owner}.{node.attr}` (line "
                        f"{escape.stmt.lineno}), which a file volfix does not follow reads and computes with "
                        f"({site}); 0.3 kept that computation volatile")
        return None

    def a_caller_trains(self, fn: ast.AST) -> Optional[int]:
        """The line of a call of `fn` in this file whose caller trains on the result (any item
        of it: `robust_ce, ..., _ = robust_loss_cascade(...)`, then `robust_ce.backward()`)."""
        if not isinstance(fn, FUNCTIONS):
            return None
        names = NameBindings(self.index)
        for site, caller, taint in self._calls_of(fn):
            if self._consumed(taint, caller, names, True, "", "") is not None:
                return site.lineno
        return None

    def _calls_of(self, fn: ast.AST) -> List[Tuple[ast.Call, ast.AST, object]]:
        """Each call of `fn` in this file (by its name, and on this file's instances of its
        class) with the function making it and how that function computes on with the result
        (`_region_output`), found once per `fn`: `_callers_consume` and `called_elsewhere` walk
        the same calls, for every group whose region `fn` returns."""
        memo = self._calls_memo
        if id(fn) not in memo:
            memo[id(fn)] = [(site, caller, self._region_output(caller, sources=[site]))
                            for site in call_sites(self.index, fn)[0] + self.instance_calls(fn)
                            for caller in (self.index.function_of(site),) if caller is not fn]
        return memo[id(fn)]

    def _callers_consume(self, fn: ast.AST, group, names: NameBindings, backward_only: bool, what: str,
                         seen: Set[int], depth: int = 0) -> Optional[str]:
        """`caller_trains` at each call of `fn` (whose result carries no graph), and on at the
        callers of a caller that only hands that result back (`unwrap()` returning
        `self.unwrap_sentence(s)`, called by `forward`): what the last one computes with it
        decides."""
        for site, caller, taint in self._calls_of(fn):
            if fn is group.scope and self._never_volatile(group, site):
                continue
            at = f"{what} (line {site.lineno})" + ("," if depth else "")
            found = self._consumed(taint, caller, names, backward_only, at,
                                   f"the call of `{fn.name}()` at line {site.lineno} trains on the result")  # type: ignore[attr-defined]
            if found is not None:
                return found
            if isinstance(caller, FUNCTIONS) and id(caller) not in seen and depth < MAX_HANDED and hands_back(taint):
                seen.add(id(caller))
                found = self._callers_consume(caller, group, names, backward_only,
                                              f"{what} (line {site.lineno}), handed back by `{caller.name}()`", seen,
                                              depth + 1)
                if found is not None:
                    return found
        return None

    def _region_output(self, fn: ast.AST, **start):
        """How `fn` computes on with a region's output (`sources` it returns from, or an
        `entry` it reads), a value that carries no graph (`raw_sources=False`)."""
        return TaintAnalysis(fn, self.index, raw_sources=False, wrappers=self.ctx.wrappers(),
                             grad_disabled=lambda st: self.ctx.covered(st), **start).run()

    def lazy_return(self, group) -> Optional[str]:
        """`return map(model, inputs)`, `return (model(x) for x in xs)`: the helper hands back a
        lazy value, so the forwards it holds run when the caller iterates it, after the region
        (0.3 kept them volatile wherever they ran)."""
        names = NameBindings(self.index)
        for e in group.taint.escapes:
            if e.kind != "return" or not isinstance(e.stmt, ast.Return) or e.stmt.value is None:
                continue
            for node in _returned_parts(e.stmt.value):
                lazy = isinstance(node, ast.GeneratorExp) and any(
                    isinstance(n, (ast.Call, ast.BinOp)) for n in ast.walk(node.elt)) or isinstance(node, ast.Call) \
                    and node.args and not (isinstance(node.args[0], ast.Name) and hasattr(builtins, node.args[0].id)) \
                    and any(isinstance(node.func, ast.Name) and node.func.id == f and not names.bindings(f, node)
                            and not self.index.module_names.bound(f) for f in ("map", "filter"))
                if lazy:
                    what = "a generator" if isinstance(node, ast.GeneratorExp) else f"`{node.func.id}(...)`"  # type: ignore[attr-defined]
                    return (f"unsafe fix: `{group.scope.name}()` returns {what} (line {e.stmt.lineno}), which "
                            "computes when its caller iterates it, after the region")
        return None

    def _consumed(self, taint, fn: ast.AST, names: NameBindings, backward_only: bool, what: str,
                  trains: str) -> Optional[str]:
        return consumed(self.index, taint, fn, names, backward_only, what, trains)

    def stored_readers(self, group) -> List[Tuple[str, ast.stmt, ast.AST, Optional[ast.AST]]]:
        """(key, storing statement, reading function, the read) for each value computed in the
        region and kept where other functions of the file read it: `self.feat = self.enc(x)`
        read by the class's other methods (when no other statement of the class stores
        `self.feat`, so that what they read is this value; the read None: `key` holds it from
        the method's start) or on an instance outside them (`instance_readers`), or a
        module-level list it is appended to (`feats.append(h)`) read by other module-level
        functions."""
        scope, index = group.scope, self.index
        out: List[Tuple[str, ast.stmt, ast.AST, Optional[ast.AST]]] = []
        cls = index.method_class(scope)
        owner = scope.args.args[0].arg if cls is not None and scope.args.args else None  # type: ignore[attr-defined]
        bound = index.global_reads(scope)
        for escape in group.taint.escapes:
            if escape.raw or escape.stmt is None:
                continue
            node = escape.node
            if escape.kind == "attribute" and owner is not None and isinstance(node, ast.Attribute) \
                    and isinstance(node.value, ast.Name) and node.value.id == owner:
                reads, stored_elsewhere = [], False
                for other, method in self._own_attribute(cls, node):
                    stmt = index.statement_of(other)
                    if isinstance(other.ctx, ast.Store) or _stores_into(stmt, other):
                        stored_elsewhere = stored_elsewhere or stmt is not escape.stmt
                    elif method is not scope:
                        reads.append(method)
                if not stored_elsewhere:
                    key = f"{owner}.{node.attr}"
                    out.extend((key, escape.stmt, m, None) for m in dict.fromkeys(reads))
                    out.extend((key, escape.stmt, m, n) for m, n in self.instance_readers(cls, node.attr))
        for key in group.taint.tainted_keys:
            if "." in key or key not in bound or not isinstance(index.parents.get(scope), ast.Module):
                continue
            stmts = [s for s in ast.walk(scope) if isinstance(s, ast.stmt) and id(s) in group.taint.defs
                     and any(isinstance(n, ast.Name) and n.id == key for n in ast.walk(s))]
            if not stmts:
                continue
            for name in index.global_readers(key):
                reader = index.module_functions.get(name)
                if reader is not None and reader is not scope:
                    out.append((key, stmts[0], reader, None))
        return out

    def instance_readers(self, cls: ast.ClassDef, attr: str) -> List[Tuple[ast.AST, ast.AST]]:
        """(the function or module reading it, the read) for each read of the attribute outside
        the class's methods on a name bound only to instances of `cls` made in this file (`enc =
        Encoder()`, then `head(enc.feat)` after `enc.run(x)` kept the region's output there);
        none when code outside the class stores the attribute (`index.written_on_others`)."""
        index = self.index
        if index.written_on_others(attr):
            return []
        names = NameBindings(index)
        out: List[Tuple[ast.AST, ast.AST]] = []
        for node in index.attributes.get(attr, []):
            holder = node.value
            if not isinstance(node.ctx, ast.Load) or not isinstance(holder, ast.Name):
                continue
            reader = index.function_of(node) or index.tree
            method = reader
            while isinstance(method, FUNCTIONS) and index.method_class(method) is None:
                method = index.function_of(method)
            if isinstance(method, FUNCTIONS) and index.method_class(method) is cls:
                continue  # the class's own methods: `_own_attribute`
            made = names.bindings(holder.id, node)
            if made and all(isinstance(v, ast.Call) and isinstance(v.func, ast.Name) and v.func.id == cls.name
                            for v in made):
                out.append((reader, node))
        return out

    def instance_calls(self, fn: ast.AST) -> List[ast.Call]:
        """`net(h, deg)` after `net = Net()`: the calls of this file's instances of the class
        whose `forward` (or `__call__`) `fn` is (`call_sites` leaves those methods to the
        frameworks that call them by name)."""
        cls = self.index.method_class(fn)
        method = getattr(fn, "name", None)
        # `emb.run(x)`: a method named like a framework's (`call_sites` does not list them by
        # name) called on this file's instance of its class (superpoint_graph's CloudEmbedder.run)
        by_attribute = method in FRAMEWORK_METHODS and method not in ("forward", "__call__")
        if cls is None or not (method in ("forward", "__call__") or by_attribute):
            return []
        made = [self.index.parents.get(n) for n in self.index.names.get(cls.name, ())]
        made = [c for c in made if isinstance(c, ast.Call) and isinstance(c.func, ast.Name) and c.func.id == cls.name]
        names = set()
        for call in made:
            call = moved_module(self.index, call)  # `net = Net().cuda()`
            holder = self.index.parents.get(call)
            if isinstance(holder, ast.Assign) and holder.value is call:
                names.update(key_of(t) for t in holder.targets if isinstance(t, (ast.Name, ast.Attribute)))
        values = ScalarValues(self.index)
        out = []
        for name in names - {None}:
            if by_attribute:
                out += [call for call in self.index.calls.get(method, ()) if isinstance(call.func, ast.Attribute)
                        and call.func.attr == method and key_of(call.func.value) == name]
                continue
            for call in self.index.calls.get(name.rpartition(".")[2], ()):
                if key_of(call.func) == name:
                    classes = values.instance_classes(call.func, call)
                    if classes and cls in classes:
                        out.append(call)
        return out

    def _never_volatile(self, group, site: ast.Call) -> bool:
        """A call that passes a literal making the group's flag false (`run(x, train=True)` for
        `volatile=not train`): its result was never volatile."""
        flag = group.flag
        if flag is None:
            return False
        node, negated = flag.node, False
        if isinstance(node, ast.UnaryOp) and isinstance(node.op, ast.Not):
            node, negated = node.operand, True
        if not isinstance(node, ast.Name) or node.id not in nm.function_params(group.scope):
            return False
        arg, known = argument_for(self.index, site, group.scope, node.id)
        kind = flag_kind(arg, known)
        if kind in ("true", "false", "none"):
            volatile = (kind == "true") != negated
            return not volatile
        return False

    def called_under_no_grad(self, fn: ast.AST) -> Optional[int]:
        sites, _ = call_sites(self.index, fn)
        for site in sites:
            if self.ctx.covered(site):
                return site.lineno
        return None

    def no_region_note(self, group) -> Tuple[Optional[str], int, object]:
        """Why the sources are only unwrapped, when no region is placed."""
        taint = group.taint
        followed = [e for e in taint.escapes if getattr(e, "followed", None)]
        if followed:
            e = followed[0]
            report = e.followed if isinstance(e.followed, CallerReport) else None  # type: ignore[attr-defined]
            if report is not None:
                verb = "yielded" if e.kind == "yield" else "returned"
                if report.outside:
                    return (f"no fix: the value is {verb} to calls outside this run ({', '.join(report.outside[:3])})",
                            W_NONE, None)
                if report.unresolved:
                    return (f"unsafe fix: the value is {verb} where volfix cannot follow it "
                            f"({', '.join(dict.fromkeys(report.unresolved))})", W_UNSAFE, Applicability.UNSAFE)
                if report.elsewhere:
                    return awaiting_note("callers", report.elsewhere), W_UNSAFE, Applicability.UNSAFE
                if not report.true_calls:
                    return (f"no fix: the value is {verb} and nothing calls the function here: its callers decide",
                            W_NONE, None)
                return f"no region here: the callers computing with the {verb} value get it", W_INFO, None
            return f"no region here: the reads of {e.what} get it", W_INFO, None
        escape = self.open_escape(group)
        if escape is not None:
            if group.flag is not None:  # nothing at all would restore the flag's meaning: a finding
                return "no fix: " + escape[len("unsafe fix: "):], W_NONE, None
            return escape, W_UNSAFE, Applicability.UNSAFE
        if taint.uses_outside():
            return "no region needed: nothing here records a graph", W_INFO, None
        return "no region needed: nothing computes with the value once unwrapped", W_INFO, None


# Values a name may be given and filled with the volatile value later (`out = []`,
# `out.append(...)`), or that volfix cannot see into (a call): not "plain" for plain_return.
_FILLABLE = (ast.List, ast.Tuple, ast.Dict, ast.Set, ast.ListComp, ast.DictComp, ast.SetComp, ast.Call)


def _returned_parts(value: ast.AST) -> List[ast.AST]:
    """The value a `return` hands back, and the items of a tuple or list it builds."""
    if isinstance(value, (ast.Tuple, ast.List)):
        return [p for e in value.elts for p in _returned_parts(e)]
    return [value]


def _stores_into(stmt: ast.stmt, attribute: ast.Attribute) -> bool:
    """`self.feats.append(h)`, `self.feats[i] = h`, `self.total += h`: the statement changes
    what the attribute holds without assigning it."""
    if isinstance(stmt, ast.AugAssign):
        return stmt.target is attribute
    if isinstance(stmt, ast.Assign):
        return any(isinstance(t, ast.Subscript) and t.value is attribute for t in stmt.targets)
    return isinstance(stmt, ast.Expr) and isinstance(stmt.value, ast.Call) \
        and isinstance(stmt.value.func, ast.Attribute) and stmt.value.func.value is attribute \
        and stmt.value.func.attr in ("append", "extend", "insert", "add", "update")


def _value_for(target: ast.AST, value: ast.AST, wanted: ast.AST) -> Optional[ast.AST]:
    """The part of `value` that an assignment stores into `wanted` (`a, b = x, y`: `y` for `b`)."""
    if target is wanted:
        return value
    if isinstance(target, (ast.Tuple, ast.List)) and isinstance(value, (ast.Tuple, ast.List)) \
            and len(target.elts) == len(value.elts):
        for t, v in zip(target.elts, value.elts):
            found = _value_for(t, v, wanted)
            if found is not None:
                return found
    return None


def _attribute_targets(target: ast.AST, attr: str) -> List[ast.Attribute]:
    """The `<name>.<attr>` stores among an assignment's targets."""
    return [t for t in ast.walk(target) if isinstance(t, ast.Attribute) and t.attr == attr
            and isinstance(t.value, ast.Name)]
