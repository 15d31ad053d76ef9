"""`volfix fix --interactive`: answers from stdin (CliRunner and real pipes) and from a real
terminal (a pty), exactly which fixes are written and when, Ctrl-C, and the usage errors."""
from __future__ import annotations

import ast
import json
import os
import re
import select
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest

from conftest import invoke
from volfix.cli.interactive import PROMPT

A = """import torch
from torch.autograd import Variable


def evaluate(model, loader):
    correct = 0
    for x, y in loader:
        out = model(Variable(x, volatile=True))
        correct += (out.max(1)[1] == y).sum().item()
    return correct


def repackage(h):
    if type(h) == Variable:
        return h.detach()
    return tuple(repackage(v) for v in h)
"""
A_REGION = A.replace("""        out = model(Variable(x, volatile=True))
        correct += (out.max(1)[1] == y).sum().item()
""", """        with torch.no_grad():
            out = model(x)
            correct += (out.max(1)[1] == y).sum().item()
""")
A_ISINSTANCE = A.replace("type(h) == Variable", "isinstance(h, torch.Tensor)")
A_BOTH = A_REGION.replace("type(h) == Variable", "isinstance(h, torch.Tensor)").replace(
    "from torch.autograd import Variable\n", "")  # the clean-up: the import is unused now

B = """import torch


def prepare(x):
    x.volatile = False
    return x.cuda(async=True)
"""
B_RENAMED = B.replace("async=", "non_blocking=")
B_BOTH = B_RENAMED.replace("    x.volatile = False\n", "    x = x.detach()\n")

# What remains, in `--format concise`, when each fix is declined.
A_VF101 = "a.py:8:21: VF101 [*] `volatile=True` is ignored since PyTorch 0.4; use `torch.no_grad()`"
A_VF112 = ("a.py:15:8: VF112 [*] `type(x) == Variable` is always False since PyTorch 0.4; "
           "use `isinstance(x, torch.Tensor)`")  # a line lower once the region is written
B_VF202 = ("b.py:5:5: VF202 [*] assigning `.volatile` has no effect since PyTorch 0.4; "
           "use `torch.no_grad()`")
B_VF301 = "b.py:6:19: VF301 [*] `async=` is a syntax error since Python 3.7; use `non_blocking=`"

ROOT = Path(__file__).resolve().parent.parent


@pytest.fixture
def files(project):
    (project / "a.py").write_text(A)
    (project / "b.py").write_text(B)
    return project


def texts(project):
    return (project / "a.py").read_text(), (project / "b.py").read_text()


def interactive(answers: str, *args: str):
    return invoke("fix", "--interactive", "--format", "concise", "--no-cache", *args, input=answers)


def remaining(result) -> list:
    """The findings listed after the conversation (after the last prompt and its answer)."""
    if PROMPT not in result.stdout:
        return result.stdout.splitlines()
    return result.stdout.rsplit(PROMPT, 1)[1].splitlines()[1:]


def prompts(result) -> int:
    return result.stdout.count(PROMPT)


# ---------------------------------------------------------------------------- answers from stdin


def test_yes_and_no_write_exactly_the_accepted_fixes(files):
    result = interactive("y\nn\nn\ny\n")
    assert result.exit_code == 1
    assert prompts(result) == 4
    assert texts(files) == (A_REGION, B_RENAMED)
    assert remaining(result) == [A_VF112, B_VF202]
    assert result.stderr == "Fixed 2 findings (2 remaining).\n"
    for text in texts(files):
        ast.parse(text)
    # A plain run then applies what was declined, and a third run has nothing left to do.
    second = invoke("fix", "--no-cache")
    assert second.exit_code == 0 and second.stderr == "Fixed 2 findings (0 remaining).\n"
    assert texts(files) == (A_BOTH, B_BOTH)
    third = invoke("fix", "--no-cache")
    assert third.exit_code == 0 and third.stderr.startswith("All checks passed! (2 files that cannot hold a finding")
    assert texts(files) == (A_BOTH, B_BOTH)


