"""Engine contract (SPEC §3): verification, the per-file boundary, edits that mirror fixes."""
import ast
import textwrap

import pytest

from volfix.run import fileproc
from volfix.api import check_source, fix_source
from volfix.settings.config import Config
from volfix.model import Applicability

EVAL_LOOP = textwrap.dedent("""\
    import torch
    from torch.autograd import Variable

    def evaluate(model, loader):
        correct = 0
        for x, y in loader:
            out = model(Variable(x, volatile=True))
            correct += (out.max(1)[1] == y).sum().item()
        return correct
    """)


def apply_check_edits(text, result, unsafe=True):
    """Apply the edits that check mode reports (as an editor would) to the text."""
    lines = text.splitlines(keepends=True)
    starts = [0]
    for line in lines:
        starts.append(starts[-1] + len(line))
    edits = set()
    for d in result.diagnostics:
        if d.fix and (d.fix.applicability is Applicability.SAFE or unsafe):
            for e in d.fix.edits:
                edits.add((starts[e.location.row - 1] + e.location.column - 1,
                           starts[e.end_location.row - 1] + e.end_location.column - 1, e.content))
    out, pos = [], 0
    for start, end, content in sorted(edits, key=lambda e: (e[0], e[0] != e[1])):
        out.append(text[pos:start] + content)
        pos = end
    return "".join(out) + text[pos:]


def test_check_mode_edits_reproduce_the_fix():
    checked = check_source(EVAL_LOOP, path="e.py", with_fixes=True)
    fixed = fix_source(EVAL_LOOP, path="e.py", unsafe_fixes=True)
    # fix mode also removes the import that became unused; everything else must match
    expected = fixed.fixed_source
    got = apply_check_edits(EVAL_LOOP, checked).replace("from torch.autograd import Variable\n", "")
    assert got == expected


def test_fix_reports_remaining_findings_in_the_fixed_text():
    text = EVAL_LOOP + ("h = Variable(hidden.data)\nv = Variable(x, volatile=None)\nprint(h.volatile)\n"
                        "print(step(x).volatile)\n")
    result = fix_source(text, path="e.py")
    assert result.changed and result.fixed_count >= 1
    lines = result.fixed_source.splitlines()
    remaining = [(d.code, lines[d.location.row - 1]) for d in result.diagnostics]
    assert remaining == [("VF103", "v = Variable(x, volatile=None)"), ("VF201", "print(step(x).volatile)")]
    # `h` is made by a Variable without a flag: 0.3 read False there, and so does the fix
    assert "h = hidden.detach()" in lines and "print(False)" in lines


def test_a_fix_that_breaks_the_file_is_dropped_and_reported(monkeypatch):
    from volfix.fixes.expressions import Expressions

    real = Expressions.text_in_place_of

    def broken(self, node, expr):
        return real(self, node, expr) + " +"  # produces a syntax error

    monkeypatch.setattr(Expressions, "text_in_place_of", broken)
    result = fix_source(EVAL_LOOP, path="e.py", unsafe_fixes=True)
    assert result.fixed_source == EVAL_LOOP
    assert not result.changed
    bug = [d for d in result.diagnostics if d.note and "volfix bug" in d.note]
    assert bug and bug[0].code == "VF101" and bug[0].fix is None


def test_a_crash_in_a_rule_becomes_an_error_result(monkeypatch, tmp_path):
    from volfix.fixes.planner import Planner

    def boom(self):
        raise ZeroDivisionError("rule bug")

    monkeypatch.setattr(Planner, "plan", boom)
    path = tmp_path / "e.py"
    path.write_text(EVAL_LOOP)
    result = fileproc.process_file(str(path), config=Config(), mode="fix")
    assert result.error and "volfix bug" in result.error and "e.py" in result.error
    assert path.read_text() == EVAL_LOOP


@pytest.mark.parametrize("imports, call", [
    ("from torch.autograd import Variable", "Variable"),
    ("from torch.autograd import Variable as V", "V"),
    ("import torch.autograd as ag", "ag.Variable"),
    ("from torch import autograd", "autograd.Variable"),
    ("from torch import (nn,\n    autograd)", "autograd.Variable"),
    ("import torch", "torch.autograd.Variable"),
    ("import torch", "torch.autograd.variable.Variable"),
    ("from torch.autograd.variable import Variable", "Variable"),
    ("from torch.autograd import *", "Variable"),
    ("import torch.autograd", "torch.autograd.Variable"),
])
def test_every_import_form_is_found(imports, call):
    text = f"{imports}\nout = model({call}(x, volatile=True))\n"
    codes = [d.code for d in check_source(text, path="f.py").diagnostics]
    assert codes == ["VF101"]


