"""A small LSP client for the language server tests: it starts `python -m volfix server` as a
subprocess and speaks Content-Length framed JSON-RPC over its stdin/stdout, as an editor does.

Deliberately independent of pygls: positions are computed and edits applied here with their
own UTF-16 arithmetic, so a conversion bug in the server cannot cancel out in the tests.
"""
from __future__ import annotations

import json
import os
import queue
import subprocess
import sys
import threading
import time
from pathlib import Path
from typing import Any, Callable, Dict, List, Optional

TIMEOUT = 60.0  # seconds; generous for a loaded 2-core machine, never reached when things work


class LspError(Exception):
    pass


class LspClient:
    def __init__(self, cwd: Path, stderr_path: Path):
        self.stderr_file = open(stderr_path, "wb")
        env = dict(os.environ)
        env.pop("NO_COLOR", None)
        self.process = subprocess.Popen([sys.executable, "-m", "volfix", "server"], cwd=cwd,
                                        stdin=subprocess.PIPE, stdout=subprocess.PIPE,
                                        stderr=self.stderr_file, env=env)
        self.stderr_path = stderr_path
        self._next_id = 0
        self._responses: Dict[int, "queue.Queue[dict]"] = {}
        self._lock = threading.Condition()
        self.notifications: List[dict] = []  # every notification from the server, in order
        self.server_requests: List[dict] = []  # requests the server sent us (registerCapability)
        self._reader = threading.Thread(target=self._read_loop, daemon=True)
        self._reader.start()

    # ------------------------------------------------------------------ wire

    def _send(self, message: dict) -> None:
        body = json.dumps(message).encode("utf-8")
        self.process.stdin.write(b"Content-Length: %d\r\n\r\n" % len(body) + body)
        self.process.stdin.flush()

    def _read_message(self) -> Optional[dict]:
        stdout = self.process.stdout
        length = None
        while True:
            line = stdout.readline()
            if not line:
                return None
            line = line.strip()
            if not line:
                break
            name, _, value = line.decode("ascii").partition(":")
            if name.lower() == "content-length":
                length = int(value)
        if length is None:
            raise LspError("a message without Content-Length")
        return json.loads(stdout.read(length).decode("utf-8"))

    def _read_loop(self) -> None:
        while True:
            message = self._read_message()
            if message is None:
                return
            if "id" in message and "method" in message:  # a request from the server
                with self._lock:
                    self.server_requests.append(message)
                    self._lock.notify_all()
                self._send({"jsonrpc": "2.0", "id": message["id"], "result": None})
            elif "id" in message:
                with self._lock:
                    box = self._responses.get(message["id"])
                if box is not None:
                    box.put(message)
            else:
                with self._lock:
                    self.notifications.append(message)
                    self._lock.notify_all()

    # ------------------------------------------------------------------ JSON-RPC

    def request(self, method: str, params: Any = None, timeout: float = TIMEOUT) -> Any:
        with self._lock:
            self._next_id += 1
            ident = self._next_id
            box: "queue.Queue[dict]" = queue.Queue()
            self._responses[ident] = box
        self._send({"jsonrpc": "2.0", "id": ident, "method": method, "params": params})
        try:
            response = box.get(timeout=timeout)
        except queue.Empty:
            raise LspError(f"no response to {method} within {timeout}s; server stderr:\n"
                           + self.stderr_path.read_text(errors="replace")) from None
        if "error" in response:
            failure = LspError(f"{method} failed: {response['error']}")
            failure.error = response["error"]
            raise failure
        return response.get("result")

    def notify(self, method: str, params: Any = None) -> None:
        self._send({"jsonrpc": "2.0", "method": method, "params": params})

    def mark(self) -> int:
        """A point in the notification stream: `wait_for(..., since=mark)` looks after it."""
        with self._lock:
            return len(self.notifications)

    def wait_for(self, method: str, predicate: Callable[[dict], bool] = lambda params: True,
                 since: int = 0, timeout: float = TIMEOUT) -> dict:
        """The params of the first `method` notification after `since` that satisfies `predicate`."""
        deadline = time.monotonic() + timeout
        with self._lock:
            while True:
                for message in self.notifications[since:]:
                    if message.get("method") == method and predicate(message.get("params")):
                        return message["params"]
                left = deadline - time.monotonic()
                if left <= 0:
                    seen = [m.get("method") for m in self.notifications[since:]]
                    raise LspError(f"no {method} notification within {timeout}s (got {seen}); "
                                   "server stderr:\n" + self.stderr_path.read_text(errors="replace"))
                self._lock.wait(left)

    def wait_for_request(self, method: str, timeout: float = TIMEOUT) -> dict:
        """The params of the first request the server sent us with `method`."""
        deadline = time.monotonic() + timeout
        with self._lock:
            while True:
                for message in self.server_requests:
                    if message["method"] == method:
                        return message["params"]
                left = deadline - time.monotonic()
                if left <= 0:
                    raise LspError(f"the server sent no {method} request within {timeout}s")
                self._lock.wait(left)

    def diagnostics(self, uri: str, version: Optional[int] = None, since: int = 0) -> List[dict]:
        """The diagnostics of the first publish for `uri` (with `version`) after `since`."""
        params = self.wait_for("textDocument/publishDiagnostics",
                               lambda p: p["uri"] == uri and (version is None or p.get("version") == version),
                               since=since)
        return params["diagnostics"]

    def published(self, uri: str, since: int = 0) -> List[dict]:
        with self._lock:
            return [m["params"] for m in self.notifications[since:]
                    if m.get("method") == "textDocument/publishDiagnostics" and m["params"]["uri"] == uri]

    # ------------------------------------------------------------------ session

    def initialize(self, root: Path, capabilities: dict) -> dict:
        result = self.request("initialize", {"processId": os.getpid(), "rootUri": root.as_uri(),
                                             "capabilities": capabilities,
                                             "workspaceFolders": [{"uri": root.as_uri(), "name": "w"}]})
        self.notify("initialized", {})
        return result

    def close(self) -> int:
        """shutdown + exit; the server's exit code."""
        try:
            if self.process.poll() is None:
                self.request("shutdown", None)
                self.notify("exit", None)
                return self.process.wait(timeout=TIMEOUT)
            return self.process.returncode
        finally:
            if self.process.poll() is None:
                self.process.kill()
                self.process.wait()
            self.process.stdin.close()
            self._reader.join(timeout=TIMEOUT)  # it stops at the end of the server's output
            self.process.stdout.close()
            self.stderr_file.close()


