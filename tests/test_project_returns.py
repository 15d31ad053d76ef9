"""VF401 across files: what the functions, classes' instances and methods of another file of the
project return (`volfix.flow.returns.returns_facts`, linked by `volfix.project.index` as
`Links.scalar_returns`), so that `errD.data[0]` after `errD, ... = compute_d_loss(...)` of
`from miscc.utils import compute_d_loss` is known to be one element (issue 22)."""
from __future__ import annotations

import json
import textwrap
from pathlib import Path
from typing import Dict

from volfix.flow.returns import asked_returns, returns_facts
from volfix.model import Applicability
from volfix.run.options import RunOptions
from volfix.run.runner import run
from volfix.settings.config import Config
from volfix.syntax.document import parse_document

LOSSES = '''\
import torch
import torch.nn as nn


def d_loss(real, fake):
    criterion = nn.BCELoss()
    err_real = criterion(real, torch.ones(3))
    err_fake = criterion(fake, torch.zeros(3))
    err = err_real + err_fake * 0.5
    return err, err_real.data[0], err_fake.data[0]


def g_loss(fake):
    return nn.BCELoss()(fake, torch.ones(3))


def rows(x):
    return x.sum(1)


class SplitLoss(nn.Module):
    def forward(self, weight, hiddens):
        total = None
        for h in hiddens:
            total = h.sum() if total is None else total + h.sum()
        return (total / len(hiddens)).type_as(weight)


class PerRow(nn.Module):
    def forward(self, x):
        return x.sum(1)


class Agent(object):
    def update(self, x):
        value_loss = x.pow(2).mean()
        return value_loss, x
'''


def write(root: Path, files: Dict[str, str]) -> None:
    for name, text in files.items():
        path = root / name
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(textwrap.dedent(text), encoding="utf-8")
    (root / ".git").mkdir(exist_ok=True)


def findings(root: Path, paths=None, use_cache: bool = False, config: Config = Config(select=("VF401",))):
    """(file, line, source of the read, safe) of every VF401 finding."""
    results = run([str(p) for p in (paths or [root])], config=config,
                  options=RunOptions(mode="check", use_cache=use_cache, jobs=1))
    out = []
    for r in results:
        text = Path(r.path).read_text().splitlines()
        for d in r.diagnostics:
            if d.code != "VF401":
                continue
            line = text[d.location.row - 1]
            end = d.end_location.column - 1 if d.end_location.row == d.location.row else len(line)
            out.append((Path(r.path).name, d.location.row, d.location.column, line[d.location.column - 1:end],
                        d.fix is not None and d.fix.applicability == Applicability.SAFE))
    return [(name, row, read, safe) for name, row, _, read, safe in sorted(out)]


def reads_in(root: Path, name: str):
    return [f for f in findings(root) if f[0] == name]


def test_a_tuple_item_returned_by_an_imported_function(tmp_path):
    """StackGAN's trainer: `errD, real, fake = compute_discriminator_loss(...)` of
    `from miscc.utils import ...`, whose every return's first item is a sum of `BCELoss` outputs."""
    write(tmp_path, {"miscc/__init__.py": "", "miscc/utils.py": LOSSES, "trainer.py": '''\
        import torch
        from miscc.utils import d_loss, g_loss, rows
        import miscc.utils as U


        def train(real, fake):
            errD, errD_real, errD_fake = d_loss(real, fake)
            errG = g_loss(fake)
            print(errD.data[0], errG.data[0], errD_real, rows(fake).data[0], U.g_loss(fake).data[0])
        '''})
    assert reads_in(tmp_path, "trainer.py") == [
        ("trainer.py", 9, "errD.data[0]", True), ("trainer.py", 9, "errG.data[0]", True),
        ("trainer.py", 9, "U.g_loss(fake).data[0]", True)]


def test_elements_of_a_1_dim_item_returned_by_an_imported_function(tmp_path):
    """awd-lstm-lm's pointer.py: `data, targets = get_batch(...)` of `from utils import
    get_batch`, whose target is `Variable(source[i + 1:i + 1 + n].view(-1))`: each `t` of `for
    t in targets` is 0-dim, `t.data[0]` raises. The batch's rows (item 0, 2-dim) are not."""
    write(tmp_path, {"utils.py": '''\
        from torch.autograd import Variable


        def get_batch(source, i, seq_len, evaluation=False):
            data = Variable(source[i:i + seq_len], volatile=evaluation)
            target = Variable(source[i + 1:i + 1 + seq_len].view(-1))
            return data, target
        ''', "pointer.py": '''\
        import torch
        from utils import get_batch


        def evaluate(source, n):
            data, targets = get_batch(source, 0, n, evaluation=True)
            firsts = [row.data[0] for row in data]
            return [t.data[0] for t in targets], firsts
        '''})
    assert reads_in(tmp_path, "pointer.py") == [("pointer.py", 8, "t.data[0]", True)]


