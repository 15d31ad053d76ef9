"""Check and fix the code cells of a notebook (SPEC §6).

A notebook is one module run cell by cell, so its analysed code cells (IPython syntax masked)
are joined into one text and go through the same engine as a `.py` file: names, data flow
and helpers cross cells exactly as they cross statements. The document keeps each cell as a
part: a region never spans two cells (a value computed in cell 3 and used in cell 5 gets a
region in each), edits never cross a cell boundary, `import torch` goes to the first cell with
imports (when it comes no later than the first fix) or to the cell of the first fix, and
`from torch.autograd import Variable` goes when no cell uses `Variable` any more (magic lines
and skipped cells count as uses).

Diagnostics carry `cell`, the 1-based number of the cell counting *every* cell (markdown and
raw ones too), as Jupyter's "go to cell" and ruff do; rows and columns are relative to the cell.
`FileResult.source` / `fixed_source` hold the raw notebook JSON.
"""
from __future__ import annotations

import dataclasses
import re
from typing import Dict, List, Optional, Set, Tuple

from ..settings.config import Config
from ..engine import options_for
from ..engine.analyse import analyse
from ..engine.fixing import Review, compiles, fix_loop, with_fix_edits
from ..model import Diagnostic, Edit, FileResult, Location
from ..engine.review import FixProposal
from ..syntax.document import Document, join_cells, parse_joined, split_cells
from .jsonfile import NotebookError, RawNotebook, changes_only_sources, parse_notebook, splice_sources
from .magics import MaskedCell, MaskError, mask_magics, unmask_magics

_PYTHON_LANGUAGES = frozenset({"python", "python2", "python3", "ipython", "ipython2", "ipython3"})
_WORD = re.compile(r"[A-Za-z_][A-Za-z0-9_]*")


def is_python_notebook(metadata: dict) -> bool:
    """False when the notebook's kernel declares a language other than Python."""
    for key, name_key in (("kernelspec", "language"), ("language_info", "name")):
        info = metadata.get(key)
        if isinstance(info, dict) and isinstance(info.get(name_key), str) and info[name_key].strip():
            return info[name_key].strip().lower() in _PYTHON_LANGUAGES
    return True


def unreadable_diagnostic(exc: NotebookError) -> Diagnostic:
    from ..rules import registry

    return Diagnostic(code="VF002", message=f"{registry.get('VF002').MESSAGE}: {exc}",
                      location=exc.location, end_location=exc.location)


