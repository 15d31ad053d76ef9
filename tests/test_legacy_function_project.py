"""VF501 across the files of a project: the detection repositories' layout, a legacy autograd
Function in `functions/` with its settings in `__init__`, called as `Fn(settings)(inputs)` by a
module in `modules/`. Converting the class alone would leave that call raising while `check`
read both files clean: the project index hands the caller the class's settings
(`rules.vf501_legacy_function.function_facts`), the call becomes `Fn.apply(inputs, settings)`,
and the class is converted because its calls are. The programs run: the original under the
0.3 runtime, the fixed one under torch 2.13, with the same results."""
from __future__ import annotations

import subprocess
import sys
import textwrap
from pathlib import Path

import pytest

from volfix.run.options import RunOptions
from volfix.run.runner import run
from volfix.settings.config import Config

FILES = {
    "lib/__init__.py": "",
    "lib/functions/__init__.py": "",
    "lib/modules/__init__.py": "",
    "lib/functions/roi_scale.py": '''\
        import torch
        from torch.autograd import Function


        class RoIScaleFunction(Function):
            def __init__(self, scale, shift=0.0):
                self.scale = float(scale)
                self.shift = shift

            def forward(self, features, rois):
                self.save_for_backward(rois)
                return features * self.scale + self.shift

            def backward(self, grad_output):
                rois, = self.saved_tensors
                return grad_output * self.scale, None
        ''',
    "lib/modules/roi_scale.py": '''\
        from torch.nn.modules.module import Module
        from ..functions.roi_scale import RoIScaleFunction


        class RoIScale(Module):
            def __init__(self, scale):
                super(RoIScale, self).__init__()
                self.scale = scale

            def forward(self, features, rois):
                return RoIScaleFunction(self.scale, shift=0.5)(features, rois)
        ''',
    "main.py": '''\
        import torch
        from torch.autograd import Variable
        from lib.modules.roi_scale import RoIScale

        torch.manual_seed(0)
        x = Variable(torch.randn(2, 3), requires_grad=True)
        out = RoIScale(0.25)(x, Variable(torch.zeros(2, 5)))
        out.sum().backward()
        print(out.data.tolist(), x.grad.data.tolist())
        ''',
}


def project(root: Path) -> Path:
    (root / ".git").mkdir(parents=True)
    for name, text in FILES.items():
        path = root / name
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(textwrap.dedent(text), encoding="utf-8")
    return root


def results(root: Path, mode: str, unsafe: bool = True):
    return {Path(r.path).resolve().relative_to(root.resolve()).as_posix(): r
            for r in run([str(root)], config=Config(),
                          options=RunOptions(mode=mode, unsafe_fixes=unsafe, use_cache=False))}


def vf501(found):
    return {path: [d for d in r.diagnostics if d.code == "VF501"] for path, r in found.items()
            if any(d.code == "VF501" for d in r.diagnostics)}


def test_the_caller_in_another_module_is_reported_with_the_settings_moved(tmp_path):
    root = project(tmp_path / "repo")
    found = vf501(results(root, "check"))
    assert set(found) == {"lib/functions/roi_scale.py", "lib/modules/roi_scale.py"}
    (call,) = found["lib/modules/roi_scale.py"]
    assert "autograd Function of another module" in call.message
    assert call.fix is not None and "goes with the conversion of `RoIScaleFunction`" in call.note
    (cls,) = found["lib/functions/roi_scale.py"]
    assert cls.fix is not None and "rewrites the calls of the modules in its run" in cls.note


def test_a_file_alone_keeps_the_class_unfixed(tmp_path):
    """Without the project (`check_source`), the class's module never calls it: no fix, and the
    note says the calls must change with it."""
    from volfix.api import check_source

    root = project(tmp_path / "repo")
    path = root / "lib/functions/roi_scale.py"
    (finding,) = [d for d in check_source(path.read_text(), path=str(path)).diagnostics if d.code == "VF501"]
    assert finding.fix is None and "never calls `RoIScaleFunction`" in finding.note


def test_the_fixed_project_runs_as_the_original_did_under_0_3(tmp_path):
    pytest.importorskip("torch")
    root = project(tmp_path / "repo")
    legacy = subprocess.run([sys.executable, "-m", "volfix.legacy", "main.py"], cwd=root,
                            capture_output=True, text=True, timeout=240)
    assert legacy.returncode == 0, legacy.stderr
    today = subprocess.run([sys.executable, "main.py"], cwd=root, capture_output=True, text=True, timeout=240)
    assert "Legacy autograd function" in today.stderr
    results(root, "fix")
    fixed_call = (root / "lib/modules/roi_scale.py").read_text()
    assert "RoIScaleFunction.apply(features, rois, self.scale, 0.5)" in fixed_call
    assert "def __init__" not in (root / "lib/functions/roi_scale.py").read_text()
    fixed = subprocess.run([sys.executable, "main.py"], cwd=root, capture_output=True, text=True, timeout=240)
    assert fixed.returncode == 0, fixed.stderr
    assert fixed.stdout == legacy.stdout
    before = {p: p.read_bytes() for p in root.rglob("*.py")}
    results(root, "fix")
    assert {p: p.read_bytes() for p in root.rglob("*.py")} == before  # a second fix changes nothing
    assert vf501(results(root, "check")) == {}


def test_an_instance_kept_by_another_module_stops_the_conversion(tmp_path):
    """A module that keeps an instance (`self.grl = RoIScaleFunction(0.5)`, called later as
    `self.grl(x)`: a domain-adaptation network's gradient reversal) would raise after the class
    became static, with nothing left to report it: the class gets no fix, and the note names
    that use, and the calls of the class in other modules keep their form too (found by a
    helper on fresh trees)."""
    root = project(tmp_path / "repo")
    (root / "lib/modules/kept.py").write_text(textwrap.dedent('''\
        import torch.nn as nn
        from ..functions.roi_scale import RoIScaleFunction


        class Reversed(nn.Module):
            def __init__(self):
                super(Reversed, self).__init__()
                self.grl = RoIScaleFunction(-1.0)

            def forward(self, x, rois):
                return self.grl(x, rois)
        '''), encoding="utf-8")
    found = vf501(results(root, "check"))
    (cls,) = found["lib/functions/roi_scale.py"]
    assert cls.fix is None
    (call,) = found["lib/modules/roi_scale.py"]  # the class stays as it is: so does its call
    assert call.fix is None and "volfix cannot convert `RoIScaleFunction` in its module" in call.note
    assert "lib/modules/kept.py` (line 8) uses `RoIScaleFunction` other than called as" in cls.note
    before = (root / "lib/functions/roi_scale.py").read_bytes()
    results(root, "fix")
    assert (root / "lib/functions/roi_scale.py").read_bytes() == before
    assert "lib/functions/roi_scale.py" in vf501(results(root, "check"))  # check does not read clean
