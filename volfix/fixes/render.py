"""Render planned fixes to text edits: statement-level rewrites with libcst, on the affected
statements only (SPEC §3).

A `with` region: the region's lines are cut out, the expression edits inside them applied,
the statements parsed with libcst (an indented run is parsed as the body of an `if True:`
wrapper, so that only those statements are parsed) and put in a `With` node whose body is one
indentation unit deeper. libcst keeps every byte of the statements; whitespace that it stores
as absolute columns (after a backline continuation, continuation lines it cannot tie to the
block's indentation) is moved one unit to the right, as the block itself moves. Strings are
never touched. A decorator is rendered by libcst and inserted above the `def`.

This module is imported only when edits are needed (fix mode, `--diff`, JSON/SARIF fixes,
editors): a plain check never imports libcst.
"""
from __future__ import annotations

import re
from typing import List

import libcst as cst

from .edits import TextEdit, apply_edits
from ..findings import FixPlan, RegionPlan
from ..syntax.positions import physical_lines

_CONTINUATION = re.compile(r"(\\(?:\r\n|\r|\n))")
_NEWLINE_AT_END = re.compile(r"(?:\r\n|\r|\n)\Z")


class RenderError(Exception):
    """A plan that cannot be rendered (a volfix bug, reported per fix)."""


def render(text: str, plan: FixPlan, newline: str) -> List[TextEdit]:
    """The text edits of a planned fix (without its imports)."""
    pending = list(dict.fromkeys(plan.edits))
    out: List[TextEdit] = []
    regions = sorted(plan.regions, key=lambda r: (r.end - r.start, r.start))
    for region in regions:
        local_newline = _newline_of(text[region.start:region.end + 2]) or newline
        if region.form == "decorator":
            out.append(TextEdit(region.start, region.start, decorator_line(region, local_newline)))
            continue
        lo, hi = (region.colon, region.end) if region.suite else (region.start, region.end)
        inside = [e for e in pending + out if lo <= e.start and e.end <= hi and not (e.start == e.end == hi)]
        held = set(inside)  # edits are frozen: set lookups keep a region of thousands of edits linear
        crossing = [e for e in pending + out if e not in held and e.start < hi and e.end > lo]
        if crossing:
            raise RenderError("an edit crosses the boundary of a region")
        local = [TextEdit(e.start - lo, e.end - lo, e.content, e.key) for e in inside]
        body = apply_edits(text[lo:hi], local)
        if region.suite:
            new = local_newline + with_block(body[region.start - lo:].lstrip(" \t"), region, local_newline,
                                             region.indent + region.unit).rstrip("\r\n")
        else:
            new = _keep_blank_lines(body, with_block(body, region, local_newline, region.indent))
        pending = [e for e in pending if e not in held]
        out = [e for e in out if e not in held]
        out.append(TextEdit(lo, hi, new))
    return out + pending


def _keep_blank_lines(body: str, block: str) -> str:
    """A whitespace-only line of the body comes out as it went in (libcst would indent it with
    the block: diff noise a reviewer has to read past). `block` is `with ...:` then the body's
    lines, one for one."""
    old = physical_lines(body)
    new = physical_lines(block)
    if len(new) != len(old) + 1:
        return block
    out = [new[0]]
    for before, after in zip(old, new[1:]):
        out.append(before if not before.strip() and not after.strip() else after)
    return "".join(out)


def _newline_of(text: str) -> str:
    """The first line ending in `text` (a notebook's cells may each use their own)."""
    m = re.search(r"\r\n|\r|\n", text)
    return m.group(0) if m else ""


def decorator_line(region: RegionPlan, newline: str) -> str:
    node = cst.Decorator(decorator=cst.parse_expression(region.header))
    code = cst.Module(body=[]).code_for_node(node)
    return region.indent + code.rstrip("\r\n") + newline


def with_block(body: str, region: RegionPlan, newline: str, indent: str) -> str:
    """`body` (statements at `indent`) as the body of `with <header>:` at `indent`."""
    try:
        if indent:
            module = cst.parse_module(f"if True:{newline}" + _reindent(body, indent, region))
            wrapper = module.body[0]
            statements = list(wrapper.body.body)
        else:
            module = cst.parse_module(body)
            statements = list(module.body)
        module = module.with_changes(default_newline=newline)
    except cst.ParserSyntaxError as exc:
        raise RenderError(f"the region does not parse: {exc.message}") from None
    moved = [s.visit(_Shift(region.unit)) for s in statements]
    block = cst.With(items=[cst.WithItem(cst.parse_expression(region.header))],
                     body=cst.IndentedBlock(body=moved, indent=region.unit))
    if indent:
        new = module.with_changes(body=[wrapper.with_changes(body=wrapper.body.with_changes(body=[block]))])
        code = new.code
        code = code[code.index(newline) + len(newline):] if newline in code else code
    else:
        code = module.with_changes(body=[block]).code
    return _keep_final_newline(body, code)


def _keep_final_newline(body: str, code: str) -> str:
    """libcst (1.9) drops a final lone CR: `x = 1  # c\\r` comes back as `x = 1  # c`, and in a
    CR-only file the next line would join the comment. The block ends as the body did."""
    end = _NEWLINE_AT_END.search(body)
    if end and not code.endswith(("\n", "\r")):
        return code + end.group(0)
    return code


def _reindent(body: str, indent: str, region: RegionPlan) -> str:
    """A one-line suite's statements start after the colon: give them the block's indentation."""
    if region.suite:
        return indent + body if not body.endswith(("\n", "\r")) else indent + body
    return body


class _Shift(cst.CSTTransformer):
    """Move whitespace stored as absolute columns one indentation unit to the right."""

    def __init__(self, unit: str):
        super().__init__()
        self.unit = unit

    def leave_ParenthesizedWhitespace(self, original, updated):
        if updated.indent:
            return updated
        return updated.with_changes(last_line=cst.SimpleWhitespace(self.unit + updated.last_line.value))

    def leave_EmptyLine(self, original, updated):
        if updated.indent or not updated.comment:
            return updated
        return updated.with_changes(whitespace=cst.SimpleWhitespace(self.unit + updated.whitespace.value))

    def leave_SimpleWhitespace(self, original, updated):
        if "\\" not in updated.value:
            return updated
        return updated.with_changes(value=_CONTINUATION.sub(lambda m: m.group(1) + self.unit, updated.value))
