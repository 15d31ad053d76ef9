"""Output files (--output-file, --report, --write-baseline) and --baseline are settled before
any file is touched (issue 24, item 5): a missing folder is created, as ruff does for
--output-file; a path that cannot be written stops the run up front (exit 2), so a fix run
never writes its fixes and then loses its report to "an internal error"."""
from __future__ import annotations

import json

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
