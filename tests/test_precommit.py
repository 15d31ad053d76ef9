"""Runs the real `pre-commit` with this checkout's `.pre-commit-hooks.yaml`, configured
exactly as the README's pre-commit section says (only the repository URL is replaced).

pre-commit can only install hooks from a git repository, so the hooks file and the package
of the working tree (uncommitted work included) are copied into a throwaway repository with
one commit on `main`; the checkout's own git state is never touched. The README's block is
used as written (`rev: main`), then pinned with the README's `pre-commit autoupdate` command.
pre-commit builds a virtualenv and pip-installs volfix into it for each `rev`, which takes a
while.

In CI (`CI` set) pre-commit must be installed: its absence fails the suite instead of
skipping these tests.
"""
from __future__ import annotations

import os
import re
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

from conftest import CLEAN, LEGACY

CHECKOUT = Path(__file__).resolve().parents[1]
README = CHECKOUT / "README.md"
PUBLIC_URL = "https://github.com/volfix/volfix"
TIMEOUT = 900  # seconds; building the hook environment downloads libcst & co.
# What pre-commit needs to install the hooks: the hooks file and the installable package.
HOOK_REPO_FILES = (".pre-commit-hooks.yaml", "pyproject.toml", "setup.cfg", "setup.py",
                   "README.md", "LICENSE", "MANIFEST.in")
SKIP = ("__pycache__", "*.pyc")
IN_CI = os.environ.get("CI", "").strip().lower() not in ("", "0", "false", "no")


def _find_pre_commit():
    """The pre-commit of this interpreter's environment, else the one on PATH."""
    beside = Path(sys.executable).parent / ("pre-commit.exe" if os.name == "nt" else "pre-commit")
    if beside.is_file() and os.access(beside, os.X_OK):
        return str(beside)
    return shutil.which("pre-commit")


PRE_COMMIT = _find_pre_commit()

if PRE_COMMIT is None and not IN_CI:
    pytest.skip("pre-commit is not installed (CI always installs it)", allow_module_level=True)


def readme_block() -> str:
    """The YAML block of the README's `## pre-commit` section, as written."""
    section = README.read_text(encoding="utf-8").split("\n## pre-commit\n", 1)[1]
    section = section.split("\n## ", 1)[0]
    return re.search(r"```yaml\n(.*?)```", section, re.S).group(1)


def readme_autoupdate_command() -> list:
    section = README.read_text(encoding="utf-8").split("\n## pre-commit\n", 1)[1]
    section = section.split("\n## ", 1)[0]
    return re.search(r"```sh\n(pre-commit autoupdate[^\n]*)\n```", section).group(1).split()


def test_pre_commit_is_installed():
    assert PRE_COMMIT is not None, "pre-commit not found: `pip install -e \".[test]\"` installs it"


def test_readme_block_uses_this_checkouts_hooks():
    import yaml

    config = yaml.safe_load(readme_block())
    [repo] = config["repos"]
    assert repo["repo"] == PUBLIC_URL
    assert repo["rev"] == "main"
    hooks = {hook["id"] for hook in yaml.safe_load((CHECKOUT / ".pre-commit-hooks.yaml").read_text())}
    assert [hook["id"] for hook in repo["hooks"]] == ["volfix"]
    assert "volfix-check" in hooks and "volfix" in hooks
    assert "# - id: volfix-check" in readme_block()  # the commented alternative
    assert readme_autoupdate_command() == ["pre-commit", "autoupdate", "--repo", PUBLIC_URL]


def _git(cwd: Path, *args: str) -> str:
    done = subprocess.run(
        ["git", "-c", "user.name=volfix tests", "-c", "user.email=tests@volfix.invalid",
         "-c", "commit.gpgsign=false", "-c", "init.defaultBranch=main", *args],
        cwd=cwd, check=True, capture_output=True, text=True)
    return done.stdout.strip()


@pytest.fixture(scope="module")
def hook_repo(tmp_path_factory) -> tuple:
    """(path, sha) of a one-commit copy of the current working tree, on branch `main`."""
    repo = tmp_path_factory.mktemp("hook-repo") / "volfix"
    shutil.copytree(CHECKOUT / "volfix", repo / "volfix", ignore=shutil.ignore_patterns(*SKIP))
    for name in HOOK_REPO_FILES:
        if (CHECKOUT / name).exists():
            shutil.copy2(CHECKOUT / name, repo / name)
    _git(repo, "init", "-q")
    _git(repo, "add", "-A")
    _git(repo, "commit", "-q", "-m", "snapshot of the working tree for the pre-commit test")
    assert _git(repo, "rev-parse", "--abbrev-ref", "HEAD") == "main"
    return str(repo), _git(repo, "rev-parse", "HEAD")


@pytest.fixture(scope="module")
def pre_commit_home(tmp_path_factory) -> str:
    # Shared by the tests in this module so each hook environment is built once.
    return str(tmp_path_factory.mktemp("pre-commit-home"))


