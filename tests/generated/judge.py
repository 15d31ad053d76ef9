"""The differential judge: a legacy program's 0.3 meaning against its fixed versions.

For a program P (source text with a `main()` returning a dict):

    legacy   P under `volfix.legacy.legacy_semantics()`, the 0.3 meaning
    safe     `fix_source(P)` (default configuration) under plain torch
    unsafe   `fix_source(P, unsafe_fixes=True)` under plain torch

Each run is observed the same way (`Observation`): the exception type `main()` raised (or
None), every result (numbers by value; tensors by value, `requires_grad` and graph
presence), the graph presence of every top-level forward call of a module with parameters
(a global forward hook), the final parameters of every module that ran, and whether grad
mode is still on afterwards. Two observations are equal when every part agrees, floats to
float32 rounding.

Programs run in this process, each in a fresh module namespace (`volfix.legacy` installs and
removes its patches per run): a run costs 10-20 ms, while a subprocess would first import
torch, 6.6-8.7 s on the shared 2-core machine (measured 2026-11-25).

The unfixed program also runs on plain torch ("today"): where findings remain unfixed and
every aspect the fixed program gets wrong is one the unfixed program already got wrong (and
the fixed program raises no exception the unfixed one does not), the difference is legacy
code volfix reported and left (`incomplete`), not behaviour a fix changed; for the safe fix,
only if the unsafe fix (which leaves less) does not show the same difference with no
finding left and no "unsafe fix:" note. Verdicts:
- safe: `exact`, `incomplete`, or `changed` (a safe fix changed what the program does: the
  failure issue 21 is about);
- unsafe: `exact`, `incomplete`, `explained` (an applied unsafe fix carries a note saying
  what may change; volfix's notes for that start with "unsafe fix:"), or `unexplained`.
"""
from __future__ import annotations

import math
import traceback
import warnings
from contextlib import ExitStack
from dataclasses import dataclass, field
from typing import Any, Dict, List, Optional, Tuple

import torch

from volfix.api import fix_source
from volfix.model import Applicability, FileResult

from fix_written import todays_detach
from forward_probe import ForwardProbe

RTOL, ATOL = 1e-6, 1e-7
PATH = "generated_program.py"
UNSAFE_NOTE = "unsafe fix:"


@dataclass(frozen=True)
class TensorView:
    values: torch.Tensor
    requires_grad: bool
    graph: bool


@dataclass
class Observation:
    error: Optional[str] = None  # exception type name
    trace: str = ""
    results: Dict[str, Any] = field(default_factory=dict)
    forwards: str = ""  # one letter per top-level forward call: T has a graph, F has none
    params: List[torch.Tensor] = field(default_factory=list)
    grad_mode_after: bool = True


def _plain_graph(t: torch.Tensor) -> bool:
    return t.grad_fn is not None


def _legacy_graph(t: torch.Tensor) -> bool:
    from volfix.legacy import is_volatile

    return t.grad_fn is not None and not is_volatile(t)


def _requires_grad(t: torch.Tensor, graph_of) -> bool:
    """requires_grad as 0.3 reported it: never on a volatile value (SEMANTICS.md fact 1)."""
    if graph_of is _legacy_graph:
        from volfix.legacy import is_volatile

        return bool(t.requires_grad) and not is_volatile(t)
    return bool(t.requires_grad)


def _view(value, graph_of):
    if isinstance(value, torch.Tensor):
        values = value.detach().clone().as_subclass(torch.Tensor)
        return TensorView(values, _requires_grad(value, graph_of), graph_of(value))
    if isinstance(value, (list, tuple)):
        return type(value)(_view(v, graph_of) for v in value)
    if isinstance(value, dict):
        return {k: _view(v, graph_of) for k, v in value.items()}
    return value


def run(source: str, legacy: bool) -> Observation:
    """Execute `source` as a fresh module and call its main(), observing everything."""
    graph_of = _legacy_graph if legacy else _plain_graph
    namespace = {"__name__": "__volfix_generated__", "__file__": PATH}
    obs = Observation()
    torch.set_grad_enabled(True)
    code = compile(source, PATH, "exec")
    with ExitStack() as stack:
        if legacy:
            from volfix.legacy import legacy_semantics

            # strict: `Variable(variable)` raises as in 0.3, so a generated program that does it
            # (not genuine 0.3 code) shows up as a legacy exception.
            stack.enter_context(legacy_semantics(strict=True))
        stack.enter_context(warnings.catch_warnings())
        warnings.simplefilter("ignore")
        probe = stack.enter_context(ForwardProbe(graph_of))
        try:
            exec(code, namespace)
            obs.results = _view(namespace["main"](), graph_of)
        except Exception as exc:  # the exception type is part of the behaviour compared
            obs.error = type(exc).__name__
            obs.trace = traceback.format_exc(limit=-3)
        obs.forwards = "".join(probe.profile)
        obs.params = probe.parameters()
    obs.grad_mode_after = torch.is_grad_enabled()
    torch.set_grad_enabled(True)
    return obs


