"""`check` and `fix --diff` say what one `volfix fix` run does (issue 25, item 5).

A helper threading the volatile flag is unwrapped once its callers in other files have their
regions; one `volfix fix` run writes those first and then unwraps it (the runner's settle
pass). `check` (its `[*]` marks, notes, `--statistics`, JSON fixes) and `--diff` used to count
the helper as needing --unsafe-fixes and leave it out of the diff, while plain `fix` applied it.
"""
from __future__ import annotations

import json
import shutil
import subprocess
from pathlib import Path

import pytest

from conftest import invoke
from test_fix_previews import apply_json_edits

HELPER = """\
import torch
from torch.autograd import Variable


def get_batch(source, i, evaluation=False):
    data = Variable(source[i:i + 2], volatile=evaluation)
    return data
"""

CALLER = """\
from data import get_batch


def evaluate(model, source):
    total = 0
    for i in range(0, len(source), 2):
        batch = get_batch(source, i, evaluation=True)
        total += model(batch).sum().item()
    return total


def train(model, source, opt):
    for i in range(0, len(source), 2):
        batch = get_batch(source, i)
        loss = model(batch).sum()
        loss.backward()
        opt.step()
"""

# The evaluation call's value reaches backward(): no region can be placed for it, so one
# `fix` run never unwraps the helper either.
TRAINING_CALLER = """\
from data import get_batch


def evaluate(model, source, opt):
    for i in range(0, len(source), 2):
        batch = get_batch(source, i, evaluation=True)
        loss = model(batch).sum()
        loss.backward()
        opt.step()
"""

FILES = ("data.py", "main.py")


def snapshot(root: Path) -> dict:
    return {name: (root / name).read_bytes() for name in FILES}


def statistics(*args: str) -> dict:
    result = invoke("check", "--statistics", "--no-cache", *args, ".")
    rows = [line.split(None, 2) for line in result.stdout.splitlines() if line.strip()]
    return {row[1]: row[2][:3] for row in rows}  # code -> "[*]" / "[ ]"


def patched(before: dict, diff: str, copy: Path) -> dict:
    """The files as they were, with `--diff`'s output applied by git (not by volfix)."""
    for name, data in before.items():
        (copy / name).write_bytes(data)
    if diff:
        subprocess.run(["git", "apply", "-p0", "-"], input=diff.encode(), cwd=copy, check=True)
    return snapshot(copy)


@pytest.mark.skipif(shutil.which("git") is None, reason="applies the diff with git")
@pytest.mark.parametrize("cache", [["--no-cache"], []], ids=["cold", "warm-cache"])
def test_check_diff_and_fix_agree_on_a_helper_called_from_another_file(project, tmp_path_factory, cache):
    (project / "data.py").write_text(HELPER)
    (project / "main.py").write_text(CALLER)
    before = snapshot(project)
    invoke("check", ".")  # fills the cache for the warm variant (a no-op under --no-cache)

    checked = invoke("check", "--format", "json", *cache, ".")
    findings = json.loads(checked.stdout)
    safe = [f for f in findings if f["fix"] and f["fix"]["applicability"] == "safe"]
    assert sorted(f["code"] for f in findings) == ["VF101", "VF103"]
    assert len(safe) == 2, findings
    [helper] = [f for f in findings if f["code"] == "VF103"]
    assert "main.py:7" in helper["note"] and "unsafe" not in helper["note"]

    text = invoke("check", *cache, ".")
    assert "needs --unsafe-fixes" not in text.stdout
    assert "[*] 2 fixable with `volfix fix`." in text.stderr
    assert "--unsafe-fixes" not in text.stderr
    assert statistics() == {"VF101": "[*]", "VF103": "[*]"}

    preview = invoke("fix", "--diff", *cache, ".")
    assert preview.exit_code == 1
    assert "Would fix 2 findings in 2 files." in preview.stderr
    assert snapshot(project) == before  # --diff writes nothing

    fixed = invoke("fix", *cache, ".")
    assert "Fixed 2 findings" in fixed.stderr, fixed.stderr
    written = snapshot(project)
    assert all(written[name] != before[name] for name in FILES)
    # The diff is exactly what fix wrote, and the count of fixable findings what it applied.
    assert patched(before, preview.stdout, tmp_path_factory.mktemp("diff")) == written
    # Each file has one fix: its JSON edits give the file fix wrote.
    for finding in safe:
        name = Path(finding["filename"]).name
        assert apply_json_edits(before[name].decode(), finding["fix"]["edits"]) == written[name].decode(), name
    assert invoke("check", "--no-cache", ".").exit_code == 0


def test_a_helper_whose_caller_gets_no_region_stays_unsafe_in_check_and_unfixed(project):
    (project / "data.py").write_text(HELPER)
    (project / "main.py").write_text(TRAINING_CALLER)
    before = snapshot(project)
    findings = json.loads(invoke("check", "--format", "json", "--no-cache", ".").stdout)
    [helper] = [f for f in findings if f["code"] == "VF103"]
    assert helper["fix"]["applicability"] == "unsafe"
    assert helper["note"].startswith("unsafe fix: the calls in other files (main.py:6)")
    assert not any(f["fix"] and f["fix"]["applicability"] == "safe" for f in findings)
    assert statistics() == {"VF101": "[ ]", "VF103": "[ ]"}
    preview = invoke("fix", "--diff", "--no-cache", ".")
    assert preview.stdout == "" and preview.exit_code == 0
    invoke("fix", "--no-cache", ".")
    assert snapshot(project) == before


def test_a_helper_called_from_more_files_than_the_preview_takes_keeps_its_waiting_note(project, monkeypatch):
    """The preview fixes the helper's file and all its callers in memory; past PREVIEW_MAX_FILES
    (a helper called all over a monorepo) check does not preview, and says what the run waits
    for instead; `fix` itself still writes the regions and then unwraps the helper."""
    from volfix.flow.follow import is_awaiting
    from volfix.run import runner

    monkeypatch.setattr(runner, "PREVIEW_MAX_FILES", 1)
    (project / "data.py").write_text(HELPER)
    (project / "main.py").write_text(CALLER)
    findings = json.loads(invoke("check", "--format", "json", "--no-cache", ".").stdout)
    [helper] = [f for f in findings if f["code"] == "VF103"]
    assert helper["fix"]["applicability"] == "unsafe" and is_awaiting(helper["note"]), helper["note"]
    assert "Fixed 2 findings" in invoke("fix", "--no-cache", ".").stderr
