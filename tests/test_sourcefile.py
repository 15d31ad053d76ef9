"""volfix.files.sourcefile: bytes in, the same bytes out; writes that never corrupt a file."""
from __future__ import annotations

import os
import signal
import stat
import sys
import threading

import pytest

from volfix.files import sourcefile
from volfix.files.sourcefile import (DecodedSource, FileChangedError, SourceDecodeError, decode_source,
                               encode_source, read_file, write_file_atomic)

ROUND_TRIP = {
    "crlf": b"import torch\r\nx = 1\r\n",
    "cr-only": b"import torch\rx = 1\r",
    "mixed-endings": b"a = 1\r\nb = 2\nc = 3\rd = 4\n",
    "tabs": b"def f():\n\tif x:\n\t\treturn 1\n",
    "trailing-whitespace": b"x = 1   \t\ny = 2 \n",
    "no-final-newline": b"x = 1\ny = 2",
    "form-feed": b"x = 1\n\x0c\ndef f():\n    pass\n",
    "empty": b"",
    "bom": b"\xef\xbb\xbfx = '\xc3\xa9'\r\n",
    "bom-and-utf8-cookie": b"\xef\xbb\xbf# -*- coding: utf-8 -*-\nx = 1\n",
    "latin-1-cookie": b"# -*- coding: latin-1 -*-\nname = 'Andr\xe9'\n",
    "cookie-on-line-2": b"#!/usr/bin/env python\n# vim: set fileencoding=iso-8859-15 :\nx = '\xa4'\n",
    "cp1252-cookie": b"# coding=cp1252\nquote = '\x93hi\x94'\n",
    "cookie-cr-only": b"#!/usr/bin/python\r# coding: latin-1\rx = '\xe9'\r",
    "utf8-default": "s = 'ünïcödé ∑'\n".encode("utf-8"),
}


@pytest.mark.parametrize("data", list(ROUND_TRIP.values()), ids=list(ROUND_TRIP))
def test_round_trip_is_byte_identical(data):
    decoded = decode_source(data)
    assert encode_source(decoded.text, decoded) == data


def test_newlines_are_not_translated_and_bom_is_stripped():
    decoded = decode_source(b"\xef\xbb\xbfa\r\nb\rc\n")
    assert decoded == DecodedSource(text="a\r\nb\rc\n", encoding="utf-8", bom=True)


@pytest.mark.parametrize("data, encoding", [
    (b"# -*- coding: latin-1 -*-\n", "iso-8859-1"),
    (b"# coding: ISO_8859_1\n", "iso-8859-1"),
    (b"# coding: utf8\n", "utf8"),  # tokenize keeps spellings it does not normalise
    (b"# coding: UTF-8-unix\n", "utf-8"),
    (b"# coding=cp1252\n", "cp1252"),
    (b"x = 1\n", "utf-8"),
    (b"x = 1\n# coding: latin-1\n", "utf-8"),  # line 2 counts only after a comment line
    (b"\n\n# coding: latin-1\n", "utf-8"),  # line 3 never counts
])
def test_encoding_is_named_as_tokenize_names_it(data, encoding):
    assert decode_source(data).encoding == encoding


def test_edited_latin1_text_is_written_in_latin1():
    decoded = decode_source(b"# coding: latin-1\nx = Variable('\xe9', volatile=True)\n")
    new = decoded.text.replace("Variable(", "(").replace(", volatile=True", "")
    assert encode_source(new, decoded) == b"# coding: latin-1\nx = ('\xe9')\n"


@pytest.mark.parametrize("data, reason", [
    (b"x = '\xe9'\n", "can't decode byte 0xe9"),
    (b"# coding: utf-8\nok = 1\nbad = '\xff'\n", "line 3 (declared encoding: utf-8, coding cookie on line 1)"),
    (b"x = 1\r\ny = '\xe9'\r\n", "at line 2"),
    (b"# coding: klingon\n", "unknown encoding 'klingon'"),
    (b"\xef\xbb\xbf# coding: latin-1\n", "byte order mark but declares 'iso-8859-1'"),
    (b"# coding: utf-16\nx = 1\n", "not ASCII-compatible"),
    (b"import torch\n\x00\x01\x02", "binary file: NUL byte at line 2"),
])
def test_undecodable_files_raise_with_a_human_reason(data, reason):
    with pytest.raises(SourceDecodeError, match=None) as info:
        decode_source(data)
    assert reason in str(info.value)


