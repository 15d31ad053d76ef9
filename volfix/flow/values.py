"""The values the taint engine tracks (`volfix.flow.taint`): keys, states, and what
expressions and statements mean for autograd (which calls end a graph, which only move a
tensor, which hold parameters), shared with the region placer (`volfix.fixes.regions`)."""
from __future__ import annotations

import ast
import re
from typing import Callable, Dict, Iterable, List, Optional, Set, Tuple

from ..syntax import names as nm
from ..syntax.index import SCOPES
from .bindings import displayed_item

# Results that leave autograd: reading them is inspection, not computation.
KILL_ATTRS = frozenset({"data", "shape", "volatile", "requires_grad", "is_cuda", "dtype", "device",
                        "grad_fn", "ndim", "is_leaf", "grad"})
KILL_METHODS = frozenset({"item", "tolist", "numpy", "size", "dim", "numel", "nelement",
                          "data_ptr", "get_device", "element_size", "type", "is_contiguous",
                          "register_hook", "detach", "detach_", "is_floating_point", "stride"})
KILL_FUNCS = frozenset({"int", "float", "bool", "len", "str", "repr", "print", "isinstance",
                        "type", "id", "format", "hasattr", "getattr", "round", "abs_", "hash"})
# Methods that only move or re-view a tensor: the raw value stays raw (no graph on a plain tensor).
MOVE_METHODS = frozenset({"cuda", "cpu", "to", "float", "double", "half", "long", "int", "byte",
                          "bool", "view", "view_as", "unsqueeze", "squeeze", "contiguous",
                          "expand", "expand_as", "permute", "transpose", "t", "reshape",
                          "pin_memory", "clone", "narrow", "select", "chunk", "split", "flatten",
                          "type_as", "repeat", "index_select", "unbind",
                          "type"})  # `x.type(torch.FloatTensor)`; `x.type()` is a string (`kills`)
# Container methods that store their argument: the container now holds the value.
MUTATORS = frozenset({"append", "extend", "insert", "add", "update", "appendleft", "put",
                      "setdefault"})


def writes_in_place(method: str) -> bool:
    """A tensor's in-place method (`copy_`, `index_copy_`, `normal_`): its result is its receiver."""
    return method.endswith("_") and not method.startswith("_")


# Callables that never hold parameters: passing a graph-free value to them records nothing.
PURE_CALLS = KILL_FUNCS | frozenset({"list", "tuple", "dict", "set", "zip", "enumerate", "sorted",
                                     "reversed", "range", "min", "max", "sum", "map", "filter",
                                     "iter", "next", "any", "all", "open", "setattr", "vars"})
LOOPS = (ast.For, ast.AsyncFor, ast.While)
NUMPY_MODULES = frozenset({"np", "numpy", "np.random", "numpy.random", "np.linalg", "numpy.linalg"})
MAX_LOOP_ROUNDS = 8

Key = str  # "x" or "self.priors"
State = Dict[Key, bool]  # key -> raw


def key_of(expr: ast.AST) -> Optional[Key]:
    """`x` -> 'x'; `self.priors` -> 'self.priors'; anything else -> None."""
    if isinstance(expr, ast.Name):
        return expr.id
    if isinstance(expr, ast.Attribute):
        base = key_of(expr.value)
        return f"{base}.{expr.attr}" if base else None
    return None


def root(key: Key) -> str:
    return key.split(".", 1)[0]


def volatile_false_target(stmt: ast.stmt) -> Optional[Key]:
    """`x.volatile = False` -> 'x'."""
    if (isinstance(stmt, ast.Assign) and len(stmt.targets) == 1
            and isinstance(stmt.targets[0], ast.Attribute) and stmt.targets[0].attr == "volatile"
            and isinstance(stmt.value, ast.Constant) and stmt.value.value in (False, 0)):
        return key_of(stmt.targets[0].value)
    return None


def join(a: State, b: State) -> State:
    out = dict(a)
    for key, raw in b.items():
        out[key] = out.get(key, raw) and raw
    return out


def kill(state: State, key: Key) -> None:
    state.pop(key, None)
    for other in under(state, key):
        del state[other]


