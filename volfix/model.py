"""Data classes shared by the engine, the API and the reporters.

Everything here is plain, frozen data: no printing, no colours, no libcst.
Locations are 1-based (row, column); columns count characters (code points),
as ruff's JSON does.
"""
from __future__ import annotations

import enum
from dataclasses import dataclass, field
from typing import Optional, Tuple


class Applicability(str, enum.Enum):
    """How trustworthy a fix is, with ruff's vocabulary."""

    SAFE = "safe"  # restores the 0.3 semantics for the analysed data flow; applied by default
    UNSAFE = "unsafe"  # needs --unsafe-fixes: a reviewer should look at it
    DISPLAY_ONLY = "display-only"  # a suggestion shown to the user, never applied


@dataclass(frozen=True, order=True)
class Location:
    row: int
    column: int


@dataclass(frozen=True)
class Edit:
    """Replace the text between `location` and `end_location` (exclusive) with `content`."""

    content: str
    location: Location
    end_location: Location


@dataclass(frozen=True)
class Fix:
    applicability: Applicability
    message: str
    edits: Tuple[Edit, ...] = ()


@dataclass(frozen=True)
class Diagnostic:
    code: str
    message: str
    location: Location
    end_location: Location
    fix: Optional[Fix] = None
    # Why no fix is offered, or what a fix leaves uncovered ("not wrapped: the region trains").
    note: Optional[str] = None
    # 1-based index of the notebook cell (counting every cell, as Jupyter shows them), else None.
    cell: Optional[int] = None
    # The source text of the flagged node (first line at most); used for baselines.
    snippet: str = ""

    @property
    def text(self) -> str:
        """The message with its note, as every human-readable format shows it."""
        return f"{self.message} ({self.note})" if self.note else self.message

    @property
    def fixable(self) -> bool:
        return self.fix is not None and self.fix.applicability is not Applicability.DISPLAY_ONLY

    def is_applicable(self, unsafe_fixes: bool) -> bool:
        if self.fix is None:
            return False
        if self.fix.applicability is Applicability.SAFE:
            return True
        return unsafe_fixes and self.fix.applicability is Applicability.UNSAFE


@dataclass(frozen=True)
class FileResult:
    """What volfix found (and, in fix mode, did) for one file."""

    path: str
    diagnostics: Tuple[Diagnostic, ...] = ()
    # The text as read (decoded); None when the file could not be read or decoded.
    source: Optional[str] = None
    # The text after fixes, when fixes were computed (fix / --diff); None otherwise.
    fixed_source: Optional[str] = None
    # Number of findings whose fix was applied to produce fixed_source.
    fixed_count: int = 0
    # True when the file was written (fix mode) or would be (diff mode).
    changed: bool = False
    # An internal error ("this is a volfix bug"), reported with the path; the run continues.
    error: Optional[str] = None
    # The codes of the fixes applied (one entry per fixed finding), for --statistics.
    applied_codes: Tuple[str, ...] = field(default_factory=tuple)
    # The findings whose fixes were applied, as located when they were fixed (their notes
    # name what a reviewer should still check: escapes, unsafe choices).
    applied: Tuple[Diagnostic, ...] = field(default_factory=tuple)
    # `x.data[0]` reads whose shape the code does not tell (VF407's, counted when VF407 is not
    # selected): the summary of a clean run names them.
    undecided: int = 0
