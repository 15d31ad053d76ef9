"""The note under a finding (why a fix is unsafe, limited or absent), as people read it.

`Diagnostic.note` is written by the analysis; reporters show it on its own line. Some fixes
are unsafe only because a `Variable(x)` argument might be a tensor that requires grad, which
genuine 0.3 code rules out: `--legacy-semantics` (`legacy-semantics = true`) makes them safe.
Those notes get a hint naming the flag, so the setting is found where it matters.

The hint is keyed on the analysis's own wording of those two reasons (`LEGACY_SEMANTICS_REASONS`):
`tests/test_notes.py` runs the real engine, so a rewording there fails a test instead of
silently dropping the hint.
"""
from __future__ import annotations

from typing import Optional, Tuple

from ..model import Applicability, Diagnostic
from .base import ReportContext

# Unsafe reasons that disappear when every `Variable(x)` argument is a plain tensor
# (volfix/analysis/legacy.py and regions.py word them so; VF110/VF111 and the unwraps of
# VF101-VF103).
LEGACY_SEMANTICS_REASONS: Tuple[str, ...] = (
    "unsafe fix: if the argument requires grad, gradients will now flow into it",
    "unsafe fix: `requires_grad_()` changes the tensor itself",
)
LEGACY_SEMANTICS_HINT = "(`--legacy-semantics` makes this safe for genuine 0.3 code)"
_UNSAFE_PREFIX = "unsafe fix:"


def is_safe_with_legacy_semantics(diagnostic: Diagnostic) -> bool:
    """Whether the finding's fix is unsafe only for a reason `--legacy-semantics` removes.

    The analysis starts every unsafe reason with "unsafe fix:" and joins the parts of a note
    with "; ": the fix qualifies when each such part is one of LEGACY_SEMANTICS_REASONS.
    """
    fix, note = diagnostic.fix, diagnostic.note
    if fix is None or fix.applicability is not Applicability.UNSAFE or not note:
        return False
    reasons = [part for part in note.split("; ") if part.startswith(_UNSAFE_PREFIX)]
    return bool(reasons) and all(part.startswith(LEGACY_SEMANTICS_REASONS) for part in reasons)


def display_note(diagnostic: Diagnostic, ctx: ReportContext) -> Optional[str]:
    """The note as shown to a person: with the `--legacy-semantics` hint where it applies
    (and the setting is not already on). None when the finding has no note."""
    note = diagnostic.note
    if not note:
        return None
    if ctx.legacy_semantics or not is_safe_with_legacy_semantics(diagnostic):
        return note
    return f"{note} {LEGACY_SEMANTICS_HINT}"


def message_with_note(diagnostic: Diagnostic, ctx: ReportContext) -> str:
    """The message, then `note: ...` on the next line (for formats that take one text)."""
    note = display_note(diagnostic, ctx)
    return f"{diagnostic.message}\nnote: {note}" if note else diagnostic.message
