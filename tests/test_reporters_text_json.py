"""The human (`full`, `concise`, summary, statistics, --show-fixes, --diff) and JSON formats,
on hand-built results: these tests need no engine."""
from __future__ import annotations

import dataclasses
import json
import os

import pytest

from conftest import LEGACY
from volfix.model import Applicability, Diagnostic, Edit, FileResult, Fix, Location
from volfix.rules.registry import rules
from volfix.reporters import FORMATS, get_renderer, iter_findings, json_, text
from volfix.reporters.base import ReportContext

MESSAGE = "`volatile=True` is ignored since PyTorch 0.4; use `torch.no_grad()`"
CTX = ReportContext(root="/repo")


def vf101(row=2, col=13, end_col=39, applicability=Applicability.SAFE, note=None, cell=None,
          edits=()):
    fix = Fix(applicability, "Wrap the uses in `torch.no_grad()`", edits) if applicability else None
    return Diagnostic("VF101", MESSAGE, Location(row, col), Location(row, end_col), fix=fix,
                      note=note, cell=cell)


def vf203(row, col, end_col):
    return Diagnostic("VF203", "`getattr(x, \"volatile\")` is always False", Location(row, col),
                      Location(row, end_col))


def legacy_result(*diagnostics, path="legacy.py", source=LEGACY, **kwargs):
    return FileResult(path, tuple(diagnostics) or (vf101(),), source=source, **kwargs)


# ---------------------------------------------------------------------------- full


def test_full_shows_header_marker_frame_and_help():
    out = text.render_full([legacy_result()], CTX)
    assert out == (
        f"legacy.py:2:13: VF101 [*] {MESSAGE}\n"
        "  |\n"
        "1 | from torch.autograd import Variable\n"
        "2 | out = model(Variable(x, volatile=True))\n"
        "  |             ^^^^^^^^^^^^^^^^^^^^^^^^^^ VF101\n"
        "  |\n"
        "  = help: Wrap the uses in `torch.no_grad()`\n"
        "\n"
    )


def test_full_shows_the_note_on_its_own_line_under_the_frame():
    result = legacy_result(vf101(note="not wrapped: the region trains"))
    assert text.render_full([result], CTX) == (
        f"legacy.py:2:13: VF101 [*] {MESSAGE}\n"
        "  |\n"
        "1 | from torch.autograd import Variable\n"
        "2 | out = model(Variable(x, volatile=True))\n"
        "  |             ^^^^^^^^^^^^^^^^^^^^^^^^^^ VF101\n"
        "  |\n"
        "  = note: not wrapped: the region trains\n"
        "  = help: Wrap the uses in `torch.no_grad()`\n"
        "\n"
    )


def test_concise_leaves_the_note_out():
    result = legacy_result(vf101(note="not wrapped: the region trains"))
    assert text.render_concise([result], CTX) == f"legacy.py:2:13: VF101 [*] {MESSAGE}\n"


def test_full_after_fixes_frames_the_fixed_text_the_findings_are_located_in():
    fixed = "import torch\nwith torch.no_grad():\n    out = model(x)\nflag = out.volatile\n"
    d = Diagnostic("VF201", "`.volatile` is always False", Location(4, 8), Location(4, 20))
    result = FileResult("f.py", (d,), source=LEGACY, fixed_source=fixed, fixed_count=1, changed=True)
    lines = text.render_full([result], ReportContext(root="/repo", mode="fix")).splitlines()
    assert lines[4:6] == ["4 | flag = out.volatile", "  |        ^^^^^^^^^^^^ VF201"]


def test_unsafe_fix_is_marked_only_under_unsafe_fixes():
    result = legacy_result(vf101(applicability=Applicability.UNSAFE))
    plain = text.render_full([result], CTX)
    assert "[*]" not in plain
    assert "help: Wrap the uses in `torch.no_grad()` (unsafe fix: needs --unsafe-fixes)" in plain
    unsafe_ctx = ReportContext(root="/repo", unsafe_fixes=True)
    assert text.render_full([result], unsafe_ctx).startswith(f"legacy.py:2:13: VF101 [*] {MESSAGE}")


def test_no_fix_means_no_marker_and_no_help():
    out = text.render_full([legacy_result(vf101(applicability=None))], CTX)
    assert out.startswith(f"legacy.py:2:13: VF101 {MESSAGE}\n")
    assert "help:" not in out


