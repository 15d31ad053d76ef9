"""The README tells the truth (issue 25): its before/after example and what it says about it
are today's output, it shows no install command that cannot work, and its commands run as
written in a fresh virtualenv (install, the main job, the codemod).

The fresh-virtualenv test installs volfix and its dependencies from the package index (pip's
cache makes a repeat cheap: about 30 s on 2 cores) and runs once; `-m "not slow"` skips it."""
from __future__ import annotations

import os
import re
import shlex
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

from volfix import api

CHECKOUT = Path(__file__).resolve().parents[1]
README = (CHECKOUT / "README.md").read_text(encoding="utf-8")


def block(name: str, lang: str) -> str:
    """The fenced block between `<!-- name:start -->` and `<!-- name:end -->`."""
    found = re.search(rf"<!-- {name}:start -->\n```{lang}\n(.*?)```\n(?:.*?)<!-- {name}:end -->", README, re.S)
    assert found is not None, f"README block {name} is missing"
    return found.group(1)


def before_after():
    found = re.search(r"<!-- before-after:start -->\n```python\n(.*?)```\n\n(.*?)\n\n```python\n(.*?)```\n"
                      r"<!-- before-after:end -->", README, re.S)
    assert found is not None
    return found.group(1), found.group(2), found.group(3)


def test_before_and_after_is_what_volfix_fix_writes_and_what_check_says():
    before, said, after = before_after()
    assert said == "`volfix fix` turns it into:"
    assert api.fix_source(before, path="example.py").fixed_source == after
    checked = api.check_source(before, path="example.py")
    assert [d.fix.applicability.value for d in checked.diagnostics] == ["safe", "safe"]  # "Both ... safe"
    helps = [f"  = help: {d.fix.message}" for d in checked.diagnostics]
    assert block("before-after-help", "text").splitlines() == helps


def test_no_install_command_that_cannot_work():
    # No release on PyPI and no tag yet: nothing installed by name or pinned to a tag.
    assert not re.search(r"pip install [\"']?volfix(?:\[[\w,]+\])?[\"']?(?=\s|$)(?!\s*@)", README, re.M)
    assert "pip install \"volfix @ git+https://github.com/volfix/volfix@<commit>\"" in README
    assert not re.search(r"volfix/volfix@v\d", README)
    for pin in re.findall(r"github\.com/volfix/volfix@(\S+?)[\"`\s)]", README):
        assert pin in ("<commit>", "<sha>"), pin
    assert "--index-url https://download.pytorch.org/whl/cpu" in README  # where torch 2.13.0 comes from


def _copy_of_the_checkout(target: Path) -> Path:
    """What `pip install .` reads, copied: the build writes into the tree it builds."""
    target.mkdir()
    for name in ("pyproject.toml", "README.md", "LICENSE", "MANIFEST.in", "setup.py", "setup.cfg"):
        if (CHECKOUT / name).exists():
            shutil.copy2(CHECKOUT / name, target / name)
    ignore = shutil.ignore_patterns("__pycache__", "*.pyc", ".volfix_cache")
    for name in ("volfix", "examples"):
        shutil.copytree(CHECKOUT / name, target / name, ignore=ignore)
    return target


@pytest.mark.slow
def test_the_readme_commands_run_as_written_in_a_fresh_virtualenv(tmp_path):
    venv = tmp_path / "venv"
    subprocess.run([sys.executable, "-m", "venv", str(venv)], check=True, timeout=300)
    bindir = venv / ("Scripts" if os.name == "nt" else "bin")
    env = {k: v for k, v in os.environ.items() if k not in ("PYTHONPATH", "VIRTUAL_ENV", "PYTHONHOME")}
    env["PATH"] = str(bindir) + os.pathsep + env.get("PATH", "")
    env["PIP_DISABLE_PIP_VERSION_CHECK"] = "1"

    def run(command: str, cwd: Path) -> subprocess.CompletedProcess:
        return subprocess.run(["bash", "-c", command], cwd=cwd, env=env, capture_output=True, text=True,
                              timeout=900, stdin=subprocess.DEVNULL)

    # Install into the fresh virtualenv, and the main job: "exit code 1: findings remain".
    clone = _copy_of_the_checkout(tmp_path / "clone")
    (command,) = [line for line in block("try-it", "sh").splitlines() if line.strip()]
    assert command == "pip install . && volfix check examples/legacy"
    done = run(command, clone)
    assert done.returncode == 1, done.stdout[-2000:] + done.stderr[-2000:]
    assert re.search(r"^Found \d+ findings in \d+ files\.$", done.stderr, re.M), done.stderr[-2000:]
    assert " VF101 " in done.stdout
    installed = run("command -v volfix && python -c 'import volfix; print(volfix.__file__)'", tmp_path)
    assert installed.stdout.splitlines()[0] == str(bindir / "volfix")
    assert installed.stdout.splitlines()[1].startswith(str(venv))  # not the checkout

    # The codemod commands, on a project with an `async=` file and an unsafe-only one.
    project = tmp_path / "project"
    (project / "src").mkdir(parents=True)
    legacy = ("import torch\nfrom torch.autograd import Variable\n\n\ndef predict(model, x):\n"
              "    x = Variable(x, volatile=True)\n    return model(x.cuda(async=True)).argmax(1)\n")
    (project / "src" / "predict.py").write_text(legacy, encoding="utf-8")
    (project / "src" / "train.py").write_text("import torch\nfrom torch.autograd import Variable\nh = Variable(s)\n",
                                              encoding="utf-8")
    for line in block("codemod", "sh").splitlines():
        command = line.split("  #")[0].strip()
        if command:
            done = run(command, project)
            assert done.returncode == 0, (command, done.stdout[-2000:], done.stderr[-2000:])
            assert "Failed to codemod" not in done.stderr or "Failed to codemod 0 files" in done.stderr, done.stderr
    fixed = (project / "src" / "predict.py").read_text(encoding="utf-8")
    assert fixed == api.fix_source(legacy, path="src/predict.py").fixed_source
    assert "@torch.no_grad()" in fixed and "non_blocking=True" in fixed
    assert (project / "src" / "train.py").read_text(encoding="utf-8") == "import torch\nh = s\n"
    assert shlex.split(block("codemod", "sh").splitlines()[0])[0] == "volfix"
