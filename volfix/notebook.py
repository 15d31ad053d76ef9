"""Jupyter notebooks (SPEC §6): check and fix the code cells of an `.ipynb` file.

A notebook is one module run in cell order, so every code cell is handed to the engine
separately, with the import bindings of the cells before it (`ModuleContext.imports`).
Consequences, all deliberate:

* Edits never cross a cell, and no `torch.no_grad()` region spans two cells.
* `Diagnostic.cell` is 1-based and counts *every* cell (markdown and raw ones too), which is
  the number Jupyter's "go to cell" and ruff use; rows and columns are relative to the cell.
* IPython syntax (`%line` magics, `!shell`, `x?` help, `a = !cmd`, autocall `/f x`) is
  replaced by placeholder statements before parsing and restored byte for byte afterwards.
  A cell starting with a cell magic is analysed only when its body is Python that runs in
  the kernel (`%%time`, `%%timeit`, `%%capture`, `%%prun`, `%%debug`); other cells
  (`%%bash`, `%%writefile`, `%%html`, ...) are skipped.
* Imports are handled here, never by the engine (cells get `may_add_imports=False` and
  `may_remove_imports=False`): when torch is not bound yet in a cell the engine is told
  `torch` is imported, and if a fix then uses it, `import torch` is added once, to the first
  code cell that has imports when that cell comes no later than the first use, else to the
  first cell that uses it. `from torch.autograd import Variable` is removed only when the
  fixes made `Variable` unused in every cell (magics included).
* The file is rewritten by splicing: only the JSON values of the edited cells' `source`
  change, re-encoded in the file's own style (a string stays a string, a list of lines keeps
  its item indentation, unchanged lines keep their original escaping). Outputs, metadata,
  execution counts, key order and the trailing newline are untouched, and the result is
  verified with `json.loads` before it is returned.

`FileResult.source` / `fixed_source` hold the raw notebook JSON before / after (the `--diff`
reporter splits them into per-cell diffs); use `cell_sources()` to show a code frame for a
diagnostic's cell.
"""
from __future__ import annotations

import ast
import dataclasses
import json
import re
from dataclasses import dataclass, field
from typing import Dict, List, Optional, Sequence, Tuple

from . import engine
from .config import Config
from .model import Applicability, Diagnostic, FileResult, Location
from .review import FixProposal, ReviewCallback

# ---------------------------------------------------------------------------------------
# Reading the raw JSON: where is each cell's "source" value?
# ---------------------------------------------------------------------------------------

_DECODER = json.JSONDecoder()
_WS = re.compile(r"[ \t\n\r]*")
# A \u escape of a non-ASCII code point that is not itself an escaped backslash.
_NON_ASCII_ESCAPE = re.compile(r"(?<!\\)(?:\\\\)*\\u(?:00[89a-fA-F][0-9a-fA-F]|0[1-9a-fA-F][0-9a-fA-F]{2}"
                               r"|[1-9a-fA-F][0-9a-fA-F]{3}|007[fF])")


class NotebookError(Exception):
    """The file is not a notebook volfix can read; the message is shown in a VF002."""

    def __init__(self, message: str, location: Location = Location(1, 1)):
        super().__init__(message)
        self.location = location


@dataclass
class RawCell:
    """One entry of the notebook's `cells` array, as found in the raw text."""

    index: int  # 0-based over all cells
    cell_type: Optional[str]
    source: str  # the joined text
    kind: str  # "str", "list" or "missing"
    span: Optional[Tuple[int, int]] = None  # [start, end) of the source value in the text
    key_indent: str = ""  # whitespace before the "source" key on its line
    items: List[Tuple[str, str]] = field(default_factory=list)  # (decoded, raw) list items
    prefix: str = ""  # text between "[" and the first item
    separators: List[str] = field(default_factory=list)  # text between consecutive items
    suffix: str = ""  # text between the last item and "]"


@dataclass
class RawNotebook:
    text: str  # decoded, without the BOM
    bom: str
    nbformat: int
    metadata: dict
    cells: List[RawCell]
    ensure_ascii: bool  # the file escapes non-ASCII characters as \uXXXX
    indent_unit: Optional[str]  # whitespace per nesting level, None for one-line JSON
    space_after_comma: str  # " " or "" in one-line JSON


