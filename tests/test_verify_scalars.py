"""`volfix verify` and the one-element `[0]` reads the code does not tell (issue 22).

`loss.data[0]` on a value 0.3 gave shape (1,) raises IndexError today. VF401 rewrites it where
the code tells the value's rank; where only the data does (a model's output, a loss chosen by
name at run time), the original's run under volfix.legacy tells. The first tests need no torch
(finding a recorded read again in the working tree); the rest run real programs with real torch
in throwaway git repositories, and check the `--fix` rewrite by running the result.
"""
from __future__ import annotations

import json
import os
import subprocess
import sys
import textwrap
from pathlib import Path
from typing import Dict, Optional

from conftest import committed_repo, invoke, needs_torch

from volfix.verify.compare import LineMap
from volfix.verify.scalars import apply_fixes, find_reads

PY = sys.executable


def _trees(tmp_path: Path, before: str, after: str) -> LineMap:
    for name, text in (("a", before), ("b", after)):
        (tmp_path / name).mkdir()
        (tmp_path / name / "m.py").write_text(textwrap.dedent(text))
    return LineMap(str(tmp_path / "a"), str(tmp_path / "b"))


def _record(line: int, col: Optional[int], text: Optional[str], end_col: Optional[int] = None,
            variable: bool = False) -> Dict:
    return {"e": "scalar_read", "file": "m.py", "line": line, "end_line": line if col is not None else None,
            "col": col, "end_col": end_col, "text": text, "variable": variable, "bool": False}


def test_a_read_moved_into_a_region_is_found_by_its_column_and_rewritten(tmp_path):
    lines = _trees(tmp_path, """\
        def run(model, crit, x, y):
            out = model(Variable(x, volatile=True))
            print(out.data[0], crit(out, y).data[0], out.data[0])
        """, """\
        import torch


        def run(model, crit, x, y):
            with torch.no_grad():
                out = model(x)
                print(out.data[0], crit(out, y).data[0], out.data[0])
        """)
    # The second and third reads of line 3 (`out.data[0]` twice: only the last was 0-dim).
    records = [_record(3, 23, "crit(out, y).data[0]"), _record(3, 45, "out.data[0]")]
    reads = find_reads(records, lines)
    assert [(r.line, r.text, r.fix) for r in reads] == [
        (7, "crit(out, y).data[0]", "crit(out, y).item()"), (7, "out.data[0]", "out.item()")]
    written, problems = apply_fixes(reads, str(tmp_path / "b"))
    assert (len(written), problems) == (2, [])
    assert (tmp_path / "b" / "m.py").read_text().splitlines()[6] == \
        "        print(out.data[0], crit(out, y).item(), out.item())"
    assert find_reads(records, lines) == []  # rewritten: no longer there


def test_without_columns_a_read_is_found_when_it_is_the_lines_only_one(tmp_path):
    """Python < 3.11 records the line only."""
    lines = _trees(tmp_path, "total = 0\ntotal += loss_of(batch).data[0]\nrow = out.data[0]; x = y[0]\n",
                   "total = 0\ntotal += loss_of(batch).data[0]\nrow = out.data[0]; x = y[0]\n")
    [read] = find_reads([_record(2, None, None)], lines)
    assert (read.line, read.fix) == (2, "loss_of(batch).item()")
    [ambiguous] = find_reads([_record(3, None, None)], lines)
    assert ambiguous.fix is None and "several `[0]` on this line" in ambiguous.message


def test_a_changed_line_is_matched_by_the_reads_text(tmp_path):
    lines = _trees(tmp_path, "s = '%.2f' % loss.data[0]\n",
                   "s = '%.2f %d' % (loss.data[0], n)\n")
    [read] = find_reads([_record(1, 13, "loss.data[0]")], lines)
    assert (read.line, read.text, read.fix) == (1, "loss.data[0]", "loss.item()")


