"""The `volfix` command line: flags -> `Options` -> Config and `RunOptions` -> api -> reporter
-> exit code.

Only this module and `output` (with the reporters it calls) print; `stdin` handles `-`,
`progress` the progress bar, `volfix.settings.nearest` which settings apply to which file.
Heavy modules (libcst through the engine, rich) are imported inside functions so
`volfix --version` stays fast.
"""
from __future__ import annotations

import atexit
import dataclasses
import os
import sys
import time
from typing import Callable, Iterable, List, Optional, Tuple

import click

from .._version import __version__
from ..settings.config import Config, VolfixConfigError
from ..errors import Terminated, terminate_as_interrupt
from ..model import FileResult
from ..settings.nearest import ConfigResolver
from ..reporters import FORMATS, is_human_format
from ..run.options import RunOptions
from .options import STDIN, Options

EXIT_OK = 0
EXIT_FINDINGS = 1
EXIT_ERROR = 2
EXIT_INTERRUPTED = 130  # 128 + SIGINT
EXIT_TERMINATED = 143  # 128 + SIGTERM


class ConfigError(click.ClickException):
    """A caller mistake (bad selector, malformed [tool.volfix]): one `Error: ...` line, exit 2."""

    exit_code = EXIT_ERROR


# ---------------------------------------------------------------------------- options


def _split_codes(ctx: click.Context, param: click.Parameter, values: Iterable[str]) -> Tuple[str, ...]:
    """`--select VF1,VF2 --select VF301` -> ("VF1", "VF2", "VF301")."""
    return tuple(part.strip() for value in values for part in value.split(",") if part.strip())


_COMMON_OPTIONS = [
    click.argument("paths", nargs=-1, type=click.Path()),
    click.option("--select", multiple=True, callback=_split_codes, metavar="CODES",
                 help="Rules to run (codes or prefixes, comma-separated); replaces the "
                      "configured selection."),
    click.option("--ignore", multiple=True, callback=_split_codes, metavar="CODES",
                 help="Rules to skip, added to the configured ones (with --select: only these)."),
    click.option("--extend-select", multiple=True, callback=_split_codes, metavar="CODES",
                 help="Rules to run in addition to the selection."),
    click.option("--config", "config_file", type=click.Path(dir_okay=False), metavar="FILE",
                 help="Read settings from FILE instead of the nearest pyproject.toml/volfix.toml."),
    click.option("--output-format", "--format", "output_format", type=click.Choice(FORMATS), default="full",
                 show_default=True, help="Output format for the findings (`--format` is the same option)."),
    click.option("--output-file", "-o", type=click.Path(dir_okay=False), metavar="FILE",
                 help="Write the findings to FILE instead of stdout."),
    click.option("--statistics", is_flag=True, help="Show counts per rule instead of each finding."),
    click.option("--exit-zero", is_flag=True, help="Exit 0 even when findings remain."),
    click.option("--jobs", "-j", type=click.IntRange(min=1), default=None,
                 help="Number of worker processes (default: one per core)."),
    click.option("--no-cache", is_flag=True, help="Neither read nor write the result cache."),
    click.option("--quiet", "-q", is_flag=True, help="Print the findings and nothing else."),
    click.option("--verbose", "-v", is_flag=True, help="Also print the configuration and timing."),
    click.option("--color", type=click.Choice(["auto", "always", "never"]), default="auto",
                 show_default=True, help="Colour the output (NO_COLOR turns `auto` off)."),
    click.option("--diff", is_flag=True,
                 help="Print the fixes as a unified diff and write nothing; exit 1 if any."),
    click.option("--show-fixes", is_flag=True,
                 help="List the fixes applied (fix) or available (check) per file."),
    click.option("--report", type=click.Path(dir_okay=False), metavar="FILE",
                 help="Write a Markdown migration report to FILE."),
    click.option("--baseline", type=click.Path(dir_okay=False), metavar="FILE",
                 help="Report only findings that are not in this baseline file."),
    click.option("--write-baseline", type=click.Path(dir_okay=False), metavar="FILE",
                 help="Record the current findings as the baseline in FILE and exit 0."),
    click.option("--stdin-filename", metavar="PATH",
                 help="The file name to use for text read from stdin (config, display)."),
    click.option("--force-exclude", is_flag=True,
                 help="Apply exclusions to paths named on the command line too."),
    click.option("--unsafe-fixes/--no-unsafe-fixes", default=None,
                 help="Treat unsafe fixes as applicable (overrides `unsafe-fixes`)."),
    click.option("--legacy-semantics/--no-legacy-semantics", default=None,
                 help="Treat every `Variable(x)` argument as a plain tensor, as genuine 0.3 code "
                      "guarantees, which makes VF110/VF111 fixes safe (overrides "
                      "`legacy-semantics`)."),
    click.option("--shard", callback=lambda ctx, param, value: _parse_shard(value), metavar="K/N",
                 help="Check only the K-th of N parts of the projects found (whole projects, the "
                      "same split on every machine); `volfix merge` joins the parts' json-lines."),
    click.option("--debug", is_flag=True, help="Show tracebacks for internal errors."),
]


