"""Per-line suppression comments, and VF010 for the ones that suppress nothing.

Recognised forms (case-insensitive, codes separated by commas and/or spaces):

    # volfix: ignore                  every volfix finding on the line
    # volfix: ignore[VF101, VF201]    only these codes
    # noqa                            every volfix finding on the line (as ruff and flake8)
    # noqa: VF101, E501               only these codes (other tools' codes are left alone)

A comment suppresses a finding that starts on its line; for a finding that spans several
lines, a comment on its last line works too. Only real comments count: the text is
tokenized, so `"# noqa"` inside a string suppresses nothing. When the text does not
tokenize (a notebook magic, a Python 2 file), a small scanner that skips string literals
finds the comments instead.

VF001/VF002 (volfix could not read or parse the file) cannot be suppressed: the comment
itself may be what volfix failed to read. A VF010 finding is suppressed only by a directive
that names VF010 explicitly.
"""
from __future__ import annotations

import io
import re
import tokenize
from dataclasses import dataclass, field
from typing import Iterator, List, Optional, Sequence, Set, Tuple

from ..rules import registry
from ..model import Applicability, Diagnostic, Edit, Fix, Location
from ..syntax.positions import for_tokenize

UNUSED_CODE = "VF010"
UNSUPPRESSIBLE = frozenset({"VF001", "VF002"})

_CODE = r"[A-Za-z]+[0-9]+"
_VOLFIX_RE = re.compile(r"#\s*volfix\s*:\s*ignore\b(?:\s*\[(?P<codes>[^\]\r\n]*)\])?", re.IGNORECASE)
_NOQA_RE = re.compile(
    rf"#\s*noqa\b(?::[ \t]*(?P<codes>{_CODE}(?:[ \t]*,[ \t]*{_CODE}|[ \t]+{_CODE})*))?",
    re.IGNORECASE,
)
_SPLIT_RE = re.compile(r"[\s,]+")
_NEWLINE_RE = re.compile(r"\r\n|\r|\n")


@dataclass
class _Directive:
    kind: str  # "volfix" or "noqa"
    row: int  # 1-based line
    col: int  # 0-based column of the directive's `#` in the line
    end_col: int  # 0-based, exclusive
    codes: Optional[Tuple[str, ...]]  # upper-cased, in written order; None = every code
    comment_col: int  # 0-based column of the comment token that holds the directive
    comment: str  # the whole comment token
    used_codes: Set[str] = field(default_factory=set)
    used_any: bool = False

    @property
    def text(self) -> str:
        return self.comment[self.col - self.comment_col:self.end_col - self.comment_col]

    def covers(self, code: str) -> bool:
        if self.codes is None:
            return code != UNUSED_CODE
        return code in self.codes

    def mark(self, code: str) -> None:
        self.used_any = True
        self.used_codes.add(code)


def apply_suppressions(diagnostics: Sequence[Diagnostic], text: str, *,
                       cell: Optional[int] = None) -> Tuple[List[Diagnostic], List[Diagnostic]]:
    """Split `diagnostics` of `text` into the ones no comment suppresses and VF010 findings.

    Returns `(kept, unused)`: `kept` preserves the input order; `unused` holds one VF010
    diagnostic per comment whose directives suppress nothing (or name codes that suppress
    nothing), located on those directives and carrying a fix that rewrites the comment
    (at most one edit per line, so the fixes never overlap). For a notebook, call this
    once per cell with that cell's text and diagnostics, and pass `cell` so the VF010
    diagnostics name it. The caller drops `unused` when VF010 is not selected.
    """
    if any(d.code in UNSUPPRESSIBLE for d in diagnostics):
        # The file was not analysed: every directive would look unused.
        return list(diagnostics), []
    lowered = text.lower()
    if "noqa" not in lowered and "volfix" not in lowered:
        return list(diagnostics), []  # the common case: no tokenizing needed
    if not diagnostics and _NAMES_OURS.search(lowered) is None:
        # Nothing to suppress, and no directive that could be unused (VF010): a bare
        # `# noqa` or `# noqa: E501` belongs to other tools. (Torch's own sources hold
        # hundreds of those; tokenizing them cost more than analysing the file.)
        return [], []
    directives = _find_directives(text)
    by_row: dict = {}
    for directive in directives:
        by_row.setdefault(directive.row, []).append(directive)

    kept: List[Diagnostic] = []
    for diagnostic in diagnostics:
        if not _suppress(diagnostic, by_row):
            kept.append(diagnostic)

    lines = _lines(text)
    unused = _unused_diagnostics(directives, lines, cell)
    # VF010 findings obey explicit `VF010` directives on their own line.
    unused = [d for d in unused if not _suppress(d, by_row)]
    return kept, unused


