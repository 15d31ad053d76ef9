"""The PyTorch 0.3 `Variable` on torch 2.x (SEMANTICS.md §1, facts 1-11).

This module imports torch; `volfix.legacy` imports it only when the semantics are installed,
so volfix itself runs without torch.

How it works: `Variable` is a `torch.Tensor` subclass whose `__torch_function__` sees every
operation that has a Variable among its arguments (lists of tensors included). When any
argument is volatile, the operation runs under `torch.no_grad()` and its tensor outputs are
marked volatile: 0.3's `makeFlags` rule (fact 2), whatever else takes part — parameters
included (fact 3), anywhere later in the program (fact 4). Outputs of operations on
Variables are Variables, as in 0.3. A few things are patched on torch while the semantics
are installed (`_Patches`): the legacy names, the `.volatile` attribute of every tensor,
`[0]` on 0-dim tensors, the arguments 0.4 removed (`retain_variables=`, `multinomial()`'s
default count), and calls of legacy autograd Functions (removed in 1.5). Outside
`legacy_semantics()`, Variables are a plain subclass: they still wrap outputs, but nothing is
volatile and nothing is patched.
"""
from __future__ import annotations

import copy
import ctypes
from inspect import getattr_static as inspect_getattr_static
import operator
import sys
import threading
from typing import Any, Callable, Dict, List, Optional, Tuple

import torch
from torch._C import DisableTorchFunctionSubclass
from torch.overrides import get_default_nowrap_functions

from ._numbers import Element, integers, legacy_cat, number_of
from ._ops import OPERATIONS

_TorchVariable = torch.autograd.variable.Variable  # the 2.x shim, restored on exit
_TensorBase = torch._C.TensorBase
_ORIGINAL_GETITEM = _TensorBase.__getitem__
_ORIGINAL_NUMPY = _TensorBase.numpy
_ORIGINAL_TOLIST = _TensorBase.tolist
_ORIGINAL_ITER = torch.Tensor.__iter__
_ORIGINAL_BACKWARD = torch.autograd.backward
_ORIGINAL_TENSOR_BACKWARD = torch.Tensor.backward
_ORIGINAL_MULTINOMIAL = _TensorBase.multinomial
_ORIGINAL_FUNCTION_CALL = torch.autograd.Function.__call__
_ORIGINAL_GRAD = torch.autograd.grad
_NOWRAP = get_default_nowrap_functions()


class LegacyFlagError(ValueError, RuntimeError):
    """`Variable(x, requires_grad=True, volatile=True)`: 0.3 raised RuntimeError (its
    THPUtils_assert), torch 2.x raises ValueError; both `except` clauses catch this."""


class LegacyDataError(TypeError, RuntimeError):
    """`Variable([1, 2])`: RuntimeError in 0.3, TypeError in torch 2.x."""


class _State:
    """Whether the semantics are installed (a count: nested entries are allowed)."""

    def __init__(self) -> None:
        self.depth = 0
        self.lock = threading.RLock()
        self.patches: "_Patches | None" = None
        self.strict = False


_state = _State()


def is_volatile(value: Any) -> bool:
    """The 0.3 flag of `value`: True for a Variable made volatile or computed from one."""
    return isinstance(value, torch.Tensor) and bool(getattr(value, "_volfix_volatile", False))


def _any_volatile(values) -> bool:
    for value in values:
        if isinstance(value, torch.Tensor):
            if getattr(value, "_volfix_volatile", False):
                return True
        elif isinstance(value, (list, tuple)):
            if _any_volatile(value):
                return True
        elif isinstance(value, dict):
            if _any_volatile(value.values()):
                return True
    return False


def _wrap(value, volatile: bool, inputs: tuple):
    """New plain tensor outputs become Variables (Parameters and other subclasses stay what
    they are); with a volatile input, every Variable output is volatile (fact 2).

    The class of the fresh output object is changed in place: `as_subclass` (what torch's
    default `__torch_function__` does) would record an `AliasBackward0` node over every
    result, which changes `grad_fn` and makes converted leaves non-leaves. An input handed
    back unchanged (`x.to(dtype)` that converts nothing) keeps its class."""
    if isinstance(value, torch.Tensor):
        if type(value) is torch.Tensor and not _is_input(value, inputs):
            value.__class__ = Variable
        if volatile and issubclass(type(value), Variable):
            value._volfix_volatile = True
        return value
    if isinstance(value, (list, tuple)):
        return type(value)(_wrap(item, volatile, inputs) for item in value)
    return value


