"""What volfix says and writes does not depend on the cache (issue 24: which helper definition a
message names depended on the cache state). A module name two files of a project can be (a
sibling `pkg/utils.py` and the root's `utils.py`, as Python 2's implicit relative imports
read it) goes to the file found first; with a warm cache the helpers read from the cache came
first and those computed again last, so editing the sibling made the root's helper the one
named, and fixed. Real runs: `volfix` in a subprocess, a cold run (`--no-cache`) against a
warm one."""
from __future__ import annotations

import os
import shutil
import subprocess
import sys
from pathlib import Path

HELPER = ("import torch\n"
          "from torch.autograd import Variable\n"
          "\n"
          "\n"
          "def to_var(x, volatile=False):\n"
          "    return Variable(x, volatile=volatile)\n")
MAIN = ("from utils import to_var\n"
        "\n"
        "\n"
        "def predict(model, batch):\n"
        "    inp = to_var(batch, volatile=True)\n"
        "    return model(inp)\n")


def volfix(cwd: Path, *args: str) -> subprocess.CompletedProcess:
    env = dict(os.environ, NO_COLOR="1")
    env["PYTHONPATH"] = str(Path(__file__).resolve().parent.parent)
    return subprocess.run([sys.executable, "-m", "volfix", *args], cwd=cwd, env=env, capture_output=True,
                          text=True, timeout=120)


def make_project(root: Path) -> None:
    (root / ".git").mkdir(parents=True)
    (root / "pkg").mkdir()
    (root / "utils.py").write_text(HELPER)
    (root / "pkg" / "__init__.py").write_text("")
    (root / "pkg" / "utils.py").write_text(HELPER)
    (root / "pkg" / "main.py").write_text(MAIN)


def edit(root: Path) -> None:
    """The sibling helper and its caller change: both are analysed again, the root's helper
    comes from the cache."""
    for name in ("pkg/utils.py", "pkg/main.py"):
        with open(root / name, "a") as fh:
            fh.write("# edited\n")


def test_a_warm_check_names_the_helper_a_cold_one_names(tmp_path):
    root = tmp_path / "project"
    make_project(root)
    first = volfix(root, "check", ".")
    assert first.returncode == 1 and (root / ".volfix_cache").is_dir()
    edit(root)
    warm = volfix(root, "check", ".")
    cold = volfix(root, "check", "--no-cache", ".")
    assert "`to_var()` (pkg/utils.py:5) passes `volatile`" in cold.stdout
    assert warm.stdout == cold.stdout and warm.returncode == cold.returncode == 1


def test_a_warm_fix_writes_what_a_cold_one_writes(tmp_path):
    warm_root, cold_root = tmp_path / "warm", tmp_path / "cold"
    make_project(warm_root)
    assert volfix(warm_root, "check", ".").returncode == 1  # fills the cache
    edit(warm_root)
    shutil.copytree(warm_root, cold_root, ignore=shutil.ignore_patterns(".volfix_cache"))
    warm = volfix(warm_root, "fix", "--unsafe-fixes", ".")
    cold = volfix(cold_root, "fix", "--no-cache", "--unsafe-fixes", ".")
    assert warm.returncode == cold.returncode and warm.stdout == cold.stdout
    for name in ("utils.py", "pkg/utils.py", "pkg/main.py"):
        assert (warm_root / name).read_text() == (cold_root / name).read_text(), name
    # the sibling helper is the one the caller reaches: its call gets the region and the helper
    # is unwrapped; the root's, which no call of the project reaches, is unwrapped too (no call
    # passes it a true flag), not left to callers the project does not have
    assert "volatile" not in (cold_root / "pkg" / "utils.py").read_text()
    assert "@torch.no_grad()" in (cold_root / "pkg" / "main.py").read_text()
    assert "Variable" not in (cold_root / "utils.py").read_text()