_NAMES_OURS = re.compile(r"volfix\s*:|noqa\s*:[^\r\n]*\bvf\d")  # on lowered text


def _suppress(diagnostic: Diagnostic, by_row: dict) -> bool:
    rows = {diagnostic.location.row, _last_row(diagnostic)}
    hit = False
    for row in sorted(rows):
        for directive in by_row.get(row, ()):
            if directive.covers(diagnostic.code):
                directive.mark(diagnostic.code)
                hit = True
    return hit


def _last_row(diagnostic: Diagnostic) -> int:
    end = diagnostic.end_location
    # An exclusive end at column 1 of a later line means the finding ended on the line before.
    if end.row > diagnostic.location.row and end.column <= 1:
        return end.row - 1
    return max(end.row, diagnostic.location.row)


def _lines(text: str) -> List[str]:
    """The rows of `text` without their endings (CRLF, CR or LF, as Python counts rows)."""
    return _NEWLINE_RE.split(text)


# --- finding the directives -------------------------------------------------------------

def _find_directives(text: str) -> List[_Directive]:
    found = []
    for row, col, comment in _comments(text):
        found.extend(_parse_comment(row, col, comment))
    return found


def _parse_comment(row: int, col: int, comment: str) -> Iterator[_Directive]:
    matches = [("volfix", m) for m in _VOLFIX_RE.finditer(comment)]
    matches += [("noqa", m) for m in _NOQA_RE.finditer(comment)]
    for kind, match in sorted(matches, key=lambda item: item[1].start()):
        raw = match.group("codes")
        codes = None
        if raw is not None:
            codes = tuple(dict.fromkeys(c.upper() for c in _SPLIT_RE.split(raw) if c))
        yield _Directive(kind=kind, row=row, col=col + match.start(), end_col=col + match.end(),
                         codes=codes, comment_col=col, comment=comment)


def _comments(text: str) -> List[Tuple[int, int, str]]:
    """(row, 0-based column, comment text) of every comment in `text`."""
    shift = 0
    if text.startswith("\ufeff"):
        text, shift = text[1:], 1
    try:
        found = [(tok.start[0], tok.start[1], tok.string)
                 for tok in tokenize.generate_tokens(io.StringIO(for_tokenize(text)).readline)
                 if tok.type == tokenize.COMMENT]
    except (tokenize.TokenError, IndentationError, SyntaxError):
        found = _scan_comments(text)
    return [(row, col + shift if row == 1 else col, comment) for row, col, comment in found]


def _scan_comments(text: str) -> List[Tuple[int, int, str]]:
    """A tolerant fallback for text that does not tokenize: skips string literals
    (single, triple, with escapes) and returns `#` comments."""
    found = []
    quote = ""  # the open string's delimiter, "" outside strings
    for row, line in enumerate(_lines(text), start=1):
        i = 0
        while i < len(line):
            ch = line[i]
            if quote:
                if ch == "\\":
                    i += 2
                    continue
                if line.startswith(quote, i):
                    i += len(quote)
                    quote = ""
                    continue
                i += 1
                continue
            if ch == "#":
                found.append((row, i, line[i:]))
                break
            if ch in "'\"":
                quote = ch * 3 if line.startswith(ch * 3, i) else ch
                i += len(quote)
                continue
            i += 1
        if len(quote) == 1 and not line.endswith("\\"):
            quote = ""  # an unterminated one-line string ends with its line
    return found


