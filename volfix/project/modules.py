"""How a file names the other modules of its project (`volfix.project.index`).

`module_names(target, importer)`: the dotted names (absolute, from each directory holding both
files, and relative) by which `importer` can import the module in `target`;
`module_candidates(module, importer)`: the same relation read backwards, the few paths a
name can mean, so that `ModuleTable` resolves a name by dictionary lookups instead of asking
every file of the project for its names (a scan per lookup made linking quadratic).
"""
from __future__ import annotations

import os
import re
from typing import Callable, Dict, Iterable, List, Optional, Sequence, Tuple

_IDENTIFIER = re.compile(r"^[A-Za-z_][A-Za-z0-9_]*$")
# `sys.path.append("../semi-supervised")`, `sys.path.insert(0, '..')` at the start of a line
# (a comment is no call), and `sys.path.append(os.path.dirname(os.path.dirname(os.path.abspath(
# __file__))))`: the directories a script adds to its own search path.
_SYS_PATH = re.compile(
    rb"^[ \t]*sys\.path\.(?:append\(|insert\([ \t]*-?\d+[ \t]*,)[ \t]*(?:[rRuU]?(['\"])([^'\"\r\n\\]+)\1"
    rb"|((?:os\.path\.dirname\([ \t]*)+)os\.path\.(?:abspath|realpath)\([ \t]*__file__[ \t]*\)[ \t]*\)*)[ \t]*\)",
    re.M)


def module_names(target: str, importer: str) -> List[str]:
    """How `importer` can name the module in file `target`: absolute dotted names from every
    directory holding both files, and relative names (`.utils`, `..pkg.utils`) from the
    importer's package."""
    target = os.path.abspath(target)
    importer = os.path.abspath(importer)
    stem, _ = os.path.splitext(target)
    parts = stem.split(os.sep)
    if parts[-1] == "__init__":
        parts = parts[:-1]
    importer_dir = os.path.dirname(importer).split(os.sep)

    def inside(base: int) -> bool:  # is parts[:base] a directory holding the importer?
        return base <= len(importer_dir) and parts[:base] == importer_dir[:base]

    out: List[str] = []
    # Absolute: from each directory that also holds the importer (sys.path[0] when it runs
    # as a script, or the project root it is run from), nearest first.
    for base in range(len(parts) - 1, 0, -1):
        rel = parts[base:]
        if inside(base) and all(_IDENTIFIER.match(p) for p in rel):
            out.append(".".join(rel))
    # Relative: level 1 is the importer's own package (`from . import f` names __init__).
    for level in range(1, len(importer_dir)):
        base = len(importer_dir) - (level - 1)
        rel = parts[base:]
        if base <= len(parts) and inside(base) and all(_IDENTIFIER.match(p) for p in rel):
            out.append("." * level + ".".join(rel))
    return out


def module_candidates(module: str, importer: str) -> List[str]:
    """The files `importer` can name `module` (`module_names`, read backwards): at most four
    paths for each directory the name can start from, whatever the size of the project. A
    path is a candidate whether or not it exists; `module in module_names(path, importer)`
    holds for exactly these paths (of the `.py`/`.pyi` files)."""
    importer_dir = os.path.dirname(os.path.abspath(importer)).split(os.sep)
    level = len(module) - len(module.lstrip("."))
    rest = module[level:]
    words = rest.split(".") if rest else []
    if not all(_IDENTIFIER.match(w) for w in words):
        return []
    if level:  # relative: level 1 is the importer's own package
        if level >= len(importer_dir):
            return []
        bases = [importer_dir[:len(importer_dir) - (level - 1)]]
    elif words:  # absolute: from every directory holding the importer, the root included
        bases = [importer_dir[:base] for base in range(len(importer_dir), 0, -1)]
    else:
        return []
    return [path for base in bases for path in _module_files(os.sep.join(base + words), words)]


