"""The volfix language server: `volfix server` speaks LSP over stdio (pygls).

- Diagnostics on open, change (full sync, debounced) and save; cleared on close. Notebook
  documents (LSP 3.17) are checked as one notebook and published per cell.
- Code actions: a `quickfix` per fixable finding under the cursor (unsafe ones say so), and
  the source actions `source.fixAll.volfix` ("fix all safe") and `source.volfix.fixAllUnsafe`.
  Their edits are computed on `codeAction/resolve` when the client supports it.
- Hover on a finding: its note and its rule's documentation.
- Big documents: over MAX_LIVE_CHARS, one diagnostic saying to run `volfix check` instead;
  over MAX_PUBLISHED findings, that many and one counting the rest. A quick fix's edits are
  computed on request, for the findings under the cursor only.

volfix runs on one worker thread, off the event loop; a result computed for a text that
changed meanwhile is dropped (a newer check is on its way). Only volfix's public library is
used: `volfix.api` for files, `volfix.notebook` for notebooks.
"""
from __future__ import annotations

import asyncio
import logging
import os
import queue
import sys
import traceback
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass, field
from typing import Callable, Dict, List, Optional, Sequence, Set, Tuple, TypeVar, Union
from urllib.parse import unquote

from lsprotocol import types
from pygls.capabilities import get_capability
from pygls.exceptions import JsonRpcException
from pygls.lsp.server import LanguageServer

from .. import api
from .._version import __version__
from ..settings.config import VolfixConfigError
from ..model import Applicability, Diagnostic
from . import convert
from .configs import ConfigCache, is_config_file, uri_to_path
from .notebooks import CellSnapshot, NotebookSnapshot, check_notebook, fix_notebook, quick_fix_cells
from .positions import BOM, LineIndex
from .transport import BoundedStdin, VolfixProtocol

log = logging.getLogger(__name__)

DEBOUNCE = 0.15  # seconds of quiet after a change before checking
# A document larger than this is not checked as you type: it gets one diagnostic saying so
# (a generated 4.5 MB script with 45,000 findings took minutes; `volfix check` is the tool).
MAX_LIVE_CHARS = 1_000_000
# At most this many findings of a document are published, then one saying how many more there
# are: a client slows down on tens of thousands of diagnostics, and nobody reads them there.
MAX_PUBLISHED = 1_000
PYTHON_SUFFIXES = (".py", ".pyi")
FIX_ALL_COMMAND = "volfix.fixAll"  # workspace/executeCommand: [uri] or [{"uri": ..., "unsafe": true}]

NOTEBOOK_SYNC = types.NotebookDocumentSyncOptions(
    notebook_selector=[types.NotebookDocumentFilterWithCells(
        cells=[types.NotebookCellLanguage(language="python")])],
    save=True,
)
CONFIG_WATCHERS = [types.FileSystemWatcher(glob_pattern="**/pyproject.toml"),
                   types.FileSystemWatcher(glob_pattern="**/volfix.toml")]

T = TypeVar("T")

@dataclass(frozen=True)
class TextSnapshot:
    uri: str
    version: Optional[int]
    text: str
    path: str  # for per-file-ignores; "<untitled>" for a document without a file
    config_dir: str


@dataclass(frozen=True)
class TextResult:
    snapshot: TextSnapshot
    diagnostics: Tuple[Diagnostic, ...]  # without their fixes' edits (`with_edits`)
    too_large: bool = False  # not checked: more than MAX_LIVE_CHARS
    # (code, location, end) -> the diagnostic with its fix's edits, computed when a quick fix
    # under the cursor is asked for (each fix's edits read the whole text again)
    with_edits: Dict[Tuple[str, object, object], Diagnostic] = field(default_factory=dict, compare=False)

    def for_uri(self, uri: str) -> Tuple[Diagnostic, ...]:
        return self.diagnostics


