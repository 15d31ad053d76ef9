"""0.3's tensor operations that torch 2.x changed, for the runtime (`_runtime._install` patches
them in): ByteTensor masks (0.3 had no bool tensors), C's truncating division of integer
tensors, and `size(0)` of a one-element result (0.3's had shape (1,))."""
from __future__ import annotations

import torch

_TensorBase = torch._C.TensorBase
_ORIGINAL_SETITEM = _TensorBase.__setitem__
_ORIGINAL_MASKED_FILL = _TensorBase.masked_fill
_ORIGINAL_MASKED_FILL_ = _TensorBase.masked_fill_
_ORIGINAL_MASKED_SELECT = _TensorBase.masked_select
_ORIGINAL_MASKED_SCATTER = _TensorBase.masked_scatter
_ORIGINAL_MASKED_SCATTER_ = _TensorBase.masked_scatter_
_ORIGINAL_TRUEDIV = _TensorBase.__truediv__
_ORIGINAL_RTRUEDIV = torch.Tensor.__rtruediv__
_ORIGINAL_ITRUEDIV = torch.Tensor.__itruediv__
_ORIGINAL_DIV = torch.div
_ORIGINAL_SIZE = _TensorBase.size
_ORIGINAL_TENSOR_DIV = _TensorBase.div
_ORIGINAL_TENSOR_DIV_ = _TensorBase.div_


def _bool_mask(mask):
    """0.3's masks were ByteTensors (there were no bool tensors); today a write through a uint8
    mask raises (`masked_fill_ only supports boolean masks`)."""
    return mask.bool() if isinstance(mask, torch.Tensor) and mask.dtype is torch.uint8 else mask


def _legacy_setitem(self, index, value):
    """`logits[mask] = -np.inf` with a ByteTensor `mask`: 0.3's masked write."""
    if isinstance(index, tuple):
        index = tuple(_bool_mask(i) for i in index)
    return _ORIGINAL_SETITEM(self, _bool_mask(index), value)


def _legacy_masked_fill(self, mask, value):
    return _ORIGINAL_MASKED_FILL(self, _bool_mask(mask), value)


def _legacy_masked_fill_(self, mask, value):
    return _ORIGINAL_MASKED_FILL_(self, _bool_mask(mask), value)


def _legacy_masked_select(self, mask):
    return _ORIGINAL_MASKED_SELECT(self, _bool_mask(mask))


def _legacy_masked_scatter(self, mask, source):
    return _ORIGINAL_MASKED_SCATTER(self, _bool_mask(mask), source)


def _legacy_masked_scatter_(self, mask, source):
    return _ORIGINAL_MASKED_SCATTER_(self, _bool_mask(mask), source)


def _integral(value) -> bool:
    """An integer tensor, or a Python int (not a bool)."""
    if isinstance(value, torch.Tensor):
        return not value.dtype.is_floating_point and not value.dtype.is_complex and value.dtype is not torch.bool
    return isinstance(value, int) and not isinstance(value, bool)


def _integer_division(a, b) -> bool:
    """0.3 divided an integer tensor by an integer as C does, truncating (`prev_k = ids /
    num_words` of a beam search's flat `topk` indices); today `/` divides truly, to a float
    tensor (PyTorch 1.5 deprecated the integer division, 1.7 changed it)."""
    return (isinstance(a, torch.Tensor) or isinstance(b, torch.Tensor)) and _integral(a) and _integral(b)


def _legacy_truediv(self, other):
    if _integer_division(self, other):
        return _ORIGINAL_DIV(self, other, rounding_mode="trunc")
    return _ORIGINAL_TRUEDIV(self, other)


def _legacy_rtruediv(self, other):
    if _integer_division(other, self):
        return _ORIGINAL_DIV(torch.as_tensor(other, dtype=self.dtype), self, rounding_mode="trunc")
    return _ORIGINAL_RTRUEDIV(self, other)


def _legacy_itruediv(self, other):
    if _integer_division(self, other):
        return _ORIGINAL_TENSOR_DIV_(self, other, rounding_mode="trunc")
    return _ORIGINAL_ITRUEDIV(self, other)


def _legacy_div(input, other, *args, **kwargs):
    if not args and not kwargs.keys() - {"out"} and _integer_division(input, other):
        kwargs["rounding_mode"] = "trunc"
    return _ORIGINAL_DIV(input, other, *args, **kwargs)


def _legacy_tensor_div(self, other, *args, **kwargs):
    if not args and not kwargs and _integer_division(self, other):
        return _ORIGINAL_TENSOR_DIV(self, other, rounding_mode="trunc")
    return _ORIGINAL_TENSOR_DIV(self, other, *args, **kwargs)


def _legacy_tensor_div_(self, other, *args, **kwargs):
    if not args and not kwargs and _integer_division(self, other):
        return _ORIGINAL_TENSOR_DIV_(self, other, rounding_mode="trunc")
    return _ORIGINAL_TENSOR_DIV_(self, other, *args, **kwargs)


def _legacy_size(self, *args, **kwargs):
    """`idxs.size(0)` of a one-element result: 0.3's had shape (1,), today's are 0-dim."""
    if self.dim() == 0 and len(args) == 1 and not kwargs and type(args[0]) is int and args[0] in (0, -1):
        return 1
    return _ORIGINAL_SIZE(self, *args, **kwargs)


# (owner, attribute, replacement) for `_runtime._Patches`.
OPERATIONS = (
    (torch.Tensor, "__setitem__", _legacy_setitem),
    (torch.Tensor, "masked_fill", _legacy_masked_fill),
    (torch.Tensor, "masked_fill_", _legacy_masked_fill_),
    (torch.Tensor, "masked_select", _legacy_masked_select),
    (torch.Tensor, "masked_scatter", _legacy_masked_scatter),
    (torch.Tensor, "masked_scatter_", _legacy_masked_scatter_),
    (torch.Tensor, "__truediv__", _legacy_truediv),
    (torch.Tensor, "__rtruediv__", _legacy_rtruediv),
    (torch.Tensor, "__itruediv__", _legacy_itruediv),
    (torch.Tensor, "div", _legacy_tensor_div),
    (torch.Tensor, "div_", _legacy_tensor_div_),
    (torch, "div", _legacy_div),
    (torch.Tensor, "size", _legacy_size),
)