def under(state: State, key: Key) -> List[Key]:
    """The keys of `state` for attributes of `key` (`example.tokens` under `example`)."""
    prefix = key + "."
    return [k for k in state if k.startswith(prefix)]


# Calls that store their arguments (a checkpoint, a pickle): nothing recorded, nothing returned
# that carries the value on.
SAVE_CALL = re.compile(r"^(save|dump)$|save_?(checkpoint|model|network|networks|ckpt|state)$", re.I)


def saves(call: ast.Call) -> bool:
    """`torch.save(...)`, `tools.save_checkpoint({...})`, `pickle.dump(...)`."""
    func = call.func
    name = func.attr if isinstance(func, ast.Attribute) else func.id if isinstance(func, ast.Name) else ""
    return bool(name) and SAVE_CALL.search(name) is not None


def kills(call: ast.Call) -> bool:
    """A method call whose result carries no graph (`x.item()`, `x.size()`, `x.type()` as a
    string). `x.type(torch.FloatTensor)` converts the tensor: it moves the value instead."""
    func = call.func
    if not isinstance(func, ast.Attribute) or func.attr not in KILL_METHODS:
        return False
    return not (func.attr == "type" and (call.args or call.keywords))


def combine(values: List[Tuple[bool, bool]]) -> Tuple[bool, bool]:
    tainted = [raw for t, raw in values if t]
    if not tainted:
        return False, False
    return True, all(tainted)


def target_keys(target: ast.AST) -> List[str]:
    if isinstance(target, ast.Name):
        return [target.id]
    if isinstance(target, (ast.Tuple, ast.List)):
        return [k for elt in target.elts for k in target_keys(elt)]
    if isinstance(target, ast.Starred):
        return target_keys(target.value)
    return []


def graph_free(node: ast.AST) -> bool:
    """A value that certainly cannot require grad: constants, numbers from `.item()`/`len()`,
    strings, arithmetic of those."""
    if isinstance(node, ast.Constant):
        return True
    if isinstance(node, ast.UnaryOp):
        return graph_free(node.operand)
    if isinstance(node, ast.BinOp):
        return graph_free(node.left) and graph_free(node.right)
    if isinstance(node, (ast.Tuple, ast.List)):
        return all(graph_free(e) for e in node.elts)
    if isinstance(node, ast.Attribute):
        return node.attr in KILL_ATTRS
    if isinstance(node, ast.Call):
        func = node.func
        if isinstance(func, ast.Attribute):
            # `"samples_{}.png".format(step)`, `", ".join(names)`: a string's method gives a string
            return kills(node) or isinstance(func.value, ast.Constant) and isinstance(func.value.value, str)
        return isinstance(func, ast.Name) and func.id in KILL_FUNCS
    if isinstance(node, (ast.JoinedStr, ast.Compare)):
        return True
    return False


def is_try(stmt: ast.stmt) -> bool:
    return isinstance(stmt, ast.Try) or (hasattr(ast, "TryStar") and isinstance(stmt, getattr(ast, "TryStar")))


def header_nodes(stmt: ast.stmt) -> List[ast.AST]:
    """The expressions a statement evaluates itself (not those of its nested statements)."""
    if isinstance(stmt, (ast.For, ast.AsyncFor)):
        return [stmt.target, stmt.iter]
    if isinstance(stmt, (ast.While, ast.If)):
        return [stmt.test]
    if isinstance(stmt, (ast.With, ast.AsyncWith)):
        return list(stmt.items)
    if is_try(stmt):
        return [h.type for h in stmt.handlers if h.type is not None]  # type: ignore[attr-defined]
    if isinstance(stmt, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)):
        return list(stmt.decorator_list)
    if hasattr(ast, "Match") and isinstance(stmt, getattr(ast, "Match")):
        return [stmt.subject]
    return [stmt]


def walk_expr(node: ast.AST):
    """ast.walk restricted to one statement's own expressions (no nested statements/defs)."""
    stack = [node]
    while stack:
        cur = stack.pop()
        yield cur
        for child in ast.iter_child_nodes(cur):
            if not isinstance(child, (ast.stmt,) + SCOPES[:3]):
                stack.append(child)