def test_frame_shows_two_lines_of_context_each_side_with_aligned_gutter():
    source = "".join(f"line{i} = {i}\n" for i in range(1, 13))
    d = Diagnostic("VF201", "msg", Location(10, 1), Location(10, 6))
    out = text.render_full([FileResult("f.py", (d,), source=source)], CTX)
    assert out.splitlines()[1:8] == [
        "   |",
        " 8 | line8 = 8",
        " 9 | line9 = 9",
        "10 | line10 = 10",
        "   | ^^^^^ VF201",
        "11 | line11 = 11",
        "12 | line12 = 12",
    ]


def test_frame_expands_tabs_and_keeps_the_caret_under_the_code():
    source = "def f(x):\n\treturn x.volatile\n"
    d = Diagnostic("VF201", "reading `x.volatile`", Location(2, 9), Location(2, 19))
    lines = text.render_full([FileResult("t.py", (d,), source=source)], CTX).splitlines()
    code_line = lines[lines.index("  |") + 2]
    caret_line = lines[lines.index("  |") + 3]
    assert code_line == "2 |     return x.volatile"
    assert caret_line.index("^") == code_line.index("x.volatile")
    assert caret_line.count("^") == len("x.volatile")


def test_multiline_finding_underlines_each_line():
    source = "y = Variable(\n    x,\n    volatile=True)\nz = 1\n"
    d = Diagnostic("VF101", MESSAGE, Location(1, 5), Location(3, 19))
    lines = text.render_full([FileResult("m.py", (d,), source=source)], CTX).splitlines()
    assert lines[1:9] == [
        "  |",
        "1 | y = Variable(",
        "  |     ^^^^^^^^^",
        "2 |     x,",
        "  |     ^^",
        "3 |     volatile=True)",
        "  |     ^^^^^^^^^^^^^^ VF101",
        "4 | z = 1",
    ]


def test_notebook_findings_name_the_cell_and_frame_the_cell_source():
    notebook = json.dumps({"cells": [
        {"cell_type": "markdown", "source": ["# Title"]},
        {"cell_type": "code", "source": ["from torch.autograd import Variable\n",
                                          "y = Variable(x, volatile=True)"]},
    ], "nbformat": 4})
    d = vf101(row=2, col=5, end_col=31, cell=2)
    out = text.render_full([FileResult("nb.ipynb", (d,), source=notebook)], CTX)
    assert out.splitlines()[0] == f"nb.ipynb:cell 2:2:5: VF101 [*] {MESSAGE}"
    assert "2 | y = Variable(x, volatile=True)" in out
    assert "  |     ^^^^^^^^^^^^^^^^^^^^^^^^^^ VF101" in out
    concise = text.render_concise([FileResult("nb.ipynb", (d,), source=notebook)], CTX)
    assert concise == f"nb.ipynb:cell 2:2:5: VF101 [*] {MESSAGE}\n"


def test_unreadable_file_is_shown_without_a_frame():
    d = Diagnostic("VF002", "cannot decode the file as utf-8", Location(1, 1), Location(1, 1))
    out = text.render_full([FileResult("bad.py", (d,), source=None)], CTX)
    assert out == "bad.py:1:1: VF002 cannot decode the file as utf-8\n\n"


def test_width_truncates_long_source_lines():
    source = "x = Variable(y, volatile=True)  # " + "z" * 200 + "\n"
    d = vf101(row=1, col=5, end_col=31)
    ctx = ReportContext(root="/repo", width=60)
    out = text.render_full([FileResult("w.py", (d,), source=source)], ctx)
    assert all(len(line) <= 60 for line in out.splitlines()[1:])
    assert "…" in out


def test_color_only_when_asked():
    result = legacy_result()
    assert "\x1b[" not in text.render_full([result], CTX)
    colored = text.render_full([result], ReportContext(root="/repo", color=True))
    assert "\x1b[1;31mVF101\x1b[0m" in colored
    # Stripping the colour gives back the plain output.
    import re

    assert re.sub(r"\x1b\[[0-9;]*m", "", colored) == text.render_full([result], CTX)


# ---------------------------------------------------------------------------- concise / order


