"""The items of a returned tuple that hold a volatile value (SPEC §2.6): a helper returning
`idxs, Variable(states), next_states` with only `next_states` volatile makes only that name
volatile where a caller unpacks it (`idxs, states, next_states = mem.sample(n)`) or indexes a
name bound once to it (`batch = mem.sample(n)`, then `batch[2]`). `returned_items` reads the
helper's returns, `reaches_only` says whether a call runs that helper alone, and `TupleItems`
is the taint walk's half (`flow.taint.TaintAnalysis` inherits it)."""
from __future__ import annotations

import ast
from typing import Dict, FrozenSet, List, Optional, Set, Tuple

from ..syntax.index import ModuleIndex
from .calls import made_here
from .shapes import own_returns
from .values import State, key_of

Items = Tuple[int, FrozenSet[int]]  # (size of the tuple, positions holding the value)


def returned_items(fn: ast.AST, taint, sources: List[ast.AST]) -> Optional[Items]:
    """(size, positions) when every `return` of `fn` is a tuple of one size and the volatile
    value (a source, or a name the taint reached) is only at some positions: `return
    Variable(states), next_states` hands the caller's `states, next_states = mem.sample(n)`
    one volatile item. None when any return is something else, or every item may hold it."""
    size: Optional[int] = None
    held: Set[int] = set()
    ids = {id(s) for s in sources}
    tainted = taint.tainted_keys
    for ret in own_returns(fn):
        value = ret.value
        if not isinstance(value, ast.Tuple) or any(isinstance(e, ast.Starred) for e in value.elts) \
                or size not in (None, len(value.elts)):
            return None
        size = len(value.elts)
        for i, elt in enumerate(value.elts):
            for sub in ast.walk(elt):
                key = key_of(sub) if isinstance(sub, (ast.Name, ast.Attribute)) else None
                if id(sub) in ids or key is not None and any(
                        k == key or k.startswith(key + ".") for k in tainted):
                    held.add(i)
                    break
    if size is None or len(held) == size:
        return None
    return size, frozenset(held)


def reaches_only(index: ModuleIndex, site: ast.Call, fn: ast.AST) -> bool:
    """The call `site` (one of `call_sites(fn)`) runs `fn` and no other def of the module: no
    other def has its name, or the receiver is made by `fn`'s own class (`Memory0().sample(x)`
    beside a `Memory1.sample`)."""
    name = fn.name  # type: ignore[attr-defined]
    if sum(getattr(f, "name", None) == name for f in index.functions) == 1:
        return True
    owner = index.method_class(fn)
    receiver = site.func.value if isinstance(site.func, ast.Attribute) else None
    return owner is not None and made_here(index, receiver) is owner


class TupleItems:
    """The taint walk's reading of item-narrowed sources (`TaintAnalysis(items=...)`)."""

    index: ModuleIndex
    scope: ast.AST
    items: Dict[int, Items]  # source node id -> its items
    _item_names: Dict[str, Items]  # `batch = mem.sample(n)`, bound once in the scope

    def _items(self, value: ast.AST, state: State) -> Optional[Items]:
        """(size, positions) of the tuple `value` is, when only those items hold the volatile
        value: a helper's call whose returns say so (`self.items`), given nothing volatile
        itself, or a name bound once to one (`batch = mem.sample(n)`, then `s, n = batch`)."""
        if isinstance(value, ast.Name):
            return self._item_names.get(value.id)
        items = self.items.get(id(value))
        if items is not None and _reads_any(value, state):
            return None  # what the call is given is volatile too: any item may carry it
        return items

    def _item_position(self, node: ast.Subscript) -> Optional[bool]:
        """Whether `batch[k]` (a constant index of a name `_items` knows) holds the value."""
        if not isinstance(node.value, ast.Name) or node.value.id not in self._item_names:
            return None
        size, positions = self._item_names[node.value.id]
        index = node.slice
        negative = isinstance(index, ast.UnaryOp) and isinstance(index.op, ast.USub)
        if negative:
            index = index.operand  # type: ignore[attr-defined]
        if not (isinstance(index, ast.Constant) and type(index.value) is int):
            return None
        k = size - index.value if negative else index.value
        return k in positions if 0 <= k < size else None

    def _bound_once(self, name: str) -> bool:
        """`name` is stored once in the scope (so what `_items` knows of it holds at every read)."""
        stores = [n for n in self.index.names.get(name, ()) if isinstance(n.ctx, ast.Store)
                  and self.index.function_of(n) is self.scope]
        return len(stores) == 1


def _reads_any(node: ast.AST, state: State) -> bool:
    """Whether the expression reads a key `state` holds (below `node` itself)."""
    for sub in ast.walk(node):
        key = key_of(sub) if isinstance(sub, (ast.Name, ast.Attribute)) and sub is not node else None
        if key is not None and key in state:
            return True
    return False
