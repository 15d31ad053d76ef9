"""Every way volfix shows or hands out one fix gives the text `volfix fix` writes for it,
clean-up included (issue 25): JSON/json-lines edits and SARIF `fixes` when checking paths
(not only stdin), `--diff`, the migration report. Interactive review: test_review.py and
test_interactive.py; the language server's quick fix: test_lsp.py."""
from __future__ import annotations

import json

import pytest

from builders import sarif_validator
from conftest import invoke
from volfix import api
from volfix.model import Location

# The example: unwrapping leaves `data, target = data, Variable(target)`, which the
# clean-up collapses to `target = Variable(target)`.
TUPLE = """import torch
from torch.autograd import Variable


def evaluate(model, loader, criterion):
    total = 0
    for data, target in loader:
        data, target = Variable(data, volatile=True), Variable(target)
        output = model(data)
        total += criterion(output, target).item()
    return total
"""


def apply_json_edits(text: str, edits) -> str:
    """Apply ruff-shaped edits (1-based rows and columns, end exclusive) to `text`."""
    starts = [0]
    for line in text.splitlines(True):
        starts.append(starts[-1] + len(line))

    def offset(loc) -> int:
        return starts[loc["row"] - 1] + loc["column"] - 1

    out, pos = [], 0
    for e in sorted(edits, key=lambda e: (offset(e["location"]), offset(e["end_location"]))):
        start, end = offset(e["location"]), offset(e["end_location"])
        assert start >= pos, "edits overlap"
        out.append(text[pos:start] + e["content"])
        pos = end
    return "".join(out) + text[pos:]


def only_fix(unsafe: bool) -> str:
    """What `volfix fix` writes for the VF101 fix (safe) or both fixes (unsafe)."""
    return api.fix_source(TUPLE, path="ex.py", unsafe_fixes=unsafe).fixed_source


@pytest.fixture
def example(project):
    (project / "ex.py").write_text(TUPLE)
    return project / "ex.py"


def json_findings(*args: str):
    result = invoke("check", *args)
    assert result.exit_code == 1, result.output
    return json.loads(result.stdout) if "json-lines" not in args else [
        json.loads(line) for line in result.stdout.splitlines()]


@pytest.mark.parametrize("output_format", ["json", "json-lines"])
@pytest.mark.parametrize("cache", [[], ["--no-cache"]])
def test_json_edits_when_checking_paths_are_what_fix_writes(example, output_format, cache):
    invoke("check", "ex.py")  # a plain check fills the cache without edits first
    vf101, vf110 = json_findings("--format", output_format, *cache, "ex.py")
    assert (vf101["code"], vf110["code"]) == ("VF101", "VF110")
    assert vf101["fix"]["edits"] and vf110["fix"]["edits"]
    written = only_fix(unsafe=False)
    assert "            target = Variable(target)\n" in written and "data, target = data" not in written
    assert apply_json_edits(TUPLE, vf101["fix"]["edits"]) == written
    # The unsafe VF110 fix alone: `target = target` is collapsed, `data` keeps its wrapper.
    assert apply_json_edits(TUPLE, vf110["fix"]["edits"]) == TUPLE.replace(
        "data, target = Variable(data, volatile=True), Variable(target)",
        "data = Variable(data, volatile=True)")


def test_json_edits_from_stdin_match_the_paths_ones(example):
    from_path = json_findings("--format", "json", "ex.py")
    result = invoke("check", "--format", "json", "--stdin-filename", "ex.py", "-", input=TUPLE)
    assert [d["fix"]["edits"] for d in json.loads(result.stdout)] == [d["fix"]["edits"] for d in from_path]