def describe(node: ast.AST) -> str:
    try:
        return ast.unparse(node)
    except Exception:  # pragma: no cover - unparse of exotic nodes
        return "?"


# Methods of `str` that `torch.Tensor` does not have: their result carries no autograd history.
STRING_METHODS = frozenset({"replace", "strip", "lstrip", "rstrip", "lower", "upper", "format", "join",
                            "startswith", "endswith", "encode", "decode", "capitalize", "zfill", "splitlines"})


# torch functions making a fresh tensor, which has no history (unless `requires_grad=True`).
FRESH_TENSORS = frozenset({"zeros", "ones", "empty", "full", "eye", "arange", "linspace", "rand", "randn",
                           "randint", "randperm", "from_numpy", "tensor", "as_tensor", "Tensor", "FloatTensor",
                           "DoubleTensor", "HalfTensor", "LongTensor", "IntTensor", "ShortTensor",
                           "ByteTensor", "CharTensor", "BoolTensor"})
# torch functions joining tensors: the result has history only if a part has.
JOINS = frozenset({"cat", "stack"})


def autograd_free(node: ast.AST, values_of: Optional[Callable[[str], Optional[list]]] = None,
                  depth: int = 0, callee_free: Optional[Callable[[ast.Call], bool]] = None,
                  pending: frozenset = frozenset()) -> bool:
    """A value that cannot carry autograd history: constants, `.item()`, `len()`, arithmetic of
    those; with `values_of` (name -> the values the scope assigns it), names assigned only
    such values (`psub1 = F.softmax(out).data.cpu().numpy()`, then `psub = psub1`; a name
    that builds on itself, `history = torch.cat([history, h.detach()])`, is free when every
    other value is). Tensors too: a fresh one (`torch.from_numpy(a)`, `Variable(x.data)`),
    moved or joined free ones (`v.cuda()`, `torch.cat([...])`), either side of a conditional;
    what a NumPy function returns (`np.array(h.data.cpu().numpy())`);
    with `callee_free`, the calls it vouches for (a function of the file returning such values)."""
    def free(sub: ast.AST, deeper: int = depth) -> bool:
        return autograd_free(sub, values_of, deeper, callee_free, pending)

    if is_constant(node):
        return True
    if isinstance(node, ast.Name):
        if node.id in pending:
            return True  # the value it builds on, free if its other values are
        values = values_of(node.id) if values_of is not None and depth < 4 else None
        return bool(values) and all(autograd_free(v, values_of, depth + 1, callee_free, pending | {node.id})
                                    for v in values)
    if isinstance(node, ast.Attribute):
        return node.attr in KILL_ATTRS or autograd_free(node.value)
    if isinstance(node, ast.Subscript):
        return free(node.value)
    if isinstance(node, ast.IfExp):
        return free(node.body) and free(node.orelse)
    if isinstance(node, (ast.List, ast.Tuple)):
        return all(free(e) for e in node.elts)
    if isinstance(node, (ast.ListComp, ast.GeneratorExp)):
        return free(node.elt)
    if isinstance(node, ast.Call):
        return _free_call(node, free, callee_free)
    if isinstance(node, ast.BinOp):
        return free(node.left) and free(node.right)
    if isinstance(node, ast.UnaryOp):
        return free(node.operand)
    if isinstance(node, (ast.Compare, ast.JoinedStr)):
        return True
    return False


