"""The bytes prefilter never skips a file that an enabled rule needs, and skips the rest."""
from __future__ import annotations

import json
from pathlib import Path

import pytest

from volfix.files.prefilter import HELPER_HINT, has_async_keyword
from volfix.rules.registry import all_codes, may_need_analysis, requirements_for

# Every registered rule, opt-in ones (VF010) included.
ALL = all_codes()

# Every way SPEC §1 lets a file bind torch's Variable, and every rule's pattern: each must
# pass the prefilter with all rules enabled and with only its own rule family enabled.
NEEDS_ANALYSIS = {
    "VF101": "from torch.autograd import Variable\nx = Variable(t, volatile=True)\n",
    "VF101-positional": "from torch.autograd import Variable\nx = Variable(t, False, True)\n",
    "VF101-alias": "from torch.autograd import Variable as V\nx = V(t, volatile=True)\n",
    "VF101-module-alias": "import torch.autograd as ag\nx = ag.Variable(t, volatile=True)\n",
    "VF101-from-torch": "from torch import autograd\nx = autograd.Variable(t, volatile=True)\n",
    "VF101-star": "from torch.autograd import *\nx = Variable(t, volatile=True)\n",
    "VF101-full-path": "import torch\nx = torch.autograd.variable.Variable(t, volatile=True)\n",
    "VF102": "from torch.autograd import Variable\nx = Variable(t, volatile=False)\n",
    "VF103": "from torch.autograd import Variable\nx = Variable(t, volatile=not train)\n",
    "VF110": "from torch.autograd import Variable\nx = Variable(t)\n",
    "VF111": "from torch.autograd import Variable\nw = Variable(t, requires_grad=True)\n",
    "VF112": "from torch.autograd import Variable\nok = type(h) == Variable\n",
    "VF201": "import torch\nif x.volatile:\n    pass\n",
    "VF202": "import torch\nx.volatile = True\n",
    "VF203": "import torch\nflag = getattr(x, 'volatile', False)\n",
    "VF203-kwargs": "import torch as t\nkw = {'volatile': True}\n",
    "VF203-dict-call": "import torch\nkw = dict(volatile = True)\n",
    "VF203-subscript": "import torch\nkw[\"volatile\"] = True\n",
    "VF203-setattr": "import torch\nsetattr(x, \"volatile\", True)\n",
    "VF203-hasattr-wrapped": "import torch\nok = hasattr(\n    x,\n    'volatile')\n",
    "VF203-key-spaced": "import torch\nopts = {'volatile' : True}\n",
    "VF203-raw-string": "import torch\nflag = getattr(x, r'volatile')\n",
    "VF201-allennlp": "from allennlp.data import Batch\nif batch.tokens.volatile:\n    pass\n",
    "VF201-spaced": "import torch\nflag = x . volatile\n",
    "VF201-wrapped": "import torch\nflag = (x.\n        volatile)\n",
    "VF201-continuation": "import torch\nflag = x.\\\n    volatile\n",
    "VF301": "x = x.cuda(async=True)\n",
    "VF301-spaces": "x = x.cuda(async = True)\n",
    "VF301-newline": "x = x.cuda(\n    async\n    =True)\n",
    "VF301-to": "y = y.to(device, async=True)\n",
    "VF101-after-blank-lines": "from torch.autograd import Variable\n\n\nVariable(t, volatile=True)\n",
    "VF101-parenthesized-import": "from torch.autograd import (\n    grad,  # grads\n    Variable)\n\nx = Variable(t)\n",
    "VF101-continued-import": "from torch.autograd import \\\n    Variable as V\nx = V(t)\n",
    "VF101-relative-import": "import torch\nfrom .autograd import Variable\nx = Variable(t, volatile=True)\n",
    "VF112-isinstance": "import torch\nok = isinstance(h, torch.autograd.Variable)\n",
    "VF101-hash-in-string": "from torch.autograd import Variable\nx = ('#', Variable(t, volatile=True))\n",
    "VF101-string-closes": "from torch.autograd import Variable\ns = \"\"\"\n# doc \"\"\"; x = Variable(t)\n",
    "VF101-semicolon": "import torch.autograd as ag; x = ag.Variable(t)  # Variable\n",
    "VF110-project-star-import": "from main import *\nmodel = Net()\ny = model(Variable(x))\n",
    "VF105": "import torch\n\n\ndef to_tensor(x, volatile=False):\n    return x\n",
    # a helper whose `Variable` a fix removed with the import: the project decides
    "VF105-torchless-def": "def wrap_with_variable(tensor, volatile, gpu):\n    return tensor\n",
    "VF105-argument": "import torch\nfrom utils import to_tensor\ny = to_tensor(x, volatile=True)\n",
    "VF401": "import torch\nprint(loss.data[0])\n",
    # `[0]` without `.data[0]` (issue 22: awd-lstm-lm's finetune.py was never analysed)
    "VF401-accumulator": "import torch\ntotal = 0\ntotal += len(x) * crit(out, y).data\nprint(total[0])\n",
    "VF401-accumulator-spaced": "import torch\n\n    acc  +=  raw.data\n    avg = acc[0] / n\n",
    "VF401-loss-named": "import torch\nloss = out.sum()\nw = loss.data\nprint(loss[0])\n",
    # a project's test helper that never names torch: the project decides (`Links.torch_project`)
    "VF201-no-torch": "def verify(batch, train=True):\n    assert batch.text.volatile is not train\n",
    # a module of the project that never names torch: its tensors come from the others
    "VF401-no-torch": "def accuracy(outputs, targets):\n    return correct.float().sum().data[0]\n",
    # `[0]` of a loss's NumPy array (torchMoji's `calc_loss(...).data.cpu().numpy()[0]`)
    "VF401-numpy-index": "import numpy as np\nm = np.mean([f(x).data.cpu().numpy()[0] for x in xs])\n",
    # a module whose only read is a moved `.data` (nmtpytorch's `loss.data.cpu()[0]`), or the
    # index of a row's largest element (`score, idx = w[t].max(0)`, then `src[idx[0]]`)
    "VF401-moved-data": "loss = model(batch)\nbatch_loss = loss.data.cpu()[0]\n",
    "VF401-max-index": "import torch\nscore, idx = w[t].max(0)\ntoken = src[idx[0]]\n",
    "VF402": "def load_data(v, data):\n    v.data.resize_(data.size()).copy_(data)\n",
    # `one = torch.FloatTensor([1])`, then `d_real.backward(mone)` (the WGAN idiom)
    "VF403": "import torch\none = torch.FloatTensor([1])\nx.mean().backward(one)\n",
    "VF010-noqa": "x = compute(t)  # noqa: VF101\n",
    "VF010-volfix": "x = compute(t)  # Volfix: ignore\n",
}


