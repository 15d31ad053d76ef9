"""A fix that places a region names it, so a reviewer can size it up before applying it
(issue 25): "Unwrap and run lines 8-10 under `with torch.no_grad():`", "Unwrap and
decorate `predict()` with `@torch.no_grad()`"."""
from __future__ import annotations

import json

from volfix import api
from volfix.notebook import process_notebook
from volfix.settings.config import DEFAULT_CONFIG

SOURCE = """import torch
from torch.autograd import Variable


def evaluate(model, loader, train):
    correct = 0
    for x, y in loader:
        out = model(Variable(x, volatile=True))
        log("batch")
        correct += (out.max(1)[1] == y).sum().item()
    return correct


def predict(model, x):
    x = Variable(x, volatile=True)
    return model(x).max(1)[1]


def features(model, x, train):
    h = model(Variable(x, volatile=not train))
    return h
"""


def titles(source: str, **kwargs) -> dict:
    result = api.check_source(source, path="m.py", **kwargs)
    return {d.location.row: d.fix.message for d in result.diagnostics if d.fix is not None}


def test_a_with_block_names_its_lines_and_header():
    found = titles(SOURCE)
    assert found[8] == "Unwrap and run lines 8-10 under `with torch.no_grad():`"
    assert found[20] == "Unwrap and run line 20 under `with torch.set_grad_enabled(bool(train)):`"


def test_a_decorator_names_its_function():
    assert titles(SOURCE)[15] == "Unwrap and decorate `predict()` with `@torch.no_grad()`"


def test_the_lines_named_are_the_ones_that_move_under_the_with():
    fixed = api.fix_source(SOURCE, path="m.py").fixed_source.splitlines()
    header = fixed.index("        with torch.no_grad():")
    moved = [line.strip() for line in fixed[header + 1:header + 4]]
    named = [line.strip() for line in SOURCE.splitlines()[8 - 1:10]]  # "lines 8-10"
    assert moved == [named[0].replace("Variable(x, volatile=True)", "x")] + named[1:]
    assert fixed[header + 4].strip() == "return correct"


def test_in_a_notebook_lines_count_in_the_cell_and_another_cell_is_named():
    cells = [("import torch\nfrom torch.autograd import Variable\nx = Variable(batch, volatile=True)"),
             ("y = model(x)\nprint(y.sum())")]
    nb = {"cells": [{"cell_type": "code", "metadata": {}, "source": s, "outputs": [], "execution_count": None}
                    for s in cells], "metadata": {}, "nbformat": 4, "nbformat_minor": 5}
    result, _ = process_notebook(json.dumps(nb).encode(), path="nb.ipynb", config=DEFAULT_CONFIG)
    (finding,) = result.diagnostics
    assert (finding.cell, finding.location.row) == (1, 3)
    assert "lines 1-2 of cell 2" in finding.fix.message


def test_a_region_over_two_cells_names_the_lines_of_each():
    cells = ["import torch\nfrom torch.autograd import Variable\n"
             "x = Variable(batch, volatile=True)\ny = model(x)\nprint(y)",
             "z = model(y)\nprint(z.sum())"]
    nb = {"cells": [{"cell_type": "code", "metadata": {}, "source": s, "outputs": [], "execution_count": None}
                    for s in cells], "metadata": {}, "nbformat": 4, "nbformat_minor": 5}
    result, _ = process_notebook(json.dumps(nb).encode(), path="nb.ipynb", config=DEFAULT_CONFIG)
    (finding,) = result.diagnostics
    assert finding.cell == 1
    assert finding.fix.message == \
        "Unwrap and run lines 3-4 of this cell and lines 1-2 of cell 2 under `with torch.no_grad():`"