# ---------------------------------------------------------------------- text arithmetic


def utf16_len(text: str) -> int:
    return len(text.encode("utf-16-le")) // 2


def lines_of(text: str) -> List[str]:
    """Lines with their endings (\\r\\n, \\r, \\n)."""
    out, start, i = [], 0, 0
    while i < len(text):
        if text[i] == "\r" and text[i + 1:i + 2] == "\n":
            out.append(text[start:i + 2])
            i += 2
            start = i
            continue
        if text[i] in "\r\n":
            out.append(text[start:i + 1])
            start = i + 1
        i += 1
    if start < len(text):
        out.append(text[start:])
    return out


def offset_of(text: str, position: dict) -> int:
    """The code point offset of an LSP position (UTF-16 characters) in `text`."""
    lines = lines_of(text)
    line = position["line"]
    if line >= len(lines):
        return len(text)
    base = sum(len(item) for item in lines[:line])
    content = lines[line].rstrip("\r\n")
    units = 0
    for n, ch in enumerate(content):
        if units >= position["character"]:
            return base + n
        units += utf16_len(ch)
    return base + len(content)


def apply_text_edits(text: str, edits: List[dict]) -> str:
    """Apply LSP TextEdits as an editor does (inserts at one position keep their order)."""
    spans = [(offset_of(text, e["range"]["start"]), offset_of(text, e["range"]["end"]), n, e["newText"])
             for n, e in enumerate(edits)]
    for start, end, _, new in sorted(spans, reverse=True):
        text = text[:start] + new + text[end:]
    return text


def document_edits(workspace_edit: dict) -> Dict[str, List[dict]]:
    """uri -> edits, from `changes` or `documentChanges`."""
    if workspace_edit.get("documentChanges") is not None:
        return {change["textDocument"]["uri"]: change["edits"] for change in workspace_edit["documentChanges"]}
    return dict(workspace_edit.get("changes") or {})
