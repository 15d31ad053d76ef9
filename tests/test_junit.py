"""JUnit XML in ruff's shape: a suite per file with findings, a test case per finding."""
from __future__ import annotations

import xml.etree.ElementTree as ET

from builders import diag, result
from volfix.reporters import junit
from volfix.reporters.base import ReportContext

CALL = "Variable(x, volatile=True)"


def parse(results):
    text = junit.render(results, ReportContext(root="/repo"))
    assert text.startswith('<?xml version="1.0" encoding="UTF-8"?>\n')
    return ET.fromstring(text.encode("utf-8"))


def sample():
    return [
        result("/repo/src/eval.py", diag("VF101", 4, 17, snippet=CALL),
               diag("VF201", 9, 8, snippet="out.volatile", note="branch flips")),
        result("/repo/clean.py"),
        result("/repo/nb/demo.ipynb", diag("VF110", 2, 5, snippet="Variable(t)", cell=3)),
        result("/repo/boom.py", error="KeyError: 'x'"),
    ]


def test_structure_and_counts():
    root = parse(sample())
    assert root.tag == "testsuites"
    suites = root.findall("testsuite")
    # As ruff: a suite per file with findings (a clean file has none), sorted by path.
    assert [s.get("name") for s in suites] == ["boom.py", "nb/demo.ipynb", "src/eval.py"]
    counts = {s.get("name"): (s.get("tests"), s.get("failures"), s.get("errors")) for s in suites}
    assert counts == {"boom.py": ("1", "0", "1"), "nb/demo.ipynb": ("1", "1", "0"), "src/eval.py": ("2", "2", "0")}
    assert (root.get("tests"), root.get("failures"), root.get("errors")) == ("4", "3", "1")


def test_a_test_case_per_finding():
    suite = parse(sample()).find("testsuite[@name='src/eval.py']")
    cases = suite.findall("testcase")
    assert [(c.get("name"), c.get("classname"), c.get("file"), c.get("line"), c.get("column")) for c in cases] == [
        ("volfix.VF101", "src/eval", "src/eval.py", "4", "17"),
        ("volfix.VF201", "src/eval", "src/eval.py", "9", "8")]
    first, second = (c.find("failure") for c in cases)
    assert (first.get("type"), first.get("message")) == ("VF101", diag("VF101").message)
    assert first.text == f"line 4, col 17, {diag('VF101').message}\n    {CALL}"
    assert second.text == (f"line 9, col 8, {diag('VF201').message}\n    out.volatile\n"
                           "    = note: branch flips")


def test_notebook_cell_and_internal_error():
    root = parse(sample())
    case = root.find("testsuite[@name='nb/demo.ipynb']/testcase")
    assert case.find("properties/property[@name='cell']").get("value") == "3"
    assert case.find("failure").text.startswith("cell 3, line 2, col 5, ")
    error = root.find("testsuite[@name='boom.py']/testcase/error")
    assert error.get("type") == "volfix-internal-error"
    assert "KeyError: 'x'" in error.get("message")


def test_xml_special_and_control_characters_survive():
    message = 'a <b> & "c" \'d\' ]]> \x00 \x1b[31m end'
    root = parse([result("/repo/x&y<z>.py", diag("VF203", 1, 1, snippet="getattr(x, 'volatile') < 1",
                                                message=message))])
    suite = root.find("testsuite")
    assert suite.get("name") == "x&y<z>.py"
    failure = suite.find("testcase/failure")
    assert failure.get("message") == 'a <b> & "c" \'d\' ]]> \ufffd \ufffd[31m end'
    assert "getattr(x, 'volatile') < 1" in failure.text


def test_multi_line_message_in_attribute_round_trips():
    root = parse([result("/repo/a.py", diag("VF101", 1, 1, message="first\nsecond"))])
    assert root.find("testsuite/testcase/failure").get("message") == "first\nsecond"


def test_a_run_without_findings_is_one_passing_case_as_ruff():
    for results in ([], [result("/repo/clean.py")]):
        root = parse(results)
        assert (root.get("tests"), root.get("failures"), root.get("errors")) == ("1", "0", "0")
        (case,) = root.findall("testsuite/testcase")
        assert case.get("name") == "No errors found" and list(case) == []
