"""SARIF 2.1.0 output, validated against the bundled OASIS schema."""
from __future__ import annotations

import json
from pathlib import Path

import pytest

from builders import SARIF_SCHEMA, diag, edit, fix, result, sarif_validator
from volfix import __version__
from volfix.model import Applicability
from volfix.rules.registry import rules
from volfix.reporters import sarif
from volfix.reporters.base import ReportContext

SHARED_SCHEMA = Path(__file__).parents[2] / "shared" / "schemas" / "sarif-schema-2.1.0.json"
CALL = "Variable(x, volatile=True)"


@pytest.fixture(scope="module")
def validator():
    return sarif_validator()


def test_the_validator_rejects_a_broken_log(validator, root):
    log = render(sample(root), root)
    log["runs"][0]["results"][0]["locations"][0]["physicalLocation"]["region"]["startLine"] = 0
    del log["runs"][0]["tool"]["driver"]["name"]
    log["runs"][0]["results"][1]["level"] = "fatal"
    assert len(list(validator.iter_errors(log))) == 3
    assert list(validator.iter_errors({"version": "2.1.0"}))  # `runs` is required


@pytest.fixture
def root(tmp_path):
    return tmp_path / "repo"


def render(results, root, **kwargs):
    return json.loads(sarif.render(results, ReportContext(root=str(root), **kwargs)))


def sample(root):
    vf101 = diag("VF101", 4, 17, snippet=CALL,
                 fix=fix(edits=[edit("x", 4, 17, 4, 43), edit("with torch.no_grad():\n    ", 4, 5, 4, 5)]))
    vf201 = diag("VF201", 9, 8, 11, 3, snippet="out.volatile", note="volatility escapes through `self.priors`",
                 fix=fix(Applicability.UNSAFE, "Use `not torch.is_grad_enabled()`"))
    vf203 = diag("VF203", 2, 1, snippet='getattr(x, "volatile")')
    cell = diag("VF110", 2, 5, snippet="Variable(t)", cell=3,
                fix=fix(edits=[edit("t", 2, 5, 2, 16)]))
    return [
        result(str(root / "src" / "model eval.py"), vf101, vf201, vf203),
        result(str(root / "nb" / "demo.ipynb"), cell),
        result(str(root / "clean.py")),
        result(str(root / "boom.py"), error="KeyError: 'x' in VF101"),
    ]


def test_bundled_schema_matches_the_shared_one():
    if not SHARED_SCHEMA.exists():
        pytest.skip("shared/ is not beside this checkout")
    assert json.loads(SHARED_SCHEMA.read_text()) == json.loads(SARIF_SCHEMA.read_text())


def test_output_validates_against_the_schema(validator, root):
    log = render(sample(root), root)
    errors = sorted(validator.iter_errors(log), key=str)
    assert errors == []
    assert log["version"] == "2.1.0"


def test_empty_run_validates(validator, root):
    log = render([], root)
    assert list(validator.iter_errors(log)) == []
    assert log["runs"][0]["results"] == []
    assert log["runs"][0]["invocations"][0]["executionSuccessful"] is True


def test_driver_carries_metadata_for_every_rule(root):
    driver = render([], root)["runs"][0]["tool"]["driver"]
    assert driver["name"] == "volfix"
    assert driver["version"] == __version__
    assert driver["informationUri"].startswith("https://")
    assert [r["id"] for r in driver["rules"]] == list(rules())
    for entry in driver["rules"]:
        cls = rules()[entry["id"]]
        assert entry["name"] == cls.name()
        assert entry["shortDescription"]["text"] == cls.summary()
        assert entry["helpUri"] == cls.url()
        assert "## Why is this bad?" in entry["help"]["markdown"]
        assert entry["help"]["text"] == cls.doc()
        assert entry["fullDescription"]["text"] and "\n##" not in entry["fullDescription"]["text"]
        assert entry["defaultConfiguration"]["level"] == ("warning" if cls.CODE == "VF010" else "error")


