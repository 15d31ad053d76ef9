"""The data that flows from rules to fixes: findings, volatile sources, planned fixes.

Fixes are planned as data (SPEC §3) before they are rendered to text edits:

- expression-level changes (unwrap a call, drop a keyword, rename `async=`) are exact
  `TextEdit`s on the analysed text;
- statement-level changes are `RegionPlan`s: a run of statements to put under a grad-mode
  `with` block, or a function to decorate; `volfix.fixes.render` renders them with libcst;
- the modules the fix needs (`torch`, `contextlib`) are named, and the import block is edited
  by `volfix.fixes.imports`.
"""
from __future__ import annotations

import ast
from dataclasses import dataclass, field
from typing import FrozenSet, List, Optional, Tuple

from .fixes.edits import TextEdit
from .model import Applicability

SAFE, UNSAFE = Applicability.SAFE, Applicability.UNSAFE


@dataclass(frozen=True)
class RegionPlan:
    """Statements to run under `header`.

    form "with": the statements fill the lines [start, end) of the text (from the start of the
    first statement's first line to after the last one's newline), indented with `indent`; they
    become the body of `with <header>:`, indented one `unit` deeper. `suite` is set for a one-line
    suite (`for x in xs: y = f(x)`): then [start, end) is the statements' text after the colon.
    form "decorator": `@<header>` goes on its own line at offset `start` (the `def` line, below
    the function's own decorators), indented with `indent`.
    """

    form: str  # "with" | "decorator"
    header: str
    start: int
    end: int
    indent: str
    unit: str = "    "
    suite: bool = False
    colon: int = 0  # one-line suite: the offset just after the owner's colon


@dataclass
class FixPlan:
    applicability: Applicability
    title: str
    edits: List[TextEdit] = field(default_factory=list)
    regions: List[RegionPlan] = field(default_factory=list)
    imports: FrozenSet[str] = frozenset()

    def merged(self, other: "FixPlan") -> "FixPlan":
        """One fix doing both (findings that share a region are fixed together)."""
        worse = self.applicability if _rank(self.applicability) >= _rank(other.applicability) \
            else other.applicability
        edits, regions = set(self.edits), set(self.regions)  # both frozen: a set lookup, not a scan
        return FixPlan(worse, self.title,
                       self.edits + [e for e in other.edits if e not in edits],
                       self.regions + [r for r in other.regions if r not in regions],
                       self.imports | other.imports)


def _rank(applicability: Applicability) -> int:
    return {Applicability.SAFE: 0, Applicability.UNSAFE: 1, Applicability.DISPLAY_ONLY: 2}[applicability]


def worst(*applicabilities: Optional[Applicability]) -> Optional[Applicability]:
    """None (no fix) wins, then unsafe, then safe."""
    if any(a is None for a in applicabilities):
        return None
    return max(applicabilities, key=_rank) if applicabilities else None  # type: ignore[arg-type]


def span_of(edits: List[TextEdit]) -> Tuple[int, int]:
    return min(e.start for e in edits), max(e.end for e in edits)


@dataclass
class Finding:
    """One finding of one rule, located by offsets in the analysed text."""

    code: str
    start: int
    end: int
    message: Optional[str] = None  # overrides the rule's MESSAGE
    note: Optional[str] = None  # why there is no fix, or what a reviewer should know: one sentence
    fix: Optional[FixPlan] = None
    group: Optional[int] = None  # findings sharing a region are fixed together
    # What region planning decided for this finding's sources (several for a helper).
    outcomes: List["Outcome"] = field(default_factory=list)
    call_site: bool = False  # a call of a helper defined elsewhere: nothing to unwrap here
    snippet: Optional[str] = None  # the flagged text (default: the first line of the span)


# How much an outcome's note matters when a finding's outcomes are merged into one sentence:
# information, an unsafe fix's reason, why there is no fix.
W_INFO, W_UNSAFE, W_NONE = 1, 2, 3


@dataclass
class Outcome:
    """One planning decision for one source of a finding."""

    applicability: Optional[Applicability]  # None: no fix
    note: Optional[str]
    edits: List[TextEdit] = field(default_factory=list)
    regions: list = field(default_factory=list)
    imports: frozenset = frozenset()
    group: Optional[int] = None
    weight: int = 0  # how much the note matters when several are merged (higher wins)


@dataclass
class Flag:
    """A runtime `volatile=` flag: the expression, and its text as the fix will spell it."""

    node: ast.AST
    text: str
    negated: bool = False  # the expression is `not <text>`
    # The test of the `if` whose branch made the value volatile (`rules.variable_calls.
    # branch_flag`): both of its paths are what the flag says (`fixes.partial`).
    branch: Optional[ast.AST] = None


@dataclass
class Source:
    """A place where volatility starts: a `Variable(..., volatile=...)` call, a call of a helper
    returning a volatile value, or `x.volatile = True`."""

    finding: Finding
    node: ast.AST  # the call, or the assignment statement
    stmt: ast.stmt
    scope: ast.AST
    flag: Optional[Flag] = None  # None: always volatile (no_grad); else grad mode from the flag
    own_edits: List[TextEdit] = field(default_factory=list)  # unwrap / drop the keyword
    deleted: Optional[ast.stmt] = None  # the statement its own edits delete (`x = x`)
    seed: Optional[str] = None  # `x.volatile = True`: the key made volatile
    call_site: bool = False  # a helper's call site: the call itself produces the value
    data: Optional[ast.AST] = None  # the unwrapped argument (is it a plain tensor?)
    plain: bool = True  # unwrapping is exact (the argument cannot require grad)
    unsafe_because: Optional[str] = None  # a reason that makes any fix of it unsafe
    computing: bool = False  # a helper's call site where the helper itself computes with the value
    # a helper's call site whose result has no autograd history (it returns Python numbers): the
    # call records under the flag, and the taint ends there
    result_free: bool = False
    # a helper's call site whose returned tuple, of `items[0]` items, holds the value only at
    # the positions `items[1]` (`return Variable(states), next_states`)
    items: Optional[Tuple[int, FrozenSet[int]]] = None

    @property
    def kind(self) -> str:
        return "no_grad" if self.flag is None else "flag"