def _parse_shard(value: Optional[str]) -> Optional[Tuple[int, int]]:
    if value is None:
        return None
    from ..run.shards import parse_shard

    try:
        return parse_shard(value)
    except ValueError as error:
        raise click.BadParameter(str(error)) from None


def _common_options(func: Callable) -> Callable:
    for decorator in reversed(_COMMON_OPTIONS):
        func = decorator(func)
    return func


@click.group(context_settings={"help_option_names": ["-h", "--help"]})
@click.version_option(__version__, "--version", "-V", prog_name="volfix",
                      message="%(prog)s %(version)s")
def main() -> None:
    """Find and fix PyTorch code written for the `volatile` era (PyTorch <= 0.3)."""


def entry() -> None:
    """The `volfix` command (console script and `python -m volfix`): `main`, then the process
    ends without tearing the interpreter down. Freeing every module and object one by one
    took 11 ms after a check of the installed torch package (3% of the run, 2026-11-24), and
    nothing needs it: exit handlers run and the output is flushed first."""
    try:
        main(prog_name="volfix")
        code = 0
    except SystemExit as stop:
        code = stop.code
    if code is None:
        code = 0
    elif not isinstance(code, int):  # `sys.exit("message")`
        print(code, file=sys.stderr)
        code = 1
    atexit._run_exitfuncs()
    for stream in (sys.stdout, sys.stderr):
        try:
            if stream is not None and not stream.closed:  # the server closes stdout on exit
                stream.flush()
        except OSError:  # a closed pipe (`volfix check | head`): 120, as Python exits then
            code = code or 120
    os._exit(code)


@main.command()
@_common_options
@click.option("--fix/--no-fix", "apply_fixes", default=False,
              help="Apply the fixes, as `volfix fix` does (ruff's `check --fix`).")
@click.option("--exit-non-zero-on-fix", is_flag=True,
              help="With --fix: exit 1 when a file was changed, even if no finding remains.")
def check(**kwargs) -> None:
    """Report legacy autograd code; exit 1 if any finding remains.

    PATH defaults to `.`; `-` reads stdin. `--fix` applies the fixes (as `volfix fix`).
    """
    command = "fix" if kwargs.pop("apply_fixes") else "check"
    _exit(Options(command=command, paths=kwargs.pop("paths"), config=kwargs.pop("config_file"),
                  **kwargs))


@main.command()
@_common_options
@click.option("--exit-non-zero-on-fix", is_flag=True,
              help="Exit 1 when a file was changed, even if no finding remains.")
@click.option("--interactive", "-i", is_flag=True,
              help="Show each fix with its diff and ask before applying it.")
def fix(**kwargs) -> None:
    """Apply the safe fixes in place (and the unsafe ones with --unsafe-fixes).

    PATH defaults to `.`; `-` reads stdin and writes the fixed source to stdout.
    """
    _exit(Options(command="fix", paths=kwargs.pop("paths"), config=kwargs.pop("config_file"),
                  **kwargs))


