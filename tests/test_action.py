"""The GitHub Action (`action.yml` at the root): its metadata, and its steps really run.

`act` is not available, so `action_runner` plays the runner: it substitutes the inputs and
`github.action_path` into the steps, evaluates their `if:` conditions and runs each `run:`
step with bash in a throwaway git repository. The install step really creates a virtualenv
and pip-installs volfix from a copy of this checkout (`github.action_path`), once per module;
the steps that need GitHub (setup-python, upload-sarif) are checked for whether they would
run and with what.
"""
from __future__ import annotations

import json
import os
import re
import shutil
import subprocess
from pathlib import Path

import pytest
import yaml

from action_runner import (StepResult, evaluate, expressions_in, load_action, run_action,
                           would_run)
from builders import sarif_validator
from conftest import CLEAN, LEGACY

CHECKOUT = Path(__file__).resolve().parents[1]
ACTION = CHECKOUT / "action.yml"
# What `pip install <action_path>` needs (the action's checkout is the repository).
PACKAGE_FILES = ("action.yml", "pyproject.toml", "README.md")
STEP_KEYS = {"name", "id", "if", "run", "shell", "env", "uses", "with", "working-directory",
             "continue-on-error"}


@pytest.fixture(scope="module")
def action():
    return load_action(ACTION)


# ---------------------------------------------------------------------------- metadata


def test_metadata_has_what_github_requires(action):
    assert set(action) <= {"name", "author", "description", "inputs", "outputs", "runs", "branding"}
    assert isinstance(action["name"], str) and action["name"]
    assert isinstance(action["description"], str) and action["description"]
    for name, spec in action["inputs"].items():
        assert set(spec) <= {"description", "required", "default", "deprecationMessage"}, name
        assert isinstance(spec["description"], str) and spec["description"], name
        assert isinstance(spec.get("default", ""), str), f"{name}: defaults are strings"
    for name, spec in action.get("outputs", {}).items():
        assert spec["description"] and spec["value"], name  # composite outputs need a value
    assert action["runs"]["using"] == "composite"


def test_every_step_is_well_formed(action):
    steps = action["runs"]["steps"]
    ids = [s["id"] for s in steps if "id" in s]
    assert len(ids) == len(set(ids))
    for step in steps:
        assert set(step) <= STEP_KEYS, step.get("name")
        assert ("run" in step) != ("uses" in step), step.get("name")
        if "run" in step:
            assert step.get("shell") == "bash", f"{step.get('name')}: a `run` step needs `shell`"
        else:
            assert re.fullmatch(r"[\w-]+/[\w/-]+@v\d+", step["uses"]), step["uses"]


def test_expressions_reference_declared_inputs_and_earlier_steps(action):
    declared = set(action["inputs"])
    used = set()
    seen_ids = set()
    for step in action["runs"]["steps"]:
        for expression in expressions_in(step):
            for name in re.findall(r"\binputs\.([\w-]+)", expression):
                assert name in declared, f"undefined input `{name}` in {expression!r}"
                used.add(name)
            for step_id in re.findall(r"\bsteps\.([\w-]+)", expression):
                assert step_id in seen_ids, f"`steps.{step_id}` before that step ran: {expression!r}"
            contexts = re.findall(r"(?<![\w.-])([A-Za-z_][\w-]*)\.", expression)
            assert set(contexts) <= {"inputs", "steps", "github"}, expression
        seen_ids.add(step.get("id"))
    assert used == declared, f"inputs never used: {declared - used}"
    for expression in expressions_in(action.get("outputs", {})):
        for step_id in re.findall(r"\bsteps\.([\w-]+)", expression):
            assert step_id in seen_ids


def test_scripts_take_inputs_through_the_environment_only(action):
    # `${{ inputs.x }}` pasted into a script is a script-injection hole (GitHub's hardening guide).
    for step in action["runs"]["steps"]:
        assert "${{" not in step.get("run", ""), step.get("name")


def test_every_expression_is_readable(action):
    context = {"inputs": {name: "" for name in action["inputs"]}, "github": {"action_path": "/a"},
               "steps": {s["id"]: {"outcome": "success", "outputs": {}} for s in action["runs"]["steps"]
                         if "id" in s}}
    for expression in expressions_in(action):
        evaluate(expression, context, [])  # raises on anything the runner model cannot read


