"""Reading and writing source files without corrupting them.

Two halves:

* `decode_source` / `encode_source` turn bytes into text and back. The text keeps its line
  endings untranslated (CRLF, CR, LF, mixed), so every byte volfix does not edit comes back
  exactly as it was; `encode_source(decode_source(b).text, decode_source(b)) == b` for every
  file `decode_source` accepts. The encoding follows PEP 263: a byte order mark, or a coding
  cookie on line 1 (or line 2 when line 1 is blank or a comment), else UTF-8.
* `read_file` / `write_file_atomic` touch the file system. Writes go to a temporary file in
  the target's directory, are fsynced, then `os.replace`d over the target: a reader (or a
  Ctrl-C) sees the old file or the new one, never half of each. See `write_file_atomic` for
  symlinks, hard links, ownership and files that change while volfix runs.

Decisions (documented here because callers rely on them):

* NUL bytes make a file "binary": Python refuses them too, so it is a decode error.
* Files larger than `MAX_SOURCE_BYTES` are a decode error ("file too large"). The limit sits
  in `decode_source`, not `read_file`, so that a caller can run its cheap byte prefilter
  first: a 50 MB generated table without `volatile` in it is skipped, never reported.
* Encodings that are not ASCII-compatible (UTF-16, UTF-32, ...) are refused, as CPython does.
* A codec whose decoding is not one-to-one (a few legacy CJK codecs) could change bytes
  volfix never edited; such a file is still readable (`DecodedSource.exact` is False) but
  `encode_source` refuses to write changed text for it.

Nothing here prints or exits; every problem is an exception the engine turns into a
diagnostic (VF002 for `SourceDecodeError` and `OSError`).
"""
from __future__ import annotations

import codecs
import contextlib
import errno
import os
import re
import signal
import stat
import threading
from dataclasses import dataclass, field
from typing import Callable, Iterator, List, Optional, Tuple

MAX_SOURCE_BYTES = 10 * 1024 * 1024

_BOM = codecs.BOM_UTF8
# PEP 263, as CPython's tokenizer applies it.
_COOKIE_RE = re.compile(rb"^[ \t\f]*#.*?coding[:=][ \t]*([-\w.]+)")
_BLANK_OR_COMMENT_RE = re.compile(rb"^[ \t\f]*(?:[#\r\n]|$)")
# Codecs for which decode/encode is known to be a bijection on valid input.
_EXACT_CODECS = frozenset({"utf-8", "iso8859-1", "ascii", "latin-1"})


class SourceDecodeError(Exception):
    """The bytes cannot be turned into text (or the text back into bytes) faithfully.

    The message is the human reason, ready for a VF002 diagnostic.
    """


class FileChangedError(Exception):
    """The file on disk is no longer the content volfix read; it was not overwritten."""


class WritesCancelled(KeyboardInterrupt):
    """The run was interrupted (Ctrl-C): no new write may start. A KeyboardInterrupt, so
    that no per-file boundary turns it into a result and the CLI treats it as one."""


# Asked before every write starts; False: the write is refused (see `set_write_gate`).
_write_gate: Optional[Callable[[], bool]] = None


def set_write_gate(allowed: Optional[Callable[[], bool]]) -> None:
    """From now on, `write_file_atomic` asks `allowed()` before it starts a write (with
    signals already deferred) and raises WritesCancelled when it answers False. A process
    pool worker closes its gate on SIGINT (`volfix.run.workers`). None: every write is allowed."""
    global _write_gate
    _write_gate = allowed


@dataclass(frozen=True)
class DecodedSource:
    """A file's text and how to turn it back into the same bytes.

    `text` has the BOM stripped and line endings untranslated. `encoding` is normalised as
    `tokenize.detect_encoding` does ('utf-8', 'iso-8859-1', else the cookie's spelling).
    `exact` is False when re-encoding would not reproduce the original bytes; only then
    are those bytes kept (`original`), so that unchanged text still encodes to them.
    """

    text: str
    encoding: str = "utf-8"
    bom: bool = False
    exact: bool = True
    original: Optional[bytes] = field(default=None, repr=False, compare=False)


# --------------------------------------------------------------------------- decoding


