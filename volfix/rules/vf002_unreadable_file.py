"""VF002: a file that cannot be read or decoded (reported by the engine)."""
from ..files import prefilter
from .base import Rule


class UnreadableFile(Rule):
    """
    ## What it does
    Reports a file that cannot be read or decoded: permissions, a broken symlink, bytes that
    are invalid in the file's declared encoding (PEP 263 cookie or BOM), or a notebook that is
    not valid JSON or has no nbformat version. A folder the walk cannot list (permissions)
    is reported the same way, at its own path.

    ## Why is this bad?
    Nothing in the file (or the folder) can be checked. volfix never writes such a file.
    volfix reads an encoding header as CPython does: a UTF-8 byte order mark followed by a
    `coding:` line naming anything but `utf-8` (even `utf8`) is refused while decoding
    (CPython: "encoding problem: utf8 with BOM"), so it is VF002, for the file's bytes and
    for an editor's text that kept the mark alike; a file that decodes and then does not
    parse (a second byte order mark) is VF001.

    ## Example
    A file declaring `# -*- coding: utf-8 -*-` that contains Latin-1 bytes.

    ## Use instead
    Fix the declared encoding (or the bytes) so that Python itself can read the file.

    ## Fix safety
    No fix is offered.
    """

    CODE = "VF002"
    MESSAGE = "File cannot be read"
    NEEDS = prefilter.TOKENLESS
    NAMES: frozenset = frozenset()  # reported before or after the analysis, not by it
