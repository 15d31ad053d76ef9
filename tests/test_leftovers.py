"""The leftover scanner of the real-world evaluation (scripts/evaluation/leftovers.py).

Each case is a small hand-written original and a fixed version, the way a migration could
produce it; the scanner must report exactly the leftovers the fix created (never the ones the
author already wrote)."""
from __future__ import annotations

import json
import subprocess
import sys
import textwrap
from pathlib import Path

import pytest

SCRIPTS = Path(__file__).resolve().parent.parent / "scripts"
sys.path.insert(0, str(SCRIPTS))

from evaluation import leftovers  # noqa: E402
from evaluation.common import notebook_as_python  # noqa: E402


def kinds(original: str, fixed: str):
    return [(item.kind, item.row) for item in leftovers.scan(textwrap.dedent(original), textwrap.dedent(fixed))]


def test_identity_comprehension_left_by_unwrapping_a_list():
    original = """
    from torch.autograd import Variable
    targets = [Variable(t, volatile=True) for t in targets]
    """
    fixed = """
    targets = [t for t in targets]
    """
    assert kinds(original, fixed) == [("identity-comprehension", 2)]


def test_identity_comprehension_the_author_wrote_is_not_reported():
    original = """
    from torch.autograd import Variable
    copy = [d for d in data]
    x = Variable(x, volatile=True)
    """
    fixed = """
    import torch
    copy = [d for d in data]
    """
    assert kinds(original, fixed) == []


def test_self_assignment_and_partial_tuple():
    original = """
    x = Variable(x)
    inputs, targets = Variable(inputs, volatile=True), Variable(targets)
    a, b = Variable(a), Variable(b)
    """
    fixed = """
    x = x
    inputs, targets = inputs, Variable(targets)
    a, b = a, b
    """
    assert kinds(original, fixed) == [("self-assignment", 2), ("partial-tuple-unwrap", 3), ("self-assignment", 4)]


def test_alias_that_starts_a_loop_carried_variable_is_kept():
    # the BiLSTM-CRF tutorial's forward algorithm: the human migration writes the same
    original = """
    def forward_alg(feats, init_alphas):
        forward_var = autograd.Variable(init_alphas)
        for feat in feats:
            forward_var = torch.cat([forward_var + feat]).view(1, -1)
        alias = autograd.Variable(init_alphas)
        for feat in feats:
            other = alias + feat
        return forward_var, other
    """
    fixed = """
    def forward_alg(feats, init_alphas):
        forward_var = init_alphas
        for feat in feats:
            forward_var = torch.cat([forward_var + feat]).view(1, -1)
        alias = init_alphas
        for feat in feats:
            other = alias + feat
        return forward_var, other
    """
    assert kinds(original, fixed) == [("alias", 6)]


def test_alias_at_the_end_of_a_loop_body_that_reads_it_is_kept():
    # Rainbow's main loop: `state = Variable(next_state)` at the end of the body the next pass reads
    original = """
    while T < T_max:
        action = dqn.act(state)
        next_state, reward, done = env.step(action)
        state = Variable(next_state)
        other = Variable(next_state)
    """
    fixed = """
    while T < T_max:
        action = dqn.act(state)
        next_state, reward, done = env.step(action)
        state = next_state
        other = next_state
    """
    assert kinds(original, fixed) == [("alias", 6)]


def test_alias_keeping_one_pass_of_a_loop_for_after_it_is_kept():
    # SfmLearner's test_pose: the middle image of the loop, read after it; `img` moves on
    original = """
    for i, img in enumerate(imgs):
        img_var = Variable(img, volatile=True)
        if i == len(imgs) // 2:
            tgt_img_var = img_var
        last = Variable(img)
    pose_net(tgt_img_var)
    """
    fixed = """
    for i, img in enumerate(imgs):
        if i == len(imgs) // 2:
            tgt_img_var = img
        last = img
    pose_net(tgt_img_var)
    """
    assert kinds(original, fixed) == [("alias", 5)]


def test_item_indexed_left_by_rewriting_a_row_read():
    original = """
    plot('loss', loss.data[0][0])
    plot('ok', d.item()[0])
    """
    fixed = """
    plot('loss', loss.item()[0])
    plot('ok', d.item()[0])
    """
    assert kinds(original, fixed) == [("item-indexed", 2)]


def test_redundant_conditionals_both_spellings():
    original = """
    image = Variable(image, volatile=True) if image is not None else None
    mask = None if mask is None else Variable(mask, volatile=True)
    """
    fixed = """
    image = image if image is not None else None
    mask = None if mask is None else mask
    """
    assert kinds(original, fixed) == [("redundant-conditional", 2), ("redundant-conditional", 3)]


