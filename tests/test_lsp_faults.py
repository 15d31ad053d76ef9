"""`volfix server` under malformed exchanges (issue 24, item 8): every request gets an answer,
a huge Content-Length is no MemoryError, and the exit code follows the LSP specification."""
from __future__ import annotations

import pytest
from lsp_client import TIMEOUT, LspClient, LspError

pytest.importorskip("pygls")

SOURCE = "from torch.autograd import Variable\nx = Variable(y, volatile=True)\n"


@pytest.fixture
def client(tmp_path):
    started = LspClient(tmp_path, tmp_path / "server.stderr")
    started.initialize(tmp_path, {})
    uri = (tmp_path / "legacy.py").as_uri()
    started.notify("textDocument/didOpen",
                   {"textDocument": {"uri": uri, "languageId": "python", "version": 1, "text": SOURCE}})
    assert [d["code"] for d in started.diagnostics(uri)] == ["VF101"]
    started.uri = uri
    yield started
    started.close()  # shutdown and exit if it still runs


def error_of(client, method, params) -> dict:
    with pytest.raises(LspError) as raised:
        client.request(method, params, timeout=TIMEOUT)
    assert hasattr(raised.value, "error"), str(raised.value)  # an answer, not a timeout
    return raised.value.error


@pytest.mark.parametrize("position", [{"line": -1, "character": 0}, {"line": 1, "character": -3},
                                      {"line": 2 ** 40, "character": 0}, {"line": 1}])
def test_a_request_with_an_invalid_position_gets_an_error_reply(client, position):
    error = error_of(client, "textDocument/hover", {"textDocument": {"uri": client.uri}, "position": position})
    assert error["code"] == -32602
    # and the server goes on
    hover = client.request("textDocument/hover", {"textDocument": {"uri": client.uri},
                                                  "position": {"line": 1, "character": 5}})
    assert "VF101" in hover["contents"]["value"]


def test_requests_after_shutdown_get_an_error_reply_and_exit_is_0(client):
    assert client.request("shutdown", None) is None
    error = error_of(client, "textDocument/hover", {"textDocument": {"uri": client.uri},
                                                    "position": {"line": 1, "character": 5}})
    assert error["code"] == -32600
    client.notify("exit", None)
    assert client.process.wait(timeout=TIMEOUT) == 0


def test_exit_without_shutdown_exits_1(client):
    client.notify("exit", None)
    assert client.process.wait(timeout=TIMEOUT) == 1


def test_a_huge_content_length_is_dropped_not_a_memory_error(client):
    # 10^12 bytes announced, 5 sent: the server must not allocate them; it reads what comes
    # (here: the end of its input) and ends without a MemoryError.
    client.process.stdin.write(b"Content-Length: 1000000000000\r\n\r\n{}\r\n\r\n")
    client.process.stdin.flush()
    client.process.stdin.close()
    assert client.process.wait(timeout=TIMEOUT) == 1  # input ended without shutdown
    assert "MemoryError" not in client.stderr_path.read_text(errors="replace")


def test_a_message_past_the_limit_is_read_and_dropped_in_chunks(monkeypatch):
    import io

    from volfix.lsp import transport

    monkeypatch.setattr(transport, "MAX_MESSAGE_BYTES", 512)
    body = b'{"jsonrpc": "2.0", "method": "x/ignored", "params": {"pad": "' + b"a" * 3000 + b'"}}'
    following = b"Content-Length: 2\r\n\r\n{}"
    stdin = transport.BoundedStdin(io.BufferedReader(io.BytesIO(body + following)))
    assert stdin.read(len(body)) == b"null"  # dropped: pygls logs it and reads on
    assert stdin.readline() == b"Content-Length: 2\r\n"  # the next message is intact
    assert stdin.readline() == b"\r\n"
    assert stdin.read(2) == b"{}"
    big = transport.BoundedStdin(io.BufferedReader(io.BytesIO(b"x" * 10)))
    assert big.read(10 ** 12) == b""  # announced, never sent: the end of the input, no allocation
