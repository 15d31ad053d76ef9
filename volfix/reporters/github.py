"""GitHub Actions workflow commands (`::error file=...::message`) and a step summary.

Escaping follows GitHub's toolkit: in the message `%`, CR and LF become `%25`, `%0D`, `%0A`;
in properties (`file=`, `title=`...) also `:` -> `%3A` and `,` -> `%2C`. Columns are sent only
for findings on one line (GitHub ignores or misplaces them otherwise). Notebook findings are
annotated on the file without a line (their lines are cell-relative) and the message names
the cell and line. The finding's note follows the message on its own `note: ...` line (an
escaped newline: GitHub shows annotations on several lines).
"""
from __future__ import annotations

from collections import Counter
from dataclasses import dataclass, field
from typing import Dict, List, Sequence, Tuple

from ..settings.baseline import relative_path
from ..model import Applicability, Diagnostic, FileResult
from .base import ReportContext
from .notes import is_safe_with_legacy_semantics, message_with_note
from .sarif import level


def escape_data(text: str) -> str:
    return text.replace("%", "%25").replace("\r", "%0D").replace("\n", "%0A")


def escape_property(text: str) -> str:
    return escape_data(text).replace(":", "%3A").replace(",", "%2C")


def command(name: str, properties: Sequence[Tuple[str, object]], message: str) -> str:
    props = ",".join(f"{key}={escape_property(str(value))}" for key, value in properties)
    return f"::{name} {props}::{escape_data(message)}" if props else f"::{name}::{escape_data(message)}"


def render(results: Sequence[FileResult], ctx: ReportContext) -> str:
    lines: List[str] = []
    for result in results:
        rel = relative_path(result.path, ctx.root)
        for diagnostic in result.diagnostics:
            lines.append(_annotation(diagnostic, rel, ctx))
        if result.error:
            lines.append(command("error", [("file", rel), ("title", "volfix internal error")],
                                 f"{result.error} (this is a volfix bug; please report it)"))
    return "".join(line + "\n" for line in lines)


def _annotation(diagnostic: Diagnostic, rel: str, ctx: ReportContext) -> str:
    start, end = diagnostic.location, diagnostic.end_location
    props: List[Tuple[str, object]] = [("file", rel)]
    message = message_with_note(diagnostic, ctx)
    if diagnostic.cell is not None:
        message = f"cell {diagnostic.cell}, line {start.row}: {message}"
    else:
        props += [("line", start.row), ("endLine", max(end.row, start.row))]
        if end.row == start.row:
            props += [("col", start.column), ("endColumn", max(end.column, start.column))]
    props.append(("title", f"volfix ({diagnostic.code})"))
    return command(level(diagnostic.code), props, message)


# --- $GITHUB_STEP_SUMMARY -------------------------------------------------------------------

def step_summary(results: Sequence[FileResult], ctx: ReportContext) -> str:
    """Markdown for $GITHUB_STEP_SUMMARY: totals, then counts per code and per file."""
    tally = _Tally.of(results, ctx)
    out = ["## volfix", ""] + tally.headline(len(results), ctx)
    out += _code_table(tally.per_code) + _file_table(tally.per_file)
    if tally.errors:
        out += ["", f"### Internal errors ({len(tally.errors)})", "",
                "These files were not checked: this is a volfix bug, please report it.", ""]
        out += [f"- `{_cell(rel)}`: {_cell(str(error))}" for rel, error in tally.errors]
    return "\n".join(out) + "\n"


@dataclass
class _Tally:
    per_code: Counter = field(default_factory=Counter)
    per_file: Dict[str, Counter] = field(default_factory=dict)
    fixable: int = 0
    unsafe: int = 0
    unsafe_legacy: int = 0  # unsafe fixes that --legacy-semantics would make safe
    fixed: int = 0
    errors: List[Tuple[str, str]] = field(default_factory=list)

    @classmethod
    def of(cls, results: Sequence[FileResult], ctx: ReportContext) -> "_Tally":
        tally = cls()
        for result in results:
            rel = relative_path(result.path, ctx.root)
            tally.fixed += result.fixed_count
            if result.error:
                tally.errors.append((rel, result.error))
            for diagnostic in result.diagnostics:
                tally.add(rel, diagnostic, ctx.unsafe_fixes)
        return tally

    def add(self, rel: str, diagnostic: Diagnostic, unsafe_fixes: bool) -> None:
        self.per_code[diagnostic.code] += 1
        self.per_file.setdefault(rel, Counter())[diagnostic.code] += 1
        if diagnostic.is_applicable(unsafe_fixes):
            self.fixable += 1
        elif diagnostic.fix is not None and diagnostic.fix.applicability is Applicability.UNSAFE:
            self.unsafe += 1
            self.unsafe_legacy += is_safe_with_legacy_semantics(diagnostic)

    def headline(self, checked: int, ctx: ReportContext) -> List[str]:
        total = sum(self.per_code.values())
        if total == 0 and not self.errors:
            out = [f"No findings in {_plural(checked, 'file')}."]
        else:
            out = [f"**{_plural(total, 'finding')}** in {_plural(len(self.per_file), 'file')} "
                   f"({checked} checked)."]
        if ctx.mode == "fix" or self.fixed:
            out.append(f"Fixed: {self.fixed}.")
        legacy = ""
        if self.unsafe_legacy and not ctx.legacy_semantics:
            legacy = f" ({self.unsafe_legacy} of them safe with `--legacy-semantics` for genuine 0.3 code)"
        if self.fixable:
            more = f", {self.unsafe} more with `--unsafe-fixes`{legacy}." if self.unsafe else "."
            out.append(f"{self.fixable} fixable with `volfix fix`{more}")
        elif self.unsafe:
            out.append(f"{self.unsafe} fixable with `volfix fix --unsafe-fixes`{legacy}.")
        return out


def _code_table(per_code: Counter) -> List[str]:
    from ..rules.registry import rules

    if not per_code:
        return []
    classes = rules()
    out = ["", "| Code | Rule | Findings |", "|---|---|---:|"]
    for code, count in sorted(per_code.items()):
        cls = classes.get(code)
        name = f"[{cls.name()}]({cls.url()})" if cls else ""
        out.append(f"| `{code}` | {name} | {count} |")
    return out


def _file_table(per_file: Dict[str, Counter]) -> List[str]:
    if not per_file:
        return []
    out = ["", "| File | Findings | Codes |", "|---|---:|---|"]
    for rel, counts in sorted(per_file.items()):
        codes = ", ".join(f"{code} ×{n}" if n > 1 else code for code, n in sorted(counts.items()))
        out.append(f"| `{_cell(rel)}` | {sum(counts.values())} | {codes} |")
    return out


def _plural(n: int, word: str) -> str:
    return f"{n} {word}" + ("" if n == 1 else "s")


def _cell(text: str) -> str:
    """Text safe inside a Markdown table cell / code span on one line."""
    return " ".join(text.split()).replace("|", "\\|").replace("`", "'")
