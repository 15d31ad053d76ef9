"""`volfix server` end to end: a real LSP client (tests/lsp_client.py) drives the server over
stdio, as an editor does, and checks what comes back against the library's own results."""
from __future__ import annotations

import ast
import json
import subprocess
import sys

import pytest
from lsp_client import LspClient, apply_text_edits, document_edits, utf16_len

from volfix import api
from volfix.settings.config import DEFAULT_CONFIG
from volfix.notebook import process_notebook
from volfix.rules.registry import get

# Line 2 puts an emoji (one code point, two UTF-16 units) before the VF101 finding.
SOURCE = ("from torch.autograd import Variable\n"
          "s = '😀'; out = model(Variable(x, volatile=True))\n"
          "if type(h) == Variable:\n"
          "    h = h.detach()\n"
          "z = Variable(w)\n")
# What the VF101 quick fix alone makes of SOURCE.
VF101_FIXED = ("import torch\n"
               "from torch.autograd import Variable\n"
               "with torch.no_grad():\n"
               "    s = '😀'; out = model(x)\n"
               "if type(h) == Variable:\n"
               "    h = h.detach()\n"
               "z = Variable(w)\n")
SAFE_FIXED = ("import torch\n"
              "from torch.autograd import Variable\n"
              "with torch.no_grad():\n"
              "    s = '😀'; out = model(x)\n"
              "if isinstance(h, torch.Tensor):\n"
              "    h = h.detach()\n"
              "z = Variable(w)\n")
UNSAFE_FIXED = ("import torch\n"
                "with torch.no_grad():\n"
                "    s = '😀'; out = model(x)\n"
                "if isinstance(h, torch.Tensor):\n"
                "    h = h.detach()\n"
                "z = w\n")

BASIC = {"workspace": {"workspaceEdit": {"documentChanges": True}}}
NOTEBOOKS = {"notebookDocument": {"synchronization": {}}, **BASIC}
RESOLVING = {"textDocument": {"codeAction": {"resolveSupport": {"properties": ["edit"]},
                                             "codeActionLiteralSupport": {"codeActionKind": {"valueSet": []}}}},
             "workspace": {"didChangeWatchedFiles": {"dynamicRegistration": True}}}


@pytest.fixture
def start(tmp_path):
    """start(capabilities) -> an initialized client with its initialize result; every server
    must then shut down cleanly (exit code 0)."""
    clients = []

    def _start(capabilities: dict):
        client = LspClient(tmp_path, tmp_path / f"server-{len(clients)}.stderr")
        clients.append(client)
        return client, client.initialize(tmp_path, capabilities)

    yield _start
    for client in clients:
        assert client.close() == 0


def open_document(client, uri, text, version=1):
    client.notify("textDocument/didOpen",
                  {"textDocument": {"uri": uri, "languageId": "python", "version": version, "text": text}})


def code_actions(client, uri, range_, only=None):
    context = {"diagnostics": []}
    if only is not None:
        context["only"] = only
    return client.request("textDocument/codeAction", {"textDocument": {"uri": uri}, "range": range_,
                                                      "context": context})


def point(line, character):
    return {"line": line, "character": character}


def span(line, start, end):
    return {"start": point(line, start), "end": point(line, end)}


def applied(text, action, uri):
    edits = document_edits(action["edit"])
    assert list(edits) == [uri]
    return apply_text_edits(text, edits[uri])


# ---------------------------------------------------------------------- a Python file


