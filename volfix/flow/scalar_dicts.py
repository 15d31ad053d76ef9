"""One-element values held in dicts, the dict half of `ScalarValues` (a mixin: it supplies
`index`, `names`, `_guarded`, `one_element`, `elements`, `every_return`, `project_callee`,
`_builtin`): every value of a dict the module builds (`losses = {}`, then `losses[name] =
criterion(...)`; `self._losses` set in the class's methods), and the value at one string key
(`errs = self._errs(pi, a)` returning `dict(policy_err=...)`, then `errs["policy_err"]`)."""
from __future__ import annotations

import ast
from typing import Optional, Set, Tuple

MAX_DEPTH = 24  # how deep one question of `ScalarValues` (and of this half) goes


class DictValues:
    """The dict questions of `ScalarValues`."""

    def dict_values(self, expr: ast.AST, at: ast.AST, depth: int, seen: Set[str]) -> bool:
        """Every value of the dict `expr` is one element: a name bound only to dict
        displays of such values (`losses = {}`), to which only `losses[key] = value`
        stores such values (no `update`, `setdefault` or other writes); or such an attribute
        of `self`, bound and stored to in the methods of its class (`self._losses`)."""
        if depth > MAX_DEPTH:
            return False
        if isinstance(expr, ast.Attribute) and isinstance(expr.value, ast.Name) and expr.value.id == "self":
            cls = self.index.method_class(self.index.function_of(at))
            return cls is not None and self._guarded(f"{{}} {id(cls)} self.{expr.attr}", seen, True,
                                                     lambda: self._self_dict_values(expr.attr, at, depth, seen))
        if not isinstance(expr, ast.Name):
            return False
        return self._guarded("{} " + self.names.key(expr.id, at), seen, True,
                             lambda: self._dict_values(expr.id, at, depth, seen))

    def keyed(self, expr: ast.AST, key: str, at: ast.AST, depth: int, seen: Set[str]) -> bool:
        """The value at `key` of the dict `expr` is one element: a dict display or a
        `dict(key=...)` call spelling that key, a call of a def of this module (or of a method
        of the class on `self`) whose every return is one, or a name bound only to such
        values (ELF's `errs = self._errs(pi, a)`, then `errs["policy_err"].data[0]`)."""
        if depth > MAX_DEPTH:
            return False
        if isinstance(expr, ast.Dict):
            found = [v for k, v in zip(expr.keys, expr.values) if k is None or not isinstance(k, ast.Constant)
                     or k.value == key]
            return len(found) == 1 and expr.keys[expr.values.index(found[0])] is not None \
                and self.one_element(found[0], found[0], depth + 1, seen)
        if isinstance(expr, ast.Call) and self._builtin(expr.func, "dict", at) and not expr.args:
            found = [k.value for k in expr.keywords if k.arg == key or k.arg is None]
            return len(found) == 1 and any(k.arg == key for k in expr.keywords) \
                and self.one_element(found[0], found[0], depth + 1, seen)
        if isinstance(expr, ast.Call):
            return self.project_callee(expr.func, at) is not None and self.every_return(
                expr.func, at, f"[{key!r}] ", set(seen), lambda v, inner: self.keyed(v, key, v, depth + 1, inner))
        if isinstance(expr, ast.Name):
            values = self.names.bindings(expr.id, at)
            writes = [n for n in self._local_reads(expr.id, at) if _writes_dict(self.index.parents.get(n), n)]
            return not writes and self._guarded(f"[{key!r}] " + self.names.key(expr.id, at), seen, True, lambda: bool(
                values) and all(isinstance(v, ast.AST) and self.keyed(v, key, v, depth + 1, seen) for v in values))
        return False

    def _dict_values(self, name: str, at: ast.AST, depth: int, seen: Set[str]) -> bool:
        return self._dict_of_ones(self.names.bindings(name, at), self._local_reads(name, at), at, depth, seen)

    def _local_reads(self, name: str, at: ast.AST) -> list:
        """The reads of `name` in the scope holding `at` (a dict's writes go through them)."""
        scope = self.index.function_of(at)
        return [n for n in self.index.names.get(name, ())
                if self.index.function_of(n) is scope and isinstance(n.ctx, ast.Load)]

    def _self_dict_values(self, attr: str, at: ast.AST, depth: int, seen: Set[str]) -> bool:
        parts = self._self_dict(attr, at)
        return parts is not None and self._dict_of_ones(parts[0], parts[1], at, depth, seen)

    def _self_dict(self, attr: str, at: ast.AST) -> Optional[Tuple[list, list]]:
        """The bindings of `self.attr` and its reads in the methods of the class holding `at`
        (the dict's writes go through them); None when code outside the class writes it
        (`net._losses['x'] = ...`)."""
        if self.index.written_on_others(attr):
            return None
        family = self.names.class_family(self.index.method_class(self.index.function_of(at)))
        reads = [n for n in self.index.attributes.get(attr, ()) if isinstance(n.ctx, ast.Load)
                 and isinstance(n.value, ast.Name) and n.value.id == "self" and self._method_of(n) in family]
        return self.names.self_bindings(attr, at), reads

    def _method_of(self, node: ast.AST) -> Optional[ast.ClassDef]:
        """The class whose method holds `node`, also inside a function nested in the method
        (a forward hook `def hook(m, i, output): self.outputs["out"] = output` reads `self`)."""
        fn = self.index.function_of(node)
        while isinstance(fn, (ast.FunctionDef, ast.AsyncFunctionDef, ast.Lambda)):
            cls = self.index.method_class(fn)
            if cls is not None:
                return cls
            fn = self.index.function_of(fn)
        return None

    def _dict_of_ones(self, values: list, reads: list, at: ast.AST, depth: int, seen: Set[str]) -> bool:
        """`values` (a dict's bindings) are dict displays of one-element values, and what the
        `reads` of the dict store into it (`d[key] = value`) is one element."""
        if not values or not all(isinstance(v, ast.Dict) and None not in v.keys or self._zipped(v, at) is not None
                                 for v in values):
            return False
        stored = self._stored(reads)
        if stored is None:
            return False
        if not stored and all(isinstance(d, ast.Dict) and not d.values for d in values):
            return False  # `{}` and nothing stored that volfix sees: no value to tell
        return all(self.elements(self._zipped(d, at), at, depth + 1, seen) if not isinstance(d, ast.Dict)
                   else all(self.one_element(v, v, depth + 1, seen) for v in d.values) for d in values) and all(
            self.one_element(v, v, depth + 1, seen) for v in stored)

    def _stored(self, reads: list) -> Optional[list]:
        """What the `reads` of a dict store into it (`d[key] = value`); None when one writes
        otherwise (`d.update(...)`, an augmented or unpacking assignment)."""
        stored = []
        for node in reads:
            parent = self.index.parents.get(node)
            if _writes_dict(parent, node):
                if not isinstance(parent, ast.Subscript):  # `d.update(...)`: what it stores is not read here
                    return None
                holder = self.index.parents.get(parent)
                if isinstance(parent.ctx, ast.Del):
                    continue
                if not (isinstance(holder, ast.Assign) and parent in holder.targets):
                    return None
                stored.append(holder.value)
        return stored

    def stored_values(self, expr: ast.AST, at: ast.AST) -> Optional[list]:
        """Every value the dict `self.attr` (bound and stored to in its class's methods, as
        `dict_values` reads it) or name holds: those of its dict displays and those stored into
        it; None when it is bound or written otherwise."""
        if isinstance(expr, ast.Attribute) and isinstance(expr.value, ast.Name) and expr.value.id == "self":
            parts = self._self_dict(expr.attr, at) \
                if self.index.method_class(self.index.function_of(at)) is not None else None
            if parts is None:
                return None
            values, reads = parts
        elif isinstance(expr, ast.Name):
            values, reads = self.names.bindings(expr.id, at), self._local_reads(expr.id, at)
        else:
            return None
        if not values or not all(isinstance(v, ast.Dict) and None not in v.keys for v in values):
            return None
        stored = self._stored(reads)
        return None if stored is None else [v for d in values for v in d.values] + stored

    def _zipped(self, value: ast.AST, at: ast.AST) -> Optional[ast.AST]:
        """`dict(zip(names, losses))`: the sequence of its values (`losses`); else None."""
        if not (isinstance(value, ast.Call) and self._builtin(value.func, "dict", at) and len(value.args) == 1
                and not value.keywords):
            return None
        inner = value.args[0]
        if isinstance(inner, ast.Call) and self._builtin(inner.func, "zip", at) and len(inner.args) == 2 \
                and not inner.keywords and not any(isinstance(a, ast.Starred) for a in inner.args):
            return inner.args[1]
        return None


DICT_MUTATORS = frozenset({"update", "setdefault", "__setitem__"})


def _writes_dict(parent: Optional[ast.AST], node: ast.AST) -> bool:
    """A read `node` of a dict through which the dict changes: `d[k] = v`, `del d[k]`,
    `d.update(...)` (its `parent` is the subscript or the attribute)."""
    return isinstance(parent, ast.Subscript) and parent.value is node and not isinstance(parent.ctx, ast.Load) \
        or isinstance(parent, ast.Attribute) and parent.attr in DICT_MUTATORS
