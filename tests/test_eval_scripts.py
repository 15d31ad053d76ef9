"""The ground truth and the whole-project measurement of the real-world evaluation
(scripts/evaluation/sites.py, scripts/evaluation/common.py, scripts/evaluation/measure.py, scripts/evaluation/human.py).

The snippets are written for these tests, modelled on legacy patterns; the measurement runs the
volfix of this checkout through its command line, as the scripts do on the real corpus."""
from __future__ import annotations

import json
import os
import subprocess
import sys
import textwrap
from pathlib import Path


SCRIPTS = Path(__file__).resolve().parent.parent / "scripts"
ROOT = SCRIPTS.parent
sys.path.insert(0, str(SCRIPTS))
EVALUATION = SCRIPTS / "evaluation"

from evaluation.common import (UnitText, call_at, covered_through_callers, function_of, innermost_stmt_at,  # noqa: E402
                         notebook_as_python, parents_of, parse, probe_row)
from evaluation.sites import flag_helpers, sites_of, torch_tree  # noqa: E402
from conftest import needs_torch  # noqa: E402


def unit(src: str) -> UnitText:
    return UnitText(textwrap.dedent(src))


def codes(src: str, helpers=None):
    fs = sites_of(unit(src), helpers)
    return sorted((s.code, s.row, s.kind.split(" (")[0]) for s in fs.sites)


def test_resolved_variable_calls_and_attributes():
    src = """
    import torch
    from torch.autograd import Variable as V
    a = V(x, volatile=True)
    b = torch.autograd.Variable(y, volatile=flag)
    c = V(z, False, False)
    if a.volatile:
        b.volatile = True
    """
    assert codes(src) == [("VF101", 4, "keyword"), ("VF102", 6, "positional"), ("VF103", 5, "keyword"),
                          ("VF201", 7, "Load"), ("VF202", 8, "Store")]


def test_a_volatile_read_in_a_file_without_torch_counts_in_a_torch_tree():
    # torchtext's test helper asserting `batch.text.volatile`: a tensor's flag when another
    # file of the tree imports torch (volfix reports it so: `Links.torch_project`).
    helper = unit("""
    def check(batch):
        assert not batch.text.volatile
    """)
    assert sites_of(helper).sites == []
    assert [(s.code, s.row) for s in sites_of(helper, torch_project=True).sites] == [("VF201", 3)]
    assert torch_tree([unit("import torchtext\n"), helper]) and not torch_tree([helper])


def test_names_that_do_not_resolve_are_sites():
    star = """
    from .torch_imports import *
    x = Variable(t, volatile=True)
    """
    unbound = """
    import torch
    y = Variable(t, volatile=not training)
    """
    module = """
    import cuda
    z = cuda.Variable(t, volatile=True)
    """
    subclass = """
    import torch.autograd as autograd
    class Variable(autograd.Variable):
        pass
    w = Variable(t, volatile=True)
    """
    assert codes(star) == [("VF101", 3, "unresolved name")]
    assert codes(unbound) == [("VF103", 3, "unresolved name")]
    assert codes(module) == [("VF101", 3, "unresolved name")]
    assert codes(subclass) == [("VF101", 5, "unresolved name")]


def test_class_descriptor_is_not_a_volatile_read():
    src = """
    import torch
    from torch import Tensor
    table = {Tensor.volatile.__get__: lambda self: -1, torch.Tensor.volatile: 1}
    flag = x.volatile
    """
    fs = sites_of(unit(src))
    assert [(s.code, s.row) for s in fs.sites] == [("VF201", 5)]
    assert [s.code for s in fs.lookalikes] == ["descriptor", "descriptor"]


def test_own_flag_attribute_flag_reads_and_kwargs_dicts():
    src = """
    import torch
    from torch.autograd import Variable
    class Blob:
        def __init__(self, mode):
            self.volatile = mode == "test"
        def imgs(self, t):
            return Variable(t, volatile=self.volatile)
    def union(fmap, rects):
        return Variable(rects, volatile=fmap.volatile)
    params = {"volatile": not train}
    x = Variable(t, **params)
    """
    fs = sites_of(unit(src))
    assert sorted((s.code, s.row) for s in fs.sites) == [("VF103", 8), ("VF103", 10), ("VF203", 11)]
    assert [s.code for s in fs.lookalikes] == ["own attribute", "own attribute"]