def parse_notebook(data: bytes) -> RawNotebook:
    """Decode and scan a notebook; raise NotebookError with a user-facing reason."""
    try:
        text = data.decode("utf-8")
    except UnicodeDecodeError as exc:
        raise NotebookError(f"notebook is not valid UTF-8 ({exc.reason} at byte {exc.start})") from None
    bom = ""
    if text.startswith("\ufeff"):
        bom, text = "\ufeff", text[1:]
    try:
        obj = json.loads(text)
    except json.JSONDecodeError as exc:
        raise NotebookError(f"notebook is not valid JSON: {exc.msg} (line {exc.lineno}, column {exc.colno})",
                            Location(exc.lineno, exc.colno)) from None
    if not isinstance(obj, dict):
        raise NotebookError("notebook is not a JSON object")
    version = obj.get("nbformat")
    if version is None:
        raise NotebookError("notebook has no `nbformat` version")
    if not isinstance(version, int) or isinstance(version, bool):
        raise NotebookError(f"notebook has an invalid `nbformat` version: {version!r}")
    if version < 4:
        raise NotebookError(f"nbformat {version} notebooks are not supported; upgrade with "
                            "`jupyter nbconvert --to notebook --nbformat 4`")
    if not isinstance(obj.get("cells"), list):
        raise NotebookError("notebook has no `cells` list")
    metadata = obj.get("metadata") if isinstance(obj.get("metadata"), dict) else {}
    scanner = _Scanner(text)
    cells, indent_unit, space = scanner.scan()
    if len(cells) != len(obj["cells"]):  # only with duplicate "cells" keys
        raise NotebookError("notebook has more than one `cells` list")
    has_raw_non_ascii = any(ord(ch) > 127 for ch in text)
    ensure_ascii = not has_raw_non_ascii and _NON_ASCII_ESCAPE.search(text) is not None
    return RawNotebook(text, bom, version, metadata, cells, ensure_ascii, indent_unit, space)


class _Scanner:
    """Walks the top-level object and the cells, recording the spans of `source` values.

    The text is known to be valid JSON (json.loads accepted it), so this only tracks
    positions; nested values it does not care about are skipped with the C decoder.
    """

    def __init__(self, text: str):
        self.text = text

    def ws(self, pos: int) -> int:
        return _WS.match(self.text, pos).end()

    def value(self, pos: int) -> Tuple[object, int]:
        return _DECODER.raw_decode(self.text, pos)

    def members(self, pos: int):
        """Yield (key, key_start, value_start) for the object at pos; send back value end."""
        text = self.text
        pos = self.ws(pos + 1)  # past "{"
        if text[pos] == "}":
            return pos + 1
        while True:
            key_start = pos
            key, pos = self.value(pos)
            pos = self.ws(pos)
            pos = self.ws(pos + 1)  # past ":"
            end = yield key, key_start, pos
            pos = self.ws(end)
            if text[pos] == "}":
                return pos + 1
            pos = self.ws(pos + 1)  # past ","

    def scan(self) -> Tuple[List[RawCell], Optional[str], str]:
        text = self.text
        start = self.ws(0)
        first_key = self.ws(start + 1)
        gap = text[start + 1:first_key]
        indent_unit = gap.rsplit("\n", 1)[1] if "\n" in gap else None
        space = " "
        cells: List[RawCell] = []
        walker = self.members(start)
        item = next(walker)
        while True:
            key, _, vpos = item
            if key == "cells" and text[vpos] == "[":
                cells, end = self.cells(vpos)
            else:
                _, end = self.value(vpos)
            after = self.ws(end)
            if text[after] == ",":
                space = text[after + 1:self.ws(after + 1)] if indent_unit is None else space
            try:
                item = walker.send(end)
            except StopIteration:
                break
        return cells, indent_unit, space[-1:] if space.strip() == "" else " "

    def cells(self, pos: int) -> Tuple[List[RawCell], int]:
        text = self.text
        out: List[RawCell] = []
        pos = self.ws(pos + 1)
        while text[pos] != "]":
            if text[pos] == "{":
                cell, pos = self.cell(len(out), pos)
            else:
                _, pos = self.value(pos)
                cell = RawCell(len(out), None, "", "missing")
            out.append(cell)
            pos = self.ws(pos)
            if text[pos] == ",":
                pos = self.ws(pos + 1)
        return out, pos + 1

    def cell(self, index: int, pos: int) -> Tuple[RawCell, int]:
        cell = RawCell(index, None, "", "missing")
        walker = self.members(pos)
        item = next(walker)
        while True:
            key, key_start, vpos = item
            value, end = self.value(vpos)
            if key == "cell_type" and isinstance(value, str):
                cell.cell_type = value
            elif key == "source":
                self.source(cell, value, key_start, vpos, end)
            try:
                item = walker.send(end)
            except StopIteration as stop:
                return cell, stop.value

    def source(self, cell: RawCell, value: object, key_start: int, start: int, end: int) -> None:
        text = self.text
        line_start = text.rfind("\n", 0, key_start) + 1
        indent = text[line_start:key_start]
        cell.key_indent = indent if indent.strip() == "" else ""
        cell.span = (start, end)
        if isinstance(value, str):
            cell.kind, cell.source = "str", value
            return
        if not isinstance(value, list) or not all(isinstance(v, str) for v in value):
            cell.kind, cell.source = "missing", ""
            return
        cell.kind, cell.source = "list", "".join(value)
        pos = self.ws(start + 1)
        cell.prefix = text[start + 1:pos]
        while text[pos] != "]":
            decoded, item_end = self.value(pos)
            cell.items.append((decoded, text[pos:item_end]))
            nxt = self.ws(item_end)
            if text[nxt] == ",":
                after = self.ws(nxt + 1)
                cell.separators.append(text[item_end:after])
                pos = after
            else:
                cell.suffix = text[item_end:nxt]
                pos = nxt


