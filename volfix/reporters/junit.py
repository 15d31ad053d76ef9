"""JUnit XML for CI dashboards (Jenkins, GitLab, Azure, CircleCI...).

One `<testsuite name="volfix">`; one `<testcase>` per checked file (name = path relative to
the root, classname "volfix"); a file with findings gets one `<failure>` per finding
(type = code, message = "line:col code message"), and the whole list in `<system-out>` for
dashboards that show only a test case's first failure. A volfix bug on a file becomes an
`<error>`. A finding's note (why a fix is unsafe or absent) is the line `    = note: ...`
under it in the failure's text and in `<system-out>`. The suite's `tests`/`failures`/`errors`
count test cases, as JUnit does.
Characters XML 1.0 cannot carry (NUL, most C0 controls) are replaced by U+FFFD.
"""
from __future__ import annotations

import re
import xml.etree.ElementTree as ET
from typing import List, Sequence

from ..baseline import relative_path
from ..model import Diagnostic, FileResult
from .base import ReportContext
from .notes import display_note

_INVALID_XML = re.compile("[\x00-\x08\x0b\x0c\x0e-\x1f\ud800-\udfff\ufffe\uffff]")


def _clean(text: str) -> str:
    return _INVALID_XML.sub("\ufffd", text)


def _position(diagnostic: Diagnostic) -> str:
    where = f"{diagnostic.location.row}:{diagnostic.location.column}"
    return f"cell {diagnostic.cell}, {where}" if diagnostic.cell is not None else where


def _line(rel: str, diagnostic: Diagnostic) -> str:
    return f"{rel}:{_position(diagnostic)}: {diagnostic.code} {diagnostic.message}"


def _note_line(diagnostic: Diagnostic, ctx: ReportContext) -> str:
    note = display_note(diagnostic, ctx)
    return f"\n    = note: {note}" if note else ""


def render(results: Sequence[FileResult], ctx: ReportContext) -> str:
    suites = ET.Element("testsuites", name="volfix")
    suite = ET.SubElement(suites, "testsuite", name="volfix")
    failures = errors = 0
    for result in results:
        rel = relative_path(result.path, ctx.root)
        case = ET.SubElement(suite, "testcase", name=_clean(rel), classname="volfix", file=_clean(rel))
        lines: List[str] = []
        for diagnostic in result.diagnostics:
            failure = ET.SubElement(case, "failure", type=diagnostic.code,
                                    message=_clean(f"{_position(diagnostic)} {diagnostic.code} "
                                                   f"{diagnostic.message}"))
            body = _line(rel, diagnostic)
            if diagnostic.snippet:
                body += f"\n    {diagnostic.snippet}"
            failure.text = _clean(body + _note_line(diagnostic, ctx))
            lines.append(_line(rel, diagnostic) + _note_line(diagnostic, ctx))
        if result.error:
            error = ET.SubElement(case, "error", type="volfix-internal-error",
                                  message=_clean(f"{result.error} (this is a volfix bug)"))
            error.text = _clean(f"{rel}: {result.error}")
            errors += 1
        elif result.diagnostics:
            failures += 1
        if lines:
            ET.SubElement(case, "system-out").text = _clean("\n".join(lines))
    for element in (suites, suite):
        element.set("tests", str(len(results)))
        element.set("failures", str(failures))
        element.set("errors", str(errors))
    suite.set("skipped", "0")
    ET.indent(suites)
    body = ET.tostring(suites, encoding="unicode")
    return '<?xml version="1.0" encoding="UTF-8"?>\n' + body + "\n"
