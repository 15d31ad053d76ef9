"""What a file's `.data[0]` reads ask of other files of the project, and what a file's functions,
classes' instances and methods return for them (VF401 across files; `flow.returns` computes
both on a parse, this module reads and caches them per file's bytes for the project index).
"""
from __future__ import annotations

import ast
import os
import re
from typing import Callable, Dict, List, Optional, Sequence, Set, Tuple

from ..files.prefilter import TORCH_DATA_INDEX, TORCH_VOLATILE_KEYWORD
from ..flow.returns import asked_returns, returns_facts
from ..rules.vf501_legacy_function import function_facts
from ..flow.scalar_callees import AUTOGRAD_FUNCTION, INSTANCE_CALL, INSTANCE_METHOD, OUTSIDE, STAR_MODULE, UNSHARED
from ..syntax import names as nm
from ..syntax.document import Document
from .helpers import document_of
from .modules import ModuleTable
from .stars import _notebook_document


def file_returns_asked(raw: bytes) -> List[str]:
    """Runs here or in a worker: what of other files a file's VF401 reads and VF501's calls
    ask about (`flow.returns.asked_returns`)."""
    doc = document_of(raw)
    return [] if doc is None else asked_of(doc, raw)


def notebook_returns_asked(raw: bytes) -> List[str]:
    """`file_returns_asked` of a notebook: its code cells as the engine parses them."""
    doc = _notebook_document(raw)
    return [] if doc is None else asked_of(doc, raw)


def asked_of(doc: Document, raw: bytes) -> List[str]:
    """`flow.returns.asked_returns` of a parsed file: its VF401 reads' questions when its bytes
    hold one, whether the functions it calls train when they hold a `volatile=`."""
    try:
        return asked_returns(doc.index(), TORCH_DATA_INDEX(raw), TORCH_VOLATILE_KEYWORD(raw))
    except RecursionError:
        return []


def file_returns(raw: bytes) -> Tuple[Dict[str, Tuple[str, ...]], Dict[str, str]]:
    """Runs here or in a worker: what a file's functions, classes' instances and methods
    return (`flow.returns.returns_facts`), and the names the module binds: by its imports when
    it does not define them (name -> qualified name: a package's `__init__` hands its modules'
    classes on), else `LOCAL` (a def, a class, an assignment: what a star import of it binds)."""
    doc = document_of(raw)
    if doc is None:
        return {}, {}
    index = doc.index()
    try:
        returns = returns_facts(index)
    except RecursionError:
        returns = {}
    returns.update(function_facts(index))
    defined = {s.name for s in index.module_statements if isinstance(s, (ast.FunctionDef, ast.ClassDef))}
    imported = {name: qual for name, qual in index.module_names.final.items()
                if name not in defined and qual != nm.LOCAL and "." in qual and not nm.is_torch(qual)}
    for name in index.module_names.bound_names():
        imported.setdefault(name, nm.LOCAL)
    return returns, imported


# An import statement (also indented, or after `;`): `from X import a, b` or `import a.b as c, d`.
_IMPORT = re.compile(rb"(?:^|;)[ \t]*(?:from[ \t]+([\w.]+)[ \t]+import[ \t]+([^\n#;]*)|import[ \t]+([^\n#;]*))", re.M)


def imports_project_module(raw: bytes, path: str, modules: ModuleTable,
                           memo: Optional[Dict[Tuple[str, str, Tuple[str, ...]], bool]] = None) -> bool:
    """Whether a line of the file imports a module of the project other than torch's
    (`from miscc.utils import f`, `import model`, `from . import losses`): a name another file
    defines can only come so (a star import binds none VF401 asks about, nor torch's), and most
    files of a tree import none. `memo`: (module, directory, the directories the file adds to
    `sys.path`) -> found, for the files of a run."""
    memo = memo if memo is not None else {}
    where = os.path.dirname(path)

    def found(module: str) -> bool:
        if module == "torch" or module.startswith("torch."):
            return False
        key = (module, where, modules.added_dirs(path))
        if key not in memo:
            memo[key] = modules.resolve(module, path) is not None
        return memo[key]

    for match in _IMPORT.finditer(raw):
        module, names, plain = match.groups()
        if module is not None:  # the module, or a module of it it imports (`from . import losses`)
            spelled = [module.decode("ascii", "replace")]
            if b"(" in names or b"\\" in names:
                names = b""  # names on later lines: the module alone
            dot = "" if not module.strip(b".") else "."
            spelled += [spelled[0] + dot + n.split()[0].decode("ascii", "replace")
                        for n in names.split(b",") if n.strip() and n.split()[0] != b"*"]
        else:
            spelled = [n.split()[0].decode("ascii", "replace") for n in plain.split(b",") if n.strip()]
        if any(found(m) for m in spelled):
            return True
    return False


# `f(True).data[0]`: the name of a call whose `.data[0]` (or `[0]`) is read.
# `f(x).data[0]`, `crit(out, Variable(y)).data[0]`: a call (its arguments on one line, one level
# of parentheses inside) whose result is read.
_CALLED_READ = re.compile(rb"\b([A-Za-z_]\w*)\((?:[^()\n]|\([^()\n]*\))*\)(?:\.data)?\[0\]")


def calls_a_parameter(raw: bytes) -> bool:
    """Whether a `.data[0]` read of the file calls a name that is a parameter of one of its
    defs (`def line_search(model, f, x):` ... `f(True).data[0]`), read from the bytes alone."""
    for name in {m.group(1) for m in _CALLED_READ.finditer(raw)}:
        if re.search(rb"\bdef\s+\w+\s*\([^)]*\b" + re.escape(name) + rb"\b", raw):
            return True
    return False