def test_each_proposal_shows_findings_safety_what_the_fix_does_and_its_diff(files):
    result = interactive("y\nn\nq\n")
    first = result.stdout.split(PROMPT)[0]
    assert first == (
        "a.py:8:21: VF101 `volatile=True` is ignored since PyTorch 0.4; use `torch.no_grad()`\n"
        "[safe] Unwrap and run lines 8-9 under `with torch.no_grad():`\n"
        "--- a.py\n"
        "+++ a.py\n"
        "@@ -5,8 +5,9 @@\n"
        " def evaluate(model, loader):\n"
        "     correct = 0\n"
        "     for x, y in loader:\n"
        "-        out = model(Variable(x, volatile=True))\n"
        "-        correct += (out.max(1)[1] == y).sum().item()\n"
        "+        with torch.no_grad():\n"
        "+            out = model(x)\n"
        "+            correct += (out.max(1)[1] == y).sum().item()\n"
        "     return correct\n"
        " \n"
        " \n")
    assert "\x1b[" not in result.stdout  # --color auto and stdout is not a terminal


def test_all_accepts_every_remaining_fix_of_the_run_without_asking(files):
    result = interactive("n\na\n")
    assert result.exit_code == 1
    assert prompts(result) == 2
    assert texts(files) == (A_ISINSTANCE, B_BOTH)
    assert remaining(result) == [A_VF101]


def test_quit_keeps_the_current_files_accepted_fixes_and_writes_nothing_more(files):
    result = interactive("y\nq\ny\ny\n")
    assert result.exit_code == 1
    assert prompts(result) == 2
    assert texts(files) == (A_REGION, B)
    assert remaining(result) == [A_VF112, B_VF202, B_VF301]
    assert result.stderr == "Fixed 1 finding (3 remaining).\n"


def test_the_end_of_stdin_counts_as_quit(files):
    result = interactive("y\n")
    assert result.exit_code == 1
    assert prompts(result) == 2
    assert f"{PROMPT} q (end of input)\n" in result.stdout
    assert texts(files) == (A_REGION, B)
    nothing = interactive("")
    assert nothing.exit_code == 1 and prompts(nothing) == 1  # a.py's last fix, then quit
    assert texts(files) == (A_REGION, B)


def test_an_unclear_answer_is_asked_again_and_words_count(files):
    result = interactive("maybe\nYES\n\nNo\nall\n")
    assert result.stdout.count("Please answer y (yes), n (no), a (all remaining) or q (quit).\n") == 2
    assert prompts(result) == 5
    assert texts(files) == (A_REGION, B_BOTH)


def test_unsafe_fixes_are_proposed_only_with_unsafe_fixes(project):
    source = "import torch\nif x.volatile:\n    y = 1\n"
    (project / "u.py").write_text(source)
    plain = interactive("y\n")
    assert plain.exit_code == 1 and prompts(plain) == 0
    assert (project / "u.py").read_text() == source
    unsafe = interactive("y\n", "--unsafe-fixes")
    assert unsafe.exit_code == 0 and prompts(unsafe) == 1
    assert unsafe.stdout.startswith(
        "u.py:2:4: VF201 `.volatile` is always False since PyTorch 0.4; "
        "use `torch.is_grad_enabled()` or `.requires_grad`\n"
        "[unsafe] Replace the `.volatile` read\n"
        "  note: unsafe fix: the read asked whether `x` records a graph, "
        "which `.requires_grad` answers today\n--- u.py\n")
    assert (project / "u.py").read_text() == "import torch\nif not x.requires_grad:\n    y = 1\n"


