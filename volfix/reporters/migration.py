"""The Markdown migration report (`--report FILE`): a reviewer's guide to the PR.

    # volfix migration report
    <what this is: after `volfix fix`, or what `volfix fix` would do>
    - counts: files changed, fixes applied (safe / unsafe), findings remaining (fixable with
      `--unsafe-fixes` / to fix by hand)
    ## [`path`](path)                   one section per file that changed or has findings
    **Changed** (**Would change**)     | Line | Rule | Fix | Change | Reviewer note |
    **Remaining** (**Would remain**)   | Line | Rule | Fix | Finding | Reviewer note |

After `fix` the results are the fix run's: each FileResult's `applied` (the findings whose
fixes were applied) and `diagnostics` (what remains). After `check` the CLI passes the
results of a diff pass (fixes computed, nothing written), so the report can say what
`volfix fix` would change and what would be left. The reviewer note is the finding's note
(why a fix is unsafe, limited or absent), with the `--legacy-semantics` hint where it applies.

Links point to the line in the file as it is on disk, relative to the folder the report is
written to (`link_base`, default the root): applied fixes, located in the text they were
applied to, are mapped to the fixed text after `fix`; what would remain, located in the
text `fix` would write, is mapped back to the original after `check` (`linemap`). Notebook
rows link the notebook and name the cell; their rows are cell-relative.
"""
from __future__ import annotations

import os
import re
from dataclasses import dataclass
from typing import List, Optional, Sequence, Tuple
from urllib.parse import quote

from ..settings.baseline import relative_path
from ..model import Applicability, Diagnostic, FileResult
from .base import ReportContext
from .linemap import FileLineMap
from .notes import display_note, is_safe_with_legacy_semantics


@dataclass
class _Counts:
    files_changed: int = 0
    safe: int = 0
    unsafe: int = 0
    remaining: int = 0
    withheld: int = 0  # unsafe fixes not applied for want of --unsafe-fixes
    withheld_legacy: int = 0  # ... of which `--legacy-semantics` would make safe
    failed: int = 0

    @classmethod
    def of(cls, results: Sequence[FileResult], ctx: ReportContext) -> "_Counts":
        counts = cls()
        for result in results:
            counts.files_changed += result.changed
            counts.failed += bool(result.error)
            for d in result.applied:
                if d.fix is not None and d.fix.applicability is Applicability.UNSAFE:
                    counts.unsafe += 1
                else:
                    counts.safe += 1
            for d in result.diagnostics:
                counts.remaining += 1
                if _is_withheld(d, ctx):
                    counts.withheld += 1
                    counts.withheld_legacy += (not ctx.legacy_semantics
                                               and is_safe_with_legacy_semantics(d))
        return counts


def render_report(results: Sequence[FileResult], ctx: ReportContext, *,
                  link_base: Optional[str] = None) -> str:
    """The report for `results` of a fix run (`ctx.mode == "fix"`) or of a diff pass
    (`"check"`/`"diff"`: nothing written). Links are relative to `link_base` (a folder)."""
    done = ctx.mode == "fix"
    base = link_base or ctx.root
    out = ["# volfix migration report", ""] + _headline(_Counts.of(results, ctx), done, ctx)
    files = sorted(((relative_path(r.path, ctx.root), r) for r in results), key=lambda item: item[0])
    sections = [_file_section(rel, result, ctx, base) for rel, result in files]
    sections = [section for section in sections if section]
    if not sections:
        out.append(f"Nothing to migrate in {_plural(len(results), 'checked file')}.")
    for section in sections:
        out += section
    return "\n".join(out).rstrip("\n") + "\n"


