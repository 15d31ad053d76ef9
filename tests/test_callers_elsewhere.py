"""A region's output returned to a caller in another file of the project (`Links.called_elsewhere`,
`volfix.project.callers_elsewhere`).

Found on quick-nlp: `Cell.one_hidden()` returns `to_gpu(Variable(..., volatile=not
self.training))`, `hidden_state()` hands it back, and `Encoder` in another file feeds it to its
GRU. In 0.3 the volatile state made the evaluation forward volatile. Plain `fix` ran the
creation under `set_grad_enabled(self.training)` and called it safe: the fixed program's
evaluation recorded, and `check` read clean. The fix is now unsafe, with the caller named. The
programs run: the original under the 0.3 runtime, the fixed one under torch 2.13."""
from __future__ import annotations

import subprocess
import sys
import textwrap

import pytest

from volfix.model import Applicability
from volfix.project.callers_elsewhere import asked_names, callers_elsewhere_links
from conftest import code_notebook, project_tree, run_results

CORE = '''\
    import torch

    USE_GPU = torch.cuda.is_available()


    def to_gpu(x, *args, **kwargs):
        return x.cuda(*args, **kwargs) if USE_GPU else x
    '''

CELL = '''\
    import torch.nn as nn
    from torch.autograd import Variable

    from core import to_gpu


    class Cell(nn.Module):
        def __init__(self, input_size, output_size):
            super(Cell, self).__init__()
            self.output_size = output_size
            self.cell = nn.GRU(input_size, output_size)

        def forward(self, inputs, hidden):
            return self.cell(inputs, hidden)

        def one_hidden(self, bs=1):
            weights = next(self.parameters()).data
            return to_gpu(Variable(weights.new(1, bs, self.output_size).zero_(), volatile=not self.training))

        def hidden_state(self, bs):
            return self.one_hidden(bs)
    '''

ENCODER = '''\
    import torch.nn as nn

    from cell import Cell


    class Encoder(nn.Module):
        def __init__(self):
            super(Encoder, self).__init__()
            self.rnns = nn.ModuleList([Cell(3, 4)])

        def forward(self, x):
            hidden = [self.rnns[l].hidden_state(x.size(1)) for l in range(len(self.rnns))]
            out, h = self.rnns[0](x, hidden[0])
            return out
    '''

MAIN = '''\
    import torch

    from encoder import Encoder

    torch.manual_seed(0)
    model = Encoder()
    model.eval()
    out = model(torch.randn(5, 2, 3))
    print("eval output requires_grad:", out.requires_grad)
    '''

FILES = {"core.py": CORE, "cell.py": CELL, "encoder.py": ENCODER, "main.py": MAIN}


def _vf103(root):
    return [d for d in run_results(root, "check")["cell.py"].diagnostics if d.code == "VF103"]


def test_a_result_another_file_computes_with_makes_the_fix_unsafe(tmp_path):
    root = project_tree(tmp_path / "repo", FILES)
    (found,) = _vf103(root)
    assert found.fix is not None and found.fix.applicability == Applicability.UNSAFE
    note = found.note or ""
    assert "the result of `one_hidden()`, handed back by `hidden_state()`, goes to a caller in another file (" in note
    assert "/encoder.py:12) that volfix does not follow" in note
    run_results(root, "fix")
    assert (root / "cell.py").read_text() == textwrap.dedent(CELL)  # plain fix leaves it, `check` still says so
    assert len(_vf103(root)) == 1


def test_without_a_caller_elsewhere_the_fix_stays_safe(tmp_path):
    # The encoder makes its own state: nothing of `cell.py`'s region leaves the file.
    encoder = ENCODER.replace("self.rnns[l].hidden_state(x.size(1))", "x.new(1, x.size(1), 4).zero_()")
    root = project_tree(tmp_path / "repo", {**FILES, "encoder.py": encoder})
    (found,) = _vf103(root)
    assert found.fix is not None and found.fix.applicability == Applicability.SAFE


def _run(root, *args):
    return subprocess.run([sys.executable, *args, "main.py"], cwd=root, capture_output=True, text=True, timeout=240)


