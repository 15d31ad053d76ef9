"""Running a command under the tracer (`volfix.verify._trace`) in a subprocess, and reading its trace."""
from __future__ import annotations

import json
import os
import signal
import subprocess
import tempfile
import threading
from dataclasses import dataclass, field
from typing import Any, Dict, List, Optional

from ._status import TORCH_MISSING_STATUS
from .sources import Command, VerifyError

# The directory holding the volfix package, so the traced interpreter can import the tracer.
_VOLFIX_PARENT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
_GRACE_SECONDS = 5  # after SIGINT at a time-out, before SIGKILL


@dataclass
class Run:
    """One traced run: its events (forward, backward, step), the one-element `[0]` reads of a
    legacy run, and how it ended."""

    events: List[Dict[str, Any]] = field(default_factory=list)
    status: Optional[int] = None  # None: no exit record (killed, os._exit, time-out)
    exception: Optional[Dict[str, Any]] = None
    timed_out: bool = False
    returncode: Optional[int] = None
    stderr_tail: str = ""
    scalar_reads: List[Dict[str, Any]] = field(default_factory=list)  # legacy runs: `[0]` of one element
    scalar_gradients: List[Dict[str, Any]] = field(default_factory=list)  # legacy: (1,) gradients of 0-dim roots

    @property
    def ended_abnormally(self) -> bool:
        return self.timed_out or self.status is None or self.status != 0


def run_traced(command: Command, root: str, cwd: str, legacy: bool, timeout: Optional[float],
               env: Dict[str, str]) -> Run:
    """Run `command` in `cwd` with the tracer (under the 0.3 semantics when `legacy`)."""
    with tempfile.TemporaryDirectory(prefix="volfix-trace-") as scratch:
        trace_path = os.path.join(scratch, "trace.jsonl")
        stderr_path = os.path.join(scratch, "stderr")
        argv = [command.python, *command.flags, "-m", "volfix.verify._trace", "--out", trace_path,
                "--root", root, *(["--legacy"] if legacy else []), "--", *command.program]
        with open(stderr_path, "wb") as stderr, _SigtermGuard() as guard:
            try:
                process = subprocess.Popen(argv, cwd=cwd, env=env, stdin=subprocess.DEVNULL,
                                           stdout=subprocess.DEVNULL, stderr=stderr,
                                           start_new_session=True)
            except OSError as error:
                raise VerifyError(f"cannot run {command.python}: {error.strerror}") from None
            timed_out = _wait(process, timeout, guard)
        run = _read_trace(trace_path)
        run.timed_out, run.returncode = timed_out, process.returncode
        with open(stderr_path, "rb") as handle:
            run.stderr_tail = handle.read()[-4000:].decode("utf-8", "replace")
    if process.returncode == TORCH_MISSING_STATUS and run.status is None and run.events == [] \
            and run.exception == {"torch_missing": True}:
        raise VerifyError(f"torch is not installed for {command.python}: volfix verify runs the "
                          "program with PyTorch; install torch where the program runs")
    if run.status is None and not timed_out and "volfix.verify._trace" in run.stderr_tail \
            and "No module named" in run.stderr_tail:
        raise VerifyError(f"{command.python} cannot import volfix: {run.stderr_tail.strip().splitlines()[-1]}")
    return run


class _Terminated(Exception):
    """SIGTERM while a run is going: the run (in a session of its own) is killed first."""


class _SigtermGuard:
    """SIGTERM handling from before the run starts until it ended: a SIGTERM that comes while
    the run is being started (the run exists, `verify` has not begun waiting for it) is kept
    and acted on once it is known, instead of killing `verify` with the run left behind (its
    own session outlives it)."""

    def __init__(self) -> None:
        self.previous = None
        self.armed = False
        self.pending = False

    def __enter__(self) -> "_SigtermGuard":
        if threading.current_thread() is threading.main_thread():
            self.previous = signal.signal(signal.SIGTERM, self._handle)
        return self

    def _handle(self, signum, frame) -> None:
        if self.armed:
            raise _Terminated()
        self.pending = True

    def arm(self) -> None:
        """From here a SIGTERM raises; one that came before raises now."""
        self.armed = True
        if self.pending:
            raise _Terminated()

    def __exit__(self, *exc) -> None:
        if self.previous is not None:
            signal.signal(signal.SIGTERM, self.previous)


def _wait(process: subprocess.Popen, timeout: Optional[float], guard: _SigtermGuard) -> bool:
    """Wait for the run; at the time-out interrupt its process group (the tracer writes its
    trace on KeyboardInterrupt), then kill it. True when it timed out. A SIGTERM to `verify`
    kills the run first and exits 143."""
    try:
        guard.arm()
        return _wait_for(process, timeout)
    except _Terminated:
        if process.poll() is None:
            _signal_group(process, signal.SIGKILL)
            process.wait()
        raise SystemExit(128 + signal.SIGTERM) from None


def _wait_for(process: subprocess.Popen, timeout: Optional[float]) -> bool:
    try:
        process.wait(timeout=timeout)
        return False
    except subprocess.TimeoutExpired:
        _signal_group(process, signal.SIGINT)
        try:
            process.wait(timeout=_GRACE_SECONDS)
        except subprocess.TimeoutExpired:
            _signal_group(process, signal.SIGKILL)
            process.wait()
        return True
    except BaseException:  # Ctrl-C or SIGTERM to verify: stop the run it started, then give up
        _signal_group(process, signal.SIGKILL)
        process.wait()
        raise


def _signal_group(process: subprocess.Popen, signum: int) -> None:
    try:
        os.killpg(process.pid, signum)
    except ProcessLookupError:
        pass


def _read_trace(path: str) -> Run:
    run = Run()
    if not os.path.exists(path):
        return run
    with open(path, encoding="utf-8") as handle:
        for line in handle:
            try:
                record = json.loads(line)
            except json.JSONDecodeError:  # the last line of a killed run
                break
            kind = record.get("e")
            if kind in ("forward", "backward", "step"):
                run.events.append(record)
            elif kind == "scalar_read":
                run.scalar_reads.append(record)
            elif kind == "scalar_gradient":
                run.scalar_gradients.append(record)
            elif kind == "exit":
                run.status, run.exception = record["status"], record["exception"]
            elif kind == "error" and record.get("torch_missing"):
                run.exception = {"torch_missing": True}
    return run


def run_environment(base: Dict[str, str], work_root: str, run_root: str) -> Dict[str, str]:
    """The program's environment with PYTHONHASHSEED fixed (unless set), PYTHONPATH entries
    inside the working tree pointed at the same place in `run_root`, and the directory
    holding volfix appended so the tracer can be imported."""
    env = dict(base)
    env.setdefault("PYTHONHASHSEED", "0")
    entries = [entry for entry in env.get("PYTHONPATH", "").split(os.pathsep) if entry]
    mapped = []
    for entry in entries:
        rel = os.path.relpath(os.path.realpath(entry), work_root)
        inside = not (rel == os.pardir or rel.startswith(os.pardir + os.sep))
        mapped.append(os.path.normpath(os.path.join(run_root, rel)) if inside else entry)
    if _VOLFIX_PARENT not in mapped:
        mapped.append(_VOLFIX_PARENT)
    env["PYTHONPATH"] = os.pathsep.join(mapped)
    return env
