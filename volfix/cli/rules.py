"""`volfix rule`: the table of every rule, and one rule's documentation (text, Markdown on a
colour terminal, or JSON)."""
from __future__ import annotations

import sys

import click


def print_rule(rule, output_format: str) -> None:
    """`volfix rule CODE`: JSON, Markdown rendered on a colour terminal, or the Markdown text."""
    if output_format == "json":
        click.echo(_json_dumps(_rule_dict(rule)), nl=False)
    elif _stdout_is_coloured_terminal():
        _print_markdown(render_rule(rule))
    else:
        click.echo(render_rule(rule), nl=False)


def _fix_label(rule) -> str:
    return rule.FIX.value if rule.FIX is not None else "none"


def _rule_dict(rule) -> dict:
    return {"code": rule.CODE, "name": rule.name(), "summary": rule.summary(),
            "fix": _fix_label(rule), "message": rule.MESSAGE, "url": rule.url(),
            "explanation": rule.doc()}


def _json_dumps(data) -> str:
    import json

    return json.dumps(data, indent=2, ensure_ascii=False) + "\n"


def render_rule_table(known: dict, output_format: str = "text") -> str:
    """One row per rule: code, name, best fix applicability, summary."""
    if output_format == "json":
        return _json_dumps([_rule_dict(rule) for rule in known.values()])
    rows = [("CODE", "NAME", "FIX", "SUMMARY")]
    rows += [(r.CODE, r.name(), _fix_label(r), r.summary()) for r in known.values()]
    widths = [max(len(row[i]) for row in rows) for i in range(3)]
    lines = ["  ".join(cell.ljust(width) for cell, width in zip(row, widths)) + "  " + row[3]
             for row in rows]
    return "\n".join(lines) + "\n"


def render_rule(rule) -> str:
    """`volfix rule CODE`: a title, fix availability, then the docstring (Markdown)."""
    if rule.FIX is None:
        availability = "Fix is not available."
    else:
        availability = f"Fix is sometimes available ({_fix_label(rule)} at best)."
    return f"# {rule.name()} ({rule.CODE})\n\n{availability}\n\n{rule.doc()}\n"


def _stdout_is_coloured_terminal() -> bool:
    from .output import use_color

    return use_color("auto", sys.stdout)


def _print_markdown(text: str) -> None:
    from rich.console import Console
    from rich.markdown import Markdown

    Console().print(Markdown(text))