def _exit(opts: Options) -> None:
    code = _guarded(opts)
    if code:
        sys.exit(code)


def _guarded(opts: Options) -> int:
    terminate_as_interrupt()
    try:
        return run(opts)
    except VolfixConfigError as error:
        raise ConfigError(str(error)) from error
    except KeyboardInterrupt as stop:
        # Ctrl-C, SIGTERM (or a CI cancel): the run stopped; writes under way were completed,
        # no other file was touched. 128 + SIGINT (or SIGTERM), as a shell reports it.
        sys.stdout.flush()
        click.echo("Interrupted: volfix stopped; every file it wrote is complete, "
                   "the others are unchanged.", err=True)
        return EXIT_TERMINATED if isinstance(stop, Terminated) else EXIT_INTERRUPTED
    except (click.ClickException, click.exceptions.Exit):
        raise
    except Exception as error:  # noqa: BLE001 - the CLI boundary: anything else is our bug
        # Without this, Python would exit 1 with a traceback, which reads as "findings remain".
        if opts.debug:
            import traceback

            click.echo(traceback.format_exc(), err=True, nl=False)
        detail = f"{type(error).__name__}: {error}" if str(error) else type(error).__name__
        click.echo(f"error: internal error: {detail} "
                   "(this is a volfix bug; please report it; --debug shows the traceback)",
                   err=True)
        return EXIT_ERROR


# ---------------------------------------------------------------------------- the run


def run(opts: Options) -> int:
    """Check or fix what `opts` names, print the results and return the exit code."""
    from . import output

    _validate(opts)
    output.prepare_outputs(opts)
    started = time.perf_counter()
    configs = build_configs(opts)
    config = configs.base
    root = repo_root(os.getcwd())
    stdin_out = None
    not_parsed = 0
    if opts.reads_stdin:
        results, stdin_out = _run_stdin(opts, configs)
    elif opts.interactive:
        from .interactive import review_paths

        results = review_paths(opts.paths, config, color=output.use_color(opts.color, sys.stdout),
                               use_cache=not opts.no_cache, force_exclude=opts.force_exclude)
    else:
        from ..run.runner import RunStats

        stats = RunStats()
        results = _run_paths(opts, configs, stats=stats)
        not_parsed = stats.discovered - stats.candidates
    elapsed = time.perf_counter() - started

    ctx = output.report_context(opts, root, config.unsafe_fixes, config.legacy_semantics)
    if not_parsed:
        ctx = dataclasses.replace(ctx, not_parsed=not_parsed)
    if opts.report:
        output.write_report(opts.report, report_results(opts, configs, results, stdin_out), ctx)
    if opts.write_baseline:
        return EXIT_OK if output.write_baseline(opts, results, root) else EXIT_ERROR
    if opts.baseline:
        from ..settings.baseline import load_baseline

        before = sum(len(r.diagnostics) for r in results)
        results = load_baseline(opts.baseline).filter(results)
        hidden = before - sum(len(r.diagnostics) for r in results)
        ctx = dataclasses.replace(ctx, baseline_hidden=hidden, baseline=opts.baseline)

    stdin_fix = opts.reads_stdin and opts.mode == "fix"
    if stdin_fix:
        from .stdin import write_stdout

        write_stdout(stdin_out)
    output.emit(opts, results, ctx, stdin_fix=stdin_fix)
    if opts.verbose and not opts.quiet:
        click.echo(f"Analysed {len(results)} candidate file{'s' if len(results) != 1 else ''} "
                   f"in {elapsed:.2f}s.", err=True)
    return exit_code(results, opts)