@dataclass(frozen=True)
class NotebookResult:
    snapshot: NotebookSnapshot
    config_dir: str
    cells: Dict[str, Tuple[Diagnostic, ...]]  # cell URI -> diagnostics

    def for_uri(self, uri: str) -> Tuple[Diagnostic, ...]:
        return self.cells.get(uri, ())

    @property
    def diagnostics(self) -> Tuple[Diagnostic, ...]:
        return tuple(d for found in self.cells.values() for d in found)


Result = Union[TextResult, NotebookResult]


class VolfixLanguageServer(LanguageServer):
    def __init__(self):
        super().__init__("volfix", __version__, text_document_sync_kind=types.TextDocumentSyncKind.Full,
                         notebook_document_sync=NOTEBOOK_SYNC, protocol_cls=VolfixProtocol)
        self.shutdown_requested = False
        self.configs = ConfigCache()
        # One worker: checks queue up instead of competing for the GIL with the event loop.
        self.executor = ThreadPoolExecutor(max_workers=1, thread_name_prefix="volfix-check")
        self.results: Dict[str, Result] = {}  # document or notebook URI -> latest result
        self.published_cells: Dict[str, Set[str]] = {}  # notebook URI -> cells with diagnostics
        # Open documents and notebooks, by the URI the client uses (pygls keys them unquoted).
        self.open_documents: Set[str] = set()
        self.open_notebooks: Set[str] = set()
        self.shown_errors: Set[str] = set()
        # Problems the worker thread found; shown from the event loop (pygls writes to the
        # client from there only).
        self.worker_errors: "queue.SimpleQueue[str]" = queue.SimpleQueue()

    # ------------------------------------------------------------------ client facts

    @property
    def encoding(self) -> str:
        encoding = self.workspace.position_encoding or types.PositionEncodingKind.Utf16
        return getattr(encoding, "value", encoding)

    @property
    def versioned_edits(self) -> bool:
        return bool(get_capability(self.client_capabilities, "workspace.workspace_edit.document_changes", False))

    @property
    def resolves_edits(self) -> bool:
        properties = get_capability(self.client_capabilities,
                                    "text_document.code_action.resolve_support.properties", [])
        return "edit" in (properties or [])

    # ------------------------------------------------------------------ snapshots

    def open_document(self, uri: str):
        return self.workspace.text_documents.get(unquote(uri))

    def notebook_of(self, cell_uri: str):
        return self.workspace.get_notebook_document(cell_uri=cell_uri)

    def text_snapshot(self, uri: str) -> Optional[TextSnapshot]:
        """The document's current text, if it is an open Python file (not a notebook cell)."""
        doc = self.open_document(uri)
        if doc is None or self.notebook_of(uri) is not None:
            return None
        path = uri_to_path(uri)
        if path is not None and path.endswith(".ipynb"):
            return None  # a notebook opened as JSON text: volfix checks it through notebook sync
        if doc.language_id != "python" and not (path or "").endswith(PYTHON_SUFFIXES):
            return None
        config_dir = os.path.dirname(path) if path else (self.workspace.root_path or os.getcwd())
        return TextSnapshot(uri, doc.version, doc.source, path or "<untitled>", config_dir)

    def notebook_snapshot(self, notebook_uri: str) -> Optional[NotebookSnapshot]:
        notebook = self.workspace.get_notebook_document(notebook_uri=notebook_uri)
        if notebook is None:
            return None
        cells = []
        for cell in notebook.cells:
            doc = self.open_document(cell.document)
            cells.append(CellSnapshot(uri=cell.document, kind=int(cell.kind),
                                      language=doc.language_id if doc else None,
                                      version=doc.version if doc else None, text=doc.source if doc else ""))
        path = uri_to_path(notebook.uri) or "<notebook>.ipynb"
        return NotebookSnapshot(uri=notebook.uri, path=path, version=notebook.version, cells=tuple(cells))

    def _notebook_config_dir(self, snapshot: NotebookSnapshot) -> str:
        path = uri_to_path(snapshot.uri)
        return os.path.dirname(path) if path else (self.workspace.root_path or os.getcwd())

    # ------------------------------------------------------------------ running volfix

    async def run(self, job: Callable[[], T], what: str) -> Optional[T]:
        """Run `job` on the worker thread. A broken config or a crash is shown to the user
        (once per message) and gives None: the server's per-document boundary, like the
        engine's per-file one, so one bad document never stops the server."""
        loop = asyncio.get_running_loop()
        try:
            return await loop.run_in_executor(self.executor, job)
        except VolfixConfigError as error:
            self.show_error(f"volfix: {error}")
        except Exception as error:  # noqa: BLE001 - see the docstring
            self.window_log_message(types.LogMessageParams(type=types.MessageType.Error,
                                                           message=traceback.format_exc()))
            self.show_error(f"volfix: internal error while checking {what}: {type(error).__name__}: "
                            f"{error} (this is a volfix bug; please report it)")
        finally:
            while not self.worker_errors.empty():
                self.show_error(f"volfix: {self.worker_errors.get()}")
        return None

    def show_error(self, message: str) -> None:
        if message not in self.shown_errors:
            self.shown_errors.add(message)
            self.window_show_message(types.ShowMessageParams(type=types.MessageType.Error, message=message))

    def _check_text(self, snapshot: TextSnapshot) -> TextResult:
        if len(snapshot.text) > MAX_LIVE_CHARS:
            return TextResult(snapshot, (), too_large=True)
        config = self.configs.get(snapshot.config_dir)
        result = api.check_source(snapshot.text, path=snapshot.path, config=config)
        if result.error:
            self.worker_errors.put(result.error)
        return TextResult(snapshot, result.diagnostics)

    def _fix_edits(self, result: TextResult, wanted: List[Diagnostic]) -> None:
        """Fill `result.with_edits` for the `wanted` diagnostics (their quick fixes' edits)."""
        keys = {_key_of(d) for d in wanted}
        snapshot = result.snapshot
        config = self.configs.get(snapshot.config_dir)
        found = api.check_source(snapshot.text, path=snapshot.path, config=config, with_fixes=True,
                                 fixes_for=lambda d: _key_of(d) in keys)
        for diagnostic in found.diagnostics:
            if _key_of(diagnostic) in keys:
                result.with_edits[_key_of(diagnostic)] = diagnostic

    def _check_notebook(self, snapshot: NotebookSnapshot) -> NotebookResult:
        config_dir = self._notebook_config_dir(snapshot)
        cells, error = check_notebook(snapshot, self.configs.get(config_dir))
        if error:
            self.worker_errors.put(error)
        return NotebookResult(snapshot, config_dir, cells)

    async def current_result(self, uri: str) -> Optional[Result]:
        """volfix's findings for the document (or the notebook holding the cell) as it is now:
        the published ones when the text has not changed since, else a new check."""
        notebook = self.notebook_of(uri)
        if notebook is not None:
            snapshot = self.notebook_snapshot(notebook.uri)
            cached = self.results.get(notebook.uri)
            if isinstance(cached, NotebookResult) and cached.snapshot == snapshot:
                return cached
            return await self.run(lambda: self._check_notebook(snapshot), snapshot.path)
        snapshot = self.text_snapshot(uri)
        if snapshot is None:
            return None
        cached = self.results.get(uri)
        if isinstance(cached, TextResult) and cached.snapshot == snapshot:
            return cached
        return await self.run(lambda: self._check_text(snapshot), snapshot.path)

    # ------------------------------------------------------------------ publishing

    def publish(self, uri: str, version: Optional[int], diagnostics: List[types.Diagnostic]) -> None:
        self.text_document_publish_diagnostics(
            types.PublishDiagnosticsParams(uri=uri, version=version, diagnostics=diagnostics))

    async def refresh_document(self, uri: str, debounce: float = 0.0) -> None:
        snapshot = self.text_snapshot(uri)
        if snapshot is None:
            return
        if debounce:
            await asyncio.sleep(debounce)
            if self.text_snapshot(uri) != snapshot:
                return  # changed again: the later change checks
        result = await self.run(lambda: self._check_text(snapshot), snapshot.path)
        if result is None or self.text_snapshot(uri) != snapshot:
            return  # failed (shown), or stale: a newer check follows
        self.results[uri] = result
        if result.too_large:
            self.publish(uri, snapshot.version, [convert.too_large_diagnostic(len(snapshot.text), MAX_LIVE_CHARS)])
            return
        index = LineIndex(snapshot.text, self.encoding)
        shown = [convert.lsp_diagnostic(d, index) for d in result.diagnostics[:MAX_PUBLISHED]]
        if len(result.diagnostics) > MAX_PUBLISHED:
            shown.append(convert.more_findings_diagnostic(len(result.diagnostics) - MAX_PUBLISHED))
        self.publish(uri, snapshot.version, shown)

    async def refresh_notebook(self, notebook_uri: str, debounce: float = 0.0) -> None:
        snapshot = self.notebook_snapshot(notebook_uri)
        if snapshot is None:
            return
        if debounce:
            await asyncio.sleep(debounce)
            if self.notebook_snapshot(notebook_uri) != snapshot:
                return
        result = await self.run(lambda: self._check_notebook(snapshot), snapshot.path)
        if result is None or self.notebook_snapshot(notebook_uri) != snapshot:
            return
        self.results[notebook_uri] = result
        published = self.published_cells.setdefault(notebook_uri, set())
        for cell in snapshot.cells:
            if cell.uri not in result.cells and cell.uri not in published:
                continue
            index = LineIndex(cell.text, self.encoding)
            self.publish(cell.uri, cell.version,
                         [convert.lsp_diagnostic(d, index) for d in result.for_uri(cell.uri)])
        for gone in published - {cell.uri for cell in snapshot.cells}:
            self.publish(gone, None, [])  # a cell deleted from the notebook
        self.published_cells[notebook_uri] = set(result.cells)

    def clear_document(self, uri: str) -> None:
        self.open_documents.discard(uri)
        self.results.pop(uri, None)
        self.publish(uri, None, [])

    def clear_notebook(self, notebook_uri: str, cell_uris: List[str]) -> None:
        self.open_notebooks.discard(notebook_uri)
        self.results.pop(notebook_uri, None)
        for uri in self.published_cells.pop(notebook_uri, set()) | set(cell_uris):
            self.publish(uri, None, [])

    async def refresh_all(self) -> None:
        for uri in sorted(self.open_notebooks):
            await self.refresh_notebook(uri)
        for uri in sorted(self.open_documents):
            await self.refresh_document(uri)

    # ------------------------------------------------------------------ code actions

    async def code_actions(self, params: types.CodeActionParams) -> List[types.CodeAction]:
        uri = params.text_document.uri
        result = await self.current_result(uri)
        if result is None:
            return []
        only = params.context.only
        actions: List[types.CodeAction] = []
        if convert.wanted(convert.QUICKFIX, only):
            actions.extend(await self.quick_fixes(result, uri, params.range))
        for unsafe in (False, True):
            kind = convert.FIX_ALL_UNSAFE if unsafe else convert.FIX_ALL
            wanted_fix = Applicability.UNSAFE if unsafe else Applicability.SAFE
            if not convert.wanted(kind, only):
                continue
            if not any(d.fix is not None and d.fix.applicability is wanted_fix for d in result.diagnostics):
                continue
            action = convert.fix_all_action(unsafe)
            if self.resolves_edits:
                action.data = {"uri": uri, "unsafe": unsafe}
            else:
                action.edit = await self.fix_all_edit(result, unsafe)
            actions.append(action)
        return actions

    async def quick_fixes(self, result: Result, uri: str, wanted_range: types.Range) -> List[types.CodeAction]:
        actions = []
        index = LineIndex(self.text_of(result, uri), self.encoding)
        under = []
        for diagnostic in result.for_uri(uri):
            if not diagnostic.fixable:
                continue
            lsp = convert.lsp_diagnostic(diagnostic, index)
            if convert.overlaps(lsp.range, wanted_range):
                under.append((diagnostic, lsp))
        if isinstance(result, TextResult):
            missing = [d for d, _ in under if _key_of(d) not in result.with_edits]
            if missing:
                await self.run(lambda: self._fix_edits(result, missing), result.snapshot.path)
        for diagnostic, lsp in under:
            if isinstance(result, TextResult):
                diagnostic = result.with_edits.get(_key_of(diagnostic))
                if diagnostic is None or diagnostic.fix is None:
                    continue
            changes = self.quick_fix_changes(result, uri, diagnostic)
            if changes is not None:
                actions.append(convert.quickfix_action(diagnostic, lsp, changes, self.versioned_edits))
        return actions

    def text_of(self, result: Result, uri: str) -> str:
        if isinstance(result, TextResult):
            return result.snapshot.text
        return result.snapshot.cells[result.snapshot.position_of(uri)].text

    def quick_fix_changes(self, result: Result, uri: str, diagnostic: Diagnostic) -> Optional[convert.DocumentEdits]:
        if isinstance(result, TextResult):
            index = LineIndex(result.snapshot.text, self.encoding)
            return {uri: (result.snapshot.version, convert.text_edits(diagnostic.fix.edits, index))}
        snapshot = result.snapshot
        texts = quick_fix_cells(snapshot, snapshot.position_of(uri), diagnostic,
                                self.configs.get(self._notebook_config_dir(snapshot)))
        if texts is None:
            return None
        return self.cell_changes(snapshot, texts)

    def cell_changes(self, snapshot: NotebookSnapshot, texts: Dict[int, str]) -> convert.DocumentEdits:
        changes: convert.DocumentEdits = {}
        for position, new in sorted(texts.items()):
            cell = snapshot.cells[position]
            edit = convert.replacement_edit(cell.text, new, LineIndex(cell.text, self.encoding))
            changes[cell.uri] = (cell.version, [edit])
        return changes

    async def fix_all_edit(self, result: Result, unsafe: bool) -> Optional[types.WorkspaceEdit]:
        if isinstance(result, TextResult) and result.too_large:
            return None
        if isinstance(result, TextResult):
            snapshot = result.snapshot

            def fix_text() -> convert.DocumentEdits:
                config = self.configs.get(snapshot.config_dir)
                fixed = api.fix_source(snapshot.text, path=snapshot.path, config=config, unsafe_fixes=unsafe)
                if fixed.error:
                    self.worker_errors.put(fixed.error)
                new = fixed.fixed_source if fixed.fixed_source is not None else snapshot.text
                if snapshot.text.startswith(BOM) and not new.startswith(BOM):
                    new = BOM + new  # volfix drops the mark it reads; the document keeps it
                index = LineIndex(snapshot.text, self.encoding)
                edits = [convert.replacement_edit(snapshot.text, new, index)] if new != snapshot.text else []
                return {snapshot.uri: (snapshot.version, edits)}

            changes = await self.run(fix_text, snapshot.path)
        else:
            snapshot, config_dir = result.snapshot, result.config_dir

            def fix_cells() -> convert.DocumentEdits:
                texts, fixed = fix_notebook(snapshot, self.configs.get(config_dir), unsafe)
                if fixed.error:
                    self.worker_errors.put(fixed.error)
                return self.cell_changes(snapshot, texts)

            changes = await self.run(fix_cells, snapshot.path)
        return None if changes is None else convert.workspace_edit(changes, self.versioned_edits)

    async def fix_all_command(self, args: Sequence[object]) -> Optional[bool]:
        """`volfix.fixAll` with the document's URI (or `{"uri": ..., "unsafe": true}`): apply
        what `volfix fix` (with `unsafe`: `--unsafe-fixes`) would, by `workspace/applyEdit`.
        Returns whether there was anything to apply."""
        first = args[0] if args else None
        uri = first.get("uri") if isinstance(first, dict) else first
        unsafe = bool(first.get("unsafe")) if isinstance(first, dict) else False
        if not isinstance(uri, str):
            raise ValueError(f"{FIX_ALL_COMMAND} needs the document's URI")
        result = await self.current_result(uri)
        if result is None:
            return False
        edit = await self.fix_all_edit(result, unsafe)
        if edit is None or not (edit.document_changes or edit.changes):
            return False
        self.workspace_apply_edit(types.ApplyWorkspaceEditParams(edit=edit, label="volfix: fix all"))
        return True

    async def resolve_code_action(self, action: types.CodeAction) -> types.CodeAction:
        data = action.data if isinstance(action.data, dict) else {}
        uri = data.get("uri")
        if not isinstance(uri, str) or action.kind not in (convert.FIX_ALL, convert.FIX_ALL_UNSAFE):
            return action
        result = await self.current_result(uri)
        if result is not None:
            action.edit = await self.fix_all_edit(result, bool(data.get("unsafe")))
        return action

    # ------------------------------------------------------------------ hover

    async def hover(self, params: types.HoverParams) -> Optional[types.Hover]:
        uri = params.text_document.uri
        result = await self.current_result(uri)
        if result is None:
            return None
        index = LineIndex(self.text_of(result, uri), self.encoding)
        hits = [(d, convert.lsp_range(index, d.location, d.end_location)) for d in result.for_uri(uri)]
        hits = [(d, r) for d, r in hits if convert.contains(r, params.position)]
        if not hits:
            return None
        return types.Hover(contents=types.MarkupContent(kind=types.MarkupKind.Markdown,
                                                        value=convert.hover_markdown([d for d, _ in hits])),
                           range=hits[0][1])

    # ------------------------------------------------------------------ configuration files

    async def watch_config_files(self) -> None:
        if not get_capability(self.client_capabilities,
                              "workspace.did_change_watched_files.dynamic_registration", False):
            return
        options = types.DidChangeWatchedFilesRegistrationOptions(watchers=CONFIG_WATCHERS)
        registration = types.Registration(id="volfix-config-files",
                                          method=types.WORKSPACE_DID_CHANGE_WATCHED_FILES,
                                          register_options=options)
        try:
            await self.client_register_capability_async(types.RegistrationParams(registrations=[registration]))
        except JsonRpcException as error:  # refused: a config file created later needs a restart
            log.warning("could not watch the configuration files: %s", error)

    async def config_changed(self) -> None:
        self.configs.clear()
        self.shown_errors.clear()
        await self.refresh_all()


