"""Notebook documents (LSP 3.17): check and fix the cells the client syncs as one notebook.

The client sends the cells' texts, not the `.ipynb` file, so the cells are assembled into a
minimal nbformat-4 notebook and handed to volfix's notebook engine (`volfix.notebook`):
imports resolve across cells, IPython magics are masked, and no region spans two cells,
exactly as `volfix check x.ipynb` does. Its diagnostics carry a 1-based `cell` counting the
cells assembled here, which maps each one back to its cell's document URI.

Pure functions of a `NotebookSnapshot`: no server state, no pygls.
"""
from __future__ import annotations

import json
from dataclasses import dataclass
from typing import Dict, List, Optional, Tuple

from .. import notebook
from ..settings.config import Config
from ..model import Diagnostic, FileResult

MARKUP, CODE = 1, 2  # lsprotocol's NotebookCellKind values
PYTHON_LANGUAGES = frozenset({"python", "ipython"})


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


def quick_fix_cells(snapshot: NotebookSnapshot, position: int, diagnostic: Diagnostic,
                    config: Optional[Config] = None) -> Optional[Dict[int, str]]:
    """The new cell texts (by position) that apply one finding's fix alone, or None when the
    fix cannot be applied. The notebook engine applies it (and only it: every other fix is
    declined through the review hook), so imports go where `volfix fix` puts them and a fix
    spanning several cells edits each of them."""
    cell_number = position + 1

    def only_this(proposal) -> bool:
        return any(d.code == diagnostic.code and d.cell == cell_number and d.location == diagnostic.location
                   for d in proposal.diagnostics)

    result, _ = notebook.process_notebook(notebook_json(snapshot), path=snapshot.path, config=config or Config(),
                                          mode="diff", unsafe_fixes=True, review=only_this)
    if result.error or not result.changed or result.fixed_source is None:
        return None
    cells = json.loads(result.fixed_source)["cells"]
    texts = {}
    for index, (cell, fixed) in enumerate(zip(snapshot.cells, cells)):
        source = fixed["source"] if isinstance(fixed["source"], str) else "".join(fixed["source"])
        if source != cell.text:
            texts[index] = source
    return texts or None
