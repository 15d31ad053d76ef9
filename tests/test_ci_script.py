""".ci/run's verdicts, with the real script under bash and a stand-in interpreter.

The stand-in creates the "virtualenv", accepts the pip install and plays pytest with a given
exit code and JUnit report, so each outcome is checked in well under a second (the real
install and suite are what CI itself runs). What is asserted: a fresh virtualenv is made
and installed into with the README's test command, pytest runs from it with its `bin` first
on PATH and CI set, exit code 5 (no tests) and an all-skipped run fail, failures propagate.
"""
from __future__ import annotations

import os
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

CHECKOUT = Path(__file__).resolve().parents[1]

pytestmark = pytest.mark.skipif(shutil.which("bash") is None or os.name == "nt",
                                reason="the CI script is a bash script")

# `$PYTHON -m venv DIR` creates DIR/bin/python: this same script, which then plays
# pip (logs the call) and pytest (writes a JUnit report and exits as FAKE_PYTEST_EXIT says).
FAKE_PYTHON = r'''#!/usr/bin/env bash
set -eu
log="$FAKE_LOG"
if [ "$1" = "--version" ]; then echo "Python 3.fake"; exit 0; fi
if [ "$1" = "-m" ] && [ "$2" = "venv" ]; then
    mkdir -p "$3/bin"; cp "$0" "$3/bin/python"; chmod +x "$3/bin/python"
    echo "venv $3" >> "$log"; exit 0
fi
if [ "$1" = "-m" ] && [ "$2" = "pip" ]; then
    shift 2; echo "pip $* from $0" >> "$log"; exit 0
fi
if [ "$1" = "-m" ] && [ "$2" = "pytest" ]; then
    for arg in "$@"; do case "$arg" in --junitxml=*) report="${arg#--junitxml=}";; esac; done
    echo "pytest from $0 PATH=${PATH%%:*} CI=$CI" >> "$log"
    printf '%s' "$FAKE_REPORT" > "$report"
    exit "$FAKE_PYTEST_EXIT"
fi
if [ "$1" = "-" ]; then shift; exec "$REAL_PYTHON" - "$@"; fi
echo "unexpected call: $*" >&2; exit 99
'''


def _report(tests: int, skipped: int) -> str:
    return (f'<?xml version="1.0" encoding="utf-8"?><testsuites><testsuite name="pytest" '
            f'errors="0" failures="0" skipped="{skipped}" tests="{tests}"></testsuite></testsuites>')


def _run_ci(tmp_path: Path, pytest_exit: int, report: str, ci: str = "") -> tuple:
    fake = tmp_path / "fake-python"
    fake.write_text(FAKE_PYTHON)
    fake.chmod(0o755)
    log = tmp_path / "log.txt"
    env = {k: v for k, v in os.environ.items() if k not in ("CI", "PYTHONPATH", "VIRTUAL_ENV")}
    env.update(PYTHON=str(fake), FAKE_LOG=str(log), FAKE_PYTEST_EXIT=str(pytest_exit),
               FAKE_REPORT=report, REAL_PYTHON=sys.executable, TMPDIR=str(tmp_path))
    if ci:
        env["CI"] = ci
    done = subprocess.run(["bash", str(CHECKOUT / ".ci" / "run")], env=env, capture_output=True,
                          text=True, timeout=60, stdin=subprocess.DEVNULL)
    return done, log.read_text().splitlines() if log.exists() else []


def test_passing_run_installs_the_readme_command_into_a_fresh_venv(tmp_path):
    done, log = _run_ci(tmp_path, 0, _report(tests=10, skipped=2))
    assert done.returncode == 0, done.stdout + done.stderr
    assert "ci: 8 tests executed, 2 skipped" in done.stdout
    venv = log[0].split(" ", 1)[1]
    assert Path(venv).parent == tmp_path and not Path(venv).exists()  # made fresh, then removed
    assert log[1] == f'pip install -q -e .[test] torch==2.13.0 from {venv}/bin/python'
    assert log[2] == f"pytest from {venv}/bin/python PATH={venv}/bin CI=true"


def test_ci_variable_given_by_the_ci_system_is_kept(tmp_path):
    done, log = _run_ci(tmp_path, 0, _report(tests=3, skipped=0), ci="github")
    assert done.returncode == 0
    assert log[2].endswith("CI=github")


def test_no_tests_collected_fails(tmp_path):
    done, _ = _run_ci(tmp_path, 5, _report(tests=0, skipped=0))
    assert done.returncode == 1
    assert "collected no tests" in done.stderr


def test_every_test_skipped_fails(tmp_path):
    done, _ = _run_ci(tmp_path, 0, _report(tests=4, skipped=4))
    assert done.returncode == 1
    assert "ci: 0 tests executed, 4 skipped" in done.stdout


@pytest.mark.parametrize("code", [1, 2, 3, 4])
def test_pytest_failures_fail_the_run(tmp_path, code):
    done, _ = _run_ci(tmp_path, code, _report(tests=4, skipped=0))
    assert done.returncode == code
