"""`volfix verify` (issue 26): the original under the 0.3 runtime against the working tree.

The first tests need no torch (commands, line maps, the comparison of recorded traces); the
rest run real programs with real torch in throwaway git repositories: the bundled legacy
programs after `volfix fix`, and deliberately wrong migrations that must be caught at the
right line.
"""
from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
import textwrap
import time
from pathlib import Path
from typing import Dict, List

import pytest
from conftest import commit_all, committed_repo, invoke, needs_torch

from volfix.verify import VerifyError
from volfix.verify.compare import LineMap, compare
from volfix.verify.runs import Run, run_environment
from volfix.verify.sources import link_untracked, parse_command

EXAMPLES = Path(__file__).resolve().parents[1] / "examples" / "legacy"
PY = sys.executable


# ------------------------------------------------------------------ without torch


def test_command_forms():
    assert parse_command(["python", "-u", "eval.py", "--n", "2"], PY).program == ("eval.py", "--n", "2")
    assert parse_command(["python", "-u", "eval.py"], PY).flags == ("-u",)
    assert parse_command(["eval.py", "a"], "/usr/bin/python3").python == "/usr/bin/python3"
    assert parse_command(["python3", "-X", "dev", "-m", "pkg.run", "x"], PY).program == ("-m", "pkg.run", "x")
    assert parse_command(["python3", "-X", "dev", "-m", "pkg.run"], PY).flags == ("-X", "dev")


@pytest.mark.parametrize("words, reason", [
    ([], "no program"),
    (["torchrun", "--nproc_per_node", "2", "train.py"], "not a Python script"),
    (["python", "--check-hash-based-pycs", "always", "x.py"], "unsupported interpreter option"),
    (["python", "-m"], "no program to run after the interpreter"),
])
def test_commands_refused(words, reason):
    with pytest.raises(VerifyError, match=reason):
        parse_command(words, PY)


def test_line_map_follows_a_region_and_reindented_lines(tmp_path):
    (tmp_path / "a").mkdir()
    (tmp_path / "b").mkdir()
    (tmp_path / "a" / "m.py").write_text(
        "def f(model, x):\n    y = model(Variable(x, volatile=True))\n    z = model(y)\n    return z\n")
    (tmp_path / "b" / "m.py").write_text(
        "import torch\n\n\ndef f(model, x):\n    with torch.no_grad():\n        y = model(x)\n"
        "        z = model(y)\n    return z\n")
    lines = LineMap(str(tmp_path / "a"), str(tmp_path / "b"))
    assert [lines.line("m.py", n) for n in (1, 2, 3, 4)] == [4, 5, 7, 8]
    assert lines.line("missing.py", 3) == 3


def _forward(line: int, graph: bool, func: str = "evaluate", module: str = "Net", saved: int = 0,
             training: bool = False) -> Dict:
    return {"e": "forward", "module": module, "file": "eval.py", "line": line, "func": func,
            "training": training, "grad": True, "graph": graph, "saved": saved, "raised": None}


def _backward(line: int, error=None, func: str = "train") -> Dict:
    return {"e": "backward", "kind": "backward", "file": "eval.py", "line": line, "func": func,
            "error": error}


def _compare(old: List[Dict], new: List[Dict], tmp_path, status_before=0, status_after=0,
             before=None, after=None):
    lines = LineMap(str(tmp_path / "none"), str(tmp_path / "none"))
    return compare(Run(old, status_before, **(before or {})), Run(new, status_after, **(after or {})),
                   lines)


def test_events_align_by_function_not_by_line(tmp_path):
    """The fix moved every line by two; same graphs: nothing to report."""
    before = [_forward(10, True, "train", training=True), _backward(11), _forward(20, False)]
    after = [_forward(12, True, "train", training=True), _backward(13), _forward(22, False)]
    assert _compare(before, after, tmp_path).findings == []


