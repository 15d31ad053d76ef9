"""parse -> detect -> plan edits -> apply -> verify (SPEC §3).

The engine works on text; `process_file` adds reading, decoding and atomic writing.
It never prints. One bad file becomes a diagnostic (VF001/VF002) or a FileResult with
`error` set; the run continues.
"""
from __future__ import annotations

import ast
import fnmatch
import os
import re
import traceback
from dataclasses import dataclass, field
from typing import Dict, List, Optional, Tuple, Union

from .config import Config
from .model import Applicability, Diagnostic, Edit, FileResult, Fix, Location
from .review import FixReviewer, ReviewCallback

MAX_FIX_PASSES = 20
_RANK = {Applicability.SAFE: 0, Applicability.UNSAFE: 1, Applicability.DISPLAY_ONLY: 2}


@dataclass
class ModuleContext:
    """What a text inherits from outside itself: used for notebook cells.

    `imports` maps local names to qualified names bound by earlier cells
    (e.g. {"Variable": "torch.autograd.Variable", "torch": "torch"}).
    `may_add_imports`: whether a fix may add `import torch`/`import contextlib` to this text.
    `may_remove_imports`: whether a fix may remove the now-unused Variable import from this text.
    `helpers`, `external_calls`: links to the other files of the run (`volfix.project`):
    helpers this text calls (qualified name -> HelperSignature), and calls of this text's
    helpers elsewhere (name -> ExternalCall tuple). `external_calls` is None outside a run.
    """

    imports: dict = field(default_factory=dict)
    may_add_imports: bool = True
    may_remove_imports: bool = True
    helpers: dict = field(default_factory=dict)
    external_calls: Optional[dict] = None


@dataclass
class _Analysis:
    """One analysis of one text: findings as diagnostics plus the edits behind their fixes."""

    text: str
    diagnostics: List[Diagnostic]
    # (group key, applicability, findings' diagnostics, edits) for every fixable group
    groups: List[tuple]
    async_left: int = 0  # `async=` sites that stay (so nothing else can be fixed safely)


# ---------------------------------------------------------------------------------------
# public entry points


def check_text(source: Union[str, bytes], *, path: str, config: Config, with_fixes: bool = False,
               context: Optional[ModuleContext] = None) -> FileResult:
    text, error = _decode(source)
    if error is not None:
        return FileResult(path=path, diagnostics=(error,), source=None)
    config = _per_file_config(config, path)
    analysis = _analyse(text, path=path, config=config, context=context)
    return FileResult(path=path, diagnostics=tuple(analysis.diagnostics), source=text)


def fix_text(source: Union[str, bytes], *, path: str, config: Config, unsafe_fixes: bool = False,
             context: Optional[ModuleContext] = None,
             review: Optional[ReviewCallback] = None) -> FileResult:
    """`review`: asked about each fix before it is applied (`volfix.review`)."""
    text, error = _decode(source)
    if error is not None:
        return FileResult(path=path, diagnostics=(error,), source=None)
    config = _per_file_config(config, path)
    fixed, applied, problems = _fix_loop(text, path=path, config=config, unsafe=unsafe_fixes,
                                         context=context, review=review)
    codes = tuple(d.code for d in applied)
    final = _analyse(fixed, path=path, config=config, context=context)
    diagnostics = list(final.diagnostics) + problems
    diagnostics.sort(key=lambda d: (d.cell or 0, d.location, d.code))
    return FileResult(path=path, diagnostics=tuple(diagnostics), source=text, fixed_source=fixed,
                      fixed_count=len(applied), changed=fixed != text, applied_codes=codes,
                      applied=tuple(applied))


