"""The command line: every exit path, every format this module owns, stdin, `rule`, `--version`.

Each test reads `exit_code` (CliRunner swallows failures otherwise) and what was printed where.
"""
from __future__ import annotations

import io
import json
import os
import subprocess
import sys
import time
import xml.etree.ElementTree as ET

import pytest

from conftest import CLEAN, LEGACY, invoke
from volfix import __version__
from volfix.cli import progress as progress_bar
from volfix.cli.commands import exit_code
from volfix.cli.options import Options
from volfix.model import Diagnostic, FileResult, Location
from volfix.rules.registry import rules
from volfix.rules.base import DOC_SECTIONS

VF101_MESSAGE = rules()["VF101"].MESSAGE
UNFIXABLE = "import torch\nflag = getattr(x, 'volatile')\n"  # VF203: report only
UNSAFE_ONLY = "import torch\nif x.volatile:\n    y = 1\n"  # VF201: an unsafe fix at best


@pytest.fixture
def legacy(project):
    (project / "legacy.py").write_text(LEGACY)
    return project


@pytest.fixture
def clean(project):
    (project / "clean.py").write_text(CLEAN)
    return project


def stderr_lines(result):
    return result.stderr.splitlines()


# ---------------------------------------------------------------------------- --version, rule


def test_version():
    result = invoke("--version")
    assert result.exit_code == 0
    assert result.stdout == f"volfix {__version__}\n"


def test_python_dash_m_volfix_runs_the_cli(tmp_path):
    (tmp_path / "legacy.py").write_text(LEGACY)
    env = {k: v for k, v in os.environ.items() if k not in ("NO_COLOR", "FORCE_COLOR")}
    version = subprocess.run([sys.executable, "-m", "volfix", "--version"], cwd=tmp_path,
                             capture_output=True, text=True, env=env)
    assert (version.returncode, version.stdout) == (0, f"volfix {__version__}\n")
    check = subprocess.run([sys.executable, "-m", "volfix", "check", "--format", "concise",
                            "legacy.py"], cwd=tmp_path, capture_output=True, text=True, env=env)
    assert check.returncode == 1, check.stderr
    assert check.stdout.startswith("legacy.py:2:13: VF101 [*] ")
    usage = subprocess.run([sys.executable, "-m", "volfix", "check", "--no-such-option"],
                           cwd=tmp_path, capture_output=True, text=True, env=env)
    assert usage.returncode == 2
    assert usage.stderr.startswith("Usage: volfix check ")


def test_the_command_ends_without_teardown_but_with_all_its_output(tmp_path):
    """`entry` ends the process with `os._exit` (no teardown of the interpreter): the output
    must still be complete, through a pipe, and exit handlers must still run."""
    (tmp_path / "legacy.py").write_text(LEGACY * 400)
    check = subprocess.run([sys.executable, "-m", "volfix", "check", "--no-cache", "--format", "concise",
                            "legacy.py"], cwd=tmp_path, capture_output=True, text=True)
    assert check.returncode == 1, check.stderr
    assert len(check.stdout.splitlines()) == 400 and check.stdout.endswith("legacy.py:800:13: VF101 [*] `volatile=True` is ignored since PyTorch 0.4; use `torch.no_grad()`\n")
    assert check.stderr.startswith("Found 400 findings")
    code = ("import atexit, sys\nfrom volfix.cli.commands import entry\n"
            "atexit.register(lambda: print('handler ran'))\nsys.argv = ['volfix', '--version']\nentry()")
    done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True)
    assert (done.returncode, done.stdout) == (0, f"volfix {__version__}\nhandler ran\n")
    # A reader that stops early (`volfix check | head -1`) costs no traceback.
    reader = subprocess.Popen([sys.executable, "-m", "volfix", "check", "--no-cache", "legacy.py"], cwd=tmp_path,
                              stdout=subprocess.PIPE, stderr=subprocess.PIPE)
    reader.stdout.readline()
    reader.stdout.close()
    with reader.stderr:
        errors = reader.stderr.read().decode()
    assert reader.wait(timeout=60) in (1, 120)
    assert "Traceback" not in errors


def test_version_imports_neither_libcst_nor_rich():
    code = ("import sys\nfrom volfix.cli.commands import main\n"
            "try:\n    main(['--version'])\nexcept SystemExit as e:\n    code = e.code\n"
            "print(code, sorted(m for m in ('libcst', 'rich') if m in sys.modules))")
    done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    assert done.stdout.splitlines()[-1] == "0 []"


