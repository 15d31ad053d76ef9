"""Runs the real `pre-commit` with this checkout's `.pre-commit-hooks.yaml`.

pre-commit can only install hooks from a git repository at a commit, so the hooks file and
the package of the working tree (uncommitted work included) are copied into a throwaway
repository with one commit; the checkout's own git state is never touched. pre-commit then builds a virtualenv and
pip-installs volfix into it, which takes a while on the first run.
"""
from __future__ import annotations

import os
import shutil
import subprocess
from pathlib import Path

import pytest

from conftest import CLEAN, LEGACY

CHECKOUT = Path(__file__).resolve().parents[1]
TIMEOUT = 900  # seconds; building the hook environment downloads libcst & co.
# What pre-commit needs to install the hooks: the hooks file and the installable package.
HOOK_REPO_FILES = (".pre-commit-hooks.yaml", "pyproject.toml", "setup.cfg", "setup.py",
                   "README.md", "LICENSE", "MANIFEST.in")
SKIP = ("__pycache__", "*.pyc")

if shutil.which("pre-commit") is None and not os.environ.get("CI"):
    pytest.skip("pre-commit is not installed (CI always installs it)", allow_module_level=True)

pytestmark = pytest.mark.slow


def _git(cwd: Path, *args: str) -> str:
    done = subprocess.run(
        ["git", "-c", "user.name=volfix tests", "-c", "user.email=tests@volfix.invalid",
         "-c", "commit.gpgsign=false", "-c", "init.defaultBranch=main", *args],
        cwd=cwd, check=True, capture_output=True, text=True)
    return done.stdout.strip()


@pytest.fixture(scope="module")
def hook_repo(tmp_path_factory) -> tuple:
    """(path, rev) of a one-commit copy of the current working tree."""
    repo = tmp_path_factory.mktemp("hook-repo") / "volfix"
    shutil.copytree(CHECKOUT / "volfix", repo / "volfix", ignore=shutil.ignore_patterns(*SKIP))
    for name in HOOK_REPO_FILES:
        if (CHECKOUT / name).exists():
            shutil.copy2(CHECKOUT / name, repo / name)
    _git(repo, "init", "-q")
    _git(repo, "add", "-A")
    _git(repo, "commit", "-q", "-m", "snapshot of the working tree for the pre-commit test")
    return str(repo), _git(repo, "rev-parse", "HEAD")


@pytest.fixture(scope="module")
def pre_commit_home(tmp_path_factory) -> str:
    # Shared by the tests in this module so the hook environment is built once.
    return str(tmp_path_factory.mktemp("pre-commit-home"))


def _project(tmp_path: Path, hook_repo: tuple, hook_id: str, files: dict) -> Path:
    path, rev = hook_repo
    project = tmp_path / "project"
    project.mkdir()
    _git(project, "init", "-q")
    (project / ".pre-commit-config.yaml").write_text(
        f"repos:\n- repo: {path}\n  rev: {rev}\n  hooks:\n  - id: {hook_id}\n")
    for name, text in files.items():
        (project / name).write_text(text)
    _git(project, "add", "-A")
    return project


def _pre_commit(project: Path, home: str, hook_id: str) -> subprocess.CompletedProcess:
    env = dict(os.environ, PRE_COMMIT_HOME=home, PRE_COMMIT_COLOR="never", NO_COLOR="1")
    env.pop("VIRTUAL_ENV", None)
    return subprocess.run(["pre-commit", "run", hook_id, "--all-files"], cwd=project, env=env,
                          capture_output=True, text=True, timeout=TIMEOUT)


def test_fix_hook_rewrites_then_passes(tmp_path, hook_repo, pre_commit_home):
    project = _project(tmp_path, hook_repo, "volfix", {"legacy.py": LEGACY})

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


def test_check_hook_fails_on_legacy_code_and_leaves_it_alone(tmp_path, hook_repo, pre_commit_home):
    project = _project(tmp_path, hook_repo, "volfix-check", {"legacy.py": LEGACY})

    result = _pre_commit(project, pre_commit_home, "volfix-check")
    output = result.stdout + result.stderr
    assert result.returncode == 1, output
    assert "legacy.py:2:13: VF101" in output
    assert (project / "legacy.py").read_text() == LEGACY


def test_check_hook_passes_on_clean_code(tmp_path, hook_repo, pre_commit_home):
    project = _project(tmp_path, hook_repo, "volfix-check", {"clean.py": CLEAN})

    result = _pre_commit(project, pre_commit_home, "volfix-check")
    assert result.returncode == 0, result.stdout + result.stderr
    assert "Passed" in result.stdout