def decode_source(data: bytes, *, max_bytes: Optional[int] = MAX_SOURCE_BYTES) -> DecodedSource:
    """Decode a Python source file's bytes following PEP 263; raise SourceDecodeError."""
    if max_bytes is not None and len(data) > max_bytes:
        raise SourceDecodeError(_too_large_message(len(data), max_bytes))
    nul = data.find(b"\x00")
    if nul >= 0:
        raise SourceDecodeError(
            f"looks like a binary file: NUL byte at line {_line_of(data, nul)}")
    bom = data.startswith(_BOM)
    body = data[len(_BOM):] if bom else data
    encoding, declared = _declared_encoding(body, bom)
    try:
        text = body.decode(encoding)
    except UnicodeDecodeError as exc:
        line = _line_of(body, exc.start)
        raise SourceDecodeError(f"{exc} at line {line} (declared encoding: {declared})") from None
    except LookupError as exc:  # pragma: no cover - codec vanished after lookup
        raise SourceDecodeError(str(exc)) from None
    if _codec_name(encoding) in _EXACT_CODECS or _reencodes(text, encoding, body):
        return DecodedSource(text=text, encoding=encoding, bom=bom)
    return DecodedSource(text=text, encoding=encoding, bom=bom, exact=False, original=data)


def encode_source(text: str, like: DecodedSource) -> bytes:
    """Encode `text` as the file `like` was encoded: same codec, same BOM.

    The exact inverse of `decode_source` for unchanged text. Raises SourceDecodeError when
    a character is not representable in the file's encoding, or when the encoding cannot
    reproduce the bytes volfix did not edit (`like.exact` is False and the text changed).
    """
    if not like.exact and like.original is not None and text == like.text:
        return like.original
    if not like.exact:
        raise SourceDecodeError(
            f"the file's encoding ({like.encoding}) does not round-trip byte for byte; "
            "volfix will not rewrite it")
    try:
        data = text.encode(like.encoding)
    except UnicodeEncodeError as exc:
        bad = exc.object[exc.start:exc.end]
        prefix = exc.object[:exc.start]
        line = prefix.count("\n") + prefix.count("\r") - prefix.count("\r\n") + 1
        raise SourceDecodeError(
            f"{bad!r} (line {line}) cannot be encoded in {like.encoding}, "
            "the file's declared encoding") from None
    return _BOM + data if like.bom else data


def _declared_encoding(body: bytes, bom: bool) -> Tuple[str, str]:
    """(codec, a human description of where it came from)."""
    cookie, line_no = _find_cookie(body)
    if cookie is None:
        return "utf-8", ("utf-8, byte order mark" if bom else "utf-8, the default")
    name = _normal_name(cookie.decode("ascii", "replace"))
    where = f"coding cookie on line {line_no}"
    try:
        info = codecs.lookup(name)
    except LookupError:
        raise SourceDecodeError(f"unknown encoding {name!r} ({where})") from None
    if bom and name != "utf-8":  # as CPython compares them: `utf8` with a BOM is refused
        raise SourceDecodeError(
            f"the file starts with a UTF-8 byte order mark but declares {name!r} ({where})")
    if not _ascii_compatible(info):
        raise SourceDecodeError(
            f"encoding {name!r} ({where}) is not ASCII-compatible; Python cannot read it")
    return name, f"{name}, {where}"


def _find_cookie(body: bytes) -> Tuple[Optional[bytes], int]:
    lines = _first_lines(body, 2)
    for index, line in enumerate(lines):
        match = _COOKIE_RE.match(line)
        if match:
            return match.group(1), index + 1
        if not _BLANK_OR_COMMENT_RE.match(line):
            break
    return None, 0


def _first_lines(data: bytes, count: int) -> List[bytes]:
    """The first `count` physical lines, splitting on CRLF, CR or LF as Python does."""
    lines: List[bytes] = []
    start = 0
    for match in re.finditer(rb"\r\n|\r|\n", data):
        lines.append(data[start:match.start()])
        start = match.end()
        if len(lines) == count:
            return lines
    lines.append(data[start:])
    return lines[:count]


def _normal_name(name: str) -> str:
    """Mirror tokenize._get_normal_name: only UTF-8 and Latin-1 spellings are normalised."""
    enc = name[:12].lower().replace("_", "-")
    if enc == "utf-8" or enc.startswith("utf-8-"):
        return "utf-8"
    if enc in ("latin-1", "iso-8859-1", "iso-latin-1") or enc.startswith(
            ("latin-1-", "iso-8859-1-", "iso-latin-1-")):
        return "iso-8859-1"
    return name


def _codec_name(encoding: str) -> str:
    try:
        return codecs.lookup(encoding).name
    except LookupError:  # pragma: no cover
        return encoding


def _ascii_compatible(info: codecs.CodecInfo) -> bool:
    probe = "#\n x=1\r\t\f"
    try:
        return info.encode(probe)[0] == probe.encode("ascii")
    except Exception:  # noqa: BLE001 - any codec failure means "not usable for source"
        return False


def _reencodes(text: str, encoding: str, body: bytes) -> bool:
    try:
        return text.encode(encoding) == body
    except UnicodeEncodeError:
        return False