def test_rule_lists_every_rule_with_name_fix_and_summary():
    result = invoke("rule")
    assert result.exit_code == 0
    lines = result.stdout.splitlines()
    assert lines[0].split() == ["CODE", "NAME", "FIX", "SUMMARY"]
    assert len(lines) == 1 + len(rules())
    for line, (code, rule) in zip(lines[1:], rules().items()):
        fix = rule.FIX.value if rule.FIX is not None else "none"
        assert line.split()[:3] == [code, rule.name(), fix]
        assert line.endswith(rule.summary())


def test_rule_code_prints_its_documentation():
    result = invoke("rule", "vf101")
    assert result.exit_code == 0
    assert result.stdout.startswith(
        "# volatile-in-variable-call (VF101)\n\nFix is sometimes available (safe at best).\n\n")
    headings = [line[3:] for line in result.stdout.splitlines() if line.startswith("## ")]
    assert headings[:len(DOC_SECTIONS)] == list(DOC_SECTIONS)
    assert rules()["VF101"].doc() in result.stdout


def test_rule_without_fix_says_so():
    result = invoke("rule", "VF203")
    assert result.exit_code == 0
    assert "\nFix is not available.\n" in result.stdout


def test_rule_json_lists_every_rule():
    result = invoke("rule", "--format", "json")
    assert result.exit_code == 0
    data = json.loads(result.stdout)
    assert [item["code"] for item in data] == list(rules())
    assert data[0]["explanation"] == rules()[data[0]["code"]].doc()


def test_unknown_rule_code_exits_2():
    result = invoke("rule", "VF999")
    assert result.exit_code == 2
    assert result.stderr == "Error: unknown rule code `VF999`; `volfix rule` lists them\n"


# ---------------------------------------------------------------------------- exit 2: usage/config


@pytest.mark.parametrize("args", [
    ["check", "--format", "xml"],
    ["check", "--no-such-option"],
    ["fix", "--jobs", "0"],
    ["check", "-", "legacy.py"],
    ["check", "--quiet", "--verbose"],
    ["check", "--write-baseline", "b.json", "-"],
    ["check", "--exit-non-zero-on-fix"],  # a fix-only option
])
def test_usage_errors_exit_2(project, args):
    result = invoke(*args)
    assert result.exit_code == 2
    assert "Error:" in result.stderr
    assert result.stdout == ""


def test_unknown_selector_is_one_error_line(legacy):
    result = invoke("check", "--select", "VF101,VF999")
    assert result.exit_code == 2
    assert stderr_lines(result) == [line for line in stderr_lines(result) if line]
    assert len(stderr_lines(result)) == 1
    assert stderr_lines(result)[0].startswith("Error: ")
    assert "VF999" in result.stderr


def test_malformed_config_exits_2_naming_key_and_file(legacy):
    (legacy / "pyproject.toml").write_text("[tool.volfix]\nselekt = ['VF1']\n")
    result = invoke("check")
    assert result.exit_code == 2
    assert len(stderr_lines(result)) == 1
    assert stderr_lines(result)[0].startswith("Error: ")
    assert "selekt" in result.stderr and "pyproject.toml" in result.stderr


def test_missing_config_file_exits_2(legacy):
    result = invoke("check", "--config", "nope.toml")
    assert result.exit_code == 2
    assert "nope.toml" in result.stderr


def test_internal_error_exits_2_without_traceback_unless_debug(legacy, monkeypatch):
    def crash(*args, **kwargs):
        raise RuntimeError("runner exploded")

    monkeypatch.setattr("volfix.api.check_paths", crash)
    result = invoke("check")
    assert result.exit_code == 2
    assert stderr_lines(result) == [
        "error: internal error: RuntimeError: runner exploded (this is a volfix bug; please "
        "report it; --debug shows the traceback)"]
    debug = invoke("check", "--debug")
    assert debug.exit_code == 2
    assert "Traceback (most recent call last)" in debug.stderr
    assert "runner exploded" in debug.stderr


