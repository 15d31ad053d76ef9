"""The Markdown migration report (`--report FILE`): counts at the top, then per file every
applied fix and every remaining finding with a line link, the rule, the fix's safety and the
note a reviewer should read.

The end-to-end tests run the real CLI on a small project (a safe fix, an unsafe fix withheld
and then applied with --unsafe-fixes, a finding with no fix, a notebook) and compare the
whole report; every line link is then followed to the file on disk.
"""
from __future__ import annotations

import json
import re
from pathlib import Path

import pytest

from builders import diag, fix, result
from conftest import invoke
from volfix.model import Applicability
from volfix.rules.registry import rules
from volfix.reporters.base import ReportContext
from volfix.reporters.linemap import FileLineMap, LineMap
from volfix.reporters.migration import render_report

EVALUATE = '''\
import torch
from torch.autograd import Variable


def evaluate(model, loader):
    correct = 0
    for x, y in loader:
        out = model(Variable(x, volatile=True))
        correct += (out.max(1)[1] == y).sum().item()
    return correct


def step(model, h):
    return model(Variable(h))


def flag_of(h):
    return getattr(h, "volatile")
'''

NOTEBOOK_CELLS = [
    ("markdown", ["# Demo\n"]),
    ("code", ["import torch\n", "from torch.autograd import Variable\n"]),
    ("code", ["x = torch.ones(2)\n", "y = Variable(x, volatile=True)\n", "print(model(y).sum())"]),
]

# A fix names the lines of its region: in the file as it is (check), or as written (fix).
VF101_CHANGE = "Unwrap and run lines 8-9 under `with torch.no_grad():`"  # evaluate.py before the fix
VF101_CELL_CHANGE = "Unwrap and run lines 2-3 under `with torch.no_grad():`"  # cell 3 before the fix
VF101_WRITTEN = "Unwrap and run lines 9-10 under `with torch.no_grad():`"  # below `with ...:` (line 8)
VF101_CELL_WRITTEN = "Unwrap and run line 3 under `with torch.no_grad():`"  # `y = x` collapsed
VF101_WRITTEN_UNSAFE = "Unwrap and run lines 8-9 under `with torch.no_grad():`"  # the import went too
VF110_NOTE = ("unsafe fix: if the argument requires grad, gradients will now flow into it "
              "(`--legacy-semantics` makes this safe for genuine 0.3 code)")
VF203_NOTE = "no fix: the intent of a dynamic access cannot be read from the code"


def url(code):
    return rules()[code].url()


def notebook_json(cells):
    return json.dumps({
        "cells": [{"cell_type": kind, "metadata": {}, "source": source,
                   **({"execution_count": None, "outputs": []} if kind == "code" else {})}
                  for kind, source in cells],
        "metadata": {"kernelspec": {"language": "python", "name": "python3"}},
        "nbformat": 4, "nbformat_minor": 5}, indent=1) + "\n"


@pytest.fixture
def migration(project):
    (project / "src").mkdir()
    (project / "src" / "evaluate.py").write_text(EVALUATE)
    (project / "nb").mkdir()
    (project / "nb" / "demo.ipynb").write_text(notebook_json(NOTEBOOK_CELLS))
    (project / "docs").mkdir()
    return project


def run_report(*args):
    outcome = invoke(*args, "--no-cache", "--report", "docs/migration.md", ".")
    assert outcome.exit_code == 1  # VF203 is left in every scenario
    return Path("docs/migration.md").read_text(encoding="utf-8")


def followed_links(report: str, report_dir: Path):
    """{label: the line the link points to (or the notebook cell's source)}, for every
    location link of the report, resolved from the report's folder like a Markdown viewer."""
    out = {}
    for label, target, line in re.findall(r"\[`([^`]+)`\]\(([^)#]+)(?:#L(\d+))?\)", report):
        path = (report_dir / target).resolve()
        assert path.is_file(), f"{label} links to a missing file {target}"
        if line:
            out[label] = path.read_text(encoding="utf-8").splitlines()[int(line) - 1].strip()
        elif ", cell " in label:
            cell = int(re.search(r"cell (\d+)", label).group(1))
            out[label] = "".join(json.loads(path.read_text())["cells"][cell - 1]["source"])
    return out


# ---------------------------------------------------------------------------- end to end


