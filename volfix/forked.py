"""Forked workers for work that writes nothing: the scan, the project's facts, a check's analysis.

A `ProcessPoolExecutor` takes ~35 ms to start on Linux, 21 ms of it importing
`concurrent.futures`, `multiprocessing`, `logging` and `ctypes`: more than the scan of a large
tree saves by running on two cores. These workers are plain `os.fork()` children. They
inherit the items and every module this process imported, so a task is sent as its number
and only results travel, pickled, each worker on its own pipe.

- Tasks go out in the order given (put the largest first) to whichever worker is free, one
  at a time; with `ahead=2`, a worker is sent its next task before it finishes one, so it
  does not wait while this process is busy with a result (when tasks are many and alike).
- A worker that dies (a crash in C code, the OOM killer) fails only the task it was working
  on: that task's result is `on_death(item)`. Its other task and the rest go to the workers
  left, or to a new one.
- An exception raised by `fn` in a worker (or by pickling its result) is raised here, as in
  a serial loop; with `on_error`, it becomes that task's result `on_error(item, text)`.
- Ctrl-C reaches the workers too (the terminal signals its whole process group); they die
  of it, and this process raises KeyboardInterrupt, kills and reaps them. Leaving the loop
  early (an exception in the consumer, `break`) does the same.
- A worker reads its next task from a pipe only this process writes. When this process
  dies, that pipe closes and the worker exits: no worker outlives the run.

A fix run's analysis writes files: it uses `volfix.workers.StoppablePool`, whose workers
finish an atomic write when the run is interrupted. Linux only (`available()`): fork is
the default and cheap there; elsewhere the runner works in this process or uses that pool.
"""
from __future__ import annotations

import os
import pickle
import select
import signal
import struct
import sys
from typing import Callable, Dict, Iterator, List, Optional, Sequence, Tuple, TypeVar

Item = TypeVar("Item")
Result = TypeVar("Result")

_TASK = struct.Struct("<i")
_HEADER = struct.Struct("<iBQ")  # task number, status (0: a result, 1: an exception), payload size
_OK, _RAISED = 0, 1

# The pipe ends of live workers, in this process: a new worker closes those of its siblings,
# so that each worker sees the end of its task pipe when this process closes it (or dies).
_open_fds: List[int] = []


def available() -> bool:
    """Whether workers can be forked here (Linux)."""
    return sys.platform.startswith("linux") and hasattr(os, "fork")


class _Worker:
    __slots__ = ("pid", "tasks", "results", "queued", "buffer")

    def __init__(self, pid: int, tasks: int, results: int) -> None:
        self.pid = pid
        self.tasks = tasks  # this process writes task numbers here
        self.results = results  # and reads results here
        self.queued: List[int] = []  # tasks sent, in order; the first is under way
        self.buffer = bytearray()


def imap_unordered(fn: Callable[[Item], Result], items: Sequence[Item], workers: int,
                   on_death: Callable[[Item], Result],
                   on_error: Optional[Callable[[Item, str], Result]] = None, ahead: int = 1
                   ) -> Iterator[Tuple[int, Result]]:
    """(index, fn(items[index])) for every item, in the order the workers finish them."""
    pending = list(range(len(items)))[::-1]  # a stack: the first item is handed out first
    live: Dict[int, _Worker] = {}
    poller = select.poll()
    try:
        for _ in range(min(workers, len(items))):
            _give(_fork(fn, items), pending, live, poller, ahead)
        while live:
            for fd, _event in poller.poll():
                worker = live[fd]
                chunk = os.read(fd, 1 << 20)
                if not chunk:  # the worker exited: done, or dead
                    poller.unregister(fd)
                    _retire(live.pop(fd))
                    if worker.queued:  # it died working on the first
                        pending.extend(reversed(worker.queued[1:]))
                        yield worker.queued[0], on_death(items[worker.queued[0]])
                        if pending and all(w.tasks < 0 for w in live.values()):  # none takes tasks
                            _give(_fork(fn, items), pending, live, poller, ahead)
                    continue
                worker.buffer += chunk
                done = list(_messages(worker))
                if done:  # its next task first: the worker works while the consumer does
                    del worker.queued[:len(done)]
                    _give(worker, pending, live, poller, ahead)
                for index, status, value in done:
                    if status == _RAISED:
                        if on_error is None:
                            raise value
                        value = on_error(items[index], f"{type(value).__name__}: {value}")
                    yield index, value
    finally:
        for worker in live.values():
            _retire(worker, kill=True)


