"""Running the bundled legacy programs and comparing what they compute: shared by
test_semantic.py (hand-written expectations) and test_differential.py (the 0.3 oracle).

A run records the program's `run()` result or the exception it raised, every warning
(SEMANTICS.md fact 18), the forward-graph profile (one letter per top-level call of a module
with parameters: T = its output has a grad_fn, F = it has none) and the parameters of every
module that ran, after the run. `legacy=True` runs the program under
`volfix.legacy.legacy_semantics()`: PyTorch 0.3's meaning of `volatile`.
"""
from __future__ import annotations

import contextlib
import importlib
import importlib.util
import io
import itertools
import math
import os
import random
import sys
import tokenize
import traceback
import warnings
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Dict, List, Optional

import torch

from volfix.legacy import legacy_semantics, read_script

from forward_probe import ForwardProbe

# The programs run tiny tensors, where torch's intra-op threads only contend for the cores
# (2 shared cores: the fixture training scripts took 10-50 s with the default, 0.5 s with one).
torch.set_num_threads(1)

EXAMPLES = Path(__file__).resolve().parents[2] / "examples" / "legacy"
# A multi-module program (sibling imports, as research scripts do).
PACKAGE = EXAMPLES / "lm_package"
PACKAGE_MODULES = ("data", "main", "metrics", "model")

# Tight tolerances: the same seeds and kernels run before and after, so results should
# agree to float32 rounding at most.
RTOL, ATOL = 1e-6, 1e-7
LEGACY_NAMES = {"volatile", "Variable", "async"}


@dataclass
class Outcome:
    result: Optional[Dict[str, Any]]
    error: Optional[str]
    warnings: List[str]
    graph: str
    error_type: Optional[str] = None
    # Parameters of each module with parameters of its own, in the order the modules first ran.
    params: List[torch.Tensor] = field(default_factory=list)


_counter = itertools.count()


@contextlib.contextmanager
def _recording(legacy: bool):
    with warnings.catch_warnings(record=True) as caught, ForwardProbe(own=True) as probe:
        warnings.simplefilter("always")
        with legacy_semantics() if legacy else contextlib.nullcontext():
            yield caught, probe


def _outcome(result, error: Optional[BaseException], caught, probe: ForwardProbe) -> Outcome:
    text = None
    if error is not None:
        text = "".join(traceback.format_exception(type(error), error, error.__traceback__))
    return Outcome(result, text, [str(w.message) for w in caught], "".join(probe.profile),
                   type(error).__name__ if error else None, probe.parameters())


def run_program(source: str, directory: Path, label: str, legacy: bool = False) -> Outcome:
    """Import `source` as a fresh module from a file and call its run(). With `legacy`, under
    the 0.3 semantics, and as `python -m volfix.legacy` would run it (`async=` renamed)."""
    path = directory / f"{label}.py"
    path.write_text(source, encoding="utf-8")
    if legacy:
        path.write_text(read_script(str(path)), encoding="utf-8")
    spec = importlib.util.spec_from_file_location(f"_volfix_semantic_{next(_counter)}", path)
    module = importlib.util.module_from_spec(spec)
    result, error = None, None
    with _recording(legacy) as (caught, probe):
        try:
            spec.loader.exec_module(module)  # module-level scripts run here
            result = module.run()
        except Exception as exc:  # reported by the tests that need the result
            error = exc
    return _outcome(result, error, caught, probe)


def _globals_of(module) -> Dict[str, Any]:
    """A module-level program's results: its public globals that are tensors or numbers
    (or lists and tuples of them)."""
    def is_value(value) -> bool:
        if isinstance(value, (list, tuple)):
            return all(is_value(item) for item in value)
        return isinstance(value, (torch.Tensor, bool, int, float))
    return {name: value for name, value in vars(module).items()
            if not name.startswith("_") and is_value(value)}


def run_module(source: str, directory: Path, label: str, legacy: bool = False) -> Outcome:
    """Run `source` as a module-level program (a script: no run() to call), seeded, in
    `directory`; its result is `_globals_of` the module."""
    path = directory / f"{label}.py"
    path.write_text(source, encoding="utf-8")
    if legacy:
        path.write_text(read_script(str(path)), encoding="utf-8")
    spec = importlib.util.spec_from_file_location(f"_volfix_semantic_{next(_counter)}", path)
    module = importlib.util.module_from_spec(spec)
    result, error = None, None
    random.seed(0)
    torch.manual_seed(0)
    cwd = os.getcwd()
    os.chdir(directory)  # files a script writes (`open("config.json", "w")`) land there
    try:
        with _recording(legacy) as (caught, probe), contextlib.redirect_stdout(io.StringIO()):
            try:
                spec.loader.exec_module(module)
                result = _globals_of(module)
            except Exception as exc:
                error = exc
    finally:
        os.chdir(cwd)
    return _outcome(result, error, caught, probe)


def _purge_package_modules() -> None:
    for name in PACKAGE_MODULES:
        sys.modules.pop(name, None)


def run_package(directory: Path, legacy: bool = False) -> Outcome:
    """Import `main` from `directory` (its siblings `data` and `model` come from there too,
    as when the script runs) and call main.run()."""
    saved = {name: sys.modules[name] for name in PACKAGE_MODULES if name in sys.modules}
    _purge_package_modules()
    sys.path.insert(0, str(directory))
    importlib.invalidate_caches()
    result, error = None, None
    try:
        with _recording(legacy) as (caught, probe):
            try:
                result = importlib.import_module("main").run()
            except Exception as exc:
                error = exc
    finally:
        sys.path.remove(str(directory))
        _purge_package_modules()
        sys.modules.update(saved)
    return _outcome(result, error, caught, probe)


