"""Statements a region covers that have no volatile value, inside its compound statements.

`RegionPlacer.split` leaves a statement that reads no volatile value and may record out of the
region only at the region's own level (SPEC §2.3). Inside an `if` or a loop the region covers
whole, such a statement stays covered: convex_adversarial's cascade held `robust_ce, robust_err =
robust_loss(model, eps, X_cert, y_cert)` beside `ce = ce[...]` in the `else:` of a test on a
volatile value, and the caller trained on `robust_ce`. When what such a statement binds reaches a
training step, or a `return` whose caller trains on the result, the region turns off a graph 0.3
recorded and used: `Decisions.safety` makes the fix unsafe and names the statement.
"""
from __future__ import annotations

import ast
from typing import List, Optional, Set, Tuple

from ..flow.taint import TaintResult
from ..flow.values import derived_names, reads_any
from ..syntax.index import FUNCTIONS
from ..syntax.names import assigned_names, iter_statements

COMPOUND = (ast.If, ast.For, ast.AsyncFor, ast.While, ast.With, ast.AsyncWith, ast.Try, ast.FunctionDef,
            ast.AsyncFunctionDef, ast.ClassDef)


def nested_unrelated(placer, runs: list, scope: ast.AST, taint: TaintResult,
                     wanted: Set[int]) -> Optional[Tuple[ast.stmt, str]]:
    """The first statement inside a compound statement of the `runs` (`placer`'s) that reads no
    volatile value (not one of the `wanted` uses or sources), may record a graph, and binds
    what reaches a later training step ("train") or a `return`/`yield` ("return")."""
    for run in runs:
        for top in run.statements:
            for stmt in iter_statements([top]):
                if stmt is top or isinstance(stmt, COMPOUND) or id(stmt) in wanted \
                        or id(stmt) in taint.defs or id(stmt) in taint.recording:
                    continue
                if placer.kinds.harmless(stmt, scope) or placer.trainer.makes_volatile([stmt]) \
                        or not any(isinstance(n, ast.Call) for n in ast.walk(stmt)):
                    continue
                handed = _handed_on(placer, stmt, scope, taint)
                if handed is not None:
                    return stmt, handed
    return None


def _handed_on(placer, stmt: ast.stmt, scope: ast.AST, taint: TaintResult) -> Optional[str]:
    """"train" or "return" when what `stmt` binds reaches, through the scope's bindings (not
    those of volatile values: the region's own), a later training step or a `return`/`yield`."""
    body = scope.body if isinstance(scope, FUNCTIONS) else getattr(scope, "body", [])
    statements: List[ast.stmt] = [s for s in iter_statements(body) if not isinstance(s, COMPOUND)]
    seed = assigned_names(stmt)
    if not seed:
        return None
    reached = derived_names((s for s in statements if id(s) not in taint.defs), seed)
    trained = {id(s) for s, _ in taint.training}
    handed = None
    for other in statements:
        if not reads_any(other, reached):
            continue
        if other.lineno > stmt.lineno and (id(other) in trained or placer.trainer.in_statements([other]) is not None):
            return "train"
        if isinstance(other, ast.Return) or any(isinstance(n, (ast.Yield, ast.YieldFrom)) for n in ast.walk(other)):
            handed = "return"
    return handed
