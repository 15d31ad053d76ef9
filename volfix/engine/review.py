"""Reviewing fixes one at a time before they are applied (`fix_source(..., review=...)`,
`volfix fix --interactive`).

A fix may only appear once others are applied, so the list of fixes cannot be known in
advance. With a review callback the engine therefore applies one fix group at a time, asking
before each one, and analyses the text again after it:

    def review(proposal: FixProposal) -> bool: ...   # True: apply it; False: leave it

A declined group is never proposed again in that run of the loop, even though its findings
stay in the text and come back in every later pass; nor is any later group that would fix
one of them (a region planned again around fewer findings). The clean-up `volfix fix` runs after
a fix (no-op self-assignments it created, a `Variable` import it made unused) belongs to that
fix: it is part of the proposal's `after`, and the text written is exactly the last `after`
accepted.

Nothing here prints: the CLI (`volfix.cli.interactive`) shows proposals and reads answers.
"""
from __future__ import annotations

import re
from dataclasses import dataclass
from typing import Callable, Dict, Iterable, List, Optional, Sequence, Tuple

from ..model import Applicability, Diagnostic, Location

_NEWLINE = re.compile(r"\r\n|\r|\n")  # Python's line breaks, as the engine counts rows


@dataclass(frozen=True)
class FixProposal:
    """One fix group offered for review: the findings it resolves and its effect.

    `before` is the text as it stands when the fix is proposed (the whole file, or the
    notebook cell `cell`) and `after` the same text with this fix alone applied and cleaned
    up as `volfix fix` does; the diagnostics are located in `before`. If the fix is accepted,
    `after` is the text from then on: the change shown is exactly the change written.
    """

    path: str
    diagnostics: Tuple[Diagnostic, ...]
    applicability: Applicability
    before: str
    after: str
    cell: Optional[int] = None  # 1-based notebook cell, as Diagnostic.cell
    # A notebook fix that changes several cells (its clean-up removes an import in another
    # one): (cell, before, after) for each; `before`/`after` then show them all, headed.
    cells: Tuple[Tuple[int, str, str], ...] = ()

    @property
    def message(self) -> str:
        """What the fix does (the fix messages of its findings, without repeats)."""
        messages = [d.fix.message for d in self.diagnostics if d.fix is not None and d.fix.message]
        return "; ".join(dict.fromkeys(messages))

    @property
    def note(self) -> Optional[str]:
        """Why the fix is unsafe or what it leaves uncovered (the findings' notes), if anything."""
        notes = [d.note for d in self.diagnostics if d.note]
        return "; ".join(dict.fromkeys(notes)) or None


ReviewCallback = Callable[[FixProposal], bool]
# The text after one fix's edits, cleaned up as `volfix fix` would (engine.fixing.Finish.preview).
Preview = Callable[[str, Sequence], str]


class FixReviewer:
    """Asks a ReviewCallback about the candidate fix groups of one text's fix loop.

    Answers are remembered per *finding* (code and source snippet) and position: a group is
    not proposed when one of its findings was in a declined proposal (even if later fixes
    regroup it, e.g. a region planned again around fewer findings), and is applied without
    asking when all of its findings were accepted already. Positions are followed through
    the edits each pass applies (`follow`), so declining one `Variable(x)` does not decline an
    identical one three lines below. A declined finding whose text another accepted fix
    rewrote cannot be told apart from its twins any more: from then on its code and snippet
    are declined everywhere in the text (the conservative choice: never applied without a
    "yes").
    """

    def __init__(self, review: ReviewCallback, path: str, preview: Preview):
        self.review = review
        self.path = path
        self.preview = preview
        self._answers: Dict[tuple, List[Tuple[int, bool]]] = {}  # (code, snippet) -> [(offset, answer)]
        self._declined_everywhere: set = set()

    def next(self, text: str, candidates: Sequence[tuple]) -> Optional[Tuple[tuple, str]]:
        """The next fix to apply to `text` and the text it makes, asking about it first
        unless its findings were accepted already; None when every candidate is declined.

        `candidates` are the engine's `((ident, diagnostics), edits)` in its order. The text
        returned is the one shown to the reviewer (`FixProposal.after`): the fix with the
        clean-up `volfix fix` does after it.
        """
        starts = _line_starts(text)
        for (ident, diagnostics), edits in candidates:
            findings = [((d.code, d.snippet), _offset(starts, d.location)) for d in diagnostics]
            known = [self._answer(finding, offset) for finding, offset in findings]
            if False in known:
                continue
            after = self.preview(text, edits)
            if None in known:
                proposal = FixProposal(path=self.path, diagnostics=tuple(diagnostics),
                                       applicability=_worst(diagnostics), before=text, after=after)
                answer = bool(self.review(proposal))
                for finding, offset in findings:
                    self._answers.setdefault(finding, []).append((offset, answer))
                if not answer:
                    continue
            for finding, offset in findings:  # applied now: the same text found there later is asked about again
                answers = self._answers.get(finding, [])
                answers[:] = [(o, a) for o, a in answers if not (o == offset and a)]
            return (ident, diagnostics), after
        return None

    def follow(self, edits: Iterable) -> None:
        """Move the remembered positions through `edits` (TextEdits just applied)."""
        ordered = sorted(edits, key=lambda e: (e.start, e.end))
        for finding, answers in self._answers.items():
            moved = []
            for offset, answer in answers:
                new = _moved(offset, ordered)
                if new is not None:
                    moved.append((new, answer))
                elif not answer:
                    self._declined_everywhere.add(finding)
                # a "yes" whose text was rewritten is forgotten: asked again if it comes back
            answers[:] = moved

    def _answer(self, finding: tuple, offset: int) -> Optional[bool]:
        if finding in self._declined_everywhere:
            return False
        for known_offset, answer in self._answers.get(finding, ()):
            if known_offset == offset:
                return answer
        return None


def _line_starts(text: str) -> List[int]:
    return [0] + [m.end() for m in _NEWLINE.finditer(text)]


def _offset(starts: List[int], location: Location) -> int:
    row = min(max(location.row, 1), len(starts))
    return starts[row - 1] + location.column - 1


def _moved(offset: int, edits: Sequence) -> Optional[int]:
    """Where `offset` is after applying `edits` (sorted by start), None if an edit replaced
    the text there."""
    shift = 0
    for e in edits:
        if e.end <= offset:  # before it (an insertion right at the offset pushes it on)
            shift += len(e.content) - (e.end - e.start)
        elif e.start <= offset:
            return None
        else:
            break
    return offset + shift


_RANK = {Applicability.SAFE: 0, Applicability.UNSAFE: 1, Applicability.DISPLAY_ONLY: 2}


def _worst(diagnostics: Sequence[Diagnostic]) -> Applicability:
    found = [d.fix.applicability for d in diagnostics if d.fix is not None]
    return max(found, key=_RANK.__getitem__) if found else Applicability.SAFE