def test_file_error_is_reported_after_everything_else_and_exits_2(legacy, monkeypatch):
    # Simulates what the engine returns when a rule crashes on one file.
    finding = Diagnostic("VF101", VF101_MESSAGE, Location(2, 13), Location(2, 39))
    results = [FileResult("legacy.py", (finding,), source=LEGACY),
               FileResult("broken.py", error="VF101 crashed: IndexError: list index out of range")]
    monkeypatch.setattr("volfix.api.check_paths", lambda *a, **k: results)
    for extra in ([], ["--exit-zero"]):
        result = invoke("check", "--format", "concise", *extra)
        assert result.exit_code == 2
        assert result.stdout == f"legacy.py:2:13: VF101 {VF101_MESSAGE}\n"
        assert ("error: broken.py: VF101 crashed: IndexError: list index out of range "
                "(this is a volfix bug; please report it)") in stderr_lines(result)
        assert "Found 1 finding in 1 file." in stderr_lines(result)


# ---------------------------------------------------------------------------- exit_code()


def _opts(command="check", **kwargs):
    fields = dict(paths=(), select=(), ignore=(), extend_select=(), config=None,
                  output_format="full", output_file=None, statistics=False, exit_zero=False,
                  jobs=None, no_cache=False, quiet=False, verbose=False, color="never",
                  diff=False, show_fixes=False, report=None, baseline=None, write_baseline=None,
                  stdin_filename=None, force_exclude=False, debug=False, unsafe_fixes=None)
    fields.update(kwargs)
    return Options(command=command, **fields)


FINDING = Diagnostic("VF203", "m", Location(1, 1), Location(1, 2))


@pytest.mark.parametrize("results, opts, expected", [
    ([FileResult("a.py")], _opts(), 0),
    ([FileResult("a.py", (FINDING,))], _opts(), 1),
    ([FileResult("a.py", (FINDING,))], _opts(exit_zero=True), 0),
    ([FileResult("a.py", error="boom")], _opts(exit_zero=True), 2),
    ([FileResult("a.py", changed=True, fixed_count=1)], _opts("fix"), 0),
    ([FileResult("a.py", changed=True, fixed_count=1)], _opts("fix", exit_non_zero_on_fix=True), 1),
    ([FileResult("a.py", (FINDING,), changed=True)], _opts("fix", exit_zero=True), 0),
    ([FileResult("a.py", source="a", fixed_source="b", changed=True)], _opts(diff=True), 1),
    ([FileResult("a.py", (FINDING,), source="a", fixed_source="a")], _opts(diff=True), 0),
])
def test_exit_code_rules(results, opts, expected):
    assert exit_code(results, opts) == expected


# ---------------------------------------------------------------------------- check


def test_check_legacy_file_exits_1_with_frame_and_summary(legacy):
    result = invoke("check")
    assert result.exit_code == 1
    lines = result.stdout.splitlines()
    assert lines[0].startswith(f"legacy.py:2:13: VF101 [*] {VF101_MESSAGE}")
    assert "2 | out = model(Variable(x, volatile=True))" in lines
    assert "  |             ^^^^^^^^^^^^^^^^^^^^^^^^^^ VF101" in lines
    assert stderr_lines(result) == ["Found 1 finding in 1 file.", "[*] 1 fixable with `volfix fix`."]


def test_check_clean_file_exits_0(clean):
    result = invoke("check", "clean.py")
    assert result.exit_code == 0
    assert result.stdout == ""
    # The clean file never mentions legacy autograd: the prefilter skipped it, and says so.
    assert result.stderr == "All checks passed! (1 file that cannot hold a finding was not parsed: a syntax error there is not reported)\n"


def test_unparsable_file_is_a_finding_and_the_run_continues(legacy):
    # (Only files that could hold a torch finding are parsed at all: see volfix.files.prefilter.)
    (legacy / "broken.py").write_text(
        "from torch.autograd import Variable\ndef f(:\n    return Variable(x, volatile=True)\n")
    result = invoke("check", "--format", "concise")
    assert result.exit_code == 1
    codes = [line.split()[1] for line in result.stdout.splitlines()]
    assert codes == ["VF001", "VF101"]
    assert result.stdout.startswith("broken.py:")


def test_exit_zero_keeps_the_report(legacy):
    result = invoke("check", "--exit-zero")
    assert result.exit_code == 0
    assert result.stdout.startswith("legacy.py:2:13: VF101")


def test_quiet_prints_only_findings(legacy):
    result = invoke("check", "--quiet", "--format", "concise")
    assert result.exit_code == 1
    assert result.stderr == ""
    assert result.stdout.startswith("legacy.py:2:13: VF101 [*] ")


