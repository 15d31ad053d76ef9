"""The 2017 image-captioning idiom across files: `images = to_var(images, volatile=True)` in the
*training* loop, where the encoder's `forward` rebuilds its features from `.data`
(`Variable(self.cnn(x).data)`), so in 0.3 the frozen CNN ran without a graph and the layers
after the rebuild trained (SEMANTICS.md fact 10). Found by a helper on fresh trees:

- the encoder imported from another file was not read for the rebuild: the note said "0.3
  raised at `loss.backward()`", which is false, and the unsafe fix put the encoder and the
  decoder under `no_grad`, so the fixed step raised;
- with `to_var` in another file, `fix --unsafe-fixes` stopped with two findings, each waiting
  for the other: the call site's unwrap had no edit (its helper is another file's), and the
  helper's `volatile` parameter could not go while the call still passed `volatile=True`.

Each program runs twice: the original under the 0.3 runtime (`python -m volfix.legacy`), the
fixed one under torch 2.13; they print the same losses."""
from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import pytest

from conftest import project_tree, run_results

ENCODER = '''\
    import torch.nn as nn
    from torch.autograd import Variable


    class Encoder(nn.Module):
        def __init__(self):
            super(Encoder, self).__init__()
            self.cnn = nn.Linear(6, 4)
            self.linear = nn.Linear(4, 3)

        def forward(self, x):
            f = Variable(self.cnn(x).data)
            return self.linear(f)
    '''

TO_VAR = '''\
    from torch.autograd import Variable


    def to_var(x, volatile=False):
        return Variable(x, volatile=volatile)
    '''

# the encoder imported; its features feed a plain decoder and the loss
IMPORTED_ENCODER = {
    "enc.py": ENCODER,
    "train.py": '''\
        import torch
        import torch.nn as nn
        from torch.autograd import Variable
        from enc import Encoder


        def main():
            torch.manual_seed(0)
            encoder = Encoder()
            decoder = nn.Linear(3, 2)
            opt = torch.optim.SGD(list(decoder.parameters()) + list(encoder.linear.parameters()), lr=0.1)
            for i in range(3):
                images = Variable(torch.randn(5, 6), volatile=True)
                features = encoder(images)
                outputs = decoder(features)
                loss = nn.MSELoss()(outputs, Variable(torch.ones(5, 2)))
                opt.zero_grad()
                loss.backward()
                opt.step()
                print(i, round(loss.data[0], 6))


        if __name__ == '__main__':
            main()
        ''',
}

# `to_var` in another file; the encoder in the training script
HELPER_ELSEWHERE = {
    "utils.py": TO_VAR,
    "train.py": '''\
        import torch
        import torch.nn as nn
        from torch.autograd import Variable
        from utils import to_var


        class Encoder(nn.Module):
            def __init__(self):
                super(Encoder, self).__init__()
                self.cnn = nn.Linear(6, 4)
                self.linear = nn.Linear(4, 3)

            def forward(self, x):
                f = Variable(self.cnn(x).data)
                return self.linear(f)


        def main():
            torch.manual_seed(0)
            encoder = Encoder()
            opt = torch.optim.SGD(encoder.linear.parameters(), lr=0.1)
            for i in range(3):
                images = to_var(torch.randn(5, 6), volatile=True)
                loss = encoder(images).pow(2).mean()
                opt.zero_grad()
                loss.backward()
                opt.step()
                print(i, round(loss.data[0], 6))


        if __name__ == '__main__':
            main()
        ''',
}

# both in other files, and the helper's flag passed by position
BOTH_ELSEWHERE = {
    "enc.py": ENCODER,
    "utils.py": TO_VAR,
    "train.py": '''\
        import torch
        from enc import Encoder
        from utils import to_var


        def main():
            torch.manual_seed(0)
            encoder = Encoder()
            opt = torch.optim.SGD(encoder.linear.parameters(), lr=0.1)
            for i in range(3):
                images = to_var(torch.randn(5, 6), True)
                loss = encoder(images).pow(2).mean()
                opt.zero_grad()
                loss.backward()
                opt.step()
                print(i, round(loss.data[0], 6))


        if __name__ == '__main__':
            main()
        ''',
}

PROGRAMS = {"imported-encoder": IMPORTED_ENCODER, "helper-elsewhere": HELPER_ELSEWHERE,
            "both-elsewhere": BOTH_ELSEWHERE}


def volfix(root: Path, *args: str) -> subprocess.CompletedProcess:
    return subprocess.run([sys.executable, "-m", "volfix", *args, "--no-cache", "."], cwd=root,
                          capture_output=True, text=True, timeout=240)


def test_an_imported_encoder_that_rebuilds_is_named_in_the_note(tmp_path):
    root = project_tree(tmp_path / "repo", IMPORTED_ENCODER)
    (found,) = [d for d in run_results(root, "check")["train.py"].diagnostics if d.code == "VF101"]
    assert "through `encoder()` (line 14), whose `forward` rebuilds its result from `.data`" in found.note
    assert "0.3 raised" not in found.note
    assert found.fix is not None and "no_grad" not in found.fix.message  # only unwrapped: no region


def test_the_call_of_another_files_helper_stops_passing_the_flag(tmp_path):
    root = project_tree(tmp_path / "repo", HELPER_ELSEWHERE)
    (found,) = [d for d in run_results(root, "check")["train.py"].diagnostics if d.code == "VF101"]
    assert found.fix is not None and found.fix.applicability.value == "unsafe"
    assert found.fix.message == "Stop passing the flag (its helper is unwrapped in its own file)"
    assert "rebuilds its result from `.data`" in found.note


@pytest.mark.parametrize("name", sorted(PROGRAMS))
def test_fix_unsafe_fixes_ends_clean_and_trains_as_0_3_did(tmp_path, name):
    pytest.importorskip("torch")
    root = project_tree(tmp_path / "repo", PROGRAMS[name])
    legacy = subprocess.run([sys.executable, "-m", "volfix.legacy", "train.py"], cwd=root,
                            capture_output=True, text=True, timeout=240)
    assert legacy.returncode == 0, legacy.stderr
    assert len(legacy.stdout.splitlines()) == 3
    volfix(root, "fix", "--unsafe-fixes")
    volfix(root, "fix", "--unsafe-fixes")
    check = volfix(root, "check")
    assert check.returncode == 0, check.stdout
    assert "volatile" not in "".join(p.read_text() for p in root.glob("*.py"))
    fixed = subprocess.run([sys.executable, "train.py"], cwd=root, capture_output=True, text=True, timeout=240)
    assert fixed.returncode == 0, fixed.stderr
    assert fixed.stdout == legacy.stdout
