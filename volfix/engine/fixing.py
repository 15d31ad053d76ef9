"""apply -> verify (SPEC §3): the fix loop.

Fixes are applied in passes, as ruff does: each pass analyses the current text, renders the
applicable fix groups, applies those whose edits do not conflict, and verifies that the text
still compiles; a fix that breaks it is dropped and reported as a volfix bug, the others stay.
When nothing more applies, the leftovers the fixes created are collapsed and the imports they
made unused are removed. A text that does not compile is never handed back.
"""
from __future__ import annotations

import ast
import bisect
import dataclasses
import functools
from typing import Callable, List, Optional, Sequence, Tuple, Union

from ..fixes.edits import TextEdit, apply_edits, diff_edits, piled_blank_lines, select_compatible
from ..model import Applicability, Diagnostic
from .review import FixReviewer, ReviewCallback
from ..syntax import big_files
from ..syntax.document import Document, compile_error, mask_async, parse_document
from ..syntax.positions import line_breaks, physical_lines
from .analyse import Analysis, FixGroup, Options, analyse

MAX_FIX_PASSES = 20
MAX_CLEANUP_PASSES = 8

# The document analysed: a function from the current text to (document or None, parse errors).
Parse = Callable[[str], Tuple[Optional[Document], tuple]]
Review = ReviewCallback


def compiles(text: str) -> bool:
    """Does the text compile (with `async=` keywords that stay masked, as the analysis sees it)?"""
    return compile_error(text) is None


MAX_CLEANUP_ROUNDS = 3


def fix_loop(text: str, options: Options, *, unsafe: bool, parse: Optional[Parse] = None,
             verify: Callable[[str], bool] = compiles, may_remove_imports: bool = True,
             keep_variable_import: bool = False, review: Optional[Review] = None, path: str = "",
             extra_used: frozenset = frozenset()) -> Tuple[str, List[Diagnostic], List[Diagnostic]]:
    """(fixed text, the diagnostics whose fixes were applied, volfix-bug diagnostics)."""
    applied: List[Diagnostic] = []
    problems: List[Diagnostic] = []
    banned: set = set()
    current = text
    if not verify(text):
        return text, applied, problems  # not Python 3 even with `async=` masked: nothing to fix
    if review is not None:
        finish = Finish(options, parse, verify, may_remove_imports, keep_variable_import, extra_used)
        return _review_loop(text, options, unsafe, parse, verify, FixReviewer(review, path, finish.preview))
    for _round in range(MAX_CLEANUP_ROUNDS):
        before = len(applied)
        for _ in range(MAX_FIX_PASSES):
            candidates = _candidates(_analyse(current, options, parse), unsafe, banned, problems)
            if not candidates:
                break
            chosen, edits = select_compatible(candidates)
            new = apply_edits(current, edits + piled_blank_lines(current, edits))
            if not verify(new):
                chosen, edits, new = _without_breaking(current, candidates, banned, problems, verify)
                if not chosen:
                    continue
            for _ident, diags in chosen:
                applied.extend(diags)
            if new == current:
                break
            current = new
        if len(applied) == before:
            break
        cleaned = cleanup(text, current, options, parse, verify, may_remove_imports, keep_variable_import,
                          extra_used)
        if cleaned == current:
            break
        # The clean-up can make another fix possible (an alias deleted from a closure that held
        # a flag's value): one more round, so that `fix` run twice changes nothing the second time.
        current = cleaned
    if current != text and not verify(current):  # never hand back code that does not compile
        return text, [], problems + [_bug(None, "the fixed file did not compile")]
    return current, applied, problems


def _candidates(analysis: Analysis, unsafe: bool, banned: set, problems: list) -> list:
    """The applicable fix groups of one pass as `((ident, diagnostics), edits)`, VF104 first."""
    candidates = []
    for group in analysis.groups:
        if not _applicable(group.applicability, unsafe):
            continue
        ident = tuple((d.code, d.snippet) for d in group.diagnostics)
        if ident in banned:
            continue
        edits = _edits(analysis, group)
        if edits is None:
            banned.add(ident)
            problems.extend(_bug(d, "its fix could not be rendered") for d in group.diagnostics)
            continue
        candidates.append(((ident, group.diagnostics), edits))
    # VF104's fix contains its helper's VF103 fix: it goes first, or it would never apply.
    candidates.sort(key=lambda c: not any(d.code == "VF104" for d in c[0][1]))
    return candidates