class Cells:
    """The analysed code cells of one notebook, joined."""

    def __init__(self, nb: RawNotebook):
        self.nb = nb
        self.code = [(raw, mask_magics(raw.source)) for raw in nb.cells if raw.cell_type == "code"]
        self.analysed: List[Tuple[object, MaskedCell]] = [
            (raw, masked) for raw, masked in self.code if not masked.skip and raw.source.strip()]
        self.numbers = [raw.index + 1 for raw, _ in self.analysed]
        self.text = join_cells([masked.text for _, masked in self.analysed])

    def parse(self, text: str):
        return parse_joined(text, self.numbers)

    def verify(self, original: str):
        """A check that every cell that compiled before still compiles."""
        compiled = [compiles(cell) for cell in split_cells(original)]

        def verify(text: str) -> bool:
            cells = split_cells(text)
            return len(cells) == len(compiled) and all(compiles(c) for c, ok in zip(cells, compiled) if ok)

        return verify

    def indents(self) -> Dict[int, str]:
        """Cell number -> the indentation IPython strips from it (cells that start with one)."""
        return {raw.index + 1: masked.indent for raw, masked in self.analysed if masked.indent}

    def extra_uses(self) -> Set[str]:
        """Names used where the analysis cannot see: magic lines and skipped cells."""
        words: Set[str] = set()
        for raw, masked in self.code:
            if masked.skip:
                words.update(_WORD.findall(raw.source))
            for _prefix, lines in masked.magics.values():
                for line in lines:
                    words.update(_WORD.findall(line))
        return words

    def restored(self, position: int, text: str) -> str:
        """A cell's text as the notebook holds it (magics back, no added newline)."""
        raw, masked = self.analysed[position]
        if not masked.text.endswith(("\n", "\r")) and text.endswith("\n"):
            text = text[:-1]
        try:
            return unmask_magics(text, masked)
        except MaskError:
            return text

    def reviewed(self, review: Optional[Review]) -> Optional[Review]:
        """A review callback shown cells, not the joined text: a proposal changing one cell
        carries that cell's number and source; one changing several shows each, headed."""
        if review is None:
            return None

        def ask(proposal: FixProposal) -> bool:
            before, after = split_cells(proposal.before), split_cells(proposal.after)
            changed = [i for i, (a, b) in enumerate(zip(before, after)) if a != b]
            doc = self.parse(proposal.before)[0]
            diagnostics = tuple(map_diagnostic(d, doc) for d in proposal.diagnostics)
            if len(changed) == 1:
                i = changed[0]
                return review(dataclasses.replace(proposal, cell=self.numbers[i], diagnostics=diagnostics,
                                                  before=self.restored(i, before[i]),
                                                  after=self.restored(i, after[i])))

            def view(cells: List[str]) -> str:
                return "".join(f"# cell {self.numbers[i]}\n{self.restored(i, cells[i])}".rstrip("\n") + "\n"
                               for i in changed)

            each = tuple((self.numbers[i], self.restored(i, before[i]), self.restored(i, after[i]))
                         for i in changed)
            return review(dataclasses.replace(proposal, diagnostics=diagnostics, before=view(before),
                                              after=view(after), cells=each))

        return ask

    def new_sources(self, fixed: str, errors: List[str]) -> Dict[int, str]:
        """0-based cell index -> new source text, for the cells that changed."""
        out: Dict[int, str] = {}
        for (raw, masked), text in zip(self.analysed, split_cells(fixed)):
            if not masked.text.endswith(("\n", "\r")) and text.endswith("\n"):
                text = text[:-1]
            if text == masked.text:
                continue
            try:
                restored = unmask_magics(text, masked)
            except MaskError as exc:
                # The other cells' fixes may rely on this one's (an import removed in the first
                # cell while this one still calls `Variable`): none is written.
                errors.append(f"cell {raw.index + 1}: {exc}; the notebook was left untouched (this is a volfix bug)")
                return {}
            if restored != raw.source:
                out[raw.index] = restored
        return out


def process_notebook(data: bytes, *, path: str, config: Config, mode: str = "check",
                     unsafe_fixes: bool = False, with_fixes: bool = False,
                     review: Optional[Review] = None, links=None) -> Tuple[FileResult, Optional[bytes]]:
    """Check (mode "check") or fix ("fix", "diff") the code cells of a notebook.

    Returns the result and, in fix/diff mode when something changed, the new file bytes (the
    caller writes them in fix mode). A notebook that is not valid JSON or has no nbformat
    version gives one VF002 diagnostic and no exception.
    """
    if mode not in ("check", "fix", "diff"):
        raise ValueError(f"unknown mode {mode!r}")
    from ..syntax.deep import call_deep

    return call_deep(lambda: _process_notebook(data, path=path, config=config, mode=mode, unsafe_fixes=unsafe_fixes,
                                               with_fixes=with_fixes, review=review, links=links))


def _process_notebook(data: bytes, *, path: str, config: Config, mode: str, unsafe_fixes: bool, with_fixes: bool,
                      review: Optional[Review], links=None) -> Tuple[FileResult, Optional[bytes]]:
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
    cells = Cells(nb)
    options = options_for(config, with_fixes=with_fixes, links=links)  # links: `from main import *`
    if not cells.analysed:
        return FileResult(path=path, source=source, fixed_source=None if mode == "check" else source), None
    if mode == "check":
        return FileResult(path=path, diagnostics=check_cells(cells, cells.text, options), source=source), None
    errors: List[str] = []
    fixed, applied, problems = fix_loop(cells.text, options, unsafe=unsafe_fixes, parse=cells.parse,
                                        verify=cells.verify(cells.text), extra_used=cells.extra_uses(),
                                        review=cells.reviewed(review), path=path)
    new_sources = cells.new_sources(fixed, errors)
    if errors:  # a cell could not be restored: nothing was written
        fixed = cells.text
    new_bytes = splice_sources(nb, new_sources) if new_sources else data
    new_text = new_bytes.decode("utf-8")
    if new_sources and not changes_only_sources(source, new_text, new_sources):
        errors.append("rewriting the notebook changed more than the fixed cells' sources; "
                      "the file was left untouched (this is a volfix bug)")
        new_sources, new_bytes, new_text = {}, data, source
        fixed = cells.text
    changed = new_bytes != data
    diagnostics = check_cells(cells, fixed, options) + tuple(map_diagnostic(d, cells.parse(cells.text)[0])
                                                             for d in problems)
    applied_in_cells = tuple(map_diagnostic(d, cells.parse(cells.text)[0]) for d in applied)
    result = FileResult(path=path, diagnostics=diagnostics, source=source, fixed_source=new_text,
                        fixed_count=len(applied) if changed else 0, changed=changed,
                        error="; ".join(errors) or None,
                        applied_codes=tuple(d.code for d in applied) if changed else (),
                        applied=applied_in_cells if changed else ())
    return result, (new_bytes if changed else None)


