"""A check analyses the callers on the project index's parse of them (`volfix.project.early`,
issue 27): the results are the ones the files get when analysed after linking, whether the
links the index expected were right (kept) or not (analysed again)."""
from __future__ import annotations

import os
import textwrap
from pathlib import Path
from typing import Dict

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

import volfix.project.index as project
import volfix.run.linking as linking
from volfix.files.prefilter import HELPER_HINT, helper_hint
from volfix.project.stars import _STAR_IMPORT, has_star_import
from volfix.run.options import RunOptions
from volfix.run.runner import run
from volfix.settings.config import Config

ROOT = Path(__file__).resolve().parent.parent

UTILS = '''\
import torch
from torch.autograd import Variable


def to_var(x, volatile=False):
    return Variable(x, volatile=volatile)
'''

# A helper of its own (called from main.py), and a caller of utils.py's helper.
DATA = '''\
import torch
from torch.autograd import Variable
from utils import to_var


def get_batch(source, i, evaluation=False):
    data = Variable(source[i:i + 2], volatile=evaluation)
    return data


def predict(model, x):
    out = model(to_var(x, volatile=True))
    return out.data
'''

MAIN = '''\
from data import get_batch


def evaluate(model, source):
    total = 0
    for i in range(0, len(source), 2):
        batch = get_batch(source, i, evaluation=True)
        total += model(batch).sum().item()
    return total
'''

# Star-imports a module binding Variable, and calls utils.py's helper.
STAR = '''\
from torch_imports import *
from utils import to_var


def score(model, x):
    y = model(Variable(x, volatile=True))
    z = model(to_var(x, volatile=True))
    return y.data, z.data
'''

TREE = {"utils.py": UTILS, "data.py": DATA, "main.py": MAIN, "star.py": STAR,
        "torch_imports.py": "import torch\nfrom torch.autograd import Variable\n"}


def write(root: Path, files: Dict[str, str]) -> Path:
    (root / ".git").mkdir(parents=True)
    for name, text in files.items():
        (root / name).write_text(textwrap.dedent(text), encoding="utf-8")
    return root


def outcome(results):
    return sorted((r.path, r.error, r.source, [(d.code, d.location, d.end_location, d.message, d.note,
                                                 d.fix.applicability if d.fix else None,
                                                 tuple(d.fix.edits) if d.fix else None)
                                                for d in r.diagnostics]) for r in results)


@pytest.fixture
def watched(monkeypatch):
    """What the index analysed early: path -> (kept, the early result)."""
    seen: Dict[str, tuple] = {}
    real = project.ProjectIndex.build

    def build(self):
        links = real(self)
        for path, (expected, result) in self._early.items():
            seen[os.path.basename(path)] = (links.get(path) == expected, result)
        return links

    monkeypatch.setattr(project.ProjectIndex, "build", build)
    return seen


@pytest.mark.parametrize("with_fixes", [False, True])
def test_early_results_are_the_results_after_linking(tmp_path, monkeypatch, watched, with_fixes):
    root = write(tmp_path / "p", TREE)
    monkeypatch.chdir(root)
    options = RunOptions(mode="check", use_cache=False, jobs=1, with_fixes=with_fixes)
    early = run(["."], config=Config(), options=options)
    kept = sorted(name for name, (ok, _) in watched.items() if ok)
    dropped = sorted(name for name, (ok, _) in watched.items() if not ok)
    # main.py and star.py get no calls from other files: their links were the expected ones.
    # data.py's helper is called from main.py: its links hold that call, the early result
    # (which had none) is dropped and the file analysed again.
    assert kept == ["main.py", "star.py"] and dropped == ["data.py"]
    with monkeypatch.context() as patched:
        patched.setattr(project.ProjectIndex, "early_plans", lambda self, paths: {})
        late = run(["."], config=Config(), options=options)
    assert outcome(early) == outcome(late)
    assert any(d.code == "VF101" for r in early if r.path == "star.py" for d in r.diagnostics)
    # The dropped result is not the file's: kept, it would have changed the output.
    final = next(r for r in late if r.path == "data.py")
    assert outcome([watched["data.py"][1]]) != outcome([final])


