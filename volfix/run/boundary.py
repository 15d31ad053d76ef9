"""The runner's per-file boundary (`volfix.run.runner`): one file through the engine, in this
process or a worker, with the cyclic GC paused; an exception that escapes the engine's own
boundary becomes that file's error, never the run's.
"""
from __future__ import annotations

import contextlib
import gc
from typing import Callable, Dict, Iterator, Optional

from ..model import FileResult

ProcessFn = Callable[..., FileResult]


def analyse(process: Optional[ProcessFn], path: str, shown: str, options: Dict) -> FileResult:
    """Runs in this process or in a worker: one file through the engine. The cyclic GC is
    off meanwhile: a file's tree and index are tens of thousands of objects and hold no
    cycles, so its collections only traversed them (8% of a large file's analysis); what a
    file leaves behind is collected after."""
    if process is None:
        from .fileproc import process_file as process
    with gc_paused():
        try:
            return process(path, display_path=shown, **options)
        except Exception as exc:  # noqa: BLE001 - the per-file boundary behind the engine's own
            return crash_result(shown, f"{type(exc).__name__}: {exc}")


@contextlib.contextmanager
def gc_paused() -> Iterator[None]:
    """The cyclic GC off inside the block (on again after, if it was on)."""
    was_enabled = gc.isenabled()
    gc.disable()
    try:
        yield
    finally:
        if was_enabled:
            gc.enable()


def crash_result(shown: str, what: str) -> FileResult:
    return FileResult(path=shown, error=f"internal error: {what} (this is a volfix bug; "
                                        "please report it with the file)")
