"""Generate one huge module-level script with exactly one legacy finding (SPEC §8).

    python benchmarks/gen_big_module.py OUT.py [--lines 120000] [--seed 5]

The shape of exported notebooks and generated code: everything at module level --
assignments that reuse a few common names (`x`, `total`, `loss`, ...) all the way down,
`for`/`while` loops, `if` blocks, `with open(...)` blocks, `try` blocks, small function and
class definitions, comprehensions and tensor arithmetic on the module's own values.

Exactly one `Variable(images, volatile=True)` sits in the middle of the file; its taint
reaches the next few statements (`TAINTED_STATEMENTS` in all) through names no other
statement reads, and ends at an `int(...)`. So a correct fix is known in advance:
`expected_fix()` is the source with the `Variable` import removed, the call's statement
(`vf_batch = images` once unwrapped, an alias) gone with `vf_batch` read as `images`, and the
statements computing with it wrapped in `with torch.no_grad():`, every other byte unchanged.

The same seed and line count always give the same text.
"""
from __future__ import annotations

import argparse
import random
import sys
from dataclasses import dataclass
from typing import Callable, List, Optional

VARIABLE_IMPORT = "from torch.autograd import Variable\n"
HEADER = ('"""Exported from experiments.ipynb."""\n'
          "import math\n"
          "import os\n"
          "\n"
          "import torch\n"
          "import torch.nn as nn\n"
          "import torch.nn.functional as F\n"
          + VARIABLE_IMPORT +
          "\n"
          "model = nn.Linear(8, 4)\n"
          "images = torch.randn(16, 8)\n"
          "labels = torch.randint(0, 4, (16,))\n"
          "x = torch.zeros(4)\n"
          "total = 0\n"
          "loss = 0.0\n"
          "scores = []\n"
          "config = {'lr': 0.1, 'epochs': 3}\n"
          "step = 0\n"
          "acc = 0\n"
          "buf = {}\n"
          "t = torch.zeros(4)\n"
          "rate = 1.0\n"
          "\n")
# The one finding: line 1 of this block, column 12 (1-based) of `Variable(...)`.
SOURCE_BLOCK = ("vf_batch = Variable(images, volatile=True)\n"
                "vf_out = model(vf_batch)\n"
                "vf_probs = F.softmax(vf_out, dim=1)\n"
                "vf_top = vf_probs.max(1)[1]\n"
                "vf_correct = int(vf_top.eq(labels).sum())\n")
TAINTED_STATEMENTS = 5
# The fix: the call unwrapped, the alias it leaves (`vf_batch = images`) gone, its reads
# reading `images`, and the four statements that compute under `no_grad`.
REGION_STATEMENTS = 4
FIXED_BLOCK = ("with torch.no_grad():\n"
               "    vf_out = model(images)\n"
               "    vf_probs = F.softmax(vf_out, dim=1)\n"
               "    vf_top = vf_probs.max(1)[1]\n"
               "    vf_correct = int(vf_top.eq(labels).sum())\n")


@dataclass(frozen=True)
class BigModule:
    source: str
    finding_row: int  # 1-based line of `Variable(images, volatile=True)`
    finding_column: int = 12

    @property
    def lines(self) -> int:
        return self.source.count("\n")

    def expected_fix(self) -> str:
        """The source as a correct fix leaves it."""
        return self.source.replace(VARIABLE_IMPORT, "", 1).replace(SOURCE_BLOCK, FIXED_BLOCK, 1)


