"""Today's meaning for the `.detach()` a fix wrote, when the fixed program runs under the 0.3
semantics.

The differential tests run the program plain `volfix fix` makes under `volfix.legacy`: the
sites it leaves keep their 0.3 meaning, so only the safe fixes themselves can differ. What a fix
writes is code for torch 2.x, and most of it means the same under the runtime (`torch.no_grad()`,
`.item()`). `.detach()` does not: in 0.3 it kept volatility (SEMANTICS.md fact 10), today it
gives a leaf that records nothing, which is what 0.3's `Variable(x.data)` and `x.volatile =
False` gave and what the fixes that write it (VF110, VF202) rely on. So each `.detach()` that is
in the fixed text and not in the original is followed by `._volfix_today()`, which clears the
runtime's volatile flag of the detached copy; the program's own `.detach()` calls keep their
0.3 meaning.
"""
from __future__ import annotations

import difflib
import re
from typing import List, Tuple

import torch

_DETACH = re.compile(r"\.detach\(\)")
TODAY = "._volfix_today()"


def _today(self):
    """The detached copy as torch 2.x gives it: no graph, and (under the runtime) not volatile."""
    if getattr(self, "_volfix_volatile", False):
        self._volfix_volatile = False
    return self


torch.Tensor._volfix_today = _today


def _kept_spans(original: str, fixed: str) -> List[Tuple[int, int]]:
    """The spans of `fixed` (offsets) that are text of `original`, kept by the fix."""
    old, new = original.splitlines(keepends=True), fixed.splitlines(keepends=True)
    starts = [0]
    for line in new:
        starts.append(starts[-1] + len(line))
    old_starts = [0]
    for line in old:
        old_starts.append(old_starts[-1] + len(line))
    spans = []
    for tag, i1, i2, j1, j2 in difflib.SequenceMatcher(None, old, new, autojunk=False).get_opcodes():
        if tag == "equal":
            spans.append((starts[j1], starts[j2]))
        elif tag == "replace":
            a, b = original[old_starts[i1]:old_starts[i2]], fixed[starts[j1]:starts[j2]]
            for block in difflib.SequenceMatcher(None, a, b, autojunk=False).get_matching_blocks():
                if block.size:
                    spans.append((starts[j1] + block.b, starts[j1] + block.b + block.size))
    return spans


def todays_detach(original: str, fixed: str) -> str:
    """`fixed`, each `.detach()` the fix wrote followed by `._volfix_today()`."""
    kept = _kept_spans(original, fixed)
    out, last = [], 0
    for match in _DETACH.finditer(fixed):
        if not any(start <= match.start() and match.end() <= end for start, end in kept):
            out += [fixed[last:match.end()], TODAY]
            last = match.end()
    out.append(fixed[last:])
    return "".join(out)
