"""Notebook documents (LSP 3.17): check and fix the cells the client syncs as one notebook.

The client sends the cells' texts, not the `.ipynb` file, so the cells are assembled into a
minimal nbformat-4 notebook and handed to volfix's notebook engine (`volfix.notebook`):
imports resolve across cells, IPython magics are masked, and no region spans two cells,
exactly as `volfix check x.ipynb` does. Its diagnostics carry a 1-based `cell` counting the
cells assembled here, which maps each one back to its cell's document URI.

Pure functions of a `NotebookSnapshot`: no server state, no pygls.
"""
from __future__ import annotations

import ast
import json
from dataclasses import dataclass
from typing import Dict, List, Optional, Tuple

from .. import notebook
from ..config import Config
from ..model import Diagnostic, Edit, FileResult
from .positions import split_lines

MARKUP, CODE = 1, 2  # lsprotocol's NotebookCellKind values
PYTHON_LANGUAGES = frozenset({"python", "ipython"})
# Modules a notebook fix may use without the cell importing them (see volfix.notebook).
_INJECTED = ("torch", "contextlib")


@dataclass(frozen=True)
class CellSnapshot:
    uri: str
    kind: int  # MARKUP or CODE
    language: Optional[str]  # the cell document's languageId
    version: Optional[int]
    text: str

    @property
    def is_python(self) -> bool:
        return self.kind == CODE and (self.language or "python").lower() in PYTHON_LANGUAGES


@dataclass(frozen=True)
class NotebookSnapshot:
    uri: str
    path: str  # the file path (for configuration and per-file-ignores)
    version: Optional[int]
    cells: Tuple[CellSnapshot, ...]

    def position_of(self, cell_uri: str) -> Optional[int]:
        return next((n for n, cell in enumerate(self.cells) if cell.uri == cell_uri), None)


def notebook_json(snapshot: NotebookSnapshot) -> bytes:
    """A minimal nbformat-4 notebook holding the cells in order. Code cells in another
    language are raw cells: counted, never analysed."""
    cells = []
    for cell in snapshot.cells:
        if cell.is_python:
            cells.append({"cell_type": "code", "execution_count": None, "metadata": {}, "outputs": [],
                          "source": cell.text})
        else:
            cells.append({"cell_type": "markdown" if cell.kind == MARKUP else "raw", "metadata": {},
                          "source": cell.text})
    data = {"cells": cells, "metadata": {}, "nbformat": 4, "nbformat_minor": 5}
    return (json.dumps(data, indent=1, ensure_ascii=False) + "\n").encode("utf-8")


def check_notebook(snapshot: NotebookSnapshot, config: Config) -> Tuple[Dict[str, Tuple[Diagnostic, ...]], Optional[str]]:
    """cell URI -> its diagnostics (every code cell has an entry), and an internal error."""
    result, _ = notebook.process_notebook(notebook_json(snapshot), path=snapshot.path, config=config,
                                          mode="check", with_fixes=True)
    found: Dict[str, List[Diagnostic]] = {cell.uri: [] for cell in snapshot.cells if cell.kind == CODE}
    for diagnostic in result.diagnostics:
        if diagnostic.cell is not None and 1 <= diagnostic.cell <= len(snapshot.cells):
            found.setdefault(snapshot.cells[diagnostic.cell - 1].uri, []).append(diagnostic)
    return {uri: tuple(diagnostics) for uri, diagnostics in found.items()}, result.error


def fix_notebook(snapshot: NotebookSnapshot, config: Config, unsafe_fixes: bool) -> Tuple[Dict[int, str], FileResult]:
    """The new text of every cell the fixes change (by position), and the engine's result."""
    result, _ = notebook.process_notebook(notebook_json(snapshot), path=snapshot.path, config=config,
                                          mode="fix", unsafe_fixes=unsafe_fixes)
    if result.fixed_source is None or result.error:
        return {}, result
    cells = json.loads(result.fixed_source)["cells"]
    changed = {}
    for position, (cell, fixed) in enumerate(zip(snapshot.cells, cells)):
        source = fixed["source"] if isinstance(fixed["source"], str) else "".join(fixed["source"])
        if source != cell.text:
            changed[position] = source
    return changed, result


