"""VF401's ranks (`volfix.flow.ranks`) against real PyTorch: generated programs of tensor steps
(views, reductions, indexing, `topk` pairs, `torch.cat`, broadcasting, loops and branches) are
run under torch 2.x, and every rank the analysis gives for a name must hold what torch
computed: an exact rank is the tensor's `dim()`, a range holds it, a number is no tensor.

Each step is kept only when torch runs it, so the programs are valid; the analysis never
runs them. A rank claimed wrongly is a `.data[0]` VF401 would rewrite wrongly.
"""
from __future__ import annotations

import ast
import random
import warnings

import pytest

torch = pytest.importorskip("torch")

from volfix.flow.rank_lattice import NUMBER  # noqa: E402
from volfix.flow.scalars import ScalarValues  # noqa: E402
from volfix.syntax.index import ModuleIndex  # noqa: E402
from volfix.syntax.positions import SourceText  # noqa: E402

HEADER = "import numpy as np\nimport torch\nimport torch.nn.functional as F\nFLAG = {flag}\nSCALE = 0.5\n"
PROGRAMS = 400
STEPS = 14


def _sizes(rng: random.Random, rank: int) -> str:
    return ", ".join(str(rng.choice((1, 2, 3, 4))) for _ in range(rank))


def _sources(rng: random.Random) -> list:
    """Statements that make a tensor from nothing."""
    return [
        f"torch.randn({_sizes(rng, rng.randint(1, 4))})",
        f"torch.zeros({_sizes(rng, rng.randint(1, 3))})",
        f"torch.from_numpy(np.zeros(({_sizes(rng, 2)},), np.float32))",
        "torch.Tensor([1.0, 2.0])",
        "torch.Tensor([[1.0], [2.0]])",
        "torch.arange(6.)",
        "torch.tensor(3.0)",
        "torch.zeros(1)",
        "torch.Tensor([0.5])",
    ]


def _steps(rng: random.Random, a: str, b: str, new: str) -> list:
    """Statements binding `new` from the names `a` and `b` (any rank: torch decides)."""
    d = rng.choice((0, 1, -1))
    return [
        f"{new} = {a}.view(-1)", f"{new} = {a}.view(-1, {rng.choice((1, 2, 3))})",
        f"{new} = {a}.reshape({rng.choice((1, 2))}, -1, 1)", f"{new} = {a}.view({a}.size(0), -1)",
        f"{new} = {a}.sum({d})", f"{new} = {a}.mean(dim={d})", f"{new} = {a}.sum()",
        f"{new} = {a}.sum({d}, keepdim=True)",
        f"{new} = torch.std({a}, 0)", f"{new} = torch.sum({a})", f"{new} = {a}.max({d})[0]", f"{new} = {a}.max()",
        f"{new}, _ = {a}.topk(1)", f"_, {new} = {a}.max({d})", f"{new}, _ = {a}.sort()",
        f"{new} = {a}[0]", f"{new} = {a}[:, 0]", f"{new} = {a}[1:]", f"{new} = {a}[None]", f"{new} = {a}[0, 0]",
        f"{new} = {a}[torch.tensor(0)]", f"{new} = {a}[..., 0]",
        f"{new} = {a}.squeeze()", f"{new} = {a}.squeeze(0)", f"{new} = {a}.unsqueeze({rng.choice((0, 1))})",
        f"{new} = {a} * 2", f"{new} = SCALE * {a} + {b}", f"{new} = {a} - {b}", f"{new} = -{a}",
        f"{new} = torch.cat([{a}, {a}])", f"{new} = torch.cat([{a}, {b}], 0)", f"{new} = torch.stack([{a}, {a}])",
        f"{new} = F.softmax({a}, 0)", f"{new} = torch.log({a}.abs() + 1)", f"{new} = {a}.t()",
        f"{new} = {a}.expand_as({b})", f"{new} = {a}.clone().detach()", f"{new} = {a}.float().cpu()",
        f"{new} = torch.mv({a}, {b})", f"{new} = torch.mm({a}, {b})", f"{new} = {a}.data",
        f"for {new} in {a}:\n    pass", f"for _k, {new} in enumerate({a}):\n    pass",
        f"{new} = [{new}_e * 2 for {new}_e in {a}][0]",
        f"if FLAG:\n    {new} = {a}.view(-1)\nelse:\n    {new} = {b}.view(-1)",
        f"{new} = {a} if FLAG else {b}",
        f"{new} = {a}.size(0)", f"{new} = {a}.numel() * 2",
        f"{new} = {a}\n{new} += 1", f"{new} = {a}.cuda() if False else {a}",
        # one element: a moving average that starts as `torch.zeros(1)`, sums kept in place
        f"{new} = torch.zeros(1)\nfor _i in range(2):\n    {new} = {new} * SCALE + (1 - SCALE) * {a}.mean()",
        f"if FLAG:\n    {new} = torch.zeros(1)\nelse:\n    {new} = {a}.sum()",
        f"{new} = {a}.mean()\n{new} += {b}", f"{new} = {a}.sum()\n{new} /= SCALE * 4",
        f"{new} = {a}.clone()\n{new} += {b}.sum()", f"{new} = torch.zeros(1)\n{new} += {a}.sum()",
        f"{new} = (({a} - {b}) ** 2).mean()\nfor _w in [{a}, {b}]:\n    {new} += _w.pow(2).sum() * SCALE",
        f"if FLAG:\n    {new} = {a}\nelse:\n    {new} = {b}.sum()",
        f"if FLAG:\n    {new} = 0\nelse:\n    {new} = {b}.sum()\n{new} += {a}",
        # `gather` has its index's shape; `unsqueeze(d)` needs `d` dimensions before the new one;
        # `squeeze(d)` of a dimension a keepdim reduction (or `unsqueeze(d)`) left at size 1
        f"{new} = torch.gather({a}, 0, torch.zeros_like({a}).long())", f"{new} = {a}.gather(0, torch.tensor(0))",
        f"{new} = torch.gather({a}, {d}, torch.LongTensor([0]))",
        f"{new} = {a}.unsqueeze(1)", f"{new} = {a}.unsqueeze(2)", f"{new} = torch.unsqueeze({a}, -2)",
        f"{new} = {a}.sum(1, keepdim=True).squeeze(1)", f"{new} = torch.sum({a}, {d}, keepdim=True).squeeze({d})",
        f"{new} = {a}.max(1, keepdim=True)[0].squeeze(1)", f"{new} = {a}.unsqueeze({d}).squeeze({d})",
        f"{new} = {a}.squeeze(1)", f"{new} = {a}.abs().add(0.1).multinomial(1)",
        f"{new}_l = []\nfor _i in range(2):\n    {new}_l.append({a}.unsqueeze(1))\n{new} = torch.cat({new}_l, 1)",
        f"{new}_l = [{b}]\n{new}_l.append({a})\n{new} = torch.cat({new}_l)",
        # a loop that binds a name from itself: each pass reads what the last one bound
        f"{new} = {a}\nfor _i in range(2):\n    {new} = {new}.unsqueeze(0)",
        f"{new} = {a}\nfor _i in range(2):\n    {new} = {new}.sum(0)",
        f"{new} = {a}\nfor _i in range(2):\n    {new} = {new}[0]",
    ]


