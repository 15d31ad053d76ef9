"""What a ruff user types works in volfix as in ruff (issue 25): `check --fix`,
`--output-format`, `--select ALL`. (`--statistics` markers: test_reporters_text_json.py;
JUnit's test case per finding: test_junit.py.)"""
from __future__ import annotations

import json

import pytest

from conftest import LEGACY, invoke
from volfix.settings.config import Config
from volfix.rules.registry import all_codes, rules


@pytest.fixture
def legacy(project):
    (project / "legacy.py").write_text(LEGACY)
    return project / "legacy.py"


def test_check_fix_fixes_as_fix_does(legacy, project):
    (project / "twin.py").write_text(LEGACY)
    checked = invoke("check", "--fix", "--no-cache", "legacy.py")
    fixed = invoke("fix", "--no-cache", "twin.py")
    assert (checked.exit_code, fixed.exit_code) == (0, 0)
    assert legacy.read_text() == (project / "twin.py").read_text() != LEGACY
    assert checked.stderr == fixed.stderr == "Fixed 1 finding (0 remaining).\n"


def test_check_fix_with_exit_non_zero_on_fix_and_no_fix(legacy):
    assert invoke("check", "--no-fix", "legacy.py").exit_code == 1
    assert legacy.read_text() == LEGACY
    result = invoke("check", "--fix", "--exit-non-zero-on-fix", "legacy.py")
    assert result.exit_code == 1 and legacy.read_text() != LEGACY


def test_check_fix_on_stdin_writes_the_fixed_source(project):
    result = invoke("check", "--fix", "-", input=LEGACY)
    assert result.exit_code == 0
    assert result.stdout == invoke("fix", "-", input=LEGACY).stdout != LEGACY


@pytest.mark.parametrize("command", [["check"], ["rule", "VF101"]])
def test_output_format_is_the_same_option_as_format(legacy, command):
    wanted = "json"
    new = invoke(*command, "--output-format", wanted)
    old = invoke(*command, "--format", wanted)
    assert new.exit_code == old.exit_code
    assert json.loads(new.stdout) == json.loads(old.stdout)


def test_select_all_means_every_rule_as_in_ruff():
    assert Config(select=("ALL",)).enabled_codes() == all_codes()
    off = {code for code, rule in rules().items() if not rule.DEFAULT_ENABLED}
    assert off == {"VF010", "VF104", "VF407"}
    default = Config().enabled_codes()
    assert default == all_codes() - off
    assert Config(select=("VF",)).enabled_codes() == default  # a prefix: the default-on rules
    assert Config(select=("VF104",)).enabled_codes() == {"VF104"}


def test_select_all_reports_an_unused_suppression(project):
    (project / "a.py").write_text("import torch\nx = 1  # noqa: VF101\n")
    assert invoke("check", "--no-cache", "a.py").exit_code == 0
    result = invoke("check", "--no-cache", "--select", "ALL", "--output-format", "concise", "a.py")
    assert result.exit_code == 1 and " VF010 " in result.stdout
