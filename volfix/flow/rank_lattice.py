"""The ranks `flow.ranks` computes: a `(low, high)` range of dimensions, `NUMBER` for a Python
number (or another value that is no tensor: an `argparse` option), which broadcasts as a 0-dim
value, `CYCLE` for a value still being computed (`c = c * beta + x`), which only rank-keeping
steps pass on, and None for unknown; how they combine.
"""
from __future__ import annotations

from typing import Iterable, Tuple, Union

INF = 64  # more dimensions than any tensor has
NUMBER = "number"
CYCLE = "cycle"
Rank = Union[None, str, Tuple[int, int]]
MAX_DEPTH = 24


def join(a: Rank, b: Rank) -> Rank:
    """What a name bound to `a` or `b` holds."""
    if a == CYCLE:
        return b
    if b == CYCLE:
        return a
    if a is None or b is None:
        return None
    if a == NUMBER or b == NUMBER:
        return NUMBER if a == b else None
    return (min(a[0], b[0]), max(a[1], b[1]))


def join_all(ranks: Iterable[Rank]) -> Rank:
    """What a value that is one of `ranks` holds (read lazily: the first unknown decides); None
    when there are none, or all are still being computed."""
    out: Rank = CYCLE
    for rank in ranks:
        out = join(out, rank)
        if out is None:
            return None
    return None if out == CYCLE else out


def broadcast(a: Rank, b: Rank) -> Rank:
    """`a + b`: the larger rank (a number adds none; a value still being computed adds what
    the other side has: `c = c * beta + x` is what `x` makes of the name's other bindings)."""
    if a is None or b is None:
        return None
    if a == NUMBER:
        return b
    if b == NUMBER or b == CYCLE:
        return a
    if a == CYCLE:
        return b
    return (max(a[0], b[0]), max(a[1], b[1]))


def shift(rank: Rank, by: int) -> Rank:
    """`by` dimensions more (fewer, when negative); None when none can be left."""
    if not isinstance(rank, tuple):
        return None
    low, high = rank[0] + by, min(INF, rank[1] + by)
    if high < 0:
        return None
    return (max(low, 0), high)


def exactly(n: int) -> Tuple[int, int]:
    return (n, n)