def test_files_over_the_limit_are_refused_unless_the_limit_is_lifted():
    data = b"x = 1\n" * 100
    with pytest.raises(SourceDecodeError, match="file too large"):
        decode_source(data, max_bytes=100)
    assert decode_source(data, max_bytes=None).text == data.decode()
    assert sourcefile.MAX_SOURCE_BYTES >= 10 * 1024 * 1024


def test_characters_the_encoding_cannot_hold_are_refused():
    decoded = decode_source(b"# coding: latin-1\nx = 1\n")
    with pytest.raises(SourceDecodeError, match="cannot be encoded in iso-8859-1"):
        encode_source(decoded.text + "y = '\u2603'\n", decoded)


def test_a_codec_that_does_not_round_trip_is_readable_but_not_rewritable():
    # ISO-2022-JP: the redundant escape back to ASCII disappears when re-encoded.
    data = b"# coding: iso2022_jp\nx = 1\x1b(B\n"
    decoded = decode_source(data)
    assert not decoded.exact
    assert encode_source(decoded.text, decoded) == data  # unchanged text: the original bytes
    with pytest.raises(SourceDecodeError, match="does not round-trip"):
        encode_source(decoded.text + "y = 2\n", decoded)


# --------------------------------------------------------------------------- files


def write(path, data: bytes, mode=None):
    path.write_bytes(data)
    if mode is not None:
        os.chmod(path, mode)
    return str(path)


def leftovers(directory) -> list:
    return sorted(p.name for p in directory.iterdir() if "volfix" in p.name)


def test_read_file_returns_bytes_and_stat(tmp_path):
    path = write(tmp_path / "a.py", b"x = 1\r\n")
    data, st = read_file(path)
    assert data == b"x = 1\r\n" and st.st_size == 7


def test_read_file_refuses_a_fifo_without_blocking(tmp_path):
    if not hasattr(os, "mkfifo"):
        pytest.skip("no FIFOs here")
    fifo = tmp_path / "pipe.py"
    os.mkfifo(fifo)
    with pytest.raises(OSError, match="not a regular file"):
        read_file(str(fifo))


def test_read_file_reports_a_directory_and_a_broken_link(tmp_path):
    (tmp_path / "pkg.py").mkdir()
    with pytest.raises(IsADirectoryError):
        read_file(str(tmp_path / "pkg.py"))
    os.symlink(tmp_path / "missing.py", tmp_path / "dangling.py")
    with pytest.raises(FileNotFoundError):
        read_file(str(tmp_path / "dangling.py"))


def test_write_replaces_content_and_keeps_mode(tmp_path):
    path = write(tmp_path / "a.py", b"old\n", mode=0o751)
    assert write_file_atomic(path, b"new\n", original=b"old\n") == os.path.realpath(path)
    assert (tmp_path / "a.py").read_bytes() == b"new\n"
    assert stat.S_IMODE(os.stat(path).st_mode) == 0o751
    assert leftovers(tmp_path) == []


@pytest.mark.skipif(not hasattr(os, "geteuid") or os.geteuid() != 0, reason="chown needs root")
def test_write_keeps_owner_and_group_when_root(tmp_path):
    path = write(tmp_path / "a.py", b"old\n")
    os.chown(path, 4321, 8765)
    write_file_atomic(path, b"new\n", original=b"old\n")
    st = os.stat(path)
    assert (st.st_uid, st.st_gid) == (4321, 8765)
    assert (tmp_path / "a.py").read_bytes() == b"new\n"


def test_owner_that_cannot_be_reproduced_means_in_place_write(tmp_path, monkeypatch):
    path = write(tmp_path / "a.py", b"old\n")
    inode = os.stat(path).st_ino
    real_stat = os.stat

    def foreign_owner_stat(p, *args, **kwargs):
        st = real_stat(p, *args, **kwargs)
        if os.fspath(p) == os.path.realpath(path):
            fields = list(st)
            fields[stat.ST_UID] = st.st_uid + 1
            return os.stat_result(fields)
        return st

    def refuse(*_args):
        raise PermissionError(1, "Operation not permitted")

    monkeypatch.setattr(os, "stat", foreign_owner_stat)
    monkeypatch.setattr(os, "fchown", refuse)
    write_file_atomic(path, b"new\n", original=b"old\n")
    monkeypatch.undo()
    assert (tmp_path / "a.py").read_bytes() == b"new\n"
    assert os.stat(path).st_ino == inode  # same file, so its real owner is kept
    assert leftovers(tmp_path) == []