def test_other_frameworks_and_own_classes_are_lookalikes():
    chainer = """
    from chainer import Variable
    x = Variable(a, volatile=True)
    """
    own = """
    import torch
    class Variable:
        def __init__(self, data, volatile=False):
            self.data = data
    x = Variable(a, volatile=True)
    """
    for src in (chainer, own):
        fs = sites_of(unit(src))
        assert fs.sites == [] and len(fs.lookalikes) == 1


def test_flag_helpers_by_keyword_position_negation_and_chain():
    data = unit("""
    from torch.autograd import Variable
    def get_batch(source, i, evaluation=False):
        return Variable(source[i], volatile=evaluation)
    class Field:
        def as_tensor(self, lengths, for_training=True):
            return Variable(lengths, volatile=not for_training)
    def batches(source, evaluation):
        return get_batch(source, 0, evaluation)
    """)
    callers = unit("""
    a = get_batch(valid, 3, evaluation=True)
    b = get_batch(train, 3)
    c = get_batch(valid, 3, True)
    d = field.as_tensor(lengths, for_training=False)
    e = batches(valid, evaluation=True)
    """)
    helpers = flag_helpers([data, callers])
    assert {name: (h.param, h.index, h.negated) for name, h in helpers.items()} == {
        "get_batch": ("evaluation", 2, False), "as_tensor": ("for_training", 1, True),
        "batches": ("evaluation", 1, False)}
    found = [(h.row, h.flag, h.volatile) for h in sites_of(callers, helpers).helpers]
    assert sorted(found) == [(2, "true", True), (4, "true", True), (5, "true", True), (6, "true", True)]
    inside = sites_of(data, helpers)
    assert [(s.row, s.pass_through, s.volatile) for s in inside.sites] == [(4, True, False), (7, True, False)]
    assert [(h.row, h.pass_through) for h in inside.helpers] == [(9, True)]


def test_notebook_cells_keep_their_rows():
    nb = json.dumps({"cells": [
        {"cell_type": "markdown", "source": ["# title"], "metadata": {}},
        {"cell_type": "code", "source": ["from torch.autograd import Variable\n", "%matplotlib inline\n"],
         "metadata": {}, "outputs": [], "execution_count": None},
        {"cell_type": "code", "source": ["def f(x:\n"], "metadata": {}, "outputs": [], "execution_count": None},
        {"cell_type": "code", "source": ["y = 1\n", "x = Variable(t, volatile=True)"], "metadata": {},
         "outputs": [], "execution_count": None}]})
    u = notebook_as_python(nb)
    assert u.broken_cells == [3]
    [site] = sites_of(u).sites
    assert u.where(site.row) == (4, 2) and u.row_of(4, 2) == site.row


def test_probe_row_finds_the_first_computing_consumer():
    src = textwrap.dedent("""
    def test(model, loader):
        for x, y in loader:
            x = Variable(preprocess(x), volatile=True)
            y = y.cuda()
            out = model(x)
            n = len(out)
        direct = model(Variable(z, volatile=True))
        moved = [Variable(t, volatile=True).cuda() for t in ts]
        a, b = moved
        res = net(a, b)
    """)
    tree = parse(src)
    par = parents_of(tree)
    assert probe_row(tree, par, 4, call_at(tree, src, 4, 13)) == 6
    assert probe_row(tree, par, 8, call_at(tree, src, 8, 20)) == 8
    assert probe_row(tree, par, 9, call_at(tree, src, 9, 14)) == 11


def test_probe_row_none_when_no_region_is_needed():
    src = textwrap.dedent("""
    def show(x):
        y = Variable(x, volatile=True)
        print(y.data.numpy())
    def make(x):
        y = Variable(x, volatile=True)
        return y
    """)
    tree = parse(src)
    par = parents_of(tree)
    assert probe_row(tree, par, 3, call_at(tree, src, 3, 9)) is None
    assert probe_row(tree, par, 6, call_at(tree, src, 6, 9)) == 6  # it leaves: its consumer is elsewhere


