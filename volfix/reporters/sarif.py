"""SARIF 2.1.0, for GitHub code scanning and other SARIF viewers.

Choices worth knowing:
- Paths are relative to `ctx.root` under `uriBaseId: "%SRCROOT%"`, whose absolute `file:` URI
  is given in `run.originalUriBaseIds`. A file outside the root keeps an absolute file URI.
- Columns count Unicode code points (`run.columnKind`), as volfix's own positions do; every
  position is 1-based and `endColumn` is exclusive, as SARIF specifies.
- Notebooks: diagnostics are located inside a cell, so the region's lines are cell-relative.
  The cell is given three ways: `region.properties.cell` (1-based, counting every cell as
  Jupyter shows them), a logical location `{"name": "cell N", "kind": "module"}` and a
  `cell N: ` prefix to the message text (the part every viewer shows). Their fixes are not
  exported (SARIF replacements address the .ipynb file, not the cell).
- The note (why a fix is unsafe, limited or absent) follows the message text on its own
  `note: ...` line, and is also `result.properties.note`.
- `partialFingerprints["volfix/v1"]` hashes (code, path, normalized snippet, occurrence index
  among identical findings in the file): it survives lines inserted above a finding.
- A volfix bug on a file (`FileResult.error`) becomes a `toolExecutionNotification` and
  `executionSuccessful: false`.
"""
from __future__ import annotations

import hashlib
import json
import os
import pathlib
from collections import Counter
from typing import Any, Dict, List, Sequence
from urllib.parse import quote

from .._version import __version__
from ..settings.baseline import normalize_snippet, relative_path
from ..model import Diagnostic, Edit, FileResult, Fix
from .base import ReportContext
from .notes import message_with_note

SCHEMA_URI = "https://json.schemastore.org/sarif-2.1.0.json"
INFORMATION_URI = "https://github.com/volfix/volfix"
SRCROOT = "%SRCROOT%"
FINGERPRINT_KEY = "volfix/v1"
# Findings are errors (the CI check fails on them); a stale suppression comment is not.
WARNING_CODES = frozenset({"VF010"})


def level(code: str) -> str:
    """The SARIF/GitHub level of a code: "error", or "warning" for VF010."""
    return "warning" if code in WARNING_CODES else "error"


def render(results: Sequence[FileResult], ctx: ReportContext) -> str:
    return json.dumps(sarif_log(results, ctx), indent=2, ensure_ascii=False) + "\n"


def sarif_log(results: Sequence[FileResult], ctx: ReportContext) -> Dict[str, Any]:
    """The SARIF log as a JSON-ready dict."""
    from ..rules.registry import rules

    rule_classes = rules()
    index = {code: i for i, code in enumerate(rule_classes)}
    root = os.path.abspath(ctx.root)
    sarif_results: List[Dict[str, Any]] = []
    notifications: List[Dict[str, Any]] = []
    for result in results:
        rel = relative_path(result.path, root)
        seen: Counter = Counter()
        for diagnostic in result.diagnostics:
            key = (diagnostic.code, normalize_snippet(diagnostic.snippet))
            occurrence = seen[key]
            seen[key] += 1
            sarif_results.append(_result(diagnostic, rel, index, occurrence, ctx))
        if result.error:
            notifications.append(_notification(result, rel))
    run: Dict[str, Any] = {
        "tool": {"driver": _driver(rule_classes)},
        "originalUriBaseIds": {SRCROOT: {"uri": _directory_uri(root)}},
        "invocations": [{
            "executionSuccessful": not notifications,
            "toolExecutionNotifications": notifications,
        }],
        "columnKind": "unicodeCodePoints",
        "results": sarif_results,
    }
    return {"$schema": SCHEMA_URI, "version": "2.1.0", "runs": [run]}


def fingerprint(code: str, rel_path: str, snippet: str, occurrence: int) -> str:
    text = "\x1f".join([code, rel_path, normalize_snippet(snippet), str(occurrence)])
    return hashlib.sha256(text.encode("utf-8")).hexdigest()


# --- rules --------------------------------------------------------------------------------

def _driver(rule_classes: Dict[str, Any]) -> Dict[str, Any]:
    return {
        "name": "volfix",
        "version": __version__,
        "semanticVersion": __version__,
        "informationUri": INFORMATION_URI,
        "rules": [_rule(cls) for cls in rule_classes.values()],
    }