def _fork(fn: Callable, items: Sequence) -> _Worker:
    task_r, task_w = os.pipe()
    result_r, result_w = os.pipe()
    pid = os.fork()
    if pid == 0:  # the worker: never returns
        status = 1
        try:
            signal.signal(signal.SIGINT, signal.SIG_DFL)
            for fd in _open_fds + [task_w, result_r]:
                os.close(fd)
            _serve(fn, items, task_r, result_w)
            status = 0
        finally:
            os._exit(status)  # no atexit handlers, no flushing of this process's buffers
    os.close(task_r)
    os.close(result_w)
    _open_fds.extend((task_w, result_r))
    return _Worker(pid, task_w, result_r)


def _give(worker: _Worker, pending: List[int], live: Dict[int, _Worker], poller, ahead: int) -> None:
    """Send the worker tasks until it holds `ahead`; when none is left, end its task pipe
    (it exits once it has done those it holds)."""
    if worker.results not in live:
        live[worker.results] = worker
        poller.register(worker.results, select.POLLIN)
    while pending and len(worker.queued) < ahead and worker.tasks >= 0:
        try:
            os.write(worker.tasks, _TASK.pack(pending[-1]))
        except BrokenPipeError:  # it died: its end of the pipe reports that, and its tasks go back
            return
        worker.queued.append(pending.pop())
    if not pending and worker.tasks >= 0:
        _close(worker.tasks)
        worker.tasks = -1


def _retire(worker: _Worker, kill: bool = False) -> None:
    if kill:
        try:
            os.kill(worker.pid, signal.SIGKILL)
        except ProcessLookupError:
            pass
    for fd in (worker.tasks, worker.results):
        if fd >= 0:
            _close(fd)
    worker.tasks = worker.results = -1
    try:
        os.waitpid(worker.pid, 0)
    except ChildProcessError:
        pass


def _close(fd: int) -> None:
    os.close(fd)
    if fd in _open_fds:
        _open_fds.remove(fd)


def _messages(worker: _Worker) -> Iterator[Tuple[int, int, object]]:
    buffer = worker.buffer
    while len(buffer) >= _HEADER.size:
        index, status, size = _HEADER.unpack_from(buffer)
        end = _HEADER.size + size
        if len(buffer) < end:
            return
        value = pickle.loads(buffer[_HEADER.size:end])
        del buffer[:end]
        yield index, status, value


def _serve(fn: Callable, items: Sequence, tasks: int, results: int) -> None:
    """The worker's loop: a task number in, a pickled result out, until the pipe ends."""
    while True:
        raw = _read_exactly(tasks, _TASK.size)
        if raw is None:
            return
        (index,) = _TASK.unpack(raw)
        try:
            payload, status = pickle.dumps(fn(items[index]), pickle.HIGHEST_PROTOCOL), _OK
        except Exception as exc:  # noqa: BLE001 - raised again in the parent
            payload, status = _pickled_exception(exc), _RAISED
        view = memoryview(_HEADER.pack(index, status, len(payload)) + payload)
        while view:
            view = view[os.write(results, view):]


def _pickled_exception(exc: Exception) -> bytes:
    try:
        return pickle.dumps(exc, pickle.HIGHEST_PROTOCOL)
    except Exception:  # noqa: BLE001 - an exception that cannot travel: its text does
        return pickle.dumps(RuntimeError(f"{type(exc).__name__}: {exc}"), pickle.HIGHEST_PROTOCOL)


def _read_exactly(fd: int, size: int) -> Optional[bytes]:
    data = b""
    while len(data) < size:
        chunk = os.read(fd, size - len(data))
        if not chunk:
            return None
        data += chunk
    return data