def test_an_instance_of_a_class_of_another_file_called(tmp_path):
    """awd-lstm-lm: `criterion = SplitCrossEntropyLoss(...)` of splitcross.py (an `nn.Module`
    whose `forward` returns one element), also moved and first bound to None;
    `total_loss += len(data) * criterion(...).data` then `total_loss[0]`. The class comes
    through a package's `__init__` too (`from pkg import SplitLoss`)."""
    write(tmp_path, {"pkg/__init__.py": "from .losses import SplitLoss, PerRow\n", "pkg/losses.py": LOSSES,
                     "main.py": '''\
        import torch
        from pkg import SplitLoss, PerRow
        import pkg

        criterion = None
        if not criterion:
            criterion = SplitLoss()
        criterion = criterion.cuda()
        per_row = PerRow()


        def evaluate(weight, batches):
            total_loss = 0
            for h in batches:
                total_loss += len(h) * criterion(weight, h).data
            other = pkg.SplitLoss()
            print(per_row(weight).data[0], other(weight, batches).data[0])
            return total_loss[0] / len(batches)
        '''})
    assert reads_in(tmp_path, "main.py") == [
        ("main.py", 17, "other(weight, batches).data[0]", True), ("main.py", 18, "total_loss[0]", True)]


def test_an_instance_stored_on_self_in_a_test_class(tmp_path):
    """allennlp's CRF test: `self.crf = ConditionalRandomField(5)` in `setUp`, then
    `self.crf(...).data[0]` in a test; the class's `forward` returns `torch.sum(...)`."""
    write(tmp_path, {"lib/__init__.py": "from lib.crf import CRF\n", "lib/crf.py": '''\
        import torch


        class CRF(torch.nn.Module):
            def forward(self, logits, tags):
                return torch.sum(logits - tags)
        ''', "lib/tests/__init__.py": "", "lib/tests/crf_test.py": '''\
        import torch
        from lib import CRF


        class CRFTest(object):
            def setUp(self):
                self.crf = CRF()

            def test_forward(self):
                likelihood = self.crf(torch.ones(2), torch.zeros(2)).data[0]
                return likelihood
        '''})
    assert reads_in(tmp_path, "crf_test.py") == [
        ("crf_test.py", 10, "self.crf(torch.ones(2), torch.zeros(2)).data[0]", True)]


def test_a_method_of_an_instance_made_by_one_class_or_another(tmp_path):
    """pytorch-a2c-ppo-acktr: `agent = algo.PPO(...)` or `algo.A2C(...)` by `if`, then
    `value_loss, x = agent.update(...)`: one element when every class's `update` agrees."""
    agree = LOSSES + "\n\nclass Other(object):\n    def update(self, x):\n        return x.sum(), x\n"
    differ = LOSSES + "\n\nclass Other(object):\n    def update(self, x):\n        return x.sum(0), x\n"
    main = '''\
        import torch
        import algo


        def main(args, x):
            if args.ppo:
                agent = algo.Agent()
            else:
                agent = algo.Other()
            value_loss, rest = agent.update(x)
            print(value_loss.data[0])
        '''
    write(tmp_path / "agree", {"algo/__init__.py": "from .agents import Agent, Other\n", "algo/agents.py": agree,
                               "main.py": main})
    write(tmp_path / "differ", {"algo/__init__.py": "from .agents import Agent, Other\n",
                                "algo/agents.py": differ, "main.py": main})
    assert reads_in(tmp_path / "agree", "main.py") == [("main.py", 11, "value_loss.data[0]", True)]
    # `loss`-named: reported, but only with the unsafe fix, as without the other file.
    assert reads_in(tmp_path / "differ", "main.py") == [("main.py", 11, "value_loss.data[0]", False)]