def module_and_name(qual: str) -> Optional[Tuple[str, str]]:
    """`utils.f` -> (`utils`, `f`); `.f` -> (`.`, `f`): the module as `ModuleTable` resolves it."""
    head, dot, name = qual.rpartition(".")
    if not dot:
        return None
    return (head if head.strip(".") else head + "."), name


def split_returns_key(key: str) -> Tuple[str, str]:
    """`pkg.mod.Cls().update` -> (`pkg.mod.Cls`, `().update`); `pkg.f` -> (`pkg.f`, ``)."""
    if key.endswith(INSTANCE_CALL):
        return key[:-len(INSTANCE_CALL)], INSTANCE_CALL
    qual, sep, method = key.partition(INSTANCE_METHOD)
    return (qual, sep + method) if sep else (key, "")


def resolve_returns(asked: Sequence[Tuple[str, Sequence[str]]], modules: ModuleTable,
                    returns_of: Callable[[List[str], Dict[str, Optional[tuple]]], None],
                    rounds: int, stars: Optional[Dict[str, Tuple[str, ...]]] = None, whole_project: bool = False,
                    functions_called: Optional[Dict[str, Dict[str, List[Tuple[str, str]]]]] = None
                    ) -> Dict[str, Tuple[Tuple[str, Tuple[str, ...]], ...]]:
    """`Links.scalar_returns` of each reader: what the functions, classes' instances and methods
    of other files it asks about (`asked`: reader -> keys) return. `returns_of(paths, facts)`
    fills the defining files' facts (path -> (returns, imported names)); a name one of them
    imports is followed to the file it comes from, for at most `rounds` hops. A `*.name` key
    (`STAR_MODULE`) is looked up in the last of the project modules the reader star-imports
    (`stars`: reader -> paths, in import order) that binds the name, as Python does. With
    `whole_project` (the modules are all the project's), a key whose module is no file of the
    project (a library's, or one this tree lacks: `from engine import Criterion` with no
    `engine.py`) gets `OUTSIDE`: what it returns cannot be read. `functions_called` collects
    the autograd Functions other files call (defining path -> class name -> (reader, key)
    of each file calling it)."""
    # (reader, key as it asks, module, name in the module, what after the name, importer, file)
    todo: List[Tuple[str, str, str, str, str, str, Optional[str]]] = []
    facts: Dict[str, Optional[tuple]] = {}
    starred = sorted({t for path, keys in asked if any(k.startswith(STAR_MODULE + ".") for k in keys)
                      for t in (stars or {}).get(path, ())})
    returns_of(starred, facts)
    for path, keys in asked:
        for key in keys:
            if key.startswith(UNSHARED):
                continue  # `unshared_functions` answers these
            qual, suffix = split_returns_key(key)
            where = module_and_name(qual)
            if where is None:
                continue
            if where[0] == STAR_MODULE:
                targets = (stars or {}).get(path, ())
                known = [facts.get(t) for t in targets]
                if where[1].startswith("_") or any(f is None or "__all__" in f[1] for f in known):
                    continue  # not exported, or which module binds it is unsure (unreadable, `__all__`)
                binding = [t for t, f in zip(targets, known) if where[1] in f[1]]
                if binding:
                    todo.append((path, key) + where + (suffix, path, binding[-1]))
            else:
                todo.append((path, key) + where + (suffix, path, None))
    out: Dict[str, Dict[str, Tuple[str, ...]]] = {}
    for _ in range(rounds):
        if not todo:
            break
        targets = [file or modules.resolve(module, importer) for _, _, module, _, _, importer, file in todo]
        need = sorted({t for t in targets if t is not None and t not in facts})
        returns_of(need, facts)
        later = []
        for (reader, key, _, name, suffix, _, _), target in zip(todo, targets):
            if target is None and whole_project:
                out.setdefault(reader, {})[key] = (OUTSIDE,)
            found = facts.get(target) if target is not None else None
            if found is None:
                continue
            returns, imported = found
            if returns.get(name + suffix):
                out.setdefault(reader, {})[key] = returns[name + suffix]
                if functions_called is not None and suffix == AUTOGRAD_FUNCTION and reader != target:
                    functions_called.setdefault(target, {}).setdefault(name, []).append((reader, key))
            elif name in imported:
                where = module_and_name(imported[name])
                if where is not None:
                    later.append((reader, key) + where + (suffix, target, None))
        todo = later
    return {path: tuple(sorted(found.items())) for path, found in out.items()}


def unshared_functions(asked: Sequence[Tuple[str, Sequence[str]]], files: Sequence[str],
                       bytes_of: Callable[[str], Optional[bytes]]) -> Dict[str, Dict[str, Tuple[str, ...]]]:
    """The `UNSHARED` keys that hold, by reader: a module-level function of the reader that no
    other file of the project names (as a word anywhere in its bytes: a call, an import, a
    comment), so that its calls in the reader are all its calls. An unreadable file may name
    any. `files`: the project's files."""
    wanted = {(path, key[len(UNSHARED):]) for path, keys in asked for key in keys if key.startswith(UNSHARED)}
    names = sorted({name for _, name in wanted if name.isidentifier()})
    if not names:
        return {}
    pattern = re.compile(rb"\b(" + b"|".join(re.escape(n.encode()) for n in names) + rb")\b")
    named: Dict[str, Set[str]] = {name: set() for name in names}
    for path in files:
        raw = bytes_of(path)
        for name in names if raw is None else {m.decode() for m in pattern.findall(raw)}:
            named[name].add(path)
    out: Dict[str, Dict[str, Tuple[str, ...]]] = {}
    for path, name in sorted(wanted):
        if name in named and named[name] <= {path}:
            out.setdefault(path, {})[UNSHARED + name] = ("yes",)
    return out
