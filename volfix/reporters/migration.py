"""The Markdown migration report (`--report FILE`): a reviewer's checklist for the PR.

Counts come first (findings = fixed + remaining; remaining findings that need a person),
then a table per rule, then one section per file that changed or still has findings:
what was changed (applied fixes per code), what `volfix fix` would change (check mode), and
a checklist of what needs manual review and why. Links are relative to the root
(`path/to/file.py#L12`, `#L12-L14` for several lines), so the report reads correctly when
written at the repository root and viewed on GitHub. Notebook findings link to the
notebook and name the cell.

A remaining finding needs manual review when volfix will not apply a fix for it (none
offered, a display-only suggestion, or an unsafe fix withheld without `--unsafe-fixes`),
when it reads `.volatile` (VF201: the right replacement depends on intent), or when its note
qualifies the fix (an escape, "not wrapped: the region trains").
"""
from __future__ import annotations

from collections import Counter
from typing import List, Optional, Sequence
from urllib.parse import quote

from ..baseline import relative_path
from ..model import Applicability, Diagnostic, FileResult
from .base import ReportContext

_NOT_ANALYSED = frozenset({"VF001", "VF002"})


def render_report(results: Sequence[FileResult], ctx: ReportContext) -> str:
    rows = sorted(((relative_path(r.path, ctx.root), r) for r in results), key=lambda item: item[0])
    fixed = sum(r.fixed_count for r in results)
    remaining = sum(len(r.diagnostics) for r in results)
    review = sum(1 for r in results for d in r.diagnostics if review_reason(d, ctx) is not None)
    review += sum(1 for r in results if r.error)

    out = ["# volfix migration report", ""]
    out += [
        "| | |", "|---|---:|",
        f"| Findings | {fixed + remaining} |",
        f"| Fixed | {fixed} |",
        f"| Remaining | {remaining} |",
        f"| Needing manual review | {review} |",
        "",
    ]
    if ctx.mode == "check" and remaining:
        out += ["Nothing was changed yet: this is what `volfix check` found.", ""]
    out += _rule_table(results)
    sections = [_file_section(rel, result, ctx) for rel, result in rows]
    sections = [s for s in sections if s]
    if not sections:
        out.append(f"Nothing to migrate in {len(results)} checked file"
                   + ("" if len(results) == 1 else "s") + ".")
        return "\n".join(out) + "\n"
    for section in sections:
        out += section
    return "\n".join(out).rstrip("\n") + "\n"


def review_reason(diagnostic: Diagnostic, ctx: ReportContext) -> Optional[str]:
    """Why a remaining finding needs a person, or None when `volfix fix` handles it fully."""
    fix, note = diagnostic.fix, diagnostic.note
    suffix = f": {note}" if note else ""
    if diagnostic.code in _NOT_ANALYSED:
        return f"volfix could not analyse this file{suffix}"
    if diagnostic.code == "VF201":
        why = ("reading `.volatile` (always False today): choose `not torch.is_grad_enabled()` "
               "or `x.requires_grad` by intent")
        return why + suffix
    if fix is None:
        return f"no automatic fix{suffix}"
    if fix.applicability is Applicability.DISPLAY_ONLY:
        return f"suggestion only, not applied: {fix.message}" + suffix
    if fix.applicability is Applicability.UNSAFE and not ctx.unsafe_fixes:
        return f"unsafe fix withheld (`--unsafe-fixes` applies it; review the result): {fix.message}" + suffix
    if note:
        return f"the fix is qualified: {note}"
    if ctx.mode != "check":
        # Fix mode and the applicable fix was still not applied (e.g. an overlapping edit).
        return f"fix not applied in this run: {fix.message}"
    return None


def _rule_table(results: Sequence[FileResult]) -> List[str]:
    from ..registry import rules

    fixed: Counter = Counter()
    left: Counter = Counter()
    for result in results:
        fixed.update(result.applied_codes)
        left.update(d.code for d in result.diagnostics)
    codes = sorted(set(fixed) | set(left))
    if not codes:
        return []
    classes = rules()
    out = ["| Rule | Fixed | Remaining |", "|---|---:|---:|"]
    for code in codes:
        cls = classes.get(code)
        label = f"[{code}]({cls.url()}) {cls.name()}" if cls else code
        out.append(f"| {label} | {fixed[code]} | {left[code]} |")
    return out + [""]


def _file_section(rel: str, result: FileResult, ctx: ReportContext) -> List[str]:
    changed = _changed_lines(result)
    fixable: List[str] = []
    review: List[str] = []
    if result.error:
        review.append(f"- [ ] volfix failed on this file (a volfix bug; it was left untouched): "
                      f"{_one_line(result.error)}")
    ordered = sorted(result.diagnostics, key=lambda d: (d.cell or 0, d.location, d.code))
    for diagnostic in ordered:
        reason = review_reason(diagnostic, ctx)
        item = " ".join(part for part in (_link(rel, diagnostic), f"**{diagnostic.code}**",
                                          _snippet(diagnostic)) if part)
        if reason is None and diagnostic.fix is not None:
            fixable.append(f"- {item} — {_one_line(diagnostic.fix.message or diagnostic.message)}")
        else:
            review.append(f"- [ ] {item} — {_one_line(diagnostic.message)} — "
                          f"{_one_line(reason or '')}".rstrip(" —"))
    if not (changed or fixable or review):
        return []
    out = [f"## [{_code(rel)}]({_href(rel)})", ""]
    if changed:
        out += ["**Changed**", ""] + changed + [""]
    if fixable:
        out += ["**Will change with `volfix fix`**", ""] + fixable + [""]
    if review:
        out += ["**Needs manual review**", ""] + review + [""]
    return out


def _changed_lines(result: FileResult) -> List[str]:
    from ..registry import rules

    classes = rules()
    counts = Counter(result.applied_codes)
    lines = []
    for code, n in sorted(counts.items()):
        cls = classes.get(code)
        what = cls.MESSAGE if cls else ""
        lines.append(f"- **{code}** ×{n}" + (f": {_one_line(what)}" if what else ""))
    unnamed = result.fixed_count - sum(counts.values())
    if unnamed > 0:
        lines.append(f"- {unnamed} more fix" + ("" if unnamed == 1 else "es") + " applied")
    return lines


def _link(rel: str, diagnostic: Diagnostic) -> str:
    start, end = diagnostic.location.row, max(diagnostic.end_location.row, diagnostic.location.row)
    if diagnostic.cell is not None:
        return f"[cell {diagnostic.cell}, line {start}]({_href(rel)})"
    anchor, label = (f"L{start}", f"L{start}") if end == start else (f"L{start}-L{end}", f"L{start}-{end}")
    return f"[{_code(rel + '#' + label)}]({_href(rel)}#{anchor})"


def _href(rel: str) -> str:
    return quote(rel, safe="/:")


def _snippet(diagnostic: Diagnostic) -> str:
    return _code(diagnostic.snippet)


def _one_line(text: str) -> str:
    return " ".join(text.split())


def _code(text: str) -> str:
    """`text` as an inline code span (longer fences when it contains backticks)."""
    text = _one_line(text)
    if not text:
        return ""
    if "`" not in text:
        return f"`{text}`"
    return f"`` {text} ``"