def test_a_returned_term_of_a_sum_the_method_called_backward_on(tmp_path):
    """pytorch-a2c-ppo-acktr's `update()` returns `dist_entropy`, bound from the policy's
    `evaluate_actions` (a model passed in: not read), after `(value_loss * c + action_loss -
    dist_entropy * coef).backward()`: without a gradient, 0.3 ran `backward()` only on one
    element, so each term held one. A value backward is given a gradient for is not."""
    write(tmp_path, {"algo/__init__.py": "from .a2c import A2C\n", "algo/a2c.py": '''\
        class A2C(object):
            def __init__(self, actor_critic, optimizer):
                self.actor_critic = actor_critic
                self.optimizer = optimizer

            def update(self, obs, actions, returns):
                values, log_probs, dist_entropy = self.actor_critic.evaluate_actions(obs, actions)
                value_loss = (returns - values).pow(2).mean()
                action_loss = -log_probs.mean()
                (value_loss * 0.5 + action_loss - dist_entropy * 0.01).backward()
                return values, dist_entropy

            def rows(self, obs, actions, grad):
                values, log_probs, dist_entropy = self.actor_critic.evaluate_actions(obs, actions)
                values.backward(grad)
                return values, dist_entropy
        ''', "main.py": '''\
        import torch
        import algo


        def main(policy, optimizer, obs, actions, returns, grad):
            agent = algo.A2C(policy, optimizer)
            values, dist_entropy = agent.update(obs, actions, returns)
            rows, entropy = agent.rows(obs, actions, grad)
            print(dist_entropy.data[0], values.data[0], rows.data[0], entropy.data[0])
        '''})
    assert reads_in(tmp_path, "main.py") == [("main.py", 9, "dist_entropy.data[0]", True)]


def test_names_a_star_import_binds(tmp_path):
    """multi_task_code_switched_language_modeling's NeuralCacheEval.py: `from
    dataController.Batching import *`, then `batching = Batching()` and `X, Y =
    batching.get_batch(...)`, whose target is 1-dim: each `label` of `for label in Y` is 0-dim.
    A name the file defines itself, or a later star import rebinds, is not the first module's."""
    write(tmp_path, {"dc/__init__.py": "", "dc/Batching.py": '''\
        from torch.autograd import Variable


        class Batching(object):
            def get_batch(self, source, i, evaluation=False):
                data = Variable(source[i:i + 5], volatile=evaluation)
                target = Variable(source[i + 1:i + 6].view(-1))
                return data, target
        ''', "losses.py": LOSSES, "later.py": '''\
        def g_loss(fake):
            return fake.sum(1)
        ''', "main.py": '''\
        import torch
        from losses import *
        from dc.Batching import *
        from later import *


        def evaluate(data):
            X, Y = batching.get_batch(data, 0, evaluation=True)
            print([label.data[0] for label in Y], [row.data[0] for row in X])
            err, _, _ = d_loss(X, Y)
            value_loss, _ = Agent().update(X)
            print(err.data[0], value_loss.data[0], g_loss(X).data[0], rows(X).data[0])


        def rows(x):
            return x


        batching = Batching()
        '''})
    # `g_loss` is later.py's (a row per sample): only the unsafe guess its name makes, as for any
    # callee volfix cannot tell one element; losses.py's would be a safe finding
    expected = [("main.py", 9, "label.data[0]", True), ("main.py", 12, "err.data[0]", True),
                ("main.py", 12, "value_loss.data[0]", True), ("main.py", 12, "g_loss(X).data[0]", False)]
    assert reads_in(tmp_path, "main.py") == expected
    assert findings(tmp_path, [tmp_path / "main.py"]) == expected  # pre-commit: the reading file alone


def test_a_name_an_enclosing_function_binds_is_not_the_star_imported_one(tmp_path):
    """`loss_fn` in `inner` is `outer`'s (a closure), not utils.py's one-element function a
    star import also binds: it is `make()`'s result, which volfix cannot read (`make` is passed
    in), so only the unsafe guess its name makes; `plain` reads utils.py's."""
    write(tmp_path, {"utils.py": '''\
        def loss_fn(x):
            return x.sum()
        ''', "main.py": '''\
        import torch
        from utils import *


        def outer(make):
            loss_fn = make()

            def inner(x):
                return loss_fn(x).data[0]
            return inner


        def plain(x):
            return loss_fn(x).data[0]
        '''})
    assert reads_in(tmp_path, "main.py") == [("main.py", 9, "loss_fn(x).data[0]", False),
                                             ("main.py", 14, "loss_fn(x).data[0]", True)]
    # with `__all__`, which names the star import binds is the list's: unsure, never looked up
    (tmp_path / "utils.py").write_text("__all__ = ['loss_fn']\n\n\ndef loss_fn(x):\n    return x.sum()\n")
    assert reads_in(tmp_path, "main.py") == [("main.py", 9, "loss_fn(x).data[0]", False),
                                             ("main.py", 14, "loss_fn(x).data[0]", False)]


