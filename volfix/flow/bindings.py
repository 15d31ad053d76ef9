"""What a local name holds where it is read, for the one-element analysis (`flow.scalars`).

A name's bindings in the scope that reads it: the values of `name = value` and `name += value`,
an `Element` for a loop or comprehension target (with its place in a tuple target), an
`Unpacked` item for a name unpacked from a value, None for anything volfix cannot read (a
parameter, `with ... as`). When an assignment dominates the read (it comes before the read,
or before a statement holding it, in the same block; or a loop's or comprehension's target
around it), only the bindings that can reach the read count: `losses = [torch.mean(l) for l
in losses]` after `losses = model(x)`.
"""
from __future__ import annotations

import ast
from typing import Callable, Dict, List, Optional, Tuple

from ..syntax import names as nm
from ..syntax.index import COMPREHENSIONS


class Element:
    """A loop or comprehension target: one element of `iterable`; for a name inside a tuple
    target, `path` gives its place (`for i, (name, loss) in enumerate(d.items())`: (1, 1))."""

    __slots__ = ("iterable", "path")

    def __init__(self, iterable: ast.AST, path: Tuple[int, ...] = ()) -> None:
        self.iterable = iterable
        self.path = path


class Unpacked:
    """A name bound by unpacking (`prec1, prec5 = accuracy(...)`): the item of `value` at
    `path`."""

    __slots__ = ("value", "path")

    def __init__(self, value: ast.AST, path: Tuple[int, ...]) -> None:
        self.value = value
        self.path = path


def displayed_item(value):
    """The expression a name of `ptn, ecc = nn.Linear(3, 4), nn.Linear(4, 2)` is bound to, when
    `value` (a binding `NameBindings` gave) unpacks a tuple or list display; else `value`."""
    if isinstance(value, Unpacked) and isinstance(value.value, (ast.Tuple, ast.List)) and len(value.path) == 1 \
            and not any(isinstance(e, ast.Starred) for e in value.value.elts) \
            and value.path[0] < len(value.value.elts):
        return value.value.elts[value.path[0]]
    return value