def test_concise_is_one_line_per_finding_sorted_by_path_then_position():
    a = FileResult("b.py", (vf203(3, 1, 5), vf101(row=1, col=5, end_col=9)), source="")
    b = FileResult("a.py", (vf101(applicability=Applicability.UNSAFE),), source="")
    assert text.render_concise([a, b], CTX) == (
        f"a.py:2:13: VF101 {MESSAGE}\n"
        f"b.py:1:5: VF101 [*] {MESSAGE}\n"
        "b.py:3:1: VF203 `getattr(x, \"volatile\")` is always False\n"
    )


def test_iter_findings_orders_notebook_cells_first_by_cell():
    ds = (vf101(row=1, col=1, end_col=2, cell=3), vf101(row=5, col=1, end_col=2, cell=1))
    found = [d.cell for _, d in iter_findings([FileResult("nb.ipynb", ds)])]
    assert found == [1, 3]


# ---------------------------------------------------------------------------- summary


def test_check_summary_counts_findings_files_and_fixes():
    results = [
        legacy_result(vf101(), vf101(row=5, applicability=Applicability.UNSAFE), vf203(7, 1, 4)),
        legacy_result(vf101(), path="other.py"),
        FileResult("clean.py", (), source=""),
    ]
    assert text.render_summary(results, CTX) == (
        "Found 4 findings in 2 files.\n"
        "[*] 2 fixable with `volfix fix`.\n"
        "1 more fix available with `volfix fix --unsafe-fixes`.\n"
    )
    unsafe_ctx = ReportContext(root="/repo", unsafe_fixes=True)
    assert text.render_summary(results, unsafe_ctx) == (
        "Found 4 findings in 2 files.\n"
        "[*] 3 fixable with `volfix fix --unsafe-fixes`.\n"
    )


def test_check_summary_with_only_unsafe_fixes_does_not_say_more():
    results = [legacy_result(vf101(applicability=Applicability.UNSAFE))]
    assert text.render_summary(results, CTX) == (
        "Found 1 finding in 1 file.\n"
        "1 fix available with `volfix fix --unsafe-fixes`.\n"
    )


def test_summary_when_nothing_is_found():
    assert text.render_summary([FileResult("a.py", (), source="")], CTX) == "All checks passed!\n"
    fix_ctx = ReportContext(root="/repo", mode="fix")
    assert text.render_summary([FileResult("a.py", (), source="")], fix_ctx) == "All checks passed!\n"


def test_fix_summary_counts_fixed_and_remaining():
    results = [
        FileResult("a.py", (vf203(3, 1, 4),), source="", fixed_count=2, changed=True),
        FileResult("b.py", (vf101(applicability=Applicability.UNSAFE),), source="", fixed_count=1,
                   changed=True),
    ]
    fix_ctx = ReportContext(root="/repo", mode="fix")
    assert text.render_summary(results, fix_ctx) == (
        "Fixed 3 findings (2 remaining).\n"
        "1 more fix available with `volfix fix --unsafe-fixes`.\n"
    )


def test_diff_summary():
    ctx = ReportContext(root="/repo", mode="diff")
    changed = FileResult("a.py", (vf203(1, 1, 2),), source="a", fixed_source="b", fixed_count=2,
                         changed=True)
    assert text.render_summary([changed], ctx) == "Would fix 2 findings in 1 file (1 remaining).\n"
    same = FileResult("c.py", (), source="a", fixed_source="a")
    assert text.render_summary([same], ctx) == "No fixes to apply.\n"


def test_summary_never_says_all_passed_when_a_file_failed():
    results = [FileResult("ok.py"), FileResult("boom.py", error="VF101 crashed")]
    assert text.render_summary(results, CTX) == (
        "volfix failed on 1 file (a volfix bug): see the errors above.\n")


def test_errors_name_the_path_and_say_it_is_a_volfix_bug():
    results = [FileResult("ok.py"), FileResult("boom.py", error="RuleCrash: VF101 failed\nTraceback...")]
    assert text.render_errors(results) == (
        "error: boom.py: RuleCrash: VF101 failed (this is a volfix bug; please report it)\n")
    assert "Traceback..." in text.render_errors(results, debug=True)
    said = [FileResult("x.py", error="VF101 crashed (this is a volfix bug)")]
    assert text.render_errors(said).count("volfix bug") == 1


# ---------------------------------------------------------------------------- statistics