def _validate(opts: Options) -> None:
    if STDIN in opts.paths and len(opts.paths) > 1:
        raise click.UsageError("`-` (stdin) cannot be combined with other paths")
    if opts.reads_stdin and opts.write_baseline:
        raise click.UsageError("--write-baseline needs files, not stdin")
    if opts.exit_non_zero_on_fix and opts.command == "check":
        raise click.UsageError("--exit-non-zero-on-fix needs --fix (or `volfix fix`): `check` changes nothing")
    if opts.diff and not is_human_format(opts.output_format):
        # ruff prints the diff and ignores the format; a machine reading JSON would choke on it.
        raise click.UsageError(
            f"--diff prints a unified diff and cannot be combined with --format {opts.output_format}"
            + ("; each fix's edits are in the findings (`fix.edits`), or drop --diff"
               if opts.output_format in EDIT_FORMATS else "; drop one of them"))
    if opts.shard is not None and (opts.reads_stdin or opts.interactive):
        raise click.UsageError("--shard splits the files found under PATHs: not with stdin or --interactive")
    if opts.quiet and opts.verbose:
        raise click.UsageError("--quiet and --verbose cannot be used together")
    if opts.interactive:
        from .interactive import check_usage

        check_usage(diff=opts.diff, reads_stdin=opts.reads_stdin, output_format=opts.output_format)


def report_results(opts: Options, configs: ConfigResolver, results: List[FileResult],
                   stdin_data: Optional[bytes]) -> List[FileResult]:
    """--report after `check` says what `volfix fix` would change: that needs the fixes
    computed, so a diff pass (nothing written) runs for it."""
    if opts.mode != "check":
        return results
    if opts.reads_stdin:
        if stdin_data is None or results[0].source is None:
            return results  # excluded (--force-exclude) or unreadable
        from .stdin import process_stdin

        name = opts.stdin_filename
        config = configs.for_file(name, name) if name else configs.base
        result, _ = process_stdin(stdin_data, name=name, config=config, mode="diff", with_fixes=True)
        return [dataclasses.replace(result, path=results[0].path)]
    return _run_paths(dataclasses.replace(opts, diff=True, quiet=True), configs)


def repo_root(start: str) -> str:
    """The nearest directory at or above `start` that holds `.git`, else `start`."""
    current = os.path.abspath(start)
    while True:
        if os.path.exists(os.path.join(current, ".git")):
            return current
        parent = os.path.dirname(current)
        if parent == current:
            return os.path.abspath(start)
        current = parent


# ---------------------------------------------------------------------------- config


def build_configs(opts: Options) -> ConfigResolver:
    """The run's configuration and, unless `--config` names one for every file, each
    directory's nearest one; the command-line flags are laid over each of them."""
    from ..settings.config_file import load_config, merge_cli

    def overlay(config: Config) -> Config:
        return merge_cli(config, select=opts.select or None, ignore=opts.ignore or None,
                         extend_select=opts.extend_select or None,
                         unsafe_fixes=True if opts.unsafe_fixes else None,
                         no_unsafe_fixes=True if opts.unsafe_fixes is False else None,
                         legacy_semantics=True if opts.legacy_semantics else None,
                         no_legacy_semantics=True if opts.legacy_semantics is False else None)

    config = overlay(load_config(opts.config, _config_start_dir(opts)))
    config.enabled_codes()  # an unknown selector raises VolfixConfigError here, before any work
    if opts.verbose and not opts.quiet:
        origin = config.source or "defaults (no configuration file found)"
        nested = "" if opts.config else " (nearer configuration files apply below it)"
        click.echo(f"volfix {__version__}: settings from {origin}{nested}; "
                   f"{len(config.enabled_codes())} rules enabled", err=True)
    return ConfigResolver(config, overlay=overlay, fixed=opts.config is not None)


def _config_start_dir(opts: Options) -> str:
    """Where to look for the run's configuration: the stdin file's or the named paths'
    common folder."""
    if opts.reads_stdin:
        named = [opts.stdin_filename] if opts.stdin_filename else []
    else:
        named = list(opts.paths)
    folders = []
    for path in named:
        absolute = os.path.abspath(path)
        folders.append(absolute if os.path.isdir(absolute) else os.path.dirname(absolute))
    if not folders:
        return os.getcwd()
    try:
        return os.path.commonpath(folders)
    except ValueError:  # different drives on Windows
        return os.getcwd()


# ---------------------------------------------------------------------------- running


