"""Human-readable output: `full` (with code frames), `concise`, the summary, --statistics,
--show-fixes, --diff and the "volfix bug" lines.

`full` shows the finding's note (why a fix is unsafe, limited or absent) on its own
`= note:` line under the code frame, then the fix as `= help:`, as rustc does; `concise`
is one line per finding and leaves the note out, as ruff's concise format does.

Every function returns text; the CLI decides which stream it goes to. Colour is plain ANSI
SGR codes, used only when `ctx.color` is set.
"""
from __future__ import annotations

import re
from collections import Counter
from typing import Dict, List, Optional, Sequence, Tuple

from ..model import Applicability, Diagnostic, FileResult
from . import iter_findings
from .base import ReportContext
from .notes import display_note, is_safe_with_legacy_semantics

CONTEXT_LINES = 2  # source lines shown above and below a finding
MAX_SPAN_LINES = 8  # longer findings show their first and last lines only
TAB_SIZE = 4
_NEWLINE = re.compile(r"\r\n|\r|\n")  # Python's own line breaks (not str.splitlines's)
_LINE_WITH_END = re.compile(r".*?(?:\r\n|\r|\n)|.+\Z", re.S)

_SGR = {
    "bold": "1",
    "code": "1;31",
    "marker": "36",
    "punct": "36",
    "gutter": "1;34",
    "caret": "1;31",
    "note": "1;34",
    "help": "1;36",
    "added": "32",
    "removed": "31",
    "hunk": "36",
    "error": "1;31",
    "safe": "1;32",
    "unsafe": "1;33",
}


class Paint:
    """`paint(text, style)`: the text in a style of `_SGR` when colour is on, else as is."""

    def __init__(self, enabled: bool) -> None:
        self.enabled = enabled

    def __call__(self, text: str, style: str) -> str:
        if not self.enabled or not text:
            return text
        return f"\x1b[{_SGR[style]}m{text}\x1b[0m"


def _plural(count: int, word: str) -> str:
    return f"{count} {word}" if count == 1 else f"{count} {word}s"


# ---------------------------------------------------------------------------- findings


def location_label(path: str, d: Diagnostic) -> str:
    """`path:row:col`, or `path:cell N:row:col` for a notebook finding."""
    if d.cell is not None:
        return f"{path}:cell {d.cell}:{d.location.row}:{d.location.column}"
    return f"{path}:{d.location.row}:{d.location.column}"


def _header(result: FileResult, d: Diagnostic, ctx: ReportContext, paint: Paint) -> str:
    colon = paint(":", "punct")
    if d.cell is not None:
        where = f"{paint(result.path, 'bold')}{colon}cell {d.cell}{colon}"
    else:
        where = f"{paint(result.path, 'bold')}{colon}"
    where += f"{d.location.row}{colon}{d.location.column}{colon}"
    marker = paint("[*]", "marker") + " " if d.is_applicable(ctx.unsafe_fixes) else ""
    return f"{where} {paint(d.code, 'code')} {marker}{d.message}"


def render_concise(results: List[FileResult], ctx: ReportContext) -> str:
    paint = Paint(ctx.color)
    return "".join(_header(r, d, ctx, paint) + "\n" for r, d in iter_findings(results))


def render_full(results: List[FileResult], ctx: ReportContext) -> str:
    paint = Paint(ctx.color)
    out: List[str] = []
    cache: Dict[Tuple[str, Optional[int]], Optional[List[str]]] = {}
    for result, d in iter_findings(results):
        key = (result.path, d.cell)
        if key not in cache:
            cache[key] = _source_lines(result, d.cell)
        out.append(_header(result, d, ctx, paint) + "\n")
        lines = cache[key]
        if lines is not None:
            out.append(_code_frame(lines, d, ctx, paint))
        note = display_note(d, ctx)
        if note:
            out.append(f"  {paint('=', 'gutter')} {paint('note', 'note')}: {note}\n")
        help_line = _help_line(d, ctx)
        if help_line:
            out.append(f"  {paint('=', 'gutter')} {paint('help', 'help')}: {help_line}\n")
        out.append("\n")
    return "".join(out)


