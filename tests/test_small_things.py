"""Issue 25's small things: `fix --show-fixes` says "fixed" once (as ruff), `--baseline` says
how many findings it hid. (Files the prefilter never parses: test_notebook_ipython.py; the
language server's command: test_lsp.py.)"""
from __future__ import annotations

from conftest import LEGACY, invoke


def test_fix_show_fixes_says_fixed_once_as_ruff(project):
    (project / "legacy.py").write_text(LEGACY)
    result = invoke("fix", "--show-fixes", "--no-cache", "--output-format", "concise", "legacy.py")
    assert result.exit_code == 0
    assert result.stdout.count("Fixed 1 finding") == 1  # the list: "Fixed 1 finding:"
    assert "Fixed" not in result.stderr
    assert result.stderr == "Found 1 finding (1 fixed, 0 remaining).\n"
    plain = invoke("fix", "--no-cache", "legacy.py")
    assert plain.stderr == "All checks passed! (1 file that cannot hold a finding was not parsed: " \
                           "a syntax error there is not reported)\n"


def test_baseline_says_how_many_findings_it_hid(project):
    (project / "legacy.py").write_text(LEGACY)
    assert invoke("check", "--write-baseline", "base.json", "legacy.py").exit_code == 0
    result = invoke("check", "--baseline", "base.json", "legacy.py")
    assert result.exit_code == 0
    assert result.stderr == "All checks passed!\n1 finding recorded in the baseline `base.json` not shown.\n"
    (project / "legacy.py").write_text(LEGACY + "h = x.cuda(async=True)\n")
    result = invoke("check", "--baseline", "base.json", "--output-format", "concise", "legacy.py")
    assert result.exit_code == 1 and " VF301 " in result.stdout and " VF101 " not in result.stdout
    assert result.stderr.endswith("1 finding recorded in the baseline `base.json` not shown.\n")


def test_fix_is_silent_about_the_users_syntax_warnings(tmp_path):
    """Compiling a fixed text to check it is volfix's business; the user's `x is not "a"` is
    theirs to hear about from Python, not as a `<volfix>:6: SyntaxWarning` on every fix."""
    import subprocess
    import sys

    (tmp_path / "legacy.py").write_text(
        'import torch\nfrom torch.autograd import Variable\n\n\ndef f(model, mode, x):\n'
        '    if mode is not "argmax":\n        print(model(Variable(x, volatile=True)))\n')
    proc = subprocess.run([sys.executable, "-W", "default", "-m", "volfix", "fix", "--diff", "--no-cache",
                           "legacy.py"], cwd=tmp_path, capture_output=True, text=True)
    assert "-        print(model(Variable(x, volatile=True)))" in proc.stdout  # it did fix the file
    assert "SyntaxWarning" not in proc.stderr, proc.stderr
