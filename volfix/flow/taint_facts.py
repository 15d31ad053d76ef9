"""What the taint walk asks about values and callees, whatever state it is in: could an
untainted value require grad (so computing with it records), and does a callee hold parameters
of its own (`flow.taint.TaintAnalysis` inherits these)."""
from __future__ import annotations

import ast
from typing import Callable, FrozenSet

from ..syntax.index import FUNCTIONS, ModuleIndex
from ..syntax.names import function_params
from .defuse import ENTRY, Graph
from .values import KILL_METHODS, MOVE_METHODS, MUTATORS, PURE_CALLS, graph_free

# Libraries that hold no torch parameters: what they do with a tensor records nothing that
# can be trained (they read its values). NumPy and math compute with what they are given (a
# tensor that needs grad next to the value still records); the others only read it.
NUMERIC_LIBRARIES = ("numpy.", "math.")
FOREIGN_LIBRARIES = ("matplotlib.", "pylab.", "seaborn.", "PIL.", "cv2.", "imageio.", "scipy.", "sklearn.",
                     "pandas.")


# Tensor methods that make, fill or copy data: no parameter of their own, and on a plain
# tensor they record nothing (`examples[0].new(n, 3).zero_()`, `data[i].copy_(x)`).
DATA_METHODS = MOVE_METHODS | KILL_METHODS | MUTATORS | frozenset({
    "new", "new_zeros", "new_ones", "new_full", "new_empty", "new_tensor", "zero_", "fill_", "copy_",
    "resize_", "resize_as_", "masked_fill_", "index_fill_", "index_copy_", "scatter_", "keys", "values", "items",
    "get", "pop", "strip", "split", "join", "lower", "format"})


def pure_qual(qual) -> bool:
    """A torch function outside `torch.nn` (its functional part included), NumPy's, math's or
    a data library's: no parameters of its own."""
    return qual is not None and qual.startswith("torch.") and not qual.startswith("torch.nn.") \
        or (qual or "").startswith(("torch.nn.functional.",) + NUMERIC_LIBRARIES + FOREIGN_LIBRARIES)


def data_builder(index: ModuleIndex, fn: ast.FunctionDef) -> bool:
    """An undecorated plain function of the module that only builds data from its arguments:
    it reads no name but its own (parameters, locals), builtins and torch's or NumPy's
    functions, calls only those and data methods (`DATA_METHODS`), stores on no object and
    nests no scope. Like `torch.cat`, it holds no parameters of its own: what it makes of
    volatile values is still data (salesforce/matchbox's `MaskedBatch.fromlist` of a field's
    batch, returned to torchtext)."""
    found = index.data_builders.get(id(fn))
    if found is None:
        found = index.data_builders[id(fn)] = _builds_data(index, fn)
    return found


def _builds_data(index: ModuleIndex, fn: ast.FunctionDef) -> bool:
    if fn.decorator_list or not isinstance(index.parents.get(fn), ast.Module):
        return False
    own = set(function_params(fn))
    for node in ast.walk(fn):
        if isinstance(node, ast.Name) and not isinstance(node.ctx, ast.Load):
            own.add(node.id)
    for node in ast.walk(fn):
        if node is fn:
            continue
        if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef, ast.Lambda, ast.Yield,
                             ast.YieldFrom, ast.Await, ast.Global, ast.Nonlocal, ast.comprehension)):
            return False
        if isinstance(node, ast.Attribute) and not isinstance(node.ctx, ast.Load):
            return False  # `obj.attr = value`: the object keeps it
        if isinstance(node, ast.Name) and isinstance(node.ctx, ast.Load) and node.id not in own:
            qual = index.qual(node)
            if not (qual is None and node.id in PURE_CALLS and index.module_def(node.id, node) is None
                    or qual in ("torch", "numpy", "math") or pure_qual(qual)):
                return False
        if isinstance(node, ast.Call):
            func = node.func
            if isinstance(func, ast.Name):
                if func.id in own:
                    return False  # a parameter called: a module, maybe
            elif isinstance(func, ast.Attribute):
                qual = index.qual(func)  # `torch.cat(...)`, else a method: `x.new(...)`
                if not (pure_qual(qual) if qual is not None else func.attr in DATA_METHODS):
                    return False
            else:
                return False
    return True


