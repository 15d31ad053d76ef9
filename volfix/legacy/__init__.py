"""Run unmodified PyTorch 0.3 code on torch 2.x with 0.3's `volatile` semantics.

    with legacy_semantics():          # before the program imports Variable
        from torch.autograd import Variable
        out = model(Variable(x, volatile=True))
        assert out.volatile and out.grad_fn is None

    run_path("train.py", ["--epochs", "1"])      # or: python -m volfix.legacy train.py ...

What is emulated, and what is not: docs/LEGACY_RUNTIME.md. torch is imported only when
the semantics are installed (or a tensor is asked about), so volfix runs without it.
"""
from __future__ import annotations

import sys
from typing import Any

from ._run import legacy_semantics, read_script, run_path

__all__ = ["is_volatile", "legacy_semantics", "read_script", "run_path"]


def is_volatile(value: Any) -> bool:
    """True for a tensor that 0.3 would call volatile (made so, or computed from one)."""
    if "torch" not in sys.modules:  # no tensor can exist
        return False
    from . import _runtime

    return _runtime.is_volatile(value)


def __getattr__(name: str):
    """`volfix.legacy.Variable`: the 0.3 class (imports torch on first use)."""
    if name == "Variable":
        from ._runtime import Variable

        return Variable
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
