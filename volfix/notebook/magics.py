"""IPython syntax in notebook cells (SPEC §6): masked before parsing, restored afterwards.

`%line` magics, `!shell`, `x?` help, `a = !cmd`, autocall lines and automagics (`ls {PATH}`,
a shell alias spelled without `%` on a line that is no Python) become placeholder
statements (`__volfix_magic_3__`, same line count) and come back byte for byte. A cell starting
with a cell magic is analysed only when its body is Python that runs in the kernel (`%%time`,
`%%timeit`, `%%capture`, `%%prun`, `%%debug`); other cells (`%%bash`, `%%writefile`, ...) are
skipped.
"""
from __future__ import annotations

import ast
import re
from dataclasses import dataclass, field
from typing import Dict, List, Optional, Sequence, Tuple

# Cell magics whose body is Python run in the kernel's namespace.
PYTHON_BODY_CELL_MAGICS = frozenset({"time", "timeit", "capture", "prun", "debug"})

_LINE = re.compile(r"[^\r\n]*(?:\r\n|\r|\n)|[^\r\n]+")
_ENDING = re.compile(r"(?:\r\n|\r|\n)$")
_HELP_END = re.compile(r"[A-Za-z_*][\w.*]*(?:\[[^\]]*\])?\s*\?{1,2}")
_ASSIGN_MAGIC = re.compile(r"([A-Za-z_][\w.]*(?:\s*,\s*[A-Za-z_][\w.]*)*\s*=\s*)[!%]")
_PLACEHOLDER = re.compile(r"__volfix_magic_(\d+)(?:_(\d+))?__")
_CELL_MAGIC = re.compile(r"%%([\w.-]*)")
# `%time stmt` / `%timeit -n 10 stmt`: a line magic whose argument is one Python statement run
# in the kernel. The statement stays visible (a `volatile=True` there is legacy code to fix);
# the magic is kept in a trailing comment marker and comes back in front of it.
_TIMED = re.compile(r"(%(?:time|timeit)(?:[ \t]+-[nrp][ \t]*\d+|[ \t]+-[tcqo])*[ \t]+)(\S.*)")
_TIMED_MARKER = re.compile(r"[ \t]*# __volfix_timed_(\d+)__$")


class MaskError(Exception):
    """A placeholder went missing or was edited: the cell cannot be restored."""


def split_lines(text: str) -> List[str]:
    """Lines with their endings (\\r\\n, \\r or \\n), as Python's tokenizer sees them."""
    return _LINE.findall(text)


@dataclass
class MaskedCell:
    text: str  # Python text: every IPython line replaced by a placeholder statement
    # placeholder id -> (the statement's prefix such as "files = ", original lines without endings)
    magics: Dict[int, Tuple[str, List[str]]] = field(default_factory=dict)
    cell_magic: Optional[str] = None  # name of a leading %%magic
    cell_magic_line: int = 0  # its 0-based line index in the cell
    skip: bool = False  # a cell magic whose body is not Python
    # IPython strips the first non-blank line's indentation from every line that has it
    # (`leading_indent`): a cell may start with a space. `text` is dedented; this comes back.
    indent: str = ""
    # With `indent`: the lines IPython left as they were (not starting with it), by content.
    unindented: Tuple[str, ...] = ()
    # marker id -> the line magic in front of a statement left in the text (`%time `)
    timed: Dict[int, str] = field(default_factory=dict)


# IPython's automagics a notebook line may spell without `%` (`ls {PATH}`, `cd data`): shell
# aliases and the file-system magics, run as magics when the line is no Python statement.
_AUTOMAGICS = frozenset({"ls", "cd", "pwd", "mkdir", "rmdir", "cp", "mv", "rm", "cat", "ll", "lf", "lk", "lx",
                         "ldir", "less", "man", "clear", "pushd", "popd", "dirs", "env", "who", "whos"})
_FIRST_WORD = re.compile(r"([A-Za-z_]\w*)(?=\s|$)")


def _is_magic(body: str) -> bool:
    if not body or body[0] == "#":
        return False
    if body[0] in "%!?/,;":
        return True
    word = _FIRST_WORD.match(body)
    if word is not None and word.group(1) in _AUTOMAGICS and not _python_line(body):
        return True
    return _HELP_END.fullmatch(body.rstrip()) is not None


def _python_line(body: str) -> bool:
    try:
        ast.parse(body.strip())
    except SyntaxError:
        return False
    return True