def test_report_after_check_says_what_fix_would_change_and_links_the_unchanged_files(migration):
    report = run_report("check")
    assert report == f"""\
# volfix migration report

Nothing was changed yet: this is what `volfix fix` would do.

- **2** files would change
- **2** fixes would be applied: 2 safe, 0 unsafe
- **2** findings would remain: 1 fixable with `volfix fix --unsafe-fixes` (safe with `--legacy-semantics` for genuine 0.3 code), 1 to fix by hand

## [`nb/demo.ipynb`](../nb/demo.ipynb)

**Would change**

| Line | Rule | Fix | Change | Reviewer note |
|---|---|---|---|---|
| [`nb/demo.ipynb, cell 3, line 2`](../nb/demo.ipynb) | [VF101]({url('VF101')}) | safe | {VF101_CELL_CHANGE} |  |

## [`src/evaluate.py`](../src/evaluate.py)

**Would change**

| Line | Rule | Fix | Change | Reviewer note |
|---|---|---|---|---|
| [`src/evaluate.py:8`](../src/evaluate.py#L8) | [VF101]({url('VF101')}) | safe | {VF101_CHANGE} |  |

**Would remain**

| Line | Rule | Fix | Finding | Reviewer note |
|---|---|---|---|---|
| [`src/evaluate.py:14`](../src/evaluate.py#L14) | [VF110]({url('VF110')}) | unsafe, needs `--unsafe-fixes`: Remove the `Variable` wrapper | {rules()['VF110'].MESSAGE} | {VF110_NOTE} |
| [`src/evaluate.py:18`](../src/evaluate.py#L18) | [VF203]({url('VF203')}) | no fix | {rules()['VF203'].MESSAGE} | {VF203_NOTE} |
"""
    assert (migration / "src" / "evaluate.py").read_text() == EVALUATE  # check writes nothing
    assert followed_links(report, migration / "docs") == {
        "nb/demo.ipynb, cell 3, line 2": "".join(NOTEBOOK_CELLS[2][1]),
        "src/evaluate.py:8": "out = model(Variable(x, volatile=True))",
        "src/evaluate.py:14": "return model(Variable(h))",
        "src/evaluate.py:18": 'return getattr(h, "volatile")',
    }


def test_report_after_fix_lists_each_applied_fix_at_its_line_in_the_fixed_file(migration):
    report = run_report("fix")
    assert report == f"""\
# volfix migration report

What `volfix fix` changed, and what is left.

- **2** files changed
- **2** fixes applied: 2 safe, 0 unsafe
- **2** findings remain: 1 fixable with `volfix fix --unsafe-fixes` (safe with `--legacy-semantics` for genuine 0.3 code), 1 to fix by hand

## [`nb/demo.ipynb`](../nb/demo.ipynb)

**Changed**

| Line | Rule | Fix | Change | Reviewer note |
|---|---|---|---|---|
| [`nb/demo.ipynb, cell 3, line 2`](../nb/demo.ipynb) | [VF101]({url('VF101')}) | safe | {VF101_CELL_WRITTEN} |  |

## [`src/evaluate.py`](../src/evaluate.py)

**Changed**

| Line | Rule | Fix | Change | Reviewer note |
|---|---|---|---|---|
| [`src/evaluate.py:8`](../src/evaluate.py#L8) | [VF101]({url('VF101')}) | safe | {VF101_WRITTEN} |  |

**Remaining**

| Line | Rule | Fix | Finding | Reviewer note |
|---|---|---|---|---|
| [`src/evaluate.py:15`](../src/evaluate.py#L15) | [VF110]({url('VF110')}) | unsafe, needs `--unsafe-fixes`: Remove the `Variable` wrapper | {rules()['VF110'].MESSAGE} | {VF110_NOTE} |
| [`src/evaluate.py:19`](../src/evaluate.py#L19) | [VF203]({url('VF203')}) | no fix | {rules()['VF203'].MESSAGE} | {VF203_NOTE} |
"""
    links = followed_links(report, migration / "docs")
    assert links["src/evaluate.py:8"] == "with torch.no_grad():"  # where the change starts
    assert links["src/evaluate.py:15"] == "return model(Variable(h))"
    assert links["src/evaluate.py:19"] == 'return getattr(h, "volatile")'
    assert links["nb/demo.ipynb, cell 3, line 2"].splitlines()[1] == "with torch.no_grad():"