def test_colour_follows_the_color_option(files):
    coloured = interactive("n\nq\n", "--color", "always")
    assert "\x1b[31m-        out = model(Variable(x, volatile=True))\x1b[0m\n" in coloured.stdout
    assert "\x1b[32m+        with torch.no_grad():\x1b[0m\n" in coloured.stdout
    assert "\x1b[1;32m[safe]\x1b[0m" in coloured.stdout
    plain = interactive("n\nq\n", "--color", "never")
    assert "\x1b" not in plain.stdout


@pytest.mark.parametrize("args", [["--diff"], ["-"], ["--stdin-filename", "a.py"],
                                  ["--format", "json"], ["--format", "sarif"]])
def test_what_interactive_cannot_do_is_a_usage_error(files, args):
    result = invoke("fix", "--interactive", *args, input="y\n")
    assert result.exit_code == 2
    assert result.stderr.startswith("Usage:") and "Error: --interactive " in result.stderr
    assert result.stdout == ""
    assert texts(files) == (A, B)


def test_check_has_no_interactive_mode(files):
    result = invoke("check", "--interactive")
    assert result.exit_code == 2


# ---------------------------------------------------------------------------- notebooks


def _notebook(*cells) -> str:
    return json.dumps({"cells": [{"cell_type": kind, "metadata": {}, "source": src.splitlines(True)}
                                 for kind, src in cells],
                       "metadata": {}, "nbformat": 4, "nbformat_minor": 5}, indent=1) + "\n"


NOTEBOOK_CELLS = [("code", "%matplotlib inline\nimport torch\nfrom torch.autograd import Variable"),
                  ("markdown", "# Evaluation"),
                  ("code", "for x in loader:\n    out = model(Variable(x, volatile=True))\n    total += out.sum().item()"),
                  ("code", "print(total)"),
                  ("code", "h = x.cuda(async=True)")]


def test_a_notebook_is_reviewed_cell_by_cell(project):
    path = project / "nb.ipynb"
    path.write_text(_notebook(*NOTEBOOK_CELLS))
    result = invoke("fix", "-i", "--format", "concise", "nb.ipynb", input="y\nn\n")
    assert result.exit_code == 1
    first, second, rest = result.stdout.split(PROMPT)
    assert first == (
        "nb.ipynb:cell 3:2:17: VF101 `volatile=True` is ignored since PyTorch 0.4; use `torch.no_grad()`\n"
        "[safe] Unwrap and run lines 2-3 under `with torch.no_grad():`\n"
        # the clean-up of this fix, in another cell: shown, as it is written with the fix
        "--- nb.ipynb:cell 1\n"
        "+++ nb.ipynb:cell 1\n"
        "@@ -1,3 +1,2 @@\n"
        " %matplotlib inline\n"
        "-import torch\n"
        "-from torch.autograd import Variable\n"
        "+import torch\n"
        "--- nb.ipynb:cell 3\n"
        "+++ nb.ipynb:cell 3\n"
        "@@ -1,3 +1,4 @@\n"
        " for x in loader:\n"
        "-    out = model(Variable(x, volatile=True))\n"
        "-    total += out.sum().item()\n"
        "+    with torch.no_grad():\n"
        "+        out = model(x)\n"
        "+        total += out.sum().item()\n")
    assert second.startswith(" y\nnb.ipynb:cell 5:1:12: VF301 ")
    assert second.endswith("--- nb.ipynb:cell 5\n+++ nb.ipynb:cell 5\n@@ -1 +1 @@\n"
                           "-h = x.cuda(async=True)\n+h = x.cuda(non_blocking=True)\n")
    assert rest == (" n\nnb.ipynb:cell 5:1:12: VF301 [*] `async=` is a syntax error since Python 3.7; "
                    "use `non_blocking=`\n")
    cells = ["".join(c["source"]) for c in json.loads(path.read_text())["cells"]]
    assert cells == ["%matplotlib inline\nimport torch",  # the unused import goes with the fix
                     "# Evaluation",
                     "for x in loader:\n    with torch.no_grad():\n        out = model(x)\n"
                     "        total += out.sum().item()",
                     "print(total)", "h = x.cuda(async=True)"]
    again = invoke("fix", "--no-cache", "nb.ipynb")
    assert again.exit_code == 0 and again.stderr == "Fixed 1 finding (0 remaining).\n"