@pytest.mark.parametrize("text", [
    "from chainer import Variable\nv = Variable(x, volatile=True)\n",
    "import tensorflow as tf\nv = tf.Variable(x)\n",
    "import triton.language as tl\nimport torch\nx = tl.load(p, volatile=True)\n",
    "import torch\nclass Variable:\n    pass\nv = Variable(x, volatile=True)\n",
    "import torch\n# Variable(x, volatile=True)\ns = 'Variable(x, volatile=True)'\nvolatile_reads = 3\n",
    "import torch\nfrom torch.autograd import Variable\ndef f(Variable):\n    return Variable(x, volatile=True)\n",
])
def test_look_alikes_are_never_flagged(text):
    assert check_source(text, path="g.py").diagnostics == ()


def test_fixing_twice_changes_nothing_and_output_parses():
    once = fix_source(EVAL_LOOP, path="e.py", unsafe_fixes=True).fixed_source
    ast.parse(once)
    assert fix_source(once, path="e.py", unsafe_fixes=True).fixed_source == once


def test_per_file_ignores_apply_by_glob():
    cfg = Config(per_file_ignores=(("tests/*", ("VF101",)),))
    assert check_source(EVAL_LOOP, path="tests/e.py", config=cfg).diagnostics == ()
    assert check_source(EVAL_LOOP, path="src/e.py", config=cfg).diagnostics  # not ignored elsewhere


def test_deep_nesting_is_a_clear_vf001_not_a_crash():
    text = "import torch\nfrom torch.autograd import Variable\nv = Variable(t)\nx = " + "(" * 300 + "1" + ")" * 300 + "\n"
    result = check_source(text, path="deep.py")
    assert [d.code for d in result.diagnostics] == ["VF001"]


def test_library_never_prints(capsys):
    fix_source(EVAL_LOOP, path="e.py", unsafe_fixes=True)
    check_source("print 'py2'\nfrom torch.autograd import Variable\nv = Variable(t)\n", path="p.py")
    assert capsys.readouterr() == ("", "")


def test_python2_file_is_reported_not_fixed_and_not_called_a_volfix_bug():
    text = "from torch.autograd import Variable\nout = model(Variable(x, volatile=True))\nprint 'done'\n"
    result = fix_source(text, path="py2.py", unsafe_fixes=True)
    assert result.fixed_source == text and not result.changed
    assert [d.code for d in result.diagnostics] == ["VF001"]
    assert "Python 2" in result.diagnostics[0].message and "volfix bug" not in result.diagnostics[0].text


def test_wrapper_defined_in_an_earlier_cell_is_followed():
    import json

    from volfix.notebook import process_notebook

    cells = ["import torch.autograd as autograd\nVariable = lambda *a, **k: autograd.Variable(*a, **k).cuda()\n",
             "out = model(Variable(x, volatile=True))\n"]
    data = json.dumps({"cells": [{"cell_type": "code", "metadata": {}, "outputs": [], "execution_count": None,
                                  "source": c} for c in cells],
                       "metadata": {}, "nbformat": 4, "nbformat_minor": 5}).encode()
    checked, _ = process_notebook(data, path="nb.ipynb", config=Config())
    # The wrapper's own forwarded call is the notebook's API, not a site (issue 22: a VF110
    # there could never be fixed).
    assert [(d.code, d.cell, d.note) for d in checked.diagnostics] == [
        ("VF101", 2, "through the wrapper `Variable` (line 2 of cell 1)")]
    fixed, new = process_notebook(data, path="nb.ipynb", config=Config(), mode="fix")
    second = json.loads(new)["cells"][1]["source"]
    assert "volatile" not in second and "no_grad" in second and "Variable(x)" in second


def test_async_keyword_after_a_form_feed_line_is_renamed():
    # str.splitlines() counts a form feed as a line break, the tokenizer does not
    text = "import torch\n\n\x0c \nx = x.cuda(async=True)\n"
    result = fix_source(text, path="ff.py")
    assert result.fixed_source == "import torch\n\n\x0c \nx = x.cuda(non_blocking=True)\n"


@pytest.mark.parametrize("unit", ["  ", "\t"])
def test_a_new_block_keeps_the_files_indentation_unit(unit):
    text = ("import torch\nfrom torch.autograd import Variable\n\n\ndef evaluate(model, loader):\n"
            f"{unit}total = 0\n{unit}for x in loader:\n{unit}{unit}out = model(Variable(x, volatile=True))\n"
            f"{unit}{unit}total += out.sum().item()\n{unit}return total\n")
    fixed = fix_source(text, path="e.py").fixed_source
    assert fixed == ("import torch\n\n\ndef evaluate(model, loader):\n"
                     f"{unit}total = 0\n{unit}for x in loader:\n{unit}{unit}with torch.no_grad():\n"
                     f"{unit}{unit}{unit}out = model(x)\n{unit}{unit}{unit}total += out.sum().item()\n"
                     f"{unit}return total\n")