def test_a_difference_repeated_in_a_loop_is_one_finding_with_a_count(tmp_path):
    comparison = _compare([_forward(20, False)] * 3, [_forward(21, True, saved=2_000_000)] * 3, tmp_path)
    [finding] = comparison.findings
    assert (finding.kind, finding.file, finding.line, finding.count) == ("graph-added", "eval.py", 21, 3)
    assert finding.message == ("forward of `Net` at eval.py:21 records a graph after the migration "
                               "(it did not before): 2.0 MB saved per call")
    assert (comparison.memory_before, comparison.memory_after) == (0, 6_000_000)


def test_backward_that_raised_and_now_runs(tmp_path):
    error = "RuntimeError: element 0 of variables tuple is volatile"
    [finding] = _compare([_backward(30, error)], [_backward(30)], tmp_path).findings
    assert finding.message == (f"backward at eval.py:30 raised before the migration ({error}) and runs now")


def test_extra_calls_after_a_run_stopped_early_are_a_note_not_findings(tmp_path):
    crash = {"type": "IndexError", "message": "IndexError: invalid index", "file": "eval.py",
             "line": 40, "func": "evaluate"}
    comparison = _compare([_forward(20, False)] * 5, [_forward(20, False)] * 2, tmp_path,
                          status_after=1, after={"exception": crash})
    assert [f.kind for f in comparison.findings] == ["exit-status"]
    assert comparison.findings[0].message == ("exit status 0 before the migration, 1 after: raises "
                                              "IndexError: invalid index at eval.py:40 now")
    assert "3 calls the original made after that point were not compared" in comparison.notes[0]


def test_both_runs_failing_the_same_way_agree_but_say_so(tmp_path):
    """An original that fails under the 0.3 semantics too (a legacy `autograd.Function`):
    the traces agree, and the note says what the agreement covers."""
    crash = {"type": "RuntimeError", "message": "RuntimeError: Legacy autograd function", "file": "eval.py",
             "line": 40, "func": "evaluate"}
    comparison = _compare([_forward(20, False)], [_forward(20, False)], tmp_path, status_before=1,
                          status_after=1, before={"exception": crash}, after={"exception": crash})
    assert comparison.findings == []
    assert comparison.notes == ["both runs failed the same way (RuntimeError: Legacy autograd function at "
                                "eval.py:40): the original failed under the 0.3 semantics too, so only the "
                                "calls made before the failure were compared"]


def test_a_time_out_compares_the_calls_both_runs_made_and_not_the_exit(tmp_path):
    comparison = _compare([_forward(20, False)] * 5, [_forward(20, False)] * 9, tmp_path,
                          status_before=130, before={"timed_out": True})
    assert comparison.findings == []
    assert any(note.startswith("time-out: the original run was stopped") for note in comparison.notes)


def test_different_call_counts_of_complete_runs_are_reported(tmp_path):
    [finding] = _compare([_forward(20, False)] * 2, [_forward(20, False)] * 3, tmp_path).findings
    assert finding.message == "forward of `Net` at eval.py:20 ran 2 times before the migration and 3 times after"


def test_untracked_files_are_linked_into_the_original(tmp_path):
    work, original = tmp_path / "work", tmp_path / "orig"
    for root in (work, original):
        (root / "src").mkdir(parents=True)
        (root / "src" / "m.py").write_text("x = 1\n")
    (work / "data").mkdir()
    (work / "data" / "train.pt").write_text("weights")
    (work / "src" / "local.cfg").write_text("cfg")
    (work / ".git").mkdir()
    link_untracked(str(work), str(original))
    assert (original / "data").is_symlink() and (original / "data" / "train.pt").read_text() == "weights"
    assert (original / "src" / "local.cfg").is_symlink()
    assert not (original / "src" / "m.py").is_symlink() and not (original / ".git").exists()


def test_pythonpath_inside_the_project_points_into_the_original(tmp_path):
    env = run_environment({"PYTHONPATH": f"{tmp_path}/work/src{os.pathsep}/opt/lib"},
                          str(tmp_path / "work"), str(tmp_path / "orig"))
    entries = env["PYTHONPATH"].split(os.pathsep)
    assert entries[:2] == [str(tmp_path / "orig" / "src"), "/opt/lib"]
    assert env["PYTHONHASHSEED"] == "0"