class NameBindings:
    """The bindings of names (and `self` attributes) of one module, as VF401 reads them."""

    def __init__(self, index) -> None:
        self.index = index
        self._reach: dict = {}
        self._families: Dict[int, List[ast.ClassDef]] = {}

    def list_literal_members(self, name: str, at: ast.AST) -> Optional[list]:
        """What the list `name` holds where `at` reads it, when it is bound only to list
        literals (no `*` in them) and changed only by `append`: their items, then what is
        appended (`mssim = []`, `mssim.append(sim)`); None otherwise, or when empty."""
        bound = self.bindings(name, at)
        if not bound or not all(isinstance(b, ast.List) and not any(isinstance(e, ast.Starred) for e in b.elts)
                                for b in bound):
            return None
        added = self.appended(name, at)
        if added is None:
            return None
        return [e for b in bound for e in b.elts] + added or None

    def appended(self, name: str, at: ast.AST) -> Optional[list]:
        """The values `name.append(v)` adds to the list `at` reads, wherever a read of `name`
        resolves to the same scope: its own function, the function enclosing a closure that
        reads it, or the module (`style_losses.append(...)` at module level, read in a
        closure); None when the list is changed some other way (`extend`, `insert`, an item
        assignment)."""
        index = self.index
        scope = self._resolving(name, index.function_of(at))
        if name in index.declared:
            return None  # `global` / `nonlocal name` somewhere: a function may rebind the list
        resolved: Dict[int, ast.AST] = {}

        def same_list(node: ast.AST) -> bool:
            owner = index.function_of(node)
            if id(owner) not in resolved:
                resolved[id(owner)] = self._resolving(name, owner)
            return resolved[id(owner)] is scope

        out = []
        for node in index.names.get(name, ()):
            if not isinstance(node.ctx, ast.Load) or not same_list(node):
                continue
            parent = index.parents.get(node)
            if isinstance(parent, ast.Attribute) and parent.attr in ("extend", "insert", "__setitem__"):
                return None
            if isinstance(parent, ast.Subscript) and not isinstance(parent.ctx, ast.Load):
                return None
            if isinstance(parent, ast.Attribute) and parent.attr == "append":
                call = index.parents.get(parent)
                if not (isinstance(call, ast.Call) and call.func is parent and len(call.args) == 1):
                    return None
                out.append(call.args[0])
        return out

    def bindings(self, name: str, at: ast.AST) -> list:
        """The values bound to `name` in the scope `at` reads it from (an `Element` for a
        `for` or comprehension target, None for another binding that is not `name = value` /
        `name op= value`); [] when it is not bound there."""
        scope = self.index.function_of(at)
        dominator, reaching = self._reaching(name, scope, at)
        if dominator is None:  # nothing dominates: the bindings the flow can bring to the read
            own = self.index.statement_of(at)
            out = self._bound_in(name, scope, None, lambda node: self._may_reach(node, own, scope))
        else:
            out = self._bound_in(name, scope, reaching)
        if not out and scope is not self.index.tree:
            # a name of the function enclosing this one (a closure reads it), or of the module
            out = self._bound_in(name, self._resolving(name, self.index.function_of(scope)))
        return out

    def _resolving(self, name: str, scope: ast.AST) -> ast.AST:
        """The scope a read of `name` in `scope` resolves to: `scope` itself or the nearest
        enclosing function binding it (class bodies are skipped), else the module."""
        while scope is not self.index.tree and not self._bound_in(name, scope):
            scope = self.index.function_of(scope)
        return scope

    def augmented(self, value) -> bool:
        """Whether a value `bindings` gave is what `name += value` adds (in place on a tensor:
        its shape stays), not what `name = value` binds."""
        return isinstance(value, ast.AST) and isinstance(self.index.parents.get(value), ast.AugAssign)

    def key(self, name: str, at: ast.AST) -> str:
        """What a name stands for where `at` reads it, for the recursion guards: its scope
        and the assignment that dominates the read (`x` before and after `x = x.sum()` are
        two values)."""
        scope = self.index.function_of(at)
        dominator = self._reaching(name, scope, at)[0]
        return f"{id(scope)} {name} {id(dominator) if dominator is not None else ''}"

    def _reaching(self, name: str, scope: ast.AST, at: ast.AST):
        memo = (name, id(at))  # not the statement: a comprehension in it binds its own names
        found = self._reach.get(memo)
        if found is None:
            found = self._reach[memo] = self._dominated(name, scope, at)
        return found

    def _dominated(self, name: str, scope: ast.AST, at: ast.AST):
        """Which bindings of `name` can reach `at`, when an assignment `name = ...` (or `a, name =
        ...`) dominates it: one of the statements before `at` (or before a statement holding it) in the same
        block, `losses = [torch.mean(l) for l in losses]` after `losses = model(x)`. Only that
        assignment and the bindings after it, up to and around `at`, reach (a loop back to
        them passes the assignment again); the statement holding `at` binds after reading
        (`temp = temp.data[0]`), unless a loop below the assignment runs it again. A loop's or a comprehension's target dominates its body
        (`[v.data[0] for v in losses]`: that `v`, not another loop's). (assignment, which
        bindings reach); (None, None) when nothing dominates: every binding of the scope counts."""
        index = self.index
        if name in index.declared:
            return None, None
        own = index.statement_of(at)
        child, parent = at, index.parents.get(at)
        while parent is not None and child is not own:
            if isinstance(parent, COMPREHENSIONS) and child in (
                    getattr(parent, "elt", None), getattr(parent, "key", None), getattr(parent, "value", None)):
                for generator in reversed(parent.generators):
                    if name in nm.target_names(generator.target):
                        return parent, (lambda node, target=generator.target: self._inside(node, target))
            child, parent = parent, index.parents.get(parent)
        for owner, field, block, position in self._blocks_up(own):
            for first in range(position - 1, -1, -1):
                s = block[first]
                if isinstance(s, ast.Assign) and any(name in nm.target_names(t) for t in s.targets):
                    return s, (lambda node, first=first, block=block, last=position:
                               self._between(node, block, first, last, own))
            if isinstance(owner, (ast.For, ast.AsyncFor)) and field == "body" and name in nm.target_names(
                    owner.target):
                return owner, (lambda node, loop=owner, block=block, last=position: self._inside(
                    node, loop.target) or self._between(node, block, 0, last, own))
            if owner is scope or isinstance(owner, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef,
                                                    ast.Module)):
                return None, None
        return None, None

    def _blocks_up(self, stmt: ast.stmt):
        """(owner, field, block, position) of `stmt` in its block, then of the statement
        owning that block (an `except` handler's `try`), and so on up."""
        index = self.index
        while True:
            slot = index.slot_of(stmt)
            if slot is None:
                return
            yield slot
            owner = slot[0]
            stmt = owner if isinstance(owner, ast.stmt) else index.parents.get(owner)
            if not isinstance(stmt, ast.stmt):
                return

    def _inside(self, node: ast.AST, holder: ast.AST) -> bool:
        while node is not None and node is not holder and not isinstance(node, ast.stmt):
            node = self.index.parents.get(node)
        return node is holder

    def _between(self, node: ast.AST, block: list, first: int, last: int, own: ast.stmt) -> bool:
        stmt = self.index.statement_of(node)
        if stmt is own and isinstance(own, (ast.Assign, ast.AugAssign, ast.AnnAssign)):
            # it binds after reading (`temp = temp.data[0]`), unless a loop inside `block` runs
            # it again: the next pass reads what it bound (`x = x.unsqueeze(0)`)
            for owner, field, holder, _position in self._blocks_up(own):
                if holder is block:
                    return False
                if isinstance(owner, (ast.For, ast.AsyncFor, ast.While)) and field == "body":
                    return True
            return False
        for _owner, _field, holder, position in self._blocks_up(stmt):
            if holder is block:
                return first <= position <= last
        return False

    def _may_reach(self, node: ast.AST, own: ast.stmt, scope: ast.AST) -> bool:
        """Whether a binding can bring its value to a read in `own` when no assignment
        dominates the read: one in a statement that starts before `own` can; `own` itself
        binds after reading (`err = err.data[0]` on a parameter), and a later statement binds
        after it, unless a loop of the scope holds both (the next pass reads it)."""
        stmt = self.index.statement_of(node)
        if stmt is not own and (stmt.lineno, stmt.col_offset) < (own.lineno, own.col_offset):
            return True
        loops = (ast.For, ast.AsyncFor, ast.While)
        for loop in ([own] if isinstance(own, loops) else []) + self.index.enclosing(own, loops):
            if self.index.function_of(loop) is scope and loop.lineno <= stmt.lineno <= loop.end_lineno:
                return True
        return False

    def _bound_in(self, name: str, scope: ast.AST, reaching: Optional[Callable[[ast.AST], bool]] = None,
                  flowing: Optional[Callable[[ast.AST], bool]] = None) -> list:
        """The values bound to `name` in `scope`: those `reaching` keeps (an assignment
        dominates the read: no parameter), else those `flowing` keeps (and the parameter)."""
        index = self.index
        out = []
        for node in index.names.get(name, ()):
            if not isinstance(node.ctx, ast.Store) or index.function_of(node) is not scope:
                continue
            if reaching is not None and not reaching(node):
                continue
            if flowing is not None and not flowing(node):
                continue
            parent = index.parents.get(node)
            if isinstance(parent, ast.Assign) and node in parent.targets:
                out.append(parent.value)
            elif isinstance(parent, ast.AugAssign) and isinstance(parent.op, (ast.Add, ast.Sub, ast.Mult, ast.Div)):
                out.append(parent.value)
            else:
                out.append(self._target(node))
        if isinstance(scope, (ast.FunctionDef, ast.AsyncFunctionDef)) and name in nm.function_params(scope) \
                and reaching is None:  # a parameter assigned before the read holds that value
            out.append(None)
        return out

    def _target(self, node: ast.Name):
        """A name in a loop target or unpacked: `Element` / `Unpacked` with its place in
        the (nested) tuple; None for anything else (`with ... as`, a starred target)."""
        index = self.index
        path: Tuple[int, ...] = ()
        child, parent = node, index.parents.get(node)
        while isinstance(parent, (ast.Tuple, ast.List)):
            if any(isinstance(e, ast.Starred) for e in parent.elts):
                return None
            path = (parent.elts.index(child),) + path
            child, parent = parent, index.parents.get(parent)
        if isinstance(parent, (ast.For, ast.comprehension)) and parent.target is child:
            return Element(parent.iter, path)
        if path and isinstance(parent, ast.Assign) and child in parent.targets:
            return Unpacked(parent.value, path)
        return None

    def class_family(self, cls: ast.ClassDef) -> List[ast.ClassDef]:
        """`cls` with the module-level classes of this module it inherits from and that inherit
        from it, transitively (bases named by a plain name)."""
        cached = self._families.get(id(cls))
        if cached is not None:
            return cached
        self._families[id(cls)] = family = self._family(cls)
        return family

    def _family(self, cls: ast.ClassDef) -> List[ast.ClassDef]:
        classes = {s.name: s for s in self.index.module_statements if isinstance(s, ast.ClassDef)}
        if classes.get(cls.name) is not cls:
            return [cls]  # a nested class, or a name bound twice: itself alone

        def bases(c: ast.ClassDef) -> List[ast.ClassDef]:
            return [classes[b.id] for b in c.bases if isinstance(b, ast.Name) and b.id in classes]

        family, grown = [cls], True
        while grown:
            grown = False
            for other in classes.values():
                if other not in family and (any(b in family for b in bases(other))
                                            or any(b is other for c in family for b in bases(c))):
                    family.append(other)
                    grown = True
        return family

    def of(self, expr: ast.AST, at: ast.AST) -> Optional[list]:
        """The bindings of a name (`criterion`) or of `self.<attr>` (`self.criterion`) where
        `at` reads it; None for any other expression."""
        if isinstance(expr, ast.Name):
            return self.bindings(expr.id, at)
        if isinstance(expr, ast.Attribute) and isinstance(expr.value, ast.Name) and expr.value.id == "self":
            return self.self_bindings(expr.attr, at)
        return None

    def self_bindings(self, attr: str, at: ast.AST, unpacked: bool = False) -> list:
        """Values assigned to `self.<attr>` in the methods of the class holding `at` and of the
        classes of this module it inherits from or that inherit from it (`self` may be any of
        them: `StyleLoss(ContentLoss)` keeps the `self.criterion` its base's `__init__` sets).
        With `unpacked`, `actions, self.entropy = f()` gives `Unpacked` (else None)."""
        index = self.index
        cls = index.method_class(index.function_of(at))
        if cls is None:
            return []
        family = self.class_family(cls)
        out = []
        for node in index.attributes.get(attr, ()):
            if not (isinstance(node.ctx, ast.Store) and isinstance(node.value, ast.Name) and node.value.id == "self"):
                continue
            if index.method_class(index.function_of(node)) not in family:
                continue
            parent = index.parents.get(node)
            if isinstance(parent, ast.Assign) and node in parent.targets:
                out.append(parent.value)
            else:
                found = self._target(node) if unpacked else None
                out.append(found if isinstance(found, Unpacked) else None)
        return out