def module_imports(text: str, context: Optional[ModuleContext] = None) -> dict:
    """The name -> qualified-name bindings in effect after running `text` (module level)."""
    from .analysis import imports as imp
    from .analysis.async_kw import PLACEHOLDER, find_async_keywords, replace_keywords

    inherited = dict(context.imports) if context else {}
    masked = replace_keywords(text, find_async_keywords(text), PLACEHOLDER)
    try:
        tree = ast.parse(masked)
    except (SyntaxError, ValueError, RecursionError, MemoryError):
        return inherited
    bindings = imp.scope_bindings(tree.body, inherited)
    if "Variable" in masked:
        from .analysis.legacy import LegacyAnalysis

        for name, line in LegacyAnalysis(masked, tree, inherited=inherited).variable_wrappers().items():
            if line:  # defined in this text: later cells call it as a wrapper
                bindings[name] = imp.WRAPPER
    return bindings


def process_file(path: str, *, config: Config, mode: str = "check", unsafe_fixes: bool = False,
                 display_path: Optional[str] = None, context: Optional[ModuleContext] = None,
                 review: Optional[ReviewCallback] = None) -> FileResult:
    """Read one file (.py/.pyi/.ipynb), check or fix it, write it back in fix mode.
    `context`: the file's links to the other files of the run (`volfix.project`).
    `review` (fix/diff mode): asked about each fix before it is applied; the file is written
    once every fix has been answered (a KeyboardInterrupt from it writes nothing)."""
    shown = display_path or path
    try:
        return _process_file(path, shown, config=config, mode=mode, unsafe_fixes=unsafe_fixes,
                             context=context, review=review)
    except KeyboardInterrupt:
        raise
    except Exception as exc:  # the one per-file boundary: a crash is a volfix bug, the run goes on
        detail = "".join(traceback.format_exception_only(type(exc), exc)).strip()
        return FileResult(path=shown, error=f"internal error while processing {shown}: {detail} "
                                            f"(this is a volfix bug, please report it)\n"
                                            + "".join(traceback.format_exception(type(exc), exc, exc.__traceback__)))


# ---------------------------------------------------------------------------------------
# files


def _process_file(path: str, shown: str, *, config: Config, mode: str, unsafe_fixes: bool,
                  context: Optional[ModuleContext] = None,
                  review: Optional[ReviewCallback] = None) -> FileResult:
    from . import sourcefile

    try:
        data, _stat = sourcefile.read_file(path)
    except OSError as exc:
        return FileResult(path=shown, diagnostics=(_file_diagnostic("VF002", f"File cannot be read: {exc.strerror or exc}"),))
    file_config = _per_file_config(config, shown)
    if path.endswith(".ipynb"):
        from . import notebook

        result, new_bytes = notebook.process_notebook(data, path=shown, config=file_config, mode=mode,
                                                      unsafe_fixes=unsafe_fixes, review=review)
        if mode == "fix" and new_bytes is not None and new_bytes != data:
            problem = _write(path, new_bytes, data)
            if problem is not None:
                return _replace(result, diagnostics=result.diagnostics + (problem,), changed=False)
        return result
    try:
        decoded = sourcefile.decode_source(data)
    except sourcefile.SourceDecodeError as exc:
        return FileResult(path=shown, diagnostics=(_file_diagnostic("VF002", f"File cannot be read: {exc}"),))
    if mode == "check":
        return check_text(decoded.text, path=shown, config=file_config, context=context)
    result = fix_text(decoded.text, path=shown, config=file_config, unsafe_fixes=unsafe_fixes,
                      context=context, review=review)
    if not result.changed:
        return result
    try:
        new_bytes = sourcefile.encode_source(result.fixed_source, decoded)
    except sourcefile.SourceDecodeError as exc:
        problem = _file_diagnostic("VF002", f"File cannot be written: {exc}")
        return _unfixed(result, decoded.text, path=shown, config=file_config, extra=problem,
                            context=context)
    if mode == "fix":
        problem = _write(path, new_bytes, data)
        if problem is not None:
            return _unfixed(result, decoded.text, path=shown, config=file_config, extra=problem,
                            context=context)
    return result


def _write(path: str, new: bytes, old: bytes) -> Optional[Diagnostic]:
    from . import sourcefile

    try:
        sourcefile.write_file_atomic(path, new, original=old)
    except sourcefile.FileChangedError:
        return _file_diagnostic("VF002", "File changed on disk while volfix was fixing it: not written")
    except OSError as exc:
        return _file_diagnostic("VF002", f"File cannot be written: {exc.strerror or exc}")
    return None


