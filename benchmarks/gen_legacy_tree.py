"""Generate a deterministic tree of PyTorch 0.3-era code for the benchmark.

    python benchmarks/gen_legacy_tree.py OUT_DIR [--lines 120000] [--seed 3]

The tree looks like a set of research projects from 2017: models, training and evaluation
scripts, data helpers. Every file is valid Python 3 apart from a few `x.cuda(async=True)`
calls (VF301), and the mix is chosen so that the prefilter has real work:

- one file in three has `volatile` sites (eval loops with `Variable(x, volatile=True)`,
  helpers with a `volatile` parameter, `.volatile` reads and writes);
- one in three uses `Variable` without `volatile` (training steps, hidden-state init);
- one in three never mentions either (configs, metrics, data loading): skipped unparsed.

The same seed and line count always give byte-identical files.
"""
from __future__ import annotations

import argparse
import os
import random
import sys
from typing import Callable, Dict, List, Optional

LAYERS = ["conv", "fc", "proj", "embed", "enc", "dec", "attn", "head"]
TASKS = ["mnist", "cifar", "imagenet", "vqa", "lm", "seq2seq", "detect", "segment", "gan", "rl"]
OPTIMS = ["SGD", "Adam", "RMSprop", "Adagrad"]


class Writer:
    def __init__(self, rng: random.Random) -> None:
        self.rng = rng
        self.lines: List[str] = []

    def emit(self, text: str) -> None:
        self.lines.extend(text.strip("\n").split("\n"))
        self.lines.append("")

    def name(self, stem: str) -> str:
        return f"{stem}{self.rng.randrange(1, 100)}"


def header(w: Writer, task: str, kind: str, variable: bool) -> None:
    w.emit(f'"""{kind.capitalize()} code for the {task} experiments (PyTorch 0.3)."""')
    imports = ["import math", "import time", "", "import numpy as np", "import torch",
               "import torch.nn as nn", "import torch.nn.functional as F"]
    if kind in ("train", "eval"):
        imports.append("import torch.optim as optim")
    if variable:
        imports.append(w.rng.choice(["from torch.autograd import Variable"] * 3
                                    + ["from torch import autograd"]))
    w.emit("\n".join(imports))


def var(w: Writer, expr: str, extra: str = "") -> str:
    if any(line.startswith("from torch import autograd") for line in w.lines[:12]):
        return f"autograd.Variable({expr}{extra})"
    return f"Variable({expr}{extra})"


def model_class(w: Writer, task: str, variable: bool) -> None:
    rng = w.rng
    cls = f"{task.capitalize()}{rng.choice(['Net', 'Model', 'Encoder', 'Classifier'])}{rng.randrange(100)}"
    hidden = rng.choice([64, 128, 256, 512])
    layers = rng.sample(LAYERS, 3)
    init_hidden = ""
    if variable:
        init_hidden = f'''
    def init_hidden(self, batch_size):
        weight = next(self.parameters()).data
        return {var(w, f"weight.new(2, batch_size, {hidden}).zero_()")}
'''
    w.emit(f'''
class {cls}(nn.Module):
    """{rng.choice(["A small", "A deep", "The baseline", "A residual"])} model for {task}."""

    def __init__(self, n_in={rng.choice([784, 1024, 3072])}, n_out={rng.choice([10, 100, 1000])}, dropout=0.{rng.randrange(1, 6)}):
        super({cls}, self).__init__()
        self.{layers[0]} = nn.Linear(n_in, {hidden})
        self.{layers[1]} = nn.Linear({hidden}, {hidden})
        self.{layers[2]} = nn.Linear({hidden}, n_out)
        self.drop = nn.Dropout(dropout)
        self.bn = nn.BatchNorm1d({hidden})

    def forward(self, x):
        x = x.view(x.size(0), -1)
        x = F.relu(self.bn(self.{layers[0]}(x)))
        x = self.drop(x)
        x = F.relu(self.{layers[1]}(x))
        return F.log_softmax(self.{layers[2]}(x))
{init_hidden}''')


def train_step(w: Writer, task: str) -> None:
    rng = w.rng
    fn = f"train_{task}_{rng.randrange(100)}"
    cuda = rng.choice(["x.cuda()", "x.cuda(async=True)"] if rng.random() < 0.2 else ["x.cuda()"])
    w.emit(f'''
def {fn}(model, loader, optimizer, epoch, use_cuda=True, log_every={rng.choice([10, 50, 100])}):
    model.train()
    total_loss = 0.0
    start = time.time()
    for i, (x, y) in enumerate(loader):
        if use_cuda:
            x, y = {cuda}, y.cuda()
        x, y = {var(w, "x")}, {var(w, "y")}
        optimizer.zero_grad()
        output = model(x)
        loss = F.nll_loss(output, y)
        loss.backward()
        optimizer.step()
        total_loss += loss.data[0]
        if i % log_every == 0:
            print("epoch %d [%d/%d] loss %.4f (%.1fs)" % (
                epoch, i, len(loader), total_loss / (i + 1), time.time() - start))
    return total_loss / len(loader)
''')


