"""The Markdown migration report: counts, what changed, what needs a reviewer, line links."""
from __future__ import annotations

import re

from builders import diag, fix, result
from volfix.model import Applicability
from volfix.registry import rules
from volfix.reporters.base import ReportContext
from volfix.reporters.migration import render_report, review_reason

ESCAPE = "volatility escapes through `self.priors`; consumers at lines 88, 140 are not covered"


def fix_run():
    return [
        result("/repo/src/eval.py",
               diag("VF201", 9, 8, snippet="out.volatile",
                    fix=fix(Applicability.UNSAFE, "Use `not torch.is_grad_enabled()`")),
               diag("VF103", 12, 5, 14, 2, snippet="Variable(x, volatile=flag)", note=ESCAPE,
                    fix=fix(Applicability.UNSAFE, "Wrap in `torch.set_grad_enabled(not flag)`")),
               diag("VF203", 20, 1, snippet='getattr(x, "volatile")'),
               fixed_count=3, applied_codes=("VF101", "VF101", "VF110"), changed=True),
        result("/repo/clean.py"),
        result("/repo/nb/demo.ipynb", diag("VF111", 2, 5, snippet="Variable(t, requires_grad=True)", cell=3,
                                           fix=fix(Applicability.DISPLAY_ONLY, "Use `t.requires_grad_()`"))),
        result("/repo/done.py", fixed_count=1, applied_codes=("VF301",), changed=True),
        result("/repo/boom.py", error="KeyError: 'x'"),
    ]


def report(results, **kwargs):
    return render_report(results, ReportContext(root="/repo", **kwargs))


def counts(md):
    return dict(re.findall(r"^\| (Findings|Fixed|Remaining|Needing manual review) \| (\d+) \|$", md, re.M))


def section(md, path):
    """The text of one file's section."""
    start = md.index(f"## [`{path}`]")
    end = md.find("\n## ", start + 1)
    return md[start:] if end == -1 else md[start:end]


def test_counts_at_the_top():
    md = report(fix_run(), mode="fix")
    assert md.startswith("# volfix migration report\n")
    assert counts(md) == {"Findings": "8", "Fixed": "4", "Remaining": "4", "Needing manual review": "5"}
    assert md.index("| Findings |") < md.index("## [")


def test_changed_lists_applied_fixes_per_code():
    eval_section = section(report(fix_run(), mode="fix"), "src/eval.py")
    assert f"- **VF101** ×2: {rules()['VF101'].MESSAGE}" in eval_section
    assert f"- **VF110** ×1: {rules()['VF110'].MESSAGE}" in eval_section
    assert "- **VF301** ×1" in section(report(fix_run(), mode="fix"), "done.py")


def test_review_items_explain_why_with_line_links():
    eval_section = section(report(fix_run(), mode="fix"), "src/eval.py")
    items = [line for line in eval_section.splitlines() if line.startswith("- [ ] ")]
    assert len(items) == 3
    read, escape, dynamic = items
    assert read.startswith("- [ ] [`src/eval.py#L9`](src/eval.py#L9) **VF201** `out.volatile`")
    assert "`not torch.is_grad_enabled()`" in read and "requires_grad" in read
    assert escape.startswith("- [ ] [`src/eval.py#L12-14`](src/eval.py#L12-L14) **VF103**")
    assert "unsafe fix withheld" in escape and ESCAPE in escape
    assert dynamic.startswith("- [ ] [`src/eval.py#L20`](src/eval.py#L20) **VF203**")
    assert rules()["VF203"].MESSAGE in dynamic and "no automatic fix" in dynamic


def test_notebook_items_name_the_cell_and_link_the_file():
    nb = section(report(fix_run(), mode="fix"), "nb/demo.ipynb")
    assert "- [ ] [cell 3, line 2](nb/demo.ipynb) **VF111**" in nb
    assert "suggestion only" in nb


def test_volfix_bug_and_untouched_files():
    md = report(fix_run(), mode="fix")
    assert "volfix failed on this file" in section(md, "boom.py") and "KeyError" in section(md, "boom.py")
    assert "clean.py" not in md  # nothing to review there


def test_unsafe_fix_is_not_withheld_with_unsafe_fixes():
    unsafe = diag("VF110", 3, 1, snippet="Variable(h)", fix=fix(Applicability.UNSAFE, "Drop the wrapper"))
    assert "withheld" in review_reason(unsafe, ReportContext(root="/repo"))
    assert review_reason(unsafe, ReportContext(root="/repo", unsafe_fixes=True)) is None


def test_check_mode_separates_fixable_from_review():
    results = [result("/repo/a.py",
                      diag("VF101", 7, 5, snippet="Variable(y, volatile=True)", fix=fix(),
                           note="not wrapped: the region trains"),
                      diag("VF101", 3, 5, snippet="Variable(x, volatile=True)", fix=fix()))]
    md = report(results)
    assert counts(md) == {"Findings": "2", "Fixed": "0", "Remaining": "2", "Needing manual review": "1"}
    assert "Nothing was changed yet" in md
    a = section(md, "a.py")
    fixable = a.index("**Will change with `volfix fix`**")
    review = a.index("**Needs manual review**")
    assert a.index("a.py#L3") > fixable and a.index("a.py#L3") < review  # sorted by line too
    assert "- [ ] [`a.py#L7`](a.py#L7)" in a and "not wrapped: the region trains" in a


def test_paths_are_relative_and_link_safe():
    md = report([result("/repo/my dir/x.py", diag("VF203", 1, 1, snippet="getattr(m, `volatile`)"))])
    assert "## [`my dir/x.py`](my%20dir/x.py)" in md
    assert "(my%20dir/x.py#L1)" in md
    assert "`` getattr(m, `volatile`) ``" in md


def test_nothing_to_migrate():
    md = report([result("/repo/a.py"), result("/repo/b.py")])
    assert counts(md) == {"Findings": "0", "Fixed": "0", "Remaining": "0", "Needing manual review": "0"}
    assert md.endswith("Nothing to migrate in 2 checked files.\n")


def test_rule_table_counts_fixed_and_remaining():
    md = report(fix_run(), mode="fix")
    rows = dict(re.findall(r"^\| \[(VF\d+)\]\([^)]*\) [a-z-]+ \| (\d+ \| \d+) \|$", md, re.M))
    assert rows == {"VF101": "2 | 0", "VF103": "0 | 1", "VF110": "1 | 0", "VF111": "0 | 1",
                    "VF201": "0 | 1", "VF203": "0 | 1", "VF301": "1 | 0"}
