"""The language server on big documents (issue 24: a 4.5 MB document with 45,000 findings got
no diagnostics within 300 s): a document over `MAX_LIVE_CHARS` is refused with one diagnostic
that says why and what to run instead, a document with more findings than `MAX_PUBLISHED`
gets that many and one saying how many more there are, and the server keeps answering. Quick
fixes are computed for the findings under the cursor only, and are what `volfix fix` writes."""
from __future__ import annotations

import sys
from pathlib import Path

import pytest
from lsp_client import LspClient, apply_text_edits, document_edits

from volfix import api
from volfix.lsp.server import MAX_LIVE_CHARS, MAX_PUBLISHED

sys.path.insert(0, str(Path(__file__).resolve().parent.parent / "benchmarks"))
from gen_many_sites import generate  # noqa: E402

LEGACY = "from torch.autograd import Variable\nout = model(Variable(x, volatile=True))\n"


@pytest.fixture
def client(tmp_path):
    client = LspClient(tmp_path, tmp_path / "server.stderr")
    client.initialize(tmp_path, {"workspace": {"workspaceEdit": {"documentChanges": True}}})
    yield client
    assert client.close() == 0


def open_document(client, uri, text):
    client.notify("textDocument/didOpen",
                  {"textDocument": {"uri": uri, "languageId": "python", "version": 1, "text": text}})


def code_actions(client, uri, line, character, only=None):
    position = {"line": line, "character": character}
    context = {"diagnostics": [], **({"only": only} if only else {})}
    return client.request("textDocument/codeAction", {"textDocument": {"uri": uri},
                                                      "range": {"start": position, "end": position},
                                                      "context": context})


def test_a_document_over_the_size_limit_is_refused_with_a_message(client, tmp_path):
    padding = "# " + "x" * 98 + "\n"
    text = LEGACY + padding * (MAX_LIVE_CHARS // len(padding) + 1)
    assert len(text) > MAX_LIVE_CHARS
    uri = (tmp_path / "huge.py").as_uri()
    open_document(client, uri, text)
    (only,) = client.diagnostics(uri, version=1)
    assert only["severity"] == 3 and "code" not in only  # information, not a finding
    assert f"{len(text):,} characters, more than {MAX_LIVE_CHARS:,}" in only["message"]
    assert "Run `volfix check`" in only["message"]
    assert code_actions(client, uri, 1, 20) == []  # no fix offered for what was not checked
    # and the server still answers: a small document next to it is checked as usual
    small = (tmp_path / "small.py").as_uri()
    open_document(client, small, LEGACY)
    assert [d["code"] for d in client.diagnostics(small, version=1)] == ["VF101"]


def test_more_findings_than_published_are_counted(client, tmp_path):
    text = generate(700, seed=0)
    found = api.check_source(text, path="many.py").diagnostics
    assert len(found) > MAX_PUBLISHED
    uri = (tmp_path / "many.py").as_uri()
    open_document(client, uri, text)
    published = client.diagnostics(uri, version=1)
    assert len(published) == MAX_PUBLISHED + 1
    assert [d["code"] for d in published[:-1]] == [d.code for d in found[:MAX_PUBLISHED]]
    assert published[-1]["message"] == (f"volfix: {len(found) - MAX_PUBLISHED:,} more findings in this "
                                        "document are not shown here; run `volfix check` on it.")


def test_a_quick_fix_in_a_document_with_many_fixes_is_what_fix_writes(client, tmp_path):
    text = generate(60, seed=2)
    library = api.check_source(text, path="many.py", with_fixes=True).diagnostics
    # the last function's finding: a fix of its own (a decorator), far from the script's region
    target = [d for d in library if d.fixable and d.fix.edits][-1]
    uri = (tmp_path / "many.py").as_uri()
    open_document(client, uri, text)
    client.diagnostics(uri, version=1)
    row, column = target.location.row - 1, target.location.column - 1
    (action,) = code_actions(client, uri, row, column, only=["quickfix"])
    edits = document_edits(action["edit"])[uri]
    expected = text
    for edit in sorted(target.fix.edits, key=lambda e: (e.location.row, e.location.column), reverse=True):
        lines = expected.splitlines(keepends=True)
        start = sum(len(line) for line in lines[:edit.location.row - 1]) + edit.location.column - 1
        end = sum(len(line) for line in lines[:edit.end_location.row - 1]) + edit.end_location.column - 1
        expected = expected[:start] + edit.content + expected[end:]
    assert apply_text_edits(text, edits) == expected != text


def test_fix_edits_for_some_findings_are_those_of_every_finding():
    text = generate(30, seed=1)
    every = api.check_source(text, path="many.py", with_fixes=True).diagnostics
    wanted = {d.location for d in every[::7]}
    some = api.check_source(text, path="many.py", with_fixes=True,
                            fixes_for=lambda d: d.location in wanted).diagnostics
    assert [(d.code, d.location, d.message, d.note) for d in some] == \
        [(d.code, d.location, d.message, d.note) for d in every]
    for full, partial in zip(every, some):
        if full.fix is None:
            assert partial.fix is None
        elif full.location in wanted:
            assert partial.fix == full.fix
        else:  # no edits, unless fixed together with a wanted finding (one region)
            assert partial.fix == full.fix or (partial.fix.edits == () and partial.fix.message == full.fix.message)
    assert sum(bool(d.fix and d.fix.edits) for d in some) < sum(bool(d.fix and d.fix.edits) for d in every)