NOTES = '''\
"""How to use the data module:
from data import *
"""
from torch.autograd import Variable

ONE = Variable(1)
'''

CALLS = '''\
from torch.autograd import Variable
from utils import to_var


def predict(model, x):
    return model(to_var(x, volatile=True)).data


def wrap(t):
    return Variable(t)
'''


def test_a_star_import_guessed_from_the_lines_is_checked_by_the_parse(tmp_path, monkeypatch, watched):
    """Before linking the star imports, the index reads them off the lines of the files:
    notes.py's docstring spells `from data import *` and the file uses `Variable`, so data.py
    would keep its `Variable` import for it. The parse says notes.py star-imports nothing: the
    links differ from the guess, and data.py is analysed again."""
    root = write(tmp_path / "p", {"utils.py": UTILS, "data.py": CALLS, "notes.py": NOTES})
    monkeypatch.chdir(root)
    options = RunOptions(mode="check", use_cache=False, jobs=1, with_fixes=True)
    early = run(["."], config=Config(), options=options)
    assert watched["data.py"][0] is False
    with monkeypatch.context() as patched:
        patched.setattr(project.ProjectIndex, "early_plans", lambda self, paths: {})
        late = run(["."], config=Config(), options=options)
    assert outcome(early) == outcome(late)
    assert outcome([watched["data.py"][1]]) != outcome(r for r in late if r.path == "data.py")


def test_a_cached_result_is_not_analysed_early(tmp_path, monkeypatch):
    """A helper moved in one file: the calls of every caller are found again (what they can
    reach changed), but a caller whose links are the same keeps its cached result."""
    root = write(tmp_path / "p", TREE)
    monkeypatch.chdir(root)
    cold = run(["."], config=Config(), options=RunOptions(mode="check", jobs=1))
    analysed = []
    real = linking.analyse
    monkeypatch.setattr(linking, "analyse", lambda process, path, *rest: analysed.append(
        os.path.basename(path)) or real(process, path, *rest))
    data = root / "data.py"
    data.write_text("# get_batch moves one line down\n" + data.read_text(), encoding="utf-8")
    warm = run(["."], config=Config(), options=RunOptions(mode="check", jobs=1))
    # star.py calls only utils.py's helper: the same links, its result from the cache.
    assert "star.py" not in analysed
    assert outcome(r for r in warm if r.path == "star.py") == outcome(r for r in cold if r.path == "star.py")
    monkeypatch.undo()
    monkeypatch.chdir(root)
    assert outcome(warm) == outcome(run(["."], config=Config(), options=RunOptions(mode="check",
                                                                                 use_cache=False)))


WORDS = st.sampled_from([b"volatile", b"Variable", b"(", b")", b"=", b" ", b"*", b",", b"not ", b"True",
                         b"x", b"\n", b"import", b"from", b"a.b", b"_flag", b"1", b"\t"])


@settings(max_examples=300, deadline=None)
@given(st.lists(WORDS, max_size=14))
def test_the_fast_searches_find_what_the_regexes_find(parts):
    data = b"".join(parts)
    assert helper_hint(data) == (HELPER_HINT.search(data) is not None)
    assert has_star_import(data) == (_STAR_IMPORT.search(data) is not None)


def test_the_fast_searches_on_the_fixtures():
    for path in sorted((ROOT / "fixtures").rglob("*.py")):
        data = path.read_bytes()
        assert helper_hint(data) == (HELPER_HINT.search(data) is not None), path


@settings(max_examples=200, deadline=None)
@given(st.sets(st.binary(min_size=1, max_size=5).map(lambda b: bytes(97 + c % 5 for c in b)), min_size=1, max_size=40),
       st.binary(max_size=60).map(lambda b: bytes(97 + c % 6 for c in b)))
def test_the_helper_name_search_with_few_and_many_word_heads(words, text):
    """`words._any_word` searches the words' heads first when they are few (at most
    `MAX_HEADS`), the regex alone otherwise: both answer as a plain search of every word."""
    from volfix.project.words import _any_word

    assert _any_word(set(words))(text) == any(w in text for w in words)
