"""Text edits on the analysed text, as ruff applies them: sorted, non-overlapping, deduplicated."""
from __future__ import annotations

import bisect
from dataclasses import dataclass
from typing import Iterable, List, Sequence, Tuple


@dataclass(frozen=True, order=True)
class TextEdit:
    start: int  # character offsets into the analysed text
    end: int
    content: str
    # Edits with the same non-empty key are one edit shared by several fixes (an added import);
    # identical edits without a key from different fixes conflict (two indentations of a line).
    key: str = ""

    @property
    def is_insertion(self) -> bool:
        return self.start == self.end


def conflicts(a: TextEdit, b: TextEdit) -> bool:
    """Two edits conflict when their ranges overlap (touching ends is fine) or both insert
    different text at the same offset."""
    if a == b:
        return not a.key
    if a.is_insertion and b.is_insertion:
        # An added import and a region header may share an offset: the import goes first.
        return a.start == b.start and bool(a.key) == bool(b.key)
    if a.is_insertion:
        return b.start < a.start < b.end
    if b.is_insertion:
        return a.start < b.start < a.end
    return a.start < b.end and b.start < a.end


def conflicts_across(a: TextEdit, b: TextEdit) -> bool:
    """Between edits of different fixes, an insertion where another fix starts replacing text
    also conflicts: the insertion was planned for text that the other fix removes."""
    if conflicts(a, b):
        return True
    if a.is_insertion and not b.is_insertion:
        return a.start == b.start
    if b.is_insertion and not a.is_insertion:
        return b.start == a.start
    return False


def select_compatible(groups: Sequence[Tuple[object, Sequence[TextEdit]]]) -> Tuple[list, List[TextEdit]]:
    """Pick groups in order whose edits do not conflict with already chosen ones.

    Returns (chosen group keys, the union of their edits without duplicates).

    Two edits can conflict only if their closed ranges meet, so each edit is compared with
    the edits starting at most one longest edit before it (`_Near`), not with all of them:
    a file with thousands of fixes is not quadratic here."""
    chosen_keys, chosen = [], []
    seen = set()
    near = _Near()
    for key, edits in groups:
        new = [e for e in dict.fromkeys(edits) if not (e.key and e in seen)]
        if any(conflicts_across(e, c) for e in new for c in near.meeting(e)):
            continue
        if _conflicting_pair(new):
            continue
        chosen_keys.append(key)
        chosen.extend(new)
        seen.update(new)
        for e in new:
            near.add(e)
    return chosen_keys, chosen


def _conflicting_pair(edits: List[TextEdit]) -> bool:
    """Do two of the edits conflict (`conflicts`, either way round)?"""
    if len(edits) < 16:
        return any(conflicts(a, b) for i, a in enumerate(edits) for b in edits[i + 1:])
    near = _Near()
    for i, e in enumerate(edits):
        near.add(e, i)
    for i, a in enumerate(edits):
        for j, b in near.meeting_at(a):
            if j > i and conflicts(a, b):
                return True
    return False


class _Near:
    """Edits sorted by start, to find those whose closed range may meet another's. The few
    wide ones (a region's block) are kept apart and always looked at."""

    WIDE = 512  # characters

    def __init__(self) -> None:
        self.starts: List[int] = []
        self.items: List[Tuple[int, TextEdit]] = []
        self.wide: List[Tuple[int, TextEdit]] = []

    def add(self, edit: TextEdit, tag: int = 0) -> None:
        if edit.end - edit.start > self.WIDE:
            self.wide.append((tag, edit))
            return
        at = bisect.bisect_right(self.starts, edit.start)
        self.starts.insert(at, edit.start)
        self.items.insert(at, (tag, edit))

    def meeting_at(self, edit: TextEdit) -> List[Tuple[int, TextEdit]]:
        """(tag, edit) of the wide edits and of every other one starting in
        [edit.start - WIDE, edit.end]: all whose closed range can meet `edit`'s (and some more)."""
        low = bisect.bisect_left(self.starts, edit.start - self.WIDE)
        high = bisect.bisect_right(self.starts, edit.end)
        return self.wide + self.items[low:high]

    def meeting(self, edit: TextEdit) -> List[TextEdit]:
        return [e for _, e in self.meeting_at(edit)]


def blank_lines_around(src, first: int, last: int) -> Tuple[int, int]:
    """How many blank lines stand right above line `first` and right below line `last`."""
    above = 0
    while first - above - 1 >= 1 and not src.line(first - above - 1).strip():
        above += 1
    below = 0
    while src.line_after(last + below) < len(src.text) and not src.line(last + below + 1).strip():
        below += 1
    return above, below