def _unfixed(result: FileResult, text: str, *, path: str, config: Config, extra: Diagnostic,
             context: Optional[ModuleContext] = None) -> FileResult:
    again = check_text(text, path=path, config=config, context=context)
    return FileResult(path=path, diagnostics=again.diagnostics + (extra,), source=text,
                      fixed_source=text, changed=False)


def _replace(result: FileResult, **changes) -> FileResult:
    import dataclasses

    return dataclasses.replace(result, **changes)


def _per_file_config(config: Config, path: str) -> Config:
    if not config.per_file_ignores:
        return config
    import dataclasses

    norm = path.replace(os.sep, "/")
    extra = []
    for pattern, codes in config.per_file_ignores:
        if fnmatch.fnmatch(norm, pattern) or fnmatch.fnmatch(os.path.basename(norm), pattern) \
                or fnmatch.fnmatch(norm, f"*/{pattern}"):
            extra.extend(codes)
    if not extra:
        return config
    return dataclasses.replace(config, ignore=tuple(config.ignore) + tuple(extra), per_file_ignores=())


# ---------------------------------------------------------------------------------------
# analysis


def _decode(source: Union[str, bytes]) -> Tuple[str, Optional[Diagnostic]]:
    if isinstance(source, str):
        return (source[1:] if source.startswith("\ufeff") else source), None
    from . import sourcefile

    try:
        return sourcefile.decode_source(source).text, None
    except sourcefile.SourceDecodeError as exc:
        return "", _file_diagnostic("VF002", f"File cannot be read: {exc}")


def _file_diagnostic(code: str, message: str, row: int = 1, col: int = 1) -> Diagnostic:
    return Diagnostic(code=code, message=message, location=Location(row, col),
                      end_location=Location(row, col))


_ASYNC_KEYWORD = re.compile(r"\basync\s*=(?!=)")
# Every way a file can reach torch.autograd.Variable (SPEC §1): without one of these, no
# `Variable` in the file is torch's.
_VARIABLE_IMPORT = re.compile(
    r"\bautograd(?:\.variable)?\.Variable\b"
    r"|\bfrom\s+torch\.autograd(?:\.variable)?\s+import\b"
    r"|\bfrom\s+torch\s+import\s*\(?[\s\w,\\]*\bautograd\b"
    r"|\bimport\s+torch\.autograd\b")
_SUPPRESSION = re.compile(r"(?i)volfix\s*:\s*ignore|noqa\s*:[^\n]*\bVF\d")
_VOLATILE_USE = re.compile(r"\.\s*volatile\b|[\"']volatile[\"']|\bvolatile\s*=")


def _may_have_findings(text: str, context: Optional[ModuleContext]) -> bool:
    """Cheap text test: can any rule fire? Files that fail it are not parsed (so VF001 is
    only reported for files that could hold legacy code)."""
    if context is not None and context.helpers:
        return True  # calls a helper of another file: may hold a volatile source without the words
    inherited = bool(context and context.imports)
    if "Variable" in text and (inherited or ("autograd" in text and _VARIABLE_IMPORT.search(text))):
        return True
    if "volatile" in text and ("torch" in text or inherited) and _VOLATILE_USE.search(text):
        return True
    return "async" in text and _ASYNC_KEYWORD.search(text) is not None


