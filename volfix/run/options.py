"""One value for how a run goes: what it does to the files, how it uses the machine, and who
listens while it runs. The command line builds it from its flags (`volfix.cli.options`), the
API accepts it (`volfix.check_paths(paths, options=RunOptions(...))`), and the runner reads it
(`volfix.run.runner.run`). Settings (`Config`, the nearest configuration of each file) travel
beside it: they say which rules apply, not how the run goes."""
from __future__ import annotations

from dataclasses import dataclass
from typing import TYPE_CHECKING, Callable, Optional, Tuple

if TYPE_CHECKING:  # pragma: no cover
    from ..engine.review import ReviewCallback

MODES = ("check", "fix", "diff")
Progress = Callable[[int, int], None]


@dataclass(frozen=True)
class RunOptions:
    """How a run goes.

    What it does: `mode` "check", "fix" (write in place) or "diff" (compute fixes, write
    nothing); `unsafe_fixes` (None: the configuration's); `with_fixes` (check mode: every
    fix's edits too, for JSON and SARIF); `review` (fix/diff: each fix applied only when
    `review(proposal)` accepts it; files are then fixed one at a time, in path order).

    How: `jobs` worker processes (None or 0: every usable core); `use_cache`;
    `force_exclude` (exclusions apply to paths named on the command line too);
    `shard=(K, N)`: only the projects that fall to the K-th of N parts (`volfix.run.shards`).

    Who listens: `progress(done, total)`, called from the calling thread as files are done."""

    mode: str = "check"
    unsafe_fixes: Optional[bool] = None
    with_fixes: bool = False
    review: Optional["ReviewCallback"] = None
    jobs: Optional[int] = None
    use_cache: bool = True
    force_exclude: bool = False
    shard: Optional[Tuple[int, int]] = None
    progress: Optional[Progress] = None

    def __post_init__(self) -> None:
        if self.mode not in MODES:
            raise ValueError(f"mode must be one of {', '.join(MODES)}, not {self.mode!r}")
        if self.review is not None and self.mode == "check":
            raise ValueError("review needs mode 'fix' or 'diff'")
        if self.jobs is not None and self.jobs < 0:
            raise ValueError("jobs must be a positive number (0 or None: every core)")
