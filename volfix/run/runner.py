"""Run orchestration: discover -> read bytes -> prefilter -> cache -> analyse candidates.

Most files of a modern tree never mention `volatile`, `Variable` or `async=`, so a run costs
about as much as reading the bytes: files are read once as bytes and tested by
`prefilter.may_need_analysis`; only candidates are hashed, looked up in the cache and
handed to `fileproc.process_file` (which decodes, parses, analyses and, in fix mode, writes).

- **Skipped files produce no FileResult.** A file that fails the prefilter cannot have a
  finding (SPEC §8; VF001 is reported only for candidates, see `prefilter`), so the result
  list holds the candidates only; `RunStats` says how many files were walked.
- **Parallelism.** On Linux, work that writes nothing runs in forked workers
  (`volfix.run.forked`: a fork costs ~1 ms, a `ProcessPoolExecutor` ~35 ms): the scan of a
  large tree (`volfix.run.scan`: read + prefilter, in chunks handed out while the walk lists
  the next directories), the project's facts (`volfix.run.linking`; in a check, the callers
  the index parses are analysed there, on that parse), and a check's analysis of the other
  candidates (`PARALLEL_FORK_MIN_LINES`). The engine is imported in a thread while the scan workers
  run, so the analysis workers forked next inherit it. A fix's analysis writes files: it uses a
  `ProcessPoolExecutor` (`jobs` workers, default: every usable core) when there are enough
  candidates to pay for it (`PARALLEL_MIN_FILES` files or `PARALLEL_MIN_LINES` lines).
  Elsewhere (macOS, Windows: spawn) the scan stays in this process and only analysis uses
  that pool.
- **Failures stay per file.** The engine catches errors per file; the runner is a second
  boundary for what the engine cannot catch: an exception escaping `process_file`, or a
  worker process that dies (segfault, out of memory). A forked worker's death fails the file
  it held; a pool's fails every file under way, which are retried one by one in a fresh
  worker, and the one that kills it again gets a FileResult with `error` set.
- **Ctrl-C.** SIGINT stops a run within moments. Forked workers die of it (they write
  nothing); the fix pool is a `workers.StoppablePool`, whose workers finish the atomic
  writes under way and start no other. The KeyboardInterrupt then reaches the caller (the
  CLI exits 130).
- **Laziness.** This module imports neither libcst, rich nor the engine; the engine is
  imported only when a candidate must be analysed (not on a cache hit).

Results are sorted by path; paths are shown relative to the current directory when the file
is below it.
"""
from __future__ import annotations

import os
import sys
from dataclasses import dataclass, replace
from typing import Callable, Dict, List, Optional, Sequence, Tuple

from . import forked, scan
from .boundary import ProcessFn, analyse as _analyse, crash_result as _crash_result, gc_paused as _gc_paused
from ..files.discovery import display_path
from ..settings.config import Config
from ..model import FileResult
from ..settings.nearest import ConfigResolver
from .linking import Ahead, EarlyAnalysis, link as _link, result_key as _result_key
from .options import RunOptions
# A process pool costs a fork per worker and a pickle per result: use one only when the
# candidates are more than this many files, or this many lines in total.
PARALLEL_MIN_FILES = 8
PARALLEL_MIN_LINES = 20_000
# A check's candidates are analysed by forked workers from this many lines on (~20 ms of
# analysis; a fork and the results' pickles cost ~2 ms).
PARALLEL_FORK_MIN_LINES = 2_000


@dataclass
class RunStats:
    """What a run did, for `--verbose` and for the benchmark."""

    discovered: int = 0  # files walked (or named)
    candidates: int = 0  # files that passed the prefilter, or could not be read
    cache_hits: int = 0
    analysed: int = 0  # files handed to the engine
    lines_analysed: int = 0
    workers: int = 0  # 0: analysed in this process


@dataclass
class _Task:
    path: str  # absolute
    display: str
    lines: int
    config: Config  # the file's effective settings (nearest configuration, per-file ignores)
    cache_key: Optional[str] = None
    data: Optional[bytes] = None  # kept until the result is cached
    links: Optional[object] = None  # project.Links: this file's helpers in other files


def default_jobs() -> int:
    """Every core this process may run on."""
    try:
        return max(1, len(os.sched_getaffinity(0)))  # type: ignore[attr-defined]
    except (AttributeError, OSError):
        return max(1, os.cpu_count() or 1)


