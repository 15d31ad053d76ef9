"""Generated legacy programs: hypothesis strategies that compose the shapes real 0.3 code has.

A program is data (`Program`: a seed, whether its statements run at module level, and one
to three `Component`s); `render()` turns it into source text. Every program is complete
and 0.3-valid: a tiny seeded model, data from `torch.manual_seed`, and `main()` returning a
dict of results. Components share `model`, `opt`, `x`, `y` (and `cell`, `head` when a
shape needs them), so a component's statements sit next to another's, as in real code:
an evaluation pass beside a training step, a flag helper called both ways.

A component is a shape name and a tuple of (option, choice) pairs drawn from the shape's
option space; hypothesis shrinks programs towards fewer components and earlier choices.
`Component.key` names one exact shape, which is how known failures are listed (see
KNOWN_FAILING) and excluded from the CI run.

0.3 facts the shapes keep to (SEMANTICS.md §1): the argument of `Variable(...)` is always a
plain tensor (never a Variable: fact 7), `volatile` and `requires_grad` are never both set
(fact 6), one-element results are read as numbers with `.data[0]` or `float(...)`.
"""
from __future__ import annotations

from dataclasses import dataclass
from typing import Dict, List, Tuple

from hypothesis import strategies as st
from shapes import SHAPES, Part

Options = Tuple[Tuple[str, str], ...]


@dataclass(frozen=True)
class Component:
    shape: str
    options: Options

    @property
    def key(self) -> str:
        """The exact shape, e.g. `flag_pair(call=kw, order=false_first, ...)`."""
        return f"{self.shape}({', '.join(f'{k}={v}' for k, v in self.options)})"

    def option(self, name: str) -> str:
        return dict(self.options)[name]


@dataclass(frozen=True)
class Program:
    components: Tuple[Component, ...]
    module_level: bool = False
    seed: int = 0

    @property
    def keys(self) -> Tuple[str, ...]:
        return tuple(c.key for c in self.components)

    @property
    def expects_legacy_error(self) -> bool:
        """0.3 raised on this program (a volatile value reached backward(): fact 5)."""
        return any(c.shape == "train_on_volatile" for c in self.components)


# ----------------------------------------------------------------------------- rendering

PRELUDE = """\
import torch
import torch.nn as nn
import torch.nn.functional as F
from torch.autograd import Variable


class Net(nn.Module):
    def __init__(self):
        super(Net, self).__init__()
        self.fc1 = nn.Linear(4, 6)
        self.fc2 = nn.Linear(6, 3)

    def forward(self, x):
        return self.fc2(F.relu(self.fc1(x)))
"""

CELL = """

class Cell(nn.Module):
    def __init__(self):
        super(Cell, self).__init__()
        self.i2h = nn.Linear(4, 5)
        self.h2h = nn.Linear(5, 5)
        self.out = nn.Linear(5, 3)

    def forward(self, x, h):
        h = torch.tanh(self.i2h(x) + self.h2h(h))
        return self.out(h), h
"""


def parts(program: Program) -> List[Part]:
    return [SHAPES[c.shape][1](i, dict(c.options)) for i, c in enumerate(program.components)]


def render(program: Program) -> str:
    """The program's source: definitions, then `main()` (or module-level statements)."""
    rendered = parts(program)
    needs = {n for part in rendered for n in part.needs}
    text = ("import contextlib\n" if "contextlib" in needs else "") + PRELUDE
    if "cell" in needs:
        text += CELL
    for part in rendered:
        for helper in part.helpers:
            text += "\n\n" + helper + "\n"
    setup = [f"torch.manual_seed({program.seed})", "model = Net()",
             "opt = torch.optim.SGD(model.parameters(), lr=0.1)",
             "x = torch.randn(6, 4)", "y = torch.randn(6, 3)"]
    if "cell" in needs:
        setup += ["cell = Cell()", "cell_opt = torch.optim.SGD(cell.parameters(), lr=0.1)"]
    if "head" in needs:
        setup += ["head = nn.Linear(3, 2)", "head_opt = torch.optim.SGD(head.parameters(), lr=0.1)"]
    setup.append("results = {}")
    statements = setup + [line for part in rendered for line in part.body]
    if program.module_level:
        text += "\n\n" + "\n".join(statements) + "\n\n\ndef main():\n    return results\n"
    else:
        text += "\n\ndef main():\n" + "".join(f"    {s}\n" for s in statements) + "    return results\n"
    return text


# ----------------------------------------------------------------------------- strategies


@dataclass(frozen=True)
class Known:
    """A shape volfix still gets wrong: every component of `shape` whose options include
    `options` (the others may be anything), the minimal program showing it (in found/), and
    what differs."""

    shape: str
    options: Tuple[Tuple[str, str], ...]
    found: str
    reason: str

    def matches(self, component: Component) -> bool:
        return component.shape == self.shape and set(self.options) <= set(component.options)


# The shapes the first long run found (each minimal program is in found/, now a regression
# test): a flag helper's region covering the neighbouring true call, `a + b` of an eval and a
# train result, a lambda's volatile input, a generator's flag attribute, a volatile value
# reaching backward(). All are fixed; a shape found later goes here until it is.
KNOWN_FAILING: Tuple[Known, ...] = ()

# found/ file name -> why its test is a strict xfail (the shapes above, and any minimal
# program whose failure needs two components together).
FOUND_REASONS: Dict[str, str] = {known.found: known.reason for known in KNOWN_FAILING}


def components(skip: Tuple[Known, ...] = ()) -> st.SearchStrategy[Component]:
    """Any component, except those matching a `skip` entry."""
    def of_shape(name: str) -> st.SearchStrategy[Component]:
        space = SHAPES[name][0]
        return st.tuples(*(st.sampled_from(space[k]).map(lambda v, k=k: (k, v)) for k in space)).map(
            lambda options: Component(name, options))

    return st.sampled_from(sorted(SHAPES)).flatmap(of_shape).filter(
        lambda c: not any(known.matches(c) for known in skip))


def programs(skip: Tuple[Known, ...] = (), max_components: int = 3) -> st.SearchStrategy[Program]:
    return st.builds(Program, st.lists(components(skip), min_size=1, max_size=max_components).map(tuple),
                     st.booleans(), st.integers(0, 3))