def _review_loop(text: str, options: Options, unsafe: bool, parse: Optional[Parse], verify,
                 reviewer: FixReviewer) -> Tuple[str, List[Diagnostic], List[Diagnostic]]:
    """The fix loop with a reviewer: one fix at a time, each applied exactly as it was shown
    (`FixProposal.after`: the fix and the clean-up it calls for), then the text is analysed
    again. What is written is the last text shown, so a preview never differs from the file."""
    applied: List[Diagnostic] = []
    problems: List[Diagnostic] = []
    banned: set = set()
    current = text
    for _ in range(MAX_REVIEW_STEPS):
        candidates = _candidates(_analyse(current, options, parse), unsafe, banned, problems)
        step = reviewer.next(current, candidates)  # asks; declined findings never return
        if step is None:
            break
        (ident, diagnostics), after = step
        if after == current or not verify(after):
            banned.add(ident)
            if after != current:
                problems.extend(_bug(d, f"{d.code} fix produced code that does not compile") for d in diagnostics)
            continue
        applied.extend(diagnostics)
        reviewer.follow(diff_edits(current, after))
        current = after
    return current, applied, problems


MAX_REVIEW_STEPS = 500


class Finish:
    """What `volfix fix` does after the fixes of a text: the clean-up, with the options of
    this text (a notebook's parse and verification, the imports it may remove)."""

    def __init__(self, options: Options, parse: Optional[Parse], verify, may_remove_imports: bool,
                 keep_variable_import: bool, extra_used: frozenset):
        self.options, self.parse, self.verify = options, parse, verify
        self.may_remove_imports, self.keep_variable_import = may_remove_imports, keep_variable_import
        self.extra_used = extra_used
        self._original: Optional[Original] = None  # what the clean-up reads of the last text previewed

    def preview(self, text: str, edits: Sequence[TextEdit]) -> str:
        """`text` with one fix group's `edits` applied and cleaned up: what `volfix fix`
        writes for that fix alone. Unchanged clean-up when the edits break the text."""
        new = apply_edits(text, list(edits) + piled_blank_lines(text, edits))
        if new == text or not self.verify(new):
            return new
        if self._original is None or self._original.text is not text:
            self._original = Original(text, self.parse)
        return cleanup(self._original, new, self.options, self.parse, self.verify, self.may_remove_imports,
                       self.keep_variable_import, self.extra_used)


def with_fix_edits(text: str, analysis: Analysis, options: Options, *, parse: Optional[Parse] = None,
                   verify=compiles, extra_used: frozenset = frozenset(),
                   keep_variable_import: bool = False,
                   wanted: Optional[Callable[[Diagnostic], bool]] = None) -> List[Diagnostic]:
    """The analysis's diagnostics, each fix carrying the edits that turn `text` into what
    `volfix fix` writes for that fix alone, clean-up included (for JSON, SARIF and editors'
    quick fixes: every preview of a fix is the text `fix` writes). The findings fixed together
    (one region) share their edits; a fix that cannot be rendered or breaks the text has none.
    With `wanted`, only the groups holding a diagnostic it accepts are rendered (each preview
    reads the whole text: an editor asks for the fixes under the cursor, not for thousands);
    the other fixes keep no edits."""
    from ..model import Edit, Location
    from ..syntax.positions import SourceText

    finish = Finish(options, parse, verify, True, keep_variable_import, extra_used)
    starts = SourceText(text).line_starts

    def location(offset: int) -> Location:
        row = bisect.bisect_right(starts, offset)
        return Location(row, offset - starts[row - 1] + 1)

    replaced = {}
    for group in analysis.groups:
        if wanted is not None and not any(wanted(d) for d in group.diagnostics):
            continue
        edits = _edits(analysis, group)
        after = None if edits is None else finish.preview(text, edits)
        found: Tuple[Edit, ...] = ()
        if after is not None and after != text and verify(after):
            found = tuple(Edit(e.content, location(e.start), location(e.end)) for e in diff_edits(text, after))
        for d in group.diagnostics:
            if d.fix is not None:
                replaced[id(d)] = dataclasses.replace(d, fix=dataclasses.replace(d.fix, edits=found))
    return [replaced.get(id(d), d) for d in analysis.diagnostics]