def run(paths: Sequence[str], *, config: Config, options: RunOptions = RunOptions(),
        configs: Optional[ConfigResolver] = None, _process: Optional[ProcessFn] = None) -> List[FileResult]:
    """Check, fix in place or compute fixes without writing (`options.mode`) every file under
    `paths`. Returns one FileResult per candidate file, sorted by path; files the prefilter
    rules out have none.

    `configs` gives each file its own settings (the nearest configuration file,
    `volfix.settings.nearest`); without it, `config` applies to every file. `_process`
    replaces `fileproc.process_file` (tests); it must be picklable for the process pool.
    With `options.review` (`volfix.engine.review`), files are analysed in this process one at
    a time, in path order, each fix applied only when `review` accepts it.

    KeyboardInterrupt (Ctrl-C) stops the run: the workers finish the writes under way and
    start no other (`volfix.run.workers`), and the exception propagates.
    """
    return run_with_stats(paths, config=config, options=options, configs=configs, _process=_process)[0]


def run_with_stats(paths: Sequence[str], *, config: Config, options: RunOptions = RunOptions(),
                   configs: Optional[ConfigResolver] = None,
                   _process: Optional[ProcessFn] = None) -> Tuple[List[FileResult], RunStats]:
    """`run`, also returning what the run did."""
    from ..files import discovery

    if options.unsafe_fixes is None:
        options = replace(options, unsafe_fixes=config.unsafe_fixes)
    if options.mode != "check" and options.with_fixes:
        options = replace(options, with_fixes=False)
    workers = options.jobs or default_jobs()
    stats = RunStats()
    configs = configs or ConfigResolver.single(config)
    root = discovery.project_root(config.source)
    walk = discovery.walk(paths, exclude=config.exclude + config.extend_exclude,
                          respect_gitignore=config.respect_gitignore, force_exclude=options.force_exclude,
                          root=root, excluders=None if configs.fixed else configs.excluder_for)
    if options.shard is not None:  # the whole walk first: which part a project falls to depends on all
        from .shards import select

        walk = iter([select([path for batch in walk for path in batch], options.shard)])
    files, candidates = scan.walk_and_scan(walk, configs, workers, warm=_process is None)
    stats.discovered = len(files)
    if options.progress is not None:
        options.progress(0, len(files))

    cache = None
    if options.use_cache:
        from .cache import ResultCache

        cache = ResultCache(root, config.cache_key())
    run = _Run(paths, config, configs, options, workers, cache, stats, _process)
    return _run_candidates(run, files, candidates), stats


@dataclass
class _Run:
    """What every step of one run reads: its paths, settings, options and machinery."""

    paths: Sequence[str]
    config: Config
    configs: ConfigResolver
    options: RunOptions
    workers: int
    cache: object  # a ResultCache, or None
    stats: RunStats
    process: Optional[ProcessFn]


def _run_candidates(run: _Run, files: List[str], candidates: List[Tuple[str, Optional[bytes]]]
                    ) -> List[FileResult]:
    """Link, look up and analyse the `candidates` among `files`."""
    opts, stats, cache, progress, mode = run.options, run.stats, run.cache, run.options.progress, run.options.mode
    total = len(files)
    ahead = None
    if mode == "check" and opts.review is None and run.process is None:
        options = {"mode": mode, "unsafe_fixes": opts.unsafe_fixes}
        if opts.with_fixes:
            options["with_fixes"] = True
        ahead = Ahead(EarlyAnalysis(tuple(options.items()), cache), run.configs, {p for p, _ in candidates})
    links = _link(run.paths, files, candidates, run.config, cache, run.workers, ahead)
    stats.candidates = len(candidates)
    results, tasks = _lookup(candidates, cache, mode, links, run.configs, opts.with_fixes)
    stats.cache_hits = len(results)
    # The callers the project index analysed on its parse of them (`volfix.project.early`).
    early = [t for t in tasks if ahead is not None and t.path in ahead.results]
    if early:
        tasks = [t for t in tasks if t.path not in ahead.results]  # type: ignore[union-attr]
    done = total - len(tasks) - len(early)
    if progress is not None:
        progress(done, total)

    def finished(task: _Task, result: FileResult) -> None:
        nonlocal done
        results.append(result)
        if cache is not None and mode == "check" and task.cache_key is not None:
            cache.put(task.cache_key, result, task.data)
        task.data = None
        done += 1
        if progress is not None:
            progress(done, total)

    for task in early:
        finished(task, ahead.results[task.path])  # type: ignore[union-attr]
    stats.analysed = len(tasks) + len(early)
    stats.lines_analysed = sum(t.lines for t in tasks + early)
    lines_left = sum(t.lines for t in tasks)
    options = {"mode": mode, "unsafe_fixes": opts.unsafe_fixes}
    if opts.with_fixes:  # JSON/SARIF: every fix's edits (a result with them is cached as any other)
        options["with_fixes"] = True
    workers = min(run.workers, len(tasks))
    if opts.review is not None:
        # The callback talks to this process (a terminal, a test): no pool, one file at a time.
        options["review"] = opts.review
        workers = 1
        tasks.sort(key=lambda t: t.display)
    if workers > 1 and mode == "check" and forked.available() and lines_left >= PARALLEL_FORK_MIN_LINES:
        stats.workers = workers
        _run_forked(tasks, options, workers, run.process, finished)
    elif workers > 1 and (len(tasks) > PARALLEL_MIN_FILES or lines_left > PARALLEL_MIN_LINES):
        stats.workers = workers
        _run_pool(tasks, options, workers, run.process, finished)
    else:
        for task in tasks:
            finished(task, _analyse(run.process, task.path, task.display, _task_options(options, task)))
    relink = lambda fresh: _link(run.paths, files, fresh, run.config, cache, run.workers)  # noqa: E731
    if mode in ("fix", "diff") and links and opts.review is None:
        results = _settle(results, tasks, links, options, run.process, relink)
    elif mode == "check" and links and any(_awaiting(r) for r in results):
        results = _as_one_fix_run(results, files, candidates, links, run)
    results.sort(key=lambda r: r.path)
    return results