def cell_sources(text: str) -> Dict[int, str]:
    """1-based cell number -> source text, for showing code frames of notebook diagnostics."""
    obj = json.loads(text.lstrip("\ufeff"))
    out = {}
    for number, cell in enumerate(obj.get("cells", []), start=1):
        source = cell.get("source", "") if isinstance(cell, dict) else ""
        out[number] = "".join(source) if isinstance(source, list) else str(source)
    return out


# ---------------------------------------------------------------------------------------
# Writing: splice re-encoded sources into the original text
# ---------------------------------------------------------------------------------------


def split_source_lines(text: str) -> List[str]:
    """Split a cell's text into `source` list items the way nbformat does."""
    return text.splitlines(True)


def encode_source(nb: RawNotebook, cell: RawCell, new_text: str) -> str:
    """The JSON text of `new_text` as this cell's source value, in the file's style."""
    if cell.kind == "str":
        return json.dumps(new_text, ensure_ascii=nb.ensure_ascii)
    lines = split_source_lines(new_text)
    if not lines:
        return "[]"
    raw_of = {decoded: raw for decoded, raw in cell.items}
    raws = [raw_of.get(line) or json.dumps(line, ensure_ascii=nb.ensure_ascii) for line in lines]
    prefix, suffix = cell.prefix, cell.suffix
    if not cell.items:
        if nb.indent_unit is not None:
            prefix = "\n" + cell.key_indent + nb.indent_unit
            suffix = "\n" + cell.key_indent
        else:
            prefix = suffix = ""
    if cell.separators:
        sep = cell.separators[-1]
    elif "\n" in prefix:
        sep = "," + prefix
    else:
        sep = "," + nb.space_after_comma
    return "[" + prefix + sep.join(raws) + suffix + "]"


def splice_sources(nb: RawNotebook, new_sources: Dict[int, str]) -> bytes:
    """The notebook's bytes with the sources of the cells in `new_sources` replaced."""
    pieces = []
    pos = 0
    for index in sorted(new_sources):
        cell = nb.cells[index]
        if cell.span is None:
            raise ValueError(f"cell {index + 1} has no source value to replace")
        start, end = cell.span
        pieces.append(nb.text[pos:start])
        pieces.append(encode_source(nb, cell, new_sources[index]))
        pos = end
    pieces.append(nb.text[pos:])
    return (nb.bom + "".join(pieces)).encode("utf-8")


def changes_only_sources(old: str, new: str, new_sources: Dict[int, str]) -> bool:
    """True when `new` differs from `old` exactly in the listed cells' sources."""
    old_obj, new_obj = json.loads(old.lstrip("\ufeff")), json.loads(new.lstrip("\ufeff"))
    for index, text in new_sources.items():
        source = new_obj["cells"][index]["source"]
        if ("".join(source) if isinstance(source, list) else source) != text:
            return False
        old_obj["cells"][index]["source"] = new_obj["cells"][index]["source"] = None
    # json.dumps rather than ==, so that NaN values compare equal to themselves.
    return json.dumps(old_obj, sort_keys=True) == json.dumps(new_obj, sort_keys=True)


# ---------------------------------------------------------------------------------------
# IPython syntax: mask before parsing, restore afterwards
# ---------------------------------------------------------------------------------------

# Cell magics whose body is Python run in the kernel's namespace.
PYTHON_BODY_CELL_MAGICS = frozenset({"time", "timeit", "capture", "prun", "debug"})

_LINE = re.compile(r"[^\r\n]*(?:\r\n|\r|\n)|[^\r\n]+")
_ENDING = re.compile(r"(?:\r\n|\r|\n)$")
_HELP_END = re.compile(r"[A-Za-z_*][\w.*]*(?:\[[^\]]*\])?\s*\?{1,2}")
_ASSIGN_MAGIC = re.compile(r"([A-Za-z_][\w.]*(?:\s*,\s*[A-Za-z_][\w.]*)*\s*=\s*)[!%]")
_PLACEHOLDER = re.compile(r"__volfix_magic_(\d+)(?:_(\d+))?__")
_CELL_MAGIC = re.compile(r"%%([\w.-]*)")


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


def _is_magic(body: str) -> bool:
    if not body or body[0] == "#":
        return False
    if body[0] in "%!?/,;":
        return True
    return _HELP_END.fullmatch(body.rstrip()) is not None


def mask_magics(text: str) -> MaskedCell:
    """Replace IPython syntax in a cell with placeholder statements (same line count)."""
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