def test_probe_row_follows_an_attribute_and_callers_cover_a_method():
    src = textwrap.dedent("""
    class GAN:
        def __init__(self, z):
            self.fixed_z = Variable(z, volatile=True)
        def train(self, epochs):
            for e in range(epochs):
                self.step()
                with torch.no_grad():
                    self.sample(e)
        def sample(self, e):
            self.G.eval()
            out = self.G(self.fixed_z)
            save(out, e)
    """)
    tree = parse(src)
    par = parents_of(tree)
    assert probe_row(tree, par, 4) == 12
    sample = function_of(innermost_stmt_at(tree, 12), par)
    train = function_of(innermost_stmt_at(tree, 7), par)
    assert covered_through_callers(tree, par, sample)
    assert not covered_through_callers(tree, par, train)  # never called in the file


LEGACY_PROJECT = {
    "data.py": """
        from torch.autograd import Variable

        def get_batch(source, i, evaluation=False):
            return Variable(source[i], volatile=evaluation)
        """,
    "main.py": """
        import torch
        from torch.autograd import Variable
        from data import get_batch

        def evaluate(model, source):
            total = 0
            for i in range(len(source)):
                x = get_batch(source, i, evaluation=True)
                total += model(x).sum().item()
            return total

        def test(model, loader):
            for x, y in loader:
                x = Variable(x, volatile=True)
                out = model(x)
                print(out.data)
        """,
}


def test_evaluate_measures_a_whole_project_run(tmp_path):
    project = tmp_path / "project"
    for name, src in LEGACY_PROJECT.items():
        (project / name).parent.mkdir(parents=True, exist_ok=True)
        (project / name).write_text(textwrap.dedent(src).lstrip())
    out = tmp_path / "out.json"
    env = dict(os.environ, PYTHONPATH=str(ROOT))
    proc = subprocess.run([sys.executable, str(EVALUATION), "measure", "--only-extra",
                           "--extra", f"toy={project}", "--json", str(out),
                           "--markdown", str(tmp_path / "out.md")],
                          capture_output=True, text=True, env=env, cwd=tmp_path)
    assert proc.returncode == 0, proc.stderr
    [summary] = json.loads(out.read_text())["summaries"]
    # truth: the helper's VF103 (it only passes its caller's flag on), the VF101 in test(), and
    # one helper call with a true flag
    assert (summary["sites"], summary["helpers"]) == (2, 1)
    assert summary["found"] == 2 and summary["fp"] == 0
    assert (summary["broken_unsafe"], summary["broken_safe"], summary["not_idempotent"], summary["crashes"]) == (0, 0, 0, 0)
    # the measured copies are the only thing written: the project is untouched
    assert {p.name for p in project.iterdir()} == {"data.py", "main.py"}
    assert (project / "main.py").read_text() == textwrap.dedent(LEGACY_PROJECT["main.py"]).lstrip()
    assert "| toy |" in (tmp_path / "out.md").read_text()


def test_compare_human_judges_a_deleted_flag_against_a_region(tmp_path):
    pre = textwrap.dedent("""
        import torch
        from torch.autograd import Variable

        def test(model, loader):
            for x in loader:
                out = model(Variable(x, volatile=True))
                print(out.data)
        """).lstrip()
    post = pre.replace("Variable(x, volatile=True)", "x")  # the human only deleted the flag
    base = tmp_path / "human" / "me+toy@00000000"
    for side, text in (("pre", pre), ("post", post)):
        (base / side).mkdir(parents=True)
        (base / side / "m.py").write_text(text)
    manifest = tmp_path / "manifest.json"
    manifest.write_text(json.dumps({"repos": [{"repo": "me/toy", "commit": "0" * 40, "source": "test",
                                               "kind": "control", "human_migrations": [
                                                   {"pre": "1" * 40, "post": "0" * 40}]}]}))
    out = tmp_path / "cmp.json"
    env = dict(os.environ, PYTHONPATH=str(ROOT))
    proc = subprocess.run([sys.executable, str(EVALUATION), "human", "--manifest", str(manifest),
                           "--human", str(tmp_path / "human"), "--judgments", str(tmp_path / "j.json"),
                           "--write-judgments", "--json", str(out)], capture_output=True, text=True, env=env)
    assert proc.returncode == 0, proc.stderr
    [site] = json.loads(out.read_text())["sites"]
    assert site["human"]["state"] == "unwrapped"
    assert site["unsafe"]["state"] == "restored"
    assert site["auto"] == "better"
    [judged] = json.loads((tmp_path / "j.json").read_text())["sites"]
    assert (judged["path"], judged["row"], judged["verdict"]) == ("m.py", 6, "better")