def test_diagnostics_code_actions_and_hover_on_a_file(start, tmp_path):
    client, init = start(BASIC)
    capabilities = init["capabilities"]
    assert init["serverInfo"]["name"] == "volfix"
    assert capabilities["positionEncoding"] == "utf-16"
    assert capabilities["textDocumentSync"]["change"] == 1  # full
    assert capabilities["hoverProvider"] is True
    assert capabilities["codeActionProvider"]["codeActionKinds"] == [
        "quickfix", "source.fixAll.volfix", "source.volfix.fixAllUnsafe"]
    assert "notebookDocumentSync" not in capabilities  # the client did not declare notebooks

    uri = (tmp_path / "legacy.py").as_uri()
    open_document(client, uri, SOURCE)
    diagnostics = client.diagnostics(uri, version=1)

    assert [d["code"] for d in diagnostics] == ["VF101", "VF112", "VF110"]
    vf101, vf112, vf110 = diagnostics
    # `Variable(` is code point 21 (0-based) of line 2; the emoji before it is 2 UTF-16 units.
    line = SOURCE.splitlines()[1]
    assert line.index("Variable(") == 21
    assert vf101["range"] == span(1, 22, 48)
    assert utf16_len(line[:line.index("Variable(")]) == 22
    assert vf112["range"] == span(2, 3, 22)
    assert vf110["range"] == span(4, 4, 15)
    for diagnostic in diagnostics:
        assert diagnostic["source"] == "volfix"
        assert diagnostic["severity"] == 2  # warning
        assert diagnostic["codeDescription"]["href"] == get(diagnostic["code"]).url()
    assert vf101["message"] == "`volatile=True` is ignored since PyTorch 0.4; use `torch.no_grad()`"
    # The note goes on the message's second line.
    library = {d.code: d for d in api.check_source(SOURCE, path="legacy.py", with_fixes=True).diagnostics}
    assert library["VF110"].note
    assert vf110["message"] == f"{library['VF110'].message}\n{library['VF110'].note}"

    # The cursor on the VF101 finding: its quick fix, then the two fix-all source actions.
    actions = code_actions(client, uri, span(1, 30, 30))
    assert [(a["title"], a["kind"]) for a in actions] == [
        ("volfix (VF101): Unwrap and run line 2 under `with torch.no_grad():`", "quickfix"),
        ("volfix: fix all safe", "source.fixAll.volfix"),
        ("volfix: fix all, including unsafe fixes (review the diff)", "source.volfix.fixAllUnsafe"),
    ]
    quickfix, fix_all, fix_all_unsafe = actions
    assert quickfix["diagnostics"] == [vf101]
    assert quickfix["isPreferred"] is True
    change = quickfix["edit"]["documentChanges"][0]
    assert change["textDocument"] == {"uri": uri, "version": 1}
    # volfix's fix is a group of edits: `import torch` beside the torch import, then the
    # statement rendered in its `with` block (the unwrap included).
    assert change["edits"] == [
        {"range": span(0, 0, 0), "newText": "import torch\n"},
        {"range": {"start": point(1, 0), "end": point(2, 0)},
         "newText": "with torch.no_grad():\n    s = '😀'; out = model(x)\n"},
    ]
    assert applied(SOURCE, quickfix, uri) == VF101_FIXED

    for action, unsafe, expected in ((fix_all, False, SAFE_FIXED), (fix_all_unsafe, True, UNSAFE_FIXED)):
        result = applied(SOURCE, action, uri)
        assert result == expected
        assert result == api.fix_source(SOURCE, path="legacy.py", unsafe_fixes=unsafe).fixed_source
        ast.parse(result)

    # An unsafe quick fix says so; a range covering two findings gets both quick fixes.
    actions = code_actions(client, uri, {"start": point(2, 0), "end": point(4, 8)}, only=["quickfix"])
    assert [a["title"] for a in actions] == [
        "volfix (VF112): Use `isinstance(x, torch.Tensor)`",
        f"volfix (VF110): {library['VF110'].fix.message} (unsafe)",
    ]
    assert actions[1]["isPreferred"] is False
    assert applied(SOURCE, actions[1], uri) == SOURCE.replace("Variable(w)", "w")
    # Away from any finding: no quick fix, the fix-all actions stay.
    assert [a["kind"] for a in code_actions(client, uri, span(3, 0, 4))] == [
        "source.fixAll.volfix", "source.volfix.fixAllUnsafe"]

    # Hover on the finding: the finding, then its rule's documentation.
    hover = client.request("textDocument/hover", {"textDocument": {"uri": uri}, "position": point(1, 40)})
    assert hover["range"] == span(1, 22, 48)
    assert hover["contents"]["kind"] == "markdown"
    text = hover["contents"]["value"]
    assert text.startswith(f"**VF101** {vf101['message']}\n\n")
    assert "# volatile-in-variable-call (VF101)" in text
    assert get("VF101").doc() in text
    hover = client.request("textDocument/hover", {"textDocument": {"uri": uri}, "position": point(4, 6)})
    assert f"*Note:* {library['VF110'].note}" in hover["contents"]["value"]
    assert client.request("textDocument/hover", {"textDocument": {"uri": uri}, "position": point(3, 2)}) is None


