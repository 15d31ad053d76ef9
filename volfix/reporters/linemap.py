"""Rows of a file before its fixes, mapped to rows after them, and back.

The migration report links every finding to its line in the file as it is on disk: after
`volfix fix` that is the fixed text, although an applied fix was located in the text it was
applied to; after `volfix check` it is the original text, although what would remain is
located in the text `volfix fix` would write. Fixes mostly re-indent statements (a region
becomes a `with` block) and insert a few lines (`with ...:`, `@torch.no_grad()`, an import),
so the two texts are matched line by line ignoring indentation: a re-indented line maps
exactly, and a line replaced by the fix maps to its replacement.

Notebook rows are relative to their cell: cells are matched one by one (fixes never add or
remove cells).
"""
from __future__ import annotations

import difflib
import json
import re
from typing import Dict, List, Optional, Tuple

_NEWLINE = re.compile(r"\r\n|\r|\n")  # Python's own line breaks


class LineMap:
    """Maps 1-based rows of `before` to rows of `after` (`forward`) and back (`backward`)."""

    def __init__(self, before: str, after: str) -> None:
        a = [line.strip() for line in _NEWLINE.split(before)]
        b = [line.strip() for line in _NEWLINE.split(after)]
        self._sizes = (len(a), len(b))
        self._blocks: List[Tuple[str, int, int, int, int]] = (
            difflib.SequenceMatcher(None, a, b, autojunk=False).get_opcodes())

    def forward(self, row: int) -> int:
        return self._map(row, reverse=False)

    def backward(self, row: int) -> int:
        return self._map(row, reverse=True)

    def _map(self, row: int, *, reverse: bool) -> int:
        index = row - 1
        size_from, size_to = self._sizes[::-1] if reverse else self._sizes
        if size_to == 0:
            return row
        for tag, i1, i2, j1, j2 in self._blocks:
            if reverse:
                i1, i2, j1, j2 = j1, j2, i1, i2
            if not i1 <= index < i2:
                continue  # (an insertion on this side is empty: i1 == i2)
            if tag == "equal":
                return j1 + (index - i1) + 1
            if tag == "replace":
                return j1 + min(index - i1, j2 - j1 - 1) + 1
            return min(j1, size_to - 1) + 1  # deleted: the line that now follows
        return min(max(row, 1), size_to)


class FileLineMap:
    """A LineMap for a whole file, or one per cell of a notebook (rows are cell-relative)."""

    def __init__(self, before: Optional[str], after: Optional[str], notebook: bool) -> None:
        self._maps: Dict[Optional[int], LineMap] = {}
        self._texts: Dict[Optional[int], Tuple[str, str]] = {}
        if before is None or after is None or before == after:
            return
        if not notebook:
            self._texts[None] = (before, after)
            return
        cells_before, cells_after = cell_sources(before), cell_sources(after)
        if cells_before is None or cells_after is None or len(cells_before) != len(cells_after):
            return
        for number, (old, new) in enumerate(zip(cells_before, cells_after), start=1):
            if old != new:
                self._texts[number] = (old, new)

    def forward(self, row: int, cell: Optional[int] = None) -> int:
        found = self._map_for(cell)
        return found.forward(row) if found is not None else row

    def backward(self, row: int, cell: Optional[int] = None) -> int:
        found = self._map_for(cell)
        return found.backward(row) if found is not None else row

    def after_line(self, row: int, cell: Optional[int] = None) -> str:
        """Line `row` (1-based) of the text after the fixes, stripped ("" if out of range)."""
        texts = self._texts.get(cell)
        if texts is None:
            return ""
        lines = _NEWLINE.split(texts[1])
        return lines[row - 1].strip() if 1 <= row <= len(lines) else ""

    def _map_for(self, cell: Optional[int]) -> Optional[LineMap]:
        if cell not in self._maps:
            texts = self._texts.get(cell)
            if texts is None:
                return None  # the text did not change: rows are the same
            self._maps[cell] = LineMap(*texts)
        return self._maps[cell]


def cell_sources(notebook_text: str) -> Optional[List[str]]:
    """Every cell's source (markdown too, so that index + 1 is the cell number), or None."""
    try:
        cells = json.loads(notebook_text.lstrip("\ufeff"))["cells"]
        sources = [cell.get("source", "") for cell in cells]
    except (ValueError, KeyError, TypeError, AttributeError):
        return None
    out = []
    for source in sources:
        if isinstance(source, list):
            source = "".join(part for part in source if isinstance(part, str))
        out.append(source if isinstance(source, str) else "")
    return out