def _is_input(value: torch.Tensor, inputs) -> bool:
    for item in inputs:
        if item is value or (isinstance(item, (list, tuple)) and _is_input(value, item)):
            return True
    return False


def _volatile_roots(tensors) -> List[int]:
    if isinstance(tensors, torch.Tensor):
        tensors = (tensors,)
    return [i for i, t in enumerate(tensors) if is_volatile(t)]


def _check_backward(func: Callable, args: tuple, kwargs: dict) -> None:
    """0.3's engine refused volatile roots (fact 5, `python_engine.cpp`)."""
    if func in (torch.Tensor.backward, _ORIGINAL_TENSOR_BACKWARD, _legacy_tensor_backward):
        roots = _volatile_roots(args[0])
    elif func in (_ORIGINAL_BACKWARD, _legacy_backward):
        roots = _volatile_roots(args[0] if args else kwargs["tensors"])
    else:  # torch.autograd.grad
        roots = _volatile_roots(args[0] if args else kwargs["outputs"])
    if roots:
        raise RuntimeError(f"element {roots[0]} of variables tuple is volatile")


def _is_backward(func: Callable) -> bool:
    # torch's own functions, or the patched ones (torch.autograd's code names them through its globals)
    return func in (torch.Tensor.backward, _ORIGINAL_TENSOR_BACKWARD, _legacy_tensor_backward, _ORIGINAL_BACKWARD,
                    _ORIGINAL_GRAD, _legacy_backward, _legacy_grad)


class _VariableMeta(type(torch.Tensor)):
    def __instancecheck__(cls, obj) -> bool:
        if issubclass(type(obj), cls):
            return True
        if cls is not Variable or not isinstance(obj, torch.Tensor):
            return False
        # 0.3: nn.Parameter subclassed Variable, and only Variables took part in autograd;
        # plain tensors (0.3's torch.FloatTensor & co.) were not Variables.
        return isinstance(obj, torch.nn.Parameter) or obj.requires_grad or obj.grad_fn is not None


class Variable(torch.Tensor, metaclass=_VariableMeta):
    """`torch.autograd.Variable` as in PyTorch 0.3 (facts 1, 6-10).

    `Variable(data, requires_grad=False, volatile=False, _grad_fn=None, name=None)`, with
    the flags accepted positionally in that order (fact 6). The result is a new leaf sharing
    `data`'s storage. `Variable(variable)` raised in 0.3 (fact 7); here it is accepted as
    `Variable(variable.data)`: the argument's graph and volatility are dropped and the
    constructor's flags apply (what half-migrated code got from 0.4's `Variable(v)`).
    `legacy_semantics(strict=True)` raises as 0.3 did instead.
    """

    _volfix_volatile = False
    # torch.autograd reads `Variable._execution_engine` through its module global.
    _execution_engine = _TorchVariable._execution_engine

    def __new__(cls, data=None, requires_grad=False, volatile=False, _grad_fn=None, name=None):
        # Flags are C `unsigned char`s in both 0.3 and 2.x: ints and bools, not None.
        requires_grad = bool(operator.index(requires_grad))
        volatile = bool(operator.index(volatile))
        if volatile and requires_grad:
            raise LegacyFlagError("Variable can't be volatile and require_grad at the same time!")
        if _grad_fn is not None:
            raise TypeError("volfix.legacy: Variable(_grad_fn=...) is not supported")
        if data is None:  # 0.3 made an empty FloatTensor (legacy serialization)
            data = torch.empty(0)
        if not isinstance(data, torch.Tensor):
            raise LegacyDataError(f"Variable data has to be a tensor, but got {type(data).__name__}")
        if _state.strict and isinstance(data, Variable):
            raise RuntimeError("Variable data has to be a tensor, but got Variable")
        with DisableTorchFunctionSubclass():
            self = torch.Tensor._make_subclass(cls, data, requires_grad)
        if volatile:
            self._volfix_volatile = True
        if name is not None:
            self.name = name
        return self

    def __deepcopy__(self, memo):
        # torch's default copies through new_empty(), which our __torch_function__ would
        # not hand back as a Variable; copy the leaf and its flags directly instead.
        if id(self) in memo:
            return memo[id(self)]
        with DisableTorchFunctionSubclass():
            if not self.is_leaf:
                raise RuntimeError("Only Tensors created explicitly by the user (graph leaves) "
                                   "support the deepcopy protocol at the moment")
            new = self.detach().clone().requires_grad_(self.requires_grad)
        new.__class__ = type(self)
        memo[id(self)] = new
        new.__dict__.update(copy.deepcopy(self.__dict__, memo))
        return new

    @classmethod
    def __torch_function__(cls, func, types, args=(), kwargs=None):
        kwargs = kwargs or {}
        active = _state.depth > 0
        if active and func in _HANDLERS:
            return _HANDLERS[func](args, kwargs)
        volatile = active and (_any_volatile(args) or _any_volatile(kwargs.values()))
        if volatile and _is_backward(func):
            _check_backward(func, args, kwargs)
        with DisableTorchFunctionSubclass():
            if volatile:
                with torch.no_grad():
                    result = func(*args, **kwargs)
            else:
                result = func(*args, **kwargs)
        if func in _NOWRAP:
            return result
        if volatile and func is torch.Tensor.__setitem__ and issubclass(type(args[0]), Variable):
            args[0]._volfix_volatile = True  # 0.3: the written tensor became volatile
        return _wrap(result, volatile, args)