def piled_blank_lines(text: str, edits: Sequence[TextEdit]) -> List[TextEdit]:
    """Edits deleting blank lines that deleted statements would leave misplaced: seven `x =
    Variable(x)` rows deleted one by one between blank lines leave both blank runs together
    (pycodestyle E303): of the two, the one above goes, as far as the one below reaches (as
    `Expressions.delete_statement` does for one statement, which sees its own neighbours). And
    a block whose first statements went would open with the blank lines below them: those go."""
    from ..syntax.positions import SourceText

    src = None
    whole = sorted((e for e in edits if not e.content and not e.key and e.end > e.start), key=lambda e: e.start)
    runs: List[List[TextEdit]] = []
    for edit in whole:
        if runs and runs[-1][-1].end == edit.start:
            runs[-1].append(edit)
        else:
            runs.append([edit])
    out: List[TextEdit] = []
    for run in runs:
        if src is None:
            src = SourceText(text)
        starts = src.line_starts
        first = bisect.bisect_right(starts, run[0].start)
        last = bisect.bisect_right(starts, run[-1].end - 1)
        ends_a_line = run[-1].end == len(text) or last < len(starts) and run[-1].end == starts[last]
        if starts[first - 1] != run[0].start or not ends_a_line:
            continue  # not whole lines
        above, below = blank_lines_around(src, first, last)
        if above and below and first - above > 1 and len(run) > 1:
            out.append(TextEdit(starts[first - 1 - min(above, below)], run[0].start, ""))
        elif below and not above and first > 1 and last + below < len(starts) \
                and _opens_block(src.line(first - 1), src.line(first), src.line(last + below + 1)):
            out.append(TextEdit(run[-1].end, starts[last + below], ""))
    return out


def _opens_block(header: str, deleted: str, kept: str) -> bool:
    """`header` (`for x in loader:`) opens the block whose first rows, from `deleted` on, went,
    and `kept`, after the blank lines below them, is still in that block."""
    code = header.split("#", 1)[0].rstrip()
    depth = len(header) - len(header.lstrip())
    return code.endswith(":") and len(deleted) - len(deleted.lstrip()) > depth \
        and bool(kept.strip()) and len(kept) - len(kept.lstrip()) > depth


def apply_edits(text: str, edits: Iterable[TextEdit]) -> str:
    # (piece, offset of the original text it starts at, or -1 for an edit's content)
    out: List[Tuple[str, int]] = []
    pos = 0
    # Insertions before replacements at the same offset; stable otherwise.
    for e in sorted(set(edits), key=lambda e: (e.start, e.end != e.start, not e.key, e.end)):
        out.append((text[pos:e.start], pos))
        out.append((e.content, -1))
        pos = max(pos, e.end)
    out.append((text[pos:], pos))
    return "".join(_no_new_crlf([(piece, at) for piece, at in out if piece]))


def _no_new_crlf(pieces: List[Tuple[str, int]]) -> List[str]:
    """The pieces, where a line ending in a lone CR would meet one that starts with LF (a file
    with mixed endings, a line between them removed): the LFs that start the right piece (empty
    lines) become CRs. `\\r` + `\\n` would read as one CRLF, and the lines on either side as one
    line; turning only the first LF would pair the new CR with the next LF."""
    out = [piece for piece, _ in pieces]
    for i in range(1, len(pieces)):
        (left, at_left), (right, at_right) = pieces[i - 1], pieces[i]
        if not (out[i - 1].endswith("\r") and right.startswith("\n")):
            continue
        if at_left >= 0 and at_left + len(left) == at_right:
            continue  # the same CRLF as before: nothing came between
        run = len(right) - len(right.lstrip("\n"))
        out[i] = "\r" * run + out[i][run:]
    return out


def diff_edits(old: str, new: str) -> List[TextEdit]:
    """The edits that turn `old` into `new`: one per changed run of lines, whole lines, or
    the characters that differ when one line becomes one line (`async=` -> `non_blocking=`).
    `apply_edits(old, diff_edits(old, new)) == new`."""
    import difflib
    import re

    if old == new:
        return []
    breaks = re.compile(r"(?<=\r\n)|(?<=\r)(?!\n)|(?<=\n)")  # Python's line breaks, kept
    a = [line for line in breaks.split(old) if line]
    b = [line for line in breaks.split(new) if line]
    starts = [0]
    for line in a:
        starts.append(starts[-1] + len(line))
    out = []
    matcher = difflib.SequenceMatcher(None, a, b, autojunk=False)
    for tag, i1, i2, j1, j2 in matcher.get_opcodes():
        if tag == "equal":
            continue
        start, end, content = starts[i1], starts[i2], "".join(b[j1:j2])
        removed = old[start:end]
        if i2 - i1 != 1 or j2 - j1 != 1:
            out.append(TextEdit(start, end, content))  # whole lines, as a reviewer reads them
            continue
        head = 0
        while head < min(len(removed), len(content)) and removed[head] == content[head]:
            head += 1
        tail = 0
        while tail < min(len(removed), len(content)) - head and removed[-1 - tail] == content[-1 - tail]:
            tail += 1
        out.append(TextEdit(start + head, end - tail, content[head:len(content) - tail]))
    return out
