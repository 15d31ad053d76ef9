"""Find the files a run checks: walk directories with `os.scandir`, honour `.gitignore`.

What is walked (SPEC §4):

- `*.py`, `*.pyi` and `*.ipynb` files under the given directories;
- never: `.git`, `__pycache__`, `.ipynb_checkpoints`, `build`, `site-packages`, virtualenvs
  (any directory holding a `pyvenv.cfg`, and the names in `SKIP_DIR_NAMES`), tool caches;
- `.gitignore` files (nested ones too, each relative to its own directory; a deeper file
  overrides a shallower one; an ignored directory is never entered, as in git) when
  `config.respect_gitignore`. The `.gitignore` files of the directories above a walked path
  count too, up to the repository root (the first ancestor holding `.git`);
- `config.exclude` / `config.extend_exclude` globs, as in ruff: a pattern matches the path
  relative to the project root (`tests/data/*`, `**/legacy`) or the basename (`*_pb2.py`,
  `migrations`); a matching directory is pruned. With nested configurations
  (`nearest_config`), the globs in force in a directory are those of the nearest
  configuration above it, relative to that configuration's directory.

Files named on the command line are always checked, whatever their extension and whatever
the excludes say, unless `force_exclude` (pre-commit passes every staged file explicitly):
then the exclude globs and built-in skips apply to them and to their directories below the
project root. As in ruff, `.gitignore` never drops an explicitly named file (git itself
tracks force-added files), and an explicitly named directory is walked even when a
`.gitignore` above it ignores it.

The built-in skips apply whether or not `exclude` is set: unlike ruff, where setting
`exclude` replaces the default list, volfix keeps them (a user listing `migrations` never
means "and walk my virtualenv").

Symlinked directories are followed once: a directory already visited (same device and
inode) is not walked again, so symlink loops end. The order is deterministic (sorted by
path) and every file appears once.
"""
from __future__ import annotations

import os
import re
from dataclasses import dataclass
from typing import Callable, Dict, FrozenSet, Iterable, Iterator, List, Optional, Pattern, Sequence, Set, Tuple

PYTHON_SUFFIXES = (".py", ".pyi", ".ipynb")

SKIP_DIR_NAMES = frozenset({
    ".git", ".hg", ".svn", "__pycache__", ".ipynb_checkpoints", "build", "site-packages",
    "venv", ".venv", "env", ".env", ".tox", ".nox", "node_modules", ".volfix_cache",
    ".mypy_cache", ".ruff_cache", ".pytest_cache", "__pypackages__", ".eggs",
})


@dataclass(frozen=True)
class _Ignore:
    """The compiled `.gitignore` of one directory."""

    base: str  # the directory holding the .gitignore (absolute, normalised)
    spec: object  # pathspec.GitIgnoreSpec


class _GitIgnores:
    """Caches one compiled spec per directory (None when it has no .gitignore)."""

    def __init__(self) -> None:
        self._by_dir: Dict[str, Optional[_Ignore]] = {}

    def load(self, directory: str, has_file: Optional[bool] = None) -> Optional[_Ignore]:
        if directory in self._by_dir:
            return self._by_dir[directory]
        found: Optional[_Ignore] = None
        if has_file is not False:
            try:
                with open(os.path.join(directory, ".gitignore"), encoding="utf-8",
                          errors="surrogateescape") as fh:
                    lines = fh.read().splitlines()
            except OSError:
                lines = None
            if lines:
                import pathspec  # only paid for in trees that have a .gitignore

                spec = pathspec.GitIgnoreSpec.from_lines(lines)
                if len(spec):
                    found = _Ignore(directory, spec)
        self._by_dir[directory] = found
        return found

    def ancestors(self, directory: str) -> List[_Ignore]:
        """The specs of the directories above `directory`, up to the repository root,
        outermost first. Outside a git repository, none (a stray `/tmp/.gitignore` must
        not hide a user's files)."""
        if os.path.exists(os.path.join(directory, ".git")):
            return []
        chain = []
        current = directory
        while True:
            parent = os.path.dirname(current)
            if parent == current:
                return []  # no repository above
            chain.append(parent)
            if os.path.exists(os.path.join(parent, ".git")):
                break
            current = parent
        specs = [self.load(d) for d in reversed(chain)]
        return [s for s in specs if s is not None]


