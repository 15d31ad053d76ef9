"""A sweep across many repositories, split over machines (issue 27).

`volfix check --shard K/N --format json-lines -o shard-K.jsonl` checks the K-th of N parts of
the tree; `volfix merge shard-*.jsonl` turns the parts back into one report and one summary,
the ones a single run prints.

- **Whole projects.** A part is a set of projects (`discovery.ProjectRoots`: the nearest
  `pyproject.toml`, `setup.py`, `setup.cfg` or `.git` above each file), never a part of one:
  helpers link inside one project, so a project checked alone finds what the whole run does.
- **Deterministic.** Every shard walks the whole tree (cheap: no file is read) and computes
  the same assignment: projects largest first (by files, ties by their path relative to the
  current directory), each to the part with the fewest files so far. Shards of one checkout
  at one path, with one command line, cover every file exactly once.
- **Merge.** `json-lines` is one finding a line, absolute paths (ruff's shape,
  `reporters.json_`); the merge reads every line back into results and renders them in any
  format, sorted as a run sorts them: the same bytes as one run for every format but
  `junit`, whose passing cases (checked files without findings) json-lines does not hold.
  The few things json-lines leaves out that the formats show (code frames, SARIF's snippets
  and fingerprints) come from the files themselves, so merge in a checkout of the same tree.
  Files that fail (a volfix bug) fail their shard's job (exit 2, the error on stderr): they
  are not in its output.
"""
from __future__ import annotations

import json
import os
from dataclasses import replace
from typing import Dict, Iterable, List, Optional, Sequence, Tuple

from ..model import Applicability, Diagnostic, Edit, FileResult, Fix, Location

Shard = Tuple[int, int]  # (K, N): the K-th of N parts, 1-based


def parse_shard(text: str) -> Shard:
    """`"2/5"` -> (2, 5). ValueError unless 1 <= K <= N."""
    k, sep, n = text.partition("/")
    if not sep or not k.strip().isdigit() or not n.strip().isdigit():
        raise ValueError(f"--shard takes K/N (the K-th of N parts, from 1), not {text!r}")
    shard = int(k), int(n)
    if not 1 <= shard[0] <= shard[1]:
        raise ValueError(f"--shard {text}: K must be between 1 and N")
    return shard


def select(files: Sequence[str], shard: Shard, base: Optional[str] = None) -> List[str]:
    """The files of the projects that fall to `shard` (sorted)."""
    from ..files.discovery import ProjectRoots

    base = base or os.getcwd()
    groups = ProjectRoots().group(files)
    k, n = shard

    def where(root: Optional[str]) -> str:
        return "" if root is None else os.path.relpath(root, base).replace(os.sep, "/")

    loads = [0] * n
    chosen: List[str] = []
    for root, members in sorted(groups.items(), key=lambda item: (-len(item[1]), where(item[0]))):
        part = min(range(n), key=lambda i: (loads[i], i))
        loads[part] += len(members)
        if part == k - 1:
            chosen.extend(members)
    return sorted(chosen)


def read_findings(paths: Iterable[str], cwd: Optional[str] = None) -> List[FileResult]:
    """The results of `json-lines` outputs, one FileResult per file (shown relative to `cwd`
    when below it), with its source when the file is here to show code frames. ValueError
    names the file and line that is not a finding."""
    from ..files.discovery import display_path

    cwd = cwd or os.getcwd()
    by_file: Dict[str, List[Diagnostic]] = {}
    for path in paths:
        with open(path, encoding="utf-8") as handle:
            for number, line in enumerate(handle, 1):
                if not line.strip():
                    continue
                try:
                    item = json.loads(line)
                    by_file.setdefault(item["filename"], []).append(_diagnostic(item))
                except (ValueError, KeyError, TypeError) as error:
                    raise ValueError(f"{path}:{number}: not a volfix json-lines finding ({error})") from None
    results = []
    for filename, diagnostics in by_file.items():
        shown = filename if filename.startswith("<") else display_path(filename, cwd)
        source = _source(filename)
        if source is not None:
            diagnostics = [replace(d, snippet=_snippet(source, d)) for d in diagnostics]
        results.append(FileResult(shown, tuple(diagnostics), source=source))
    return sorted(results, key=lambda r: r.path)


def _snippet(source: str, d: Diagnostic) -> str:
    """What the engine keeps of the flagged text (`Diagnostic.snippet`: SARIF's snippet and
    fingerprint, JUnit's body), which json-lines leaves out: its first line, from the file."""
    if d.code == "VF301":
        return "async="  # the rule names the keyword itself
    text = source
    if d.cell is not None:
        from ..reporters.text import notebook_cell_sources

        cells = notebook_cell_sources(source) or {}
        text = cells.get(d.cell, "")
    lines = text.splitlines()
    if not 1 <= d.location.row <= len(lines):
        return ""
    line = lines[d.location.row - 1]
    end = d.end_location.column - 1 if d.end_location.row == d.location.row else len(line)
    return line[d.location.column - 1:end].strip()


def _location(raw: dict) -> Location:
    return Location(int(raw["row"]), int(raw["column"]))


def _diagnostic(item: dict) -> Diagnostic:
    fix = None
    if item.get("fix") is not None:
        raw = item["fix"]
        fix = Fix(Applicability(raw["applicability"]), raw.get("message") or "",
                  tuple(Edit(e["content"], _location(e["location"]), _location(e["end_location"]))
                        for e in raw["edits"]))
    return Diagnostic(str(item["code"]), str(item["message"]), _location(item["location"]),
                      _location(item["end_location"]), fix, item.get("note"), item.get("cell"))


def _source(filename: str) -> Optional[str]:
    from ..files import sourcefile
    from .scan import read_bytes

    data = read_bytes(filename) if not filename.startswith("<") else None
    if data is None:
        return None
    try:
        return sourcefile.decode_source(data).text
    except sourcefile.SourceDecodeError:
        return None
