"""Generate a synthetic company monorepo with some PyTorch 0.3-era code in it (issue 27).

    python benchmarks/gen_monorepo.py OUT_DIR [--files 20000] [--lines 3000000]
                                      [--legacy 0.05] [--scale 1.0] [--seed 11]

One project (`pyproject.toml` and `.git` at the root) of `--files` modules, `--lines` lines in
all, under `src/`: 100 top-level packages of 4 subpackages each. Most of it is modern
service code that never mentions `Variable` or `volatile` (dataclasses, request handlers,
SQL builders, modern torch with `torch.no_grad()`); a `--legacy` fraction of the files
(5%) is the ML teams' 2017 code (`gen_legacy_tree.make_file`), spread over the `ml_*`
packages, and calls the helpers of a shared package across packages the way a monorepo
does: `from ml_common.torch_utils import to_var` then `to_var(x, volatile=True)`, and
`from ml_common.torch_imports import *`.

`--scale 0.1` divides files and lines by ten, for quick runs. The same arguments always
give byte-identical trees.
"""
from __future__ import annotations

import argparse
import os
import random
import sys
from typing import Dict, List, Optional

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))

import gen_legacy_tree as legacy  # noqa: E402

PACKAGES = 100
SUBPACKAGES = ["api", "core", "storage", "jobs"]
WORDS = ["user", "order", "invoice", "account", "session", "event", "metric", "report", "query",
         "item", "batch", "record", "token", "job", "feature", "model", "shard", "tenant"]


def _write(path: str, text: str) -> int:
    os.makedirs(os.path.dirname(path), exist_ok=True)
    with open(path, "w", encoding="utf-8", newline="\n") as fh:
        fh.write(text)
    return text.count("\n")


def modern_block(rng: random.Random) -> str:
    """One block of modern code (about 15-30 lines) that no prefilter rule reads."""
    w = rng.choice(WORDS)
    n = rng.randrange(1000)
    kind = rng.randrange(5)
    if kind == 0:
        return f'''

@dataclass(frozen=True)
class {w.capitalize()}{n}:
    """A {w} as the service stores it."""

    id: int
    name: str
    created_at: float = 0.0
    tags: Tuple[str, ...] = ()

    def key(self) -> str:
        return f"{w}:{{self.id}}"

    def with_tag(self, tag: str) -> "{w.capitalize()}{n}":
        return {w.capitalize()}{n}(self.id, self.name, self.created_at, self.tags + (tag,))
'''
    if kind == 1:
        return f'''

def handle_{w}_{n}(request: Dict[str, object], store: "Store") -> Dict[str, object]:
    """Serve GET /{w}s/<id>."""
    ident = int(request.get("id", 0))
    if ident <= 0:
        return {{"status": 400, "error": "bad id"}}
    found = store.get("{w}", ident)
    if found is None:
        return {{"status": 404}}
    logger.info("served {w} %s", ident)
    return {{"status": 200, "body": found}}
'''
    if kind == 2:
        return f'''

def select_{w}s_{n}(filters: Dict[str, object], limit: int = {rng.choice([50, 100, 500])}) -> Tuple[str, List[object]]:
    """Build the SQL for a filtered listing of {w}s."""
    clauses, params = [], []
    for column, value in sorted(filters.items()):
        clauses.append(f"{{column}} = %s")
        params.append(value)
    where = " AND ".join(clauses) or "TRUE"
    return f"SELECT * FROM {w}s WHERE {{where}} LIMIT {{limit}}", params
'''
    if kind == 3:
        return f'''

def predict_{w}_{n}(model: "torch.nn.Module", batch: "torch.Tensor") -> List[float]:
    """Scores for a batch of {w} features (modern PyTorch)."""
    import torch

    model.eval()
    with torch.no_grad():
        scores = model(batch.to(DEVICE)).softmax(-1)[:, 1]
    return scores.cpu().tolist()
'''
    return f'''

class {w.capitalize()}Cache{n}:
    """An LRU cache of {w}s in front of the database."""

    def __init__(self, size: int = {rng.choice([128, 1024, 4096])}) -> None:
        self.size = size
        self.items: Dict[int, object] = {{}}

    def get(self, key: int) -> Optional[object]:
        value = self.items.pop(key, None)
        if value is not None:
            self.items[key] = value
        return value

    def put(self, key: int, value: object) -> None:
        self.items[key] = value
        while len(self.items) > self.size:
            self.items.pop(next(iter(self.items)))
'''


MODERN_HEADER = '''"""{doc}"""
from __future__ import annotations

import logging
from dataclasses import dataclass
from typing import Dict, List, Optional, Tuple

logger = logging.getLogger(__name__)
DEVICE = "cpu"
'''


def modern_module(rng: random.Random, lines: int, doc: str) -> str:
    parts = [MODERN_HEADER.format(doc=doc)]
    count = parts[0].count("\n")
    while count < lines:
        block = modern_block(rng)
        parts.append(block)
        count += block.count("\n")
    return "".join(parts)


