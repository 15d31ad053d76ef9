"""The text pipeline (SPEC §3): parse -> detect -> plan -> render -> apply -> verify.

    check_text(source, path=..., config=...)                  -> FileResult
    fix_text(source, path=..., config=..., unsafe_fixes=...)  -> FileResult

It never prints and never touches files (`volfix.run.fileproc` reads and writes them; notebooks are
handled by `volfix.notebook`, which uses this package on their joined cells). One bad text
becomes a VF001/VF002 diagnostic, not an exception.
"""
from __future__ import annotations

import codecs
import fnmatch
import os
import re
from dataclasses import replace
from typing import Optional, Union

from ..settings.config import Config
from ..syntax.deep import call_deep
from ..model import FileResult
from .analyse import Options, analyse, may_have_findings, suppression_only
from .fixing import Review, fix_loop, with_fix_edits

__all__ = ["check_text", "fix_text", "options_for", "per_file_config"]


def options_for(config: Config, *, links=None, with_fixes: bool = False) -> Options:
    return Options(config.enabled_codes(), legacy_semantics=config.legacy_semantics,
                   no_grad_style=config.no_grad_style, links=links, with_fixes=with_fixes)


def check_text(source: Union[str, bytes], *, path: str, config: Config, with_fixes: bool = False,
               links=None, fixes_for=None, doc=None) -> FileResult:
    """`doc`: the text's `Document` as `parse_document` gives it, parsed earlier in this process
    (the project index's parse of a caller, `volfix.project.early`): not parsed again."""
    return call_deep(lambda: _check_text(source, path=path, config=config, with_fixes=with_fixes, links=links,
                                         fixes_for=fixes_for, doc=doc))


def _check_text(source: Union[str, bytes], *, path: str, config: Config, with_fixes: bool, links,
                fixes_for=None, doc=None) -> FileResult:
    text, error = decode(source)
    if error is not None:
        return FileResult(path=path, diagnostics=(error,), source=None)
    config = per_file_config(config, path)
    options = options_for(config, links=links, with_fixes=with_fixes)
    if not may_have_findings(text, options.enabled, links) and not ("VF010" in options.enabled and suppression_only(text)):
        return FileResult(path=path, source=text)
    analysis = analyse(text, options, doc=doc)
    diagnostics = analysis.diagnostics
    if with_fixes:
        keep = links is not None and links.star_exported
        diagnostics = with_fix_edits(text, analysis, options, keep_variable_import=keep, wanted=fixes_for)
    return FileResult(path=path, diagnostics=tuple(diagnostics), source=text, undecided=analysis.undecided)


def fix_text(source: Union[str, bytes], *, path: str, config: Config, unsafe_fixes: bool = False,
             links=None, review: Optional[Review] = None) -> FileResult:
    return call_deep(lambda: _fix_text(source, path=path, config=config, unsafe_fixes=unsafe_fixes,
                                       links=links, review=review))


def _fix_text(source: Union[str, bytes], *, path: str, config: Config, unsafe_fixes: bool, links,
              review: Optional[Review]) -> FileResult:
    text, error = decode(source)
    if error is not None:
        return FileResult(path=path, diagnostics=(error,), source=None)
    config = per_file_config(config, path)
    options = options_for(config, links=links)
    if not may_have_findings(text, options.enabled, links) and not ("VF010" in options.enabled and suppression_only(text)):
        return FileResult(path=path, source=text, fixed_source=text)
    keep = links is not None and links.star_exported
    fixed, applied, problems = fix_loop(text, options, unsafe=unsafe_fixes, keep_variable_import=keep,
                                        review=review, path=path)
    final = analyse(fixed, options)
    diagnostics = list(final.diagnostics) + problems
    diagnostics.sort(key=lambda d: (d.cell or 0, d.location, d.code))
    return FileResult(path=path, diagnostics=tuple(diagnostics), source=text, fixed_source=fixed,
                      fixed_count=len(applied), changed=fixed != text,
                      applied_codes=tuple(d.code for d in applied), applied=tuple(applied),
                      undecided=final.undecided)


def decode(source: Union[str, bytes]):
    from ..model import Diagnostic, Location

    from ..files import sourcefile

    if isinstance(source, str):
        if not source.startswith("\ufeff"):
            return source, None
        # Text decoded with its byte order mark kept (an editor's buffer): its header is read as
        # the file's bytes would be, so a mark with a `coding:` other than utf-8 is refused as
        # CPython refuses the file ("encoding problem: utf8 with BOM"), not fixed.
        head = _TWO_LINES.match(source, 1).group(0)
        try:
            sourcefile.decode_source(codecs.BOM_UTF8 + head.encode("utf-8", "surrogatepass"), max_bytes=None)
        except sourcefile.SourceDecodeError as exc:
            return "", Diagnostic(code="VF002", message=f"File cannot be read: {exc}", location=Location(1, 1),
                                  end_location=Location(1, 1))
        return source[1:], None

    try:
        return sourcefile.decode_source(source).text, None
    except sourcefile.SourceDecodeError as exc:
        return "", Diagnostic(code="VF002", message=f"File cannot be read: {exc}", location=Location(1, 1),
                              end_location=Location(1, 1))


_TWO_LINES = re.compile(r"[^\r\n]*(?:\r\n|\r|\n)?[^\r\n]*(?:\r\n|\r|\n)?")


def per_file_config(config: Config, path: str) -> Config:
    if not config.per_file_ignores:
        return config
    norm = path.replace(os.sep, "/")
    extra = []
    for pattern, codes in config.per_file_ignores:
        if fnmatch.fnmatch(norm, pattern) or fnmatch.fnmatch(os.path.basename(norm), pattern) \
                or fnmatch.fnmatch(norm, f"*/{pattern}"):
            extra.extend(codes)
    if not extra:
        return config
    return replace(config, ignore=tuple(config.ignore) + tuple(extra), per_file_ignores=())
