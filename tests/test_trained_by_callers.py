"""A region must not cover a value that callers in other files train on (SPEC §2.10).

self-attentive-parser's `parse_batch` marks a detached copy of its annotations volatile, runs a
same-file decoder over it (which returns Python numbers made from `.data.numpy()`), adds the
decoder's total to the training loss and returns the loss; `main.py` calls `backward()` on it.
Read file by file, the decoder's numbers looked volatile, and the loss computed from them too:
plain `fix` put `loss = scores.sum() + paugment_total` under `no_grad`, and training raised
("element 0 of tensors does not require grad"), where 0.3 trained. A region that covers the
statement where the value meets one that may require grad, in a function that hands a value on,
is now unsafe and says why (`fixes.decisions.Decisions.meets_and_leaves`). The programs run: the
original under the 0.3 runtime, the safe-fixed one under torch 2.13 (found by a helper on fresh
trees)."""
from __future__ import annotations

import subprocess
import sys
import textwrap
from pathlib import Path

import pytest

from volfix.model import Applicability
from conftest import project_tree, run_results

FILES = {
    "parser.py": '''\
        import numpy as np
        import torch
        import torch.nn as nn
        from torch.autograd import Variable


        def chart_decode(chart, gold):
            return int(chart.argmax()), float(chart.max())


        class Parser(nn.Module):
            def __init__(self):
                super(Parser, self).__init__()
                self.f_label = nn.Linear(3, 4)

            def parse_from_annotations(self, annotations, gold):
                chart = self.f_label(annotations)
                chart_np = chart.cpu().data.numpy()
                p_i, p_augment = chart_decode(chart_np, gold)
                return p_i, p_augment

            def parse_batch(self, annotations, golds):
                paugment_total = 0.0
                picks = []
                annotations_d = annotations.detach()
                annotations_d.volatile = True
                for i, gold in enumerate(golds):
                    p_i, p_augment = self.parse_from_annotations(annotations_d[i:i + 1], gold)
                    paugment_total += p_augment
                    picks.append(p_i)
                scores = self.f_label(annotations)
                loss = scores.sum() + paugment_total
                return picks, loss
        ''',
    "main.py": '''\
        import torch
        from torch.autograd import Variable
        from parser import Parser

        torch.manual_seed(0)
        parser = Parser()
        opt = torch.optim.SGD(parser.parameters(), lr=0.1)
        for step in range(3):
            annotations = Variable(torch.randn(2, 3))
            picks, loss = parser.parse_batch(annotations, [None, None])
            opt.zero_grad()
            loss.backward()
            opt.step()
            print(step, picks, round(loss.data[0], 5))
        ''',
}


def project(root: Path) -> Path:
    return project_tree(root, FILES)


def results(root: Path, mode: str):
    return run_results(root, mode)


def test_the_region_over_the_trained_loss_is_unsafe_and_says_why(tmp_path):
    root = project(tmp_path / "repo")
    (found,) = [d for d in results(root, "check")["parser.py"].diagnostics if d.code == "VF202"]
    assert found.fix is not None and found.fix.applicability == Applicability.UNSAFE
    assert "where the value meets `scores.sum()`" in found.note
    assert "`parse_batch()` hands a value on" in found.note
    results(root, "fix")
    assert (root / "parser.py").read_text() == textwrap.dedent(FILES["parser.py"])  # nothing safe to fix


def test_the_fixed_program_trains_as_the_original_did_under_0_3(tmp_path):
    pytest.importorskip("torch")
    root = project(tmp_path / "repo")
    legacy = subprocess.run([sys.executable, "-m", "volfix.legacy", "main.py"], cwd=root,
                            capture_output=True, text=True, timeout=240)
    assert legacy.returncode == 0, legacy.stderr
    results(root, "fix")
    fixed = subprocess.run([sys.executable, "main.py"], cwd=root, capture_output=True, text=True, timeout=240)
    assert fixed.returncode == 0, fixed.stderr
    assert fixed.stdout == legacy.stdout
    assert fixed.stdout.count("\n") == 3
