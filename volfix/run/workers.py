"""Process pools that stop cleanly on Ctrl-C and SIGTERM, for the runner.

After SIGINT or SIGTERM -- sent to volfix alone, or to its whole process group as a terminal
or a CI cancel does -- a run stops at once and writes nothing but the files whose atomic
write was already under way:

* **Workers never start a write after the signal.** Every write asks the write gate of
  `sourcefile` first; in a worker the gate closes as soon as the worker sees SIGINT itself
  (its handler only records it: no KeyboardInterrupt can cut a worker short) or the parent
  raises the shared flag. A closed gate raises `sourcefile.WritesCancelled`.
* **The parent stops the pool.** On any exception leaving the `with` block
  (KeyboardInterrupt included) it raises the shared flag, cancels the work not yet started
  and terminates the workers (SIGTERM). A worker inside `write_file_atomic` holds SIGTERM
  until its write is complete and then exits; the others exit at once. The parent waits
  for them at most `STOP_TIMEOUT` seconds.
* Workers are started with SIGINT and SIGTERM blocked, so a signal that arrives while the
  pool starts reaches the worker only once its handler is in place (and the parent right
  after).
* A volfix that ignores SIGINT (a background job of a shell script) has workers that
  ignore it too: a SIGINT to its process group stops nothing.
* SIGTERM to the parent stops the run as SIGINT does (the CLI turns it into
  `errors.Terminated`, a KeyboardInterrupt). A parent killed outright cannot stop its
  pool: each worker checks every `PARENT_POLL` seconds that its parent is alive, and
  otherwise closes its write gate and terminates itself (after a write under way).

`ProcessPoolExecutor` has no public way to terminate its workers before Python 3.14
(`terminate_workers`); `_processes` is the attribute CPython has kept them in since 3.2.
"""
from __future__ import annotations

import contextlib
import multiprocessing
import os
import signal
import threading
import time
from concurrent.futures import ProcessPoolExecutor
from typing import Iterator, Optional

STOP_TIMEOUT = 2.0  # seconds to wait for the workers' in-flight writes after an interrupt

PARENT_POLL = 0.2  # seconds between a worker's checks that its parent is alive

_SIGINT = getattr(signal, "SIGINT", None)
_SIGTERM = getattr(signal, "SIGTERM", None)
_STOP_SIGNALS = {s for s in (_SIGINT, _SIGTERM) if s is not None}
_CAN_MASK = hasattr(signal, "pthread_sigmask") and _SIGINT is not None

# Worker side: the parent's flag, and whether this worker saw SIGINT itself.
_shared_flag = None
_interrupted = False


def _on_sigint(signum, frame) -> None:  # noqa: ARG001 - signal handler signature
    global _interrupted
    _interrupted = True
    if _shared_flag is not None:
        _shared_flag.value = 1  # a plain store in shared memory: safe in a signal handler


def _writes_allowed() -> bool:
    return not _interrupted and not (_shared_flag is not None and _shared_flag.value)


def _init_worker(flag, parent: int) -> None:
    """Runs first in every worker: record SIGINT instead of raising, close the write gate
    on it, die of SIGTERM (after a write under way), watch the parent, then accept signals."""
    global _shared_flag, _interrupted
    from ..files import sourcefile

    _shared_flag, _interrupted = flag, False
    sourcefile.set_write_gate(_writes_allowed)
    if _SIGINT is not None and signal.getsignal(_SIGINT) is not signal.SIG_IGN:
        signal.signal(_SIGINT, _on_sigint)  # ignored (volfix a background job): stays so
    if _SIGTERM is not None:
        signal.signal(_SIGTERM, signal.SIG_DFL)  # the parent's handler raises: not here
    if hasattr(os, "getppid") and _SIGTERM is not None:
        threading.Thread(target=_watch_parent, args=(parent,), name="volfix-parent-watch", daemon=True).start()
    if _CAN_MASK:
        signal.pthread_sigmask(signal.SIG_UNBLOCK, _STOP_SIGNALS)


def _watch_parent(parent: int) -> None:
    """A worker whose parent is gone (killed outright: SIGKILL, the OOM killer) closes its
    write gate and terminates itself: the executor's queues would keep it waiting forever,
    holding the run's stdout and stderr (`volfix fix . | cat` would never end)."""
    global _interrupted
    while os.getppid() == parent:
        time.sleep(PARENT_POLL)
    _interrupted = True
    os.kill(os.getpid(), _SIGTERM)  # held until a write under way is complete


class StoppablePool:
    """A `ProcessPoolExecutor` whose workers stop writing on SIGINT and are terminated
    when the block it manages is left by an exception."""

    def __init__(self, workers: int, context=None) -> None:
        self._flag = (context or multiprocessing.get_context()).RawValue("b", 0)
        self.executor = ProcessPoolExecutor(max_workers=workers, mp_context=context,
                                            initializer=_init_worker, initargs=(self._flag, os.getpid()))

    def __enter__(self) -> "StoppablePool":
        return self

    def __exit__(self, exc_type, exc, tb) -> bool:
        if exc_type is None:
            self.executor.shutdown(wait=True)
        else:
            self.stop()
        return False

    @contextlib.contextmanager
    def starting(self) -> Iterator[None]:
        """Wrap the first submits (which start the workers): SIGINT and SIGTERM stay pending
        meanwhile, and are delivered here right after."""
        if not _CAN_MASK:
            yield
            return
        previous = signal.pthread_sigmask(signal.SIG_BLOCK, _STOP_SIGNALS)
        try:
            yield
        finally:
            signal.pthread_sigmask(signal.SIG_SETMASK, previous)

    def stop(self, timeout: Optional[float] = STOP_TIMEOUT) -> None:
        """No new write anywhere, no new work; terminate the workers and wait for them."""
        self._flag.value = 1
        # Taken before shutdown(), which drops the executor's reference to it.
        manager = getattr(self.executor, "_executor_manager_thread", None)
        processes = list((getattr(self.executor, "_processes", None) or {}).values())
        for process in processes:
            with contextlib.suppress(OSError, ValueError, AttributeError):
                process.terminate()
        if not processes and hasattr(self.executor, "terminate_workers"):  # pragma: no cover
            self.executor.terminate_workers()  # a Python without `_processes`
        self.executor.shutdown(wait=False, cancel_futures=True)
        import time

        deadline = None if timeout is None else time.monotonic() + timeout
        for process in processes:
            remaining = None if deadline is None else max(0.0, deadline - time.monotonic())
            with contextlib.suppress(OSError, ValueError, AttributeError, AssertionError):
                process.join(remaining)
        # Let the executor's manager thread see its workers gone and finish now: left running
        # into interpreter exit, it races `concurrent.futures`' exit hook, which then writes to
        # a closed wake-up pipe and prints a traceback ("Bad file descriptor").
        if manager is not None:
            remaining = None if deadline is None else max(0.1, deadline - time.monotonic())
            with contextlib.suppress(RuntimeError):
                manager.join(remaining)
            # Still running (a loaded machine): take it out of the exit hook's list, whose
            # wake-up write races the thread closing its pipe. Its workers are gone; the
            # interpreter joins the thread as any other at exit.
            with contextlib.suppress(Exception):
                from concurrent.futures import process as futures_process

                futures_process._threads_wakeups.pop(manager, None)  # type: ignore[attr-defined]
