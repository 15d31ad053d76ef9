"""Forked workers for work that writes nothing: the scan, the project's facts, a check's analysis.

A `ProcessPoolExecutor` takes ~35 ms to start on Linux, 21 ms of it importing
`concurrent.futures`, `multiprocessing`, `logging` and `ctypes`: more than the scan of a large
tree saves by running on two cores. These workers are plain `os.fork()` children: they
inherit every module this process imported (the engine), so only the items (a list of
paths, a file's task) and the results travel, pickled, each worker on its own pipes.

- Items may come from a generator that works while the workers do: the runner's directory
  walk hands out the files of the first directories while it lists the next ones.
- Tasks go out in the order given (put the largest first) to whichever worker is free, one
  at a time; with `ahead=2`, a worker is sent its next task before it finishes one, so it
  does not wait while this process is busy (when tasks are many and alike).
- A worker that dies (a crash in C code, the OOM killer) fails only the task it was working
  on: that task's result is `on_death(item)`. Its other task and the rest go to the workers
  left, or to a new one.
- An exception raised by `fn` in a worker (or by pickling its result) is raised here, as in
  a serial loop; with `on_error`, it becomes that task's result `on_error(item, text)`.
- Ctrl-C reaches the workers too (the terminal signals its whole process group); they die
  of it, and this process raises KeyboardInterrupt, kills and reaps them. Leaving the loop
  early (an exception in the consumer, `break`) does the same. A process that ignores SIGINT
  (a background job of a shell script) has workers that ignore it too.
- A worker reads its next task from a pipe only this process writes. When this process
  dies, that pipe closes and the worker exits: no worker outlives the run.

A fix run's analysis writes files: it uses `volfix.run.workers.StoppablePool`, whose workers
finish an atomic write when the run is interrupted. Linux only (`available()`): fork is
the default and cheap there; elsewhere the runner works in this process or uses that pool.
"""
from __future__ import annotations

import atexit
import os
import pickle
import select
import signal
import struct
import sys
from collections import deque
from typing import Callable, Deque, Dict, Iterable, Iterator, List, Optional, Tuple, TypeVar

Item = TypeVar("Item")
Result = TypeVar("Result")

_TASK = struct.Struct("<iQ")  # task number, pickled item's size
_HEADER = struct.Struct("<iBQ")  # task number, status (0: a result, 1: an exception), payload size
_OK, _RAISED = 0, 1
# An item is sent ahead to a busy worker only when it fits in a pipe many times over: a
# larger one waits until its worker is idle (reading), so that this process never blocks
# writing to a worker that is itself blocked writing a result this process does not read.
_SMALL = 16 * 1024

# The pipe ends of live workers, in this process: a new worker closes those of its siblings,
# so that each worker sees the end of its task pipe when this process closes it (or dies).
_open_fds: List[int] = []
_unreaped: List[int] = []  # workers whose exit this process has not collected yet
_reap_at_exit = True  # not registered yet


def available() -> bool:
    """Whether workers can be forked here (Linux)."""
    return sys.platform.startswith("linux") and hasattr(os, "fork")


class _Worker:
    __slots__ = ("pid", "tasks", "results", "queued", "buffer")

    def __init__(self, pid: int, tasks: int, results: int) -> None:
        self.pid = pid
        self.tasks = tasks  # this process writes tasks here
        self.results = results  # and reads results here
        self.queued: List[int] = []  # tasks sent, in order; the first is under way
        self.buffer = bytearray()


def imap_unordered(fn: Callable[[Item], Result], items: Iterable[Item], workers: int,
                   on_death: Callable[[Item], Result],
                   on_error: Optional[Callable[[Item, str], Result]] = None, ahead: int = 1
                   ) -> Iterator[Tuple[int, Result]]:
    """(n, fn(item)) for every item, n counting from 0 in the order `items` gives them, in
    the order the workers finish them. Items are pickled to the workers: keep them small.
    `items` may be a generator doing work of its own (the runner's directory walk): it is
    advanced while the workers run, so that both go on at once."""
    reap()
    source = iter(items)
    held: Dict[int, Item] = {}  # items not finished, by number
    waiting: Deque[Tuple[int, bytes]] = deque()  # (number, pickled item) not sent yet
    live: Dict[int, _Worker] = {}
    poller = select.poll()
    more = True
    count = 0
    try:
        while True:
            if more:
                try:
                    item = next(source)
                except StopIteration:
                    more = False
                else:
                    number, count = count, count + 1
                    held[number] = item
                    waiting.append((number, pickle.dumps(item, pickle.HIGHEST_PROTOCOL)))
            _dispatch(fn, waiting, live, workers, poller, ahead, closing=not more)
            if not live or not (more or held):
                return  # every result is in: the workers exit on their own (see `reap`)
            for fd, _event in poller.poll(0 if more else None):
                worker = live[fd]
                chunk = os.read(fd, 1 << 20)
                if not chunk:  # the worker exited: done, or dead
                    poller.unregister(fd)
                    _retire(live.pop(fd))
                    if worker.queued:  # it died working on the first
                        for number in reversed(worker.queued[1:]):
                            waiting.appendleft((number, pickle.dumps(held[number], pickle.HIGHEST_PROTOCOL)))
                        yield worker.queued[0], on_death(held.pop(worker.queued[0]))
                    continue
                worker.buffer += chunk
                done = list(_messages(worker))
                if done:  # its next task first: the worker works while the consumer does
                    del worker.queued[:len(done)]
                    _dispatch(fn, waiting, live, workers, poller, ahead, closing=not more)
                for number, status, value in done:
                    item = held.pop(number)
                    if status == _RAISED:
                        if on_error is None:
                            raise value
                        value = on_error(item, f"{type(value).__name__}: {value}")
                    yield number, value
    finally:
        for worker in live.values():
            _retire(worker, kill=bool(worker.queued), wait=False)