def test_unchanged_data_never_touches_the_file(tmp_path):
    path = write(tmp_path / "a.py", b"same\n")
    os.utime(path, ns=(1_000_000_000, 1_000_000_000))
    before = os.stat(path)
    write_file_atomic(path, b"same\n", original=b"same\n")
    after = os.stat(path)
    assert (after.st_mtime_ns, after.st_ino) == (before.st_mtime_ns, before.st_ino)


def test_a_file_changed_on_disk_is_not_overwritten(tmp_path):
    path = write(tmp_path / "a.py", b"edited by the user meanwhile\n")
    with pytest.raises(FileChangedError, match="changed on disk"):
        write_file_atomic(path, b"volfix output\n", original=b"what volfix read\n")
    assert (tmp_path / "a.py").read_bytes() == b"edited by the user meanwhile\n"
    assert leftovers(tmp_path) == []


def test_a_change_during_the_write_is_detected_before_replacing(tmp_path, monkeypatch):
    path = write(tmp_path / "a.py", b"old\n")
    real_fsync = os.fsync

    def user_saves_meanwhile(fd):
        real_fsync(fd)
        (tmp_path / "a.py").write_bytes(b"user's version, saved at the worst moment\n")

    monkeypatch.setattr(os, "fsync", user_saves_meanwhile)
    with pytest.raises(FileChangedError):
        write_file_atomic(path, b"new\n", original=b"old\n")
    monkeypatch.undo()
    assert (tmp_path / "a.py").read_bytes() == b"user's version, saved at the worst moment\n"
    assert leftovers(tmp_path) == []


def test_read_only_file_raises_permission_error_even_for_root(tmp_path):
    path = write(tmp_path / "a.py", b"old\n", mode=0o444)
    with pytest.raises(PermissionError, match="read-only"):
        write_file_atomic(path, b"new\n", original=b"old\n")
    assert (tmp_path / "a.py").read_bytes() == b"old\n"
    assert leftovers(tmp_path) == []


def test_symlink_stays_a_link_and_its_target_is_written(tmp_path):
    (tmp_path / "real").mkdir()
    target = write(tmp_path / "real" / "model.py", b"old\n", mode=0o640)
    link = tmp_path / "model.py"
    os.symlink(os.path.join("real", "model.py"), link)
    assert write_file_atomic(str(link), b"new\n", original=b"old\n") == os.path.realpath(target)
    assert os.path.islink(link)
    assert os.readlink(link) == os.path.join("real", "model.py")
    assert (tmp_path / "real" / "model.py").read_bytes() == b"new\n"
    assert stat.S_IMODE(os.stat(target).st_mode) == 0o640
    assert leftovers(tmp_path) == [] and leftovers(tmp_path / "real") == []


def test_target_reached_through_two_links_is_written_once(tmp_path):
    target = write(tmp_path / "model.py", b"old\n")
    for name in ("a.py", "b.py"):
        os.symlink("model.py", tmp_path / name)
    # Both links were read before either was written (as parallel workers would).
    write_file_atomic(str(tmp_path / "a.py"), b"new\n", original=b"old\n")
    first = os.stat(target)
    write_file_atomic(str(tmp_path / "b.py"), b"new\n", original=b"old\n")
    second = os.stat(target)
    assert (second.st_ino, second.st_mtime_ns) == (first.st_ino, first.st_mtime_ns)
    assert (tmp_path / "model.py").read_bytes() == b"new\n"
    assert os.path.islink(tmp_path / "a.py") and os.path.islink(tmp_path / "b.py")


def test_hard_links_are_not_split(tmp_path):
    path = write(tmp_path / "a.py", b"old content\n")
    os.link(path, tmp_path / "b.py")
    inode = os.stat(path).st_ino
    write_file_atomic(path, b"new\n", original=b"old content\n")
    assert (tmp_path / "b.py").read_bytes() == b"new\n"  # both names see the edit
    assert os.stat(path).st_ino == inode and os.stat(path).st_nlink == 2
    assert leftovers(tmp_path) == []


