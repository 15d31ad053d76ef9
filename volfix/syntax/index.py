"""One walk over a module: parents, nodes bucketed for the rules, scopes and name lookups.

Rules never walk the tree themselves: they declare which nodes they handle (`Rule.on`), the
index collects those nodes in the one walk that also builds the parent map, and the engine
hands each rule its nodes in source order.
"""
from __future__ import annotations

import ast
import re
from typing import Callable, Dict, List, Optional, Set, Tuple

from . import names as nm
from .positions import SourceText, indent_step

SCOPES = (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef, ast.Lambda)
FUNCTIONS = (ast.FunctionDef, ast.AsyncFunctionDef)
COMPREHENSIONS = (ast.ListComp, ast.SetComp, ast.DictComp, ast.GeneratorExp)  # scopes of their own too
BLOCK_FIELDS = ("body", "orelse", "finalbody")


def callee_key(call: ast.Call) -> str:
    """The last identifier of a call's callee (`Variable`, `ag.Variable` -> 'Variable')."""
    func = call.func
    if isinstance(func, ast.Name):
        return func.id
    if isinstance(func, ast.Attribute):
        return func.attr
    return ""


# Fields that never hold a node volfix asks about: names and numbers, and the shared
# singletons of contexts and operators (`ast.Load()`, `ast.Add()`), whose parent is meaningless.
_SCALAR_FIELDS = frozenset({"ctx", "op", "ops", "id", "attr", "arg", "name", "type_comment", "kind",
                            "level", "module", "conversion", "is_async", "simple", "value_is_str"})
_JUMPS = (ast.Break, ast.Continue, ast.Return, ast.Raise)
_REVERSED_FIELDS: Dict[type, Tuple[str, ...]] = {}  # a node type's child fields, last first
_STATEMENTS = frozenset(cls for cls in vars(ast).values() if isinstance(cls, type) and issubclass(cls, ast.stmt))


def _bound_names(tree: ast.AST) -> Set[str]:
    """The names a def or class, a parameter, an import, `global`/`nonlocal` or `except ... as`
    binds anywhere in `tree` (one walk; assignment targets are the index's stored `Name`s)."""
    out: Set[str] = set()
    for node in ast.walk(tree):
        if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef, ast.ExceptHandler)):
            if node.name:
                out.add(node.name)
        elif isinstance(node, ast.arg):
            out.add(node.arg)
        elif isinstance(node, (ast.Import, ast.ImportFrom)):
            out.update(a.asname or a.name.partition(".")[0] for a in node.names)
        elif isinstance(node, (ast.Global, ast.Nonlocal)):
            out.update(node.names)
    return out


def _child_fields(kind: type) -> Tuple[str, ...]:
    return tuple(f for f in kind._fields if f not in _SCALAR_FIELDS)