def test_branches_made_identical_by_unwrapping():
    original = """
    if is_training:
        v = Variable(torch.from_numpy(x))
    else:
        v = Variable(torch.from_numpy(x), volatile=True)
    w = Variable(a) if train else Variable(a, volatile=True)
    if debug:
        log(x)
    else:
        log(x)
    """
    fixed = """
    if is_training:
        v = torch.from_numpy(x)
    else:
        v = torch.from_numpy(x)
    w = a if train else a
    if debug:
        log(x)
    else:
        log(x)
    """
    assert kinds(original, fixed) == [("identical-branches", 2), ("identical-branches", 6)]


def test_useful_conditional_is_not_reported():
    original = "y = Variable(x, volatile=True) if x is not None else zeros\n"
    fixed = "y = x if x is not None else zeros\n"
    assert kinds(original, fixed) == []


def test_alias_left_by_unwrapping_only_when_new():
    original = """
    style_v = Variable(style, volatile=True)
    best = current
    """
    fixed = """
    style_v = style
    best = current
    """
    assert kinds(original, fixed) == [("alias", 2)]


def test_alias_that_merges_branch_values_is_code_not_a_leftover():
    original = """
    def loss(target, smoothed, cpu_img, flip):
        gtruth = target.view(-1)
        if smoothed is not None:
            gtruth = Variable(smoothed)
        if flip:
            rois = Variable(cpu_img)
        else:
            rois = target
        return gtruth, rois
    """
    fixed = original.replace("Variable(smoothed)", "smoothed").replace("Variable(cpu_img)", "cpu_img")
    assert kinds(original, fixed) == []


def test_alias_converted_while_the_original_is_still_read_is_code():
    original = """
    LOOKUP = load()
    def prepare(real_img_cpu, cuda):
        real_imgs = Variable(real_img_cpu)
        if cuda:
            real_imgs = real_imgs.cuda()
        save(real_img_cpu)
        return real_imgs
    def expand(z):
        ix = Variable(LOOKUP)
        if z.is_cuda:
            ix = ix.cuda()
        return z[ix]
    def plain(batch, cuda):
        bat = Variable(batch)
        if cuda:
            bat = bat.cuda()
        return bat
    """
    fixed = original.replace("Variable(real_img_cpu)", "real_img_cpu").replace(
        "Variable(LOOKUP)", "LOOKUP").replace("Variable(batch)", "batch")
    # only the last one could have named `batch` throughout
    assert kinds(original, fixed) == [("alias", 15)]


def test_four_space_block_in_a_two_space_file():
    original = """
    def evaluate(model, x):
      model.eval()
      out = model(Variable(x, volatile=True))
      return out.data
    """
    fixed = """
    import torch
    def evaluate(model, x):
      model.eval()
      with torch.no_grad():
          out = model(x)
      return out.data
    """
    assert kinds(original, fixed) == [("indent-unit", 6)]


def test_block_following_the_step_the_author_took_there_is_fine():
    original = """
    def demo(model, x, n):
      model.eval()
      while n >= 0:
          n -= 1
          out = model(Variable(x, volatile=True))
      return out.data
    """
    fixed = """
    import torch
    def demo(model, x, n):
      model.eval()
      while n >= 0:
          n -= 1
          with torch.no_grad():
              out = model(x)
      return out.data
    """
    assert kinds(original, fixed) == []
    # a third step is still reported
    assert kinds(original, fixed.replace("              out", "             out")) == [("indent-unit", 8)]


def test_tab_file_keeps_tabs():
    original = "def f(model, x):\n\tout = model(Variable(x, volatile=True))\n\treturn out.data\n"
    good = "import torch\ndef f(model, x):\n\twith torch.no_grad():\n\t\tout = model(x)\n\treturn out.data\n"
    bad = "import torch\ndef f(model, x):\n\twith torch.no_grad():\n\t    out = model(x)\n\treturn out.data\n"
    assert leftovers.scan(original, good) == []
    assert [i.kind for i in leftovers.scan(original, bad)] == ["indent-unit"]


def test_region_nested_in_a_version_gated_region():
    original = """
    import torch
    def evaluate(model, data):
        if torch.__version__ >= '0.4':
            with torch.no_grad():
                out = model(Variable(data, volatile=True))
        return out.data
    """
    fixed = """
    import torch
    def evaluate(model, data):
        if torch.__version__ >= '0.4':
            with torch.no_grad():
                with torch.no_grad():
                    out = model(data)
        return out.data
    """
    assert kinds(original, fixed) == [("nested-region", 6)]


def test_region_nested_in_a_project_helper_region():
    original = """
    def run(model, x):
        with _no_grad_ctx():
            return model(Variable(x, volatile=True))
    """
    fixed = """
    import torch
    def run(model, x):
        with _no_grad_ctx():
            with torch.no_grad():
                return model(x)
    """
    assert kinds(original, fixed) == [("nested-region", 5)]