def generate(seed: int) -> tuple:
    """(text, the values it binds, their names): a program whose every statement runs under
    torch (steps that raise are left out)."""
    rng = random.Random(seed)
    text = HEADER.format(flag=rng.choice((True, False)))
    scope: dict = {}
    exec(compile(text, "<generated>", "exec"), scope)
    names: list = []
    for step in range(STEPS):
        new = f"v{step}"
        if not names or rng.random() < 0.2:
            candidates = [f"{new} = {s}" for s in _sources(rng)]
        else:
            tensors = [n for n in names if isinstance(scope.get(n), torch.Tensor)] or names
            candidates = _steps(rng, rng.choice(tensors), rng.choice(tensors), new)
        rng.shuffle(candidates)
        for statement in candidates[:6]:
            trial = dict(scope)
            try:
                with warnings.catch_warnings():
                    warnings.simplefilter("ignore")  # `torch.std` of one element: nan, and a warning
                    exec(compile(statement + "\n", "<step>", "exec"), trial)
            except Exception:
                continue
            if new not in trial:
                continue  # a loop over an empty tensor binds nothing
            scope, text = trial, text + statement + "\n"
            names.append(new)
            break
    return text + "print(" + ", ".join(names) + ")\n", scope, names


def claims(text: str) -> dict:
    """name -> the rank the analysis gives it, read where the last line prints it."""
    tree = ast.parse(text)
    index = ModuleIndex(tree, SourceText(text))
    last = tree.body[-1]
    out = {}
    for node in ast.walk(last):
        if isinstance(node, ast.Name) and node.id.startswith("v"):
            out[node.id] = ScalarValues(index).ranks.rank(node, node)
    return out


def holds(rank, value) -> bool:
    if rank is None:
        return True
    if rank == NUMBER:
        return not isinstance(value, torch.Tensor)
    return isinstance(value, torch.Tensor) and rank[0] <= value.dim() <= rank[1]


