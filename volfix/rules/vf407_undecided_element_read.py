"""VF407 (off by default): `x.data[0]` where the source does not tell whether `x` is 0-dim."""
import ast

from ..files import prefilter
from ..flow.rank_lattice import NUMBER
from .base import Rule, on


class UndecidedElementRead(Rule):
    """
    ## What it does
    Lists the `x.data[0]` reads that VF401 leaves alone because the source does not tell
    whether `x` is one element: a model's output (`probs = model(x)`, then `probs.data[0]`),
    a value returned by a function of a library or of a pickled model, an element of a batch
    whose shape comes from the data. Off by default: select it (`--select VF407`, or
    `extend-select = ["VF407"]`) to see what a clean `volfix check` could not decide. When it
    is off, the summary of `check` and `fix` counts these reads (`All checks passed!`, then
    "3 `.data[0]` reads of values whose shape the code does not tell ..."), so a clean run
    does not claim more than it knows.

    Not listed: what VF401 reports, a value whose rank volfix knows to be one or more (a
    constructor's sizes, `view(-1, n)`, a `topk` row...), a read indexed again
    (`x.data[0][1]`: 0.3 gave a row there, so the value had two dimensions or more), a NumPy
    array's `.data`.

    ## Why is this bad?
    Since PyTorch 0.4 a loss, a full reduction and an element of a 1-dim tensor are 0-dim,
    and `[0]` on them raises `IndexError: invalid index of a 0-dim tensor`. Whether `x` is
    such a value is decided by the data or the model when the program runs: only a run can
    tell. `volfix verify --fix -- python eval.py` runs the original program with PyTorch 0.3's
    meaning, records every one-element `[0]` it made, and rewrites those reads to `.item()`.

    ## Example
    ```python
    import torch

    model = torch.load("policy.pt")
    probs = model(torch.randn(1, 8))
    best = probs.data[0]
    ```

    ## Use instead
    ```python
    best = probs[0]  # a batch of rows: the first row
    best = probs.item()  # or, for a 0-dim value: the number
    ```

    ## Fix safety
    No fix: which of the two the read needs depends on the value's shape, which the source
    does not state. `volfix verify --fix` rewrites the reads a run shows to be one element.
    """

    CODE = "VF407"
    MESSAGE = "`.data[0]` of a value whose shape volfix cannot tell: if it is 0-dim, `[0]` raises since PyTorch 0.4"
    DEFAULT_ENABLED = False
    NEEDS = prefilter.TORCH_DATA_INDEX
    NAMES = frozenset({"data"})

    @on(ast.Subscript)
    def subscript(self, node, ctx):
        scalars = ctx.unreported_reads.get(id(node))  # a `.data[0]` read VF401 (which runs first) left
        if scalars is None:
            return
        subject = node.value.value
        if scalars.numpy_array(subject, node):
            return
        rank = scalars.ranks.rank(subject, node)
        if rank == NUMBER or isinstance(rank, tuple) and rank[0] >= 1:
            return
        ctx.report(self.CODE, node, note=(
            f"`{ctx.src.segment(subject)}` may be 0-dim or have dimensions; `volfix verify --fix -- python "
            "<program>` runs the program and rewrites the reads it shows to be one element"))
