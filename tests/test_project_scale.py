"""The project index at scale (issue 27): module names by lookup, one index per project."""
from __future__ import annotations

import itertools
import os
import shutil
import textwrap
from pathlib import Path
from typing import Dict, List

from volfix.settings.config import Config
from volfix.files.discovery import ProjectRoots
from volfix.project.index import ModuleTable, module_candidates, module_names, resolve_module
from volfix.run.options import RunOptions
from volfix.run.runner import run

FILES = [
    "/r/main.py", "/r/utils.py", "/r/utils.pyi", "/r/data/__init__.py", "/r/data/loader.py",
    "/r/pkg/__init__.py", "/r/pkg/utils.py", "/r/pkg/sub/__init__.pyi", "/r/pkg/sub/utils.py",
    "/r/pkg/sub/deep/mod.py", "/r/pkg.py", "/r/scripts/train.py", "/r/scripts/bad-name.py",
    "/r/lib/__init__/odd.py", "/r/lib/utils.py", "/top.py", "/r/x/__init__/__init__.py",
]


def test_module_candidates_are_module_names_read_backwards():
    """For every importer and every name a file of the project has from it (and names no
    file has), the candidates that exist are exactly the files `module_names` names so."""
    spelled = {name for target, importer in itertools.product(FILES, FILES)
               for name in module_names(target, importer)}
    spelled |= {"nothing", ".nothing", "pkg.__init__", "..", "...", "a..b", "", "lib.__init__.odd"}
    for importer in FILES:
        for name in sorted(spelled):
            expected = {path for path in FILES if name in module_names(path, importer)}
            assert set(module_candidates(name, importer)) & set(FILES) == expected, (name, importer)


def test_module_table_resolves_as_the_scan_over_the_files():
    table = ModuleTable(FILES)
    for importer in FILES:
        for target in FILES:
            for name in module_names(target, importer):
                assert table.resolve(name, importer) == resolve_module(name, importer, FILES), (name, importer)


def write(root: Path, files: Dict[str, str]) -> None:
    for name, text in files.items():
        path = root / name
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(textwrap.dedent(text), encoding="utf-8")


DATA = '''\
import torch
from torch.autograd import Variable


def get_batch(source, i, evaluation=False):
    return Variable(source[i:i + 2], volatile=evaluation)
'''

MAIN = '''\
from data import get_batch
from torch_imports import *


def evaluate(model, source):
    total = 0
    for i in range(0, len(source), 2):
        batch = get_batch(source, i, evaluation=True)
        total += model(batch).sum().item()
    return total
'''

FIELD = '''\
from torch.autograd import Variable


class Field(object):
    def as_tensor(self, batch, for_training):
        return Variable(batch, volatile=not for_training)
'''

# Another repository's `as_tensor` methods: a data API that has nothing to do with the first.
OTHER = '''\
import torch
from torch.autograd import Variable


def predict(model, field, batch):
    x = field.as_tensor(batch, False)
    out = model(x)
    return out.data


def train(model, field, batch, opt):
    loss = model(Variable(field.as_tensor(batch, True))).sum()
    loss.backward()
    opt.step()
'''

TREE = {
    "repo_a/setup.py": "from setuptools import setup\nsetup(name='a')\n",
    "repo_a/data.py": DATA,
    "repo_a/torch_imports.py": "import torch\nfrom torch.autograd import Variable\n",
    "repo_a/main.py": MAIN,
    "repo_a/field.py": FIELD,
    "repo_b/setup.cfg": "[metadata]\nname = b\n",
    "repo_b/data.py": DATA.replace("evaluation=False", "evaluation=True"),
    "repo_b/torch_imports.py": "import torch\n",
    "repo_b/main.py": MAIN,
    "repo_c/pyproject.toml": "[project]\nname = 'c'\n",
    "repo_c/predict.py": OTHER,
}


def tree(root: Path) -> Path:
    (root / ".git").mkdir(parents=True)
    (root / "repo_d").mkdir()
    (root / "repo_d" / ".git").mkdir()
    write(root, TREE)
    write(root, {"repo_d/main.py": MAIN, "repo_d/data.py": DATA})
    return root


def outcome(root: Path, runs: List[List[str]], mode: str) -> Dict[str, object]:
    """Diagnostics by file (relative to `root`) and every file's bytes after the runs."""
    found = {}
    cwd = os.getcwd()
    os.chdir(root)
    try:
        for paths in runs:
            for r in run(paths, config=Config(), options=RunOptions(mode=mode, unsafe_fixes=True, use_cache=False)):
                found[Path(os.path.relpath(os.path.abspath(r.path), root)).as_posix()] = [
                    (d.code, d.location.row, d.location.column, d.message, d.note, d.fix is not None)
                    for d in r.diagnostics]
    finally:
        os.chdir(cwd)
    texts = {p.relative_to(root).as_posix(): p.read_bytes() for p in sorted(root.rglob("*.py"))}
    return {"diagnostics": found, "files": texts}