def _analyse(text: str, options: Options, parse: Optional[Parse]) -> Analysis:
    if parse is None:
        return analyse(text, options)
    doc, errors = parse(text)
    if doc is None:
        return analyse(text, options)
    return analyse(text, options, doc=doc, parse_errors=errors)


def _applicable(applicability: Applicability, unsafe: bool) -> bool:
    return applicability is Applicability.SAFE or (unsafe and applicability is Applicability.UNSAFE)


def _edits(analysis: Analysis, group: FixGroup) -> Optional[List[TextEdit]]:
    if group.key and isinstance(group.key, tuple) and group.key[0] == "VF010" or analysis.doc is None:
        return list(group.plan.edits)
    from .render_plan import plan_edits

    return plan_edits(analysis.doc, group.plan)


def _without_breaking(current: str, candidates: list, banned: set, problems: list, verify):
    """Find the fixes that break the text, drop and report them, keep the others."""
    good = []
    for ident_diags, group_edits in candidates:
        if verify(apply_edits(current, group_edits)):
            good.append((ident_diags, group_edits))
        else:
            ident, diags = ident_diags
            banned.add(ident)
            problems.extend(_bug(d, f"{d.code} fix produced code that does not compile") for d in diags)
    kept: list = []
    for candidate in good:
        trial_chosen, trial_edits = select_compatible(kept + [candidate])
        if len(trial_chosen) == len(kept) + 1 and verify(apply_edits(current, trial_edits)):
            kept.append(candidate)
    if not kept:
        return [], [], current
    chosen, edits = select_compatible(kept)
    return chosen, edits, apply_edits(current, edits)


def _bug(diag: Optional[Diagnostic], why: str) -> Diagnostic:
    from ..model import Location

    if diag is None:
        return Diagnostic(code="VF001", message=f"not fixed: {why} (volfix bug, please report)",
                          location=Location(1, 1), end_location=Location(1, 1))
    return Diagnostic(code=diag.code, message=diag.message, location=diag.location,
                      end_location=diag.end_location, fix=None, cell=diag.cell,
                      note=f"not fixed: volfix bug, please report ({why})", snippet=diag.snippet)


# ---------------------------------------------------------------------- cleanup


class Original:
    """The text before the fixes and what the clean-up reads of it, each computed once when
    first asked: `with_fix_edits` previews every fix of a text against the same original
    (parsing it, fingerprinting its statements and tokenizing it once per fix made a JSON
    check ~10x slower than a plain one on the legacy tree)."""

    def __init__(self, text: str, parse: Optional[Parse]) -> None:
        self.text, self.parse = text, parse

    @functools.cached_property
    def tree(self) -> Optional[ast.Module]:
        return _tree(self.text, self.parse)

    @functools.cached_property
    def keep(self) -> Tuple[str, ...]:
        return _still_relevant(self.text, self.tree) if self.parse is None and self.tree is not None else ()

    @functools.cached_property
    def fingerprints(self) -> set:
        from ..fixes.cleanup import fingerprints

        return fingerprints(self.tree)  # type: ignore[arg-type]

    @functools.cached_property
    def flag_locals(self) -> dict:
        from ..fixes.cleanup import flag_locals

        return flag_locals(self.tree)  # type: ignore[arg-type]

    @functools.cached_property
    def names_used(self) -> set:
        tree = self.tree
        return {n.id for n in ast.walk(tree) if isinstance(n, ast.Name)} | \
            {n.value.id for n in ast.walk(tree) if isinstance(n, ast.Attribute) and isinstance(n.value, ast.Name)}

    @functools.cached_property
    def analysed(self) -> str:
        return _analysed_text(self.text, self.parse)

    @functools.cached_property
    def aligned_rows(self) -> Tuple[set, set]:
        from ..fixes.layout import aligned_rows

        return aligned_rows(self.analysed)


