"""Baselines keyed by (path, code, snippet) with counts, not by line numbers."""
from __future__ import annotations

import json

import pytest

from builders import at, diag, result
from volfix.settings.baseline import load_baseline, write_baseline
from volfix.settings.config import VolfixConfigError

LEGACY = (
    "from torch.autograd import Variable\n"
    "def evaluate(model, batch):\n"
    "    out = model(Variable(batch, volatile=True))\n"
    "    return out.volatile\n"
)
CALL = "Variable(batch, volatile=True)"


def findings(text, path):
    return result(path, at(text, CALL), at(text, "out.volatile", code="VF201"), source=text)


@pytest.fixture
def repo(tmp_path, monkeypatch):
    (tmp_path / "pkg").mkdir()
    monkeypatch.chdir(tmp_path)
    return tmp_path


def test_round_trip_filters_everything_recorded(repo):
    results = [findings(LEGACY, "pkg/eval.py")]
    write_baseline("baseline.json", results, str(repo))
    filtered = load_baseline("baseline.json").filter(results)
    assert [r.diagnostics for r in filtered] == [()]
    assert filtered[0].path == "pkg/eval.py" and filtered[0].source == LEGACY


def test_file_format_is_versioned_sorted_and_line_free(repo):
    write_baseline("baseline.json", [findings(LEGACY, "pkg/eval.py")], str(repo))
    document = json.loads((repo / "baseline.json").read_text(encoding="utf-8"))
    assert document["version"] == 1
    assert document["root"] == "."
    assert document["findings"] == [
        {"path": "pkg/eval.py", "code": "VF101", "snippet": CALL, "count": 1},
        {"path": "pkg/eval.py", "code": "VF201", "snippet": "out.volatile", "count": 1},
    ]


def test_baseline_survives_lines_inserted_above(repo):
    write_baseline("baseline.json", [findings(LEGACY, "pkg/eval.py")], str(repo))
    shifted = "import os\nimport sys\n\n" + LEGACY
    moved = findings(shifted, "pkg/eval.py")
    assert moved.diagnostics[0].location.row == 6  # really moved
    assert load_baseline("baseline.json").filter([moved])[0].diagnostics == ()


def test_reindented_snippet_still_matches(repo):
    write_baseline("b.json", [result("pkg/a.py", diag("VF101", 3, 5, snippet="Variable(x,  volatile=True)"))],
                   str(repo))
    later = result("pkg/a.py", diag("VF101", 9, 9, snippet="Variable(x, volatile=True)"))
    assert load_baseline("b.json").filter([later])[0].diagnostics == ()


def test_new_finding_is_reported(repo):
    write_baseline("baseline.json", [findings(LEGACY, "pkg/eval.py")], str(repo))
    grown = LEGACY + "    probe = Variable(batch.cuda(), volatile=True)\n"
    new = at(grown, "Variable(batch.cuda(), volatile=True)")
    current = result("pkg/eval.py", *findings(grown, "pkg/eval.py").diagnostics, new)
    assert load_baseline("baseline.json").filter([current])[0].diagnostics == (new,)


def test_same_snippet_in_another_file_or_code_is_new(repo):
    write_baseline("baseline.json", [findings(LEGACY, "pkg/eval.py")], str(repo))
    other_file = findings(LEGACY, "pkg/other.py")
    other_code = result("pkg/eval.py", diag("VF110", 3, 17, snippet=CALL))
    filtered = load_baseline("baseline.json").filter([other_file, other_code])
    assert filtered[0].diagnostics == other_file.diagnostics
    assert filtered[1].diagnostics == other_code.diagnostics


def test_duplicate_identical_snippets_are_counted(repo):
    twice = LEGACY + "    again = model(Variable(batch, volatile=True))\n"
    first = at(twice, CALL)
    second = diag("VF101", 5, 19, snippet=CALL)
    write_baseline("baseline.json", [result("pkg/eval.py", first, second)], str(repo))
    document = json.loads((repo / "baseline.json").read_text(encoding="utf-8"))
    assert document["findings"] == [{"path": "pkg/eval.py", "code": "VF101", "snippet": CALL, "count": 2}]

    third = diag("VF101", 6, 19, snippet=CALL)
    baseline = load_baseline("baseline.json")
    assert baseline.filter([result("pkg/eval.py", first, second, third)])[0].diagnostics == (third,)
    # Fewer occurrences than recorded is fine: nothing new.
    assert baseline.filter([result("pkg/eval.py", second)])[0].diagnostics == ()


def test_paths_resolve_through_the_stored_root(repo, monkeypatch):
    (repo / "ci").mkdir()
    write_baseline("ci/baseline.json", [findings(LEGACY, "pkg/eval.py")], str(repo))
    assert json.loads((repo / "ci" / "baseline.json").read_text())["root"] == ".."
    # Run from inside pkg/: result paths are relative to the new cwd.
    monkeypatch.chdir(repo / "pkg")
    baseline = load_baseline("../ci/baseline.json")
    assert baseline.filter([findings(LEGACY, "eval.py")])[0].diagnostics == ()
    assert len(baseline) == 2


def test_absolute_result_paths_are_made_relative(repo):
    write_baseline("baseline.json", [findings(LEGACY, str(repo / "pkg" / "eval.py"))], str(repo))
    document = json.loads((repo / "baseline.json").read_text())
    assert {f["path"] for f in document["findings"]} == {"pkg/eval.py"}


def test_errors_and_fix_data_pass_through(repo):
    write_baseline("baseline.json", [], str(repo))
    broken = result("pkg/x.py", error="RuntimeError in VF101", fixed_count=2, changed=True)
    (out,) = load_baseline("baseline.json").filter([broken])
    assert (out.error, out.fixed_count, out.changed) == ("RuntimeError in VF101", 2, True)


@pytest.mark.parametrize("content, match", [
    ("{not json", "not valid JSON"),
    ("[]", "expected a JSON object"),
    ('{"version": 2, "findings": []}', "unsupported version 2"),
    ('{"findings": []}', "unsupported version None"),
    ('{"version": 1}', "`findings` must be a list"),
    ('{"version": 1, "findings": [{"path": "a.py", "code": "VF101"}]}', r"findings\[0\]: `snippet`"),
    ('{"version": 1, "findings": [{"path": "a.py", "code": "VF101", "snippet": "", "count": 0}]}',
     "`count` must be a positive integer"),
    ('{"version": 1, "root": 3, "findings": []}', "`root` must be a string"),
])
def test_malformed_baseline_is_a_config_error(repo, content, match):
    (repo / "baseline.json").write_text(content, encoding="utf-8")
    with pytest.raises(VolfixConfigError, match=match) as err:
        load_baseline("baseline.json")
    assert "baseline.json" in str(err.value)


def test_missing_baseline_is_a_config_error(repo):
    with pytest.raises(VolfixConfigError, match="cannot read baseline"):
        load_baseline("missing.json")