MAX_SETTLE_ROUNDS = 5
# check previews the fix run of a waiting helper (`_as_one_fix_run`) when it and its callers are
# at most this many files: the preview fixes them all in memory, in this process (a helper
# called from 300 files of a monorepo cost 20 s a run, warm or cold, for one finding's mark).
PREVIEW_MAX_FILES = 40


def _settle(results: List[FileResult], tasks: List[_Task], links: Dict[str, object], options: Dict,
            process: Optional[ProcessFn], relink: Callable,
            late: Optional[Dict[str, List]] = None) -> List[FileResult]:
    """Fix and diff mode, files linked across the project: a helper is unwrapped only once the
    calls passing a true flag have their regions, and those were written by other files' tasks
    of this run. Link again from the fixed files and fix the files whose links changed, until
    nothing changes: one `volfix fix` converges, as a second run would. In diff mode nothing
    was written: the fixed files are the results' texts, and `--diff` shows what fix writes.
    `late`, when given, collects by display path the findings fixed only in these rounds."""
    from .fileproc import fixed_bytes

    in_memory = options.get("mode") == "diff"
    by_path = {task.path: task for task in tasks}
    position = {r.path: i for i, r in enumerate(results)}
    original = {path: scan.read_bytes(path) for path in by_path} if in_memory else {}

    def current(task: _Task) -> Optional[bytes]:
        data = original[task.path]
        i = position.get(task.display)
        if data is None or i is None:
            return data
        try:
            return fixed_bytes(task.path, results[i], data)
        except Exception:  # noqa: BLE001 - not encodable: fix mode would not have written it either
            return data

    for _ in range(MAX_SETTLE_ROUNDS):
        if not any(r.changed for r in results):
            break
        fresh = [(path, current(task) if in_memory else scan.read_bytes(path)) for path, task in by_path.items()]
        new_links = relink(fresh)
        again = [by_path[path] for path in by_path  # new links, or none any more (the helper was fixed)
                 if _links_key(new_links.get(path)) != _links_key(links.get(path))]
        links = new_links
        if not again:
            break
        changed_any = False
        data = dict(fresh)
        for task in sorted(again, key=lambda t: t.display):
            task.links = links.get(task.path)
            i = position.get(task.display)
            if i is None:
                continue
            options_here = _task_options(options, task)
            if in_memory:
                if data[task.path] is None:
                    continue
                options_here["data"] = data[task.path]
            second = _analyse(process, task.path, task.display, options_here)
            results[i] = _merged(results[i], second)
            if late is not None and second.changed:
                late.setdefault(task.display, []).extend(second.applied)
            changed_any = changed_any or second.changed
        if not changed_any:
            break
    return results


def _awaiting(result: FileResult) -> bool:
    from ..flow.follow import is_awaiting

    return any(d.fix is not None and is_awaiting(d.note) for d in result.diagnostics)