def test_outside_git_without_against_is_a_usage_error(tmp_path, monkeypatch):
    (tmp_path / "eval.py").write_text("print(1)\n")
    monkeypatch.chdir(tmp_path)
    monkeypatch.setenv("GIT_CEILING_DIRECTORIES", str(tmp_path.parent))
    result = invoke("verify", "eval.py")
    assert result.exit_code == 2
    assert "is not in a git repository" in result.output
    missing = invoke("verify", "--against", "../no_such_copy", "--", "python", "eval.py")
    assert missing.exit_code == 2
    assert "--against ../no_such_copy: no such directory" in missing.output


# ------------------------------------------------------------------ real programs

def _migrate(repo: Path, name: str, text: str) -> None:
    (repo / name).write_text(textwrap.dedent(text))


def _line_of(repo: Path, name: str, needle: str) -> int:
    lines = (repo / name).read_text().splitlines()
    [number] = [i for i, line in enumerate(lines, 1) if needle in line]
    return number


def _verify_json(repo: Path, monkeypatch, *words: str):
    monkeypatch.chdir(repo)
    result = invoke("verify", "--format", "json", "--", PY, *words)
    assert result.exit_code in (0, 1), result.output
    data = json.loads(result.output)
    assert result.exit_code == (0 if data["agree"] else 1)
    return data


DECODER = """\
    import torch
    import torch.nn as nn
    from torch.autograd import Variable


    class Decoder(nn.Module):
        def __init__(self):
            super(Decoder, self).__init__()
            self.fc = nn.Linear(16, 16)

        def forward(self, x):
            return self.fc(x).tanh()


    def translate(decoder, batches):
        outputs = []
        for batch in batches:
            outputs.append(decoder(Variable(batch, volatile=True)))
        return outputs


    decoder = Decoder()
    decoder.eval()
    outputs = translate(decoder, [torch.randn(4, 16) for _ in range(3)])
    print(sum(float(o.sum()) for o in outputs))
    """


@needs_torch
def test_region_removed_is_caught_at_the_migrated_line(tmp_path, monkeypatch):
    repo = committed_repo(tmp_path, {"translate.py": DECODER})
    # A wrong migration: volatile dropped, no region (what many hand migrations did).
    _migrate(repo, "translate.py", "# migrated to PyTorch 2\n" + textwrap.dedent(DECODER).replace(
        "decoder(Variable(batch, volatile=True))", "decoder(batch)"))
    line = _line_of(repo, "translate.py", "decoder(batch)")
    (repo / "data").mkdir()
    (repo / "data" / "untracked.txt").write_text("kept")  # linked into the unpacked original
    monkeypatch.chdir(repo)
    result = invoke("verify", "--", PY, "translate.py")
    assert result.exit_code == 1
    assert (repo / "data" / "untracked.txt").read_text() == "kept"  # removing the copy keeps it
    # Saved per call: Linear's input (4x16 float32, 256 bytes; the weight is a parameter and
    # not counted) and tanh's result (256 bytes).
    assert result.output.splitlines()[0] == (
        f"forward of `Decoder` at translate.py:{line} records a graph after the "
        "migration (it did not before): 512 bytes saved per call (3 calls)")
    assert "0 bytes in 0 of 3 forward calls before the migration" in result.output
    assert "1.5 kB in 3 of 3 after" in result.output


@needs_torch
def test_the_right_migration_verifies_clean(tmp_path, monkeypatch):
    repo = committed_repo(tmp_path, {"translate.py": DECODER})
    invoke_fix = invoke("fix", str(repo / "translate.py"))
    assert invoke_fix.exit_code == 0, invoke_fix.output
    assert "torch.no_grad()" in (repo / "translate.py").read_text()
    data = _verify_json(repo, monkeypatch, "translate.py")
    assert data["agree"] and data["findings"] == []
    assert data["summary"]["graphs_before"] == data["summary"]["graphs_after"] == 0
    assert data["before"]["exit_status"] == data["after"]["exit_status"] == 0