def check_cells(cells: Cells, text: str, options) -> Tuple[Diagnostic, ...]:
    doc, errors = cells.parse(text)
    if doc is None:
        return ()
    analysis = analyse(text, options, doc=doc, parse_errors=tuple(errors))
    diagnostics = analysis.diagnostics
    if options.with_fixes:
        diagnostics = with_fix_edits(text, analysis, options, parse=cells.parse, verify=cells.verify(text),
                                     extra_used=frozenset(cells.extra_uses()))
    indents = cells.indents()
    return tuple(indented(map_diagnostic(d, doc), indents) for d in diagnostics)


def indented(d: Diagnostic, indents: Dict[int, str]) -> Diagnostic:
    """A finding in a cell that IPython dedents (it starts with a space): columns of the cell
    as written."""
    shift = len(indents.get(d.cell, "")) if d.cell is not None else 0
    if not shift:
        return d

    def move(loc: Location) -> Location:
        return Location(loc.row, loc.column + shift)

    fix = d.fix
    if fix is not None and fix.edits:
        fix = dataclasses.replace(fix, edits=tuple(Edit(e.content, move(e.location), move(e.end_location))
                                                   for e in fix.edits))
    return dataclasses.replace(d, location=move(d.location), end_location=move(d.end_location), fix=fix)


def map_diagnostic(d: Diagnostic, doc: Optional[Document]) -> Diagnostic:
    """A diagnostic located in the joined text, located in its cell."""
    if d.cell is not None or doc is None:
        return d
    part = doc.part_of_row(d.location.row)
    if part is None:
        return d
    shift = part.first_row - 1

    def move(loc: Location) -> Location:
        return Location(max(1, loc.row - shift), loc.column)

    fix = d.fix
    if fix is not None and fix.edits:
        # Edits are cell-relative like the finding: a fix that also edits another cell (an
        # import added or removed there) cannot be given as edits of this one.
        inside = all(part.first_row <= e.location.row and e.end_location.row <= part.last_row + 1
                     for e in fix.edits)
        fix = dataclasses.replace(fix, edits=tuple(Edit(e.content, move(e.location), move(e.end_location))
                                                   for e in fix.edits) if inside else ())
    return dataclasses.replace(d, cell=part.number, location=move(d.location), end_location=move(d.end_location),
                               fix=fix, note=_note_in_cells(d.note, doc, part))


_NOTE_LINE = re.compile(r"\b(lines? )(\d+)(?:-(\d+))?\b(?! of cell)")


def _note_in_cells(note: Optional[str], doc: Document, home) -> Optional[str]:
    """A note's "line 28" of the joined text as the cell's "line 5" (another cell's "line 1 of
    cell 3"), as the finding's location and the fix's title count them."""
    if not note:
        return note

    def cell_line(match) -> str:
        first, last = int(match.group(2)), int(match.group(3) or match.group(2))
        part = doc.part_of_row(first)
        if part is None or part.number is None or doc.part_of_row(last) is not part:
            return match.group(0)
        span = f"{first - part.first_row + 1}" + (f"-{last - part.first_row + 1}" if match.group(3) else "")
        return f"{match.group(1)}{span}" + ("" if part is home else f" of cell {part.number}")

    return _NOTE_LINE.sub(cell_line, note)