def test_one_entry_point_runs_every_evaluation_command(tmp_path):
    listing = subprocess.run([sys.executable, str(EVALUATION)], capture_output=True, text=True, cwd=tmp_path)
    assert listing.returncode == 2
    commands = [line.split()[0] for line in listing.stderr.splitlines() if line.startswith("    ")]
    assert commands == ["corpus", "measure", "human", "repos", "leftovers", "helpers", "generated", "fuzz",
                        "data-index", "runs"]
    for command in commands:  # from another folder: the entry point finds its own package
        done = subprocess.run([sys.executable, str(EVALUATION), command, "--help"], capture_output=True, text=True,
                              cwd=tmp_path)
        assert done.returncode == 0 and done.stdout.startswith(f"usage: evaluation {command}"), (command, done.stderr)


def test_data_index_lists_the_reads_a_fix_leaves_and_checks_their_classes(tmp_path):
    """The loss's `.data[0]` is fixed to `.item()`; the batch's first row and a list's first loss
    are left, and are compared with the classification file by their key, not their row."""
    repo = tmp_path / "repos" / "me+toy"
    repo.mkdir(parents=True)
    (repo / "train.py").write_text(textwrap.dedent("""
        import torch
        import torch.nn as nn

        criterion = nn.CrossEntropyLoss()


        def step(model, x, y, losses):
            out = model(x)
            loss = criterion(out, y)
            first = out.data[0]
            return loss.data[0], first, losses[0]
        """).lstrip())
    # No torch import: `.data[0]` is still read (a project module's tensors may come from the
    # others), a loss-named `[0]` is not.
    (repo / "notes.py").write_text("rows = table.data[0]\nprint(cost[0])\n")
    sites = tmp_path / "sites.json"
    sites.write_text(json.dumps({"sites": [
        {"repo": "me/toy", "path": "train.py", "row": 99, "expression": "out.data[0]", "occurrence": 0,
         "class": "B", "reason": "a batch's first row"}]}))
    env = dict(os.environ, PYTHONPATH=str(ROOT))

    def run(*extra):
        return subprocess.run([sys.executable, str(EVALUATION), "data-index", "--repos", str(tmp_path / "repos"),
                               "--sites", str(sites), "--json", str(tmp_path / "out.json"), *extra],
                              capture_output=True, text=True, env=env)

    proc = run()
    assert proc.returncode == 1, proc.stderr  # `losses[0]` is not classified yet
    out = json.loads((tmp_path / "out.json").read_text())
    assert [(s["expression"], s["row"], s["class"]) for s in out["classified"]] == [("out.data[0]", 10, "B")]
    assert [(s["path"], s["expression"], s["row"]) for s in out["unclassified"]] == [
        ("notes.py", "table.data[0]", 1), ("train.py", "losses[0]", 11)]
    assert "| B | certainly >= 1 dim (fine) | 1 |" in proc.stdout
    # --write adds it as "?" for a person to classify; still unclassified until then
    assert run("--write").returncode == 1
    written = json.loads(sites.read_text())["sites"]
    assert [(s["expression"], s["class"]) for s in written] == [
        ("table.data[0]", "?"), ("out.data[0]", "B"), ("losses[0]", "?")]  # sorted by file
    written[0].update({"class": "C", "reason": "a table passed in"})
    written[2].update({"class": "B", "reason": "a list"})
    sites.write_text(json.dumps({"sites": written}))
    assert run().returncode == 0
    assert (repo / "train.py").read_text().count(".data[0]") == 2  # the corpus itself is never changed


def test_data_index_keys_do_not_move_when_an_earlier_read_of_the_value_is_rewritten(tmp_path):
    """A read's occurrence counts the reads of the same value, `.item()` included: an engine that
    rewrites `total.data[0]` on line 3 leaves the key of the one on line 5 as it was (it counted
    among equal expressions before, and became occurrence 0)."""
    from evaluation.data_index import key_of, left_reads

    before = "import torch\ntotal = torch.zeros(1)\nprint(total.data[0])\nrows = torch.zeros(2, 2)\n" \
             "print(total.data[0], rows.data[0], total.int().item())\nprint(rows.data[0])\n"
    keys = []
    for text in (before, before.replace("print(total.data[0])", "print(total.item())")):
        (tmp_path / "a.py").write_text(text)
        keys.append({key_of(s) for s in left_reads("me/toy", str(tmp_path), [])})
    assert ("me/toy", "a.py", None, "total.data[0]", 1) in keys[0] & keys[1]
    assert ("me/toy", "a.py", None, "rows.data[0]", 1) in keys[0] & keys[1]
    assert keys[0] - keys[1] == {("me/toy", "a.py", None, "total.data[0]", 0)}