def test_change_save_and_close(start, tmp_path):
    client, _ = start(BASIC)
    uri = (tmp_path / "loop.py").as_uri()
    open_document(client, uri, SOURCE)
    assert [d["code"] for d in client.diagnostics(uri, version=1)] == ["VF101", "VF112", "VF110"]

    # Full-text change: only the VF112 line is left, one line up.
    changed = "from torch.autograd import Variable\nif type(h) == Variable:\n    h = h.detach()\n"
    mark = client.mark()
    client.notify("textDocument/didChange", {"textDocument": {"uri": uri, "version": 2},
                                             "contentChanges": [{"text": changed}]})
    diagnostics = client.diagnostics(uri, version=2, since=mark)
    assert [(d["code"], d["range"]) for d in diagnostics] == [("VF112", span(1, 3, 22))]
    # Code actions follow the new text.
    actions = code_actions(client, uri, span(1, 5, 5))
    assert [a["title"] for a in actions] == ["volfix (VF112): Use `isinstance(x, torch.Tensor)`",
                                             "volfix: fix all safe"]
    assert actions[0]["edit"]["documentChanges"][0]["textDocument"]["version"] == 2

    mark = client.mark()
    client.notify("textDocument/didSave", {"textDocument": {"uri": uri}})
    assert [d["code"] for d in client.diagnostics(uri, version=2, since=mark)] == ["VF112"]

    mark = client.mark()
    client.notify("textDocument/didClose", {"textDocument": {"uri": uri}})
    assert client.diagnostics(uri, since=mark) == []


def test_fixes_keep_crlf_and_a_missing_final_newline(start, tmp_path):
    client, _ = start(BASIC)
    text = SOURCE.replace("\n", "\r\n")[:-2]
    uri = (tmp_path / "windows.py").as_uri()
    open_document(client, uri, text)
    assert [(d["code"], d["range"]) for d in client.diagnostics(uri, version=1)] == [
        ("VF101", span(1, 22, 48)), ("VF112", span(2, 3, 22)), ("VF110", span(4, 4, 15))]
    # The cursor on the last line, which has no newline: the VF110 quick fix and both fix-alls.
    quickfix, fix_all, fix_all_unsafe = code_actions(client, uri, span(4, 15, 15))
    assert quickfix["title"].startswith("volfix (VF110): ")
    assert applied(text, quickfix, uri) == text.replace("Variable(w)", "w")
    assert applied(text, fix_all, uri) == SAFE_FIXED.replace("\n", "\r\n")[:-2]
    assert applied(text, fix_all_unsafe, uri) == UNSAFE_FIXED.replace("\n", "\r\n")[:-2]


def test_fast_changes_never_publish_stale_results(start, tmp_path):
    client, _ = start(BASIC)
    uri = (tmp_path / "typing.py").as_uri()
    open_document(client, uri, "x = 1\n")
    assert client.diagnostics(uri, version=1) == []
    mark = client.mark()
    texts = {}
    for version in range(2, 8):  # a burst of edits, as typing sends them
        texts[version] = "from torch.autograd import Variable\n" + "\n" * version + "y = Variable(x, volatile=True)\n"
        client.notify("textDocument/didChange", {"textDocument": {"uri": uri, "version": version},
                                                 "contentChanges": [{"text": texts[version]}]})
    final = client.diagnostics(uri, version=7, since=mark)
    assert [(d["code"], d["range"]["start"]["line"]) for d in final] == [("VF101", 8)]
    # Whatever was published in between describes the text of the version it names.
    for params in client.published(uri, since=mark):
        expected_line = params["version"] + 1
        assert [d["range"]["start"]["line"] for d in params["diagnostics"]] == [expected_line]


def test_syntax_error_is_an_error_and_untitled_documents_are_checked(start, tmp_path):
    client, _ = start(BASIC)
    uri = "untitled:Untitled-1"
    open_document(client, uri, "from torch.autograd import Variable\nprint 'hi', Variable(x, volatile=True)\n")
    (diagnostic,) = client.diagnostics(uri, version=1)
    assert diagnostic["code"] == "VF001"
    assert diagnostic["severity"] == 1  # error
    assert diagnostic["range"]["start"]["line"] == 1


# ---------------------------------------------------------------------- configuration