def _help_line(d: Diagnostic, ctx: ReportContext) -> str:
    if d.fix is None or not d.fix.message:
        return ""
    if d.fix.applicability is Applicability.UNSAFE and not ctx.unsafe_fixes:
        return f"{d.fix.message} (unsafe fix: needs --unsafe-fixes)"
    if d.fix.applicability is Applicability.DISPLAY_ONLY:
        return f"{d.fix.message} (suggestion only, never applied)"
    return d.fix.message


def _source_lines(result: FileResult, cell: Optional[int]) -> Optional[List[str]]:
    """The lines the finding's rows refer to: the file, or one notebook cell. After fixes
    (`fix`, `--diff`) the findings are those that remain in the fixed text: show that."""
    text = result.fixed_source if result.fixed_source is not None else result.source
    if text is None:
        return None
    if cell is None:
        return _NEWLINE.split(text)
    return _notebook_cell_lines(text, cell)


def _notebook_cell_lines(source: str, cell: int) -> Optional[List[str]]:
    cells = notebook_cell_sources(source)
    if cells is None or cell not in cells:
        return None  # not notebook JSON: show the finding without a frame
    return _NEWLINE.split(cells[cell])


def notebook_cell_sources(source: str) -> Optional[Dict[int, str]]:
    """1-based cell number -> source text of a notebook's JSON, None if it is not one."""
    try:
        import json  # notebooks only: a check of .py files prints without it

        cells = json.loads(source.lstrip("\ufeff"))["cells"]
    except (ValueError, KeyError, TypeError):
        return None
    if not isinstance(cells, list):
        return None
    out: Dict[int, str] = {}
    for number, cell in enumerate(cells, start=1):
        text = cell.get("source", "") if isinstance(cell, dict) else ""
        if isinstance(text, list):
            text = "".join(part for part in text if isinstance(part, str))
        out[number] = text if isinstance(text, str) else ""
    return out


def _display_col(line: str, column: int) -> int:
    """0-based screen column of the 1-based character column `column` (tabs expanded)."""
    return len(line[: max(column - 1, 0)].expandtabs(TAB_SIZE))


def _underline_spans(lines: Sequence[str], d: Diagnostic) -> Dict[int, Tuple[int, int]]:
    """row -> (start, end) screen columns to underline, for each row the finding covers."""
    first, last = d.location.row, max(d.end_location.row, d.location.row)
    spans: Dict[int, Tuple[int, int]] = {}
    for row in range(first, min(last, len(lines)) + 1):
        line = lines[row - 1]
        if row == first:
            start = _display_col(line, d.location.column)
        else:
            start = _display_col(line, len(line) - len(line.lstrip()) + 1)
        if row == last:
            end = _display_col(line, d.end_location.column)
        else:
            end = len(line.expandtabs(TAB_SIZE))
        spans[row] = (start, max(end, start + 1))
    return spans


def _frame_rows(first: int, last: int, total: int) -> List[Optional[int]]:
    """Rows to show (None = an elision marker): context around the finding."""
    top = max(1, first - CONTEXT_LINES)
    bottom = min(total, last + CONTEXT_LINES)
    rows: List[Optional[int]] = list(range(top, bottom + 1))
    if last - first + 1 > MAX_SPAN_LINES:
        keep_head = first + MAX_SPAN_LINES // 2
        keep_tail = last - MAX_SPAN_LINES // 2 + 1
        rows = [r for r in rows if r is not None and (r < keep_head or r >= keep_tail)]
        rows.insert(rows.index(keep_tail), None)
    return rows


