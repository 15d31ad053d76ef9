"""A value stored on an object that its function returns leaves with the object (SPEC §2.10).

nyu-mll/spinn's `unwrap` builds `example.tokens = to_gpu(Variable(..., volatile=not
self.training))` on a local `Example` and returns `example`; `forward` runs the embedding on
`example.tokens`. `to_gpu` comes from another module. Plain `fix` put the creation alone under
`torch.set_grad_enabled(self.training)`: in evaluation the embedding then recorded a graph where
0.3 kept it volatile, and `check` read clean. The returned object now carries the value to the
callers, whose module makes the fix unsafe, with the reason (found by a helper on fresh trees).
The programs run: the original under the 0.3 runtime, the safe-fixed one under the 0.3 runtime
too, where only a safe fix could make them differ."""
from __future__ import annotations

import subprocess
import sys
import textwrap

import pytest

from volfix.model import Applicability
from conftest import project_tree, run_results

FILES = {
    "blocks.py": '''\
        def to_gpu(var):
            return var
        ''',
    "main.py": '''\
        import numpy as np
        import torch
        import torch.nn as nn
        from torch.autograd import Variable
        from blocks import to_gpu


        class Example(object):
            pass


        class Model(nn.Module):
            def __init__(self):
                super(Model, self).__init__()
                self.emb = nn.Embedding(10, 4)

            def unwrap(self, x):
                example = Example()
                example.tokens = to_gpu(Variable(torch.from_numpy(x), volatile=not self.training))
                return example

            def forward(self, x):
                example = self.unwrap(x)
                return self.emb(example.tokens).sum(1)


        model = Model()
        model.eval()
        out = model(np.array([[1, 2, 3]]))
        print("records a graph:", out.requires_grad)
        ''',
}


def test_the_region_around_the_creation_alone_is_unsafe_and_says_why(tmp_path):
    root = project_tree(tmp_path / "repo", FILES)
    (found,) = [d for d in run_results(root, "check")["main.py"].diagnostics if d.code == "VF103"]
    assert found.fix is not None and found.fix.applicability == Applicability.UNSAFE
    assert "the result of `unwrap()`" in found.note and "goes through a module" in found.note
    run_results(root, "fix")
    assert (root / "main.py").read_text() == textwrap.dedent(FILES["main.py"])  # nothing safe to fix


def test_the_safe_fixed_program_keeps_evaluation_graph_free_as_0_3_did(tmp_path):
    pytest.importorskip("torch")
    root = project_tree(tmp_path / "repo", FILES)
    legacy = subprocess.run([sys.executable, "-m", "volfix.legacy", "main.py"], cwd=root,
                            capture_output=True, text=True, timeout=240)
    assert legacy.returncode == 0, legacy.stderr
    assert legacy.stdout == "records a graph: False\n"
    run_results(root, "fix")
    fixed = subprocess.run([sys.executable, "-m", "volfix.legacy", "main.py"], cwd=root,
                           capture_output=True, text=True, timeout=240)
    assert fixed.returncode == 0, fixed.stderr
    assert fixed.stdout == legacy.stdout
