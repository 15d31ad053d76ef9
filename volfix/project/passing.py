"""The calls in a project's files that pass `volatile=` to a function another file defines with a
`volatile` parameter (VF105 keeps the parameter while they do: dropping it would make them
raise a TypeError, as `to_variable(x, cuda=cuda, volatile=volatile)` in ignite's engines, whose
`to_variable` is in `_utils.py`). Read from the text: a definition's head and a call on one line.
"""
from __future__ import annotations

import re
from typing import Callable, Dict, Iterable, List, Optional

from ..files.prefilter import VOLATILE_PARAM_DEF
from .facts import VOLATILE_PARAM, ExternalCall


def volatile_param_calls(run: Iterable[str], data: Dict[str, Optional[bytes]], files: Iterable[str],
                         bytes_of: Callable[[str], Optional[bytes]], shown: Callable[[str], str]
                         ) -> Dict[str, Dict[str, List[ExternalCall]]]:
    """For each file of the run defining a function with a `volatile` parameter (from the
    bytes the run holds, `data`), the calls of that name in the project's other `.py` files
    (`files`, read with `bytes_of`) that pass `volatile=`, as `Links.external_calls` entries
    under `VOLATILE_PARAM` + the name."""
    run = set(run)
    defs: Dict[bytes, List[str]] = {}
    for path in sorted(run):
        raw = data.get(path)
        if raw and b"volatile" in raw:
            for match in VOLATILE_PARAM_DEF.finditer(raw):
                defs.setdefault(match.group(1), []).append(path)
    if not defs:
        return {}
    names = b"|".join(re.escape(n) for n in sorted(defs))
    call = re.compile(rb"\b(" + names + rb")[ \t]*\((?:[^()\n]|\([^()\n]*\))*?\bvolatile[ \t]*=")
    out: Dict[str, Dict[str, List[ExternalCall]]] = {}
    for other in files:
        if not other.endswith(".py"):
            continue
        raw = bytes_of(other)
        if not raw or b"volatile" not in raw:
            continue
        for match in call.finditer(raw):
            name = match.group(1)
            start = raw.rfind(b"\n", 0, match.start()) + 1
            if raw[start:match.start()].split()[-1:] == [b"def"]:
                continue  # another file's own `def to_var(x, volatile=False):`
            line = raw.count(b"\n", 0, match.start()) + 1
            for path in defs[name]:
                if path != other:
                    found = ExternalCall(shown(other), line, "unknown", False, other in run, match.start() - start)
                    out.setdefault(path, {}).setdefault(VOLATILE_PARAM + name.decode(), []).append(found)
    return out