# ----------------------------------------------------------------------------- comparing


def _same_values(a: torch.Tensor, b: torch.Tensor) -> bool:
    return a.dtype == b.dtype and a.shape == b.shape and torch.allclose(
        a.double(), b.double(), rtol=RTOL, atol=ATOL, equal_nan=True)


def _flatten(value, where: str, out: Dict[str, Any]) -> None:
    if isinstance(value, (list, tuple)):
        out[where] = (type(value).__name__, len(value))
        for k, item in enumerate(value):
            _flatten(item, f"{where}[{k}]", out)
    elif isinstance(value, dict):
        out[where] = ("dict", tuple(sorted(map(repr, value))))
        for key, item in value.items():
            _flatten(item, f"{where}[{key!r}]", out)
    else:
        out[where] = value


def aspects(obs: Observation) -> Dict[str, Any]:
    """Everything compared, by name: `exception`, `results[...]`, `forward N`, `param N`."""
    out: Dict[str, Any] = {"exception": obs.error, "forward calls": len(obs.forwards),
                           "parameters": len(obs.params), "grad mode after main()": obs.grad_mode_after}
    _flatten(obs.results, "results", out)
    out.update((f"forward {k}", "graph" if c == "T" else "no graph") for k, c in enumerate(obs.forwards))
    out.update((f"param {k}", p) for k, p in enumerate(obs.params))
    return out


def same(a, b) -> bool:
    if isinstance(a, TensorView) or isinstance(b, TensorView):
        return (isinstance(a, TensorView) and isinstance(b, TensorView) and a.graph == b.graph
                and a.requires_grad == b.requires_grad and _same_values(a.values, b.values))
    if isinstance(a, torch.Tensor) or isinstance(b, torch.Tensor):
        return isinstance(a, torch.Tensor) and isinstance(b, torch.Tensor) and _same_values(a, b)
    numbers = (int, float)
    if isinstance(a, numbers) and isinstance(b, numbers) and not isinstance(a, bool) and not isinstance(b, bool):
        return math.isclose(a, b, rel_tol=RTOL, abs_tol=ATOL)
    return type(a) is type(b) and a == b


def _show(value) -> str:
    if isinstance(value, TensorView):
        return f"tensor(graph={value.graph}, requires_grad={value.requires_grad}, sum={float(value.values.sum()):.6g})"
    if isinstance(value, torch.Tensor):
        return f"tensor(sum={float(value.sum()):.6g})"
    return repr(value)


def differences(before: Observation, after: Observation) -> Dict[str, str]:
    """The aspects that tell `after` apart from `before`, each with `before -> after`."""
    a, b = aspects(before), aspects(after)
    missing = object()
    return {key: f"{_show(a.get(key, missing))} -> {_show(b.get(key, missing))}".replace(repr(missing), "absent")
            for key in list(a) + [k for k in b if k not in a]
            if not same(a.get(key, missing), b.get(key, missing))}


# ----------------------------------------------------------------------------- verdicts


@dataclass
class Side:
    """One fixed version: its source, what volfix said, and how it differs from 0.3."""

    fixed: FileResult
    observation: Optional[Observation]
    diffs: Dict[str, str]
    # Findings remain, and the unfixed program already differs from 0.3 on today's torch in
    # every aspect where this one does: legacy code volfix reported and left, not behaviour a
    # fix changed.
    left_as_legacy: bool = False

    @property
    def source(self) -> str:
        return self.fixed.fixed_source or ""

    @property
    def remaining(self) -> Tuple[str, ...]:
        return tuple(sorted({d.code for d in self.fixed.diagnostics}))

    @property
    def unsafe_notes(self) -> Tuple[str, ...]:
        return tuple(d.note for d in self.fixed.applied
                     if d.fix is not None and d.fix.applicability is Applicability.UNSAFE and d.note)

    @property
    def explained(self) -> bool:
        return any(note.startswith(UNSAFE_NOTE) for note in self.unsafe_notes)