def test_results_locations_are_relative_one_based(root):
    run = render(sample(root), root)["runs"][0]
    assert run["originalUriBaseIds"]["%SRCROOT%"]["uri"] == root.as_uri() + "/"
    first = run["results"][0]
    assert first["ruleId"] == "VF101"
    assert run["tool"]["driver"]["rules"][first["ruleIndex"]]["id"] == "VF101"
    assert first["level"] == "error"
    assert first["message"]["text"] == diag("VF101").message
    physical = first["locations"][0]["physicalLocation"]
    assert physical["artifactLocation"] == {"uri": "src/model%20eval.py", "uriBaseId": "%SRCROOT%"}
    assert physical["region"] == {"startLine": 4, "startColumn": 17, "endLine": 4, "endColumn": 43,
                                  "snippet": {"text": CALL}}
    multi_line = run["results"][1]["locations"][0]["physicalLocation"]["region"]
    assert (multi_line["startLine"], multi_line["endLine"], multi_line["endColumn"]) == (9, 11, 3)


def test_note_follows_the_message_on_its_own_line_and_is_a_property(root):
    second = render(sample(root), root)["runs"][0]["results"][1]
    assert second["message"]["text"] == (f"{diag('VF201').message}\n"
                                         "note: volatility escapes through `self.priors`")
    assert second["properties"] == {"fixApplicability": "unsafe",
                                    "note": "volatility escapes through `self.priors`"}
    assert "fixes" not in second  # no edits, nothing to replace


def test_fix_becomes_artifact_changes(root):
    first = render(sample(root), root)["runs"][0]["results"][0]
    (change,) = first["fixes"][0]["artifactChanges"]
    assert change["artifactLocation"]["uri"] == "src/model%20eval.py"
    assert change["replacements"][0] == {
        "deletedRegion": {"startLine": 4, "startColumn": 17, "endLine": 4, "endColumn": 43},
        "insertedContent": {"text": "x"},
    }
    assert change["replacements"][1]["deletedRegion"]["startColumn"] == \
        change["replacements"][1]["deletedRegion"]["endColumn"]  # an insertion
    assert first["fixes"][0]["description"]["text"] == "Unwrap and add `torch.no_grad()`"


def test_notebook_cell_is_named(root):
    nb = render(sample(root), root)["runs"][0]["results"][3]
    location = nb["locations"][0]
    assert location["physicalLocation"]["artifactLocation"]["uri"] == "nb/demo.ipynb"
    assert location["physicalLocation"]["region"]["properties"] == {"cell": 3}
    assert location["logicalLocations"][0]["name"] == "cell 3"
    assert nb["message"]["text"].startswith("cell 3: ")
    assert "fixes" not in nb  # cell-relative edits cannot address the .ipynb file


def test_internal_error_becomes_a_notification(root):
    invocation = render(sample(root), root)["runs"][0]["invocations"][0]
    assert invocation["executionSuccessful"] is False
    (note,) = invocation["toolExecutionNotifications"]
    assert note["level"] == "error"
    assert "KeyError" in note["message"]["text"] and "volfix bug" in note["message"]["text"]
    assert note["locations"][0]["physicalLocation"]["artifactLocation"]["uri"] == "boom.py"


def fingerprints(log):
    return [r["partialFingerprints"]["volfix/v1"] for r in log["runs"][0]["results"]]


def test_fingerprints_survive_line_shifts_and_distinguish_duplicates(root):
    path = str(root / "a.py")
    before = render([result(path, diag("VF101", 3, 5, snippet=CALL), diag("VF101", 7, 5, snippet=CALL))], root)
    after = render([result(path, diag("VF101", 13, 9, snippet=CALL), diag("VF101", 20, 5, snippet=CALL))], root)
    assert fingerprints(before) == fingerprints(after)
    assert len(set(fingerprints(before))) == 2
    moved = render([result(str(root / "b.py"), diag("VF101", 3, 5, snippet=CALL))], root)
    assert fingerprints(moved)[0] not in fingerprints(before)


def test_file_outside_root_keeps_an_absolute_uri(validator, root, tmp_path):
    outside = tmp_path / "elsewhere" / "x.py"
    log = render([result(str(outside), diag("VF101", 1, 1, snippet=CALL))], root)
    artifact = log["runs"][0]["results"][0]["locations"][0]["physicalLocation"]["artifactLocation"]
    assert artifact == {"uri": outside.as_uri()}
    assert list(validator.iter_errors(log)) == []


def test_relative_result_paths_use_the_cwd(root, monkeypatch):
    (root / "pkg").mkdir(parents=True)
    monkeypatch.chdir(root / "pkg")
    log = render([result("train.py", diag("VF101", 1, 1, snippet=CALL))], root)
    artifact = log["runs"][0]["results"][0]["locations"][0]["physicalLocation"]["artifactLocation"]
    assert artifact["uri"] == "pkg/train.py"