# --------------------------------------------------------------------------- comparing


def assert_same(before, after, where: str) -> None:
    if isinstance(before, torch.Tensor):
        assert isinstance(after, torch.Tensor), f"{where}: {type(after).__name__}, not a tensor"
        assert (before.dtype, before.shape) == (after.dtype, after.shape), where
        torch.testing.assert_close(after.detach(), before.detach(), rtol=RTOL, atol=ATOL,
                                   msg=lambda m: f"{where}: {m}")
    elif isinstance(before, float):
        assert isinstance(after, float), f"{where}: {after!r} is not a float"
        assert math.isclose(after, before, rel_tol=RTOL, abs_tol=ATOL), \
            f"{where}: {after!r} != {before!r}"
    elif isinstance(before, (list, tuple)):
        assert type(after) is type(before) and len(after) == len(before), \
            f"{where}: {after!r} != {before!r}"
        for i, (b, a) in enumerate(zip(before, after)):
            assert_same(b, a, f"{where}[{i}]")
    elif isinstance(before, dict):
        assert isinstance(after, dict) and after.keys() == before.keys(), where
        for key in before:
            assert_same(before[key], after[key], f"{where}[{key!r}]")
    else:
        assert type(after) is type(before) and after == before, \
            f"{where}: {after!r} != {before!r}"


def graph_of(tensor: torch.Tensor) -> str:
    """'graph' when the tensor has a grad_fn, 'leaf' for a leaf that requires grad, else 'data'."""
    if tensor.grad_fn is not None:
        return "graph"
    return "leaf" if tensor.requires_grad else "data"


def value_differences(before, after, where: str) -> List[str]:
    """Where two run() results differ: values (same tolerance as assert_same), types, and
    for every tensor whether it carries a graph."""
    if isinstance(before, torch.Tensor):
        if not isinstance(after, torch.Tensor):
            return [f"{where}: a tensor in 0.3, {type(after).__name__} after the fix"]
        found = []
        if graph_of(before) != graph_of(after):
            found.append(f"{where}: {graph_of(before)} in 0.3, {graph_of(after)} after the fix")
        if (before.dtype, before.shape) != (after.dtype, after.shape):
            found.append(f"{where}: {before.dtype}{tuple(before.shape)} in 0.3, "
                         f"{after.dtype}{tuple(after.shape)} after the fix")
        elif not _close(before, after):
            found.append(f"{where}: values differ")
        return found
    if isinstance(before, float) and isinstance(after, float):
        both_nan = before != before and after != after
        same = both_nan or math.isclose(after, before, rel_tol=RTOL, abs_tol=ATOL)
        return [] if same else [f"{where}: {before!r} in 0.3, {after!r} after the fix"]
    if isinstance(before, (list, tuple)) and type(after) is type(before):
        if len(before) != len(after):
            return [f"{where}: {len(before)} items in 0.3, {len(after)} after the fix"]
        return [d for i, (b, a) in enumerate(zip(before, after))
                for d in value_differences(b, a, f"{where}[{i}]")]
    if isinstance(before, dict) and isinstance(after, dict):
        if before.keys() != after.keys():
            return [f"{where}: keys {sorted(before)} in 0.3, {sorted(after)} after the fix"]
        return [d for key in before
                for d in value_differences(before[key], after[key], f"{where}[{key!r}]")]
    if type(after) is not type(before) or after != before:
        return [f"{where}: {before!r} in 0.3, {after!r} after the fix"]
    return []


def _close(before: torch.Tensor, after: torch.Tensor) -> bool:
    """Same shape and values (0.3 runs hand back Variables: compared as plain tensors)."""
    before, after = (t.detach().as_subclass(torch.Tensor) for t in (before, after))
    return before.shape == after.shape and torch.allclose(after, before, rtol=RTOL, atol=ATOL,
                                                          equal_nan=True)


def outcome_differences(before: Outcome, after: Outcome) -> List[str]:
    """Everything the oracle compares: the exception, the forward-graph profile, the result,
    and the parameters of every module that ran."""
    found = []
    if before.error_type != after.error_type:
        found.append(f"exception: {before.error_type or 'none'} in 0.3, "
                     f"{after.error_type or 'none'} after the fix")
    if before.graph != after.graph:
        found.append(f"forward graphs: {before.graph} in 0.3, {after.graph} after the fix")
    if before.error_type is None and after.error_type is None:
        found += value_differences(before.result, after.result, "run()")
    if len(before.params) != len(after.params):
        found.append(f"parameters: {len(before.params)} in 0.3, {len(after.params)} after the fix")
    else:
        found += [f"parameter {i}: values differ"
                  for i, (b, a) in enumerate(zip(before.params, after.params)) if not _close(b, a)]
    return found


# --------------------------------------------------------------------------- sources


def legacy_names_in(source: str) -> List[str]:
    """`volatile`, `Variable` and `async` as code (names, keywords, attributes), not in
    comments or strings, as `line:col name`."""
    tokens = tokenize.generate_tokens(io.StringIO(source).readline)
    return [f"{tok.start[0]}:{tok.start[1]} {tok.string}" for tok in tokens
            if tok.type == tokenize.NAME and tok.string in LEGACY_NAMES]


def volatile_warnings(outcome: Outcome) -> List[str]:
    return [message for message in outcome.warnings if "volatile" in message]


def sources_in(directory: Path) -> Dict[str, str]:
    return {p.name: p.read_text(encoding="utf-8") for p in sorted(directory.glob("*.py"))}
