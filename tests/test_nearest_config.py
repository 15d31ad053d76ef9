"""The nearest configuration applies to each file (as in ruff): `sub/pyproject.toml` with
`[tool.volfix]` governs the files under `sub/` when volfix runs from the parent; `--config`
overrides every file's; command-line flags lay over each file's. Through the CLI."""
from __future__ import annotations

import json
from pathlib import Path

import pytest

from conftest import invoke
from volfix.settings import config_file

LEGACY = ("from torch.autograd import Variable\n"
          "a = Variable(x)\n"
          "out = model(Variable(x, volatile=True))\n")
# The whole body is the region: `@torch.no_grad()` by default, a `with` block under "with".
PREDICT = ("from torch.autograd import Variable\n"
           "\n"
           "def predict(model, x):\n"
           "    out = model(Variable(x, volatile=True))\n"
           "    print(out)\n")


def write(root: Path, files: dict) -> None:
    for name, text in files.items():
        path = root / name
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(text)


def findings(*args: str) -> list:
    """(path, code) of every finding of `volfix check --format json ARGS`."""
    result = invoke("check", "--format", "json", "--no-cache", *args)
    assert result.exit_code in (0, 1), result.stderr
    return sorted((f["filename"].replace("\\", "/"), f["code"]) for f in json.loads(result.stdout))


def rel(project: Path, rows: list) -> list:
    return sorted((str(Path(name).relative_to(project)).replace("\\", "/"), code)
                  for name, code in rows)


@pytest.fixture
def tree(project):
    write(project, {
        "pyproject.toml": '[tool.volfix]\nignore = ["VF110"]\n',
        "sub/pyproject.toml": '[tool.volfix]\nselect = ["VF110"]\n',
        "m.py": LEGACY, "other/m.py": LEGACY, "sub/m.py": LEGACY, "sub/deep/er/m.py": LEGACY,
    })
    return project


def test_nested_config_selects_and_ignores_for_its_directory(tree):
    assert rel(tree, findings()) == [
        ("m.py", "VF101"), ("other/m.py", "VF101"),
        ("sub/deep/er/m.py", "VF110"), ("sub/m.py", "VF110")]


def test_the_same_files_named_from_anywhere_get_the_same_settings(tree, monkeypatch):
    expected = rel(tree, findings())
    monkeypatch.chdir(tree / "sub")
    assert rel(tree, findings("..")) == expected
    monkeypatch.chdir(tree / "other")
    assert rel(tree, findings("../sub/m.py", "../m.py")) == [("m.py", "VF101"), ("sub/m.py", "VF110")]


def test_config_option_gives_one_configuration_to_every_file(tree):
    assert rel(tree, findings("--config", "pyproject.toml")) == [
        ("m.py", "VF101"), ("other/m.py", "VF101"),
        ("sub/deep/er/m.py", "VF101"), ("sub/m.py", "VF101")]


def test_command_line_flags_lay_over_each_files_configuration(tree):
    # --extend-select re-enables what the root config ignores and adds to sub's selection.
    assert rel(tree, findings("--extend-select", "VF101,VF110")) == [
        ("m.py", "VF101"), ("m.py", "VF110"), ("other/m.py", "VF101"), ("other/m.py", "VF110"),
        ("sub/deep/er/m.py", "VF101"), ("sub/deep/er/m.py", "VF110"),
        ("sub/m.py", "VF101"), ("sub/m.py", "VF110")]
    # --select starts afresh everywhere.
    assert rel(tree, findings("--select", "VF101")) == [
        ("m.py", "VF101"), ("other/m.py", "VF101"),
        ("sub/deep/er/m.py", "VF101"), ("sub/m.py", "VF101")]


def test_volfix_toml_is_a_nested_configuration_too(tree):
    write(tree, {"other/volfix.toml": 'select = ["VF110"]\n'})
    assert ("other/m.py", "VF110") in rel(tree, findings())
    assert ("other/m.py", "VF101") not in rel(tree, findings())


def test_pyproject_without_a_volfix_table_is_skipped(tree):
    write(tree, {"other/pyproject.toml": '[project]\nname = "other"\n'})
    assert ("other/m.py", "VF101") in rel(tree, findings())


def test_nested_exclude_is_relative_to_its_configuration(project):
    write(project, {
        "pyproject.toml": '[tool.volfix]\nextend-exclude = ["gen"]\n',
        "sub/pyproject.toml": '[tool.volfix]\nexclude = ["generated/*.py", "skip_*.py"]\n',
        "gen/m.py": LEGACY, "sub/gen/m.py": LEGACY, "sub/generated/m.py": LEGACY,
        "sub/skip_me.py": LEGACY, "sub/keep.py": LEGACY, "skip_me.py": LEGACY,
        "generated/m.py": LEGACY,
    })
    paths = sorted({name for name, _ in rel(project, findings())})
    # Root: "gen" is excluded, "skip_*"/"generated" are not. Below sub/: only sub's globs count.
    assert paths == ["generated/m.py", "skip_me.py", "sub/gen/m.py", "sub/keep.py"]