def _is_ignored(path: str, is_dir: bool, specs: Sequence[_Ignore]) -> bool:
    """git semantics: the deepest .gitignore with a matching pattern decides."""
    for ign in reversed(specs):
        rel = path[len(ign.base):].lstrip(os.sep)
        if os.sep != "/":
            rel = rel.replace(os.sep, "/")
        if is_dir:
            rel += "/"
        result = ign.spec.check_file(rel)  # type: ignore[attr-defined]
        if result.include is not None:
            return bool(result.include)
    return False


def _translate_glob(pattern: str) -> str:
    """A glob as a regex over '/'-separated paths: `**` spans directories, `*` and `?` do not."""
    out = []
    i, n = 0, len(pattern)
    while i < n:
        c = pattern[i]
        if c == "*":
            if pattern.startswith("**", i):
                i += 2
                if i < n and pattern[i] == "/":
                    out.append("(?:.*/)?")
                    i += 1
                else:
                    out.append(".*")
                continue
            out.append("[^/]*")
        elif c == "?":
            out.append("[^/]")
        elif c == "[":
            j = pattern.find("]", i + 2 if pattern[i + 1:i + 2] in ("!", "]") else i + 1)
            if j < 0:
                out.append(re.escape(c))
            else:
                body = pattern[i + 1:j]
                if body.startswith("!"):
                    body = "^" + body[1:]
                out.append("[" + body.replace("\\", "\\\\") + "]")
                i = j
        else:
            out.append(re.escape(c))
        i += 1
    return "".join(out)


class ExcludeMatcher:
    """`exclude`/`extend-exclude` globs, matched as ruff does: against the path relative to
    the project root (made absolute, so paths outside the root are handled) and against
    the basename."""

    def __init__(self, patterns: Iterable[str], root: str) -> None:
        self.root = os.path.abspath(root)
        full, base = [], []
        for raw in patterns:
            pat = raw.strip().replace("\\", "/")
            # Any '/' (`./legacy`, `legacy/`, `src/gen`) anchors the pattern to the root.
            anchored = "/" in pat
            pat = pat.rstrip("/")
            pat = pat.removeprefix("./")
            if not pat:
                continue
            if not anchored:
                base.append(_translate_glob(pat))
            absolute = pat if os.path.isabs(pat) else _posix(os.path.join(root, pat))
            full.append(_translate_glob(absolute))
        self._full: Optional[Pattern[str]] = _any_of(full)
        self._base: Optional[Pattern[str]] = _any_of(base)

    def __bool__(self) -> bool:
        return self._full is not None

    def matches(self, path: str, name: str) -> bool:
        if self._base is not None and self._base.match(name):
            return True
        return self._full is not None and self._full.match(_posix(path)) is not None


def _any_of(regexes: List[str]) -> Optional[Pattern[str]]:
    return re.compile("(?:{})\\Z".format("|".join(regexes))) if regexes else None


def _posix(path: str) -> str:
    return path.replace(os.sep, "/") if os.sep != "/" else path


def project_root(config_source: Optional[str]) -> str:
    """The directory of the configuration file, else the current directory."""
    if config_source:
        return os.path.dirname(os.path.abspath(config_source))
    return os.getcwd()


PROJECT_MARKERS = ("pyproject.toml", "setup.py", "setup.cfg", ".git")


