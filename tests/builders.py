"""Small builders for hand-made Diagnostics and FileResults (no engine needed)."""
from __future__ import annotations

import json
from pathlib import Path
from typing import Optional, Sequence

from volfix.model import Applicability, Diagnostic, Edit, FileResult, Fix, Location

# A copy of shared/schemas/sarif-schema-2.1.0.json, so the tests run from a clean clone.
SARIF_SCHEMA = Path(__file__).parent / "data" / "sarif-schema-2.1.0.json"

MESSAGES = {
    "VF001": "File cannot be parsed",
    "VF101": "`volatile=True` is ignored since PyTorch 0.4; use `torch.no_grad()`",
    "VF103": "`volatile=<expr>`: use a grad-mode region",
    "VF110": "`Variable(x)` is a no-op since PyTorch 0.4",
    "VF201": "`.volatile` is always False since PyTorch 0.4; use `torch.is_grad_enabled()` or `.requires_grad`",
    "VF203": "dynamic access to `volatile`, which has no effect since PyTorch 0.4",
}


def diag(code: str = "VF101", row: int = 1, col: int = 1, end_row: Optional[int] = None,
         end_col: Optional[int] = None, *, snippet: str = "", note: Optional[str] = None,
         fix: Optional[Fix] = None, cell: Optional[int] = None, message: Optional[str] = None) -> Diagnostic:
    """A diagnostic; the end defaults to the end of `snippet` on the same line."""
    end_row = row if end_row is None else end_row
    if end_col is None:
        end_col = col + max(len(snippet), 1)
    return Diagnostic(code, message or MESSAGES.get(code, f"{code} finding"), Location(row, col),
                      Location(end_row, end_col), fix=fix, note=note, cell=cell, snippet=snippet)


def fix(applicability: Applicability = Applicability.SAFE, message: str = "Unwrap and add `torch.no_grad()`",
        edits: Sequence[Edit] = ()) -> Fix:
    return Fix(applicability, message, tuple(edits))


def edit(content: str, row: int, col: int, end_row: int, end_col: int) -> Edit:
    return Edit(content, Location(row, col), Location(end_row, end_col))


def result(path: str, *diagnostics: Diagnostic, source: Optional[str] = None, **kwargs) -> FileResult:
    return FileResult(path, tuple(diagnostics), source=source, **kwargs)


def find_line(text: str, needle: str) -> int:
    """1-based number of the first line of `text` containing `needle`."""
    for number, line in enumerate(text.split("\n"), start=1):
        if needle in line:
            return number
    raise ValueError(f"{needle!r} not in text")


def at(text: str, needle: str, code: str = "VF101", **kwargs) -> Diagnostic:
    """A diagnostic on the first occurrence of `needle` in `text`, with it as snippet."""
    row = find_line(text, needle)
    col = text.split("\n")[row - 1].index(needle) + 1
    return diag(code, row, col, snippet=needle, **kwargs)


def sarif_validator(schema_path: Path = SARIF_SCHEMA):
    """A jsonschema validator for whole SARIF logs: `list(v.iter_errors(log)) == []`.

    The bundled schema keeps the log's own shape in `definitions/Root` and has no top-level
    constraints, so validating against the file as-is accepts anything: anchor it on Root.
    """
    import jsonschema

    schema = json.loads(schema_path.read_text(encoding="utf-8"))
    if "properties" not in schema and "Root" in schema.get("definitions", {}):
        schema = {**schema, "$ref": "#/definitions/Root"}
    cls = jsonschema.validators.validator_for(schema)
    cls.check_schema(schema)
    return cls(schema, format_checker=cls.FORMAT_CHECKER)
