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