def _analyse(text: str, *, path: str, config: Config, context: Optional[ModuleContext]) -> _Analysis:
    enabled = config.enabled_codes()
    if not _may_have_findings(text, context):
        if "VF010" in enabled and _SUPPRESSION.search(text):
            from .analysis.text import SourceText

            return _finish(text, [], [], enabled, SourceText(text))
        return _Analysis(text, [], [])
    from .analysis.async_kw import PLACEHOLDER, find_async_keywords, replace_keywords
    from .analysis.text import SourceText

    src = SourceText(text)
    diagnostics: List[Diagnostic] = []
    groups: List[tuple] = []
    sites = find_async_keywords(text, tokens=src.tokens)
    in_def = [site for site in sites if site.in_def]
    if in_def:
        # Renaming a parameter would change an API: the file stays unparsable, nothing to fix.
        first = in_def[0]
        reason = (f"`async` is a reserved keyword since Python 3.7 and names a parameter at line {first.row}; "
                  "renaming it would change an API, so do it by hand")
        diagnostics.append(_file_diagnostic("VF001", f"File cannot be parsed: {reason}", first.row, first.col + 1))
        return _finish(text, diagnostics, groups, enabled, src)
    for site in sites:
        diag = _async_diagnostic(src, site, enabled)
        if diag is not None:
            diagnostics.append(diag)
    masked = replace_keywords(text, sites, PLACEHOLDER)
    try:
        tree = ast.parse(masked)
    except SyntaxError as exc:
        diagnostics.append(_syntax_diagnostic(text, exc, sites))
        return _finish(text, diagnostics, groups, enabled, src)
    except (RecursionError, MemoryError):
        diagnostics.append(_file_diagnostic("VF001", "File cannot be parsed: too deeply nested for the parser"))
        return _finish(text, diagnostics, groups, enabled, src)
    except ValueError as exc:  # e.g. null bytes
        diagnostics.append(_file_diagnostic("VF002", f"File cannot be read: {exc}"))
        return _finish(text, diagnostics, groups, enabled, src)
    from .analysis.legacy import LegacyAnalysis

    analysis = LegacyAnalysis(masked, tree, inherited=dict(context.imports) if context else None,
                              legacy_semantics=config.legacy_semantics, no_grad_style=config.no_grad_style,
                              src=src, imported_helpers=context.helpers if context else None,
                              external_calls=context.external_calls if context else None)
    try:
        findings = analysis.run()
    except RecursionError:
        diagnostics.append(_file_diagnostic("VF001", "File cannot be parsed: too deeply nested to analyse"))
        return _finish(text, diagnostics, groups, enabled, src)
    import_edits = _import_edits(analysis, context)
    async_left = sum(1 for s in sites)
    by_group: Dict[object, list] = {}
    for finding in findings:
        if finding.code not in enabled:
            continue
        edits = list(finding.edits)
        for module, edit in import_edits.items():
            if edits and any(f"{module}." in e.content for e in edits) and edit is not None:
                edits.append(edit)
        fix = None
        # An edit that copies a masked `async=` keyword must wait until VF301 renamed it.
        blocked = any(PLACEHOLDER in e.content for e in edits)
        if finding.applicability is not None and edits and not blocked:
            fix = Fix(finding.applicability, _fix_message(finding), _to_edits(src, edits))
        row, col = src.row_col(finding.start)
        erow, ecol = src.row_col(finding.end)
        snippet = text[finding.start:finding.end].splitlines()[0] if finding.end > finding.start else ""
        note = finding.note
        if blocked and finding.applicability is not None:
            note = "; ".join(n for n in (note, "not fixed yet: fix the `async=` keywords (VF301) first") if n)
        diag = Diagnostic(code=finding.code, message=finding.message or _rule_message(finding.code),
                          location=Location(row, col + 1), end_location=Location(erow, ecol + 1),
                          fix=fix, note=note, snippet=snippet.strip())
        diagnostics.append(diag)
        if fix is not None:
            key = ("group", finding.group) if finding.group is not None else ("finding", finding.start, finding.code)
            by_group.setdefault(key, [finding.applicability, [], []])
            entry = by_group[key]
            if _RANK[finding.applicability] > _RANK[entry[0]]:
                entry[0] = finding.applicability
            entry[1].append(diag)
            entry[2].extend(e for e in edits if e not in entry[2])
    for key, (applicability, diags, edits) in by_group.items():
        groups.append((key, applicability, diags, edits))
    result = _finish(text, diagnostics, groups, enabled, src)
    result.async_left = async_left
    return result


