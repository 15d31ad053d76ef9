"""Where the CLI's text goes: findings to stdout (or `--output-file`; stderr when stdout
carries the fixed source of `volfix fix -`), errors and the summary to stderr, the Markdown
report and the GitHub step summary to their files. The reporters format; this module only
chooses streams, colour and width.
"""
from __future__ import annotations

import dataclasses
import os
import sys
from typing import TYPE_CHECKING, List, Optional

import click

from ..model import FileResult
from ..reporters import get_renderer, is_human_format
from ..reporters.base import ReportContext

if TYPE_CHECKING:  # pragma: no cover
    from .options import Options


class OutputFileError(click.ClickException):
    """A file the run was asked to write (`--output-file`, `--report`, `--write-baseline`)
    cannot be: a usage problem, exit 2, not "an internal error"."""

    exit_code = 2


def prepare_outputs(opts: "Options") -> None:
    """Before any file is read or written: the folders of the output files exist (created, as
    ruff does for `--output-file`), each can be written, and `--baseline` can be read.
    Otherwise the run stops here, so a fix run never writes its fixes and then loses its
    report."""
    for option, path in (("--output-file", opts.output_file), ("--report", opts.report),
                         ("--write-baseline", opts.write_baseline)):
        if not path:
            continue
        folder = os.path.dirname(os.path.abspath(path))
        try:
            os.makedirs(folder, exist_ok=True)
        except OSError as exc:
            raise OutputFileError(f"{option} {path}: cannot create the folder {folder}: "
                                  f"{exc.strerror or exc}") from None
        if os.path.isdir(path):
            raise OutputFileError(f"{option} {path}: is a folder")
        if not os.access(folder, os.W_OK) or (os.path.exists(path) and not os.access(path, os.W_OK)):
            raise OutputFileError(f"{option} {path}: not writable")
    if opts.baseline:
        from ..settings.baseline import load_baseline

        load_baseline(opts.baseline)  # raises VolfixConfigError naming the file


def unicode_paths(results: List[FileResult]) -> List[FileResult]:
    """`results` with file names that are not UTF-8 (bytes the file system holds, kept as
    lone surrogates) spelled with U+FFFD: JSON, SARIF, GitHub annotations, JUnit and the
    Markdown report must be valid UTF-8. The text formats print the bytes as they are, as
    `ls` does."""
    out = []
    for result in results:
        try:
            result.path.encode("utf-8")
        except UnicodeEncodeError:
            raw = result.path.encode("utf-8", "surrogateescape") if _escaped_only(result.path) else \
                result.path.encode("utf-8", "replace")
            result = dataclasses.replace(result, path=raw.decode("utf-8", "replace"))
        out.append(result)
    return out


def _escaped_only(path: str) -> bool:
    return all(not "\ud800" <= ch <= "\udfff" or "\udc80" <= ch <= "\udcff" for ch in path)


def _write_text(path: str, text: str, option: str) -> None:
    try:
        # surrogateescape: a file name's undecodable bytes go out as they came in (stdout too)
        with open(path, "w", encoding="utf-8", errors="surrogateescape", newline="") as handle:
            handle.write(text)
    except OSError as exc:
        raise OutputFileError(f"{option} {path}: cannot be written: {exc.strerror or exc}") from None


def use_color(choice: str, stream) -> bool:
    """--color always/never win; `auto` colours a terminal unless NO_COLOR is set."""
    if choice == "always":
        return True
    if choice == "never" or stream is None or os.environ.get("NO_COLOR"):
        return False
    isatty = getattr(stream, "isatty", None)
    return bool(isatty and isatty())


def terminal_width(stream) -> Optional[int]:
    if stream is None or not getattr(stream, "isatty", lambda: False)():
        return None
    import shutil

    return shutil.get_terminal_size().columns


def report_context(opts: "Options", root: str, unsafe_fixes: bool, legacy_semantics: bool = False) -> ReportContext:
    """What the reporters need to format for the findings' stream."""
    stream = None if opts.output_file else sys.stdout
    return ReportContext(root=root, mode=opts.mode, unsafe_fixes=unsafe_fixes, legacy_semantics=legacy_semantics,
                         show_fixes=opts.show_fixes, color=use_color(opts.color, stream),
                         width=terminal_width(stream))


def emit(opts: "Options", results: List[FileResult], ctx: ReportContext, *, stdin_fix: bool) -> None:
    """Findings to stdout (stderr when stdout carries fixed source), the rest to stderr."""
    from ..reporters import text

    err_ctx = dataclasses.replace(ctx, color=use_color(opts.color, sys.stderr),
                                  width=terminal_width(sys.stderr))
    body_ctx = err_ctx if stdin_fix and not opts.output_file else ctx
    shown = results if is_human_format(opts.output_format) else unicode_paths(results)
    write(_render_body(opts, shown, body_ctx), opts.output_file, err=stdin_fix,
          color=body_ctx.color)

    errors = text.render_errors(results, debug=opts.debug)
    if errors:
        write(errors, None, err=True, color=False)
    if not opts.quiet and (is_human_format(opts.output_format) or opts.output_file):
        write(text.render_summary(results, err_ctx), None, err=True, color=err_ctx.color)
    if opts.output_format == "github":
        _append_step_summary(results, ctx)


def _render_body(opts: "Options", results: List[FileResult], ctx: ReportContext) -> str:
    from ..reporters import json_, text

    if opts.mode == "diff":
        return text.render_diff(results, ctx)
    if opts.statistics:
        if opts.output_format in ("json", "json-lines"):
            return json_.render_statistics(results, ctx)
        return text.render_statistics(results, ctx)
    body = get_renderer(opts.output_format)(results, ctx)
    if opts.show_fixes and is_human_format(opts.output_format):
        body += text.render_fixes(results, ctx)
    return body


def write(content: str, path: Optional[str], *, err: bool, color: bool) -> None:
    """`content` to the file `path`, else to stderr (`err`) or stdout."""
    if path is not None:
        _write_text(path, content, "--output-file")
        return
    if content:
        click.echo(content, nl=False, err=err, color=color)


def _append_step_summary(results: List[FileResult], ctx: ReportContext) -> None:
    target = os.environ.get("GITHUB_STEP_SUMMARY")
    if not target:
        return
    from ..reporters import github

    with open(target, "a", encoding="utf-8") as handle:
        handle.write(github.step_summary(results, ctx))


def write_report(path: str, results: List[FileResult], ctx: ReportContext) -> None:
    """`--report FILE`: the Markdown migration report."""
    from ..reporters.migration import render_report

    text = render_report(unicode_paths(results), dataclasses.replace(ctx, color=False, width=None),
                         link_base=os.path.dirname(os.path.abspath(path)))
    _write_text(path, text, "--report")


def write_baseline(opts: "Options", results: List[FileResult], root: str) -> bool:
    """`--write-baseline FILE`; False when volfix failed on a file (exit 2)."""
    from ..settings.baseline import write_baseline as write_entries
    from ..reporters.text import render_errors

    try:
        write_entries(opts.write_baseline, results, root)
    except OSError as exc:
        raise OutputFileError(f"--write-baseline {opts.write_baseline}: cannot be written: "
                              f"{exc.strerror or exc}") from None
    errors = render_errors(results, debug=opts.debug)
    if errors:
        write(errors, None, err=True, color=False)
    if not opts.quiet:
        count = sum(len(r.diagnostics) for r in results)
        click.echo(f"Wrote {count} finding{'s' if count != 1 else ''} to the baseline "
                   f"{opts.write_baseline}.", err=True)
    return not any(r.error for r in results)