def test_verbose_names_the_settings_and_counts_files(legacy):
    result = invoke("check", "--verbose", "--format", "concise")
    assert result.exit_code == 1
    assert "settings from defaults" in result.stderr
    assert "Analysed 1 candidate file in" in result.stderr


def test_select_ignore_and_config_file(legacy):
    assert invoke("check", "--select", "VF2").exit_code == 0
    assert invoke("check", "--ignore", "VF101").exit_code == 0
    (legacy / "pyproject.toml").write_text("[tool.volfix]\nselect = ['VF2']\n")
    assert invoke("check").exit_code == 0
    assert invoke("check", "--extend-select", "VF101").exit_code == 1
    assert invoke("check", "--select", "VF1").exit_code == 1
    (legacy / "other.toml").write_text("ignore = ['VF101']\n")
    assert invoke("check", "--config", "other.toml").exit_code == 0


def test_jobs_and_no_cache_give_the_same_findings(legacy):
    plain = invoke("check", "--format", "concise")
    tuned = invoke("check", "--format", "concise", "-j", "1", "--no-cache")
    assert tuned.exit_code == plain.exit_code == 1
    assert tuned.stdout == plain.stdout


# ---------------------------------------------------------------------------- formats


def test_concise_format(legacy):
    result = invoke("check", "--format", "concise")
    assert result.exit_code == 1
    assert len(result.stdout.splitlines()) == 1
    assert result.stdout.startswith(f"legacy.py:2:13: VF101 [*] {VF101_MESSAGE}")


def test_json_format(legacy):
    result = invoke("check", "--format", "json")
    assert result.exit_code == 1
    [item] = json.loads(result.stdout)
    assert item["code"] == "VF101"
    assert item["filename"] == str(legacy / "legacy.py")
    assert item["location"] == {"row": 2, "column": 13}
    assert item["end_location"] == {"row": 2, "column": 39}
    assert item["fix"]["applicability"] == "safe"
    assert item["cell"] is None
    assert item["url"] == rules()["VF101"].url()


def test_json_lines_format(legacy):
    (legacy / "second.py").write_text(LEGACY)
    result = invoke("check", "--format", "json-lines")
    assert result.exit_code == 1
    items = [json.loads(line) for line in result.stdout.splitlines()]
    assert [os.path.basename(i["filename"]) for i in items] == ["legacy.py", "second.py"]


def test_output_file_takes_the_findings(legacy):
    result = invoke("check", "--format", "json", "--output-file", "out.json")
    assert result.exit_code == 1
    assert result.stdout == ""
    assert json.loads((legacy / "out.json").read_text())[0]["code"] == "VF101"


def test_statistics(legacy):
    (legacy / "second.py").write_text(LEGACY)
    result = invoke("check", "--statistics")
    assert result.exit_code == 1
    assert result.stdout == "2  VF101  [*] volatile-in-variable-call\n"
    as_json = invoke("check", "--statistics", "--format", "json")
    assert json.loads(as_json.stdout) == [
        {"code": "VF101", "name": "volatile-in-variable-call", "count": 2, "fixable": True, "fixable_count": 2}]


def test_show_fixes_in_check_mode(legacy):
    result = invoke("check", "--show-fixes", "--format", "concise")
    assert result.exit_code == 1
    assert result.stdout.endswith("1 finding fixable with `volfix fix`:\n- legacy.py:\n"
                                  "    1 × VF101 (volatile-in-variable-call)\n")


def test_color_flag_and_no_color(legacy):
    assert "\x1b[" in invoke("check", "--color", "always").stdout
    assert "\x1b[" in invoke("check", "--color", "always", env={"NO_COLOR": "1"}).stdout
    assert "\x1b[" not in invoke("check", "--color", "never").stdout
    assert "\x1b[" not in invoke("check", env={"NO_COLOR": "1"}).stdout


def test_sarif_junit_and_github_formats_are_wired(legacy, tmp_path):
    sarif = invoke("check", "--format", "sarif")
    assert sarif.exit_code == 1
    assert json.loads(sarif.stdout)["version"] == "2.1.0"
    junit = invoke("check", "--format", "junit")
    assert junit.exit_code == 1
    assert "VF101" in ET.tostring(ET.fromstring(junit.stdout), encoding="unicode")
    summary = tmp_path / "step-summary.md"
    summary.write_text("previous step\n")
    github = invoke("check", "--format", "github", env={"GITHUB_STEP_SUMMARY": str(summary)})
    assert github.exit_code == 1
    assert github.stdout.startswith("::error file=legacy.py,line=2,")
    written = summary.read_text()
    assert written.startswith("previous step\n") and len(written) > len("previous step\n")


