"""The one-element `[0]` reads the original run made, found again in the working tree, and their fix.

0.3 had no 0-dim tensors: a loss, a `.sum()`, `v[0]` of a 1-dim value had shape (1,), and
`loss.data[0]` was a Python number. Since 0.4 they have no dimension and that read raises
IndexError. volfix's VF401 rewrites it where the code tells the value's rank; where only the
data does (a model's output, an environment's observation, a library's return value, a module
the project lacks), the run tells: the legacy run answers each such read with 0.3's number and
the tracer records it once (`scalar_read`: its file and line, and on Python >= 3.11 the
expression's columns and text). Each read the working tree still has is a finding;
`volfix verify --fix` rewrites it to `.item()`, as VF401 does. So is the `[0]` of a one-element
value's `.tolist()` (`loss.data.tolist()[0]`: 0.3's list of one number, today's number): the
run records the `.tolist()` call, and the `[0]` on it is the read.

A read is found again at the line `LineMap` maps it to: at the column its line's change of
indentation moves it to (a region's `with` re-indents it), or, on a line that changed, as the
k-th read of its text when the line has as many as the original's. A read the run also made
on a value with dimensions (a helper given a loss and a batch) is reported, not rewritten:
`.item()` would raise there. A read that is no longer
there (rewritten, or the code changed around it) is not reported; without columns (Python <
3.11) the line's only `[0]` is the read, and a line with several is reported unfixed.
"""
from __future__ import annotations

import ast
import os
from dataclasses import dataclass
from typing import Dict, List, Optional, Tuple

from ..files import sourcefile
from ..fixes.edits import TextEdit, apply_edits
from ..flow.shapes import is_zero
from ..syntax.positions import SourceText
from .compare import Finding, LineMap


@dataclass(frozen=True)
class ScalarRead:
    """A `[0]` of one element the original run made, where the working tree has it."""

    file: str
    line: int  # in the working tree
    text: str  # the read as the working tree writes it: `loss.data[0]`
    fix: Optional[str]  # the read rewritten (`loss.item()`); None: not rewritten, see `why`
    why: str = ""
    edit: Optional[TextEdit] = None
    listed: bool = False  # `[0]` of `.tolist()`

    @property
    def message(self) -> str:
        where = f"{self.file}:{self.line}"
        head = (f"`{self.text}` at {where} indexes the list of a one-element value (a list of one number "
                f"in 0.3, the number today): TypeError since PyTorch 0.4") if self.listed else (
            f"`{self.text}` at {where} indexes a one-element value (shape (1,) in 0.3, no "
            f"dimension today): IndexError since PyTorch 0.4")
        return f"{head}; use `{self.fix}`" if self.fix else f"{head}; {self.why}"


def find_reads(records: List[Dict], lines: LineMap) -> List[ScalarRead]:
    """The reads of `records` (a legacy run's `scalar_read` events) still in the working tree."""
    files: Dict[str, Optional[Tuple[SourceText, ast.AST]]] = {}
    found: Dict[Tuple[str, int], ScalarRead] = {}
    mixed = {_where(record) for record in records if record.get("mixed")}
    for record in records:
        file = record["file"]
        if file not in files:
            files[file] = _parse(os.path.join(lines.work_root, file))
        parsed = files[file]
        if parsed is None:
            continue
        src, tree = parsed
        node = _locate(record, src, tree, lines)
        if isinstance(node, ast.Subscript):
            read = _read(record, node, src, file, _where(record) in mixed)
            found.setdefault((file, src.start(node)), read)
        elif node is _AMBIGUOUS:
            line = lines.line(file, record["line"])
            text = record.get("text") or "[0]"
            found.setdefault((file, -line), ScalarRead(
                file, line, text, None, "several `[0]` on this line: volfix cannot tell which one"))
    return sorted(found.values(), key=lambda read: (read.file, read.line))


def findings(reads: List[ScalarRead]) -> List[Finding]:
    return [Finding("scalar-read", read.file, read.line, read.message) for read in reads]


def apply_fixes(reads: List[ScalarRead], work_root: str) -> Tuple[List[ScalarRead], List[str]]:
    """Write the `.item()` rewrites of `reads` into the working tree: (written, problems)."""
    by_file: Dict[str, List[ScalarRead]] = {}
    for read in reads:
        if read.edit is not None:
            by_file.setdefault(read.file, []).append(read)
    written, problems = [], []
    for file, file_reads in sorted(by_file.items()):
        path = os.path.join(work_root, file)
        try:
            data, _ = sourcefile.read_file(path)
            decoded = sourcefile.decode_source(data)
            text = apply_edits(decoded.text, [read.edit for read in file_reads])
            ast.parse(text)  # never write a file that no longer parses
            sourcefile.write_file_atomic(path, sourcefile.encode_source(text, decoded), original=data)
        except (OSError, SyntaxError, ValueError, sourcefile.SourceDecodeError,
                sourcefile.FileChangedError) as error:
            problems.append(f"{file}: not rewritten: {error}")
            continue
        written.extend(file_reads)
    return written, problems