def test_nearest_config_is_used_and_reloaded_when_it_changes(start, tmp_path):
    package = tmp_path / "pkg"
    package.mkdir()
    config = package / "pyproject.toml"
    config.write_text('[tool.volfix]\nignore = ["VF112"]\n')
    client, _ = start(RESOLVING)
    # The server asked to be told about config files.
    registration = client.wait_for_request("client/registerCapability")["registrations"][0]
    assert registration["method"] == "workspace/didChangeWatchedFiles"
    watchers = registration["registerOptions"]["watchers"]
    assert {w["globPattern"] for w in watchers} == {"**/pyproject.toml", "**/volfix.toml"}

    uri = (package / "mod.py").as_uri()
    open_document(client, uri, SOURCE)
    assert [d["code"] for d in client.diagnostics(uri, version=1)] == ["VF101", "VF110"]

    config.write_text('[tool.volfix]\nignore = ["VF101"]\n')
    mark = client.mark()
    client.notify("workspace/didChangeWatchedFiles", {"changes": [{"uri": config.as_uri(), "type": 2}]})
    assert [d["code"] for d in client.diagnostics(uri, version=1, since=mark)] == ["VF112", "VF110"]

    # Saving a config file open in the editor does the same.
    config.write_text('[tool.volfix]\nignore = ["VF110"]\n')
    mark = client.mark()
    client.notify("textDocument/didSave", {"textDocument": {"uri": config.as_uri()}})
    assert [d["code"] for d in client.diagnostics(uri, version=1, since=mark)] == ["VF101", "VF112"]

    # A broken config is shown to the user (one `volfix: ...` message), not silently replaced.
    config.write_text('[tool.volfix]\nselekt = ["VF1"]\n')
    mark = client.mark()
    client.notify("workspace/didChangeWatchedFiles", {"changes": [{"uri": config.as_uri(), "type": 2}]})
    message = client.wait_for("window/showMessage", since=mark)
    assert message["type"] == 1
    assert message["message"].startswith(f"volfix: {config}: unknown key `tool.volfix.selekt`")


# ---------------------------------------------------------------------- resolve, only, encodings


def test_fix_all_is_resolved_lazily_and_only_filters_kinds(start, tmp_path):
    client, init = start({**RESOLVING, "general": {"positionEncodings": ["utf-32", "utf-16"]}})
    assert init["capabilities"]["positionEncoding"] == "utf-32"
    uri = (tmp_path / "lazy.py").as_uri()
    open_document(client, uri, SOURCE)
    (vf101, _, _) = client.diagnostics(uri, version=1)
    assert vf101["range"] == span(1, 21, 47)  # code points: the emoji counts once

    # The "fix all on save" request of an editor: source.fixAll only, never the unsafe one.
    (action,) = code_actions(client, uri, span(0, 0, 0), only=["source.fixAll"])
    assert action["title"] == "volfix: fix all safe"
    assert "edit" not in action
    resolved = client.request("codeAction/resolve", action)
    # No documentChanges capability: plain `changes`.
    edits = resolved["edit"]["changes"][uri]
    # One edit covering the changed lines only (here from the first line: `import torch`).
    assert len(edits) == 1 and edits[0]["range"]["start"] == point(0, 0)
    assert apply_text_edits_utf32(SOURCE, edits) == SAFE_FIXED

    kinds = [a["kind"] for a in code_actions(client, uri, span(1, 25, 25), only=["source"])]
    assert kinds == ["source.fixAll.volfix", "source.volfix.fixAllUnsafe"]
    (unsafe,) = code_actions(client, uri, span(1, 25, 25), only=["source.volfix.fixAllUnsafe"])
    edits = client.request("codeAction/resolve", unsafe)["edit"]["changes"][uri]
    assert apply_text_edits_utf32(SOURCE, edits) == UNSAFE_FIXED


def apply_text_edits_utf32(text, edits):
    """Edits whose characters count code points (the utf-32 encoding), applied line by line."""
    lines = text.splitlines(keepends=True)

    def offset(position):
        return sum(len(line) for line in lines[:position["line"]]) + position["character"]

    for edit in sorted(edits, key=lambda e: offset(e["range"]["start"]), reverse=True):
        start, end = offset(edit["range"]["start"]), offset(edit["range"]["end"])
        text = text[:start] + edit["newText"] + text[end:]
    return text


# ---------------------------------------------------------------------- notebooks


NOTEBOOK_CELLS = [  # (kind, languageId, text): 1 = markup, 2 = code
    (1, "markdown", "# Evaluation\n"),
    (2, "python", "from torch.autograd import Variable\n"),
    (2, "python", "%time 1\ns = '😀'; out = model(Variable(x, volatile=True))\nprint(out)\n"),
    (2, "python", "def f(h):\n    if type(h) == Variable:\n        return h.detach()\n"),
]