def _as_one_fix_run(results: List[FileResult], files: List[str], candidates: List[Tuple[str, Optional[bytes]]],
                    links: Dict[str, object], run: _Run) -> List[FileResult]:
    """Check mode: a helper's fix that waits for its callers' regions in other files is unsafe
    for its file alone, but one `volfix fix` run writes those regions and then applies it
    (`_settle`). Preview that run of the linked files (diff mode: nothing written, no
    --unsafe-fixes) and count the fixes it applies late as it will: safe, with a note saying
    so. `check`, `--statistics`, `[*]` and the JSON fixes then agree with `volfix fix`."""
    from dataclasses import replace as with_

    from ..flow.follow import is_awaiting, settled_note
    from ..model import Applicability

    from ..files import discovery

    # Only the projects holding such a fix, and in them only the files the late fix depends on
    # (`_involved`): they are fixed in memory; the project's other linked files are linked again
    # as they are (a whole monorepo previewed for one waiting helper took 20 s).
    roots = discovery.ProjectRoots()
    waiting = {r.path for r in results if _awaiting(r)}
    cwd = os.getcwd()
    projects = {roots.root_of(path) for path, _ in candidates if display_path(path, cwd) in waiting}
    members = [path for path in files if roots.root_of(path) in projects]
    linked = [(path, data) for path, data in candidates if path in links and roots.root_of(path) in projects]
    involved = _involved(linked, waiting, links, cwd)
    if len(involved) > PREVIEW_MAX_FILES:
        return results  # a helper called all over a big project: its note says what fix will do
    _, tasks = _lookup([item for item in linked if item[0] in involved], None, "diff", links, run.configs)
    unchanged = [item for item in linked if item[0] not in involved]
    relink = lambda fresh: _link(run.paths, members, list(fresh) + unchanged, run.config, run.cache,  # noqa: E731
                                 run.workers)
    options = {"mode": "diff", "unsafe_fixes": False}
    preview = [_analyse(run.process, t.path, t.display, _task_options(options, t)) for t in tasks]
    late: Dict[str, List] = {}
    _settle(preview, tasks, links, options, run.process, relink, late)
    out = []
    for result in results:
        fixed = list(late.get(result.path, ()))
        if not fixed or not _awaiting(result):
            out.append(result)
            continue
        diagnostics = []
        for d in result.diagnostics:
            match = next((a for a in fixed if a.code == d.code and a.snippet == d.snippet), None) \
                if d.fix is not None and is_awaiting(d.note) else None
            if match is not None:
                fixed.remove(match)
                d = with_(d, fix=with_(d.fix, applicability=Applicability.SAFE), note=settled_note(d.note))
            diagnostics.append(d)
        out.append(with_(result, diagnostics=tuple(diagnostics)))
    return out


def _involved(linked: List[Tuple[str, Optional[bytes]]], waiting: set, links: Dict[str, object],
              cwd: str) -> set:
    """The linked files a waiting helper's late fix depends on: the files holding such a fix and
    the files calling their helpers, transitively (a caller's own region may wait for its callers)."""
    by_shown = {display_path(path, cwd): path for path, _ in linked}
    known = {path for path, _ in linked}

    def absolute(shown: str) -> Optional[str]:
        if shown in by_shown:
            return by_shown[shown]
        path = os.path.abspath(shown)
        return path if path in known else None

    todo = [by_shown[shown] for shown in waiting if shown in by_shown]
    found = set(todo)
    while todo:
        path = todo.pop()
        facts = links.get(path)
        if facts is None:
            continue
        for shown in [call.path for _, calls in facts.external_calls for call in calls]:  # type: ignore[attr-defined]
            other = absolute(shown)
            if other is not None and other not in found:
                found.add(other)
                todo.append(other)
    return found


def _links_key(links) -> Optional[bytes]:
    return None if links is None else links.digest()


def _merged(first: FileResult, second: FileResult) -> FileResult:
    """One file fixed twice in a run, reported as one fix."""
    return replace(second, source=first.source, fixed_count=first.fixed_count + second.fixed_count,
                   changed=first.changed or second.changed,
                   applied_codes=first.applied_codes + second.applied_codes,
                   applied=first.applied + second.applied)


def _task_options(options: Dict, task: _Task) -> Dict:
    if task.links is None:
        return dict(options, config=task.config)
    return dict(options, config=task.config, links=task.links)