def _free_call(node: ast.Call, free: Callable[[ast.AST], bool], callee_free) -> bool:
    func = node.func
    name = func.attr if isinstance(func, ast.Attribute) else getattr(func, "id", "")
    if name == "Variable" and len(node.args) == 1 and not node.keywords:
        return free(node.args[0])  # `Variable(h.data)`: a fresh leaf without history (becomes h.detach())
    if isinstance(func, ast.Attribute):
        if (func.attr in KILL_METHODS and func.attr != "type") or func.attr == "detach":
            return True
        if isinstance(func.value, ast.Constant) or key_of(func.value) in ("os", "os.path") \
                or func.attr in STRING_METHODS:
            return True  # `"".join(chars)`, `name.replace(" ", "_")`, `os.path.basename(p)`
        if key_of(func.value) in NUMPY_MODULES:
            return True  # `np.array(h.data.cpu().numpy())`: an array or a number, never a graph
        if key_of(func.value) == "torch":
            if func.attr in FRESH_TENSORS:
                return not any(k.arg == "requires_grad" for k in node.keywords)
            if func.attr in JOINS and node.args:
                return free(node.args[0])
        if func.attr in MOVE_METHODS and func.attr != "type_as" and all(free(a) for a in node.args) \
                and all(k.arg is not None and free(k.value) for k in node.keywords) and free(func.value):
            return True  # `v.cuda()`, `h.view(-1, n)` of a free value
        return isinstance(func.value, (ast.Attribute, ast.Subscript, ast.Call)) and autograd_free(func.value)
    if isinstance(func, ast.Name) and func.id in KILL_FUNCS - {"print"}:
        return True
    return callee_free is not None and callee_free(node)


def is_constant(node: ast.AST) -> bool:
    if isinstance(node, ast.Constant):
        return True
    if isinstance(node, ast.UnaryOp) and isinstance(node.operand, ast.Constant):
        return True
    if isinstance(node, (ast.List, ast.Tuple, ast.Set)):
        return all(is_constant(e) for e in node.elts)
    if isinstance(node, ast.Dict):
        return all(k is not None and is_constant(k) and is_constant(v) for k, v in zip(node.keys, node.values))
    if isinstance(node, ast.Call) and isinstance(node.func, ast.Name) and node.func.id in ("dict", "list", "set", "tuple"):
        return not node.args and not node.keywords
    return False


def keeps_parameter(index, cls: ast.ClassDef, method: str) -> bool:
    """The class's own `method` stores one of its parameters on `self`: `self.obs.append(
    caption)`, `self.h = h`, `self.memory[i] = x` (remembered on the index per class and method)."""
    key = (id(cls), method)
    found = index.kept_parameters.get(key)
    if found is None:
        found = index.kept_parameters[key] = _keeps_parameter(cls, method)
    return found


def _keeps_parameter(cls: ast.ClassDef, method: str) -> bool:
    defs = [s for s in cls.body if isinstance(s, ast.FunctionDef) and s.name == method]
    if len(defs) != 1:
        return False
    fn = defs[0]
    args = fn.args
    params = {a.arg for a in args.posonlyargs + args.args[1:] + args.kwonlyargs}
    params.update(a.arg for a in (args.vararg, args.kwarg) if a is not None)

    def on_self(node: ast.AST) -> bool:
        while isinstance(node, (ast.Attribute, ast.Subscript)):
            node = node.value
        return isinstance(node, ast.Name) and node.id == "self"

    def mentions(node: ast.AST) -> bool:
        return any(isinstance(n, ast.Name) and n.id in params for n in ast.walk(node))

    for node in ast.walk(fn):
        if isinstance(node, (ast.Assign, ast.AugAssign, ast.AnnAssign)) and node.value is not None:
            targets = node.targets if isinstance(node, ast.Assign) else [node.target]
            if any(isinstance(t, (ast.Attribute, ast.Subscript)) and on_self(t) for t in targets) \
                    and mentions(node.value):
                return True
        elif isinstance(node, ast.Call) and isinstance(node.func, ast.Attribute) and on_self(node.func.value) \
                and node.func.attr in ("append", "extend", "insert", "update", "add", "setdefault") \
                and any(mentions(a) for a in list(node.args) + [k.value for k in node.keywords]):
            return True
    return False


def free_callee(index, call: ast.Call) -> bool:
    """A call of a function of the module (not a decorated one) whose every return is
    without autograd history (`returns_autograd_free`, remembered on the index)."""
    func = call.func
    if not isinstance(func, ast.Name):
        return False
    fn = index.module_def(func.id, call)
    if not isinstance(fn, ast.FunctionDef) or fn.decorator_list:
        return False
    found = index.free_returns.get(id(fn))
    if found is None:
        found = index.free_returns[id(fn)] = returns_autograd_free(fn)
    return found