def test_region_swallowing_checkpoint_and_splitting_progress_bar():
    original = """
    import torch
    def test(model, loader, path):
        bar = tqdm(total=len(loader))
        for x in loader:
            out = model(Variable(x, volatile=True))
            bar.update(1)
            torch.save(out, path)
        bar.close()
    """
    fixed = """
    import torch
    def test(model, loader, path):
        with torch.no_grad():
            bar = tqdm(total=len(loader))
            for x in loader:
                out = model(x)
                bar.update(1)
                torch.save(out, path)
        bar.close()
    """
    assert kinds(original, fixed) == [("region-saves-checkpoint", 4), ("region-splits-progress", 4)]


def test_progress_bar_entirely_inside_is_fine():
    original = """
    def test(model, loader):
        bar = tqdm(total=len(loader))
        for x in loader:
            out = model(Variable(x, volatile=True))
            bar.update(1)
        bar.close()
    """
    fixed = """
    import torch
    @torch.no_grad()
    def test(model, loader):
        bar = tqdm(total=len(loader))
        for x in loader:
            out = model(x)
            bar.update(1)
        bar.close()
    """
    assert kinds(original, fixed) == []


def test_empty_region_around_tensor_creation():
    original = """
    def act(self, state):
        state = Variable(torch.FloatTensor(state).unsqueeze(0), volatile=True)
        q = self.forward(state)
        return q.max(1)[1].data[0]
    """
    fixed = """
    import torch
    def act(self, state):
        with torch.no_grad():
            state = torch.FloatTensor(state).unsqueeze(0).cuda()
        q = self.forward(state)
        return q.max(1)[1].data[0]
    """
    assert kinds(original, fixed) == [("empty-region", 4)]


def test_arithmetic_on_a_tensor_that_requires_grad_computes():
    original = """
    import torch as t
    x = V(t.ones(1), volatile=True)
    w = V(t.rand(1), requires_grad=True)
    y = x * w
    """
    fixed = """
    import torch as t
    x = t.ones(1)
    w = t.rand(1, requires_grad=True)
    with t.no_grad():
        y = x * w
    """
    assert kinds(original, fixed) == []
    assert kinds(original, fixed.replace("requires_grad=True", "")) == [("empty-region", 5)]


def test_region_that_computes_is_not_empty():
    original = """
    def act(self, state):
        state = Variable(torch.FloatTensor(state).unsqueeze(0), volatile=True)
        q = self.forward(state)
        return q.max(1)[1].data[0]
    """
    fixed = """
    import torch
    def act(self, state):
        with torch.no_grad():
            state = torch.FloatTensor(state).unsqueeze(0)
            q = self.forward(state)
        return q.max(1)[1].data[0]
    """
    assert kinds(original, fixed) == []


def test_region_containing_a_training_step():
    original = """
    def step(netD, netG, noise, optimizerD):
        fake = netG(Variable(noise, volatile=True))
        loss = netD(Variable(fake.data)).mean()
        loss.backward()
        optimizerD.step()
    """
    fixed = """
    import torch
    def step(netD, netG, noise, optimizerD):
        with torch.no_grad():
            fake = netG(noise)
            loss = netD(fake.detach()).mean()
            loss.backward()
            optimizerD.step()
    """
    assert kinds(original, fixed) == [("region-trains", 4)]


def test_environment_step_is_not_training():
    original = """
    def play(env, model, s):
        a = model(Variable(s, volatile=True)).max(1)[1]
        s, r, done, _ = env.step(a.data[0])
    """
    fixed = """
    import torch
    def play(env, model, s):
        with torch.no_grad():
            a = model(s).max(1)[1]
            s, r, done, _ = env.step(a.data[0])
    """
    assert kinds(original, fixed) == []


def test_region_through_a_name_that_is_not_the_torch_module():
    original = """
    import torch
    if use_gpu:
        import torch.cuda as device
    else:
        import torch as device
    out = model(Variable(x, volatile=True))
    """
    fixed = """
    import torch
    if use_gpu:
        import torch.cuda as device
    else:
        import torch as device
    with device.no_grad():
        out = model(x)
    """
    assert kinds(original, fixed) == [("torch-name-not-module", 7)]


def test_region_through_torch_alias_and_imported_no_grad_are_fine():
    original = """
    import torch as t
    from torch import no_grad
    a = model(Variable(x, volatile=True))
    b = model(Variable(y, volatile=True))
    """
    fixed = """
    import torch as t
    from torch import no_grad
    with t.no_grad():
        a = model(x)
    with no_grad():
        b = model(y)
    """
    assert kinds(original, fixed) == []