def _finish(text, diagnostics, groups, enabled, src) -> _Analysis:
    from .analysis.edits import TextEdit

    diagnostics = [d for d in diagnostics if d.code in enabled]
    diagnostics, unused = _apply_suppressions(diagnostics, text, enabled)
    kept_ids = {id(d) for d in diagnostics}
    groups = [g for g in groups if all(id(d) in kept_ids for d in g[2])]
    for d in unused:  # VF010: stale suppression comments, fixed like any other finding
        if d.fix is not None:
            edits = [TextEdit(_offset(src, e.location), _offset(src, e.end_location), e.content)
                     for e in d.fix.edits]
            groups.append((("VF010", d.location), d.fix.applicability, [d], edits))
    diagnostics = diagnostics + unused
    diagnostics.sort(key=lambda d: (d.location, d.code))
    return _Analysis(text, diagnostics, groups)


def _offset(src, loc: Location) -> int:
    return src.line_starts[loc.row - 1] + loc.column - 1


def _apply_suppressions(diagnostics: List[Diagnostic], text: str, enabled) -> Tuple[list, list]:
    lowered = text.lower()
    if "noqa" not in lowered and "volfix" not in lowered:
        return diagnostics, []  # no suppression comment can exist: skip tokenizing
    try:
        from .suppression import apply_suppressions
    except ImportError:  # pragma: no cover - during development only
        return diagnostics, []
    kept, unused = apply_suppressions(diagnostics, text)
    return list(kept), [d for d in unused if d.code in enabled]


def _rule_message(code: str) -> str:
    from .registry import get

    return get(code).MESSAGE


def _fix_message(finding) -> str:
    contents = " ".join(e.content for e in finding.edits)
    # A helper's call site (in another file) has nothing to unwrap: only the region.
    unwrap = "" if finding.call_site else "Unwrap and "
    if finding.code == "VF104":
        return "Drop the parameter and its arguments, and apply the helper's fix"
    if "@" in contents and "no_grad" in contents:
        return _sentence(f"{unwrap}decorate the function with `@torch.no_grad()`")
    if "with " in contents and ("no_grad" in contents or "set_grad_enabled" in contents):
        return _sentence(f"{unwrap}run the dependent statements under a grad-mode `with` block")
    return {
        "VF101": "Unwrap the `Variable`", "VF102": "Remove the `Variable` wrapper",
        "VF103": "Unwrap the `Variable`", "VF110": "Remove the `Variable` wrapper",
        "VF111": "Ask for gradients without `Variable`", "VF112": "Use `isinstance(x, torch.Tensor)`",
        "VF201": "Replace the `.volatile` read", "VF202": "Delete the `.volatile` assignment",
        "VF301": "Rename `async=` to `non_blocking=`",
    }.get(finding.code, "Apply the fix")


def _sentence(text: str) -> str:
    return text[:1].upper() + text[1:]


def _to_edits(src, edits) -> Tuple[Edit, ...]:
    out = []
    # The order apply_edits uses: insertions first (an added import before a region header).
    for e in sorted(set(edits), key=lambda e: (e.start, e.end != e.start, not e.key, e.end, e.content)):
        r1, c1 = src.row_col(e.start)
        r2, c2 = src.row_col(e.end)
        out.append(Edit(e.content, Location(r1, c1 + 1), Location(r2, c2 + 1)))
    return tuple(out)


def _async_diagnostic(src, site, enabled) -> Optional[Diagnostic]:
    from .analysis.edits import TextEdit

    if "VF301" not in enabled:
        return None
    start = src.line_starts[site.row - 1] + site.col
    applicability = Applicability.SAFE if site.safe else Applicability.UNSAFE
    note = None if site.safe else (f"unsafe fix: `{site.callee or 'this call'}` is not a PyTorch method "
                                   "known to have renamed `async` to `non_blocking`")
    fix = Fix(applicability, "Rename `async=` to `non_blocking=`",
              _to_edits(src, [TextEdit(start, start + 5, "non_blocking")]))
    return Diagnostic(code="VF301", message=_rule_message("VF301"), location=Location(site.row, site.col + 1),
                      end_location=Location(site.row, site.col + 6), fix=fix, note=note, snippet="async=")


