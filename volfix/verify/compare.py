"""Aligning the original's trace with the migrated program's, and what differs.

Lines move between the two versions of a file (a `with torch.no_grad():` line, re-indented
statements), so events are aligned by what they are and where they come from, not by line:
a forward by (module class, file, calling function), a backward by (kind, file, function),
an optimizer step by (optimizer class, file, function); within such a key the n-th event of
the original pairs with the n-th of the migrated run. Lines of the original are mapped to
the working tree's with difflib (stripped lines, so re-indentation still matches) to name
every site as the user's current file has it.

What counts: graph presence of every top-level forward, training mode, whether each
backward/grad/step ran or raised, the calls made, the exit status and exception. Grad mode
is not compared (0.3 ran a volatile forward with grad mode on and recorded nothing), nor is
time: nothing about timing is recorded.
"""
from __future__ import annotations

import difflib
import os
from collections import OrderedDict
from dataclasses import dataclass
from typing import Callable, Dict, List, Optional, Tuple

from .runs import Run


@dataclass(frozen=True)
class Finding:
    """One difference, at a site of the working tree (file relative to the project root)."""

    kind: str  # graph-added, graph-removed, mode-changed, backward-raises, backward-runs,
    #            step-raises, step-runs, forward-raises, forward-runs, calls-changed, exit-status,
    #            scalar-read (`volfix.verify.scalars`), scalar-gradient (`volfix.verify.gradients`)
    file: Optional[str]
    line: Optional[int]
    message: str
    count: int = 1


@dataclass
class Comparison:
    findings: List[Finding]
    notes: List[str]
    memory_before: int
    memory_after: int
    forwards_before: int
    forwards_after: int
    graphs_before: int
    graphs_after: int

    @property
    def agree(self) -> bool:
        return not self.findings


class LineMap:
    """Original line -> working-tree line, for each file (difflib on stripped lines)."""

    def __init__(self, original_root: str, work_root: str) -> None:
        self.original_root, self.work_root = original_root, work_root
        self._maps: Dict[str, Dict[int, int]] = {}
        self._originals: Dict[str, Optional[List[str]]] = {}  # file -> the original's lines

    def line(self, file: Optional[str], line: Optional[int]) -> Optional[int]:
        if file is None or line is None or file.startswith("<"):
            return line
        if file not in self._maps:
            self._maps[file] = self._build(file)
        mapping = self._maps[file]
        return mapping.get(line, line) if mapping else line

    def original_line(self, file: str, line: int) -> Optional[str]:
        """Line `line` of the original's `file`, without its newline (None past its end)."""
        lines = self._original(file)
        return lines[line - 1] if lines is not None and 1 <= line <= len(lines) else None

    def _original(self, file: str) -> Optional[List[str]]:
        if file not in self._originals:
            self._originals[file] = _lines(os.path.join(self.original_root, file))
        return self._originals[file]

    def _build(self, file: str) -> Dict[int, int]:
        original = self._original(file)
        after = _lines(os.path.join(self.work_root, file))
        if original is None or after is None:
            return {}
        before = [text.strip() for text in original]
        after = [text.strip() for text in after]
        mapping: Dict[int, int] = {}
        matcher = difflib.SequenceMatcher(None, before, after, autojunk=False)
        for tag, i1, i2, j1, j2 in matcher.get_opcodes():
            for offset, i in enumerate(range(i1, i2)):
                # equal: one to one; replaced or deleted: the nearest line of the new block
                j = j1 + min(offset, max(j2 - j1 - 1, 0)) if tag != "equal" else j1 + offset
                mapping[i + 1] = j + 1 if j2 > j1 or tag == "equal" else j1 + 1
        return mapping


def _lines(path: str) -> Optional[List[str]]:
    """The file's lines without their line endings (None when it cannot be read)."""
    try:
        with open(path, encoding="utf-8", errors="replace") as handle:
            return [line.rstrip("\r\n") for line in handle]
    except OSError:
        return None