def _line_of(data: bytes, offset: int) -> int:
    prefix = data[:offset]
    return prefix.count(b"\n") + prefix.count(b"\r") - prefix.count(b"\r\n") + 1


def _too_large_message(size: int, limit: int) -> str:
    return (f"file too large: {size / 1e6:.1f} MB "
            f"(volfix does not analyse files over {limit / 1e6:.0f} MB)")


# --------------------------------------------------------------------------- reading


def read_file(path: str) -> Tuple[bytes, os.stat_result]:
    """Read a file's bytes, with its stat taken from the same open file.

    Raises OSError (FileNotFoundError, PermissionError, IsADirectoryError, ...) as the OS
    reports it; a FIFO, socket or device is refused (reading one could block forever).
    """
    flags = os.O_RDONLY | getattr(os, "O_BINARY", 0) | getattr(os, "O_NONBLOCK", 0)
    fd = os.open(path, flags)
    with os.fdopen(fd, "rb") as handle:
        st = os.fstat(handle.fileno())
        if stat.S_ISDIR(st.st_mode):
            raise IsADirectoryError(errno.EISDIR, "is a directory", path)
        if not stat.S_ISREG(st.st_mode):
            raise OSError(errno.EINVAL, "not a regular file (pipe, socket or device)", path)
        return handle.read(), st


# --------------------------------------------------------------------------- writing


def write_file_atomic(path: str, data: bytes, *, original: bytes) -> str:
    """Replace the file at `path` (content `original` when read) by `data`.

    Returns the real path written (symlinks resolved), so the caller can say so.

    * `data == original`: nothing is touched (mtime kept).
    * Symlinks: the target is rewritten and the link stays a link. If the target already
      holds `data` (it was reached through another link and written), nothing is written.
    * The current content is compared with `original` first: a file changed by someone else
      since it was read raises FileChangedError and is left alone.
    * A read-only file (no write bit, or not writable by this user) raises PermissionError:
      a read-only checkout is a decision volfix respects, even when running as root.
    * Normal case: temporary file in the target's directory, same mode (and owner/group),
      fsync, `os.replace`. Any exception (KeyboardInterrupt included) removes the temporary
      file; SIGINT/SIGTERM arriving during the write are delivered right after it.
    * Hard links (st_nlink > 1), an owner volfix cannot reproduce, or a directory where no
      temporary file can be created: `os.replace` would silently split the link or change
      the owner, so the file is rewritten in place instead (same inode). That write is
      protected from signals and restored to `original` if it fails, but it is not atomic
      against a power cut: the price of keeping the link.
    * A closed write gate (`set_write_gate`: the run was interrupted) raises WritesCancelled
      before anything is touched.
    """
    real = os.path.realpath(path)
    if data == original:
        return real
    with _signals_deferred():
        if _write_gate is not None and not _write_gate():
            raise WritesCancelled(f"{real}: not written, the run was interrupted")
        st = os.stat(real)
        current = _read_exactly(real)
        if current != original:
            if current == data:
                return real  # already written, e.g. through another symlink
            raise FileChangedError(f"{real} changed on disk since volfix read it; not overwritten")
        _check_writable(real, st)
        if st.st_nlink > 1 or not _replace(real, data, st):
            _write_in_place(real, data, original)
    return real


def _read_exactly(path: str) -> bytes:
    with open(path, "rb") as handle:
        return handle.read()


def _check_writable(path: str, st: os.stat_result) -> None:
    if not stat.S_IMODE(st.st_mode) & 0o222 or not os.access(path, os.W_OK):
        raise PermissionError(errno.EACCES, "file is read-only; volfix does not change it", path)


def _replace(real: str, data: bytes, st: os.stat_result) -> bool:
    """Write via a temporary file + os.replace. False: cannot keep the file's identity."""
    directory, name = os.path.split(real)
    try:
        import tempfile  # writing only: a check never imports it (and its shutil, bz2, lzma)

        fd, tmp = tempfile.mkstemp(prefix=f".{name}.", suffix=".volfix-tmp", dir=directory)
    except PermissionError:
        return False  # writable file in a read-only directory: edit in place
    try:
        with os.fdopen(fd, "wb") as handle:
            if not _copy_identity(handle.fileno(), st):
                handle.close()
                os.unlink(tmp)
                return False
            handle.write(data)
            handle.flush()
            os.fsync(handle.fileno())
        if _identity(os.stat(real)) != _identity(st):
            raise FileChangedError(f"{real} changed on disk while volfix wrote it; not overwritten")
        os.replace(tmp, real)
    except BaseException:
        with contextlib.suppress(OSError):
            os.unlink(tmp)
        raise
    _fsync_directory(directory)
    return True


