"""After `volfix fix`, the findings that remain are located in the fixed file: their code
frames must show the fixed text (for notebooks, the fixed cell), not the original."""
from __future__ import annotations

import json

from conftest import invoke

SOURCE = (
    "from torch.autograd import Variable\n"
    "\n"
    "def evaluate(model, loader):\n"
    "    for x in loader:\n"
    "        out = model(Variable(x, volatile=True))\n"
    "        print(out)\n"
    "    flag = getattr(model, 'volatile')\n"
    "    return flag\n"
)
# The fix adds `import torch` and a `with` block: the getattr moves from line 7 to line 8.
GETATTR_FRAME = (
    "  |\n"
    "6 |             out = model(x)\n"
    "7 |         print(out)\n"
    "8 |     flag = getattr(model, 'volatile')\n"
    "  |            ^^^^^^^^^^^^^^^^^^^^^^^^^^ VF203\n"
    "9 |     return flag\n"
    "  |\n"
)


def test_frame_after_fix_shows_the_fixed_file(project):
    (project / "evaluate.py").write_text(SOURCE)
    result = invoke("fix", "evaluate.py")
    assert result.exit_code == 1
    fixed = (project / "evaluate.py").read_text()
    assert fixed.splitlines()[7] == "    flag = getattr(model, 'volatile')"
    header, frame = result.stdout.split("\n", 1)
    assert header.startswith("evaluate.py:8:12: VF203 ")
    assert frame.startswith(GETATTR_FRAME)


def test_frame_after_check_shows_the_file_as_it_is(project):
    (project / "evaluate.py").write_text(SOURCE)
    result = invoke("check", "--select", "VF203", "evaluate.py")
    assert result.exit_code == 1
    assert "7 |     flag = getattr(model, 'volatile')\n" in result.stdout


def _notebook(*cells: str) -> str:
    return json.dumps({
        "cells": [{"cell_type": "code", "execution_count": None, "metadata": {}, "outputs": [],
                   "source": cell.splitlines(keepends=True)} for cell in cells],
        "metadata": {"kernelspec": {"language": "python", "name": "python3"},
                     "language_info": {"name": "python"}},
        "nbformat": 4, "nbformat_minor": 5}, indent=1) + "\n"


def test_frame_after_fix_shows_the_fixed_notebook_cell(project):
    notebook = _notebook(
        "import torch\nfrom torch.autograd import Variable\n",
        "for x in loader:\n"
        "    out = model(Variable(x, volatile=True))\n"
        "    print(out)\n"
        "flag = getattr(model, 'volatile')\n")
    (project / "eval.ipynb").write_text(notebook)
    result = invoke("fix", "eval.ipynb")
    assert result.exit_code == 1
    cell = "".join(json.loads((project / "eval.ipynb").read_text())["cells"][1]["source"])
    assert cell.splitlines()[4] == "flag = getattr(model, 'volatile')"
    header, frame = result.stdout.split("\n", 1)
    assert header.startswith("eval.ipynb:cell 2:5:8: VF203 ")
    assert frame.startswith(
        "  |\n"
        "3 |         out = model(x)\n"
        "4 |     print(out)\n"
        "5 | flag = getattr(model, 'volatile')\n"
        "  |        ^^^^^^^^^^^^^^^^^^^^^^^^^^ VF203\n"
        "  |\n")
