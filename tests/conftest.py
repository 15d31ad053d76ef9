"""Shared test helpers: small legacy snippets and a CLI runner."""
from __future__ import annotations

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
