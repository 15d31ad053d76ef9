"""`json` and `json-lines`: the shape of ruff's JSON output.

    {"code": "VF101", "message": "...", "filename": "/abs/path.py",
     "location": {"row": 2, "column": 13}, "end_location": {"row": 2, "column": 39},
     "fix": {"applicability": "safe", "message": "...",
             "edits": [{"content": "...", "location": {...}, "end_location": {...}}]} | null,
     "note": "unsafe fix: ..." | null,
     "cell": null, "noqa_row": 2, "url": "https://..."}

Rows and columns are 1-based; columns count characters. `message` is the finding's message
and `note`, a field of its own, says why a fix was declined, limited or marked unsafe (as the
analysis wrote it, without the hints the human formats add).
"""
from __future__ import annotations

import json
import os
from typing import List, Optional

from ..model import Diagnostic, Edit, FileResult, Location
from . import iter_findings
from .base import ReportContext


def _location(loc: Location) -> dict:
    return {"row": loc.row, "column": loc.column}


def _edit(edit: Edit) -> dict:
    return {"content": edit.content, "location": _location(edit.location),
            "end_location": _location(edit.end_location)}


def _filename(path: str) -> str:
    # Like ruff: absolute paths, except for pseudo-files such as "<stdin>".
    return path if path.startswith("<") else os.path.abspath(path)


def _url(code: str) -> Optional[str]:
    from ..rules.registry import rules

    rule = rules().get(code)
    return rule.url() if rule else None


def diagnostic_to_dict(result: FileResult, d: Diagnostic) -> dict:
    fix = None
    if d.fix is not None:
        fix = {"applicability": d.fix.applicability.value, "message": d.fix.message or None,
               "edits": [_edit(e) for e in d.fix.edits]}
    return {
        "code": d.code,
        "message": d.message,
        "filename": _filename(result.path),
        "location": _location(d.location),
        "end_location": _location(d.end_location),
        "fix": fix,
        "note": d.note,
        "cell": d.cell,
        "noqa_row": d.location.row,
        "url": _url(d.code),
    }


def to_dicts(results: List[FileResult]) -> List[dict]:
    return [diagnostic_to_dict(r, d) for r, d in iter_findings(results)]


def render(results: List[FileResult], ctx: ReportContext) -> str:
    return json.dumps(to_dicts(results), indent=2, ensure_ascii=False) + "\n"


def render_lines(results: List[FileResult], ctx: ReportContext) -> str:
    return "".join(json.dumps(item, ensure_ascii=False) + "\n" for item in to_dicts(results))


def render_statistics(results: List[FileResult], ctx: ReportContext) -> str:
    """--statistics with a JSON format: [{"code", "name", "count", "fixable", "fixable_count"}],
    as ruff ("fixable": every finding of the rule is)."""
    from .text import statistics

    return json.dumps(statistics(results, ctx), indent=2) + "\n"