def notebook_file(cells):
    """The .ipynb `volfix check` would read for these cells."""
    data = {"cells": [{"cell_type": "markdown", "metadata": {}, "source": text} if kind == 1 else
                      {"cell_type": "code", "execution_count": None, "metadata": {}, "outputs": [],
                       "source": text} for kind, _, text in cells],
            "metadata": {}, "nbformat": 4, "nbformat_minor": 5}
    return json.dumps(data).encode("utf-8")


def test_notebook_cells_are_checked_and_fixed_as_one_notebook(start, tmp_path):
    client, init = start(NOTEBOOKS)
    assert init["capabilities"]["notebookDocumentSync"]["notebookSelector"] == [
        {"cells": [{"language": "python"}]}]
    notebook = (tmp_path / "eval.ipynb").as_uri()
    cells = [f"vscode-notebook-cell:{tmp_path}/eval.ipynb#cell{n}" for n in range(len(NOTEBOOK_CELLS))]
    texts = {uri: text for uri, (_, _, text) in zip(cells, NOTEBOOK_CELLS)}
    client.notify("notebookDocument/didOpen", {
        "notebookDocument": {"uri": notebook, "notebookType": "jupyter-notebook", "version": 1,
                             "cells": [{"kind": kind, "document": uri}
                                       for (kind, _, _), uri in zip(NOTEBOOK_CELLS, cells)]},
        "cellTextDocuments": [{"uri": uri, "languageId": language, "version": 1, "text": text}
                              for (_, language, text), uri in zip(NOTEBOOK_CELLS, cells)]})

    # Diagnostics go to their cells, located within the cell (the magic line counts).
    (vf101,) = client.diagnostics(cells[2], version=1)
    assert (vf101["code"], vf101["range"]) == ("VF101", span(1, 22, 48))
    (vf112,) = client.diagnostics(cells[3], version=1)
    assert (vf112["code"], vf112["range"]) == ("VF112", span(1, 7, 26))
    assert client.diagnostics(cells[1], version=1) == []
    # The same findings as `volfix check eval.ipynb`.
    library, _ = process_notebook(notebook_file(NOTEBOOK_CELLS), path="eval.ipynb", config=DEFAULT_CONFIG)
    assert [(d.cell, d.code, d.location.row) for d in library.diagnostics] == [(3, "VF101", 2), (4, "VF112", 2)]

    # The quick fix wraps the cell's statement and adds `import torch` to the imports cell.
    (quickfix, fix_all) = code_actions(client, cells[2], span(1, 30, 30))
    assert quickfix["title"] == "volfix (VF101): Unwrap and run line 2 under `with torch.no_grad():`"
    edits = document_edits(quickfix["edit"])
    assert sorted(edits) == [cells[1], cells[2]]
    assert apply_text_edits(texts[cells[1]], edits[cells[1]]) == (
        "import torch\nfrom torch.autograd import Variable\n")
    assert apply_text_edits(texts[cells[2]], edits[cells[2]]) == (
        "%time 1\nwith torch.no_grad():\n    s = '😀'; out = model(x)\nprint(out)\n")

    # Fix all: the cells `volfix fix eval.ipynb` would write.
    assert fix_all["title"] == "volfix: fix all safe"
    fixed_cells = dict(texts)
    for uri, cell_edits in document_edits(fix_all["edit"]).items():
        fixed_cells[uri] = apply_text_edits(texts[uri], cell_edits)
    _, new_bytes = process_notebook(notebook_file(NOTEBOOK_CELLS), path="eval.ipynb", mode="fix",
                                    config=DEFAULT_CONFIG)
    expected = ["".join(c["source"]) if isinstance(c["source"], list) else c["source"]
                for c in json.loads(new_bytes)["cells"]]
    assert [fixed_cells[uri] for uri in cells] == expected
    assert fixed_cells[cells[3]] == "def f(h):\n    if isinstance(h, torch.Tensor):\n        return h.detach()\n"

    hover = client.request("textDocument/hover", {"textDocument": {"uri": cells[3]}, "position": point(1, 15)})
    assert hover["range"] == vf112["range"]
    assert f"# {get('VF112').name()} (VF112)\n\n{get('VF112').doc()}" in hover["contents"]["value"]

    # A cell edit: the VF112 finding goes, the other cells keep theirs.
    mark = client.mark()
    client.notify("notebookDocument/didChange", {
        "notebookDocument": {"uri": notebook, "version": 2},
        "change": {"cells": {"textContent": [{
            "document": {"uri": cells[3], "version": 2},
            "changes": [{"text": "def f(h):\n    if isinstance(h, torch.Tensor):\n        return h.detach()\n"}]}]}}})
    assert client.diagnostics(cells[3], version=2, since=mark) == []
    assert [d["code"] for d in client.diagnostics(cells[2], since=mark)] == ["VF101"]

    # Closing the notebook clears every cell.
    mark = client.mark()
    client.notify("notebookDocument/didClose", {"notebookDocument": {"uri": notebook},
                                                "cellTextDocuments": [{"uri": uri} for uri in cells]})
    for uri in (cells[2], cells[3]):
        assert client.diagnostics(uri, since=mark) == []


