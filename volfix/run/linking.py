"""The run's link step (`volfix.run.runner`): one project index per project of the run
(`volfix.project.index`), its per-file facts in forked workers, and, in a check, the callers
the index parses analysed on that parse (`Ahead`, `volfix.project.early`).
"""
from __future__ import annotations

import os
from dataclasses import dataclass
from typing import Callable, Dict, List, Optional, Sequence, Tuple

from . import forked, scan
from .boundary import analyse
from ..files.discovery import display_path
from ..files.prefilter import (GRAD_FUNCTION_HINT, VOLATILE_PARAM_DEF, asks_other_files, helper_hint,
                               torchless_volatile_attribute)
from ..project.callers_elsewhere import may_ask
from ..project.dict_attributes import asked_attributes
from ..model import FileResult
from ..settings.config import Config
from ..settings.nearest import ConfigResolver

# Projects, or a project's files, are linked by forked workers from this many on.
PARALLEL_MIN_ITEMS = 8
# Items go to the workers in chunks (the helper tables are pickled once a chunk), about this
# many a worker: a check's callers are analysed in these chunks, so a coarse last chunk would
# keep one core busy while the other waits.
CHUNKS_PER_WORKER = 12


def link(paths: Sequence[str], files: List[str], candidates: List[Tuple[str, Optional[bytes]]],
         config: Config, cache=None, workers: int = 1, ahead: Optional["Ahead"] = None) -> Dict[str, object]:
    """Links between the files of each project (`volfix.project.index`): helpers threading the
    volatile flag and their callers in other files, star imports of project modules. A caller
    that the prefilter ruled out (it need not spell `volatile`) joins the candidates; so does the
    project's own grad-mode function a candidate enters (`with utils.maybe_no_grad():`). A VF401
    candidate links to what the functions and classes of other files it reads return. When the
    run holds only some files of a project (pre-commit passes the changed ones), its other
    files are read too, never changed: a helper's callers may live there.

    Each file belongs to its nearest project root (`discovery.ProjectRoots`), and helpers
    link inside one project only: a folder of 30 repositories is 30 small indexes, linked by
    the workers side by side when there are enough of them. `ahead` (a check): the callers
    the index analysed on its parse of them go into `ahead.results` (`volfix.project.early`)."""
    from ..files import discovery

    roots = discovery.ProjectRoots()
    hinted = {path for path, data in candidates
              if data is not None and (helper_hint(data) or b"import *" in data or GRAD_FUNCTION_HINT.search(data)
                                       or VOLATILE_PARAM_DEF.search(data))}
    # Files that only need something of their project's other files, whose projects are linked
    # for that alone (`light`) unless a file hints more: VF401's reads, which need what other
    # files' functions and classes return, and the calls of what a call made
    # (`RoIAlignFunction(7, 7, 1 / 16)(features, rois)`), which VF501 rewrites when another
    # module's class is a legacy autograd Function; a `.volatile` read in a file without torch
    # (is it a tensor's flag? `Links.torch_project`); an element keying an attribute
    # (`lang.index2word[ni]`: is it a dict another file builds? `Links.dict_attributes`); a
    # function whose result may carry a region's output (do other files call it?
    # `Links.called_elsewhere`).
    readers = {path for path, data in candidates if data is not None and path not in hinted
               and (asks_other_files(data) or torchless_volatile_attribute(data) or asked_attributes(data)
                    or may_ask(data))}

    def covered(root: str) -> bool:
        return any(os.path.abspath(p) == root or root.startswith(os.path.abspath(p) + os.sep) for p in paths)

    if not hinted and not readers:
        # Nothing of the run links, unless a project reaches above a path of the run (then
        # its other files may call a helper of the run's): the project of that path itself.
        tops = {roots.root_of_directory(p if os.path.isdir(p) else os.path.dirname(p))
                for p in map(os.path.abspath, paths)}
        if all(root is None or covered(root) for root in tops):
            return {}
    in_run = set(files)
    # (the run's files, the project's other files, light, whether they are the whole project)
    groups: List[Tuple[List[str], List[str], bool, bool]] = []
    for root, members in roots.group(files).items():
        others: List[str] = []
        if root is not None and not covered(root):
            everything = discovery.discover([root], exclude=config.exclude + config.extend_exclude,
                                            respect_gitignore=config.respect_gitignore, root=root)
            others = [p for p in everything if p not in in_run and p.endswith((".py", ".pyi"))
                      and roots.root_of(p) == root]
        if others or any(p in hinted for p in members):
            groups.append((members, others, False, root is not None))
        elif any(p in readers for p in members):
            groups.append((members, others, True, root is not None))
    if not groups:
        return {}
    from ..project import index as project  # only now: most runs link nothing

    known = dict(candidates)
    shown = _DisplayPaths(os.getcwd())

    def link_group(group: Tuple[List[str], List[str], bool, bool], mapper: Callable) -> Tuple[Dict[str, object], Dict]:
        members, others, light, whole = group
        found = project.link(members, known, shown, read=scan.read_bytes, project_files=others, cache=cache,
                             mapper=mapper, early=ahead, light=light, whole_project=whole)
        analysed = {}
        if ahead is not None:  # taken out: a worker linking projects hands them back
            analysed, ahead.results = ahead.results, {}
        return found, analysed

    links: Dict[str, object] = {}
    analysed: Dict[str, FileResult] = {}
    if len(groups) >= PARALLEL_MIN_ITEMS and workers > 1 and forked.available():
        # Many projects: each worker links whole projects, one process each (the bytes a
        # worker reads stay there: the callers that join the candidates are read again).
        serial = lambda fn, items: [fn(item) for item in items]  # noqa: E731
        for part, done in map_items(lambda group: link_group(group, serial), groups, workers):
            links.update(part)
            analysed.update(done)
    else:
        for group in groups:
            part, done = link_group(group, lambda fn, items: map_items(fn, items, workers))
            links.update(part)
            analysed.update(done)
    if ahead is not None:
        ahead.results = analysed
    candidate_paths = {path for path, _ in candidates}
    for path in sorted(links):
        if path not in candidate_paths:
            data = known[path] if known.get(path) is not None else scan.read_bytes(path)
            candidates.append((path, data))  # the caller's bytes, read by project.link
    return links


