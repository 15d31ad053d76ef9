"""Where each run happens: the program's command, and the original sources beside the tree.

The working tree is the project the command runs in (the git repository's top level, or the
current directory outside git). The original is a git revision of it, unpacked into a
temporary directory with `git archive`, or a copy the user names (`--against PATH`). Files
the revision does not track (data, checkpoints, untracked directories) are linked into the
unpacked tree from the working tree, so the program reads the same inputs from the same
relative paths both times.
"""
from __future__ import annotations

import io
import os
import shutil
import subprocess
import tarfile
import tempfile
from dataclasses import dataclass
from typing import List, Optional, Tuple

# Interpreter options that may come before the script (`python -u train.py`).
_PYTHON_FLAGS = {"-u", "-B", "-O", "-OO", "-s", "-E", "-I", "-b", "-bb", "-q", "-v"}
_PYTHON_FLAGS_WITH_VALUE = {"-W", "-X"}
_SKIP_LINKS = {".git", "__pycache__"}


class VerifyError(Exception):
    """A caller mistake or a setup failure: one line for the user, exit 2."""


@dataclass(frozen=True)
class Command:
    """`python [flags] (script.py | -m module | -c code) args...`, split up."""

    python: str
    flags: Tuple[str, ...]
    program: Tuple[str, ...]  # ("eval.py", *args) or ("-m", "pkg.mod", *args) or ("-c", code, ...)

    @property
    def script(self) -> Optional[str]:
        return None if self.program[0] in ("-m", "-c") else self.program[0]


def parse_command(words: List[str], default_python: str) -> Command:
    """`python eval.py ARGS`, `python -m pkg ARGS`, `python -c CODE`, or `eval.py ARGS`."""
    if not words:
        raise VerifyError("no program to run: give `script.py ARGS` or `-- python script.py ARGS`")
    words = list(words)
    python = default_python
    if _looks_like_python(words[0]):
        python = words.pop(0)
        python = shutil.which(python) or python
    flags: List[str] = []
    while words and words[0].startswith("-") and words[0] not in ("-m", "-c"):
        flag = words.pop(0)
        if flag in _PYTHON_FLAGS:
            flags.append(flag)
        elif flag in _PYTHON_FLAGS_WITH_VALUE and words:
            flags += [flag, words.pop(0)]
        elif flag[:2] in _PYTHON_FLAGS_WITH_VALUE and len(flag) > 2:
            flags.append(flag)
        else:
            raise VerifyError(f"unsupported interpreter option {flag}: verify runs "
                              "`python [options] script.py`, `-m module` or `-c code`")
    if not words or (words[0] in ("-m", "-c") and len(words) < 2):
        raise VerifyError("no program to run after the interpreter")
    if words[0] not in ("-m", "-c") and not words[0].endswith((".py", ".pyw")) \
            and not os.path.isfile(words[0]):
        raise VerifyError(f"{words[0]}: not a Python script; verify runs one Python process "
                          "(`python script.py`, `python -m module`), not other launchers")
    return Command(python, tuple(flags), tuple(words))


def _looks_like_python(word: str) -> bool:
    name = os.path.basename(word)
    return name.startswith("python") and not name.endswith(".py")


def project_root(cwd: str) -> Tuple[str, bool]:
    """The git top level containing `cwd` (and True), or `cwd` itself outside git (False)."""
    try:
        out = subprocess.run(["git", "rev-parse", "--show-toplevel"], cwd=cwd, capture_output=True,
                             text=True, check=False)
    except FileNotFoundError:
        return os.path.realpath(cwd), False
    if out.returncode != 0:
        return os.path.realpath(cwd), False
    return os.path.realpath(out.stdout.strip()), True


@dataclass
class Original:
    """The original sources: `root` to run in; `temporary` when verify made it (removed after)."""

    root: str
    label: str
    temporary: bool

    def cleanup(self) -> None:
        if self.temporary:
            shutil.rmtree(self.root, ignore_errors=True)


def original_sources(against: Optional[str], cwd: str) -> Tuple[str, Original]:
    """The working tree's root and the original beside it: a directory copy when `against`
    names one, else the git revision `against` (default HEAD) unpacked into a temp dir."""
    root, in_git = project_root(cwd)
    if against is not None and os.path.isdir(against):
        return root, Original(os.path.realpath(against), against, temporary=False)
    if against is not None and os.path.exists(against):
        raise VerifyError(f"--against {against}: give a directory (a copy of the project) or a git revision")
    revision = against or "HEAD"
    if not in_git:
        if against is not None:  # no directory, and no repository to hold a revision
            raise VerifyError(f"--against {against}: no such directory ({cwd} is not in a git repository, "
                              "so it is no revision either)")
        raise VerifyError(f"{cwd} is not in a git repository: commit the original first, or give "
                          "--against PATH, a copy of the original project")
    commit = _git(root, "rev-parse", "--verify", "--quiet", f"{revision}^{{commit}}")
    if commit is None:
        raise VerifyError(f"--against {revision}: no such git revision (and no such directory)")
    archive = _git_bytes(root, "archive", "--format=tar", commit.strip())
    target = tempfile.mkdtemp(prefix="volfix-verify-")
    with tarfile.open(fileobj=io.BytesIO(archive)) as tar:
        if hasattr(tarfile, "data_filter"):
            tar.extractall(target, filter="data")
        else:  # Python before 3.9.17 / 3.10.12 / 3.11.4 (Debian 12's 3.11.2): git's own archive
            tar.extractall(target)  # noqa: S202 - of the user's repository, paths relative
    link_untracked(root, target)
    return root, Original(os.path.realpath(target), revision, temporary=True)


def link_untracked(work_root: str, original_root: str) -> None:
    """Symlink into the unpacked revision what it lacks and the working tree has (datasets,
    untracked directories), walking only directories both have."""
    for name in os.listdir(work_root):
        if name in _SKIP_LINKS:
            continue
        source = os.path.join(work_root, name)
        target = os.path.join(original_root, name)
        if not os.path.lexists(target):
            os.symlink(source, target, target_is_directory=os.path.isdir(source))
        elif os.path.isdir(target) and not os.path.islink(target) and os.path.isdir(source) \
                and not os.path.islink(source):
            link_untracked(source, target)


def _git(root: str, *args: str) -> Optional[str]:
    out = subprocess.run(["git", *args], cwd=root, capture_output=True, text=True, check=False)
    return out.stdout if out.returncode == 0 else None


def _git_bytes(root: str, *args: str) -> bytes:
    out = subprocess.run(["git", *args], cwd=root, capture_output=True, check=False)
    if out.returncode != 0:
        raise VerifyError(f"git {' '.join(args[:1])} failed: {out.stderr.decode(errors='replace').strip()}")
    return out.stdout


def map_into(path: str, work_root: str, original_root: str) -> str:
    """`path` (absolute, in the working tree) at the same place in the original."""
    rel = os.path.relpath(os.path.realpath(path), work_root)
    if rel == os.pardir or rel.startswith(os.pardir + os.sep):
        raise VerifyError(f"{path} is outside the project at {work_root}")
    return os.path.normpath(os.path.join(original_root, rel))