def test_a_function_passed_to_a_function_no_other_file_names(tmp_path):
    """PyTorch-RL's core/trpo.py: `line_search(model, f, ...)` reads `f(True).data[0]`, and its
    one call passes `get_loss`, a def returning a mean. The module is a library (examples/
    import `trpo_step` from it), but no other file names `line_search`: its calls here are all
    its calls. Once another file names it, they may not be."""
    write(tmp_path, {"core/__init__.py": "", "core/trpo.py": '''\
        import torch
        from torch.autograd import Variable


        def line_search(model, f, x):
            fval = f(True).data[0]
            return fval


        def trpo_step(policy, states):
            def get_loss(volatile=False):
                return policy(Variable(states, volatile=volatile)).mean()
            return line_search(policy, get_loss, 0)
        ''', "examples/run.py": '''\
        from core.trpo import trpo_step
        '''})
    expected = [("trpo.py", 6, "f(True).data[0]", True)]
    assert reads_in(tmp_path, "trpo.py") == expected
    assert findings(tmp_path, [tmp_path / "core" / "trpo.py"]) == expected  # pre-commit: the file alone
    (tmp_path / "examples" / "search.py").write_text("from core.trpo import line_search\n")
    assert reads_in(tmp_path, "trpo.py") == []
    (tmp_path / "examples" / "search.py").unlink()
    (tmp_path / ".git").rmdir()  # no project root: which files call it is unknown
    assert reads_in(tmp_path, "trpo.py") == []



def test_an_instance_passed_to_a_class_no_other_file_names(tmp_path):
    """artetxem/undreamt: `Validator(translator)` keeps `self.translator`, whose `score(...)`
    returns an `nn.NLLLoss` output, and reads `self.translator.score(...).data[0]`; the
    validator is built in `main_train()`, a module without a `__main__` guard that `run.py`
    calls. No other file names `Validator`, so its one construction here says what it holds
    (the read raised IndexError after `fix --unsafe-fixes`, with `check` clean; found by a
    helper on fresh trees). Once another file names it, that is unknown."""
    write(tmp_path, {"pkg/__init__.py": "", "pkg/translator.py": '''\
        import torch
        import torch.nn as nn


        class Translator:
            def __init__(self):
                self.proj = nn.Linear(4, 5)
                self.criterion = nn.NLLLoss(size_average=False)

            def score(self, src, trg):
                logprobs = nn.functional.log_softmax(self.proj(torch.randn(len(src), 4)), dim=1)
                return self.criterion(logprobs, torch.LongTensor(trg))
        ''', "pkg/train.py": '''\
        from pkg.translator import Translator


        class Validator:
            def __init__(self, translator):
                self.translator = translator

            def perplexity(self):
                return self.translator.score([1, 2], [0, 1]).data[0]


        def main_train():
            print(Validator(Translator()).perplexity())
        ''', "run.py": '''\
        import pkg.train
        if __name__ == "__main__":
            pkg.train.main_train()
        '''})
    assert reads_in(tmp_path, "train.py") == [("train.py", 9, "self.translator.score([1, 2], [0, 1]).data[0]", True)]
    (tmp_path / "tests.py").write_text("from pkg.train import Validator\n")
    assert reads_in(tmp_path, "train.py") == []

def test_what_another_file_returns_when_it_is_not_one_element(tmp_path):
    """`x.sum(1)` (a row per sample) is no one-element value: no finding for `rows(x).data[0]`,
    an instance of a module whose `forward` returns it, or a name bound to either."""
    write(tmp_path, {"losses.py": LOSSES, "main.py": '''\
        import torch
        from losses import rows, PerRow, Agent

        net = PerRow()


        def main(x):
            out = rows(x)
            first, rest = Agent().update(x)
            print(rows(x).data[0], net(x).data[0], out.data[0], rest.data[0], first.data[0])
        '''})
    assert reads_in(tmp_path, "main.py") == [("main.py", 10, "first.data[0]", True)]


SSIM = '''\
import torch
import torch.nn.functional as F


def _ssim(img1, img2, window, size_average=True):
    ssim_map = F.conv2d(img1 * img2, window, padding=1)
    if size_average:
        return ssim_map.mean()
    else:
        return ssim_map.mean(1).mean(1).mean(1)


def ssim(img1, img2, window, size_average=True):
    return _ssim(img1, img2, window, size_average)


def per_image(img1, img2, window):
    return _ssim(img1, img2, window, False)


class SSIM(torch.nn.Module):
    def __init__(self, window, size_average=True):
        super(SSIM, self).__init__()
        self.window = window
        self.size_average = size_average

    def forward(self, img1, img2):
        return _ssim(img1, img2, self.window, self.size_average)
'''


