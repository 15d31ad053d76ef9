"""Jupyter notebooks (SPEC §6): the raw JSON, IPython syntax, and checking/fixing their cells."""
from .jsonfile import (NotebookError, RawNotebook, cell_sources, changes_only_sources, parse_notebook,
                       splice_sources, split_source_lines)
from .magics import MaskError, MaskedCell, mask_magics, unmask_magics
from .run import process_notebook

__all__ = ["MaskError", "MaskedCell", "NotebookError", "RawNotebook", "cell_sources", "changes_only_sources",
           "mask_magics", "parse_notebook", "process_notebook", "splice_sources", "split_source_lines",
           "unmask_magics"]