def test_a_variables_plain_index_is_reported_not_rewritten(tmp_path):
    """`loss[0]` of a Variable was a one-element Variable with its graph in 0.3, not a number."""
    lines = _trees(tmp_path, "total = total + loss[0]\n", "total = total + loss[0]\n")
    [read] = find_reads([_record(1, 16, "loss[0]", variable=True)], lines)
    assert read.fix is None and read.edit is None
    assert "`loss` is that value today" in read.message
    [plain] = find_reads([_record(1, 16, "loss[0]")], lines)
    assert plain.fix == "loss.item()"


def test_a_read_also_made_on_a_value_with_dimensions_is_reported_not_rewritten(tmp_path):
    lines = _trees(tmp_path, "def first(x):\n    return x.data[0]\n", "def first(x):\n    return x.data[0]\n")
    record = _record(2, 11, "x.data[0]")
    [read] = find_reads([record, dict(record, mixed=True)], lines)
    assert read.fix is None and read.edit is None
    assert "also made this read on a value with dimensions" in read.message


# ------------------------------------------------------------------ real programs

# The loss is chosen by name (by a callee not named like one) and the model's output rank is
# the data's: volfix cannot read either. `out.data[0]` is a row (B): it must stay. `n.data[0]`
# of `topk`'s 1-dim order is an element of a 1-dim tensor, 0-dim today: a notebook's sampling
# loop.
EVALUATE = """\
    import torch
    import torch.nn as nn
    from torch.autograd import Variable


    def make(name):
        return getattr(nn, name)()


    def evaluate(model, judge, batches):
        total, rows = 0.0, []
        for x, y in batches:
            out = model(Variable(x, volatile=True))
            score = judge(out, Variable(y))
            total += score.data[0]
            rows.append(out.data[0])
            n = out[0].topk(2)[1]
            n = n[1] if n.data[0] == 0 else n[0]
            print("score %.4f row %s next %d" % (total, tuple(rows[-1].shape), n.data[0]))
        return total


    torch.manual_seed(0)
    model = nn.Linear(8, 3)
    batches = [(torch.randn(4, 8), torch.LongTensor(4).random_(0, 3)) for _ in range(2)]
    evaluate(model, make("CrossEntropyLoss"), batches)
    """


@needs_torch
def _fixed_repo(tmp_path, monkeypatch, name: str, source: str):
    """A committed repository holding `name`, fixed in place with `--unsafe-fixes`: (its root,
    the fixed text, the 1-based line of the first line holding a text)."""
    repo = committed_repo(tmp_path, {name: source})
    monkeypatch.chdir(repo)
    assert invoke("fix", "--unsafe-fixes", name).exit_code in (0, 1)
    fixed = (repo / name).read_text()
    lines = fixed.splitlines()
    return repo, fixed, lambda needle: next(i for i, t in enumerate(lines, 1) if needle in t)