def test_upload_runs_after_a_failed_check_but_not_without_sarif_or_when_cancelled(action):
    upload = next(s for s in action["runs"]["steps"] if s.get("uses", "").startswith("github/codeql-action/upload-sarif"))
    assert upload["with"]["sarif_file"] == "${{ inputs.sarif }}"
    assert "cancelled()" in upload["if"] and not re.search(r"\balways\(\)", upload["if"])
    failed_check = [StepResult("check", "volfix check", ran=True, outcome="failure")]
    context = {"inputs": {"sarif": "volfix.sarif"}, "steps": {"sarif": {"outcome": "success"}}}
    assert would_run(upload["if"], context, failed_check)
    assert not would_run(upload["if"], {**context, "inputs": {"sarif": ""}}, failed_check)
    assert not would_run(upload["if"], {**context, "steps": {"sarif": {"outcome": "failure"}}}, failed_check)


# ---------------------------------------------------------------------------- running it


def git(cwd: Path, *args: str) -> None:
    subprocess.run(["git", "-c", "init.defaultBranch=main", *args], cwd=cwd, check=True,
                   capture_output=True)


def repository(root: Path, files) -> Path:
    root.mkdir()
    git(root, "init", "-q")
    for name, text in files.items():
        (root / name).parent.mkdir(parents=True, exist_ok=True)
        (root / name).write_text(text)
    return root


@pytest.fixture(scope="module")
def action_path(tmp_path_factory):
    """A copy of the action's checkout (pip builds in the source tree: keep ours clean)."""
    copy = tmp_path_factory.mktemp("action") / "volfix"
    copy.mkdir()
    for name in PACKAGE_FILES:
        shutil.copy2(CHECKOUT / name, copy / name)
    shutil.copytree(CHECKOUT / "volfix", copy / "volfix", ignore=shutil.ignore_patterns("__pycache__", "*.pyc"))
    return copy


@pytest.fixture(scope="module")
def runner_temp(tmp_path_factory):
    return tmp_path_factory.mktemp("runner_temp")


@pytest.fixture(scope="module")
def clean_run(action_path, runner_temp, tmp_path_factory):
    """The whole action on a clean repository, SARIF on: the install step really runs here."""
    workspace = repository(tmp_path_factory.mktemp("clean") / "repo", {"model.py": CLEAN})
    summary = runner_temp / "clean_summary.md"
    run = run_action(action_path, workspace, {"sarif": "volfix.sarif"}, runner_temp=runner_temp,
                     env={"GITHUB_STEP_SUMMARY": str(summary)})
    return run, workspace, summary


@pytest.fixture(scope="module")
def installed(clean_run):
    install = clean_run[0].step("install")
    assert install.outcome == "success", install.stderr
    return install


@pytest.mark.slow
def test_clean_repository_passes_with_an_empty_sarif_log(clean_run):
    run, workspace, summary = clean_run
    install = run.step("install")
    assert install.outcome == "success", install.stdout + install.stderr
    assert re.search(r"^volfix \d+\.\d+", install.stdout, re.M)
    # setup-python needs GitHub: it is not played, but it would run with these inputs
    setup = run.step("setup-python")
    assert setup.would_run and setup.with_ == {"python-version": "3.12", "update-environment": "false"}
    check = run.step("check")
    assert (check.returncode, check.stdout) == (0, "")
    assert not run.failed
    log = json.loads((workspace / "volfix.sarif").read_text())
    assert list(sarif_validator().iter_errors(log)) == []
    assert log["runs"][0]["results"] == []
    upload = run.step("Upload SARIF")
    assert upload.would_run and upload.with_ == {"sarif_file": "volfix.sarif", "category": "volfix"}
    assert "## volfix" in summary.read_text()


@pytest.mark.slow
def test_install_uses_the_actions_own_checkout_by_default(clean_run, action_path):
    install = clean_run[0].step("install")
    assert f"volfix: installing {action_path}\n" in install.stdout


@pytest.mark.slow
def test_legacy_repository_gets_annotations_and_fails(installed, action_path, runner_temp, tmp_path):
    workspace = repository(tmp_path / "repo", {"src/legacy.py": LEGACY, "ok.py": CLEAN})
    run = run_action(action_path, workspace, {"sarif": "out/volfix.sarif"}, runner_temp=runner_temp,
                     preset={"install": installed})
    check = run.step("check")
    assert check.returncode == 1 and check.outcome == "failure" and run.failed
    assert check.stdout.splitlines() == [
        "::error file=src/legacy.py,line=2,endLine=2,col=13,endColumn=39,title=volfix (VF101)::"
        "`volatile=True` is ignored since PyTorch 0.4; use `torch.no_grad()`"]
    # The SARIF step ran before the check, kept going on findings, and its file is uploaded.
    assert run.step("sarif").outcome == "success"
    log = json.loads((workspace / "out" / "volfix.sarif").read_text())
    assert list(sarif_validator().iter_errors(log)) == []
    [finding] = log["runs"][0]["results"]
    assert finding["ruleId"] == "VF101"
    assert finding["locations"][0]["physicalLocation"]["artifactLocation"]["uri"] == "src/legacy.py"
    upload = run.step("Upload SARIF")
    assert upload.would_run and upload.with_["sarif_file"] == "out/volfix.sarif"