def _code_frame(lines: List[str], d: Diagnostic, ctx: ReportContext, paint: Paint) -> str:
    first = d.location.row
    last = max(d.end_location.row, first)
    if not 1 <= first <= len(lines):
        return ""
    # A file ending in a newline splits into a last empty "line" that is not a row.
    total = len(lines) - 1 if len(lines) > 1 and lines[-1] == "" else len(lines)
    rows = _frame_rows(first, min(last, total), total)
    spans = _underline_spans(lines, d)
    width = len(str(max(r for r in rows if r is not None)))
    bar = paint("|", "gutter")
    blank_gutter = f"{' ' * width} {bar}"
    available = None if ctx.width is None else max(ctx.width - width - 3, 20)
    last_span_row = max(spans)
    out = [blank_gutter + "\n"]
    for row in rows:
        if row is None:
            out.append(f"{paint('.' * width, 'gutter')} {bar} ...\n")
            continue
        text = lines[row - 1].expandtabs(TAB_SIZE)
        if available is not None and len(text) > available:
            text = text[: available - 1] + "…"
        out.append(f"{paint(str(row).rjust(width), 'gutter')} {bar} {text}".rstrip() + "\n")
        if row in spans:
            start, end = spans[row]
            if available is not None:
                end = min(end, available)
                start = min(start, max(end - 1, 0))
            carets = paint("^" * (end - start), "caret")
            label = " " + paint(d.code, "caret") if row == last_span_row else ""
            out.append(f"{blank_gutter} {' ' * start}{carets}{label}\n")
    out.append(blank_gutter + "\n")
    return "".join(out)


# ---------------------------------------------------------------------------- summary


def _count_fixes(results: List[FileResult], ctx: ReportContext) -> Tuple[int, int, bool]:
    """(applicable fixes, unsafe fixes hidden without --unsafe-fixes, any applicable unsafe)."""
    applicable = hidden = 0
    unsafe_applicable = False
    for result in results:
        for d in result.diagnostics:
            if d.is_applicable(ctx.unsafe_fixes):
                applicable += 1
                unsafe_applicable |= d.fix.applicability is Applicability.UNSAFE
            elif d.fix is not None and d.fix.applicability is Applicability.UNSAFE:
                hidden += 1
    return applicable, hidden, unsafe_applicable


def render_summary(results: List[FileResult], ctx: ReportContext) -> str:
    """The closing lines for stderr: counts, what is fixable, and how."""
    findings = sum(len(r.diagnostics) for r in results)
    applicable, hidden, unsafe_applicable = _count_fixes(results, ctx)
    fixed = sum(r.fixed_count for r in results)
    lines: List[str] = []
    if ctx.mode == "fix":
        if ctx.show_fixes and (fixed or findings):
            # --show-fixes listed them under "Fixed N findings:" already: ruff's wording here.
            lines.append(f"Found {_plural(fixed + findings, 'finding')} ({fixed} fixed, {findings} remaining).")
        elif fixed or findings:
            lines.append(f"Fixed {_plural(fixed, 'finding')} ({findings} remaining).")
    elif ctx.mode == "diff":
        changed = sum(1 for r in results if r.changed)
        if fixed or changed:
            line = f"Would fix {_plural(fixed, 'finding')} in {_plural(changed, 'file')}"
            lines.append(line + (f" ({findings} remaining)." if findings else "."))
        else:
            lines.append("No fixes to apply.")
    elif findings:
        files = sum(1 for r in results if r.diagnostics)
        lines.append(f"Found {_plural(findings, 'finding')} in {_plural(files, 'file')}.")
        if applicable:
            command = "volfix fix --unsafe-fixes" if unsafe_applicable else "volfix fix"
            lines.append(f"[*] {applicable} fixable with `{command}`.")
    if hidden and ctx.mode != "diff":
        more = "more " if applicable or ctx.mode == "fix" else ""
        fixes = "fix" if hidden == 1 else "fixes"
        line = f"{hidden} {more}{fixes} available with `volfix fix --unsafe-fixes`"
        lines.append(line + _legacy_semantics_clause(results, hidden, ctx) + ".")
    failed = sum(1 for r in results if r.error)
    if failed:
        lines.append(f"volfix failed on {_plural(failed, 'file')} (a volfix bug): see the errors above.")
    if not lines:
        lines.append("All checks passed!" + _not_parsed(ctx.not_parsed))
    undecided = sum(r.undecided for r in results)
    if undecided and ctx.mode != "diff":
        one = undecided == 1
        lines.append(f"{undecided} `.data[0]` {'read of a value' if one else 'reads of values'} whose shape the "
                     f"code does not tell (0-dim since PyTorch 0.4, or not): `--extend-select VF407` lists "
                     f"{'it' if one else 'them'}; `volfix verify --fix -- python <program>` decides "
                     f"{'it' if one else 'them'} by running the program.")
    if ctx.baseline_hidden:
        lines.append(f"{_plural(ctx.baseline_hidden, 'finding')} recorded in the baseline "
                     f"`{ctx.baseline}` not shown.")
    return "".join(line + "\n" for line in lines)


