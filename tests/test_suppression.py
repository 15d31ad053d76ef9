"""Per-line suppression comments and VF010 (unused suppression)."""
from __future__ import annotations

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from builders import at, diag
from volfix.model import Applicability, Location
from volfix.rules.registry import rules
from volfix.rules.base import DOC_SECTIONS
from volfix.settings.suppression import apply_suppressions

CALL = "Variable(x, volatile=True)"


def src(comment: str) -> str:
    return f"from torch.autograd import Variable\nout = model({CALL})  {comment}\n"


def apply_edits(text: str, edits) -> str:
    """Apply single-line edits (1-based, exclusive end) right to left."""
    lines = text.split("\n")
    for e in sorted(edits, key=lambda e: (e.location.row, e.location.column), reverse=True):
        assert e.location.row == e.end_location.row
        line = lines[e.location.row - 1]
        lines[e.location.row - 1] = line[:e.location.column - 1] + e.content + line[e.end_location.column - 1:]
    return "\n".join(lines)


@pytest.mark.parametrize("comment", [
    "# volfix: ignore",
    "# volfix: ignore[VF101]",
    "# volfix: ignore [VF101,VF101]",
    "# VOLFIX: IGNORE[vf101]",
    "#volfix:ignore[VF101]",
    "# noqa",
    "# noqa: VF101",
    "# NOQA:vf101",
    "# noqa: E501, VF101",
    "# noqa: E501 VF101",
    "# type: ignore  # noqa: VF101",
])
def test_every_form_suppresses(comment):
    text = src(comment)
    kept, unused = apply_suppressions([at(text, CALL)], text)
    assert kept == []
    assert unused == []


@pytest.mark.parametrize("comment", [
    "# volfix: ignore[VF201]",
    "# noqa: VF201",
    "# noqa: E501",
    "# volfix: ignored",  # not the directive
    "# see volfix docs about noqa",
    "",
])
def test_other_codes_or_non_directives_do_not_suppress(comment):
    text = src(comment)
    finding = at(text, CALL)
    kept, _ = apply_suppressions([finding], text)
    assert kept == [finding]


def test_noqa_inside_a_string_is_not_a_comment():
    text = 'import torch\nx = Variable(y, volatile=True); s = "# noqa: VF101"\n'
    finding = at(text, "Variable(y, volatile=True)")
    kept, unused = apply_suppressions([finding], text)
    assert kept == [finding]
    assert unused == []


def test_triple_quoted_string_is_not_a_comment():
    text = 'doc = """\n# volfix: ignore\n"""\nout = Variable(y, volatile=True)\n'
    finding = diag("VF101", 2, 1, snippet="# volfix: ignore")  # a finding on the string's line
    kept, unused = apply_suppressions([finding], text)
    assert kept == [finding]
    assert unused == []


def test_comment_applies_to_its_own_line_only():
    text = "# volfix: ignore\nout = model(Variable(x, volatile=True))\n"
    finding = at(text, CALL)
    kept, unused = apply_suppressions([finding], text)
    assert kept == [finding]
    assert [u.location for u in unused] == [Location(1, 1)]


def test_multi_line_finding_suppressed_on_first_or_last_line():
    first = "out = model(Variable(  # noqa: VF101\n    x, volatile=True))\nother = 1\n"
    last = "out = model(Variable(\n    x, volatile=True))  # volfix: ignore[VF101]\nother = 1\n"
    middle = "out = model(Variable(\n    x,  # noqa: VF101\n    volatile=True))\n"
    span = diag("VF101", 1, 13, 2, 21, snippet="Variable(")
    assert apply_suppressions([span], first)[0] == []
    assert apply_suppressions([span], last)[0] == []
    long_span = diag("VF101", 1, 13, 3, 19, snippet="Variable(")
    assert apply_suppressions([long_span], middle)[0] == [long_span]


def test_several_findings_on_one_line_only_named_ones_suppressed():
    text = "x = Variable(a, volatile=True) if a.volatile else b  # volfix: ignore[VF201]\n"
    vf101 = at(text, "Variable(a, volatile=True)")
    vf201 = at(text, "a.volatile", code="VF201")
    kept, unused = apply_suppressions([vf101, vf201], text)
    assert kept == [vf101]
    assert unused == []


