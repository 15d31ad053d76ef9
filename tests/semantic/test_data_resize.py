"""VF402 under real torch: `v.data.resize_(...)` leaves `v` as it was today (SEMANTICS.md
fact 7: in 0.3 a Variable's `.data` was its own tensor, so resizing it resized the Variable);
the fixed program resizes `v` again. The 0.3 runtime does not emulate `.data` identity
(docs/LEGACY_RUNTIME.md), so the comparison is with the shapes 0.3 gave, written out."""
from __future__ import annotations

import pytest

torch = pytest.importorskip("torch")

from volfix.api import fix_source  # noqa: E402
from volfix.settings.config import Config  # noqa: E402

PROGRAM = '''
import torch
from torch.autograd import Variable


def load_data(v, data):
    v.data.resize_(data.size()).copy_(data)


image = Variable(torch.FloatTensor(2, 1, 4, 4))
shapes, sums = [], []
for batch in (torch.ones(2, 1, 4, 6), torch.ones(3, 1, 4, 6) * 2):
    load_data(image, batch)
    shapes.append(tuple(image.shape))
    sums.append(float(image.sum()))
'''


def run(source: str) -> dict:
    namespace: dict = {"__name__": "program"}
    exec(compile(source, "program.py", "exec"), namespace)
    return namespace


def test_the_fixed_program_resizes_as_0_3_did():
    legacy_today = run(PROGRAM)
    assert legacy_today["shapes"] == [(2, 1, 4, 4), (2, 1, 4, 4)]  # the silent bug the rule is about
    fixed = fix_source(PROGRAM, path="program.py", unsafe_fixes=True, config=Config())
    assert fixed.error is None and "v.resize_(data.size())" in fixed.fixed_source
    after = run(fixed.fixed_source)
    assert after["shapes"] == [(2, 1, 4, 6), (3, 1, 4, 6)]  # each batch's own shape, as in 0.3
    assert after["sums"] == [48.0, 144.0]  # and all of its data
