"""`volfix fix --interactive`: show each fix and apply only the ones the user accepts.

Files are fixed one at a time, in path order, in this process. For each fix the engine
would apply (the safe ones; the unsafe ones too with --unsafe-fixes) the user sees its
findings, `[safe]`/`[unsafe]`, what it does and why, and its unified diff (per notebook
cell), then answers:

    y  apply it                 n  leave it (it stays a finding)
    a  apply it and every remaining fix of the run, without asking
    q  apply nothing more: the current file keeps the fixes accepted so far

A file is written (atomically, by the engine) only once every fix proposed for it has an
answer. Answers come from the terminal (one key) when stdin is one, else one per line from
stdin; the end of stdin counts as `q`. Ctrl-C writes nothing more and exits 130: files
already answered stay written, the current one is left as it was.
"""
from __future__ import annotations

import sys
from typing import Callable, List, Optional, Sequence

import click

from ..settings.config import Config
from ..model import Applicability, FileResult
from ..reporters import is_human_format
from ..reporters.text import Paint, cell_diff, location_label, unified_diff
from ..engine.review import FixProposal
from ..run.options import RunOptions

EXIT_INTERRUPTED = 130  # 128 + SIGINT, as shells report it
PROMPT = "Apply this fix? [y]es / [n]o / [a]ll remaining / [q]uit"
_ANSWERS = {"y": "y", "yes": "y", "n": "n", "no": "n", "a": "a", "all": "a", "q": "q", "quit": "q"}
_HELP = "Please answer y (yes), n (no), a (all remaining) or q (quit)."

ReadAnswer = Callable[[], Optional[str]]  # one raw answer; None at the end of the input


def check_usage(*, diff: bool, reads_stdin: bool, output_format: str) -> None:
    """Refuse what --interactive cannot do: a usage error (exit 2)."""
    if diff:
        raise click.UsageError("--interactive cannot be combined with --diff")
    if reads_stdin:
        raise click.UsageError("--interactive needs files, not stdin")
    if not is_human_format(output_format):
        raise click.UsageError(f"--interactive cannot be combined with --format {output_format}: "
                               "it is meant for a person at a terminal")


def review_paths(paths: Sequence[str], config: Config, *, color: bool, use_cache: bool = True,
                 force_exclude: bool = False) -> List[FileResult]:
    """Fix `paths` in place, asking about each fix first; the results as `volfix fix` has them."""
    from .. import api

    session = InteractiveReview(color=color, read_answer=answer_reader())
    try:
        options = RunOptions(mode="fix", unsafe_fixes=config.unsafe_fixes, review=session, jobs=1,
                             use_cache=use_cache, force_exclude=force_exclude)
        return api.check_paths(list(paths) or ["."], config=config, options=options)
    except KeyboardInterrupt:
        click.echo("", nl=True)  # end the prompt's line
        click.echo("Interrupted: nothing more was written (files answered before stay fixed).",
                   err=True)
        raise click.exceptions.Exit(EXIT_INTERRUPTED) from None


class InteractiveReview:
    """The review callback of one run: shows a proposal, reads the answer, and remembers
    `a` (accept the rest) and `q` (decline the rest) for the rest of the run."""

    def __init__(self, *, color: bool, read_answer: ReadAnswer):
        self.paint = Paint(color)
        self.color = color
        self.read_answer = read_answer
        self.rest: Optional[str] = None  # "a" or "q" once answered so

    def __call__(self, proposal: FixProposal) -> bool:
        if self.rest is not None:
            return self.rest == "a"
        click.echo(render_proposal(proposal, self.paint), nl=False, color=self.color)
        answer = self.ask()
        if answer in ("a", "q"):
            self.rest = answer
        return answer in ("y", "a")

    def ask(self) -> str:
        while True:
            click.echo(PROMPT + " ", nl=False)
            raw = self.read_answer()
            if raw is None:
                click.echo("q (end of input)")
                return "q"
            click.echo(raw if raw.isprintable() else "")  # a terminal key could be Esc, Enter...
            answer = _ANSWERS.get(raw.strip().lower())
            if answer is not None:
                return answer
            click.echo(_HELP)


def render_proposal(proposal: FixProposal, paint: Paint) -> str:
    """The findings, `[safe]`/`[unsafe]` with what the fix does and why, and its diff."""
    lines = []
    for d in proposal.diagnostics:
        where = location_label(proposal.path, d)
        lines.append(f"{paint(where, 'bold')}: {paint(d.code, 'code')} {d.message}\n")
    safe = proposal.applicability is Applicability.SAFE
    tag = paint("[safe]" if safe else "[unsafe]", "safe" if safe else "unsafe")
    lines.append(f"{tag} {proposal.message or 'Apply the fix'}\n")
    if proposal.note:
        lines.append(f"  note: {proposal.note}\n")
    if proposal.cells:
        lines.extend(cell_diff(proposal.path, cell, before, after, paint)
                     for cell, before, after in proposal.cells)
    elif proposal.cell is not None:
        lines.append(cell_diff(proposal.path, proposal.cell, proposal.before, proposal.after, paint))
    else:
        lines.append(unified_diff(proposal.before, proposal.after, proposal.path, paint))
    return "".join(lines)


def answer_reader() -> ReadAnswer:
    """One key from the terminal when stdin is one, else one line from stdin."""
    stdin = sys.stdin
    if getattr(stdin, "isatty", lambda: False)():
        return _read_key
    return lambda: _read_line(stdin)


def _read_key() -> Optional[str]:
    try:
        return click.getchar()  # Ctrl-C raises KeyboardInterrupt
    except EOFError:  # Ctrl-D
        return None


def _read_line(stream) -> Optional[str]:
    line = stream.readline()
    if not line:
        return None
    return line.rstrip("\r\n")