def _key(event: Dict) -> Tuple:
    kind = event["e"]
    what = event.get("module") or event.get("kind") or event.get("optimizer")
    return kind, what, event.get("file"), event.get("func")


def _group(events: List[Dict]) -> "OrderedDict[Tuple, List[Dict]]":
    groups: "OrderedDict[Tuple, List[Dict]]" = OrderedDict()
    for event in events:
        groups.setdefault(_key(event), []).append(event)
    return groups


def _site(file: Optional[str], line: Optional[int]) -> str:
    if file is None:
        return "an unknown site (outside the project)"
    return f"{file}:{line}"


def _megabytes(size: float) -> str:
    if size >= 1e9:
        return f"{size / 1e9:.1f} GB"
    if size >= 1e6:
        return f"{size / 1e6:.1f} MB"
    if size >= 1e3:
        return f"{size / 1e3:.1f} kB"
    return f"{int(size)} bytes"


def _what(key: Tuple) -> str:
    kind, what = key[0], key[1]
    if kind == "forward":
        return f"forward of `{what}`"
    if kind == "step":
        return f"optimizer step (`{what}`)"
    return "backward" if what == "backward" else f"`torch.{what}`"


class _Collector:
    """Findings grouped by (kind, site, message); a loop repeating one difference is one finding."""

    def __init__(self) -> None:
        self._found: "OrderedDict[Tuple, List]" = OrderedDict()

    def add(self, kind: str, file: Optional[str], line: Optional[int],
            message: Callable[[int], str], detail: float = 0) -> None:
        slot = self._found.setdefault((kind, file, line, message(0)), [message, 0, 0.0])
        slot[1] += 1
        slot[2] += detail

    def findings(self) -> List[Finding]:
        return [Finding(kind, file, line, message(total / count if count else 0), count)
                for (kind, file, line, _), (message, count, total) in self._found.items()]


def compare(before: Run, after: Run, lines: LineMap) -> Comparison:
    """Compare the original's run (0.3 semantics) with the migrated program's run."""
    collector, notes = _Collector(), []
    groups_before, groups_after = _group(before.events), _group(after.events)
    missing_before = missing_after = 0  # events past the end of a run that stopped early
    for key in list(groups_before) + [k for k in groups_after if k not in groups_before]:
        old, new = groups_before.get(key, []), groups_after.get(key, [])
        for b, a in zip(old, new):
            _compare_pair(key, b, a, collector)
        if len(old) == len(new):
            continue
        if len(old) > len(new) and after.ended_abnormally:
            missing_after += len(old) - len(new)
        elif len(new) > len(old) and before.ended_abnormally:
            missing_before += len(new) - len(old)
        else:
            _calls_changed(key, old, new, lines, collector)
    if missing_after:
        notes.append(f"the migrated run stopped early ({_ending(after)}): {missing_after} calls "
                     "the original made after that point were not compared")
    if missing_before:
        notes.append(f"the original run stopped early ({_ending(before)}): {missing_before} calls "
                     "the migrated program made after that point were not compared")
    _compare_endings(before, after, lines, collector, notes)
    forwards = lambda run: [e for e in run.events if e["e"] == "forward"]  # noqa: E731
    return Comparison(collector.findings(), notes,
                      sum(e["saved"] for e in forwards(before)), sum(e["saved"] for e in forwards(after)),
                      len(forwards(before)), len(forwards(after)),
                      sum(e["graph"] for e in forwards(before)), sum(e["graph"] for e in forwards(after)))


def _calls_changed(key: Tuple, old: List[Dict], new: List[Dict], lines: LineMap,
                   collector: _Collector) -> None:
    site = new[0] if new else old[0]
    file = site["file"]
    line = site["line"] if new else lines.line(file, site["line"])
    message = (f"{_what(key)} at {_site(file, line)} ran {_times(len(old))} before the "
               f"migration and {_times(len(new))} after")
    collector.add("calls-changed", file, line, lambda _: message)


