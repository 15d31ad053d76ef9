"""volfix results -> LSP objects: diagnostics, text edits, code actions, hover text.

Everything here is a pure function of volfix data and the document's text (no server state).
"""
from __future__ import annotations

from typing import Dict, Iterable, List, Optional, Sequence, Tuple

from lsprotocol import types

from ..rules import registry
from ..model import Applicability, Diagnostic, Edit
from .positions import LineIndex, changed_lines

SOURCE = "volfix"
ERROR_CODES = frozenset({"VF001", "VF002"})  # the file cannot be parsed, read or decoded

QUICKFIX = types.CodeActionKind.QuickFix.value
FIX_ALL = "source.fixAll.volfix"
# Not under `source.fixAll`: an editor's "fix all on save" must never apply unsafe fixes.
FIX_ALL_UNSAFE = "source.volfix.fixAllUnsafe"
FIX_ALL_TITLE = "volfix: fix all safe"
FIX_ALL_UNSAFE_TITLE = "volfix: fix all, including unsafe fixes (review the diff)"

# A document URI -> (its version, the edits to make in it).
DocumentEdits = Dict[str, Tuple[Optional[int], List[types.TextEdit]]]


def lsp_range(index: LineIndex, start, end) -> types.Range:
    (sl, sc), (el, ec) = index.range(start, end)
    return types.Range(start=types.Position(line=sl, character=sc),
                       end=types.Position(line=el, character=ec))


def lsp_diagnostic(diagnostic: Diagnostic, index: LineIndex) -> types.Diagnostic:
    """A volfix diagnostic as LSP shows it. The note (why no fix is offered, what a fix leaves
    uncovered) goes on a second line of the message: it is part of what the finding says, and
    every client shows a multi-line message in its hover and problem list, while
    relatedInformation would need a location the note does not have."""
    rule = registry.rules().get(diagnostic.code)
    message = diagnostic.message + (f"\n{diagnostic.note}" if diagnostic.note else "")
    severity = (types.DiagnosticSeverity.Error if diagnostic.code in ERROR_CODES
                else types.DiagnosticSeverity.Warning)
    return types.Diagnostic(
        range=lsp_range(index, diagnostic.location, diagnostic.end_location),
        severity=severity,
        code=diagnostic.code,
        code_description=types.CodeDescription(href=rule.url()) if rule is not None else None,
        source=SOURCE,
        message=message,
    )


def too_large_diagnostic(size: int, limit: int) -> types.Diagnostic:
    """What a document too large to check as you type shows, on its first line."""
    return types.Diagnostic(
        range=types.Range(start=types.Position(line=0, character=0), end=types.Position(line=0, character=0)),
        severity=types.DiagnosticSeverity.Information, source=SOURCE,
        message=(f"volfix does not check this document as you type: it has {size:,} characters, more than "
                 f"{limit:,}. Run `volfix check` (or `volfix fix`) on the file instead."))


def more_findings_diagnostic(count: int) -> types.Diagnostic:
    """The last diagnostic published for a document with more findings than are shown."""
    return types.Diagnostic(
        range=types.Range(start=types.Position(line=0, character=0), end=types.Position(line=0, character=0)),
        severity=types.DiagnosticSeverity.Information, source=SOURCE,
        message=f"volfix: {count:,} more findings in this document are not shown here; run `volfix check` on it.")


def text_edits(edits: Sequence[Edit], index: LineIndex) -> List[types.TextEdit]:
    """A fix's edits, in their order (LSP keeps that order for inserts at one position, as in
    an added `import torch` followed by a `with` line at the same place)."""
    return [types.TextEdit(range=lsp_range(index, edit.location, edit.end_location), new_text=edit.content)
            for edit in edits]


def replacement_edit(old: str, new: str, index: LineIndex) -> types.TextEdit:
    """One edit turning `old` (the text `index` was built on) into `new`: the changed lines."""
    first, end, text = changed_lines(old, new)
    start, stop = index.line_start(first), index.line_start(end)
    return types.TextEdit(range=types.Range(start=types.Position(*start), end=types.Position(*stop)),
                          new_text=text)


def overlaps(a: types.Range, b: types.Range) -> bool:
    """Whether two ranges share a position (touching counts: a cursor at a finding's end)."""
    return _key(a.start) <= _key(b.end) and _key(b.start) <= _key(a.end)


def contains(outer: types.Range, position: types.Position) -> bool:
    return _key(outer.start) <= _key(position) <= _key(outer.end)


def _key(position: types.Position) -> Tuple[int, int]:
    return position.line, position.character


def quickfix_title(diagnostic: Diagnostic) -> str:
    fix = diagnostic.fix
    title = f"volfix ({diagnostic.code}): {fix.message}"
    return title + " (unsafe)" if fix.applicability is Applicability.UNSAFE else title


def workspace_edit(changes: DocumentEdits, versioned: bool) -> types.WorkspaceEdit:
    """`documentChanges` with versions when the client supports them (it then refuses an edit
    made for an older text), else plain `changes`."""
    if versioned:
        return types.WorkspaceEdit(document_changes=[
            types.TextDocumentEdit(
                text_document=types.OptionalVersionedTextDocumentIdentifier(uri=uri, version=version),
                edits=edits)
            for uri, (version, edits) in changes.items()])
    return types.WorkspaceEdit(changes={uri: edits for uri, (_, edits) in changes.items()})


def quickfix_action(diagnostic: Diagnostic, lsp: types.Diagnostic, changes: DocumentEdits,
                    versioned: bool) -> types.CodeAction:
    return types.CodeAction(title=quickfix_title(diagnostic), kind=QUICKFIX, diagnostics=[lsp],
                            is_preferred=diagnostic.fix.applicability is Applicability.SAFE,
                            edit=workspace_edit(changes, versioned))


def fix_all_action(unsafe: bool) -> types.CodeAction:
    """The fix-all source action without its edit (filled in by the caller or on resolve)."""
    if unsafe:
        return types.CodeAction(title=FIX_ALL_UNSAFE_TITLE, kind=FIX_ALL_UNSAFE)
    return types.CodeAction(title=FIX_ALL_TITLE, kind=FIX_ALL)


def wanted(kind: str, only: Optional[Iterable[str]]) -> bool:
    """Whether a code action of `kind` matches the request's `only` filter (kinds are
    hierarchical: `source` asks for `source.fixAll.volfix` too)."""
    if not only:
        return True
    return any(kind == prefix or kind.startswith(prefix + ".") for prefix in only)


def hover_markdown(diagnostics: Sequence[Diagnostic]) -> str:
    """The findings under the cursor, each with its note and its rule's documentation."""
    parts = []
    for diagnostic in diagnostics:
        lines = [f"**{diagnostic.code}** {diagnostic.message}"]
        if diagnostic.note:
            lines.append(f"*Note:* {diagnostic.note}")
        if diagnostic.fix is not None and diagnostic.fixable:
            label = "unsafe fix" if diagnostic.fix.applicability is Applicability.UNSAFE else "fix"
            lines.append(f"*Quick {label}:* {diagnostic.fix.message}")
        rule = registry.rules().get(diagnostic.code)
        if rule is not None:
            lines.append(f"# {rule.name()} ({rule.CODE})\n\n{rule.doc()}\n\n[{rule.url()}]({rule.url()})")
        parts.append("\n\n".join(lines))
    return "\n\n---\n\n".join(parts)
