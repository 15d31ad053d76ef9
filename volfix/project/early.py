"""A caller's analysis on the project index's parse of it (issue 27).

Linking parses every file that may call a helper of another file (`index.file_calls`), and a
check then parsed and analysed the same files again, with their links: on the generated
monorepo every legacy file was parsed twice, a fifth of a cold run. When the runner asks for it
(a check: `ProjectIndex.early`), the worker that finds a file's calls analyses the file right
away, on the same parse, with the links it will have if the rest of the project adds nothing
to them (`expected_links`):

- the helpers of other files that its own calls reach (what `ProjectIndex.record` keeps);
- the bindings of the project modules it star-imports (`ProjectIndex.star_table`: for each
  module its `from x import *` lines spell; the parse says which it imports), and whether
  other files using `Variable` star-import it (`star_guess`: from the lines of their bytes,
  before the star imports are linked, which they are after the calls, from the same parses);
- no calls of its own helpers from other files, and a `Links` at all when it defines a helper
  or passes its own parameter on (it is one then).

Once the project is linked, a result is kept only when the file's links are exactly those
(`Links` compare by value), and only from the first round of calls; any other file is
analysed afterwards as before. An analysis depends on the text, its links and its settings
alone (the parse is the one the engine makes of the same bytes, read by the index and never
changed by it), so a kept result is the one the file would get later: the output is the same.
A result with an error is never kept (its message holds the stack, which differs).
"""
from __future__ import annotations

from dataclasses import dataclass
from typing import Any, Callable, Dict, List, Optional, Set, Tuple

from .facts import HOP, Links
from .stars import _notebook_star_modules_using_variable, _uses_variable, has_star_import, spelled_star_modules


@dataclass(frozen=True)
class EarlyPlan:
    """What a worker needs to analyse one caller after finding its calls (pickled to it)."""

    analyse: Callable  # (path, bytes, Document, links or None, extra) -> FileResult or None
    extra: Any  # the runner's, for `analyse` (the file's settings and display path)
    candidate: bool  # analysed even when the file has no links
    star_table: Dict[str, Optional[tuple]]  # module as spelled -> its star_bindings entry, None: not a project file
    star_exported: bool
    helper_file: bool  # the file defines a helper (or passes a flag on: it has links)
    project_wide: bool


def expected_links(found, plan: EarlyPlan, star_bindings: tuple = ()) -> Optional[Links]:
    """The file's links if no other file calls its helpers: `ProjectIndex.links` of a file
    whose calls `found` (`index.file_calls`) were the only ones recorded for it."""
    imported = {}
    derived = False
    for qual, _helper_path, sig, call, through in found:
        if call.flag != HOP:
            imported[qual] = sig
        derived = derived or through is not None
    helpers = tuple(sorted(imported.items()))
    if helpers or star_bindings or plan.star_exported or plan.helper_file or derived:
        return Links(helpers, (), star_bindings, plan.star_exported, plan.project_wide)
    return None


def analyse_ahead(path: str, raw: bytes, doc, found, plan: EarlyPlan, stars: List[str]
                  ) -> Optional[Tuple[Optional[Links], Any]]:
    """(the links assumed, the file's result), or None when the file is not analysed here.
    `stars`: the modules the parse says the file star-imports."""
    if any(module not in plan.star_table for module in stars):
        return None  # a star import its lines did not spell as expected: analysed later
    entries = [plan.star_table[module] for module in stars]
    links = expected_links(found, plan, tuple(e for e in entries if e is not None and e[1]))
    if links is None and not plan.candidate:
        return None  # no links and no candidate: no analysis at all
    result = plan.analyse(path, raw, doc, links, plan.extra)
    return None if result is None else (links, result)


def star_guess(index, py_files: List[str], modules, notebooks) -> Set[str]:
    """The project modules star-imported by a file that uses `Variable`
    (`ProjectIndex.variable_importers`), with each `.py` file's star imports read off its
    lines instead of its parse (`stars.spelled_star_modules`); a notebook's as `star_links`
    reads them."""
    found: Set[str] = set()
    for path in py_files:
        raw = index.bytes_of(path) if (path in index.run or index.project_wide) else index.data.get(path)
        if raw is not None and has_star_import(raw) and _uses_variable(raw):
            found.update(t for t in (modules.resolve(m, path) for m in spelled_star_modules(raw)) if t is not None)
    for path in notebooks:
        named = _notebook_star_modules_using_variable(index.bytes_of(path))
        found.update(t for t in (modules.resolve(m, path) for m in named) if t is not None)
    return found