def _env(home: str) -> dict:
    env = dict(os.environ, PRE_COMMIT_HOME=home, PRE_COMMIT_COLOR="never", NO_COLOR="1")
    env.pop("VIRTUAL_ENV", None)
    return env


def _readme_config(repo_path: str, hook_id: str) -> str:
    """The README's block for this checkout: its URL replaced by the throwaway repository;
    for `volfix-check`, the commented alternative taken instead of `volfix`."""
    text = readme_block().replace(PUBLIC_URL, repo_path)
    if hook_id == "volfix-check":
        text = re.sub(r"\n( *)- id: volfix .*", "", text)
        text = re.sub(r"\n( *)# - id: volfix-check", r"\n\1- id: volfix-check", text)
    return text


def _project(tmp_path: Path, hook_repo: tuple, hook_id: str, files: dict, home: str, *,
             pin: bool = True) -> Path:
    path, sha = hook_repo
    project = tmp_path / "project"
    project.mkdir()
    _git(project, "init", "-q")
    config = project / ".pre-commit-config.yaml"
    config.write_text(_readme_config(path, hook_id))
    if pin:  # the README's command, pointed at the throwaway repository
        command = [PRE_COMMIT if part == "pre-commit" else part for part in readme_autoupdate_command()]
        command = [path if part == PUBLIC_URL else part for part in command]
        done = subprocess.run(command, cwd=project, env=_env(home), capture_output=True,
                              text=True, timeout=TIMEOUT)
        assert done.returncode == 0, done.stdout + done.stderr
        assert re.search(rf"\n\s+rev: {sha}\b", config.read_text()), config.read_text()
    for name, text in files.items():
        (project / name).write_text(text)
    _git(project, "add", "-A")
    return project


def _pre_commit(project: Path, home: str, hook_id: str) -> subprocess.CompletedProcess:
    return subprocess.run([PRE_COMMIT, "run", hook_id, "--all-files"], cwd=project,
                          env=_env(home), capture_output=True, text=True, timeout=TIMEOUT)


@pytest.mark.slow
def test_readme_block_as_written_runs_the_fix_hook(tmp_path, hook_repo, pre_commit_home):
    project = _project(tmp_path, hook_repo, "volfix", {"legacy.py": LEGACY}, pre_commit_home,
                       pin=False)
    result = _pre_commit(project, pre_commit_home, "volfix")
    assert result.returncode == 1, result.stdout + result.stderr
    assert "files were modified by this hook" in result.stdout
    assert "volatile" not in (project / "legacy.py").read_text()


@pytest.mark.slow
def test_fix_hook_rewrites_then_passes(tmp_path, hook_repo, pre_commit_home):
    project = _project(tmp_path, hook_repo, "volfix", {"legacy.py": LEGACY}, pre_commit_home)

    first = _pre_commit(project, pre_commit_home, "volfix")
    output = first.stdout + first.stderr
    assert first.returncode == 1, output
    assert "files were modified by this hook" in output
    fixed = (project / "legacy.py").read_text()
    assert "volatile" not in fixed
    assert "no_grad" in fixed

    _git(project, "add", "-A")
    second = _pre_commit(project, pre_commit_home, "volfix")
    assert second.returncode == 0, second.stdout + second.stderr
    assert (project / "legacy.py").read_text() == fixed


@pytest.mark.slow
def test_check_hook_fails_on_legacy_code_and_leaves_it_alone(tmp_path, hook_repo, pre_commit_home):
    project = _project(tmp_path, hook_repo, "volfix-check", {"legacy.py": LEGACY}, pre_commit_home)

    result = _pre_commit(project, pre_commit_home, "volfix-check")
    output = result.stdout + result.stderr
    assert result.returncode == 1, output
    assert "legacy.py:2:13: VF101" in output
    assert (project / "legacy.py").read_text() == LEGACY


@pytest.mark.slow
def test_check_hook_passes_on_clean_code(tmp_path, hook_repo, pre_commit_home):
    project = _project(tmp_path, hook_repo, "volfix-check", {"clean.py": CLEAN}, pre_commit_home)

    result = _pre_commit(project, pre_commit_home, "volfix-check")
    assert result.returncode == 0, result.stdout + result.stderr
    assert "Passed" in result.stdout


# --- partial runs: pre-commit passes only the files it was given -----------------------

HELPER = '''\
import torch
from torch.autograd import Variable


def get_batch(source, i, evaluation=False):
    return Variable(source[i:i + 2], volatile=evaluation)
'''

CALLER = '''\
from data import get_batch


def evaluate(model, source):
    total = 0
    for i in range(0, len(source), 2):
        batch = get_batch(source, i, evaluation=True)
        total += model(batch).sum().item()
    return total
'''