@dataclass
class Verdict:
    source: str
    legacy: Observation
    today: Observation  # the unfixed program on plain torch
    safe: Side
    unsafe: Side

    @property
    def safe_class(self) -> str:
        """exact; incomplete (differs only where reported legacy code was left); changed."""
        if self.safe.fixed.error:
            return "volfix-error"
        if not self.safe.diffs:
            return "exact"
        return "incomplete" if self.safe.left_as_legacy else "changed"

    @property
    def unsafe_class(self) -> str:
        """exact; incomplete; explained (an "unsafe fix:" note says what may change); unexplained."""
        if self.unsafe.fixed.error:
            return "volfix-error"
        if not self.unsafe.diffs:
            return "exact"
        if self.unsafe.left_as_legacy:
            return "incomplete"
        return "explained" if self.unsafe.explained else "unexplained"

    @property
    def legacy_raised(self) -> bool:
        """The original raised under the 0.3 semantics (a volatile value reached backward():
        SEMANTICS.md fact 5): not a program that ever worked under 0.3, so "matches 0.3" would
        mean "crashes the same way". Counted in a row of its own and left out of the exactness
        share (scripts/evaluation generated); its safe fix is judged as any other's."""
        return self.legacy.error is not None

    @property
    def failed(self) -> bool:
        return self.safe_class in ("changed", "volfix-error") or self.unsafe_class in ("unexplained", "volfix-error")

    def report(self) -> str:
        """A triage text: what differs, volfix's notes, and the three sources."""
        lines = [f"# safe: {self.safe_class}; unsafe: {self.unsafe_class}",
                 f"# legacy (0.3): exception={self.legacy.error} forwards={self.legacy.forwards or '-'}",
                 f"# today, unfixed: exception={self.today.error} forwards={self.today.forwards or '-'}"]
        if self.legacy.error:
            lines.append(f"# legacy raised: {self.legacy.trace.strip().splitlines()[-1]}")
        for name, side in (("safe", self.safe), ("unsafe", self.unsafe)):
            lines += [f"# {name} differs: {key}: {text}" for key, text in side.diffs.items()]
            lines += [f"# {name} left unfixed: {', '.join(side.remaining)}"] if side.remaining else []
            lines += [f"# {name} applied: {d.code} {d.fix.applicability.value} line {d.location.row}"
                      f"{': ' + d.note if d.note else ''}" for d in side.fixed.applied if d.fix]
            if side.observation is not None and side.observation.error:
                lines.append(f"# {name} raised: {side.observation.trace.strip().splitlines()[-1]}")
        lines += ["", self.source, "# ---------------- safe fix", self.safe.source,
                  "# ---------------- unsafe fix", self.unsafe.source]
        return "\n".join(lines)


def _side(source: str, legacy: Observation, today: Observation, unsafe: bool,
          reuse: Optional[Side] = None) -> Side:
    fixed = fix_source(source, path=PATH, unsafe_fixes=unsafe)
    if fixed.error:
        return Side(fixed, None, {"volfix": fixed.error})
    # Plain `fix` leaves the sites it cannot fix safely as they were: run under the 0.3
    # semantics, they keep their 0.3 meaning, so only the safe fixes themselves can show a
    # difference (SPEC §2.10). `--unsafe-fixes` leaves nothing legacy: plain torch.
    if reuse is not None and reuse.source == fixed.fixed_source and not unsafe:
        observation, diffs = reuse.observation, reuse.diffs
    else:
        # The `.detach()` a fix wrote keeps today's meaning there (tests/fix_written.py).
        observation = run(fixed.fixed_source if unsafe else todays_detach(source, fixed.fixed_source),
                          legacy=not unsafe)
        diffs = differences(legacy, observation)
    already = differences(legacy, today)
    # An exception the unfixed program does not raise is always the fixes' doing.
    left = (bool(fixed.diagnostics) and all(key in already for key in diffs)
            and ("exception" not in diffs or observation.error == today.error))
    return Side(fixed, observation, diffs, left)


def judge(source: str) -> Verdict:
    legacy = run(source, legacy=True)
    today = run(source, legacy=False)
    safe = _side(source, legacy, today, unsafe=False)
    unsafe = _side(source, legacy, today, unsafe=True, reuse=safe)
    if (safe.left_as_legacy and not unsafe.fixed.diagnostics and not unsafe.explained
            and any(key in unsafe.diffs for key in safe.diffs)):
        # With every finding fixed and no note saying what may change, the difference is still
        # there: what was left unfixed in safe mode does not explain it, an applied fix does.
        safe.left_as_legacy = False
    return Verdict(source, legacy, today, safe, unsafe)
