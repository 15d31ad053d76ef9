"""What a program tells `flow.ranks` about values its syntax alone does not: the arguments its
calls pass to a function's parameters (in a notebook or a `__main__` script, where no other
file calls them), the label batches of a `DataLoader` over a torchvision dataset of class
numbers, `argparse` options (numbers, no tensors).
"""
from __future__ import annotations

import ast
from typing import List, Optional, Tuple

from ..syntax import names as nm
from .calls import bound_positional, call_sites, parameter_defaults, passed_argument
from .rank_lattice import CYCLE, Rank, join
from .scalar_callees import UNSHARED
from .shapes import is_none

_LOADERS = frozenset({"torch.utils.data.DataLoader", "torch.utils.data.dataloader.DataLoader"})
# torchvision datasets whose target is a class number (collated into a 1-dim batch).
_LABELLED_DATASETS = frozenset(f"torchvision.datasets.{name}" for name in (
    "MNIST", "FashionMNIST", "KMNIST", "EMNIST", "CIFAR10", "CIFAR100", "SVHN", "STL10", "USPS",
    "ImageFolder"))


class ProgramRanks:
    """The programs' half of `Ranks` (it supplies `rank`, `values`, `index`, `names`)."""

    def _parameter(self, fn: ast.AST, name: str, depth: int) -> Rank:
        """What the calls of `fn` in this file pass for `name` (its default where they pass
        nothing; a None passed or defaulted never reaches a tensor operation: `if x is None`).
        Only in a program (a notebook, or a script run as `__main__`), for a module-level function
        called by its name alone, so that no other file's call can pass something else."""
        arguments = self.program_arguments(fn, name)
        if arguments is None:
            return None
        out: Rank = CYCLE
        for call, arg in arguments:
            if not is_none(arg):
                out = join(out, self.rank(arg, call, depth + 1))
        return out

    def program_arguments(self, fn: ast.AST, name: str, unshared: bool = False
                          ) -> Optional[List[Tuple[ast.Call, ast.AST]]]:
        """(call, what it passes for `name`, or the default where it passes nothing) for each
        call of the module-level `fn` in a program (a notebook, or a script run as `__main__`:
        no other file calls it), or with `unshared`, in a file no other file of whose project
        names `fn` (`all_calls_here`: asked of the project, so only where a loss module may be
        passed); None when any is unknown, or there is no call."""
        if not isinstance(self.index.parents.get(fn), ast.Module) or not (
                self.in_program() or unshared and self.all_calls_here(fn)):
            return None
        passed = self.passed(fn, name)
        if not passed:
            return None
        defaults = parameter_defaults(fn)
        if any(arg is None and name not in defaults for _, arg in passed):
            return None
        return [(call, defaults[name] if arg is None else arg) for call, arg in passed]

    def passed(self, fn: ast.AST, name: str) -> Optional[List[Tuple[ast.Call, Optional[ast.AST]]]]:
        """(call, what it passes for the parameter `name`) for each call of the module-level
        `fn` in this file (`sites_of`), None where it passes nothing; None when a call may pass
        it in `*args`/`**kwargs` or `fn` is used otherwise."""
        sites = self.sites_of(fn)
        if sites is None:
            return None
        positional = bound_positional(fn, method=False)
        out = []
        for call in sites:
            arg, known = passed_argument(call, positional, name)
            if not known:
                return None
            out.append((call, arg))
        return out

    def sites_of(self, fn: ast.AST) -> Optional[list]:
        """The calls of the module-level `fn` by its name; None when its name is used otherwise
        (passed as a value), or bound otherwise. A name that top-level defs bind again (a
        notebook's cells redefining `f`) calls the def before it, read only at the top level."""
        name = fn.name  # type: ignore[attr-defined]
        if self.values._module_def(name, fn) is fn:
            sites, other = call_sites(self.index, fn)
            return None if other else sites
        statements = self.index.module_statements
        position = {id(s): k for k, s in enumerate(statements)}
        index = self.index
        defs = [s for s in statements if isinstance(s, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef))
                and s.name == name or isinstance(s, (ast.Import, ast.ImportFrom))
                and any(bound == name for bound, _ in nm.import_bindings(s))]
        defs += [index.statement_of(n) for n in index.names.get(name, ())
                 if not isinstance(n.ctx, ast.Load) and index.function_of(n) is index.tree]
        if not all(isinstance(d, ast.FunctionDef) and isinstance(index.parents.get(d), ast.Module) for d in defs):
            return None
        defs.sort(key=lambda d: position[id(d)])
        sites = []
        for node in index.names.get(name, ()):
            if not isinstance(node.ctx, ast.Load):
                continue
            own = index.statement_of(node)
            if id(own) not in position:
                return None  # inside a def or a class: which def it calls is not read
            before = [d for d in defs if position[id(d)] < position[id(own)]]
            if before and before[-1] is fn:
                parent = index.parents.get(node)
                if not (isinstance(parent, ast.Call) and parent.func is node):
                    return None
                sites.append(parent)
        return sites

    def all_calls_here(self, fn: ast.AST) -> bool:
        """The calls of the module-level `fn` in this file are all its calls: the file is a
        program, or no other file of the project names `fn` (`UNSHARED`: LSTNet's `main.py`, a
        script without a `__main__` test, passing its loss modules to `evaluate()`)."""
        return self.in_program() or UNSHARED + fn.name in self.index.scalar_returns  # type: ignore[attr-defined]

    def in_program(self) -> bool:
        if self.index.notebook:
            return True
        return any(isinstance(s, ast.If) and isinstance(s.test, ast.Compare) and ast.unparse(s.test).replace(
            "'", '"') in ('__name__ == "__main__"', '"__main__" == __name__') for s in self.index.module_statements)

    # iteration and unpacking

    def _labelled_loader(self, loader: ast.AST, at: ast.AST) -> bool:
        """A `DataLoader` (default collation) of a torchvision dataset whose targets are class
        numbers (`dset.MNIST(...)` without `target_transform`): its label batches are 1-dim."""
        call = self._made_by(loader, at, _LOADERS)
        if call is None or not call.args:
            return False
        dataset = self._made_by(call.args[0], call, _LABELLED_DATASETS)
        return dataset is not None and len(dataset.args) <= 2  # not a positional `target_transform`

    def _made_by(self, expr: ast.AST, at: ast.AST, quals: frozenset) -> Optional[ast.Call]:
        """The call of one of `quals` that `expr` is (or the one value of the name `expr`),
        when it keeps the default collation, batching and targets."""
        values = [expr] if isinstance(expr, ast.Call) else self.names.of(expr, at)
        if not values or len(values) != 1 or not isinstance(values[0], ast.Call):
            return None
        call = values[0]
        if self.index.qual(call.func) not in quals or any(isinstance(a, ast.Starred) for a in call.args):
            return None
        for k in call.keywords:
            if k.arg is None or k.arg in ("collate_fn", "target_transform") and not is_none(k.value):
                return None
            if k.arg == "batch_size" and is_none(k.value):
                return None  # unbatched: each label a number
        return call