def _copy_identity(fd: int, st: os.stat_result) -> bool:
    """Give the temporary file the target's mode, owner and group; False if impossible."""
    if hasattr(os, "fchown"):
        mine = os.fstat(fd)
        if (mine.st_uid, mine.st_gid) != (st.st_uid, st.st_gid):
            try:
                os.fchown(fd, st.st_uid, st.st_gid)
            except PermissionError:
                return False
    if hasattr(os, "fchmod"):
        os.fchmod(fd, stat.S_IMODE(st.st_mode))
    else:  # pragma: no cover - Windows before 3.13
        pass
    return True


def _identity(st: os.stat_result) -> Tuple[int, int, int, int]:
    return (st.st_ino, st.st_dev, st.st_size, st.st_mtime_ns)


def _write_in_place(real: str, data: bytes, original: bytes) -> None:
    """Rewrite the file's own inode with unbuffered writes (a buffered file object would
    flush the new bytes again before the restore, and fail the same way: a full disk or a
    file size limit left the file cut at the limit). A file that grows gets its blocks first
    (posix_fallocate), so a full disk usually refuses the write before any byte changes."""
    fd = os.open(real, os.O_RDWR | getattr(os, "O_BINARY", 0))
    try:
        if _read_all(fd) != original:
            raise FileChangedError(f"{real} changed on disk since volfix read it; not overwritten")
        if len(data) > len(original):
            _reserve(fd, len(data))
        try:
            _write_all(fd, data)
            os.ftruncate(fd, len(data))
            os.fsync(fd)
        except BaseException:
            # Restoring needs no new disk blocks: the original's blocks are still allocated.
            _write_all(fd, original)
            os.ftruncate(fd, len(original))
            with contextlib.suppress(OSError):
                os.fsync(fd)
            raise
    finally:
        os.close(fd)


def _read_all(fd: int) -> bytes:
    chunks = []
    while True:
        chunk = os.read(fd, 1 << 20)
        if not chunk:
            return b"".join(chunks)
        chunks.append(chunk)


def _write_all(fd: int, data: bytes) -> None:
    os.lseek(fd, 0, os.SEEK_SET)
    view = memoryview(data)
    while view:
        view = view[os.write(fd, view):]


_NO_ROOM = tuple(getattr(errno, name) for name in ("ENOSPC", "EFBIG", "EDQUOT") if hasattr(errno, name))


def _reserve(fd: int, size: int) -> None:
    """Allocate the file's blocks up to `size` (ENOSPC/EFBIG here leave the file as it was)."""
    if not hasattr(os, "posix_fallocate"):
        return  # pragma: no cover - macOS, Windows
    size_before = os.fstat(fd).st_size
    try:
        os.posix_fallocate(fd, 0, size)
    except OSError as exc:
        if exc.errno in _NO_ROOM:
            with contextlib.suppress(OSError):
                os.ftruncate(fd, size_before)  # blocks a failed allocation may have added
            raise
        # EOPNOTSUPP, EINVAL...: a file system without it; the restore covers a failure


def _fsync_directory(directory: str) -> None:
    if not hasattr(os, "O_DIRECTORY"):
        return  # pragma: no cover - Windows
    with contextlib.suppress(OSError):
        fd = os.open(directory, os.O_RDONLY | os.O_DIRECTORY)
        try:
            os.fsync(fd)
        finally:
            os.close(fd)


_DEFERRED_SIGNALS = tuple(getattr(signal, name) for name in ("SIGINT", "SIGTERM", "SIGHUP")
                          if hasattr(signal, name))


@contextlib.contextmanager
def _signals_deferred() -> Iterator[None]:
    """Hold SIGINT/SIGTERM/SIGHUP until the block ends, then deliver them as usual.

    Only the main thread can install handlers; elsewhere (and for signals whose handler
    was not set from Python) this is a no-op and the BaseException cleanup still applies.
    """
    if threading.current_thread() is not threading.main_thread():
        yield
        return
    received: List[int] = []
    previous = {}
    for signum in _DEFERRED_SIGNALS:
        handler = signal.getsignal(signum)
        if handler is None or handler == signal.SIG_IGN:
            continue
        try:
            previous[signum] = signal.signal(signum, lambda s, _f: received.append(s))
        except (ValueError, OSError):  # pragma: no cover - embedded interpreters
            continue
    try:
        yield
    finally:
        for signum, handler in previous.items():
            signal.signal(signum, handler)
        for signum in dict.fromkeys(received):
            signal.raise_signal(signum)
