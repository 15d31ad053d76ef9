"""A planned fix as text edits: its statement-level rewrites rendered with libcst, plus the
`import` lines it needs (once per module, shared by every fix that needs it)."""
from __future__ import annotations

import ast
from typing import List, Optional

from ..fixes.edits import TextEdit
from ..findings import FixPlan
from ..syntax.document import Document


def plan_edits(doc: Document, plan: FixPlan) -> Optional[List[TextEdit]]:
    """The edits, or None when the plan cannot be rendered (a volfix bug)."""
    from ..fixes.imports import import_edit
    from ..fixes.render import RenderError, render

    try:
        edits = render(doc.text, plan, doc.src.newline)
    except RenderError:
        return None
    for module in sorted(plan.imports):
        edit = import_edit(doc.src, doc.tree, module, import_part(doc, edits))
        if edit is None:
            return None
        edits.append(edit)
    return edits


def import_part(doc: Document, edits: List[TextEdit]):
    """In a notebook: the rows of the cell that gets the import (the first cell with imports
    when it comes no later than the first edit, else the cell of the first edit)."""
    if not doc.parts or doc.parts[0].number is None:
        return None
    first_edit = min((e.start for e in edits), default=0)
    use = doc.part_at(first_edit)
    for part in doc.parts:
        has_imports = any(isinstance(s, (ast.Import, ast.ImportFrom)) and part.first_row <= s.lineno <= part.last_row
                          for s in doc.tree.body)
        if has_imports and (use is None or part.start <= use.start):
            return part.first_row, part.last_row
    if use is not None:
        return use.first_row, use.last_row
    return doc.parts[0].first_row, doc.parts[0].last_row
