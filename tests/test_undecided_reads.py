"""A clean `check` says how many `.data[0]` reads it could not decide (issue 22: "clean means
migrated"): VF407, off by default, lists them; the summary counts them when it is off."""
from __future__ import annotations

import json

from conftest import invoke

# `probs` is a model's output: 0-dim or a batch, by what the model returns.
UNDECIDED = """import torch


def act(model, state):
    probs = model(state)
    return probs.data[0], torch.zeros(3, 4).data[0]
"""
HINT = "1 `.data[0]` read of a value whose shape the code does not tell"


def test_a_clean_check_counts_the_reads_it_could_not_decide(project):
    (project / "a.py").write_text(UNDECIDED)
    result = invoke("check", "--no-cache", "a.py")
    assert result.exit_code == 0
    assert result.stderr.splitlines()[0] == "All checks passed!"
    assert HINT in result.stderr and "`--extend-select VF407` lists it" in result.stderr
    assert result.stdout == ""


def test_the_count_survives_the_cache(project):
    (project / "a.py").write_text(UNDECIDED)
    first = invoke("check", "a.py")
    again = invoke("check", "a.py")  # read from the cache written by the first run
    assert HINT in first.stderr and HINT in again.stderr


def test_selected_vf407_lists_the_read_instead(project):
    (project / "a.py").write_text(UNDECIDED)
    result = invoke("check", "--no-cache", "--extend-select", "VF407", "--output-format", "json", "a.py")
    found = json.loads(result.stdout)
    assert result.exit_code == 1
    assert [(d["code"], d["location"]["row"], d["fix"]) for d in found] == [("VF407", 6, None)]
    assert "shape the code does not tell" not in result.stderr


def test_decided_reads_are_not_counted(project):
    (project / "a.py").write_text("import torch\n\n\ndef f(x):\n    return x.sum().data[0], x.view(-1, 3).data[0]\n")
    result = invoke("check", "--no-cache", "a.py")
    assert "VF401" in result.stdout  # the full reduction: VF401's finding
    assert "shape the code does not tell" not in result.stderr


def test_fix_names_the_reads_it_left(project):
    (project / "a.py").write_text(UNDECIDED.replace("probs = model(state)",
                                                    "probs = model(torch.autograd.Variable(state, volatile=True))"))
    result = invoke("fix", "--no-cache", "a.py")
    assert "Fixed 1 finding (0 remaining)." in result.stderr and HINT in result.stderr
    assert "volatile" not in (project / "a.py").read_text()
