"""A region must not cover a training step hidden in another module of the project (SPEC §2,
step 4): a GAN script keeps its fixed noise `volatile=True` at module level, samples from it in
a function its epoch loop calls, and trains through `train_step` imported from `trainer.py`, or
through a method of a model class imported from `model.py`. Read file by file, the loop looked
free of training, and plain `fix` wrapped the whole loop in `no_grad`: the step raised
("element 0 of tensors does not require grad"). The project index now tells each file which
of the other files' functions and methods train (`flow.returns.returns_facts`,
`flow.trains.training_keys`), so the region is only the line that samples. The programs run:
the original under the 0.3 runtime, the safe-fixed one under torch 2.13 (pytorch-gan-collections'
and RFBNet's layout, found by a helper on fresh trees)."""
from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import pytest

from conftest import project_tree, run_results

FILES = {
    "trainer.py": '''\
        def train_step(G, opt, z):
            loss = G(z).pow(2).mean()
            opt.zero_grad()
            loss.backward()
            opt.step()
            return loss
        ''',
    "model.py": '''\
        import torch


        class Pix2Pix(object):
            def __init__(self):
                self.G = torch.nn.Linear(4, 2)
                self.opt = torch.optim.SGD(self.G.parameters(), lr=0.1)

            def optimize_parameters(self, z):
                self.loss = self.G(z).pow(2).mean()
                self.opt.zero_grad()
                self.loss.backward()
                self.opt.step()
        ''',
    "gan.py": '''\
        import torch
        import torch.nn as nn
        from torch.autograd import Variable
        from trainer import train_step

        torch.manual_seed(0)
        G = nn.Linear(4, 2)
        opt = torch.optim.SGD(G.parameters(), lr=0.1)
        fixed_noise = Variable(torch.randn(8, 4), volatile=True)


        def sample(G):
            return G(fixed_noise)


        for epoch in range(2):
            z = Variable(torch.randn(8, 4))
            loss = train_step(G, opt, z)
            print(epoch, round(float(loss.data.sum()), 6), sample(G).requires_grad)
        ''',
    "pix2pix.py": '''\
        import torch
        from torch.autograd import Variable
        from model import Pix2Pix

        torch.manual_seed(0)
        model = Pix2Pix()
        fixed_noise = Variable(torch.randn(8, 4), volatile=True)


        def sample(G):
            return G(fixed_noise)


        for epoch in range(2):
            model.optimize_parameters(Variable(torch.randn(8, 4)))
            print(epoch, round(float(model.loss.data.sum()), 6), sample(model.G).requires_grad)
        ''',
}


def project(root: Path) -> Path:
    return project_tree(root, FILES)


def results(root: Path, mode: str):
    return run_results(root, mode)


@pytest.mark.parametrize("script", ["gan.py", "pix2pix.py"])
def test_the_region_stays_off_the_loop_that_trains_in_another_module(tmp_path, script):
    root = project(tmp_path / "repo")
    (found,) = [d for d in results(root, "check")[script].diagnostics if d.code == "VF101"]
    assert found.fix is not None
    results(root, "fix")
    fixed = (root / script).read_text()
    assert "with torch.no_grad():\n    for epoch" not in fixed
    assert "    with torch.no_grad():\n        print(" in fixed


@pytest.mark.parametrize("script", ["gan.py", "pix2pix.py"])
def test_the_fixed_script_trains_as_the_original_did_under_0_3(tmp_path, script):
    pytest.importorskip("torch")
    root = project(tmp_path / "repo")
    legacy = subprocess.run([sys.executable, "-m", "volfix.legacy", script], cwd=root,
                            capture_output=True, text=True, timeout=240)
    assert legacy.returncode == 0, legacy.stderr
    results(root, "fix")
    fixed = subprocess.run([sys.executable, script], cwd=root, capture_output=True, text=True, timeout=240)
    assert fixed.returncode == 0, fixed.stderr
    assert fixed.stdout == legacy.stdout
    assert fixed.stdout.count("False") == 2  # the samples carry no graph, as in 0.3