def test_verify_finds_the_reads_fix_leaves_and_fix_rewrites_them(tmp_path, monkeypatch):
    repo = committed_repo(tmp_path, {"evaluate.py": EVALUATE})
    monkeypatch.chdir(repo)
    assert invoke("fix", "--unsafe-fixes", "evaluate.py").exit_code in (0, 1)
    fixed_by_volfix = (repo / "evaluate.py").read_text()
    assert "score.data[0]" in fixed_by_volfix and "n.data[0])" in fixed_by_volfix  # what VF401 cannot tell
    lines = fixed_by_volfix.splitlines()
    line_of = lambda needle: [i for i, t in enumerate(lines, 1) if needle in t]  # noqa: E731

    result = invoke("verify", "--format", "json", "--", PY, "evaluate.py")
    assert result.exit_code == 1, result.output
    data = json.loads(result.output)
    reads = [(f["line"], f["message"]) for f in data["findings"] if f["kind"] == "scalar-read"]
    [score_line], [next_line] = line_of("total += score.data[0]"), line_of('"score %.4f')
    assert reads == [
        (score_line, f"`score.data[0]` at evaluate.py:{score_line} indexes a one-element value (shape (1,) "
                     "in 0.3, no dimension today): IndexError since PyTorch 0.4; use `score.item()`"),
        (next_line, f"`n.data[0]` at evaluate.py:{next_line} indexes a one-element value (shape (1,) "
                    "in 0.3, no dimension today): IndexError since PyTorch 0.4; use `n.item()`")]
    # `n.data[0] == 0` of line `n = n[1] if ...` indexes the 1-dim order: a B read, not reported.
    assert (repo / "evaluate.py").read_text() == fixed_by_volfix  # verify alone writes nothing

    result = invoke("verify", "--fix", "--", PY, "evaluate.py")
    assert result.exit_code == 0, result.output
    assert result.output.splitlines()[:3] == [
        f"fixed: `score.data[0]` -> `score.item()` at evaluate.py:{score_line}",
        f"fixed: `n.data[0]` -> `n.item()` at evaluate.py:{next_line}",
        "the migrated program ran again after these fixes:"]
    assert result.output.rstrip().endswith("verified: the traces agree on graph presence, training and exit status")
    text = (repo / "evaluate.py").read_text()
    assert "total += score.item()" in text and "n.item()))" in text
    assert "rows.append(out.data[0])" in text and "n.data[0] == 0" in text  # rows and 1-dim reads stay
    # The program runs under torch 2.x and prints what the original printed under 0.3's meaning.
    now = subprocess.run([PY, "evaluate.py"], capture_output=True, text=True, cwd=repo)
    original = tmp_path / "original"
    original.mkdir()
    (original / "evaluate.py").write_text(textwrap.dedent(EVALUATE))
    then = subprocess.run([PY, "-m", "volfix.legacy", "evaluate.py"], capture_output=True, text=True,
                          cwd=original, env={**os.environ, "PYTHONPATH": str(Path(__file__).parents[1])})
    assert now.returncode == then.returncode == 0, now.stderr + then.stderr
    assert now.stdout == then.stdout and now.stdout.count("score") == 2

    again = invoke("verify", "--fix", "--", PY, "evaluate.py")  # nothing left to rewrite
    assert again.exit_code == 0 and "fixed:" not in again.output
    assert (repo / "evaluate.py").read_text() == text


# `first` is given a loss (one element: 0.3's number) and a batch (its first row).
HELPER = """\
    import torch
    import torch.nn as nn
    from torch.autograd import Variable


    def first(x):
        return x.data[0]


    criterion = getattr(nn, "MSELoss")()
    out = nn.Linear(3, 2)(Variable(torch.randn(4, 3), volatile=True))
    print(first(criterion(out, Variable(torch.zeros(4, 2)))), tuple(first(out).shape))
    """


@needs_torch
def test_a_helper_given_a_loss_and_a_batch_is_reported_not_rewritten(tmp_path, monkeypatch):
    repo = committed_repo(tmp_path, {"helper.py": HELPER})
    monkeypatch.chdir(repo)
    result = invoke("verify", "--fix", "--format", "json", "--", PY, "helper.py")
    assert result.exit_code == 1, result.output
    data = json.loads(result.output)
    assert data["fixed"] == []
    [read] = [f for f in data["findings"] if f["kind"] == "scalar-read"]
    assert read["line"] == 7 and "also made this read on a value with dimensions" in read["message"]
    assert (repo / "helper.py").read_text() == textwrap.dedent(HELPER)


# The critic is chosen by name at run time: volfix cannot tell that its output is one element,
# so VF403 leaves `errD_real.backward(mone)`; the run tells (0.3's (1,) root, 0-dim today).
WGAN = """\
    import torch
    import torch.nn as nn
    from torch.autograd import Variable


    class Critic(nn.Module):
        def __init__(self):
            super(Critic, self).__init__()
            self.main = nn.Linear(2, 1)

        def forward(self, x):
            return self.main(x).mean()


    torch.manual_seed(0)
    netD = globals()["Critic"]()
    one = torch.FloatTensor([1])
    mone = one * -1
    real = Variable(torch.randn(8, 2))
    errD_real = netD(real)
    errD_real.backward(mone)
    errD_fake = netD(real * 2)
    errD_fake.backward(one)
    print("%.4f" % netD.main.weight.grad.abs().sum())
    """