# ---------------------------------------------------------------------------- fix, --diff


def test_fix_rewrites_and_exits_0_when_nothing_remains(legacy):
    result = invoke("fix")
    assert result.exit_code == 0
    assert result.stderr == "Fixed 1 finding (0 remaining).\n"
    fixed = (legacy / "legacy.py").read_text()
    assert "volatile" not in fixed and "torch.no_grad()" in fixed
    again = invoke("check")
    assert again.exit_code == 0


def test_fix_exits_1_when_unfixable_findings_remain(project):
    (project / "dyn.py").write_text(UNFIXABLE)
    result = invoke("fix", "--format", "concise")
    assert result.exit_code == 1
    assert result.stdout.startswith("dyn.py:2:8: VF203")
    assert result.stderr == "Fixed 0 findings (1 remaining).\n"
    assert (project / "dyn.py").read_text() == UNFIXABLE


def test_exit_non_zero_on_fix(legacy):
    first = invoke("fix", "--exit-non-zero-on-fix")
    assert first.exit_code == 1
    second = invoke("fix", "--exit-non-zero-on-fix")
    assert second.exit_code == 0
    assert second.stderr == "All checks passed! (1 file that cannot hold a finding was not parsed: a syntax error there is not reported)\n"  # the fixed file


def test_fix_show_fixes_lists_what_was_applied(legacy):
    result = invoke("fix", "--show-fixes")
    assert result.exit_code == 0
    assert result.stdout == "Fixed 1 finding:\n- legacy.py:\n    1 × VF101 (volatile-in-variable-call)\n"


@pytest.mark.parametrize("command", ["check", "fix"])
def test_diff_prints_the_fix_writes_nothing_and_exits_1(legacy, command):
    result = invoke(command, "--diff")
    assert result.exit_code == 1
    assert result.stdout.startswith("--- legacy.py\n+++ legacy.py\n@@ ")
    assert "-out = model(Variable(x, volatile=True))\n" in result.stdout
    assert (legacy / "legacy.py").read_text() == LEGACY
    assert result.stderr == "Would fix 1 finding in 1 file.\n"


def test_diff_on_clean_code_exits_0(clean):
    result = invoke("check", "--diff")
    assert result.exit_code == 0
    assert result.stdout == ""


def test_unsafe_fixes_are_counted_and_applied_only_when_asked(project):
    (project / "attr.py").write_text(UNSAFE_ONLY)
    plain = invoke("check", "--format", "concise")
    assert plain.exit_code == 1
    assert "[*]" not in plain.stdout
    assert "1 fix available with `volfix fix --unsafe-fixes`." in stderr_lines(plain)
    marked = invoke("check", "--format", "concise", "--unsafe-fixes")
    assert "VF201 [*]" in marked.stdout
    assert invoke("fix").exit_code == 1
    assert (project / "attr.py").read_text() == UNSAFE_ONLY
    invoke("fix", "--unsafe-fixes")
    assert "x.volatile" not in (project / "attr.py").read_text()


# ---------------------------------------------------------------------------- stdin


def test_check_stdin(project):
    result = invoke("check", "-", input=LEGACY)
    assert result.exit_code == 1
    assert result.stdout.startswith("<stdin>:2:13: VF101 [*] ")
    named = invoke("check", "-", "--stdin-filename", "src/model.py", input=LEGACY)
    assert named.exit_code == 1
    assert named.stdout.startswith("src/model.py:2:13: VF101 [*] ")
    assert invoke("check", "-", input=CLEAN).exit_code == 0


def test_fix_stdin_round_trip(legacy):
    result = invoke("fix", "-", input=LEGACY)
    assert result.exit_code == 0
    assert result.stderr == "Fixed 1 finding (0 remaining).\n"
    invoke("fix", "legacy.py")
    assert result.stdout == (legacy / "legacy.py").read_text()
    assert invoke("check", "-", input=result.stdout).exit_code == 0


def test_fix_stdin_passes_clean_code_through_byte_for_byte(project):
    source = "import torch\r\n\r\nx = torch.ones(3)  # no newline at end"
    result = invoke("fix", "-", input=source.encode())
    assert result.exit_code == 0
    assert result.stdout_bytes == source.encode()