def family(case: str) -> frozenset:
    code = case.split("-")[0]
    return frozenset(c for c in ALL if c[:3] == code[:3])


@pytest.mark.parametrize("case", sorted(NEEDS_ANALYSIS))
def test_file_needing_a_rule_is_never_skipped(case):
    data = NEEDS_ANALYSIS[case].encode()
    assert may_need_analysis(data, ALL)
    assert may_need_analysis(data, family(case))
    # CRLF and a Latin-1 body do not hide the tokens
    assert may_need_analysis(data.replace(b"\n", b"\r\n"), ALL)
    assert may_need_analysis(b"# -*- coding: latin-1 -*-\n# caf\xe9\n" + data, ALL)


@pytest.mark.parametrize("case", sorted(NEEDS_ANALYSIS))
def test_notebook_cells_pass_like_source(case):
    for source in (NEEDS_ANALYSIS[case].splitlines(keepends=True), NEEDS_ANALYSIS[case]):
        nb = {"cells": [{"cell_type": "code", "metadata": {}, "outputs": [],
                         "execution_count": None, "source": source}],
              "metadata": {}, "nbformat": 4, "nbformat_minor": 5}
        assert may_need_analysis(json.dumps(nb, indent=1).encode(), ALL)


@pytest.mark.parametrize("source", [
    "import torch\n\ndef f(x):\n    return x * 2\n",
    "import numpy as np\n# Variable names follow PEP 8\n",  # the word, but no autograd
    "from chainer import Variable\nv = Variable(x)\n",  # Chainer's Variable
    "import triton.language as tl\nx = tl.load(p, volatile=True)\n",  # Triton, no torch
    "volatile_reads = 3\n",  # identifier only, and no torch
    "await asyncio.sleep(1)\nasync_op = True\nnon_async = 1\n",
    "if mode.async == 1: pass\n",  # `==`, not a keyword argument
    "",
    # the words only in comments, or only inside longer identifiers (as in torch itself)
    "import torch\n# build a new Variable (see torch.autograd)\nx = 1\n",
    "import torch.autograd\nclass VariableTracker:\n    pass\n",
    "import torch\nvolatile_reads = 0  # volatile\n",
    "import torch\n    # x.cuda(async=True) was the old spelling\n",
    "import numpy as np\n# v.data.resize_(n) was the 0.3 way\nv.resize_(n)\n",
    # `Variable` neither bound from torch.autograd nor used (torch's own candidates)
    "import torch.autograd\nNAMES = [\n    \"Variable\",\n]\n",
    "import torch.autograd\n'''Module doc.\nVariable trackers are built here.\n'''\n",
    "import torch\ntorch.autograd.Variable._execution_engine.queue_callback(cb)\n",
    "from torch.autograd import Variable\nVariable._execution_engine.run_backward(t)\n",
    # `volatile` neither as an attribute, a string nor a keyword (torch's own stubs, asm)
    "import torch\ndef to(self, volatile: bool = ...) -> Tensor: ...\n",
    "import torch\nsrc = f'asm volatile (mov)'\n",
    # `"volatile"` where no rule reads a string, a class's descriptor (torch's own uses)
    "import torch\nmethods.remove(\"volatile\")\n",
    "import torch\nmode = 'volatile mode'\n",
    "import torch\nTABLE = {Tensor.volatile.__get__: lambda self: -1}\n",
    # a star import without `Variable` in code, or `Variable` in a comment only
    "from main import *\nmodel = Net()\n",
    "from main import *\n# no Variable here\n",
    # `volatile` neither an attribute nor a keyword in a file without torch
    "from pycparser import c_ast\nquals = ['const', 'volatile']\n",
    "def declare(name, volatile_reads=False):\n    return volatile_reads\n",
    # `[0]` on a name no line ending in `.data` assigns (torch's own `param.data` and `shape[0]`)
    "import torch\nw = p.data\nn = shape[0]\n",
    "import torch\nw = p.data.clone()\nn = w[0]\n",
    "import torch\nout = p.data\nn = p.out[0]\n",
    "import torch\nx = x.data\nn = x[0]\n",  # a plain rebinding, not an accumulator (torch's inductor)
])
def test_file_without_tokens_is_skipped(source):
    assert not may_need_analysis(source.encode(), ALL)