def run_the_runs(tmp_path, repo: str, program: str, sites: list):
    """`evaluation runs` of one run, `python evaluate.py` in the corpus tree `repo` holding
    `program`, with `sites` (row, expression, class, reason) as the data index: (the process,
    its one result, the tree)."""
    tree = tmp_path / "repos" / repo.replace("/", "+")
    tree.mkdir(parents=True)
    (tree / "evaluate.py").write_text(textwrap.dedent(program).lstrip())
    runs = tmp_path / "runs.json"
    runs.write_text(json.dumps({"runs": [{"repo": repo, "tree": "corpus", "command": ["evaluate.py"],
                                          "stubs": [], "why": "the toy"}]}))
    index = tmp_path / "sites.json"
    index.write_text(json.dumps({"sites": [dict(site, repo=repo, path="evaluate.py", occurrence=0)
                                           for site in sites]}))
    proc = subprocess.run([sys.executable, str(EVALUATION), "runs", "--repos", str(tmp_path / "repos"),
                           "--runs", str(runs), "--sites", str(index), "--json", str(tmp_path / "out.json")],
                          capture_output=True, text=True, env=dict(os.environ, PYTHONPATH=str(ROOT)))
    assert proc.returncode == 0, proc.stdout + proc.stderr
    [result] = json.loads((tmp_path / "out.json").read_text())
    return proc, result, tree


@needs_torch
def test_runs_rewrite_the_reads_only_the_run_tells_and_look_them_up(tmp_path):
    """The loss is chosen by name at run time (and its callee is not named like one), so `fix
    --unsafe-fixes` leaves `score.data[0]`;
    the run tells it is one element. The batch's first row stays (classified B)."""
    proc, result, tree = run_the_runs(tmp_path, "me/toy", """
        import torch
        import torch.nn as nn
        from torch.autograd import Variable

        model, judge = nn.Linear(4, 3), getattr(nn, "CrossEntropyLoss")()
        x, y = torch.randn(2, 4), torch.LongTensor([0, 2])
        out = model(Variable(x, volatile=True))
        score = judge(out, Variable(y))
        print("%.4f %s" % (score.data[0], tuple(out.data[0].shape)))
        """, [{"row": 8, "expression": "score.data[0]", "class": "C", "reason": "a loss chosen by name"},
              {"row": 8, "expression": "out.data[0]", "class": "B", "reason": "a batch's first row"}])
    assert result["agree"] and (result["exit_before"], result["exit_after"]) == (0, 0)
    assert [(r["before"], r["after"], r["classes"]) for r in result["fixed"]] == [
        ("score.data[0]", "score.item()", ["C"])]
    assert "Reads rewritten by class: A 0, B 0, C 1, unclassified 0." in proc.stdout
    assert "score.data[0]" in (tree / "evaluate.py").read_text()  # the tree itself is never changed


@needs_torch
def test_runs_tell_apart_reads_of_one_expression_by_their_rows(tmp_path):
    """`v.data[0]` twice, a one-element loss (class A) and then a row of a 1-dim value (class
    B): the rewritten read is looked up at its row in the original (the fixed copy's lines
    moved when the import went), not by its expression alone (the negotiator's `p_agree`)."""
    proc, result, _ = run_the_runs(tmp_path, "me/twice", """
        import torch
        import torch.nn as nn
        from torch.autograd import Variable

        judge = getattr(nn, "MSELoss")()
        x = Variable(torch.randn(3), volatile=True)
        v = judge(x, x * 2)
        print("%.4f" % v.data[0])
        v = x * 2
        print("%.4f" % v.data[0])
        """, [{"row": 8, "expression": "v.data[0]", "class": "A", "reason": "a loss chosen by name"},
              {"row": 10, "expression": "v.data[0]", "class": "B", "reason": "an element of a 1-dim value"}])
    assert [(r["before"], r["after"], r["classes"]) for r in result["fixed"]] == [("v.data[0]", "v.item()", ["A"])]
    assert "Reads rewritten by class: A 1, B 0, C 0, unclassified 0." in proc.stdout