TRAIN = """\
    import torch
    import torch.nn as nn
    import torch.optim as optim
    from torch.autograd import Variable

    model = nn.Linear(8, 2)
    optimizer = optim.SGD(model.parameters(), lr=0.1)
    for step in range(3):
        x, y = Variable(torch.randn(4, 8)), Variable(torch.randn(4, 2))
        loss = ((model(x) - y) ** 2).mean()
        optimizer.zero_grad()
        loss.backward()
        optimizer.step()
    val = model(Variable(torch.randn(4, 8), volatile=True))
    print(float(val.sum()))
    """

TRAIN_UNDER_A_REGION = """\
    import torch
    import torch.nn as nn
    import torch.optim as optim

    model = nn.Linear(8, 2)
    optimizer = optim.SGD(model.parameters(), lr=0.1)
    with torch.no_grad():
        for step in range(3):
            x, y = torch.randn(4, 8), torch.randn(4, 2)
            loss = ((model(x) - y) ** 2).mean()
            optimizer.zero_grad()
            loss.backward()
            optimizer.step()
        val = model(torch.randn(4, 8))
    print(float(val.sum()))
    """


@needs_torch
def test_region_over_a_training_call_is_caught(tmp_path, monkeypatch):
    repo = committed_repo(tmp_path, {"train.py": TRAIN})
    _migrate(repo, "train.py", TRAIN_UNDER_A_REGION)
    backward = _line_of(repo, "train.py", "loss.backward()")
    forward = _line_of(repo, "train.py", "loss = ((model(x)")
    data = _verify_json(repo, monkeypatch, "train.py")
    found = {(f["kind"], f["line"]) for f in data["findings"]}
    assert ("graph-removed", forward) in found
    assert ("backward-raises", backward) in found
    [raises] = [f for f in data["findings"] if f["kind"] == "backward-raises"]
    assert raises["message"].startswith(f"backward at train.py:{backward} ran before the migration "
                                        "and raises now: RuntimeError: element 0 of tensors does not require grad")
    [status] = [f for f in data["findings"] if f["kind"] == "exit-status"]
    assert status["message"].startswith("exit status 0 before the migration, 1 after: raises RuntimeError")
    assert (status["file"], status["line"]) == ("train.py", backward)


SCALARS = """\
    import torch
    import torch.nn as nn
    from torch.autograd import Variable

    model, criterion = nn.Linear(8, 3), nn.CrossEntropyLoss()
    total = 0.0
    for step in range(2):
        x = Variable(torch.randn(4, 8), volatile=True)
        y = Variable(torch.LongTensor(4).random_(0, 3))
        loss = criterion(model(x), y)
        total += loss.data[0]
    print("loss %.4f" % (total / 2))
    """


@needs_torch
def test_missing_item_is_caught_at_the_indexing_line(tmp_path, monkeypatch):
    repo = committed_repo(tmp_path, {"evaluate.py": SCALARS})
    # Migrated, except `loss.data[0]` (0.3's one-element loss) was not made `loss.item()`.
    _migrate(repo, "evaluate.py", textwrap.dedent(SCALARS)
             .replace("from torch.autograd import Variable\n", "")
             .replace("    x = Variable(torch.randn(4, 8), volatile=True)\n", "")
             .replace("Variable(torch.LongTensor(4).random_(0, 3))", "torch.LongTensor(4).random_(0, 3)")
             .replace("    loss = criterion(model(x), y)\n",
                      "    with torch.no_grad():\n        loss = criterion(model(torch.randn(4, 8)), y)\n"))
    line = _line_of(repo, "evaluate.py", "loss.data[0]")
    data = _verify_json(repo, monkeypatch, "evaluate.py")
    # The read itself (the original run read it on a one-element value), then the run it broke.
    read, finding = data["findings"]
    assert (read["kind"], read["file"], read["line"]) == ("scalar-read", "evaluate.py", line)
    assert read["message"].endswith("IndexError since PyTorch 0.4; use `loss.item()`")
    assert finding["kind"] == "exit-status" and (finding["file"], finding["line"]) == ("evaluate.py", line)
    assert finding["message"].startswith(
        "exit status 0 before the migration, 1 after: raises IndexError: invalid index of a 0-dim tensor")
    assert data["before"]["forward_calls"] == 4 and data["after"]["forward_calls"] == 2
    assert "2 calls the original made after that point were not compared" in data["notes"][0]