def _syntax_diagnostic(text: str, exc: SyntaxError, sites) -> Diagnostic:
    reason = None
    try:
        from .py2 import python2_reason

        reason = python2_reason(text)
    except ImportError:  # pragma: no cover - during development only
        pass
    if reason is None:
        reason = f"{exc.msg} (line {exc.lineno})" if exc.lineno else exc.msg
    row = exc.lineno or 1
    col = max(exc.offset or 1, 1)
    return Diagnostic(code="VF001", message=f"File cannot be parsed: {reason}", location=Location(row, col),
                      end_location=Location(row, col))


def _import_edits(analysis, context: Optional[ModuleContext]) -> dict:
    """module -> the TextEdit adding `import module` (None when it cannot be added)."""
    from .analysis import imports as imp
    from .analysis.edits import TextEdit

    out = {}
    for module in sorted(analysis.needs_imports):
        if imp.spelling(analysis.module_bindings, f"{module}.x"):
            continue
        if context is not None and not context.may_add_imports:
            out[module] = None
            continue
        offset, prefix, suffix = _import_position(analysis)
        out[module] = TextEdit(offset, offset, f"{prefix}import {module}{suffix}", key=f"import {module}")
    return out


def _import_position(analysis) -> Tuple[int, str, str]:
    """Where `import x` goes: after the first run of top-level imports, else after the
    docstring, else at the top (after comments)."""
    src, body, nl = analysis.src, analysis.tree.body, analysis.src.newline
    anchor = None
    for i, stmt in enumerate(body):
        if isinstance(stmt, (ast.Import, ast.ImportFrom)):
            anchor = stmt
            if i + 1 < len(body) and not isinstance(body[i + 1], (ast.Import, ast.ImportFrom)):
                break
        elif anchor is not None:
            break
        elif not (i == 0 and isinstance(stmt, ast.Expr) and isinstance(stmt.value, ast.Constant)
                  and isinstance(stmt.value.value, str)):
            break
        else:
            anchor = stmt  # the docstring
    if anchor is None:
        first = body[0] if body else None
        if first is None:
            return len(src.text), ("" if not src.text or src.text.endswith(("\n", "\r")) else nl), nl
        row = min([first.lineno] + [d.lineno for d in getattr(first, "decorator_list", [])])
        # Before a top-level `def`/`class`, keep PEP 8's two blank lines after the import.
        gap = nl * 2 if isinstance(first, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)) else ""
        return src.line_starts[row - 1], "", nl + gap
    end_row = anchor.end_lineno
    offset = src.line_after(end_row)
    if offset == len(src.text) and not src.text.endswith(("\n", "\r")):
        return offset, nl, ""
    return offset, "", nl


# ---------------------------------------------------------------------------------------
# fixing


