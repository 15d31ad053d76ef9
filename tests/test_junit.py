"""JUnit XML: one suite, a test case per file, a failure per finding."""
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
    (suite,) = root.findall("testsuite")
    assert suite.get("name") == "volfix"
    assert (suite.get("tests"), suite.get("failures"), suite.get("errors")) == ("4", "2", "1")
    assert (root.get("tests"), root.get("failures"), root.get("errors")) == ("4", "2", "1")
    cases = suite.findall("testcase")
    assert [c.get("name") for c in cases] == ["src/eval.py", "clean.py", "nb/demo.ipynb", "boom.py"]
    assert all(c.get("classname") == "volfix" for c in cases)


def test_a_failure_per_finding():
    eval_case = parse(sample()).find("testsuite/testcase[@name='src/eval.py']")
    failures = eval_case.findall("failure")
    assert [f.get("type") for f in failures] == ["VF101", "VF201"]
    assert failures[0].get("message") == f"4:17 VF101 {diag('VF101').message}"
    assert failures[0].text == f"src/eval.py:4:17: VF101 {diag('VF101').message}\n    {CALL}"
    assert failures[1].get("message") == f"9:8 VF201 {diag('VF201').message}"
    assert failures[1].text == (f"src/eval.py:9:8: VF201 {diag('VF201').message}\n    out.volatile\n"
                                "    = note: branch flips")
    out = eval_case.find("system-out").text.splitlines()
    assert out == [f"src/eval.py:4:17: VF101 {diag('VF101').message}",
                   f"src/eval.py:9:8: VF201 {diag('VF201').message}",
                   "    = note: branch flips"]


def test_passing_file_is_a_passing_testcase():
    clean = parse(sample()).find("testsuite/testcase[@name='clean.py']")
    assert list(clean) == []


def test_notebook_cell_and_internal_error():
    root = parse(sample())
    nb = root.find("testsuite/testcase[@name='nb/demo.ipynb']/failure")
    assert nb.get("message").startswith("cell 3, 2:5 VF110")
    error = root.find("testsuite/testcase[@name='boom.py']/error")
    assert error.get("type") == "volfix-internal-error"
    assert "KeyError: 'x'" in error.get("message")


def test_xml_special_and_control_characters_survive():
    message = 'a <b> & "c" \'d\' ]]> \x00 \x1b[31m end'
    root = parse([result("/repo/x&y<z>.py", diag("VF203", 1, 1, snippet="getattr(x, 'volatile') < 1",
                                                message=message))])
    case = root.find("testsuite/testcase")
    assert case.get("name") == "x&y<z>.py"
    failure = case.find("failure")
    assert failure.get("message") == '1:1 VF203 a <b> & "c" \'d\' ]]> \ufffd \ufffd[31m end'
    assert "getattr(x, 'volatile') < 1" in failure.text


def test_multi_line_message_in_attribute_round_trips():
    root = parse([result("/repo/a.py", diag("VF101", 1, 1, message="first\nsecond"))])
    assert root.find("testsuite/testcase/failure").get("message") == "1:1 VF101 first\nsecond"


def test_empty_run():
    root = parse([])
    assert (root.get("tests"), root.get("failures")) == ("0", "0")
    assert root.find("testsuite").findall("testcase") == []
