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

import contextlib
import sys
from typing import Any, Iterator

from ._run import read_script, run_path

__all__ = ["is_volatile", "legacy_semantics", "read_script", "run_path"]


@contextlib.contextmanager
def legacy_semantics(strict: bool = False) -> Iterator[None]:
    """Install the 0.3 semantics in this process; on exit torch is exactly as before.

    `torch.autograd.Variable` (and `torch.autograd.variable.Variable`) become the 0.3 class,
    so enter before the program runs `from torch.autograd import Variable`. Entries nest
    (the outermost exit restores). `strict=True` makes `Variable(variable)` raise as 0.3 did.
    The state is process-wide: threads started inside see it too.
    """
    from . import _runtime

    _runtime.enter(strict=strict)
    try:
        yield
    finally:
        _runtime.leave()


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