class Ahead:
    """A check's offer to the project index (`ProjectIndex.early`): analyse the files of the run
    on the parse that finds their calls, with `analyse` and the file's settings."""

    def __init__(self, analyser: "EarlyAnalysis", configs: ConfigResolver, candidates: set) -> None:
        self.analyser = analyser
        self.configs = configs
        self.candidates = candidates
        self.results: Dict[str, FileResult] = {}  # path -> result, filled by `link`
        self._keys: Dict[int, str] = {}  # id of a file's Config (the resolver keeps them) -> its cache key

    def plan(self, path: str, shown: str) -> Tuple["EarlyAnalysis", Tuple[Config, str, str], bool]:
        config = self.configs.for_file(path, shown)
        key = ""
        if self.analyser.cache is not None:
            key = self._keys.get(id(config)) or self._keys.setdefault(id(config), config.cache_key())
        return self.analyser, (config, shown, key), path in self.candidates


@dataclass(frozen=True)
class EarlyAnalysis:
    """Runs in the project index's worker (pickled to it): a check's analysis of one file on
    the index's parse of its bytes, as `boundary.analyse` would make it later with these links; None
    when the cache holds that result already, or the analysis failed (a crash's message holds
    its stack: analysed again later, as before)."""

    options: Tuple[Tuple[str, object], ...]  # mode, unsafe_fixes, with_fixes
    cache: object  # a ResultCache, or None

    def __call__(self, path: str, data: bytes, doc, links, extra: Tuple[Config, str, str]) -> Optional[FileResult]:
        config, shown, config_key = extra
        if self.cache is not None and self.cache.get(  # type: ignore[attr-defined]
                result_key(self.cache, path, data, links, config_key), shown, data) is not None:
            return None
        options = dict(self.options, config=config, data=data, doc=doc)
        if links is not None:
            options["links"] = links
        result = analyse(None, path, shown, options)
        return None if result.error is not None else result


def result_key(cache, path: str, data: bytes, links, config_key: str) -> str:
    """A check's cache key for a file: a linked file's result also depends on its links."""
    keyed = data if links is None else data + b"\0volfix-links\0" + links.digest()
    return cache.key(path, keyed, "check", config_key)


class _DisplayPaths(dict):
    """`display_path` of each file from `cwd`, computed when asked: the project index of a
    large tree shows few of its files (and keys its cache by `cwd`)."""

    def __init__(self, cwd: str) -> None:
        super().__init__()
        self.cwd = cwd

    def get(self, path: str, default: Optional[str] = None) -> Optional[str]:  # type: ignore[override]
        if path not in self:
            self[path] = display_path(path, self.cwd)
        return dict.get(self, path, default)


def map_items(fn: Callable, items: list, workers: int) -> list:
    """`[fn(item) for item in items]`, by `workers` forked processes when there are enough
    items (the project index's per-file facts)."""
    if workers > 1 and len(items) >= PARALLEL_MIN_ITEMS and forked.available():
        size = max(1, len(items) // (workers * CHUNKS_PER_WORKER))
        chunks = [items[i:i + size] for i in range(0, len(items), size)]
        parts: List[list] = [[] for _ in chunks]

        def apply(chunk: list) -> list:
            return [fn(item) for item in chunk]

        for index, part in forked.imap_unordered(apply, chunks, workers, on_death=apply):
            parts[index] = part
        return [value for part in parts for value in part]
    return [fn(item) for item in items]