def unmask_magics(text: str, masked: MaskedCell) -> str:
    """Restore the IPython lines of `masked` in `text` (the masked text, possibly fixed).

    A restored first line takes the indentation its placeholder has now (a fix may have
    moved it into a `with` block); continuation lines come back verbatim. A leading cell
    magic goes back to the first line.
    """
    if masked.skip or not masked.magics:
        return text
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


# ---------------------------------------------------------------------------------------
# Checking and fixing a notebook
# ---------------------------------------------------------------------------------------

_PYTHON_LANGUAGES = frozenset({"python", "python2", "python3", "ipython", "ipython2", "ipython3"})
_VARIABLE_MODULES = ("torch.autograd", "torch.autograd.variable")
# Findings whose volatile value may flow into later cells, and how their note says so.
_ESCAPE_CODES = frozenset({"VF101", "VF103"})
_ESCAPE_NOTE = "volatility escapes the cell"
# Modules a fix may need; the engine is told they are imported (see the module docstring).
_INJECTED = ("torch", "contextlib")


@dataclass
class _Cell:
    raw: RawCell
    masked: MaskedCell
    text: str  # the masked text, fixed as the run goes on
    diagnostics: Tuple[Diagnostic, ...] = ()

    @property
    def number(self) -> int:
        return self.raw.index + 1

    @property
    def analysed(self) -> bool:
        return not self.masked.skip and bool(self.raw.source.strip())


def is_python_notebook(metadata: dict) -> bool:
    """False when the notebook's kernel declares a language other than Python."""
    for key, name_key in (("kernelspec", "language"), ("language_info", "name")):
        info = metadata.get(key)
        if isinstance(info, dict) and isinstance(info.get(name_key), str) and info[name_key].strip():
            return info[name_key].strip().lower() in _PYTHON_LANGUAGES
    return True


def unreadable_diagnostic(exc: NotebookError) -> Diagnostic:
    from .rules.engine_errors import UnreadableFile

    return Diagnostic(code=UnreadableFile.CODE, message=f"{UnreadableFile.MESSAGE}: {exc}",
                      location=exc.location, end_location=exc.location)


def process_notebook(data: bytes, *, path: str, config: Config, mode: str = "check",
                     unsafe_fixes: bool = False, with_fixes: bool = True,
                     review: Optional[ReviewCallback] = None) -> Tuple[FileResult, Optional[bytes]]:
    """Check (mode "check") or fix ("fix", "diff") the code cells of a notebook.

    `review` (fix/diff mode) is asked about each fix before it is applied; its proposals
    carry the cell number and show the cell's source (magics restored).

    Returns the result and, in fix/diff mode when something changed, the new file bytes
    (the caller writes them in fix mode). Diagnostics carry `cell`; in fix/diff mode they
    are the findings that remain in the fixed notebook. A notebook that is not valid JSON
    or has no nbformat version gives one VF002 diagnostic and no exception.
    """
    if mode not in ("check", "fix", "diff"):
        raise ValueError(f"unknown mode {mode!r}")
    try:
        nb = parse_notebook(data)
    except NotebookError as exc:
        try:
            text: Optional[str] = data.decode("utf-8")
        except UnicodeDecodeError:
            text = None
        return FileResult(path=path, diagnostics=(unreadable_diagnostic(exc),), source=text), None
    source = nb.bom + nb.text
    if not is_python_notebook(nb.metadata):
        return FileResult(path=path, source=source, fixed_source=None if mode == "check" else source), None
    run = _NotebookRun(nb, path=path, config=config, fixing=mode != "check", unsafe_fixes=unsafe_fixes,
                       with_fixes=with_fixes, review=review)
    run.process()
    diagnostics = tuple(d for cell in run.cells for d in cell.diagnostics)
    if mode == "check":
        return FileResult(path=path, diagnostics=diagnostics, source=source, error=run.error()), None
    new_sources = run.new_sources()
    new_bytes = splice_sources(nb, new_sources) if new_sources else data
    new_text = new_bytes.decode("utf-8")
    if new_sources and not changes_only_sources(source, new_text, new_sources):
        run.errors.append("rewriting the notebook changed more than the fixed cells' sources; "
                          "the file was left untouched (this is a volfix bug)")
        new_sources, new_bytes, new_text = {}, data, source
    changed = new_bytes != data
    result = FileResult(path=path, diagnostics=diagnostics, source=source, fixed_source=new_text,
                        fixed_count=run.fixed_count if changed else 0, changed=changed,
                        error=run.error(), applied_codes=tuple(run.applied_codes) if changed else ())
    return result, (new_bytes if changed else None)


