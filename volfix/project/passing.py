"""The calls in a project's files that pass `volatile=` to a function another file defines with a
`volatile` parameter (VF105 keeps the parameter while they do: dropping it would make them
raise a TypeError, as `to_variable(x, cuda=cuda, volatile=volatile)` in ignite's engines, whose
`to_variable` is in `_utils.py`). Read from the text: a definition's head and a call on one line.
"""
from __future__ import annotations

import re
from typing import Callable, Dict, Iterable, List, Optional, Tuple

from ..files.prefilter import VOLATILE_PARAM_DEF
from .facts import REQUIRED_VOLATILE, VOLATILE_PARAM, ExternalCall

_ANY_DEF = re.compile(rb"^[ \t]*def[ \t]+(\w+)", re.M)
# `volatile` in a def's head, then (after an annotation) `=`: a parameter with a default.
_DEFAULT = re.compile(rb"\bvolatile\b[ \t]*(?::[^,)=\n]*)?=")


def volatile_param_calls(run: Iterable[str], data: Dict[str, Optional[bytes]], files: Iterable[str],
                         bytes_of: Callable[[str], Optional[bytes]], shown: Callable[[str], str]
                         ) -> Dict[str, Dict[str, List[ExternalCall]]]:
    """For each file of the run defining a function with a `volatile` parameter (from the
    bytes the run holds, `data`), the calls of that name in the project's other `.py` files
    (`files`, read with `bytes_of`) that pass `volatile=`, as `Links.external_calls` entries
    under `VOLATILE_PARAM` + the name."""
    run = set(run)
    defs: Dict[bytes, List[str]] = {}
    required: Dict[bytes, List[ExternalCall]] = {}  # name -> its defs whose `volatile` has no default
    for path in sorted(run):
        raw = data.get(path)
        if raw and b"volatile" in raw:
            for match in VOLATILE_PARAM_DEF.finditer(raw):
                defs.setdefault(match.group(1), []).append(path)
                head_end = raw.find(b"\n", match.start())
                if _DEFAULT.search(raw, match.start(), len(raw) if head_end < 0 else head_end) is None:
                    line = raw.count(b"\n", 0, match.start()) + 1
                    required.setdefault(match.group(1), []).append(ExternalCall(shown(path), line, "required",
                                                                                False, True))
    if not defs:
        return {}
    names = b"|".join(re.escape(n) for n in sorted(defs))
    call = re.compile(rb"\b(" + names + rb")[ \t]*\((?:[^()\n]|\([^()\n]*\))*?\bvolatile[ \t]*=")
    out: Dict[str, Dict[str, List[ExternalCall]]] = {}
    for other in files:
        if not other.endswith((".py", ".ipynb")):
            continue
        raw = bytes_of(other)
        if not raw or b"volatile" not in raw:
            continue
        other_shown = shown(other)
        parts = _code_parts(other, raw, other_shown)
        own = {m.group(1) for _, text in parts for m in _ANY_DEF.finditer(text)}
        for where, text in parts:
            for match in call.finditer(text):
                name = match.group(1)
                if name in own:
                    continue  # the file's (the notebook's) own `def variable(x, volatile=False)` is called
                start = text.rfind(b"\n", 0, match.start()) + 1
                line = text.count(b"\n", 0, match.start()) + 1
                for path in defs[name]:
                    if path != other:
                        found = ExternalCall(where, line, "unknown", False, other in run, match.start() - start)
                        out.setdefault(path, {}).setdefault(VOLATILE_PARAM + name.decode(), []).append(found)
                # The caller learns which defs of the name require the argument (`def wrap(tensor,
                # volatile, gpu)`): dropping it there raises a TypeError (VF105).
                needed = [d for d in required.get(name, ()) if d.path != other_shown]
                if other in run and needed:
                    calls = out.setdefault(other, {}).setdefault(REQUIRED_VOLATILE + name.decode(), [])
                    calls.extend(d for d in needed if d not in calls)
    return out


def _code_parts(path: str, raw: bytes, shown: str) -> List[Tuple[str, bytes]]:
    """(where, bytes) to scan: a `.py` file whole; a notebook's code cells, each as
    `demo.ipynb:cell 3` (a call there keeps the helper's parameter as one in a module does)."""
    if not path.endswith(".ipynb"):
        return [(shown, raw)]
    from ..notebook.jsonfile import NotebookError, parse_notebook

    try:
        cells = parse_notebook(raw).cells
    except NotebookError:
        return []
    return [(f"{shown}:cell {cell.index + 1}", cell.source.encode("utf-8")) for cell in cells
            if cell.cell_type == "code"]