def _pinned_project(tmp_path: Path, hook_repo: tuple, hooks_yaml: str, fillers: int = 0) -> Path:
    path, sha = hook_repo
    project = tmp_path / "project"
    project.mkdir()
    _git(project, "init", "-q")
    (project / ".pre-commit-config.yaml").write_text(
        f"repos:\n  - repo: {path}\n    rev: {sha}\n    hooks:\n{hooks_yaml}")
    (project / "data.py").write_text(HELPER)
    (project / "main.py").write_text(CALLER)
    for n in range(fillers):
        (project / f"util_{n}.py").write_text(CLEAN)
    _git(project, "add", "-A")
    _git(project, "commit", "-q", "-m", "legacy code")
    return project


def _run_files(project: Path, home: str, *files: str) -> subprocess.CompletedProcess:
    return subprocess.run([PRE_COMMIT, "run", "volfix", "--files", *files], cwd=project,
                          env=_env(home), capture_output=True, text=True, timeout=TIMEOUT)


def _volfix_check(project: Path) -> subprocess.CompletedProcess:
    return subprocess.run([sys.executable, "-m", "volfix", "check", "--no-cache", "."], cwd=project,
                          capture_output=True, text=True, timeout=TIMEOUT)


def test_the_hooks_run_serially_as_ruff_s_do():
    """volfix spreads the files over the cores itself, and a helper's callers in other files
    decide its fix: one process must see every file pre-commit passes."""
    hooks = re.findall(r"^- id: (\S+)|^  require_serial: (\S+)", (CHECKOUT / ".pre-commit-hooks.yaml").read_text(),
                       re.M)
    ids = [i for i, _ in hooks if i]
    serial = [s for _, s in hooks if s]
    assert ids == ["volfix", "volfix-check"] and serial == ["true", "true"]


# A genuine 0.3 repository: `--legacy-semantics` makes unwrapping `Variable(x)` a safe fix.
HOOK = "      - id: volfix\n        args: [--legacy-semantics]\n"


@pytest.mark.slow
def test_only_the_helpers_file_changed_its_caller_elsewhere_keeps_the_fix(tmp_path, hook_repo, pre_commit_home):
    """pre-commit passes the changed helper file alone: its caller in an unchanged file
    is found in the project, and as it cannot get its region in this run, the helper
    keeps its flag (the run reports it) instead of losing the evaluation loop's no_grad."""
    project = _pinned_project(tmp_path, hook_repo, HOOK)
    result = _run_files(project, pre_commit_home, "data.py")
    output = result.stdout + result.stderr
    assert result.returncode == 1, output
    assert "main.py:7" in output  # the call site that needs its region, named
    assert (project / "data.py").read_text() == HELPER
    assert (project / "main.py").read_text() == CALLER
    assert "VF103" in _volfix_check(project).stdout  # not "All checks passed!"
    # Both files in the run: the caller gets its region, then (the run links the written
    # files again) the helper is unwrapped, in the same run.
    both = _run_files(project, pre_commit_home, "data.py", "main.py")
    assert both.returncode == 1, both.stdout + both.stderr
    assert "with torch.no_grad():" in (project / "main.py").read_text()
    assert "volatile" not in (project / "data.py").read_text()
    assert _volfix_check(project).returncode == 0
    _git(project, "add", "-A")
    assert _run_files(project, pre_commit_home, "data.py", "main.py").returncode == 0


@pytest.mark.slow
def test_files_split_over_two_processes_never_lose_a_fix(tmp_path, hook_repo, pre_commit_home):
    """`require_serial: false` (a user's override): pre-commit gives each process one of the
    two files. The caller's process wraps its call; the helper's process cannot see that
    happen, so it keeps the flag. Nothing is lost, and the next run finishes the job."""
    # pre-commit puts at least 4 files in a process: 8 files make two processes.
    project = _pinned_project(tmp_path, hook_repo, HOOK + "        require_serial: false\n", fillers=6)
    files = ["data.py", "main.py"] + [f"util_{n}.py" for n in range(6)]
    split = _run_files(project, pre_commit_home, *files)
    output = split.stdout + split.stderr
    assert split.returncode == 1, output
    # One summary line per volfix process: there were two, and the helper's did not hold
    # its caller (pre-commit's file order is shuffled with a fixed seed).
    assert len(re.findall(r"^(?:Fixed \d+ finding|Found \d+ finding|All checks passed)", output, re.M)) == 2, output
    assert "is called with a true `evaluation` outside this run (main.py:7)" in output, output
    main = (project / "main.py").read_text()
    assert "with torch.no_grad():" in main, output
    assert (project / "data.py").read_text() == HELPER  # its caller was not in its run
    # A later run sees the caller covered: the helper is unwrapped, and everything passes.
    _git(project, "add", "-A")
    again = _run_files(project, pre_commit_home, "data.py")
    assert again.returncode == 1, again.stdout + again.stderr
    assert "volatile" not in (project / "data.py").read_text()
    assert (project / "main.py").read_text() == main
    assert _volfix_check(project).returncode == 0