# ---------------------------------------------------------------------- the command


def test_server_without_pygls_fails_with_one_line():
    code = ("import sys\nsys.modules['pygls'] = None\nfrom volfix.cli.commands import main\n"
            "main(['server'], prog_name='volfix')\n")
    done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, stdin=subprocess.DEVNULL)
    assert done.returncode == 2
    assert done.stdout == ""
    assert done.stderr == ('Error: `volfix server` needs pygls; install it with: pip install "pygls>=2,<3"\n')


def test_check_and_version_do_not_import_pygls(tmp_path):
    (tmp_path / "a.py").write_text(SOURCE)
    code = ("import sys\nfrom volfix.cli.commands import main\n"
            "for args in (['--version'], ['check', '--no-cache', '-q', sys.argv[1]]):\n"
            "    try:\n        main(args)\n    except SystemExit as e:\n        print('exit', e.code)\n"
            "print(sorted(m for m in ('pygls', 'lsprotocol', 'volfix.lsp') if m in sys.modules))")
    done = subprocess.run([sys.executable, "-c", code, str(tmp_path / "a.py")], capture_output=True, text=True,
                          check=True)
    lines = done.stdout.splitlines()
    assert "exit 0" in lines and "exit 1" in lines
    assert lines[-1] == "[]"


# The example: unwrapping leaves `data, target = data, Variable(target)`, which the
# clean-up of `volfix fix` collapses. A quick fix applies the collapsed text too.
TUPLE = ("import torch\n"
         "from torch.autograd import Variable\n"
         "\n"
         "for data, target in loader:\n"
         "    data, target = Variable(data, volatile=True), Variable(target)\n"
         "    total += criterion(model(data), target).item()\n")


def test_a_quick_fix_applies_what_volfix_fix_writes_for_it(start, tmp_path):
    client, _ = start(BASIC)
    uri = (tmp_path / "tuple.py").as_uri()
    open_document(client, uri, TUPLE)
    assert [d["code"] for d in client.diagnostics(uri, version=1)] == ["VF101", "VF110"]
    (vf101,) = code_actions(client, uri, span(4, 20, 20), only=["quickfix"])
    written = api.fix_source(TUPLE, path="tuple.py").fixed_source  # the safe VF101 fix alone
    assert "data, target = data" not in written
    assert applied(TUPLE, vf101, uri) == written
    (vf110,) = code_actions(client, uri, span(4, 55, 55), only=["quickfix"])
    assert applied(TUPLE, vf110, uri) == TUPLE.replace(
        "    data, target = Variable(data, volatile=True), Variable(target)\n",
        "    data = Variable(data, volatile=True)\n")  # `target = target` collapsed away


def test_the_advertised_command_fixes_all(start, tmp_path):
    client, init = start(BASIC)
    assert init["capabilities"]["executeCommandProvider"]["commands"] == ["volfix.fixAll"]
    uri = (tmp_path / "legacy.py").as_uri()
    open_document(client, uri, SOURCE)
    client.diagnostics(uri, version=1)
    for unsafe, expected in ((False, SAFE_FIXED), (True, UNSAFE_FIXED)):
        argument = {"uri": uri, "unsafe": True} if unsafe else uri
        assert client.request("workspace/executeCommand",
                              {"command": "volfix.fixAll", "arguments": [argument]}) is True
        client.wait_for_request("workspace/applyEdit")
        sent = [m["params"] for m in client.server_requests if m["method"] == "workspace/applyEdit"]
        assert len(sent) == 1 + unsafe
        assert applied(SOURCE, sent[-1], uri) == expected
