"""The library API: results, never printing, exiting or colouring.

    check_source(source, path=..., config=...)            -> FileResult
    fix_source(source, path=..., config=..., unsafe_fixes) -> FileResult (fixed_source set)
    check_paths(paths, config=..., mode=...)               -> list[FileResult]

`fix_source` and `check_paths` take `review=`: a callback asked about each fix before it
is applied (`volfix.engine.review.FixProposal` in, True to apply it), as `volfix fix --interactive`
does.
"""
from __future__ import annotations

from typing import TYPE_CHECKING, Callable, Iterable, List, Optional, Tuple, Union

from .settings.config import DEFAULT_CONFIG, Config
from .model import Diagnostic, FileResult
from .run.options import RunOptions

if TYPE_CHECKING:  # pragma: no cover
    from .settings.nearest import ConfigResolver
    from .engine.review import ReviewCallback
    from .run.runner import RunStats


def check_source(source: Union[str, bytes], *, path: str = "<stdin>",
                 config: Optional[Config] = None, with_fixes: bool = False,
                 fixes_for: Optional[Callable[["Diagnostic"], bool]] = None) -> FileResult:
    """Check one file's text. `with_fixes=True` also computes every fix's edits (for JSON);
    with `fixes_for` too, only the edits of the fixes of the diagnostics it accepts (an
    editor's quick fixes under the cursor: each fix's edits cost a pass over the text)."""
    from . import engine

    return engine.check_text(source, path=path, config=config or DEFAULT_CONFIG,
                             with_fixes=with_fixes, fixes_for=fixes_for)


def fix_source(source: Union[str, bytes], *, path: str = "<stdin>",
               config: Optional[Config] = None, unsafe_fixes: Optional[bool] = None,
               review: Optional[ReviewCallback] = None) -> FileResult:
    """Apply the applicable fixes to one file's text.

    The result's `fixed_source` is the new text (equal to the input when nothing applied)
    and its diagnostics are the findings that remain, located in the fixed text. With
    `review`, each applicable fix is applied only if `review(proposal)` returns True.
    """
    from . import engine

    cfg = config or DEFAULT_CONFIG
    unsafe = cfg.unsafe_fixes if unsafe_fixes is None else unsafe_fixes
    return engine.fix_text(source, path=path, config=cfg, unsafe_fixes=unsafe, review=review)


def check_paths(paths: Iterable[str], *, config: Optional[Config] = None,
                options: Optional[RunOptions] = None, configs: Optional["ConfigResolver"] = None,
                stats: Optional["RunStats"] = None, mode: str = "check",
                unsafe_fixes: Optional[bool] = None, jobs: Optional[int] = None,
                use_cache: bool = True, force_exclude: bool = False,
                progress: Optional[Callable[[int, int], None]] = None,
                review: Optional[ReviewCallback] = None, with_fixes: bool = False,
                shard: Optional[Tuple[int, int]] = None) -> List[FileResult]:
    """Walk `paths` and check (mode="check"), fix in place (mode="fix") or compute fixes
    without writing (mode="diff") every Python file and notebook found.

    How the run goes is one `options=RunOptions(...)` (`volfix.run.options`: mode,
    unsafe_fixes, with_fixes, review, jobs, use_cache, force_exclude, shard, progress); the
    same fields may be given as keywords instead (not both). With `review` (fix/diff mode),
    files are fixed one at a time in this process, in path order, and each fix is applied only
    if `review(proposal)` returns True; a file is written once all its fixes are answered.
    `with_fixes=True` (check mode) also computes every fix's edits, as `check_source` does: the
    text `volfix fix` writes for that fix alone, clean-up included (for JSON and SARIF).
    `shard=(K, N)`: only the projects that fall to the K-th of N parts (`volfix.run.shards`).

    `stats`, a `volfix.run.runner.RunStats()`, is filled with what the run did (files walked;
    candidates: the others were ruled out by the bytes prefilter and never parsed).

    `config` applies to every file, unless `configs` gives each file its own:
    `configs=ConfigResolver(config)` (from `volfix.settings.nearest`) reads the nearest
    `volfix.toml` / `pyproject.toml` with `[tool.volfix]` above each file, as the CLI does,
    and uses `config` where there is none."""
    from .run import runner

    given = RunOptions(mode=mode, unsafe_fixes=unsafe_fixes, with_fixes=with_fixes, review=review, jobs=jobs,
                       use_cache=use_cache, force_exclude=force_exclude, shard=shard, progress=progress)
    if options is None:
        options = given
    elif given != RunOptions():
        raise TypeError("check_paths: pass the run's options either as options=RunOptions(...) or as keywords, "
                        "not both")
    cfg = configs.base if configs is not None and config is None else config or DEFAULT_CONFIG
    results, found = runner.run_with_stats(list(paths), config=cfg, options=options, configs=configs)
    if stats is not None:
        stats.__dict__.update(found.__dict__)
    return results