def test_comments_between_an_import_and_a_use_cost_one_pass():
    """The import-tail pattern once backtracked exponentially over comments (4 comments took
    0.8 s, 40 never finished); each comment now runs to its line's end."""
    data = (b"import os\nfrom torch import autograd\n"
            + b"".join(b"# comment number %d with words\n" % i for i in range(40))
            + b"x = Variable(t, volatile=True)\n")
    assert may_need_analysis(data, ALL)
    assert not may_need_analysis(data.replace(b"x = Variable(t, volatile=True)", b"x = 1"), ALL)


def test_only_enabled_rules_count():
    vf301_only = frozenset({"VF301"})
    assert not may_need_analysis(NEEDS_ANALYSIS["VF101"].encode(), vf301_only)
    assert not may_need_analysis(NEEDS_ANALYSIS["VF301"].encode(), family("VF101"))
    assert not may_need_analysis(NEEDS_ANALYSIS["VF201"].encode(), family("VF101"))
    # VF001/VF002 alone have no tokens: nothing is a candidate for the prefilter
    assert not may_need_analysis(NEEDS_ANALYSIS["VF101"].encode(), frozenset({"VF001", "VF002"}))


def test_a_rule_without_a_prefilter_decision_makes_every_file_a_candidate():
    from volfix.files.prefilter import TORCH_VARIABLE, compile_prefilter

    assert compile_prefilter([TORCH_VARIABLE, None])(b"x = 1\n")
    assert not compile_prefilter([TORCH_VARIABLE])(b"x = 1\n")


def test_every_registered_rule_declares_what_it_needs():
    # The prefilter is built from the rules: a new rule names its bytes in `NEEDS`, and the
    # names its findings start from in `NAMES` (a parsed file spelling none is not analysed).
    from volfix.rules.registry import get, tree_words

    for code in all_codes():
        assert requirements_for(code), code
        assert get(code).NAMES is not None, code
    names, strings = tree_words(all_codes())
    assert {"Variable", "volatile"} <= names and strings == {"volatile"}


def test_a_rule_without_names_makes_every_parsed_file_analysed(monkeypatch):
    from volfix.rules import registry

    rule = registry.get("VF112")
    monkeypatch.setattr(rule, "NAMES", None)
    registry.tree_words.cache_clear()
    try:
        assert registry.tree_words(frozenset({"VF112", "VF201"})) is None
    finally:
        monkeypatch.undo()
        registry.tree_words.cache_clear()


@pytest.mark.parametrize("data, expected", [
    (b"async=True", True),
    (b"f(x,async=True)", True),
    (b"f(async\t=\\\n True)", True),
    (b"async==1", False),
    (b"myasync=1", False),
    (b"async_op=1", False),
    (b"async", False),
    (b"async ", False),
    (b"x = 1 # async\nasync =", True),
])
def test_async_keyword_scan(data, expected):
    assert has_async_keyword(data) is expected


