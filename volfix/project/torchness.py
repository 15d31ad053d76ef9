"""Which files of a run read `x.volatile` in a project that uses torch without importing it
themselves (`Links.torch_project`): a test helper asserting `batch.text.volatile` of a
torchtext batch. A project with no module importing torch has no tensor flag to read, so
such a read there is nobody's."""
from __future__ import annotations

import os
import re
from typing import Callable, FrozenSet, Optional, Sequence

from ..files.prefilter import TORCH_MODULES, torchless_volatile_attribute

# A module-level import of torch or of a package built on it.
TORCH_IMPORT = re.compile(rb"^(?:import|from)[ \t]+" + TORCH_MODULES, re.M)

Reader = Callable[[str], Optional[bytes]]


def torch_project_files(run: Sequence[str], read_run: Reader, files: Sequence[str], read: Reader) -> FrozenSet[str]:
    """The files of `run` (`read_run` gives their bytes, None if unread) that read `x.volatile`
    without naming torch (`prefilter.torchless_volatile_attribute`) while a Python file of
    `files` (read with `read`) imports torch at module level; the files nearest the first
    such reader are read first, until one does."""
    readers = [path for path in run if _reads_without_torch(read_run(path))]
    if not readers:
        return frozenset()
    here = os.path.dirname(readers[0])
    others = sorted((p for p in files if p.endswith(".py") and p != readers[0]),
                    key=lambda p: (-len(os.path.commonpath([here, os.path.dirname(p)])), p))
    if any(raw is not None and TORCH_IMPORT.search(raw) is not None for raw in map(read, others)):
        return frozenset(readers)
    return frozenset()


def _reads_without_torch(raw: Optional[bytes]) -> bool:
    return raw is not None and torchless_volatile_attribute(raw)
