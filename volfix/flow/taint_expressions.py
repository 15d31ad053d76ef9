"""The expressions' half of the taint walk (`flow.taint.TaintAnalysis` inherits it): the
(tainted, raw) value of an expression under a state, noting on the statement being walked
whether it computes with the value, may record a graph there (it meets something that may need
grad), or trains (the value reaches `backward()` or a call that trains).
"""
from __future__ import annotations

import ast
from typing import Tuple

from ..syntax.index import COMPREHENSIONS
from .values import KILL_ATTRS, KILL_FUNCS, MOVE_METHODS, MUTATORS, State, combine, describe, key_of, kills, \
    free_callee, keeps_parameter, saves, target_keys, writes_in_place

TEXT_METHODS = frozenset({"format", "format_map", "join"})
# Methods called for what they show or store as numbers, never for a later computation.
REPORTING = frozenset({"print", "log", "info", "debug", "warning", "warn", "error", "write", "set_description",
                       "set_postfix", "add_scalar", "add_scalars", "add_histogram", "add_image", "add_images",
                       "add_text", "add_figure", "add_graph", "add_pr_curve", "scalar_summary", "image_summary",
                       "histo_summary", "plot", "line", "scatter", "image", "images", "text", "heatmap", "flush",
                       "save", "savefig", "dump", "log_value", "log_scalar", "record", "display", "show"})


