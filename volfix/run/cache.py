"""The result cache: `.volfix_cache/` in the project root.

One JSON file per entry, named by a key that covers everything a result depends on:

    sha256(volfix version, the engine's fingerprint, Config.cache_key(), mode, path relative
           to the project root, the file's own Config.cache_key(), sha256 of the file's bytes)

(The path is part of the key because `per-file-ignores` and the file type depend on it. The
engine's fingerprint, `engine_fingerprint`, is the path, size and modification time of each
of volfix's modules: the version alone stays the same in a development checkout, or across
two `pip install git+...` of one version, whose results may differ.)
Only results of `check` are stored; `fix` and `--diff` read `check` entries to skip files
known to have no finding. Results with an internal error are never stored, so a volfix
bug is retried on the next run.

Safe by construction rather than by locking: entries are written to a temporary file in
the same directory and renamed over the target (`os.replace` is atomic), so parallel runs
at worst write the same entry twice. An entry's first line is a checksum of its key and
its JSON payload: an entry whose checksum disagrees (truncated, garbled, hand-edited,
copied from another entry) is never decoded, and one that cannot be decoded or rebuilt
(another layout) is a miss too; either is overwritten. Any OSError
(read-only tree, full disk) disables nothing but that one entry: the run never fails
because of its cache.

The directory holds a `.gitignore` containing `*` and a `CACHEDIR.TAG`, so neither git nor
backup tools pick it up. Entries live under a per-version directory; `prune_versions`
removes the directories of other volfix versions.
"""
from __future__ import annotations

import functools
import hashlib
import json
import os
from dataclasses import replace
from typing import Any, Dict, Optional

from .._version import __version__
from ..model import Applicability, Diagnostic, Edit, FileResult, Fix, Location

CACHE_DIR_NAME = ".volfix_cache"
FORMAT = 4  # bump when the entry layout changes
_TAG = ("Signature: 8a477f597d28d172789f06886806bc55\n"
        "# This file is a cache directory tag created by volfix.\n"
        "# For information about cache directory tags see https://bford.info/cachedir/\n")


class ResultCache:
    """Entries of one run: the project root, the configuration key and the mode are fixed."""

    def __init__(self, root: str, config_key: str, *, version: Optional[str] = None,
                 engine: Optional[str] = None) -> None:
        version = __version__ if version is None else version
        engine = engine_fingerprint() if engine is None else engine
        self.root = os.path.abspath(root)
        self.directory = os.path.join(self.root, CACHE_DIR_NAME, _safe_name(version))
        self._prefix = json.dumps([FORMAT, version, engine, config_key]).encode()
        self._ready = False

    def key(self, path: str, data: bytes, mode: str, config_key: str = "") -> str:
        """The entry name for `path` (any form) holding `data`, checked in `mode` with the
        file's own configuration (`config_key`: its `Config.cache_key()`, when the run's
        files do not all share the one this cache was made with)."""
        rel = os.path.relpath(os.path.abspath(path), self.root)
        h = hashlib.sha256(self._prefix)
        h.update(b"\0" + mode.encode() + b"\0" + rel.encode("utf-8", "surrogateescape") + b"\0")
        h.update(config_key.encode("utf-8", "surrogateescape") + b"\0")
        h.update(hashlib.sha256(data).digest())
        return h.hexdigest()

    def get(self, key: str, display_path: str, data: Optional[bytes] = None
            ) -> Optional[FileResult]:
        """The stored result, with `display_path` as its path; None on a miss or a bad entry.
        `data` (the file's bytes) restores a source that `put` left out."""
        entry = self._read(key)
        if entry is None:
            return None
        try:
            result = result_from_json(entry)
            if entry.get("source_is_utf8") is True:
                if data is None:
                    return None
                result = replace(result, source=data.decode("utf-8"))
        except _BAD_ENTRY:
            return None  # foreign: treated as a miss, overwritten by put()
        return replace(result, path=display_path)

    def put(self, key: str, result: FileResult, data: Optional[bytes] = None) -> bool:
        """Store `result` atomically. False (and nothing raised) when it cannot be written.

        When `result.source` is just `data` decoded as UTF-8 (the common case), the entry
        leaves it out and `get` decodes the bytes again: half the size, twice as fast."""
        if result.error is not None:
            return False
        entry = result_to_json(result)
        if data is not None and result.source is not None and _is_utf8_of(result.source, data):
            entry["source"] = None
            entry["source_is_utf8"] = True
        return self._write(key, entry)

    def get_json(self, key: str) -> Any:
        """A plain JSON entry (`put_json`), or None on a miss or an unreadable entry."""
        return self._read(key)

    def _read(self, key: str) -> Any:
        """The decoded entry `key`, or None: missing, unreadable, or not what `_write` wrote
        under this key (its checksum line disagrees: truncated, garbled, hand-edited, copied
        from another entry). Only a checked payload reaches the JSON decoder."""
        try:
            with open(os.path.join(self.directory, key + ".json"), "rb") as fh:
                raw = fh.read()
        except OSError:
            return None
        digest, _, payload = raw.partition(b"\n")
        if digest != _checksum(key, payload):
            return None
        try:
            return json.loads(payload)
        except _BAD_ENTRY:
            return None

    def put_json(self, key: str, value: Any) -> bool:
        """Store a plain JSON value (the project index's facts about one file, `volfix.project.index`)."""
        return self._write(key, value)

    def _write(self, key: str, entry: Any) -> bool:
        try:
            self._prepare()
            # ASCII output: lone surrogates (from undecodable bytes) survive the round trip.
            payload = json.dumps(entry, separators=(",", ":")).encode("ascii")
            payload = _checksum(key, payload) + b"\n" + payload
            import tempfile  # lazily: a run without cache writes never pays for it

            fd, tmp = tempfile.mkstemp(dir=self.directory, prefix=".tmp-", suffix=".json")
            try:
                with os.fdopen(fd, "wb") as fh:
                    fh.write(payload)
                os.replace(tmp, os.path.join(self.directory, key + ".json"))
            except BaseException:
                _unlink_quietly(tmp)
                raise
        except OSError:
            return False
        return True

    def _prepare(self) -> None:
        if self._ready:
            return
        top = os.path.dirname(self.directory)
        os.makedirs(self.directory, exist_ok=True)
        for name, text in ((".gitignore", "# Created by volfix automatically.\n*\n"),
                           ("CACHEDIR.TAG", _TAG)):
            target = os.path.join(top, name)
            if not os.path.exists(target):
                _write_atomic(target, text.encode())
        self._ready = True

    def prune_versions(self) -> None:
        """Remove the entries of other volfix versions (never fails)."""
        import shutil

        top = os.path.dirname(self.directory)
        try:
            names = os.listdir(top)
        except OSError:
            return
        for name in names:
            full = os.path.join(top, name)
            if full != self.directory and os.path.isdir(full) and not os.path.islink(full):
                shutil.rmtree(full, ignore_errors=True)


