"""VF401 on `.data[0]` of a loss module's call, the module passed in as a parameter.

Found on LSTNet: `main.py` is a script with no `if __name__ == "__main__":` test, whose module
level builds `evaluateL2 = nn.MSELoss(size_average=False)` and passes it to `evaluate()`, which
reads `evaluateL2(output * scale, Y * scale).data[0]`. volfix read what the calls pass for a
parameter only in a program (a notebook, a `__main__` script), so `check` read clean and the
evaluation raised IndexError on torch 2.13. The calls in the file are all the calls when no
other file of the project names the function (`UNSHARED`). The programs run: the original under
the 0.3 runtime, the fixed one under torch 2.13."""
from __future__ import annotations

import subprocess
import sys

import pytest

from conftest import project_tree, run_results

MAIN = '''\
    import torch
    import torch.nn as nn
    from torch.autograd import Variable

    from data import batches


    def evaluate(X, Y, model, evaluateL2, evaluateL1):
        model.eval()
        total_loss = 0
        total_loss_l1 = 0
        for x, y in batches(X, Y):
            output = model(Variable(x, volatile=True))
            total_loss += evaluateL2(output, Variable(y)).data[0]
            total_loss_l1 += evaluateL1(output, Variable(y)).data[0]
        return total_loss, total_loss_l1


    torch.manual_seed(0)
    model = nn.Linear(3, 1)
    evaluateL2 = nn.MSELoss(size_average=False)
    evaluateL1 = nn.L1Loss(size_average=False)
    X, Y = torch.randn(8, 3), torch.randn(8, 1)
    val_l2, val_l1 = evaluate(X, Y, model, evaluateL2, evaluateL1)
    print("%.6f %.6f" % (val_l2, val_l1))
    '''

DATA = '''\
    def batches(X, Y, size=4):
        for start in range(0, len(X), size):
            yield X[start:start + size], Y[start:start + size]
    '''


def _run(root, *args):
    return subprocess.run([sys.executable, *args, "main.py"], cwd=root, capture_output=True, text=True, timeout=240)


def test_the_loss_reads_are_fixed(tmp_path):
    root = project_tree(tmp_path / "p", {"main.py": MAIN, "data.py": DATA})
    rows = sorted((d.location.row, d.fix.applicability.value) for d in run_results(root, "check")["main.py"].diagnostics
                  if d.code == "VF401")
    assert rows == [(14, "safe"), (15, "safe")]


def test_a_function_another_file_names_is_not_read_so(tmp_path):
    """`evaluate` named in another file: its calls there may pass anything."""
    other = "from main import evaluate\n"
    root = project_tree(tmp_path / "p", {"main.py": MAIN, "data.py": DATA, "other.py": other})
    assert [d for d in run_results(root, "check")["main.py"].diagnostics if d.code == "VF401"] == []


@pytest.mark.skipif(subprocess.run([sys.executable, "-c", "import torch"]).returncode != 0,
                    reason="torch is not installed")
def test_the_fixed_evaluation_runs_as_0_3_did(tmp_path):
    root = project_tree(tmp_path / "p", {"main.py": MAIN, "data.py": DATA})
    legacy = _run(root, "-m", "volfix.legacy")
    assert legacy.returncode == 0, legacy.stderr
    today = _run(root)
    assert "IndexError" in today.stderr  # what `check` used to call clean
    run_results(root, "fix")
    fixed_source = (root / "main.py").read_text(encoding="utf-8")
    assert fixed_source.count(".item()") == 2 and ".data[0]" not in fixed_source
    fixed = _run(root)
    assert fixed.returncode == 0, fixed.stderr
    assert fixed.stdout == legacy.stdout
