"""One file through volfix: read, decode, check or fix, write atomically (SPEC §3).

The per-file boundary: whatever happens inside, the run goes on. An unreadable file is a
VF002 finding; a crash is a FileResult with `error` set, naming the path ("this is a volfix
bug"). Notebooks go to `volfix.notebook`, everything else to `volfix.engine`.
"""
from __future__ import annotations

import dataclasses
import os
from typing import Optional

from ..files import sourcefile
from ..settings.config import Config
from ..engine import check_text, fix_text, per_file_config
from ..model import Diagnostic, FileResult, Location


def process_file(path: str, *, config: Config, mode: str = "check", unsafe_fixes: bool = False,
                 display_path: Optional[str] = None, links=None, review=None,
                 with_fixes: bool = False, data: Optional[bytes] = None, doc=None) -> FileResult:
    """Read one file (.py/.pyi/.ipynb), check or fix it, write it back in fix mode.
    `links`: the file's links to the other files of the project (`volfix.flow.project`).
    `data`: the file's bytes as an earlier pass of this run computed them, instead of reading
    it (diff mode's settle pass: nothing was written, or the bytes the project index parsed).
    `doc`: a check's parsed `data` (`volfix.engine.check_text`), for a .py file."""
    shown = display_path or path
    try:
        return _process(path, shown, config=config, mode=mode, unsafe_fixes=unsafe_fixes, links=links,
                        review=review, with_fixes=with_fixes, data=data, doc=doc)
    except KeyboardInterrupt:
        raise
    except Exception as exc:  # the one per-file boundary: a crash is a volfix bug, the run goes on
        import traceback  # a crash only

        detail = "".join(traceback.format_exception_only(type(exc), exc)).strip()
        return FileResult(path=shown, error=f"internal error while processing {shown}: {detail} "
                                            f"(this is a volfix bug, please report it)\n"
                                            + "".join(traceback.format_exception(type(exc), exc, exc.__traceback__)))


def _unreadable(path: str, exc: OSError) -> str:
    """VF002's message for a path that cannot be read. A directory reaches here when the walk
    could not list it (`discovery`): the reason is the listing's."""
    if os.path.isdir(path):
        try:
            os.scandir(path).close()
        except OSError as listing:
            exc = listing
        return f"Directory cannot be read, its files are not checked: {exc.strerror or exc}"
    return f"File cannot be read: {exc.strerror or exc}"


def _process(path: str, shown: str, *, config: Config, mode: str, unsafe_fixes: bool, links, review,
             with_fixes: bool = False, data: Optional[bytes] = None, doc=None) -> FileResult:
    if data is None:
        try:
            data, _stat = sourcefile.read_file(path)
        except OSError as exc:
            return FileResult(path=shown, diagnostics=(file_diagnostic("VF002", _unreadable(path, exc)),))
    file_config = per_file_config(config, shown)
    if path.endswith(".ipynb"):
        from ..notebook import process_notebook

        result, new_bytes = process_notebook(data, path=shown, config=file_config, mode=mode,
                                             unsafe_fixes=unsafe_fixes, review=review, with_fixes=with_fixes,
                                             links=links)
        if mode == "fix" and new_bytes is not None and new_bytes != data:
            problem = write(path, new_bytes, data)
            if problem is not None:
                return dataclasses.replace(result, diagnostics=result.diagnostics + (problem,), changed=False)
        return result
    try:
        decoded = sourcefile.decode_source(data)
    except sourcefile.SourceDecodeError as exc:
        return FileResult(path=shown, diagnostics=(file_diagnostic("VF002", f"File cannot be read: {exc}"),))
    # The engine strips one leading U+FEFF from a text (its BOM): hand it the BOM the decoder
    # took off, so that a second one (which Python refuses) is still there to be VF001.
    text = "\ufeff" + decoded.text if decoded.bom else decoded.text
    if mode == "check":
        return check_text(text, path=shown, config=file_config, links=links, with_fixes=with_fixes, doc=doc)
    result = fix_text(text, path=shown, config=file_config, unsafe_fixes=unsafe_fixes, links=links,
                      review=review)
    if not result.changed:
        return result
    try:
        new_bytes = sourcefile.encode_source(result.fixed_source, decoded)
    except sourcefile.SourceDecodeError as exc:
        return unfixed(text, shown, file_config, file_diagnostic("VF002", f"File cannot be written: {exc}"),
                       links)
    if mode == "fix":
        problem = write(path, new_bytes, data)
        if problem is not None:
            return unfixed(text, shown, file_config, problem, links)
    return result


def fixed_bytes(path: str, result: FileResult, original: bytes) -> bytes:
    """The bytes fix mode would have written for `result` (diff mode) over `original`."""
    if not result.changed or result.fixed_source is None:
        return original
    if path.endswith(".ipynb"):
        return result.fixed_source.encode("utf-8")  # the notebook's new text, decoded from its bytes
    return sourcefile.encode_source(result.fixed_source, sourcefile.decode_source(original))


def write(path: str, new: bytes, old: bytes) -> Optional[Diagnostic]:
    try:
        sourcefile.write_file_atomic(path, new, original=old)
    except sourcefile.FileChangedError:
        return file_diagnostic("VF002", "File changed on disk while volfix was fixing it: not written")
    except OSError as exc:
        return file_diagnostic("VF002", f"File cannot be written: {exc.strerror or exc}")
    return None


def unfixed(text: str, path: str, config: Config, extra: Diagnostic, links) -> FileResult:
    again = check_text(text, path=path, config=config, links=links)
    return FileResult(path=path, diagnostics=again.diagnostics + (extra,), source=again.source,
                      fixed_source=again.source, changed=False)


def file_diagnostic(code: str, message: str, row: int = 1, col: int = 1) -> Diagnostic:
    return Diagnostic(code=code, message=message, location=Location(row, col), end_location=Location(row, col))