class _NotebookRun:
    def __init__(self, nb: RawNotebook, *, path: str, config: Config, fixing: bool, unsafe_fixes: bool,
                 with_fixes: bool, review: Optional[ReviewCallback] = None):
        self.nb, self.path, self.config = nb, path, config
        self.fixing, self.unsafe_fixes, self.with_fixes = fixing, unsafe_fixes, with_fixes
        self.review = review
        self.cells = [_Cell(raw, masked, masked.text) for raw in nb.cells if raw.cell_type == "code"
                      for masked in [mask_magics(raw.source)]]
        self.errors: List[str] = []
        self.fixed_count = 0
        self.applied_codes: List[str] = []
        self.original_texts = {cell.number: cell.text for cell in self.cells}

    def error(self) -> Optional[str]:
        return "; ".join(self.errors) or None

    def process(self) -> None:
        uses_torch = self.imports_torch()
        imports: Dict[str, str] = {}
        needs: Dict[str, int] = {}  # injected module -> first cell index (in self.cells) using it
        for position, cell in enumerate(self.cells):
            if not cell.analysed:
                continue
            context_imports = dict(imports)
            injected = [name for name in _INJECTED if uses_torch and name not in context_imports
                        and name not in context_imports.values()]
            for name in injected:
                context_imports[name] = name
            context = engine.ModuleContext(imports=context_imports, may_add_imports=False,
                                           may_remove_imports=False)
            self.run_engine(cell, context, self.cells[position + 1:])
            for name in injected:
                if name not in needs and _count_loads(cell.text, name) > max(0, _count_loads(
                        self.original_texts[cell.number], name)):
                    needs[name] = position
            imports = self.bindings_after(cell.text, imports)
        if not self.fixing:
            return
        touched = self.add_imports(needs) | self.remove_unused_variable()
        if touched:
            self.recheck(touched)

    def imports_torch(self) -> bool:
        """Whether any cell binds a name from torch (then `torch` may be assumed imported)."""
        imports: Dict[str, str] = {}
        for cell in self.cells:
            if cell.analysed:
                imports = self.bindings_after(cell.text, imports)
                if any(q == "torch" or str(q).startswith("torch.") for q in imports.values()):
                    return True
        return False

    @staticmethod
    def bindings_after(text: str, imports: Dict[str, str]) -> Dict[str, str]:
        return dict(engine.module_imports(text, engine.ModuleContext(imports=dict(imports))))

    def run_engine(self, cell: _Cell, context: "engine.ModuleContext", later: Sequence[_Cell]) -> None:
        if not self.fixing:
            result = self.check(cell.text, context)
            cell.diagnostics = self.with_escapes(cell.text, result.diagnostics, cell, later)
            return
        # A safe fix whose volatile value is used by a later cell becomes unsafe (the region
        # cannot follow it there): without --unsafe-fixes it is held back with a directive.
        held = [] if self.unsafe_fixes else [
            d for d in self.with_escapes(cell.text, self.check(cell.text, context).diagnostics, cell, later)
            if d.fix is not None and d.fix.applicability is Applicability.UNSAFE and d.code in _ESCAPE_CODES
            and d.note and _ESCAPE_NOTE in d.note]
        text = hold_back(cell.text, held)
        if text is None:
            self.errors.append(f"cell {cell.number}: a fix that cannot cover later cells could not be held "
                               "back; the cell was left unfixed")
            result = self.check(cell.text, context)
            cell.diagnostics = self.with_escapes(cell.text, result.diagnostics, cell, later)
            return
        result = engine.fix_text(text, path=self.path, config=self.config, unsafe_fixes=self.unsafe_fixes,
                                 context=context, review=self.cell_review(cell, len(held), later))
        if result.error:
            self.errors.append(f"cell {cell.number}: {result.error}")
        fixed = result.fixed_source if result.fixed_source is not None else text
        fixed = release(fixed, len(held))
        if fixed is not None and fixed != cell.text and self.restorable(cell, fixed):
            cell.text = fixed
            self.fixed_count += result.fixed_count
            self.applied_codes.extend(result.applied_codes)
        if held or fixed is None:
            result = self.check(cell.text, context)
        cell.diagnostics = self.with_escapes(cell.text, result.diagnostics, cell, later)

    def cell_review(self, cell: _Cell, held: int, later: Sequence[_Cell]) -> Optional[ReviewCallback]:
        """The review callback for one cell: proposals numbered, escapes named, and the
        cell's own source shown (hold-back directives removed, magics restored)."""
        if self.review is None:
            return None
        review = self.review

        def shown(text: str) -> str:
            released = release(text, held)
            try:
                return unmask_magics(released, cell.masked) if released is not None else text
            except MaskError:
                return released

        def ask(proposal: FixProposal) -> bool:
            diagnostics = self.with_escapes(proposal.before, proposal.diagnostics, cell, later)
            unsafe = any(d.fix is not None and d.fix.applicability is Applicability.UNSAFE for d in diagnostics)
            return review(dataclasses.replace(
                proposal, cell=cell.number, diagnostics=diagnostics, before=shown(proposal.before),
                after=shown(proposal.after), applicability=Applicability.UNSAFE if unsafe else proposal.applicability))

        return ask

    def check(self, text: str, context: "engine.ModuleContext") -> FileResult:
        return engine.check_text(text, path=self.path, config=self.config, with_fixes=self.with_fixes,
                                 context=context)

    def with_escapes(self, text: str, diagnostics: Sequence[Diagnostic], cell: _Cell,
                     later: Sequence[_Cell]) -> Tuple[Diagnostic, ...]:
        """Number the cell, and name the later cells a module-level volatile value reaches."""
        out = []
        for d in diagnostics:
            d = dataclasses.replace(d, cell=cell.number)
            if d.code in _ESCAPE_CODES:
                escape = find_escape(text, d.location.row, [(c.number, c.text) for c in later if c.analysed])
                if escape is not None:
                    name, number, row = escape
                    note = (f"{_ESCAPE_NOTE} through `{name}`: its use in cell {number} (line {row}) "
                            "is not covered")
                    fix = d.fix
                    if fix is not None and fix.applicability is Applicability.SAFE:
                        fix = dataclasses.replace(fix, applicability=Applicability.UNSAFE)
                    d = dataclasses.replace(d, fix=fix, note=f"{d.note}; {note}" if d.note else note)
            out.append(d)
        return tuple(out)

    def restorable(self, cell: _Cell, fixed: str) -> bool:
        try:
            unmask_magics(fixed, cell.masked)
        except MaskError as exc:
            self.errors.append(f"cell {cell.number}: a fix touched an IPython line ({exc}); "
                               "the cell was left untouched (this is a volfix bug)")
            return False
        return True

    def add_imports(self, needs: Dict[str, int]) -> set:
        """Add `import torch` / `import contextlib` where the module docstring says."""
        touched = set()
        import_cell = next((p for p, c in enumerate(self.cells) if c.analysed and _has_imports(c.text)), None)
        for module, first_use in sorted(needs.items()):
            position = import_cell if import_cell is not None and import_cell <= first_use else first_use
            cell = self.cells[position]
            cell.text = add_import_line(cell.text, module)
            touched.add(position)
        return touched

    def remove_unused_variable(self) -> set:
        """Drop `from torch.autograd import Variable` once no cell uses `Variable` any more."""
        touched = set()
        for local in sorted(self.variable_import_names()):
            before = self.usage(local, original=True)
            after = self.usage(local, original=False)
            if before is None or after is None or before == 0 or after > 0:
                continue
            for position, cell in enumerate(self.cells):
                if cell.analysed:
                    new = remove_variable_import(cell.text, local)
                    if new != cell.text:
                        cell.text = new
                        touched.add(position)
        return touched

    def variable_import_names(self) -> set:
        names = set()
        for cell in self.cells:
            if cell.analysed:
                names |= {local for local, _ in _variable_imports(cell.text)}
        return names

    def usage(self, name: str, *, original: bool) -> Optional[int]:
        """Loads of `name` in every code cell (magic lines and skipped cells count as uses);
        None when a cell cannot be parsed and mentions the name."""
        word = re.compile(rf"\b{re.escape(name)}\b")
        total = 0
        for cell in self.cells:
            if not cell.analysed:
                total += len(word.findall(cell.raw.source))
                continue
            text = self.original_texts[cell.number] if original else cell.text
            count = _count_loads(text, name)
            if count < 0:
                if word.search(text):
                    return None
                count = 0
            total += count
            total += sum(len(word.findall(line)) for _, lines in cell.masked.magics.values() for line in lines)
        return total

    def recheck(self, touched: set) -> None:
        """Refresh the diagnostics of cells edited after the engine ran (their lines moved)."""
        imports: Dict[str, str] = {}
        for position, cell in enumerate(self.cells):
            if not cell.analysed:
                continue
            if position in touched:
                context = engine.ModuleContext(imports=dict(imports), may_add_imports=False,
                                               may_remove_imports=False)
                result = self.check(cell.text, context)
                cell.diagnostics = self.with_escapes(cell.text, result.diagnostics, cell,
                                                     self.cells[position + 1:])
            imports = self.bindings_after(cell.text, imports)

    def new_sources(self) -> Dict[int, str]:
        """0-based cell index -> new source text, for the cells that changed."""
        out = {}
        for cell in self.cells:
            if cell.text == self.original_texts[cell.number]:
                continue
            try:
                text = unmask_magics(cell.text, cell.masked)
            except MaskError as exc:
                self.errors.append(f"cell {cell.number}: {exc}; the cell was left untouched (this is a volfix bug)")
                continue
            if text != cell.raw.source:
                out[cell.raw.index] = text
        return out