def _dispatch(fn: Callable, waiting: Deque[Tuple[int, bytes]], live: Dict[int, _Worker], workers: int,
              poller, ahead: int, closing: bool) -> None:
    """Start workers for the waiting tasks (up to `workers`), send each worker tasks until it
    holds `ahead`, and when nothing is left to send, end the task pipes (each worker exits
    once it has done the tasks it holds)."""
    while waiting and len(live) < workers:
        worker = _fork(fn)
        live[worker.results] = worker
        poller.register(worker.results, select.POLLIN)
    for worker in live.values():
        while waiting and worker.tasks >= 0 and len(worker.queued) < ahead:
            number, payload = waiting[0]
            if worker.queued and len(payload) > _SMALL:
                break
            try:
                _write_all(worker.tasks, _TASK.pack(number, len(payload)) + payload)
            except BrokenPipeError:  # it died: its end of the result pipe will say so
                break
            worker.queued.append(number)
            waiting.popleft()
    if closing and not waiting:
        for worker in live.values():
            if worker.tasks >= 0:
                _close(worker.tasks)
                worker.tasks = -1


def _fork(fn: Callable) -> _Worker:
    task_r, task_w = os.pipe()
    result_r, result_w = os.pipe()
    pid = os.fork()
    if pid == 0:  # the worker: never returns
        status = 1
        try:
            if signal.getsignal(signal.SIGINT) is not signal.SIG_IGN:  # ignored (a background job): stays so
                signal.signal(signal.SIGINT, signal.SIG_DFL)
            signal.signal(signal.SIGTERM, signal.SIG_DFL)  # the CLI's handler raises: not here
            for fd in _open_fds + [task_w, result_r]:
                os.close(fd)
            _serve(fn, task_r, result_w)
            status = 0
        finally:
            os._exit(status)  # no atexit handlers, no flushing of this process's buffers
    os.close(task_r)
    os.close(result_w)
    _open_fds.extend((task_w, result_r))
    global _reap_at_exit
    if _reap_at_exit:
        atexit.register(reap, True)
        _reap_at_exit = False
    return _Worker(pid, task_w, result_r)


def _retire(worker: _Worker, kill: bool = False, wait: bool = True) -> None:
    """Close this process's ends of the worker's pipes (a worker with tasks left exits when
    it reads the end), kill it if asked, and reap it; without `wait`, only if it has exited
    already (`reap` does the others later)."""
    if kill:
        try:
            os.kill(worker.pid, signal.SIGKILL)
        except ProcessLookupError:
            pass
    for fd in (worker.tasks, worker.results):
        if fd >= 0:
            _close(fd)
    worker.tasks = worker.results = -1
    _unreaped.append(worker.pid)
    reap(block=wait)


def reap(block: bool = False) -> None:
    """Reap the workers that have exited (with `block`, wait for them all). A worker's exit
    frees its memory, which takes a few ms after its last result: a run does not wait for
    that, it goes on (the report is printed meanwhile), and this process waits for them
    when it exits (`atexit`), so that no work outlives the command."""
    for pid in list(_unreaped):
        try:
            done, _ = os.waitpid(pid, 0 if block else os.WNOHANG)
        except ChildProcessError:
            done = pid
        if done:
            _unreaped.remove(pid)


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


def _serve(fn: Callable, tasks: int, results: int) -> None:
    """The worker's loop: a pickled item in, a pickled result out, until the pipe ends."""
    while True:
        header = _read_exactly(tasks, _TASK.size)
        if header is None:
            return
        number, size = _TASK.unpack(header)
        item = pickle.loads(_read_exactly(tasks, size) or b"")
        try:
            payload, status = pickle.dumps(fn(item), pickle.HIGHEST_PROTOCOL), _OK
        except Exception as exc:  # noqa: BLE001 - raised again in the parent
            payload, status = _pickled_exception(exc), _RAISED
        _write_all(results, _HEADER.pack(number, status, len(payload)) + payload)


def _write_all(fd: int, data: bytes) -> None:
    view = memoryview(data)
    while view:
        view = view[os.write(fd, view):]


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