def test_region_name_from_a_star_import_cannot_be_judged():
    original = "from utils import *\nout = model(Variable(x, volatile=True))\n"
    fixed = "from utils import *\nwith torch.no_grad():\n    out = model(x)\n"
    assert kinds(original, fixed) == []


def test_local_rebinding_in_another_function_and_shims_are_fine():
    original = """
    import torch as t
    from shim import torch_no_grad
    def loop(xs):
        for t in xs:
            print(t)
    def test(model, x):
        return model(Variable(x, volatile=True))
    def other(model, y):
        return model(Variable(y, volatile=True))
    """
    fixed = """
    import torch as t
    from shim import torch_no_grad
    def loop(xs):
        for t in xs:
            print(t)
    @t.no_grad()
    def test(model, x):
        return model(x)
    def other(model, y):
        with torch_no_grad():
            return model(y)
    """
    assert kinds(original, fixed) == []


def test_unbound_region_name():
    original = "out = model(Variable(x, volatile=True))\n"
    fixed = "with torch.no_grad():\n    out = model(x)\n"
    assert kinds(original, fixed) == [("torch-name-not-module", 1)]


def test_grad_volatile_read_rewritten_to_grad_mode():
    original = """
    import torch
    def zero_grads(params):
        for p in params:
            if p.grad.volatile:
                p.grad.data.zero_()
    """
    fixed = """
    import torch
    def zero_grads(params):
        for p in params:
            if not torch.is_grad_enabled():
                p.grad.data.zero_()
    """
    assert kinds(original, fixed) == [("grad-mode-for-tensor", 5)]


def test_several_tensors_of_one_function_become_one_test():
    original = """
    import torch
    def forward(self, a, b):
        if not a.volatile:
            a = a * 2
        if not b.volatile:
            b = b * 2
        return a, b
    """
    fixed = """
    import torch
    def forward(self, a, b):
        if torch.is_grad_enabled():
            a = a * 2
        if torch.is_grad_enabled():
            b = b * 2
        return a, b
    """
    assert kinds(original, fixed) == [("grad-mode-for-tensor", 4), ("grad-mode-for-tensor", 6)]


def test_single_input_read_as_grad_mode_is_fine():
    original = """
    import torch
    def forward(self, x):
        if x.volatile:
            return self.fast(x)
        return self.slow(x)
    """
    fixed = """
    import torch
    def forward(self, x):
        if not torch.is_grad_enabled():
            return self.fast(x)
        return self.slow(x)
    """
    assert kinds(original, fixed) == []


def test_unchanged_or_unparsable_fixed_text_reports_nothing():
    src = "x = x\n"
    assert leftovers.scan(src, src) == []
    assert leftovers.scan("y = 1\n", "def (\n") == []


def test_async_keyword_in_the_original_does_not_hide_leftovers():
    original = "x = Variable(x.cuda(async=True))\ny = [Variable(a, volatile=True) for a in ys]\n"
    fixed = "x = x.cuda(non_blocking=True)\ny = [a for a in ys]\n"
    assert kinds(original, fixed) == [("identity-comprehension", 2)]


def _notebook(*cells: str) -> str:
    return json.dumps({"cells": [{"cell_type": "code", "source": c.splitlines(True), "metadata": {},
                                  "outputs": [], "execution_count": None} for c in cells],
                       "metadata": {}, "nbformat": 4, "nbformat_minor": 2})


def test_notebook_rows_are_reported_in_their_cell():
    original = _notebook("import torch\n%matplotlib inline\n", "x = 1\ntargets = [Variable(t, volatile=True) for t in ts]\n")
    fixed = _notebook("import torch\n%matplotlib inline\n", "x = 1\ntargets = [t for t in ts]\n")
    items = leftovers.scan_units(notebook_as_python(original), notebook_as_python(fixed))
    assert [(i.kind, i.cell, i.row) for i in items] == [("identity-comprehension", 2, 2)]


def test_command_line_exit_status(tmp_path):
    a, b = tmp_path / "a.py", tmp_path / "b.py"
    a.write_text("x = Variable(x, volatile=True)\n")
    b.write_text("x = x\n")
    proc = subprocess.run([sys.executable, str(SCRIPTS / "evaluation"), "leftovers", str(a), str(b)],
                          capture_output=True, text=True)
    assert proc.returncode == 1
    assert proc.stdout.strip() == f"{b}:1: self-assignment: x = x"
    b.write_text("import torch\nx = x.detach()\n")
    proc = subprocess.run([sys.executable, str(SCRIPTS / "evaluation"), "leftovers", str(a), str(b)],
                          capture_output=True, text=True)
    assert (proc.returncode, proc.stdout) == (0, "")


@pytest.mark.parametrize("kind", sorted(leftovers.KINDS))
def test_every_kind_is_documented_in_the_module(kind):
    assert kind in leftovers.__doc__
