"""Generate a folder of legacy research repositories under one git root (issue 27).

    python benchmarks/gen_repos_tree.py OUT_DIR [--repos 30] [--lines 184000] [--notebooks 100]
                                        [--copies 1] [--seed 5]

The shape of the tree a new user tried: 30 PyTorch 0.3-era repositories copied side by side
into one folder under one `.git` (184k lines, 100 notebooks). Each repository is laid out
the way research code of 2017 was (`examples/legacy/lm_package`, the corpus of
docs/EVALUATION.md):

- top-level scripts (`main.py`, `train.py`, `eval.py`, `demo.py`) that import sibling modules
  as scripts do: `import model`, `from data import get_batch`, and `from utils import *`;
- a `utils.py` with the helpers that thread the flag (`to_var(x, volatile=False)`,
  `get_batch(source, i, evaluation=False)`), called from the scripts and the notebooks
  with `volatile=True` / `evaluation=True`;
- a package (`<name>/models`, `<name>/datasets`, `<name>/lib`) whose modules star-import a
  sibling (`from .torch_imports import *`, which binds `Variable`) and call a helper of
  another file (`from ..lib.helpers import to_variable`);
- most lines are code that never mentions `Variable` or `volatile` (configs, data loading,
  metrics, models written without Variable): about one line in five is in a candidate file;
- a project marker per repository (`setup.py`, `pyproject.toml`, `setup.cfg` or a `.git`
  directory), except one repository in six, which has none: its files belong to the outer
  git root, as a checked-in copy without packaging would;
- notebooks (`notebooks/*.ipynb`), some of them calling the repository's helpers.

The same module names (`utils`, `model`, `data`, helper names) recur in every repository,
so a linker that treats the folder as one project links across repositories. `--copies N`
writes N copies of the whole set (`set_0/`, `set_1/`, ...) under the same root: the 2x and 4x
rows of the benchmark. The same arguments always give byte-identical trees.
"""
from __future__ import annotations

import argparse
import json
import os
import random
import shutil
import sys
from typing import Dict, List, Optional

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))

import gen_legacy_tree as legacy  # noqa: E402

MARKERS = ["setup.py", "pyproject.toml", ".git", "setup.cfg", ".git", None]
PACKAGE_NAMES = ["lib", "core", "src", "nets", "modules", "toolkit"]


def _write(path: str, text: str) -> int:
    os.makedirs(os.path.dirname(path), exist_ok=True)
    with open(path, "w", encoding="utf-8", newline="\n") as fh:
        fh.write(text)
    return text.count("\n")


def utils_module(rng: random.Random, task: str) -> str:
    """The repository's `utils.py`: the helpers that thread the volatile flag."""
    return f'''"""Helpers shared by the {task} scripts."""
import os

import numpy as np
import torch
from torch.autograd import Variable

USE_CUDA = torch.cuda.is_available()


def to_var(x, volatile=False):
    """Wrap a tensor for the model; `volatile` for inference."""
    if USE_CUDA:
        x = x.cuda()
    return Variable(x, volatile=volatile)


def get_batch(source, i, bptt={rng.choice([35, 70])}, evaluation=False):
    seq_len = min(bptt, len(source) - 1 - i)
    data = Variable(source[i:i + seq_len], volatile=evaluation)
    target = Variable(source[i + 1:i + 1 + seq_len].view(-1))
    return data, target


def save_checkpoint(state, path="checkpoint.pth.tar"):
    torch.save(state, path)


def mkdir_p(path):
    if not os.path.isdir(path):
        os.makedirs(path)


def to_numpy(x):
    return x.data.cpu().numpy() if isinstance(x, Variable) else np.asarray(x)
'''


