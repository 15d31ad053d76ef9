"""Notebooks run in a real IPython kernel (SPEC §6): each legacy notebook's cells run under the
0.3 semantics (`volfix.legacy`), the notebook `volfix fix --unsafe-fixes` makes runs under plain
torch, and every `RESULT` line they print must agree. IPython syntax (`%time stmt`,
`%timeit -n 2 stmt`, `%%time` cells, `!cmd`, `x?`) runs as IPython runs it, so a magic that a
fix moved into a `with` block, or a masked line restored in the wrong place, shows here as a
failure, not only as a text difference.

Each notebook runs in its own process (`_KERNEL`): an `InteractiveShell` is a process-wide
singleton, and the 0.3 semantics patch torch for the whole process.
"""
from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path
from typing import List

import pytest

pytest.importorskip("torch")
pytest.importorskip("IPython")

from volfix.notebook import process_notebook  # noqa: E402
from volfix.settings.config import DEFAULT_CONFIG  # noqa: E402

ROOT = Path(__file__).resolve().parents[2]

# Runs the code cells of a notebook in one InteractiveShell, in order; argv: notebook, "legacy"
# or "plain". A cell that fails stops the run with its exception type on a RESULT line.
_KERNEL = r'''
import json, sys
sys.path.insert(0, sys.argv[3])
from IPython.core.interactiveshell import InteractiveShell
import torch
torch.manual_seed(0)
cells = [c for c in json.load(open(sys.argv[1]))["cells"] if c["cell_type"] == "code"]
shell = InteractiveShell.instance()
def run_all():
    for cell in cells:
        result = shell.run_cell("".join(cell["source"]), store_history=False)
        error = result.error_before_exec or result.error_in_exec
        if error is not None:
            print("RESULT error", type(error).__name__, flush=True)
            return
if sys.argv[2] == "legacy":
    from volfix.legacy import legacy_semantics
    with legacy_semantics():
        run_all()
else:
    run_all()
'''

SETUP = ("import torch\nfrom torch.autograd import Variable\ntorch.manual_seed(0)\n"
         "model = torch.nn.Linear(3, 2)\nxs = [torch.randn(4, 3) for _ in range(3)]\n"
         "def records(t):\n    return t.requires_grad or t.grad_fn is not None")

NOTEBOOKS = {
    # `%time` and `%timeit` time one statement: it is legacy code like any other line.
    "timed-statements": [
        SETUP,
        "%time out = model(Variable(xs[0], volatile=True))\nprint('RESULT', records(out), out.sum().item())",
        "%timeit -n 2 -r 1 model(Variable(xs[1], volatile=True))\nprint('RESULT timeit ran')",
        "for x in xs:\n    h = model(Variable(x, volatile=True))\n    %time s = h.sum()\n"
        "    print('RESULT', records(h), records(s), round(s.item(), 5))",
    ],
    # A timed statement the fix empties: `%time x = Variable(x, volatile=True)` is `x = x`.
    "timed-statement-deleted": [
        SETUP,
        "x = xs[2]\n%time x = Variable(x, volatile=True)\nout = model(x)\nprint('RESULT', records(out))",
    ],
    # A `%%time` cell, shell and help lines around legacy code.
    "cell-magic-and-escapes": [
        SETUP,
        "%%time\ntotal = 0\nfor x in xs:\n    y = model(Variable(x, volatile=True))\n    total += y.sum().item()\n"
        "print('RESULT', records(y), round(total, 5))",
        "files = !echo a b\nmodel?\nprint('RESULT', len(files))",
    ],
}


def _notebook(sources: List[str]) -> bytes:
    cells = [{"cell_type": "code", "metadata": {}, "source": s.splitlines(keepends=True), "outputs": [],
              "execution_count": None} for s in sources]
    return (json.dumps({"cells": cells, "metadata": {"kernelspec": {"name": "python3", "language": "python"}},
                        "nbformat": 4, "nbformat_minor": 5}, indent=1) + "\n").encode()


def _run(path: Path, mode: str) -> List[str]:
    done = subprocess.run([sys.executable, "-c", _KERNEL, str(path), mode, str(ROOT)], capture_output=True,
                          text=True, timeout=300, cwd=path.parent)
    assert done.returncode == 0, done.stderr
    return [line for line in done.stdout.splitlines() if line.startswith("RESULT")]


@pytest.mark.parametrize("name", sorted(NOTEBOOKS))
def test_the_fixed_notebook_prints_what_the_legacy_one_printed_on_0_3(tmp_path, name):
    data = _notebook(NOTEBOOKS[name])
    result, new = process_notebook(data, path=f"{name}.ipynb", config=DEFAULT_CONFIG, mode="fix", unsafe_fixes=True)
    assert result.error is None and new is not None
    assert [d.code for d in result.diagnostics] == []  # nothing of the migration left
    legacy, fixed = tmp_path / "legacy.ipynb", tmp_path / "fixed.ipynb"
    legacy.write_bytes(data)
    fixed.write_bytes(new)
    expected = _run(legacy, "legacy")
    assert expected and not any(line.startswith("RESULT error") for line in expected)
    assert _run(fixed, "plain") == expected
    again, newer = process_notebook(new, path=f"{name}.ipynb", config=DEFAULT_CONFIG, mode="fix", unsafe_fixes=True)
    assert newer is None and not again.changed
