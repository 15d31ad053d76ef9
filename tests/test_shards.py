"""A sweep split over machines: `check --shard K/N` and `volfix merge` (issue 27)."""
from __future__ import annotations

import json
import os
from pathlib import Path

import pytest
from conftest import invoke
from test_project_scale import DATA, MAIN, TREE, write

from volfix.files.discovery import ProjectRoots
from volfix.run.shards import parse_shard, select


def test_parse_shard():
    assert parse_shard("2/5") == (2, 5)
    assert parse_shard("1/1") == (1, 1)
    for bad in ("0/3", "4/3", "3", "a/b", "1/0", "-1/2", "1/2/3"):
        with pytest.raises(ValueError):
            parse_shard(bad)


@pytest.fixture
def sweep(tmp_path, monkeypatch):
    """Four repositories under one git root, and files in none of them."""
    for name in ("NO_COLOR", "FORCE_COLOR", "GITHUB_STEP_SUMMARY"):
        monkeypatch.delenv(name, raising=False)
    (tmp_path / ".git").mkdir()
    (tmp_path / "repo_d" / ".git").mkdir(parents=True)
    write(tmp_path, TREE)
    write(tmp_path, {"repo_d/main.py": MAIN, "repo_d/data.py": DATA, "tools/loose.py": DATA,
                     "repo_e/setup.py": "", "repo_e/eval.py": MAIN, "repo_e/data.py": DATA})
    monkeypatch.chdir(tmp_path)
    return tmp_path


def files_of(root: Path):
    return sorted(str(p) for p in root.rglob("*.py") if ".git" not in p.parts)


@pytest.mark.parametrize("n", [1, 2, 3, 4, 7])
def test_the_shards_hold_every_file_once_and_whole_projects(sweep, n):
    files = files_of(sweep)
    parts = [select(files, (k, n)) for k in range(1, n + 1)]
    assert sorted(p for part in parts for p in part) == files
    roots = ProjectRoots()
    for part in parts:
        for other in parts:
            if other is not part:
                assert not {roots.root_of(p) for p in part} & {roots.root_of(p) for p in other}
    # The same split on another machine: the walk's order does not matter.
    assert [select(list(reversed(files)), (k, n)) for k in range(1, n + 1)] == parts


def test_projects_go_to_the_part_with_the_fewest_files(sweep):
    """Largest first, ties by path: repo_a (5 files) -> 1; repo_b (3) -> 2; repo_e (3) -> 2;
    repo_d (2) -> 1; the root's tools/loose.py (1) -> 2 (7 against 6); repo_c (1) -> 1."""
    files = files_of(sweep)
    roots = ProjectRoots()
    parts = [sorted({os.path.relpath(roots.root_of(p), sweep) for p in select(files, (k, 2))}) for k in (1, 2)]
    assert parts == [["repo_a", "repo_c", "repo_d"], [".", "repo_b", "repo_e"]]


def run_lines(*args):
    result = invoke("check", "--no-cache", "--format", "json-lines", *args)
    assert result.exit_code == 1, result.stderr
    return result.stdout


def test_the_merged_shards_are_one_run(sweep):
    """json-lines of the parts, merged, are the one run's byte for byte; its summary and its
    human formats too."""
    whole = run_lines(".")
    assert len(whole.splitlines()) > 10
    outputs = []
    for k in (1, 2, 3):
        text = run_lines("--shard", f"{k}/3", ".")
        assert text  # each part holds findings in this tree
        path = sweep / f"shard-{k}.jsonl"
        path.write_text(text)
        outputs.append(str(path))
    merged = invoke("merge", "--format", "json-lines", *outputs)
    assert merged.exit_code == 1
    assert merged.stdout == whole
    # JUnit is left out: it also lists the candidates without findings as passing cases,
    # which json-lines does not hold.
    for fmt in ("concise", "full", "json", "sarif", "github"):
        one = invoke("check", "--no-cache", "--format", fmt, ".")
        joined = invoke("merge", "--format", fmt, *outputs)
        assert (joined.exit_code, joined.stdout, joined.stderr) == (one.exit_code, one.stdout, one.stderr), fmt
    assert "Found" in invoke("merge", *outputs).stderr


def test_merge_exit_codes_and_bad_input(sweep):
    empty = sweep / "empty.jsonl"
    empty.write_text("")
    assert invoke("merge", str(empty)).exit_code == 0
    assert invoke("merge", "--exit-zero", str(sweep / "empty.jsonl")).exit_code == 0
    bad = sweep / "bad.jsonl"
    bad.write_text('{"code": "VF101"}\n')
    result = invoke("merge", str(bad))
    assert result.exit_code == 2
    assert "bad.jsonl:1: not a volfix json-lines finding" in result.stderr
    assert invoke("check", "--shard", "4/3", ".").exit_code == 2
    assert invoke("check", "--shard", "1/2", "-", input="x = 1\n").exit_code == 2


def test_a_shard_checks_only_its_projects(sweep):
    names = set()
    for k in (1, 2):
        found = {json.loads(line)["filename"] for line in run_lines("--shard", f"{k}/2", ".").splitlines()}
        parts = {Path(os.path.relpath(f, sweep)).parts[0] for f in found}
        assert not parts & names
        names |= parts
    assert names >= {"repo_a", "repo_b", "repo_d", "repo_e", "tools"}


def test_readme_sweep_runs_the_action_in_a_matrix_and_merges():
    import re

    import yaml

    root = Path(__file__).resolve().parent.parent
    action = yaml.safe_load((root / "action.yml").read_text(encoding="utf-8"))
    readme = (root / "README.md").read_text(encoding="utf-8")
    section = readme[readme.index("### A sweep across many repositories\n"):]
    workflow = yaml.safe_load(re.search(r"```yaml\n(.*?)```", section, re.S).group(1))
    shard, report = workflow["jobs"]["shard"], workflow["jobs"]["report"]
    n = len(shard["strategy"]["matrix"]["shard"])
    [ours] = [s for s in shard["steps"] if s.get("uses", "").startswith("volfix/volfix@")]
    assert set(ours["with"]) <= set(action["inputs"])
    assert ours["with"]["args"] == f"--shard ${{{{ matrix.shard }}}}/{n}"
    assert ours["with"]["json-lines"].endswith(".jsonl")
    assert report["needs"] == "shard"
    assert any(step.get("run", "").startswith("volfix merge") for step in report["steps"])