def _lookup(candidates: List[Tuple[str, Optional[bytes]]], cache, mode: str,
            links: Optional[Dict[str, object]], configs: ConfigResolver, with_fixes: bool = False
            ) -> Tuple[List[FileResult], List[_Task]]:
    """Cache hits as results; the other candidates as tasks for the engine. Each task
    carries its file's effective configuration, whose key is part of the cache key."""
    cwd = os.getcwd()
    results: List[FileResult] = []
    tasks: List[_Task] = []
    config_keys: Dict[int, str] = {}
    # This loop allocates many small acyclic objects (cached results) and no cycles: the
    # cyclic GC would only rescan them, which costs up to half of a warm-cache run.
    with _gc_paused():
        for path, data in candidates:
            shown = display_path(path, cwd)
            task = _Task(path, shown, data.count(b"\n") + 1 if data is not None else 0,
                         config=configs.for_file(path, shown))
            task.links = links.get(path) if links else None
            if cache is not None and data is not None:
                config_key = config_keys.get(id(task.config))
                if config_key is None:
                    config_key = config_keys[id(task.config)] = task.config.cache_key()
                task.cache_key = _result_key(cache, path, data, task.links, config_key)
                task.data = data
                hit = cache.get(task.cache_key, shown, data)
                if hit is not None and with_fixes and not _has_edits(hit):
                    hit = None  # cached by a plain check: analysed again for the edits
                if hit is not None and (mode == "check" or _nothing_to_fix(hit)):
                    results.append(hit if mode == "check" else replace(hit, fixed_source=hit.source))
                    continue
            tasks.append(task)
    return results, tasks


def _has_edits(result: FileResult) -> bool:
    return all(d.fix.edits for d in result.diagnostics if d.fixable)


def _nothing_to_fix(result: FileResult) -> bool:
    return result.error is None and not result.diagnostics


def _pool_context():
    """fork where it is safe and cheap (Linux): the workers inherit the imported engine."""
    import multiprocessing

    if sys.platform.startswith("linux") and "fork" in multiprocessing.get_all_start_methods():
        return multiprocessing.get_context("fork")
    return None


def _run_forked(tasks: List[_Task], options: Dict, workers: int, process: Optional[ProcessFn],
                finished: Callable[[_Task, FileResult], None]) -> None:
    """Check `tasks` in `workers` forked processes (`volfix.run.forked`), largest first, so that
    one big file does not finish last on otherwise idle workers."""
    if process is None:
        scan.import_engine()
    ordered = sorted(tasks, key=lambda t: -t.lines)
    # What a worker needs of a task: not the bytes kept for the cache (it reads the file).
    items = [(t.path, t.display, _task_options(options, t)) for t in ordered]
    for index, result in forked.imap_unordered(
            lambda item: _analyse(process, *item), items, workers,
            on_death=lambda item: _crash_result(item[1], "the worker process analysing this file died"),
            on_error=lambda item, text: _crash_result(item[1], text)):
        finished(ordered[index], result)


def _run_pool(tasks: List[_Task], options: Dict, workers: int, process: Optional[ProcessFn],
              finished: Callable[[_Task, FileResult], None]) -> None:
    """Analyse `tasks` in `workers` processes of a `StoppablePool`. An exception here
    (KeyboardInterrupt from Ctrl-C, or one raised by `finished`) stops the pool: see
    `volfix.run.workers`."""
    from concurrent.futures import as_completed
    from concurrent.futures.process import BrokenProcessPool

    from .workers import StoppablePool

    context = _pool_context()
    if context is not None and process is None:
        from . import fileproc  # noqa: F401 - imported once here, inherited by every worker
    # Largest first, so that one big file does not finish last on an otherwise idle pool.
    ordered = sorted(tasks, key=lambda t: -t.lines)
    crashed: List[_Task] = []
    with StoppablePool(workers, context) as pool:
        with pool.starting():
            futures = {pool.executor.submit(_analyse, process, t.path, t.display,
                                            _task_options(options, t)): t for t in ordered}
        for future in as_completed(futures):
            task = futures[future]
            try:
                result = future.result()
            except BrokenProcessPool:
                crashed.append(task)
                continue
            except Exception as exc:  # noqa: BLE001 - e.g. a result that cannot be pickled
                result = _crash_result(task.display, f"{type(exc).__name__}: {exc}")
            finished(task, result)
    # A worker died: every unfinished file of that pool fails with it. Retry them one at a
    # time in a fresh worker to find the file that kills it, and keep the others' results.
    for task in sorted(crashed, key=lambda t: t.path):
        with StoppablePool(1, context) as lone:
            with lone.starting():
                future = lone.executor.submit(_analyse, process, task.path, task.display,
                                              _task_options(options, task))
            try:
                result = future.result()
            except BrokenProcessPool:
                result = _crash_result(task.display, "the worker process analysing this file died")
        finished(task, result)
