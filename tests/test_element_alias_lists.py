"""VF406 on elements kept in a list while the loop changes their tensor in place.

Kyubyong's exercises notebook keeps `w.data[0]` and `w.grad.data[0]` in lists while `w.data -=
lr * w.grad.data` and `backward()` change them in place. In 0.3 each element was a number; since
0.4 each is a 0-dim view, so every entry shows the last value and the plotted curves are flat,
with no error. The original runs under the 0.3 runtime, and under torch 2.13 before and after
the fix."""
from __future__ import annotations

from pathlib import Path

import pytest

from volfix.api import fix_source
from volfix.settings.config import Config

torch = pytest.importorskip("torch")

FIXTURE = Path(__file__).resolve().parent.parent / "fixtures" / "VF406" / \
    "elements-appended-while-the-tensor-changes.in.py"


def descend(source: str, legacy: bool = False):
    namespace: dict = {}
    if legacy:
        from volfix.legacy import legacy_semantics

        with legacy_semantics():
            exec(compile(source, "descend.py", "exec"), namespace)
            ws, grads = namespace["descend"](5)
    else:
        exec(compile(source, "descend.py", "exec"), namespace)
        ws, grads = namespace["descend"](5)
    return [float(v) for v in ws], [float(g) for g in grads]


def test_the_original_keeps_views_today():
    ws, grads = descend(FIXTURE.read_text())
    assert len(set(ws)) == 1 and len(set(grads)) == 1  # every entry is the last value


def test_the_fixed_lists_hold_the_numbers_0_3_kept():
    source = FIXTURE.read_text()
    legacy = descend(source, legacy=True)
    assert len(set(legacy[0])) == 5  # 0.3: five different numbers
    fixed = fix_source(source, path="descend.py", config=Config())  # plain `fix`: the safe fixes
    assert "ws.append(w.data[0].item())" in fixed.fixed_source
    ws, grads = descend(fixed.fixed_source)
    assert ws == pytest.approx(legacy[0]) and grads == pytest.approx(legacy[1])