TIMED = """\
    import time
    import torch
    import torch.nn as nn
    from torch.autograd import Variable

    start = time.time()
    model = nn.Linear(4, 4)
    out = model(Variable(torch.randn(2, 4), volatile=True))
    time.sleep(0.05 * (time.time() % 1))
    print("finished at %.6f after %.6f s" % (time.time(), time.time() - start))
    """


@needs_torch
def test_output_differing_only_in_timing_is_not_reported(tmp_path, monkeypatch):
    """Against a copy (no git): prints wall-clock times that differ between the two runs."""
    original, work = tmp_path / "original", tmp_path / "work"
    original.mkdir()
    work.mkdir()
    (original / "timed.py").write_text(textwrap.dedent(TIMED))
    (work / "timed.py").write_text(textwrap.dedent(TIMED).replace(
        "out = model(Variable(torch.randn(2, 4), volatile=True))",
        "with torch.no_grad():\n    out = model(torch.randn(2, 4))"))
    monkeypatch.setenv("GIT_CEILING_DIRECTORIES", str(tmp_path))
    monkeypatch.chdir(work)
    result = invoke("verify", "--against", str(original), "timed.py")
    assert result.exit_code == 0, result.output
    assert result.output.splitlines()[-1] == (
        "verified: the traces agree on graph presence, training and exit status")


@needs_torch
def test_time_out_stops_both_runs(tmp_path, monkeypatch):
    repo = committed_repo(tmp_path, {"forever.py": """\
        import torch.nn as nn
        model = nn.Linear(2, 2)
        while True:
            pass
        """})
    monkeypatch.chdir(repo)
    started = time.monotonic()
    result = invoke("verify", "--timeout", "6", "forever.py")
    assert time.monotonic() - started < 60
    assert result.exit_code == 0, result.output
    assert "note: time-out: the original and migrated run was stopped" in result.output


@needs_torch
def test_missing_torch_is_said_plainly(tmp_path, monkeypatch):
    repo = committed_repo(tmp_path, {"eval.py": "import torch\n"})
    fake = tmp_path / "fake"
    (fake / "torch").mkdir(parents=True)
    (fake / "torch" / "__init__.py").write_text("raise ImportError('No module named torch')\n")
    monkeypatch.setenv("PYTHONPATH", f"{fake}{os.pathsep}{os.environ.get('PYTHONPATH', '')}")
    monkeypatch.chdir(repo)
    result = invoke("verify", "eval.py")
    assert result.exit_code == 2
    assert "torch is not installed for" in result.output


RUN_ALL = '''\
"""Runs the named programs one after the other, as a user's evaluation script would."""
import importlib
import sys
import traceback

sys.path.insert(0, "lm_package")
for name in sys.argv[1:]:
    try:
        importlib.import_module(name).run()
    except Exception:  # a program 0.3 could not run: the others still run
        traceback.print_exc()
'''


@needs_torch
def test_legacy_examples_verify_clean_after_fix(tmp_path, monkeypatch):
    """Every program in examples/legacy/ in one repository, `volfix fix` on the working tree,
    one verify running them all. A program whose fixed version still has a volatile flag, a
    `.data[0]`, an argument 0.4 removed or a legacy autograd Function (a VF101/VF103/VF302/
    VF303/VF401/VF501 the safe fix leaves, see test_differential.py) may differ;
    every other one
    must verify clean. masked_loss_training differs as the differential test says: 0.3 raised
    at its backward (fact 5), the program plain `fix` leaves trains."""
    repo = tmp_path / "repo"
    shutil.copytree(EXAMPLES, repo)
    (repo / "run_all.py").write_text(RUN_ALL)
    commit_all(repo)
    monkeypatch.chdir(repo)
    assert invoke("fix", ".").exit_code in (0, 1)
    left = {path for path in [*repo.glob("*.py"), *repo.glob("lm_package/*.py")]
            if invoke("check", "--select", "VF101,VF103,VF302,VF303,VF401,VF501", "--format", "concise",
                         str(path)).exit_code}
    left = {str(path.relative_to(repo)) for path in left}
    programs = sorted(p.stem for p in EXAMPLES.glob("*.py"))
    data = _verify_json(repo, monkeypatch, "run_all.py", *programs, "main")
    differing = {f["file"] for f in data["findings"]}
    assert differing <= left, data["findings"]
    assert "masked_loss_training.py" in left
    backward = _line_of(repo, "masked_loss_training.py", "loss.backward()")
    assert any(f["kind"] == "backward-runs" and f["line"] == backward
               and "element 0 of variables tuple is volatile" in f["message"]
               for f in data["findings"] if f["file"] == "masked_loss_training.py")
    assert data["before"]["exit_status"] == data["after"]["exit_status"] == 0
    assert data["summary"]["forward_calls_before"] > 100


