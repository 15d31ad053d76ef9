"""Notes under findings, and `--legacy-semantics` made discoverable from them.

The hint is keyed on the analysis's wording of the two reasons legacy semantics removes, so
these tests run the real engine: if that wording changes, they fail instead of the hint
silently disappearing.
"""
from __future__ import annotations

import pytest

from conftest import invoke
from volfix import api
from volfix.settings.config import Config
from volfix.model import Applicability
from volfix.reporters import text
from volfix.reporters.base import ReportContext
from volfix.reporters.notes import LEGACY_SEMANTICS_HINT, display_note, is_safe_with_legacy_semantics

VF110_PARAMETER = "from torch.autograd import Variable\n\ndef step(model, h):\n    return model(Variable(h))\n"
VF111_PARAMETER = ("from torch.autograd import Variable\n\ndef leaf(h):\n"
                   "    w = Variable(h, requires_grad=True)\n    return w\n")
# The argument is a module's output: code already half-migrated (0.3 allowed only tensors).
# Nothing computes with the value, so the fix only unwraps it.
VF101_UNWRAP = ("from torch.autograd import Variable\n\ndef shapes(encoder, h, log):\n"
                "    feats = Variable(encoder(h), volatile=True)\n    log.append(feats.size())\n")
VF201_READ = "import torch\n\ndef f(x):\n    if x.volatile:\n        return 1\n"
CTX = ReportContext(root="/repo")


def only(source, **config):
    (d,) = api.check_source(source, path="a.py", config=Config(**config)).diagnostics
    return d


@pytest.mark.parametrize("source, code", [(VF110_PARAMETER, "VF110"), (VF111_PARAMETER, "VF111"),
                                          (VF101_UNWRAP, "VF101")])
def test_fixes_unsafe_only_for_a_possibly_grad_argument_get_the_hint(source, code):
    d = only(source)
    assert d.code == code and d.fix.applicability is Applicability.UNSAFE
    assert is_safe_with_legacy_semantics(d)
    assert display_note(d, CTX) == f"{d.note} {LEGACY_SEMANTICS_HINT}"
    assert display_note(d, ReportContext(root="/repo", legacy_semantics=True)) == d.note
    # ... and the hint tells the truth: with the setting the fix is safe.
    assert only(source, legacy_semantics=True).fix.applicability is Applicability.SAFE


def test_other_unsafe_reasons_get_no_hint():
    d = only(VF201_READ)
    assert d.fix.applicability is Applicability.UNSAFE and d.note.startswith("unsafe fix:")
    assert not is_safe_with_legacy_semantics(d)
    assert display_note(d, CTX) == d.note
    # a legacy reason next to another unsafe reason: the setting alone would not make it safe
    mixed = only(VF110_PARAMETER)
    mixed = type(mixed)(**{**mixed.__dict__, "note": mixed.note + "; unsafe fix: volatility escapes"})
    assert not is_safe_with_legacy_semantics(mixed)


def test_full_format_shows_the_hint_on_the_note_line_and_the_summary_names_the_flag():
    result = api.check_source(VF110_PARAMETER, path="a.py")
    out = text.render_full([result], CTX).splitlines()
    assert out[0] == "a.py:4:18: VF110 `Variable(x)` is a no-op since PyTorch 0.4; use the tensor itself"
    assert out[-3:-1] == [
        "  = note: unsafe fix: if the argument requires grad, gradients will now flow into it "
        "(`--legacy-semantics` makes this safe for genuine 0.3 code)",
        "  = help: Remove the `Variable` wrapper (unsafe fix: needs --unsafe-fixes)",
    ]
    assert text.render_summary([result], CTX) == (
        "Found 1 finding in 1 file.\n"
        "1 fix available with `volfix fix --unsafe-fixes`; it is safe with `--legacy-semantics` "
        "(for genuine 0.3 code).\n")


def test_summary_counts_only_the_fixes_the_setting_makes_safe():
    results = [api.check_source(VF110_PARAMETER, path="a.py"), api.check_source(VF111_PARAMETER, path="b.py"),
               api.check_source(VF201_READ, path="c.py")]
    assert text.render_summary(results, CTX).splitlines()[-1] == (
        "3 fixes available with `volfix fix --unsafe-fixes`; 2 of them are safe with "
        "`--legacy-semantics` (for genuine 0.3 code).")
    two = results[:2]
    assert text.render_summary(two, CTX).splitlines()[-1].endswith(
        "; all of them are safe with `--legacy-semantics` (for genuine 0.3 code).")
    one_of_two = [results[0], results[2]]
    assert text.render_summary(one_of_two, CTX).splitlines()[-1] == (
        "2 fixes available with `volfix fix --unsafe-fixes`; 1 of them is safe with "
        "`--legacy-semantics` (for genuine 0.3 code).")


# ---------------------------------------------------------------------------- the flag


@pytest.fixture
def vf110_project(project):
    (project / "step.py").write_text(VF110_PARAMETER)
    return project


def test_check_legacy_semantics_makes_the_vf110_fix_safe(vf110_project):
    plain = invoke("check", "--no-cache", "--format", "concise")
    assert plain.exit_code == 1
    assert plain.stdout == "step.py:4:18: VF110 `Variable(x)` is a no-op since PyTorch 0.4; use the tensor itself\n"
    assert "safe with `--legacy-semantics`" in plain.stderr
    legacy = invoke("check", "--no-cache", "--format", "concise", "--legacy-semantics")
    assert legacy.exit_code == 1
    assert legacy.stdout == "step.py:4:18: VF110 [*] `Variable(x)` is a no-op since PyTorch 0.4; use the tensor itself\n"
    assert "[*] 1 fixable with `volfix fix`." in legacy.stderr and "legacy-semantics" not in legacy.stderr


def test_fix_legacy_semantics_applies_it_without_unsafe_fixes(vf110_project):
    assert invoke("fix", "--no-cache").exit_code == 1
    assert (vf110_project / "step.py").read_text() == VF110_PARAMETER
    done = invoke("fix", "--no-cache", "--legacy-semantics")
    assert done.exit_code == 0
    # The removed import opened the file: the blank line after it goes too (31798ef).
    assert (vf110_project / "step.py").read_text() == "def step(model, h):\n    return model(h)\n"


def test_no_legacy_semantics_overrides_the_config_file(vf110_project):
    (vf110_project / "pyproject.toml").write_text("[tool.volfix]\nlegacy-semantics = true\n")
    assert "[*]" in invoke("check", "--no-cache", "--format", "concise").stdout
    overridden = invoke("check", "--no-cache", "--format", "concise", "--no-legacy-semantics")
    assert overridden.exit_code == 1 and "[*]" not in overridden.stdout


def test_github_step_summary_names_the_flag_too():
    from volfix.reporters import github

    results = [api.check_source(VF110_PARAMETER, path="a.py"), api.check_source(VF201_READ, path="c.py")]
    assert ("2 fixable with `volfix fix --unsafe-fixes` (1 of them safe with `--legacy-semantics` "
            "for genuine 0.3 code).") in github.step_summary(results, CTX)
    legacy_ctx = ReportContext(root="/repo", legacy_semantics=True)
    assert "--legacy-semantics" not in github.step_summary(results, legacy_ctx)  # already on