def test_report_after_unsafe_fixes_marks_the_unsafe_change_for_review(migration):
    report = run_report("fix", "--unsafe-fixes")
    head, evaluate = report.split("## [`src/evaluate.py`](../src/evaluate.py)\n")
    assert head.splitlines()[:7] == [
        "# volfix migration report",
        "",
        "What `volfix fix --unsafe-fixes` changed, and what is left.",
        "",
        "- **2** files changed",
        "- **3** fixes applied: 2 safe, 1 unsafe",
        "- **1** finding remains: to fix by hand",
    ]
    assert evaluate == f"""
**Changed**

| Line | Rule | Fix | Change | Reviewer note |
|---|---|---|---|---|
| [`src/evaluate.py:7`](../src/evaluate.py#L7) | [VF101]({url('VF101')}) | safe | {VF101_WRITTEN_UNSAFE} |  |
| [`src/evaluate.py:14`](../src/evaluate.py#L14) | [VF110]({url('VF110')}) | unsafe | Remove the `Variable` wrapper | {VF110_NOTE} |

**Remaining**

| Line | Rule | Fix | Finding | Reviewer note |
|---|---|---|---|---|
| [`src/evaluate.py:18`](../src/evaluate.py#L18) | [VF203]({url('VF203')}) | no fix | {rules()['VF203'].MESSAGE} | {VF203_NOTE} |
"""
    # The unused `Variable` import went too: every line moved up by one.
    assert followed_links(report, migration / "docs") == {
        "nb/demo.ipynb, cell 3, line 2": "x = torch.ones(2)\nwith torch.no_grad():\n    print(model(x).sum())",
        "src/evaluate.py:7": "with torch.no_grad():",
        "src/evaluate.py:14": "return model(h)",
        "src/evaluate.py:18": 'return getattr(h, "volatile")',
    }


def test_legacy_semantics_turns_the_unsafe_fix_safe_in_the_report(migration):
    outcome = invoke("check", "--no-cache", "--legacy-semantics", "--report", "r.md", ".")
    assert outcome.exit_code == 1
    report = Path("r.md").read_text()
    assert "- **3** fixes would be applied: 3 safe, 0 unsafe" in report
    assert "- **1** finding would remain: 0 fixable with `volfix fix --unsafe-fixes`, 1 to fix by hand" in report
    assert f"| [`src/evaluate.py:14`](src/evaluate.py#L14) | [VF110]({url('VF110')}) | safe | " \
           "Remove the `Variable` wrapper |  |" in report
    assert "--legacy-semantics` makes this safe" not in report


def test_report_on_stdin_check_has_no_links(project):
    outcome = invoke("check", "--report", "r.md", "-", input="import torch\nflag = getattr(x, 'volatile')\n")
    assert outcome.exit_code == 1
    report = Path("r.md").read_text()
    assert "## `<stdin>`\n" in report
    assert f"| `<stdin>:2` | [VF203]({url('VF203')}) | no fix |" in report


# ---------------------------------------------------------------------------- hand-built results


def test_counts_name_failed_files_and_unsafe_fixes_left_to_a_person():
    results = [
        result("/repo/a.py",
               diag("VF201", 3, 4, fix=fix(Applicability.UNSAFE, "Use `not torch.is_grad_enabled()`")),
               diag("VF111", 5, 1, fix=fix(Applicability.DISPLAY_ONLY, "Use `t.requires_grad_()`")),
               diag("VF101", 7, 1, fix=fix(), note="not fixed yet: fix the `async=` keywords (VF301) first"),
               changed=True, applied=(diag("VF301", 2, 1, fix=fix(message="Rename `async=`")),)),
        result("/repo/boom.py", error="KeyError: 'x'\nTraceback ..."),
    ]
    md = render_report(results, ReportContext(root="/repo", mode="fix"))
    assert md.splitlines()[4:8] == [
        "- **1** file changed",
        "- **1** fix applied: 1 safe, 0 unsafe",
        "- **3** findings remain: 1 fixable with `volfix fix --unsafe-fixes`, 2 to fix by hand",
        "- **1** file volfix failed on (a volfix bug: left untouched)",
    ]
    rows = [line for line in md.splitlines() if line.startswith("| [`a.py:")]
    assert [row.split(" | ")[2] for row in rows] == [
        "safe",
        "unsafe, needs `--unsafe-fixes`: Use `not torch.is_grad_enabled()`",
        "suggestion only: Use `t.requires_grad_()`",
        "safe, not applied: Unwrap and add `torch.no_grad()`",
    ]
    assert "## [`boom.py`](boom.py)\n\nvolfix failed on this file (a volfix bug; it was left untouched): " \
           "KeyError: 'x'\n" in md