class ValueFacts:
    index: ModuleIndex
    plain: Callable[[ast.AST], bool]
    wrappers: FrozenSet[str]  # the project's own `Variable` wrappers

    def may_need_grad(self, node: ast.AST) -> bool:
        """Could this untainted value require grad (so that computing with it records)? Only
        values evidently free of autograd do not: numbers, strings, `.data`/`.item()` results,
        tensors fresh from a factory or `torch.from_numpy` (`volfix.rules.context.is_plain`).
        A parameter of the function may be a weight: it may."""
        if graph_free(node) or self.plain(node) or self._number_name(node) or self._plain_here(node):
            return False
        if isinstance(node, (ast.BinOp,)):
            return self.may_need_grad(node.left) or self.may_need_grad(node.right)
        if isinstance(node, ast.UnaryOp):
            return self.may_need_grad(node.operand)
        if isinstance(node, (ast.Tuple, ast.List)):
            return any(self.may_need_grad(e) for e in node.elts)
        return True

    def _plain_here(self, node: ast.AST, depth: int = 0) -> bool:
        """A local name whose every binding that reaches this read is graph-free, a plain
        tensor, or a `Variable` of one without `requires_grad` (`reward = Variable(torch.
        FloatTensor(reward))` above `reward + gamma * next_q_value`): read where it is read,
        where `plain` and `_number_name` ask every binding of the name in the function."""
        index = self.index
        if not isinstance(node, ast.Name) or depth > 3 or index.comprehension_binds(node, node.id) \
                or node.id in index.declared:  # a `global` name: a call may rebind it on the way
            return False
        scope = index.function_of(node)
        known = index.flow_graphs.get(id(scope))
        if known is None:  # which builtins consume a generator at once does not matter here
            known = index.flow_graphs[id(scope)] = (scope, Graph.build(scope))
        graph = known[1]
        step = graph.step_of.get(id(index.statement_of(node))) if graph is not None else None
        if step is None:
            return False
        bindings = graph.reaching_bindings(step, node.id)
        if not bindings or ENTRY in bindings:
            return False
        for found in bindings:
            bound = graph.steps[found].node
            if not (isinstance(bound, ast.Assign) and len(bound.targets) == 1
                    and isinstance(bound.targets[0], ast.Name) and bound.targets[0].id == node.id):
                return False
            if not self._free_value(bound.value, depth):
                return False
        return True

    def _free_value(self, value: ast.AST, depth: int) -> bool:
        if graph_free(value) or self.plain(value) or self._number_name(value) \
                or self._plain_here(value, depth + 1):
            return True
        if not (isinstance(value, ast.Call) and value.args and not any(
                isinstance(a, ast.Starred) for a in value.args) and self._variable_call(value.func)):
            return False
        flags = value.args[1:2] + [k.value for k in value.keywords if k.arg == "requires_grad"]
        if any(not (isinstance(f, ast.Constant) and not f.value) for f in flags):
            return False  # `Variable(x, requires_grad=True)`: a leaf to learn
        return self._free_value(value.args[0], depth + 1)

    def _variable_call(self, func: ast.AST) -> bool:
        return self.index.is_variable(func) or (
            isinstance(func, ast.Name) and func.id in self.wrappers)

    def _pure_callee(self, func: ast.AST) -> bool:
        """Builtins, torch functions and NumPy's hold no parameters of their own (NumPy records
        nothing: it reads a tensor's values, `np.mean(rewards)`), nor do plotting, image and
        data libraries (`plt.plot(epochs, mean_scores)`: a region around it alone is noise),
        nor a function of the module that only builds data from its arguments
        (`data_builder`)."""
        if isinstance(func, ast.Name) and func.id in PURE_CALLS:
            return self.index.lookup_for(func)(func.id) is None
        if isinstance(func, ast.Name) and self.index.qual(func) is None:
            return self._data_builder(func)
        return pure_qual(self.index.qual(func))

    def _data_builder(self, func: ast.Name) -> bool:
        fn = self.index.module_def(func.id, func)
        return isinstance(fn, ast.FunctionDef) and data_builder(self.index, fn)

    def _number_name(self, node: ast.AST) -> bool:
        """A name every binding of which is an assignment of a graph-free value (`n =
        len(test_loader)`), in the function reading it, or at module level when the function
        binds it nowhere: it cannot require grad."""
        if not isinstance(node, ast.Name):
            return False
        index = self.index
        scope = index.function_of(node)
        local = isinstance(scope, FUNCTIONS) and node.id in function_params(scope)
        values = index.plain_assignments(node.id, scope)
        if values == [] and not local and scope is not index.tree:
            values = index.plain_assignments(node.id, index.tree)  # a module-level name read here
        return bool(values) and not local and all(graph_free(v) for v in values)

    def _foreign(self, func: ast.AST) -> bool:
        """A function of a library that holds no torch parameters and makes no tensors
        (`plt.plot(epochs, mean_scores)`, `cv2.imwrite(path, img)`): it reads a tensor's values,
        so it records nothing, whatever else it is given."""
        return (self.index.qual(func) or "").startswith(FOREIGN_LIBRARIES)

    def _is_grad_call(self, func: ast.AST) -> bool:
        return self.index.qual(func) in ("torch.autograd.grad", "torch.autograd.backward")
