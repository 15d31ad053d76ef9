"""The one parse helper: text (or notebook cells) -> a `Document` the rules and fixes work on.

`x.cuda(async=True)` is a syntax error since Python 3.7, so `async=` keywords are found with
the tokenizer first and masked with a same-length name (every other column on the line stays
exact); VF301 renames them. A notebook is one module run cell by cell: its analysed cells are
joined into one text, each cell a `Part`, and their trees are parsed separately and laid end to
end, so a cell that does not parse only loses itself and `from __future__` in a later cell is
no error. Every layer (rules, data flow, regions) sees one module; fixes never cross a part.
"""
from __future__ import annotations

import ast
import warnings
from dataclasses import dataclass, field
from typing import List, Optional, Sequence, Tuple, Union

from . import big_files
from . import async_keywords
from .async_keywords import AsyncKeyword
from .positions import SourceText, line_breaks, physical_lines

PARSE_ERRORS = (SyntaxError, ValueError, RecursionError, MemoryError)


@dataclass(frozen=True)
class ParseError:
    """Why a text (or one cell) could not be parsed: a VF001 or VF002 finding."""

    code: str  # "VF001" (not Python 3) or "VF002" (not text: null bytes)
    message: str
    row: int = 1
    col: int = 1  # 1-based
    part: Optional[int] = None  # the notebook cell


@dataclass(frozen=True)
class Part:
    """One notebook cell (or the whole file) inside the document text."""

    number: Optional[int]  # 1-based cell number over all cells; None for a .py file
    first_row: int  # 1-based, in the document
    last_row: int
    start: int  # offsets in the document text
    end: int


@dataclass
class Document:
    text: str  # the analysed text: `async=` masked (and magics, in cells)
    tree: ast.Module
    src: SourceText
    async_sites: List[AsyncKeyword] = field(default_factory=list)
    parts: List[Part] = field(default_factory=list)
    _index: object = None

    def index(self, inherited: Optional[dict] = None):
        """The module index (built once)."""
        if self._index is None:
            from .index import ModuleIndex

            self._index = ModuleIndex(self.tree, self.src, inherited=inherited,
                                      notebook=any(part.number is not None for part in self.parts))
        return self._index

    def part_at(self, offset: int) -> Optional[Part]:
        for part in self.parts:
            if part.start <= offset < part.end or (part.start == offset == part.end):
                return part
        return self.parts[-1] if self.parts and offset == len(self.text) else None

    def part_of_row(self, row: int) -> Optional[Part]:
        for part in self.parts:
            if part.first_row <= row <= part.last_row:
                return part
        return None


def compile_error(text: str) -> Optional[SyntaxError]:
    """Why a text that parses does not compile (None when it does): what only the compiler
    checks, such as `global e` after an assignment to `e` (Python 2 allowed it). Compiled with
    `async=` keywords masked, as the analysis sees the text."""
    masked, _ = mask_async(text)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")  # the user's `x is not "a"` is theirs to hear about, not volfix's
        try:
            compile(masked, "<volfix>", "exec", dont_inherit=True)
        except SyntaxError as exc:
            return exc
        except PARSE_ERRORS as exc:
            return SyntaxError(str(exc) or type(exc).__name__)
    return None


def mask_async(text: str) -> Tuple[str, List[AsyncKeyword]]:
    masked, sites, _ = async_keywords.mask_async(text)
    return masked, sites


def parse_tree(text: str) -> Union[ast.Module, ParseError]:
    """`ast.parse`, with every way it can fail turned into a ParseError."""
    try:
        return ast.parse(text)
    except SyntaxError as exc:
        row = exc.lineno or 1
        return ParseError("VF001", f"{exc.msg} (line {exc.lineno})" if exc.lineno else exc.msg,
                          row, max(exc.offset or 1, 1))
    except (RecursionError, MemoryError):
        return ParseError("VF001", "too deeply nested for the parser")
    except ValueError as exc:  # null bytes
        return ParseError("VF002", str(exc))


def parse_document(text: str, src: Optional[SourceText] = None, extra_words: Sequence[str] = ()
                   ) -> Union[Document, ParseError]:
    """Parse one file's text (already decoded). `async=` parameters of a def cannot be
    renamed without changing an API: such a file stays unparsable (VF001)."""
    src = src if src is not None and src.text == text else SourceText(text)
    big = line_breaks(text) >= big_files.BIG_FILE_LINES
    masked, sites, parsed = async_keywords.mask_async(text, guess_first=not big)
    in_def = [s for s in sites if s.in_def]
    if in_def:
        first = in_def[0]
        return ParseError("VF001", f"`async` is a reserved keyword since Python 3.7 and names a parameter at "
                                   f"line {first.row}; renaming it would change an API, so do it by hand",
                          first.row, first.col + 1)
    tree = parsed
    if tree is None and big:
        tree = big_files.parse_big(masked, physical_lines(masked), extra_words)
    if tree is None:
        tree = parse_tree(masked)
    if isinstance(tree, ParseError):
        return tree
    # The masked text differs from `text` only where `async` became a same-length name:
    # positions, lines, comments and strings are the same.
    return Document(masked, tree, SourceText(masked) if sites else src, sites,
                    [Part(None, 1, max(1, len(src.line_starts)), 0, len(text))])


# Between two cells of a notebook's joined text: a comment line no edit touches (edits never
# reach past their statements' lines), so the cells can be cut apart again after fixing.
CELL_SEPARATOR = "#\x1e\n"


def join_cells(cells: Sequence[str]) -> str:
    """The cells' texts as one text (a newline added where a cell has none)."""
    return "".join(c if c.endswith(("\n", "\r")) or not c else c + "\n" for c in cells[:1]) + "".join(
        CELL_SEPARATOR + (c if c.endswith(("\n", "\r")) or not c else c + "\n") for c in cells[1:])


def split_cells(text: str) -> List[str]:
    return text.split(CELL_SEPARATOR)


def parse_joined(text: str, numbers: Sequence[int]) -> Tuple[Optional[Document], List[ParseError]]:
    """Parse a notebook's joined cells (`join_cells`) into one document whose parts are the
    cells, numbered `numbers`; cells that do not parse are left out of the tree and reported."""
    errors: List[ParseError] = []
    parts: List[Part] = []
    body: List[ast.stmt] = []
    sites_all: List[AsyncKeyword] = []
    masked_cells: List[str] = []
    offset, row = 0, 1
    for number, cell in zip(numbers, split_cells(text)):
        rows = cell.count("\n") + cell.count("\r") - cell.count("\r\n")
        rows = max(rows, 1) if cell else 0
        parsed = parse_document(cell) if cell.strip() else None
        if isinstance(parsed, ParseError):
            errors.append(ParseError(parsed.code, parsed.message, parsed.row, parsed.col, number))
            masked_cells.append(cell)
        elif parsed is not None:
            if row > 1:
                ast.increment_lineno(parsed.tree, row - 1)
            body.extend(parsed.tree.body)
            sites_all.extend(AsyncKeyword(s.row + row - 1, s.col, s.callee, s.in_def) for s in parsed.async_sites)
            masked_cells.append(parsed.text)
        else:
            masked_cells.append(cell)
        parts.append(Part(number, row, row + max(rows, 1) - 1, offset, offset + len(cell)))
        offset += len(cell) + len(CELL_SEPARATOR)
        row += rows + 1
    masked = CELL_SEPARATOR.join(masked_cells)
    tree = ast.Module(body=body, type_ignores=[])
    return Document(masked, tree, SourceText(masked), sites_all, parts), errors