def _rule(cls: Any) -> Dict[str, Any]:
    doc = cls.doc()
    rule: Dict[str, Any] = {
        "id": cls.CODE,
        "name": cls.name(),
        "shortDescription": {"text": cls.summary()},
        "fullDescription": {"text": _full_description(cls)},
        "help": {"text": doc or cls.MESSAGE, "markdown": doc or cls.MESSAGE},
        "helpUri": cls.url(),
        "defaultConfiguration": {"level": level(cls.CODE)},
        "properties": {"tags": ["pytorch", "migration"]},
    }
    if cls.FIX is not None:
        rule["properties"]["fixApplicability"] = cls.FIX.value
    return rule


def _full_description(cls: Any) -> str:
    """'What it does' and 'Why is this bad?' as one plain paragraph each."""
    sections = _sections(cls.doc())
    parts = [sections.get("What it does", ""), sections.get("Why is this bad?", "")]
    text = "\n\n".join(" ".join(p.split()) for p in parts if p.strip())
    return text or cls.MESSAGE


def _sections(doc: str) -> Dict[str, str]:
    out: Dict[str, str] = {}
    heading = None
    for line in doc.splitlines():
        if line.startswith("## "):
            heading = line[3:].strip()
            out[heading] = ""
        elif heading is not None:
            out[heading] += line + "\n"
    return out


# --- results ------------------------------------------------------------------------------

def _result(diagnostic: Diagnostic, rel: str, index: Dict[str, int], occurrence: int,
            ctx: ReportContext) -> Dict[str, Any]:
    text = message_with_note(diagnostic, ctx)
    if diagnostic.cell is not None:
        text = f"cell {diagnostic.cell}: {text}"
    region = _region(diagnostic.location.row, diagnostic.location.column,
                     diagnostic.end_location.row, diagnostic.end_location.column)
    if diagnostic.snippet:
        region["snippet"] = {"text": diagnostic.snippet}
    if diagnostic.cell is not None:
        region["properties"] = {"cell": diagnostic.cell}
    location: Dict[str, Any] = {"physicalLocation": {"artifactLocation": _artifact(rel),
                                                     "region": region}}
    if diagnostic.cell is not None:
        location["logicalLocations"] = [{"name": f"cell {diagnostic.cell}",
                                         "fullyQualifiedName": f"{rel}:cell {diagnostic.cell}",
                                         "kind": "module"}]
    out: Dict[str, Any] = {
        "ruleId": diagnostic.code,
        "level": level(diagnostic.code),
        "message": {"text": text},
        "locations": [location],
        "partialFingerprints": {
            FINGERPRINT_KEY: fingerprint(diagnostic.code, rel, diagnostic.snippet, occurrence),
        },
    }
    if diagnostic.code in index:
        out["ruleIndex"] = index[diagnostic.code]
    properties: Dict[str, Any] = {}
    if diagnostic.fix is not None:
        properties["fixApplicability"] = diagnostic.fix.applicability.value
    if diagnostic.note:
        properties["note"] = diagnostic.note
    if properties:
        out["properties"] = properties
    if diagnostic.fix is not None:
        if diagnostic.fix.edits and diagnostic.cell is None:
            out["fixes"] = [_fix(diagnostic.fix, diagnostic.message, rel)]
    return out


def _fix(fix: Fix, message: str, rel: str) -> Dict[str, Any]:
    return {
        "description": {"text": fix.message or message},
        "artifactChanges": [{
            "artifactLocation": _artifact(rel),
            "replacements": [_replacement(edit) for edit in fix.edits],
        }],
    }


def _replacement(edit: Edit) -> Dict[str, Any]:
    return {
        "deletedRegion": _region(edit.location.row, edit.location.column,
                                 edit.end_location.row, edit.end_location.column),
        "insertedContent": {"text": edit.content},
    }


def _region(row: int, column: int, end_row: int, end_column: int) -> Dict[str, Any]:
    row, column = max(row, 1), max(column, 1)
    if (end_row, end_column) < (row, column):
        end_row, end_column = row, column
    return {"startLine": row, "startColumn": column, "endLine": end_row, "endColumn": end_column}


def _artifact(rel: str) -> Dict[str, Any]:
    if os.path.isabs(rel) or rel.startswith("/"):
        return {"uri": pathlib.Path(rel).as_uri()}
    return {"uri": quote(rel, safe="/"), "uriBaseId": SRCROOT}


def _directory_uri(root: str) -> str:
    uri = pathlib.Path(root).as_uri()
    return uri if uri.endswith("/") else uri + "/"


def _notification(result: FileResult, rel: str) -> Dict[str, Any]:
    return {
        "level": "error",
        "message": {"text": f"{rel}: {result.error} (this is a volfix bug; please report it)"},
        "locations": [{"physicalLocation": {"artifactLocation": _artifact(rel)}}],
        "descriptor": {"id": "internal-error"},
    }