def test_what_the_plain_fix_now_leaves_is_what_it_told(tmp_path):
    pytest.importorskip("torch")
    root = project_tree(tmp_path / "repo", FILES)
    legacy = _run(root, "-m", "volfix.legacy")
    assert legacy.returncode == 0, legacy.stderr
    assert legacy.stdout == "eval output requires_grad: False\n"
    # The region the engine offered (only with --unsafe-fixes now) covers the state's creation
    # alone: the other file's GRU records, where 0.3 did not.
    run_results(root, "fix")
    cell = (root / "cell.py").read_text()
    assert "volatile=not self.training" in cell
    from volfix.run.options import RunOptions
    from volfix.run.runner import run
    from volfix.settings.config import Config

    run([str(root)], config=Config(), options=RunOptions(mode="fix", unsafe_fixes=True, use_cache=False))
    assert "with torch.set_grad_enabled(self.training):" in (root / "cell.py").read_text()
    fixed = _run(root)
    assert fixed.returncode == 0, fixed.stderr
    assert fixed.stdout == "eval output requires_grad: True\n"  # the difference the note names


def test_a_warm_run_sees_the_caller_go(tmp_path, monkeypatch):
    from volfix.run.options import RunOptions
    from volfix.run.runner import run
    from volfix.settings.config import Config

    root = project_tree(tmp_path / "repo", FILES)
    monkeypatch.chdir(root)
    options = RunOptions(mode="check")

    def applicability():
        (cell,) = [r for r in run([str(root)], config=Config(), options=options) if r.path.endswith("cell.py")]
        return [d.fix.applicability for d in cell.diagnostics if d.code == "VF103"]

    assert applicability() == [Applicability.UNSAFE]
    assert applicability() == [Applicability.UNSAFE]  # warm
    assert (root / ".volfix_cache").is_dir()
    (root / "encoder.py").write_text(textwrap.dedent(ENCODER).replace(
        "self.rnns[l].hidden_state(x.size(1))", "x.new(1, x.size(1), 4).zero_()"))
    assert applicability() == [Applicability.SAFE]


def test_which_defs_a_file_asks_about():
    source = textwrap.dedent('''\
        import torch
        from torch.autograd import Variable


        def evaluate(model, x):
            out = model(Variable(x, volatile=True))
            return out


        def run_eval(model, xs):
            return [evaluate(model, x) for x in xs]


        def unrelated(x):
            return x + 1


        class Net(object):
            def forward(self, x):
                return self.predict(x)

            def predict(self, x):
                def inner(y):
                    return Variable(y, volatile=True)
                return inner(x)

            def __repr__(self):
                return "volatile"
        ''').encode()
    assert asked_names(source) == {"evaluate": False, "run_eval": False, "predict": True}
    assert asked_names(source.replace(b"volatile", b"requires_grad")) == {}
    # A docstring's line at column 0 does not end its def: the `Variable` after it is still the def's.
    documented = source.replace(b"    def predict(self, x):\n",
                                b'    def predict(self, x):\n        """Predict.\n\nThe raw scores.\n        """\n')
    assert asked_names(documented) == {"evaluate": False, "run_eval": False, "predict": True}


def test_which_calls_another_file_makes():
    helper = b"def evaluate(model, x):\n    return model(Variable(x, volatile=True))\n\n" \
             b"class Net(object):\n    def predict(self, x):\n        return self.f(Variable(x, volatile=True))\n"
    others = {
        "/p/helper.py": helper,
        # a comment, and a result only printed: nothing computes with it
        "/p/a.py": b"import helper\n\n# evaluate(m, x) in a comment\nprint(evaluate(m, x).data)\nnet.predict(x)\n",
        "/p/b.py": b"def evaluate(m, x):\n    pass\nevaluate(m, x)\n",  # its own `evaluate`, not the module's
        "/p/c.py": b"import torch.nn as nn\nfrom helper import evaluate\n\nhead = nn.Linear(2, 2)\n"
                   b"print(evaluate(m, x))\nprint(head(evaluate(m, x)))\n",
        "/p/d.py": b"def features(net, x):\n    h = net.predict(x)\n    return h\n",  # handed on: unseen
        "/p/e.py": b"print net.predict(x)\n",  # Python 2: what it does is unseen
    }
    found = callers_elsewhere_links(["/p/helper.py"], others.get, sorted(others), others.get, lambda p: p[3:])
    assert found == {"/p/helper.py": (("evaluate", "c.py:6"), ("predict", "d.py:2"))}
    del others["/p/d.py"]
    found = callers_elsewhere_links(["/p/helper.py"], others.get, sorted(others), others.get, lambda p: p[3:])
    assert found == {"/p/helper.py": (("evaluate", "c.py:6"), ("predict", "e.py:1"))}