def _run_paths(opts: Options, configs: ConfigResolver, stats=None) -> List[FileResult]:
    """The results of the paths; `stats` (a runner.RunStats) is filled with what the run did."""
    from .. import api
    from .progress import run_with_progress

    def work(progress) -> List[FileResult]:
        config = configs.base
        options = RunOptions(mode=opts.mode, unsafe_fixes=config.unsafe_fixes, with_fixes=wants_edits(opts),
                             jobs=opts.jobs, use_cache=not opts.no_cache, force_exclude=opts.force_exclude,
                             shard=opts.shard, progress=progress)
        return api.check_paths(list(opts.paths) or ["."], config=config, options=options, configs=configs,
                               stats=stats)

    if opts.quiet:
        return work(lambda done, total: None)
    return run_with_progress(work, label=f"volfix {opts.command}")


def wants_edits(opts: Options) -> bool:
    """Formats that carry each fix's edits (ruff's `fix.edits`, SARIF `fixes`)."""
    return opts.output_format in EDIT_FORMATS and not opts.statistics


EDIT_FORMATS = ("json", "json-lines", "sarif")


def _run_stdin(opts: Options, configs: ConfigResolver) -> Tuple[List[FileResult], bytes]:
    """The one result of stdin, and the bytes `volfix fix -` writes to stdout."""
    from .stdin import DEFAULT_NAME, StdinUnavailable, process_stdin, read_stdin

    try:
        data = read_stdin()
    except StdinUnavailable as exc:
        raise click.UsageError(str(exc)) from None
    name = opts.stdin_filename
    if opts.force_exclude and name and _is_excluded(name, configs):
        # As ruff: an excluded --stdin-filename is not checked, and `fix` passes it through.
        return [FileResult(name)], data
    config = configs.for_file(name, name) if name else configs.base
    with_fixes = wants_edits(opts) or opts.show_fixes
    result, out = process_stdin(data, name=name, config=config, mode=opts.mode,
                                with_fixes=with_fixes)
    return [result if name else dataclasses.replace(result, path=DEFAULT_NAME)], out


def _is_excluded(path: str, configs: ConfigResolver) -> bool:
    from ..files import discovery

    config = configs.base
    found = discovery.discover([path], exclude=config.exclude + config.extend_exclude,
                               respect_gitignore=config.respect_gitignore, force_exclude=True,
                               root=discovery.project_root(config.source),
                               excluders=None if configs.fixed else configs.excluder_for)
    return not found


# ---------------------------------------------------------------------------- exit code


def exit_code(results: List[FileResult], opts: Options) -> int:
    """2 if volfix failed on a file; 1 if findings remain, --diff would change something, or
    --exit-non-zero-on-fix and something changed (0 with --exit-zero); else 0."""
    if any(r.error for r in results):
        return EXIT_ERROR
    if opts.mode == "diff":
        failed = any(r.changed or (r.fixed_source is not None and r.source is not None
                                   and r.fixed_source != r.source) for r in results)
    else:
        failed = any(r.diagnostics for r in results)
        if opts.exit_non_zero_on_fix:
            failed = failed or any(r.changed for r in results)
    if failed and not opts.exit_zero:
        return EXIT_FINDINGS
    return EXIT_OK


# ---------------------------------------------------------------------------- volfix merge


@main.command("merge")
@click.argument("files", nargs=-1, required=True, type=click.Path(exists=True, dir_okay=False))
@click.option("--format", "output_format", type=click.Choice(FORMATS), default="full", show_default=True,
              help="Output format for the findings.")
@click.option("--output-file", "-o", type=click.Path(dir_okay=False), metavar="FILE",
              help="Write the findings to FILE instead of stdout.")
@click.option("--statistics", is_flag=True, help="Show counts per rule instead of each finding.")
@click.option("--exit-zero", is_flag=True, help="Exit 0 even when findings remain.")
@click.option("--unsafe-fixes/--no-unsafe-fixes", default=False,
              help="Count unsafe fixes as applicable in the summary.")
@click.option("--quiet", "-q", is_flag=True, help="Print the findings and nothing else.")
@click.option("--color", type=click.Choice(["auto", "always", "never"]), default="auto", show_default=True,
              help="Colour the output (NO_COLOR turns `auto` off).")
