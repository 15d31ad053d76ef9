"""How the language server reads and answers messages: pygls's protocol with a reply to every
request (`VolfixProtocol`), and a stdin that drops what is too large to read (`BoundedStdin`)."""
from __future__ import annotations

import logging

from lsprotocol import types
from pygls.exceptions import JsonRpcException, JsonRpcInvalidRequest
from pygls.protocol import LanguageServerProtocol

log = logging.getLogger(__name__)

# The largest message body read (a 4.5 MB document is a 5 MB message; a client's larger
# Content-Length is read and dropped in chunks, never allocated at once).
MAX_MESSAGE_BYTES = 64 * 1024 * 1024
MAX_HEADER_BYTES = 64 * 1024
_ANSWERED = object()  # a request answered with an error while it was decoded


class VolfixProtocol(LanguageServerProtocol):
    """pygls's protocol, with a reply to every request: one whose parameters do not decode
    (a negative or out-of-range position, a wrong type) gets InvalidParams, and one that
    comes after `shutdown` gets InvalidRequest. pygls logged both and never answered: the
    client waited forever."""

    def structure_message(self, data):
        try:
            return super().structure_message(data)
        except JsonRpcException as error:
            if isinstance(data, dict) and "id" in data and isinstance(data.get("method"), str):
                self._send_response(data["id"], error=types.ResponseError(
                    code=error.code, message=f"{error.message}: {data['method']} has invalid parameters"))
                return _ANSWERED
            raise

    def handle_message(self, message):
        if message is _ANSWERED:
            return
        method = getattr(message, "method", None)
        if self._shutdown and method is not None and method != types.EXIT and getattr(message, "id", None) is not None:
            self._send_response(message.id, error=types.ResponseError(
                code=JsonRpcInvalidRequest.CODE, message=f"the server is shut down: {method} refused"))
            return
        super().handle_message(message)


class BoundedStdin:
    """The server's stdin for pygls: a header line or a message body larger than the limits
    is read and dropped in chunks (logged) instead of being allocated: `Content-Length:
    1000000000000` raised MemoryError and ended the server."""

    def __init__(self, stream) -> None:
        self.stream = stream

    def readline(self) -> bytes:
        line = self.stream.readline(MAX_HEADER_BYTES)
        while line and len(line) >= MAX_HEADER_BYTES and not line.endswith(b"\n"):
            line = self.stream.readline(MAX_HEADER_BYTES)  # the rest of an overlong line: dropped
            if line.endswith(b"\n"):
                return b"X-Dropped: an overlong header line\r\n"
        return line

    def read(self, size: int) -> bytes:
        if size <= MAX_MESSAGE_BYTES:
            return self.stream.read(size)
        log.error("dropping a message of %d bytes (more than %d)", size, MAX_MESSAGE_BYTES)
        left = size
        while left:
            chunk = self.stream.read(min(left, 1 << 20))
            if not chunk:
                return b""  # the client is gone
            left -= len(chunk)
        return b"null"  # pygls logs a message it cannot handle and reads the next one