def test_parse_errors_cannot_be_suppressed_and_report_no_unused():
    text = 'print "loss", loss  # volfix: ignore\nx = 1  # noqa: VF101\n'
    parse_error = diag("VF001", 1, 1, snippet='print "loss"')
    kept, unused = apply_suppressions([parse_error], text)
    assert kept == [parse_error]
    assert unused == []


def test_text_that_does_not_tokenize_falls_back_to_scanning():
    # An unterminated triple-quoted string makes tokenize fail at the end of the text.
    text = "out = model(Variable(x, volatile=True))  # noqa: VF101\ns = '# noqa: VF201'\nt = '''\n"
    vf101 = at(text, CALL)
    vf201 = diag("VF201", 2, 1, snippet="s")
    kept, unused = apply_suppressions([vf101, vf201], text)
    assert kept == [vf201]
    assert unused == []


def test_notebook_cell_with_magic_reports_the_cell():
    text = "%matplotlib inline\nout = model(Variable(x, volatile=True))  # volfix: ignore\ny = 2  # noqa: VF101\n"
    kept, unused = apply_suppressions([at(text, CALL)], text, cell=3)
    assert kept == []
    assert [(u.code, u.location.row, u.cell) for u in unused] == [("VF010", 3, 3)]


# ------------------------------------------------------------------------- VF010


def test_unused_volfix_ignore_is_reported_with_location_and_fix():
    text = "x = 1  # volfix: ignore\n"
    kept, unused = apply_suppressions([], text)
    assert kept == []
    (u,) = unused
    assert u.code == "VF010"
    assert (u.location, u.end_location) == (Location(1, 8), Location(1, 24))
    assert u.snippet == "# volfix: ignore"
    assert "nothing" in u.note
    assert u.fix is not None and u.fix.applicability is Applicability.SAFE
    assert apply_edits(text, u.fix.edits) == "x = 1\n"


def test_unused_code_among_used_ones_is_removed_from_the_list():
    text = src("# volfix: ignore[VF101, VF201]")
    kept, unused = apply_suppressions([at(text, CALL)], text)
    (u,) = unused
    assert "`VF201`" in u.note and "VF101" not in u.note
    assert apply_edits(text, u.fix.edits) == src("# volfix: ignore[VF101]")


def test_noqa_fix_keeps_other_tools_codes():
    text = "x = 1  # noqa: E501, VF101\n"
    _, unused = apply_suppressions([], text)
    (u,) = unused
    assert "`VF101`" in u.note and "E501" not in u.note
    assert apply_edits(text, u.fix.edits) == "x = 1  # noqa: E501\n"


def test_fix_keeps_a_following_comment():
    text = "x = 1  # noqa: VF101  # keep: this\n"
    _, (u,) = apply_suppressions([], text)
    assert apply_edits(text, u.fix.edits) == "x = 1  # keep: this\n"


def test_fix_after_a_leading_comment_keeps_it():
    text = "x = 1  # type: ignore  # volfix: ignore[VF101]\n"
    _, (u,) = apply_suppressions([], text)
    assert apply_edits(text, u.fix.edits) == "x = 1  # type: ignore\n"


def test_free_text_after_directive_gets_no_fix():
    text = "x = 1  # noqa: VF101 legacy loader, see issue\n"
    _, (u,) = apply_suppressions([], text)
    assert u.fix is None


def test_bare_noqa_and_foreign_noqa_are_never_reported():
    text = "import os  # noqa\nx = 1  # noqa: F401, E501\n"
    kept, unused = apply_suppressions([], text)
    assert unused == []


def test_unknown_code_in_volfix_directive_is_named():
    text = "x = 1  # volfix: ignore[VF999]\n"
    _, (u,) = apply_suppressions([], text)
    assert "`VF999` (unknown code)" in u.note


def test_used_directives_are_not_reported():
    text = src("# noqa: VF101") + "y = t.volatile  # volfix: ignore\n"
    findings = [at(text, CALL), at(text, "t.volatile", code="VF201")]
    kept, unused = apply_suppressions(findings, text)
    assert kept == [] and unused == []


def test_vf010_itself_is_suppressed_only_when_named():
    named = "x = 1  # volfix: ignore[VF101]  # noqa: VF010\n"
    assert apply_suppressions([], named)[1] == []
    # A bare `# volfix: ignore` that suppresses nothing is reported, not self-suppressed.
    bare = "x = 1  # volfix: ignore\n"
    assert len(apply_suppressions([], bare)[1]) == 1