def _key_of(diagnostic: Diagnostic) -> Tuple[str, object, object]:
    return diagnostic.code, diagnostic.location, diagnostic.end_location


def create_server() -> VolfixLanguageServer:
    server = VolfixLanguageServer()

    @server.feature(types.SHUTDOWN)
    def shutdown(ls: VolfixLanguageServer, params) -> None:
        ls.shutdown_requested = True

    @server.feature(types.INITIALIZED)
    async def initialized(ls: VolfixLanguageServer, params: types.InitializedParams) -> None:
        await ls.watch_config_files()

    @server.feature(types.TEXT_DOCUMENT_DID_OPEN)
    async def did_open(ls: VolfixLanguageServer, params: types.DidOpenTextDocumentParams) -> None:
        ls.open_documents.add(params.text_document.uri)
        await ls.refresh_document(params.text_document.uri)

    @server.feature(types.TEXT_DOCUMENT_DID_CHANGE)
    async def did_change(ls: VolfixLanguageServer, params: types.DidChangeTextDocumentParams) -> None:
        await ls.refresh_document(params.text_document.uri, debounce=DEBOUNCE)

    @server.feature(types.TEXT_DOCUMENT_DID_SAVE, types.SaveOptions(include_text=False))
    async def did_save(ls: VolfixLanguageServer, params: types.DidSaveTextDocumentParams) -> None:
        if is_config_file(uri_to_path(params.text_document.uri)):
            await ls.config_changed()
        else:
            await ls.refresh_document(params.text_document.uri)

    @server.feature(types.TEXT_DOCUMENT_DID_CLOSE)
    def did_close(ls: VolfixLanguageServer, params: types.DidCloseTextDocumentParams) -> None:
        ls.clear_document(params.text_document.uri)

    @server.feature(types.NOTEBOOK_DOCUMENT_DID_OPEN)
    async def notebook_did_open(ls: VolfixLanguageServer, params: types.DidOpenNotebookDocumentParams) -> None:
        ls.open_notebooks.add(params.notebook_document.uri)
        await ls.refresh_notebook(params.notebook_document.uri)

    @server.feature(types.NOTEBOOK_DOCUMENT_DID_CHANGE)
    async def notebook_did_change(ls: VolfixLanguageServer, params: types.DidChangeNotebookDocumentParams) -> None:
        await ls.refresh_notebook(params.notebook_document.uri, debounce=DEBOUNCE)

    @server.feature(types.NOTEBOOK_DOCUMENT_DID_SAVE)
    async def notebook_did_save(ls: VolfixLanguageServer, params: types.DidSaveNotebookDocumentParams) -> None:
        await ls.refresh_notebook(params.notebook_document.uri)

    @server.feature(types.NOTEBOOK_DOCUMENT_DID_CLOSE)
    def notebook_did_close(ls: VolfixLanguageServer, params: types.DidCloseNotebookDocumentParams) -> None:
        ls.clear_notebook(params.notebook_document.uri, [doc.uri for doc in params.cell_text_documents])

    @server.feature(types.WORKSPACE_DID_CHANGE_WATCHED_FILES)
    async def watched_files_changed(ls: VolfixLanguageServer, params: types.DidChangeWatchedFilesParams) -> None:
        if any(is_config_file(uri_to_path(change.uri)) for change in params.changes):
            await ls.config_changed()

    @server.feature(types.TEXT_DOCUMENT_CODE_ACTION, types.CodeActionOptions(
        code_action_kinds=[convert.QUICKFIX, convert.FIX_ALL, convert.FIX_ALL_UNSAFE], resolve_provider=True))
    async def code_action(ls: VolfixLanguageServer, params: types.CodeActionParams) -> List[types.CodeAction]:
        return await ls.code_actions(params)

    @server.feature(types.CODE_ACTION_RESOLVE)
    async def code_action_resolve(ls: VolfixLanguageServer, params: types.CodeAction) -> types.CodeAction:
        return await ls.resolve_code_action(params)

    # pygls always advertises `executeCommandProvider` (with the commands registered): offer
    # one, "fix all" for editors that bind commands rather than source actions.
    @server.command(FIX_ALL_COMMAND)
    async def fix_all_command(ls: VolfixLanguageServer, *args) -> Optional[bool]:
        return await ls.fix_all_command(args)

    @server.feature(types.TEXT_DOCUMENT_HOVER)
    async def hover(ls: VolfixLanguageServer, params: types.HoverParams) -> Optional[types.Hover]:
        return await ls.hover(params)

    return server


def serve() -> None:
    """Serve LSP on stdin/stdout until the client says `exit` (or its input ends). Exit code 0
    after a `shutdown` request, 1 otherwise (the LSP specification; pygls's own `sys.exit(1)`
    ends in its event loop, which swallows it)."""
    server = create_server()
    server.start_io(stdin=BoundedStdin(sys.stdin.buffer), stdout=sys.stdout.buffer)
    raise SystemExit(0 if server.shutdown_requested else 1)