def quick_fix_cells(snapshot: NotebookSnapshot, position: int, diagnostic: Diagnostic) -> Optional[Dict[int, str]]:
    """The new cell texts (by position) that apply one finding's fix, or None when it cannot
    be applied alone (it would edit an IPython line).

    The engine reports a cell's edits on its masked text (same lines; magics replaced by
    placeholders) and leaves imports to the notebook: when the fix uses `torch` or
    `contextlib` and no cell up to this one imports it, `import torch` goes where the
    notebook engine puts it (the first cell with imports, when it comes no later).
    """
    cell = snapshot.cells[position]
    masked = notebook.mask_magics(cell.text)
    if masked.skip:
        return None
    fixed = apply_edits(masked.text, diagnostic.fix.edits)
    texts: Dict[int, str] = {}
    for module in _INJECTED:
        if _loads(fixed, module) <= _loads(masked.text, module) or _bound(snapshot, position, module):
            continue
        target = _import_cell(snapshot, position)
        if target == position:
            fixed = notebook.add_import_line(fixed, module)
        else:
            texts[target] = _with_import(texts.get(target, snapshot.cells[target].text), module)
    try:
        texts[position] = notebook.unmask_magics(fixed, masked)
    except notebook.MaskError:
        return None
    return texts


def apply_edits(text: str, edits: Tuple[Edit, ...]) -> str:
    """Apply volfix edits (1-based rows, code point columns) to `text`; inserts at the same
    place keep their order."""
    starts = [0]
    for line in split_lines(text):
        starts.append(starts[-1] + len(line))

    def offset(location) -> int:
        row = min(location.row - 1, len(starts) - 1)
        return min(starts[row] + location.column - 1, len(text))

    spans = sorted(((offset(e.location), offset(e.end_location), n, e.content) for n, e in enumerate(edits)),
                   reverse=True)
    for start, end, _, content in spans:
        text = text[:start] + content + text[end:]
    return text


def _with_import(text: str, module: str) -> str:
    masked = notebook.mask_magics(text)
    return notebook.unmask_magics(notebook.add_import_line(masked.text, module), masked)


def _module_tree(text: str) -> Optional[ast.Module]:
    masked = notebook.mask_magics(text)
    if masked.skip:
        return None
    try:
        return ast.parse(masked.text)
    except (SyntaxError, ValueError):
        return None


def _loads(text: str, name: str) -> int:
    try:
        tree = ast.parse(text)
    except (SyntaxError, ValueError):
        return 0
    return sum(1 for node in ast.walk(tree)
               if isinstance(node, ast.Name) and node.id == name and isinstance(node.ctx, ast.Load))


def _bound(snapshot: NotebookSnapshot, position: int, name: str) -> bool:
    """Whether a code cell up to `position` binds `name` by an import at module level."""
    for cell in snapshot.cells[:position + 1]:
        tree = _module_tree(cell.text) if cell.is_python else None
        if tree is not None and any(_imports_name(stmt, name) for stmt in _module_statements(tree.body)):
            return True
    return False


def _module_statements(body):
    """Module-level statements, looking into `if`/`try`/`with` blocks but not definitions."""
    for stmt in body:
        yield stmt
        for block in ("body", "orelse", "finalbody"):
            if not isinstance(stmt, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)):
                yield from _module_statements(getattr(stmt, block, None) or [])
        for handler in getattr(stmt, "handlers", None) or []:
            yield from _module_statements(handler.body)


def _imports_name(stmt: ast.stmt, name: str) -> bool:
    if isinstance(stmt, ast.Import):
        return any((alias.asname or alias.name.split(".")[0]) == name for alias in stmt.names)
    if isinstance(stmt, ast.ImportFrom):
        return any((alias.asname or alias.name) == name for alias in stmt.names)
    return False


def _import_cell(snapshot: NotebookSnapshot, position: int) -> int:
    for number, cell in enumerate(snapshot.cells[:position + 1]):
        tree = _module_tree(cell.text) if cell.is_python and cell.text.strip() else None
        if tree is not None and any(isinstance(s, (ast.Import, ast.ImportFrom)) for s in tree.body):
            return number
    return position