def _fix_loop(text: str, *, path: str, config: Config, unsafe: bool, context: Optional[ModuleContext],
              review: Optional[ReviewCallback] = None) -> Tuple[str, List[Diagnostic], List[Diagnostic]]:
    from .analysis.edits import apply_edits, select_compatible

    applied: List[Diagnostic] = []
    problems: List[Diagnostic] = []
    banned: set = set()
    reviewer = FixReviewer(review, path) if review is not None else None
    current = text
    if not _compiles(text):
        # Not Python 3 even with `async=` masked (VF001): nothing is fixed, so nothing can break.
        return text, applied, problems
    for _ in range(MAX_FIX_PASSES):
        analysis = _analyse(current, path=path, config=config, context=context)
        candidates = []
        for key, applicability, diags, edits in analysis.groups:
            if applicability is Applicability.SAFE or (unsafe and applicability is Applicability.UNSAFE):
                ident = tuple((d.code, d.snippet) for d in diags)
                if ident in banned:
                    continue
                candidates.append(((ident, diags), edits))
        candidates += _async_groups(analysis, current, unsafe, banned)
        if not candidates:
            break
        # VF104's fix contains its helper's VF103 fix: it goes first, or it would never apply.
        candidates.sort(key=lambda c: not any(d.code == "VF104" for d in c[0][1]))
        if reviewer is not None:
            candidates = reviewer.select(current, candidates)  # asks; declined ones never return
            if not candidates:
                break
        chosen, edits = select_compatible(candidates)
        new = apply_edits(current, edits)
        if not _compiles(new):
            # Find the fix that breaks the file, drop it, report it, keep the others.
            good = []
            for ident_diags, group_edits in candidates:
                trial = apply_edits(current, group_edits)
                if _compiles(trial):
                    good.append((ident_diags, group_edits))
                else:
                    ident, diags = ident_diags
                    banned.add(ident)
                    for d in diags:
                        problems.append(_bug_diagnostic(d))
            if not good:
                continue
            # Each works alone but not all together: add them one by one while the text compiles.
            kept: list = []
            for candidate in good:
                trial_chosen, trial_edits = select_compatible(kept + [candidate])
                if len(trial_chosen) == len(kept) + 1 and _compiles(apply_edits(current, trial_edits)):
                    kept.append(candidate)
            chosen, edits = select_compatible(kept)
            new = apply_edits(current, edits)
        for ident, diags in chosen:
            applied.extend(diags)
        if new == current:
            break
        if reviewer is not None:
            reviewer.follow(edits)
        current = new
    if applied:
        current = _remove_created_self_assignments(text, current)
    if applied and (context is None or context.may_remove_imports):
        current = _remove_unused_variable_imports(current)
    if current != text and not _compiles(current):  # never hand back code that does not compile
        return text, [], problems + [_bug_diagnostic(None)]
    return current, applied, problems


def _async_groups(analysis: _Analysis, text: str, unsafe: bool, banned: set) -> list:
    from .analysis.edits import TextEdit
    from .analysis.text import SourceText

    out = []
    src = None
    for d in analysis.diagnostics:
        if d.code != "VF301" or d.fix is None:
            continue
        if not (d.fix.applicability is Applicability.SAFE or (unsafe and d.fix.applicability is Applicability.UNSAFE)):
            continue
        ident = (("VF301", d.location.row, d.location.column),)
        if ident in banned:
            continue
        src = src or SourceText(text)
        edit = d.fix.edits[0]
        start = src.line_starts[edit.location.row - 1] + edit.location.column - 1
        out.append(((ident, [d]), [TextEdit(start, start + 5, "non_blocking")]))
    return out


def _compiles(text: str) -> bool:
    """Does the text compile (with `async=` keywords that stay masked, as the analysis sees it)?"""
    from .analysis.async_kw import PLACEHOLDER, find_async_keywords, replace_keywords

    text = replace_keywords(text, find_async_keywords(text), PLACEHOLDER)
    try:
        compile(text, "<volfix>", "exec", dont_inherit=True)
    except (SyntaxError, ValueError, RecursionError, MemoryError):
        return False
    return True


def _bug_diagnostic(diag: Optional[Diagnostic]) -> Diagnostic:
    if diag is None:
        return _file_diagnostic("VF001", "not fixed: the fixed file did not compile (volfix bug, please report)")
    return Diagnostic(code=diag.code, message=diag.message, location=diag.location,
                      end_location=diag.end_location, fix=None,
                      note=f"not fixed: volfix bug, please report ({diag.code} fix produced code that does not compile)",
                      snippet=diag.snippet)


def _self_assignments(tree: ast.AST) -> List[ast.Assign]:
    """`x = x` and `a, b = a, b`: what unwrapping `a, b = Variable(a), Variable(b)` leaves."""
    def names(node):
        if isinstance(node, ast.Name):
            return (node.id,)
        if isinstance(node, ast.Tuple) and all(isinstance(e, ast.Name) for e in node.elts):
            return tuple(e.id for e in node.elts)
        return None

    out = []
    for node in ast.walk(tree):
        if isinstance(node, ast.Assign) and len(node.targets) == 1:
            left, right = names(node.targets[0]), names(node.value)
            if left is not None and left == right:
                out.append(node)
    return out