def test_a_function_of_another_file_whose_default_decides_its_return(tmp_path):
    """SRGAN's test_benchmark.py: `pytorch_ssim.ssim(sr, hr).data[0]`, where `ssim` hands its
    `size_average=True` to `_ssim`, which returns `ssim_map.mean()` only `if size_average`: a
    call that passes no `size_average` keeps the default, one element, and so does one passing
    `size_average=True` as the README spells it; a call passing another value (by place or by
    name, also `1`) is not read, nor is a function passing False."""
    write(tmp_path, {"pytorch_ssim/__init__.py": SSIM, "test_benchmark.py": '''\
        import torch
        import pytorch_ssim
        from pytorch_ssim import ssim


        def score(sr, hr, w):
            kept = pytorch_ssim.ssim(sr, hr, w).data[0]
            return kept, ssim(sr, hr, w, False).data[0], ssim(sr, hr, w, size_average=False).data[0], \\
                pytorch_ssim.per_image(sr, hr, w).data[0], ssim(sr, window=w, img2=hr).data[0], \\
                pytorch_ssim.ssim(sr, hr, w, size_average=True).data[0], ssim(sr, hr, w, 1).data[0]
        '''})
    assert returns_facts(parse_document(SSIM).index()) == {
        "_ssim": ("one-defaults:size_average@3=True",), "ssim": ("one-defaults:size_average@3=True",),
        "SSIM().forward": ("one-made:size_average@1=True",), "SSIM()()": ("one-made:size_average@1=True",)}
    assert reads_in(tmp_path, "test_benchmark.py") == [
        ("test_benchmark.py", 7, "pytorch_ssim.ssim(sr, hr, w).data[0]", True),
        ("test_benchmark.py", 9, "ssim(sr, window=w, img2=hr).data[0]", True),
        ("test_benchmark.py", 10, "pytorch_ssim.ssim(sr, hr, w, size_average=True).data[0]", True)]


def test_an_instance_of_another_file_made_keeping_the_default_that_decides(tmp_path):
    """pytorch_ssim's README: `ssim_loss = pytorch_ssim.SSIM(window_size=11)`, then
    `-ssim_loss(img1, img2)`: `forward` hands `self.size_average` (the constructor's default,
    True) to `_ssim`. An instance made passing `size_average` (by place, by name, or maybe in
    `**options`) is not read."""
    write(tmp_path, {"pytorch_ssim/__init__.py": SSIM, "max_ssim.py": '''\
        import torch
        import pytorch_ssim

        ssim_loss = pytorch_ssim.SSIM(window=None)
        per_image = pytorch_ssim.SSIM(None, False)
        rows = pytorch_ssim.SSIM(None, size_average=False)
        spelled = pytorch_ssim.SSIM(window=None, size_average=True)
        options = dict(size_average=False)
        unpacked = pytorch_ssim.SSIM(None, **options)


        def step(img1, img2):
            ssim_out = -ssim_loss(img1, img2)
            return -ssim_out.data[0], per_image(img1, img2).data[0], rows(img1, img2).data[0], \\
                unpacked(img1, img2).data[0], spelled(img1, img2).data[0]
        '''})
    assert reads_in(tmp_path, "max_ssim.py") == [("max_ssim.py", 14, "ssim_out.data[0]", True),
                                                  ("max_ssim.py", 15, "spelled(img1, img2).data[0]", True)]


def test_an_instance_whose_deciding_attribute_is_set_from_outside_is_not_read(tmp_path):
    """`tuned.size_average = False` after `tuned = SSIM(None)`: what `self.size_average` holds
    is no longer the constructor's alone (for any instance: another name may alias it)."""
    write(tmp_path, {"max_ssim.py": SSIM + '''

ssim_loss = SSIM(None)
tuned = SSIM(None)
tuned.size_average = False
print(ssim_loss(1, 2).data[0], tuned(1, 2).data[0])
'''})
    assert reads_in(tmp_path, "max_ssim.py") == []
    write(tmp_path, {"max_ssim.py": SSIM + '''

ssim_loss = SSIM(None)
print(ssim_loss(1, 2).data[0])
'''})
    assert [read for _, _, read, _ in reads_in(tmp_path, "max_ssim.py")] == ["ssim_loss(1, 2).data[0]"]


SVI = '''\
import torch
import torch.nn as nn


class SVI(nn.Module):
    def forward(self, x, y=None):
        if y is not None:
            return torch.mean(x * y)
        return torch.mean(x)
'''


def test_a_module_found_in_a_directory_the_script_adds_to_its_search_path(tmp_path):
    """semi-supervised-pytorch's examples: `sys.path.append("../semi-supervised")`, then `from
    inference import SVI`, whose instance's `forward` returns a mean; `-elbo(x, y)` is one
    element. A commented-out `sys.path` line adds nothing."""
    write(tmp_path, {"semi-supervised/inference/__init__.py": SVI, "examples/mnist_sslvae.py": '''\
        import sys
        sys.path.append("../semi-supervised")
        import torch
        from inference import SVI

        elbo = SVI()


        def step(x, y):
            L = -elbo(x, y)
            return L.data[0]
        ''', "tools/other.py": '''\
        import sys
        # sys.path.append("../semi-supervised")
        import torch
        from inference import SVI


        def step(x, y):
            return SVI()(x, y).data[0]
        '''})
    assert findings(tmp_path) == [("mnist_sslvae.py", 11, "L.data[0]", True)]