def test_sarif_carries_fixes_when_checking_paths_and_validates(example):
    result = invoke("check", "--format", "sarif", "ex.py")
    assert result.exit_code == 1
    log = json.loads(result.stdout)
    assert list(sarif_validator().iter_errors(log)) == []
    vf101 = next(r for r in log["runs"][0]["results"] if r["ruleId"] == "VF101")
    (change,) = vf101["fixes"][0]["artifactChanges"]
    assert change["artifactLocation"]["uri"] == "ex.py"
    edits = [{"content": r["insertedContent"]["text"],
              "location": {"row": r["deletedRegion"]["startLine"], "column": r["deletedRegion"]["startColumn"]},
              "end_location": {"row": r["deletedRegion"]["endLine"], "column": r["deletedRegion"]["endColumn"]}}
             for r in change["replacements"]]
    assert apply_json_edits(TUPLE, edits) == only_fix(unsafe=False)


@pytest.mark.parametrize("output_format", ["json", "json-lines", "sarif", "github", "junit"])
def test_diff_with_a_machine_format_is_refused_and_says_why(example, output_format):
    result = invoke("check", "--diff", "--format", output_format, "ex.py")
    assert result.exit_code == 2
    assert f"--diff prints a unified diff and cannot be combined with --format {output_format}" in result.stderr
    assert result.stdout == ""


@pytest.mark.parametrize("unsafe", [[], ["--unsafe-fixes"]])
def test_diff_shows_what_fix_writes(example, unsafe):
    result = invoke("check", "--diff", *unsafe, "ex.py")
    assert result.exit_code == 1
    expected = only_fix(unsafe=bool(unsafe))
    removed = [line[1:] for line in result.stdout.splitlines() if line.startswith("-") and not line.startswith("---")]
    added = [line[1:] for line in result.stdout.splitlines() if line.startswith("+") and not line.startswith("+++")]
    for line in added:
        assert line in expected.splitlines()
    assert "        data, target = Variable(data, volatile=True), Variable(target)" in removed
    assert not any("data, target = data" in line for line in added)


def test_a_notebook_cells_edits_are_in_its_cell(project):
    source = "for x in loader:\n    out = model(torch.autograd.Variable(x, volatile=True))\n    total += out.sum().item()"
    cells = [{"cell_type": "code", "metadata": {}, "source": "import torch", "outputs": [], "execution_count": None},
             {"cell_type": "code", "metadata": {}, "source": source, "outputs": [], "execution_count": None}]
    (project / "nb.ipynb").write_text(json.dumps({"cells": cells, "metadata": {}, "nbformat": 4,
                                                  "nbformat_minor": 5}))
    (finding,) = json_findings("--format", "json", "nb.ipynb")
    assert finding["cell"] == 2 and finding["location"] == {"row": 2, "column": 17}
    fixed = apply_json_edits(source + "\n", finding["fix"]["edits"])
    assert fixed == ("for x in loader:\n    with torch.no_grad():\n        out = model(x)\n"
                     "        total += out.sum().item()\n")


def test_edits_locations_are_one_based_and_end_exclusive():
    result = api.check_source("import torch\nh = x.cuda(async=True)\n", path="a.py", with_fixes=True)
    (finding,) = result.diagnostics
    (edit,) = finding.fix.edits
    assert (edit.location, edit.end_location, edit.content) == (Location(2, 12), Location(2, 17), "non_blocking")


def test_a_notebook_fix_that_edits_another_cell_has_no_edits_rather_than_wrong_ones(project):
    source = "for x in loader:\n    out = model(Variable(x, volatile=True))\n    total += out.sum().item()"
    cells = [{"cell_type": "code", "metadata": {}, "source": "import torch\nfrom torch.autograd import Variable",
              "outputs": [], "execution_count": None},
             {"cell_type": "code", "metadata": {}, "source": source, "outputs": [], "execution_count": None}]
    (project / "nb.ipynb").write_text(json.dumps({"cells": cells, "metadata": {}, "nbformat": 4,
                                                  "nbformat_minor": 5}))
    (finding,) = json_findings("--format", "json", "nb.ipynb")
    # `volfix fix` also removes the import in cell 1: edits relative to cell 2 cannot say that.
    assert finding["cell"] == 2 and finding["fix"]["applicability"] == "safe"
    assert finding["fix"]["edits"] == []
