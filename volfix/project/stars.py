"""Star imports as the project index reads them from bytes (`volfix.project.index`).

Whether a file star-imports (`has_star_import`: a `from x import *` line, the gate of every
star link), the modules its lines spell (`spelled_star_modules`: what the parse will most
likely find, `volfix.project.early`'s guess before it), whether it uses `Variable` besides,
and the same for a notebook's code cells.
"""
from __future__ import annotations

import re
from typing import List, Optional

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