class TaintExpressions:
    """Reads the walk's sources, state and notes (`sources`, `computing`, `result_free`,
    `raw_sources`, `wrappers`, `index`, `result`, `_stmt`, `_computes`, `_records`, `_meets`) and
    calls back into it (`bind`, `bind_weak`, `escape`, `trains`, `may_need_grad`, ...)."""

    def eval(self, node: ast.AST, state: State, moved: bool = False) -> Tuple[bool, bool]:
        """(tainted, raw) of the expression's value; notes computation on the statement.
        `moved`: the value is only passed on (returned, a bare expression statement)."""
        if id(node) in self.sources:
            self.eval_children(node, state)
            if id(node) in self.computing:
                self._computes = self._records = True
                return (id(node) not in self.result_free), False
            return True, self.raw_sources
        kind = type(node)
        if kind is ast.Name:
            if isinstance(node.ctx, ast.Load) and node.id in state:
                return True, state[node.id]
            return False, False
        if kind is ast.Constant:
            return False, False
        if kind is ast.Attribute:
            if node.attr in KILL_ATTRS:
                self.eval(node.value, state, moved=True)
                return False, False
            key = key_of(node)
            if key is not None and key in state:
                return True, state[key]
            return self.eval(node.value, state, moved=moved)
        if kind is ast.Subscript:
            value = self.eval(node.value, state, moved=moved)
            self.eval(node.slice, state)
            position = self._item_position(node)
            if value[0] and position is not None:  # `batch[1]` of `batch = mem.sample(n)`
                return position, value[1]
            return value
        if kind is ast.Call:
            return self.eval_call(node, state)
        if kind is ast.BinOp and isinstance(node.op, ast.Mult):
            # `[zero_state] * n` repeats the same objects: the value itself, only moved
            for seq, count in ((node.left, node.right), (node.right, node.left)):
                if isinstance(seq, (ast.List, ast.Tuple)):
                    if not self.eval(count, state)[0]:
                        return self.eval(seq, state, moved=moved)
                    break
        if kind is ast.BinOp:
            left = self.eval(node.left, state)
            right = self.eval(node.right, state)
            if left[0] or right[0]:
                self._computes = True
                other = node.right if left[0] else node.left
                if not (left[0] and right[0]) and self.may_need_grad(other):
                    self._records = self._meets = True
                    self._partner(other)
                return True, False
            return False, False
        if kind is ast.UnaryOp:
            tainted, _ = self.eval(node.operand, state)
            if tainted and not isinstance(node.op, ast.Not):
                self._computes = True
                return True, False
            return False, False
        if kind is ast.Compare:
            values = [self.eval(node.left, state, moved=True)] + \
                     [self.eval(c, state, moved=True) for c in node.comparators]
            identity = all(isinstance(op, (ast.Is, ast.IsNot)) for op in node.ops)
            if any(t for t, _ in values) and not identity:
                self._computes = True
            return False, False  # a comparison is graph-free (SPEC §2.4)
        if kind in (ast.Tuple, ast.List, ast.Set):
            values = [self.eval(e, state, moved=moved) for e in node.elts]
            return combine(values)
        if kind is ast.Starred:
            return self.eval(node.value, state, moved=moved)
        if kind is ast.Dict:
            values = [self.eval(v, state, moved=moved) for v in node.values]
            for k in node.keys:
                if k is not None:
                    self.eval(k, state)
            return combine(values)
        if kind in (ast.BoolOp,):
            return combine([self.eval(v, state, moved=moved) for v in node.values])
        if kind is ast.IfExp:
            self.eval(node.test, state)
            return combine([self.eval(node.body, state, moved=moved), self.eval(node.orelse, state, moved=moved)])
        if kind in COMPREHENSIONS:
            return self.eval_comprehension(node, state)
        if kind is ast.NamedExpr:
            tainted, raw = self.eval(node.value, state, moved=moved)
            if self._stmt is not None:
                self.bind(node.target, tainted, raw, state, self._stmt)
            return tainted, raw
        if kind in (ast.Yield, ast.YieldFrom):
            if node.value is not None:
                tainted, raw = self.eval(node.value, state, moved=True)
                if tainted and self._stmt is not None:
                    self.escape("yield", "`yield`", self._stmt, raw)
            return False, False
        if kind is ast.Await:
            return self.eval(node.value, state, moved=moved)
        if kind is ast.Lambda:
            self.nested_lambda(node, state)
            return False, False
        if kind in (ast.JoinedStr, ast.FormattedValue):
            for child in ast.iter_child_nodes(node):
                self.eval(child, state, moved=True)
            return False, False
        if kind is ast.Slice:
            for child in (node.lower, node.upper, node.step):
                if child is not None:
                    self.eval(child, state)
            return False, False
        values = [self.eval(child, state) for child in ast.iter_child_nodes(node)
                  if isinstance(child, ast.expr)]
        if any(t for t, _ in values):
            self._computes = True
            return True, False
        return False, False

    def eval_children(self, node: ast.AST, state: State) -> None:
        for child in ast.iter_child_nodes(node):
            if isinstance(child, ast.expr):
                self.eval(child, state)
            elif isinstance(child, ast.keyword):
                self.eval(child.value, state)

    def eval_call(self, node: ast.Call, state: State) -> Tuple[bool, bool]:
        func = node.func
        args = [a for a in node.args] + [k.value for k in node.keywords]
        if isinstance(func, (ast.Name, ast.Attribute)) and (self.index.is_variable(func) or (
                isinstance(func, ast.Name) and func.id in self.wrappers
                and not self.index.shadowed(func.id, self.index.scope_of(node)))):
            # A plain `Variable(x)` re-wraps data: 0.3 only accepted a tensor there (SEMANTICS.md
            # fact 7), so `x` was never volatile and the new Variable is not (`Variable(proj_dist)`
            # of a helper's `.data` result, used as a loss target).
            for a in args:
                self.eval(a, state, moved=True)
            return False, False
        if isinstance(func, ast.Attribute) and (self.index.qual(func) or "").startswith("numpy."):
            # `np.stack([m[0] for m in memory])`: a NumPy array, never volatile and never a graph
            # (0.3 kept volatility on Variables only), whatever the arguments held
            for a in args:
                self.eval(a, state, moved=True)
            return False, False
        if isinstance(func, ast.Attribute):
            method = func.attr
            if kills(node) or saves(node) or (method in TEXT_METHODS and _literal_text(func.value)):
                # `"{:.4f}".format(loss)` makes text (a tensor's `__format__` records nothing);
                # `torch.save(...)` stores
                self.eval(func.value, state, moved=True)
                for a in args:
                    self.eval(a, state)
                return False, False
            receiver = self.eval(func.value, state, moved=True)
            values = [self.eval(a, state) for a in args]
            if method == "backward" and receiver[0]:
                self.training(node)
            elif (receiver[0] or any(t for t, _ in values)) and method != "backward" and self.trains(node):
                self.training(node)
            if method in MUTATORS:
                moved_in = combine(values)
                if moved_in[0]:
                    self.bind_weak(func.value, state, self._stmt, moved_in[1]) if self._stmt is not None else None
                return receiver if receiver[0] else (False, False)
            if not receiver[0] and self._stmt is not None and any(t for t, _ in values) \
                    and writes_in_place(method) and self.index.qual(func.value) is None:
                # `desc.index_copy_(0, idx, out)` of a volatile `out`: 0.3 made `desc` volatile
                # (the in-place result is the receiver), so it carries the value from here on
                self.bind_weak(func.value, state, self._stmt, False)
            if not receiver[0] and self._stmt is not None and any(t for t, _ in values):
                if self._keeps_argument(node):
                    # `bot.observe(caption=c)` storing `self.obs.append(caption)`: the object
                    # holds the value, and what its methods compute from it later was volatile too
                    self.bind_weak(func.value, state, self._stmt, False)
                elif self._handed(node):
                    self.result.handed.append((self._stmt, key_of(func.value), describe(func)))
            tainted_args = any(t for t, _ in values)
            if receiver[0] and method in MOVE_METHODS and not tainted_args:
                return True, receiver[1]
            if receiver[0] or tainted_args:
                self._computes = True
                if self._foreign(func):
                    return True, False
                meets = self._meets_any(args, values)
                # A tensor method on the value, or a torch function, records only if another
                # argument may need grad; another callee may hold parameters of its own.
                if meets or not (receiver[0] or self._pure_callee(func)):
                    self._records = True
                self._meets = self._meets or meets
                return True, False
            return False, False
        if isinstance(func, ast.Name) and (func.id in KILL_FUNCS or saves(node)):
            for a in args:
                self.eval(a, state, moved=True)
            return False, False
        callee = self.eval(func, state)
        values = [self.eval(a, state) for a in args]
        if not callee[0] and not any(t for t, _ in values) and self._reads_tainted_global(node, state):
            # `rank_all = eval()` where `eval` reads the module's `ques_input = Variable(q,
            # volatile=True)`: the call computes with the value as surely as one passing it
            values = [(True, False)]
        if self._is_grad_call(func) and any(t for t, _ in values):
            self.training(node)
        elif any(t for t, _ in values) and self.trains(node):
            self.training(node)
        if not callee[0] and values and all(t and raw for t, raw in values) and isinstance(func, ast.Name) \
                and self.index.qual(func) is None and self._data_builder(func):
            # `to_gpu(Variable(x, volatile=flag))` of a function that only moves data (`return
            # var.cuda()`): the volatile value itself, moved, as `x.cuda()` is
            return True, True
        if callee[0] or any(t for t, _ in values):
            self._computes = True
            if self._foreign(func):
                return True, False
            meets = self._meets_any(args, values)
            if not self._pure_callee(func) or meets:
                self._records = True
            self._meets = self._meets or meets
            if not callee[0] and free_callee(self.index, node):
                # `edge_accuracy(logits, rel)` returning `float(correct) / n`: every return of
                # the file's function is without autograd history in either version, so the
                # taint ends with the call (which still computes with the value). Free of the
                # taint alone is not enough: a region around the call would also drop a graph the
                # function builds from its other arguments.
                return False, False
            return True, False
        return False, False

    def _reads_tainted_global(self, call: ast.Call, state: State) -> bool:
        """In the module's own walk, a call of a function of the module that reads a name the
        state holds tainted as a global."""
        func = call.func
        if self.scope is not self.index.tree or not isinstance(func, ast.Name) or not state:
            return False
        fn = self.index.module_def(func.id, call)
        return isinstance(fn, ast.FunctionDef) and any(name in state for name in self.index.global_reads(fn))

    def _handed(self, call: ast.Call) -> bool:
        """`q_bot.observe(-1, caption=c)` as a statement, on an object of a class volfix cannot
        see (another file's): called for what it does to the object, which may keep the value.
        Not reporting calls (`writer.add_scalar`, `logger.info`), in-place tensor methods, or
        calls on a module."""
        func = call.func
        stmt = self._stmt
        if not (isinstance(stmt, ast.Expr) and stmt.value is call) or func.attr in REPORTING \
                or func.attr.endswith("_") or func.attr in self.index.defined_names:  # type: ignore[attr-defined]
            return False
        receiver = func.value  # type: ignore[attr-defined]
        return key_of(receiver) is not None and self.index.qual(receiver) is None

    def _keeps_argument(self, call: ast.Call) -> bool:
        """`obj.method(...)` where a class of this module that `obj` may be an instance of (any
        class with such a method when `obj` is a parameter, say) stores one of the method's
        parameters on `self`. Not `self.method(...)`: tainting `self` would taint every read
        of the object's attributes."""
        func = call.func
        receiver = func.value  # type: ignore[attr-defined]
        if key_of(receiver) is None or func.attr not in self.index.defined_names:  # type: ignore[attr-defined]
            return False
        if isinstance(receiver, ast.Name) and receiver.id == "self":
            return False  # `self.observe(x)`: the object is every `self.` read of the method
        if self._values is None:
            from .scalars import ScalarValues  # the rank and binding analyses import this module's package
            self._values = ScalarValues(self.index)
        classes = self._values.instance_classes(receiver, call)
        if classes is None:  # a parameter, say: any class of this module with such a method
            classes = [self.index.method_class(f) for f in self.index.functions
                       if f.name == func.attr]  # type: ignore[attr-defined]
        return any(isinstance(c, ast.ClassDef) and keeps_parameter(self.index, c, func.attr)  # type: ignore[attr-defined]
                   for c in classes or ())

    def _partner(self, node: ast.AST) -> None:
        if self._stmt is not None:
            self.result.partners.setdefault(id(self._stmt), []).append(node)

    def _meets_any(self, args, values) -> bool:
        found = False
        for a, (t, _) in zip(args, values):
            if not t and self.may_need_grad(a):
                self._partner(a)
                found = True
        return found

    def training(self, call: ast.Call) -> None:
        if self._stmt is not None:
            self.result.training.append((self._stmt, f"{describe(call.func)}()"))

    def eval_comprehension(self, node: ast.AST, state: State) -> Tuple[bool, bool]:
        local = dict(state)
        for gen in node.generators:  # type: ignore[attr-defined]
            tainted, raw = self.eval(gen.iter, local)
            for name in target_keys(gen.target):
                if tainted:
                    local[name] = raw
                else:
                    local.pop(name, None)
            for cond in gen.ifs:
                self.eval(cond, local)
        if isinstance(node, ast.DictComp):
            values = [self.eval(node.key, local), self.eval(node.value, local)]
        else:
            values = [self.eval(node.elt, local, moved=True)]  # type: ignore[attr-defined]
        return combine(values)

    def nested_lambda(self, node: ast.Lambda, state: State) -> None:
        if not state:
            return
        for sub in ast.walk(node.body):
            if isinstance(sub, ast.Name) and isinstance(sub.ctx, ast.Load) and sub.id in state:
                self._computes = True
                self._records = True
                return



def _literal_text(node: ast.AST) -> bool:
    """A string literal or an f-string (the receiver of `"...".format(...)`)."""
    return isinstance(node, ast.JoinedStr) or (isinstance(node, ast.Constant) and isinstance(node.value, str))