@needs_torch
def test_verify_names_the_one_element_gradients_a_fix_leaves(tmp_path, monkeypatch):
    repo, fixed_by_volfix, line_of = _fixed_repo(tmp_path, monkeypatch, "wgan.py", WGAN)
    assert "one = torch.FloatTensor([1])" in fixed_by_volfix  # what VF403 cannot tell
    real_line = line_of("errD_real.backward(mone)")

    result = invoke("verify", "--format", "json", "--", PY, "wgan.py")
    assert result.exit_code == 1, result.output
    data = json.loads(result.output)
    found = [(f["line"], f["message"]) for f in data["findings"] if f["kind"] == "scalar-gradient"]
    # The migrated run raises at the first call, so the second is never reached: both are named.
    assert found == [(line, f"`{call}` at wgan.py:{line} gives a one-element value (shape (1,) in 0.3, no "
                            "dimension today) a gradient of shape (1,): `Mismatch in shape` since PyTorch 0.4; "
                            "make the gradient 0-dim where it is made (`torch.tensor(1.)` for "
                            "`torch.FloatTensor([1])`, VF403)")
                     for line, call in ((real_line, "errD_real.backward(mone)"),
                                        (real_line + 2, "errD_fake.backward(one)"))]
    assert data["before"]["exit_status"] == 0 and data["after"]["exception"]["type"] == "RuntimeError"

    # Made 0-dim where it is made, the migrated run passes both calls and prints what 0.3 printed.
    (repo / "wgan.py").write_text(fixed_by_volfix.replace("one = torch.FloatTensor([1])",
                                                          "one = torch.tensor(1, dtype=torch.float)"))
    result = invoke("verify", "--format", "json", "--", PY, "wgan.py")
    assert result.exit_code == 0, result.output
    assert [f for f in json.loads(result.output)["findings"] if f["kind"] == "scalar-gradient"] == []


# A loss chosen by name at run time, logged through its list (`loss.data.tolist()[0]`, the
# DeepNLP notebooks' idiom), and a helper given a loss and a batch: volfix cannot tell either.
LISTS = """\
    import torch
    import torch.nn as nn
    from torch.autograd import Variable


    def first(x):
        return x.data.tolist()[0]


    torch.manual_seed(0)
    model = nn.Linear(3, 2)
    measure = getattr(nn, "MSELoss")()
    errors = []
    for _ in range(2):
        out = model(Variable(torch.randn(4, 3)))
        err = measure(out, Variable(torch.zeros(4, 2)))
        errors.append(err.data.tolist()[0])
    print("%.4f %.4f" % tuple(errors), "%.4f" % first(err), len(first(out)))
    """


@needs_torch
def test_verify_finds_the_list_reads_and_fix_rewrites_the_one_element_ones(tmp_path, monkeypatch):
    repo, fixed_by_volfix, line_of = _fixed_repo(tmp_path, monkeypatch, "lists.py", LISTS)
    assert "errors.append(err.data.tolist()[0])" in fixed_by_volfix  # what VF401 cannot tell
    append_line, helper_line = line_of("errors.append"), line_of("return x.data.tolist()[0]")

    data = json.loads(invoke("verify", "--format", "json", "--", PY, "lists.py").output)
    reads = [(f["line"], f["message"]) for f in data["findings"] if f["kind"] == "scalar-read"]
    assert reads == [
        (helper_line, f"`x.data.tolist()[0]` at lists.py:{helper_line} indexes the list of a one-element value (a "
                      "list of one number in 0.3, the number today): TypeError since PyTorch 0.4; the run also "
                      "made this read on a "
                      "value with dimensions (its first row or element): `.item()` would raise there; read it with "
                      "`.item()` only where the value is one element"),
        (append_line, f"`err.data.tolist()[0]` at lists.py:{append_line} indexes the list of a one-element value "
                      "(a list of one number in 0.3, the number today): TypeError since PyTorch 0.4; use "
                      "`err.data.item()`")]

    result = invoke("verify", "--fix", "--", PY, "lists.py")
    assert result.output.splitlines()[0] == (
        f"fixed: `err.data.tolist()[0]` -> `err.data.item()` at lists.py:{append_line}")
    text = (repo / "lists.py").read_text()
    assert "errors.append(err.data.item())" in text and "return x.data.tolist()[0]" in text