def test_fix_stdin_keeps_crlf(project):
    result = invoke("fix", "-", input=LEGACY.replace("\n", "\r\n").encode())
    assert result.exit_code == 0
    assert "volatile" not in result.stdout
    assert result.stdout_bytes.count(b"\r\n") == result.stdout_bytes.count(b"\n")


def test_fix_stdin_reports_what_remains_on_stderr(project):
    result = invoke("fix", "-", "--format", "concise", input=UNFIXABLE)
    assert result.exit_code == 1
    assert result.stdout == UNFIXABLE
    assert result.stderr.startswith("<stdin>:2:8: VF203 ")


def test_diff_stdin(project):
    result = invoke("fix", "-", "--diff", input=LEGACY)
    assert result.exit_code == 1
    assert result.stdout.startswith("--- <stdin>\n+++ <stdin>\n")


# ---------------------------------------------------------------------------- baseline, report


def test_baseline_fails_only_on_new_findings(legacy):
    written = invoke("check", "--write-baseline", "baseline.json")
    assert written.exit_code == 0
    assert written.stderr == "Wrote 1 finding to the baseline baseline.json.\n"
    assert invoke("check", "--baseline", "baseline.json").exit_code == 0
    (legacy / "new.py").write_text(LEGACY)
    result = invoke("check", "--baseline", "baseline.json", "--format", "concise")
    assert result.exit_code == 1
    assert [line.split(":")[0] for line in result.stdout.splitlines()] == ["new.py"]


def test_bad_baseline_exits_2(legacy):
    (legacy / "baseline.json").write_text("not json")
    result = invoke("check", "--baseline", "baseline.json")
    assert result.exit_code == 2
    assert result.stderr.startswith("Error: ")


def test_report_writes_markdown(legacy):
    result = invoke("check", "--report", "migration.md")
    assert result.exit_code == 1
    report = (legacy / "migration.md").read_text()
    assert "legacy.py" in report and "VF101" in report


def test_stdin_filename_alone_reads_stdin(project):
    result = invoke("check", "--stdin-filename", "pkg/eval.py", "--format", "concise", input=LEGACY)
    assert result.exit_code == 1
    assert result.stdout.startswith("pkg/eval.py:2:13: VF101 [*] ")


def test_force_exclude_applies_to_the_stdin_filename(project):
    (project / "pyproject.toml").write_text("[tool.volfix]\nexclude = ['generated']\n")
    args = ("-", "--stdin-filename", "generated/model.py")
    assert invoke("check", *args, input=LEGACY).exit_code == 1
    skipped = invoke("check", *args, "--force-exclude", input=LEGACY)
    assert skipped.exit_code == 0
    assert skipped.stdout == ""
    passed_through = invoke("fix", *args, "--force-exclude", input=LEGACY)
    assert passed_through.exit_code == 0
    assert passed_through.stdout == LEGACY


# ---------------------------------------------------------------------------- progress


class _FakeTerminal(io.StringIO):
    def isatty(self):
        return True


def test_progress_bar_appears_on_a_terminal_for_slow_runs(monkeypatch):
    terminal = _FakeTerminal()
    monkeypatch.setattr(sys, "stderr", terminal)
    monkeypatch.setattr(progress_bar, "PROGRESS_DELAY", 0.05)

    def slow(progress):
        progress(0, 4)
        time.sleep(0.3)
        progress(3, 4)
        time.sleep(0.3)
        return ["done"]

    assert progress_bar.run_with_progress(slow, label="volfix check") == ["done"]
    shown = terminal.getvalue()
    assert "volfix check" in shown
    assert "3/4" in shown


def test_no_progress_bar_for_fast_runs_or_without_a_terminal(monkeypatch):
    terminal = _FakeTerminal()
    monkeypatch.setattr(sys, "stderr", terminal)
    assert progress_bar.run_with_progress(lambda progress: ["fast"], label="volfix check") == ["fast"]
    time.sleep(progress_bar.PROGRESS_DELAY + 0.2)  # the cancelled timer must not fire later
    assert terminal.getvalue() == ""

    pipe = io.StringIO()
    monkeypatch.setattr(sys, "stderr", pipe)
    monkeypatch.setattr(progress_bar, "PROGRESS_DELAY", 0.0)

    def slow(progress):
        progress(1, 2)
        time.sleep(0.2)
        return ["slow"]

    assert progress_bar.run_with_progress(slow, label="volfix check") == ["slow"]
    assert pipe.getvalue() == ""