def eval_loop(w: Writer, task: str) -> None:
    rng = w.rng
    fn = f"evaluate_{task}_{rng.randrange(100)}"
    style = rng.randrange(3)
    if style == 0:
        body = f'''
    for x, y in loader:
        x = {var(w, "x.cuda()", ", volatile=True")}
        y = {var(w, "y.cuda()")}
        output = model(x)
        test_loss += F.nll_loss(output, y, size_average=False).data[0]
        pred = output.data.max(1, keepdim=True)[1]
        correct += pred.eq(y.data.view_as(pred)).cpu().sum()'''
    elif style == 1:
        body = f'''
    for batch in loader:
        inputs = {var(w, "batch[0]", ", volatile=True")}
        output = model(inputs)
        test_loss += criterion(output, {var(w, "batch[1]", ", volatile=True")}).data[0]
        correct += (output.max(1)[1] == batch[1]).sum()'''
    else:
        body = f'''
    for i in range(0, len(loader.dataset), loader.batch_size):
        data = {var(w, "loader.dataset[i][0].unsqueeze(0)", ", volatile=True")}
        hidden = model.init_hidden(1)
        if hidden.volatile:
            hidden.volatile = False
        output = model(data)
        test_loss += output.data.sum()'''
    crit = "" if style != 1 else "\n    criterion = nn.CrossEntropyLoss()"
    w.emit(f'''
def {fn}(model, loader):
    """Average loss and accuracy on `loader`."""
    model.eval()
    test_loss = 0
    correct = 0{crit}{body}
    test_loss /= len(loader.dataset)
    return test_loss, 100.0 * correct / len(loader.dataset)
''')


def helpers(w: Writer, task: str) -> None:
    rng = w.rng
    w.emit(f'''
def to_var_{rng.randrange(100)}(x, volatile=False, use_cuda=True):
    """Wrap a tensor for the model; `volatile` for inference."""
    if use_cuda and torch.cuda.is_available():
        x = x.cuda()
    return {var(w, "x", ", volatile=volatile")}


def get_batch_{rng.randrange(100)}(source, i, bptt={rng.choice([35, 70])}, evaluation=False):
    seq_len = min(bptt, len(source) - 1 - i)
    data = {var(w, "source[i:i + seq_len]", ", volatile=evaluation")}
    target = {var(w, "source[i + 1:i + 1 + seq_len].view(-1)")}
    return data, target


def repackage_hidden_{rng.randrange(100)}(h):
    """Detach hidden states from their history."""
    if type(h) == Variable:
        return {var(w, "h.data")}
    return tuple(repackage_hidden(v) for v in h)
''')


def clean_block(w: Writer, task: str) -> None:
    rng = w.rng
    kind = rng.randrange(4)
    n = rng.randrange(100)
    if kind == 0:
        w.emit(f'''
class AverageMeter{n}(object):
    """Computes and stores the average and current value."""

    def __init__(self):
        self.reset()

    def reset(self):
        self.val = 0
        self.avg = 0
        self.sum = 0
        self.count = 0

    def update(self, val, n=1):
        self.val = val
        self.sum += val * n
        self.count += n
        self.avg = self.sum / self.count
''')
    elif kind == 1:
        w.emit(f'''
def accuracy_{n}(output, target, topk=(1,)):
    """Precision@k for the specified values of k."""
    maxk = max(topk)
    batch_size = target.size(0)
    _, pred = output.topk(maxk, 1, True, True)
    pred = pred.t()
    correct = pred.eq(target.view(1, -1).expand_as(pred))
    res = []
    for k in topk:
        correct_k = correct[:k].view(-1).float().sum(0)
        res.append(correct_k.mul_(100.0 / batch_size))
    return res
''')
    elif kind == 2:
        w.emit(f'''
def load_{task}_{n}(path, batch_size={rng.choice([32, 64, 128])}, shuffle=True):
    """Read the preprocessed {task} arrays and wrap them in a DataLoader."""
    arrays = np.load(path)
    x = torch.from_numpy(arrays["x"]).float()
    y = torch.from_numpy(arrays["y"]).long()
    dataset = torch.utils.data.TensorDataset(x, y)
    return torch.utils.data.DataLoader(dataset, batch_size=batch_size, shuffle=shuffle,
                                       num_workers={rng.choice([0, 2, 4])}, pin_memory=True)
''')
    else:
        w.emit(f'''
def adjust_learning_rate_{n}(optimizer, epoch, base_lr={rng.choice(["0.1", "0.01", "1e-3"])}, decay={rng.choice([10, 30])}):
    """Decay the learning rate by 10 every `decay` epochs."""
    lr = base_lr * (0.1 ** (epoch // decay))
    for param_group in optimizer.param_groups:
        param_group["lr"] = lr
    return lr


CONFIG_{n} = {{
    "task": "{task}",
    "epochs": {rng.choice([10, 30, 90])},
    "optimizer": "{rng.choice(OPTIMS)}",
    "momentum": 0.9,
    "weight_decay": {rng.choice(["1e-4", "5e-4", "0"])},
}}
''')


