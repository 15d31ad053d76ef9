"""A byte order mark with a `coding:` header (issue 24): what volfix reports follows CPython.

CPython refuses a UTF-8 byte order mark followed by any cookie but `utf-8` (it compares the
normalised name, so `utf8` and `latin-1` alike) while *decoding* the file, before any parsing:
`compile(bytes)` says "encoding problem: utf8 with BOM". volfix's code for a file it cannot
read or decode is VF002, so that is what such a header gets; VF001 (cannot be parsed) is for a
file that decodes and then does not parse, such as a second mark (CPython: "invalid
non-printable character U+FEFF"). The oracle is CPython itself, and the answer is the same
for the file's bytes and for its text decoded with the mark kept (an editor's buffer, the
language server's input): before, the text was fixed as if the header were fine."""
from __future__ import annotations

import pytest

import volfix

BOM = b"\xef\xbb\xbf"
BODY = b"from torch.autograd import Variable\nx = Variable(y, volatile=True)\n"
HEADERS = [
    BOM + b"# coding: utf8\n",
    BOM + b"#!/usr/bin/env python\n# -*- coding: utf8 -*-\n",
    BOM + b"# coding: latin-1\n",
    BOM + b"# vim: set fileencoding=utf8 :\r\n",
    BOM + b"#!/usr/bin/env python\r# coding: utf8\r",
    BOM + BOM,
    BOM + b"# coding: utf-8\n",
    BOM + b"# coding: UTF-8\n",
    BOM + b"#!/usr/bin/env python\n",
    BOM,
]


def cpython_says(data: bytes) -> str:
    """VF002 when CPython cannot decode the file, VF001 when it cannot parse it, else ""."""
    try:
        compile(data, "<file>", "exec", dont_inherit=True)
    except SyntaxError as exc:
        return "VF002" if str(exc.msg).startswith("encoding problem") else "VF001"
    return ""


@pytest.mark.parametrize("header", HEADERS)
def test_a_marked_header_is_reported_as_cpython_reads_it(header):
    data = header + BODY
    expected = cpython_says(data)
    text = data.decode("utf-8")  # the mark kept, as U+FEFF
    for source in (data, text):
        checked = volfix.check_source(source, path="legacy.py")
        problems = {d.code for d in checked.diagnostics} & {"VF001", "VF002"}
        assert problems == ({expected} if expected else set()), (header, type(source).__name__)
        fixed = volfix.fix_source(source, path="legacy.py")
        if expected:
            assert not fixed.fixed_count and not fixed.changed
        else:
            assert fixed.fixed_count == 1 and "volatile" not in fixed.fixed_source


def test_the_refusal_says_what_cpython_objects_to():
    text = (BOM + b"# coding: utf8\n" + BODY).decode("utf-8")
    (only,) = volfix.check_source(text, path="legacy.py").diagnostics
    assert only.code == "VF002"
    assert only.message == ("File cannot be read: the file starts with a UTF-8 byte order mark but declares "
                            "'utf8' (coding cookie on line 1)")