class _Filler:
    """Module-level statements, each block ending with a blank line, varied by `rng`."""

    def __init__(self, rng: random.Random) -> None:
        self.rng = rng
        self.n = 0  # a counter that makes every defined name unique
        self.defined: List[str] = ["x", "total", "loss", "step", "acc", "t", "rate"]
        self.kinds: List[Callable[[], str]] = [
            self.assignments, self.assignments, self.assignments, self.for_loop,
            self.while_loop, self.if_block, self.function_def, self.class_def, self.with_block,
            self.try_block, self.comprehensions, self.tensor_ops, self.tensor_ops, self.prints,
        ]

    def name(self, stem: str) -> str:
        self.n += 1
        return f"{stem}_{self.n}"

    def read(self) -> str:
        """A name bound earlier (numeric: every filler value is a number or a tensor)."""
        return self.rng.choice(self.defined[-40:] + ["x", "total", "loss", "step"])

    def bind(self, name: str) -> str:
        self.defined.append(name)
        return name

    def block(self) -> str:
        return self.rng.choice(self.kinds)()

    def assignments(self) -> str:
        lines = []
        for _ in range(self.rng.randrange(2, 7)):
            # Names shared by the whole script (as notebooks reuse them), or a fresh one.
            target = self.rng.choice(["x", "total", "step", "acc", "rate", self.name("v")])
            op = self.rng.choice(["+", "-", "*"])
            lines.append(f"{target} = {self.read()} {op} {self.rng.randrange(1, 9)}")
            self.bind(target)  # after the read: a name is never read before it is bound
        return "\n".join(lines) + "\n\n"

    def for_loop(self) -> str:
        i, acc, source = self.name("i"), self.name("acc"), self.read()
        self.bind(acc)
        return (f"{acc} = 0\n"
                f"for {i} in range({self.rng.randrange(2, 6)}):\n"
                f"    {acc} += {i} * {source}\n"
                f"    total = total + {i}\n"
                f"    if {i} % 2:\n"
                f"        loss = loss + 0.5\n\n")

    def while_loop(self) -> str:
        k = self.bind(self.name("k"))
        return (f"{k} = 0\n"
                f"while {k} < {self.rng.randrange(2, 5)}:\n"
                f"    {k} += 1\n"
                f"    step = step + {k}\n\n")

    def if_block(self) -> str:
        flag, source = self.name("flag"), self.read()
        self.bind(flag)
        return (f"{flag} = float(torch.as_tensor({source}).sum()) > {self.rng.randrange(10)}\n"
                f"if {flag}:\n"
                f"    rate = rate + 1\n"
                f"    x = x * 2\n"
                f"elif total > 100:\n"
                f"    total = 0\n"
                f"else:\n"
                f"    acc = acc + 1\n\n")

    def function_def(self) -> str:
        fn, result, source = self.name("helper"), self.name("r"), self.read()
        self.bind(result)
        return (f"def {fn}(a, b=2):\n"
                f"    \"\"\"Cell helper {self.n}.\"\"\"\n"
                f"    c = a * b\n"
                f"    for j in range(b):\n"
                f"        c = c + j\n"
                f"    return c + {self.rng.randrange(9)}\n\n"
                f"{result} = {fn}({source})\n\n")

    def class_def(self) -> str:
        cls = self.name("Stats")
        inst, source = self.name("stats"), self.read()
        self.bind(inst)
        return (f"class {cls}:\n"
                f"    scale = {self.rng.randrange(1, 5)}\n\n"
                f"    def __init__(self, value):\n"
                f"        self.value = value * self.scale\n\n"
                f"    def update(self, other):\n"
                f"        self.value = self.value + other\n"
                f"        return self.value\n\n\n"
                f"{inst} = {cls}({source}).update(1)\n\n")

    def with_block(self) -> str:
        path = self.name("path")
        size = self.bind(self.name("size"))
        return (f"{path} = os.path.join('data', 'part_{self.n}.txt')\n"
                f"{size} = 0\n"
                f"if os.path.exists({path}):\n"
                f"    with open({path}) as fh:\n"
                f"        {size} = len(fh.read().splitlines())\n\n")

    def try_block(self) -> str:
        value, source = self.name("value"), self.read()
        self.bind(value)
        return (f"try:\n"
                f"    {value} = {source} / {self.rng.randrange(1, 4)}\n"
                f"except ZeroDivisionError:\n"
                f"    {value} = 0\n"
                f"finally:\n"
                f"    step = step + 1\n\n")

    def comprehensions(self) -> str:
        items, squares, source = self.name("items"), self.name("squares"), self.read()
        self.bind(squares)
        return (f"{items} = [{source} * n for n in range({self.rng.randrange(2, 8)})]\n"
                f"{squares} = sum(v * v for v in {items})\n"
                f"scores = scores + [{squares}]\n"
                f"buf = {{k: k * 2 for k in range(3)}}\n\n")

    def tensor_ops(self) -> str:
        t, u, source = self.name("t"), self.name("u"), self.read()
        self.bind(t)
        self.bind(u)
        return (f"{t} = torch.ones(4) * {source}\n"
                f"{u} = ({t} + x).sum()\n"
                f"x = x + {t} / {self.rng.randrange(2, 9)}\n"
                f"t = F.relu({t} - 1)\n\n")

    def prints(self) -> str:
        return (f"print('cell {self.n}:', {self.read()}, total, loss)\n"
                f"rate = abs(rate) ** 0.5 + {self.rng.randrange(3)}\n\n")


def generate_module(lines: int = 120_000, seed: int = 5) -> BigModule:
    """A module of about `lines` lines (at least 100) with its one finding in the middle."""
    rng = random.Random(seed)
    filler = _Filler(rng)
    parts: List[str] = [HEADER]
    count = HEADER.count("\n")
    finding_row = 0
    middle = max(lines // 2, count + 1)
    while count < lines:
        if not finding_row and count >= middle:
            finding_row = count + 1
            parts.append(SOURCE_BLOCK + "print('accuracy', vf_correct / 16)\n\n")
            count += SOURCE_BLOCK.count("\n") + 2
            continue
        block = filler.block()
        parts.append(block)
        count += block.count("\n")
    if not finding_row:
        finding_row = count + 1
        parts.append(SOURCE_BLOCK)
    return BigModule("".join(parts), finding_row)


def main(argv: Optional[List[str]] = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("out")
    parser.add_argument("--lines", type=int, default=120_000)
    parser.add_argument("--seed", type=int, default=5)
    args = parser.parse_args(argv)
    module = generate_module(args.lines, args.seed)
    with open(args.out, "w", encoding="utf-8", newline="\n") as fh:
        fh.write(module.source)
    print(f"lines={module.lines} finding={module.finding_row}:{module.finding_column}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