def test_statistics_table_counts_per_code_most_frequent_first():
    results = [legacy_result(vf101(), vf203(3, 1, 4), vf203(4, 1, 4), vf203(5, 1, 4)),
               legacy_result(vf101(applicability=Applicability.UNSAFE), path="b.py")]
    assert text.render_statistics(results, CTX) == (
        "3  VF203  [ ] dynamic-volatile-access\n"
        "2  VF101  [~] volatile-in-variable-call\n"  # the unsafe one needs --unsafe-fixes
    )
    rows = json.loads(json_.render_statistics(results, CTX))
    assert rows == [
        {"code": "VF203", "name": "dynamic-volatile-access", "count": 3, "fixable": False, "fixable_count": 0},
        {"code": "VF101", "name": "volatile-in-variable-call", "count": 2, "fixable": False, "fixable_count": 1},
    ]
    # With --unsafe-fixes `volfix fix` fixes both: [*], as ruff.
    unsafe = dataclasses.replace(CTX, unsafe_fixes=True)
    assert text.render_statistics(results, unsafe).splitlines()[1] == "2  VF101  [*] volatile-in-variable-call"


def test_statistics_of_nothing_is_empty():
    assert text.render_statistics([FileResult("a.py")], CTX) == ""


# ---------------------------------------------------------------------------- --show-fixes


def test_show_fixes_in_fix_mode_lists_applied_fixes_per_file():
    results = [
        FileResult("b.py", applied_codes=("VF301",), fixed_count=1, changed=True),
        FileResult("a.py", applied_codes=("VF101", "VF101", "VF202"), fixed_count=3, changed=True),
        FileResult("c.py"),
    ]
    assert text.render_fixes(results, ReportContext(root="/r", mode="fix")) == (
        "Fixed 4 findings:\n"
        "- a.py:\n"
        "    2 × VF101 (volatile-in-variable-call)\n"
        "    1 × VF202 (volatile-attribute-write)\n"
        "- b.py:\n"
        "    1 × VF301 (async-keyword-argument)\n"
    )
    assert text.render_fixes([FileResult("c.py")], ReportContext(root="/r", mode="fix")) == (
        "No fixes applied.\n")


def test_show_fixes_in_check_mode_lists_applicable_fixes():
    results = [legacy_result(vf101(), vf101(row=4, applicability=Applicability.UNSAFE),
                             vf203(6, 1, 3))]
    assert text.render_fixes(results, CTX) == (
        "1 finding fixable with `volfix fix`:\n"
        "- legacy.py:\n"
        "    1 × VF101 (volatile-in-variable-call)\n"
    )
    unsafe = ReportContext(root="/r", unsafe_fixes=True)
    assert text.render_fixes(results, unsafe).startswith(
        "2 findings fixable with `volfix fix --unsafe-fixes`:\n")


# ---------------------------------------------------------------------------- --diff


def test_diff_is_unified_and_skips_unchanged_files():
    before = "from torch.autograd import Variable\ny = Variable(x)\nz = 1\n"
    after = "y = x\nz = 1\n"
    results = [FileResult("a.py", source=before, fixed_source=after, changed=True),
               FileResult("same.py", source="q = 1\n", fixed_source="q = 1\n")]
    assert text.render_diff(results, CTX) == (
        "--- a.py\n"
        "+++ a.py\n"
        "@@ -1,3 +1,2 @@\n"
        "-from torch.autograd import Variable\n"
        "-y = Variable(x)\n"
        "+y = x\n"
        " z = 1\n"
    )


def test_diff_marks_a_missing_final_newline_and_keeps_crlf():
    out = text.render_diff([FileResult("c.py", source="a = 1\r\nb = Variable(x)",
                                       fixed_source="a = 1\r\nb = x")], CTX)
    assert out.endswith("-b = Variable(x)\n\\ No newline at end of file\n"
                        "+b = x\n\\ No newline at end of file\n")
    assert " a = 1\r\n" in out


def _notebook(*sources, cell_type="code"):
    return json.dumps({"cells": [{"cell_type": cell_type, "metadata": {}, "source": src.splitlines(True)}
                                 for src in sources], "nbformat": 4, "nbformat_minor": 5}, indent=1) + "\n"


def test_notebook_diff_is_per_changed_cell_headed_like_ruff():
    before = _notebook("from torch.autograd import Variable\ny = Variable(x)", "print(1)", "z = Variable(w)\nq = 2")
    after = _notebook("y = x", "print(1)", "z = w\nq = 2")
    out = text.render_diff([FileResult("nb.ipynb", source=before, fixed_source=after, changed=True)], CTX)
    assert out == (
        "--- nb.ipynb:cell 1\n"
        "+++ nb.ipynb:cell 1\n"
        "@@ -1,2 +1 @@\n"
        "-from torch.autograd import Variable\n"
        "-y = Variable(x)\n"
        "+y = x\n"
        "--- nb.ipynb:cell 3\n"
        "+++ nb.ipynb:cell 3\n"
        "@@ -1,2 +1,2 @@\n"
        "-z = Variable(w)\n"
        "+z = w\n"
        " q = 2\n"
    )