def test_kept_order_is_preserved_and_crlf_is_handled():
    text = "a = Variable(p, volatile=True)\r\nb = Variable(q, volatile=True)  # noqa: VF101\r\nc = Variable(r)\r\n"
    first = at(text, "Variable(p, volatile=True)")
    second = at(text, "Variable(q, volatile=True)")
    third = at(text, "Variable(r)", code="VF110")
    kept, unused = apply_suppressions([third, second, first], text)
    assert kept == [third, first]
    assert unused == []


def test_vf010_rule_is_registered_with_complete_docs():
    cls = rules()["VF010"]
    doc = cls.doc()
    positions = [doc.index(f"## {section}") for section in DOC_SECTIONS]
    assert positions == sorted(positions)
    assert cls.name() == "unused-suppression"
    assert "--extend-select VF010" in doc


def test_inconsistent_dedent_falls_back_to_scanning():
    text = "if x:\n    a = 1\n  b = Variable(y, volatile=True)  # noqa: VF101\n"
    finding = at(text, "Variable(y, volatile=True)")
    kept, unused = apply_suppressions([finding], text)
    assert kept == [] and unused == []


def test_two_unused_directives_in_one_comment_give_one_fix():
    text = "x = 1  # volfix: ignore # noqa: VF101\n"
    _, unused = apply_suppressions([], text)
    (u,) = unused
    assert (u.location, u.end_location) == (Location(1, 8), Location(1, 38))
    assert "`# volfix: ignore` has nothing" in u.note and "`VF101`" in u.note
    assert len(u.fix.edits) == 1
    assert apply_edits(text, u.fix.edits) == "x = 1\n"


def test_used_directive_beside_an_unused_one_is_kept():
    text = src("# noqa: VF101  # volfix: ignore[VF203]")
    _, (u,) = apply_suppressions([at(text, CALL)], text)
    assert apply_edits(text, u.fix.edits) == src("# noqa: VF101")


def test_comment_only_line():
    text = "def f():\n    # volfix: ignore\n    return 1\n"
    _, (u,) = apply_suppressions([], text)
    assert apply_edits(text, u.fix.edits) == "def f():\n\n    return 1\n"


# Lines of legacy code with comments, strings holding directive look-alikes, and directives.
_CODE = st.sampled_from(["x = 1", "out = model(Variable(x, volatile=True))", "s = '# noqa: VF101'",
                         'd = """# volfix: ignore"""', "if a.volatile:", "    pass", "", "%time f()"])
_DIRECTIVE = st.sampled_from(["# volfix: ignore", "# volfix: ignore[VF101]", "# volfix: ignore[VF101, VF201]",
                              "# noqa", "# noqa: VF101", "# noqa: E501, VF201", "# noqa: VF010",
                              "# keep: me", "# volfix: ignore[VF999] reason"])
_LINE = st.builds(lambda code, comments: "  ".join([code] + comments) if code else " ".join(comments),
                  _CODE, st.lists(_DIRECTIVE, max_size=2))


@settings(max_examples=300, deadline=None)
@given(st.lists(_LINE, min_size=1, max_size=6), st.lists(st.sampled_from(["VF101", "VF201", "VF203"]), max_size=4),
       st.data())
def test_fixing_vf010_converges_and_keeps_suppressions(lines, codes, data):
    text = "\n".join(lines) + "\n"
    rows = len(lines)
    findings = [diag(code, data.draw(st.integers(1, rows)), 1) for code in codes]
    kept, unused = apply_suppressions(findings, text)
    assert all(d in findings for d in kept)
    assert all(u.code == "VF010" and 1 <= u.location.row <= rows for u in unused)
    assert len({u.location.row for u in unused}) == len(unused)  # one per comment, one comment per line
    edits = [e for u in unused if u.fix for e in u.fix.edits]
    fixed = apply_edits(text, edits)
    assert fixed.count("\n") == text.count("\n")  # never joins or deletes lines
    kept_after, unused_after = apply_suppressions(findings, fixed)
    assert kept_after == kept  # removing unused suppressions un-suppresses nothing
    # What is left is only what had no fix (free text after the directive).
    assert [u.location.row for u in unused_after] == [u.location.row for u in unused if u.fix is None]