def _data(args, kwargs):
    """`.data` is the plain tensor underneath: not a Variable, never volatile (fact 10)."""
    with DisableTorchFunctionSubclass():
        return torch.Tensor.data.__get__(args[0])


def _register_hook(args, kwargs):
    if is_volatile(args[0]):
        raise RuntimeError("cannot register a hook on a volatile variable")
    with DisableTorchFunctionSubclass():
        return torch.Tensor.register_hook(*args, **kwargs)


_HANDLERS: Dict[Callable, Callable] = {
    torch.Tensor.data.__get__: _data,
    torch.Tensor.register_hook: _register_hook,
}


# ----------------------------------------------------------------- patches on torch


def _get_volatile(self) -> bool:
    return bool(getattr(self, "_volfix_volatile", False))


def _set_volatile(self, value) -> None:
    """Fact 9: a bool, on leaves only; a volatile result has no grad_fn, so it may be reset."""
    if not isinstance(value, bool):
        raise RuntimeError("volatile must be a bool")
    if self.grad_fn is not None:
        raise RuntimeError("volatile can only be set on leaf variables")
    if type(self) is torch.Tensor and value:
        # A plain tensor would not see its flag: only Variables' operations are watched.
        self.__class__ = Variable
    self._volfix_volatile = value


# Called as `hook(tensor, frame, zero_dim)` at each `[0]` (or `[-1]`), `frame` being the code
# that indexed and `zero_dim` whether the tensor had no dimension: `volfix verify`'s tracer
# records the reads of one-element values (`volfix.verify.scalars`), and the expressions that
# index a value with dimensions too.
scalar_read_hook: Optional[Callable[[Any, Any, bool], None]] = None
# Called as `hook(root, frame)` at each `backward` (or `autograd.grad`) that gives a 0-dim
# root a gradient of shape (1,) (VF403's crash today), `frame` being this module's caller,
# torch's own code on the way: the hook walks out to the code it cares about.
scalar_gradient_hook: Optional[Callable[[Any, Any], None]] = None
# Called as `hook(tensor, frame, zero_dim)` at each `.tolist()`: of a 0-dim tensor 0.3 gave a
# list of one number, today the number (`loss.data.tolist()[0]` raises TypeError since 0.4).
scalar_list_hook: Optional[Callable[[Any, Any, bool], None]] = None


def _legacy_getitem(self, index):
    """Indexing as in 0.3, which had no 0-dim tensors. A loss or other one-element result had
    shape (1,), so `loss.data[0]` was a Python number and `loss[0]` a one-element Variable:
    `[0]` and `[-1]` of a 0-dim tensor give those. A plain tensor's element (`topi[0][0]`,
    `labels[i]` of a `.data` tensor) was a Python number too: integer indexing of a plain
    tensor that leaves no dimension gives an `Element`. Everything else is torch's."""
    if type(index) is int and index in (0, -1):
        zero_dim = self.dim() == 0
        if scalar_read_hook is not None:
            scalar_read_hook(self, sys._getframe(1), zero_dim)
        if zero_dim:
            if not isinstance(self, Variable):  # 0.3's plain tensor: indexing gave a number
                return number_of(self)
            return _ORIGINAL_GETITEM(self, ())
    result = _ORIGINAL_GETITEM(self, index)
    if result.dim() == 0 and integers(index) and type(self) is not Element and not isinstance(self, Variable):
        return result.clone().as_subclass(Element)  # a number: a copy, not a view of `self`
    return result


