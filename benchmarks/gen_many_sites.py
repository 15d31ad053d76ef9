"""A legacy script with many findings: N `volatile` sites at module level, and N more in
functions (the shape of a long exported notebook, or of a generated file; issue 24 had a 4.5 MB
document with 45,000 findings). The planner, the taint, the regions and the clean-up must stay
near-linear in N: 150 module-level sites took 14 s and 1,000 took 557 s before they did.

    python benchmarks/gen_many_sites.py N [--seed S] > many.py

The module-level sites vary with the seed: a volatile input and its model call, an eval loop,
a later line reusing an earlier output, a training step between two sites, a function reading
a module-level volatile value, a plain `Variable(x)`, a site under an `if`. Deterministic for
one (N, seed).
"""
from __future__ import annotations

import argparse
import random
import sys
from typing import List

HEADER = [
    "import torch",
    "import torch.nn as nn",
    "from torch.autograd import Variable",
    "",
    "model = nn.Linear(3, 2)",
    "criterion = nn.MSELoss()",
    "optimizer = torch.optim.SGD(model.parameters(), lr=0.1)",
    "loader = [torch.randn(4, 3) for _ in range(2)]",
    "target = torch.randn(4, 2)",
    "flag = True",
    "total = 0.0",
    "",
]


def module_site(i: int, rnd: random.Random, earlier: List[int]) -> List[str]:
    kind = rnd.choice("aaabcdefg") if earlier else "a"
    if kind == "b":
        return [f"for b{i} in loader:",
                f"    out{i} = model(Variable(b{i}, volatile=True))",
                f"    total += out{i}.data.sum()"]
    if kind == "c":
        j = rnd.choice(earlier)
        return [f"z{i} = y{j} + 1  # reuses site {j}", f"print(z{i}.sum())"]
    if kind == "d":
        return [f"inp{i} = torch.randn(4, 3)",
                f"loss{i} = criterion(model(inp{i}), target)",
                "optimizer.zero_grad()",
                f"loss{i}.backward()",
                "optimizer.step()"]
    if kind == "e":
        j = rnd.choice(earlier)
        return [f"def show{i}():", f"    return model(x{j})"]
    if kind == "f":
        return [f"h{i} = Variable(torch.zeros(1))", f"print(h{i})"]
    if kind == "g":
        return ["if flag:",
                f"    w{i} = Variable(torch.randn(2, 3), volatile=True)",
                f"    pred{i} = model(w{i})",
                f"    print(pred{i}.data)"]
    earlier.append(i)
    return [f"x{i} = Variable(torch.randn(2, 3), volatile=True)",
            f"y{i} = model(x{i})",
            f"print(y{i}.data.sum())  # site {i}"]


def function_site(i: int) -> List[str]:
    return [f"def f{i}(model, data):",
            "    x = Variable(data, volatile=True)",
            "    out = model(x)",
            "    return out.data"]


def generate(n: int, seed: int = 0, functions: bool = True) -> str:
    """N module-level sites (and, with `functions`, N functions with one site each)."""
    rnd = random.Random(seed)
    lines = list(HEADER)
    earlier: List[int] = []
    for i in range(n):
        lines += module_site(i, rnd, earlier) + [""]
    if functions:
        for i in range(n):
            lines += function_site(i) + [""]
    return "\n".join(lines) + "\n"


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("n", type=int)
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument("--no-functions", action="store_true")
    args = parser.parse_args()
    sys.stdout.write(generate(args.n, args.seed, functions=not args.no_functions))


if __name__ == "__main__":
    main()
