"""VF401 on `x[0]` of a 0-dim Variable whose value the code uses as a tensor next.

0.3 had no 0-dim tensors: `best[0]` of a one-element Variable was a Variable of shape (1,),
so `best[0].unsqueeze(0)` had shape (1, 1) and `loss[0].backward()` back-propagated the loss.
`.item()` gives a number, which has no `.unsqueeze` or `.backward`: the fix is `best.view(1)`,
or the 0-dim value itself where its shape does not matter. The fixed program must run on
torch 2.13, where the original raises IndexError (the legacy runtime gives `[0]` of a 0-dim
Variable as the 0-dim value, not 0.3's shape (1,), so this is not a differential test)."""
from __future__ import annotations

from pathlib import Path

import pytest

from volfix.api import fix_source
from volfix.settings.config import Config

torch = pytest.importorskip("torch")

FIXTURE = Path(__file__).resolve().parent.parent / "fixtures" / "VF401" / "variable-index-used-as-tensor.in.py"


def train_step_of(source: str):
    namespace: dict = {}
    exec(compile(source, "train_step.py", "exec"), namespace)
    return namespace["train_step"]


def run_step(train_step):
    torch.manual_seed(0)
    model = torch.nn.Linear(3, 4)
    opt = torch.optim.SGD(model.parameters(), lr=0.1)
    x, y = torch.randn(5, 3), torch.tensor([0, 1, 2, 3, 0])
    with torch.no_grad():
        expected_loss = torch.nn.functional.cross_entropy(model(x), y).item()
        expected_best = model(x).max().item()
    before = model.weight.detach().clone()
    loss, history = train_step(model, opt, x, y, torch.zeros(1, 1))
    return loss, history, expected_loss, expected_best, before, model


def test_the_original_raises_today():
    with pytest.raises(IndexError, match="0-dim"):
        run_step(train_step_of(FIXTURE.read_text()))


def test_the_fixed_step_trains_and_keeps_0_3_shapes():
    fixed = fix_source(FIXTURE.read_text(), path="train_step.py", unsafe_fixes=True, config=Config())
    assert "best.view(1).unsqueeze(0)" in fixed.fixed_source
    assert "loss.backward()" in fixed.fixed_source
    loss, history, expected_loss, expected_best, before, model = run_step(train_step_of(fixed.fixed_source))
    assert isinstance(loss, float) and loss == pytest.approx(expected_loss)  # 0.3's `.data[0]`: a number
    assert history.shape == (2, 1)  # 0.3: `best[0]` had shape (1,), unsqueezed to (1, 1)
    assert history[1, 0].item() == pytest.approx(expected_best)
    assert not torch.equal(model.weight.detach(), before)  # `loss[0].backward()` reached the weights
