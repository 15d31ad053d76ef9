"""Output formats. Each format is a function `render(results, ctx) -> str`.

The modules are imported only when their format is asked for, so `volfix --version`
and the other formats never pay for them.
"""
from __future__ import annotations

import importlib
from typing import Callable, Dict, Iterator, List, Tuple

from ..model import Diagnostic, FileResult
from .base import ReportContext

Renderer = Callable[[List[FileResult], ReportContext], str]

# format name -> (module under volfix.reporters, function name)
_FORMATS: Dict[str, Tuple[str, str]] = {
    "full": ("text", "render_full"),
    "concise": ("text", "render_concise"),
    "json": ("json_", "render"),
    "json-lines": ("json_", "render_lines"),
    "sarif": ("sarif", "render"),
    "github": ("github", "render"),
    "junit": ("junit", "render"),
}

FORMATS: Tuple[str, ...] = tuple(_FORMATS)


def get_renderer(name: str) -> Renderer:
    """The render function for an output format name (one of FORMATS)."""
    module_name, attr = _FORMATS[name]
    module = importlib.import_module(f"{__name__}.{module_name}")
    return getattr(module, attr)


def is_human_format(name: str) -> bool:
    """Formats meant for people: they get a summary, --show-fixes and --statistics tables."""
    return name in ("full", "concise")


def iter_findings(results: List[FileResult]) -> Iterator[Tuple[FileResult, Diagnostic]]:
    """Every (file, diagnostic) pair, files by path and findings by cell, position and code."""
    for result in sorted(results, key=lambda r: r.path):
        for diagnostic in sorted(result.diagnostics, key=_diagnostic_order):
            yield result, diagnostic


def _diagnostic_order(d: Diagnostic) -> tuple:
    return (d.cell or 0, d.location, d.end_location, d.code)