def test_grad_mode_is_spelled_through_the_torch_module_on_every_path():
    # `device` is `torch.cuda` on one path: `device.no_grad()` would raise AttributeError there.
    text = ("try:\n    import torch.cuda as device\nexcept ImportError:\n    import torch as device\n"
            "from torch.autograd import Variable\n\nout = model(Variable(x, volatile=True))\n")
    fixed = fix_source(text, path="d.py").fixed_source
    assert "with torch.no_grad():\n    out = model(x)" in fixed
    assert "device.no_grad" not in fixed and "import torch\n" in fixed


def test_a_name_bound_to_torch_itself_is_reused():
    text = "import torch as device\nfrom torch.autograd import Variable\n\nout = model(Variable(x, volatile=True))\n"
    assert "with device.no_grad():" in fix_source(text, path="d.py").fixed_source


def test_a_check_run_never_imports_libcst(tmp_path):
    import subprocess
    import sys

    (tmp_path / "legacy.py").write_text(EVAL_LOOP, encoding="utf-8")
    probe = ("import sys\nfrom volfix.cli.commands import main\n"
             "try:\n    main(['check', '--no-cache', sys.argv[1]])\nexcept SystemExit as exit:\n"
             "    assert exit.code == 1, exit.code\n"
             "assert 'libcst' not in sys.modules, sorted(m for m in sys.modules if m.startswith('libcst'))\n"
             "print('ok')\n")
    proc = subprocess.run([sys.executable, "-c", probe, str(tmp_path / "legacy.py")], capture_output=True,
                          text=True, timeout=300)
    assert proc.stdout.strip().endswith("ok"), proc.stdout + proc.stderr


DOCSTRING_ONLY = '''\
"""Variable trackers for torch.autograd: how a `Variable` is built, volatile or not."""
import torch


def track(value):
    """Wraps `value` (see torch.autograd.Variable)."""
    return torch.as_tensor(value)  # noqa: VF101
'''


def test_a_file_whose_legacy_words_are_all_prose_is_not_analysed(monkeypatch):
    """The prefilter keeps it (the words are in code-looking bytes); the tree shows no
    name any rule starts from, so no index is built and nothing is reported, except an
    unused suppression."""
    from volfix.syntax import index

    def refuse(*_args, **_kwargs):
        raise AssertionError("the file was indexed")

    monkeypatch.setattr(index.ModuleIndex, "__init__", refuse)
    config = Config(extend_select=("VF010",))  # VF010 is opt-in
    [unused] = check_source(DOCSTRING_ONLY, config=config).diagnostics
    assert unused.code == "VF010"


@pytest.mark.parametrize("code", [
    "import torch\nfrom torch.autograd import Variable as V\nx = V(torch.ones(1), volatile=True)\n",
    "import torch\nif getattr(x, 'volatile'):\n    pass\n",
    "import torch\nimport torch.autograd as ag\ny = ag.Variable(x)\n",
    "import torch\nx = t.cuda(async=True)\n",
])
def test_every_way_code_spells_a_legacy_name_is_analysed(code):
    assert check_source(code, config=Config(select=("VF",))).diagnostics


def test_an_if_on_a_tensor_emptied_by_the_fix_is_kept():
    # Found by the property test: `if x:` on a model's output tests a tensor (it raises for
    # more than one element), so the cleanup that deletes an emptied `if flag:` must keep it.
    src = ("from torch.autograd import Variable\n\n\ndef f0(model, x):\n"
           "    x = model(Variable(x, volatile=True))\n    if x:\n        x = Variable(y, volatile=True)\n")
    for unsafe in (False, True):
        fixed = fix_source(src, path="a.py", unsafe_fixes=unsafe).fixed_source
        assert "    if x:\n        pass\n" in fixed, fixed


def test_identical_branches_keep_the_comment_a_deleted_statement_left_in_the_body():
    # Found by the property test (seed 80): `x = Variable(x,  # note` went as `x = x`, its comment
    # stayed after the body's last statement; the branches, identical, became the body without it.
    src = ("from torch.autograd import Variable\n\nif x: \n    y = Variable(x, volatile=True)\n"
           "    x = Variable(x,  # note\n        volatile=True)\nelse: \n    y = Variable(x, volatile=True)")
    fixed = fix_source(src, path="a.py", unsafe_fixes=True).fixed_source
    assert fixed == "y = x\n# note\n", fixed