# volfix's own directory (this module is volfix/run/cache.py): every package of the engine.
ENGINE_ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))


@functools.lru_cache(maxsize=None)
def engine_fingerprint(package: str = ENGINE_ROOT) -> str:
    """A digest of the path, size and modification time (ns) of every module under
    `package` (volfix's own directory): ~100 `stat`s, well under a millisecond."""
    h = hashlib.sha256()
    for directory, subdirs, names in os.walk(package):
        subdirs[:] = sorted(d for d in subdirs if d != "__pycache__")
        for name in sorted(names):
            if name.endswith(".py"):
                path = os.path.join(directory, name)
                try:
                    st = os.stat(path)
                except OSError:
                    continue
                h.update(f"{os.path.relpath(path, package)}\0{st.st_size}\0{st.st_mtime_ns}\0".encode(
                    "utf-8", "surrogateescape"))
    return h.hexdigest()[:16]


# What decoding a bad entry may raise (RecursionError: nesting deeper than the decoder's
# stack; MemoryError: a huge one): a miss, never an error of the run.
_BAD_ENTRY = (ValueError, TypeError, KeyError, AttributeError, IndexError, RecursionError, MemoryError)


def _checksum(key: str, payload: bytes) -> bytes:
    """An entry's first line: a digest of its key and payload."""
    return hashlib.blake2b(payload, digest_size=16, key=key.encode("ascii", "replace")[:64]).hexdigest().encode()


def _is_utf8_of(text: str, data: bytes) -> bool:
    try:
        return data.decode("utf-8") == text
    except UnicodeDecodeError:
        return False


def _safe_name(version: str) -> str:
    return "".join(ch if ch.isalnum() or ch in ".-_+" else "_" for ch in version) or "unknown"


def _write_atomic(target: str, data: bytes) -> None:
    import tempfile

    fd, tmp = tempfile.mkstemp(dir=os.path.dirname(target), prefix=".tmp-")
    try:
        with os.fdopen(fd, "wb") as fh:
            fh.write(data)
        os.replace(tmp, target)
    except BaseException:
        _unlink_quietly(tmp)
        raise


def _unlink_quietly(path: str) -> None:
    try:
        os.unlink(path)
    except OSError:
        pass


# --- (de)serialisation of model.py types ------------------------------------------------
# Compact arrays rather than objects: a warm run reads thousands of diagnostics, and both
# the JSON size and the decoding time matter. Field order is fixed by FORMAT.
#   Edit        [content, row, col, end_row, end_col]
#   Fix         [applicability, message, [Edit...]]
#   Diagnostic  [code, message, row, col, end_row, end_col, Fix|null, note, cell, snippet]
# Decoding relies on the constructors and unpacking to reject a wrong shape, and checks
# the types a reporter would trip over (ints, strings) in bulk.