def test_calls_under_another_name_and_uses_as_a_value_count():
    """A fresh tree's shapes, each confirmed by running (0.3: False, safe-fixed: True): `from
    pkg.feats import extract as ex`, then `head(ex(cnn, x))`; `hooks = {'feat': feats.extract}`,
    whose calls volfix does not see. An import, `__all__` and a comment name it without using it."""
    helper = b"def extract(cnn, x):\n    return cnn(Variable(x, volatile=True))\n"
    others = {
        "/p/pkg/feats.py": helper,
        "/p/pkg/__init__.py": b"from .feats import extract\n__all__ = ['extract']\n# extract is the one\n",
        "/p/alias.py": b"import torch.nn as nn\nfrom pkg.feats import extract as ex\n\nhead = nn.Linear(3, 1)\n"
                       b"print(head(ex(cnn, x)))\n",
    }
    found = callers_elsewhere_links(["/p/pkg/feats.py"], others.get, sorted(others), others.get, lambda p: p[3:])
    assert found == {"/p/pkg/feats.py": (("extract", "alias.py:5"),)}
    others["/p/alias.py"] = others["/p/alias.py"].replace(b"head(ex(cnn, x))", b"ex(cnn, x).data")  # only read
    assert callers_elsewhere_links(["/p/pkg/feats.py"], others.get, sorted(others), others.get, lambda p: p[3:]) == {}
    others["/p/hooks.py"] = b"from pkg import feats\nhooks = {'feat': feats.extract}\n"
    found = callers_elsewhere_links(["/p/pkg/feats.py"], others.get, sorted(others), others.get, lambda p: p[3:])
    assert found == {"/p/pkg/feats.py": (("extract", "hooks.py:2, where it is named as a value"),)}


def test_a_file_linked_for_its_returns_says_nothing_of_a_helpers_callers(tmp_path):
    # `np_to_variable` chooses volatility by an `if` on its parameter, which the helper links
    # (`prefilter.HELPER_HINT`: `volatile=<name>`) do not read: its callers were never looked
    # for. The file is linked all the same (`predict()` is called in `crowd.py`), and that link
    # must not read as "no call in the project passes a false `is_training`" (found on
    # svishwa/crowdcount-mcnn, whose callers pass `is_training=self.training`).
    network = '''\
        import torch
        from torch.autograd import Variable


        def np_to_variable(x, is_training=False):
            if is_training:
                v = Variable(torch.from_numpy(x))
            else:
                v = Variable(torch.from_numpy(x), volatile=True)
            return v


        def predict(model, x):
            return model(Variable(torch.from_numpy(x), volatile=True))
        '''
    crowd = '''\
        import torch.nn as nn

        import network


        class CrowdCounter(nn.Module):
            def __init__(self):
                super(CrowdCounter, self).__init__()
                self.net = nn.Linear(2, 1)
                self.head = nn.Linear(1, 1)

            def forward(self, im):
                im_data = network.np_to_variable(im, is_training=self.training)
                return self.net(im_data)

            def counted(self, im):
                return self.head(network.predict(self.net, im))
        '''
    root = project_tree(tmp_path / "repo", {"network.py": network, "crowd.py": crowd})
    found = {d.location.row: d for d in run_results(root, "check")["network.py"].diagnostics if d.code == "VF101"}
    assert sorted(found) == [9, 14]
    assert found[9].fix is None and "its callers decide" in (found[9].note or "")
    assert found[14].fix is not None and found[14].fix.applicability == Applicability.UNSAFE
    assert "goes to a caller in another file (" in (found[14].note or "")


def test_a_notebook_of_the_run_is_a_caller_too(tmp_path):
    main = '''\
        import torch
        import torch.nn as nn
        from torch.autograd import Variable


        def predict(model, x):
            return model(Variable(x, volatile=True))
        '''
    cells = ["import torch\nimport torch.nn as nn\nfrom main import *\n",
             "model = nn.Linear(4, 2)\nhead = nn.Linear(2, 1)\n",
             "out = head(predict(model, torch.randn(3, 4)))\nprint(out.requires_grad)\n"]
    notebook = code_notebook(*cells)
    root = project_tree(tmp_path / "repo", {"main.py": main, "demo.ipynb": notebook})
    (found,) = [d for d in run_results(root, "check")["main.py"].diagnostics if d.code == "VF101"]
    assert found.fix is not None and found.fix.applicability == Applicability.UNSAFE
    assert "goes to a caller in another file (" in (found.note or "") and "demo.ipynb)" in found.note
    # a notebook that only prints the result leaves the fix safe
    (root / "demo.ipynb").write_text(notebook.replace("out = head(predict(", "out = (predict("))
    (found,) = [d for d in run_results(root, "check")["main.py"].diagnostics if d.code == "VF101"]
    assert found.fix is not None and found.fix.applicability == Applicability.SAFE


