"""What `volfix check` and `volfix fix` were asked to do, as parsed from the command line:
one `Options` value that the commands build and `output` reads (the run itself gets a
`volfix.run.options.RunOptions` made from it)."""
from __future__ import annotations

from dataclasses import dataclass
from typing import Optional, Tuple

STDIN = "-"


@dataclass(frozen=True)
class Options:
    """Everything `check` and `fix` were asked to do, as parsed from the command line."""

    command: str  # "check" or "fix"
    paths: Tuple[str, ...]
    select: Tuple[str, ...]
    ignore: Tuple[str, ...]
    extend_select: Tuple[str, ...]
    config: Optional[str]
    output_format: str
    output_file: Optional[str]
    statistics: bool
    exit_zero: bool
    jobs: Optional[int]
    no_cache: bool
    quiet: bool
    verbose: bool
    color: str
    diff: bool
    show_fixes: bool
    report: Optional[str]
    baseline: Optional[str]
    write_baseline: Optional[str]
    stdin_filename: Optional[str]
    force_exclude: bool
    debug: bool
    unsafe_fixes: Optional[bool]
    legacy_semantics: Optional[bool] = None
    shard: Optional[Tuple[int, int]] = None  # (K, N): the K-th of N parts of the projects
    exit_non_zero_on_fix: bool = False
    interactive: bool = False

    @property
    def mode(self) -> str:
        """What the api is asked for: "check", "fix", or "diff" (compute fixes, write nothing)."""
        return "diff" if self.diff else self.command

    @property
    def reads_stdin(self) -> bool:
        return self.paths == (STDIN,) or (not self.paths and self.stdin_filename is not None)