def script_module(rng: random.Random, task: str, kind: str) -> str:
    """A top-level script: imports its siblings the research-script way and calls the
    helpers of `utils.py` with a true flag in its evaluation loop."""
    star = rng.random() < 0.5
    imports = "from utils import *" if star else "from utils import to_var, get_batch, save_checkpoint"
    variable = "" if star else "from torch.autograd import Variable\n"
    return f'''"""{kind.capitalize()} script of the {task} experiments (PyTorch 0.3)."""
import argparse
import time

import torch
import torch.nn as nn
import torch.nn.functional as F
{variable}
import model
{imports}


def train_epoch(net, loader, optimizer, epoch):
    net.train()
    total = 0.0
    for i, (x, y) in enumerate(loader):
        x, y = to_var(x), to_var(y)
        optimizer.zero_grad()
        loss = F.cross_entropy(net(x), y)
        loss.backward()
        optimizer.step()
        total += loss.data[0]
    return total / len(loader)


def validate(net, loader):
    net.eval()
    correct = 0
    for x, y in loader:
        x = to_var(x, volatile=True)
        out = net(x)
        correct += (out.data.max(1)[1].cpu() == y).sum()
    return correct / float(len(loader.dataset))


def evaluate_lm(net, data_source, criterion, bptt={rng.choice([35, 70])}):
    net.eval()
    total_loss = 0
    hidden = net.init_hidden(data_source.size(1))
    for i in range(0, data_source.size(0) - 1, bptt):
        data, targets = get_batch(data_source, i, evaluation=True)
        output, hidden = net(data, hidden)
        total_loss += len(data) * criterion(output.view(-1, output.size(-1)), targets).data
        hidden = Variable(hidden.data)
    return total_loss[0] / len(data_source)


def main():
    parser = argparse.ArgumentParser(description="{task} {kind}")
    parser.add_argument("--epochs", type=int, default={rng.choice([10, 30, 90])})
    parser.add_argument("--lr", type=float, default={rng.choice(["0.1", "0.01", "0.001"])})
    args = parser.parse_args()
    net = model.Net()
    optimizer = torch.optim.SGD(net.parameters(), lr=args.lr, momentum=0.9)
    for epoch in range(args.epochs):
        start = time.time()
        loss = train_epoch(net, None, optimizer, epoch)
        acc = validate(net, None)
        print("epoch %d loss %.3f acc %.3f (%.0fs)" % (epoch, loss, acc, time.time() - start))
        save_checkpoint({{"epoch": epoch, "state_dict": net.state_dict()}})


if __name__ == "__main__":
    main()
'''


def torch_imports_module() -> str:
    return '''"""Everything the package's modules need from torch (star-imported by them)."""
import torch
import torch.nn as nn
import torch.nn.functional as F
from torch.autograd import Variable
'''


def package_helpers_module(rng: random.Random) -> str:
    return f'''"""Helpers of the package (called from its models)."""
from .torch_imports import *


def to_variable(x, volatile=False, cuda=True):
    if cuda and torch.cuda.is_available():
        x = x.cuda()
    return Variable(x, volatile=volatile)


def clip_gradient(optimizer, grad_clip={rng.choice([5, 10, 20])}):
    for group in optimizer.param_groups:
        for param in group["params"]:
            if param.grad is not None:
                param.grad.data.clamp_(-grad_clip, grad_clip)
'''


def package_model_module(rng: random.Random, task: str, n: int) -> str:
    """A model of the package: a star import of a sibling, a helper of another file."""
    return f'''"""A {task} model (star-imports the package's torch names)."""
from ..lib.torch_imports import *
from ..lib.helpers import to_variable


class Model{n}(nn.Module):
    def __init__(self, n_in={rng.choice([256, 512])}, n_out={rng.choice([10, 100])}):
        super(Model{n}, self).__init__()
        self.fc1 = nn.Linear(n_in, 128)
        self.fc2 = nn.Linear(128, n_out)

    def forward(self, x):
        return self.fc2(F.relu(self.fc1(x)))

    def predict(self, x):
        self.eval()
        out = self(to_variable(x, volatile=True))
        return out.data.max(1)[1]

    def init_hidden(self, bsz):
        return Variable(torch.zeros(1, bsz, 128))
'''


def notebook(rng: random.Random, task: str, legacy_cell: bool, helper_call: bool) -> str:
    cells = [{"cell_type": "markdown", "metadata": {}, "source": [f"# {task} experiments\n"]}]
    code = ["import torch\n", "import numpy as np\n", "import matplotlib.pyplot as plt\n"]
    cells.append({"cell_type": "code", "execution_count": 1, "metadata": {}, "outputs": [], "source": code})
    if legacy_cell:
        src = ["from torch.autograd import Variable\n", "\n",
               "x = Variable(torch.randn(4, 10), volatile=True)\n", "out = net(x)\n",
               "print(out.data.numpy())"]
        cells.append({"cell_type": "code", "execution_count": 2, "metadata": {}, "outputs": [], "source": src})
    if helper_call:
        src = ["from utils import to_var\n", "\n", "y = to_var(torch.ones(3), volatile=True)\n",
               "pred = net(y)\n", "pred.data.max(1)"]
        cells.append({"cell_type": "code", "execution_count": 3, "metadata": {}, "outputs": [], "source": src})
    for k in range(rng.randrange(2, 6)):
        src = [f"losses_{k} = np.load('losses_{k}.npy')\n", f"plt.plot(losses_{k})\n", "plt.show()"]
        cells.append({"cell_type": "code", "execution_count": 4 + k, "metadata": {}, "outputs": [], "source": src})
    nb = {"cells": cells, "metadata": {"kernelspec": {"display_name": "Python 3", "language": "python",
                                                    "name": "python3"}},
          "nbformat": 4, "nbformat_minor": 2}
    return json.dumps(nb, indent=1) + "\n"


