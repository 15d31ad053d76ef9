"""`--format github`: workflow commands that round-trip through GitHub's documented syntax,
and the Markdown step summary."""
from __future__ import annotations

import re
from typing import Dict, Tuple

import pytest

from builders import diag, fix, result
from volfix.model import Applicability
from volfix.reporters import github
from volfix.reporters.base import ReportContext

CALL = "Variable(x, volatile=True)"


# A reader written from GitHub's documentation of workflow commands
# (`::command key=value,key=value::data`; in data `%`, CR, LF are percent-encoded; in
# property values `:` and `,` are too), independent of the code under test.
_COMMAND = re.compile(r"^::(?P<name>[a-z-]+)(?: (?P<props>[^:]*))?::(?P<data>.*)$")


def _unescape_data(text: str) -> str:
    return text.replace("%0D", "\r").replace("%0A", "\n").replace("%25", "%")


def _unescape_property(text: str) -> str:
    return (text.replace("%0D", "\r").replace("%0A", "\n").replace("%3A", ":")
            .replace("%2C", ",").replace("%25", "%"))


def parse_command(line: str) -> Tuple[str, Dict[str, str], str]:
    match = _COMMAND.match(line)
    assert match, f"not a workflow command: {line!r}"
    props: Dict[str, str] = {}
    if match.group("props"):
        for pair in match.group("props").split(","):
            key, sep, value = pair.partition("=")
            assert sep, f"property without `=` in {line!r}"
            assert key not in props, f"duplicate property {key}"
            props[key] = _unescape_property(value)
    return match.group("name"), props, _unescape_data(match.group("data"))


def lines_of(results, root="/repo", **kwargs):
    out = github.render(results, ReportContext(root=root, **kwargs))
    assert out.endswith("\n") or out == ""
    return out.splitlines()


def test_one_line_finding_has_all_properties():
    (line,) = lines_of([result("/repo/src/eval.py", diag("VF101", 4, 17, snippet=CALL))])
    assert line == ("::error file=src/eval.py,line=4,endLine=4,col=17,endColumn=43,"
                    "title=volfix (VF101)::" + diag("VF101").message)
    name, props, message = parse_command(line)
    assert name == "error"
    assert props == {"file": "src/eval.py", "line": "4", "endLine": "4", "col": "17",
                     "endColumn": "43", "title": "volfix (VF101)"}
    assert message == diag("VF101").message


def test_multi_line_finding_has_no_columns():
    (line,) = lines_of([result("/repo/a.py", diag("VF101", 3, 9, 6, 2, snippet="Variable("))])
    _, props, _ = parse_command(line)
    assert props == {"file": "a.py", "line": "3", "endLine": "6", "title": "volfix (VF101)"}


def test_escaping_round_trips():
    tricky = "100% sure:\r\nline two, with comma %0A literal"
    note = "consumers at lines 88, 140: not covered"
    path = "/repo/dir,with:odd %name/f.py"
    (line,) = lines_of([result(path, diag("VF201", 2, 1, snippet="x.volatile", message=tricky, note=note))])
    assert "\n" not in line and "\r" not in line
    name, props, message = parse_command(line)
    assert message == f"{tricky}\nnote: {note}"
    assert props["file"] == "dir,with:odd %name/f.py"
    head = line.split("::")[1]
    assert "dir%2Cwith%3Aodd %25name" in head
    assert "%0A literal" not in line  # a literal `%0A` in the text is itself escaped
    assert "%250A literal" in line


def test_notebook_finding_names_cell_without_line_properties():
    (line,) = lines_of([result("/repo/nb/demo.ipynb", diag("VF110", 2, 5, snippet="Variable(t)", cell=3))])
    _, props, message = parse_command(line)
    assert props == {"file": "nb/demo.ipynb", "title": "volfix (VF110)"}
    assert message.startswith("cell 3, line 2: ")


def test_levels_and_internal_errors():
    out = lines_of([
        result("/repo/a.py", diag("VF010", 1, 8, snippet="# noqa: VF101")),
        result("/repo/b.py", error="KeyError: 'x'\nin rule VF101"),
    ])
    assert [parse_command(line)[0] for line in out] == ["warning", "error"]
    _, props, message = parse_command(out[1])
    assert props == {"file": "b.py", "title": "volfix internal error"}
    assert message.startswith("KeyError: 'x'\nin rule VF101")


def test_every_finding_one_line_in_order():
    results = [result("/repo/a.py", diag("VF101", 1, 1, snippet=CALL), diag("VF201", 5, 3, snippet="y.volatile")),
               result("/repo/clean.py"),
               result("/repo/b.py", diag("VF203", 2, 1, snippet="getattr"))]
    parsed = [parse_command(line) for line in lines_of(results)]
    assert [(p["file"], p["line"], p["title"]) for _, p, _ in parsed] == [
        ("a.py", "1", "volfix (VF101)"), ("a.py", "5", "volfix (VF201)"), ("b.py", "2", "volfix (VF203)")]
    assert lines_of([result("/repo/clean.py")]) == []


# ------------------------------------------------------------------ step summary


def summary(results, **kwargs):
    return github.step_summary(results, ReportContext(root="/repo", **kwargs))


def table_rows(markdown: str, header: str):
    lines = markdown.splitlines()
    start = lines.index(header) + 2
    rows = []
    for line in lines[start:]:
        if not line.startswith("|"):
            break
        rows.append([cell.strip() for cell in line.strip("|").split(" | ")])
    return rows


def test_step_summary_counts_per_code_and_file():
    results = [
        result("/repo/a.py", diag("VF101", 1, 1, fix=fix()), diag("VF101", 3, 1, fix=fix()),
               diag("VF201", 5, 1, fix=fix(Applicability.UNSAFE))),
        result("/repo/b|c.py", diag("VF203", 2, 1)),
        result("/repo/clean.py"),
    ]
    md = summary(results)
    assert md.startswith("## volfix\n")
    assert "**4 findings** in 2 files (3 checked)." in md
    assert "2 fixable with `volfix fix`, 1 more with `--unsafe-fixes`." in md
    codes = table_rows(md, "| Code | Rule | Findings |")
    assert [(row[0], row[2]) for row in codes] == [("`VF101`", "2"), ("`VF201`", "1"), ("`VF203`", "1")]
    assert "volatile-in-variable-call" in codes[0][1]
    files = table_rows(md, "| File | Findings | Codes |")
    assert files == [["`a.py`", "3", "VF101 ×2, VF201"], ["`b\\|c.py`", "1", "VF203"]]


def test_step_summary_clean_run_and_errors():
    assert "No findings in 2 files." in summary([result("/repo/a.py"), result("/repo/b.py")])
    md = summary([result("/repo/x.py", error="boom")], mode="fix")
    assert "### Internal errors (1)" in md and "- `x.py`: boom" in md
    assert "Fixed: 0." in md


def test_step_summary_reports_fixed_in_fix_mode():
    md = summary([result("/repo/a.py", diag("VF201", 2, 1), fixed_count=3,
                         applied_codes=("VF101", "VF101", "VF110"))], mode="fix")
    assert "Fixed: 3." in md
    assert "**1 finding** in 1 file" in md


@pytest.mark.parametrize("text", ["plain", "a%b", "x:y,z", "multi\nline\r\n", "%0A%25"])
def test_escape_functions_are_inverted_by_the_reader(text):
    assert _unescape_data(github.escape_data(text)) == text
    assert _unescape_property(github.escape_property(text)) == text
    assert not set(github.escape_property(text)) & set(":,\r\n")