def _legacy_iter(self):
    """`for word in indices:` over a plain 1-dim tensor gave its Python numbers in 0.3 (its
    `__iter__` selected each element); today it gives 0-dim tensors: here `Element`s. A
    Variable's elements, and rows of tensors with more dimensions, are torch's."""
    if self.dim() == 1 and not isinstance(self, Variable):
        return iter([e.clone().as_subclass(Element) for e in _ORIGINAL_ITER(self)])
    return _ORIGINAL_ITER(self)


def _legacy_numpy(self, *args, **kwargs):
    """`loss.data.cpu().numpy()`: in 0.3 the one-element result had shape (1,), so its
    array did too (`[0]` was a NumPy scalar); today's 0-dim tensor gives a 0-d array. The
    array shares the tensor's memory either way."""
    array = _ORIGINAL_NUMPY(self, *args, **kwargs)
    return array.reshape(1) if self.dim() == 0 else array


def _one_element_gradients(roots, gradients):
    """0.3's one-element results had shape (1,), so the gradient given for one did too
    (`one = torch.FloatTensor([1])`, then `D_real.mean().backward(one)`, the WGAN idiom).
    Today the root is 0-dim and torch refuses a (1,) gradient for it: here a gradient of
    shape (1,) given for a 0-dim root is taken as that root's one number. Everything else
    is torch's own."""
    if gradients is None:
        return gradients
    single = isinstance(roots, torch.Tensor)
    roots_seq = (roots,) if single else tuple(roots)
    grads_seq = (gradients,) if isinstance(gradients, torch.Tensor) else tuple(gradients)
    if len(roots_seq) != len(grads_seq):
        return gradients
    fixed = tuple(g.reshape(()) if isinstance(r, torch.Tensor) and isinstance(g, torch.Tensor)
                  and r.dim() == 0 and tuple(g.shape) == (1,) else g
                  for r, g in zip(roots_seq, grads_seq))
    if scalar_gradient_hook is not None:
        for r, g, f in zip(roots_seq, grads_seq, fixed):
            if f is not g:
                scalar_gradient_hook(r, sys._getframe(1))
    if isinstance(gradients, torch.Tensor):
        return fixed[0]
    return type(gradients)(fixed) if isinstance(gradients, (list, tuple)) else fixed


def _retained(kwargs: dict) -> dict:
    """0.3's `retain_variables=`, the name `retain_graph=` replaced (0.2), deprecated until 0.4
    removed it (a TypeError today): the same flag, and only one of the two may be given."""
    if kwargs.get("retain_variables") is None:
        kwargs.pop("retain_variables", None)
        return kwargs
    if kwargs.get("retain_graph") is not None:
        raise ValueError("only one of retain_graph and retain_variables can be specified")
    kwargs["retain_graph"] = kwargs.pop("retain_variables")
    return kwargs


def _legacy_backward(tensors, grad_tensors=None, *args, **kwargs):
    """`torch.autograd.backward` (also what `Tensor.backward` calls) with 0.3's one-element
    gradients and its names of the arguments (`grad_variables=`, `retain_variables=`)."""
    if "grad_variables" in kwargs and grad_tensors is None:
        grad_tensors = kwargs.pop("grad_variables")
    kwargs = _retained(kwargs)
    return _ORIGINAL_BACKWARD(tensors, _one_element_gradients(tensors, grad_tensors), *args, **kwargs)


def _legacy_tensor_backward(self, gradient=None, retain_graph=None, create_graph=False, retain_variables=None,
                            **kwargs):
    """`Tensor.backward` with 0.3's signature: the fourth argument was `retain_variables`."""
    kwargs = _retained(dict(kwargs, retain_graph=retain_graph, retain_variables=retain_variables))
    return _ORIGINAL_TENSOR_BACKWARD(self, gradient, create_graph=create_graph, **kwargs)