def returns_autograd_free(fn: ast.AST) -> bool:
    """Every value `fn` returns is without autograd history (Python numbers, `.item()`,
    `len()`, tuples of those), so a call's result ends the taint: `val, n = train(...,
    is_validate=True)` returns `total / n, n` where `total += loss.data[0]`. A generator, or a
    function returning nothing, returns no such value (False)."""
    returns: List[ast.Return] = []
    assigned: Dict[str, List[ast.AST]] = {}
    unknown = set()
    stack = list(fn.body)  # type: ignore[attr-defined]
    while stack:
        node = stack.pop()
        if isinstance(node, SCOPES):
            continue
        if isinstance(node, (ast.Yield, ast.YieldFrom)):
            return False
        if isinstance(node, ast.Return):
            returns.append(node)
        elif isinstance(node, ast.Assign):
            for t in node.targets:
                if isinstance(t, ast.Name):
                    assigned.setdefault(t.id, []).append(node.value)
                elif isinstance(t, ast.Tuple) and isinstance(node.value, ast.Tuple) and \
                        len(t.elts) == len(node.value.elts) and all(isinstance(e, ast.Name) for e in t.elts):
                    for e, v in zip(t.elts, node.value.elts):  # `total, n = 0.0, 0`
                        assigned.setdefault(e.id, []).append(v)
                else:
                    unknown.update(n.id for n in ast.walk(t) if isinstance(n, ast.Name))
        elif isinstance(node, (ast.AugAssign, ast.AnnAssign)) and isinstance(node.target, ast.Name):
            if node.value is None:
                continue
            assigned.setdefault(node.target.id, []).append(node.value)
        elif isinstance(node, (ast.For, ast.AsyncFor, ast.NamedExpr, ast.withitem)):
            target = node.optional_vars if isinstance(node, ast.withitem) else node.target
            if target is not None:
                unknown.update(n.id for n in ast.walk(target) if isinstance(n, ast.Name))
        stack.extend(ast.iter_child_nodes(node))
    params = set()
    args = fn.args  # type: ignore[attr-defined]
    for a in args.posonlyargs + args.args + args.kwonlyargs + [args.vararg, args.kwarg]:
        if a is not None:
            params.add(a.arg)

    def values_of(name: str) -> Optional[list]:
        if name in params or name in unknown:
            return None
        return assigned.get(name)

    values = [r.value for r in returns if r.value is not None]
    return bool(values) and all(_free_value(v, values_of) for v in values)


def _free_value(node: ast.AST, values_of) -> bool:
    if isinstance(node, (ast.Tuple, ast.List)):
        return all(_free_value(e, values_of) for e in node.elts)
    return autograd_free(node, values_of)


def likely_grad(index, node: ast.AST, scope: ast.AST, depth: int = 0) -> bool:
    """A value that evidently may carry a graph where it is used: the result of a call
    that is not a torch function or a builtin (a model's output, a helper's result), or a
    name the scope binds to one. A parameter or a slice of one is not taken as such."""
    if depth > 3:
        return False
    if isinstance(node, ast.Call):
        func = node.func
        qual = index.qual(func) or ""
        if isinstance(func, ast.Name) and func.id in KILL_FUNCS | {"Variable"}:
            return False
        if isinstance(func, ast.Name) and func.id in PURE_CALLS and index.lookup_for(func)(func.id) is None:
            # `max(prec1, best_prec1)`: a builtin carries what its arguments carry
            return any(likely_grad(index, a, scope, depth + 1) for a in node.args)
        if qual.startswith("torch.") and not qual.startswith("torch.nn."):
            return any(likely_grad(index, a, scope, depth + 1) for a in node.args)
        if isinstance(func, ast.Attribute) and func.attr in KILL_METHODS | {"detach", "new", "zero_"}:
            return False
        if isinstance(func, ast.Attribute) and isinstance(func.value, ast.Constant):
            return False  # `"samples_{}.png".format(step)`
        return True
    if isinstance(node, ast.Name):
        values = index.assigned_values(scope).get(node.id, [])
        return any(likely_grad(index, v, scope, depth + 1) for v in values)
    if isinstance(node, (ast.Attribute, ast.Subscript)):
        return not (isinstance(node, ast.Attribute) and node.attr in KILL_ATTRS) and \
            likely_grad(index, node.value, scope, depth + 1)
    if isinstance(node, ast.BinOp):
        return likely_grad(index, node.left, scope, depth + 1) or likely_grad(index, node.right, scope, depth + 1)
    return False