# ---------------------------------------------------------------------------------------
# Import edits on one cell's (masked) text
# ---------------------------------------------------------------------------------------


def _parse(text: str) -> Optional[ast.Module]:
    try:
        return ast.parse(text)
    except (SyntaxError, ValueError):
        return None


def _count_loads(text: str, name: str) -> int:
    """How often `name` is read in `text` (-1 when the text does not parse)."""
    tree = _parse(text)
    if tree is None:
        return -1
    return sum(1 for node in ast.walk(tree)
               if isinstance(node, ast.Name) and node.id == name and not isinstance(node.ctx, ast.Store))


def _has_imports(text: str) -> bool:
    tree = _parse(text)
    return tree is not None and any(isinstance(s, (ast.Import, ast.ImportFrom)) for s in tree.body)


def _is_placeholder(stmt: ast.stmt) -> bool:
    return (isinstance(stmt, ast.Expr) and isinstance(stmt.value, ast.Name)
            and _PLACEHOLDER.fullmatch(stmt.value.id) is not None)


def add_import_line(text: str, module: str) -> str:
    """Insert `import <module>` after the last import of the cell's leading block (its
    docstring, imports and magic lines), or after the leading magics when it has none."""
    tree = _parse(text)
    if tree is None:
        return text
    lines = split_lines(text)
    after = 0
    last_import = None
    for number, stmt in enumerate(tree.body):
        if isinstance(stmt, (ast.Import, ast.ImportFrom)):
            last_import = stmt.end_lineno
        elif _is_placeholder(stmt) or (number == 0 and isinstance(stmt, ast.Expr)
                                       and isinstance(stmt.value, ast.Constant) and isinstance(stmt.value.value, str)):
            after = stmt.end_lineno
        else:
            break
    after = last_import if last_import is not None else after
    newline = next((m.group() for ln in lines for m in [_ENDING.search(ln)] if m), "\n")
    statement = f"import {module}"
    if after >= len(lines):
        if lines and not _ENDING.search(lines[-1]):
            return text + newline + statement
        return text + statement + newline
    return "".join(lines[:after]) + statement + newline + "".join(lines[after:])