@pytest.mark.parametrize("command", ["check", "fix"])
def test_notebook_diff_is_per_changed_cell(project, command):
    path = project / "nb.ipynb"
    path.write_text(_notebook(*NOTEBOOK_CELLS))
    result = invoke(command, "--diff", "nb.ipynb")
    assert result.exit_code == 1
    assert result.stdout == (
        "--- nb.ipynb:cell 1\n"
        "+++ nb.ipynb:cell 1\n"
        "@@ -1,3 +1,2 @@\n"
        " %matplotlib inline\n"
        "-import torch\n"
        "-from torch.autograd import Variable\n"
        "+import torch\n"
        "--- nb.ipynb:cell 3\n"
        "+++ nb.ipynb:cell 3\n"
        "@@ -1,3 +1,4 @@\n"
        " for x in loader:\n"
        "-    out = model(Variable(x, volatile=True))\n"
        "-    total += out.sum().item()\n"
        "+    with torch.no_grad():\n"
        "+        out = model(x)\n"
        "+        total += out.sum().item()\n"
        "--- nb.ipynb:cell 5\n"
        "+++ nb.ipynb:cell 5\n"
        "@@ -1 +1 @@\n"
        "-h = x.cuda(async=True)\n"
        "+h = x.cuda(non_blocking=True)\n")
    assert path.read_text() == _notebook(*NOTEBOOK_CELLS)


# ---------------------------------------------------------------------------- README


def test_the_readme_session_is_what_volfix_prints(project):
    readme = (ROOT / "README.md").read_text()
    block = re.search(r"<!-- interactive-session:start -->\n```text\n(.*?)```\n<!-- interactive-session:end -->",
                      readme, re.S)
    assert block is not None
    command, _, shown = block.group(1).partition("\n")
    assert command == "$ printf 'y\\nn\\n' | volfix fix --interactive --format concise"
    (project / "legacy.py").write_text(A)
    result = interactive("y\nn\n")
    assert result.output == shown


def test_the_readme_notebook_diff_is_what_volfix_prints(project):
    readme = (ROOT / "README.md").read_text()
    block = re.search(r"<!-- notebook-diff:start -->\n```text\n(.*?)```\n<!-- notebook-diff:end -->", readme, re.S)
    assert block is not None
    command, _, shown = block.group(1).partition("\n")
    assert command == "$ volfix check --diff analysis.ipynb"
    (project / "analysis.ipynb").write_text(_notebook(
        ("code", "import torch"), ("markdown", "# Evaluation"),
        ("code", "for x in loader:\n    out = model(torch.autograd.Variable(x, volatile=True))\n"
                 "    total += out.sum().item()"),
        ("code", "print(total)")))
    result = invoke("check", "--diff", "analysis.ipynb")
    assert result.exit_code == 1
    assert result.stdout == shown


# ---------------------------------------------------------------------------- real processes


def _volfix(*args: str, **kwargs) -> subprocess.Popen:
    env = {k: v for k, v in os.environ.items() if k not in ("NO_COLOR", "FORCE_COLOR")}
    return subprocess.Popen(
        [sys.executable, "-c", "from volfix.cli.commands import main; main()", "fix", "--interactive", "--no-cache",
         "--format", "concise", *args], env=env,
        # Python raises KeyboardInterrupt on SIGINT only if SIGINT is not ignored at start.
        preexec_fn=lambda: signal.signal(signal.SIGINT, signal.SIG_DFL), **kwargs)


