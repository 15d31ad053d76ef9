"""A `self` attribute holding a module's output is a value that may require grad (SPEC §2.10).

refinedet's detector keeps its anchors as `self.priors = Variable(..., volatile=True)` in
`__init__`; `forward` stores `self.loc = self.head(x)` and, in training, `calculate_loss` hands
`self.loc` and `self.priors` to a loss layer of another file that reads only `priors.data`. The
training loop lives in a third file. Plain `fix` decorated `calculate_loss` with
`@torch.no_grad()`: the loss lost its graph and `loss.backward()` raised, where 0.3 trained
(found by a helper on fresh trees). The region meets `self.loc`, which `self.head(x)` made, and
`calculate_loss` hands its result on: the fix is unsafe, with the reason. The programs run: the
original under the 0.3 runtime, the plain-fixed one under the 0.3 runtime too."""
from __future__ import annotations

import subprocess
import sys

import pytest

from volfix.model import Applicability
from conftest import project_tree, run_results

FILES = {
    "loss.py": '''\
        import torch.nn as nn
        import torch.nn.functional as F
        from torch.autograd import Variable


        class ArmLoss(nn.Module):
            def forward(self, loc_data, priors, targets):
                loc_t = targets.data - priors.data
                return F.smooth_l1_loss(loc_data, Variable(loc_t, requires_grad=False))
        ''',
    "net.py": '''\
        import torch
        import torch.nn as nn
        from torch.autograd import Variable
        from loss import ArmLoss


        class Det(nn.Module):
            def __init__(self):
                super(Det, self).__init__()
                self.head = nn.Linear(4, 4)
                self.arm_loss_layer = ArmLoss()
                self.priors = Variable(torch.ones(3, 4), volatile=True)

            def forward(self, x, targets=None):
                self.loc = self.head(x)
                if not self.training:
                    return self.loc + self.priors
                return self.calculate_loss(targets)

            def calculate_loss(self, targets):
                return self.arm_loss_layer(self.loc, self.priors, targets)
        ''',
    "train.py": '''\
        import torch
        from torch.autograd import Variable
        from net import Det

        torch.manual_seed(0)
        net = Det()
        opt = torch.optim.SGD(net.parameters(), lr=0.1)
        x = Variable(torch.randn(3, 4))
        targets = Variable(torch.randn(3, 4))
        for it in range(2):
            opt.zero_grad()
            loss = net(x, targets)
            loss.backward()
            opt.step()
            print("iter %d loss %.4f" % (it, loss.data[0]))
        ''',
}


def test_the_region_over_the_loss_is_unsafe_and_says_why(tmp_path):
    root = project_tree(tmp_path / "repo", FILES)
    (found,) = [d for d in run_results(root, "check")["net.py"].diagnostics if d.code == "VF101"]
    assert found.fix is not None and found.fix.applicability == Applicability.UNSAFE
    assert "meets `self.loc`, which may require grad" in found.note
    run_results(root, "fix")
    assert "no_grad" not in (root / "net.py").read_text()


def test_the_plain_fixed_program_trains_as_0_3_did(tmp_path):
    pytest.importorskip("torch")
    root = project_tree(tmp_path / "repo", FILES)

    def run():
        done = subprocess.run([sys.executable, "-m", "volfix.legacy", "train.py"], cwd=root,
                              capture_output=True, text=True, timeout=240)
        assert done.returncode == 0, done.stderr
        return done.stdout

    legacy = run()
    assert legacy.splitlines()[0].startswith("iter 0 loss ")
    run_results(root, "fix")
    assert run() == legacy