def test_unsafe_applied_fix_without_a_note_still_asks_for_review():
    applied = diag("VF201", 2, 1, fix=fix(Applicability.UNSAFE, "Use `not torch.is_grad_enabled()`"))
    md = render_report([result("/repo/a.py", changed=True, applied=(applied,))],
                       ReportContext(root="/repo", mode="fix", unsafe_fixes=True))
    assert md.splitlines()[-1] == (f"| [`a.py:2`](a.py#L2) | [VF201]({url('VF201')}) | unsafe | "
                                   "Use `not torch.is_grad_enabled()` | unsafe fix: review the change |")


def test_cells_escape_pipes_and_links_quote_spaces():
    d = diag("VF203", 1, 1, message="a | b", note="x |y")
    md = render_report([result("/repo/my dir/x.py", d)], ReportContext(root="/repo"))
    assert "## [`my dir/x.py`](my%20dir/x.py)" in md
    assert md.splitlines()[-1] == f"| [`my dir/x.py:1`](my%20dir/x.py#L1) | [VF203]({url('VF203')}) | no fix | a \\| b | x \\|y |"


def test_links_are_relative_to_the_folder_the_report_is_written_to():
    md = render_report([result("/repo/src/a.py", diag("VF203", 4, 1))], ReportContext(root="/repo"),
                       link_base="/repo/docs/reports")
    assert "[`src/a.py:4`](../../src/a.py#L4)" in md


def test_nothing_to_migrate():
    md = render_report([result("/repo/a.py"), result("/repo/b.py")], ReportContext(root="/repo"))
    assert md.endswith("- **0** findings would remain\n\nNothing to migrate in 2 checked files.\n")


# ---------------------------------------------------------------------------- line maps


def test_line_map_follows_reindented_inserted_and_deleted_lines():
    before = "import a\nimport b\nfor x in y:\n    out = f(V(x))\n    n += out\nprint(n)\n"
    after = "import a\nfor x in y:\n    with g():\n        out = f(x)\n        n += out\nprint(n)\n"
    lines = LineMap(before, after)
    assert [lines.forward(row) for row in range(1, 7)] == [1, 2, 2, 3, 5, 6]
    assert [lines.backward(row) for row in range(1, 7)] == [1, 3, 4, 4, 5, 6]


def test_file_line_map_maps_notebook_rows_within_their_cell():
    before = notebook_json([("code", ["a = 1\n", "b = V(a)\n"]), ("code", ["c = 2\n", "d = V(c)\n"])])
    after = notebook_json([("code", ["a = 1\n", "b = V(a)\n"]), ("code", ["import t\n", "c = 2\n", "d = c\n"])])
    lines = FileLineMap(before, after, notebook=True)
    assert lines.forward(2, cell=1) == 2  # an unchanged cell
    assert lines.forward(2, cell=2) == 3 and lines.backward(3, cell=2) == 2
    assert FileLineMap(before, None, notebook=True).forward(7, cell=2) == 7  # nothing to map


def test_lines_of_another_cell_stay_as_the_title_names_them():
    # The title's lines of the finding's own cell move with the fix; "line 12 of cell 2" is
    # another cell's and is left whole (a leading "1" of it was once moved as a line of its own).
    from volfix.reporters.migration import _spans_moved

    before = notebook_json([("code", ["a = 1\n", "b = V(a)\n"]), ("code", ["c = 2\n"] * 12)])
    after = notebook_json([("code", ["import t\n", "a = 1\n", "b = a\n"]), ("code", ["c = 2\n"] * 12)])
    lines = FileLineMap(before, after, notebook=True)
    title = "Unwrap and run line 1 of this cell and line 12 of cell 2 under `with torch.no_grad():`"
    assert _spans_moved(title, lines, 1) == \
        "Unwrap and run line 2 of this cell and line 12 of cell 2 under `with torch.no_grad():`"
    assert _spans_moved("Unwrap and run lines 10-12 of cell 2 under `with g():`", lines, 1) == \
        "Unwrap and run lines 10-12 of cell 2 under `with g():`"