def test_a_notebook_diff_falls_back_to_the_text_when_it_is_not_notebook_json():
    out = text.render_diff([FileResult("nb.ipynb", source="not json\n", fixed_source="still not\n")], CTX)
    assert out == "--- nb.ipynb\n+++ nb.ipynb\n@@ -1 +1 @@\n-not json\n+still not\n"


def test_frames_after_fixing_show_the_fixed_text_the_findings_are_located_in():
    source = "import torch\nh = x.cuda(async=True)\nif x.volatile:\n    pass\n"
    fixed = "import torch\nh = x.cuda(non_blocking=True)\nif x.volatile:\n    pass\n"
    d = Diagnostic("VF201", "`x.volatile` is always False", Location(3, 4), Location(3, 14))
    out = text.render_full([FileResult("f.py", (d,), source=source, fixed_source=fixed, changed=True)],
                           ReportContext(root="/repo", mode="fix"))
    assert "2 | h = x.cuda(non_blocking=True)\n" in out
    assert "3 | if x.volatile:\n  |    ^^^^^^^^^^ VF201\n" in out


# ---------------------------------------------------------------------------- json


def test_json_mirrors_ruffs_shape():
    edit = Edit("x", Location(2, 13), Location(2, 39))
    results = [legacy_result(vf101(edits=(edit,)), vf203(2, 1, 4))]
    data = json.loads(json_.render(results, CTX))
    assert data == [
        {
            "code": "VF203",
            "message": "`getattr(x, \"volatile\")` is always False",
            "filename": os.path.abspath("legacy.py"),
            "location": {"row": 2, "column": 1},
            "end_location": {"row": 2, "column": 4},
            "fix": None,
            "note": None,
            "cell": None,
            "noqa_row": 2,
            "url": rules()["VF203"].url(),
        },
        {
            "code": "VF101",
            "message": MESSAGE,
            "filename": os.path.abspath("legacy.py"),
            "location": {"row": 2, "column": 13},
            "end_location": {"row": 2, "column": 39},
            "fix": {
                "applicability": "safe",
                "message": "Wrap the uses in `torch.no_grad()`",
                "edits": [{"content": "x", "location": {"row": 2, "column": 13},
                           "end_location": {"row": 2, "column": 39}}],
            },
            "note": None,
            "cell": None,
            "noqa_row": 2,
            "url": rules()["VF101"].url(),
        },
    ]


def test_json_note_is_a_field_of_its_own_and_notebook_cell():
    d = vf101(applicability=Applicability.UNSAFE, note="volatility escapes through `self.x`",
              cell=4)
    [item] = json.loads(json_.render([FileResult("nb.ipynb", (d,))], CTX))
    assert item["message"] == MESSAGE
    assert item["note"] == "volatility escapes through `self.x`"
    assert item["cell"] == 4
    assert item["fix"]["applicability"] == "unsafe"


def test_json_keeps_pseudo_paths_and_renders_an_empty_list():
    [item] = json.loads(json_.render([FileResult("<stdin>", (vf101(),))], CTX))
    assert item["filename"] == "<stdin>"
    assert json.loads(json_.render([FileResult("a.py")], CTX)) == []


def test_json_lines_is_one_object_per_line_in_the_same_shape():
    results = [legacy_result(vf101(), vf203(3, 1, 4)), legacy_result(path="b.py")]
    lines = json_.render_lines(results, CTX).splitlines()
    assert [json.loads(line) for line in lines] == json.loads(json_.render(results, CTX))
    assert len(lines) == 3


# ---------------------------------------------------------------------------- registry of formats


@pytest.mark.parametrize("name", ["full", "concise", "json", "json-lines"])
def test_owned_formats_are_reachable_by_name(name):
    render = get_renderer(name)
    assert "VF101" in render([legacy_result()], CTX)


def test_every_documented_format_is_offered():
    assert set(FORMATS) == {"full", "concise", "json", "json-lines", "sarif", "github", "junit"}
