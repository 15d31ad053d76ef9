"""What every reporter receives. Reporters format FileResults and nothing else."""
from __future__ import annotations

from dataclasses import dataclass
from typing import Optional


@dataclass(frozen=True)
class ReportContext:
    # Absolute path that SARIF/JUnit URIs are made relative to (the repository root: the
    # nearest parent with .git, else the current directory).
    root: str
    # "check", "fix" or "diff": in fix mode the diagnostics are what remains after fixing.
    mode: str = "check"
    # Whether unsafe fixes count as applicable (--unsafe-fixes / unsafe-fixes = true).
    unsafe_fixes: bool = False
    # Whether `legacy-semantics` is on (--legacy-semantics): notes then need no hint about it.
    legacy_semantics: bool = False
    show_fixes: bool = False
    color: bool = False
    # Terminal width for code frames, None = unlimited.
    width: Optional[int] = None
    # Files walked that the bytes prefilter ruled out (no `volatile`, `Variable`, `async`):
    # never parsed, so a syntax error there is not reported (the summary says so).
    not_parsed: int = 0
    # --baseline: how many findings it hid, and the file.
    baseline_hidden: int = 0
    baseline: Optional[str] = None