def marker(root: str, kind: Optional[str], name: str) -> None:
    if kind is None:
        return
    if kind == ".git":
        os.makedirs(os.path.join(root, ".git"), exist_ok=True)
        _write(os.path.join(root, ".git", "HEAD"), "ref: refs/heads/master\n")
    elif kind == "setup.py":
        _write(os.path.join(root, kind), f'from setuptools import find_packages, setup\n\n'
                                         f'setup(name="{name}", version="0.1", packages=find_packages())\n')
    elif kind == "pyproject.toml":
        _write(os.path.join(root, kind), f'[project]\nname = "{name}"\nversion = "0.1"\n')
    else:
        _write(os.path.join(root, kind), f"[metadata]\nname = {name}\nversion = 0.1\n")


def repository(root: str, rng: random.Random, number: int, lines: int, notebooks: int) -> Dict[str, int]:
    """One repository of about `lines` lines and `notebooks` notebooks."""
    task = legacy.TASKS[number % len(legacy.TASKS)]
    name = f"{task}_{number:02d}"
    pkg = PACKAGE_NAMES[number % len(PACKAGE_NAMES)]
    stats = {"files": 0, "lines": 0, "notebooks": 0}

    def put(rel: str, text: str) -> None:
        stats["lines"] += _write(os.path.join(root, rel), text)
        stats["files"] += 1

    marker(root, MARKERS[number % len(MARKERS)], name)
    put("utils.py", utils_module(rng, task))
    put("model.py", legacy.make_file(rng, 1, 120))
    put("data.py", legacy.make_file(rng, 2, 150))
    for kind in rng.sample(["main", "train", "eval", "demo", "test"], 3):
        put(f"{kind}.py", script_module(rng, task, kind))
    put(f"{pkg}/__init__.py", "")
    put(f"{pkg}/lib/__init__.py", "")
    put(f"{pkg}/lib/torch_imports.py", torch_imports_module())
    put(f"{pkg}/lib/helpers.py", package_helpers_module(rng))
    put(f"{pkg}/models/__init__.py", "")
    for n in range(2):
        put(f"{pkg}/models/net_{n}.py", package_model_module(rng, task, n))
    # The rest: mostly code that never mentions Variable (one line in five is a candidate's).
    index = 0
    while stats["lines"] < lines:
        roll = rng.random()
        flavour = 0 if roll < 0.06 else 1 if roll < 0.14 else 2
        sub = ["datasets", "lib", "models", "tools"][index % 4]
        text = legacy.make_file(rng, flavour, rng.randrange(90, 270))
        put(f"{pkg}/{sub}/{sub[:-1] if sub.endswith('s') else sub}_{index:03d}.py", text)
        index += 1
    for sub in ("datasets", "tools"):
        folder = os.path.join(root, pkg, sub)
        if os.path.isdir(folder) and not os.path.exists(os.path.join(folder, "__init__.py")):
            put(f"{pkg}/{sub}/__init__.py", "")
    for k in range(notebooks):
        text = notebook(rng, task, legacy_cell=rng.random() < 0.4, helper_call=rng.random() < 0.3)
        _write(os.path.join(root, "notebooks", f"{task}_{k}.ipynb"), text)
        stats["notebooks"] += 1
    return stats


def generate(out_dir: str, repos: int = 30, total_lines: int = 184_000, notebooks: int = 100,
             seed: int = 5, copies: int = 1) -> Dict[str, int]:
    """Write the tree (`copies` sets of `repos` repositories under one `.git`); returns counts."""
    os.makedirs(os.path.join(out_dir, ".git"), exist_ok=True)
    _write(os.path.join(out_dir, ".git", "HEAD"), "ref: refs/heads/main\n")
    first = os.path.join(out_dir, "set_0")
    rng = random.Random(seed)
    stats = {"files": 0, "lines": 0, "notebooks": 0}
    for number in range(repos):
        per_notebooks = notebooks // repos + (1 if number < notebooks % repos else 0)
        name = f"repo_{number:02d}_{legacy.TASKS[number % len(legacy.TASKS)]}"
        got = repository(os.path.join(first, name), rng, number, total_lines // repos, per_notebooks)
        for key, value in got.items():
            stats[key] += value
    for copy in range(1, copies):
        shutil.copytree(first, os.path.join(out_dir, f"set_{copy}"), symlinks=True)
    stats = {key: value * copies for key, value in stats.items()}
    stats["projects"] = repos * copies
    return stats


def main(argv: Optional[List[str]] = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("out_dir")
    parser.add_argument("--repos", type=int, default=30)
    parser.add_argument("--lines", type=int, default=184_000)
    parser.add_argument("--notebooks", type=int, default=100)
    parser.add_argument("--copies", type=int, default=1)
    parser.add_argument("--seed", type=int, default=5)
    args = parser.parse_args(argv)
    if os.path.exists(args.out_dir) and os.listdir(args.out_dir):
        print(f"error: {args.out_dir} is not empty", file=sys.stderr)
        return 2
    stats = generate(args.out_dir, args.repos, args.lines, args.notebooks, args.seed, args.copies)
    print(" ".join(f"{k}={v}" for k, v in stats.items()))
    return 0


if __name__ == "__main__":
    sys.exit(main())
