"""`Links.scalar_returns`: what the functions, classes' instances and methods of other files
return, for the files of the run whose VF401 reads or VF501 calls ask (step 3 of
`volfix.project.index`). `project.returns` reads each file's facts; this module assembles them
for a project index: which files ask, which files answer, and, for an autograd Function other
files call, whether they only call it (`function_uses`).
"""
from __future__ import annotations

import os
import re
from typing import Dict, List, Optional, Sequence, Tuple

from ..flow.scalar_callees import CALLED_ELSEWHERE
from .modules import ModuleTable
from .returns import file_returns, file_returns_asked, notebook_returns_asked, resolve_returns, unshared_functions
from .words import other_use

ROUNDS = 4  # how far a name is followed through the modules that import it
ScalarReturns = Dict[str, Tuple[Tuple[str, Tuple[str, ...]], ...]]


def scalar_links(index, py_files: List[str], modules: ModuleTable,
                 stars: Optional[Dict[str, Tuple[str, ...]]] = None, notebooks: Sequence[str] = ()) -> ScalarReturns:
    """`Links.scalar_returns` of the files of the run that VF401 reads (`.py` files and the
    run's notebooks), `index` a `ProjectIndex`: what the functions, classes' instances and
    methods of other files they ask about return. Only the files defining those are read
    (`file_returns`, cached by content), and a name one of them imports is followed to the file
    it comes from (`algo/__init__.py`: `from .ppo import PPO`)."""
    readers = [(path, index.data[path]) for path in py_files
               if path in index._asked or index.reads_other_files(path, index.data.get(path))]
    asked: Dict[str, List[str]] = index.cached_facts(readers, index.known_asked, file_returns_asked,
                                                     index.facts.put_returns_asked)
    cells = [(path, index.data[path]) for path in notebooks if index.reads_other_files(path, index.data.get(path))]
    asked.update(index.cached_facts(cells, index.known_asked, notebook_returns_asked, index.facts.put_returns_asked))
    readers += cells
    pairs = [(path, asked.get(path, ())) for path, _ in readers]
    called: Dict[str, Dict[str, List[Tuple[str, str]]]] = {}
    found = resolve_returns(pairs, modules, lambda paths, facts: returns_of(index, paths, facts), ROUNDS, stars,
                            index.whole_project, called)
    for path, names in called.items():  # the defining files of autograd Functions others call
        uses = {name: function_uses(index, path, name) for name in names}
        if path in index.run:
            mine = dict(found.get(path, ()))
            mine.update({CALLED_ELSEWHERE + name: use for name, use in uses.items()})
            found[path] = tuple(sorted(mine.items()))
        for name, use in uses.items():
            if use[0] != "used":
                continue
            for reader, key in names[name]:  # the class stays as it is: so do its calls
                theirs = dict(found.get(reader, ()))
                if theirs.get(key, ())[:2] == ("legacy", "fix"):
                    theirs[key] = ("legacy", "nofix")
                    found[reader] = tuple(sorted(theirs.items()))
    for path, keys in unshared_functions(pairs, index.files if index.whole_project else [], index.bytes_of).items():
        found[path] = tuple(sorted({**dict(found.get(path, ())), **keys}.items()))
    return found


def function_uses(index, path: str, name: str) -> Tuple[str, ...]:
    """The fact `CALLED_ELSEWHERE + name` of the file defining the autograd Function `name`:
    ("called",) when the other files of the project only import it and call what calling it
    makes; ("used", file, line) for the first that does more (`self.grl = GradReverse(l)`,
    then `self.grl(x)`: an instance the conversion would leave raising)."""
    mine = os.path.realpath(path)
    defines = re.compile(rb"(?m)^[ \t]*class[ \t]+" + re.escape(name.encode("utf-8")) + rb"\b")
    for other in index.files:
        raw = index.bytes_of(other) if os.path.realpath(other) != mine else None
        # a file defining its own class of that name (a copy of the layer) speaks of that one
        line = other_use(raw, name) if raw is not None and name.encode("utf-8") in raw \
            and not defines.search(raw) else 0
        if line:
            return ("used", index.shown(other), str(line))
    return ("called",)


def returns_of(index, paths: List[str], facts: Dict[str, Optional[tuple]]) -> None:
    """Fill `facts` (path -> (returns, imported names), None: unreadable) for `paths`,
    from the cache or from each file's reading (`file_returns`, in the workers)."""
    readable = []
    for path in paths:
        raw = index.bytes_of(path)
        facts[path] = None
        if raw is not None:
            readable.append((path, raw))
    facts.update(index.cached_facts(readable, index.facts.returns, file_returns,
                                    lambda path, raw, found: index.facts.put_returns(path, raw, *found)))