def test_force_exclude_uses_the_named_files_nearest_configuration(project):
    write(project, {"sub/pyproject.toml": '[tool.volfix]\nexclude = ["gen"]\n',
                    "sub/gen/m.py": LEGACY, "sub/m.py": LEGACY})
    named = ["sub/gen/m.py", "sub/m.py"]
    assert sorted({n for n, _ in rel(project, findings(*named))}) == named
    assert sorted({n for n, _ in rel(project, findings("--force-exclude", *named))}) == ["sub/m.py"]


def test_per_file_ignores_are_relative_to_their_configuration(project):
    write(project, {
        "sub/pyproject.toml": '[tool.volfix]\nper-file-ignores = { "tests/*" = ["VF101"] }\n',
        "tests/t.py": LEGACY, "sub/tests/t.py": LEGACY, "sub/t.py": LEGACY,
    })
    assert [row for row in rel(project, findings()) if row[1] == "VF101"] == [
        ("sub/t.py", "VF101"), ("tests/t.py", "VF101")]


def test_nested_no_grad_style_and_legacy_semantics_shape_the_fixes(project):
    write(project, {
        "pyproject.toml": '[tool.volfix]\nno-grad-style = "auto"\n',
        "sub/pyproject.toml": '[tool.volfix]\nno-grad-style = "with"\nlegacy-semantics = true\n',
        "predict.py": PREDICT, "sub/predict.py": PREDICT,
        "wrap.py": "from torch.autograd import Variable\ny = model(Variable(x))\n",
        "sub/wrap.py": "from torch.autograd import Variable\ny = model(Variable(x))\n",
    })
    result = invoke("fix", "--no-cache")
    assert result.exit_code == 1, result.stderr  # the root's VF110 fix stays unsafe
    assert "@torch.no_grad()\ndef predict" in (project / "predict.py").read_text()
    nested = (project / "sub/predict.py").read_text()
    assert "    with torch.no_grad():\n        out = model(x)\n" in nested
    assert "@torch.no_grad()" not in nested
    # legacy-semantics makes the VF110 fix safe: applied below sub/ only.
    assert (project / "sub/wrap.py").read_text() == "y = model(x)\n"
    assert "Variable(x)" in (project / "wrap.py").read_text()


def test_the_cache_key_includes_each_files_configuration(tree):
    def cached() -> list:
        result = invoke("check", "--format", "json")  # with the cache
        return rel(tree, [(f["filename"], f["code"]) for f in json.loads(result.stdout)])

    first = cached()
    assert first == cached()  # the second run reads the cache
    assert (tree / ".volfix_cache").is_dir()
    (tree / "sub/pyproject.toml").write_text('[tool.volfix]\nselect = ["VF101"]\n')
    assert cached() == [("m.py", "VF101"), ("other/m.py", "VF101"),
                        ("sub/deep/er/m.py", "VF101"), ("sub/m.py", "VF101")]


def test_stdin_uses_the_configuration_nearest_its_filename(tree):
    result = invoke("check", "--format", "concise", "--stdin-filename", "sub/x.py", "-",
                    input=LEGACY)
    assert result.exit_code == 1
    assert [line.split(" ")[1] for line in result.stdout.splitlines()] == ["VF110"]


def test_malformed_nested_configuration_stops_the_run_before_any_write(tree):
    (tree / "sub/deep/pyproject.toml").write_text('[tool.volfix]\nselec = ["VF101"]\n')
    before = {p: p.read_text() for p in tree.rglob("*.py")}
    result = invoke("fix", "--no-cache")
    assert result.exit_code == 2
    assert "sub/deep/pyproject.toml" in result.stderr.replace("\\", "/")
    assert "unknown key `tool.volfix.selec`" in result.stderr
    assert {p: p.read_text() for p in tree.rglob("*.py")} == before


def test_each_configuration_file_is_read_once(tree, monkeypatch):
    for i in range(20):
        write(tree, {f"sub/pkg{i}/m.py": LEGACY, f"other/pkg{i}/m.py": LEGACY})
    loads: list = []
    real = config_file.load_config

    def counting(path, start_dir):
        loads.append(path)
        return real(path, start_dir)

    monkeypatch.setattr(config_file, "load_config", counting)
    assert len(findings()) == 44
    assert sorted(str(Path(p).resolve().relative_to(tree)) for p in loads if p) == [
        "sub/pyproject.toml"]