TORCH_UTILS = '''"""Helpers of the ML teams' 2017 code, shared across packages."""
import torch
from torch.autograd import Variable


def to_var(x, volatile=False, cuda=False):
    """Wrap a tensor for a model; `volatile` for inference."""
    if cuda:
        x = x.cuda()
    return Variable(x, volatile=volatile)


def get_batch(source, i, bptt=35, evaluation=False):
    seq_len = min(bptt, len(source) - 1 - i)
    data = Variable(source[i:i + seq_len], volatile=evaluation)
    target = Variable(source[i + 1:i + 1 + seq_len].view(-1))
    return data, target
'''

TORCH_IMPORTS = '''"""The torch names the ML packages star-import."""
import torch
import torch.nn as nn
import torch.nn.functional as F
from torch.autograd import Variable
'''


def legacy_module(rng: random.Random, index: int, lines: int) -> str:
    """A 2017 module that also calls the shared helpers across packages."""
    text = legacy.make_file(rng, index % 2, lines)
    style = rng.randrange(3)
    if style == 0:
        head = "from ml_common.torch_utils import to_var, get_batch\n"
    elif style == 1:
        head = "from ml_common.torch_imports import *\nfrom ml_common.torch_utils import to_var\n"
    else:
        head = "import ml_common.torch_utils as tu\n"
    call = "tu.to_var" if style == 2 else "to_var"
    return text + f'''
{head}

def score_shared_{index}(model, loader):
    model.eval()
    total = 0.0
    for x, y in loader:
        out = model({call}(x, volatile=True))
        total += (out.data.max(1)[1] == y).sum()
    return total / len(loader.dataset)
'''


def generate(out_dir: str, files: int = 20_000, lines: int = 3_000_000, legacy_share: float = 0.05,
             seed: int = 11) -> Dict[str, int]:
    rng = random.Random(seed)
    stats = {"files": 0, "lines": 0, "legacy_files": 0, "packages": PACKAGES}
    os.makedirs(os.path.join(out_dir, ".git"), exist_ok=True)
    _write(os.path.join(out_dir, ".git", "HEAD"), "ref: refs/heads/main\n")
    _write(os.path.join(out_dir, "pyproject.toml"), '[project]\nname = "monorepo"\nversion = "0"\n')
    src = os.path.join(out_dir, "src")
    shared = [("ml_common/__init__.py", ""), ("ml_common/torch_utils.py", TORCH_UTILS),
              ("ml_common/torch_imports.py", TORCH_IMPORTS)]
    for rel, text in shared:
        stats["lines"] += _write(os.path.join(src, rel), text)
        stats["files"] += 1
    # Each package also holds its own and its subpackages' `__init__.py`.
    per_package = max(2, (files - stats["files"]) // PACKAGES - len(SUBPACKAGES))
    per_file = max(20, lines // max(1, files))
    ml_packages = max(1, PACKAGES // 10)  # the ML teams' packages hold the legacy files
    legacy_count = int(files * legacy_share)
    legacy_left = legacy_count
    for p in range(PACKAGES):
        ml = p < ml_packages
        name = f"ml_{p:02d}" if ml else f"svc_{p:02d}_{WORDS[p % len(WORDS)]}"
        stats["lines"] += _write(os.path.join(src, name, "__init__.py"), "")
        stats["files"] += 1
        legacy_here = legacy_left // (ml_packages - p) if ml else 0
        legacy_left -= legacy_here
        for k in range(per_package):
            sub = SUBPACKAGES[k % len(SUBPACKAGES)]
            path = os.path.join(src, name, sub, f"{sub}_{k:03d}.py")
            size = rng.randrange(per_file // 2, per_file * 3 // 2)
            if k < legacy_here:
                text = legacy_module(rng, p * 1000 + k, size)
                stats["legacy_files"] += 1
            else:
                text = modern_module(rng, size, f"{sub} of {name}")
            stats["lines"] += _write(path, text)
            stats["files"] += 1
        for sub in SUBPACKAGES:
            init = os.path.join(src, name, sub, "__init__.py")
            if os.path.isdir(os.path.dirname(init)) and not os.path.exists(init):
                stats["lines"] += _write(init, "")
                stats["files"] += 1
    return stats


def main(argv: Optional[List[str]] = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("out_dir")
    parser.add_argument("--files", type=int, default=20_000)
    parser.add_argument("--lines", type=int, default=3_000_000)
    parser.add_argument("--legacy", type=float, default=0.05, help="share of legacy files")
    parser.add_argument("--scale", type=float, default=1.0, help="multiply files and lines (0.1: a quick run)")
    parser.add_argument("--seed", type=int, default=11)
    args = parser.parse_args(argv)
    if os.path.exists(args.out_dir) and os.listdir(args.out_dir):
        print(f"error: {args.out_dir} is not empty", file=sys.stderr)
        return 2
    stats = generate(args.out_dir, int(args.files * args.scale), int(args.lines * args.scale), args.legacy,
                     args.seed)
    print(" ".join(f"{k}={v}" for k, v in stats.items()))
    return 0


if __name__ == "__main__":
    sys.exit(main())
