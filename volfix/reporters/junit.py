"""JUnit XML for CI dashboards (Jenkins, GitLab, Azure, CircleCI...), in ruff's shape.

One `<testsuite>` per file with findings (name = path relative to the root), one
`<testcase>` per finding (name `volfix.CODE`, classname the path without its suffix, `file`,
`line` and `column` attributes, a `cell` property in a notebook) holding one `<failure>`
(type = code, message = the message, text = "line L, col C, message", its source line and
its note `    = note: ...`). A volfix bug on a file is a test case with an `<error>` in that
file's suite. A run without findings is one passing test case, "No errors found", as ruff
prints it. `tests`/`failures`/`errors` count test cases.
Characters XML 1.0 cannot carry (NUL, most C0 controls) are replaced by U+FFFD.
"""
from __future__ import annotations

import re
import xml.etree.ElementTree as ET
from typing import Sequence

from ..settings.baseline import relative_path
from ..model import Diagnostic, FileResult
from .base import ReportContext
from .notes import display_note

_INVALID_XML = re.compile("[\x00-\x08\x0b\x0c\x0e-\x1f\ud800-\udfff\ufffe\uffff]")


def _clean(text: str) -> str:
    return _INVALID_XML.sub("\ufffd", text)


def _position(diagnostic: Diagnostic) -> str:
    where = f"line {diagnostic.location.row}, col {diagnostic.location.column}"
    return f"cell {diagnostic.cell}, {where}" if diagnostic.cell is not None else where


def _note_line(diagnostic: Diagnostic, ctx: ReportContext) -> str:
    note = display_note(diagnostic, ctx)
    return f"\n    = note: {note}" if note else ""


def render(results: Sequence[FileResult], ctx: ReportContext) -> str:
    suites = ET.Element("testsuites", name="volfix")
    totals = {"tests": 0, "failures": 0, "errors": 0}
    for result in sorted(results, key=lambda r: r.path):
        if not result.diagnostics and not result.error:
            continue
        rel = relative_path(result.path, ctx.root)
        suite = ET.SubElement(suites, "testsuite", name=_clean(rel), package="volfix")
        counts = {"tests": 0, "failures": 0, "errors": 0}
        for diagnostic in result.diagnostics:
            _finding_case(suite, rel, diagnostic, ctx)
            counts["tests"] += 1
            counts["failures"] += 1
        if result.error:
            case = ET.SubElement(suite, "testcase", name="volfix.internal-error", classname=_classname(rel),
                                 file=_clean(rel))
            error = ET.SubElement(case, "error", type="volfix-internal-error",
                                  message=_clean(f"{result.error} (this is a volfix bug)"))
            error.text = _clean(f"{rel}: {result.error}")
            counts["tests"] += 1
            counts["errors"] += 1
        _set_counts(suite, counts)
        for key in totals:
            totals[key] += counts[key]
    if not totals["tests"]:
        suite = ET.SubElement(suites, "testsuite", name="volfix", package="volfix")
        ET.SubElement(suite, "testcase", name="No errors found", classname="volfix")
        totals["tests"] = 1
        _set_counts(suite, totals)
    _set_counts(suites, totals)
    ET.indent(suites)
    body = ET.tostring(suites, encoding="unicode")
    return '<?xml version="1.0" encoding="UTF-8"?>\n' + body + "\n"


def _finding_case(suite: ET.Element, rel: str, diagnostic: Diagnostic, ctx: ReportContext) -> None:
    case = ET.SubElement(suite, "testcase", name=f"volfix.{diagnostic.code}", classname=_classname(rel),
                         file=_clean(rel), line=str(diagnostic.location.row),
                         column=str(diagnostic.location.column))
    if diagnostic.cell is not None:
        properties = ET.SubElement(case, "properties")
        ET.SubElement(properties, "property", name="cell", value=str(diagnostic.cell))
    failure = ET.SubElement(case, "failure", type=diagnostic.code, message=_clean(diagnostic.message))
    body = f"{_position(diagnostic)}, {diagnostic.message}"
    if diagnostic.snippet:
        body += f"\n    {diagnostic.snippet}"
    failure.text = _clean(body + _note_line(diagnostic, ctx))


def _classname(rel: str) -> str:
    """The path without its suffix, as ruff's classname (`src/eval.py` -> `src/eval`)."""
    stem, dot, suffix = rel.rpartition(".")
    return _clean(stem if dot and "/" not in suffix and stem else rel)


def _set_counts(element: ET.Element, counts: dict) -> None:
    for key in ("tests", "skipped", "failures", "errors"):
        element.set(key, str(counts.get(key, 0)))