def enclosing_project(paths: Sequence[str]) -> Optional[str]:
    """The nearest directory above the first path that holds a project marker (the project
    whose files `volfix.project.index` links), or None."""
    if not paths:
        return None
    return ProjectRoots().root_of(paths[0])


class ProjectRoots:
    """Which project each file belongs to: the nearest directory above it holding a project
    marker (`pyproject.toml`, `setup.py`, `setup.cfg` or `.git`), or None. A folder of
    repositories under one git root is as many projects as it holds repositories: the
    project index (`volfix.project.index`) links helpers inside one project only. Each directory
    is looked at once."""

    def __init__(self) -> None:
        self._by_dir: Dict[str, Optional[str]] = {}

    def root_of(self, path: str) -> Optional[str]:
        return self.root_of_directory(os.path.dirname(os.path.abspath(path)))

    def root_of_directory(self, directory: str) -> Optional[str]:
        seen = []
        current = directory
        while True:
            if current in self._by_dir:
                found = self._by_dir[current]
                break
            seen.append(current)
            if any(os.path.exists(os.path.join(current, m)) for m in PROJECT_MARKERS):
                found = current
                break
            parent = os.path.dirname(current)
            if parent == current:
                found = None
                break
            current = parent
        for directory in seen:
            self._by_dir[directory] = found
        return found

    def group(self, paths: Iterable[str]) -> Dict[Optional[str], List[str]]:
        """`paths` by project root (None: in no project), in the order given."""
        out: Dict[Optional[str], List[str]] = {}
        for path in paths:
            out.setdefault(self.root_of(path), []).append(path)
        return out


# (directory, the names in it when the walk has listed it) -> the matcher in force there
Excluders = Callable[[str, Optional[FrozenSet[str]]], "ExcludeMatcher"]


def discover(paths: Sequence[str], *, exclude: Iterable[str] = (), respect_gitignore: bool = True,
             force_exclude: bool = False, root: Optional[str] = None,
             excluders: Optional[Excluders] = None) -> List[str]:
    """Every file to check under `paths`, as absolute normalised paths, sorted and unique.

    A path that does not exist is returned as given (made absolute): reading it fails
    later and becomes a VF002 diagnostic, so a typo on the command line is not silent.
    `excluders(directory, names)`, when given, is the matcher in force inside `directory`
    (the nearest configuration's globs, `nearest_config`; `names`, the directory's entries
    when the walk has listed them, spare it a look for configuration files); otherwise
    `exclude`, relative to `root`, applies everywhere.
    """
    return sorted(path for batch in walk(paths, exclude=exclude, respect_gitignore=respect_gitignore,
                                         force_exclude=force_exclude, root=root, excluders=excluders)
                  for path in batch)


def walk(paths: Sequence[str], *, exclude: Iterable[str] = (), respect_gitignore: bool = True,
         force_exclude: bool = False, root: Optional[str] = None,
         excluders: Optional[Excluders] = None) -> Iterator[List[str]]:
    """`discover`'s files as the walk finds them: a list a directory (or a named file), each
    file once, in walk order (the runner scans them while the walk goes on)."""
    root = os.path.abspath(root or os.getcwd())
    single = ExcludeMatcher(exclude, root)
    excluder_in: Excluders = excluders or (lambda directory, names=None: single)
    gitignores = _GitIgnores()
    found: Set[str] = set()
    visited_dirs: Set[Tuple[int, int]] = set()

    for given in paths:
        path = os.path.abspath(given)
        name = os.path.basename(path)
        excluder = excluder_in(os.path.dirname(path), None)
        if os.path.isdir(path):
            if force_exclude and _excluded(path, name, True, excluder):
                continue
            specs: List[_Ignore] = []
            if respect_gitignore:
                specs = gitignores.ancestors(path)
                # Named explicitly, an ignored directory is still walked (as ruff does);
                # the .gitignore files above it then say nothing about its contents.
                if specs and _is_ignored(path, True, specs):
                    specs = []
            yield from _walk(path, specs, excluder_in, gitignores if respect_gitignore else None, found,
                             visited_dirs)
        elif not (force_exclude and (_excluded(path, name, False, excluder)
                                     or _under_excluded_dir(path, excluder))):
            if path not in found:
                found.add(path)
                yield [path]