def test_comments_of_a_deleted_block_stay_one_per_line():
    # Found by the property test (seed 80): the author's `with torch.no_grad():` went with the two
    # statements it held, and their comments were joined into one (`# note  # note`).
    src = ("from torch.autograd import Variable\n\ndef f0(model, x): \n    x = model(Variable(x, volatile=True))\n"
           "    with torch.no_grad(): \n        x = Variable(x,  # note\n            volatile=True)\n"
           "        x = Variable(y,  # why\n            volatile=True)")
    fixed = fix_source(src, path="a.py", unsafe_fixes=True).fixed_source
    assert fixed.endswith("        x = model(x)\n    # note\n    # why"), fixed


def test_a_moved_comment_is_not_joined_to_the_comment_ending_its_new_line():
    # Found by the fuzzer (seed 2828, trailing comments): a comment inside the removed wrapper went
    # to the end of the statement's line, `reward  # fz  #extra`, one comment where there were two.
    src = ("import torch\nfrom torch.autograd import Variable\n\n\ndef f(reward):\n    out = \\\n"
           "        Variable(torch.zeros(\n            3)#extra\n        ) + \\\n        reward  # fz\n"
           "    y = Variable(torch.ones(2)  # why\n                 ) * 2  # own\n    return out, y\n")
    fixed = fix_source(src, path="a.py").fixed_source
    assert "    #extra\n    out = \\\n        torch.zeros(\n            3) + \\\n        reward  # fz\n" in fixed, fixed
    assert "    # why\n    y = torch.ones(2) * 2  # own\n" in fixed, fixed
    compile(fixed, "a.py", "exec")


def test_a_fix_the_cleanup_makes_possible_is_applied_in_the_same_run():
    # Found by the property test: the flag's value escaped through the closure `f0` until the
    # clean-up deleted the alias there; a second `fix` then unwrapped it. One run must converge.
    src = ("from torch.autograd import Variable\n\ny = Variable(x, volatile=not training)\n# note \n"
           "def f0(model, x): \n    x = Variable(y,  # note\n        volatile=True)")
    once = fix_source(src, path="a.py", unsafe_fixes=True).fixed_source
    assert "Variable" not in once, once
    assert fix_source(once, path="a.py", unsafe_fixes=True).fixed_source == once


@pytest.mark.parametrize("rebinding, renamed", [("", True), ("from mylib import sum\n", False),
                                                ("sum = lambda g: g\n", False)])
def test_an_alias_read_by_a_summed_generator_goes_unless_the_module_rebinds_sum(rebinding, renamed):
    # charades-algorithms: `sum((criterion(o, target_var) for o in output))` runs the generator at
    # the call, so `target_var = Variable(target)` may go; a `sum` of the module's own may keep it.
    src = (f"from torch.autograd import Variable\n{rebinding}\n\ndef f(crit, model, loader):\n    total = 0\n"
           "    for input, target in loader:\n        target_var = Variable(target)\n"
           "        total += sum(crit(o, target_var) for o in model(input))\n    return total\n")
    fixed = fix_source(src, path="a.py", unsafe_fixes=True).fixed_source
    assert ("target_var" not in fixed) is renamed, fixed
    assert "sum(crit(o, target" in fixed


def test_a_fix_applied_only_with_an_unsafe_one_is_unsafe_itself():
    """Sachin19/seq2seq-con's `updateActive` returns `Variable(..., volatile=True)`: its unwrap
    is fixed together with the caller's region, which is unsafe. `check` marked the helper's
    finding `[*]` ("1 fixable with `volfix fix`") and `fix` applied nothing."""
    from builders import diag, fix
    from volfix.engine.analyse import FixGroup, _group_applicability
    from volfix.findings import FixPlan

    caller = diag("VF101", 70, fix=fix(Applicability.UNSAFE), note="unsafe fix: the region also covers `active`")
    helper = diag("VF101", 108, fix=fix(Applicability.SAFE), note="no region here: the callers get it")
    alone = diag("VF110", 49, fix=fix(Applicability.SAFE))
    groups = {("group", 1): FixGroup(("group", 1), Applicability.UNSAFE, [caller, helper],
                                     FixPlan(Applicability.UNSAFE, "")),
              ("finding", 49): FixGroup(("finding", 49), Applicability.SAFE, [alone], FixPlan(Applicability.SAFE, ""))}
    out = _group_applicability([alone, caller, helper], groups)
    assert [d.fix.applicability for d in out] == [Applicability.SAFE, Applicability.UNSAFE, Applicability.UNSAFE]
    assert out[2].note == ("unsafe fix: fixed together with the unsafe fix of line 70; "
                           "no region here: the callers get it")
    assert out[0] is alone and out[1] is caller
    assert groups[("group", 1)].diagnostics == [caller, out[2]]
