"""Notebooks as IPython runs them (issue 25): a cell may start with a space (IPython strips
the first line's indentation), a cell that cannot be parsed is called a cell, and
`from main import *` in a notebook resolves through the sibling module."""
from __future__ import annotations

import json

import pytest

from conftest import invoke
from volfix.settings.config import DEFAULT_CONFIG
from volfix.notebook import process_notebook
from volfix.notebook.magics import dedent_cell, indent_cell, mask_magics, unmask_magics


def notebook(*sources: str) -> bytes:
    cells = [{"cell_type": "code", "metadata": {}, "source": s, "outputs": [], "execution_count": None}
             for s in sources]
    return (json.dumps({"cells": cells, "metadata": {}, "nbformat": 4, "nbformat_minor": 5}, indent=1)
            + "\n").encode()


def cell_sources(data: bytes) -> list:
    return ["".join(c["source"]) for c in json.loads(data)["cells"]]


IMPORTS = " import torch\n from torch.autograd import Variable"  # as pasted: one leading space
LOOP = "for x in loader:\n    out = model(Variable(x, volatile=True))\n    total += out.sum().item()"
INDENTED = "  h = Variable(z)\n  print(h)\n\n  %time run()"


def test_an_indented_cell_is_dedented_as_ipython_does_and_its_imports_count():
    result, _ = process_notebook(notebook(IMPORTS, LOOP, INDENTED), path="nb.ipynb", config=DEFAULT_CONFIG)
    found = [(d.code, d.cell, d.location.row, d.location.column, d.note) for d in result.diagnostics]
    # No VF001 for cell 1, and `Variable` resolves through it (no "does not resolve" note).
    assert [f[:4] for f in found] == [("VF101", 2, 2, 17), ("VF110", 3, 1, 7)]  # columns as written
    assert found[0][4] is None


def test_fixing_an_indented_cell_keeps_its_indentation():
    result, new = process_notebook(notebook(IMPORTS, LOOP, INDENTED), path="nb.ipynb", config=DEFAULT_CONFIG,
                                   mode="fix", unsafe_fixes=True)
    assert result.error is None and result.changed
    assert cell_sources(new) == [" import torch",
                                 "for x in loader:\n    with torch.no_grad():\n        out = model(x)\n"
                                 "        total += out.sum().item()",
                                 "  print(z)\n\n  %time run()"]
    again, _ = process_notebook(new, path="nb.ipynb", config=DEFAULT_CONFIG, mode="fix", unsafe_fixes=True)
    assert not again.changed and again.diagnostics == ()


def test_an_automagic_line_is_ipython_not_a_syntax_error():
    """`ls {PATH}` (fastai's lessons: IPython runs a shell alias spelled without `%`) is masked
    like a magic and comes back as written; `ls = [...]`, Python, stays Python."""
    cell = "ls {PATH}\ncd data\nx = Variable(torch.ones(2), volatile=True)\nls = [x]"
    masked = mask_magics(cell)
    assert masked.text.splitlines()[2:] == ["x = Variable(torch.ones(2), volatile=True)", "ls = [x]"]
    assert unmask_magics(masked.text, masked) == cell
    result, new = process_notebook(notebook("import torch\nfrom torch.autograd import Variable", cell),
                                   path="nb.ipynb", config=DEFAULT_CONFIG, mode="fix", unsafe_fixes=True)
    assert result.error is None and "VF001" not in {d.code for d in result.diagnostics}
    assert cell_sources(new)[1] == "ls {PATH}\ncd data\nx = torch.ones(2)\nls = [x]"


@pytest.mark.parametrize("cell", [" a = 1\n b = 2\n", "\t\tx = 1\r\n\r\n\t\tif x:\r\n\t\t\ty = 2", "x = 1\n", "   \n  y\n  z"])
def test_dedent_and_indent_round_trip(cell):
    text, indent = dedent_cell(cell)
    assert indent_cell(text, indent) == cell
    masked = mask_magics(cell)
    assert unmask_magics(masked.text, masked) == cell
    compile(masked.text, "<cell>", "exec")


def test_a_cell_that_cannot_be_parsed_is_called_a_cell(project):
    (project / "nb.ipynb").write_bytes(notebook("import torch\nx = y.cuda(async=True)", "def f(:\n    pass"))
    result = invoke("check", "--no-cache", "--output-format", "concise", "nb.ipynb")
    assert result.exit_code == 1
    assert "\nnb.ipynb:cell 2:1:7: VF001 Cell cannot be parsed: " in result.stdout


def test_a_star_import_of_a_sibling_module_resolves_in_a_notebook(project):
    (project / "main.py").write_text("import torch\nfrom torch.autograd import Variable\n\n\n"
                                     "def helper(x):\n    return x\n")
    (project / "nb.ipynb").write_bytes(notebook("from main import *", LOOP))
    result = invoke("check", "--no-cache", "--output-format", "json", ".")
    (finding,) = json.loads(result.stdout)
    assert (finding["code"], finding["cell"], finding["fix"]["applicability"], finding["note"]) == \
        ("VF101", 2, "safe", None)
    assert invoke("fix", "--no-cache", ".").exit_code == 0
    assert cell_sources((project / "nb.ipynb").read_bytes())[1].startswith("for x in loader:\n    with torch.no_grad():")
    assert "from torch.autograd import Variable" in (project / "main.py").read_text()  # star-exported


def test_a_syntax_error_in_a_file_without_legacy_text_is_said_to_be_unparsed(project):
    (project / "broken.py").write_text("import torch\ndef f(:\n")
    (project / "legacy.py").write_text("import torch\nx = y.cuda(non_blocking=True)\n")
    result = invoke("check", "--no-cache", ".")
    assert result.exit_code == 0
    assert result.stderr == ("All checks passed! (2 files that cannot hold a finding were not parsed: "
                             "a syntax error there is not reported)\n")
    (project / "broken.py").write_text("import torch\nx = y.cuda(async=True)\ndef f(:\n")
    result = invoke("check", "--no-cache", "--output-format", "concise", ".")
    assert result.exit_code == 1 and result.stdout.startswith("broken.py:") and \
        " VF001 File cannot be parsed: " in result.stdout  # a candidate is parsed
