"""The raw JSON of a notebook (SPEC §6): where each cell's `source` value is, and how to splice
new sources back so that the written file is byte-identical except those values.

Only the JSON values of the edited cells' `source` change, re-encoded in the file's own style
(a string stays a string, a list of lines keeps its item indentation, unchanged lines keep
their original escaping). Outputs, metadata, execution counts, key order and the trailing
newline are untouched; the result is verified with `json.loads`.
"""
from __future__ import annotations

import json
import re
from dataclasses import dataclass, field
from typing import Dict, List, Optional, Tuple

from ..model import Location

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
    has_raw_non_ascii = not text.isascii()  # (a loop over the characters took seconds on big notebooks)
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


def code_text(data: bytes) -> str:
    """The sources of a notebook's code cells, joined by newlines: what scans of its text read
    (its imports, its `sys.path` calls, its star imports). Raises `NotebookError`."""
    return "\n".join(cell.source for cell in parse_notebook(data).cells if cell.cell_type == "code")


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