def merge_command(files: Tuple[str, ...], **kwargs) -> None:
    """Join the `--format json-lines` outputs of `volfix check --shard K/N` runs into one
    report and one summary, as one run over every part would print them; exit 1 if any
    finding is in them.
    """
    from . import output
    from ..run.shards import read_findings

    opts = Options(command="check", paths=(), select=(), ignore=(), extend_select=(), config=None, jobs=None,
                   no_cache=True, verbose=False, diff=False, show_fixes=False, report=None, baseline=None,
                   write_baseline=None, stdin_filename=None, force_exclude=False, debug=False, **kwargs)
    try:
        results = read_findings(files)
    except (OSError, ValueError) as error:
        raise ConfigError(str(error)) from error
    ctx = output.report_context(opts, repo_root(os.getcwd()), bool(opts.unsafe_fixes))
    output.emit(opts, results, ctx, stdin_fix=False)
    code = exit_code(results, opts)
    if code:
        sys.exit(code)


# ---------------------------------------------------------------------------- volfix rule


@main.command("rule")
@click.argument("code", required=False)
@click.option("--output-format", "--format", "output_format", type=click.Choice(["text", "json"]),
              default="text", show_default=True)
def rule_command(code: Optional[str], output_format: str) -> None:
    """List every rule, or explain the rule CODE.

    `volfix rule` prints a table; `volfix rule VF101` prints that rule's documentation.
    """
    from ..rules.registry import rules
    from .rules import print_rule, render_rule_table

    known = rules()
    if code is None:
        click.echo(render_rule_table(known, output_format), nl=False)
        return
    rule = known.get(code.strip().upper())
    if rule is None:
        raise ConfigError(f"unknown rule code `{code}`; `volfix rule` lists them")
    print_rule(rule, output_format)




# ---------------------------------------------------------------------------- volfix verify


@main.command("verify", context_settings={"ignore_unknown_options": True,
                                          "allow_interspersed_args": False})
@click.option("--against", metavar="REV|PATH",
              help="The original: a git revision (default HEAD) or a copy of the project.")
@click.option("--timeout", type=float, metavar="S", help="Stop each run after S seconds.")
@click.option("--format", "output_format", type=click.Choice(["text", "json"]), default="text",
              show_default=True)
@click.option("--fix", is_flag=True,
              help="Rewrite `.data[0]` reads the original run made on one-element values to "
                   "`.item()`, then run the migrated program again.")
@click.argument("command", nargs=-1, type=click.UNPROCESSED, required=True)
def verify_command(against: Optional[str], timeout: Optional[float], output_format: str, fix: bool,
                   command: Tuple[str, ...]) -> None:
    """Run a program before and after the migration and compare what autograd did.

    \b
      volfix verify [OPTIONS] -- python eval.py ARGS...
      volfix verify [OPTIONS] eval.py ARGS...

    The original runs with PyTorch 0.3's meaning of volatile (volfix.legacy), the working tree
    with the installed torch. Exit 0 when graph presence, training and exit status agree and
    no `.data[0]` the original made on a one-element value is left (`--fix` rewrites those).
    """
    from ..verify import VerifyError, command_line

    try:
        text, code = command_line(list(command), against, timeout, output_format, fix)
    except VerifyError as error:
        raise ConfigError(str(error)) from None
    click.echo(text, nl=False)
    sys.exit(code)


# ---------------------------------------------------------------------------- volfix server


@main.command("server")
def server_command() -> None:
    """Run the language server: LSP over stdin/stdout, for editors.

    Needs the `lsp` extra (pygls): pip install "pygls>=2,<3".
    """
    import importlib.util

    missing = next((m for m in ("pygls", "lsprotocol") if importlib.util.find_spec(m) is None), None)
    if missing is not None:
        raise ConfigError(f'`volfix server` needs {missing}; install it with: pip install "pygls>=2,<3"')
    from ..lsp.server import serve

    serve()


if __name__ == "__main__":  # pragma: no cover
    entry()