# --- VF010 ------------------------------------------------------------------------------

def _unused_codes(directive: _Directive) -> Optional[Tuple[str, ...]]:
    """The codes of `directive` that suppress nothing: () for a whole bare directive that
    suppresses nothing, None when nothing in it is unused."""
    if directive.codes is None:
        if directive.kind == "noqa" or directive.used_any:
            return None  # a bare noqa comment may belong to another tool
        return ()
    candidates = [c for c in directive.codes if c != UNUSED_CODE]
    if directive.kind == "noqa":
        candidates = [c for c in candidates if c.startswith("VF")]
    unused = tuple(c for c in candidates if c not in directive.used_codes)
    return unused or None


def _unused_diagnostics(directives: List[_Directive], lines: List[str],
                        cell: Optional[int]) -> List[Diagnostic]:
    """One VF010 per comment holding unused directives (so that fixes never overlap)."""

    known = registry.all_codes()
    groups: dict = {}
    for directive in directives:
        groups.setdefault((directive.row, directive.comment_col), []).append(directive)
    out = []
    for (row, _), group in sorted(groups.items()):
        plan = [(directive, _unused_codes(directive)) for directive in group]
        stale = [(directive, unused) for directive, unused in plan if unused is not None]
        if not stale:
            continue
        notes = []
        for directive, unused in stale:
            if unused:
                parts = [f"`{c}`" + ("" if c in known else " (unknown code)") for c in unused]
                notes.append("suppresses nothing on this line: " + ", ".join(parts))
            else:
                notes.append(f"`{directive.text}` has nothing on this line to suppress")
        line = lines[row - 1] if row <= len(lines) else ""
        first, last = stale[0][0], stale[-1][0]
        out.append(Diagnostic(
            code=UNUSED_CODE,
            message=_unused_message(),
            location=Location(row, first.col + 1),
            end_location=Location(row, last.end_col + 1),
            fix=_comment_fix(group, dict((id(d), u) for d, u in plan), line),
            note="; ".join(notes),
            cell=cell,
            snippet=line[first.col:last.end_col],
        ))
    return out


def _unused_message() -> str:
    return registry.get("VF010").MESSAGE


def _comment_fix(group: List[_Directive], unused: dict, line: str) -> Optional[Fix]:
    """Rewrite one comment without its unused directives and codes.

    The comment is cut at each directive: a directive's piece runs to the next directive.
    A wholly unused directive's piece is dropped, or replaced by the comment that follows it
    (`# noqa: VF101  # keep` -> `# keep`); free text after it means no fix.
    """
    comment, base = group[0].comment, group[0].comment_col
    pieces = [comment[:group[0].col - base]]
    for i, directive in enumerate(group):
        stop = group[i + 1].col - base if i + 1 < len(group) else len(comment)
        rest = comment[directive.end_col - base:stop]
        codes = unused[id(directive)]
        if codes is None:
            pieces.append(directive.text + rest)
            continue
        remaining = [] if directive.codes is None else [c for c in directive.codes if c not in codes]
        if remaining:
            prefix = "# volfix: ignore[" if directive.kind == "volfix" else "# noqa: "
            suffix = "]" if directive.kind == "volfix" else ""
            pieces.append(prefix + ", ".join(remaining) + suffix + rest)
        elif not rest.strip():
            pieces.append("")
        elif rest.lstrip().startswith("#"):
            pieces.append(rest.lstrip())
        else:
            return None  # free text follows the directive: a person should decide
    new_comment = "".join(pieces).rstrip()
    row, comment_end = group[0].row, base + len(comment)
    if new_comment:
        edit = Edit(new_comment, Location(row, base + 1), Location(row, comment_end + 1))
        return Fix(Applicability.SAFE, "Remove the unused suppression codes", (edit,))
    start = len(line[:base].rstrip())
    edit = Edit("", Location(row, start + 1), Location(row, comment_end + 1))
    return Fix(Applicability.SAFE, "Remove the unused suppression comment", (edit,))