def test_a_parameter_every_call_of_a_script_fills_with_a_loss_module(tmp_path):
    """PyTorch-Mini-Tutorials: `train(model, loss, ...)` with `loss = CrossEntropyLoss()` in
    `main()`, then `loss.forward(fx, y).data[0]`. Not when a call passes an unreduced loss, nor
    in a module that is no program (another file may call it)."""
    script = '''\
        import torch


        def train(model, loss, x, y):
            output = loss.forward(model(x), y)
            return output.data[0]


        def score(model, score_fn, x, y):
            return score_fn(model(x), y).data[0]


        def main(model, x, y):
            loss = torch.nn.CrossEntropyLoss(size_average=True)
            print(train(model, loss, x, y), score(model, loss, x, y))
            print(score(model, torch.nn.CrossEntropyLoss(reduce=False), x, y))
        '''
    write(tmp_path, {"script.py": script + '''

        if __name__ == "__main__":
            main(None, None, None)
        ''', "library.py": script})
    assert findings(tmp_path) == [("script.py", 6, "output.data[0]", True)]


def notebook(*cells: str) -> str:
    return json.dumps({"cells": [{"cell_type": "code", "execution_count": None, "metadata": {}, "outputs": [],
                                  "source": textwrap.dedent(c).splitlines(True)} for c in cells],
                       "metadata": {"language_info": {"name": "python"}}, "nbformat": 4, "nbformat_minor": 2},
                      indent=1)


def test_a_notebook_asks_what_another_file_returns(tmp_path):
    """semi-supervised-pytorch's notebooks: `sys.path.append("../../semi-supervised")` in a
    cell, `from inference import SVI`, then `J_alpha.data[0]` of the instance's mean; a
    notebook's reads ask the project's files as a script's do."""
    write(tmp_path, {"semi-supervised/inference/__init__.py": SVI, "examples/notebooks/dgm.ipynb": notebook(
        '''\
        import sys
        sys.path.append("../../semi-supervised")
        import torch
        from inference import SVI
        ''', '''\
        elbo = SVI()
        x = torch.ones(3)
        J_alpha = -elbo(x) + 0.1 * -elbo(x, x)
        print(J_alpha.data[0])
        ''')})
    results = run([str(tmp_path)], config=Config(select=("VF401",)),
                  options=RunOptions(mode="check", use_cache=False, jobs=1))
    found = [(Path(r.path).name, d.code, d.fix.applicability) for r in results for d in r.diagnostics]
    assert found == [("dgm.ipynb", "VF401", Applicability.SAFE)]


def test_the_tests_a_call_s_constants_decide(tmp_path):
    """`and`/`or` of decided tests are decided; `is` of a string is identity (not decided); a
    parameter rebound in the function is not read by its default."""
    write(tmp_path, {"losses.py": '''\
        import torch


        def both(x, size_average=True, full=False):
            if size_average and not full:
                return x.mean()
            return x


        def either(x, mode="mean"):
            if mode == "none" or mode is None:
                return x
            return x.sum()


        def identity(x, mode="mean"):
            if mode is "mean":
                return x.mean()
            return x


        def rebound(x, size_average=True):
            size_average = x.dim() > 2
            if size_average:
                return x.mean()
            return x


        def reads(x):
            return both(x).data[0], both(x, full=True).data[0], either(x).data[0], identity(x).data[0], \\
                rebound(x).data[0]
        '''})
    assert [read for _, _, read, _ in findings(tmp_path)] == ["both(x).data[0]", "either(x).data[0]"]


def test_a_method_of_an_instance_made_keeping_the_default_that_decides(tmp_path):
    """`scorer = Scorer()` then `scorer.score(x).data[0]`: the method reads `self.average`
    as the constructor left it, here and from another file; not for `Scorer(False)`."""
    module = '''\
        import torch


        class Scorer(object):
            def __init__(self, average=True):
                self.average = average

            def score(self, x):
                if self.average:
                    return x.mean()
                return x.mean(0)
        '''
    write(tmp_path, {"scorer.py": module, "local.py": module + '''

        scorer = Scorer()
        rows = Scorer(False)
        print(scorer.score(torch.ones(3, 2)).data[0], rows.score(torch.ones(3, 2)).data[0])
        ''', "main.py": '''\
        import torch
        from scorer import Scorer

        scorer = Scorer()
        rows = Scorer(average=False)
        print(scorer.score(torch.ones(3, 2)).data[0], rows.score(torch.ones(3, 2)).data[0])
        '''})
    assert [(name, read) for name, _, read, _ in findings(tmp_path)] == [
        ("local.py", "scorer.score(torch.ones(3, 2)).data[0]"), ("main.py", "scorer.score(torch.ones(3, 2)).data[0]")]