def _headline(c: _Counts, done: bool, ctx: ReportContext) -> List[str]:
    command = "volfix fix --unsafe-fixes" if ctx.unsafe_fixes else "volfix fix"
    if done:
        out = [f"What `{command}` changed, and what is left.", ""]
        verbs = ("changed", "applied", "remain" if c.remaining != 1 else "remains")
    else:
        out = [f"Nothing was changed yet: this is what `{command}` would do.", ""]
        verbs = ("would change", "would be applied", "would remain")
    out.append(f"- **{c.files_changed}** {_noun(c.files_changed, 'file')} {verbs[0]}")
    out.append(f"- **{c.safe + c.unsafe}** {_noun(c.safe + c.unsafe, 'fix', 'fixes')} {verbs[1]}: "
               f"{c.safe} safe, {c.unsafe} unsafe")
    left = f"- **{c.remaining}** {_noun(c.remaining, 'finding')} {verbs[2]}"
    if c.remaining and not ctx.unsafe_fixes:
        left += f": {c.withheld} fixable with `volfix fix --unsafe-fixes`"
        if c.withheld_legacy:
            which = ("" if c.withheld == 1 else "all ") if c.withheld_legacy == c.withheld \
                else f"{c.withheld_legacy} of them "
            left += f" ({which}safe with `--legacy-semantics` for genuine 0.3 code)"
        left += f", {c.remaining - c.withheld} to fix by hand"
    elif c.remaining:
        left += ": to fix by hand"
    out.append(left)
    if c.failed:
        out.append(f"- **{c.failed}** {_noun(c.failed, 'file')} volfix failed on "
                   "(a volfix bug: left untouched)")
    return out + [""]


def _file_section(rel: str, result: FileResult, ctx: ReportContext, base: str) -> List[str]:
    if not (result.applied or result.diagnostics or result.error):
        return []
    done = ctx.mode == "fix"
    lines = FileLineMap(result.source, result.fixed_source, notebook=rel.endswith(".ipynb"))
    href = _href(result.path, base)
    out = [f"## [{_code(rel)}]({href})" if href else f"## {_code(rel)}", ""]
    if result.error:
        first = result.error.strip().splitlines()[0] if result.error.strip() else "internal error"
        out += [f"volfix failed on this file (a volfix bug; it was left untouched): {_cell(first)}", ""]
    if result.applied:
        # Applied fixes are located in the text they were applied to (the original).
        rows = [(d, lines.forward(d.location.row, d.cell) if done else d.location.row)
                for d in result.applied]
        out += ["**Changed**" if done else "**Would change**", "",
                "| Line | Rule | Fix | Change | Reviewer note |", "|---|---|---|---|---|"]
        out += [_applied_row(rel, href, d, row, ctx, lines if done else None)
                for d, row in _ordered(rows)] + [""]
    if result.diagnostics:
        # What remains is located in the fixed text (written after `fix`, not after `check`).
        rows = [(d, d.location.row if done else lines.backward(d.location.row, d.cell))
                for d in result.diagnostics]
        out += ["**Remaining**" if done else "**Would remain**", "",
                "| Line | Rule | Fix | Finding | Reviewer note |", "|---|---|---|---|---|"]
        out += [_remaining_row(rel, href, d, row, ctx) for d, row in _ordered(rows)] + [""]
    return out


def _ordered(rows: List[Tuple[Diagnostic, int]]) -> List[Tuple[Diagnostic, int]]:
    return sorted(rows, key=lambda item: (item[0].cell or 0, item[1], item[0].location.column,
                                          item[0].code))


def _applied_row(rel: str, href: str, d: Diagnostic, row: int, ctx: ReportContext,
                 lines: Optional[FileLineMap] = None) -> str:
    unsafe = d.fix is not None and d.fix.applicability is Applicability.UNSAFE
    note = display_note(d, ctx) or ("unsafe fix: review the change" if unsafe else "")
    change = d.fix.message if d.fix is not None and d.fix.message else d.message
    if lines is not None:
        change = _spans_moved(change, lines, d.cell)
    return _row(_link(rel, href, d, row), _rule(d.code), "unsafe" if unsafe else "safe",
                change, note)