def number_total(index, scope: ast.AST, stmt: ast.AugAssign) -> bool:
    """`total += value` where `total` is a name every other binding in `scope` makes a number
    or None (`total = 0.` at each episode's start): before this statement adds to it, it holds
    no autograd history."""
    if not isinstance(stmt.target, ast.Name):
        return False
    name = stmt.target.id
    if name in index.declared:
        return False
    for node in index.names.get(name, ()):
        if isinstance(node.ctx, ast.Load) or index.scope_of(node) is not scope:
            continue
        parent = index.parents.get(node)
        if parent is stmt:
            continue
        if isinstance(parent, ast.Assign) and node in parent.targets and isinstance(parent.value, ast.Constant) \
                and (parent.value.value is None or type(parent.value.value) in (int, float)):
            continue
        return False  # a loop target, an unpacking, another `+=`: it may hold anything
    return not (isinstance(scope, (ast.FunctionDef, ast.AsyncFunctionDef)) and name in nm.function_params(scope))


def makes_module(index, call: ast.AST) -> bool:
    """`call` makes an `nn.Module`: `nn.Linear(...)` (a `torch.nn` class), or a class of this
    module built on one (`class HyperNet(nn.Module)`)."""
    if not isinstance(call, ast.Call):
        return False
    qual = index.qual(call.func)
    if qual is not None:
        return qual.startswith("torch.nn.") and qual[len("torch.nn."):][:1].isupper()
    if isinstance(call.func, ast.Name):
        cls = index.module_level_def(call.func.id)
        return isinstance(cls, ast.ClassDef) and any(
            (index.qual(b) or "").startswith("torch.nn.") for b in cls.bases)
    return False


def calls_a_module(index, names, node: ast.AST, at: ast.AST) -> Optional[ast.Call]:
    """A call in `node` of a module of the program (`self.hyper(z)`, `classifier(h)`): a name
    or `self` attribute bound only to values `makes_module` accepts, or an attribute of one
    (`model.ecc(h)`)."""
    for sub in walk_expr(node) if isinstance(node, ast.stmt) else ast.walk(node):
        if not isinstance(sub, ast.Call):
            continue
        made = names.of(sub.func, at)  # `ptn, ecc = nn.Linear(3, 4), nn.Linear(4, 2)` too
        if made and all(makes_module(index, displayed_item(v)) for v in made):
            return sub
        if isinstance(sub.func, ast.Attribute):
            # `model.ecc(h)` with `model = Net()`, a module of the program: a submodule or a
            # method of it computes with its parameters
            owner = names.of(sub.func.value, at)
            if owner and all(makes_module(index, displayed_item(v)) for v in owner):
                return sub
    return None


def reads_any(node: ast.AST, names: Set[str]) -> bool:
    """`node` reads one of `names`."""
    return any(isinstance(n, ast.Name) and isinstance(n.ctx, ast.Load) and n.id in names for n in ast.walk(node))


def derived_names(statements: Iterable[ast.stmt], seed: Iterable[str]) -> Set[str]:
    """`seed` and the names that `statements` bind from a value reading one of them (an
    assignment's targets and the containers it writes into, a loop's target over such an
    iterable), in any order: what may hold something computed from `seed`."""
    statements = [s for s in statements if isinstance(s, (ast.Assign, ast.AugAssign, ast.AnnAssign, ast.For,
                                                          ast.AsyncFor))]
    reached = set(seed)
    changed = bool(reached)
    while changed:
        changed = False
        for stmt in statements:
            looped = isinstance(stmt, (ast.For, ast.AsyncFor))
            value = stmt.iter if looped else stmt.value
            if value is None or not reads_any(value, reached):
                continue
            more = set(nm.target_names(stmt.target) if looped else nm.assigned_names(stmt)) - reached
            if more:
                reached |= more
                changed = True
    return reached