def test_a_run_of_the_reading_file_alone_reads_the_defining_file(tmp_path):
    """pre-commit passes the changed files: the defining file is read, never changed."""
    write(tmp_path, {"losses.py": LOSSES, "main.py": '''\
        import torch
        from losses import g_loss


        def main(x):
            print(g_loss(x).data[0])
        '''})
    assert findings(tmp_path, [tmp_path / "main.py"]) == [("main.py", 6, "g_loss(x).data[0]", True)]


def test_the_fix_uses_item_and_runs_once(tmp_path):
    write(tmp_path, {"losses.py": LOSSES, "main.py": '''\
        import torch
        from losses import d_loss


        def main(x, y):
            err, real, fake = d_loss(x, y)
            return err.data[0]
        '''})
    run([str(tmp_path)], config=Config(select=("VF401",)), options=RunOptions(mode="fix", use_cache=False))
    assert (tmp_path / "main.py").read_text().endswith("    return err.item()\n")
    assert reads_in(tmp_path, "main.py") == []


def refuse(*_args, **_kwargs):
    raise AssertionError("recomputed a fact the cache holds")


def test_the_facts_come_from_the_cache_and_follow_the_defining_file(tmp_path, monkeypatch):
    """What a file returns and what a reader asks are cached by content: a warm run computes
    neither again (same findings), and editing the defining file changes what the reader gets."""
    import volfix.project.scalar_links as scalars

    monkeypatch.chdir(tmp_path)
    write(tmp_path, {"losses.py": LOSSES, "main.py": '''\
        import torch
        from losses import g_loss


        def main(x):
            print(g_loss(x).data[0])
        '''})
    cold = findings(tmp_path, use_cache=True)
    assert [f for f in cold if f[0] == "main.py"] == [("main.py", 6, "g_loss(x).data[0]", True)]
    (tmp_path / "other.py").write_text("x = 1\n")  # the project's links are not those cached
    monkeypatch.setattr(scalars, "file_returns", refuse)
    monkeypatch.setattr(scalars, "file_returns_asked", refuse)
    assert findings(tmp_path, use_cache=True) == cold
    monkeypatch.undo()
    monkeypatch.chdir(tmp_path)
    (tmp_path / "losses.py").write_text(LOSSES.replace("nn.BCELoss()(fake, torch.ones(3))", "fake.sum(1)"))
    assert [f for f in findings(tmp_path, use_cache=True) if f[0] == "main.py"] == []


def test_only_files_with_a_vf401_read_ask_and_only_what_they_call_is_read(tmp_path, monkeypatch):
    """A project linked for its helpers reads no file's returns when no file reads `.data[0]`,
    nor when the file that does imports no module of the project; a reader asks only for the
    names its reads may need."""
    import volfix.project.scalar_links as scalars

    write(tmp_path, {"data.py": '''\
        import torch
        from torch.autograd import Variable


        def get_batch(x, evaluation=False):
            return Variable(x, volatile=evaluation)
        ''', "main.py": '''\
        import torch
        from data import get_batch


        def main(x):
            return get_batch(x, evaluation=True)
        '''})
    monkeypatch.setattr(scalars, "file_returns", refuse)
    monkeypatch.setattr(scalars, "file_returns_asked", refuse)
    run([str(tmp_path)], config=Config(), options=RunOptions(mode="check", use_cache=False, jobs=1))
    # A read in a file that imports no module of the project (torch's are not asked about).
    write(tmp_path, {"solo.py": '''\
        import os
        import torch
        import torch.nn.functional as F


        def main(x, y):
            return F.mse_loss(x, y).data[0], os.path.join("a", "b")
        '''})
    assert reads_in(tmp_path, "solo.py") == [("solo.py", 7, "F.mse_loss(x, y).data[0]", True)]
    reader = parse_document(textwrap.dedent('''\
        import torch
        import os
        from losses import d_loss, g_loss, rows
        from model import Net

        net = Net()


        def main(x):
            a, b, c = d_loss(x, x)
            print(os.path.join("a", "b"), rows(x), a.data[0], net(x).data[0])
        ''')).index()
    assert asked_returns(reader) == ["losses.d_loss", "model.Net()()"]