@pytest.mark.parametrize("chunk", range(8))
def test_every_rank_claimed_holds_under_torch(chunk):
    told = exact = 0
    for seed in range(chunk * PROGRAMS // 8, (chunk + 1) * PROGRAMS // 8):
        text, scope, names = generate(seed)
        for name, rank in claims(text).items():
            assert holds(rank, scope[name]), f"seed {seed}: {name} claimed {rank}, torch made " \
                f"{scope[name].dim() if isinstance(scope[name], torch.Tensor) else type(scope[name]).__name__}\n{text}"
            told += rank is not None
            exact += isinstance(rank, tuple) and rank[0] == rank[1]
    assert exact > told // 3, (exact, told)  # the analysis decides most steps, not none


def one_element_claims(text: str) -> dict:
    """name -> whether VF401 holds it one element (its `.data[0]` becomes `.item()`), read
    where the last line prints it."""
    tree = ast.parse(text)
    index = ModuleIndex(tree, SourceText(text))
    return {node.id: ScalarValues(index).one_element(node, node) for node in ast.walk(tree.body[-1])
            if isinstance(node, ast.Name) and node.id.startswith("v")}


@pytest.mark.parametrize("chunk", range(4))
def test_every_one_element_claimed_holds_under_torch(chunk):
    """`.item()` raises unless the tensor has one element: every name VF401 holds one element
    must have one under torch (0-dim, or the 1-dim `torch.zeros(1)` it may start as)."""
    claimed = zero_dim = 0
    for seed in range(chunk * PROGRAMS // 4, (chunk + 1) * PROGRAMS // 4):
        text, scope, names = generate(seed)
        for name, one in one_element_claims(text).items():
            if not one:
                continue
            value = scope[name]
            assert isinstance(value, torch.Tensor) and value.numel() == 1, \
                f"seed {seed}: {name} claimed one element, torch made {getattr(value, 'shape', value)}\n{text}"
            claimed += 1
            zero_dim += value.dim() == 0
    assert claimed > PROGRAMS // 8 and zero_dim > claimed // 2, (claimed, zero_dim)


def test_a_name_bound_by_with_is_unknown_at_module_level_and_in_a_function():
    # `with ... as v0` binds something no rule reads: unknown, in a function and at module
    # level (where no parameter can be asked about: this crashed `fix` on notebooks once)
    text = ("import torch\nwith open('t') as v0:\n    v1 = torch.zeros(2)\n"
            "def f(v2):\n    with open('t') as v2:\n        pass\n    print(v2)\nprint(v0, v1)\n")
    assert claims(text) == {"v0": None, "v1": (1, 1)}
    tree = ast.parse(text)
    index = ModuleIndex(tree, SourceText(text))
    read = next(n for n in ast.walk(tree.body[2]) if isinstance(n, ast.Name) and n.id == "v2"
                and isinstance(n.ctx, ast.Load))
    assert ScalarValues(index).ranks.rank(read, read) is None


def _reads_in_function(text: str) -> dict:
    """name -> (rank, one element) the analysis gives a `v` name where the function's last
    statement reads it."""
    tree = ast.parse(text)
    index = ModuleIndex(tree, SourceText(text))
    fn = next(n for n in tree.body if isinstance(n, ast.FunctionDef))
    return {node.id: (ScalarValues(index).ranks.rank(node, node), ScalarValues(index).one_element(node, node))
            for node in ast.walk(fn.body[-1]) if isinstance(node, ast.Name) and node.id.startswith("v")}


def test_a_size_the_function_counts_with_is_one_integer():
    """`torch.zeros(beam_size)` is 1-dim when the function also runs `range(beam_size)` or
    passes it as one of several sizes: a shape there would raise. A size used only alone may
    be a shape."""
    text = ("import torch\n"
            "def f(beam_size, width, shape):\n"
            "    v0 = torch.zeros(beam_size)\n"
            "    for q in range(beam_size):\n"
            "        pass\n"
            "    v1 = torch.zeros(width)\n"
            "    hist = torch.FloatTensor(2, width)\n"
            "    v2 = torch.zeros(shape)\n"
            "    v3 = v0[0] + v1[1]\n"
            "    return v0, v1, v2, v3\n")
    claimed = _reads_in_function(text)
    assert {k: rank for k, (rank, _) in claimed.items()} == {"v0": (1, 1), "v1": (1, 1), "v2": None,
                                                              "v3": (0, 0)}
    scope: dict = {}
    exec(compile(text, "<ranks>", "exec"), scope)
    made = scope["f"](3, 2, (2, 2))
    assert [t.dim() for t in made] == [1, 1, 2, 0]


def test_numpy_dot_of_arrays_is_no_reduction():
    """`R.dot(point)` of NumPy arrays is a matrix product (here shape (3, 1)), not a tensor's
    dot of two vectors: neither 0-dim nor one element."""
    text = ("import numpy as np\nimport torch\n"
            "def f(R, u):\n"
            "    point = np.zeros((3, 1))\n"
            "    v0 = R.dot(point)\n"
            "    v1 = u.dot(u)\n"
            "    return v0, v1\n")
    claimed = _reads_in_function(text)
    assert claimed["v0"] == (None, False) and claimed["v1"] == ((0, 0), True)
    scope: dict = {}
    exec(compile(text, "<ranks>", "exec"), scope)
    product, dot = scope["f"](scope["np"].eye(3), torch.ones(3))
    assert product.shape == (3, 1) and dot.dim() == 0
