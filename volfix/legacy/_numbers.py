"""0.3's numbers and one-element values, as the runtime gives them on today's torch: what
`_runtime`'s patched indexing, iteration and `torch.cat` hand back. 0.3 had no 0-dim tensors:
an element of a plain tensor was a Python number, and a loss or other one-element result had
shape (1,)."""
from __future__ import annotations

from typing import Any

import torch


def number_of(tensor) -> Any:
    """A one-element tensor's number as 0.3 gave it. 0.3 had no bool tensors: a comparison gave
    a ByteTensor, whose element was the int 1 or 0 (comparisons return torch.bool since 1.2,
    pytorch/pytorch#21113)."""
    return int(tensor.item()) if tensor.dtype is torch.bool else tensor.item()


def integers(index) -> bool:
    """An index of Python ints only (`3`, `(i, j)`): 0.3 read an element with it."""
    return type(index) is int or type(index) is tuple and bool(index) and all(type(i) is int for i in index)


class Element(torch.Tensor):
    """An element of a plain tensor: 0.3 gave its Python number, today a 0-dim tensor (a view).
    Here it is a 0-dim tensor (so that migrated code, `ni.item()`, runs as it does today) that
    holds a copy, as a number did (`old_val = target[0][action]`, then `target[0][action] =
    reward`: 0.3's `old_val` kept the old value), and hashes as its number, so that as a dict
    key or set member it finds what 0.3's number found (`index2word[topi[0][0]]`; today's
    tensor hashes by identity, a `KeyError`), and `str()` gives the number, as 0.3 wrote it
    into a text file (`repr` stays torch's). Operations on it give plain tensors."""

    __torch_function__ = torch._C._disabled_torch_function_impl

    def __hash__(self):
        return hash(number_of(self))

    def __repr__(self, **kwargs):  # torch formats a 0-dim tensor's number only when its type is Tensor
        return self.as_subclass(torch.Tensor).__repr__(**kwargs)

    def __format__(self, spec):
        return self.as_subclass(torch.Tensor).__format__(spec)

    def __str__(self):  # `str(t[i])`, `print(t[i])`: 0.3's number (a data file written with `str()`)
        return str(number_of(self))


_ORIGINAL_CAT = torch.cat


def legacy_cat(tensors, *args, **kwargs):
    """`torch.cat([a.mean(), b.mean()])`: 0.3's one-element results had shape (1,), so joining
    them gave a 1-dim tensor of their numbers; today's 0-dim ones raise ("zero-dimensional
    tensor cannot be concatenated"). Each 0-dim tensor is joined as its shape-(1,) view."""
    if isinstance(tensors, (list, tuple)) and any(isinstance(t, torch.Tensor) and t.dim() == 0 for t in tensors):
        tensors = [t.view(1) if isinstance(t, torch.Tensor) and t.dim() == 0 else t for t in tensors]
    return _ORIGINAL_CAT(tensors, *args, **kwargs)
