"""Deeply nested code: a valid file whose syntax tree is deeper than Python's recursion limit
lets (a 1,000-term `1 + 1 + ...` chain is a tree 1,000 deep; `ast.dump`, libcst's visitors
and volfix's own walks recurse over it).

`call_deep(fn)` runs `fn()`; only when it raises RecursionError is it run again, in a thread
with a large stack (`STACK_BYTES`, reserved, not committed: only the pages used count) and
a recursion limit of `DEEP_LIMIT`. Every other file pays nothing. What is still too deep
raises RecursionError as before, and the caller reports it.
"""
from __future__ import annotations

import sys
import threading
from typing import Callable, List, TypeVar

T = TypeVar("T")

# CPython compiles a `1 + 1 + ...` chain of up to ~2,900 terms (a deeper one is VF001): the
# walks over such a tree need a few frames a level.
DEEP_LIMIT = 30_000
STACK_BYTES = 512 << 20  # of address space: ~17 KB a frame at DEEP_LIMIT
_lock = threading.Lock()  # one deep retry at a time: the recursion limit is the interpreter's


def call_deep(fn: Callable[[], T]) -> T:
    try:
        return fn()
    except RecursionError:
        pass
    return _in_deep_thread(fn)


def _in_deep_thread(fn: Callable[[], T]) -> T:
    outcome: List = []

    def run() -> None:
        try:
            outcome.append((True, fn()))
        except BaseException as exc:  # noqa: BLE001 - handed to the calling thread
            outcome.append((False, exc))

    with _lock:
        limit = sys.getrecursionlimit()
        previous_stack = threading.stack_size()
        try:
            threading.stack_size(STACK_BYTES)
        except (ValueError, RuntimeError):  # pragma: no cover - a platform without it
            raise RecursionError("too deeply nested for volfix") from None
        sys.setrecursionlimit(max(limit, DEEP_LIMIT))  # before the thread runs a single frame
        try:
            worker = threading.Thread(target=run, name="volfix-deep", daemon=True)
            try:
                worker.start()
            except RuntimeError:  # no thread with such a stack (an address-space limit)
                raise RecursionError("too deeply nested for volfix") from None
            finally:
                threading.stack_size(previous_stack)
            worker.join()
        finally:
            sys.setrecursionlimit(limit)
    ok, value = outcome[0]
    if ok:
        return value
    raise value