def _legacy_multinomial(self, num_samples=1, *args, **kwargs):
    """`probs.multinomial()`: 0.3's `Variable.multinomial(num_samples=1, replacement=False)`
    drew one sample by default; today's method needs the count (TypeError without it)."""
    return _ORIGINAL_MULTINOMIAL(self, num_samples, *args, **kwargs)


def _legacy_grad(outputs, inputs, grad_outputs=None, *args, **kwargs):
    """`torch.autograd.grad` with 0.3's one-element gradients."""
    return _ORIGINAL_GRAD(outputs, inputs, _one_element_gradients(outputs, grad_outputs), *args, **kwargs)


def _legacy_tolist(self):
    """`loss.data.tolist()`: 0.3's one-element result had shape (1,), so its list did too (`[0]`
    was the number); today's 0-dim tensor gives the number itself."""
    value = _ORIGINAL_TOLIST(self)
    zero_dim = self.dim() == 0
    if scalar_list_hook is not None:
        scalar_list_hook(self, sys._getframe(1), zero_dim)
    return [value] if zero_dim else value


# What 0.3's legacy Function offered on `self` and today's is on the `ctx` of a static
# forward/backward (`saved_variables` is 0.3's other name of `saved_tensors`).
_CTX_API = frozenset({"save_for_backward", "saved_tensors", "needs_input_grad", "mark_dirty",
                      "mark_non_differentiable", "set_materialize_grads"})


class _LegacySelf:
    """The `self` a legacy Function's `forward` and `backward` see: what they store on it
    (`self.size = x.size()`) is kept between the two, what its `__init__` stored is read from
    the instance, `self.save_for_backward(...)` & co. go to the autograd context, and its
    other methods are bound to this object too."""

    def __init__(self, instance) -> None:
        object.__setattr__(self, "_volfix_instance", instance)
        object.__setattr__(self, "_volfix_ctx", None)

    def __getattr__(self, name: str):
        ctx = object.__getattribute__(self, "_volfix_ctx")
        if name == "saved_variables":
            name = "saved_tensors"
        if name in _CTX_API and ctx is not None:
            return getattr(ctx, name)
        if name == "mark_shared_storage":  # 0.3 only; torch tracks storage itself
            return lambda *pairs: None
        instance = object.__getattribute__(self, "_volfix_instance")
        if name in instance.__dict__:
            return instance.__dict__[name]
        attr = getattr(type(instance), name)
        if callable(attr) and not isinstance(attr, type) and hasattr(attr, "__get__"):
            return attr.__get__(self, type(instance))
        return attr


def _legacy_function_call(self, *inputs):
    """`Fn(params)(inputs)`, 0.3's legacy autograd Function (methods `forward(self, *tensors)`
    and `backward(self, *grads)`): today calling an instance raises `Legacy autograd function
    with non-static forward method is deprecated`. Here the call runs through a new-style
    Function whose static methods call the instance's with a `_LegacySelf`. As for any
    operation of 0.3, a volatile input makes the outputs volatile Variables, without a graph."""
    cls = type(self)
    if isinstance(inspect_getattr_static(cls, "forward"), staticmethod):
        return _ORIGINAL_FUNCTION_CALL(self, *inputs)
    legacy_self = _LegacySelf(self)

    def forward(ctx, *args):
        object.__setattr__(legacy_self, "_volfix_ctx", ctx)
        return cls.forward(legacy_self, *args)

    def backward(ctx, *grads):
        object.__setattr__(legacy_self, "_volfix_ctx", ctx)
        return cls.backward(legacy_self, *grads)

    # Named after the legacy class, so its graph nodes are too (`BinActiveBackward`).
    bridge = type(cls.__name__, (torch.autograd.Function,),
                  {"forward": staticmethod(forward), "backward": staticmethod(backward)})
    volatile = _state.depth > 0 and _any_volatile(inputs)
    if volatile:
        with torch.no_grad():
            result = bridge.apply(*inputs)
    else:
        result = bridge.apply(*inputs)
    if any(isinstance(item, Variable) for item in inputs):
        result = _wrap(result, volatile, inputs)
    return result


def _legacy_function_init(self, *args, **kwargs):
    """0.3's Function took no arguments and did not warn about being instantiated."""


_MISSING = object()