def test_returns_facts_of_a_file():
    facts = returns_facts(parse_document(LOSSES).index())
    assert facts == {"d_loss": ("item:0",), "g_loss": ("one", "variable"), "SplitLoss()()": ("one",),
                     "SplitLoss().forward": ("one",), "Agent().update": ("item:0",)}
    assert "rows" not in facts and "PerRow()()" not in facts


def test_a_caller_of_a_helper_says_what_its_reads_ask_on_the_parse_that_finds_its_calls(tmp_path, monkeypatch):
    """The parse that finds a file's calls of helpers (`file_calls`) also tells what its
    VF401 reads ask, in a check and in a fix: the file is not parsed again for it."""
    import volfix.project.scalar_links as scalars

    write(tmp_path, {"losses.py": "import torch.nn as nn\n\n\ndef g_loss(x, y):\n    return nn.MSELoss()(x, y)\n",
                     "data.py": '''\
        import torch
        from torch.autograd import Variable


        def get_batch(x, evaluation=False):
            return Variable(x, volatile=evaluation)
        ''', "main.py": '''\
        import torch
        from data import get_batch
        from losses import g_loss


        def main(x):
            batch = get_batch(x, evaluation=True)
            return g_loss(batch, x).data[0]
        '''})
    monkeypatch.setattr(scalars, "file_returns_asked", refuse)
    assert [f for f in findings(tmp_path, config=Config()) if f[0] == "main.py"] == [
        ("main.py", 8, "g_loss(batch, x).data[0]", True)]
    run([str(tmp_path)], config=Config(), options=RunOptions(mode="fix", use_cache=False, jobs=1))
    assert (tmp_path / "main.py").read_text().endswith("    return g_loss(batch, x).item()\n")
    # VF401 alone: the helper's file is no candidate, the project is linked for the reads only
    fixed = (tmp_path / "main.py").read_text()
    (tmp_path / "main.py").write_text(fixed.replace(".item()", ".data[0]"))
    monkeypatch.undo()
    row = fixed.splitlines().index("    return g_loss(batch, x).item()") + 1
    assert reads_in(tmp_path, "main.py") == [("main.py", row, "g_loss(batch, x).data[0]", True)]


def test_a_loss_named_callee_made_outside_the_project(tmp_path):
    """end-to-end-negotiator's test.py: `crit = Criterion(...)` after `from engine import
    Criterion`, a module this tree does not have (also a library's loss, moved with `.cuda()`,
    or an imported function): volfix cannot read what the call returns, so a `crit(...)` read
    gets the unsafe fix a loss passed in as a parameter gets. A class of the project whose
    call volfix reads and finds not one element keeps the read unreported, and so does a
    callee not named like a loss."""
    write(tmp_path, {"losses.py": '''\
        import torch.nn as nn


        class PerRow(nn.Module):
            def forward(self, x, y):
                return (x - y).sum(1)
        ''', "test.py": '''\
        import torch
        from engine import Criterion
        from lossfns import focal_loss, Scorer
        from losses import PerRow


        def main(out, tgt):
            crit = Criterion(out.size(1))
            moved_crit = Criterion(3).cuda()
            row_crit = PerRow()
            scorer = Scorer()
            print(crit(out, tgt).data[0], moved_crit(out, tgt).data[0], focal_loss(out, tgt).data[0])
            print(row_crit(out, tgt).data[0], scorer(out, tgt).data[0])
        '''})
    assert reads_in(tmp_path, "test.py") == [
        ("test.py", 12, "crit(out, tgt).data[0]", False), ("test.py", 12, "moved_crit(out, tgt).data[0]", False),
        ("test.py", 12, "focal_loss(out, tgt).data[0]", False)]
    assert findings(tmp_path, [tmp_path / "test.py"]) == reads_in(tmp_path, "test.py")  # pre-commit: the file alone
    notes = [d.note for r in run([str(tmp_path)], config=Config(select=("VF401",)),
                                 options=RunOptions(mode="check", use_cache=False, jobs=1)) for d in r.diagnostics]
    assert sum("`engine.Criterion` comes from a module volfix finds in no file of the project" in n for n in notes) == 2
    assert sum("`lossfns.focal_loss` comes from a module volfix finds in no file of the project" in n for n in notes) == 1
    (tmp_path / "engine.py").write_text("class Criterion(object):\n    def __call__(self, out, y):\n        return out\n")
    assert [read for _, _, read, _ in reads_in(tmp_path, "test.py")] == ["focal_loss(out, tgt).data[0]"]
    (tmp_path / "engine.py").unlink()
    (tmp_path / ".git").rmdir()  # no project root: whether the project has `engine` is unknown
    assert reads_in(tmp_path, "test.py") == []
