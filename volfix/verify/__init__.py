"""`volfix verify`: run the user's program before and after the migration and compare.

    result = verify(["python", "eval.py", "--split", "test"], against="HEAD")
    result.comparison.agree            # graph presence, training, exit status all the same
    render_text(result), render_json(result)
    verify(words, fix=True)            # also rewrite the one-element `[0]` reads to `.item()`

The original sources (a git revision, by default HEAD, or a copy of the project) run under
`volfix.legacy.legacy_semantics()`, PyTorch 0.3's meaning of `volatile`; the working tree
(the migrated code) runs under the installed torch. A `[0]` the original run made on a
one-element value (`loss.data[0]`: a number in 0.3, an IndexError today) that the working
tree still has is a finding too (`volfix.verify.scalars`); with `fix` it is rewritten to
`.item()` and the migrated program runs again. So is a `backward` the original gave a
gradient of shape (1,) for a one-element root (0.3's shape; `Mismatch in shape` today,
`volfix.verify.gradients`), unless the migrated run passed it. Each run is a subprocess of the tracer
(`volfix.verify._trace`) with the same seeds and environment, in the same place relative to
its project root. torch is imported only in those subprocesses.
"""
from __future__ import annotations

import json
import os
import sys
from dataclasses import dataclass, field
from typing import List, Optional

from . import gradients
from .compare import Comparison, Finding, LineMap, compare
from .runs import Run, run_environment, run_traced
from .scalars import ScalarRead, apply_fixes, find_reads, findings
from .sources import Command, VerifyError, map_into, original_sources, parse_command

__all__ = ["Finding", "Verification", "VerifyError", "render_json", "render_text", "verify"]


@dataclass
class Verification:
    command: Command
    against: str
    before: Run
    after: Run
    comparison: Comparison
    fixed: List[ScalarRead] = field(default_factory=list)  # `[0]` reads rewritten by `fix`


def verify(words: List[str], against: Optional[str] = None, timeout: Optional[float] = None,
           cwd: Optional[str] = None, python: Optional[str] = None, fix: bool = False) -> Verification:
    """Run `words` (`python eval.py ARGS`, or `eval.py ARGS`) from the original sources under
    0.3 semantics and from the working tree under plain torch; compare the two traces.
    With `fix`, the one-element `[0]` reads the original made and the working tree keeps are
    rewritten to `.item()`, and the working tree runs again. Raises VerifyError for a caller
    mistake or a setup failure."""
    cwd = os.path.realpath(cwd or os.getcwd())
    command = parse_command(words, python or sys.executable)
    work_root, original = original_sources(against, cwd)
    try:
        original_cwd = map_into(cwd, work_root, original.root)
        if command.script is not None:
            script = os.path.join(cwd, command.script)
            if not os.path.isfile(script):
                raise VerifyError(f"{command.script}: no such file in {cwd}")
            if not os.path.isfile(map_into(script, work_root, original.root)):
                raise VerifyError(f"{command.script} is not in the original ({original.label})")
        os.makedirs(original_cwd, exist_ok=True)
        before = run_traced(command, original.root, original_cwd, legacy=True, timeout=timeout,
                            env=run_environment(dict(os.environ), work_root, original.root))
        run_after = lambda: run_traced(command, work_root, cwd, legacy=False, timeout=timeout,  # noqa: E731
                                       env=run_environment(dict(os.environ), work_root, work_root))
        after = run_after()
        lines = LineMap(original.root, work_root)
        reads = find_reads(before.scalar_reads, lines)
        fixed: List[ScalarRead] = []
        problems: List[str] = []
        if fix and any(read.edit is not None for read in reads):
            fixed, problems = apply_fixes(reads, work_root)
            after = run_after()
            lines = LineMap(original.root, work_root)
            reads = find_reads(before.scalar_reads, lines)
        comparison = compare(before, after, lines)
        comparison.findings[:0] = findings(reads) + gradients.findings(before, after, lines)
        comparison.notes.extend(problems)
    finally:
        original.cleanup()
    return Verification(command, original.label, before, after, comparison, fixed)


def _size(size: float) -> str:
    from .compare import _megabytes

    return _megabytes(size)


def summary_line(result: Verification) -> str:
    c = result.comparison
    return (f"graph memory saved for backward: {_size(c.memory_before)} in {c.graphs_before} of "
            f"{c.forwards_before} forward calls before the migration (0.3 meaning, {result.against}), "
            f"{_size(c.memory_after)} in {c.graphs_after} of {c.forwards_after} after")


def render_text(result: Verification) -> str:
    """Findings (each message names its site), notes, then the summary."""
    out = [f"fixed: `{read.text}` -> `{read.fix}` at {read.file}:{read.line}" for read in result.fixed]
    if result.fixed:
        out.append("the migrated program ran again after these fixes:")
    for finding in result.comparison.findings:
        times = f" ({finding.count} calls)" if finding.count > 1 else ""
        out.append(f"{finding.message}{times}")
    for note in result.comparison.notes:
        out.append(f"note: {note}")
    out.append(summary_line(result))
    if result.comparison.agree:
        out.append("verified: the traces agree on graph presence, training and exit status")
    else:
        n = len(result.comparison.findings)
        out.append(f"{n} difference{'s' if n != 1 else ''} between the original and the migrated run")
    for label, run in (("original", result.before), ("migrated", result.after)):
        if run.status is None and not run.timed_out and run.stderr_tail:
            out.append(f"the {label} run left no exit status; the end of its stderr:\n{run.stderr_tail}")
    return "\n".join(out) + "\n"


def render_json(result: Verification) -> str:
    c = result.comparison

    def run_dict(run: Run) -> dict:
        return {"exit_status": run.status, "timed_out": run.timed_out, "exception": run.exception,
                "forward_calls": sum(e["e"] == "forward" for e in run.events),
                "backward_calls": sum(e["e"] == "backward" for e in run.events)}

    data = {
        "agree": c.agree,
        "against": result.against,
        "command": [result.command.python, *result.command.flags, *result.command.program],
        "findings": [{"kind": f.kind, "file": f.file, "line": f.line, "message": f.message,
                      "count": f.count} for f in c.findings],
        "notes": c.notes,
        "fixed": [{"file": read.file, "line": read.line, "before": read.text, "after": read.fix}
                  for read in result.fixed],
        "summary": {"graph_bytes_before": c.memory_before, "graph_bytes_after": c.memory_after,
                    "forward_calls_before": c.forwards_before, "forward_calls_after": c.forwards_after,
                    "graphs_before": c.graphs_before, "graphs_after": c.graphs_after},
        "before": run_dict(result.before),
        "after": run_dict(result.after),
    }
    return json.dumps(data, indent=2) + "\n"


def command_line(words: List[str], against: Optional[str], timeout: Optional[float],
                 output_format: str, fix: bool = False) -> "tuple[str, int]":
    """What `volfix verify` prints and its exit code: 0 when the traces agree, 1 otherwise.
    VerifyError (exit 2) propagates to the CLI."""
    if timeout is not None and timeout <= 0:
        raise VerifyError("--timeout must be a positive number of seconds")
    result = verify(words, against=against, timeout=timeout, fix=fix)
    text = render_json(result) if output_format == "json" else render_text(result)
    return text, 0 if result.comparison.agree else 1
