"""The forward probe the differential tests share (tests/semantic/harness.py for the bundled
programs, tests/generated/judge.py for the generated ones): global forward hooks noting
whether each top-level forward call of a module with parameters recorded a graph, and which
modules with parameters ran (their parameters are compared at the end)."""
from __future__ import annotations

from typing import Any, Callable, Dict, List

import torch


def has_graph(tensor: torch.Tensor) -> bool:
    return tensor.grad_fn is not None


class ForwardProbe:
    """`profile`: one letter per top-level forward call, `T` when its first output tensor has a
    graph by `graph_of` (0.3's meaning needs the volatile-aware test), else `F`. `modules`:
    the modules that ran, first call first: the top-level ones (`own=False`; their
    parameters recursively), or every module holding parameters of its own (`own=True`)."""

    def __init__(self, graph_of: Callable[[torch.Tensor], bool] = has_graph, own: bool = False) -> None:
        self.graph_of = graph_of
        self.own = own
        self.depth = 0
        self.profile: List[str] = []
        self.modules: Dict[int, Any] = {}  # insertion-ordered

    def __enter__(self) -> "ForwardProbe":
        from torch.nn.modules import module

        self._handles = [module.register_module_forward_pre_hook(self._pre),
                         module.register_module_forward_hook(self._post)]
        return self

    def __exit__(self, *exc) -> None:
        for handle in self._handles:
            handle.remove()

    @staticmethod
    def _has_parameters(mod) -> bool:
        return next(mod.parameters(), None) is not None

    def _pre(self, mod, args) -> None:
        if self.own and mod._parameters:
            self.modules.setdefault(id(mod), mod)
        if self._has_parameters(mod):
            if self.depth == 0 and not self.own:
                self.modules.setdefault(id(mod), mod)
            self.depth += 1

    def _post(self, mod, args, output) -> None:
        if not self._has_parameters(mod):
            return
        self.depth -= 1
        if self.depth == 0:
            tensor = first_tensor(output)
            self.profile.append("T" if tensor is not None and self.graph_of(tensor) else "F")

    def parameters(self) -> List[torch.Tensor]:
        """Copies of the parameters of the modules that ran, as plain tensors."""
        return [p.detach().clone().as_subclass(torch.Tensor) for mod in self.modules.values()
                for p in mod.parameters(recurse=not self.own)]


def first_tensor(value):
    """The first tensor of a forward's output (a tensor, or nested tuples, lists and dicts)."""
    if isinstance(value, torch.Tensor):
        return value
    items = value.values() if isinstance(value, dict) else value if isinstance(value, (list, tuple)) else ()
    for item in items:
        found = first_tensor(item)
        if found is not None:
            return found
    return None