# ----------------------------------------------------------------------------- finding a read

_AMBIGUOUS = object()


def _parse(path: str) -> Optional[Tuple[SourceText, ast.AST]]:
    try:
        data, _ = sourcefile.read_file(path)
        text = sourcefile.decode_source(data).text
        return SourceText(text), ast.parse(text)
    except (OSError, SyntaxError, ValueError, sourcefile.SourceDecodeError):
        return None


def _zero_index(node: ast.Subscript) -> bool:
    index = node.slice
    if isinstance(index, ast.UnaryOp) and isinstance(index.op, ast.USub):
        index = index.operand
        return isinstance(index, ast.Constant) and type(index.value) is int and index.value == 1
    return is_zero(index)


def _locate(record: Dict, src: SourceText, tree: ast.AST, lines: LineMap):
    """The working tree's Subscript for `record`, `_AMBIGUOUS`, or None (no longer there)."""
    line = lines.line(record["file"], record["line"])
    if line is None or not 1 <= line < len(src.line_starts) + 1:
        return None
    listed = bool(record.get("list"))  # the record is the `.tolist()` call that `[0]` indexes
    candidates = [node for node in ast.walk(tree) if isinstance(node, ast.Subscript)
                  and isinstance(node.ctx, ast.Load) and node.lineno == line and _zero_index(node)
                  and _listed(node) == listed]
    shown = (lambda node: src.segment(node.value)) if listed else src.segment
    text, col = record.get("text"), record.get("col")
    if text is None or col is None:  # Python < 3.11: the line's only `[0]`
        return candidates[0] if len(candidates) == 1 else _AMBIGUOUS if candidates else None
    before = lines.original_line(record["file"], record["line"])
    if before is None:
        return None
    if before.strip() == src.line(line).strip():  # the same line, maybe re-indented: its column
        moved = col - _indent(before) + _indent(src.line(line))
        return next((node for node in candidates if node.col_offset == moved), None)
    if "\n" in text:  # a read over several lines, on a line that changed: its text, if unique
        same = [node for node in candidates if _squeezed(shown(node)) == _squeezed(text)]
        return same[0] if len(same) == 1 else None
    # A changed line: the k-th read written so on the original's line is the k-th on this one,
    # when both have as many (a sibling rewritten to `.item()` since then makes them differ).
    starts = _starts(before.encode("utf-8"), text.encode("utf-8"))
    same = sorted((node for node in candidates if shown(node) == text), key=lambda n: n.col_offset)
    if col not in starts or len(same) != len(starts):
        return None
    return same[starts.index(col)]


def _listed(node: ast.Subscript) -> bool:
    """`x.tolist()[0]`."""
    value = node.value
    return isinstance(value, ast.Call) and not value.args and isinstance(value.func, ast.Attribute) \
        and value.func.attr == "tolist"


def _indent(line: str) -> int:
    return len(line[:len(line) - len(line.lstrip())].encode("utf-8"))


def _starts(line: bytes, text: bytes) -> List[int]:
    found, at = [], line.find(text)
    while at >= 0:
        found.append(at)
        at = line.find(text, at + 1)
    return found


def _squeezed(text: str) -> str:
    return "".join(text.split())


def _where(record: Dict) -> Tuple:
    return record["file"], record["line"], record.get("col")


def _read(record: Dict, node: ast.Subscript, src: SourceText, file: str, mixed: bool) -> ScalarRead:
    shown = src.segment(node)
    value = node.value
    listed = bool(record.get("list"))
    if mixed:  # a helper's `x.data[0]` given a loss and a batch: `.item()` raises on the batch
        return ScalarRead(file, node.lineno, shown, None,
                          "the run also made this read on a value with dimensions (its first row or "
                          "element): `.item()` would raise there; read it with `.item()` only where "
                          "the value is one element", listed=listed)
    item = ".int().item()" if record.get("bool") else ".item()"  # 0.3's comparison gave 1 or 0
    if listed:  # `loss.data.tolist()[0]`: from the `.` of `.tolist`
        start = src.text.index(".", src.end(value.func.value), src.end(value.func))
        fixed = src.text[src.start(node):start] + item
        return ScalarRead(file, node.lineno, shown, fixed, edit=TextEdit(start, src.end(node), item), listed=True)
    if isinstance(value, ast.Attribute) and value.attr == "data":  # `loss.data[0]`
        subject = value.value
        start = src.text.rindex(".", src.end(subject), src.end(value))
    elif record.get("variable"):
        return ScalarRead(file, node.lineno, shown, None,
                          f"in 0.3 `{src.segment(value)}[0]` was a one-element Variable that kept its "
                          f"graph: `{src.segment(value)}` is that value today (`.item()` is its number)")
    else:  # `total[0]` of a plain tensor: 0.3's number
        subject = value
        start = src.text.index("[", src.end(subject), src.end(node))
    fixed = src.text[src.start(node):start] + item
    return ScalarRead(file, node.lineno, shown, fixed, edit=TextEdit(start, src.end(node), item))
