"""Baselines: record today's findings so CI fails only on new ones.

A finding is keyed by (path relative to the root, code, normalized snippet), with a count of
how many identical findings the file holds — never by line number, so lines inserted above
a finding do not invalidate the baseline. The file is JSON:

    {
      "version": 1,
      "tool": "volfix",
      "root": ".",                       # the root, relative to the baseline file
      "findings": [
        {"path": "train.py", "code": "VF101", "snippet": "Variable(x, volatile=True)", "count": 2}
      ]
    }

`root` lets `load_baseline` resolve result paths the way `write_baseline` did, wherever the
checkout lives. Entries are sorted, so the file diffs cleanly in review.
"""
from __future__ import annotations

import json
import os
import tempfile
from collections import Counter
from dataclasses import dataclass, field, replace
from typing import Dict, Iterable, List, Optional, Sequence, Tuple

from .config import VolfixConfigError
from ..model import Diagnostic, FileResult

BASELINE_VERSION = 1

Key = Tuple[str, str, str]


def normalize_snippet(snippet: str) -> str:
    """Whitespace-insensitive snippet text: re-indenting a block keeps its findings' keys."""
    return " ".join(snippet.split())


def relative_path(path: str, root: str) -> str:
    """`path` relative to `root` with forward slashes; unchanged when it cannot be made
    relative (stdin, another drive) or lies outside the root."""
    if path in ("-", "<stdin>"):
        return path
    try:
        rel = os.path.relpath(os.path.abspath(path), os.path.abspath(root))
    except ValueError:
        return path.replace(os.sep, "/")
    if rel == os.pardir or rel.startswith(os.pardir + os.sep):
        return os.path.abspath(path).replace(os.sep, "/")
    return rel.replace(os.sep, "/")


def finding_key(rel_path: str, diagnostic: Diagnostic) -> Key:
    return (rel_path, diagnostic.code, normalize_snippet(diagnostic.snippet))


@dataclass(frozen=True)
class Baseline:
    # (relative path, code, normalized snippet) -> number of such findings recorded
    counts: Dict[Key, int] = field(default_factory=dict)
    # Absolute directory that result paths are made relative to.
    root: str = "."

    def filter(self, results: Sequence[FileResult], root: Optional[str] = None) -> List[FileResult]:
        """New FileResults without the findings recorded in the baseline.

        Each recorded entry absorbs up to `count` identical findings in its file, in order;
        any further identical finding is new and kept. Errors and fix data are kept as is.
        """
        base = root if root is not None else self.root
        left = Counter(self.counts)
        out = []
        for result in results:
            rel = relative_path(result.path, base)
            kept = []
            for diagnostic in result.diagnostics:
                key = finding_key(rel, diagnostic)
                if left[key] > 0:
                    left[key] -= 1
                else:
                    kept.append(diagnostic)
            out.append(replace(result, diagnostics=tuple(kept)))
        return out

    def __len__(self) -> int:
        return sum(self.counts.values())


def build_baseline(results: Iterable[FileResult], root: str) -> Baseline:
    counts: Counter = Counter()
    for result in results:
        rel = relative_path(result.path, root)
        for diagnostic in result.diagnostics:
            counts[finding_key(rel, diagnostic)] += 1
    return Baseline(counts=dict(counts), root=os.path.abspath(root))


def write_baseline(path: str, results: Sequence[FileResult], root: str) -> None:
    """Write the findings in `results` to `path` (atomically: temp file + rename)."""
    baseline = build_baseline(results, root)
    directory = os.path.dirname(os.path.abspath(path))
    stored_root = os.path.relpath(os.path.abspath(root), directory).replace(os.sep, "/")
    document = {
        "version": BASELINE_VERSION,
        "tool": "volfix",
        "root": stored_root,
        "findings": [
            {"path": p, "code": c, "snippet": s, "count": n}
            for (p, c, s), n in sorted(baseline.counts.items())
        ],
    }
    text = json.dumps(document, indent=2, ensure_ascii=False) + "\n"
    fd, tmp = tempfile.mkstemp(prefix=".volfix-baseline-", suffix=".tmp", dir=directory)
    try:
        with os.fdopen(fd, "w", encoding="utf-8", newline="\n") as handle:
            handle.write(text)
        os.replace(tmp, path)
    except BaseException:
        if os.path.exists(tmp):
            os.unlink(tmp)
        raise


def load_baseline(path: str, root: Optional[str] = None) -> Baseline:
    """Read a baseline file. Raises VolfixConfigError (naming the file) if it is missing,
    not JSON, of an unknown version or malformed. `root` overrides the stored root."""
    try:
        with open(path, encoding="utf-8") as handle:
            document = json.load(handle)
    except OSError as exc:
        raise VolfixConfigError(f"cannot read baseline `{path}`: {exc.strerror or exc}") from exc
    except (ValueError, UnicodeDecodeError) as exc:
        raise VolfixConfigError(f"baseline `{path}` is not valid JSON: {exc}") from exc
    if not isinstance(document, dict):
        raise VolfixConfigError(f"baseline `{path}`: expected a JSON object")
    version = document.get("version")
    if version != BASELINE_VERSION:
        raise VolfixConfigError(f"baseline `{path}`: unsupported version {version!r} "
                                f"(expected {BASELINE_VERSION}); regenerate it with --write-baseline")
    findings = document.get("findings")
    if not isinstance(findings, list):
        raise VolfixConfigError(f"baseline `{path}`: `findings` must be a list")
    counts: Dict[Key, int] = {}
    for index, entry in enumerate(findings):
        key, count = _read_entry(entry, path, index)
        counts[key] = counts.get(key, 0) + count
    stored_root = document.get("root", ".")
    if not isinstance(stored_root, str):
        raise VolfixConfigError(f"baseline `{path}`: `root` must be a string")
    if root is None:
        root = os.path.join(os.path.dirname(os.path.abspath(path)), stored_root)
    return Baseline(counts=counts, root=os.path.normpath(os.path.abspath(root)))


def _read_entry(entry: object, path: str, index: int) -> Tuple[Key, int]:
    where = f"baseline `{path}`: findings[{index}]"
    if not isinstance(entry, dict):
        raise VolfixConfigError(f"{where} must be an object")
    for name in ("path", "code", "snippet"):
        if not isinstance(entry.get(name), str):
            raise VolfixConfigError(f"{where}: `{name}` must be a string")
    count = entry.get("count", 1)
    if isinstance(count, bool) or not isinstance(count, int) or count < 1:
        raise VolfixConfigError(f"{where}: `count` must be a positive integer")
    return (entry["path"], entry["code"], normalize_snippet(entry["snippet"])), count