def _variable_imports(text: str) -> List[Tuple[str, ast.ImportFrom]]:
    tree = _parse(text)
    found = []
    for stmt in tree.body if tree is not None else ():
        if isinstance(stmt, ast.ImportFrom) and stmt.level == 0 and stmt.module in _VARIABLE_MODULES:
            found.extend((alias.asname or alias.name, stmt) for alias in stmt.names if alias.name == "Variable")
    return found


def remove_variable_import(text: str, local: str) -> str:
    """Remove the `from torch.autograd import Variable [as local]` binding of `local`."""
    for name, stmt in _variable_imports(text):
        if name != local:
            continue
        if len(stmt.names) == 1 and _alone_on_its_lines(text, stmt):
            lines = split_lines(text)
            # Keep a trailing comment as a line of its own, as the engine does for .py files.
            last = lines[stmt.end_lineno - 1]
            rest = last.encode("utf-8")[stmt.end_col_offset:].decode("utf-8").lstrip(" \t")
            comment = [" " * stmt.col_offset + rest] if rest.startswith("#") else []
            kept = lines[:stmt.lineno - 1] + comment + lines[stmt.end_lineno:]
            if stmt.end_lineno == len(lines) and not _ENDING.search(lines[-1]) and kept:
                kept[-1] = _ENDING.sub("", kept[-1])  # the cell had no final newline: keep it so
            return "".join(kept)
        return _drop_alias(text, local)
    return text


def _alone_on_its_lines(text: str, stmt: ast.stmt) -> bool:
    tree = _parse(text)
    key = (stmt.lineno, stmt.col_offset)
    return all((other.lineno, other.col_offset) == key or other.end_lineno < stmt.lineno
               or other.lineno > stmt.end_lineno for other in tree.body)


def _drop_alias(text: str, local: str) -> str:
    import libcst as cst
    from libcst.helpers import get_full_name_for_node

    class DropAlias(cst.CSTTransformer):
        def visit_FunctionDef(self, node: cst.FunctionDef) -> bool:
            return False

        def visit_ClassDef(self, node: cst.ClassDef) -> bool:
            return False

        def leave_ImportFrom(self, original: cst.ImportFrom, updated: cst.ImportFrom) -> cst.ImportFrom:
            module = get_full_name_for_node(updated.module) if updated.module else None
            if module not in _VARIABLE_MODULES or isinstance(updated.names, cst.ImportStar) or updated.relative:
                return updated
            names = [a for a in updated.names
                     if not (get_full_name_for_node(a.name) == "Variable"
                             and (a.evaluated_alias or "Variable") == local)]
            if not names or len(names) == len(updated.names):
                return updated
            if names[-1] is not updated.names[-1]:  # the last alias went: its comma ends the list
                last_comma = updated.names[-1].comma if updated.lpar else cst.MaybeSentinel.DEFAULT
                names[-1] = names[-1].with_changes(comma=last_comma)
            return updated.with_changes(names=names)

    return cst.parse_module(text).visit(DropAlias()).code


# ---------------------------------------------------------------------------------------
# Volatile values that outlive their cell
# ---------------------------------------------------------------------------------------

