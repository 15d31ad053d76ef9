"""Shared test helpers: small legacy snippets and a CLI runner."""
from __future__ import annotations

import functools
import subprocess
import sys
import textwrap
from pathlib import Path
from typing import Dict

import pytest
from click.testing import CliRunner, Result

# `Variable` call starts at line 2, column 13 (1-based) and ends before column 39.
LEGACY = "from torch.autograd import Variable\nout = model(Variable(x, volatile=True))\n"
CLEAN = "import torch\n\nwith torch.no_grad():\n    out = model(x)\n"


def pytest_configure(config):
    config.addinivalue_line("markers", "slow: runs real external tools (pre-commit); -m 'not slow' skips")


@pytest.fixture
def project(tmp_path, monkeypatch):
    """An empty repository to run volfix in: cwd, a `.git` marker, no colour variables."""
    (tmp_path / ".git").mkdir()
    monkeypatch.chdir(tmp_path)
    for name in ("NO_COLOR", "FORCE_COLOR", "GITHUB_STEP_SUMMARY"):
        monkeypatch.delenv(name, raising=False)
    return tmp_path


def invoke(*args: str, input=None, env=None) -> Result:
    """Run the `volfix` command in-process; stdout and stderr are kept apart."""
    from volfix.cli.commands import main

    return CliRunner().invoke(main, list(args), input=input, env=env, catch_exceptions=False)


@functools.lru_cache(maxsize=None)
def _torch_missing() -> bool:
    return subprocess.run([sys.executable, "-c", "import torch"], capture_output=True).returncode != 0


def needs_torch(test):
    """Skip `test` where torch cannot be imported (asked once per session, in a subprocess)."""
    return pytest.mark.skipif(_torch_missing(), reason="torch is not installed")(test)


def commit_all(repo: Path) -> None:
    """`git init` in `repo` and commit everything in it, as the original a test compares with."""
    for args in (("init", "-q"), ("add", "."), ("commit", "-qm", "original")):
        subprocess.run(["git", "-c", "user.email=t@example.com", "-c", "user.name=t", *args], cwd=repo,
                       check=True, capture_output=True)


def committed_repo(tmp_path: Path, files: Dict[str, str]) -> Path:
    """A git repository whose HEAD holds `files` (dedented): the original program."""
    repo = tmp_path / "repo"
    repo.mkdir()
    for name, text in files.items():
        (repo / name).parent.mkdir(parents=True, exist_ok=True)
        (repo / name).write_text(textwrap.dedent(text))
    commit_all(repo)
    return repo


def project_tree(root: Path, files: Dict[str, str]) -> Path:
    """A project root (a `.git` marker) holding `files`, dedented."""
    (root / ".git").mkdir(parents=True)
    for name, text in files.items():
        (root / name).write_text(textwrap.dedent(text), encoding="utf-8")
    return root


def code_notebook(*cells: str) -> str:
    """A notebook's JSON text holding these code cells, unexecuted."""
    import json

    return json.dumps({"cells": [{"cell_type": "code", "execution_count": None, "metadata": {}, "outputs": [],
                                  "source": cell.splitlines(True)} for cell in cells],
                       "metadata": {"kernelspec": {"language": "python", "name": "python3"}},
                       "nbformat": 4, "nbformat_minor": 2}, indent=1) + "\n"


def run_results(root: Path, mode: str) -> dict:
    """file name -> result of a `check` or `fix` run (default configuration, no cache) over `root`."""
    from volfix.run.options import RunOptions
    from volfix.run.runner import run
    from volfix.settings.config import Config

    return {Path(r.path).name: r for r in run([str(root)], config=Config(),
                                                  options=RunOptions(mode=mode, use_cache=False))}
