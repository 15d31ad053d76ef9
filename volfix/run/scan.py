"""The scan: which files of a run may hold a finding, decided from their bytes (SPEC §8).

Most files of a modern tree never mention `volatile`, `Variable` or `async=`: reading the
bytes and the prefilter's C-level scans (`volfix.files.prefilter`) are the whole cost of a clean
run. From `PARALLEL_SCAN_MIN_FILES` files on (Linux), forked workers (`volfix.run.forked`) scan
chunks of the files while the directory walk lists the next ones, and this process imports
the engine in a thread as soon as a candidate turns up, so that the analysis workers it
forks next inherit it. Elsewhere, and for fewer files, the scan runs here.
"""
from __future__ import annotations

import itertools
import os
import stat
import threading
from typing import FrozenSet, Iterator, List, Optional, Sequence, Set, Tuple

from . import forked
from ..settings.nearest import ConfigResolver

# Scanning (read + prefilter) is spread over processes from this many files on: below it,
# forking costs more than it saves.
PARALLEL_SCAN_MIN_FILES = 400
SCAN_CHUNK = 64  # files a task of the parallel scan


def walk_and_scan(walk: Iterator[List[str]], configs: ConfigResolver, workers: int, warm: bool = False
                  ) -> Tuple[List[str], List[Tuple[str, Optional[bytes]]]]:
    """The files of the walk (sorted), and those that pass the prefilter (or cannot be read)
    with their bytes (None: unreadable). Reading and the C-level scans are the whole cost of
    a clean run: from `PARALLEL_SCAN_MIN_FILES` files on, forked workers scan the files of
    the directories walked while the walk goes on. `warm`: once a worker reports a
    candidate, import the engine here (the analysis workers forked later inherit it)."""
    found: List[str] = []
    for batch in walk:
        found.extend(batch)
        if len(found) >= PARALLEL_SCAN_MIN_FILES and workers > 1 and forked.available():
            chosen = _scan_while_walking(found, walk, configs, workers, warm)
            files = sorted(found)
            order = {path: i for i, path in enumerate(files)}
            return files, [(path, read_bytes(path)) for path in sorted(chosen, key=order.__getitem__)]
    files = sorted(found)
    return files, _scan_chunk(files, _enabled_anywhere(files, configs), keep_data=True)



def _scan_while_walking(found: List[str], walk: Iterator[List[str]], configs: ConfigResolver, workers: int,
                        warm: bool) -> List[str]:
    """The candidates among `found` and the files the rest of `walk` adds to it, scanned by
    forked workers in chunks as the walk goes on. Each chunk is tested for the codes enabled
    in the directories walked so far; a chunk scanned before a deeper configuration enabled
    more is scanned again here for those."""
    chunks: List[Tuple[List[str], FrozenSet[str]]] = []

    def tasks() -> Iterator[Tuple[List[str], FrozenSet[str]]]:
        enabled: FrozenSet[str] = frozenset()
        directories: Set[str] = set()
        start = 0
        for batch in itertools.chain([[]], walk, [None]):
            if batch:
                found.extend(batch)
            while len(found) - start >= SCAN_CHUNK or (batch is None and start < len(found)):
                chunk = found[start:start + SCAN_CHUNK]
                start += len(chunk)
                enabled = _enabled_growing(chunk, configs, enabled, directories)
                chunks.append((chunk, enabled))
                yield chunk, enabled

    chosen: List[str] = []
    importer: Optional[threading.Thread] = None
    for number, part in forked.imap_unordered(lambda task: _scan_chunk(*task), tasks(), workers,
                                              on_death=lambda task: _scan_chunk(*task), ahead=2):
        if part and warm and importer is None:
            # In a thread: this one keeps walking and handing out chunks meanwhile (an
            # import here stopped both workers for its 20 ms). The workers import nothing.
            importer = threading.Thread(target=import_engine, name="volfix-import", daemon=True)
            importer.start()
        chosen.extend(part)
    if importer is not None:
        importer.join()  # before any other fork
    final = chunks[-1][1] if chunks else frozenset()
    again = [path for chunk, enabled in chunks if enabled != final for path in chunk]
    if again:  # rare: a configuration below the first chunks enables more codes
        picked = set(chosen)
        chosen.extend(path for path in _scan_chunk([p for p in again if p not in picked], final))
    return chosen


def _enabled_growing(chunk: List[str], configs: ConfigResolver, enabled: FrozenSet[str],
                     directories: Set[str]) -> FrozenSet[str]:
    """`enabled` with the codes of the configurations in force in `chunk`'s directories not
    seen before in `directories` (which it records)."""
    if configs.fixed:
        return configs.base.enabled_codes()
    new = {os.path.dirname(path) for path in chunk} - directories
    directories |= new
    for directory in new:
        codes = configs.for_directory(directory).enabled_codes()
        if not codes <= enabled:
            enabled = enabled | codes
    return enabled


def _scan_chunk(files: Sequence[str], enabled: FrozenSet[str], keep_data: bool = False) -> list:
    """The candidates among `files` (with their bytes if `keep_data`, else their paths only,
    cheaper to send back from a worker)."""
    from ..rules.registry import prefilter

    may_need = prefilter(enabled)
    out = []
    for path in files:
        data = read_bytes(path)
        if data is None or may_need(data):
            out.append((path, data) if keep_data else path)
    return out


def import_engine() -> None:
    """What analysing a file imports: here once, inherited by the workers forked after."""
    from . import fileproc  # noqa: F401
    from ..fixes import planner  # noqa: F401 - the engine imports it at its first detection


def _enabled_anywhere(files: List[str], configs: ConfigResolver) -> FrozenSet[str]:
    """The codes some file of the run may report (the prefilter's needs): the union over
    the configurations in force in the files' directories."""
    if not files:
        return configs.base.enabled_codes()
    return _enabled_growing(files, configs, frozenset(), set())


_READ_FLAGS = (os.O_RDONLY | getattr(os, "O_BINARY", 0) | getattr(os, "O_NONBLOCK", 0)
               | getattr(os, "O_CLOEXEC", 0))


def read_bytes(path: str) -> Optional[bytes]:
    """The file's bytes, or None when it cannot be read or is not a regular file (a FIFO
    named on the command line would block): the engine then reports VF002. One open, one
    fstat and, almost always, one read of the file's size: the scan reads every file of
    the tree, and `open()` costs twice that."""
    try:
        fd = os.open(path, _READ_FLAGS)
    except OSError:
        return None
    try:
        st = os.fstat(fd)
        if not stat.S_ISREG(st.st_mode):
            return None
        data = os.read(fd, st.st_size)
        if len(data) == st.st_size and data:
            return data
        chunks = [data]  # a short read, a changed size, or none reported (`/proc`): read to the end
        while True:
            chunk = os.read(fd, 1 << 16)
            if not chunk:
                return b"".join(chunks)
            chunks.append(chunk)
    except OSError:
        return None
    finally:
        os.close(fd)