def _remove_created_self_assignments(original: str, text: str) -> str:
    """Delete the no-op self-assignments the fixes created (never ones the author wrote)."""
    from .analysis.edits import apply_edits
    from .analysis.legacy import LegacyAnalysis

    from .analysis.async_kw import PLACEHOLDER, find_async_keywords, replace_keywords

    try:
        masked = replace_keywords(original, find_async_keywords(original), PLACEHOLDER)
        before = {ast.unparse(a) for a in _self_assignments(ast.parse(masked))}
    except (SyntaxError, ValueError, RecursionError, MemoryError):
        return text  # cannot tell the author's self-assignments from ours: leave them all
    try:
        tree = ast.parse(replace_keywords(text, find_async_keywords(text), PLACEHOLDER))
    except (SyntaxError, ValueError, RecursionError, MemoryError):
        return text
    created = [a for a in _self_assignments(tree) if ast.unparse(a) not in before]
    if not created:
        return text
    helper = LegacyAnalysis(text, tree)
    edits = []
    for stmt in created:
        deletion = helper.delete_statement(stmt)
        if deletion is not None:
            edits.extend(deletion)
    new = apply_edits(text, edits) if edits else text
    return new if _compiles(new) else text


def _remove_unused_variable_imports(text: str) -> str:
    """Drop `from torch.autograd import Variable` (or its alias) once nothing uses the name."""
    from .analysis.edits import apply_edits
    from .analysis.text import SourceText

    if "Variable" not in text:
        return text
    try:
        tree = ast.parse(text)
    except (SyntaxError, ValueError, RecursionError, MemoryError):
        return text
    src = SourceText(text)
    used = {n.id for n in ast.walk(tree) if isinstance(n, ast.Name)}
    used |= _names_in_all(tree)
    edits = []
    for stmt in tree.body:
        if not (isinstance(stmt, ast.ImportFrom) and stmt.level == 0
                and stmt.module in ("torch.autograd", "torch.autograd.variable")):
            continue
        drop = [a for a in stmt.names if a.name == "Variable" and (a.asname or a.name) not in used]
        if not drop:
            continue
        keep = [a for a in stmt.names if a not in drop]
        edit = _import_edit(src, stmt, keep)
        if edit is not None:
            edits.append(edit)
    return apply_edits(text, edits) if edits else text


def _names_in_all(tree: ast.Module) -> set:
    for stmt in tree.body:
        if isinstance(stmt, ast.Assign) and any(isinstance(t, ast.Name) and t.id == "__all__" for t in stmt.targets):
            if isinstance(stmt.value, (ast.List, ast.Tuple)):
                return {e.value for e in stmt.value.elts if isinstance(e, ast.Constant) and isinstance(e.value, str)}
    return set()


def _import_edit(src, stmt: ast.ImportFrom, keep: list):
    from .analysis.edits import TextEdit

    first, last = stmt.lineno, stmt.end_lineno
    before = src.line(first)[: src.char_col(first, stmt.col_offset)]
    after = src.line(last)[src.char_col(last, stmt.end_col_offset):]
    if keep:
        names = ", ".join(f"{a.name} as {a.asname}" if a.asname else a.name for a in keep)
        comments = src.comments_between(src.start(stmt), src.end(stmt))
        if comments:
            return None  # a multi-line import with comments: leave it to the user
        return TextEdit(src.start(stmt), src.end(stmt), f"from {stmt.module} import {names}")
    if before.strip():
        return None  # shares its line (`import x; from torch.autograd import Variable`)
    comment = after.strip()
    if comment and not comment.startswith("#"):
        return None
    inner_comments = src.comments_between(src.start(stmt), src.end(stmt))
    kept = " ".join(inner_comments + ([comment] if comment else []))
    if kept:
        return TextEdit(src.start(stmt), src.line_end(last), kept)
    return TextEdit(src.line_starts[first - 1], src.line_after(last), "")
