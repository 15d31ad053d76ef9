"""One options value for a run (issue 23): `RunOptions`, accepted by the API, built by the CLI."""
from __future__ import annotations

import pytest

import volfix
from volfix import RunOptions, check_paths

LEGACY = "from torch.autograd import Variable\n\ndef ev(model, x):\n    return model(Variable(x, volatile=True))\n"


def tree(tmp_path):
    (tmp_path / "ev.py").write_text(LEGACY)
    return tmp_path


def test_the_options_value_and_the_keywords_run_the_same(tmp_path, monkeypatch):
    monkeypatch.chdir(tree(tmp_path))
    by_keywords = check_paths(["."], mode="diff", unsafe_fixes=True, jobs=1, use_cache=False)
    by_value = check_paths(["."], options=RunOptions(mode="diff", unsafe_fixes=True, jobs=1, use_cache=False))
    assert [(r.path, r.fixed_source) for r in by_value] == [(r.path, r.fixed_source) for r in by_keywords]
    assert by_value[0].fixed_source != LEGACY  # the diff mode computed a fix, and wrote nothing
    assert (tmp_path / "ev.py").read_text() == LEGACY


def test_options_and_keywords_together_are_refused(tmp_path, monkeypatch):
    monkeypatch.chdir(tree(tmp_path))
    with pytest.raises(TypeError, match="not both"):
        check_paths(["."], options=RunOptions(mode="fix"), mode="diff")


@pytest.mark.parametrize("fields, message", [
    ({"mode": "write"}, "mode must be one of check, fix, diff"),
    ({"review": lambda proposal: True}, "review needs mode"),
    ({"jobs": -1}, "jobs must be a positive number"),
])
def test_a_bad_options_value_is_refused_when_it_is_made(fields, message):
    with pytest.raises(ValueError, match=message):
        RunOptions(**fields)


def test_the_progress_callback_hears_the_whole_run(tmp_path, monkeypatch):
    monkeypatch.chdir(tree(tmp_path))
    (tmp_path / "clean.py").write_text("x = 1\n")
    calls = []
    check_paths(["."], options=RunOptions(jobs=1, use_cache=False, progress=lambda done, total: calls.append((done, total))))
    assert calls[0] == (0, 2) and calls[-1] == (2, 2)


def test_the_package_exports_the_options_type():
    assert volfix.RunOptions is RunOptions and "RunOptions" in volfix.__all__
