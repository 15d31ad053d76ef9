"""Star imports as the project index reads them from bytes (`volfix.project.index`).

Whether a file star-imports (`has_star_import`: a `from x import *` line, the gate of every
star link), the modules its lines spell (`spelled_star_modules`: what the parse will most
likely find, `volfix.project.early`'s guess before it), whether it uses `Variable` besides,
and the same for a notebook's code cells.
"""
from __future__ import annotations

import ast
import re
from typing import Callable, Dict, FrozenSet, List, Optional, Tuple

from ..syntax import names as nm
from ..syntax.document import Document

_STAR_IMPORT = re.compile(rb"^\s*from\s+[\w.]+\s+import\s+\*", re.M)
_STAR_TAIL = re.compile(rb"import\s+\*")  # in every match of _STAR_IMPORT: a fast search first
_STAR_IMPORT_IN_JSON = re.compile(rb"from\s+[\w.]+\s+import\s+\*")
_SPELLED = re.compile(rb"^[ \t]*from[ \t]+([\w.]+)[ \t]+import[ \t]+\*", re.M)


def has_star_import(raw: bytes) -> bool:
    """`_STAR_IMPORT.search(raw)`, the regex only where a plain search finds its tail."""
    return _STAR_TAIL.search(raw) is not None and _STAR_IMPORT.search(raw) is not None


def spelled_star_modules(raw: bytes) -> List[str]:
    """The modules the file's `from x import *` lines name, in order (a guess at the parse's
    `ModuleNames.star_modules`, which a check verifies)."""
    return [m.decode("ascii") for m in _SPELLED.findall(raw)]


def _notebook_document(raw: bytes) -> Optional[Document]:
    """A notebook's code cells, joined and parsed as the engine sees them."""
    from ..notebook.jsonfile import NotebookError, parse_notebook
    from ..notebook.run import Cells

    try:
        cells = Cells(parse_notebook(raw))
    except NotebookError:
        return None
    return cells.parse(cells.text)[0] if cells.analysed else None


_CELL_STAR_IMPORT = re.compile(r"^[ \t]*from[ \t]+([\w.]+)[ \t]+import[ \t]+\*", re.M)
_VARIABLE_WORD = re.compile(r"\bVariable\b")


def _uses_variable(raw: bytes) -> bool:
    """A line of the file that is not a comment, nor its star import, spells `Variable`."""
    if b"Variable" not in raw:
        return False
    text = raw.decode("utf-8", "replace")
    return any(_VARIABLE_WORD.search(line.partition("#")[0]) and not _CELL_STAR_IMPORT.match(line)
               for line in text.splitlines())


def _notebook_star_modules_using_variable(raw: Optional[bytes]) -> List[str]:
    """The modules a notebook's code cells star-import, when a cell uses `Variable` (a line
    that is not a comment spells it): those modules must keep binding it."""
    if raw is None or b"import" not in raw or b"Variable" not in raw:
        return []
    from ..notebook.jsonfile import NotebookError, code_text

    try:
        code = code_text(raw)
    except NotebookError:
        return []
    uses = any(_VARIABLE_WORD.search(line.partition("#")[0]) and not _CELL_STAR_IMPORT.match(line)
               for line in code.splitlines())
    return _CELL_STAR_IMPORT.findall(code) if uses else []


def all_names(statements) -> Optional[FrozenSet[str]]:
    """The names a module's `__all__` lists, which are all a star import of it binds; None when
    it sets none. An `__all__` volfix cannot read lists nothing it can count on."""
    listed: Optional[FrozenSet[str]] = None
    for stmt in statements:
        targets = stmt.targets if isinstance(stmt, ast.Assign) else [stmt.target] \
            if isinstance(stmt, (ast.AugAssign, ast.AnnAssign)) else []
        if any(isinstance(t, ast.Name) and t.id == "__all__" for t in targets):
            value = stmt.value
            names = [e.value for e in value.elts if isinstance(e, ast.Constant) and isinstance(e.value, str)] \
                if isinstance(value, (ast.List, ast.Tuple)) else None
            if names is None or len(names) != len(value.elts) or isinstance(stmt, ast.AugAssign) and listed is None:
                return frozenset()
            listed = frozenset(names) | (listed if isinstance(stmt, ast.AugAssign) and listed else frozenset())
    return listed


MAX_STAR_CHAIN = 4  # modules a star import is followed through (`from models import *` of `from .vgg import *`)


def exported_torch_names(path: str, document: Callable[[str], Optional[Document]],
                         resolve: Callable[[str, str], Optional[str]], seen: FrozenSet[str] = frozenset()
                         ) -> Tuple[Tuple[str, str], ...]:
    """What a module binds of torch for a star import of it (`ProjectIndex.exported_bindings`):
    its own names, and those of the project modules it star-imports in turn (a package's
    `__init__` doing `from .vgg import *`, whose `vgg.py` imports `Variable`), as far as its
    `__all__` lists them."""
    doc = document(path)
    if doc is None:
        return ()
    module = doc.index().module_names
    out: Dict[str, str] = {}
    seen = seen | {path}
    for star in module.star_modules:
        target = resolve(star, path)
        if target is not None and target not in seen and len(seen) < MAX_STAR_CHAIN:
            out.update(exported_torch_names(target, document, resolve, seen))
    for name, qual in sorted(module.final.items()):
        if nm.is_variable(qual) or qual == "torch" or (qual.startswith("torch.") and not name.startswith("_")):
            out[name] = qual
    listed = all_names(doc.index().module_statements)
    return tuple(sorted((n, q) for n, q in out.items() if listed is None or n in listed))