def test_in_place_write_that_fails_restores_the_original(tmp_path, monkeypatch):
    path = write(tmp_path / "a.py", b"old content\n")
    os.link(path, tmp_path / "b.py")

    def disk_full(_fd):
        raise OSError(28, "No space left on device")

    monkeypatch.setattr(os, "fsync", disk_full)
    with pytest.raises(OSError, match="No space"):
        write_file_atomic(path, b"a much longer new content\n", original=b"old content\n")
    monkeypatch.undo()
    assert (tmp_path / "a.py").read_bytes() == b"old content\n"


_FILE_SIZE_LIMITED_WRITE = r"""
import os, resource, signal, sys
signal.signal(signal.SIGXFSZ, signal.SIG_IGN)
resource.setrlimit(resource.RLIMIT_FSIZE, (4096, 4096))
if sys.argv[2] == "no-preallocation":
    def unsupported(*_args):
        raise OSError(95, "Operation not supported")
    os.posix_fallocate = unsupported
from volfix.files.sourcefile import write_file_atomic
path = sys.argv[1]
with open(path, "rb") as handle:
    original = handle.read()
try:
    write_file_atomic(path, original + b"# grown\n" * int(sys.argv[3]), original=original)
except OSError as exc:
    print(exc.errno)
"""


@pytest.mark.skipif(not hasattr(os, "link") or sys.platform == "win32", reason="POSIX file size limits")
@pytest.mark.parametrize("preallocation", ["preallocation", "no-preallocation"])
@pytest.mark.parametrize("grown_lines", [200, 2000])  # new content under and over io's buffer size
def test_in_place_write_past_a_file_size_limit_leaves_the_original_whole(tmp_path, preallocation, grown_lines):
    # A real limit (RLIMIT_FSIZE, what `ulimit -f 4` sets): the new bytes do not fit. The
    # restore used to flush the buffered new bytes first, fail the same way, and leave the
    # file cut at 4,096 bytes. Without posix_fallocate the write fails half way and the
    # original is written back; with it, nothing is touched.
    import subprocess

    original = b"".join(b"x%d = %d  # a line of legacy code\n" % (i, i) for i in range(100))
    assert 3000 < len(original) < 4096
    path = write(tmp_path / "a.py", original)
    os.link(path, tmp_path / "b.py")  # a hard link: written in place, never replaced
    done = subprocess.run([sys.executable, "-c", _FILE_SIZE_LIMITED_WRITE, str(path), preallocation,
                           str(grown_lines)],
                          capture_output=True, text=True, timeout=60,
                          env={**os.environ, "PYTHONPATH": os.pathsep.join(sys.path)})
    assert done.returncode == 0, done.stderr
    assert done.stdout.strip() == "27"  # EFBIG: the write was refused
    assert (tmp_path / "a.py").read_bytes() == original
    assert os.stat(path).st_nlink == 2
    assert leftovers(tmp_path) == []


def test_writable_file_in_read_only_directory_is_edited_in_place(tmp_path, monkeypatch):
    path = write(tmp_path / "a.py", b"old\n")

    def no_temp_files(*_args, **_kwargs):
        raise PermissionError(13, "Permission denied")

    import tempfile  # sourcefile imports it when it writes

    monkeypatch.setattr(tempfile, "mkstemp", no_temp_files)
    write_file_atomic(path, b"new\n", original=b"old\n")
    assert (tmp_path / "a.py").read_bytes() == b"new\n"


@pytest.mark.parametrize("where", ["os.replace", "os.fsync", "os.fchmod"])
def test_keyboard_interrupt_inside_the_write_leaves_the_old_file(tmp_path, monkeypatch, where):
    path = write(tmp_path / "a.py", b"old\n", mode=0o644)

    def interrupted(*_args, **_kwargs):
        raise KeyboardInterrupt

    monkeypatch.setattr(os, where.split(".")[1], interrupted)
    with pytest.raises(KeyboardInterrupt):
        write_file_atomic(path, b"new\n", original=b"old\n")
    monkeypatch.undo()
    assert (tmp_path / "a.py").read_bytes() == b"old\n"
    assert leftovers(tmp_path) == []


@pytest.mark.skipif(threading.current_thread() is not threading.main_thread(),
                    reason="signal handlers need the main thread")