@pytest.mark.slow
def test_paths_and_args_reach_volfix(installed, action_path, runner_temp, tmp_path):
    workspace = repository(tmp_path / "repo", {"a/legacy.py": LEGACY, "b/legacy.py": LEGACY})
    run = run_action(action_path, workspace, {"paths": "a\n", "args": "--select  VF2\n"},
                     runner_temp=runner_temp, preset={"install": installed})
    assert run.step("check").returncode == 0 and run.step("check").stdout == ""  # VF101 not selected
    run = run_action(action_path, workspace, {"paths": "a b", "args": ""}, runner_temp=runner_temp,
                     preset={"install": installed})
    files = re.findall(r"^::error file=([^,]+),", run.step("check").stdout, re.M)
    assert files == ["a/legacy.py", "b/legacy.py"] and run.failed
    assert not run.step("sarif").ran and not run.step("Upload SARIF").would_run


@pytest.mark.slow
def test_a_shard_writes_its_json_lines_for_volfix_merge(installed, action_path, runner_temp, tmp_path):
    workspace = repository(tmp_path / "repo", {"a/setup.py": "", "a/legacy.py": LEGACY,
                                               "b/setup.py": "", "b/legacy.py": LEGACY})
    found = []
    for k in (1, 2):
        run = run_action(action_path, workspace, {"args": f"--shard {k}/2", "json-lines": f"out/{k}.jsonl"},
                         runner_temp=runner_temp, preset={"install": installed})
        assert run.step("json-lines").outcome == "success" and run.failed  # the check step fails
        lines = (workspace / "out" / f"{k}.jsonl").read_text().splitlines()
        found += [os.path.relpath(json.loads(line)["filename"], workspace) for line in lines]
    assert sorted(found) == ["a/legacy.py", "b/legacy.py"]


@pytest.mark.slow
def test_a_usage_error_fails_the_sarif_step_and_skips_the_upload(installed, action_path, runner_temp, tmp_path):
    workspace = repository(tmp_path / "repo", {"legacy.py": LEGACY})
    run = run_action(action_path, workspace, {"sarif": "v.sarif", "args": "--select NOPE"},
                     runner_temp=runner_temp, preset={"install": installed})
    assert run.step("sarif").returncode == 2 and run.failed
    assert not run.step("check").ran  # skipped after the failure, as on GitHub
    assert not run.step("Upload SARIF").would_run  # no SARIF file to upload


@pytest.mark.slow
def test_version_input_names_a_release(action_path, tmp_path):
    workspace = repository(tmp_path / "repo", {"legacy.py": LEGACY})
    run = run_action(action_path, workspace, {"version": "v0.0.0.dev0"}, runner_temp=tmp_path)
    install = run.step("install")
    assert install.outcome == "failure" and not run.step("check").ran
    assert "volfix: installing volfix==0.0.0.dev0\n" in install.stdout
    assert "volfix==0.0.0.dev0" in install.stderr  # pip could not find that release


def test_readme_workflow_uses_the_action_with_declared_inputs(action):
    readme = (CHECKOUT / "README.md").read_text(encoding="utf-8")
    section = readme[readme.index("## GitHub Action\n"):]
    workflow = yaml.safe_load(re.search(r"```yaml\n(.*?)```", section, re.S).group(1))
    steps = workflow["jobs"]["volfix"]["steps"]
    [ours] = [s for s in steps if s.get("uses", "").startswith("volfix/volfix@")]
    assert ours["with"] and set(ours["with"]) <= set(action["inputs"])
    assert workflow["permissions"]["security-events"] == "write"  # upload-sarif needs it
    assert steps[0]["uses"].startswith("actions/checkout@")  # volfix needs the files
    table = re.findall(r"^\| `([\w-]+)` \|", section.split("\n## ")[0], re.M)
    assert table == list(action["inputs"])  # every input documented, in order