@needs_torch
def test_the_tracer_runs_a_script_as_python_would(tmp_path):
    """argv, `__main__`, sibling imports, the site of a forward and the bytes saved for it, and
    autograd's in-place check (which saved-tensor hooks turn off; the tracer keeps it)."""
    (tmp_path / "helper.py").write_text("SCALE = 2\n")
    (tmp_path / "prog.py").write_text(textwrap.dedent("""\
        import sys
        import torch
        import torch.nn as nn
        import helper
        print(__name__, sys.argv[1:], helper.SCALE)
        lin = nn.Linear(3, 3)
        y = lin(torch.randn(2, 3)).sigmoid()
        y.mul_(helper.SCALE)  # sigmoid saved its result: backward must refuse
        y.sum().backward()
        """))
    trace = tmp_path / "trace.jsonl"
    plain = subprocess.run([PY, "prog.py", "a", "--b"], cwd=tmp_path, capture_output=True, text=True)
    traced = subprocess.run([PY, "-m", "volfix.verify._trace", "--out", str(trace), "--root",
                             str(tmp_path), "--", "prog.py", "a", "--b"],
                            cwd=tmp_path, capture_output=True, text=True)
    assert plain.stdout == traced.stdout == "__main__ ['a', '--b'] 2\n"
    assert plain.returncode == traced.returncode == 1
    assert "modified by an inplace operation" in plain.stderr
    from volfix.verify.runs import _read_trace

    run = _read_trace(str(trace))
    [forward, backward] = run.events
    # Linear saves its input (2x3 float32 = 24 bytes) and the weight (a parameter: not counted).
    assert {k: forward[k] for k in ("module", "file", "line", "func", "graph", "saved", "training")} == {
        "module": "Linear", "file": "prog.py", "line": 7, "func": "<module>", "graph": True,
        "saved": 24, "training": True}
    assert (backward["file"], backward["line"]) == ("prog.py", 9)
    assert backward["error"].startswith("RuntimeError: one of the variables needed for gradient "
                                        "computation has been modified by an inplace operation")
    assert run.status == 1 and run.exception["type"] == "RuntimeError" and run.exception["line"] == 9


def _processes_running(marker: str) -> List[int]:
    found = []
    for pid in os.listdir("/proc"):
        try:
            with open(f"/proc/{pid}/cmdline", "rb") as handle:
                if marker.encode() in handle.read():
                    found.append(int(pid))
        except OSError:
            continue
    return found


@needs_torch
@pytest.mark.skipif(not os.path.isdir("/proc"), reason="reads /proc")
def test_sigterm_to_verify_stops_the_run_it_started(tmp_path):
    marker = f"forever_{os.getpid()}_{time.monotonic_ns()}.py"
    repo = committed_repo(tmp_path, {marker: "while True:\n    pass\n"})
    verify_process = subprocess.Popen([PY, "-m", "volfix", "verify", marker], cwd=repo,
                                      stdout=subprocess.PIPE, stderr=subprocess.PIPE)
    deadline = time.monotonic() + 120
    while len(_processes_running(marker)) < 2 and time.monotonic() < deadline:  # verify + its run
        time.sleep(0.2)
    assert len(_processes_running(marker)) == 2
    verify_process.terminate()
    assert verify_process.wait(timeout=60) == 128 + 15
    deadline = time.monotonic() + 30
    while _processes_running(marker) and time.monotonic() < deadline:
        time.sleep(0.2)
    assert _processes_running(marker) == []