def test_real_sigint_during_the_write_is_delivered_after_it(tmp_path, monkeypatch):
    # A test run started in the background inherits SIGINT ignored (POSIX), and Python then
    # installs no KeyboardInterrupt handler: install it, as an interactive run has it.
    previous = signal.signal(signal.SIGINT, signal.default_int_handler)
    try:
        _sigint_during_the_write(tmp_path, monkeypatch)
    finally:
        signal.signal(signal.SIGINT, previous)


def _sigint_during_the_write(tmp_path, monkeypatch):
    path = write(tmp_path / "a.py", b"old\n")
    real_fsync = os.fsync

    def ctrl_c_arrives(fd):
        os.kill(os.getpid(), signal.SIGINT)
        real_fsync(fd)

    monkeypatch.setattr(os, "fsync", ctrl_c_arrives)
    with pytest.raises(KeyboardInterrupt):
        write_file_atomic(path, b"new\n", original=b"old\n")
    monkeypatch.undo()
    assert (tmp_path / "a.py").read_bytes() == b"new\n"  # the write finished first
    assert leftovers(tmp_path) == []
    assert signal.getsignal(signal.SIGINT) is signal.default_int_handler


@pytest.mark.skipif(sys.platform == "win32", reason="POSIX signals")
def test_sigint_at_random_moments_leaves_old_or_new(tmp_path):
    import subprocess
    import time

    old = b"# old\n" + b"x = 1\n" * 200_000
    new = b"# new\n" + b"y = 2\n" * 200_000
    script = (
        "import sys\n"
        "from volfix.files.sourcefile import write_file_atomic\n"
        "path, old, new = sys.argv[1], open(sys.argv[2], 'rb').read(), open(sys.argv[3], 'rb').read()\n"
        "print('ready', flush=True)\n"
        "while True:\n"
        "    write_file_atomic(path, new, original=old)\n"
        "    old, new = new, old\n")
    (tmp_path / "old.bin").write_bytes(old)
    (tmp_path / "new.bin").write_bytes(new)
    work = tmp_path / "w"
    work.mkdir()
    target = work / "big.py"
    for delay in (0.05, 0.11, 0.23, 0.37):
        target.write_bytes(old)
        # SIGINT may be ignored in this process (a background test run): not in the child.
        proc = subprocess.Popen([sys.executable, "-c", script, str(target), str(tmp_path / "old.bin"),
                                 str(tmp_path / "new.bin")], stdout=subprocess.PIPE,
                                preexec_fn=lambda: signal.signal(signal.SIGINT, signal.SIG_DFL))
        try:
            assert proc.stdout.readline() == b"ready\n"
            time.sleep(delay)
            proc.send_signal(signal.SIGINT)
            proc.wait(timeout=30)
        finally:
            if proc.poll() is None:  # never leave a writer looping behind a failed test
                proc.kill()
                proc.wait()
        assert target.read_bytes() in (old, new)
        assert leftovers(work) == []


def test_a_closed_write_gate_refuses_the_write_before_touching_anything(tmp_path):
    path = tmp_path / "m.py"
    path.write_bytes(b"old\n")
    before = os.stat(path)
    sourcefile.set_write_gate(lambda: False)
    try:
        with pytest.raises(sourcefile.WritesCancelled):
            write_file_atomic(str(path), b"new\n", original=b"old\n")
    finally:
        sourcefile.set_write_gate(None)
    after = os.stat(path)
    assert path.read_bytes() == b"old\n"
    assert (after.st_ino, after.st_mtime_ns) == (before.st_ino, before.st_mtime_ns)
    assert os.listdir(tmp_path) == ["m.py"]
    # A KeyboardInterrupt: no per-file `except Exception` boundary turns it into a result.
    assert issubclass(sourcefile.WritesCancelled, KeyboardInterrupt)


def test_an_open_write_gate_is_asked_once_per_write(tmp_path):
    path = tmp_path / "m.py"
    path.write_bytes(b"old\n")
    asked = []
    sourcefile.set_write_gate(lambda: asked.append(1) or True)
    try:
        write_file_atomic(str(path), b"new\n", original=b"old\n")
        write_file_atomic(str(path), b"new\n", original=b"new\n")  # unchanged: no write
    finally:
        sourcefile.set_write_gate(None)
    assert path.read_bytes() == b"new\n"
    assert asked == [1]
