"""The progress bar of long runs: shown on stderr, only on a terminal, only once a run has
taken longer than PROGRESS_DELAY seconds (short runs show none)."""
from __future__ import annotations

import sys
from typing import Callable, List

from ..model import FileResult

PROGRESS_DELAY = 1.0  # seconds before a progress bar appears

ProgressCallback = Callable[[int, int], None]


def run_with_progress(work: Callable[[ProgressCallback], List[FileResult]],
                      label: str) -> List[FileResult]:
    """Call `work(progress)`; if it takes over PROGRESS_DELAY seconds and stderr is a
    terminal, show a progress bar fed by its `progress(done, total)` calls."""
    stream = sys.stderr
    if not getattr(stream, "isatty", lambda: False)():
        return work(lambda done, total: None)
    import threading

    lock = threading.Lock()
    state: dict = {"finished": False, "bar": None, "task": None, "done": 0, "total": None}

    def show() -> None:
        from rich.console import Console
        from rich.progress import (BarColumn, MofNCompleteColumn, Progress, SpinnerColumn,
                                   TextColumn, TimeElapsedColumn)

        with lock:
            if state["finished"]:
                return
            bar = Progress(SpinnerColumn(), TextColumn(label), BarColumn(), MofNCompleteColumn(),
                           TimeElapsedColumn(), console=Console(file=stream), transient=True)
            state["task"] = bar.add_task(label, total=state["total"], completed=state["done"])
            bar.start()
            state["bar"] = bar

    def progress(done: int, total: int) -> None:
        with lock:
            state["done"], state["total"] = done, total
            if state["bar"] is not None:
                state["bar"].update(state["task"], completed=done, total=total)

    timer = threading.Timer(PROGRESS_DELAY, show)
    timer.daemon = True
    timer.start()
    try:
        return work(progress)
    finally:
        with lock:
            state["finished"] = True
            timer.cancel()
            if state["bar"] is not None:
                state["bar"].stop()