@pytest.mark.parametrize("text, hint", [
    (b"Variable = lambda *args, **kwargs: autograd.Variable(*args, **kwargs)", True),
    (b"    var = autograd.Variable(data, *args, **kwargs)", True),  # crlmaze's cuda.Variable
    (b"    return Variable(x, **kwargs)", True),
    (b"def get_batch(i, evaluation=False):\n    return Variable(d, volatile=evaluation)", True),
    (b"out = Variable(x * scale)", False),  # multiplication, not a forwarder
    (b"out = Variable(a*b, volatile=True)", False),
    (b"out = Variable(torch.zeros(3))", False),
])
def test_helper_hint_marks_files_that_may_define_a_helper(text, hint):
    """The project linker reads the other files of the run only when a file may define a
    helper or a wrapper of `Variable` (`volfix.files.prefilter.HELPER_HINT`)."""
    assert bool(HELPER_HINT.search(text)) is hint


def test_an_accumulator_read_is_found_in_a_file_with_no_other_legacy_token(tmp_path):
    """awd-lstm-lm's finetune.py after its `Variable`s were gone: `total_loss[0]` of a sum of
    `criterion(...).data` is still a 0-dim read, and a directory run must parse the file."""
    assert directory_findings(tmp_path, {"finetune.py": (
        "import torch.nn as nn\n\ncriterion = nn.CrossEntropyLoss()\n\n\n"
        "def evaluate(model, batches):\n    total_loss = 0\n    for data, targets in batches:\n"
        "        total_loss += len(data) * criterion(model(data), targets).data\n"
        "    return total_loss[0] / len(batches)\n")}) == [("finetune.py", 10, "VF401")]


def directory_findings(tmp_path, files: dict) -> list:
    """(file, row, code) of a directory run over `files` written into `tmp_path`."""
    from volfix import check_paths

    for name, text in files.items():
        (tmp_path / name).write_text(text, encoding="utf-8")
    results = check_paths([str(tmp_path)], use_cache=False)
    return sorted((Path(r.path).name, d.location.row, d.code) for r in results for d in r.diagnostics)


def test_a_reduction_is_found_in_a_module_that_never_names_torch(tmp_path):
    """3D-ResNets' utils.py and FaderNetworks' evaluation.py: a project module whose tensors
    come from the others (no `import torch`) reads `.data[0]` of a full reduction; a directory
    run must parse it and report the read."""
    assert directory_findings(tmp_path, {"utils.py": (
        "def calculate_accuracy(outputs, targets):\n    batch_size = targets.size(0)\n"
        "    _, pred = outputs.topk(1, 1, True)\n    correct = pred.t().eq(targets.view(1, -1))\n"
        "    n_correct_elems = correct.float().sum().data[0]\n"
        "    return n_correct_elems / batch_size\n")}) == [("utils.py", 5, "VF401")]


def test_a_python2_module_read_only_for_its_data_index_is_not_reported(tmp_path):
    """A Caffe script beside the PyTorch code (places365's docker/run_scene.py): Python 2,
    `net.blobs['prob'].data[0]`, no torch. VF401's test reads it, but it is no legacy PyTorch
    code, so its parse failure is not volfix's to report; the same script naming torch is."""
    caffe = "import caffe\n\nnet = caffe.Net(proto, weights, caffe.TEST)\nout = net.forward()\n" \
            "print net.blobs['prob'].data[0].argmax()\n"
    found = directory_findings(tmp_path, {"run_scene.py": caffe, "convert.py": "import torch\n" + caffe})
    assert [(name, code) for name, _, code in found] == [("convert.py", "VF001")]


def test_grad_function_hint_needs_a_grad_mode_name():
    """Only a name spelling a grad mode links the project for its grad-mode functions: any
    `grad` (torch's own `from .debug import set_kernel_post_grad`) linked a whole package."""
    from volfix.files.prefilter import GRAD_FUNCTION_HINT

    for hinted in (b"with utils.maybe_no_grad():", b"    with no_grad_context():", b"with enable_grad_context():",
                   b"from .core import no_grad_context as ngc", b"from fastai.core import *, nograd"):
        assert GRAD_FUNCTION_HINT.search(hinted), hinted
    for plain in (b"from .debug import set_kernel_post_grad", b"with torch.no_grad():",
                  b"with autograd.no_grad():", b"from torch.autograd import no_grad", b"with self.gradient_tape():"):
        assert not GRAD_FUNCTION_HINT.search(plain), plain