# Results of these leave autograd (SPEC §2.2): reading a tainted name through them is data.
_LEAVES_AUTOGRAD_ATTRS = frozenset({"data"})
_LEAVES_AUTOGRAD_METHODS = frozenset({"item", "tolist", "numpy"})
_LEAVES_AUTOGRAD_CALLS = frozenset({"int", "float", "len", "bool", "str", "print"})
_HOLD_DIRECTIVE = "  # volfix: ignore[{code}]"


def _autograd_reads(node: ast.AST) -> set:
    """Names whose value `node` carries on in autograd."""
    if isinstance(node, ast.Name):
        return {node.id} if not isinstance(node.ctx, ast.Store) else set()
    if isinstance(node, ast.Attribute) and node.attr in _LEAVES_AUTOGRAD_ATTRS:
        return set()
    if isinstance(node, ast.Call):
        func = node.func
        if isinstance(func, ast.Attribute) and func.attr in _LEAVES_AUTOGRAD_METHODS:
            return set()
        if isinstance(func, ast.Name) and func.id in _LEAVES_AUTOGRAD_CALLS:
            return set()
    if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef, ast.Lambda)):
        return set()
    out = set()
    for child in ast.iter_child_nodes(node):
        out |= _autograd_reads(child)
    return out


def _stored_names(target: ast.AST) -> set:
    return {n.id for n in ast.walk(target) if isinstance(n, ast.Name) and isinstance(n.ctx, ast.Store)}


def _flows(stmt: ast.stmt):
    """(stored names, value) pairs of the assignments in a module-level statement,
    nested blocks included, function and class bodies excluded."""
    if isinstance(stmt, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)):
        return
    if isinstance(stmt, ast.Assign):
        yield set().union(*(_stored_names(t) for t in stmt.targets)), stmt.value
    elif isinstance(stmt, (ast.AugAssign, ast.AnnAssign)) and stmt.value is not None:
        yield _stored_names(stmt.target), stmt.value
    elif isinstance(stmt, (ast.For, ast.AsyncFor)):
        yield _stored_names(stmt.target), stmt.iter
    elif isinstance(stmt, (ast.With, ast.AsyncWith)):
        for item in stmt.items:
            if item.optional_vars is not None:
                yield _stored_names(item.optional_vars), item.context_expr
    for field_name in ("body", "orelse", "finalbody", "handlers"):
        for child in getattr(stmt, field_name, ()):
            if isinstance(child, ast.ExceptHandler):
                for grandchild in child.body:
                    yield from _flows(grandchild)
            elif isinstance(child, ast.stmt):
                yield from _flows(child)


def _spans(node: ast.AST, row: int) -> bool:
    return node.lineno <= row <= (node.end_lineno or node.lineno)


def _module_taint(tree: ast.Module, row: int) -> set:
    """Module-level names that hold a value computed from the volatile source on `row`."""
    site = next((s for s in tree.body if _spans(s, row)), None)
    if site is None or isinstance(site, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)):
        return set()
    statements = tree.body[tree.body.index(site):]
    tainted: set = set()
    changed = True
    while changed:  # loop-carried flow: iterate to a fixpoint
        changed = False
        for stmt in statements:
            for names, value in _flows(stmt):
                if (_spans(value, row) or _autograd_reads(value) & tainted) and not names <= tainted:
                    tainted |= names
                    changed = True
    return tainted


def find_escape(text: str, row: int, later: Sequence[Tuple[int, str]]) -> Optional[Tuple[str, int, int]]:
    """The first use in a later cell of a module-level value tainted by the source on `row`:
    (name, cell number, line), or None. A name rebound before it is read stops counting."""
    tree = _parse(text)
    live = _module_taint(tree, row) if tree is not None else set()
    for number, later_text in later:
        if not live:
            return None
        later_tree = _parse(later_text)
        if later_tree is None:
            continue
        for stmt in later_tree.body:
            read = sorted(_autograd_reads(stmt) & live)
            if read:
                return read[0], number, stmt.lineno
            if isinstance(stmt, ast.Assign):
                live -= set().union(*(_stored_names(t) for t in stmt.targets))
    return None


def hold_back(text: str, held: Sequence[Diagnostic]) -> Optional[str]:
    """Append a suppression directive to each held diagnostic's line (None if impossible)."""
    if not held:
        return text
    lines = split_lines(text)
    for d in held:
        index = d.location.row - 1
        if index >= len(lines):
            return None
        content = _ENDING.sub("", lines[index])
        if content.endswith("\\"):
            return None
        lines[index] = content + _HOLD_DIRECTIVE.format(code=d.code) + lines[index][len(content):]
    return "".join(lines)


def release(text: str, count: int) -> Optional[str]:
    """Remove the directives hold_back() added (None when a fix moved or dropped one)."""
    if not count:
        return text
    pattern = re.compile("|".join(re.escape(_HOLD_DIRECTIVE.format(code=c)) for c in sorted(_ESCAPE_CODES))
                         + r"(?=\r\n|\r|\n|$)", re.M)
    new, found = pattern.subn("", text)
    return new if found == count else None