def _not_parsed(count: int) -> str:
    if not count:
        return ""
    files = "file that cannot hold a finding was" if count == 1 else "files that cannot hold a finding were"
    return f" ({count} {files} not parsed: a syntax error there is not reported)"


def _legacy_semantics_clause(results: List[FileResult], hidden: int, ctx: ReportContext) -> str:
    """"; 2 of them are safe with `--legacy-semantics` ...": the withheld unsafe fixes that
    the setting would make safe (VF110/VF111 and unwraps), when it is off."""
    if ctx.legacy_semantics:
        return ""
    count = sum(1 for r in results for d in r.diagnostics
                if not d.is_applicable(ctx.unsafe_fixes) and is_safe_with_legacy_semantics(d))
    if not count:
        return ""
    which = "it is" if hidden == 1 else ("all of them are" if count == hidden else
                                         f"{count} of them {'is' if count == 1 else 'are'}")
    return f"; {which} safe with `--legacy-semantics` (for genuine 0.3 code)"


def render_errors(results: List[FileResult], debug: bool = False) -> str:
    """One line per file volfix failed on (the whole error text with `debug`)."""
    out: List[str] = []
    for result in sorted(results, key=lambda r: r.path):
        if not result.error:
            continue
        text = result.error.strip()
        if not debug:
            text = text.splitlines()[0] if text else "internal error"
        if "volfix bug" not in text:
            text += " (this is a volfix bug; please report it)"
        out.append(f"error: {result.path}: {text}\n")
    return "".join(out)


# ---------------------------------------------------------------------------- statistics


def statistics(results: List[FileResult], ctx: ReportContext) -> List[dict]:
    """Per-code counts, most frequent first: code, name, count, fixable (every finding's fix
    applies with this run's settings, as ruff's `[*]`), fixable_count (how many do)."""
    from ..rules.registry import rules

    known = rules()
    counts: Counter = Counter()
    fixable: Counter = Counter()
    for result in results:
        for d in result.diagnostics:
            counts[d.code] += 1
            fixable[d.code] += d.is_applicable(ctx.unsafe_fixes)
    rows = []
    for code, count in sorted(counts.items(), key=lambda item: (-item[1], item[0])):
        rule = known.get(code)
        rows.append({"code": code, "name": rule.name() if rule else "", "count": count,
                     "fixable": fixable[code] == count, "fixable_count": fixable[code]})
    return rows


def render_statistics(results: List[FileResult], ctx: ReportContext) -> str:
    """A table like ruff's `--statistics`: count, code, a marker, rule name. As ruff: `[*]` when
    `volfix fix` (with this run's --unsafe-fixes) fixes every finding of the rule, `[~]` when it
    fixes some of them, `[ ]` when none."""
    rows = statistics(results, ctx)
    if not rows:
        return ""
    paint = Paint(ctx.color)
    count_width = max(len(str(row["count"])) for row in rows)
    code_width = max(len(row["code"]) for row in rows)
    out = []
    for row in rows:
        marker = paint("[*]", "marker") if row["fixable"] else "[~]" if row["fixable_count"] else "[ ]"
        code = paint(row["code"].ljust(code_width), "code")
        out.append(f"{str(row['count']).rjust(count_width)}  {code}  {marker} {row['name']}".rstrip())
    return "\n".join(out) + "\n"


# ---------------------------------------------------------------------------- --show-fixes