def dedent_cell(text: str) -> Tuple[str, str]:
    """(the cell as IPython runs it, the indentation removed): IPython's `leading_indent`
    removes the first non-blank line's indentation from every line that starts with it."""
    lines = split_lines(text)
    first = next((line for line in lines if line.strip()), "")
    indent = first[:len(first) - len(first.lstrip(" \t"))]
    if not indent:
        return text, ""
    return "".join(line[len(indent):] if line.startswith(indent) else line for line in lines), indent


def indent_cell(text: str, indent: str, unindented: Sequence[str] = ()) -> str:
    """The inverse of `dedent_cell` for a (fixed) cell: the indentation back on every
    non-empty line but the ones IPython left as they were (`unindented`, by content)."""
    if not indent:
        return text
    kept = set(unindented)
    return "".join(indent + line if _ENDING.sub("", line) and _ENDING.sub("", line) not in kept else line
                   for line in split_lines(text))


def _unindented(text: str, indent: str) -> Tuple[str, ...]:
    if not indent:
        return ()
    return tuple(_ENDING.sub("", line) for line in split_lines(text)
                 if _ENDING.sub("", line) and not line.startswith(indent))


def mask_magics(text: str) -> MaskedCell:
    """Replace IPython syntax in a cell with placeholder statements (same line count)."""
    dedented, indent = dedent_cell(text)
    masked = _mask_magics(dedented)
    masked.indent, masked.unindented = indent, _unindented(text, indent)
    return masked


def _mask_magics(text: str) -> MaskedCell:
    lines = split_lines(text)
    out = MaskedCell(text="")
    result: List[str] = []
    lexer = _LogicalLines()
    first_logical = True
    i = 0
    while i < len(lines):
        line = lines[i]
        content = _ENDING.sub("", line)
        body = content.lstrip(" \t")
        if lexer.at_statement_start() and body.strip():
            if first_logical and body.startswith("%%"):
                name = _CELL_MAGIC.match(body).group(1)
                out.cell_magic, out.cell_magic_line = name, i
                if name not in PYTHON_BODY_CELL_MAGICS:
                    return MaskedCell(text=text, cell_magic=name, skip=True)
            first_logical = False if not body.startswith("#") else first_logical
            timed = _timed_statement(body)
            if timed is not None and not content.endswith("\\"):
                magic, statement = timed
                ident = len(out.timed)
                out.timed[ident] = magic
                ending = _ENDING.search(line)
                result.append(content[:len(content) - len(body)] + statement + f"  # __volfix_timed_{ident}__"
                              + (ending.group() if ending else ""))
                i += 1
                continue
            assign = _ASSIGN_MAGIC.match(body)
            if assign or _is_magic(body):
                count = 1
                while _ENDING.sub("", lines[i + count - 1]).endswith("\\") and i + count < len(lines):
                    count += 1
                ident = len(out.magics)
                prefix = assign.group(1) if assign else ""
                originals = [_ENDING.sub("", ln) for ln in lines[i:i + count]]
                out.magics[ident] = (prefix, originals)
                indent = content[:len(content) - len(body)]
                for k in range(count):
                    ending = _ENDING.search(lines[i + k])
                    name = f"__volfix_magic_{ident}__" if k == 0 else f"__volfix_magic_{ident}_{k}__"
                    result.append(indent + (prefix if k == 0 else "") + name + (ending.group() if ending else ""))
                i += count
                continue
        lexer.feed(content)
        result.append(line)
        i += 1
    out.text = "".join(result)
    return out


def _timed_statement(body: str) -> Optional[Tuple[str, str]]:
    """(`%time `, `model(x)`) for a line magic timing one simple Python statement, else None."""
    match = _TIMED.fullmatch(body.rstrip())
    if match is None or "__volfix_" in body:
        return None
    statement = match.group(2)
    return (match.group(1), statement) if _one_simple_statement(statement) else None


def _one_simple_statement(text: str) -> bool:
    try:
        tree = ast.parse(text)
    except (SyntaxError, ValueError):
        return False
    return len(tree.body) == 1 and not isinstance(tree.body[0], _COMPOUND) and "\n" not in text.strip()


_COMPOUND = (ast.If, ast.For, ast.While, ast.With, ast.Try, ast.FunctionDef, ast.ClassDef, ast.AsyncFunctionDef,
             ast.AsyncFor, ast.AsyncWith)