def main_block(w: Writer, task: str, variable: bool) -> None:
    rng = w.rng
    w.emit(f'''
def main(argv=None):
    import argparse

    parser = argparse.ArgumentParser(description="{task} experiment")
    parser.add_argument("--epochs", type=int, default={rng.choice([10, 20, 50])})
    parser.add_argument("--lr", type=float, default={rng.choice(["0.1", "0.01", "0.001"])})
    parser.add_argument("--no-cuda", action="store_true")
    args = parser.parse_args(argv)
    torch.manual_seed({rng.randrange(10000)})
    return args


if __name__ == "__main__":
    main()
''')


def make_file(rng: random.Random, index: int, target_lines: int) -> str:
    """One module; `index % 3` picks its flavour (volatile / Variable only / clean)."""
    w = Writer(rng)
    task = rng.choice(TASKS)
    flavour = index % 3
    kind = {0: rng.choice(["eval", "utils"]), 1: rng.choice(["train", "model"]),
            2: rng.choice(["data", "metrics", "config"])}[flavour]
    header(w, task, kind, variable=flavour < 2)
    makers: List[Callable[[], None]]
    if flavour == 0:
        makers = [lambda: eval_loop(w, task), lambda: helpers(w, task),
                  lambda: model_class(w, task, True), lambda: train_step(w, task)]
    elif flavour == 1:
        makers = [lambda: train_step(w, task), lambda: model_class(w, task, True),
                  lambda: clean_block(w, task)]
    else:
        makers = [lambda: clean_block(w, task), lambda: model_class(w, task, False)]
    makers[0]()
    while len(w.lines) < target_lines:
        rng.choice(makers)()
    if rng.random() < 0.3:
        main_block(w, task, flavour < 2)
    return "\n".join(w.lines).rstrip("\n") + "\n"


def generate(out_dir: str, total_lines: int = 120_000, seed: int = 3,
             lines_per_file: int = 180) -> Dict[str, int]:
    """Write the tree; returns counts (files, lines, volatile_files)."""
    rng = random.Random(seed)
    stats = {"files": 0, "lines": 0, "volatile_files": 0, "variable_files": 0}
    index = 0
    while stats["lines"] < total_lines:
        project = f"project_{index // 40:02d}_{TASKS[(index // 40) % len(TASKS)]}"
        sub = ["models", "train", "eval", "utils", "data"][index % 5]
        path = os.path.join(out_dir, project, sub, f"mod_{index:04d}.py")
        text = make_file(rng, index, rng.randrange(lines_per_file // 2, lines_per_file * 3 // 2))
        os.makedirs(os.path.dirname(path), exist_ok=True)
        with open(path, "w", encoding="utf-8", newline="\n") as fh:
            fh.write(text)
        stats["files"] += 1
        stats["lines"] += text.count("\n")
        stats["volatile_files"] += "volatile" in text
        stats["variable_files"] += "Variable" in text
        index += 1
    for project in sorted(os.listdir(out_dir)):
        for sub in ("models", "train", "eval", "utils", "data"):
            init = os.path.join(out_dir, project, sub, "__init__.py")
            if os.path.isdir(os.path.dirname(init)) and not os.path.exists(init):
                open(init, "w").close()
                stats["files"] += 1
    return stats


def main(argv: Optional[List[str]] = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("out_dir")
    parser.add_argument("--lines", type=int, default=120_000)
    parser.add_argument("--seed", type=int, default=3)
    args = parser.parse_args(argv)
    if os.path.exists(args.out_dir) and os.listdir(args.out_dir):
        print(f"error: {args.out_dir} is not empty", file=sys.stderr)
        return 2
    stats = generate(args.out_dir, args.lines, args.seed)
    print(" ".join(f"{k}={v}" for k, v in stats.items()))
    return 0


if __name__ == "__main__":
    sys.exit(main())
