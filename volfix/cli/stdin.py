"""`volfix check -` and `volfix fix -`: one file read from standard input.

The `--stdin-filename` decides what the bytes are, as it would for a file on disk: a name
ending in `.ipynb` means notebook JSON (checked and fixed cell by cell, findings carry their
cell), anything else Python source. The name also selects the configuration (the nearest
one above it, its per-file ignores) and is the path findings are reported under.

`fix` (and `--diff`) computes the fixes; `fix` then writes the result to stdout byte for byte:
the fixed source encoded as the input was (PEP 263 cookie or BOM), or the fixed notebook
JSON (byte-identical except the edited cells' `source`). When nothing changed or the input
could not be fixed, the input itself is written: a filter must never swallow its input.
"""
from __future__ import annotations

import sys
from typing import Optional, Tuple

from ..settings.config import Config
from ..model import FileResult

DEFAULT_NAME = "<stdin>"


def is_notebook_name(name: Optional[str]) -> bool:
    return bool(name) and name.lower().endswith(".ipynb")


class StdinUnavailable(Exception):
    """`-` was given but standard input cannot be read (closed, a directory, an I/O error)."""


def read_stdin() -> bytes:
    """All of standard input; StdinUnavailable when there is none to read (`volfix check -
    <&-` leaves sys.stdin None) or reading it fails."""
    if sys.stdin is None:
        raise StdinUnavailable("`-` reads standard input, but it is closed")
    stream = getattr(sys.stdin, "buffer", sys.stdin)
    try:
        return stream.read()
    except (OSError, ValueError) as exc:  # ValueError: a closed file object
        raise StdinUnavailable(f"`-` reads standard input, which cannot be read: "
                               f"{getattr(exc, 'strerror', None) or exc}") from None


def process_stdin(data: bytes, *, name: Optional[str], config: Config, mode: str,
                  with_fixes: bool) -> Tuple[FileResult, bytes]:
    """Check (`mode` "check") or fix ("fix", "diff") `data` as the file `name`.

    Returns the result and the bytes `volfix fix -` writes to stdout (the input when
    nothing changed). `config` is the file's own configuration (per-file ignores resolved).
    """
    from .. import api

    path = name or DEFAULT_NAME
    if is_notebook_name(name):
        from ..notebook import process_notebook

        result, new_bytes = process_notebook(data, path=path, config=config, mode=mode,
                                             unsafe_fixes=config.unsafe_fixes,
                                             with_fixes=with_fixes or mode != "check")
        return result, (new_bytes if new_bytes is not None else data)
    if mode == "check":
        return api.check_source(data, path=path, config=config, with_fixes=with_fixes), data
    result = api.fix_source(data, path=path, config=config, unsafe_fixes=config.unsafe_fixes)
    if result.fixed_source is None or result.fixed_source == result.source:
        return result, data
    return result, encode_like(result.fixed_source, data)


def encode_like(text: str, original: bytes) -> bytes:
    """Encode `text` the way `original` was encoded (PEP 263 cookie or BOM; UTF-8 default)."""
    import io
    import tokenize

    try:
        encoding, _ = tokenize.detect_encoding(io.BytesIO(original).readline)
    except SyntaxError:
        encoding = "utf-8"
    if encoding == "utf-8-sig" and text.startswith("\ufeff"):
        encoding = "utf-8"  # the BOM is already part of the text
    return text.encode(encoding)


def write_stdout(payload: bytes) -> None:
    """`payload` on stdout as bytes, after whatever text was written there before."""
    sys.stdout.flush()
    stream = getattr(sys.stdout, "buffer", sys.stdout)
    stream.write(payload)
    stream.flush()