def _excluded(path: str, name: str, is_dir: bool, excluder: ExcludeMatcher) -> bool:
    if is_dir and name in SKIP_DIR_NAMES:
        return True
    return bool(excluder) and excluder.matches(path, name)


def _under_excluded_dir(path: str, excluder: ExcludeMatcher) -> bool:
    """--force-exclude on a file: an excluded or built-in-skipped ancestor directory (below
    the configuration's root) excludes it too, as walking would have."""
    root = excluder.root
    current = os.path.dirname(path)
    while current.startswith(root) and len(current) > len(root):
        name = os.path.basename(current)
        if name in SKIP_DIR_NAMES or (excluder and excluder.matches(current, name)):
            return True
        current = os.path.dirname(current)
    return False


def _walk(top: str, specs: List[_Ignore], excluder_in: Excluders,
          gitignores: Optional[_GitIgnores], found: Set[str],
          visited_dirs: Set[Tuple[int, int]]) -> Iterator[List[str]]:
    """Iterative depth-first walk; `specs` are the .gitignore specs in force above `top`.
    Yields each directory's files not `found` before (and adds them)."""
    stack: List[Tuple[str, List[_Ignore]]] = [(top, specs)]
    while stack:
        directory, inherited = stack.pop()
        try:
            st = os.stat(directory)
            ident = (st.st_dev, st.st_ino)
            if ident in visited_dirs:
                continue
            visited_dirs.add(ident)
            with os.scandir(directory) as it:
                entries = list(it)
        except FileNotFoundError:
            continue  # gone since its parent was listed
        except OSError:
            # Unreadable (permissions, I/O error): handed on as a file, whose reading fails
            # and is reported (VF002), so the run says its files were not checked.
            if directory not in found:
                found.add(directory)
                yield [directory]
            continue
        names = frozenset([e.name for e in entries])
        if directory != top and "pyvenv.cfg" in names:
            continue  # a virtualenv: found inside the directory, so checked on entry
        excluder = excluder_in(directory, names)
        current = inherited
        if gitignores is not None and ".gitignore" in names:
            own = gitignores.load(directory, has_file=True)
            if own is not None:
                current = inherited + [own]
        subdirs = []
        files = []
        for entry in entries:
            name = entry.name
            if name.endswith(PYTHON_SUFFIXES):
                try:
                    is_dir = entry.is_dir()  # follows symlinks; loops end via visited_dirs
                except OSError:
                    continue
                if not is_dir:
                    if excluder and excluder.matches(entry.path, name):
                        continue
                    if current and _is_ignored(entry.path, False, current):
                        continue
                    if entry.path not in found:
                        found.add(entry.path)
                        files.append(entry.path)
                    continue
            elif name in SKIP_DIR_NAMES:
                continue
            else:
                try:
                    is_dir = entry.is_dir()
                except OSError:
                    continue
                if not is_dir:
                    continue
            if excluder and excluder.matches(entry.path, name):
                continue
            if current and _is_ignored(entry.path, True, current):
                continue
            subdirs.append(entry.path)
        if files:
            yield files
        # Reverse-sorted onto the stack, so directories are entered in name order.
        for sub in sorted(subdirs, reverse=True):
            stack.append((sub, current))


def display_path(path: str, cwd: Optional[str] = None) -> str:
    """`path` relative to the current directory when it lies below it, else absolute."""
    cwd = cwd or os.getcwd()
    try:
        rel = os.path.relpath(path, cwd)
    except ValueError:  # another drive on Windows
        return path
    if rel == os.pardir or rel.startswith(os.pardir + os.sep):
        return path
    return rel