def _restore_timed(lines: List[str], masked: MaskedCell) -> List[str]:
    """The timed statements' magics back in front of them (`_TIMED`); each marker exactly once,
    on a line still holding one whole statement."""
    seen = set()
    out = []
    for line in lines:
        content = _ENDING.sub("", line)
        match = _TIMED_MARKER.search(content)
        if match is None:
            if "__volfix_timed_" in line:
                raise MaskError("a timed statement's marker was moved")
            out.append(line)
            continue
        ident = int(match.group(1))
        statement = content[:match.start()]
        body = statement.lstrip(" \t")
        if ident in masked.timed and ident not in seen and (not body or body.startswith("#")):
            # The fix deleted the statement (`%time x = Variable(x)` is `x = x`); its comments
            # stay, the magic goes with it.
            seen.add(ident)
            if body:
                out.append(statement + line[len(content):])
            continue
        if ident in seen or ident not in masked.timed or not _one_simple_statement(body):
            magic = masked.timed.get(ident, "%time").strip()
            raise MaskError(f"the statement timed by {magic} was split or duplicated")
        seen.add(ident)
        out.append(statement[:len(statement) - len(body)] + masked.timed[ident] + body + line[len(content):])
    if seen != set(masked.timed):
        raise MaskError("a timed statement was removed by a fix")
    return out


def unmask_magics(text: str, masked: MaskedCell) -> str:
    """Restore the IPython lines of `masked` in `text` (the masked text, possibly fixed).

    A restored first line takes the indentation its placeholder has now (a fix may have
    moved it into a `with` block); continuation lines come back verbatim. A leading cell
    magic goes back to the first line.
    """
    if masked.skip:
        return text
    if masked.timed:
        text = "".join(_restore_timed(split_lines(text), masked))
    return indent_cell(_unmask(text, masked) if masked.magics else text, masked.indent, masked.unindented)


def _unmask(text: str, masked: MaskedCell) -> str:
    lines = split_lines(text)
    seen = set()
    head: List[int] = []
    for n, line in enumerate(lines):
        match = _PLACEHOLDER.search(line)
        if match is None:
            continue
        ident, part = int(match.group(1)), int(match.group(2) or 0)
        if (ident, part) in seen or ident not in masked.magics:
            raise MaskError(f"placeholder {match.group()} duplicated or unknown")
        seen.add((ident, part))
        prefix, originals = masked.magics[ident]
        content = _ENDING.sub("", line)
        ending = line[len(content):]
        indent = content[:len(content) - len(content.lstrip(" \t"))]
        expected = indent + (prefix if part == 0 else "") + match.group()
        if content != expected or part >= len(originals):
            raise MaskError(f"the line holding {match.group()} was edited")
        if part == 0:
            original = originals[0]
            lines[n] = indent + original.lstrip(" \t") + ending
        else:
            lines[n] = originals[part] + ending
        if ident == 0 and masked.cell_magic is not None:
            head.append(n)
    expected_ids = {(ident, k) for ident, (_, originals) in masked.magics.items() for k in range(len(originals))}
    if seen != expected_ids:
        raise MaskError("a placeholder was removed by a fix")
    where = masked.cell_magic_line
    if head and head != list(range(where, where + len(head))):  # keep the cell magic first
        moved = [lines[n] for n in head]
        rest = [ln for n, ln in enumerate(lines) if n not in set(head)]
        lines = moved + rest
    return "".join(lines)


class _LogicalLines:
    """Just enough of Python's tokenizer to know whether a line starts a statement:
    open brackets, open (triple-quoted or backslash-continued) strings, backslash joins."""

    def __init__(self):
        self.depth = 0
        self.quote: Optional[str] = None
        self.joined = False

    def at_statement_start(self) -> bool:
        return self.depth == 0 and self.quote is None and not self.joined

    def feed(self, line: str) -> None:
        i, n = 0, len(line)
        self.joined = False
        while i < n:
            if self.quote is not None:
                i = self._in_string(line, i)
                continue
            ch = line[i]
            if ch == "#":
                return
            if ch in "\"'":
                triple = line[i:i + 3]
                self.quote = triple if triple in ('"""', "'''") else ch
                i += len(self.quote)
            elif ch in "([{":
                self.depth += 1
                i += 1
            elif ch in ")]}":
                self.depth = max(0, self.depth - 1)
                i += 1
            else:
                i += 1
        if self.quote is None:
            self.joined = line.endswith("\\")
        elif len(self.quote) == 1 and not line.endswith("\\"):
            self.quote = None  # an unterminated one-line string: a syntax error, not ours

    def _in_string(self, line: str, i: int) -> int:
        quote = self.quote
        while i < len(line):
            if line[i] == "\\":
                i += 2
            elif line.startswith(quote, i):
                self.quote = None
                return i + len(quote)
            else:
                i += 1
        return len(line)
