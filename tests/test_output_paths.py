"""Output files (--output-file, --report, --write-baseline) and --baseline are settled before
any file is touched (issue 24, item 5): a missing folder is created, as ruff does for
--output-file; a path that cannot be written stops the run up front (exit 2), so a fix run
never writes its fixes and then loses its report to "an internal error"."""
from __future__ import annotations

import json
import os
import subprocess
import sys

import pytest
from conftest import LEGACY, invoke


@pytest.fixture
def legacy(project):
    (project / "legacy.py").write_text(LEGACY)
    return project


def test_report_into_a_missing_folder_is_written(legacy):
    result = invoke("fix", "--report", "reports/deep/migration.md", "legacy.py")
    assert result.exit_code == 0, result.stderr
    assert "internal error" not in result.stderr
    assert "legacy.py" in (legacy / "reports" / "deep" / "migration.md").read_text()
    assert (legacy / "legacy.py").read_text() != LEGACY


def test_output_file_into_a_missing_folder_is_written(legacy):
    result = invoke("check", "--format", "json", "-o", "out/findings.json", "legacy.py")
    assert result.exit_code == 1, result.stderr
    findings = json.loads((legacy / "out" / "findings.json").read_text())
    assert [f["code"] for f in findings] == ["VF101"]


def test_baseline_into_a_missing_folder_is_written(legacy):
    result = invoke("check", "--write-baseline", "ci/volfix/baseline.json", "legacy.py")
    assert result.exit_code == 0, result.stderr
    document = json.loads((legacy / "ci" / "volfix" / "baseline.json").read_text())
    assert [f["code"] for f in document["findings"]] == ["VF101"]


@pytest.mark.parametrize("option", ["--report", "--output-file", "--write-baseline"])
def test_an_output_path_that_cannot_be_created_stops_the_run_before_any_fix(legacy, option):
    (legacy / "notes").write_text("a file where a folder would have to be\n")
    args = ["fix", option, "notes/x.out", "legacy.py"]
    result = invoke(*args)
    assert result.exit_code == 2
    assert f"{option} notes/x.out: cannot create the folder" in result.stderr
    assert "internal error" not in result.stderr
    assert (legacy / "legacy.py").read_text() == LEGACY  # nothing was fixed


def test_a_missing_baseline_stops_the_run_before_any_fix(legacy):
    result = invoke("fix", "--baseline", "missing.json", "legacy.py")
    assert result.exit_code == 2
    assert "cannot read baseline `missing.json`" in result.stderr
    assert (legacy / "legacy.py").read_text() == LEGACY


@pytest.mark.skipif(not hasattr(os, "fsencode") or sys.platform != "linux", reason="bytes file names: Linux")
@pytest.mark.parametrize("fmt", ["json", "json-lines", "sarif", "github", "junit"])
def test_a_file_name_that_is_not_utf8_gives_valid_machine_output(project, fmt):
    # `caf\xe9.py` (Latin-1 bytes): sarif crashed ("internal error"), json wrote invalid UTF-8.
    with open(os.path.join(os.fsencode(project), b"caf\xe9.py"), "wb") as handle:
        handle.write(LEGACY.encode())
    proc = subprocess.run([sys.executable, "-m", "volfix", "check", "--no-cache", "--format", fmt, "."],
                          cwd=project, capture_output=True, timeout=120,
                          env={**os.environ, "PYTHONPATH": os.pathsep.join(sys.path)})
    assert proc.returncode == 1, proc.stderr.decode(errors="replace")
    out = proc.stdout.decode("utf-8")  # raises on invalid UTF-8
    assert ("caf%EF%BF%BD.py" if fmt == "sarif" else "caf\ufffd.py") in out  # SARIF: a URI
    if fmt in ("json", "sarif"):
        json.loads(out)
    if fmt == "json-lines":
        assert [json.loads(line)["code"] for line in out.splitlines()] == ["VF101"]


@pytest.mark.skipif(not hasattr(os, "fsencode") or sys.platform != "linux", reason="bytes file names: Linux")
def test_a_file_name_that_is_not_utf8_goes_to_files_and_reports_without_a_crash(project):
    with open(os.path.join(os.fsencode(project), b"caf\xe9.py"), "wb") as handle:
        handle.write(LEGACY.encode())
    proc = subprocess.run([sys.executable, "-m", "volfix", "fix", "--no-cache", "-o", "out.txt", "--report",
                           "report.md", "."], cwd=project, capture_output=True, timeout=120,
                          env={**os.environ, "PYTHONPATH": os.pathsep.join(sys.path)})
    assert proc.returncode == 0, proc.stderr.decode(errors="replace")
    assert "caf\ufffd.py" in (project / "report.md").read_text(encoding="utf-8")
    assert b"caf\xe9.py" in (project / "out.txt").read_bytes() or (project / "out.txt").read_bytes() == b""