def added_search_dirs(raw: bytes, importer: str) -> Tuple[str, ...]:
    """The directories the module in `importer` adds to `sys.path` itself, in its order: a
    relative path is read from the importer's directory (where such a script is run from)."""
    here = os.path.dirname(os.path.abspath(importer))
    out: List[str] = []
    for match in _SYS_PATH.finditer(raw):
        literal, dirnames = match.group(2), match.group(3)
        if literal is not None:
            path = os.path.normpath(os.path.join(here, literal.decode("utf-8", "replace")))
        else:
            path = here
            for _ in range(dirnames.count(b"dirname") - 1):
                path = os.path.dirname(path)
        if path not in out:
            out.append(path)
    return tuple(out)


def notebook_code(raw: bytes) -> bytes:
    """A notebook's code cells (`notebook.jsonfile.code_text`), for the scans of bytes: its
    imports, its `sys.path` calls; nothing when it is no notebook."""
    from ..notebook.jsonfile import NotebookError, code_text

    try:
        return code_text(raw).encode("utf-8")
    except NotebookError:
        return b""


def resolve_module(module: str, importer: str, files: Iterable[str]) -> Optional[str]:
    """The project file a module name (as the importer spells it) refers to: the first of
    `files` (in their order) that `module_names` names so. `files` may be a `ModuleTable`,
    which answers by dictionary lookups."""
    if isinstance(files, ModuleTable):
        return files.resolve(module, importer)
    importer = os.path.abspath(importer)
    for path in files:
        if path != importer and module in module_names(path, importer):
            return path
    return None


class ModuleTable:
    """The files of a project by path, built once: `resolve` looks a module name up among the
    few candidate paths (`module_candidates`) instead of naming every file of the project
    (a scan per lookup made linking quadratic in the project's size). Ties go to the file
    that comes first in the order given, as `resolve_module` over the list. With `read` (a
    file's bytes, None when the run has not read it), a name no such path holds is looked up in
    the directories the importer adds to `sys.path` itself (`sys.path.append("../semi-supervised")`,
    then `from inference import SVI`), in their order."""

    def __init__(self, files: Sequence[str], read: Optional[Callable[[str], Optional[bytes]]] = None) -> None:
        self.order: Dict[str, int] = {}
        for i, path in enumerate(files):
            self.order.setdefault(path, i)
        self._read = read
        self._added: Dict[str, Tuple[str, ...]] = {}

    def __iter__(self):
        return iter(self.order)

    def added_dirs(self, importer: str) -> Tuple[str, ...]:
        """The directories the importer's own `sys.path` calls add (`added_search_dirs`)."""
        if self._read is None or not importer.endswith((".py", ".ipynb")):
            return ()
        if importer not in self._added:
            raw = self._read(importer)
            if raw is None:
                return ()  # not read (yet): a file the run has not needed
            if b"sys.path" in raw and importer.endswith(".ipynb"):
                raw = notebook_code(raw)  # `sys.path.append(\"../../semi-supervised\")` in the JSON
            self._added[importer] = added_search_dirs(raw, importer) if b"sys.path" in raw else ()
        return self._added[importer]

    def resolve(self, module: str, importer: str) -> Optional[str]:
        found = [p for p in module_candidates(module, os.path.abspath(importer))
                 if p in self.order and p != os.path.abspath(importer)]
        words = module.split(".")
        if not found and all(_IDENTIFIER.match(w) for w in words):  # absolute names only
            for base in self.added_dirs(importer):
                found = [p for p in _module_files(os.path.join(base, *words), words)
                         if p in self.order and p != os.path.abspath(importer)]
                if found:
                    break
        return min(found, key=self.order.__getitem__) if found else None


def _module_files(stem: str, words: List[str]) -> List[str]:
    """The files the dotted name `words` can be at `stem` (its path from one base directory):
    `stem.py` and `.pyi` (not for `pkg.__init__`: `pkg/__init__.py` is named `pkg`), then
    `stem/__init__.py` and `.pyi`."""
    out = [] if words and words[-1] == "__init__" else [stem + ".py", stem + ".pyi"]
    return out + [stem + os.sep + "__init__.py", stem + os.sep + "__init__.pyi"]