def cleanup(original: Union[str, Original], text: str, options: Options, parse: Optional[Parse], verify,
            may_remove_imports: bool, keep_variable_import: bool, extra_used=frozenset()) -> str:
    """Collapse the leftovers the fixes created, then drop the imports they made unused.
    `original`: the text before the fixes, or an `Original` of it (kept across fixes)."""
    from ..fixes.cleanup import leftovers
    from ..fixes.imports import unused_variable_imports

    before = original if isinstance(original, Original) else Original(original, parse)
    if before.tree is None:
        return text
    keep = before.keep
    parsed: Optional[Tuple[str, Optional[ast.Module]]] = None  # the last text parsed without `keep`
    for _ in range(MAX_CLEANUP_PASSES):
        tree = _tree(text, parse, keep)
        if not keep:
            parsed = (text, tree)
        if tree is None:
            break
        edits = leftovers(before.tree, tree, _analysed_text(text, parse), before.fingerprints, before.flag_locals)
        if not edits:
            break
        _, chosen = select_compatible([(i, [e]) for i, e in enumerate(edits)])
        new = _apply_analysed(text, chosen, parse)
        if new == text or not verify(new):
            break
        text = new
    if may_remove_imports:
        tree = parsed[1] if parsed is not None and parsed[0] is text else _tree(text, parse)
        if tree is not None:
            analysed = _analysed_text(text, parse)
            # A dead `Variable` import is a leftover of the migration when the fixes migrated the
            # file's legacy autograd (`volatile`, `Variable`), or when the run reads the modules
            # that use `Variable` (VF110's candidates: one that star-imports this module links
            # to it, `keep_star_exported`). A run of the 0-dim rules alone never reads them.
            migrated = "VF110" in options.enabled or any(
                before.analysed.count(word) != analysed.count(word) for word in ("volatile", "Variable"))
            edits = unused_variable_imports(analysed, tree,
                                            keep_star_exported=keep_variable_import, was_used=before.names_used,
                                            extra_used=set(extra_used), dead_too=migrated)
            if edits:
                new = _apply_analysed(text, edits, parse)
                if verify(new):
                    text = new
    return _relayout(before, text, parse, verify)


def _relayout(original: Original, text: str, parse: Optional[Parse], verify) -> str:
    """Continuation lines realigned, no blank line opening a new block (`fixes.layout`)."""
    from ..fixes.layout import layout_edits

    edits = layout_edits(original.analysed, _analysed_text(text, parse), original.aligned_rows)
    if not edits:
        return text
    new = _apply_analysed(text, edits, parse)
    return new if verify(new) else text


def _tree(text: str, parse: Optional[Parse], keep: Sequence[str] = ()) -> Optional[ast.Module]:
    if parse is not None:
        doc, _ = parse(text)
        return doc.tree if doc is not None else None
    doc = parse_document(text, extra_words=keep)
    return doc.tree if isinstance(doc, Document) else None


def _still_relevant(original: str, tree: ast.Module) -> Tuple[str, ...]:
    """A big file is parsed with irrelevant statements stubbed (syntax.big_files), and a fixed
    statement may no longer spell what made it relevant (`y = Variable(x)` is now `y = x`): the
    names of the top-level definitions and assignments that mattered keep them whole for the
    cleanup."""
    if line_breaks(original) < big_files.BIG_FILE_LINES:
        return ()
    names = set()
    lines = physical_lines(original)
    for stmt in tree.body:
        if big_files.is_opaque(stmt) or isinstance(stmt, (ast.Import, ast.ImportFrom)):
            continue
        text = "".join(lines[stmt.lineno - 1:stmt.end_lineno])
        if not any(t in text for t in big_files.TRIGGERS):
            continue  # a stub, or a statement no fix touches
        if isinstance(stmt, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)):
            names.add(stmt.name)
        elif isinstance(stmt, (ast.Assign, ast.AnnAssign, ast.AugAssign)):
            names.update(n.id for n in ast.walk(stmt) if isinstance(n, ast.Name) and isinstance(n.ctx, ast.Store))
    return tuple(sorted(n for n in names if len(n) > 2))


def _analysed_text(text: str, parse: Optional[Parse]) -> str:
    """The text positions refer to (async masked; a notebook's joined cells)."""
    if parse is not None:
        doc, _ = parse(text)
        return doc.text if doc is not None else text
    masked, _ = mask_async(text)
    return masked


def _apply_analysed(text: str, edits: Sequence[TextEdit], parse: Optional[Parse]) -> str:
    """Apply edits computed on the analysed text to `text`: the same offsets, because masking
    keeps every length (notebooks map their cells themselves in `parse`)."""
    return apply_edits(text, edits)