class ModuleIndex:
    """Parents, buckets of nodes, scopes and name resolution for one parsed module."""

    def __init__(self, tree: ast.Module, src: SourceText, *, inherited: Optional[dict] = None,
                 notebook: bool = False):
        self.tree = tree
        self.src = src
        self.parents: Dict[ast.AST, ast.AST] = {}
        self.names: Dict[str, List[ast.Name]] = {}
        self.attributes: Dict[str, List[ast.Attribute]] = {}
        self.calls: Dict[str, List[ast.Call]] = {}
        self.by_type: Dict[type, List[ast.AST]] = {}
        self.functions: List[ast.AST] = []
        self.multiline_strings: List[ast.AST] = []
        self.divisions: List[ast.BinOp] = []  # every `a / b` (VF410's question)
        self.mentions: Dict[str, Set[int]] = {}  # name -> ids of statements whose own expressions read it
        self.module_statements: List[ast.stmt] = []  # every statement not inside a def or class, in order
        self.declared: Set[str] = set()  # names some `global` or `nonlocal` statement declares
        self.notebook = notebook  # the cells of a notebook, run one after the other
        self._walk(tree)
        self.module_names = nm.ModuleNames(self.module_statements, inherited)
        self._function_bindings: Dict[int, nm.Bindings] = {}
        self._steps: Dict[Optional[Tuple[int, int]], str] = {}
        self._names_by_statement: Optional[Dict[int, Tuple[str, ...]]] = None
        self._slots: Dict[int, Optional[Tuple[ast.AST, str, list, int]]] = {}
        self._assignments: Dict[int, Dict[str, List[ast.AST]]] = {}
        self._binds_anywhere: Dict[str, bool] = {}
        self._written_on_others: Dict[str, bool] = {}
        self.free_returns: Dict[int, bool] = {}  # id of a def -> `flow.values.returns_autograd_free`
        self.data_builders: Dict[int, bool] = {}  # id of a def -> `flow.taint_facts.data_builder`
        self.kept_parameters: Dict[Tuple[int, str], bool] = {}  # `flow.values.keeps_parameter`
        self._defined_names: Optional[Set[str]] = None
        self._global_reads: Dict[int, frozenset] = {}
        self._global_readers: Optional[Dict[str, Tuple[str, ...]]] = None
        self._module_functions: Optional[Dict[str, ast.AST]] = None
        self._module_level_defs: Dict[str, Optional[ast.AST]] = {}  # `module_level_def`
        self._bound_elsewhere: Optional[Set[str]] = None  # `_bound_names`, on first use
        self._loaded_names: Dict[int, Tuple[str, ...]] = {}
        self._jumps: Dict[int, bool] = {}
        self._block_mentions: Dict[int, "BlockMentions"] = {}
        self._block_assignments: Dict[int, Dict[str, List[int]]] = {}
        # The project's grad-mode functions of other files this module calls, by the name it
        # calls them (`volfix.flow.grad_mode.GradShim`; set from the file's project links).
        self.grad_shims: Dict[str, object] = {}
        self._grad_shim_cache: Dict[int, object] = {}
        # What functions, instances and methods of other files of the project return, by the
        # qualified name this module calls them (`volfix.flow.scalars`; from the file's links).
        self.scalar_returns: Dict[str, Tuple[str, ...]] = {}
        # Statement-level control flow of a scope, built once for every analysis that asks
        # (`volfix.flow.defuse.Graph.build`): id(scope) -> (scope, the graph or None).
        self.flow_graphs: Dict[int, Tuple[ast.AST, object]] = {}

    def _walk(self, tree: ast.Module) -> None:
        """One depth-first walk in source order: parents, buckets, and for every name the
        statements that mention it in their own expressions (`mentions`). The walk is the
        engine's largest cost after `ast.parse`: a node's children are pushed straight onto
        the stack, last first (`_REVERSED_FIELDS`), and names and constants, most of the
        nodes, are done first."""
        parents, names, attributes, calls, by_type = (self.parents, self.names, self.attributes,
                                                       self.calls, self.by_type)
        mentions = self.mentions
        module_statements = self.module_statements
        functions, multiline_strings, divisions = self.functions, self.multiline_strings, self.divisions
        AST, Name, Attribute, Call, Constant = ast.AST, ast.Name, ast.Attribute, ast.Call, ast.Constant
        collected = (ast.Compare, ast.Dict, ast.Subscript)
        scopes = SCOPES
        statements = _STATEMENTS
        fields_of = _REVERSED_FIELDS
        stack = [(tree, None, True)]
        push, pop = stack.append, stack.pop
        while stack:
            node, owner, at_module = pop()
            kind = type(node)
            if kind is Name:
                names.setdefault(node.id, []).append(node)
                found = mentions.get(node.id)
                if found is None:
                    mentions[node.id] = {id(owner)}
                else:
                    found.add(id(owner))
                continue
            if kind is Constant:
                if node.end_lineno != node.lineno:
                    multiline_strings.append(node)
                continue
            if kind in statements:
                owner = node
                if at_module:
                    module_statements.append(node)
            if kind is Attribute:
                attributes.setdefault(node.attr, []).append(node)
            elif kind is Call:
                calls.setdefault(callee_key(node), []).append(node)
            elif kind in collected:
                by_type.setdefault(kind, []).append(node)
            elif kind is ast.BinOp and type(node.op) is ast.Div:
                divisions.append(node)
            elif kind is ast.FunctionDef or kind is ast.AsyncFunctionDef:
                functions.append(node)
            elif kind is ast.Global or kind is ast.Nonlocal:
                for name in node.names:
                    mentions.setdefault(name, set()).add(id(node))
                    self.declared.add(name)
            elif kind is ast.JoinedStr:
                if node.end_lineno != node.lineno:
                    multiline_strings.append(node)
            inner = at_module and not isinstance(node, scopes)
            fields = fields_of.get(kind)
            if fields is None:
                fields = fields_of[kind] = _child_fields(kind)[::-1]
            for name in fields:
                value = getattr(node, name, None)
                if type(value) is list:
                    for item in reversed(value):
                        if isinstance(item, AST):
                            parents[item] = node
                            push((item, owner, inner))
                elif isinstance(value, AST):
                    parents[value] = node
                    push((value, owner, inner))

    # ------------------------------------------------------------------ structure
    def names_mentioned(self, stmt_id: int) -> Tuple[str, ...]:
        """The names a statement's own expressions read (`mentions` inverted, once)."""
        if self._names_by_statement is None:
            by_statement: Dict[int, List[str]] = {}
            for name, ids in self.mentions.items():
                for sid in ids:
                    by_statement.setdefault(sid, []).append(name)
            self._names_by_statement = {sid: tuple(names) for sid, names in by_statement.items()}
        return self._names_by_statement.get(stmt_id, ())

    def loaded_names(self, node: ast.AST) -> Tuple[str, ...]:
        """The distinct names read (`ast.Load`) anywhere in `node`, in `ast.walk` order of their
        first read (one walk a definition: the taint asks it of every def after a source)."""
        found = self._loaded_names.get(id(node))
        if found is None:
            seen: Dict[str, None] = {}
            for sub in ast.walk(node):
                if isinstance(sub, ast.Name) and isinstance(sub.ctx, ast.Load):
                    seen.setdefault(sub.id, None)
            found = self._loaded_names[id(node)] = tuple(seen)
        return found

    def block_mentions(self, stmts: List[ast.stmt]) -> "BlockMentions":
        """Where the names are in a long block (`BlockMentions`), built once a block."""
        found = self._block_mentions.get(id(stmts))
        if found is None:
            found = self._block_mentions[id(stmts)] = BlockMentions(self, stmts)
        return found

    def block_assignments(self, stmts: List[ast.stmt]) -> Dict[str, List[int]]:
        """Name -> the positions, in order, of the block's plain `=` statements (`ast.Assign`)
        that bind it (`syntax.names.target_names` of their targets), built once a block."""
        found = self._block_assignments.get(id(stmts))
        if found is None:
            from .names import target_names

            found = self._block_assignments[id(stmts)] = {}
            for i, stmt in enumerate(stmts):
                if isinstance(stmt, ast.Assign):
                    for target in stmt.targets:
                        for name in target_names(target):
                            at = found.setdefault(name, [])
                            if not at or at[-1] != i:
                                at.append(i)
        return found

    def holds_jump(self, stmt: ast.AST) -> bool:
        """Does `stmt` hold a `break`, `continue`, `return` or `raise` anywhere (remembered)?"""
        found = self._jumps.get(id(stmt))
        if found is None:
            found = self._jumps[id(stmt)] = any(isinstance(n, _JUMPS) for n in ast.walk(stmt))
        return found

    def assigned_values(self, scope: ast.AST) -> Dict[str, List[ast.AST]]:
        """Name -> the values the scope's plain `name = value` statements assign (one walk a
        scope: a module-level script asks for every name of every line)."""
        found = self._assignments.get(id(scope))
        if found is None:
            found = self._assignments[id(scope)] = {}
            body = scope.body if isinstance(getattr(scope, "body", None), list) else []
            for stmt in nm.iter_statements(body):
                if isinstance(stmt, ast.Assign):
                    for name in dict.fromkeys(t.id for t in stmt.targets if isinstance(t, ast.Name)):
                        found.setdefault(name, []).append(stmt.value)
        return found

    def plain_assignments(self, name: str, scope: ast.AST) -> Optional[List[ast.AST]]:
        """The values `scope` binds `name` to when its every binding there (as a name of the
        scope, not of a nested one) is a plain `name = value`: None when another kind binds it
        (a loop or tuple target, `+=`, `del`, `with ... as`); [] when nothing binds it there."""
        values: List[ast.AST] = []
        for node in self.names.get(name, ()):
            if isinstance(node.ctx, ast.Load) or self.function_of(node) is not scope:
                continue
            parent = self.parents.get(node)
            if not (isinstance(parent, ast.Assign) and any(t is node for t in parent.targets)):
                return None
            values.append(parent.value)
        return values

    def own_parameter(self, name: ast.AST, at: Optional[ast.AST] = None) -> Optional[ast.AST]:
        """The function (or lambda) enclosing `at` (else `name`) when `name` reads a parameter
        of it that nothing there binds again: what its calls pass (`self.criterion = criterion`
        in `__init__(self, model, criterion)`)."""
        if not isinstance(name, ast.Name):
            return None
        fn = self.function_of(name if at is None else at)
        if not isinstance(fn, (ast.FunctionDef, ast.AsyncFunctionDef, ast.Lambda)) \
                or name.id not in nm.function_params(fn) or self.plain_assignments(name.id, fn) != []:
            return None
        return fn

    def comprehension_binds(self, node: ast.AST, name: str) -> bool:
        """Is `node` inside a comprehension (of its statement) whose own targets include `name`
        (`[hyp for hyp, score in ranked]` binds its own `hyp`)?"""
        cur = self.parents.get(node)
        while cur is not None and not isinstance(cur, ast.stmt):
            if isinstance(cur, COMPREHENSIONS) and any(
                    name in nm.target_names(g.target) for g in cur.generators):
                return True
            cur = self.parents.get(cur)
        return False

    def scope_of(self, node: ast.AST) -> ast.AST:
        """The innermost def, lambda or class holding `node` (the module if none)."""
        cur = self.parents.get(node)
        while cur is not None and not isinstance(cur, SCOPES):
            cur = self.parents.get(cur)
        return cur if cur is not None else self.tree

    def function_of(self, node: ast.AST) -> ast.AST:
        """Like scope_of, skipping class bodies (which are not enclosing scopes)."""
        scope = self.scope_of(node)
        while isinstance(scope, ast.ClassDef):
            scope = self.scope_of(scope)
        return scope

    def statement_of(self, node: ast.AST) -> ast.stmt:
        cur = node
        while not isinstance(cur, ast.stmt):
            cur = self.parents[cur]
        return cur

    def top_statement(self, node: ast.AST) -> ast.stmt:
        """The module-level statement holding `node`."""
        cur = node
        while self.parents.get(cur) is not self.tree:
            cur = self.parents[cur]
        return cur  # type: ignore[return-value]

    def block_of(self, stmt: ast.stmt) -> Optional[Tuple[ast.AST, str, list]]:
        """(owner, field, statements) of the block holding `stmt`."""
        slot = self.slot_of(stmt)
        return None if slot is None else slot[:3]

    def slot_of(self, stmt: ast.stmt) -> Optional[Tuple[ast.AST, str, list, int]]:
        """(owner, field, statements, position) of `stmt` in its block. The blocks of a
        parent are enumerated once: a long module asks for every statement."""
        sid = id(stmt)
        slot = self._slots.get(sid)
        if slot is None and sid not in self._slots:
            parent = self.parents.get(stmt)
            for name in BLOCK_FIELDS:
                block = getattr(parent, name, None)
                if isinstance(block, list):
                    for i, s in enumerate(block):
                        self._slots[id(s)] = (parent, name, block, i)  # type: ignore[assignment]
            slot = self._slots.setdefault(sid, None)
        return slot

    def siblings(self, stmt: ast.stmt) -> Optional[list]:
        found = self.block_of(stmt)
        return found[2] if found else None

    def method_class(self, fn: ast.AST) -> Optional[ast.ClassDef]:
        owner = self.parents.get(fn)
        return owner if isinstance(owner, ast.ClassDef) else None

    def enclosing(self, node: ast.AST, kinds) -> List[ast.AST]:
        """Ancestors of `node` of the given types, innermost first, up to its scope."""
        out = []
        cur = self.parents.get(node)
        while cur is not None and not isinstance(cur, SCOPES + (ast.Module,)):
            if isinstance(cur, kinds):
                out.append(cur)
            cur = self.parents.get(cur)
        return out

    # ------------------------------------------------------------------ names
    def function_bindings(self, fn: ast.AST) -> nm.Bindings:
        key = id(fn)
        found = self._function_bindings.get(key)
        if found is None:
            body = fn.body if isinstance(fn.body, list) else []  # type: ignore[attr-defined]
            params = nm.function_params(fn) if not isinstance(fn, ast.ClassDef) else []
            found = nm.scope_bindings(body, None, params)
            self._function_bindings[key] = found
        return found

    def lookup_for(self, node: ast.AST) -> Callable[[str], Optional[str]]:
        """`name -> qualified name` as seen where `node` runs."""
        chain = []
        scope = self.scope_of(node)
        while not isinstance(scope, ast.Module):
            if not isinstance(scope, ast.ClassDef):
                chain.append(self.function_bindings(scope))
            scope = self.scope_of(scope)
        module = self.module_names
        if not chain:
            row = self.statement_of(node).lineno if not isinstance(node, ast.Module) else 1 << 30
            return lambda name: module.at(name, row)

        def lookup(name: str) -> Optional[str]:
            for bindings in chain:
                if name in bindings:
                    return bindings[name]
            return module.final.get(name)

        return lookup

    def qual(self, expr: ast.AST) -> Optional[str]:
        return nm.qualified_name(expr, self.lookup_for(expr))

    def is_variable(self, func: ast.AST) -> bool:
        return nm.is_variable(self.qual(func))

    def imports_torch(self) -> bool:
        return any(nm.is_torch(q) for name in self.module_names.final
                   for q in self.module_names.every(name))

    def imports_any(self, packages: frozenset) -> bool:
        """Whether a module-level import binds a module of one of `packages` (top-level names)."""
        return any(q.partition(".")[0] in packages for name in self.module_names.final
                   for q in self.module_names.every(name))

    def binds_anywhere(self, name: str) -> bool:
        """Whether any scope of the module binds `name`: an assignment or loop target, a
        parameter, a def or class, an import, `global`/`nonlocal`, `except ... as`."""
        found = self._binds_anywhere.get(name)
        if found is None:
            if self._bound_elsewhere is None:
                self._bound_elsewhere = _bound_names(self.tree)
            found = name in self._bound_elsewhere or any(not isinstance(n.ctx, ast.Load)
                                                         for n in self.names.get(name, ()))
            self._binds_anywhere[name] = found
        return found

    def written_on_others(self, attr: str) -> bool:
        """`net._losses = ...`, `net._losses[k] = v`, `net._losses.update(...)` on anything but
        `self`, anywhere in the file's text (read as text, once per attribute: a big file's
        statements that hold no legacy code are stubs in the tree, `syntax.big_files`)."""
        found = self._written_on_others.get(attr)
        if found is None:
            pattern = re.compile(r"(\w+)\s*\.\s*" + re.escape(attr) + r"\s*(?:\[[^\]\n]*\]\s*=(?!=)|=(?!=)|\.\s*"
                                 r"(?:update|setdefault|__setitem__)\s*\()")
            found = any(m.group(1) != "self" for m in pattern.finditer(self.src.text))
            self._written_on_others[attr] = found
        return found

    def module_def(self, name: str, at: ast.AST) -> Optional[ast.AST]:
        """The one module-level `def name` or `class name` a read of `name` at `at` reaches:
        no local binding, no other module-level binding (an assignment, an import, a second def)."""
        return None if self.shadowed(name, self.scope_of(at)) else self.module_level_def(name)

    def module_level_def(self, name: str) -> Optional[ast.AST]:
        """The module's one `def name` or `class name` when nothing else at module level binds
        `name` (an assignment, an import, a second def); remembered per name."""
        if name not in self._module_level_defs:
            found = [s for s in self.module_statements if isinstance(s, (ast.FunctionDef, ast.ClassDef))
                     and s.name == name]
            imported = any(bound == name for s in self.module_statements if isinstance(s, (ast.Import, ast.ImportFrom))
                           for bound, _ in nm.import_bindings(s))
            single = len(found) == 1 and not self.assigned_values(self.tree).get(name) and not imported
            self._module_level_defs[name] = found[0] if single else None
        return self._module_level_defs[name]

    def global_reads(self, fn: ast.AST) -> Set[str]:
        """The module-level names `fn` (with what it nests) reads: loaded and never bound in
        it, or declared `global` there."""
        found = self._global_reads.get(id(fn))
        if found is None:
            loaded, stored, declared = set(), set(), set()
            for node in ast.walk(fn):
                if isinstance(node, ast.Name):
                    (loaded if isinstance(node.ctx, ast.Load) else stored).add(node.id)
                elif isinstance(node, ast.Global):
                    declared.update(node.names)
            bound = (_bound_names(fn) | stored) - declared - {fn.name}  # type: ignore[attr-defined]
            found = self._global_reads[id(fn)] = frozenset(loaded - bound)
        return found

    @property
    def module_functions(self) -> Dict[str, ast.AST]:
        """name -> the module-level `def` of that name (the last one)."""
        if self._module_functions is None:
            self._module_functions = {s.name: s for s in self.module_statements
                                      if isinstance(s, (ast.FunctionDef, ast.AsyncFunctionDef))}
        return self._module_functions

    def global_readers(self, name: str) -> Tuple[str, ...]:
        """The module-level defs that read the module's `name` (`global_reads`), by name."""
        if self._global_readers is None:
            readers: Dict[str, List[str]] = {}
            for fn in self.module_functions.values():
                for read in self.global_reads(fn):
                    readers.setdefault(read, []).append(fn.name)  # type: ignore[attr-defined]
            self._global_readers = {k: tuple(v) for k, v in readers.items()}
        return self._global_readers.get(name, ())

    @property
    def defined_names(self) -> Set[str]:
        """The names of every `def` of the module, at any depth."""
        if self._defined_names is None:
            self._defined_names = {f.name for f in self.functions if not isinstance(f, ast.Lambda)}
        return self._defined_names

    def shadowed(self, name: str, scope: ast.AST) -> bool:
        """Is `name` bound locally in `scope` or an enclosing function?"""
        while not isinstance(scope, ast.Module):
            if not isinstance(scope, ast.ClassDef) and name in self.function_bindings(scope):
                return True
            scope = self.scope_of(scope)
        return False

    def spell(self, qual: str, node: ast.AST) -> Optional[str]:
        """How code at `node` can say `qual` ('torch.no_grad') with the file's own imports,
        through a name bound to it (or to a module above it) on every path, and already bound
        where module-level code runs; None when the file has no such name (the fix then adds
        `import torch`)."""
        module = self.module_names
        scope = self.scope_of(node)
        at_module = isinstance(self.function_of(node), ast.Module)
        row = self.statement_of(node).lineno if at_module and not isinstance(node, ast.Module) else None
        target = qual
        rest = ""
        while target:
            for name in sorted(module.final, key=lambda n: (n != target.split(".")[0], n)):
                if name.startswith("*") or self.shadowed(name, scope):
                    continue
                every = module.every(name)
                if every and all(q == target for q in every) and (row is None or module.at(name, row)):
                    return name + rest
            target, _, last = target.rpartition(".")
            rest = f".{last}{rest}"
        return None

    # ------------------------------------------------------------------ layout
    def interior_rows(self) -> Set[int]:
        """Rows that start inside a string literal (never re-indented)."""
        rows: Set[int] = set()
        for node in self.multiline_strings:
            rows.update(range(node.lineno + 1, node.end_lineno + 1))
        return rows

    def indent_unit(self, block_stmt: ast.stmt, fallback_rows: Optional[Tuple[int, int]] = None) -> str:
        """The indentation a block nested under `block_stmt`'s block would use: the step its
        own block took from its owner, else the most common step in the file (or in the rows
        `fallback_rows`, a notebook cell)."""
        src = self.src
        found = self.block_of(block_stmt)
        here = src.indentation(block_stmt.lineno)
        if here.startswith("\t"):
            return "\t"
        if found is not None and not isinstance(found[0], ast.Module):
            owner = found[0]
            row = owner.lineno if not isinstance(owner, ast.ExceptHandler) else owner.lineno
            step = indent_step(src.indentation(row), here)
            if step:
                return step
        return self.common_step(fallback_rows)

    def common_step(self, rows: Optional[Tuple[int, int]] = None) -> str:
        if rows not in self._steps:
            self._steps[rows] = self._common_step(rows)
        return self._steps[rows]

    def _common_step(self, rows: Optional[Tuple[int, int]]) -> str:
        steps: Dict[str, int] = {}
        src = self.src
        for node in self.parents:
            if not isinstance(node, ast.stmt) or not hasattr(node, "body") or not isinstance(node.body, list):
                continue
            if rows is not None and not rows[0] <= node.lineno <= rows[1]:
                continue
            first = node.body[0] if node.body else None
            if first is None or first.lineno == node.lineno:
                continue
            step = indent_step(src.indentation(node.lineno), src.indentation(first.lineno))
            if step:
                steps[step] = steps.get(step, 0) + 1
        if not steps:
            return self._continuation_step(rows)
        return max(sorted(steps), key=lambda s: steps[s])

    def _continuation_step(self, rows: Optional[Tuple[int, int]]) -> str:
        """With no indented block to show the unit: a tab if every indented line (continuation
        lines, then) starts with one, so a new block does not put spaces in front of the
        author's tabs; four spaces otherwise."""
        src = self.src
        first, last = rows if rows is not None else (1, len(src.line_starts))
        interior = self.interior_rows()
        indented = [src.indentation(row) for row in range(first, last + 1)
                    if row not in interior and src.line(row).strip()]
        indented = [ind for ind in indented if ind]
        return "\t" if indented and all(ind.startswith("\t") for ind in indented) else "    "


class BlockMentions:
    """For one block: for each statement id at any depth under it (not inside nested defs), the
    position of its top statement in the block; and for every name, the positions of the
    statements that mention it somewhere: in the expressions of a statement or of those
    nested in it, or, for a `def` or `class` at any depth, in anything it reads and in its own
    name. A forward analysis that follows a few names through a long block visits only those
    positions (`volfix.flow.taint`)."""

    def __init__(self, index: "ModuleIndex", stmts: List[ast.stmt]):
        from .names import iter_statements

        self.position: Dict[int, int] = {}
        self.names: Dict[str, List[int]] = {}
        for i, top in enumerate(stmts):
            held: Set[str] = set()
            for stmt in iter_statements([top]):
                self.position[id(stmt)] = i
                if isinstance(stmt, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)):
                    held.update(index.loaded_names(stmt))
                    held.add(stmt.name)
                else:
                    held.update(index.names_mentioned(id(stmt)))
            for name in held:
                self.names.setdefault(name, []).append(i)