class Output:
    """What a child process printed so far, read as it comes."""

    def __init__(self, stream):
        self.fd = stream.fileno()
        self.text = ""

    def wait_for(self, count: int, marker: str = PROMPT, timeout: float = 60) -> str:
        deadline = time.monotonic() + timeout
        while self.text.count(marker) < count:
            ready, _, _ = select.select([self.fd], [], [], max(0.0, deadline - time.monotonic()))
            if not ready:
                raise AssertionError(f"timed out waiting for {marker!r}; so far:\n{self.text}")
            chunk = os.read(self.fd, 65536)
            if not chunk:
                raise AssertionError(f"the process ended before {marker!r}; so far:\n{self.text}")
            self.text += chunk.decode()
        return self.text


def test_answers_through_a_real_pipe(files):
    done = subprocess.run(
        [sys.executable, "-c", "from volfix.cli.commands import main; main()", "fix", "--interactive", "--no-cache",
         "--format", "concise"], input="y\nn\nn\ny\n", capture_output=True, text=True, timeout=120)
    assert done.returncode == 1
    assert done.stdout.count(PROMPT) == 4
    assert texts(files) == (A_REGION, B_RENAMED)
    assert done.stderr == "Fixed 2 findings (2 remaining).\n"


def test_a_file_is_written_only_once_all_its_fixes_are_answered(files):
    proc = _volfix(stdin=subprocess.PIPE, stdout=subprocess.PIPE, stderr=subprocess.PIPE)
    try:
        out = Output(proc.stdout)
        out.wait_for(1)
        proc.stdin.write(b"y\n")
        proc.stdin.flush()
        out.wait_for(2)  # a.py's second fix: the first one is accepted but not written yet
        assert texts(files) == (A, B)
        proc.stdin.write(b"n\n")
        proc.stdin.flush()
        out.wait_for(3)  # b.py's first fix: a.py is done, so written
        assert texts(files) == (A_REGION, B)
        proc.stdin.write(b"n\nn\n")
        proc.stdin.close()
        assert proc.wait(timeout=60) == 1
    finally:
        proc.kill()
    assert texts(files) == (A_REGION, B)


def test_ctrl_c_at_a_prompt_writes_nothing_more_and_exits_130(files):
    proc = _volfix(stdin=subprocess.PIPE, stdout=subprocess.PIPE, stderr=subprocess.PIPE)
    try:
        out = Output(proc.stdout)
        out.wait_for(1)
        proc.stdin.write(b"y\ny\ny\n")  # both fixes of a.py, and the first of b.py
        proc.stdin.flush()
        out.wait_for(4)
        proc.send_signal(signal.SIGINT)
        assert proc.wait(timeout=60) == 130
        stderr = proc.stderr.read().decode()
    finally:
        proc.kill()
    assert texts(files) == (A_BOTH, B)  # b.py's accepted fix was not written
    assert stderr == "Interrupted: nothing more was written (files answered before stay fixed).\n"
    assert "Traceback" not in out.text


@pytest.mark.skipif(not hasattr(os, "openpty"), reason="needs a pseudo-terminal")
def test_keys_from_a_terminal(files):
    import termios

    leader, follower = os.openpty()
    proc = _volfix(stdin=follower, stdout=subprocess.PIPE, stderr=subprocess.PIPE)
    try:
        out = Output(proc.stdout)

        def press(key: bytes, prompt: int) -> None:
            out.wait_for(prompt)
            deadline = time.monotonic() + 60
            # click.getchar switches the terminal to raw mode (dropping earlier input): wait for it.
            while termios.tcgetattr(follower)[3] & termios.ICANON:
                assert time.monotonic() < deadline, "the terminal never left canonical mode"
                time.sleep(0.01)
            os.write(leader, key)

        press(b"n", 1)  # one key, no Enter
        press(b"y", 2)
        press(b"\x03", 3)  # Ctrl-C, read as a key in raw mode
        assert proc.wait(timeout=60) == 130
    finally:
        proc.kill()
        os.close(leader)
        os.close(follower)
    assert f"{PROMPT} n\n" in out.text and f"{PROMPT} y\n" in out.text
    assert texts(files) == (A_ISINSTANCE, B)