class _Patches:
    """Attributes set on torch while the semantics are installed, and what they were."""

    def __init__(self) -> None:
        self._saved: List[Tuple[Any, str, Any]] = []

    def set(self, owner, name: str, value) -> None:
        self._saved.append((owner, name, owner.__dict__.get(name, _MISSING)))
        setattr(owner, name, value)

    def restore(self) -> None:
        for owner, name, old in reversed(self._saved):
            if old is _MISSING:
                delattr(owner, name)
            else:
                setattr(owner, name, old)
        self._saved.clear()


def _install() -> _Patches:
    patches = _Patches()
    patches.set(torch.autograd, "Variable", Variable)
    patches.set(torch.autograd.variable, "Variable", Variable)
    patches.set(torch.Tensor, "volatile", property(_get_volatile, _set_volatile))
    before = _slot_value(torch.Tensor)
    patches.set(torch.Tensor, "__getitem__", _legacy_getitem)
    _drop_sequence_item_slot(before)
    patches.set(torch.Tensor, "numpy", _legacy_numpy)
    patches.set(torch.Tensor, "__iter__", _legacy_iter)
    patches.set(torch.Tensor, "tolist", _legacy_tolist)
    patches.set(torch.autograd, "backward", _legacy_backward)
    patches.set(torch.Tensor, "backward", _legacy_tensor_backward)
    patches.set(torch.Tensor, "multinomial", _legacy_multinomial)
    patches.set(torch, "cat", legacy_cat)
    for owner, name, value in OPERATIONS:
        patches.set(owner, name, value)
    patches.set(torch.autograd.Function, "__call__", _legacy_function_call)
    patches.set(torch.autograd.Function, "__init__", _legacy_function_init)
    patches.set(torch.autograd, "grad", _legacy_grad)
    return patches


# CPython gives a class whose `__getitem__` is set in Python two slots, the mapping one and
# the sequence one (`sq_item`), and subclasses inherit them. torch's own `__getitem__` fills
# the mapping slot only, so no tensor is a sequence for C code: with `sq_item`, torch's tensor
# constructors and NumPy take a tensor for a list, and `torch.Tensor([r])` of a 0-dim `r` (an
# element of a 1-dim tensor, 0.3's Python number) raises `len() of a 0-d tensor`. The patch
# needs the mapping slot only (`x[0]` looks there first), so the sequence slot it created is
# cleared on `torch.Tensor` and its subclasses. Removing the patch recomputes both slots.
# CPython's `PyTypeObject` holds `tp_as_sequence` as its 14th pointer-sized field, and
# `PySequenceMethods` holds `sq_item` as its 4th; a slot is cleared only where the patch was
# just seen to set it (it was NULL before, it now holds the address it took on torch.Tensor).
_POINTER = ctypes.sizeof(ctypes.c_void_p)


def _sequence_item_slot(cls) -> Optional[ctypes.c_void_p]:
    """A live view of `cls`'s `sq_item` slot (None off CPython or without sequence methods)."""
    if sys.implementation.name != "cpython" or not isinstance(cls, type):
        return None
    methods = ctypes.c_void_p.from_address(id(cls) + 13 * _POINTER).value
    return ctypes.c_void_p.from_address(methods + 3 * _POINTER) if methods else None


def _slot_value(cls) -> Optional[int]:
    """The address in `cls`'s `sq_item` slot (0: NULL; None: not known)."""
    slot = _sequence_item_slot(cls)
    return None if slot is None else slot.value or 0


def _drop_sequence_item_slot(before: Optional[int]) -> None:
    """`before`: torch.Tensor's `sq_item` before the patch (`_slot_value`)."""
    generic = _slot_value(torch.Tensor)
    if before != 0 or not generic:  # not CPython's layout, a sequence already, or no new slot
        return
    pending, seen = [torch.Tensor], set()
    while pending:
        cls = pending.pop()
        if cls in seen:
            continue
        seen.add(cls)
        slot = _sequence_item_slot(cls)
        if slot is not None and slot.value == generic:
            slot.value = None
        pending.extend(type.__subclasses__(cls))


def enter(strict: bool = False) -> None:
    with _state.lock:
        if _state.depth and strict != _state.strict:
            raise RuntimeError(f"legacy_semantics() is already active with strict={_state.strict}")
        if _state.depth == 0:
            _state.patches = _install()
            _state.strict = strict
        _state.depth += 1


def leave() -> None:
    with _state.lock:
        _state.depth -= 1
        if _state.depth == 0:
            patches, _state.patches = _state.patches, None
            patches.restore()
            _state.strict = False


def active() -> bool:
    return _state.depth > 0