_APPLICABILITY = {a.value: a for a in Applicability}
_new = object.__new__
_set = object.__setattr__


def _plain(cls: type, names: str) -> bool:
    """Whether `cls` can be built by filling its __dict__ (3x faster than a frozen
    dataclass's __init__): exactly these fields, no slots, no __post_init__. Checked once,
    so that a change to model.py falls back to the constructor instead of breaking."""
    import dataclasses

    return (dataclasses.is_dataclass(cls) and not hasattr(cls, "__slots__")
            and not hasattr(cls, "__post_init__")
            and [f.name for f in dataclasses.fields(cls)] == names.split())


_FAST_DIAGNOSTIC = _plain(Diagnostic, "code message location end_location fix note cell snippet")
_FAST_EDIT = _plain(Edit, "content location end_location")


def fix_to_json(fix: Fix) -> list:
    return [fix.applicability.value, fix.message,
            [[e.content, e.location.row, e.location.column, e.end_location.row,
              e.end_location.column] for e in fix.edits]]


def fix_from_json(raw: Any) -> Fix:
    applicability, message, edits = raw
    out = []
    for content, row, col, end_row, end_col in edits:
        if type(content) is not str or not _ints(row, col, end_row, end_col):
            raise TypeError("bad edit")
        if _FAST_EDIT:
            edit = _new(Edit)
            _set(edit, "__dict__", {"content": content, "location": Location(row, col),
                                    "end_location": Location(end_row, end_col)})
        else:
            edit = Edit(content, Location(row, col), Location(end_row, end_col))
        out.append(edit)
    if type(message) is not str:
        raise TypeError("bad fix message")
    return Fix(_APPLICABILITY[applicability], message, tuple(out))


def diagnostic_to_json(d: Diagnostic) -> list:
    return [d.code, d.message, d.location.row, d.location.column, d.end_location.row,
            d.end_location.column, fix_to_json(d.fix) if d.fix is not None else None,
            d.note, d.cell, d.snippet]


def diagnostic_from_json(raw: Any) -> Diagnostic:
    code, message, row, col, end_row, end_col, fix, note, cell, snippet = raw
    if not (_ints(row, col, end_row, end_col) and _strs(code, message, snippet)
            and (note is None or type(note) is str) and (cell is None or type(cell) is int)):
        raise TypeError("bad diagnostic")
    fix = fix_from_json(fix) if fix is not None else None
    if not _FAST_DIAGNOSTIC:
        return Diagnostic(code, message, Location(row, col), Location(end_row, end_col), fix,
                          note, cell, snippet)
    diagnostic = _new(Diagnostic)
    _set(diagnostic, "__dict__", {"code": code, "message": message, "location": Location(row, col),
                                  "end_location": Location(end_row, end_col), "fix": fix,
                                  "note": note, "cell": cell, "snippet": snippet})
    return diagnostic


def _ints(*values: Any) -> bool:
    for v in values:
        if type(v) is not int:
            return False
    return True


def _strs(*values: Any) -> bool:
    for v in values:
        if type(v) is not str:
            return False
    return True


def _opt_str(value: Any) -> Optional[str]:
    if value is not None and type(value) is not str:
        raise TypeError("expected a string")
    return value


def result_to_json(result: FileResult) -> Dict[str, Any]:
    """A JSON-able dict holding every field of `result`."""
    return {"path": result.path,
            "diagnostics": [diagnostic_to_json(d) for d in result.diagnostics],
            "source": result.source, "fixed_source": result.fixed_source,
            "fixed_count": result.fixed_count, "changed": result.changed,
            "error": result.error, "applied_codes": list(result.applied_codes),
            "undecided": result.undecided}


def result_from_json(raw: Any) -> FileResult:
    """The inverse of `result_to_json`; raises ValueError/TypeError/KeyError on bad input."""
    if not isinstance(raw, dict):
        raise TypeError("entry is not an object")
    changed, fixed_count, codes = raw["changed"], raw["fixed_count"], raw["applied_codes"]
    undecided = raw["undecided"]
    if type(changed) is not bool or type(fixed_count) is not int or not _strs(*codes) \
            or type(raw["path"]) is not str or type(undecided) is not int:
        raise TypeError("bad result")
    return FileResult(path=raw["path"],
                      diagnostics=tuple(diagnostic_from_json(d) for d in raw["diagnostics"]),
                      source=_opt_str(raw["source"]), fixed_source=_opt_str(raw["fixed_source"]),
                      fixed_count=fixed_count, changed=changed, error=_opt_str(raw["error"]),
                      applied_codes=tuple(codes), undecided=undecided)