def _times(count: int) -> str:
    return "once" if count == 1 else ("never" if count == 0 else f"{count} times")


def _compare_pair(key: Tuple, b: Dict, a: Dict, collector: _Collector) -> None:
    file, line, what = a["file"], a["line"], _what(key)
    where = _site(file, line)
    if key[0] == "forward":
        if b["raised"] != a["raised"]:
            if a["raised"]:
                collector.add("forward-raises", file, line, lambda _: f"{what} at {where} raises "
                              f"{a['raised']} after the migration (it did not before)")
            else:
                collector.add("forward-runs", file, line, lambda _: f"{what} at {where} raised "
                              f"{b['raised']} before the migration and runs now")
            return
        if b["graph"] != a["graph"]:
            if a["graph"]:
                collector.add("graph-added", file, line, lambda saved: f"{what} at {where} records "
                              f"a graph after the migration (it did not before): "
                              f"{_megabytes(saved)} saved per call", detail=a["saved"])
            else:
                collector.add("graph-removed", file, line, lambda _: f"{what} at {where} records no "
                              "graph after the migration (it did before): nothing to train through")
        if b["training"] != a["training"]:
            mode = lambda t: "train" if t else "eval"  # noqa: E731
            collector.add("mode-changed", file, line, lambda _: f"{what} at {where} runs in "
                          f"{mode(a['training'])} mode after the migration ({mode(b['training'])} before)")
        return
    if bool(b["error"]) == bool(a["error"]):
        return
    if a["error"]:
        collector.add("backward-raises" if key[0] == "backward" else "step-raises", file, line,
                      lambda _: f"{what} at {where} ran before the migration and raises now: {a['error']}")
    else:
        collector.add("backward-runs" if key[0] == "backward" else "step-runs", file, line,
                      lambda _: f"{what} at {where} raised before the migration ({b['error']}) "
                      "and runs now")


def _ending(run: Run) -> str:
    if run.timed_out:
        return "time-out"
    if run.status is None:
        return "no exit status: killed, or left through os._exit"
    if run.exception:
        return f"{run.exception['message']} at {_site(run.exception['file'], run.exception['line'])}"
    return f"exit status {run.status}"


def _compare_endings(before: Run, after: Run, lines: LineMap, collector: _Collector,
                     notes: List[str]) -> None:
    if before.timed_out or after.timed_out:
        which = " and ".join(name for name, run in (("original", before), ("migrated", after))
                             if run.timed_out)
        notes.append(f"time-out: the {which} run was stopped; the calls both runs made were compared, "
                     "exit statuses were not")
        return
    exception_before = _exception_key(before, lines)
    exception_after = _exception_key(after, lines)
    if before.status == after.status and exception_before == exception_after:
        if before.status not in (0, None):  # agreeing on a failure is agreeing on less
            notes.append(f"both runs failed the same way ({_ending(before)}): the original failed under "
                         f"the 0.3 semantics too, so only the calls made before the failure were compared")
        return
    status = lambda run: "none (killed)" if run.status is None else str(run.status)  # noqa: E731
    message = f"exit status {status(before)} before the migration, {status(after)} after"
    details = []
    if after.exception and exception_after != exception_before:
        details.append(f"raises {after.exception['message']} at "
                       f"{_site(after.exception['file'], after.exception['line'])} now")
    if before.exception and exception_after != exception_before:
        line = lines.line(before.exception["file"], before.exception["line"])
        details.append(f"raised {before.exception['message']} at "
                       f"{_site(before.exception['file'], line)} before")
    if details:
        message += ": " + "; ".join(details)
    site = after.exception or {"file": None, "line": None}
    collector.add("exit-status", site.get("file"), site.get("line"), lambda _: message)


def _exception_key(run: Run, lines: LineMap) -> Optional[Tuple]:
    exception = run.exception
    if not exception:
        return None
    return exception["type"], exception["file"], exception.get("func")