def test_files_in_no_project_are_not_each_others_callers(tmp_path):
    # A folder of unmarked checkouts is linked as one group: its files are no project, and one
    # checkout's `.hidden_state(` must not be taken for a call of another's.
    from volfix.project.index import ProjectIndex

    files = {str(tmp_path / name): textwrap.dedent(text).encode() for name, text in FILES.items()}
    cell = str(tmp_path / "cell.py")

    def index(whole_project):
        return ProjectIndex(sorted(files), dict(files), {}, files.get, whole_project=whole_project)

    assert [name for name, _ in index(True).called_elsewhere(cell)] == ["hidden_state"]
    assert index(False).called_elsewhere(cell) == ()


# A region's output kept on an attribute of the instance, read in another file.
ENC = '''\
    import torch
    import torch.nn as nn
    from torch.autograd import Variable


    class Encoder(nn.Module):
        def __init__(self):
            super(Encoder, self).__init__()
            self.cnn = nn.Linear(3, 4)

        def run(self, x):
            self.feat = self.cnn(Variable(x, volatile=True))
    '''

HEAD = '''\
    import torch
    import torch.nn as nn

    from enc import Encoder

    torch.manual_seed(0)
    enc = Encoder()
    head = nn.Linear(4, 2)
    enc.run(torch.randn(5, 3))
    out = head(enc.feat)
    print("head output requires_grad:", out.requires_grad)
    '''


def _enc_vf101(root):
    return [d for d in run_results(root, "check")["enc.py"].diagnostics if d.code == "VF101"]


def test_an_attribute_read_in_another_file_makes_the_region_unsafe(tmp_path):
    """`self.feat = self.cnn(Variable(x, volatile=True))`, then `head(enc.feat)` in `main.py`:
    in 0.3 the head's forward was volatile; `@torch.no_grad()` on `run()` leaves it recording.
    The fix was safe and plain `fix` applied it; now it is unsafe and names the read."""
    root = project_tree(tmp_path / "repo", {"enc.py": ENC, "main.py": HEAD})
    (found,) = _enc_vf101(root)
    assert found.fix is not None and found.fix.applicability == Applicability.UNSAFE
    assert "the region's output is kept in `self.feat` (line 12)" in (found.note or "")
    assert "/main.py:10); 0.3 kept that computation volatile" in (found.note or "")


def test_an_attribute_only_printed_elsewhere_keeps_the_fix_safe(tmp_path):
    printed = HEAD.replace("out = head(enc.feat)\n", "out = enc.feat.data\n").replace(
        'print("head output requires_grad:", out.requires_grad)', "print(enc.feat)")
    root = project_tree(tmp_path / "repo", {"enc.py": ENC, "main.py": printed})
    (found,) = _enc_vf101(root)
    assert found.fix is not None and found.fix.applicability == Applicability.SAFE


def test_the_plain_fix_leaves_the_attribute_read_as_0_3_ran_it(tmp_path):
    pytest.importorskip("torch")
    root = project_tree(tmp_path / "repo", {"enc.py": ENC, "main.py": HEAD})
    legacy = _run(root, "-m", "volfix.legacy")
    assert legacy.returncode == 0, legacy.stderr
    assert legacy.stdout == "head output requires_grad: False\n"
    run_results(root, "fix")
    assert (root / "enc.py").read_text() == textwrap.dedent(ENC)  # left for --unsafe-fixes, with its note
    from volfix.run.options import RunOptions
    from volfix.run.runner import run
    from volfix.settings.config import Config

    run([str(root)], config=Config(), options=RunOptions(mode="fix", unsafe_fixes=True, use_cache=False))
    assert "@torch.no_grad()" in (root / "enc.py").read_text()
    fixed = _run(root)
    assert fixed.returncode == 0, fixed.stderr
    assert fixed.stdout == "head output requires_grad: True\n"  # the difference the note names