def test_a_tree_of_projects_is_checked_and_fixed_as_each_project_alone(tmp_path):
    """One run over a folder of repositories finds and fixes exactly what a run in each
    repository does: helpers, star imports and method families stay inside their project."""
    for mode in ("check", "fix"):
        whole = tree(tmp_path / mode / "whole")
        alone = tree(tmp_path / mode / "alone")
        together = outcome(whole, [["."]], mode)
        separately = outcome(alone, [["repo_a"], ["repo_b"], ["repo_c"], ["repo_d"]], mode)
        assert together == separately
        if mode == "check":
            # The links inside a project are kept: main.py's call of data.py's helper.
            assert [d[:2] for d in together["diagnostics"]["repo_a/main.py"]] == [("VF101", 8)]
            # repo_a's `Field.as_tensor` is no method of repo_c's `field`: no call of it there.
            assert [d[0] for d in together["diagnostics"]["repo_c/predict.py"]] == ["VF110"]
        else:
            assert b"with torch.no_grad():" in together["files"]["repo_a/main.py"]


def test_project_roots_are_the_nearest_marker(tmp_path):
    root = tree(tmp_path / "t")
    roots = ProjectRoots()
    groups = roots.group([str(root / name) for name in sorted(TREE)] + [str(root / "repo_d" / "main.py"),
                                                                       str(root / "loose.py")])
    assert sorted((os.path.relpath(k, tmp_path) if k else None, len(v)) for k, v in groups.items()
                  if k is not None) == [("t", 1), ("t/repo_a", 5), ("t/repo_b", 4), ("t/repo_c", 2),
                                        ("t/repo_d", 1)]
    shutil.rmtree(root)


def refuse(*_args, **_kwargs):
    raise AssertionError("linked a project the cache holds the links of")


def diagnostics(results):
    return sorted((Path(r.path).as_posix(), d.code, d.location.row, d.message, d.note or "")
                  for r in results for d in r.diagnostics)


def test_a_warm_run_on_an_unchanged_tree_links_nothing(tmp_path, monkeypatch):
    import volfix.project.index as project

    root = tree(tmp_path / "t")
    monkeypatch.chdir(root)
    cold = diagnostics(run(["."], config=Config(), options=RunOptions(mode="check")))
    assert any(entry[:3] == ("repo_a/main.py", "VF101", 8) for entry in cold)
    with monkeypatch.context() as patched:
        patched.setattr(project.ProjectIndex, "build", refuse)
        assert diagnostics(run(["."], config=Config(), options=RunOptions(mode="check"))) == cold
        assert diagnostics(run(["."], config=Config(), options=RunOptions(mode="check", jobs=1))) == cold
    # One project changed: it alone is linked again, and the answer is a cold run's.
    # main.py is no candidate (it never spells `volatile`): the key holds its stat, not its
    # bytes. The same size and the old modification time back: its ctime still changes.
    main = root / "repo_b" / "main.py"
    before = main.stat()
    main.write_text(main.read_text().replace("evaluation=True", "evaluation=None"))
    os.utime(main, ns=(before.st_atime_ns, before.st_mtime_ns))
    assert main.stat().st_size == before.st_size
    built = []
    real_build = project.ProjectIndex.build
    monkeypatch.setattr(project.ProjectIndex, "build", lambda self: built.append(sorted(self.run)) or real_build(self))
    warm = diagnostics(run(["."], config=Config(), options=RunOptions(mode="check", jobs=1)))
    assert [{Path(p).parent.name for p in files} for files in built] == [{"repo_b"}]
    monkeypatch.undo()
    monkeypatch.chdir(root)
    assert warm == diagnostics(run(["."], config=Config(), options=RunOptions(mode="check", use_cache=False)))
    assert not any(entry[0] == "repo_b/main.py" for entry in warm)  # no call passes a true flag now


def test_the_helper_name_search_finds_a_file_exactly_when_it_spells_a_name():
    """`_call_filter`'s first search (one regex, a trie of the names) is `any(name in raw)`."""
    from hypothesis import given, settings
    from hypothesis import strategies as st

    from volfix.project.index import _any_word

    word = st.binary(min_size=1, max_size=6).map(lambda b: bytes(97 + c % 4 for c in b))

    @settings(max_examples=300, deadline=None)
    @given(st.sets(word, min_size=1, max_size=8), st.lists(word, max_size=6).map(b" ".join))
    def agrees(words, text):
        assert _any_word(set(words))(text) == any(w in text for w in words)

    agrees()
    assert _any_word({b"to_var", b"to_var_1", b"get_batch"})(b"x = to_variable(y)")
    assert not _any_word({b"to_var", b"get_batch"})(b"x = to_va(y) + get_batc")