# The lines of the finding's own cell (or file); not "line 12 of cell 3", nor a part of it.
_SPANS = re.compile(r"\b(lines? )(\d+(?:-\d+)?(?:(?:, | and )\d+(?:-\d+)?)*)(?![\d-]| of cell)")
_HEADER = re.compile(r"(?:with .*|@.*|async with .*):?$")


def _spans_moved(text: str, lines: FileLineMap, cell: Optional[int]) -> str:
    """A fix's title names the lines of its region in the text it was planned on ("run lines
    8-9 under ..."); after `fix` the report links to the written file, so the lines are moved
    there: below the `with` line the fix added, fewer when its clean-up collapsed one."""
    def span(match) -> str:
        first, _, last = match.group().partition("-")
        start, end = lines.forward(int(first), cell), lines.forward(int(last or first), cell)
        while start < end and _HEADER.match(lines.after_line(start, cell)):
            start += 1  # the first statement was replaced: it maps to the added `with` line
        return str(start) if start >= end else f"{start}-{end}"

    def move(match) -> str:
        listed = re.sub(r"\d+(?:-\d+)?", span, match.group(2))
        word = "line " if re.fullmatch(r"\d+", listed) else "lines "
        return word + listed

    return _SPANS.sub(move, text)


def _remaining_row(rel: str, href: str, d: Diagnostic, row: int, ctx: ReportContext) -> str:
    return _row(_link(rel, href, d, row), _rule(d.code), _remaining_fix(d, ctx), d.message,
                display_note(d, ctx) or "")


def _remaining_fix(d: Diagnostic, ctx: ReportContext) -> str:
    fix = d.fix
    if fix is None:
        return "no fix"
    if fix.applicability is Applicability.DISPLAY_ONLY:
        return f"suggestion only: {fix.message}"
    if _is_withheld(d, ctx):
        return f"unsafe, needs `--unsafe-fixes`: {fix.message}"
    # An applicable fix that was not applied (blocked by another edit in this run).
    return f"{fix.applicability.value}, not applied: {fix.message}"


def _is_withheld(d: Diagnostic, ctx: ReportContext) -> bool:
    return (d.fix is not None and d.fix.applicability is Applicability.UNSAFE
            and not ctx.unsafe_fixes)


def _row(*cells: str) -> str:
    return "| " + " | ".join(_cell(cell) for cell in cells) + " |"


def _rule(code: str) -> str:
    from ..rules.registry import rules

    cls = rules().get(code)
    return f"[{code}]({cls.url()})" if cls else code


def _link(rel: str, href: str, d: Diagnostic, row: int) -> str:
    if rel.startswith("<"):  # stdin: nothing to link to
        return _code(f"{rel}:{row}")
    if d.cell is not None:
        return f"[{_code(f'{rel}, cell {d.cell}, line {row}')}]({href})"
    return f"[{_code(f'{rel}:{row}')}]({href}#L{row})"


def _href(path: str, base: str) -> str:
    """The link to the file `path` (as the results name it) from a report in folder `base`."""
    if path.startswith("<"):
        return ""
    try:
        link = os.path.relpath(os.path.abspath(path), os.path.abspath(base))
    except ValueError:  # another drive on Windows
        link = os.path.abspath(path)
    return quote(link.replace(os.sep, "/"), safe="/:")


def _cell(text: str) -> str:
    """Text safe in a Markdown table cell: one line, `|` escaped."""
    return " ".join(text.split()).replace("|", "\\|")


def _code(text: str) -> str:
    """`text` as an inline code span (a longer fence when it contains backticks)."""
    text = " ".join(text.split())
    return f"`{text}`" if "`" not in text else f"`` {text} ``"


def _noun(count: int, word: str, plural: Optional[str] = None) -> str:
    return word if count == 1 else (plural or word + "s")


def _plural(count: int, word: str) -> str:
    return f"{count} {_noun(count, word)}"