def render_fixes(results: List[FileResult], ctx: ReportContext) -> str:
    """What was fixed (fix), would be fixed (diff) or can be fixed (check), per file and code."""
    from ..rules.registry import rules

    known = rules()
    per_file: List[Tuple[str, Counter]] = []
    for result in sorted(results, key=lambda r: r.path):
        if ctx.mode == "check":
            codes = Counter(d.code for d in result.diagnostics
                            if d.is_applicable(ctx.unsafe_fixes))
        else:
            codes = Counter(result.applied_codes)
        if codes:
            per_file.append((result.path, codes))
    total = sum(sum(codes.values()) for _, codes in per_file)
    if not total:
        return {"fix": "No fixes applied.\n", "diff": "No fixes to apply.\n"}.get(
            ctx.mode, "No fixes available.\n")
    if ctx.mode == "check":
        command = "volfix fix --unsafe-fixes" if ctx.unsafe_fixes else "volfix fix"
        title = f"{_plural(total, 'finding')} fixable with `{command}`:"
    else:
        title = f"{'Fixed' if ctx.mode == 'fix' else 'Would fix'} {_plural(total, 'finding')}:"
    out = [title + "\n"]
    for path, codes in per_file:
        out.append(f"- {path}:\n")
        for code, count in sorted(codes.items()):
            rule = known.get(code)
            name = f" ({rule.name()})" if rule else ""
            out.append(f"    {count} × {code}{name}\n")
    return "".join(out)


# ---------------------------------------------------------------------------- --diff


def render_diff(results: List[FileResult], ctx: ReportContext) -> str:
    """A unified diff of every file whose fixes would change it (per cell for notebooks)."""
    paint = Paint(ctx.color)
    out: List[str] = []
    for result in sorted(results, key=lambda r: r.path):
        if result.source is None or result.fixed_source is None:
            continue
        if result.fixed_source == result.source:
            continue
        out.append(file_diff(result.path, result.source, result.fixed_source, paint))
    return "".join(out)


def file_diff(path: str, before: str, after: str, paint: Optional[Paint] = None) -> str:
    """The diff of one file; for a notebook (its JSON text), one diff per changed cell,
    headed `--- path:cell N` as ruff does, never the diff of the JSON."""
    if path.endswith(".ipynb"):
        old, new = notebook_cell_sources(before), notebook_cell_sources(after)
        if old is not None and new is not None:
            cells = "".join(cell_diff(path, number, old.get(number, ""), new.get(number, ""), paint)
                            for number in sorted(set(old) | set(new)))
            if cells:
                return cells
    return unified_diff(before, after, path, paint)


def cell_diff(path: str, cell: int, before: str, after: str, paint: Optional[Paint] = None) -> str:
    """The diff of one notebook cell's source ("" when unchanged). A cell's last line has
    no newline as a rule, so that is not marked."""
    if before == after:
        return ""
    return unified_diff(before, after, f"{path}:cell {cell}", paint, missing_newline_hint=False)


def unified_diff(before: str, after: str, path: str, paint: Optional[Paint] = None, *,
                 missing_newline_hint: bool = True) -> str:
    paint = paint or Paint(False)
    import difflib  # `--diff` only

    lines = difflib.unified_diff(_split_keepends(before), _split_keepends(after),
                                 fromfile=path, tofile=path)
    out = []
    for line in lines:
        body = line
        if not body.endswith(("\n", "\r")):
            body += "\n\\ No newline at end of file\n" if missing_newline_hint else "\n"
        if line.startswith(("---", "+++")):
            out.append(paint(body.rstrip("\n"), "bold") + "\n")
        elif line.startswith("@@"):
            out.append(paint(body.rstrip("\n"), "hunk") + "\n")
        elif line.startswith("+"):
            out.append(_paint_lines(body, "added", paint))
        elif line.startswith("-"):
            out.append(_paint_lines(body, "removed", paint))
        else:
            out.append(body)
    return "".join(out)


def _split_keepends(text: str) -> List[str]:
    return _LINE_WITH_END.findall(text)


def _paint_lines(body: str, style: str, paint: Paint) -> str:
    if not paint.enabled:
        return body
    return "".join(paint(part.rstrip("\r\n"), style) + part[len(part.rstrip("\r\n")):]
                   for part in body.splitlines(keepends=True))
