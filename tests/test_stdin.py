"""`volfix check -` / `volfix fix -` treat stdin by its `--stdin-filename`: a `.ipynb` name
means notebook JSON in, notebook JSON out (byte-exact except the edited cells' sources)."""
from __future__ import annotations

import json
from pathlib import Path

from conftest import LEGACY, invoke

NOTEBOOKS = Path(__file__).resolve().parent.parent / "fixtures" / "notebooks"
MAGICS_IN = (NOTEBOOKS / "magics.in.ipynb").read_bytes()
MAGICS_OUT = (NOTEBOOKS / "magics.out.ipynb").read_bytes()


def test_check_notebook_from_stdin_reports_its_cells(project):
    result = invoke("check", "--stdin-filename", "eval.ipynb", "--format", "concise", "-",
                    input=MAGICS_IN)
    assert result.exit_code == 1
    assert result.stdout.splitlines() == [
        "eval.ipynb:cell 3:4:14: VF101 [*] `volatile=True` is ignored since PyTorch 0.4; "
        "use `torch.no_grad()`"]


def test_check_notebook_from_stdin_full_frame_shows_the_cell(project):
    result = invoke("check", "--stdin-filename", "eval.ipynb", "-", input=MAGICS_IN)
    assert result.exit_code == 1
    assert "4 |     images = Variable(images, volatile=True)\n" in result.stdout


def test_check_notebook_from_stdin_json_carries_the_cell(project):
    result = invoke("check", "--stdin-filename", "eval.ipynb", "--format", "json", "-",
                    input=MAGICS_IN)
    assert result.exit_code == 1
    [finding] = json.loads(result.stdout)
    assert (finding["code"], finding["cell"], finding["location"]) == (
        "VF101", 3, {"row": 4, "column": 14})
    assert finding["fix"]["applicability"] == "safe"


def test_fix_notebook_from_stdin_writes_the_fixed_notebook(project):
    result = invoke("fix", "--stdin-filename", "eval.ipynb", "-", input=MAGICS_IN)
    assert result.exit_code == 0, result.stderr
    assert result.stdout_bytes == MAGICS_OUT
    assert result.stderr == "Fixed 1 finding (0 remaining).\n"


def test_fix_notebook_from_stdin_matches_fixing_the_file(project):
    source = NOTEBOOKS / "mnist-eval-earlier-imports-unsafe.in.ipynb"
    piped = invoke("fix", "--unsafe-fixes", "--stdin-filename", "nb.ipynb", "-",
                   input=source.read_bytes())
    (project / "nb.ipynb").write_bytes(source.read_bytes())
    on_disk = invoke("fix", "--unsafe-fixes", "nb.ipynb")
    assert piped.exit_code == on_disk.exit_code
    assert piped.stdout_bytes == (project / "nb.ipynb").read_bytes()
    assert piped.stdout_bytes == (NOTEBOOKS / "mnist-eval-earlier-imports-unsafe.out.ipynb").read_bytes()


def test_fix_notebook_from_stdin_reports_what_remains_on_stderr(project):
    cells = [{"cell_type": "code", "execution_count": None, "metadata": {}, "outputs": [],
              "source": ["import torch\n", "from torch.autograd import Variable"]},
             {"cell_type": "code", "execution_count": None, "metadata": {}, "outputs": [],
              "source": ["h = Variable(state)"]}]
    source = (json.dumps({"cells": cells, "metadata": {}, "nbformat": 4, "nbformat_minor": 5},
                         indent=1) + "\n").encode()
    result = invoke("fix", "--stdin-filename", "nb.ipynb", "--format", "concise", "-", input=source)
    assert result.exit_code == 1
    assert result.stdout_bytes == source  # the only fix is unsafe: nothing changes
    assert result.stderr.startswith("nb.ipynb:cell 2:1:5: VF110 ")


def test_fix_clean_notebook_from_stdin_passes_it_through(project):
    source = (NOTEBOOKS / "modern.in.ipynb").read_bytes()
    result = invoke("fix", "--stdin-filename", "nb.ipynb", "-", input=source)
    assert result.exit_code == 0
    assert result.stdout_bytes == source


def test_unreadable_notebook_from_stdin_is_vf002_and_passed_through(project):
    source = (NOTEBOOKS / "invalid-json.ipynb").read_bytes()
    result = invoke("fix", "--stdin-filename", "nb.ipynb", "--format", "concise", "-", input=source)
    assert result.exit_code == 1
    assert result.stdout_bytes == source
    assert "nb.ipynb:" in result.stderr and " VF002 " in result.stderr


def test_diff_notebook_from_stdin_shows_the_changed_cells(project):
    result = invoke("fix", "--diff", "--stdin-filename", "nb.ipynb", "-", input=MAGICS_IN)
    assert result.exit_code == 1
    assert result.stdout.startswith("--- nb.ipynb:cell 3\n+++ nb.ipynb:cell 3\n")
    assert "\n+    with torch.no_grad():\n" in result.stdout


def test_python_source_is_still_python_whatever_else_the_name_says(project):
    for name in ("model.py", "script", "notes.IPYNB.py"):
        result = invoke("check", "--stdin-filename", name, "--format", "concise", "-", input=LEGACY)
        assert result.exit_code == 1, name
        assert result.stdout.startswith(f"{name}:2:13: VF101 "), name


def test_upper_case_ipynb_suffix_is_a_notebook(project):
    result = invoke("fix", "--stdin-filename", "Eval.IPYNB", "-", input=MAGICS_IN)
    assert result.exit_code == 0
    assert result.stdout_bytes == MAGICS_OUT
